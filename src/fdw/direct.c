/*-------------------------------------------------------------------------
 *
 * direct.c
 *		UPDATE and DELETE carried out by the foreign scan itself
 *		(PostgreSQL's direct modify): the scan streams the rows that match,
 *		and each is written by the key its item is stored under, many
 *		writes in flight at once, instead of one round trip per row.
 *
 * A DELETE deletes each item with a conditional DeleteItem.  One that
 * finds its item already gone (ConditionalCheckFailed) does not count, so
 * the row count is the number of items this statement deleted, as a
 * row-by-row DELETE would report it.  An item that shard_fdw_reshard moved
 * meanwhile into the newest layout is deleted there.  DELETE with
 * RETURNING goes row by row (update.c).
 *
 * An UPDATE computes each row's new values from the plan's targetlist, as
 * the ModifyTable node would, and writes it with update.c's writes of a
 * row (UpdateItem, or TransactWriteItems when the key changes), up to
 * twice max_concurrency rows in flight.  A row counts, and is returned for
 * RETURNING, only once DynamoDB has said it was written; a row whose item
 * was gone does not.  When a write fails, no further row is sent, the
 * rows in flight are judged (so the count of rows written is exact), and
 * the failure is reported.
 *
 * Plans where the scan is not directly under the ModifyTable (joins,
 * partitions), and those with row triggers or WITH CHECK OPTIONs (which
 * PostgreSQL keeps from a direct modify), go row by row.
 *
 *-------------------------------------------------------------------------
 */
#include "fdw/fdw.h"

#include "executor/executor.h"
#include "nodes/plannodes.h"
#include "parser/parsetree.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "fdw/modifystate.h"


/* The state of a direct DELETE. */
typedef struct DirectDelete
{
	ShardScanState *scan;		/* the scan that finds the items */
	ShardTable *t;
	DdbGroup   *group;			/* the DeleteItems */
	int			in_flight;		/* DeleteItems sent and not yet judged */
	int64		deleted;		/* items this statement deleted */
	int64		gone;			/* items already gone when their turn came */
	int64		doubt;			/* of a failed DeleteItem that may have
								 * taken effect */
} DirectDelete;

/* The state of a direct UPDATE. */
typedef struct DirectUpdate
{
	ShardScanState *scan;		/* the scan that reads the rows */
	ModifyState *ms;			/* the writes (update.c) */
	ExprState  *qual;			/* the plan's conditions, checked on each row */
	ProjectionInfo *project;	/* the plan's targetlist: new values first */
	List	   *updated;		/* IntList: the attribute numbers they go to */
	TupleTableSlot *newslot;	/* a row read, as updated */
	TupleTableSlot *returning;	/* a row written, for RETURNING */
	MemoryContext rowscxt;		/* the rows in flight, each in its own child */
	UpdateRow  *returned;		/* the row in returning, until the next call */
	UpdateRow  *refused;		/* the first row whose write failed */
	int			in_flight;		/* rows sent whose verdict is not in */
	bool		read;			/* the scan has no more rows */
	bool		set_tag;
	int64		gone;			/* rows whose item was already gone */
} DirectUpdate;

/* The operation of a direct modify's scan. */
static CmdType
direct_operation(ForeignScanState *node)
{
	return ((ForeignScan *) node->ss.ps.plan)->operation;
}

/*
 * Whether a direct modify's rows are the statement's row count (not when
 * it is a data-modifying WITH of another statement).
 */
static bool
direct_sets_tag(ForeignScanState *node)
{
	return boolVal(list_nth(((ForeignScan *) node->ss.ps.plan)->fdw_private,
							DIRECT_PRIVATE_SET_TAG));
}

/*
 * PlanDirectModify: an UPDATE, or a DELETE without RETURNING, whose plan
 * is our scan of the target table, right under the ModifyTable, runs in
 * that scan.  (PostgreSQL has already ruled out row triggers, WITH CHECK
 * OPTIONs, stored generated columns, and from 18 on a RETURNING of OLD or
 * NEW values.)  An UPDATE makes each new row from the row read, so the
 * scan must read every column, as it does when PostgreSQL asks for the
 * whole row.
 */
bool
shard_plan_direct_modify(PlannerInfo *root, ModifyTable *plan,
						 Index resultRelation, int subplan_index)
{
	Plan	   *subplan = outerPlan(plan);
	ForeignScan *fs;
	ShardTable *t;
	List	   *updated = NIL;

	if (subplan == NULL || !IsA(subplan, ForeignScan))
		return false;
	fs = (ForeignScan *) subplan;
	if (fs->scan.scanrelid != resultRelation)
		return false;
	t = shard_get_table(planner_rt_fetch(resultRelation, root)->relid);
	if (t->index)
		return false;
	switch (plan->operation)
	{
		case CMD_DELETE:
			if (plan->returningLists != NIL)
				return false;
			break;
#ifdef SHARD_HAVE_DIRECT_UPDATE
		case CMD_UPDATE:
			if (list_length(list_nth(fs->fdw_private, SCAN_PRIVATE_COLUMNS)) < t->ncolumns)
				return false;
			updated = list_nth(plan->updateColnosLists, subplan_index);
			break;
#endif
		default:
			return false;
	}
	fs->operation = plan->operation;
	fs->resultRelation = resultRelation;
	fs->fdw_private = lappend(fs->fdw_private, makeBoolean(plan->canSetTag));
	fs->fdw_private = lappend(fs->fdw_private, updated);
	return true;
}

/* ---------------------------------------------------------------------
 * DELETE
 * ---------------------------------------------------------------------
 */

/* BeginDirectModify of a DELETE */
static void
begin_delete(ForeignScanState *node, int eflags)
{
	DirectDelete *dd = palloc0(sizeof(DirectDelete));

	node->fdw_state = dd;
	dd->scan = shard_scan_create(node, eflags);
	dd->t = shard_scan_table(dd->scan);
	if (eflags & EXEC_FLAG_EXPLAIN_ONLY)
		return;
	dd->group = ddb_group_create(shard_scan_conn(dd->scan),
								 shard_scan_conn(dd->scan)->server->max_concurrency);
	ddb_group_set_budget(dd->group, budget_for(dd->t, true));
}

/* Error context callback: how far the DELETE got. */
static void
delete_error_context(void *arg)
{
	DirectDelete *dd = arg;

	report_write_progress("deleting from", "deleted", dd->t->relname, dd->deleted,
						  dd->doubt + ddb_group_rows_in_doubt(dd->group));
}

/*
 * The DeleteItem of an item that shard_fdw_reshard may move while it is
 * in flight (one under a key the newest layout does not give its row):
 * its row's key texts and its key, to follow the item into the newest
 * layout when the delete finds it gone.  All of it is in cxt.
 */
typedef struct Follow
{
	MemoryContext cxt;
	const char **texts;
	char	   *pk;
	char	   *sk;
	bool		again;			/* sent again, to the newest layout's key */
} Follow;

/*
 * The Follow of item, or NULL when the item is where the newest layout
 * puts its row (or the table has no earlier layout): nothing moves it.
 */
static Follow *
follow_of(DirectDelete *dd, const DdbJson *item)
{
	ShardTable *t = dd->t;
	MemoryContext cxt;
	MemoryContext old;
	Follow	   *f;

	if (t->nlayouts == 1 || layout_item_settled(t, item))
		return NULL;
	/* the scan resets the per-tuple context it runs in at every item */
	cxt = AllocSetContextCreate(GetMemoryChunkContext(dd), "shard_fdw delete follow",
								ALLOCSET_SMALL_SIZES);
	old = MemoryContextSwitchTo(cxt);
	f = palloc0(sizeof(Follow));
	f->cxt = cxt;
	f->texts = layout_item_texts(t, layout_item_layout(t, item), item);
	f->pk = pstrdup(codec_av_text(ddbjson_get(item, t->pk.attribute)));
	if (t->sk.attribute)
		f->sk = pstrdup(codec_av_text(ddbjson_get(item, t->sk.attribute)));
	MemoryContextSwitchTo(old);
	return f;
}

/* Submit a DeleteItem (body, len bytes) owned by f (NULL: nobody). */
static void
submit_delete(DirectDelete *dd, char *body, size_t len, Follow *f)
{
	DdbRequest *req = ddb_request_create(dd->group, "DeleteItem", body, len);

	req->owner = f;
	req->rows = 1;
	ddb_submit(req);
	pfree(body);
	dd->in_flight++;
}

/*
 * Send the DeleteItem of an item: its key attributes as read, on
 * condition that the item still exists.
 */
static void
send_delete(DirectDelete *dd, const DdbJson *item)
{
	size_t		len;
	char	   *body = request_delete_item(dd->t, item, false, &len);

	submit_delete(dd, body, len, follow_of(dd, item));
}

/*
 * Judge a finished DeleteItem and free it.  A failed condition means the
 * item was gone, unless an earlier attempt of this very request may have
 * deleted it; an item gone from a key the newest layout does not give
 * its row may have moved there meanwhile (layout_moved_to), and is
 * deleted there: by key, returning the old item, which tells whether it
 * was found.
 */
static void
judge_delete(DirectDelete *dd, DdbRequest *req)
{
	Follow	   *f = req->owner;
	char	   *key = NULL;
	bool		found;

	dd->in_flight--;
	if (req->status != DDB_OK &&
		strcmp(req->error_type, "ConditionalCheckFailedException") != 0)
	{
		dd->doubt += req->maybe_applied;
		ddb_report_error(req);
	}
	found = req->maybe_applied ||
		(req->status == DDB_OK &&
		 (f == NULL || !f->again || ddbjson_get(req->response, "Attributes") != NULL));
	ddb_request_free(req);
	if (!found && f && !f->again)
	{
		MemoryContext old = MemoryContextSwitchTo(f->cxt);

		key = layout_moved_to(dd->t, f->texts, f->pk, f->sk);
		MemoryContextSwitchTo(old);
	}
	if (key)
	{
		size_t		len;
		char	   *body = request_delete(dd->t, key, f->sk, &len);

		f->again = true;
		submit_delete(dd, body, len, f);
		return;
	}
	if (found)
		dd->deleted++;
	else
		dd->gone++;
	if (f)
		MemoryContextDelete(f->cxt);
}

/*
 * IterateDirectModify of a DELETE: delete every matching item, keeping up
 * to twice max_concurrency DeleteItems in flight, then add the count to
 * the statement's and return an empty slot (there is no RETURNING).
 */
static TupleTableSlot *
iterate_delete(ForeignScanState *node)
{
	DirectDelete *dd = node->fdw_state;
	int			window = 2 * shard_scan_conn(dd->scan)->server->max_concurrency;
	ErrorContextCallback cb;
	const DdbJson *item;
	DdbRequest *req;

	push_error_context(&cb, delete_error_context, dd);
	while ((item = shard_scan_next_match(dd->scan, node)) != NULL)
	{
		send_delete(dd, item);
		if (dd->in_flight > window)
			judge_delete(dd, ddb_wait_any(dd->group));
	}
	while ((req = ddb_wait_any(dd->group)) != NULL)
		judge_delete(dd, req);
	pop_error_context(&cb);
	if (direct_sets_tag(node))
		node->ss.ps.state->es_processed += dd->deleted;
	return ExecClearTuple(node->ss.ss_ScanTupleSlot);
}

/* EndDirectModify of a DELETE */
static void
end_delete(ForeignScanState *node)
{
	DirectDelete *dd = node->fdw_state;

	shard_scan_stop(dd->scan);
	if (dd->group)
	{
		ddb_group_free(dd->group);
		dd->group = NULL;
	}
}

/* ExplainDirectModify of a DELETE: the scan, then the deletes. */
static void
explain_delete(ForeignScanState *node, ExplainState *es)
{
	DirectDelete *dd = node->fdw_state;

	shard_scan_explain(dd->scan, es, node->ss.ps.plan);
	ExplainPropertyText("DynamoDB Write",
						"DeleteItem (attribute_exists) per matching item, many in flight",
						es);
	if (es->analyze)
	{
		ExplainPropertyInteger("Items Deleted", NULL, dd->deleted, es);
		ExplainPropertyInteger("Items Already Gone", NULL, dd->gone, es);
		shard_explain_writes(dd->group, es);
	}
}

/* ---------------------------------------------------------------------
 * UPDATE
 * ---------------------------------------------------------------------
 */

/* BeginDirectModify of an UPDATE */
static void
begin_update(ForeignScanState *node, int eflags)
{
	DirectUpdate *du = palloc0(sizeof(DirectUpdate));
	EState	   *estate = node->ss.ps.state;
	TupleDesc	desc = RelationGetDescr(node->ss.ss_currentRelation);
	ShardTable *t;

	node->fdw_state = du;
	du->scan = shard_scan_create(node, eflags);
	if (eflags & EXEC_FLAG_EXPLAIN_ONLY)
		return;
	t = shard_scan_table(du->scan);
	du->ms = modify_setup(estate, node->resultRelInfo, false);
	/* a row's old key values are its columns, in the scan slot */
	du->ms->old_attnos = palloc(sizeof(AttrNumber) * Max(t->ncolumns, 1));
	for (int i = 0; i < t->ncolumns; i++)
		du->ms->old_attnos[i] = t->columns[i].attnum;
	du->ms->rowslot = ExecInitExtraTupleSlot(estate, desc, &TTSOpsMinimalTuple);

	/*
	 * The plan's conditions and targetlist are the UPDATE's: each row read
	 * is checked against the first, and its new values are the leading
	 * entries of the second (as ModifyTable's subplan makes them).  The
	 * rows this node returns, for RETURNING, are rows as written, which the
	 * scan node must neither filter nor project again.
	 */
	du->qual = node->ss.ps.qual;
	du->project = node->ss.ps.ps_ProjInfo;
	node->ss.ps.qual = NULL;
	node->ss.ps.ps_ProjInfo = NULL;
	du->updated = list_nth(((ForeignScan *) node->ss.ps.plan)->fdw_private,
						   DIRECT_PRIVATE_UPDATED);
	du->set_tag = direct_sets_tag(node);
	du->newslot = ExecInitExtraTupleSlot(estate, desc, &TTSOpsVirtual);
	du->returning = ExecInitExtraTupleSlot(estate, desc, &TTSOpsMinimalTuple);
	du->rowscxt = AllocSetContextCreate(estate->es_query_cxt, "shard_fdw update rows",
										ALLOCSET_DEFAULT_SIZES);
}

/*
 * Read the next row that matches, make it the row as updated (its
 * assigned columns from the targetlist's new values, the others as read)
 * and start its write; false when the scan has no more rows.
 */
static bool
start_next_row(DirectUpdate *du, ForeignScanState *node)
{
	TupleTableSlot *old = shard_scan_next_row(du->scan, node, du->qual);
	TupleTableSlot *slot = du->newslot;
	TupleTableSlot *values;
	ListCell   *lc;

	if (TupIsNull(old))
		return false;
	values = ExecProject(du->project);
	slot_getallattrs(old);
	ExecClearTuple(slot);
	memcpy(slot->tts_values, old->tts_values, sizeof(Datum) * slot->tts_tupleDescriptor->natts);
	memcpy(slot->tts_isnull, old->tts_isnull, sizeof(bool) * slot->tts_tupleDescriptor->natts);
	foreach(lc, du->updated)
	{
		int			att = lfirst_int(lc) - 1;

		slot->tts_values[att] = values->tts_values[foreach_current_index(lc)];
		slot->tts_isnull[att] = values->tts_isnull[foreach_current_index(lc)];
	}
	ExecStoreVirtualTuple(slot);
	update_start(du->ms, old, &old->tts_tid, slot, du->rowscxt);
	du->in_flight++;
	return true;
}

/*
 * IterateDirectModify of an UPDATE: start the writes of the rows that
 * match, keeping up to twice max_concurrency rows in flight, and judge
 * them as their answers come.  Each row written counts; with RETURNING it
 * is returned at once, as written, and the next call carries on.  Once a
 * write is refused no further row is sent: the rows in flight are judged,
 * so that the count of rows written is exact, then the refusal is
 * reported.  An empty slot when every row is done.
 */
static TupleTableSlot *
iterate_update(ForeignScanState *node)
{
	DirectUpdate *du = node->fdw_state;
	ModifyState *ms = du->ms;
	ProjectionInfo *returning = node->resultRelInfo->ri_projectReturning;
	int			window = 2 * ms->conn->server->max_concurrency;
	TupleTableSlot *result = ExecClearTuple(du->returning);
	ErrorContextCallback cb;
	DdbRequest *req;

	if (du->returned)
	{
		update_row_free(du->returned);
		du->returned = NULL;
	}
	modify_push_context(ms, &cb);
	for (;;)
	{
		UpdateRow  *row;
		UpdateVerdict verdict;

		if (!du->read && du->refused == NULL && du->in_flight < window)
		{
			du->read = !start_next_row(du, node);
			continue;
		}
		if ((req = ddb_wait_any(ms->group)) == NULL)
			break;
		verdict = update_judge(ms, req, &row);
		if (verdict == UPDATE_PENDING)
			continue;
		du->in_flight--;
		if (verdict == UPDATE_REFUSED && du->refused == NULL)
		{
			du->refused = row;
			continue;
		}
		if (verdict == UPDATE_GONE)
			du->gone++;
		if (verdict == UPDATE_WRITTEN && du->set_tag)
			node->ss.ps.state->es_processed++;
		if (verdict == UPDATE_WRITTEN && returning && du->refused == NULL)
		{
			update_row_store(row, result);
			returning->pi_exprContext->ecxt_scantuple = result;
			du->returned = row;
			break;
		}
		update_row_free(row);
	}
	if (TupIsNull(result) && du->refused)
		update_refused(ms, du->refused);
	pop_error_context(&cb);
	return result;
}

/* EndDirectModify of an UPDATE */
static void
end_update(ForeignScanState *node)
{
	DirectUpdate *du = node->fdw_state;

	shard_scan_stop(du->scan);
	if (du->ms)
		shard_end_modify(node->ss.ps.state, node->resultRelInfo);
}

/* ExplainDirectModify of an UPDATE: the scan, then the writes. */
static void
explain_update(ForeignScanState *node, ExplainState *es)
{
	DirectUpdate *du = node->fdw_state;

	shard_scan_explain(du->scan, es, node->ss.ps.plan);
	ExplainPropertyText("DynamoDB Write",
						"UpdateItem, or TransactWriteItems (Delete + Put) when the key changes, per matching row, many in flight",
						es);
	if (es->analyze)
	{
		ExplainPropertyInteger("Items Written", NULL, du->ms->written, es);
		ExplainPropertyInteger("Items Already Gone", NULL, du->gone, es);
		shard_explain_writes(du->ms->group, es);
	}
}

/* ---------------------------------------------------------------------
 * The callbacks
 * ---------------------------------------------------------------------
 */

/* BeginDirectModify */
void
shard_begin_direct_modify(ForeignScanState *node, int eflags)
{
	if (direct_operation(node) == CMD_UPDATE)
		begin_update(node, eflags);
	else
		begin_delete(node, eflags);
}

/* IterateDirectModify */
TupleTableSlot *
shard_iterate_direct_modify(ForeignScanState *node)
{
	return direct_operation(node) == CMD_UPDATE ? iterate_update(node) : iterate_delete(node);
}

/* EndDirectModify */
void
shard_end_direct_modify(ForeignScanState *node)
{
	if (node->fdw_state == NULL)
		return;
	if (direct_operation(node) == CMD_UPDATE)
		end_update(node);
	else
		end_delete(node);
}

/* ExplainDirectModify */
void
shard_explain_direct_modify(ForeignScanState *node, ExplainState *es)
{
	if (direct_operation(node) == CMD_UPDATE)
		explain_update(node, es);
	else
		explain_delete(node, es);
}
