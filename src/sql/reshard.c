/*-------------------------------------------------------------------------
 *
 * reshard.c
 *		shard_fdw_reshard(): move the items of a foreign table's earlier
 *		layouts to the keys its newest layout gives, and drop from the
 *		layout history the layouts nothing remains in.
 *
 * Each item moves in one TransactWriteItems (a page's moves at once): the old item is deleted on
 * condition that it is unchanged since it was read, the new one put on
 * condition that its key is free.  A row is therefore always stored under
 * one key, and a move that meets a concurrent write does nothing (the row
 * counts as remaining; the next run reads it again).  Running it again is
 * harmless: an item at its newest key is left alone.  The reads keep to
 * the table's max_read_units_per_second, the moves to its
 * max_write_units_per_second, where set.
 *
 *-------------------------------------------------------------------------
 */
#include "sql/sql.h"

#include "access/htup_details.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

PG_FUNCTION_INFO_V1(shard_fdw_reshard);

/* What a run did, and the earlier layouts something remains in. */
typedef struct Reshard
{
	ShardTable *t;
	DdbGroup   *reads;			/* the pages read, under the read budget */
	DdbGroup   *writes;			/* the moves, under the write budget */
	int64		moved;
	int64		remaining;
	bool	   *holds;			/* per index of t->layouts */
	MemoryContext pagecxt;		/* reset per page read */
} Reshard;

/*
 * Item (as read) with its partition key attribute set to pk, as JSON text.
 * A column the item held only inside its old key (texts, indexed by
 * column, are its row's key texts) that the newest layout's keys do not
 * hold becomes an attribute of its own, so that no value is lost.
 */
static char *
item_at(ShardTable *t, const DdbJson *item, const char *const *texts, const char *pk)
{
	Buf			out;
	JsonWriter	w;

	jw_begin_body(&w, &out);
	for (int i = 0; i < item->n; i++)
	{
		jw_key(&w, item->keys[i]);
		if (strcmp(item->keys[i], t->pk.attribute) == 0)
			request_write_key_value(&w, &t->pk, pk);
		else
			jw_tree(&w, &item->elems[i]);
	}
	for (int i = 0; i < t->ncolumns; i++)
	{
		ShardColumn *col = &t->columns[i];

		if (texts[i] == NULL || shard_key_option(t, i) != NULL ||
			col->ddb_type == DDB_TYPE_ITEM || ddbjson_get(item, col->attribute) != NULL)
			continue;
		jw_key(&w, col->attribute);
		codec_write_value(&w, col, codec_text_to_datum(texts[i], col, item, t));
	}
	jw_end_object(&w);
	return out.data;
}

/* An item being moved: the item as read, its row's key texts, its key. */
typedef struct Move
{
	const DdbJson *item;
	const char **texts;
	const char *pk;
} Move;

/*
 * Send the move of item (as read) to the key the newest layout gives its
 * row, unless it is there already: a TransactWriteItems in flight, whose
 * owner is its Move.  An item no layout's template matches is another
 * table's (or a legacy base key) and stays.
 */
static void
send_move(Reshard *r, const DdbJson *item)
{
	ShardTable *t = r->t;
	const char *pk = codec_av_text(ddbjson_get(item, t->pk.attribute));
	long		shard;
	int			layout = layout_of_item(t, item, &shard);
	Move	   *m;
	char	   *target;
	char		err[SFDW_ERRLEN];
	char	   *body;
	size_t		len;
	DdbRequest *req;

	if (pk == NULL || layout < 0)
		return;
	m = palloc(sizeof(Move));
	m->item = item;
	m->pk = pk;
	m->texts = layout_item_texts(t, t->layouts[layout], item);
	if (layout_holds(t, m->texts, pk))
		return;
	target = route_partition_key(t, m->texts, dynamic_write_shard(t, m->texts, r->writes, false, NULL),
								 false, err, sizeof(err));
	if (target == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot build the new key of item (%s) of foreign table \"%s\": %s",
						codec_item_key_text(item, t), t->relname, err)));
	body = request_move(t, item, item_at(t, item, m->texts, target), &len);
	req = ddb_request_create(r->writes, "TransactWriteItems", body, len);
	req->owner = m;
	ddb_submit(req);
}

/*
 * Count a finished move (req).  When the row's new key holds an item
 * already (the same row written anew), the newest layout's item wins: the
 * old one is deleted if unchanged.  A move that met a concurrent write
 * leaves the row where it is, to be read again by the next run.
 */
static void
judge_move(Reshard *r, DdbRequest *req)
{
	ShardTable *t = r->t;
	Move	   *m = req->owner;
	bool		done = req->status == DDB_OK;

	if (!done && strcmp(req->error_type, "TransactionCanceledException") != 0)
		ddb_report_error(req);
	/* DynamoDB lists a reason per item: [Delete's, Put's] */
	if (!done && strstr(req->error_message, "[None, ConditionalCheckFailed]"))
	{
		size_t		len;
		char	   *body = request_delete_item(t, m->item, true, &len);
		DdbRequest *del = ddb_run(r->writes, "DeleteItem", body, len);

		if (del->status != DDB_OK &&
			strcmp(del->error_type, "ConditionalCheckFailedException") != 0)
			ddb_report_error(del);
		done = del->status == DDB_OK;
		ddb_request_free(del);
	}
	if (done)
		r->moved++;
	else
	{
		r->remaining++;
		for (int i = 1; i < t->nlayouts; i++)
			r->holds[i] |= layout_holds(t->layouts[i], m->texts, m->pk);
	}
	ddb_request_free(req);
}

/*
 * Read every item of partition key pk (NULL: of the whole table) and move
 * those not at their newest key, a page's moves at once (up to the
 * server's max_concurrency in flight).
 */
static void
move_all(Reshard *r, const char *pk)
{
	const char *action = pk ? "Query" : "Scan";
	DdbRequest *page = NULL;
	const DdbJson *start = NULL;

	do
	{
		size_t		len;
		char	   *body = request_reshard_read(r->t, pk, start, &len);
		const DdbJson *items;
		List	   *finished = NIL;
		DdbRequest *req;
		ListCell   *lc;
		MemoryContext old;

		if (page)
			ddb_request_free(page);
		page = ddb_run(r->reads, action, body, len);
		if (page->status != DDB_OK)
			ddb_report_error(page);
		items = ddbjson_get(page->response, "Items");
		if (items == NULL || items->kind != DJ_ARRAY)
			ereport(ERROR,
					(errcode(ERRCODE_FDW_ERROR),
					 errmsg("DynamoDB %s response has no items", action)));
		old = MemoryContextSwitchTo(r->pagecxt);
		for (int i = 0; i < items->n; i++)
		{
			CHECK_FOR_INTERRUPTS();
			send_move(r, &items->elems[i]);
		}
		while ((req = ddb_wait_any(r->writes)) != NULL)
			finished = lappend(finished, req);
		foreach(lc, finished)
			judge_move(r, lfirst(lc));
		MemoryContextSwitchTo(old);
		MemoryContextReset(r->pagecxt);
		start = ddbjson_get(page->response, "LastEvaluatedKey");
		if (start != NULL && (start->kind != DJ_OBJECT || start->n == 0))
			start = NULL;
	} while (start != NULL);
	ddb_request_free(page);
}

/*
 * The key texts, indexed by column, of the column values given as a JSON
 * object (column name to value); errors name an unknown column.
 */
static const char **
given_texts(ShardTable *t, Jsonb *values)
{
	const char **texts = palloc0(sizeof(char *) * Max(t->ncolumns, 1));
	JsonbIterator *it = JsonbIteratorInit(&values->root);
	JsonbValue	v;
	JsonbIteratorToken tok;
	char	   *name = NULL;

	if (!JB_ROOT_IS_OBJECT(values))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("column_values must be a JSON object of column names and values")));
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		ShardColumn *col;

		if (tok == WJB_KEY)
			name = pnstrdup(v.val.string.val, v.val.string.len);
		if (tok != WJB_VALUE)
			continue;
		col = shard_find_column(t, name);
		if (col == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_COLUMN),
					 errmsg("column \"%s\" of foreign table \"%s\" does not exist", name, t->relname)));
		if (v.type == jbvString)
			texts[col - t->columns] = pnstrdup(v.val.string.val, v.val.string.len);
		else if (v.type == jbvNumeric)
			texts[col - t->columns] = DatumGetCString(DirectFunctionCall1(numeric_out,
																		  NumericGetDatum(v.val.numeric)));
		else if (v.type == jbvBool)
			texts[col - t->columns] = v.val.boolean ? "true" : "false";
	}
	return texts;
}

/*
 * Move the items of the partition the values texts name, in every earlier
 * layout: a Query of each partition key value those layouts give it that
 * the newest layout does not read as its own.
 */
static void
move_partition(Reshard *r, const char *const *texts)
{
	ShardTable *t = r->t;
	List	   *done = NIL;
	char		err[SFDW_ERRLEN];

	for (int i = 1; i < t->nlayouts; i++)
	{
		ShardTable *l = t->layouts[i];
		ListCell   *lc;

		foreach(lc, route_read_shards(l, texts, l->shards))
		{
			char	   *pk = route_partition_key(l, texts, lfirst_int(lc), false, err, sizeof(err));

			if (pk == NULL)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("column_values do not name a partition of foreign table \"%s\": %s",
								t->relname, err),
						 errhint("Give every column of option \"partition_key_format\".")));
			if (list_member(done, makeString(pk)))
				continue;
			done = lappend(done, makeString(pk));
			move_all(r, pk);
		}
	}
}

/*
 * Drop from t's layout history the earlier layouts nothing remains in,
 * with a notice for each.
 */
static void
drop_empty_layouts(Reshard *r)
{
	ShardTable *t = r->t;
	char	   *history = layout_history_without(t, r->holds);
	char	   *name = quote_qualified_identifier(get_namespace_name(get_rel_namespace(t->relid)),
												  t->relname);

	for (int i = 1; i < t->nlayouts; i++)
		if (!r->holds[i])
			ereport(NOTICE,
					(errmsg("layout %s of foreign table \"%s\" holds no item any more; reads no longer cover it",
							layout_describe(t->layouts[i]), t->relname)));
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "shard_fdw: SPI_connect failed");
	if (SPI_execute(history ?
					psprintf("ALTER FOREIGN TABLE %s OPTIONS (SET layout_history %s)",
							 name, quote_literal_cstr(history)) :
					psprintf("ALTER FOREIGN TABLE %s OPTIONS (DROP layout_history)", name),
					false, 0) != SPI_OK_UTILITY)
		elog(ERROR, "shard_fdw: could not update option \"layout_history\"");
	SPI_finish();
}

/*
 * shard_fdw_reshard(ftable regclass, column_values jsonb DEFAULT NULL)
 * returns (moved bigint, remaining bigint): move the items of the earlier
 * layouts of ftable, those of the partition column_values names or of the
 * whole table, to their newest keys.  A run over the whole table drops the
 * layouts nothing remains in from the history.
 */
Datum
shard_fdw_reshard(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	Reshard		r = {0};
	TupleDesc	desc;
	Datum		values[2];
	bool		nulls[2] = {false, false};
	ForeignTable *ft;
	DdbConn    *conn;

	if (!shard_is_foreign_table(relid))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a shard_fdw foreign table", get_rel_name(relid))));
	if (pg_class_aclcheck(relid, GetUserId(), ACL_SELECT) != ACLCHECK_OK ||
		pg_class_aclcheck(relid, GetUserId(), ACL_UPDATE) != ACLCHECK_OK)
		aclcheck_error(ACLCHECK_NO_PRIV, OBJECT_FOREIGN_TABLE, get_rel_name(relid));
	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "shard_fdw: return type must be a row type");
	r.t = shard_get_table(relid);
	if (r.t->index)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("cannot move the items of foreign table \"%s\": it reads index \"%s\"",
						r.t->relname, r.t->index)));
	r.holds = palloc0(sizeof(bool) * r.t->nlayouts);
	if (r.t->nlayouts > 1)
	{
		ft = GetForeignTable(relid);
		conn = shard_get_connection(ft->serverid, GetUserId());
		r.reads = ddb_group_create(conn, 1);
		ddb_group_set_budget(r.reads, budget_for(r.t, false));
		r.writes = ddb_group_create(conn, conn->server->max_concurrency);
		ddb_group_set_budget(r.writes, budget_for(r.t, true));
		r.pagecxt = AllocSetContextCreate(CurrentMemoryContext, "shard_fdw reshard page",
										  ALLOCSET_DEFAULT_SIZES);
		if (PG_ARGISNULL(1))
		{
			move_all(&r, NULL);
			drop_empty_layouts(&r);
		}
		else
			move_partition(&r, given_texts(r.t, PG_GETARG_JSONB_P(1)));
		ddb_group_free(r.writes);
		ddb_group_free(r.reads);
	}
	values[0] = Int64GetDatum(r.moved);
	values[1] = Int64GetDatum(r.remaining);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(desc, values, nulls)));
}
