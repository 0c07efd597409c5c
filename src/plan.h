/*-------------------------------------------------------------------------
 *
 * plan.h
 *		What the planner (plan.c) hands the executor (scan.c) in a
 *		ForeignScan's fdw_private, and the planner callbacks.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHARD_FDW_PLAN_H
#define SHARD_FDW_PLAN_H

#include "shard_fdw.h"

#include "nodes/plannodes.h"

/* The DynamoDB operation a scan runs. */
typedef enum ScanOp
{
	SCAN_OP_SCAN,				/* Scan the whole table */
	SCAN_OP_QUERY				/* Query each partition key value */
} ScanOp;

/* The members of a ForeignScan's fdw_private list, in order. */
typedef enum ScanPrivate
{
	SCAN_PRIVATE_OP,			/* Integer: ScanOp */
	SCAN_PRIVATE_COLUMNS,		/* IntList: column indexes to convert */
	SCAN_PRIVATE_ATTRS,			/* List of String: projection, NIL = all */
	SCAN_PRIVATE_KEY_COLUMNS	/* IntList: column fixed by each fdw_expr */
} ScanPrivate;

extern void shard_get_rel_size(PlannerInfo *root, RelOptInfo *baserel,
							   Oid foreigntableid);
extern void shard_get_paths(PlannerInfo *root, RelOptInfo *baserel,
							Oid foreigntableid);
extern ForeignScan *shard_get_plan(PlannerInfo *root, RelOptInfo *baserel,
								   Oid foreigntableid, ForeignPath *best_path,
								   List *tlist, List *scan_clauses,
								   Plan *outer_plan);

#endif							/* SHARD_FDW_PLAN_H */
