/*-------------------------------------------------------------------------
 *
 * functions.c
 *		SQL functions for the people who run shard_fdw: a raw DynamoDB call
 *		through a server's connection, the backend's request counters, the
 *		cluster's per table and server (shard_fdw_stat), and
 *		sharding tools (where a row goes, per-shard counts, a recommended
 *		shard count, range boundaries from a sample), and a foreign table's
 *		secondary indexes learnt again.
 *
 *-------------------------------------------------------------------------
 */
#include "sql/sql.h"

#include "access/htup_details.h"
#include "catalog/pg_foreign_server.h"
#include "catalog/pg_type.h"
#include "foreign/foreign.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "mb/pg_wchar.h"
#include "utils/array.h"
#include <math.h>

PG_FUNCTION_INFO_V1(shard_fdw_request);
PG_FUNCTION_INFO_V1(shard_fdw_stats);
PG_FUNCTION_INFO_V1(shard_fdw_stat_rows);
PG_FUNCTION_INFO_V1(shard_fdw_stat_reset);
PG_FUNCTION_INFO_V1(shard_fdw_key);
PG_FUNCTION_INFO_V1(shard_fdw_shard_counts);
PG_FUNCTION_INFO_V1(shard_fdw_recommend_shards);
PG_FUNCTION_INFO_V1(shard_fdw_range_boundaries);
PG_FUNCTION_INFO_V1(shard_fdw_metadata);
PG_FUNCTION_INFO_V1(shard_fdw_refresh_indexes);

/*
 * Check that the current user may use server, as dblink and postgres_fdw
 * require of their functions: a user mapping alone does not let a user
 * reach DynamoDB through a server.
 */
static void
check_server_usage(ForeignServer *server)
{
	AclResult	result = shard_server_aclcheck(server->serverid, GetUserId(), ACL_USAGE);

	if (result != ACLCHECK_OK)
		aclcheck_error(result, OBJECT_FOREIGN_SERVER, server->servername);
}

/*
 * Foreign table relid, loaded for a function that reaches DynamoDB
 * through its server (DescribeTable, counts, metadata): the user needs
 * USAGE on the server.
 */
static ShardTable *
tool_table(Oid relid)
{
	check_server_usage(GetForeignServer(GetForeignTable(relid)->serverid));
	return shard_get_table(relid);
}

/*
 * shard_fdw_request(server name, operation text, body jsonb) returns jsonb:
 * run one DynamoDB API call (CreateTable, DescribeTable, GetItem, ...) with
 * the caller's user mapping, with the usual signing and retries, and
 * return DynamoDB's answer.
 */
Datum
shard_fdw_request(PG_FUNCTION_ARGS)
{
	char	   *servername = NameStr(*PG_GETARG_NAME(0));
	char	   *operation = text_to_cstring(PG_GETARG_TEXT_PP(1));
	Jsonb	   *body = PG_GETARG_JSONB_P(2);
	ForeignServer *server = GetForeignServerByName(servername, false);
	char	   *text = JsonbToCString(NULL, &body->root, VARSIZE(body));
	DdbConn    *conn;
	DdbGroup   *group;
	DdbJson    *response;
	Datum		result;

	if (server->fdwid != get_foreign_data_wrapper_oid("shard_fdw", false))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("server \"%s\" does not use shard_fdw", servername)));
	check_server_usage(server);
	for (const char *p = operation; *p; p++)
		if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z')))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("invalid DynamoDB operation name \"%s\"", operation)));
	conn = shard_get_connection(server->serverid, GetUserId());
	group = ddb_group_create(conn, 1);
	response = ddb_call(group, pstrdup(operation), text, strlen(text));
	result = DirectFunctionCall1(jsonb_in, CStringGetDatum(ddbjson_text(response, NULL)));
	ddb_group_free(group);
	PG_RETURN_DATUM(result);
}

/*
 * shard_fdw_stats(): this backend's cumulative request, retry, throttle
 * and capacity counters, and those of dynamic sharding (metadata items
 * created, key throttles met, shard count growths made).
 */
Datum
shard_fdw_stats(PG_FUNCTION_ARGS)
{
	const DdbStats *s = ddb_backend_stats();
	const DynamicStats *d = dynamic_backend_stats();
	TupleDesc	desc;
	Datum		values[8];
	bool		nulls[8] = {0};

	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	values[0] = Int64GetDatum(s->requests);
	values[1] = Int64GetDatum(s->attempts);
	values[2] = Int64GetDatum(s->retries);
	values[3] = Int64GetDatum(s->throttles);
	values[4] = Float8GetDatum(s->read_units + s->write_units);
	values[5] = Int64GetDatum(d->keys_created);
	values[6] = Int64GetDatum(d->key_throttles);
	values[7] = Int64GetDatum(d->growths);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(desc), values, nulls)));
}

/*
 * shard_fdw_stat_rows(): the shared counters of every database, foreign
 * table and server (the view shard_fdw_stat names them), and when they
 * were last reset.  An error says how to enable them when shard_fdw was
 * not preloaded.
 */
Datum
shard_fdw_stat_rows(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	TimestampTz reset_at;
	int			n;
	DdbStatRow *rows = stat_rows(&n, &reset_at);

	InitMaterializedSRF(fcinfo, 0);
	for (int i = 0; i < n; i++)
	{
		const DdbStats *c = &rows[i].counts;
		Datum		values[12];
		bool		nulls[12] = {0};

		values[0] = ObjectIdGetDatum(rows[i].dbid);
		values[1] = ObjectIdGetDatum(rows[i].relid);
		values[2] = ObjectIdGetDatum(rows[i].serverid);
		values[3] = Int64GetDatum(c->requests);
		values[4] = Int64GetDatum(c->read_items);
		values[5] = Int64GetDatum(c->returned_items);
		values[6] = Float8GetDatum(c->read_units);
		values[7] = Float8GetDatum(c->write_units);
		values[8] = Int64GetDatum(c->throttles);
		values[9] = Int64GetDatum(c->retries);
		values[10] = Int64GetDatum(c->errors);
		values[11] = TimestampTzGetDatum(reset_at);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

/* shard_fdw_stat_reset(): empty the shared counters; returns when. */
Datum
shard_fdw_stat_reset(PG_FUNCTION_ARGS)
{
	PG_RETURN_TIMESTAMPTZ(stat_reset());
}

/* ---------------------------------------------------------------------
 * Sharding tools
 * ---------------------------------------------------------------------
 */

/*
 * The key text of every column named in a JSON object of column values
 * ({"player_id": "p1", "score": 42}), indexed by column; the values go
 * through the columns' input functions first, so they are written as the
 * FDW would write them.
 */
static const char **
column_texts(ShardTable *t, Jsonb *values)
{
	const char **texts = palloc0(sizeof(char *) * Max(t->ncolumns, 1));
	char	   *json = JsonbToCString(NULL, &values->root, VARSIZE(values));
	char		err[SFDW_ERRLEN];
	DdbJson    *obj = ddbjson_parse(json, strlen(json), err, sizeof(err));

	if (obj == NULL || obj->kind != DJ_OBJECT)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("column values must be a JSON object")));
	for (int i = 0; i < obj->n; i++)
	{
		ShardColumn *col = shard_find_column(t, obj->keys[i]);
		const DdbJson *v = &obj->elems[i];
		Oid			infunc;
		Oid			ioparam;

		if (col == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_COLUMN),
					 errmsg("foreign table \"%s\" has no column \"%s\"",
							t->relname, obj->keys[i])));
		if (v->kind == DJ_NULL)
			continue;
		if (v->kind != DJ_STRING && v->kind != DJ_NUMBER && v->kind != DJ_BOOL)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("value of column \"%s\" must be a JSON scalar", col->name)));
		getTypeInputInfo(col->typid, &infunc, &ioparam);
		texts[col - t->columns] =
			codec_key_text(col, OidInputFunctionCall(infunc,
													 v->kind == DJ_BOOL ? (v->boolean ? "true" : "false") : v->str,
													 ioparam, col->typmod));
	}
	return texts;
}

/*
 * A group of requests on the connection of foreign table t, keeping to
 * its read budget; the caller frees it before returning, or it would stay
 * until the transaction ends.
 */
static DdbGroup *
key_group(ShardTable *t)
{
	DdbConn    *conn = shard_get_connection(GetForeignTable(t->relid)->serverid,
											GetUserId());
	DdbGroup   *group = ddb_group_create(conn, conn->server->max_concurrency);

	ddb_group_set_budget(group, budget_for(t, false));
	return group;
}

/*
 * shard_fdw_key(ftable regclass, values jsonb) returns (shard, partition_key,
 * sort_key): where a row with these column values would be written, as
 * an INSERT chooses it (dynamic_write_shard); with random and dynamic
 * sharding the shard is drawn as an INSERT would draw it, and a dynamic
 * key without metadata counts as one shard (the tool writes none).
 */
Datum
shard_fdw_key(PG_FUNCTION_ARGS)
{
	ShardTable *t = tool_table(PG_GETARG_OID(0));
	const char **texts = column_texts(t, PG_GETARG_JSONB_P(1));
	DdbGroup   *group;
	TupleDesc	desc;
	Datum		values[3];
	bool		nulls[3] = {0};
	long		shard;
	char		err[SFDW_ERRLEN];
	char	   *pk;
	char	   *sk;

	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	group = t->strategy == SHARD_DYNAMIC ? key_group(t) : NULL;
	shard = dynamic_write_shard(t, texts, group, false, NULL);
	if (group)
		ddb_group_free(group);
	nulls[0] = t->strategy == SHARD_NONE;
	pk = route_partition_key(t, texts, shard, false, err, sizeof(err));
	if (pk == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot build the partition key: %s", err)));
	values[0] = Int32GetDatum((int32) shard);
	values[1] = CStringGetTextDatum(pk);
	nulls[2] = true;
	if (t->sk.attribute && (sk = route_sort_key(t, texts, err, sizeof(err))) != NULL)
	{
		values[2] = CStringGetTextDatum(sk);
		nulls[2] = false;
	}
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(desc), values, nulls)));
}

/*
 * shard_fdw_shard_counts(ftable regclass, values jsonb) returns setof
 * (shard, partition_key, items, share): the items of each shard of one
 * logical key (the partition key columns given in values), counted with
 * Query Select COUNT, and each shard's share of them, to see skew.
 */
Datum
shard_fdw_shard_counts(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	ShardTable *t = tool_table(PG_GETARG_OID(0));
	const char **texts = column_texts(t, PG_GETARG_JSONB_P(1));
	List	   *shards;
	ListCell   *lc;
	DdbGroup   *group;
	int			n;
	int64	   *counts;
	char	  **keys;
	int64		total = 0;
	int			i = 0;

	InitMaterializedSRF(fcinfo, 0);
	group = key_group(t);
	if (t->strategy == SHARD_DYNAMIC)
	{
		char		err[SFDW_ERRLEN];
		char	   *base = route_partition_key(t, texts, 0, true, err, sizeof(err));

		if (base == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("cannot build the base key: %s", err)));
		shards = route_read_shards(t, (const char *const *) texts,
								   dynamic_meta(t, group, base, true, false).max_shards_ever);
	}
	else
		shards = route_read_shards(t, (const char *const *) texts, t->shards);
	n = list_length(shards);
	counts = palloc0(sizeof(int64) * n);
	keys = palloc0(sizeof(char *) * n);
	foreach(lc, shards)
	{
		char		err[SFDW_ERRLEN];
		const DdbJson *lek = NULL;

		keys[i] = route_partition_key(t, texts, lfirst_int(lc), false, err, sizeof(err));
		if (keys[i] == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("cannot build the partition key: %s", err)));
		do
		{
			size_t		len;
			char	   *body = request_count(t, keys[i], lek, &len);
			DdbJson    *resp = ddb_call(group, "Query", body, len);

			counts[i] += (int64) ddbjson_get_number(resp, "Count");
			lek = ddbjson_get(resp, "LastEvaluatedKey");
		} while (lek && lek->kind == DJ_OBJECT && lek->n > 0);
		total += counts[i];
		i++;
	}
	ddb_group_free(group);
	i = 0;
	foreach(lc, shards)
	{
		Datum		values[4];
		bool		nulls[4] = {0};

		values[0] = Int32GetDatum(lfirst_int(lc));
		values[1] = CStringGetTextDatum(keys[i]);
		values[2] = Int64GetDatum(counts[i]);
		values[3] = Float8GetDatum(total > 0 ? (double) counts[i] / total : 0.0);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		i++;
	}
	return (Datum) 0;
}

/*
 * shard_fdw_recommend_shards(writes_per_s, reads_per_s, item_bytes,
 * consistent_reads, headroom) returns int: the shard count that keeps each
 * shard under a partition's limits (1,000 WCU and 3,000 RCU a second; a
 * WCU writes 1 KB, an RCU reads 4 KB strongly or 8 KB eventually
 * consistently) at the given fraction of them (the limits the leaderboard
 * and time-series articles work from).
 */
Datum
shard_fdw_recommend_shards(PG_FUNCTION_ARGS)
{
	float8		writes = PG_GETARG_FLOAT8(0);
	float8		reads = PG_GETARG_FLOAT8(1);
	int32		item_bytes = PG_GETARG_INT32(2);
	bool		consistent = PG_GETARG_BOOL(3);
	float8		headroom = PG_GETARG_FLOAT8(4);
	float8		wcu;
	float8		rcu;
	float8		need;

	if (!(writes >= 0 && reads >= 0 && isfinite(writes) && isfinite(reads)) ||
		item_bytes <= 0 || item_bytes > 400 * 1024)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("rates must be finite and non-negative and the item size between 1 and 409600 bytes")));
	if (!(headroom > 0 && headroom <= 1))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("headroom must be in (0, 1]")));
	wcu = writes * ceil(item_bytes / 1024.0);
	rcu = reads * ceil(item_bytes / 4096.0) * (consistent ? 1.0 : 0.5);
	need = ceil(Max(wcu / (1000.0 * headroom), rcu / (3000.0 * headroom)));
	if (need > PG_INT32_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("the load needs more than %d shards", PG_INT32_MAX)));
	PG_RETURN_INT32((int32) Max(1.0, need));
}

/* The first nchars characters of s, as a new string. */
static char *
first_chars(const char *s, int nchars)
{
	const char *p = s;

	for (int i = 0; i < nchars && *p; i++)
		p += pg_mblen(p);
	return pnstrdup(s, p - s);
}

/* qsort comparator of C strings by bytes. */
static int
cmp_bytes(const void *a, const void *b)
{
	return strcmp(*(char *const *) a, *(char *const *) b);
}

/*
 * shard_fdw_range_boundaries(sample text[], shards int, normalize bool,
 * prefix_chars int) returns text[]: range_boundaries for a sample of keys
 * (the range-sharded catalog's recipe): the normalized keys sorted by
 * bytes, every ceil(n / shards)-th of them cut to prefix_chars characters,
 * the first replaced with "".  Where a cut key repeats the one before, or
 * the sample runs out, the next distinct cut key is taken instead, so that
 * there are always shards boundaries in increasing order, as option
 * range_boundaries needs; a sample with too few distinct cut keys is an error.
 */
Datum
shard_fdw_range_boundaries(PG_FUNCTION_ARGS)
{
	ArrayType  *sample = PG_GETARG_ARRAYTYPE_P(0);
	int32		shards = PG_GETARG_INT32(1);
	bool		normalize = PG_GETARG_BOOL(2);
	int32		prefix_chars = PG_GETARG_INT32(3);
	ShardTable	t = {.relname = "sample", .range_normalize = normalize};
	Datum	   *elems;
	bool	   *nulls;
	int			n;
	char	  **keys;
	int			nkeys = 0;
	char	  **cuts;			/* the distinct cut keys but "", in order */
	int		   *firsts;			/* the position in keys of each one's first */
	int			ncuts = 0;
	Datum	   *bounds;
	int			step;
	int			prev = -1;

	if (shards < 1 || prefix_chars < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("shards and prefix_chars must be positive")));
	deconstruct_array(sample, TEXTOID, -1, false, TYPALIGN_INT, &elems, &nulls, &n);
	keys = palloc(sizeof(char *) * Max(n, 1));
	for (int i = 0; i < n; i++)
		if (!nulls[i])
			keys[nkeys++] = route_range_key(&t, TextDatumGetCString(elems[i]));
	qsort(keys, nkeys, sizeof(char *), cmp_bytes);

	/* prefixes of keys sorted by bytes are sorted too */
	cuts = palloc(sizeof(char *) * Max(nkeys, 1));
	firsts = palloc(sizeof(int) * Max(nkeys, 1));
	for (int i = 0; i < nkeys; i++)
	{
		char	   *cut = first_chars(keys[i], prefix_chars);

		if (cut[0] != '\0' && (ncuts == 0 || strcmp(cuts[ncuts - 1], cut) < 0))
		{
			cuts[ncuts] = cut;
			firsts[ncuts++] = i;
		}
	}
	if (ncuts < shards - 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("too few distinct keys in the sample for %d shards", shards),
				 errdetail("Every shard but the first needs a distinct non-empty key of the sample as its lower bound; %d keys are distinct when %s to %d characters.",
						   ncuts, normalize ? "normalized and cut" : "cut", prefix_chars),
				 errhint("Give a larger sample, more prefix_chars or fewer shards.")));

	bounds = palloc(sizeof(Datum) * shards);
	bounds[0] = CStringGetTextDatum("");
	step = (nkeys + shards - 1) / shards;
	for (int k = 1; k < shards; k++)
	{
		int			pos = Min(k * step, nkeys - 1);
		int			j = prev + 1;

		/* the cut key of keys[pos], unless it was taken or leaves too few */
		while (j + 1 < ncuts && firsts[j + 1] <= pos)
			j++;
		j = Min(j, ncuts - (shards - k));
		bounds[k] = CStringGetTextDatum(cuts[j]);
		prev = j;
	}
	PG_RETURN_ARRAYTYPE_P(construct_array(bounds, shards, TEXTOID, -1, false, TYPALIGN_INT));
}

/*
 * shard_fdw_metadata(ftable regclass, column_values jsonb) returns
 * (base_key, number_of_shards, last_updated, shard_history): the dynamic
 * sharding metadata item of one logical key, read afresh; no row when the
 * key has none.
 */
Datum
shard_fdw_metadata(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	ShardTable *t = tool_table(PG_GETARG_OID(0));
	const char **texts = column_texts(t, PG_GETARG_JSONB_P(1));
	char		err[SFDW_ERRLEN];
	char	   *base;
	const DdbJson *item;
	const DdbJson *history;
	Datum		values[4];
	bool		nulls[4] = {0};
	Datum	   *entries;
	int			n = 0;
	DdbGroup   *group;

	InitMaterializedSRF(fcinfo, 0);
	if (t->strategy != SHARD_DYNAMIC)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("foreign table \"%s\" is not sharded dynamically", t->relname)));
	base = route_partition_key(t, texts, 0, true, err, sizeof(err));
	if (base == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot build the base key: %s", err)));
	group = key_group(t);
	item = dynamic_meta_item(t, group, base);
	if (item == NULL)
	{
		ddb_group_free(group);
		return (Datum) 0;
	}
	history = ddbjson_get(ddbjson_get(item, "shard_history"), "SS");
	entries = palloc(sizeof(Datum) * Max(history ? history->n : 0, 1));
	for (int i = 0; history && history->kind == DJ_ARRAY && i < history->n; i++)
		entries[n++] = CStringGetTextDatum(history->elems[i].str);
	values[0] = CStringGetTextDatum(base);
	values[1] = Int32GetDatum(atoi(codec_av_text(ddbjson_get(item, "number_of_shards"))));
	values[2] = Int64GetDatum(strtoll(codec_av_text(ddbjson_get(item, "last_updated")), NULL, 10));
	values[3] = PointerGetDatum(construct_array(entries, n, TEXTOID, -1, false, TYPALIGN_INT));
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	ddb_group_free(group);
	return (Datum) 0;
}

/*
 * shard_fdw_refresh_indexes(ftable regclass) returns setof (index_name,
 * kind, partition_key, sort_key, projection, unusable): learn the
 * secondary indexes of the DynamoDB table that foreign table ftable reads
 * again, after DynamoDB's table changed (an index created, backfilled or
 * deleted), record them as its option secondary_indexes, and list them,
 * with why queries on ftable do not read one (NULL when they may).
 */
Datum
shard_fdw_refresh_indexes(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Oid			relid = PG_GETARG_OID(0);
	ForeignTable *ft;
	ShardTable *t;
	const char *pk;
	const char *sk;
	char	   *indexes;
	char	   *why;

	if (!shard_is_foreign_table(relid))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a foreign table of shard_fdw", get_rel_name(relid))));
	ft = GetForeignTable(relid);
	check_server_usage(GetForeignServer(ft->serverid));
	if (shard_option_value(ft->options, "index"))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("foreign table \"%s\" reads through index \"%s\"",
						get_rel_name(relid), shard_option_value(ft->options, "index")),
				 errhint("Refresh the indexes of a foreign table of the DynamoDB table itself.")));
	InitMaterializedSRF(fcinfo, 0);
	describe_keys(ft->serverid, shard_option_value(ft->options, "table"), NULL, true,
				  &pk, &sk, &indexes, &why);
	ddl_record_indexes(relid, ft->options, indexes);
	t = shard_get_table(relid);
	for (int i = 0; i < t->nindexes; i++)
	{
		const ShardIndex *idx = &t->indexes[i];
		Datum		values[6];
		bool		nulls[6] = {0};
		const char *unusable;

		(void) shard_index_view(t, i, &unusable);
		values[0] = CStringGetTextDatum(idx->name);
		values[1] = CStringGetTextDatum(idx->local ? "local" : "global");
		values[2] = CStringGetTextDatum(idx->pk);
		values[3] = idx->sk ? CStringGetTextDatum(idx->sk) : (Datum) 0;
		nulls[3] = idx->sk == NULL;
		values[4] = CStringGetTextDatum(index_projection_name(idx->projection));
		values[5] = unusable ? CStringGetTextDatum(unusable) : (Datum) 0;
		nulls[5] = unusable == NULL;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}
