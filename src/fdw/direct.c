/*-------------------------------------------------------------------------
 *
 * direct.c
 *		DELETE carried out by the foreign scan itself (PostgreSQL's direct
 *		modify): the scan streams the items whose rows match, and each is
 *		deleted by the key it is stored under with a conditional DeleteItem,
 *		many in flight at once, instead of one round trip per row.
 *
 * A DeleteItem that finds its item already gone (ConditionalCheckFailed)
 * does not count, so the row count is the number of items this statement
 * deleted, as a row-by-row DELETE would report it.  An item that
 * shard_fdw_reshard moved meanwhile into the newest layout is deleted
 * there.  DELETE with RETURNING,
 * UPDATE, and plans where the scan is not directly under the ModifyTable
 * (joins, partitions) go row by row (modify.c).
 *
 *-------------------------------------------------------------------------
 */
#include "fdw/fdw.h"

#include "executor/executor.h"
#include "nodes/plannodes.h"
#include "parser/parsetree.h"
#include "utils/memutils.h"


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

/*
 * PlanDirectModify: a DELETE without RETURNING whose plan is our scan of
 * the target table, right under the ModifyTable, runs in that scan.
 * (PostgreSQL has already ruled out row triggers.)
 */
bool
shard_plan_direct_modify(PlannerInfo *root, ModifyTable *plan,
						 Index resultRelation, int subplan_index)
{
	Plan	   *subplan = outerPlan(plan);
	ForeignScan *fs;

	if (plan->operation != CMD_DELETE || plan->returningLists != NIL ||
		subplan == NULL || !IsA(subplan, ForeignScan))
		return false;
	fs = (ForeignScan *) subplan;
	if (fs->scan.scanrelid != resultRelation ||
		shard_get_table(planner_rt_fetch(resultRelation, root)->relid)->index)
		return false;
	fs->operation = CMD_DELETE;
	fs->resultRelation = resultRelation;
	return true;
}

/* BeginDirectModify */
void
shard_begin_direct_modify(ForeignScanState *node, int eflags)
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
 * IterateDirectModify: delete every matching item, keeping up to twice
 * max_concurrency DeleteItems in flight, then add the count to the
 * statement's and return an empty slot (there is no RETURNING).
 */
TupleTableSlot *
shard_iterate_direct_modify(ForeignScanState *node)
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
	node->ss.ps.state->es_processed += dd->deleted;
	return ExecClearTuple(node->ss.ss_ScanTupleSlot);
}

/* EndDirectModify */
void
shard_end_direct_modify(ForeignScanState *node)
{
	DirectDelete *dd = node->fdw_state;

	if (dd == NULL)
		return;
	shard_scan_stop(dd->scan);
	if (dd->group)
	{
		ddb_group_free(dd->group);
		dd->group = NULL;
	}
}

/* ExplainDirectModify: the scan, then the deletes. */
void
shard_explain_direct_modify(ForeignScanState *node, ExplainState *es)
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
