/*-------------------------------------------------------------------------
 *
 * shard_fdw.c
 *		The foreign data wrapper handler: wires PostgreSQL's FDW callbacks
 *		to the planner (plan.c), the scan executor (scan.c, its parallel
 *		workers in parallel.c), the aggregates DynamoDB computes (upper.c)
 *		and the writer (modify.c).
 *
 *-------------------------------------------------------------------------
 */
#include "sql/sql.h"

#include "fmgr.h"
#include "foreign/fdwapi.h"

#include "fdw/fdw.h"

PG_MODULE_MAGIC;

PG_FUNCTION_INFO_V1(shard_fdw_handler);

/*
 * A foreign scan of no relation of its own (scanrelid 0) is an aggregate's
 * (upper.c); the others read a table (scan.c).
 */
#define IS_AGGREGATE_SCAN(node) (((ForeignScan *) (node)->ss.ps.plan)->scan.scanrelid == 0)

/* GetForeignPlan: a table's scan, or an aggregate's. */
static ForeignScan *
get_plan(PlannerInfo *root, RelOptInfo *rel, Oid foreigntableid,
		 ForeignPath *best_path, List *tlist, List *scan_clauses, Plan *outer_plan)
{
	if (IS_UPPER_REL(rel))
		return upper_get_plan(root, rel, foreigntableid, best_path, tlist, outer_plan);
	return shard_get_plan(root, rel, foreigntableid, best_path, tlist, scan_clauses,
						  outer_plan);
}

/* BeginForeignScan */
static void
begin_scan(ForeignScanState *node, int eflags)
{
	if (IS_AGGREGATE_SCAN(node))
		upper_begin_scan(node, eflags);
	else
		shard_begin_scan(node, eflags);
}

/* IterateForeignScan */
static TupleTableSlot *
iterate_scan(ForeignScanState *node)
{
	return IS_AGGREGATE_SCAN(node) ? upper_iterate_scan(node) : shard_iterate_scan(node);
}

/* ReScanForeignScan */
static void
rescan(ForeignScanState *node)
{
	if (IS_AGGREGATE_SCAN(node))
		upper_rescan(node);
	else
		shard_rescan(node);
}

/* EndForeignScan */
static void
end_scan(ForeignScanState *node)
{
	if (IS_AGGREGATE_SCAN(node))
		upper_end_scan(node);
	else
		shard_end_scan(node);
}

/* ExplainForeignScan */
static void
explain_scan(ForeignScanState *node, ExplainState *es)
{
	if (IS_AGGREGATE_SCAN(node))
		upper_explain_scan(node, es);
	else
		shard_explain_scan(node, es);
}

/*
 * ShutdownForeignScan: only a parallel-aware scan (a whole-table Scan,
 * parallel.c) has something to do before the shared memory goes.
 */
static void
shutdown_scan(ForeignScanState *node)
{
	if (node->ss.ps.plan->parallel_aware)
		shard_scan_shutdown(node);
}

void		_PG_init(void);

/*
 * Load time: the allocator of the plain-C modules, shard_fdw_stat's
 * counters (in shared memory when preloaded), and the batched lookup
 * join's planner hook and node (which reserves the prefix of the
 * settings, so it comes last).
 */
void
_PG_init(void)
{
	shim_install();
	stat_init();
	shard_join_init();
}

/* The FdwRoutine of shard_fdw. */
Datum
shard_fdw_handler(PG_FUNCTION_ARGS)
{
	FdwRoutine *routine = makeNode(FdwRoutine);

	routine->GetForeignRelSize = shard_get_rel_size;
	routine->GetForeignPaths = shard_get_paths;
	routine->GetForeignPlan = get_plan;
	routine->BeginForeignScan = begin_scan;
	routine->IterateForeignScan = iterate_scan;
	routine->ReScanForeignScan = rescan;
	routine->EndForeignScan = end_scan;
	routine->ExplainForeignScan = explain_scan;
	routine->GetForeignUpperPaths = shard_get_upper_paths;
	routine->AnalyzeForeignTable = shard_analyze;

	routine->IsForeignScanParallelSafe = shard_scan_parallel_safe;
	routine->EstimateDSMForeignScan = shard_scan_estimate_dsm;
	routine->InitializeDSMForeignScan = shard_scan_initialize_dsm;
	routine->ReInitializeDSMForeignScan = shard_scan_reinitialize_dsm;
	routine->InitializeWorkerForeignScan = shard_scan_initialize_worker;
	routine->ShutdownForeignScan = shutdown_scan;

	routine->AddForeignUpdateTargets = shard_add_update_targets;
	routine->PlanForeignModify = shard_plan_modify;
	routine->BeginForeignModify = shard_begin_modify;
	routine->ExecForeignInsert = shard_exec_insert;
#ifdef SHARD_HAVE_BATCH_INSERT
	routine->ExecForeignBatchInsert = shard_exec_batch_insert;
	routine->GetForeignModifyBatchSize = shard_batch_size;
#endif
	routine->ExecForeignUpdate = shard_exec_update;
	routine->ExecForeignDelete = shard_exec_delete;
	routine->EndForeignModify = shard_end_modify;
	routine->BeginForeignInsert = shard_begin_insert;
	routine->EndForeignInsert = shard_end_insert;
	routine->IsForeignRelUpdatable = shard_is_updatable;
	routine->ExplainForeignModify = shard_explain_modify;

	routine->PlanDirectModify = shard_plan_direct_modify;
	routine->BeginDirectModify = shard_begin_direct_modify;
	routine->IterateDirectModify = shard_iterate_direct_modify;
	routine->EndDirectModify = shard_end_direct_modify;
	routine->ExplainDirectModify = shard_explain_direct_modify;

	routine->ImportForeignSchema = shard_import_schema;

	PG_RETURN_POINTER(routine);
}
