/*-------------------------------------------------------------------------
 *
 * update.c
 *		UPDATE and DELETE through the ModifyTable node: an UpdateItem when
 *		the key stays, a TransactWriteItems that moves the item when a key
 *		column changes (after a GetItem of the item, whose attributes no
 *		column maps the move keeps), a DeleteItem of the stored key; the end of a
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

/* The ctid junk column of the row an UPDATE or DELETE is at. */
static ItemPointer
junk_tid(ModifyState *ms, TupleTableSlot *planSlot)
{
	bool		isnull;
	Datum		ctid = ExecGetJunkAttribute(planSlot, ms->ctid_attno, &isnull);

	if (isnull)
		elog(ERROR, "shard_fdw: ctid is NULL");
	return (ItemPointer) DatumGetPointer(ctid);
}

/*
 * The stored key of the row an UPDATE or DELETE is at, into *k: rendered
 * from the old values of the key columns, in old at ms->old_attnos, and
 * the shard and layout the scan read it from, in tid (as the scan's
 * store_row puts them).
 */
static void
old_key(ModifyState *ms, TupleTableSlot *old, ItemPointer tid, OldKey *k)
{
	ShardTable *t = ms->t;
	ShardTable *layout;
	const char **texts = palloc0(sizeof(char *) * Max(t->ncolumns, 1));
	BlockNumber block = ItemPointerGetBlockNumberNoCheck(tid);
	char		err[SFDW_ERRLEN];

	/* the offset is the item's layout plus one (scan.c's store_row) */
	layout = t->layouts[ItemPointerGetOffsetNumberNoCheck(tid) - 1];
	for (int i = 0; i < t->ncolumns; i++)
	{
		Datum		v;
		bool		isnull;

		if (ms->old_attnos[i] == 0 ||
			(!shard_key_uses(t, i) && !list_member_int(t->shard_by, i)))
			continue;
		v = slot_getattr(old, ms->old_attnos[i], &isnull);
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

/* An UpdateItem split in several, for its error context. */
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

/* See modifystate.h.  All of it is in cxt. */
struct UpdateRow
{
	MemoryContext cxt;
	MinimalTuple tuple;			/* the row as updated */
	OldKey		k;				/* where the scan read its item */
	char	   *pk;				/* where its item is written over: k.pk, or
								 * where shard_fdw_reshard moved it */
	bool		followed;		/* pk is where the item was moved */
	List	   *parts;			/* UpdateItem bodies still to send */
	char	   *item;			/* a move: the row's item (write_item's) */
	SplitUpdate split;			/* its UpdateItems, when they are several */
	char	   *new_pk;			/* the key of the item written */
	char	   *new_sk;
	int			rereads;		/* a move's GetItems after its condition
								 * failed */
	DdbRequest *refused;		/* the request that failed, when refused */
};

/*
 * A move whose item other writers change between its GetItem and its
 * TransactWriteItems this many times running fails as a serialization
 * failure, for the statement to be run again, rather than read on.
 */
#define MAX_MOVE_REREADS 10

/*
 * Send a request of row's write (its owner); rows is 1 for a write, 0 for
 * the GetItem before a move.
 */
static void
send_request(ModifyState *ms, UpdateRow *row, const char *action, const char *body,
			 size_t len, int rows)
{
	DdbRequest *req = ddb_request_create(ms->group, action, body, len);

	req->owner = row;
	req->rows = rows;
	ddb_submit(req);
}

/*
 * Send the strongly consistent GetItem of the whole item row's move
 * moves, under row->pk and the old sort key.
 */
static void
send_get(ModifyState *ms, UpdateRow *row)
{
	size_t		len;
	char	   *body = request_get_item(ms->t, row->pk, row->k.sk, &len);

	send_request(ms, row, "GetItem", body, len, 0);
	pfree(body);
}

/* Send the next of row's UpdateItems. */
static void
send_part(ModifyState *ms, UpdateRow *row)
{
	char	   *body = linitial(row->parts);

	row->parts = list_delete_first(row->parts);
	send_request(ms, row, "UpdateItem", body, strlen(body), 1);
}

/*
 * Send the write of the row in slot over its item under row->pk (and the
 * old sort key), of an earlier layout when earlier: when the key stays,
 * the UpdateItems of request_update, one after the other, each on
 * condition that the item exists (more than one only for a row whose
 * columns one UpdateExpression does not hold, which is then not updated
 * atomically); else a move (e.g. a new score in the leaderboard's sort
 * key): a consistent GetItem of the item, then a TransactWriteItems that
 * moves it (request_move_row, sent by update_judge).  A random or dynamic shard stays;
 * a legacy item, or one of an earlier layout, moves into the shard the
 * newest layout gives.  What it allocates is in the current memory
 * context, row's.
 */
static void
send_write(ModifyState *ms, UpdateRow *row, TupleTableSlot *slot, bool earlier)
{
	ShardTable *t = ms->t;
	long		shard = row->k.block;
	char	   *item;
	const char **texts;
	const char *index_keys[2];

	if ((t->strategy != SHARD_RANDOM && t->strategy != SHARD_DYNAMIC) ||
		row->k.block == LEGACY_SHARD_BLOCK || earlier)
		shard = SHARD_BY_STRATEGY;
	item = modify_item_json(ms, slot, shard, &row->new_pk, &row->new_sk);
	row->split.parts = 0;
	if (strcmp(row->new_pk, row->pk) != 0 ||
		(row->k.sk != NULL && strcmp(row->new_sk, row->k.sk) != 0))
	{
		row->item = item;
		send_get(ms, row);
		return;
	}
	texts = modify_row_key_texts(ms, slot);
	index_keys[0] = route_index_key(t, &t->index_pk, texts);
	index_keys[1] = route_index_key(t, &t->index_sk, texts);
	row->parts = request_update(t, slot, row->pk, row->k.sk, index_keys);
	row->split = (SplitUpdate) {t, row->pk, row->k.sk, list_length(row->parts), 0};
	send_part(ms, row);
}

/*
 * Start the write of the row in slot over its item, whose old key column
 * values are in old (at ms->old_attnos) and its shard and layout in tid.
 * The UpdateRow lives in a memory context of its own under cxt, with a
 * copy of the row; update_judge judges its requests.
 */
UpdateRow *
update_start(ModifyState *ms, TupleTableSlot *old, ItemPointer tid, TupleTableSlot *slot,
			 MemoryContext cxt)
{
	MemoryContext rowcxt = AllocSetContextCreate(cxt, "shard_fdw update row",
												 ALLOCSET_SMALL_SIZES);
	MemoryContext oldcxt = MemoryContextSwitchTo(rowcxt);
	UpdateRow  *row = palloc0(sizeof(UpdateRow));

	row->cxt = rowcxt;
	row->tuple = ExecCopySlotMinimalTuple(slot);
	old_key(ms, old, tid, &row->k);
	row->pk = row->k.pk;
	send_write(ms, row, slot, row->k.earlier);
	MemoryContextSwitchTo(oldcxt);
	return row;
}

/*
 * True when a write of an UPDATE failed on its condition: an UpdateItem's
 * (the item is gone), or a move's Delete's (the item is gone, or an
 * attribute the move keeps changed since its GetItem; DynamoDB lists a
 * reason per action: [Delete's, Put's]).
 */
static bool
write_conditioned_out(DdbRequest *req)
{
	if (strcmp(req->action, "UpdateItem") == 0)
		return strcmp(req->error_type, "ConditionalCheckFailedException") == 0;
	return strcmp(req->error_type, "TransactionCanceledException") == 0 &&
		strstr(req->error_message, "[ConditionalCheckFailed") != NULL;
}

/*
 * Row's item is gone from row->pk: an item that shard_fdw_reshard moved
 * meanwhile into the newest layout is written there (moved_to), as an
 * item of an earlier layout; otherwise the row is not updated.
 */
static UpdateVerdict
item_gone(ModifyState *ms, UpdateRow *row)
{
	MemoryContext old = MemoryContextSwitchTo(row->cxt);
	char	   *pk = NULL;

	if (!row->followed)
		pk = moved_to(ms, row->k.texts, row->k.pk, row->k.sk, row->k.block);
	if (pk != NULL)
	{
		row->followed = true;
		row->pk = pk;
		ExecStoreMinimalTuple(row->tuple, ms->rowslot, false);
		send_write(ms, row, ms->rowslot, true);
	}
	MemoryContextSwitchTo(old);
	return pk != NULL ? UPDATE_PENDING : UPDATE_GONE;
}

/*
 * The GetItem of row's move (req) succeeded: send the TransactWriteItems
 * that moves the item read, keeping its attributes no column maps
 * (request_move_row), or, when there is no item, see item_gone.
 */
static UpdateVerdict
move_read(ModifyState *ms, UpdateRow *row, DdbRequest *req)
{
	const DdbJson *stored = ddbjson_get(req->response, "Item");
	MemoryContext old;
	char	   *body;
	size_t		len;

	if (stored == NULL)
	{
		ddb_request_free(req);
		return item_gone(ms, row);
	}
	old = MemoryContextSwitchTo(row->cxt);
	body = request_move_row(ms->t, stored, row->item, &len);
	ddb_request_free(req);
	send_request(ms, row, "TransactWriteItems", body, len, 1);
	pfree(body);
	MemoryContextSwitchTo(old);
	return UPDATE_PENDING;
}

/*
 * Judge a finished request of an UPDATE's write; *row is the row it
 * writes.  A row's next UpdateItem is sent when one succeeds, a move's
 * TransactWriteItems when its GetItem does.  A move whose Delete's
 * condition failed reads the item again and moves what it finds (an
 * attribute the move keeps was written meanwhile), until the item is
 * gone, or refuses the row after MAX_MOVE_REREADS such reads.  A row whose item is gone goes to item_gone.  A refused row keeps
 * its request for update_refused, and counts among the rows that may have
 * been written when an attempt of it may have taken effect.
 */
UpdateVerdict
update_judge(ModifyState *ms, DdbRequest *req, UpdateRow **rowp)
{
	UpdateRow  *row = req->owner;

	*rowp = row;
	if (req->status == DDB_OK && strcmp(req->action, "GetItem") == 0)
		return move_read(ms, row, req);
	if (req->status == DDB_OK)
	{
		ddb_request_free(req);
		row->split.applied++;
		if (row->parts != NIL)
		{
			send_part(ms, row);
			return UPDATE_PENDING;
		}
		ms->written++;
		return UPDATE_WRITTEN;
	}
	if (strcmp(req->action, "GetItem") == 0 || !write_conditioned_out(req))
	{
		/* a GetItem writes nothing */
		ms->doubt += req->rows * req->maybe_applied;
		row->refused = req;
		return UPDATE_REFUSED;
	}
	if (strcmp(req->action, "TransactWriteItems") == 0)
	{
		if (++row->rereads > MAX_MOVE_REREADS)
		{
			row->refused = req;
			return UPDATE_REFUSED;
		}
		ddb_request_free(req);
		send_get(ms, row);
		return UPDATE_PENDING;
	}
	ddb_request_free(req);
	return item_gone(ms, row);
}

/*
 * Report why row's write was refused: a move onto a key another item has
 * is a unique violation; a failure between the UpdateItems of a split
 * row says how many were applied.
 */
void
update_refused(ModifyState *ms, UpdateRow *row)
{
	DdbRequest *req = row->refused;
	ErrorContextCallback cb;

	push_error_context(&cb, split_update_context, &row->split);
	if (row->rereads > MAX_MOVE_REREADS)
		ereport(ERROR,
				(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
				 errmsg("could not move an item of DynamoDB table \"%s\": other writers kept changing it",
						ms->t->table),
				 errdetail("The item under key (%s%s%s) changed between its read and its move %d times running.",
						   row->pk, row->k.sk ? ", " : "", row->k.sk ? row->k.sk : "",
						   MAX_MOVE_REREADS),
				 errhint("Run the statement again.")));
	if (strcmp(req->error_type, "TransactionCanceledException") == 0 &&
		strstr(req->error_message, "ConditionalCheckFailed]"))
		ereport(ERROR,
				(errcode(ERRCODE_UNIQUE_VIOLATION),
				 errmsg("duplicate key value violates the primary key of DynamoDB table \"%s\"",
						ms->t->table),
				 errdetail("Moving the item to key (%s%s%s) would overwrite another item.",
						   row->new_pk, row->new_sk ? ", " : "", row->new_sk ? row->new_sk : "")));
	ddb_report_error(req);
}

/* Store row, as written, in slot (of TTSOpsMinimalTuple) while row lives. */
void
update_row_store(UpdateRow *row, TupleTableSlot *slot)
{
	ExecStoreMinimalTuple(row->tuple, slot, false);
}

/* Free a row whose verdict is in. */
void
update_row_free(UpdateRow *row)
{
	if (row->refused)
		ddb_request_free(row->refused);
	MemoryContextDelete(row->cxt);
}

/*
 * ExecForeignUpdate: write the row over its item (update_start), and wait
 * for the verdict: the row is returned when it was written.
 */
TupleTableSlot *
shard_exec_update(EState *estate, ResultRelInfo *rinfo, TupleTableSlot *slot,
				  TupleTableSlot *planSlot)
{
	ModifyState *ms = rinfo->ri_FdwState;
	ErrorContextCallback cb;
	UpdateRow  *row;
	UpdateVerdict verdict;

	modify_push_context(ms, &cb);
	MemoryContextReset(ms->rowcxt);
	row = update_start(ms, planSlot, junk_tid(ms, planSlot), slot, ms->rowcxt);
	do
		verdict = update_judge(ms, ddb_wait_any(ms->group), &row);
	while (verdict == UPDATE_PENDING);
	if (verdict == UPDATE_REFUSED)
		update_refused(ms, row);
	pop_error_context(&cb);
	return verdict == UPDATE_WRITTEN ? slot : NULL;
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
	old_key(ms, planSlot, junk_tid(ms, planSlot), &k);
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
