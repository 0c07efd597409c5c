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
#include "shard_fdw.h"

#include "common/unicode_norm.h"
#include "mb/pg_wchar.h"

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
 * then NFKD-normalized (seed 003's normalize('NFKD', title.lower())).
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

/*
 * The option by which the item key uses column col, or NULL:
 * "partition_key" or "sort_key" when that key is the column,
 * "partition_key_format" or "sort_key_format" when its template has a
 * field of it.
 */
const char *
route_key_option(ShardTable *t, int col)
{
	ShardKey   *keys[] = {&t->pk, &t->sk};
	const char *const names[] = {"partition_key", "sort_key"};
	const char *const formats[] = {"partition_key_format", "sort_key_format"};

	for (size_t k = 0; k < lengthof(keys); k++)
	{
		if (keys[k]->attribute == NULL)
			continue;
		if (keys[k]->template == NULL && keys[k]->column == col)
			return names[k];
		for (int i = 0; keys[k]->template && i < keys[k]->template->nparts; i++)
			if (keys[k]->template->parts[i].kind == KP_COLUMN &&
				strcmp(keys[k]->template->parts[i].text, t->columns[col].name) == 0)
				return formats[k];
	}
	return NULL;
}

/* True when the item key uses column col (see route_key_option). */
bool
route_key_uses(ShardTable *t, int col)
{
	return route_key_option(t, col) != NULL;
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
 * be rendered.  base asks for the base key (no shard, seed 002's legacy
 * items).
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
