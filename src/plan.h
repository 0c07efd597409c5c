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
	SCAN_PRIVATE_AGGREGATES,	/* IntList: an aggregate's pairs (AggKind,
								 * column index), upper.c; absent from a
								 * plain scan, like the next */
	SCAN_PRIVATE_GROUPED		/* Boolean: the aggregate has a GROUP BY (of
								 * fixed columns): no row when nothing
								 * matches */
} ScanPrivate;

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
	bool		whole_keys;		/* each outer row fixes a whole item key */
	int			batch_rows;		/* outer rows per batch */
} ShardLookup;

extern bool shard_lookup_keys(PlannerInfo *root, RelOptInfo *inner, RelOptInfo *outer,
							  List *restrictlist, ShardLookup *lookup);
extern Path *shard_lookup_path(PlannerInfo *root, RelOptInfo *inner,
							   ShardLookup *lookup);
extern void shard_lookup_cost(PlannerInfo *root, RelOptInfo *inner, ShardLookup *lookup,
							  double outer_rows, Cost *startup, Cost *total);

/* in join.c */
extern void shard_join_init(void);

extern void shard_get_rel_size(PlannerInfo *root, RelOptInfo *baserel,
							   Oid foreigntableid);
extern void shard_get_paths(PlannerInfo *root, RelOptInfo *baserel,
							Oid foreigntableid);
extern ForeignScan *shard_get_plan(PlannerInfo *root, RelOptInfo *baserel,
								   Oid foreigntableid, ForeignPath *best_path,
								   List *tlist, List *scan_clauses,
								   Plan *outer_plan);
extern bool shard_plan_exact_query(RelOptInfo *baserel, bool *filtered);
extern bool shard_plan_sort_column(ShardTable *t, int col, Oid collation);
extern bool shard_plan_fixed_column(RelOptInfo *baserel, int col);

/* in upper.c */
extern void shard_get_upper_paths(PlannerInfo *root, UpperRelationKind stage,
								  RelOptInfo *input_rel, RelOptInfo *output_rel,
								  void *extra);
extern ForeignScan *upper_get_plan(PlannerInfo *root, RelOptInfo *rel,
								   Oid foreigntableid, ForeignPath *best_path,
								   List *tlist, Plan *outer_plan);

#endif							/* SHARD_FDW_PLAN_H */
