/*-------------------------------------------------------------------------
 *
 * conds.h
 *		The planner's reading of WHERE conditions (conds.c), shared by the
 *		planner's files: which conditions DynamoDB can evaluate, which fix
 *		the keys, and what a list of them allows a read to send.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHARD_FDW_CONDS_H
#define SHARD_FDW_CONDS_H

#include "plan.h"

#include "nodes/pathnodes.h"

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

/* True when an equality in conds fixes column col. */
extern bool conds_fixed_by(List *conds, int col);

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

#endif							/* SHARD_FDW_CONDS_H */
