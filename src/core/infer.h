/*-------------------------------------------------------------------------
 *
 * infer.h
 *		What sampled keys say about how a table was written: a partition
 *		key sharded by a numeric suffix (<base><separator><n>, n over 0..N-1
 *		or 1..N), a sort key made of a zero-padded number, a separator and
 *		text ({score:020}#{player_id}), and which shard hash puts each item
 *		in its shard.  IMPORT FOREIGN SCHEMA (import.c) turns the answers
 *		into key templates and sharding options.
 *
 * Plain C (see pure.h): no PostgreSQL header; the callers own the key
 * texts, nothing here allocates.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHARD_FDW_INFER_H
#define SHARD_FDW_INFER_H

#include "core/pure.h"
#include "core/shardhash.h"

/* The largest shard count detected: a larger suffix is taken for an id. */
#define INFER_MAX_SHARDS 1000

/* The fewest items whose shards must agree before a hash is named. */
#define INFER_MIN_HASH_ITEMS 8

/* A partition key split as <base><sep><shard>. */
typedef struct InferSplit
{
	size_t		base_len;		/* bytes of <base> */
	char		sep;			/* the separator, an ASCII punctuation mark */
	long		shard;			/* the number after it */
} InferSplit;

/* What the partition keys of a sample say about write sharding. */
typedef struct InferShards
{
	char		sep;			/* the separator before the shard number */
	int			shards;			/* N */
	int			base;			/* the first shard number, 0 or 1 */
} InferShards;

/* A sort key of the form <zero-padded number><sep><text>. */
typedef struct InferSortKey
{
	int			width;			/* digits of the number, every key alike */
	char		sep;			/* the separator after it */
} InferSortKey;

/*
 * Split a key of len bytes as <base><sep><shard>: a non-empty base, one
 * ASCII punctuation mark other than a brace, and 1 to 9 digits without a
 * leading zero (or "0") that end the key.  False when it is not so.
 */
extern bool infer_split_shard(const char *key, size_t len, InferSplit *out);

/*
 * Whether n sampled partition keys are write-sharded: every one splits
 * (infer_split_shard) with the same separator; the smallest shard seen is
 * 0 or 1 (the base), giving N = largest - base + 1 in 2..INFER_MAX_SHARDS;
 * at least half of the N shard numbers are seen; and some base is seen
 * with two shard numbers or more.  True with *out filled when they are.
 */
extern bool infer_shards(const char *const *keys, int n, InferShards *out);

/*
 * Whether n sampled sort keys are <number><sep><text>: every key starts
 * with the same number of digits (2 to 38), then one ASCII punctuation
 * mark other than a brace, alike in every key, then at least one byte.
 * True with *out filled when they are.
 */
extern bool infer_sort_key(const char *const *keys, int n, InferSortKey *out);

/*
 * The hash under which each of n values (values[i] of lens[i] bytes) lies
 * in its shard (shards[i]): hash mod nshards + base.  True with *out the
 * first such hash, in the order of ShardHash, when there is one and n is
 * at least INFER_MIN_HASH_ITEMS; false otherwise.
 */
extern bool infer_hash(const char *const *values, const size_t *lens,
					   const long *shards, int n, int nshards, int base,
					   ShardHash *out);

/*
 * Whether text is an ISO-8601 timestamp in UTC or with an offset, as
 * shard_fdw writes them: YYYY-MM-DDTHH:MM:SS, an optional fraction, then Z
 * or +HH:MM / -HH:MM.
 */
extern bool infer_is_timestamp(const char *text);

#endif							/* SHARD_FDW_INFER_H */
