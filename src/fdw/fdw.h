/*-------------------------------------------------------------------------
 *
 * fdw.h
 *		The fdw layer: PostgreSQL's planner and executor callbacks.  Which
 *		conditions DynamoDB evaluates (conds.c), the paths, costs and plans
 *		of a scan (plan.c), of aggregates (upper.c) and of lookup joins
 *		(join.c); the scan (scan.c, its shard streams merged by merge.c,
 *		a whole-table Scan shared out among parallel workers by
 *		parallel.c), EXPLAIN (explain.c), ANALYZE (analyze.c), and the
 *		writes: INSERT and COPY (modify.c), UPDATE and DELETE (update.c),
 *		DELETE pushed into its scan (direct.c).  Private to groups of these
 *		files: scanstate.h (the scan with its merge and EXPLAIN) and
 *		modifystate.h (the writes).
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHARD_FDW_FDW_H
#define SHARD_FDW_FDW_H

#include "dynamo/dynamo.h"

#include "commands/explain.h"
#include "foreign/fdwapi.h"
#include "nodes/execnodes.h"
#include "nodes/pathnodes.h"
#include "nodes/plannodes.h"

/* ---------------------------------------------------------------------
 * plans: plan.c, join.c, upper.c
 * ---------------------------------------------------------------------
 */
/* The DynamoDB operation a scan runs. */
typedef enum ScanOp
{
	SCAN_OP_SCAN,				/* Scan the whole table, in segments */
	SCAN_OP_QUERY,				/* Query each partition key value */
	SCAN_OP_GET					/* GetItem / BatchGetItem of whole keys */
} ScanOp;

/* A condition DynamoDB evaluates: the comparison of a key or attribute. */
typedef enum CondOp
{
	COND_EQ,
	COND_NE,
	COND_LT,
	COND_LE,
	COND_GT,
	COND_GE,
	COND_PREFIX,				/* LIKE 'prefix%': begins_with */
	COND_IN,					/* = ANY (array): one key per element, or IN */
	COND_NULL,					/* IS NULL */
	COND_NOT_NULL,				/* IS NOT NULL */
	COND_BATCH					/* = the value in each outer row of a batched
								 * lookup join (join.c); no expression */
} CondOp;

/* The most values DynamoDB takes in one IN of a FilterExpression. */
#define MAX_IN_OPERANDS 100

/* BatchGetItem takes at most this many keys. */
#define BATCH_GET_MAX 100

/*
 * The members of a ForeignScan's fdw_private list, in order.  Conditions
 * are IntLists of triples (column index, CondOp, index into fdw_exprs or
 * -1).
 */
typedef enum ScanPrivate
{
	SCAN_PRIVATE_OP,			/* Integer: ScanOp */
	SCAN_PRIVATE_COLUMNS,		/* IntList: column indexes to convert */
	SCAN_PRIVATE_ATTRS,			/* List of String: projection, NIL = all */
	SCAN_PRIVATE_KEY_CONDS,		/* IntList: equalities fixing pk columns */
	SCAN_PRIVATE_SORT_CONDS,	/* IntList: sort key conditions */
	SCAN_PRIVATE_FILTERS,		/* IntList: FilterExpression conditions */
	SCAN_PRIVATE_ORDER,			/* Integer: 0 none, 1 ascending, -1 descending */
	SCAN_PRIVATE_LIMIT,			/* Integer: rows the query needs, 0 all */
	SCAN_PRIVATE_NEED_CTID,		/* Boolean: UPDATE/DELETE want each shard */
	SCAN_PRIVATE_READ_ALL,		/* Boolean: read to the end before the first
								 * row (the statement adds items to the
								 * table) */
	SCAN_PRIVATE_BUCKETS,		/* IntList: see BucketPrivate */
	SCAN_PRIVATE_BUCKET_CONDS,	/* IntList: the bounds of the bucket column,
								 * lower then upper (one of them when open) */
	SCAN_PRIVATE_INDEX,			/* String: the secondary index read through
								 * (option secondary_indexes), NULL: none */
	SCAN_PRIVATE_FETCH,			/* Boolean: the index lacks columns the
								 * query needs: its items are got from the
								 * table by key (fetch.c) */
	SCAN_PRIVATE_READ_UNITS,	/* List of two Floats: the read units the
								 * scan is estimated to consume, and when
								 * each stream reads one item (min, max);
								 * -1: unknown (before ANALYZE) */
	SCAN_PRIVATE_AGGREGATES,	/* IntList: an aggregate's pairs (AggKind,
								 * column index), upper.c; absent from a
								 * plain scan, like the next */
	SCAN_PRIVATE_GROUPED		/* Boolean: the aggregate has a GROUP BY (of
								 * fixed columns): no row when nothing
								 * matches */
} ScanPrivate;

/*
 * The members a scan that runs an UPDATE or DELETE itself (direct.c) has
 * after a plain scan's, where an aggregate's are.
 */
typedef enum DirectPrivate
{
	DIRECT_PRIVATE_SET_TAG = SCAN_PRIVATE_AGGREGATES,	/* Boolean: its rows are
														 * the statement's row
														 * count */
	DIRECT_PRIVATE_UPDATED		/* IntList: an UPDATE's assigned columns
								 * (attribute numbers), in the order of their
								 * new values in the targetlist */
} DirectPrivate;

/* The members of a scan's ForeignPath's fdw_private, in order (or NIL). */
typedef enum PathPrivate
{
	PATH_PRIVATE_BATCH_COLS,	/* IntList: the key columns a batched lookup
								 * join fixes (join.c) */
	PATH_PRIVATE_INDEX			/* Integer: the index of the table's
								 * secondary indexes read through, or -1 */
} PathPrivate;

/* The members of SCAN_PRIVATE_BUCKETS, in order. */
typedef enum BucketPrivate
{
	BUCKET_COLUMN,				/* the column whose buckets are read, or -1 */
	BUCKET_COUNT,				/* buckets, or -1 when known only at run time */
	BUCKET_SHARDS,				/* shards read in each bucket (planned) */
	BUCKET_OVER,				/* 1: more partitions than max_partitions,
								 * read by a Scan instead */
	BUCKET_RUNS,				/* 1: the order is the buckets', read one
								 * bucket after another */
	BUCKET_AHEAD,				/* 1: no LIMIT to stop early: later buckets
								 * are sent while one is merged */
	BUCKET_OPEN					/* 1: bounded on one side, read away from it
								 * until the LIMIT is met */
} BucketPrivate;

/* An aggregate read by DynamoDB (upper.c). */
typedef enum AggKind
{
	AGG_COUNT,					/* count(*): Select COUNT */
	AGG_MIN,					/* min(column): the first item in order */
	AGG_MAX,					/* max(column): the last item in order */
	AGG_GROUP_COLUMN			/* a GROUP BY column an equality fixes: the
								 * value it is equal to */
} AggKind;
/*
 * A batched lookup join's keys (join.c): equalities between key columns
 * of the foreign table and values of the outer relation's rows.
 */
typedef struct ShardLookup
{
	List	   *cols;			/* IntList: the key columns fixed */
	List	   *outer_exprs;	/* their values, over the outer relation */
	List	   *collations;		/* OidList: the equalities' collations */
	List	   *pk_clauses;		/* RestrictInfos: those on partition key
								 * columns */
	bool		whole_keys;		/* each outer row fixes a whole item key */
	int			batch_rows;		/* outer rows per batch */
} ShardLookup;

extern bool shard_lookup_keys(PlannerInfo *root, RelOptInfo *inner, RelOptInfo *outer,
							  List *restrictlist, ShardLookup *lookup);
extern Path *shard_lookup_path(PlannerInfo *root, RelOptInfo *inner,
							   ShardLookup *lookup);
extern void shard_lookup_cost(PlannerInfo *root, RelOptInfo *inner, ShardLookup *lookup,
							  SpecialJoinInfo *sjinfo, double outer_rows, Cost *startup,
							  Cost *total, double *units);

/* in join.c */
extern void shard_join_init(void);

extern void shard_get_rel_size(PlannerInfo *root, RelOptInfo *baserel,
							   Oid foreigntableid);
extern void shard_get_paths(PlannerInfo *root, RelOptInfo *baserel,
							Oid foreigntableid);
extern bool shard_scan_parallel_safe(PlannerInfo *root, RelOptInfo *rel,
									 RangeTblEntry *rte);
extern ForeignScan *shard_get_plan(PlannerInfo *root, RelOptInfo *baserel,
								   Oid foreigntableid, ForeignPath *best_path,
								   List *tlist, List *scan_clauses,
								   Plan *outer_plan);
extern List *shard_plan_exact_queries(PlannerInfo *root, RelOptInfo *baserel);
extern bool shard_plan_filtered(RelOptInfo *baserel, int index);
extern ShardTable *shard_plan_table(RelOptInfo *baserel, int index);
extern List *shard_plan_path_private(int index);
extern bool shard_plan_sort_column(ShardTable *t, int col, Oid collation);
extern bool shard_plan_fixed_column(RelOptInfo *baserel, int index, int col);

/* in upper.c */
extern void shard_get_upper_paths(PlannerInfo *root, UpperRelationKind stage,
								  RelOptInfo *input_rel, RelOptInfo *output_rel,
								  void *extra);
extern ForeignScan *upper_get_plan(PlannerInfo *root, RelOptInfo *rel,
								   Oid foreigntableid, ForeignPath *best_path,
								   List *tlist, Plan *outer_plan);

/* in scanrequest.c: 1 or -1 for a value infinite one way or the other, else 0 */
extern int	request_infinite_value(Oid typid, Datum value);

/* in scanrequest.c: each shard's page Limit for a LIMIT of limit rows */
extern int	request_page_limit(int limit, int nshards);

/* ---------------------------------------------------------------------
 * conditions: conds.c
 * ---------------------------------------------------------------------
 */
/* One condition on one column. */
typedef struct Cond
{
	int			col;			/* index into ShardTable.columns */
	CondOp		op;
	Expr	   *value;			/* NULL for COND_NULL, COND_NOT_NULL,
								 * COND_BATCH */
	RestrictInfo *rinfo;		/* the clause it comes from, if any */
} Cond;

/* What a list of conditions allows. */
typedef struct Analysis
{
	List	   *key_conds;		/* Cond: equalities on key columns */
	List	   *sort_conds;		/* Cond: the sort key condition, at most two */
	List	   *filters;		/* Cond: for the FilterExpression */
	bool		keyed;			/* every partition key column is fixed */
	bool		full_key;		/* ... and every sort key column too, of a
								 * table (not an index): one item's key */
	bool		exact;			/* DynamoDB evaluates every condition exactly */
	int			bucket_col;		/* the column read bucket by bucket, or -1 */
	Cond	   *bucket_lo;		/* its lower bound ... */
	Cond	   *bucket_hi;		/* ... and its upper one */
	int			nbuckets;		/* buckets, -1 when known only at run time */
	int			bucket_shards;	/* shards read in each bucket */
	bool		bucket_over;	/* more partitions than max_partitions */
	bool		bucket_open;	/* bounded on one side, read away from it */
} Analysis;

/* The column of rel that expr is (under a binary-compatible cast), or -1. */
extern int	conds_column_of(ShardTable *t, Index relid, Expr *expr);

/*
 * True when ordering under collation is byte order, as DynamoDB's is ("C",
 * "POSIX", the C.UTF-8 locales), named directly or as the database's.
 */
extern bool conds_byte_order_collation(Oid collation);

/*
 * If clause is a condition on one column of rel that DynamoDB can
 * evaluate as PostgreSQL does, fill *cond and return true.
 */
extern bool conds_recognise(ShardTable *t, Index relid, Expr *clause,
							bool outer_ok, Cond *cond);

/*
 * True when a filter op on column col must also keep the items that do
 * not store it as an attribute of its own type: a key template holds it.
 */
extern bool conds_superset_filter(ShardTable *t, int col, CondOp op);

/*
 * The TTL attribute a Query's or Scan's FilterExpression checks, or NULL:
 * none, include_expired, or a key attribute.
 */
extern const char *conds_expiry_filter(ShardTable *t);

/* True when an equality in conds fixes column col. */
extern bool conds_fixed_by(List *conds, int col);

/*
 * True when the key a keyed read sends holds the value an equality fixes
 * column col to, given the columns equalities fix (fixed, by column).
 */
extern bool conds_in_key(ShardTable *t, const bool *fixed, int col);

/* The column the sort key's order follows, or -1. */
extern int	conds_sort_order_column(ShardTable *t);

/*
 * True when the text of sort key template field i is as wide for every
 * value and sorts as the values do.
 */
extern bool conds_field_fixed_width(ShardTable *t, int i);

/*
 * The columns whose order the sort key's order follows, in order, as an
 * IntList (NIL when none).
 */
extern List *conds_sort_order_columns(ShardTable *t);

/*
 * Sort out conditions (RestrictInfos) into key equalities, the sort key
 * condition and filters; see conds.c.
 */
extern Analysis conds_analyse(ShardTable *t, Index relid, List *clauses,
							  bool outer_ok, int open_order, List *batch_cols);

/* ---------------------------------------------------------------------
 * execution: scan.c, upper.c, analyze.c, direct.c, modify.c, update.c
 * ---------------------------------------------------------------------
 */
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
extern DdbConn *shard_scan_conn(ShardScanState *ss);
extern const DdbJson *shard_scan_next_match(ShardScanState *ss,
											ForeignScanState *node);
extern TupleTableSlot *shard_scan_next_row(ShardScanState *ss, ForeignScanState *node,
										   ExprState *qual);
extern Datum shard_scan_item_value(ShardScanState *ss, const DdbJson *item,
								   int col, bool *isnull);
extern Datum scan_item_column(ShardTable *t, ShardTable *l, const DdbJson *item,
							  int col, bool *isnull);
extern void shard_scan_reset(ShardScanState *ss);
extern void shard_scan_stop(ShardScanState *ss);
extern void shard_scan_explain(ShardScanState *ss, ExplainState *es, Plan *plan);

/* in parallel.c: a whole-table Scan shared out among parallel workers */
extern Size shard_scan_estimate_dsm(ForeignScanState *node, ParallelContext *pcxt);
extern void shard_scan_initialize_dsm(ForeignScanState *node, ParallelContext *pcxt,
									  void *coordinate);
extern void shard_scan_reinitialize_dsm(ForeignScanState *node, ParallelContext *pcxt,
										void *coordinate);
extern void shard_scan_initialize_worker(ForeignScanState *node, shm_toc *toc,
										 void *coordinate);
extern void shard_scan_shutdown(ForeignScanState *node);

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

#endif							/* SHARD_FDW_FDW_H */
