/*-------------------------------------------------------------------------
 *
 * join.c
 *		The batched lookup join: an inner join of any relation (the outer
 *		side) with a foreign table whose item keys the join's equalities
 *		fix, as a custom scan node ("Shard Lookup Join" in EXPLAIN).
 *
 * It reads the outer rows in batches (up to ShardLookup.batch_rows rows,
 * or work_mem), hashes them by their key values, and hands their key texts
 * to the foreign scan below it, whose key conditions are COND_BATCH: that
 * scan sends a BatchGetItem per 100 whole keys, or a Query per partition
 * key value and shard the batch needs, all in flight at once (up to
 * max_concurrency), each partition read once per batch.  Every item read
 * is matched with the batch's outer rows of the same key values through
 * the hash, and PostgreSQL checks the join's every condition on each pair.
 * So a join never waits for one round trip per outer row, and memory holds
 * one batch of outer rows and the pages in flight.
 *
 * Whether this node, a nested loop of parameterized lookups or a hash join
 * over one read of the table wins is the planner's choice, by the costs
 * of plan.c.
 *
 *-------------------------------------------------------------------------
 */
#include "fdw/fdw.h"

#include "common/hashfn.h"
#include "executor/executor.h"
#include "foreign/fdwapi.h"
#include "miscadmin.h"
#include "nodes/extensible.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "optimizer/restrictinfo.h"
#include "parser/parsetree.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/ruleutils.h"
#include "utils/typcache.h"


/* The members of the CustomPath's custom_private list, in order. */
typedef enum LookupPathPrivate
{
	LOOKUP_PATH_COLS,			/* IntList: ShardLookup.cols */
	LOOKUP_PATH_EXPRS,			/* List: ShardLookup.outer_exprs */
	LOOKUP_PATH_COLLATIONS,		/* OidList: ShardLookup.collations */
	LOOKUP_PATH_BATCH_ROWS,		/* Integer: ShardLookup.batch_rows */
	LOOKUP_PATH_CLAUSES,		/* the join's RestrictInfos */
	LOOKUP_PATH_READ_UNITS		/* Float: estimated read units, -1 unknown */
} LookupPathPrivate;

/* The members of the CustomScan's custom_private list, in order. */
typedef enum LookupPrivate
{
	LOOKUP_COLS,				/* IntList: the foreign table's key columns */
	LOOKUP_COLLATIONS,			/* OidList: the equalities' collations */
	LOOKUP_INNER_ATTS,			/* IntList: those columns in the scan's rows */
	LOOKUP_NOUTER,				/* Integer: columns of the outer rows */
	LOOKUP_BATCH_ROWS,			/* Integer: outer rows per batch */
	LOOKUP_READ_UNITS			/* Float: estimated read units, -1 unknown */
} LookupPrivate;

/* Outer rows of one batch with the same hash of their key values. */
typedef struct LookupEntry
{
	uint32		hash;
	List	   *rows;			/* MinimalTuples */
	const char **texts;			/* the first row's key texts */
} LookupEntry;

/* The state of a lookup join. */
typedef struct LookupState
{
	CustomScanState css;
	ShardTable *table;
	int			nkeys;
	int		   *cols;			/* key column indexes */
	Oid		   *collations;
	AttrNumber *inner_atts;
	FmgrInfo   *outer_hash;
	FmgrInfo   *inner_hash;
	List	   *key_states;		/* ExprStates of the outer key values */
	int			nouter;
	int			batch_rows;
	MemoryContext batchcxt;		/* one batch: outer rows, hash, texts */
	HTAB	   *hash;
	TupleTableSlot *outer_slot; /* an outer row read back */
	TupleTableSlot *inner_slot; /* the item being matched */
	ListCell   *match;			/* next outer row to pair with it */
	List	   *matches;
	bool		outer_done;
	bool		reading;		/* the batch's scan has items left */
	int64		batches;
} LookupState;

/* shard_fdw.enable_lookup_join: whether the planner may choose the node. */
static bool enable_lookup_join = true;

static set_join_pathlist_hook_type prev_join_hook = NULL;
static CustomPathMethods lookup_path_methods;
static CustomScanMethods lookup_scan_methods;
static CustomExecMethods lookup_exec_methods;

/* ---------------------------------------------------------------------
 * Planning
 * ---------------------------------------------------------------------
 */

/*
 * set_join_pathlist_hook: offer a lookup join of outerrel with innerrel,
 * a shard_fdw foreign table, when the join's equalities fix its keys.
 */
static void
lookup_join_paths(PlannerInfo *root, RelOptInfo *joinrel, RelOptInfo *outerrel,
				  RelOptInfo *innerrel, JoinType jointype, JoinPathExtraData *extra)
{
	ShardLookup lookup;
	CustomPath *cp;
	Path	   *outer_path = outerrel->cheapest_total_path;
	Cost		startup;
	Cost		total;
	double		units;
	QualCost	quals;
	ListCell   *lc;

	if (prev_join_hook)
		prev_join_hook(root, joinrel, outerrel, innerrel, jointype, extra);
	/* a pseudoconstant clause would need a gating Result that no scan gets */
	foreach(lc, extra->restrictlist)
		if (lfirst_node(RestrictInfo, lc)->pseudoconstant)
			return;
	/* no row marks: an EvalPlanQual recheck would need the joined row again */
	if (!enable_lookup_join || jointype != JOIN_INNER || root->rowMarks != NIL ||
		innerrel->reloptkind != RELOPT_BASEREL ||
		innerrel->fdwroutine == NULL ||
		innerrel->fdwroutine->GetForeignRelSize != shard_get_rel_size ||
		innerrel->fdw_private == NULL || outer_path == NULL ||
		outer_path->param_info != NULL || !bms_is_empty(joinrel->lateral_relids) ||
		!bms_is_empty(innerrel->lateral_relids))
		return;
	if (!shard_lookup_keys(root, innerrel, outerrel, extra->restrictlist, &lookup))
		return;
	shard_lookup_cost(root, innerrel, &lookup, extra->sjinfo, outer_path->rows, &startup,
					  &total, &units);
	cost_qual_eval(&quals, extra->restrictlist, root);

	cp = makeNode(CustomPath);
	cp->path.pathtype = T_CustomScan;
	cp->path.parent = joinrel;
	cp->path.pathtarget = joinrel->reltarget;
	cp->path.rows = joinrel->rows;
	/* it may run in a parallel worker, as the nested loop it replaces */
	cp->path.parallel_safe = joinrel->consider_parallel && outer_path->parallel_safe;
	cp->path.startup_cost = outer_path->startup_cost + startup;
	cp->path.total_cost = outer_path->total_cost + total +
		outer_path->rows * cpu_operator_cost * list_length(lookup.cols) +
		joinrel->rows * (cpu_tuple_cost + quals.per_tuple);
	cp->custom_paths = list_make2(outer_path, shard_lookup_path(root, innerrel, &lookup));
	cp->custom_private = list_make5(lookup.cols, lookup.outer_exprs, lookup.collations,
									makeInteger(lookup.batch_rows), extra->restrictlist);
	cp->custom_private = lappend(cp->custom_private, makeFloat(psprintf("%.1f", units)));
	cp->methods = &lookup_path_methods;
	add_path(joinrel, (Path *) cp);
}

/* into with the expressions of tlist's entries appended, numbered on. */
static List *
tlist_copy_from(List *tlist, List *into)
{
	ListCell   *lc;

	foreach(lc, tlist)
		into = lappend(into, makeTargetEntry(copyObject(lfirst_node(TargetEntry, lc)->expr),
											 list_length(into) + 1, NULL, false));
	return into;
}

/* The position in the inner scan's rows of the foreign table's attnum. */
static int
inner_position(List *tlist, Index relid, AttrNumber attnum)
{
	ListCell   *lc;

	foreach(lc, tlist)
	{
		TargetEntry *te = lfirst_node(TargetEntry, lc);
		Var		   *var = (Var *) te->expr;

		if (IsA(var, Var) && var->varno == (int) relid && var->varattno == attnum)
			return te->resno;
	}
	elog(ERROR, "shard_fdw: lookup key column %d is not in the scan's target list", attnum);
}

/*
 * PlanCustomPath: the rows of the node are the outer plan's columns and
 * then the foreign scan's; the join's clauses are its qual.
 */
static Plan *
lookup_plan(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path, List *tlist,
			List *clauses, List *custom_plans)
{
	CustomScan *cs = makeNode(CustomScan);
	List	   *cols = list_nth(best_path->custom_private, LOOKUP_PATH_COLS);
	List	   *join_clauses = list_nth(best_path->custom_private, LOOKUP_PATH_CLAUSES);
	Plan	   *outer_plan = linitial(custom_plans);
	Plan	   *inner_plan = lsecond(custom_plans);
	ForeignScan *fs = castNode(ForeignScan, inner_plan);
	ShardTable *t = shard_get_table(planner_rt_fetch(fs->scan.scanrelid, root)->relid);
	List	   *inner_atts = NIL;
	ListCell   *lc;

	foreach(lc, cols)
		inner_atts = lappend_int(inner_atts,
								 inner_position(inner_plan->targetlist, fs->scan.scanrelid,
												t->columns[lfirst_int(lc)].attnum));
	cs->scan.plan.targetlist = tlist;
	cs->scan.plan.qual = extract_actual_clauses(list_concat(list_copy(join_clauses), clauses),
												false);
	cs->scan.scanrelid = 0;
	cs->custom_scan_tlist = tlist_copy_from(inner_plan->targetlist,
											tlist_copy_from(outer_plan->targetlist, NIL));
	cs->custom_plans = custom_plans;
	cs->custom_exprs = copyObject(list_nth(best_path->custom_private, LOOKUP_PATH_EXPRS));
	cs->custom_private = list_make5(cols,
									list_nth(best_path->custom_private, LOOKUP_PATH_COLLATIONS),
									inner_atts,
									makeInteger(list_length(outer_plan->targetlist)),
									list_nth(best_path->custom_private, LOOKUP_PATH_BATCH_ROWS));
	cs->custom_private = lappend(cs->custom_private,
								 list_nth(best_path->custom_private, LOOKUP_PATH_READ_UNITS));
	cs->methods = &lookup_scan_methods;
	return &cs->scan.plan;
}

/* ---------------------------------------------------------------------
 * Execution
 * ---------------------------------------------------------------------
 */

/* CreateCustomScanState */
static Node *
lookup_create_state(CustomScan *cscan)
{
	LookupState *st = palloc0(sizeof(LookupState));

	NodeSetTag(st, T_CustomScanState);
	st->css.methods = &lookup_exec_methods;
	return (Node *) st;
}

/* The hash function of values of type typid, into *finfo. */
static void
hash_function(Oid typid, FmgrInfo *finfo)
{
	TypeCacheEntry *tce = lookup_type_cache(typid, TYPECACHE_HASH_PROC);

	if (!OidIsValid(tce->hash_proc))
		elog(ERROR, "shard_fdw: type %u of a lookup key has no hash function", typid);
	fmgr_info(tce->hash_proc, finfo);
}

/* BeginCustomScan: start both sides. */
static void
lookup_begin(CustomScanState *node, EState *estate, int eflags)
{
	LookupState *st = (LookupState *) node;
	CustomScan *cs = (CustomScan *) node->ss.ps.plan;
	List	   *cols = list_nth(cs->custom_private, LOOKUP_COLS);
	List	   *collations = list_nth(cs->custom_private, LOOKUP_COLLATIONS);
	List	   *inner_atts = list_nth(cs->custom_private, LOOKUP_INNER_ATTS);
	PlanState  *outer = ExecInitNode(linitial(cs->custom_plans), estate, eflags);
	PlanState  *inner = ExecInitNode(lsecond(cs->custom_plans), estate, eflags);
	ListCell   *lc;
	int			i = 0;

	node->custom_ps = list_make2(outer, inner);
	st->table = shard_get_table(exec_rt_fetch(((ForeignScan *) inner->plan)->scan.scanrelid,
											  estate)->relid);
	st->nkeys = list_length(cols);
	st->cols = palloc(sizeof(int) * st->nkeys);
	st->collations = palloc(sizeof(Oid) * st->nkeys);
	st->inner_atts = palloc(sizeof(AttrNumber) * st->nkeys);
	st->outer_hash = palloc(sizeof(FmgrInfo) * st->nkeys);
	st->inner_hash = palloc(sizeof(FmgrInfo) * st->nkeys);
	st->nouter = intVal(list_nth(cs->custom_private, LOOKUP_NOUTER));
	st->batch_rows = intVal(list_nth(cs->custom_private, LOOKUP_BATCH_ROWS));
	st->key_states = ExecInitExprList(cs->custom_exprs, &node->ss.ps);
	foreach(lc, cs->custom_exprs)
	{
		st->cols[i] = list_nth_int(cols, i);
		st->collations[i] = list_nth_oid(collations, i);
		st->inner_atts[i] = list_nth_int(inner_atts, i);
		hash_function(exprType(lfirst(lc)), &st->outer_hash[i]);
		hash_function(st->table->columns[st->cols[i]].typid, &st->inner_hash[i]);
		i++;
	}
	st->batchcxt = AllocSetContextCreate(estate->es_query_cxt, "shard_fdw lookup batch",
										 ALLOCSET_DEFAULT_SIZES);
	st->outer_slot = ExecInitExtraTupleSlot(estate, ExecGetResultType(outer),
											&TTSOpsMinimalTuple);
}

/* The hash of one key value. */
static uint32
value_hash(FmgrInfo *finfo, Oid collation, Datum value)
{
	return DatumGetUInt32(FunctionCall1Coll(finfo, collation, value));
}

/*
 * Read the next batch of outer rows into the hash and start the foreign
 * scan on their keys.  Rows whose key values are NULL, or infinite, match
 * nothing and are left out.
 */
static void
lookup_fill_batch(LookupState *st)
{
	PlanState  *outer = linitial(st->css.custom_ps);
	ExprContext *econtext = st->css.ss.ps.ps_ExprContext;
	TupleTableSlot *scan_slot = st->css.ss.ss_ScanTupleSlot;
	int			natts = scan_slot->tts_tupleDescriptor->natts;
	List	   *lookups = NIL;
	int			n = 0;
	HASHCTL		ctl;
	MemoryContext old;

	MemoryContextReset(st->batchcxt);
	st->matches = NIL;
	st->match = NULL;
	ctl.keysize = sizeof(uint32);
	ctl.entrysize = sizeof(LookupEntry);
	ctl.hcxt = st->batchcxt;
	st->hash = hash_create("shard_fdw lookup batch", 256, &ctl,
						   HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	while (n < st->batch_rows &&
		   MemoryContextMemAllocated(st->batchcxt, true) < (Size) work_mem * 1024)
	{
		TupleTableSlot *row = ExecProcNode(outer);
		const char **texts;
		uint32		hash = 0;
		bool		matchable = true;
		LookupEntry *entry;
		bool		found;
		ListCell   *lc;
		int			i = 0;

		if (TupIsNull(row))
		{
			st->outer_done = true;
			break;
		}
		slot_getallattrs(row);
		ExecClearTuple(scan_slot);
		memcpy(scan_slot->tts_values, row->tts_values, sizeof(Datum) * st->nouter);
		memcpy(scan_slot->tts_isnull, row->tts_isnull, sizeof(bool) * st->nouter);
		memset(scan_slot->tts_isnull + st->nouter, true, sizeof(bool) * (natts - st->nouter));
		ExecStoreVirtualTuple(scan_slot);
		ResetExprContext(econtext);
		econtext->ecxt_scantuple = scan_slot;
		old = MemoryContextSwitchTo(st->batchcxt);
		texts = palloc0(sizeof(char *) * Max(st->table->ncolumns, 1));
		foreach(lc, st->key_states)
		{
			ExprState  *state = lfirst(lc);
			ShardColumn col = st->table->columns[st->cols[i]];
			bool		isnull;
			Datum		value;

			MemoryContextSwitchTo(econtext->ecxt_per_tuple_memory);
			value = ExecEvalExpr(state, econtext, &isnull);
			MemoryContextSwitchTo(st->batchcxt);
			col.typid = exprType((Node *) state->expr);
			if (isnull || request_infinite_value(col.typid, value) != 0)
			{
				matchable = false;
				break;
			}
			texts[st->cols[i]] = codec_key_text(&col, value);
			hash = hash_combine(hash, value_hash(&st->outer_hash[i], st->collations[i], value));
			i++;
		}
		if (matchable)
		{
			entry = hash_search(st->hash, &hash, HASH_ENTER, &found);
			if (!found)
			{
				entry->rows = NIL;
				entry->texts = NULL;
			}
			entry->rows = lappend(entry->rows, ExecCopySlotMinimalTuple(row));
			/* a key already asked for is not asked again */
			for (i = 0; entry->texts != NULL && i < st->nkeys; i++)
				if (strcmp(entry->texts[st->cols[i]], texts[st->cols[i]]) != 0)
					break;
			if (entry->texts == NULL || i < st->nkeys)
			{
				lookups = lappend(lookups, texts);
				if (entry->texts == NULL)
					entry->texts = texts;
			}
			n++;
		}
		MemoryContextSwitchTo(old);
	}
	st->reading = lookups != NIL;
	if (st->reading)
	{
		shard_scan_set_lookups((ForeignScanState *) lsecond(st->css.custom_ps), lookups);
		st->batches++;
	}
}

/*
 * The outer rows of the batch that item row inner may join: those whose
 * key values hash as its own do, or NIL.
 */
static List *
lookup_candidates(LookupState *st, TupleTableSlot *inner)
{
	uint32		hash = 0;
	LookupEntry *entry;

	slot_getallattrs(inner);
	for (int i = 0; i < st->nkeys; i++)
	{
		int			att = st->inner_atts[i] - 1;

		if (inner->tts_isnull[att])
			return NIL;
		hash = hash_combine(hash, value_hash(&st->inner_hash[i], st->collations[i],
											 inner->tts_values[att]));
	}
	entry = hash_search(st->hash, &hash, HASH_FIND, NULL);
	return entry ? entry->rows : NIL;
}

/*
 * ExecScan's access method: the next pair of an outer row and an item of
 * the same key values, as a row of the node's scan tuple; ExecScan checks
 * the join's conditions on it.
 */
static TupleTableSlot *
lookup_next(ScanState *node)
{
	LookupState *st = (LookupState *) node;
	TupleTableSlot *scan_slot = node->ss_ScanTupleSlot;
	PlanState  *inner = lsecond(st->css.custom_ps);

	for (;;)
	{
		if (st->match != NULL)
		{
			MinimalTuple mt = lfirst(st->match);
			int			ninner = scan_slot->tts_tupleDescriptor->natts - st->nouter;

			st->match = lnext(st->matches, st->match);
			ExecStoreMinimalTuple(mt, st->outer_slot, false);
			slot_getallattrs(st->outer_slot);
			ExecClearTuple(scan_slot);
			memcpy(scan_slot->tts_values, st->outer_slot->tts_values,
				   sizeof(Datum) * st->nouter);
			memcpy(scan_slot->tts_isnull, st->outer_slot->tts_isnull,
				   sizeof(bool) * st->nouter);
			memcpy(scan_slot->tts_values + st->nouter, st->inner_slot->tts_values,
				   sizeof(Datum) * ninner);
			memcpy(scan_slot->tts_isnull + st->nouter, st->inner_slot->tts_isnull,
				   sizeof(bool) * ninner);
			return ExecStoreVirtualTuple(scan_slot);
		}
		if (st->reading)
		{
			TupleTableSlot *item = ExecProcNode(inner);

			if (!TupIsNull(item))
			{
				st->inner_slot = item;
				st->matches = lookup_candidates(st, item);
				st->match = list_head(st->matches);
				continue;
			}
			st->reading = false;
		}
		if (st->outer_done)
			return ExecClearTuple(scan_slot);
		lookup_fill_batch(st);
	}
}

/* ExecScan's recheck method: nothing to recheck (no EvalPlanQual here). */
static bool
lookup_recheck(ScanState *node, TupleTableSlot *slot)
{
	return true;
}

/* ExecCustomScan */
static TupleTableSlot *
lookup_exec(CustomScanState *node)
{
	return ExecScan(&node->ss, lookup_next, lookup_recheck);
}

/* EndCustomScan */
static void
lookup_end(CustomScanState *node)
{
	ListCell   *lc;

	foreach(lc, node->custom_ps)
		ExecEndNode(lfirst(lc));
}

/* ReScanCustomScan: start again from the first outer row. */
static void
lookup_rescan(CustomScanState *node)
{
	LookupState *st = (LookupState *) node;

	ExecReScan(linitial(node->custom_ps));
	MemoryContextReset(st->batchcxt);
	st->hash = NULL;
	st->matches = NIL;
	st->match = NULL;
	st->outer_done = false;
	st->reading = false;
}

/* ExplainCustomScan: the lookup keys, the batch size and the batches. */
static void
lookup_explain(CustomScanState *node, List *ancestors, ExplainState *es)
{
	LookupState *st = (LookupState *) node;
	CustomScan *cs = (CustomScan *) node->ss.ps.plan;
	List	   *cols = list_nth(cs->custom_private, LOOKUP_COLS);
	List	   *context = set_deparse_context_plan(es->deparse_cxt, &cs->scan.plan, ancestors);
	StringInfoData keys;
	ListCell   *lc1;
	ListCell   *lc2;

	initStringInfo(&keys);
	forboth(lc1, cols, lc2, cs->custom_exprs)
		appendStringInfo(&keys, "%s%s = %s", keys.len ? ", " : "",
						 st->table->columns[lfirst_int(lc1)].name,
						 deparse_expression(lfirst(lc2), context, true, false));
	ExplainPropertyText("Lookup Keys", keys.data, es);
	ExplainPropertyInteger("Outer Rows per Batch", NULL,
						   intVal(list_nth(cs->custom_private, LOOKUP_BATCH_ROWS)), es);
	/* an estimate of every batch's reads, like the costs */
	if (es->costs && floatVal(list_nth(cs->custom_private, LOOKUP_READ_UNITS)) >= 0)
		ExplainPropertyFloat("Estimated Read Units", NULL,
							 floatVal(list_nth(cs->custom_private, LOOKUP_READ_UNITS)), 1, es);
	if (es->analyze)
		ExplainPropertyInteger("Batches", NULL, st->batches, es);
}

/* Register the node, its setting and the join hook, when the library loads. */
void
shard_join_init(void)
{
	DefineCustomBoolVariable("shard_fdw.enable_lookup_join",
							 "Enables the planner's use of batched lookup joins with shard_fdw foreign tables.",
							 NULL, &enable_lookup_join, true, PGC_USERSET, 0,
							 NULL, NULL, NULL);
	MarkGUCPrefixReserved("shard_fdw");
	lookup_path_methods.CustomName = "Shard Lookup Join";
	lookup_path_methods.PlanCustomPath = lookup_plan;
	lookup_scan_methods.CustomName = "Shard Lookup Join";
	lookup_scan_methods.CreateCustomScanState = lookup_create_state;
	lookup_exec_methods.CustomName = "Shard Lookup Join";
	lookup_exec_methods.BeginCustomScan = lookup_begin;
	lookup_exec_methods.ExecCustomScan = lookup_exec;
	lookup_exec_methods.EndCustomScan = lookup_end;
	lookup_exec_methods.ReScanCustomScan = lookup_rescan;
	lookup_exec_methods.ExplainCustomScan = lookup_explain;
	RegisterCustomScanMethods(&lookup_scan_methods);
	prev_join_hook = set_join_pathlist_hook;
	set_join_pathlist_hook = lookup_join_paths;
}
