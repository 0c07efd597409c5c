/*-------------------------------------------------------------------------
 *
 * shardhash.c
 *		Shard routing hashes, range boundary search, and the lower-casing
 *		of range keys.
 *
 * Digests are reduced mod N as big-endian integers one byte at a time
 * (r = (r * 256 + byte) mod N), which gives the same result as reducing
 * the whole 128- or 256-bit number, without big-number arithmetic.
 *
 *-------------------------------------------------------------------------
 */
#include <locale.h>
#include <stdint.h>
#include <string.h>
#include <wctype.h>

#include <openssl/evp.h>

#include "core/shardhash.h"

#define FNV32_OFFSET_BASIS	UINT32_C(0x811c9dc5)
#define FNV32_PRIME			UINT32_C(0x01000193)
#define FNV64_OFFSET_BASIS	UINT64_C(0xcbf29ce484222325)
#define FNV64_PRIME			UINT64_C(0x00000100000001b3)

#define CAPITAL_I_WITH_DOT	0x0130
#define CAPITAL_SIGMA		0x03A3
#define SMALL_SIGMA			0x03C3
#define SMALL_FINAL_SIGMA	0x03C2

/* Option names, indexed by ShardHash. */
static const char *const hash_names[] = {
	[SHARD_HASH_SHA256] = "sha256",
	[SHARD_HASH_SHA256_32] = "sha256_32",
	[SHARD_HASH_MD5] = "md5",
	[SHARD_HASH_FNV1A_32] = "fnv1a_32",
	[SHARD_HASH_FNV1A_64] = "fnv1a_64",
};

#define NUM_HASHES ((int) (sizeof(hash_names) / sizeof(hash_names[0])))

/*
 * Case-ignorable code points (Unicode's Case_Ignorable property) that can
 * stand between a capital sigma and the letters around it, in the blocks
 * where Greek text finds them: apostrophes and word-internal punctuation,
 * modifier letters and symbols, combining marks, Greek signs and format
 * controls.  Sorted, inclusive ranges.
 */
static const struct
{
	uint32_t	first;
	uint32_t	last;
}			case_ignorable[] = {
	{0x0027, 0x0027}, {0x002E, 0x002E}, {0x003A, 0x003A}, {0x005E, 0x005E},
	{0x0060, 0x0060}, {0x00A8, 0x00A8}, {0x00AD, 0x00AD}, {0x00AF, 0x00AF},
	{0x00B4, 0x00B4}, {0x00B7, 0x00B8}, {0x02B0, 0x036F}, {0x0374, 0x0375},
	{0x037A, 0x037A}, {0x0384, 0x0385}, {0x0387, 0x0387}, {0x0483, 0x0489},
	{0x1AB0, 0x1AFF}, {0x1DC0, 0x1DFF}, {0x200B, 0x200F}, {0x2018, 0x2019},
	{0x2024, 0x2024}, {0x2027, 0x2027}, {0x202A, 0x202E}, {0x2060, 0x2064},
	{0x20D0, 0x20FF}, {0xFE00, 0xFE0F}, {0xFE13, 0xFE13}, {0xFE20, 0xFE2F},
	{0xFE52, 0xFE52}, {0xFE55, 0xFE55}, {0xFEFF, 0xFEFF}, {0xFF07, 0xFF07},
	{0xFF0E, 0xFF0E}, {0xFF1A, 0xFF1A}, {0xE0001, 0xE0001},
	{0xE0020, 0xE007F}, {0xE0100, 0xE01EF},
};

/*
 * Look up a hash by name.
 */
bool
shardhash_from_name(const char *name, ShardHash *out)
{
	int			i;

	for (i = 0; i < NUM_HASHES; i++)
	{
		if (strcmp(name, hash_names[i]) == 0)
		{
			*out = (ShardHash) i;
			return true;
		}
	}
	return false;
}

/*
 * The option name of a hash.
 */
const char *
shardhash_name(ShardHash h)
{
	return hash_names[h];
}

/*
 * FNV-1a of len bytes from offset basis and prime.  Computed in 64 bits:
 * the low 32 bits of each step depend only on the low 32 bits before it,
 * so the 32-bit hash is the low half of the same loop on its basis and
 * prime.
 */
static uint64_t
fnv1a(const unsigned char *data, size_t len, uint64_t basis, uint64_t prime)
{
	uint64_t	h = basis;

	for (size_t i = 0; i < len; i++)
		h = (h ^ data[i]) * prime;
	return h;
}

/*
 * 32-bit FNV-1a of len bytes.
 */
uint32_t
shardhash_fnv1a_32(const unsigned char *data, size_t len)
{
	return (uint32_t) fnv1a(data, len, FNV32_OFFSET_BASIS, FNV32_PRIME);
}

/*
 * 64-bit FNV-1a of len bytes.
 */
uint64_t
shardhash_fnv1a_64(const unsigned char *data, size_t len)
{
	return fnv1a(data, len, FNV64_OFFSET_BASIS, FNV64_PRIME);
}

/*
 * n bytes read as a big-endian unsigned integer, mod nshards.
 */
static int
bigendian_mod(const unsigned char *bytes, size_t n, int nshards)
{
	uint64_t	r = 0;
	size_t		i;

	for (i = 0; i < n; i++)
		r = ((r << 8) | bytes[i]) % (uint64_t) nshards;
	return (int) r;
}

/*
 * The bucket of len bytes; see shardhash.h.
 */
int
shardhash_bucket(ShardHash h, const unsigned char *data, size_t len,
				 int nshards)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen;

	if (nshards < 1)
		return -1;
	switch (h)
	{
		case SHARD_HASH_SHA256:
		case SHARD_HASH_SHA256_32:
			if (EVP_Digest(data, len, md, &mdlen, EVP_sha256(), NULL) != 1)
				return -1;
			return bigendian_mod(md, h == SHARD_HASH_SHA256 ? mdlen : 4,
								 nshards);
		case SHARD_HASH_MD5:
			if (EVP_Digest(data, len, md, &mdlen, EVP_md5(), NULL) != 1)
				return -1;
			return bigendian_mod(md, mdlen, nshards);
		case SHARD_HASH_FNV1A_32:
			return (int) (shardhash_fnv1a_32(data, len) % (uint32_t) nshards);
		case SHARD_HASH_FNV1A_64:
			return (int) (shardhash_fnv1a_64(data, len) % (uint64_t) nshards);
	}
	return -1;
}

/*
 * Compare two byte strings: memcmp on the common length, then the shorter
 * first.
 */
static int
compare_bytes(const char *a, size_t alen, const char *b, size_t blen)
{
	int			c = memcmp(a, b, alen < blen ? alen : blen);

	if (c != 0)
		return c;
	return (alen > blen) - (alen < blen);
}

/*
 * The range shard of a key: binary search for the number of bounds that
 * are less than or equal to it, minus one.
 */
int
shardrange_find(const char *const *bounds, const size_t *lens, int n,
				const char *key, size_t keylen)
{
	int			lo = 0;
	int			hi = n;

	while (lo < hi)
	{
		int			mid = lo + (hi - lo) / 2;

		if (compare_bytes(key, keylen, bounds[mid], lens[mid]) < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo - 1;
}

/*
 * Whether the bounds are strictly increasing.
 */
bool
shardrange_sorted(const char *const *bounds, const size_t *lens, int n)
{
	int			i;

	for (i = 1; i < n; i++)
		if (compare_bytes(bounds[i - 1], lens[i - 1], bounds[i], lens[i]) >= 0)
			return false;
	return true;
}

/*
 * Decode one code point of strict UTF-8 from s[0..len).  Returns the number
 * of bytes it takes, or 0 when the bytes are not valid UTF-8 (truncated,
 * overlong, a surrogate, or beyond U+10FFFF).
 */
static size_t
utf8_decode(const unsigned char *s, size_t len, uint32_t *cp)
{
	size_t		n;
	size_t		i;
	unsigned char lo = 0x80;
	unsigned char hi = 0xBF;

	if (s[0] < 0x80)
	{
		*cp = s[0];
		return 1;
	}
	if (s[0] >= 0xC2 && s[0] <= 0xDF)
	{
		n = 2;
		*cp = s[0] & 0x1F;
	}
	else if (s[0] >= 0xE0 && s[0] <= 0xEF)
	{
		n = 3;
		*cp = s[0] & 0x0F;
		if (s[0] == 0xE0)
			lo = 0xA0;
		else if (s[0] == 0xED)
			hi = 0x9F;
	}
	else if (s[0] >= 0xF0 && s[0] <= 0xF4)
	{
		n = 4;
		*cp = s[0] & 0x07;
		if (s[0] == 0xF0)
			lo = 0x90;
		else if (s[0] == 0xF4)
			hi = 0x8F;
	}
	else
		return 0;

	if (len < n)
		return 0;
	for (i = 1; i < n; i++)
	{
		if (s[i] < lo || s[i] > hi)
			return 0;
		*cp = (*cp << 6) | (s[i] & 0x3F);
		lo = 0x80;
		hi = 0xBF;
	}
	return n;
}

/* Append code point cp to out as UTF-8. */
static void
utf8_append(Buf *out, uint32_t cp)
{
	char		b[4];

	if (cp < 0x80)
		buf_putc(out, (char) cp);
	else if (cp < 0x800)
	{
		b[0] = (char) (0xC0 | (cp >> 6));
		b[1] = (char) (0x80 | (cp & 0x3F));
		buf_append(out, b, 2);
	}
	else if (cp < 0x10000)
	{
		b[0] = (char) (0xE0 | (cp >> 12));
		b[1] = (char) (0x80 | ((cp >> 6) & 0x3F));
		b[2] = (char) (0x80 | (cp & 0x3F));
		buf_append(out, b, 3);
	}
	else
	{
		b[0] = (char) (0xF0 | (cp >> 18));
		b[1] = (char) (0x80 | ((cp >> 12) & 0x3F));
		b[2] = (char) (0x80 | ((cp >> 6) & 0x3F));
		b[3] = (char) (0x80 | (cp & 0x3F));
		buf_append(out, b, 4);
	}
}

/*
 * The "C.UTF-8" locale, whose towlower_l applies Unicode's simple case
 * mapping; made on first use and kept for the life of the process.
 * Returns (locale_t) 0 when the system lacks it.
 */
static locale_t
c_utf8_locale(void)
{
	static locale_t loc = (locale_t) 0;

	if (loc == (locale_t) 0)
		loc = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t) 0);
	return loc;
}

/* Whether cp is one of the case-ignorable code points listed above. */
static bool
is_case_ignorable(uint32_t cp)
{
	int			lo = 0;
	int			hi = (int) (sizeof(case_ignorable) / sizeof(case_ignorable[0]));

	while (lo < hi)
	{
		int			mid = lo + (hi - lo) / 2;

		if (cp < case_ignorable[mid].first)
			hi = mid;
		else if (cp > case_ignorable[mid].last)
			lo = mid + 1;
		else
			return true;
	}
	return false;
}

/* Whether cp is cased: a letter with a case, or one that has case forms. */
static bool
is_cased(uint32_t cp, locale_t loc)
{
	wint_t		c = (wint_t) cp;

	return iswlower_l(c, loc) || iswupper_l(c, loc) ||
		towlower_l(c, loc) != c || towupper_l(c, loc) != c;
}

/*
 * Whether the capital sigma at cps[i] ends a word (Unicode's Final_Sigma
 * condition): a cased letter comes before it and none after it, skipping
 * case-ignorable code points both ways.
 */
static bool
is_final_sigma(const uint32_t *cps, size_t n, size_t i, locale_t loc)
{
	size_t		j = i;
	size_t		k;

	while (j > 0 && is_case_ignorable(cps[j - 1]))
		j--;
	if (j == 0 || !is_cased(cps[j - 1], loc))
		return false;
	for (k = i + 1; k < n && is_case_ignorable(cps[k]); k++)
		;
	return k == n || !is_cased(cps[k], loc);
}

/*
 * Lower-case UTF-8 text as Python's str.lower() does; see shardhash.h.
 */
bool
shardrange_lower(const char *text, size_t len, Buf *out)
{
	const unsigned char *s = (const unsigned char *) text;
	locale_t	loc = c_utf8_locale();
	uint32_t   *cps;
	size_t		n = 0;
	size_t		pos = 0;
	size_t		i;

	if (loc == (locale_t) 0)
		return false;
	cps = sfdw_alloc((len + 1) * sizeof(uint32_t));
	while (pos < len)
	{
		size_t		step = utf8_decode(s + pos, len - pos, &cps[n]);

		if (step == 0)
		{
			sfdw_free(cps);
			return false;
		}
		pos += step;
		n++;
	}

	for (i = 0; i < n; i++)
	{
		if (cps[i] == CAPITAL_I_WITH_DOT)
		{
			utf8_append(out, 'i');
			utf8_append(out, 0x0307);
		}
		else if (cps[i] == CAPITAL_SIGMA)
			utf8_append(out, is_final_sigma(cps, n, i, loc) ?
						SMALL_FINAL_SIGMA : SMALL_SIGMA);
		else
			utf8_append(out, (uint32_t) towlower_l((wint_t) cps[i], loc));
	}
	sfdw_free(cps);
	return true;
}
