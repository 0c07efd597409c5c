/*-------------------------------------------------------------------------
 *
 * plan.c
 *		The planner's side of a scan: which WHERE conditions fix the
 *		partition key (so that the scan becomes a Query), which columns must
 *		be fetched (ProjectionExpression), the paths and their costs, and the
 *		plan that carries those decisions to the executor.
 *
 * Every condition is also kept as a local qual: DynamoDB's key condition
 * only narrows what is read, and PostgreSQL checks every row it returns.
 *
 *-------------------------------------------------------------------------
 */
#include "shard_fdw.h"

#include <math.h>

#include "access/stratnum.h"
#include "catalog/pg_opfamily.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/planmain.h"
#include "optimizer/restrictinfo.h"
#include "utils/lsyscache.h"
#include "utils/selfuncs.h"
#include "utils/typcache.h"

#include "plan.h"

/* Planner state of one foreign relation, in baserel->fdw_private. */
typedef struct RelInfo
{
	ShardTable *table;
	Bitmapset  *attrs_used;		/* columns the query needs, attno-offset */
	List	   *key_cols;		/* column indexes fixed by equality ... */
	List	   *key_exprs;		/* ... to these expressions */
	bool		keyed;			/* the partition key is fixed: Query */
} RelInfo;

/*
 * If clause is "column = value" with column of rel and value a constant or
 * parameter, return the column's index in t and set *value; else -1.  The
 * operator must be the btree equality of the column type's default
 * operator family, and the comparison byte-exact (a deterministic
 * collation), so that DynamoDB's equality agrees with PostgreSQL's.
 */
static int
equality_column(ShardTable *t, Index relid, Expr *clause, Expr **value)
{
	OpExpr	   *op;
	Expr	   *left;
	Expr	   *right;
	Var		   *var;
	Expr	   *other;
	int			col;
	Oid			opfamily;
	TypeCacheEntry *tce;

	if (!IsA(clause, OpExpr))
		return -1;
	op = (OpExpr *) clause;
	if (list_length(op->args) != 2)
		return -1;
	left = linitial(op->args);
	right = lsecond(op->args);
	if (IsA(left, RelabelType))
		left = ((RelabelType *) left)->arg;
	if (IsA(right, RelabelType))
		right = ((RelabelType *) right)->arg;
	if (IsA(left, Var) && ((Var *) left)->varno == (int) relid)
	{
		var = (Var *) left;
		other = right;
	}
	else if (IsA(right, Var) && ((Var *) right)->varno == (int) relid)
	{
		var = (Var *) right;
		other = left;
	}
	else
		return -1;
	if (var->varlevelsup != 0 || var->varattno <= 0)
		return -1;
	if (!IsA(other, Const) && !IsA(other, Param))
		return -1;
	if (IsA(other, Const) && ((Const *) other)->constisnull)
		return -1;
	col = shard_column_index(t, var->varattno);
	if (col < 0)
		return -1;
	tce = lookup_type_cache(t->columns[col].typid, TYPECACHE_BTREE_OPFAMILY);
	opfamily = tce->btree_opf;
	if (!OidIsValid(opfamily) ||
		get_op_opfamily_strategy(op->opno, opfamily) != BTEqualStrategyNumber)
		return -1;
	if (OidIsValid(op->inputcollid) && !get_collation_isdeterministic(op->inputcollid))
		return -1;
	*value = other;
	return col;
}

/* The expression fixing column col, or NULL. */
static Expr *
fixed_value(RelInfo *ri, int col)
{
	ListCell   *lc1;
	ListCell   *lc2;

	forboth(lc1, ri->key_cols, lc2, ri->key_exprs)
		if (lfirst_int(lc1) == col)
			return lfirst(lc2);
	return NULL;
}

/*
 * True when every column the partition key is made of is fixed, so that
 * the partition key values (one per shard) are known at execution time.
 */
static bool
partition_key_fixed(RelInfo *ri)
{
	ShardTable *t = ri->table;

	if (t->pk.attribute == NULL)
		return false;
	if (t->pk.template == NULL)
		return fixed_value(ri, t->pk.column) != NULL;
	for (int i = 0; i < t->pk.template->nparts; i++)
	{
		KeyPart    *part = &t->pk.template->parts[i];

		if (part->kind == KP_COLUMN &&
			fixed_value(ri, shard_find_column(t, part->text) - t->columns) == NULL)
			return false;
	}
	return true;
}

/* GetForeignRelSize: analyse the conditions and estimate the rows. */
void
shard_get_rel_size(PlannerInfo *root, RelOptInfo *baserel, Oid foreigntableid)
{
	RelInfo    *ri = palloc0(sizeof(RelInfo));
	ListCell   *lc;

	baserel->fdw_private = ri;
	ri->table = shard_get_table(foreigntableid, true);

	pull_varattnos((Node *) baserel->reltarget->exprs, baserel->relid, &ri->attrs_used);
	foreach(lc, baserel->baserestrictinfo)
	{
		RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc);
		Expr	   *value;
		int			col;

		pull_varattnos((Node *) rinfo->clause, baserel->relid, &ri->attrs_used);
		col = equality_column(ri->table, baserel->relid, rinfo->clause, &value);
		if (col >= 0 && fixed_value(ri, col) == NULL)
		{
			ri->key_cols = lappend_int(ri->key_cols, col);
			ri->key_exprs = lappend(ri->key_exprs, value);
		}
	}
	ri->keyed = partition_key_fixed(ri);

	/*
	 * Without statistics: a table is taken to hold 10000 rows, a partition
	 * 100, each narrowed by the selectivity of the other conditions.
	 */
	baserel->rows = clamp_row_est((ri->keyed ? 100.0 : 10000.0) *
								  clauselist_selectivity(root, baserel->baserestrictinfo,
														 0, JOIN_INNER, NULL) /
								  (ri->keyed ? pow(DEFAULT_EQ_SEL, list_length(ri->key_cols)) : 1.0));
}

/* GetForeignPaths: one path, a Query when keyed, else a Scan. */
void
shard_get_paths(PlannerInfo *root, RelOptInfo *baserel, Oid foreigntableid)
{
	RelInfo    *ri = baserel->fdw_private;
	Cost		startup = ri->keyed ? 10.0 : 100.0;
	Cost		total = startup + baserel->rows * (ri->keyed ? 0.1 : 1.0) +
		(ri->keyed ? 0 : 100000.0);

	add_path(baserel, (Path *)
			 shard_create_foreignscan_path(root, baserel, NULL, baserel->rows,
										   startup, total, NIL, NULL, NULL, NIL));
}

/*
 * The columns to fetch, as column indexes, and the attributes to ask for;
 * *attrs is NIL when the whole item is needed.
 */
static List *
fetched_columns(RelInfo *ri, Index relid, List **attrs)
{
	ShardTable *t = ri->table;
	List	   *cols = NIL;
	bool		whole_row = bms_is_member(0 - FirstLowInvalidHeapAttributeNumber,
										  ri->attrs_used);
	bool		whole_item = false;

	*attrs = NIL;
	for (int i = 0; i < t->ncolumns; i++)
	{
		ShardColumn *col = &t->columns[i];

		if (!whole_row &&
			!bms_is_member(col->attnum - FirstLowInvalidHeapAttributeNumber, ri->attrs_used))
			continue;
		cols = lappend_int(cols, i);
		if (col->ddb_type == DDB_TYPE_ITEM)
			whole_item = true;
		*attrs = list_append_unique(*attrs, makeString(col->attribute));
	}
	if (whole_item)
		*attrs = NIL;
	else
	{
		/*
		 * The keys always come too: columns missing from an item are decoded
		 * from them, and errors name the item by them.
		 */
		if (t->pk.attribute)
			*attrs = list_append_unique(*attrs, makeString(t->pk.attribute));
		if (t->sk.attribute)
			*attrs = list_append_unique(*attrs, makeString(t->sk.attribute));
	}
	return cols;
}

/* GetForeignPlan: carry the decisions to the executor in fdw_private. */
ForeignScan *
shard_get_plan(PlannerInfo *root, RelOptInfo *baserel, Oid foreigntableid,
			   ForeignPath *best_path, List *tlist, List *scan_clauses,
			   Plan *outer_plan)
{
	RelInfo    *ri = baserel->fdw_private;
	List	   *attrs;
	List	   *cols = fetched_columns(ri, baserel->relid, &attrs);
	List	   *fdw_private;
	List	   *fdw_exprs = NIL;
	List	   *key_cols = NIL;

	scan_clauses = extract_actual_clauses(scan_clauses, false);
	if (ri->keyed)
	{
		fdw_exprs = ri->key_exprs;
		key_cols = ri->key_cols;
	}
	fdw_private = list_make4(makeInteger(ri->keyed ? SCAN_OP_QUERY : SCAN_OP_SCAN),
							 cols, attrs, key_cols);
	return make_foreignscan(tlist, scan_clauses, baserel->relid, fdw_exprs,
							fdw_private, NIL, NIL, outer_plan);
}
