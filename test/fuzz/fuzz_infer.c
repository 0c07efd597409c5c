/*-------------------------------------------------------------------------
 *
 * fuzz_infer.c
 *		libFuzzer target: what sampled keys say about a table (infer.c).
 *		The input is keys, one a line.
 *
 * Whatever infer_shards finds must be a template that decodes every key
 * to a shard in base..base+N-1; whatever infer_sort_key finds, a template
 * {n:0W}<sep>{t} that decodes every key.  infer_hash runs over the keys
 * and their shards too.
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/infer.h"
#include "core/keyfmt.h"

/* The most keys read from one input. */
#define MAX_KEYS 64

/* Check that template text decodes each of the n keys; shards in lo..hi. */
static void
check_decodes(const char *text, char **keys, int n, long lo, long hi)
{
	char		err[SFDW_ERRLEN];
	KeyTemplate *t = keyfmt_parse(text, err, sizeof(err));
	KeySpan    *spans;

	if (t == NULL)
		abort();
	spans = sfdw_alloc(sizeof(KeySpan) * t->nparts);
	for (int i = 0; i < n; i++)
	{
		long		shard = -1;

		if (!keyfmt_decode(t, keys[i], strlen(keys[i]), spans, &shard))
			abort();
		if (lo >= 0 && (shard < lo || shard > hi))
			abort();
	}
	sfdw_free(spans);
	keyfmt_free(t);
}

int
LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	char	   *keys[MAX_KEYS];
	size_t		lens[MAX_KEYS];
	long		shards[MAX_KEYS];
	int			n = 0;
	size_t		start = 0;
	InferShards s;
	InferSortKey k;
	ShardHash	h;
	char		text[64];

	for (size_t i = 0; i <= size && n < MAX_KEYS; i++)
		if (i == size || data[i] == '\n')
		{
			if (memchr(data + start, '\0', i - start) == NULL)
			{
				keys[n] = sfdw_strndup((const char *) data + start, i - start);
				lens[n] = i - start;
				n++;
			}
			start = i + 1;
		}
	if (infer_shards((const char *const *) keys, n, &s))
	{
		snprintf(text, sizeof(text), "{b}%c{shard}", s.sep);
		check_decodes(text, keys, n, s.base, s.base + s.shards - 1);
		for (int i = 0; i < n; i++)
		{
			InferSplit	split;

			if (!infer_split_shard(keys[i], lens[i], &split))
				abort();
			shards[i] = split.shard;
		}
		(void) infer_hash((const char *const *) keys, lens, shards, n,
						  s.shards, s.base, &h);
	}
	if (infer_sort_key((const char *const *) keys, n, &k))
	{
		snprintf(text, sizeof(text), "{n:0%d}%c{t}", k.width, k.sep);
		check_decodes(text, keys, n, -1, -1);
	}
	for (int i = 0; i < n; i++)
		sfdw_free(keys[i]);
	return 0;
}
