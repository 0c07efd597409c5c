/*-------------------------------------------------------------------------
 *
 * scan.c
 *		The executor's side of a scan: one stream of pages per partition
 *		key value (Query) or per segment (Scan), every stream's requests in
 *		flight at once, the next page of each stream fetched while the
 *		current one is read, and items turned into tuples.
 *
 * At most two pages of a stream are held at a time (the one being read and
 * the one fetched ahead), so memory stays bounded whatever the result size.
 *
 *-------------------------------------------------------------------------
 */
#include "shard_fdw.h"

#include "commands/explain.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "plan.h"
#include "scan.h"

/* One sequence of pages: a Query of one partition key or a Scan segment. */
typedef struct Stream
{
	char	   *pk_text;		/* the partition key value (Query) */
	int			segment;		/* the segment (Scan) */
	DdbRequest *page;			/* the page being read */
	int			pos;			/* next item of page */
	DdbRequest *ready;			/* the next page, arrived */
	DdbRequest *next;			/* the next page, in flight */
	bool		started;
} Stream;

typedef struct ShardScanState
{
	ShardTable *t;
	DdbConn    *conn;
	DdbGroup   *group;
	ScanOp		op;
	List	   *cols;			/* column indexes to convert */
	List	   *attrs;			/* projection attributes, NIL = all */
	List	   *key_cols;		/* columns fixed by ... */
	List	   *key_exprs;		/* ... these expressions, */
	List	   *key_states;		/* ... ready to run */
	int			max_inflight;
	int			segments;		/* TotalSegments of a Scan */

	Stream	   *streams;
	int			nstreams;
	int			cur;			/* stream read last */
	bool		started;
	MemoryContext rowcxt;

	/* counters for EXPLAIN ANALYZE, over every rescan */
	int64		pages;
	DdbStats	stats;
} ShardScanState;

/* ---------------------------------------------------------------------
 * Request bodies
 * ---------------------------------------------------------------------
 */

/* The position of attribute name in names, added if absent. */
static int
name_index(List **names, const char *name)
{
	int			i = 0;
	ListCell   *lc;

	foreach(lc, *names)
	{
		if (strcmp(strVal(lfirst(lc)), name) == 0)
			return i;
		i++;
	}
	*names = lappend(*names, makeString(pstrdup(name)));
	return i;
}

/* Write a key value as an AttributeValue of the key's type. */
static void
write_key_value(JsonWriter *w, DdbType type, const char *text)
{
	jw_begin_object(w);
	jw_key(w, type == DDB_TYPE_N ? "N" : type == DDB_TYPE_B ? "B" : "S");
	jw_cstring(w, text);
	jw_end_object(w);
}

/*
 * The JSON body of the request for the next page of stream s (start_key:
 * the previous page's LastEvaluatedKey, or NULL).  Deterministic, so that
 * EXPLAIN VERBOSE can print it.
 */
static char *
build_body(ShardScanState *ss, Stream *s, const DdbJson *start_key, size_t *len)
{
	ShardTable *t = ss->t;
	Buf			out;
	JsonWriter	w;
	List	   *names = NIL;
	StringInfoData proj;
	ListCell   *lc;
	int			pk_name = -1;

	if (ss->op == SCAN_OP_QUERY)
		pk_name = name_index(&names, t->pk.attribute);
	initStringInfo(&proj);
	foreach(lc, ss->attrs)
		appendStringInfo(&proj, "%s#n%d", proj.len ? ", " : "",
						 name_index(&names, strVal(lfirst(lc))));

	buf_init(&out);
	jw_init(&w, &out);
	jw_begin_object(&w);
	jw_key(&w, "TableName");
	jw_cstring(&w, t->table);
	if (t->index)
	{
		jw_key(&w, "IndexName");
		jw_cstring(&w, t->index);
	}
	if (ss->op == SCAN_OP_QUERY)
	{
		char	   *cond = psprintf("#n%d = :k0", pk_name);

		jw_key(&w, "KeyConditionExpression");
		jw_cstring(&w, cond);
	}
	if (proj.len > 0)
	{
		jw_key(&w, "ProjectionExpression");
		jw_cstring(&w, proj.data);
	}
	if (names != NIL)
	{
		int			i = 0;

		jw_key(&w, "ExpressionAttributeNames");
		jw_begin_object(&w);
		foreach(lc, names)
		{
			char	   *key = psprintf("#n%d", i++);

			jw_key(&w, key);
			jw_cstring(&w, strVal(lfirst(lc)));
		}
		jw_end_object(&w);
	}
	if (ss->op == SCAN_OP_QUERY)
	{
		jw_key(&w, "ExpressionAttributeValues");
		jw_begin_object(&w);
		jw_key(&w, ":k0");
		write_key_value(&w, t->pk.template ? DDB_TYPE_S : t->pk.type, s->pk_text);
		jw_end_object(&w);
	}
	if (ss->op == SCAN_OP_SCAN && ss->segments > 1)
	{
		jw_key(&w, "Segment");
		jw_int(&w, s->segment);
		jw_key(&w, "TotalSegments");
		jw_int(&w, ss->segments);
	}
	if (t->consistent_read && t->index == NULL)
	{
		jw_key(&w, "ConsistentRead");
		jw_bool(&w, true);
	}
	jw_key(&w, "ReturnConsumedCapacity");
	jw_cstring(&w, "TOTAL");
	if (start_key)
	{
		jw_key(&w, "ExclusiveStartKey");
		jw_tree(&w, start_key);
	}
	jw_end_object(&w);
	*len = out.len;
	return out.data;
}

/* ---------------------------------------------------------------------
 * Streams
 * ---------------------------------------------------------------------
 */

/* Send the request for the next page of stream s. */
static void
stream_fetch(ShardScanState *ss, Stream *s, const DdbJson *start_key)
{
	size_t		len;
	char	   *body = build_body(ss, s, start_key, &len);

	s->next = ddb_request_create(ss->group, ss->op == SCAN_OP_QUERY ? "Query" : "Scan",
								 body, len);
	s->next->owner = s;
	pfree(body);
	ddb_submit(s->next);
}

/*
 * Make an arrived page the one being read, and fetch the page after it
 * if there is one.
 */
static void
stream_take_page(ShardScanState *ss, Stream *s, DdbRequest *req)
{
	const DdbJson *lek = ddbjson_get(req->response, "LastEvaluatedKey");
	DdbStats   *stats = ddb_group_stats(ss->group);

	s->page = req;
	s->pos = 0;
	ss->pages++;
	stats->scanned += (int64) ddbjson_get_number(req->response, "ScannedCount");
	if (lek && lek->kind == DJ_OBJECT && lek->n > 0)
		stream_fetch(ss, s, lek);
}

/* Wait for the next page of any stream and file it with its stream. */
static void
receive_page(ShardScanState *ss)
{
	DdbRequest *req = ddb_wait_any(ss->group);
	Stream	   *s;

	if (req == NULL)
		elog(ERROR, "shard_fdw: no page in flight");
	if (req->status != DDB_OK)
		ddb_report_error(req);
	s = req->owner;
	s->next = NULL;
	if (s->page == NULL)
		stream_take_page(ss, s, req);
	else
		s->ready = req;
}

/* The items array of a page. */
static const DdbJson *
page_items(DdbRequest *page)
{
	const DdbJson *items = ddbjson_get(page->response, "Items");

	if (items == NULL || items->kind != DJ_ARRAY)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_ERROR),
				 errmsg("DynamoDB %s response has no Items array", page->action)));
	return items;
}

/*
 * The next item of stream s, or NULL when the stream has none at hand
 * (*waiting says whether more may come).
 */
static const DdbJson *
stream_next_item(ShardScanState *ss, Stream *s, bool *waiting)
{
	for (;;)
	{
		if (s->page)
		{
			const DdbJson *items = page_items(s->page);

			if (s->pos < items->n)
				return &items->elems[s->pos++];
			ddb_request_free(s->page);
			s->page = NULL;
			if (s->ready)
			{
				DdbRequest *ready = s->ready;

				s->ready = NULL;
				stream_take_page(ss, s, ready);
				continue;
			}
		}
		*waiting = s->next != NULL;
		return NULL;
	}
}

/* The next item of the scan in arrival order, or NULL at the end. */
static const DdbJson *
next_item(ShardScanState *ss)
{
	for (;;)
	{
		bool		any_waiting = false;

		for (int k = 0; k < ss->nstreams; k++)
		{
			Stream	   *s = &ss->streams[(ss->cur + k) % ss->nstreams];
			bool		waiting = false;
			const DdbJson *item = stream_next_item(ss, s, &waiting);

			if (item)
			{
				ss->cur = s - ss->streams;
				return item;
			}
			any_waiting |= waiting;
		}
		if (!any_waiting)
			return NULL;
		receive_page(ss);
	}
}

/* ---------------------------------------------------------------------
 * Tuples
 * ---------------------------------------------------------------------
 */

/*
 * The text of column col decoded from key k of item, or NULL when the key
 * template does not hold the column or the key does not match it.
 */
static char *
decode_from_key(ShardTable *t, ShardKey *k, const DdbJson *item, const char *colname)
{
	const char *key;
	KeySpan    *spans;

	if (k->template == NULL || k->attribute == NULL)
		return NULL;
	key = codec_av_text(ddbjson_get(item, k->attribute));
	if (key == NULL)
		return NULL;
	for (int i = 0; i < k->template->nparts; i++)
	{
		if (k->template->parts[i].kind != KP_COLUMN ||
			strcmp(k->template->parts[i].text, colname) != 0)
			continue;
		spans = palloc(sizeof(KeySpan) * k->template->nparts);
		if (!keyfmt_decode(k->template, key, strlen(key), spans, NULL))
			return NULL;
		return keyfmt_field_text(k->template, i, key, &spans[i]);
	}
	return NULL;
}

/* Fill slot from item. */
static void
item_to_slot(ShardScanState *ss, const DdbJson *item, TupleTableSlot *slot)
{
	ShardTable *t = ss->t;
	ListCell   *lc;

	ExecClearTuple(slot);
	memset(slot->tts_isnull, true, sizeof(bool) * slot->tts_tupleDescriptor->natts);
	foreach(lc, ss->cols)
	{
		ShardColumn *col = &t->columns[lfirst_int(lc)];
		int			att = col->attnum - 1;
		const DdbJson *av = ddbjson_get(item, col->attribute);

		if (av == NULL && col->ddb_type != DDB_TYPE_ITEM)
		{
			char	   *text = decode_from_key(t, &t->pk, item, col->name);

			if (text == NULL)
				text = decode_from_key(t, &t->sk, item, col->name);
			if (text != NULL)
			{
				slot->tts_values[att] = codec_text_to_datum(text, col, item, t);
				slot->tts_isnull[att] = false;
			}
			continue;
		}
		slot->tts_values[att] = codec_read_value(av, col, item, t,
												 &slot->tts_isnull[att]);
	}
	ExecStoreVirtualTuple(slot);
}

/* ---------------------------------------------------------------------
 * Starting and stopping
 * ---------------------------------------------------------------------
 */

/*
 * The partition key value of the row the key expressions fix, or NULL
 * when one of them is NULL (then no row can match).
 */
static char *
partition_key_text(ShardScanState *ss, ExprContext *econtext)
{
	ShardTable *t = ss->t;
	const char **values = palloc0(sizeof(char *) * Max(t->ncolumns, 1));
	ListCell   *lc1;
	ListCell   *lc2;
	Buf			out;
	char		err[256];

	forboth(lc1, ss->key_cols, lc2, ss->key_states)
	{
		ExprState  *state = lfirst(lc2);
		ShardColumn col = ss->t->columns[lfirst_int(lc1)];
		bool		isnull;
		Datum		value = ExecEvalExpr(state, econtext, &isnull);

		if (isnull)
			return NULL;
		col.typid = exprType((Node *) state->expr);
		values[lfirst_int(lc1)] = codec_key_text(&col, value);
	}
	if (t->pk.template == NULL)
		return (char *) values[t->pk.column];

	{
		const char **parts = palloc0(sizeof(char *) * t->pk.template->nparts);

		for (int i = 0; i < t->pk.template->nparts; i++)
			if (t->pk.template->parts[i].kind == KP_COLUMN)
				parts[i] = values[shard_find_column(t, t->pk.template->parts[i].text) - t->columns];
		buf_init(&out);
		if (!keyfmt_render(t->pk.template, parts, 0, &out, err, sizeof(err)))
			return NULL;
		return out.data;
	}
}

/* Set up the streams and send their first requests. */
static void
scan_start(ShardScanState *ss, ExprContext *econtext)
{
	MemoryContext old = MemoryContextSwitchTo(econtext->ecxt_per_query_memory);

	ss->group = ddb_group_create(ss->conn, ss->max_inflight);
	if (ss->op == SCAN_OP_QUERY)
	{
		char	   *pk = partition_key_text(ss, econtext);

		ss->nstreams = pk ? 1 : 0;
		ss->streams = palloc0(sizeof(Stream) * Max(ss->nstreams, 1));
		if (pk)
			ss->streams[0].pk_text = pk;
	}
	else
	{
		ss->nstreams = ss->segments;
		ss->streams = palloc0(sizeof(Stream) * ss->nstreams);
		for (int i = 0; i < ss->nstreams; i++)
			ss->streams[i].segment = i;
	}
	for (int i = 0; i < ss->nstreams; i++)
		stream_fetch(ss, &ss->streams[i], NULL);
	ss->cur = 0;
	ss->started = true;
	MemoryContextSwitchTo(old);
}

/* BeginForeignScan */
void
shard_begin_scan(ForeignScanState *node, int eflags)
{
	ForeignScan *fs = (ForeignScan *) node->ss.ps.plan;
	EState	   *estate = node->ss.ps.state;
	ShardScanState  *ss = palloc0(sizeof(ShardScanState));
	RangeTblEntry *rte = exec_rt_fetch(fs->scan.scanrelid, estate);
	Oid			userid = OidIsValid(SHARD_SCAN_USER(fs, rte)) ? SHARD_SCAN_USER(fs, rte) : GetUserId();

	node->fdw_state = ss;
	ss->t = shard_get_table(rte->relid, true);
	ss->op = intVal(list_nth(fs->fdw_private, SCAN_PRIVATE_OP));
	ss->cols = list_nth(fs->fdw_private, SCAN_PRIVATE_COLUMNS);
	ss->attrs = list_nth(fs->fdw_private, SCAN_PRIVATE_ATTRS);
	ss->key_cols = list_nth(fs->fdw_private, SCAN_PRIVATE_KEY_COLUMNS);
	ss->key_exprs = fs->fdw_exprs;
	ss->rowcxt = AllocSetContextCreate(estate->es_query_cxt, "shard_fdw row",
									   ALLOCSET_DEFAULT_SIZES);
	if (eflags & EXEC_FLAG_EXPLAIN_ONLY)
		return;
	ss->key_states = ExecInitExprList(fs->fdw_exprs, (PlanState *) node);
	ss->conn = shard_get_connection(GetForeignTable(rte->relid)->serverid, userid);
	ss->max_inflight = ss->conn->server->max_concurrency;
	ss->segments = ss->op == SCAN_OP_SCAN ? ss->max_inflight : 1;
}

/* IterateForeignScan */
TupleTableSlot *
shard_iterate_scan(ForeignScanState *node)
{
	ShardScanState  *ss = node->fdw_state;
	TupleTableSlot *slot = node->ss.ss_ScanTupleSlot;
	const DdbJson *item;
	MemoryContext old;

	if (!ss->started)
		scan_start(ss, node->ss.ps.ps_ExprContext);
	MemoryContextReset(ss->rowcxt);
	item = next_item(ss);
	if (item == NULL)
		return ExecClearTuple(slot);
	ss->stats.items++;
	old = MemoryContextSwitchTo(ss->rowcxt);
	item_to_slot(ss, item, slot);
	MemoryContextSwitchTo(old);
	return slot;
}

/* Add the request counters of from to into (items are counted apart). */
static void
add_stats(DdbStats *into, const DdbStats *from)
{
	into->requests += from->requests;
	into->attempts += from->attempts;
	into->retries += from->retries;
	into->throttles += from->throttles;
	into->scanned += from->scanned;
	into->capacity += from->capacity;
}

/* Stop the streams and free what they hold. */
static void
scan_stop(ShardScanState *ss)
{
	if (ss->group)
	{
		add_stats(&ss->stats, ddb_group_stats(ss->group));
		ddb_group_free(ss->group);
		ss->group = NULL;
	}
	ss->started = false;
}

/* ReScanForeignScan: start again, with the parameters as they now are. */
void
shard_rescan(ForeignScanState *node)
{
	ShardScanState  *ss = node->fdw_state;

	scan_stop(ss);
}

/* EndForeignScan */
void
shard_end_scan(ForeignScanState *node)
{
	ShardScanState  *ss = node->fdw_state;

	if (ss)
		scan_stop(ss);
}

/* How EXPLAIN shows a value fixing a key column: a literal or $n. */
static char *
key_value_text(Expr *expr)
{
	if (IsA(expr, Const))
	{
		Const	   *c = (Const *) expr;
		Oid			out;
		bool		varlena;

		getTypeOutputInfo(c->consttype, &out, &varlena);
		return quote_literal_cstr(OidOutputFunctionCall(out, c->constvalue));
	}
	if (IsA(expr, Param))
		return psprintf("$%d", ((Param *) expr)->paramid);
	return "?";
}

/*
 * The key condition as EXPLAIN shows it: "game = 'g1'", or for a template
 * "pk = '{game_id}#{shard}' (game_id = 'g1')".
 */
static char *
key_condition_text(ShardScanState *ss)
{
	ShardTable *t = ss->t;
	StringInfoData buf;
	ListCell   *lc1;
	ListCell   *lc2;
	bool		first = true;

	initStringInfo(&buf);
	if (t->pk.template == NULL)
	{
		forboth(lc1, ss->key_cols, lc2, ss->key_exprs)
			if (lfirst_int(lc1) == t->pk.column)
				appendStringInfo(&buf, "%s = %s", t->pk.attribute,
								 key_value_text(lfirst(lc2)));
		return buf.data;
	}
	appendStringInfo(&buf, "%s = %s (", t->pk.attribute, quote_literal_cstr(t->pk.format));
	forboth(lc1, ss->key_cols, lc2, ss->key_exprs)
	{
		appendStringInfo(&buf, "%s%s = %s", first ? "" : ", ",
						 t->columns[lfirst_int(lc1)].name, key_value_text(lfirst(lc2)));
		first = false;
	}
	appendStringInfoChar(&buf, ')');
	return buf.data;
}

/* ExplainForeignScan: what goes to DynamoDB, and with ANALYZE what it cost. */
void
shard_explain_scan(ForeignScanState *node, ExplainState *es)
{
	ShardScanState  *ss = node->fdw_state;
	ShardTable *t = ss->t;
	StringInfoData buf;
	ListCell   *lc;

	ExplainPropertyText("DynamoDB Operation", ss->op == SCAN_OP_QUERY ? "Query" : "Scan", es);
	ExplainPropertyText("DynamoDB Table", t->table, es);
	if (t->index)
		ExplainPropertyText("DynamoDB Index", t->index, es);
	if (ss->op == SCAN_OP_QUERY)
		ExplainPropertyText("Key Condition", key_condition_text(ss), es);
	if (es->verbose)
	{
		initStringInfo(&buf);
		foreach(lc, ss->attrs)
			appendStringInfo(&buf, "%s%s", buf.len ? ", " : "", strVal(lfirst(lc)));
		ExplainPropertyText("Projection", ss->attrs ? buf.data : "(all attributes)", es);
	}
	if (es->analyze)
	{
		DdbStats	total = ss->stats;

		if (ss->group)
			add_stats(&total, ddb_group_stats(ss->group));
		ExplainPropertyInteger("DynamoDB Requests", NULL, total.requests, es);
		ExplainPropertyInteger("DynamoDB Pages", NULL, ss->pages, es);
		ExplainPropertyInteger("DynamoDB Items Scanned", NULL, total.scanned, es);
		ExplainPropertyInteger("DynamoDB Items Returned", NULL, total.items, es);
		ExplainPropertyFloat("DynamoDB Consumed Capacity", NULL, total.capacity, 1, es);
		ExplainPropertyInteger("DynamoDB Retries", NULL, total.retries, es);
		ExplainPropertyInteger("DynamoDB Throttles", NULL, total.throttles, es);
	}
}
