/*-------------------------------------------------------------------------
 *
 * shardhash.h
 *		Shard routing: the hashes of the "calculated" strategy and the
 *		boundary search of the "range" strategy.
 *
 * Every hash reproduces a formula that applications outside the FDW use
 * on the same tables, so that rows written by either side land on the same
 * shard:
 *
 *	sha256		the 256-bit digest read as a big-endian integer, mod N
 *				(int.from_bytes(sha256(s).digest()) % N)
 *	sha256_32	its first 4 bytes, big-endian, mod N
 *				(int(sha256(s).hexdigest()[:8], 16) % N)
 *	md5			the 128-bit digest, big-endian, mod N
 *				(int(md5(s).hexdigest(), 16) % N)
 *	fnv1a_32	32-bit FNV-1a over the bytes, mod N
 *	fnv1a_64	64-bit FNV-1a over the bytes, mod N
 *
 * The range strategy finds a key's shard as bisect.bisect(boundaries, key)
 * - 1 over a Python key normalize('NFKD', title.lower()).  shardrange_lower
 * is the lower() part; NFKD is left to the caller.
 *
 * Plain C (see pure.h); the digests come from OpenSSL's EVP interface.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHARD_FDW_SHARDHASH_H
#define SHARD_FDW_SHARDHASH_H

#include "core/pure.h"

typedef enum ShardHash
{
	SHARD_HASH_SHA256,
	SHARD_HASH_SHA256_32,
	SHARD_HASH_MD5,
	SHARD_HASH_FNV1A_32,
	SHARD_HASH_FNV1A_64
} ShardHash;

/*
 * Look up a hash by its option name ("sha256", "sha256_32", "md5",
 * "fnv1a_32", "fnv1a_64"; exact, lower case).  Returns false for any other
 * name, leaving *out alone.
 */
extern bool shardhash_from_name(const char *name, ShardHash *out);

/* The option name of a hash. */
extern const char *shardhash_name(ShardHash h);

/* The FNV-1a hashes of len bytes (offset basis and prime of FNV-1a). */
extern uint32_t shardhash_fnv1a_32(const unsigned char *data, size_t len);
extern uint64_t shardhash_fnv1a_64(const unsigned char *data, size_t len);

/*
 * The bucket, 0..nshards-1, of len bytes under hash h (the caller adds the
 * table's shard_base).  nshards is 1..INT32_MAX.  Returns -1 when nshards
 * is out of range or OpenSSL cannot compute the digest.
 */
extern int	shardhash_bucket(ShardHash h, const unsigned char *data, size_t len,
							 int nshards);

/*
 * The range shard of a key: bisect_right(bounds, key) - 1, that is the
 * index of the last boundary that is less than or equal to the key, or -1
 * when the key sorts before bounds[0] (which is normally "", so never).
 * Strings compare as bytes (memcmp, then the shorter first), which for
 * UTF-8 is the code point order Python compares str by.  bounds[i] has
 * lens[i] bytes; the n bounds must be sorted (see shardrange_sorted).
 */
extern int	shardrange_find(const char *const *bounds, const size_t *lens, int n,
							const char *key, size_t keylen);

/* True when the n bounds are strictly increasing in the order above. */
extern bool shardrange_sorted(const char *const *bounds, const size_t *lens,
							  int n);

/*
 * Lower-case len bytes of UTF-8 text as Python's str.lower() does, and
 * append the result to out: the simple lower-case mapping of each code
 * point, except that U+0130 becomes "i" followed by U+0307 and that a
 * capital sigma ending a word becomes a final sigma (U+03C2).  For the word
 * ending, characters that Unicode calls case-ignorable are recognised in
 * the common blocks only (Latin punctuation and modifiers, the combining
 * diacritical marks, Greek signs, format controls).  Returns false, leaving
 * out as it was, when the text is not valid UTF-8 or the "C.UTF-8" locale
 * is missing.
 */
extern bool shardrange_lower(const char *text, size_t len, Buf *out);

#endif							/* SHARD_FDW_SHARDHASH_H */
