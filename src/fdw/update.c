/*-------------------------------------------------------------------------
 *
 * update.c
 *		UPDATE and DELETE through the ModifyTable node: an UpdateItem when
 *		the key stays, a TransactWriteItems that moves the item when a key
 *		column changes, a DeleteItem of the stored key; the end of a
 *		modify, and what EXPLAIN shows of one.  The rows come from the
 *		scan with their stored key (see shard_add_update_targets).
 *
 *-------------------------------------------------------------------------
 */
#include "fdw/fdw.h"

#include "commands/explain.h"
#include "executor/executor.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "fdw/modifystate.h"

/* Where the row an UPDATE or DELETE is at is stored (old_key). */
typedef struct OldKey
{
	const char **texts;			/* the old key texts, by column (route.c's) */
	char	   *pk;				/* the item's key */
	char	   *sk;
	BlockNumber block;			/* the shard the scan read it from */
	bool		earlier;		/* under an earlier layout than the newest */
} OldKey;

/*
 * The stored key of the row an UPDATE or DELETE is at, into *k: rendered
 * from the old values of the key columns and the shard and layout the
 * scan read it from.
 */
static void
old_key(ModifyState *ms, TupleTableSlot *planSlot, OldKey *k)
{
	ShardTable *t = ms->t;
	ShardTable *layout;
	bool		isnull;
	Datum		ctid = ExecGetJunkAttribute(planSlot, ms->ctid_attno, &isnull);
	const char **texts = palloc0(sizeof(char *) * Max(t->ncolumns, 1));
	BlockNumber block;
	char		err[SFDW_ERRLEN];

	if (isnull)
		elog(ERROR, "shard_fdw: ctid is NULL");
	block = ItemPointerGetBlockNumberNoCheck((ItemPointer) DatumGetPointer(ctid));
	/* the offset is the item's layout plus one (scan.c's store_row) */
	layout = t->layouts[ItemPointerGetOffsetNumberNoCheck((ItemPointer) DatumGetPointer(ctid)) - 1];
	for (int i = 0; i < t->ncolumns; i++)
	{
		Datum		v;

		if (ms->old_attnos[i] == 0 ||
			(!shard_key_uses(t, i) && !list_member_int(t->shard_by, i)))
			continue;
		v = ExecGetJunkAttribute(planSlot, ms->old_attnos[i], &isnull);
		if (!isnull)
			texts[i] = codec_key_text(&t->columns[i], v);
	}
	k->texts = texts;
	k->block = block;
	k->earlier = layout != t;
	k->pk = route_partition_key(layout, texts, block, block == LEGACY_SHARD_BLOCK, err, sizeof(err));
	k->sk = NULL;
	if (k->pk == NULL)
		elog(ERROR, "shard_fdw: cannot rebuild the key of a row read: %s", err);
	if (t->sk.attribute == NULL)
		return;
	k->sk = route_sort_key(t, texts, err, sizeof(err));
	if (k->sk == NULL)
		elog(ERROR, "shard_fdw: cannot rebuild the sort key of a row read: %s", err);
}

/*
 * Where the item of the row of old key texts went, when an UPDATE or
 * DELETE found it gone from partition key pk (sort key sk) of shard
 * block: see layout_moved_to.  A legacy base key no move leaves.
 */
static char *
moved_to(ModifyState *ms, const char *const *texts, const char *pk, const char *sk,
		 BlockNumber block)
{
	if (block == LEGACY_SHARD_BLOCK)
		return NULL;
	return layout_moved_to(ms->t, texts, pk, sk);
}

/* An UpdateItem split in several (update_in_place), for its error context. */
typedef struct SplitUpdate
{
	ShardTable *t;
	const char *pk;
	const char *sk;
	int			parts;
	int			applied;
} SplitUpdate;

/* Error context callback: how much of a split UpdateItem was applied. */
static void
split_update_context(void *arg)
{
	SplitUpdate *su = arg;

	if (su->parts > 1)
		errcontext("updating the item under key (%s%s%s) of foreign table \"%s\" with %d UpdateItems, as one UpdateExpression (DynamoDB's %d bytes) does not hold its columns: %d applied, so the item is %supdated",
				   su->pk, su->sk ? ", " : "", su->sk ? su->sk : "", su->t->relname, su->parts,
				   DDB_MAX_EXPRESSION_BYTES, su->applied, su->applied > 0 ? "partly " : "not ");
}

/*
 * Write the row in slot over its item under key pk, sk, which keeps it:
 * the UpdateItems of request_update, one after the other, each on
 * condition that the item exists.  False when the item is gone (before
 * the first, or between two when there are several).  When there are
 * several, the row is not updated atomically, and an error between them
 * says how many were applied.
 */
static bool
update_in_place(ModifyState *ms, TupleTableSlot *slot, const char *pk, const char *sk)
{
	const char **texts = modify_row_key_texts(ms, slot);
	const char *index_keys[2] = {route_index_key(ms->t, &ms->t->index_pk, texts),
	route_index_key(ms->t, &ms->t->index_sk, texts)};
	List	   *bodies = request_update(ms->t, slot, pk, sk, index_keys);
	SplitUpdate su = {ms->t, pk, sk, list_length(bodies), 0};
	ErrorContextCallback cb;
	ListCell   *lc;

	push_error_context(&cb, split_update_context, &su);
	foreach(lc, bodies)
	{
		DdbRequest *req = ddb_run(ms->group, "UpdateItem", lfirst(lc), strlen(lfirst(lc)));

		if (req->status != DDB_OK)
		{
			if (strcmp(req->error_type, "ConditionalCheckFailedException") != 0)
				modify_report_error(ms, req, 1);
			break;
		}
		su.applied++;
	}
	pop_error_context(&cb);
	return su.applied == su.parts;
}

/*
 * Write the row in slot over its item under old_pk, old_sk (shard block,
 * of an earlier layout when earlier): an UpdateItem when the key stays, a
 * TransactWriteItems that moves the item when a key column changes (e.g.
 * a new score in the leaderboard's sort key).  False when the item is
 * gone.
 */
static bool
update_item(ModifyState *ms, TupleTableSlot *slot, const char *old_pk, const char *old_sk,
			BlockNumber block, bool earlier)
{
	long		shard = block;
	char	   *item;
	char	   *new_pk;
	char	   *new_sk;
	char	   *body;
	size_t		len;
	DdbRequest *req;

	/*
	 * a random or dynamic shard stays; a legacy item, or one of an earlier
	 * layout, moves into the shard the newest layout gives
	 */
	if ((ms->t->strategy != SHARD_RANDOM && ms->t->strategy != SHARD_DYNAMIC) ||
		block == LEGACY_SHARD_BLOCK || earlier)
		shard = SHARD_BY_STRATEGY;
	item = modify_item_json(ms, slot, shard, &new_pk, &new_sk);
	if (strcmp(new_pk, old_pk) == 0 && (old_sk == NULL || strcmp(new_sk, old_sk) == 0))
		return update_in_place(ms, slot, old_pk, old_sk);
	body = request_move(ms->t, old_pk, old_sk, NULL, item, &len);
	req = ddb_run(ms->group, "TransactWriteItems", body, len);
	if (req->status == DDB_OK)
		return true;
	if (strcmp(req->error_type, "TransactionCanceledException") != 0)
		modify_report_error(ms, req, 1);
	/* DynamoDB lists a reason per item: [Delete's, Put's] */
	if (strstr(req->error_message, "[ConditionalCheckFailed"))
		return false;			/* the old item vanished */
	if (strstr(req->error_message, "ConditionalCheckFailed]"))
		ereport(ERROR,
				(errcode(ERRCODE_UNIQUE_VIOLATION),
				 errmsg("duplicate key value violates the primary key of DynamoDB table \"%s\"",
						ms->t->table),
				 errdetail("Moving the item to key (%s%s%s) would overwrite another item.",
						   new_pk, new_sk ? ", " : "", new_sk ? new_sk : "")));
	modify_report_error(ms, req, 1);
	return false;
}

/*
 * ExecForeignUpdate: write the row over its item (update_item).  An item
 * that shard_fdw_reshard moved meanwhile into the newest layout is
 * updated there (moved_to); a row whose item vanished otherwise is not
 * updated.
 */
TupleTableSlot *
shard_exec_update(EState *estate, ResultRelInfo *rinfo, TupleTableSlot *slot,
				  TupleTableSlot *planSlot)
{
	ModifyState *ms = rinfo->ri_FdwState;
	MemoryContext old = MemoryContextSwitchTo(ms->rowcxt);
	ErrorContextCallback cb;
	OldKey		k;
	char	   *pk;
	bool		updated;

	modify_push_context(ms, &cb);
	MemoryContextReset(ms->rowcxt);
	old_key(ms, planSlot, &k);
	updated = update_item(ms, slot, k.pk, k.sk, k.block, k.earlier);
	/* there the item is where the newest layout puts the row: written as an earlier one */
	if (!updated && (pk = moved_to(ms, k.texts, k.pk, k.sk, k.block)) != NULL)
		updated = update_item(ms, slot, pk, k.sk, k.block, true);
	if (updated)
		ms->written++;
	MemoryContextSwitchTo(old);
	pop_error_context(&cb);
	return updated ? slot : NULL;
}

/*
 * The DeleteItem of the item under pk, sk, asking for the old item, run;
 * errors are raised.
 */
static DdbRequest *
delete_item(ModifyState *ms, const char *pk, const char *sk)
{
	size_t		len;
	char	   *body = request_delete(ms->t, pk, sk, &len);
	DdbRequest *req = ddb_run(ms->group, "DeleteItem", body, len);

	if (req->status != DDB_OK)
		modify_report_error(ms, req, 1);
	return req;
}

/*
 * ExecForeignDelete: a DeleteItem of the stored key.  The old item comes
 * back (ReturnValues ALL_OLD) for RETURNING; an item moved meanwhile into
 * the newest layout is deleted there (moved_to); a row whose item was
 * already gone otherwise is not counted.  When an earlier attempt may have
 * deleted the item (its answer lost), the retry finds nothing: the row
 * counts, and RETURNING gives it as the scan read it.
 */
TupleTableSlot *
shard_exec_delete(EState *estate, ResultRelInfo *rinfo, TupleTableSlot *slot,
				  TupleTableSlot *planSlot)
{
	ModifyState *ms = rinfo->ri_FdwState;
	MemoryContext old = MemoryContextSwitchTo(ms->rowcxt);
	ErrorContextCallback cb;
	OldKey		k;
	char	   *pk;
	DdbRequest *req;
	const DdbJson *item;
	ShardTable *layout;
	TupleTableSlot *result = slot;

	modify_push_context(ms, &cb);
	MemoryContextReset(ms->rowcxt);
	old_key(ms, planSlot, &k);
	req = delete_item(ms, k.pk, k.sk);
	item = ddbjson_get(req->response, "Attributes");
	/* the item moved into the newest layout meanwhile: delete it there */
	if (item == NULL && !req->maybe_applied &&
		(pk = moved_to(ms, k.texts, k.pk, k.sk, k.block)) != NULL)
	{
		req = delete_item(ms, pk, k.sk);
		item = ddbjson_get(req->response, "Attributes");
	}
	if (item == NULL && req->maybe_applied)
	{
		ExecClearTuple(slot);
		memset(slot->tts_isnull, true, sizeof(bool) * slot->tts_tupleDescriptor->natts);
		for (int i = 0; i < ms->t->ncolumns; i++)
		{
			AttrNumber	attnum = ms->t->columns[i].attnum;

			if (ms->old_attnos[i] != 0)
				slot->tts_values[attnum - 1] =
					ExecGetJunkAttribute(planSlot, ms->old_attnos[i],
										 &slot->tts_isnull[attnum - 1]);
		}
		ExecStoreVirtualTuple(slot);
		ms->written++;
	}
	else if (item == NULL)
		result = NULL;
	else
	{
		ExecClearTuple(slot);
		memset(slot->tts_isnull, true, sizeof(bool) * slot->tts_tupleDescriptor->natts);
		MemoryContextSwitchTo(old);
		layout = layout_item_layout(ms->t, item);
		for (int i = 0; i < ms->t->ncolumns; i++)
		{
			AttrNumber	attnum = ms->t->columns[i].attnum;

			/* a column the item holds only inside its key is read from there */
			slot->tts_values[attnum - 1] =
				scan_item_column(ms->t, layout, item, i, &slot->tts_isnull[attnum - 1]);
		}
		ExecStoreVirtualTuple(slot);
		ms->written++;
	}
	MemoryContextSwitchTo(old);
	pop_error_context(&cb);
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

/*
 * EndForeignInsert: write the rows COPY gathered and judge what it left
 * in flight, then free.
 */
void
shard_end_insert(EState *estate, ResultRelInfo *rinfo)
{
	ModifyState *ms = rinfo->ri_FdwState;
	ErrorContextCallback cb;

	if (ms && ms->group && (ms->pipelined || ms->buffered))
	{
		modify_push_context(ms, &cb);
		if (ms->buffered)
			modify_write_buffered(ms);
		else
			modify_judge_all(ms);
		pop_error_context(&cb);
	}
	shard_end_modify(estate, rinfo);
}

/* IsForeignRelUpdatable: everything, except through an index. */
int
shard_is_updatable(Relation rel)
{
	ShardTable *t = shard_get_table(RelationGetRelid(rel));

	return t->index ? 0 : (1 << CMD_INSERT) | (1 << CMD_UPDATE) | (1 << CMD_DELETE);
}

/*
 * EXPLAIN ANALYZE: what the write requests of a statement came to, named
 * like a scan's figures with "Write" added, since a scan may show its own
 * beside them.
 */
void
shard_explain_writes(DdbGroup *group, ExplainState *es)
{
	const DdbStats *stats = ddb_group_stats(group);

	ExplainPropertyInteger("DynamoDB Write Requests", NULL, stats->requests, es);
	ExplainPropertyFloat("DynamoDB Write Consumed Capacity", NULL,
						 stats->read_units + stats->write_units, 1, es);
	ExplainPropertyInteger("DynamoDB Write Retries", NULL, stats->retries, es);
	ExplainPropertyInteger("DynamoDB Write Throttles", NULL, stats->throttles, es);
	if (budget_paces(ddb_group_budget(group)))
		ExplainPropertyFloat("DynamoDB Write Budget Wait", "ms",
							 (double) stats->budget_wait_us / 1000.0, 1, es);
}

/* ExplainForeignModify; with ANALYZE, the rows written and the requests. */
void
shard_explain_modify(ModifyTableState *mtstate, ResultRelInfo *rinfo,
					 List *fdw_private, int subplan_index, ExplainState *es)
{
	ShardTable *t = shard_get_table(RelationGetRelid(rinfo->ri_RelationDesc));
	ModifyState *ms = rinfo->ri_FdwState;

	static const char *const ops[] = {
		[CMD_UPDATE] = "UpdateItem, or TransactWriteItems (Delete + Put) when the key changes",
		[CMD_DELETE] = "DeleteItem",
	};

	if (mtstate->operation == CMD_INSERT)
	{
		bool		conditional = t->insert_mode == INSERT_MODE_INSERT ||
			boolVal(list_nth(fdw_private, MODIFY_PRIVATE_DO_NOTHING));

		ExplainPropertyText("DynamoDB Operation",
							!conditional ? "BatchWriteItem" :
							t->nlayouts == 1 ? "PutItem (attribute_not_exists)" :
							"TransactWriteItems (Put, ConditionCheck of earlier layouts' keys)",
							es);
	}
	else
		ExplainPropertyText("DynamoDB Operation", ops[mtstate->operation], es);
	ExplainPropertyText("DynamoDB Table", t->table, es);
	if (es->analyze && ms && ms->group)
	{
		ExplainPropertyInteger(mtstate->operation == CMD_DELETE ?
							   "Items Deleted" : "Items Written", NULL, ms->written, es);
		shard_explain_writes(ms->group, es);
	}
}
