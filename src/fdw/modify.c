/*-------------------------------------------------------------------------
 *
 * modify.c
 *		Writes through the ModifyTable node: INSERT and COPY (each row an
 *		item, keys built by route.c, every column its own attribute; a
 *		conditional PutItem that refuses to overwrite a key in insert mode,
 *		a TransactWriteItems that checks the earlier layouts' keys too
 *		while the table has some, BatchWriteItem in upsert mode), dynamic
 *		tables' rows placed by their metadata, and the callbacks' set-up.
 *		UPDATE and DELETE are in update.c, the request bodies in
 *		writebody.c.
 *
 * Bad rows (a NULL or empty key part, a number DynamoDB cannot hold, an
 * item over 400 KB as DynamoDB counts it) are refused before any request
 * for them is sent.
 *
 *-------------------------------------------------------------------------
 */
#include "fdw/fdw.h"

#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/plannodes.h"
#include "optimizer/appendinfo.h"
#include "catalog/pg_type.h"
#include "access/sysattr.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "fdw/modifystate.h"


/* PlanForeignModify: whether ON CONFLICT DO NOTHING. */
List *
shard_plan_modify(PlannerInfo *root, ModifyTable *plan, Index resultRelation,
				  int subplan_index)
{
	return list_make1(makeBoolean(plan->onConflictAction == ONCONFLICT_NOTHING));
}

/* The name of the junk column carrying the old value of column attnum. */
static char *
old_junk_name(AttrNumber attnum)
{
	return psprintf("shard_fdw_old_%d", attnum);
}

/*
 * AddForeignUpdateTargets: UPDATE and DELETE find an item by its stored
 * key, so the scan hands them the old values of the key columns (of every
 * layout, and the shard_by columns while the table has earlier layouts: a
 * row moved meanwhile is followed to its newest key), and in
 * ctid the shard the item was read from (block number; the legacy
 * unsharded key is LEGACY_SHARD_BLOCK) and its layout (offset).  A DELETE with RETURNING gets
 * every column's old value: when the answer of a DeleteItem that was
 * applied is lost, its retry finds nothing to return.
 */
void
shard_add_update_targets(PlannerInfo *root, Index rtindex,
						 RangeTblEntry *target_rte, Relation target_relation)
{
	ShardTable *t = shard_get_table(RelationGetRelid(target_relation));
	bool		whole_row = root->parse->commandType == CMD_DELETE &&
		root->parse->returningList != NIL;

	add_row_identity_var(root, makeVar(rtindex, SelfItemPointerAttributeNumber,
									   TIDOID, -1, InvalidOid, 0),
						 rtindex, "ctid");
	for (int i = 0; i < t->ncolumns; i++)
	{
		ShardColumn *col = &t->columns[i];

		/* while items move, the newest layout's shard_by columns too */
		if (!whole_row && !shard_key_uses(t, i) &&
			!(t->nlayouts > 1 && list_member_int(t->shard_by, i)))
			continue;
		add_row_identity_var(root, makeVar(rtindex, col->attnum, col->typid,
										   col->typmod, col->collation, 0),
							 rtindex, old_junk_name(col->attnum));
	}
}

/* See modifystate.h. */
ModifyState *
modify_setup(EState *estate, ResultRelInfo *rinfo, bool do_nothing)
{
	ModifyState *ms = palloc0(sizeof(ModifyState));
	Relation	rel = rinfo->ri_RelationDesc;
	Oid			userid = GetUserId();

	ms->t = shard_get_table(RelationGetRelid(rel));
	if (ms->t->index)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot write to foreign table \"%s\": it reads through index \"%s\"",
						ms->t->relname, ms->t->index)));
	ms->do_nothing = do_nothing;
	ms->conn = shard_get_connection(GetForeignTable(RelationGetRelid(rel))->serverid,
									userid);
	ms->group = ddb_group_create(ms->conn, ms->conn->server->max_concurrency);
	ddb_group_set_budget(ms->group, budget_for(ms->t, true));
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
	ModifyState *ms;
	CmdType		operation = mtstate->operation;

	if (eflags & EXEC_FLAG_EXPLAIN_ONLY)
		return;
	ms = modify_setup(mtstate->ps.state, rinfo,
					  boolVal(list_nth(fdw_private, MODIFY_PRIVATE_DO_NOTHING)));
	if (operation == CMD_UPDATE || operation == CMD_DELETE)
	{
		Plan	   *subplan = outerPlanState(mtstate)->plan;

		ms->ctid_attno = ExecFindJunkAttributeInTlist(subplan->targetlist, "ctid");
		ms->old_attnos = palloc0(sizeof(AttrNumber) * Max(ms->t->ncolumns, 1));
		for (int i = 0; i < ms->t->ncolumns; i++)
			ms->old_attnos[i] =
				ExecFindJunkAttributeInTlist(subplan->targetlist,
											 old_junk_name(ms->t->columns[i].attnum));
	}
	if (operation == CMD_UPDATE)
		ms->rowslot = ExecInitExtraTupleSlot(mtstate->ps.state,
											 RelationGetDescr(rinfo->ri_RelationDesc),
											 &TTSOpsMinimalTuple);
}

/* BeginForeignInsert: COPY, and INSERT routed to a partition. */
void
shard_begin_insert(ModifyTableState *mtstate, ResultRelInfo *rinfo)
{
	ModifyTable *plan = (ModifyTable *) mtstate->ps.plan;
	ModifyState *ms = modify_setup(mtstate->ps.state, rinfo,
								   plan != NULL && plan->onConflictAction == ONCONFLICT_NOTHING);

	/*
	 * COPY (no plan, so no ON CONFLICT) need not wait for each row unless
	 * RETURNING or row triggers want it back.  Rows of a dynamically
	 * sharded table are gathered (copied, as a row may be drawn into
	 * another shard after growth) and written batch_size at a time.
	 */
	if (plan == NULL && shard_batch_size(rinfo) > 1)
	{
		bool		dynamic = ms->t->strategy == SHARD_DYNAMIC;

		ms->pipelined = !dynamic && ms->t->insert_mode == INSERT_MODE_INSERT;
		ms->buffered = dynamic || ms->t->insert_mode == INSERT_MODE_UPSERT;
	}
	if (ms->buffered)
	{
		ms->items = palloc(sizeof(char *) * ms->t->batch_size);
		ms->identities = palloc(sizeof(char *) * ms->t->batch_size);
	}
	if (ms->buffered && ms->t->strategy == SHARD_DYNAMIC)
	{
		ms->copies = palloc(sizeof(TupleTableSlot *) * ms->t->batch_size);
		for (int i = 0; i < ms->t->batch_size; i++)
			ms->copies[i] = MakeSingleTupleTableSlot(RelationGetDescr(rinfo->ri_RelationDesc),
													 &TTSOpsMinimalTuple);
	}
	if (ms->pipelined)
	{
		ms->nrecent = 2 * ms->conn->server->max_concurrency + 1;
		ms->recent = palloc0(sizeof(char *) * ms->nrecent);
	}
	if (ms->buffered || ms->pipelined)
		ms->batchcxt = AllocSetContextCreate(mtstate->ps.state->es_query_cxt,
											 "shard_fdw copy batch",
											 ALLOCSET_DEFAULT_SIZES);
}

/*
 * The key texts of the row's columns that its item key or its shard is
 * made of, in the newest layout or an earlier one, indexed by column as
 * route.c takes them; errors name a NULL one the newest layout needs and
 * the option that needs it.
 */
const char **
modify_row_key_texts(ModifyState *ms, TupleTableSlot *slot)
{
	ShardTable *t = ms->t;
	const char **texts = palloc0(sizeof(char *) * Max(t->ncolumns, 1));

	for (int i = 0; i < t->ncolumns; i++)
	{
		ShardColumn *col = &t->columns[i];
		const char *option = shard_column_option(t, i);
		bool		isnull;
		Datum		value;

		if (option == NULL && !layout_places_column(t, i))
			continue;
		value = slot_getattr(slot, col->attnum, &isnull);
		/*
		 * an index key without a value is left out (a sparse index), and so
		 * is a column only an earlier layout needs: that layout cannot
		 * store the row
		 */
		if (isnull && (option == NULL || strncmp(option, "index_", 6) == 0))
			continue;
		if (isnull)
			ereport(ERROR,
					(errcode(ERRCODE_NOT_NULL_VIOLATION),
					 errmsg("cannot write a row with NULL in column \"%s\" to foreign table \"%s\"",
							col->name, t->relname),
					 strcmp(option, "shard_by") == 0 ?
					 errdetail("Column \"%s\" chooses the row's shard (option \"shard_by\").",
							   col->name) :
					 errdetail("Column \"%s\" makes up key attribute \"%s\" (option \"%s\").",
							   col->name,
							   shard_key_has_column(t, &t->pk, i) ? t->pk.attribute : t->sk.attribute,
							   option)));
		texts[i] = codec_key_text(col, value);
	}
	return texts;
}

/*
 * The value of key attribute key (partition key under shard, or sort key)
 * of a row with the given key texts; errors name the attribute.
 */
static char *
key_value(ModifyState *ms, ShardKey *key, const char **texts, long shard)
{
	ShardTable *t = ms->t;
	char		err[SFDW_ERRLEN];
	char	   *text = key == &t->pk ?
		route_partition_key(t, texts, shard, false, err, sizeof(err)) :
		route_sort_key(t, texts, err, sizeof(err));

	if (text == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot build key attribute \"%s\" of a row of foreign table \"%s\": %s",
						key->attribute, t->relname, err)));
	if (text[0] == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot write a row with an empty key attribute \"%s\" to foreign table \"%s\"",
						key->attribute, t->relname),
				 errdetail("DynamoDB key attributes cannot be empty.")));
	return text;
}

/*
 * Whether rows are written only where their key is free: in insert mode,
 * and under ON CONFLICT DO NOTHING, which must not overwrite in upsert
 * mode either.
 */
static bool
puts_conditional(ModifyState *ms)
{
	return ms->t->insert_mode == INSERT_MODE_INSERT || ms->do_nothing;
}

/*
 * Whether the items of the modify carry a put token: those of the
 * conditional PutItems of an INSERT or COPY (put_body), not those of a
 * TransactWriteItems, whose ClientRequestToken does its work, nor those an
 * UPDATE moves (a modify with old key columns).
 */
static bool
puts_token(ModifyState *ms)
{
	return ms->old_attnos == NULL && puts_conditional(ms) && ms->t->nlayouts == 1;
}

/*
 * Refuse the item of a row of ms's table, written into out from byte
 * start on, when DynamoDB would: when its size as DynamoDB counts it
 * (ddb_item_size), with its put token, is over DDB_MAX_ITEM_BYTES.  bound
 * is at least that size (the item's JSON text is longer than what
 * DynamoDB counts of it), so only an item that may be too large is parsed
 * to count exactly.
 */
static void
check_item_size(ModifyState *ms, const Buf *out, size_t start, size_t bound)
{
	ShardTable *t = ms->t;
	size_t		token = puts_token(ms) ? strlen(PUT_TOKEN_ATTRIBUTE) + PUT_TOKEN_HEX : 0;
	char		err[SFDW_ERRLEN];
	const DdbJson *item;
	size_t		size;

	if (bound + token <= DDB_MAX_ITEM_BYTES)
		return;
	item = ddbjson_parse(out->data + start, out->len - start, err, sizeof(err));
	if (item == NULL)
		elog(ERROR, "shard_fdw: the item of a row of foreign table \"%s\" is not valid JSON: %s",
			 t->relname, err);
	size = ddb_item_size(item) + token;
	if (size > DDB_MAX_ITEM_BYTES)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("row of foreign table \"%s\" is too large for a DynamoDB item", t->relname),
				 errdetail("The item with key (%s) would take %zu bytes as DynamoDB counts them (attribute names and values%s); DynamoDB's limit is %d.",
						   codec_item_key_text(item, t), size,
						   token ? ", and the put token of a conditional put" : "",
						   DDB_MAX_ITEM_BYTES),
				 errhint("Store large values outside DynamoDB (such as in S3) and keep a reference in the row.")));
}

/*
 * Write the item of the row in slot, in the given shard or
 * SHARD_BY_STRATEGY: the key attributes (the index keys too, those whose
 * columns have values), then every non-NULL column as its own attribute;
 * an item DynamoDB would refuse as too large is refused first
 * (check_item_size).  The item's keys go into *pkp and *skp (NULL without
 * a sort key).
 */
static void
write_item(ModifyState *ms, JsonWriter *w, TupleTableSlot *slot, long shard,
		   char **pkp, char **skp)
{
	ShardTable *t = ms->t;
	const char **texts = modify_row_key_texts(ms, slot);
	char	   *pk = key_value(ms, &t->pk, texts, shard != SHARD_BY_STRATEGY ? shard :
							   dynamic_write_shard(t, texts, ms->group, true, &ms->dyn));
	char	   *sk = t->sk.attribute ? key_value(ms, &t->sk, texts, 0) : NULL;
	const ShardKey *keys[4] = {&t->pk, &t->sk, &t->index_pk, &t->index_sk};
	const char *values[4] = {pk, sk, route_index_key(t, &t->index_pk, texts),
	route_index_key(t, &t->index_sk, texts)};
	size_t		start = w->out->len;

	*pkp = pk;
	*skp = sk;
	jw_begin_object(w);
	for (int k = 0; k < 4; k++)
	{
		if (values[k] == NULL)
			continue;
		jw_key(w, keys[k]->attribute);
		request_write_key_value(w, keys[k], values[k]);
	}
	for (int i = 0; i < t->ncolumns; i++)
	{
		ShardColumn *col = &t->columns[i];
		bool		isnull;
		Datum		value = slot_getattr(slot, col->attnum, &isnull);

		if (isnull)
			continue;
		if (col->ddb_type == DDB_TYPE_ITEM)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("cannot write column \"%s\" of foreign table \"%s\": attribute '*' is read-only",
							col->name, t->relname),
					 errhint("Insert NULL into it; every other column is stored as its own attribute.")));
		if (request_is_key_attribute(t, col->attribute))
			continue;
		jw_key(w, col->attribute);
		codec_write_value(w, col, value);
	}
	jw_end_object(w);
	check_item_size(ms, w->out, start, w->out->len - start);
}

/* The JSON text of the row's item, and its keys (see write_item). */
char *
modify_item_json(ModifyState *ms, TupleTableSlot *slot, long shard, char **pk, char **sk)
{
	Buf			out;
	JsonWriter	w;

	buf_init(&out);
	jw_init(&w, &out);
	write_item(ms, &w, slot, shard, pk, sk);
	return out.data;
}

/* Error context callback: which row of the statement failed. */
static void
insert_error_context(void *arg)
{
	ModifyState *ms = arg;

	report_write_progress("writing to", "written", ms->t->relname, ms->written,
						  ms->doubt + ddb_group_rows_in_doubt(ms->group));
}

/*
 * The body of the write of an item (JSON text, the row in slot), and its
 * action: a PutItem, conditional in insert mode and under ON CONFLICT DO
 * NOTHING (request_put: the item then carries a put token).  While the
 * table has earlier layouts, a conditional put is a TransactWriteItems
 * that also checks each key they may give the row is free, so that a row
 * not moved yet is not stored twice; its ClientRequestToken makes its
 * retries exact.  Errors when the checks are more than a transaction
 * holds.
 */
static char *
put_body(ModifyState *ms, const char *item, TupleTableSlot *slot, const char **action,
		 size_t *len)
{
	ShardTable *t = ms->t;
	const char **texts;
	char		err[SFDW_ERRLEN];
	const DdbJson *parsed;
	const char *pk;
	const char *sk;
	List	   *others = NIL;

	if (!puts_conditional(ms) || t->nlayouts == 1)
	{
		*action = "PutItem";
		return request_put(t, item, puts_conditional(ms), len);
	}
	*action = "TransactWriteItems";
	texts = modify_row_key_texts(ms, slot);
	parsed = ddbjson_parse(item, strlen(item), err, sizeof(err));
	pk = codec_av_text(ddbjson_get(parsed, t->pk.attribute));
	sk = t->sk.attribute ? codec_av_text(ddbjson_get(parsed, t->sk.attribute)) : NULL;
	for (int i = 1; i < t->nlayouts; i++)
	{
		ListCell   *lc;

		foreach(lc, layout_partition_keys(t->layouts[i], texts))
		{
			ListCell   *lc2;
			bool		dup = strcmp(lfirst(lc), pk) == 0;

			foreach(lc2, others)
				dup |= strcmp(lfirst(lc2), lfirst(lc)) == 0;
			if (!dup)
				others = lappend(others, lfirst(lc));
		}
	}
	if (list_length(others) >= DDB_TRANSACT_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("cannot check the keys the earlier layouts of foreign table \"%s\" give a row",
						t->relname),
				 errdetail("They may store the row under %d keys; a TransactWriteItems checks at most %d besides its put.",
						   list_length(others), DDB_TRANSACT_MAX - 1),
				 errhint("Move the items of the earlier layouts with shard_fdw_reshard() until option \"layout_history\" is dropped.")));
	return request_put_checked(t, item, others, sk, len);
}

/*
 * Send the write of an item (JSON text, the row in slot), as put_body
 * writes it.  The request's owner is the row's slot (or NULL when nobody
 * waits for the row).
 */
static DdbRequest *
send_put(ModifyState *ms, const char *item, TupleTableSlot *slot, void *owner)
{
	size_t		len;
	const char *action;
	char	   *body = put_body(ms, item, slot, &action, &len);
	DdbRequest *req = ddb_request_create(ms->group, action, body, len);

	req->owner = owner;
	req->rows = 1;
	ddb_submit(req);
	return req;
}

/* Raise the unique violation of a row whose key an item already has. */
pg_noreturn static void
duplicate_error(ModifyState *ms, const DdbJson *item)
{
	ereport(ERROR,
			(errcode(ERRCODE_UNIQUE_VIOLATION),
			 errmsg("duplicate key value violates the primary key of DynamoDB table \"%s\"",
					ms->t->table),
			 errdetail("An item with key (%s) already exists.",
					   codec_item_key_text(item, ms->t))));
	pg_unreachable();
}

/* What became of a finished PutItem. */
typedef enum PutOutcome
{
	PUT_WRITTEN,
	PUT_SKIPPED,				/* by ON CONFLICT DO NOTHING */
	PUT_REFUSED					/* a duplicate key or another error */
} PutOutcome;

/*
 * The item a PutItem, or the Put of a TransactWriteItems (action 0), sent;
 * with failed, the action whose condition failed instead: its item, or
 * the key a ConditionCheck found taken.
 */
static const DdbJson *
put_item(DdbRequest *req, bool failed)
{
	char		err[SFDW_ERRLEN];
	const DdbJson *body = ddbjson_parse(req->body, req->body_len, err, sizeof(err));
	const DdbJson *actions = ddbjson_get(body, "TransactItems");
	const DdbJson *action;
	int			i = failed && actions ? ddb_failed_action(req->error_message) : 0;

	if (actions == NULL)
		return ddbjson_get(body, "Item");
	if (i < 0 || i >= actions->n)
		i = 0;
	action = &actions->elems[i];
	return i > 0 ? ddbjson_get(ddbjson_get(action, "ConditionCheck"), "Key") :
		ddbjson_get(ddbjson_get(action, "Put"), "Item");
}

/*
 * True when a put failed on its condition: a key it needs free is taken
 * (a PutItem's, or any action's of a TransactWriteItems).
 */
static bool
put_conflicted(DdbRequest *req)
{
	if (strcmp(req->error_type, "ConditionalCheckFailedException") == 0)
		return true;
	return strcmp(req->error_type, "TransactionCanceledException") == 0 &&
		ddb_failed_action(req->error_message) >= 0;
}

/*
 * After a conditional PutItem (req) failed its condition on a retry of an
 * attempt that may have been applied: true when the stored item carries
 * req's put token, i.e. the lost attempt wrote it.
 */
static bool
stored_item_is_ours(ModifyState *ms, DdbRequest *req)
{
	const DdbJson *item = put_item(req, false);
	size_t		len;
	char	   *body = request_get_put_token(ms->t, item, &len);
	const char *ours = ddbjson_get_string(ddbjson_get(item, PUT_TOKEN_ATTRIBUTE), "S");
	const DdbJson *got;
	const char *stored;

	/* while it is checked, the put may have been written */
	ms->doubt++;
	got = ddbjson_get(ddb_call(ms->group, "GetItem", body, len), "Item");
	ms->doubt--;
	stored = ddbjson_get_string(ddbjson_get(got, PUT_TOKEN_ATTRIBUTE), "S");
	return ours && stored && strcmp(ours, stored) == 0;
}

/*
 * Judge a finished put, counting it when written, or among the rows that
 * may have been when it failed after an attempt that may have written it.
 * A failed condition is a key taken before the put: the retry of a
 * transaction after an attempt that wrote the item succeeds (put_body),
 * and a PutItem's that fails is checked against the stored item's put
 * token.  A refused put is reported by put_refused.
 */
static PutOutcome
put_outcome(ModifyState *ms, DdbRequest *req)
{
	if (req->status != DDB_OK)
	{
		if (!put_conflicted(req))
		{
			/* failed, but an attempt may have written it */
			ms->doubt += req->maybe_applied;
			return PUT_REFUSED;
		}
		if (!req->maybe_applied || strcmp(req->action, "PutItem") != 0 ||
			!stored_item_is_ours(ms, req))
			return ms->do_nothing ? PUT_SKIPPED : PUT_REFUSED;
	}
	ms->written++;
	return PUT_WRITTEN;
}

/* See modifystate.h. */
void
modify_report_error(ModifyState *ms, DdbRequest *req, int rows)
{
	if (req->maybe_applied)
		ms->doubt += rows;
	ddb_report_error(req);
}

/* Report why a put was refused. */
pg_noreturn static void
put_refused(ModifyState *ms, DdbRequest *req)
{
	if (put_conflicted(req))
		duplicate_error(ms, put_item(req, true));
	ddb_report_error(req);
}

/*
 * Judge a finished PutItem: true when the row was written, false when ON
 * CONFLICT DO NOTHING skipped it; errors out otherwise.  Frees req.
 */
static bool
put_done(ModifyState *ms, DdbRequest *req)
{
	PutOutcome	outcome = put_outcome(ms, req);

	if (outcome == PUT_REFUSED)
		put_refused(ms, req);
	ddb_request_free(req);
	return outcome == PUT_WRITTEN;
}

/*
 * Judge a finished PutItem of many: the first refused one is kept in
 * *refused for the caller to report once all are judged, any other freed.
 */
static PutOutcome
judge_put(ModifyState *ms, DdbRequest *req, DdbRequest **refused)
{
	PutOutcome	outcome = put_outcome(ms, req);

	if (outcome == PUT_REFUSED && *refused == NULL)
		*refused = req;
	else
		ddb_request_free(req);
	return outcome;
}

/*
 * Wait for every PutItem of the modify and judge them all, so that the
 * count of rows written before an error is exact, then report the first
 * refused one.  Each request's owner, when set, is a bool set to whether
 * its row was skipped.
 */
void
modify_judge_all(ModifyState *ms)
{
	DdbRequest *req;
	DdbRequest *refused = NULL;

	while ((req = ddb_wait_any(ms->group)) != NULL)
	{
		bool	   *skipped = req->owner;
		PutOutcome	outcome = judge_put(ms, req, &refused);

		if (skipped)
			*skipped = outcome == PUT_SKIPPED;
	}
	if (refused)
		put_refused(ms, refused);
}

/* True when a write failed, throttled to the end. */
static bool
throttled_out(DdbRequest *req)
{
	return req->status == DDB_FAILED && req->last_throttled;
}

/*
 * True when DynamoDB throttled a write for its key: a key-range reason
 * came, or throttles without any reasons outlasted the retries.
 */
static bool
key_throttled(DdbRequest *req)
{
	return req->key_throttled || (throttled_out(req) && !req->throttle_reasons);
}

/* Push the error context of a modify; pop it with pop_error_context. */
void
modify_push_context(ModifyState *ms, ErrorContextCallback *cb)
{
	push_error_context(cb, insert_error_context, ms);
}

/* See modifystate.h. */
bool
modify_push_context_of(EState *estate, Index rti, ErrorContextCallback *cb)
{
	ResultRelInfo *rinfo;

	if (estate->es_result_relations == NULL || rti == 0 ||
		rti > estate->es_range_table_size)
		return false;
	rinfo = estate->es_result_relations[rti - 1];
	/* the scan's relation: its modify state is the extension's, if set */
	if (rinfo == NULL || rinfo->ri_FdwState == NULL)
		return false;
	modify_push_context(rinfo->ri_FdwState, cb);
	return true;
}


/*
 * GetForeignModifyBatchSize: batch_size rows at a time, unless RETURNING
 * or row triggers need each row back at once.
 */
int
shard_batch_size(ResultRelInfo *rinfo)
{
	ShardTable *t = shard_get_table(RelationGetRelid(rinfo->ri_RelationDesc));

	if (rinfo->ri_projectReturning != NULL ||
		(rinfo->ri_TrigDesc &&
		 (rinfo->ri_TrigDesc->trig_insert_before_row ||
		  rinfo->ri_TrigDesc->trig_insert_after_row)))
		return 1;
	return t->batch_size;
}

/* Report the n items a BatchWriteItem (req) left unwritten to the end. */
pg_noreturn static void
unwritten_error(ModifyState *ms, DdbRequest *req, int n)
{
	ereport(ERROR,
			(errcode(ERRCODE_FDW_ERROR),
			 errmsg("DynamoDB left %d item%s of foreign table \"%s\" unwritten",
					n, n == 1 ? "" : "s", ms->t->relname),
			 errdetail("BatchWriteItem returned them as UnprocessedItems after %d attempt%s.",
					   req->attempts, req->attempts == 1 ? "" : "s"),
			 errhint("Raise the server's max_retries or request_timeout_ms, or the table's capacity.")));
	pg_unreachable();
}

/*
 * Write items by BatchWriteItem, DDB_BATCH_WRITE_MAX a request, all
 * requests in flight at once; items DynamoDB leaves unprocessed are sent
 * again as a retry of their request (ddb_request_again), and are an error
 * once the retry policy allows no more.  The items must have distinct
 * keys.  Each request's owner is the number of items it carries.
 */
static void
batch_write(ModifyState *ms, char **items, int n)
{
	DdbRequest *req;
	size_t		len;
	char	   *body;

	for (int i = 0; i < n; i += DDB_BATCH_WRITE_MAX)
	{
		int			count = Min(DDB_BATCH_WRITE_MAX, n - i);

		body = request_batch_put(ms->t, items + i, count, &len);
		req = ddb_request_create(ms->group, "BatchWriteItem", body, len);
		req->owner = (void *) (intptr_t) count;
		req->rows = count;
		ddb_submit(req);
	}
	while ((req = ddb_wait_any(ms->group)) != NULL)
	{
		const DdbJson *left;
		char	  **again;
		int			nagain = 0;
		int			nsent = (int) (intptr_t) req->owner;

		if (req->status != DDB_OK)
			modify_report_error(ms, req, nsent);
		left = ddbjson_get(ddbjson_get(req->response, "UnprocessedItems"), ms->t->table);
		again = palloc(sizeof(char *) * Max(nsent, 1));
		for (int i = 0; left && left->kind == DJ_ARRAY && i < left->n; i++)
		{
			Buf			out;
			JsonWriter	w;

			buf_init(&out);
			jw_init(&w, &out);
			jw_tree(&w, ddbjson_get(ddbjson_get(&left->elems[i], "PutRequest"), "Item"));
			again[nagain++] = out.data;
		}
		ms->written += nsent - nagain;
		if (nagain > 0)
		{
			DdbRequest *next;

			body = request_batch_put(ms->t, again, nagain, &len);
			next = ddb_request_again(req, req->action, body, len, nagain < nsent);
			if (next == NULL)
				unwritten_error(ms, req, nagain);
			next->owner = (void *) (intptr_t) nagain;
			next->rows = nagain;
		}
		ddb_request_free(req);
	}
}

/* What tells items apart: their partition and sort key texts. */
static char *
item_identity(const char *pk, const char *sk)
{
	return psprintf("%s%c%s", pk, '\x01', sk ? sk : "");
}

/* True when identities[i] is among identities[from..i-1]. */
static bool
repeats(char **identities, int from, int i)
{
	for (int k = from; k < i; k++)
		if (strcmp(identities[k], identities[i]) == 0)
			return true;
	return false;
}

/*
 * Write items in upsert mode by BatchWriteItem, all at once, except that
 * an item whose key an earlier item has waits until that one is written,
 * so that the later item wins.
 */
static void
upsert_items(ModifyState *ms, char **items, char **identities, int n)
{
	int			start = 0;

	for (int i = 1; i <= n; i++)
	{
		if (i == n || repeats(identities, start, i))
		{
			batch_write(ms, items + start, i - start);
			start = i;
		}
	}
}

/* ---------------------------------------------------------------------
 * Dynamically sharded tables
 * ---------------------------------------------------------------------
 */

/* A row of a dynamically sharded table that write_dynamic writes. */
typedef struct DynamicRow
{
	TupleTableSlot *slot;
	char	   *item;			/* its item, in the shard drawn last */
	char	   *identity;		/* the item's keys (item_identity) */
	char	   *base;			/* its base key */
	DynamicMeta seen;			/* the metadata its shard was drawn from */
	int			left;			/* BatchWriteItem rounds that left it */
	bool		written;
} DynamicRow;

/* A growth asked for during one write_dynamic: of base, from shards. */
typedef struct GrowthAsked
{
	char	   *base;
	int			shards;
	TimestampTz at;
} GrowthAsked;

/* Draw row's shard among its key's current count and build its item. */
static void
place_dynamic(ModifyState *ms, DynamicRow *row)
{
	char	   *pk;
	char	   *sk;

	row->item = modify_item_json(ms, row->slot, SHARD_BY_STRATEGY, &pk, &sk);
	row->identity = item_identity(pk, sk);
	row->base = ms->dyn.base;
	row->seen = ms->dyn.meta;
}

/*
 * DynamoDB throttled row's key: grow it (dynamic_grow) unless this batch
 * already asked to grow the key from the count row saw less than a
 * cooldown ago, or another row of the batch was placed after the key grew
 * past it; then draw row's shard again.  So the metadata is read once per
 * key and growth, not once per row throttled.  Returns whether row's key
 * space grew.
 */
static bool
regrow_dynamic(ModifyState *ms, DynamicRow *row, List **asked)
{
	ListCell   *lc;
	TimestampTz now = GetCurrentTimestamp();
	int			before = row->seen.shards;
	bool		known = false;

	foreach(lc, *asked)
	{
		GrowthAsked *g = lfirst(lc);

		if (strcmp(g->base, row->base) == 0 && g->shards >= before &&
			!TimestampDifferenceExceeds(g->at, now, ms->t->cooldown_s * 1000))
			known = true;
	}
	if (!known)
	{
		GrowthAsked *g = palloc(sizeof(GrowthAsked));

		g->base = row->base;
		g->shards = before;
		g->at = now;
		*asked = lappend(*asked, g);
		dynamic_grow(ms->t, ms->group, row->base, row->seen);
	}
	place_dynamic(ms, row);
	return row->seen.shards > before;
}

/*
 * Insert mode (or ON CONFLICT DO NOTHING): a conditional PutItem for each
 * row, all in flight at once, each retried only twice when throttled so
 * that the key grows instead of waiting.  A row throttled to the end is
 * drawn again into its key's grown space and sent as a retry of its
 * request (ddb_request_again, so the server's retry policy bounds it),
 * while the other rows carry on; a row that table-level throttles kept
 * out is sent again the same way, without growth.  A row whose item key
 * an earlier row of the batch has is a duplicate (see
 * shard_exec_batch_insert).
 */
static void
put_dynamic(ModifyState *ms, DynamicRow *rows, int n)
{
	List	   *asked = NIL;
	DdbRequest *req;
	DdbRequest *refused = NULL;
	int			refused_at = -1;

	for (int i = 0; i < n; i++)
	{
		bool		repeated = false;

		for (int k = 0; k < i && !repeated; k++)
			repeated = strcmp(rows[k].identity, rows[i].identity) == 0;
		if (repeated)
		{
			if (!ms->do_nothing && refused_at < 0)
				refused_at = i;
			continue;
		}
		req = send_put(ms, rows[i].item, rows[i].slot, &rows[i]);
		req->max_throttle_retries = Min(req->max_throttle_retries, 2);
	}
	while ((req = ddb_wait_any(ms->group)) != NULL)
	{
		DynamicRow *row = req->owner;

		if (throttled_out(req))
		{
			bool		grew = key_throttled(req) && regrow_dynamic(ms, row, &asked);
			size_t		len;
			const char *action;
			char	   *body = put_body(ms, row->item, row->slot, &action, &len);
			DdbRequest *next = ddb_request_again(req, action, body, len, grew);

			if (next != NULL)
			{
				ddb_request_free(req);
				continue;
			}
		}
		row->written = judge_put(ms, req, &refused) == PUT_WRITTEN;
	}
	if (refused)
		put_refused(ms, refused);
	if (refused_at >= 0)
	{
		char		err[SFDW_ERRLEN];

		duplicate_error(ms, ddbjson_parse(rows[refused_at].item,
										  strlen(rows[refused_at].item),
										  err, sizeof(err)));
	}
}

/* Send rows[0..n-1] (distinct item keys) in one BatchWriteItem. */
static void
send_dynamic_batch(ModifyState *ms, DynamicRow **rows, int n)
{
	char	  **items = palloc(sizeof(char *) * n);
	size_t		len;
	char	   *body;
	DdbRequest *req;

	for (int i = 0; i < n; i++)
		items[i] = rows[i]->item;
	body = request_batch_put(ms->t, items, n, &len);
	req = ddb_request_create(ms->group, "BatchWriteItem", body, len);
	req->owner = rows;
	req->max_throttle_retries = Min(req->max_throttle_retries, 2);
	ddb_submit(req);
	pfree(items);
}

/*
 * The rows of a BatchWriteItem (rows, n of them) that DynamoDB left in
 * UnprocessedItems; returns how many, the others marked written.
 */
static int
unprocessed_rows(ModifyState *ms, DdbRequest *req, DynamicRow **rows, int n,
				 DynamicRow **left)
{
	const DdbJson *unprocessed =
		ddbjson_get(ddbjson_get(req->response, "UnprocessedItems"), ms->t->table);
	int			nleft = 0;

	for (int i = 0; i < n; i++)
		rows[i]->written = true;
	for (int u = 0; unprocessed && unprocessed->kind == DJ_ARRAY && u < unprocessed->n; u++)
	{
		const DdbJson *item = ddbjson_get(ddbjson_get(&unprocessed->elems[u],
													  "PutRequest"), "Item");
		const char *pk = codec_av_text(ddbjson_get(item, ms->t->pk.attribute));
		const char *sk = ms->t->sk.attribute ?
			codec_av_text(ddbjson_get(item, ms->t->sk.attribute)) : NULL;
		char	   *identity = item_identity(pk ? pk : "", sk);

		for (int i = 0; i < n; i++)
			if (rows[i]->written && strcmp(rows[i]->identity, identity) == 0)
			{
				rows[i]->written = false;
				left[nleft++] = rows[i];
				break;
			}
	}
	return nleft;
}

/*
 * Upsert mode: the rows by BatchWriteItem, DDB_BATCH_WRITE_MAX a request,
 * all in flight at once (a row whose item key an earlier row has goes in
 * a later request, after that one).  Rows DynamoDB leaves unprocessed are
 * sent again as a retry of their request; a row left three times, or
 * in a request throttled to the end, whose key DynamoDB keeps throttling,
 * is drawn again into its key's grown space, the others of the request
 * carrying on.
 */
static void
upsert_dynamic(ModifyState *ms, DynamicRow *rows, int n)
{
	List	   *asked = NIL;
	int			start = 0;

	while (start < n)
	{
		int			end = start + 1;
		DdbRequest *req;

		while (end < n)
		{
			bool		repeated = false;

			for (int k = start; k < end && !repeated; k++)
				repeated = strcmp(rows[k].identity, rows[end].identity) == 0;
			if (repeated)
				break;
			end++;
		}
		for (int i = start; i < end; i += DDB_BATCH_WRITE_MAX)
		{
			int			count = Min(DDB_BATCH_WRITE_MAX, end - i);
			DynamicRow **batch = palloc(sizeof(DynamicRow *) * (count + 1));

			for (int k = 0; k < count; k++)
				batch[k] = &rows[i + k];
			batch[count] = NULL;
			send_dynamic_batch(ms, batch, count);
		}
		while ((req = ddb_wait_any(ms->group)) != NULL)
		{
			DynamicRow **sent = req->owner;
			DynamicRow **left;
			int			nsent = 0;
			int			nleft;
			bool		grew = false;
			char	  **items;
			size_t		len;
			char	   *body;
			DdbRequest *next;

			while (sent[nsent])
				nsent++;
			if (req->status != DDB_OK && !throttled_out(req))
				modify_report_error(ms, req, nsent);
			left = palloc(sizeof(DynamicRow *) * (nsent + 1));
			if (req->status == DDB_OK)
				nleft = unprocessed_rows(ms, req, sent, nsent, left);
			else
				memcpy(left, sent, sizeof(DynamicRow *) * (nleft = nsent));
			left[nleft] = NULL;
			ms->written += nsent - nleft;
			if (nleft == 0)
			{
				ddb_request_free(req);
				continue;
			}
			items = palloc(sizeof(char *) * nleft);
			for (int k = 0; k < nleft; k++)
			{
				if ((++left[k]->left > 2 || key_throttled(req)) &&
					regrow_dynamic(ms, left[k], &asked))
				{
					grew = true;
					left[k]->left = 0;
				}
				items[k] = left[k]->item;
			}
			body = request_batch_put(ms->t, items, nleft, &len);
			next = ddb_request_again(req, req->action, body, len,
									 grew || nleft < nsent);
			if (next == NULL)
				unwritten_error(ms, req, nleft);
			next->owner = left;
			next->rows = nleft;
			ddb_request_free(req);
		}
		start = end;
	}
}

/*
 * Write rows of a dynamically sharded table, each into a random shard of
 * its key's current count (the metadata from dynamic.c's cache, read once
 * per key while it is fresh), all at once: conditional PutItems in insert
 * mode and under ON CONFLICT DO NOTHING, BatchWriteItem otherwise.  When
 * DynamoDB throttles a key, the key grows (dynamic_grow) and only the rows
 * it throttled are drawn again into the larger space.  Sets each row's
 * written.
 */
static void
write_dynamic(ModifyState *ms, TupleTableSlot **slots, DynamicRow *rows, int n)
{
	for (int i = 0; i < n; i++)
	{
		rows[i].slot = slots[i];
		rows[i].left = 0;
		rows[i].written = false;
		place_dynamic(ms, &rows[i]);
	}
	if (puts_conditional(ms))
		put_dynamic(ms, rows, n);
	else
		upsert_dynamic(ms, rows, n);
}

/*
 * COPY in insert mode, before a row with the given key is sent: when a row
 * in flight has the same key, judge every row in flight first, so that the
 * earlier row is written and the later one is the duplicate, as one after
 * the other.  The rows in flight are among the last ones sent, whose keys
 * recent[] keeps.
 */
static void
wait_for_twin(ModifyState *ms, const char *identity)
{
	for (int i = 0; i < ms->nrecent; i++)
		if (ms->recent[i] && strcmp(ms->recent[i], identity) == 0)
		{
			modify_judge_all(ms);
			ms->in_flight = 0;
			MemoryContextReset(ms->batchcxt);
			memset(ms->recent, 0, sizeof(char *) * ms->nrecent);
			break;
		}
	if (ms->recent[ms->next_recent])
		pfree(ms->recent[ms->next_recent]);
	ms->recent[ms->next_recent] = MemoryContextStrdup(ms->batchcxt, identity);
	ms->next_recent = (ms->next_recent + 1) % ms->nrecent;
}

/* Write the rows COPY gathered (upsert mode) and start a new batch. */
void
modify_write_buffered(ModifyState *ms)
{
	if (ms->copies)
	{
		MemoryContext old = MemoryContextSwitchTo(ms->batchcxt);

		write_dynamic(ms, ms->copies, palloc(sizeof(DynamicRow) * ms->nitems),
					  ms->nitems);
		MemoryContextSwitchTo(old);
	}
	else
		upsert_items(ms, ms->items, ms->identities, ms->nitems);
	ms->nitems = 0;
	MemoryContextReset(ms->batchcxt);
}

/*
 * ExecForeignInsert: write one row.  In COPY (see shard_begin_insert) rows
 * do not wait: in insert mode they are sent at once, up to twice
 * max_concurrency in flight, and judged as their answers come; in upsert
 * mode, and into a dynamically sharded table, they are gathered and
 * written batch_size at a time like an INSERT's batches.  Otherwise each
 * row waits for its answer.
 */
TupleTableSlot *
shard_exec_insert(EState *estate, ResultRelInfo *rinfo, TupleTableSlot *slot,
				  TupleTableSlot *planSlot)
{
	ModifyState *ms = rinfo->ri_FdwState;
	MemoryContext old;
	char	   *pk;
	char	   *sk;
	DdbRequest *req;
	TupleTableSlot *result = slot;
	ErrorContextCallback cb;

	modify_push_context(ms, &cb);
	if (ms->buffered)
	{
		old = MemoryContextSwitchTo(ms->batchcxt);
		if (ms->copies)
			ExecCopySlot(ms->copies[ms->nitems++], slot);
		else
		{
			ms->items[ms->nitems] = modify_item_json(ms, slot, SHARD_BY_STRATEGY, &pk, &sk);
			ms->identities[ms->nitems++] = item_identity(pk, sk);
		}
		MemoryContextSwitchTo(old);
		if (ms->nitems == ms->t->batch_size)
			modify_write_buffered(ms);
		pop_error_context(&cb);
		return slot;
	}
	MemoryContextReset(ms->rowcxt);
	old = MemoryContextSwitchTo(ms->rowcxt);
	if (ms->t->strategy == SHARD_DYNAMIC)
	{
		DynamicRow	row;

		write_dynamic(ms, &slot, &row, 1);
		if (!row.written)
			result = NULL;
		MemoryContextSwitchTo(old);
		pop_error_context(&cb);
		return result;
	}
	else
	{
		char	   *item = modify_item_json(ms, slot, SHARD_BY_STRATEGY, &pk, &sk);

		if (ms->pipelined)
			wait_for_twin(ms, item_identity(pk, sk));
		req = send_put(ms, item, slot, NULL);
	}
	if (ms->pipelined)
	{
		/* a sliding window: one answer judged for each row sent past it */
		if (++ms->in_flight > 2 * ms->conn->server->max_concurrency)
		{
			DdbRequest *done = ddb_wait_any(ms->group);

			ms->in_flight--;
			if (put_outcome(ms, done) == PUT_REFUSED)
			{
				/* count what else gets written before reporting it */
				modify_judge_all(ms);
				put_refused(ms, done);
			}
			ddb_request_free(done);
		}
	}
	else
	{
		ddb_wait_for(req);
		if (!put_done(ms, req))
			result = NULL;
	}
	MemoryContextSwitchTo(old);
	pop_error_context(&cb);
	return result;
}

/*
 * ExecForeignBatchInsert: write a batch of rows, all at once.  Every row's
 * item is built (and a bad row refused) before any request is sent.  In
 * insert mode, and under ON CONFLICT DO NOTHING in either mode, each row
 * is a conditional PutItem, except a row whose key an
 * earlier row of the batch has: that key is taken whether the earlier row
 * was written or met a stored item, so the later row is a duplicate (or
 * skipped by ON CONFLICT DO NOTHING) without a request, as if the rows went
 * one after the other.  Otherwise the rows go by BatchWriteItem, a
 * row whose key an earlier row of the batch has waiting until that one is
 * written, so that the later row wins.  Rows of a dynamically sharded
 * table go through write_dynamic.  Returns the rows written, in a new
 * array: PostgreSQL owns the slots array.
 */
TupleTableSlot **
shard_exec_batch_insert(EState *estate, ResultRelInfo *rinfo,
						TupleTableSlot **slots, TupleTableSlot **planSlots,
						int *numSlots)
{
	ModifyState *ms = rinfo->ri_FdwState;
	MemoryContext old;
	ErrorContextCallback cb;
	char	  **items = palloc(sizeof(char *) * *numSlots);
	char	  **identities = palloc(sizeof(char *) * *numSlots);
	int			n = *numSlots;
	int			kept = 0;
	TupleTableSlot **written;

	modify_push_context(ms, &cb);
	MemoryContextReset(ms->rowcxt);
	old = MemoryContextSwitchTo(ms->rowcxt);
	written = palloc(sizeof(TupleTableSlot *) * n);
	if (ms->t->strategy == SHARD_DYNAMIC)
	{
		DynamicRow *rows = palloc(sizeof(DynamicRow) * n);

		write_dynamic(ms, slots, rows, n);
		for (int i = 0; i < n; i++)
			if (rows[i].written)
				written[kept++] = slots[i];
		MemoryContextSwitchTo(old);
		pop_error_context(&cb);
		*numSlots = kept;
		return written;
	}
	for (int i = 0; i < n; i++)
	{
		char	   *pk;
		char	   *sk;

		items[i] = modify_item_json(ms, slots[i], SHARD_BY_STRATEGY, &pk, &sk);
		identities[i] = item_identity(pk, sk);
	}
	if (!puts_conditional(ms))
	{
		upsert_items(ms, items, identities, n);
		for (kept = 0; kept < n; kept++)
			written[kept] = slots[kept];
	}
	else
	{
		bool	   *skipped = palloc0(sizeof(bool) * n);
		bool	   *repeated = palloc0(sizeof(bool) * n);

		for (int i = 0; i < n; i++)
		{
			repeated[i] = repeats(identities, 0, i);
			if (!repeated[i])
				send_put(ms, items[i], slots[i], &skipped[i]);
		}
		modify_judge_all(ms);
		for (int i = 0; i < n; i++)
		{
			if (repeated[i] && !ms->do_nothing)
			{
				char		err[SFDW_ERRLEN];

				duplicate_error(ms, ddbjson_parse(items[i], strlen(items[i]),
												  err, sizeof(err)));
			}
			if (!skipped[i] && !repeated[i])
				written[kept++] = slots[i];
		}
	}
	MemoryContextSwitchTo(old);
	pop_error_context(&cb);
	*numSlots = kept;
	return written;
}
