/*-------------------------------------------------------------------------
 *
 * upper.c
 *		Aggregates DynamoDB computes: count(*) over a keyed read becomes a
 *		Query per shard with Select COUNT, all in flight at once, summed;
 *		min and max of the column the sort key's order follows become a
 *		Query per shard with Limit 1 in that order, merged.  The planner's
 *		side (GetForeignUpperPaths, the plan) and the executor's (the scans
 *		of scan.c, one per aggregate, run one after another).
 *
 * Only an aggregate of one foreign table without HAVING, grouped by
 * nothing or by columns that equalities fix (one group), and only where
 * DynamoDB evaluates every condition exactly, since nothing is checked
 * locally: DynamoDB's count is the query's count.  min and max also need
 * no filter, which DynamoDB applies after the Limit.
 *
 *-------------------------------------------------------------------------
 */
#include "fdw/fdw.h"

#include "catalog/pg_aggregate.h"
#include "catalog/pg_namespace.h"
#include "commands/explain.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/planmain.h"
#include "parser/parsetree.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"

#include "fdw/scanstate.h"

/* Planner state of an aggregate's relation, in its fdw_private. */
typedef struct UpperInfo
{
	RelOptInfo *input;			/* the foreign table's relation */
	int			index;			/* the index read through, or -1 */
	List	   *exprs;			/* the Aggrefs and GROUP BY Vars, in the
								 * scan's order */
	List	   *parts;			/* IntList: (AggKind, column) pairs */
} UpperInfo;

/* Executor state of an aggregate's scan. */
typedef struct UpperState
{
	int			nparts;
	AggKind    *kinds;
	int		   *cols;
	ShardScanState **scans;		/* one per aggregate */
	bool		grouped;		/* no row when nothing matches */
	bool		done;			/* its one row was returned */
} UpperState;

/* ---------------------------------------------------------------------
 * Planning
 * ---------------------------------------------------------------------
 */

/* True when function fn is pg_catalog's aggregate called name. */
static bool
is_catalog_function(Oid fn, const char *name)
{
	char	   *fname = get_func_name(fn);

	return fname != NULL && strcmp(fname, name) == 0 &&
		get_func_namespace(fn) == PG_CATALOG_NAMESPACE;
}

/*
 * The kind of aggregate agg is and the column it reads (-1 for count(*)),
 * or false when DynamoDB cannot compute it over input (t): count(*), or
 * min or max of the column leading the sort key's order, under a
 * collation that orders it as its bytes.
 */
static bool
recognise_aggregate(ShardTable *t, RelOptInfo *input, Aggref *agg, AggKind *kind,
					int *col)
{
	Expr	   *arg;
	Var		   *var;

	if (agg->aggorder != NIL || agg->aggdistinct != NIL || agg->aggfilter != NULL ||
		agg->aggsplit != AGGSPLIT_SIMPLE || agg->aggkind != AGGKIND_NORMAL ||
		agg->agglevelsup != 0)
		return false;
	*col = -1;
	if (agg->aggstar)
	{
		*kind = AGG_COUNT;
		return is_catalog_function(agg->aggfnoid, "count");
	}
	if (is_catalog_function(agg->aggfnoid, "min"))
		*kind = AGG_MIN;
	else if (is_catalog_function(agg->aggfnoid, "max"))
		*kind = AGG_MAX;
	else
		return false;
	if (list_length(agg->args) != 1)
		return false;
	arg = linitial_node(TargetEntry, agg->args)->expr;
	if (IsA(arg, RelabelType))
		arg = ((RelabelType *) arg)->arg;
	if (!IsA(arg, Var))
		return false;
	var = (Var *) arg;
	if (var->varno != (int) input->relid || var->varlevelsup != 0 || var->varattno <= 0)
		return false;
	*col = shard_column_index(t, var->varattno);
	return *col >= 0 && shard_plan_sort_column(t, *col, agg->inputcollid);
}

/*
 * The column of input that expr is when the query groups by it and an
 * equality of the read through index (-1: none) fixes it, or -1.
 */
static int
group_column(ShardTable *t, RelOptInfo *input, int index, List *group_exprs, Expr *expr)
{
	Var		   *var = (Var *) expr;
	int			col;

	if (!IsA(var, Var) || var->varno != (int) input->relid || var->varlevelsup != 0 ||
		var->varattno <= 0 || !list_member(group_exprs, var))
		return -1;
	col = shard_column_index(t, var->varattno);
	return col >= 0 && shard_plan_fixed_column(input, index, col) ? col : -1;
}

/*
 * The aggregates of the query over input_rel (grouped by nothing or by
 * columns that equalities fix) that the read of input_rel through index
 * (-1: none) lets DynamoDB compute, or NULL when it cannot compute them
 * all.
 */
static UpperInfo *
upper_info(PlannerInfo *root, RelOptInfo *input_rel, RelOptInfo *output_rel, int index)
{
	Query	   *parse = root->parse;
	ShardTable *t = shard_plan_table(input_rel, index);
	bool		filtered = shard_plan_filtered(input_rel, index);
	UpperInfo  *ui;
	ListCell   *lc;
	List	   *nodes;
	List	   *group_exprs = NIL;
	bool		any_aggregate = false;

	/*
	 * a partition of several layouts is read once in each, and an item
	 * moving between them may be met in both: rows counted twice
	 */
	if (t->nlayouts > 1 || (t->base && t->base->nlayouts > 1))
		return NULL;
	foreach(lc, parse->groupClause)
	{
		Expr	   *expr = (Expr *) get_sortgroupclause_expr(lfirst(lc), parse->targetList);

		if (group_column(t, input_rel, index, list_make1(expr), expr) < 0)
			return NULL;
		group_exprs = lappend(group_exprs, expr);
	}
	ui = palloc0(sizeof(UpperInfo));
	ui->input = input_rel;
	ui->index = index;
	nodes = pull_var_clause((Node *) output_rel->reltarget->exprs,
							PVC_INCLUDE_AGGREGATES | PVC_RECURSE_PLACEHOLDERS);
	foreach(lc, nodes)
	{
		Expr	   *node = lfirst(lc);
		AggKind		kind = AGG_GROUP_COLUMN;
		int			col = group_column(t, input_rel, index, group_exprs, node);

		if (col < 0 &&
			(!IsA(node, Aggref) ||
			 !recognise_aggregate(t, input_rel, (Aggref *) node, &kind, &col) ||
			 (kind != AGG_COUNT && filtered)))
			return NULL;
		any_aggregate |= kind != AGG_GROUP_COLUMN;
		if (list_member(ui->exprs, node))
			continue;
		ui->exprs = lappend(ui->exprs, node);
		ui->parts = lappend_int(lappend_int(ui->parts, kind), col);
	}
	/* an aggregate tells whether anything matched, and so whether a group is */
	return any_aggregate ? ui : NULL;
}

/*
 * GetForeignUpperPaths: for the aggregates of a query over one keyed read
 * that DynamoDB evaluates exactly, grouped by nothing or by columns fixed
 * by equalities, a path that asks DynamoDB for them, through the cheapest
 * read of the table or of an index that can compute them all (min and
 * max need the index whose sort key their column leads).
 */
void
shard_get_upper_paths(PlannerInfo *root, UpperRelationKind stage,
					  RelOptInfo *input_rel, RelOptInfo *output_rel, void *extra)
{
	Query	   *parse = root->parse;
	UpperInfo  *ui = NULL;
	ListCell   *lc;

	if (stage != UPPERREL_GROUP_AGG || output_rel->fdw_private != NULL ||
		input_rel->reloptkind != RELOPT_BASEREL || input_rel->fdw_private == NULL ||
		((GroupPathExtraData *) extra)->patype != PARTITIONWISE_AGGREGATE_NONE ||
		parse->groupingSets != NIL || root->hasHavingQual)
		return;
	foreach(lc, shard_plan_exact_queries(root, input_rel))
		if ((ui = upper_info(root, input_rel, output_rel, lfirst_int(lc))) != NULL)
			break;
	if (ui == NULL)
		return;
	output_rel->fdw_private = ui;

	/*
	 * Far less than the keyed read it replaces (cost_read's 10 for a round
	 * of requests, and a share per row, which is then aggregated): no item
	 * comes back, and min and max stop after one item per shard.
	 */
	add_path(output_rel, (Path *)
			 shard_create_foreign_upper_path(root, output_rel, output_rel->reltarget,
											 1.0, list_length(ui->exprs),
											 list_length(ui->exprs), NIL, NULL, NIL));
}

/*
 * GetForeignPlan of an aggregate: the plan of the keyed read (shard_get_plan
 * over the foreign table's conditions) with the aggregates to compute; the
 * scan's tuple holds their values and the GROUP BY columns', in the order
 * of fdw_scan_tlist.
 */
ForeignScan *
upper_get_plan(PlannerInfo *root, RelOptInfo *rel, Oid foreigntableid,
			   ForeignPath *best_path, List *tlist, Plan *outer_plan)
{
	UpperInfo  *ui = rel->fdw_private;
	ForeignPath *read = makeNode(ForeignPath);
	ForeignScan *scan;
	List	   *scan_tlist = NIL;
	ListCell   *lc;

	read->path.pathtype = T_ForeignScan;
	read->path.parent = ui->input;
	read->fdw_private = shard_plan_path_private(ui->index);
	scan = shard_get_plan(root, ui->input,
						  planner_rt_fetch(ui->input->relid, root)->relid, read, NIL,
						  ui->input->baserestrictinfo, NULL);
	/* the aggregates follow the members of a plain scan's fdw_private */
	Assert(list_length(scan->fdw_private) == SCAN_PRIVATE_AGGREGATES);
	foreach(lc, ui->exprs)
		scan_tlist = lappend(scan_tlist,
							 makeTargetEntry(lfirst(lc), list_length(scan_tlist) + 1,
											 NULL, false));
	return make_foreignscan(tlist, NIL, 0, scan->fdw_exprs,
							lappend(lappend(list_copy(scan->fdw_private), ui->parts),
									makeBoolean(root->parse->groupClause != NIL)),
							scan_tlist, NIL, outer_plan);
}

/* ---------------------------------------------------------------------
 * Execution
 * ---------------------------------------------------------------------
 */

/* BeginForeignScan of an aggregate: a scan for each aggregate. */
void
upper_begin_scan(ForeignScanState *node, int eflags)
{
	ForeignScan *fs = (ForeignScan *) node->ss.ps.plan;
	List	   *parts = list_nth(fs->fdw_private, SCAN_PRIVATE_AGGREGATES);
	UpperState *us = palloc0(sizeof(UpperState));

	us->nparts = list_length(parts) / 2;
	us->grouped = boolVal(list_nth(fs->fdw_private, SCAN_PRIVATE_GROUPED));
	us->kinds = palloc(sizeof(AggKind) * us->nparts);
	us->cols = palloc(sizeof(int) * us->nparts);
	us->scans = palloc(sizeof(ShardScanState *) * us->nparts);
	for (int i = 0; i < us->nparts; i++)
	{
		ShardScanState *ss = shard_scan_create(node, eflags);

		us->kinds[i] = (AggKind) list_nth_int(parts, 2 * i);
		us->cols[i] = list_nth_int(parts, 2 * i + 1);
		if (us->kinds[i] == AGG_COUNT)
			ss->select_count = true;
		else
		{
			/* the first item in the order asked for holds the value */
			ss->order = us->kinds[i] == AGG_MIN ? 1 : -1;
			ss->limit = 1;
			ss->read_units = floatVal(lsecond(list_nth(fs->fdw_private,
													   SCAN_PRIVATE_READ_UNITS)));
		}
		us->scans[i] = ss;
	}
	node->fdw_state = us;
}

/*
 * The value a GROUP BY column is fixed to: the equality's value, evaluated
 * by scan ss as it would for its key condition.
 */
static Datum
group_value(ForeignScanState *node, ShardScanState *ss, int col, bool *isnull)
{
	for (int i = 0; i < ss->nkey_conds; i++)
		if (ss->key_conds[i].col == col && ss->key_conds[i].op == COND_EQ)
			return ExecEvalExpr(list_nth(ss->expr_states, ss->key_conds[i].expr),
								node->ss.ps.ps_ExprContext, isnull);
	elog(ERROR, "shard_fdw: no equality fixes GROUP BY column %d", col);
}

/*
 * The value of aggregate i: the sum of the shards' counts, or the first
 * non-NULL value of the column in the merged order (NULL when none).
 * *matched is set when it shows that some item matched.
 */
static Datum
aggregate_value(ForeignScanState *node, UpperState *us, int i, bool *isnull,
				bool *matched)
{
	ShardScanState *ss = us->scans[i];
	Form_pg_attribute att = TupleDescAttr(node->ss.ss_ScanTupleSlot->tts_tupleDescriptor, i);
	const DdbJson *item;

	if (us->kinds[i] == AGG_GROUP_COLUMN)
		return group_value(node, ss, us->cols[i], isnull);
	if (us->kinds[i] == AGG_COUNT)
	{
		ss->counted = 0;
		/* the pages carry no items: this reads them all, counting */
		(void) shard_scan_next_match(ss, node);
		*isnull = false;
		*matched |= ss->counted > 0;
		return Int64GetDatum(ss->counted);
	}
	while ((item = shard_scan_next_match(ss, node)) != NULL)
	{
		Datum		value = shard_scan_item_value(ss, item, us->cols[i], isnull);

		*matched = true;
		if (!*isnull)
			return datumCopy(value, att->attbyval, att->attlen);
	}
	*isnull = true;
	return (Datum) 0;
}

/* IterateForeignScan of an aggregate: its one row. */
TupleTableSlot *
upper_iterate_scan(ForeignScanState *node)
{
	UpperState *us = node->fdw_state;
	TupleTableSlot *slot = node->ss.ss_ScanTupleSlot;
	bool		matched = false;

	ExecClearTuple(slot);
	if (us->done)
		return slot;
	for (int i = 0; i < us->nparts; i++)
	{
		slot->tts_values[i] = aggregate_value(node, us, i, &slot->tts_isnull[i],
											  &matched);
		/* what is in flight is no longer needed */
		shard_scan_reset(us->scans[i]);
	}
	us->done = true;
	/* a group of nothing is no row; no grouping gives one row anyway */
	if (us->grouped && !matched)
		return slot;
	return ExecStoreVirtualTuple(slot);
}

/* ReScanForeignScan of an aggregate: compute it again. */
void
upper_rescan(ForeignScanState *node)
{
	UpperState *us = node->fdw_state;

	for (int i = 0; i < us->nparts; i++)
		shard_scan_reset(us->scans[i]);
	us->done = false;
}

/* EndForeignScan of an aggregate */
void
upper_end_scan(ForeignScanState *node)
{
	UpperState *us = node->fdw_state;

	for (int i = 0; us && i < us->nparts; i++)
		shard_scan_stop(us->scans[i]);
}

/*
 * ExplainForeignScan of an aggregate: each aggregate and its reads, one
 * after another in the text format, a list of objects in the others.
 */
void
upper_explain_scan(ForeignScanState *node, ExplainState *es)
{
	UpperState *us = node->fdw_state;

	ExplainOpenGroup("DynamoDB Aggregates", "DynamoDB Aggregates", false, es);
	for (int i = 0; i < us->nparts; i++)
	{
		const char *col = us->kinds[i] == AGG_COUNT ? "*" :
			us->scans[i]->t->columns[us->cols[i]].name;

		if (us->kinds[i] == AGG_GROUP_COLUMN)
		{
			ExplainPropertyText("Group Key",
								psprintf("%s (fixed by the key condition)", col), es);
			continue;
		}
		ExplainOpenGroup("DynamoDB Aggregate", NULL, true, es);
		ExplainPropertyText("DynamoDB Aggregate",
							psprintf("%s(%s)", us->kinds[i] == AGG_COUNT ? "count" :
									 us->kinds[i] == AGG_MIN ? "min" : "max", col), es);
		shard_scan_explain(us->scans[i], es, node->ss.ps.plan);
		ExplainCloseGroup("DynamoDB Aggregate", NULL, true, es);
	}
	ExplainCloseGroup("DynamoDB Aggregates", "DynamoDB Aggregates", false, es);
}
