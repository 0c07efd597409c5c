/*-------------------------------------------------------------------------
 *
 * scan.h
 *		The executor callbacks of a foreign scan (scan.c), of a foreign
 *		modify (modify.c) and of a direct modify (direct.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHARD_FDW_SCAN_H
#define SHARD_FDW_SCAN_H

#include "shard_fdw.h"

#include "commands/explain.h"
#include "foreign/fdwapi.h"
#include "nodes/execnodes.h"

/* in scan.c */
extern void shard_begin_scan(ForeignScanState *node, int eflags);
extern TupleTableSlot *shard_iterate_scan(ForeignScanState *node);
extern void shard_rescan(ForeignScanState *node);
extern void shard_end_scan(ForeignScanState *node);
extern void shard_explain_scan(ForeignScanState *node, ExplainState *es);
extern void shard_scan_set_lookups(ForeignScanState *node, List *lookups);

/* A scan's state, for a node that runs a scan and does more (direct.c). */
typedef struct ShardScanState ShardScanState;

extern ShardScanState *shard_scan_create(ForeignScanState *node, int eflags);
extern ShardTable *shard_scan_table(ShardScanState *ss);
extern char *scan_key_field(ShardTable *t, ShardKey *k, const DdbJson *item,
							const char *colname);
extern DdbConn *shard_scan_conn(ShardScanState *ss);
extern const DdbJson *shard_scan_next_match(ShardScanState *ss,
											ForeignScanState *node);
extern Datum shard_scan_item_value(ShardScanState *ss, const DdbJson *item,
								   int col, bool *isnull);
extern Datum scan_item_column(ShardTable *t, ShardTable *l, const DdbJson *item,
							  int col, bool *isnull);
extern void shard_scan_reset(ShardScanState *ss);
extern void shard_scan_stop(ShardScanState *ss);
extern void shard_scan_explain(ShardScanState *ss, ExplainState *es, Plan *plan);

/* in upper.c */
extern void upper_begin_scan(ForeignScanState *node, int eflags);
extern TupleTableSlot *upper_iterate_scan(ForeignScanState *node);
extern void upper_rescan(ForeignScanState *node);
extern void upper_end_scan(ForeignScanState *node);
extern void upper_explain_scan(ForeignScanState *node, ExplainState *es);
/* A row of a sampling scan, handed over while it is valid. */
typedef void (*ShardRowFn) (TupleTableSlot *slot, void *arg);

extern void shard_scan_segments(Oid relid, const int *segs, int nsegs, int total,
								TupleTableSlot *slot, ShardRowFn fn, void *arg,
								DdbStats *stats);

/* in analyze.c */
extern bool shard_analyze(Relation relation, AcquireSampleRowsFunc *func,
						  BlockNumber *totalpages);

/* in direct.c */
extern bool shard_plan_direct_modify(PlannerInfo *root, ModifyTable *plan,
									 Index resultRelation, int subplan_index);
extern void shard_begin_direct_modify(ForeignScanState *node, int eflags);
extern TupleTableSlot *shard_iterate_direct_modify(ForeignScanState *node);
extern void shard_end_direct_modify(ForeignScanState *node);
extern void shard_explain_direct_modify(ForeignScanState *node, ExplainState *es);

/* in modify.c */
extern List *shard_plan_modify(PlannerInfo *root, ModifyTable *plan,
							   Index resultRelation, int subplan_index);
extern void shard_begin_modify(ModifyTableState *mtstate, ResultRelInfo *rinfo,
							   List *fdw_private, int subplan_index, int eflags);
extern TupleTableSlot *shard_exec_insert(EState *estate, ResultRelInfo *rinfo,
										 TupleTableSlot *slot,
										 TupleTableSlot *planSlot);
extern TupleTableSlot **shard_exec_batch_insert(EState *estate,
												ResultRelInfo *rinfo,
												TupleTableSlot **slots,
												TupleTableSlot **planSlots,
												int *numSlots);
extern int	shard_batch_size(ResultRelInfo *rinfo);
extern void shard_add_update_targets(PlannerInfo *root, Index rtindex,
									 RangeTblEntry *target_rte,
									 Relation target_relation);
extern TupleTableSlot *shard_exec_update(EState *estate, ResultRelInfo *rinfo,
										 TupleTableSlot *slot,
										 TupleTableSlot *planSlot);
extern TupleTableSlot *shard_exec_delete(EState *estate, ResultRelInfo *rinfo,
										 TupleTableSlot *slot,
										 TupleTableSlot *planSlot);
extern void shard_end_modify(EState *estate, ResultRelInfo *rinfo);
extern void shard_begin_insert(ModifyTableState *mtstate, ResultRelInfo *rinfo);
extern void shard_end_insert(EState *estate, ResultRelInfo *rinfo);
extern int	shard_is_updatable(Relation rel);
extern void shard_explain_modify(ModifyTableState *mtstate, ResultRelInfo *rinfo,
								 List *fdw_private, int subplan_index,
								 ExplainState *es);
extern void shard_explain_writes(DdbGroup *group, ExplainState *es);

#endif							/* SHARD_FDW_SCAN_H */
