/*-------------------------------------------------------------------------
 *
 * modify.c
 *		INSERT and COPY into a foreign table: each row becomes an item
 *		(keys built from the templates, every column its own attribute),
 *		written with a PutItem that refuses to overwrite an existing key.
 *
 * Bad rows (a NULL or empty key part, a number DynamoDB cannot hold, an
 * item over 400 KB) are refused before any request for them is sent.
 *
 *-------------------------------------------------------------------------
 */
#include "shard_fdw.h"

#include "access/table.h"
#include "common/pg_prng.h"
#include "commands/explain.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/plannodes.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "scan.h"

/* DynamoDB's item size limit. */
#define DDB_MAX_ITEM_BYTES (400 * 1024)

/* The members of a ForeignModify's fdw_private list. */
typedef enum ModifyPrivate
{
	MODIFY_PRIVATE_DO_NOTHING	/* Boolean: ON CONFLICT DO NOTHING */
} ModifyPrivate;

typedef struct ModifyState
{
	ShardTable *t;
	DdbConn    *conn;
	DdbGroup   *group;
	bool		do_nothing;
	MemoryContext rowcxt;
	int64		written;		/* rows written so far by this statement */
} ModifyState;

/* PlanForeignModify: only INSERT, and whether ON CONFLICT DO NOTHING. */
List *
shard_plan_modify(PlannerInfo *root, ModifyTable *plan, Index resultRelation,
				  int subplan_index)
{
	if (plan->operation != CMD_INSERT)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("shard_fdw supports only INSERT so far")));
	return list_make1(makeBoolean(plan->onConflictAction == ONCONFLICT_NOTHING));
}

/* Set up the state of a modify on rinfo's relation. */
static ModifyState *
modify_setup(EState *estate, ResultRelInfo *rinfo, bool do_nothing)
{
	ModifyState *ms = palloc0(sizeof(ModifyState));
	Relation	rel = rinfo->ri_RelationDesc;
	Oid			userid = GetUserId();

	ms->t = shard_get_table(RelationGetRelid(rel), true);
	if (ms->t->index)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot write to foreign table \"%s\": it reads through index \"%s\"",
						ms->t->relname, ms->t->index)));
	ms->do_nothing = do_nothing;
	ms->conn = shard_get_connection(GetForeignTable(RelationGetRelid(rel))->serverid,
									userid);
	ms->group = ddb_group_create(ms->conn, ms->conn->server->max_concurrency);
	ms->rowcxt = AllocSetContextCreate(estate->es_query_cxt, "shard_fdw modify row",
									   ALLOCSET_DEFAULT_SIZES);
	rinfo->ri_FdwState = ms;
	return ms;
}

/* BeginForeignModify */
void
shard_begin_modify(ModifyTableState *mtstate, ResultRelInfo *rinfo,
				   List *fdw_private, int subplan_index, int eflags)
{
	if (eflags & EXEC_FLAG_EXPLAIN_ONLY)
		return;
	modify_setup(mtstate->ps.state, rinfo,
				 boolVal(list_nth(fdw_private, MODIFY_PRIVATE_DO_NOTHING)));
}

/* BeginForeignInsert: COPY, and INSERT routed to a partition. */
void
shard_begin_insert(ModifyTableState *mtstate, ResultRelInfo *rinfo)
{
	ModifyTable *plan = (ModifyTable *) mtstate->ps.plan;

	modify_setup(mtstate->ps.state, rinfo,
				 plan != NULL && plan->onConflictAction == ONCONFLICT_NOTHING);
}

/*
 * The text of each column of the row that a key template uses, indexed by
 * template part; errors name the column when it is NULL.
 */
static const char **
template_values(ModifyState *ms, ShardKey *key, TupleTableSlot *slot)
{
	KeyTemplate *tmpl = key->template;
	const char **values = palloc0(sizeof(char *) * tmpl->nparts);

	for (int i = 0; i < tmpl->nparts; i++)
	{
		ShardColumn *col;
		bool		isnull;
		Datum		value;

		if (tmpl->parts[i].kind != KP_COLUMN)
			continue;
		col = shard_find_column(ms->t, tmpl->parts[i].text);
		value = slot_getattr(slot, col->attnum, &isnull);
		if (isnull)
			ereport(ERROR,
					(errcode(ERRCODE_NOT_NULL_VIOLATION),
					 errmsg("cannot write a row with NULL in column \"%s\" to foreign table \"%s\"",
							col->name, ms->t->relname),
					 errdetail("Column \"%s\" is part of key attribute \"%s\".",
							   col->name, key->attribute)));
		values[i] = codec_key_text(col, value);
	}
	return values;
}

/*
 * The value of key attribute key for the row in slot: rendered from its
 * template, or the text of its column.  Errors name the column.
 */
static char *
key_value(ModifyState *ms, ShardKey *key, TupleTableSlot *slot, long shard)
{
	char	   *text;

	if (key->template)
	{
		Buf			out;
		char		err[256];

		buf_init(&out);
		if (!keyfmt_render(key->template, template_values(ms, key, slot), shard,
						   &out, err, sizeof(err)))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("cannot build key attribute \"%s\" of a row of foreign table \"%s\": %s",
							key->attribute, ms->t->relname, err)));
		text = out.data;
	}
	else
	{
		ShardColumn *col = &ms->t->columns[key->column];
		bool		isnull;
		Datum		value = slot_getattr(slot, col->attnum, &isnull);

		if (isnull)
			ereport(ERROR,
					(errcode(ERRCODE_NOT_NULL_VIOLATION),
					 errmsg("cannot write a row with NULL in column \"%s\" to foreign table \"%s\"",
							col->name, ms->t->relname),
					 errdetail("Column \"%s\" holds key attribute \"%s\".",
							   col->name, key->attribute)));
		text = codec_key_text(col, value);
	}
	if (text[0] == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot write a row with an empty key attribute \"%s\" to foreign table \"%s\"",
						key->attribute, ms->t->relname),
				 errdetail("DynamoDB key attributes cannot be empty.")));
	return text;
}

/*
 * The shard the row in slot goes to: random, hashed or ranged from its
 * shard_by columns (errors name a NULL one), or 0 when unsharded.
 */
static long
row_shard(ModifyState *ms, TupleTableSlot *slot)
{
	ShardTable *t = ms->t;
	const char **texts;
	ListCell   *lc;

	switch (t->strategy)
	{
		case SHARD_NONE:
			return 0;
		case SHARD_RANDOM:
			return t->shard_base +
				(long) pg_prng_uint64_range(&pg_global_prng_state, 0, t->shards - 1);
		case SHARD_DYNAMIC:
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("writing to foreign table \"%s\" with shard_strategy \"dynamic\" is not supported yet",
							t->relname)));
		case SHARD_CALCULATED:
		case SHARD_RANGE:
			break;
	}
	texts = palloc0(sizeof(char *) * t->ncolumns);
	foreach(lc, t->shard_by)
	{
		ShardColumn *col = &t->columns[lfirst_int(lc)];
		bool		isnull;
		Datum		value = slot_getattr(slot, col->attnum, &isnull);

		if (isnull)
			ereport(ERROR,
					(errcode(ERRCODE_NOT_NULL_VIOLATION),
					 errmsg("cannot write a row with NULL in column \"%s\" to foreign table \"%s\"",
							col->name, t->relname),
					 errdetail("Column \"%s\" chooses the row's shard (option \"shard_by\").",
							   col->name)));
		texts[lfirst_int(lc)] = codec_key_text(col, value);
	}
	return route_shard(t, texts);
}

/* Write a key attribute's value as an AttributeValue. */
static void
write_key(JsonWriter *w, ShardKey *key, const char *text)
{
	jw_begin_object(w);
	jw_key(w, key->template ? "S" : key->type == DDB_TYPE_N ? "N" :
		   key->type == DDB_TYPE_B ? "B" : "S");
	jw_cstring(w, text);
	jw_end_object(w);
}

/*
 * Write the item of the row in slot: the key attributes, then every
 * non-NULL column as its own attribute.  Returns the item's size as
 * DynamoDB counts it (names plus values, approximately for numbers).
 */
static size_t
write_item(ModifyState *ms, JsonWriter *w, TupleTableSlot *slot)
{
	ShardTable *t = ms->t;
	char	   *pk = key_value(ms, &t->pk, slot, row_shard(ms, slot));
	char	   *sk = t->sk.attribute ? key_value(ms, &t->sk, slot, 0) : NULL;
	size_t		size = 0;

	jw_begin_object(w);
	jw_key(w, t->pk.attribute);
	write_key(w, &t->pk, pk);
	size += strlen(t->pk.attribute) + strlen(pk);
	if (sk)
	{
		jw_key(w, t->sk.attribute);
		write_key(w, &t->sk, sk);
		size += strlen(t->sk.attribute) + strlen(sk);
	}
	for (int i = 0; i < t->ncolumns; i++)
	{
		ShardColumn *col = &t->columns[i];
		bool		isnull;
		Datum		value = slot_getattr(slot, col->attnum, &isnull);
		size_t		before = w->out->len;

		if (isnull)
			continue;
		if (col->ddb_type == DDB_TYPE_ITEM)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("cannot write column \"%s\" of foreign table \"%s\": attribute '*' is read-only",
							col->name, t->relname),
					 errhint("Insert NULL into it; every other column is stored as its own attribute.")));
		if (strcmp(col->attribute, t->pk.attribute) == 0 ||
			(t->sk.attribute && strcmp(col->attribute, t->sk.attribute) == 0))
			continue;
		jw_key(w, col->attribute);
		codec_write_value(w, col, value);
		size += strlen(col->attribute) + (w->out->len - before);
	}
	jw_end_object(w);
	if (size > DDB_MAX_ITEM_BYTES)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("row of foreign table \"%s\" is too large for a DynamoDB item", t->relname),
				 errdetail("The item would take about %zu bytes; DynamoDB's limit is %d.",
						   size, DDB_MAX_ITEM_BYTES)));
	return size;
}

/* The PutItem body for the row in slot, conditional on a new key. */
static char *
put_body(ModifyState *ms, TupleTableSlot *slot, size_t *len)
{
	Buf			out;
	JsonWriter	w;

	buf_init(&out);
	jw_init(&w, &out);
	jw_begin_object(&w);
	jw_key(&w, "TableName");
	jw_cstring(&w, ms->t->table);
	jw_key(&w, "Item");
	write_item(ms, &w, slot);
	if (ms->t->insert_mode == INSERT_MODE_INSERT)
	{
		jw_key(&w, "ConditionExpression");
		jw_cstring(&w, "attribute_not_exists(#pk)");
		jw_key(&w, "ExpressionAttributeNames");
		jw_begin_object(&w);
		jw_key(&w, "#pk");
		jw_cstring(&w, ms->t->pk.attribute);
		jw_end_object(&w);
	}
	jw_key(&w, "ReturnConsumedCapacity");
	jw_cstring(&w, "TOTAL");
	jw_end_object(&w);
	*len = out.len;
	return out.data;
}

/*
 * After a conditional put failed on a retry of an attempt that may have
 * been applied: true when the stored item is item, the one we sent, i.e.
 * our own earlier attempt wrote it.
 */
static bool
stored_item_is_ours(ModifyState *ms, const DdbJson *item)
{
	Buf			out;
	JsonWriter	w;
	const DdbJson *got;
	Buf			a;
	Buf			b;
	JsonWriter	wa;
	JsonWriter	wb;

	buf_init(&out);
	jw_init(&w, &out);
	jw_begin_object(&w);
	jw_key(&w, "TableName");
	jw_cstring(&w, ms->t->table);
	jw_key(&w, "Key");
	jw_begin_object(&w);
	jw_key(&w, ms->t->pk.attribute);
	jw_tree(&w, ddbjson_get(item, ms->t->pk.attribute));
	if (ms->t->sk.attribute)
	{
		jw_key(&w, ms->t->sk.attribute);
		jw_tree(&w, ddbjson_get(item, ms->t->sk.attribute));
	}
	jw_end_object(&w);
	jw_key(&w, "ConsistentRead");
	jw_bool(&w, true);
	jw_end_object(&w);
	got = ddbjson_get(ddb_call(ms->group, "GetItem", out.data, out.len), "Item");
	if (got == NULL || got->n != item->n)
		return false;
	for (int i = 0; i < item->n; i++)
	{
		const DdbJson *other = ddbjson_get(got, item->keys[i]);

		if (other == NULL)
			return false;
		buf_init(&a);
		buf_init(&b);
		jw_init(&wa, &a);
		jw_init(&wb, &b);
		jw_tree(&wa, &item->elems[i]);
		jw_tree(&wb, other);
		if (a.len != b.len || memcmp(a.data, b.data, a.len) != 0)
			return false;
	}
	return true;
}

/* Error context callback: which row of the statement failed. */
static void
insert_error_context(void *arg)
{
	ModifyState *ms = arg;

	errcontext("writing row %lld to foreign table \"%s\" (%lld row%s of this statement written before it)",
			   (long long) ms->written + 1, ms->t->relname,
			   (long long) ms->written, ms->written == 1 ? "" : "s");
}

/* ExecForeignInsert: write one row. */
TupleTableSlot *
shard_exec_insert(EState *estate, ResultRelInfo *rinfo, TupleTableSlot *slot,
				  TupleTableSlot *planSlot)
{
	ModifyState *ms = rinfo->ri_FdwState;
	MemoryContext old = MemoryContextSwitchTo(ms->rowcxt);
	size_t		len;
	char	   *body;
	DdbRequest *req;
	TupleTableSlot *result = slot;
	ErrorContextCallback cb;

	cb.callback = insert_error_context;
	cb.arg = ms;
	cb.previous = error_context_stack;
	error_context_stack = &cb;
	MemoryContextReset(ms->rowcxt);
	body = put_body(ms, slot, &len);
	req = ddb_request_create(ms->group, "PutItem", body, len);
	req->idempotent = ms->t->insert_mode != INSERT_MODE_INSERT;
	ddb_submit(req);
	ddb_wait_for(req);
	if (req->status != DDB_OK)
	{
		bool		duplicate = strcmp(req->error_type, "ConditionalCheckFailedException") == 0;
		char		err[256];
		const DdbJson *item = ddbjson_get(ddbjson_parse(req->body, req->body_len,
														err, sizeof(err)), "Item");

		if (duplicate && req->maybe_applied && stored_item_is_ours(ms, item))
			duplicate = false;
		else if (duplicate && ms->do_nothing)
			result = NULL;
		else if (duplicate)
			ereport(ERROR,
					(errcode(ERRCODE_UNIQUE_VIOLATION),
					 errmsg("duplicate key value violates the primary key of DynamoDB table \"%s\"",
							ms->t->table),
					 errdetail("An item with key (%s) already exists.",
							   codec_item_key_text(item, ms->t))));
		else
			ddb_report_error(req);
	}
	if (result)
		ms->written++;
	ddb_request_free(req);
	MemoryContextSwitchTo(old);
	error_context_stack = cb.previous;
	return result;
}

/* EndForeignModify and EndForeignInsert: free the requests' memory. */
void
shard_end_modify(EState *estate, ResultRelInfo *rinfo)
{
	ModifyState *ms = rinfo->ri_FdwState;

	if (ms && ms->group)
	{
		ddb_group_free(ms->group);
		ms->group = NULL;
	}
}

/* EndForeignInsert */
void
shard_end_insert(EState *estate, ResultRelInfo *rinfo)
{
	shard_end_modify(estate, rinfo);
}

/* IsForeignRelUpdatable: INSERT only, and none through an index. */
int
shard_is_updatable(Relation rel)
{
	ShardTable *t = shard_get_table(RelationGetRelid(rel), false);

	return t->index ? 0 : (1 << CMD_INSERT);
}

/* ExplainForeignModify */
void
shard_explain_modify(ModifyTableState *mtstate, ResultRelInfo *rinfo,
					 List *fdw_private, int subplan_index, ExplainState *es)
{
	ShardTable *t = shard_get_table(RelationGetRelid(rinfo->ri_RelationDesc), false);

	ExplainPropertyText("DynamoDB Operation",
						t->insert_mode == INSERT_MODE_INSERT ?
						"PutItem (attribute_not_exists)" : "PutItem", es);
	ExplainPropertyText("DynamoDB Table", t->table, es);
}
