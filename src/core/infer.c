/*-------------------------------------------------------------------------
 *
 * infer.c
 *		What sampled keys say about how a table was written (see infer.h):
 *		shard suffixes of partition keys, zero-padded sort key fields, and
 *		the shard hash that places items.
 *
 * Plain C: never includes PostgreSQL headers.
 *
 *-------------------------------------------------------------------------
 */
#include "core/infer.h"

#include <string.h>

/* Digits of a shard suffix, at most: more is an id, not a shard. */
#define SUFFIX_MAX_DIGITS 9

/* Digits of a zero-padded sort key number: DynamoDB numbers have 38. */
#define SORT_MIN_WIDTH 2
#define SORT_MAX_WIDTH 38

/* True for a byte that may separate the fields of a key. */
static bool
is_separator(char c)
{
	return c > ' ' && c < 0x7f && c != '{' && c != '}' &&
		!(c >= '0' && c <= '9') && !(c >= 'a' && c <= 'z') && !(c >= 'A' && c <= 'Z');
}

/* See infer.h. */
bool
infer_split_shard(const char *key, size_t len, InferSplit *out)
{
	size_t		digits = 0;
	long		shard = 0;

	while (digits < len && key[len - 1 - digits] >= '0' && key[len - 1 - digits] <= '9')
		digits++;
	if (digits == 0 || digits > SUFFIX_MAX_DIGITS || digits + 2 > len)
		return false;
	if (digits > 1 && key[len - digits] == '0')
		return false;
	if (!is_separator(key[len - digits - 1]))
		return false;
	for (size_t i = len - digits; i < len; i++)
		shard = shard * 10 + (key[i] - '0');
	out->base_len = len - digits - 1;
	out->sep = key[len - digits - 1];
	out->shard = shard;
	return true;
}

/* See infer.h. */
bool
infer_shards(const char *const *keys, int n, InferShards *out)
{
	bool		seen[INFER_MAX_SHARDS + 1] = {false};
	InferSplit	first;
	long		lo = INFER_MAX_SHARDS + 1;
	long		hi = -1;
	int			distinct = 0;
	int			base;
	bool		repeated = false;

	if (n < 2 || !infer_split_shard(keys[0], strlen(keys[0]), &first))
		return false;
	for (int i = 0; i < n; i++)
	{
		InferSplit	s;

		if (!infer_split_shard(keys[i], strlen(keys[i]), &s) || s.sep != first.sep ||
			s.shard > INFER_MAX_SHARDS)
			return false;
		if (!seen[s.shard])
			distinct++;
		seen[s.shard] = true;
		lo = s.shard < lo ? s.shard : lo;
		hi = s.shard > hi ? s.shard : hi;
		/* a base with a second shard number */
		for (int j = 0; j < i && !repeated; j++)
		{
			InferSplit	o;

			(void) infer_split_shard(keys[j], strlen(keys[j]), &o);
			repeated = o.base_len == s.base_len && o.shard != s.shard &&
				memcmp(keys[j], keys[i], s.base_len) == 0;
		}
	}
	if (lo > 1 || !repeated)
		return false;
	base = (int) lo;
	if (hi - base + 1 < 2 || hi - base + 1 > INFER_MAX_SHARDS ||
		distinct * 2 < hi - base + 1)
		return false;
	out->sep = first.sep;
	out->shards = (int) (hi - base + 1);
	out->base = base;
	return true;
}

/* See infer.h. */
bool
infer_sort_key(const char *const *keys, int n, InferSortKey *out)
{
	int			width = -1;
	char		sep = '\0';

	if (n < 1)
		return false;
	for (int i = 0; i < n; i++)
	{
		const char *k = keys[i];
		int			digits = 0;

		while (k[digits] >= '0' && k[digits] <= '9')
			digits++;
		if (digits < SORT_MIN_WIDTH || digits > SORT_MAX_WIDTH ||
			!is_separator(k[digits]) || k[digits + 1] == '\0')
			return false;
		if (i == 0)
		{
			width = digits;
			sep = k[digits];
		}
		else if (digits != width || k[digits] != sep)
			return false;
	}
	out->width = width;
	out->sep = sep;
	return true;
}

/* See infer.h. */
bool
infer_hash(const char *const *values, const size_t *lens, const long *shards,
		   int n, int nshards, int base, ShardHash *out)
{
	static const ShardHash hashes[] = {
		SHARD_HASH_SHA256, SHARD_HASH_SHA256_32, SHARD_HASH_MD5,
		SHARD_HASH_FNV1A_32, SHARD_HASH_FNV1A_64
	};

	if (n < INFER_MIN_HASH_ITEMS || nshards < 2)
		return false;
	for (size_t h = 0; h < sizeof(hashes) / sizeof(hashes[0]); h++)
	{
		int			i;

		for (i = 0; i < n; i++)
			if (shardhash_bucket(hashes[h], (const unsigned char *) values[i], lens[i],
								 nshards) + base != shards[i])
				break;
		if (i == n)
		{
			*out = hashes[h];
			return true;
		}
	}
	return false;
}

/* True when the n bytes at s are ASCII digits. */
static bool
digits_at(const char *s, int n)
{
	for (int i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

/* See infer.h. */
bool
infer_is_timestamp(const char *text)
{
	const char *p = text;

	if (strlen(text) < 20 || !digits_at(p, 4) || p[4] != '-' || !digits_at(p + 5, 2) ||
		p[7] != '-' || !digits_at(p + 8, 2) || p[10] != 'T' || !digits_at(p + 11, 2) ||
		p[13] != ':' || !digits_at(p + 14, 2) || p[16] != ':' || !digits_at(p + 17, 2))
		return false;
	p += 19;
	if (*p == '.')
	{
		p++;
		if (!digits_at(p, 1))
			return false;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	if (*p == 'Z')
		return p[1] == '\0';
	return (*p == '+' || *p == '-') && digits_at(p + 1, 2) && p[3] == ':' &&
		digits_at(p + 4, 2) && p[6] == '\0';
}
