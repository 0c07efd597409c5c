/*-------------------------------------------------------------------------
 *
 * route.c
 *		Shard routing, shared by reads and writes: which shard a row goes to
 *		under each strategy, which shards a read must visit, and the
 *		partition key values those shards have.
 *
 * Column values arrive as their key text (codec_key_text), indexed by
 * column; NULL means the value is not known.
 *
 *-------------------------------------------------------------------------
 */
#include "catalog/shard_catalog.h"

#include "catalog/pg_type.h"
#include "common/unicode_norm.h"
#include "datatype/timestamp.h"
#include "mb/pg_wchar.h"
#include "utils/date.h"

/* NFKD of UTF-8 text, as a new string. */
static char *
nfkd(const char *text)
{
	int			len = strlen(text);
	pg_wchar   *wide = palloc(sizeof(pg_wchar) * (len + 1));
	pg_wchar   *norm;
	StringInfoData buf;

	pg_encoding_mb2wchar_with_len(PG_UTF8, text, wide, len);
	norm = unicode_normalize(UNICODE_NFKD, wide);
	if (norm == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("out of memory")));
	initStringInfo(&buf);
	for (pg_wchar *p = norm; *p; p++)
	{
		unsigned char utf8[8];

		unicode_to_utf8(*p, utf8);
		appendBinaryStringInfo(&buf, (char *) utf8, pg_utf_mblen(utf8));
	}
	pfree(norm);
	return buf.data;
}

/*
 * The key the range strategy bisects for text: as stored, or lower-cased
 * then NFKD-normalized (the range-sharded catalog's normalize('NFKD',
 * title.lower())).
 */
char *
route_range_key(ShardTable *t, const char *text)
{
	Buf			lower;

	if (!t->range_normalize)
		return pstrdup(text);
	if (GetDatabaseEncoding() != PG_UTF8)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("range_normalize 'nfkd_lower' needs a UTF8 database")));
	buf_init(&lower);
	if (!shardrange_lower(text, strlen(text), &lower))
		ereport(ERROR,
				(errcode(ERRCODE_CHARACTER_NOT_IN_REPERTOIRE),
				 errmsg("cannot lower-case the range key \"%s\" of foreign table \"%s\"",
						text, t->relname)));
	return nfkd(lower.data);
}

/*
 * The shard (shard_base counted in) that the shard_by values put a row in
 * under the calculated or range strategy, or -1 when a shard_by value is
 * unknown or the strategy does not derive shards from values.
 */
int
route_shard(ShardTable *t, const char *const *values)
{
	StringInfoData key;
	ListCell   *lc;
	int			shard;

	if (t->strategy != SHARD_CALCULATED && t->strategy != SHARD_RANGE)
		return -1;
	initStringInfo(&key);
	foreach(lc, t->shard_by)
	{
		const char *v = values[lfirst_int(lc)];

		if (v == NULL)
			return -1;
		appendStringInfoString(&key, v);
	}
	if (t->strategy == SHARD_CALCULATED)
		shard = shardhash_bucket(t->hash, (unsigned char *) key.data, key.len, t->shards);
	else
	{
		char	   *norm = route_range_key(t, key.data);

		shard = shardrange_find((const char *const *) t->boundaries, t->boundary_lens,
								t->nboundaries, norm, strlen(norm));
	}
	if (shard < 0)
		elog(ERROR, "shard_fdw: no shard for \"%s\"", key.data);
	return t->shard_base + shard;
}

/* Template values indexed by part, from values indexed by column. */
const char **
route_template_values(ShardTable *t, const KeyTemplate *tmpl, const char *const *values)
{
	const char **parts = palloc0(sizeof(char *) * tmpl->nparts);

	for (int i = 0; i < tmpl->nparts; i++)
		if (tmpl->parts[i].kind == KP_COLUMN)
			parts[i] = values[shard_find_column(t, tmpl->parts[i].text) - t->columns];
	return parts;
}

/*
 * The partition key text for the values under shard (ignored when the
 * template has no {shard}), or NULL with *err set when the values cannot
 * be rendered.  base asks for the base key (no shard: the leaderboard's
 * items from before it was sharded, keyed by game_id alone).
 */
char *
route_partition_key(ShardTable *t, const char *const *values, long shard, bool base,
					char *err, size_t errlen)
{
	const char **parts;
	Buf			out;
	bool		ok;

	if (t->pk.template == NULL)
		return pstrdup(values[t->pk.column]);
	parts = route_template_values(t, t->pk.template, values);
	buf_init(&out);
	ok = base ? keyfmt_render_base(t->pk.template, parts, &out, err, errlen) :
		keyfmt_render(t->pk.template, parts, shard, &out, err, errlen);
	return ok ? out.data : NULL;
}

/*
 * The sort key text for the values, or NULL with *err set when a value is
 * missing or cannot be rendered.
 */
char *
route_sort_key(ShardTable *t, const char *const *values, char *err, size_t errlen)
{
	Buf			out;

	Assert(t->sk.attribute != NULL);
	if (t->sk.template == NULL)
	{
		if (values[t->sk.column] == NULL)
		{
			sfdw_set_error(err, errlen, "column \"%s\" has no value",
						   t->columns[t->sk.column].name);
			return NULL;
		}
		return pstrdup(values[t->sk.column]);
	}
	buf_init(&out);
	if (!keyfmt_render(t->sk.template, route_template_values(t, t->sk.template, values),
					   0, &out, err, errlen))
		return NULL;
	return out.data;
}

/*
 * The text of index key k (index_pk or index_sk) for the values, or NULL
 * when the table writes no such key or a column of its template has no
 * value: the item then has no such attribute and stays out of the index
 * (a sparse index).  Errors name the key's option.
 */
char *
route_index_key(ShardTable *t, const ShardKey *k, const char *const *values)
{
	const char **parts;
	Buf			out;
	char		err[SFDW_ERRLEN];

	if (k->attribute == NULL)
		return NULL;
	parts = route_template_values(t, k->template, values);
	if (keyfmt_known_fields(k->template, parts) < keyfmt_field_count(k->template))
		return NULL;
	buf_init(&out);
	if (!keyfmt_render(k->template, parts, 0, &out, err, sizeof(err)))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot build index key attribute \"%s\" of a row of foreign table \"%s\": %s",
						k->attribute, t->relname, err)));
	return out.data;
}

/* A shard drawn at random among count shards (at least one). */
static long
random_shard(ShardTable *t, int count)
{
	return t->shard_base +
		(long) pg_prng_uint64_range(&pg_global_prng_state, 0, Max(count, 1) - 1);
}

/*
 * The shard a new row with the given column values is written to,
 * shard_base counted in: 0 when unsharded, hashed or ranged from its
 * shard_by values (calculated, range), drawn at random among the shards
 * (random) or among known_shards (dynamic: its key's current count, which
 * the caller reads from the metadata table first, dynamic_write_shard).
 * Errors name a shard_by column without a value.
 */
long
route_write_shard(ShardTable *t, const char *const *values, int known_shards)
{
	ListCell   *lc;

	switch (t->strategy)
	{
		case SHARD_NONE:
			return 0;
		case SHARD_RANDOM:
			return random_shard(t, t->shards);
		case SHARD_DYNAMIC:
			return random_shard(t, known_shards);
		case SHARD_CALCULATED:
		case SHARD_RANGE:
			break;
	}
	foreach(lc, t->shard_by)
	{
		ShardColumn *col = &t->columns[lfirst_int(lc)];

		if (values[lfirst_int(lc)] == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_NOT_NULL_VIOLATION),
					 errmsg("cannot place a row with no value in column \"%s\" in foreign table \"%s\"",
							col->name, t->relname),
					 errdetail("Column \"%s\" chooses the row's shard (option \"shard_by\").",
							   col->name)));
	}
	return route_shard(t, values);
}

/*
 * The shards a read with the given column values must visit, in order,
 * as an IntList.  The dynamic strategy passes the largest shard count ever
 * recorded for the key as known_shards.
 */
List *
route_read_shards(ShardTable *t, const char *const *values, int known_shards)
{
	List	   *shards = NIL;
	int			one = route_shard(t, values);
	int			count = t->strategy == SHARD_DYNAMIC ? known_shards : t->shards;

	if (t->strategy == SHARD_NONE)
		return list_make1_int(0);
	if (one >= 0)
		return list_make1_int(one);
	for (int i = 0; i < count; i++)
		shards = lappend_int(shards, t->shard_base + i);
	return shards;
}

/*
 * The shards a read visits in each partition when the columns marked in
 * fixed (indexed by column) are fixed by equality: one when they choose a
 * calculated or range shard, every one otherwise (and the legacy base
 * key); a dynamic key's count is known only when the read runs, taken as
 * one here.
 */
int
route_shards_per_partition(ShardTable *t, const bool *fixed)
{
	ListCell   *lc;
	bool		all = t->shard_by != NIL;

	if (t->strategy == SHARD_NONE || t->strategy == SHARD_DYNAMIC)
		return 1;
	foreach(lc, t->shard_by)
		all &= fixed[lfirst_int(lc)];
	if (all && (t->strategy == SHARD_CALCULATED || t->strategy == SHARD_RANGE))
		return 1;
	return t->shards + (t->legacy_unsharded ? 1 : 0);
}

/*
 * The column whose time buckets a read enumerates, or -1: the one column
 * of the partition key's template that the columns marked in fixed leave
 * open, when only bucket fields hold it, its type is date or timestamp,
 * and it chooses no shard.
 */
int
route_bucket_column(ShardTable *t, const bool *fixed)
{
	KeyTemplate *tmpl = t->pk.template;
	int			open = -1;

	if (tmpl == NULL || t->pk.attribute == NULL)
		return -1;
	for (int i = 0; i < tmpl->nparts; i++)
	{
		int			col;

		if (tmpl->parts[i].kind != KP_COLUMN)
			continue;
		col = shard_find_column(t, tmpl->parts[i].text) - t->columns;
		if (fixed[col])
			continue;
		if (!keyfmt_is_bucket(&tmpl->parts[i]) || (open >= 0 && open != col))
			return -1;
		open = col;
	}
	if (open < 0 || list_member_int(t->shard_by, open))
		return -1;
	return open;
}

/*
 * The bucket a read of column col enumerates by: the finest of its fields
 * in the partition key, and no finer than a day for a date.
 */
KeyTimeForm
route_bucket_form(ShardTable *t, int col)
{
	KeyTimeForm form = keyfmt_finest_bucket(t->pk.template, t->columns[col].name);

	if (t->columns[col].typid == DATEOID && form > KT_DAY)
		form = KT_DAY;
	return form;
}

/* A finite date or timestamp as microseconds since 2000-01-01 (UTC). */
int64
route_time_usecs(Oid typid, Datum value)
{
	if (typid == DATEOID)
		return (int64) DatumGetDateADT(value) * USECS_PER_DAY;
	return DatumGetInt64(value);
}

/*
 * The key texts of column col that stand for the buckets a read of its
 * values from lo to hi (microseconds, both included) visits, oldest first
 * or, when desc, newest first: the start of each bucket.  At most max + 1
 * of them, so that the caller can tell more than max apart; a range open
 * at its far end (lo or hi the least or greatest timestamp) is cut there.
 */
List *
route_read_buckets(ShardTable *t, int col, int64 lo, int64 hi, bool desc, int max)
{
	ShardColumn *c = &t->columns[col];
	KeyTimeForm form = route_bucket_form(t, col);
	int64		first = keyfmt_bucket_start(form, lo);
	int64		last = keyfmt_bucket_start(form, hi);
	List	   *texts = NIL;

	for (int64 start = desc ? last : first;
		 start >= first && start <= last && list_length(texts) <= max;
		 start = desc ? keyfmt_bucket_start(form, start - 1) : keyfmt_bucket_next(form, start))
	{
		Datum		value;

		if (c->typid == DATEOID)
			value = DateADTGetDatum((DateADT) (start / USECS_PER_DAY));
		else
			value = Int64GetDatum(start);
		texts = lappend(texts, codec_key_text(c, value));
	}
	return texts;
}
