/*-------------------------------------------------------------------------
 *
 * shard_fdw.c
 *		The foreign data wrapper handler: wires PostgreSQL's FDW callbacks
 *		to the planner (plan.c), the scan executor (scan.c) and the writer
 *		(modify.c).
 *
 *-------------------------------------------------------------------------
 */
#include "shard_fdw.h"

#include "fmgr.h"
#include "foreign/fdwapi.h"

#include "plan.h"
#include "scan.h"

PG_MODULE_MAGIC;

PG_FUNCTION_INFO_V1(shard_fdw_handler);

void		_PG_init(void);

/* Load time: the batched lookup join's planner hook and node. */
void
_PG_init(void)
{
	shard_join_init();
}

/* The FdwRoutine of shard_fdw. */
Datum
shard_fdw_handler(PG_FUNCTION_ARGS)
{
	FdwRoutine *routine = makeNode(FdwRoutine);

	routine->GetForeignRelSize = shard_get_rel_size;
	routine->GetForeignPaths = shard_get_paths;
	routine->GetForeignPlan = shard_get_plan;
	routine->BeginForeignScan = shard_begin_scan;
	routine->IterateForeignScan = shard_iterate_scan;
	routine->ReScanForeignScan = shard_rescan;
	routine->EndForeignScan = shard_end_scan;
	routine->ExplainForeignScan = shard_explain_scan;
	routine->AnalyzeForeignTable = shard_analyze;

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
