/*-------------------------------------------------------------------------
 *
 * explain.c
 *		What EXPLAIN shows of a scan: the DynamoDB operation, table and
 *		index (and how the table's items that index lacks are read), the
 *		shards, layouts and time buckets it reads, its key, sort key and
 *		filter conditions as text, the merge and the Limit per shard, and
 *		under ANALYZE what the requests cost.
 *
 *-------------------------------------------------------------------------
 */
#include "fdw/fdw.h"

#include "commands/explain.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/ruleutils.h"

#include "fdw/scanstate.h"

/* How EXPLAIN shows expression i: a literal or $n. */
static char *
expr_text(ShardScanState *ss, int i)
{
	Expr	   *expr = list_nth(ss->exprs, i);

	if (IsA(expr, RelabelType))
		expr = ((RelabelType *) expr)->arg;
	if (IsA(expr, Const))
	{
		Const	   *c = (Const *) expr;
		Oid			out;
		bool		varlena;

		getTypeOutputInfo(c->consttype, &out, &varlena);
		return quote_literal_cstr(OidOutputFunctionCall(out, c->constvalue));
	}
	if (IsA(expr, Param))
		return psprintf("$%d", ((Param *) expr)->paramid);
	return deparse_expression((Node *) expr, ss->explain_context, false, false);
}

/* Conditions as text: "col op value AND ...". */
static char *
conds_text(ShardScanState *ss, ExecCond *conds, int n)
{
	static const char *const ops[] = {
		[COND_EQ] = "=", [COND_NE] = "<>", [COND_LT] = "<", [COND_LE] = "<=",
		[COND_GT] = ">", [COND_GE] = ">=", [COND_PREFIX] = "begins with",
		[COND_IN] = "= ANY", [COND_NULL] = "IS NULL", [COND_NOT_NULL] = "IS NOT NULL",
		[COND_BATCH] = "= outer rows' values",
	};
	StringInfoData buf;

	initStringInfo(&buf);
	if (n == 0)
		appendStringInfoString(&buf, "(none)");
	for (int i = 0; i < n; i++)
	{
		appendStringInfo(&buf, "%s%s %s", i ? " AND " : "",
						 ss->t->columns[conds[i].col].name, ops[conds[i].op]);
		if (conds[i].expr >= 0)
			appendStringInfo(&buf, " %s", expr_text(ss, conds[i].expr));
	}
	return buf.data;
}

/*
 * The filters as text (conds_text); a filter that also keeps the items
 * which do not store its column as an attribute of its type
 * (conds_superset_filter) says so.
 */
static char *
filters_text(ShardScanState *ss)
{
	StringInfoData buf;

	initStringInfo(&buf);
	for (int i = 0; i < ss->nfilters; i++)
	{
		ExecCond   *c = &ss->filters[i];
		ShardColumn *col = &ss->t->columns[c->col];

		appendStringInfo(&buf, "%s%s", i ? " AND " : "", conds_text(ss, c, 1));
		if (conds_superset_filter(ss->t, c->col, c->op))
			appendStringInfo(&buf, " (or not stored as %s)", ddb_type_name(col->ddb_type));
	}
	return buf.data;
}

/*
 * What becomes of the items whose time to live has passed, for EXPLAIN:
 * left out by DynamoDB's filter (a Query or Scan, see conds_expiry_filter)
 * or by the scan as they arrive, or read (include_expired).
 */
static char *
expired_text(ShardScanState *ss)
{
	ShardTable *t = ss->t;

	if (t->include_expired)
		return psprintf("read (TTL attribute %s, include_expired)",
						quote_identifier(t->ttl_attribute));
	return psprintf("left out %s (TTL attribute %s)",
					ss->op != SCAN_OP_GET && conds_expiry_filter(t) ?
					"by DynamoDB's filter" : "as they arrive",
					quote_identifier(t->ttl_attribute));
}

/*
 * True when the key condition on column col goes into the key sent to
 * DynamoDB (conds_in_key); otherwise the column only chose the shard
 * (shard_by).
 */
static bool
cond_in_key(ShardScanState *ss, int col)
{
	bool	   *fixed = palloc0(sizeof(bool) * Max(ss->t->ncolumns, 1));

	for (int i = 0; i < ss->nkey_conds; i++)
		fixed[ss->key_conds[i].col] = true;
	return conds_in_key(ss->t, fixed, col);
}

/*
 * The key conditions that go into the key sent (in_key) or that only
 * chose the shard (!in_key), as conds_text shows them; NULL when none.
 */
static char *
key_conds_text(ShardScanState *ss, bool in_key)
{
	ExecCond   *conds = palloc(sizeof(ExecCond) * Max(ss->nkey_conds, 1));
	int			n = 0;

	for (int i = 0; i < ss->nkey_conds; i++)
		if (cond_in_key(ss, ss->key_conds[i].col) == in_key)
			conds[n++] = ss->key_conds[i];
	return n > 0 || in_key ? conds_text(ss, conds, n) : NULL;
}

/* The shards the plan visits, for EXPLAIN. */
static char *
shards_text(ShardScanState *ss)
{
	ShardTable *t = ss->t;
	bool		fixed = true;
	ListCell   *lc;

	if (t->strategy == SHARD_NONE)
		return "1 (unsharded)";
	foreach(lc, t->shard_by)
	{
		bool		found = false;

		for (int i = 0; i < ss->nkey_conds; i++)
			if (ss->key_conds[i].col == lfirst_int(lc) &&
				(ss->key_conds[i].op == COND_EQ || ss->key_conds[i].op == COND_BATCH))
				found = true;
		fixed &= found;
	}
	if (t->shard_by != NIL && fixed &&
		(t->strategy == SHARD_CALCULATED || t->strategy == SHARD_RANGE))
		return psprintf("1 of %d (%s on %s)", t->shards,
						t->strategy == SHARD_CALCULATED ? "calculated" : "range",
						t->strategy == SHARD_CALCULATED ? shardhash_name(t->hash) : "boundaries");
	if (t->strategy == SHARD_DYNAMIC)
		return "every shard in the key's shard_history (dynamic)";
	return psprintf("%d%s", t->shards, t->legacy_unsharded ? " + unsharded key" : "");
}

/*
 * The layouts a read covers, newest first, for EXPLAIN: the table's own
 * and the earlier ones whose items have not all moved.
 */
static char *
layouts_text(ShardTable *t)
{
	StringInfoData buf;

	initStringInfo(&buf);
	for (int i = 0; i < t->nlayouts; i++)
		appendStringInfo(&buf, "%s%s%s", i > 0 ? "; " : "", i == 0 ? "newest: " : "",
						 layout_describe(t->layouts[i]));
	return buf.data;
}

/*
 * The time buckets the plan reads, for EXPLAIN: how many (or between which
 * bounds, when known only at run time) times the shards of each, or that
 * they are more than max_partitions and a Scan reads the table instead.
 */
static char *
buckets_text(ShardScanState *ss)
{
	ShardTable *t = ss->t;
	const char *what = psprintf("%s of %s",
								keyfmt_time_form_name(route_bucket_form(t, ss->bucket_col)),
								t->columns[ss->bucket_col].name);
	const char *shards = psprintf("%d shard%s", ss->bucket_shards,
								  ss->bucket_shards == 1 ? "" : "s");

	if (ss->bucket_over && ss->nbuckets < 0)
		return psprintf("%s, unbounded: a Scan instead", what);
	if (ss->bucket_over)
		return psprintf("%s: %d or more × %s, more than max_partitions (%d): a Scan instead",
						what, ss->nbuckets, shards, t->max_partitions);
	if (ss->nbuckets >= 0)
		return psprintf("%d × %s = %d partitions (%s)", ss->nbuckets, shards,
						ss->nbuckets * ss->bucket_shards, what);
	if (ss->bucket_open)
		return psprintf("%s from %s %s until the LIMIT is met, × %s, at most max_partitions (%d)",
						what, expr_text(ss, ss->bucket_conds[0].expr),
						ss->order > 0 ? "up" : "down", shards, t->max_partitions);
	return psprintf("%s from %s to %s, × %s", what,
					expr_text(ss, ss->bucket_conds[0].expr),
					expr_text(ss, ss->bucket_conds[1].expr), shards);
}

/*
 * The secondary index view v reads, for EXPLAIN: its name, whether it is
 * global or local, and its projection.
 */
static char *
index_text(ShardTable *v)
{
	const ShardIndex *idx = &v->base->indexes[shard_index_find(v->base, v->index)];

	return psprintf("%s (%s, %s)", idx->name, idx->local ? "local" : "global",
					index_projection_name(idx->projection));
}

/* ExplainForeignScan: what goes to DynamoDB, and with ANALYZE what it cost. */
void
shard_explain_scan(ForeignScanState *node, ExplainState *es)
{
	shard_scan_explain(node->fdw_state, es, node->ss.ps.plan);
}

/*
 * What EXPLAIN shows of a scan (ExplainForeignScan) whose plan node is plan:
 * the node its expressions are deparsed in, which names the Params a
 * subquery or join passes in.
 */
void
shard_scan_explain(ShardScanState *ss, ExplainState *es, Plan *plan)
{
	ShardTable *t = ss->t;
	static const char *const opnames[] = {
		[SCAN_OP_SCAN] = "Scan", [SCAN_OP_QUERY] = "Query",
		[SCAN_OP_GET] = "GetItem (BatchGetItem for several keys)",
	};

	ss->explain_context = set_deparse_context_plan(es->deparse_cxt, plan, NIL);
	ExplainPropertyText("DynamoDB Operation", opnames[ss->op], es);
	ExplainPropertyText("DynamoDB Table", t->table, es);
	if (t->base)
		ExplainPropertyText("DynamoDB Index", index_text(t), es);
	else if (t->index)
		ExplainPropertyText("DynamoDB Index", t->index, es);
	if (ss->fetch)
		ExplainPropertyText("Items From Table", "got by key (GetItem, BatchGetItem)", es);
	else if (request_lsi_reads_table(ss))
		ExplainPropertyText("Items From Table", "read by the Query", es);
	if (ss->bucket_col >= 0)
		ExplainPropertyText("Buckets", buckets_text(ss), es);
	if (ss->op != SCAN_OP_SCAN)
	{
		ExplainPropertyText("Shards", shards_text(ss), es);
		if (t->nlayouts > 1)
			ExplainPropertyText("Layouts", layouts_text(t), es);
		if (t->pk.format)
			ExplainPropertyText("Partition Key",
								psprintf("%s = %s", t->pk.attribute,
										 quote_literal_cstr(t->pk.format)), es);
		ExplainPropertyText("Key Condition", key_conds_text(ss, true), es);
		if (key_conds_text(ss, false))
			ExplainPropertyText("Shard Chosen By", key_conds_text(ss, false), es);
	}
	else if (plan->parallel_aware)
		parallel_explain(ss, es);
	else if (t->nlayouts > 1)
	{
		/* see in_its_pass (scan.c) */
		ExplainPropertyText("Layouts", layouts_text(t), es);
		ExplainPropertyText("Scan Passes",
							"2 (items under an earlier layout's key, then under the newest's)", es);
	}
	if (ss->nsort_conds > 0)
		ExplainPropertyText("Sort Key Condition",
							conds_text(ss, ss->sort_conds, ss->nsort_conds), es);
	if (ss->nfilters > 0 && ss->op != SCAN_OP_GET)
		ExplainPropertyText("DynamoDB Filter", filters_text(ss), es);
	if (t->ttl_attribute)
		ExplainPropertyText("Expired Items", expired_text(ss), es);
	if (ss->order != 0)
		ExplainPropertyText("Merge", psprintf("%s %s%s", t->sk.attribute,
											  ss->order > 0 ? "ASC" : "DESC",
											  scan_range_in_key_order(t) ?
											  " (range shards read one after another)" : ""),
							es);
	if (ss->read_all)
		ExplainPropertyText("Read Ahead", "every item, before the first write", es);
	if (ss->limit > 0)
		ExplainPropertyInteger("Limit per Shard", NULL,
							   request_page_limit(ss->limit,
												ss->started ? ss->merge_width :
												t->strategy == SHARD_NONE ||
												(ss->order != 0 && scan_range_in_key_order(t)) ? 1 :
												t->shards + (t->legacy_unsharded ? 1 : 0)),
							   es);
	if (ss->select_count)
		ExplainPropertyText("Select", "COUNT", es);
	else if (es->verbose)
	{
		StringInfoData buf;
		ListCell   *lc;

		initStringInfo(&buf);
		foreach(lc, ss->attrs)
			appendStringInfo(&buf, "%s%s", buf.len ? ", " : "", strVal(lfirst(lc)));
		ExplainPropertyText("Projection", ss->attrs ? buf.data : "(all attributes)", es);
	}
	/* an estimate, like the costs */
	if (es->costs && ss->read_units >= 0)
		ExplainPropertyFloat("Estimated Read Units", NULL, ss->read_units, 1, es);
	if (es->analyze)
	{
		DdbStats	total = ss->stats;
		int64		fetched = ss->fetcher ? fetch_explain_stats(ss, &total) : 0;

		if (ss->group)
			scan_add_stats(&total, ddb_group_stats(ss->group));
		if (ss->bucket_col >= 0 && !ss->bucket_over)
			ExplainPropertyInteger("Buckets Read", NULL, ss->buckets_read, es);
		if (ss->op != SCAN_OP_SCAN)
			ExplainPropertyInteger("Shards Read", NULL, ss->shards_read, es);
		else if (ss->total_segments > 0 && !plan->parallel_aware)
			ExplainPropertyInteger("Scan Passes Read", NULL,
								   (ss->shards_read + ss->total_segments - 1) / ss->total_segments, es);
		ExplainPropertyInteger("DynamoDB Requests", NULL, total.requests, es);
		ExplainPropertyInteger("DynamoDB Pages", NULL, ss->pages, es);
		ExplainPropertyInteger("DynamoDB Items Scanned", NULL, total.scanned, es);
		ExplainPropertyInteger("DynamoDB Items Returned", NULL, total.items, es);
		if (ss->fetch)
			ExplainPropertyInteger("DynamoDB Items Fetched", NULL, fetched, es);
		ExplainPropertyFloat("DynamoDB Consumed Capacity", NULL,
							 total.read_units + total.write_units, 1, es);
		if (t->max_read_units > 0)
			ExplainPropertyFloat("DynamoDB Budget Wait", "ms",
								 (double) total.budget_wait_us / 1000.0, 1, es);
		ExplainPropertyInteger("DynamoDB Retries", NULL, total.retries, es);
		ExplainPropertyInteger("DynamoDB Throttles", NULL, total.throttles, es);
	}
}
