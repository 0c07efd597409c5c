/*-------------------------------------------------------------------------
 *
 * plan.c
 *		The planner's side of a scan: with the reading of its WHERE
 *		conditions (conds.c: the partition key values that make it a Query,
 *		or a GetItem when the whole key is known, the sort key condition,
 *		the FilterExpression), its estimates and costs, which columns are
 *		fetched, whether the order of the sort key can be claimed for ORDER
 *		BY, and whether a LIMIT can be sent as each shard's Limit.
 *
 * Every condition is also kept as a local qual: PostgreSQL checks every row
 * DynamoDB returns.  A condition DynamoDB evaluates exactly as PostgreSQL
 * would is "exact"; a LIMIT goes to DynamoDB only when every condition is.
 *
 *-------------------------------------------------------------------------
 */
#include "fdw/fdw.h"

#include <math.h>

#include "access/htup_details.h"
#include "access/sysattr.h"
#include "catalog/pg_class.h"
#include "catalog/pg_statistic.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/clauses.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "optimizer/plancat.h"
#include "optimizer/planmain.h"
#include "optimizer/restrictinfo.h"
#include "parser/parsetree.h"
#include "storage/itemid.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/selfuncs.h"
#include "utils/syscache.h"
#include "utils/typcache.h"


/* Planner state of one foreign relation, in baserel->fdw_private. */
typedef struct RelInfo
{
	ShardTable *table;
	Bitmapset  *attrs_used;		/* columns the query needs, attno-offset */
	Analysis	restrict_analysis;	/* of the relation's own conditions */
	ShardTable **views;			/* by index of table->indexes: the view a
								 * read through the index plans with
								 * (shard_index_view), NULL where no read
								 * may go through it */
	Analysis   *view_analysis;	/* ... and the relation's own conditions
								 * read through it */
} RelInfo;

/* ---------------------------------------------------------------------
 * Estimates
 *
 * Every read is costed by one rule (read_cost): the round trips it waits
 * for one after another, the requests it sends and the items it reads.
 * What it reads comes from ANALYZE's figures: the table's items
 * (reltuples), and the items of one partition key value, reltuples over
 * the distinct values of the partition key's columns, spread evenly over
 * the shards; a sort key condition reads its selectivity's share of them.
 * Before ANALYZE a partition key value is taken to hold 100 items in
 * each shard it is spread over (a partition is sharded because it is
 * large), and a table 10000 items or one such partition if that is more.
 * ---------------------------------------------------------------------
 */

#define DEFAULT_TABLE_ITEMS 10000.0
#define DEFAULT_SHARD_ITEMS 100.0
#define ROUND_TRIP_COST 100.0	/* waiting for DynamoDB: a few ms */
#define REQUEST_COST 1.0		/* signing, sending, parsing one request */
#define ITEM_COST 0.1			/* DynamoDB reading one item, the backend
								 * converting it: see doc/statistics.md */
#define PAGE_ITEMS 2000.0		/* items in one page (1 MB), roughly */

/* What a read sends and reads. */
typedef struct ReadSize
{
	double		requests;
	double		rounds;			/* round trips one after another */
	double		first_rounds;	/* ... of them before the first row */
	double		items;			/* items read */
	double		streams;		/* sequences of pages (a Query's shards) */
} ReadSize;

/* True when ANALYZE has run on the relation. */
static bool
has_stats(RelOptInfo *rel)
{
	return rel->pages > 0 && rel->tuples >= 0;
}

/* Before ANALYZE: the items of one partition key value, over all its shards. */
static double
default_partition_items(ShardTable *t)
{
	return DEFAULT_SHARD_ITEMS * (t->strategy == SHARD_NONE ? 1 : Max(t->shards, 1));
}

/* Before ANALYZE: the items of the table. */
static double
default_table_items(ShardTable *t)
{
	return Max(DEFAULT_TABLE_ITEMS, default_partition_items(t));
}

/*
 * The items of one partition key value, over all its shards: those the
 * equalities of a on the partition key's columns select, when each is an
 * "=" clause of its own (so that a value ANALYZE found common counts as
 * common, a rare one as rare).  Else the table's items whose partition
 * key columns are not NULL over the distinct values of those columns in
 * the table (the product of each column's, at most the items).  Not those
 * estimate_num_groups gives, which are the values left under the query's
 * conditions: one, when they fix a column of distinct values, which would
 * make its partition the whole table.  Items with a NULL there are in no
 * partition of an index keyed by the column (a sparse index).
 */
static double
partition_items(PlannerInfo *root, RelOptInfo *rel, ShardTable *t, const Analysis *a)
{
	List	   *clauses = NIL;
	bool		all_clauses = true;
	double		values = 1;
	double		items = rel->tuples;
	ListCell   *lc;

	if (!has_stats(rel))
		return default_partition_items(t);
	foreach(lc, a->key_conds)
	{
		Cond	   *c = lfirst(lc);

		if (!shard_key_has_column(t, &t->pk, c->col))
			continue;
		if (c->rinfo == NULL || c->op != COND_EQ)
			all_clauses = false;
		else
			clauses = lappend(clauses, c->rinfo);
	}
	if (clauses != NIL && all_clauses)
		return clamp_row_est(rel->tuples *
							 clauselist_selectivity(root, clauses, rel->relid, JOIN_INNER,
													NULL));
	for (int i = 0; i < t->ncolumns; i++)
		if (shard_key_has_column(t, &t->pk, i))
		{
			VariableStatData vardata;
			bool		isdefault;

			examine_variable(root, (Node *) makeVar(rel->relid, t->columns[i].attnum,
													t->columns[i].typid, -1, InvalidOid, 0),
							 0, &vardata);
			values *= get_variable_numdistinct(&vardata, &isdefault);
			if (HeapTupleIsValid(vardata.statsTuple))
				items *= 1 - ((Form_pg_statistic) GETSTRUCT(vardata.statsTuple))->stanullfrac;
			ReleaseVariableStats(vardata);
		}
	return items / Max(Min(values, items), 1.0);
}

/*
 * The shards a Query of one partition key value reads: one when the
 * conditions fix every shard_by column of a calculated or range table,
 * else all of them.  *all gets the shards a value is spread over.
 */
static int
shards_read(ShardTable *t, const Analysis *a, int *all)
{
	bool		fixed = t->shard_by != NIL &&
		(t->strategy == SHARD_CALCULATED || t->strategy == SHARD_RANGE);
	ListCell   *lc;

	*all = t->strategy == SHARD_NONE ? 1 : Max(t->shards, 1);
	foreach(lc, t->shard_by)
		fixed &= conds_fixed_by(a->key_conds, lfirst_int(lc));
	return fixed ? 1 : *all + (t->legacy_unsharded ? 1 : 0);
}

/* The share of a partition's items that the sort key condition reads. */
static double
sort_selectivity(PlannerInfo *root, RelOptInfo *rel, const Analysis *a)
{
	List	   *clauses = NIL;
	ListCell   *lc;

	foreach(lc, a->sort_conds)
		clauses = lappend(clauses, ((Cond *) lfirst(lc))->rinfo);
	return clauselist_selectivity(root, clauses, rel->relid, JOIN_INNER, NULL);
}

/*
 * What the read that a sends reads for lookups partition key values (or
 * whole keys, for a GetItem), up to max_concurrency requests in flight.
 * partitions bounds the partition key values among them; each holds
 * part_items items, or when that is negative partition_items' estimate.
 */
static ReadSize
read_size(PlannerInfo *root, RelOptInfo *rel, ShardTable *t, const Analysis *a,
		  double lookups, double partitions, double part_items)
{
	ReadSize	r;
	double		conc = shard_get_server(rel->serverid)->max_concurrency;

	r.first_rounds = 1;
	if (a->full_key)
	{
		r.items = lookups;
		r.requests = ceil(lookups / BATCH_GET_MAX);
		r.rounds = ceil(r.requests / conc);
		r.streams = r.requests;
	}
	else if (a->keyed)
	{
		int			all;
		int			shards = shards_read(t, a, &all);
		double		per_stream = (part_items >= 0 ? part_items :
								  partition_items(root, rel, t, a)) / all *
			sort_selectivity(root, rel, a);
		double		pages = Max(1.0, ceil(per_stream / PAGE_ITEMS));
		double		streams = shards == 1 ?
			Min(lookups, Min(partitions, lookups) * all) :
			Min(partitions, lookups) * shards;

		r.items = streams * per_stream;
		r.requests = streams * pages;
		r.rounds = ceil(streams / conc) * pages;
		r.streams = streams;
	}
	else
	{
		r.items = has_stats(rel) ? rel->tuples : default_table_items(t);
		r.requests = Max(conc, ceil(r.items / PAGE_ITEMS));
		r.rounds = ceil(r.requests / conc);
		r.streams = r.requests;
	}
	return r;
}

/* The cost of a read of size r returning rows rows. */
static void
read_cost(const ReadSize *r, double rows, Cost *startup, Cost *total)
{
	*startup = r->first_rounds * ROUND_TRIP_COST;
	*total = r->rounds * ROUND_TRIP_COST + r->requests * REQUEST_COST +
		r->items * ITEM_COST + rows * cpu_tuple_cost;
}

/*
 * The read units a read of size r consumes (ddb_read_units), its items of
 * the average size ANALYZE recorded: the table's size (relpages, from
 * DynamoDB's TableSizeBytes) over its rows; each stream reads at most
 * page_limit items when a Limit is sent (0: none).  Also, in *first, what
 * it consumes when each stream reads its first item only (min and max,
 * upper.c).  -1 for both before ANALYZE.
 */
static double
read_units(RelOptInfo *rel, ShardTable *t, const Analysis *a, const ReadSize *r,
		   int page_limit, double *first)
{
	double		item_bytes;
	double		items = r->items;
	double		requests = r->requests;

	*first = -1;
	if (!has_stats(rel))
		return -1;
	item_bytes = (double) rel->pages * BLCKSZ / Max(rel->tuples, 1.0);
	if (page_limit > 0 && !a->full_key)
	{
		items = Min(items, r->streams * page_limit);
		requests = r->streams;
	}
	*first = ddb_read_units(r->streams, Min(r->items, r->streams), item_bytes, false,
							t->consistent_read);
	return ddb_read_units(requests, items, item_bytes, a->full_key, t->consistent_read);
}

/*
 * The rows of a scan of rel under its own conditions (analysed in a).
 * Without statistics: the default items of the table, of a partition key
 * value, or 1 for a whole key, each narrowed by the other conditions.
 */
static double
rel_rows(PlannerInfo *root, RelOptInfo *rel, ShardTable *t, const Analysis *a)
{
	double		sel = clauselist_selectivity(root, rel->baserestrictinfo, 0, JOIN_INNER, NULL);
	double		base;

	if (has_stats(rel))
		return clamp_row_est(rel->tuples * sel);
	base = a->full_key ? 1.0 : a->keyed ? default_partition_items(t) : default_table_items(t);
	return Min(clamp_row_est(base * sel / pow(DEFAULT_EQ_SEL, list_length(a->key_conds))),
			   base);
}

/* ---------------------------------------------------------------------
 * Reads through secondary indexes
 *
 * Each secondary index the table records (option secondary_indexes) is
 * planned as a table of its own, its view (shard_index_view, indexview.c):
 * the same analysis of the conditions, estimates, orders and LIMITs as
 * the table's own reads, over the index's keys.  A read of the relation
 * goes through the index whose path costs least, or through none.
 * ---------------------------------------------------------------------
 */

/*
 * True when a read of baserel may go through a secondary index: it is not
 * the relation an UPDATE or DELETE changes, nor asks for ctid, since a
 * row's identity is the key its item has in the table, and its shard.
 */
static bool
indexes_readable(PlannerInfo *root, RelOptInfo *baserel, RelInfo *ri)
{
	return baserel->relid != (Index) root->parse->resultRelation &&
		!bms_is_member(SelfItemPointerAttributeNumber - FirstLowInvalidHeapAttributeNumber,
					   ri->attrs_used);
}

/*
 * True when column col of view v is declared NOT NULL, or clauses
 * (RestrictInfos of relation relid) pass no row where it is NULL.
 */
static bool
column_not_null(ShardTable *v, Index relid, List *clauses, int col)
{
	ListCell   *lc;

	if (v->columns[col].not_null)
		return true;
	foreach(lc, clauses)
		if (shard_clause_needs_column((Node *) lfirst_node(RestrictInfo, lc)->clause,
									  relid, v->columns[col].attnum))
			return true;
	return false;
}

/*
 * True when every row that clauses (RestrictInfos of relation relid) pass
 * is an item of the index view v reads.  An index holds only the items
 * that have its key attributes (a sparse index), and a read through it
 * would miss the rows of the others.  So each of its keys is the table's
 * own (every item has it), or its column is declared NOT NULL or is one
 * that the clauses pass no NULL of: an equality, an IN list, a range, a
 * prefix, IS NOT NULL, any strict comparison; not IS NULL, nor an OR of
 * it with another column.  A key written from a template needs each of
 * its columns so (a row with a NULL in one is written without it).
 */
static bool
index_holds_rows(ShardTable *v, Index relid, List *clauses)
{
	const ShardKey *keys[2] = {&v->pk, &v->sk};

	for (int k = 0; k < 2; k++)
	{
		const ShardKey *key = keys[k];

		if (key->attribute == NULL || strcmp(key->attribute, v->base->pk.attribute) == 0 ||
			(v->base->sk.attribute && strcmp(key->attribute, v->base->sk.attribute) == 0))
			continue;
		if (key->template == NULL)
		{
			if (!column_not_null(v, relid, clauses, key->column))
				return false;
			continue;
		}
		for (int i = 0; i < key->template->nparts; i++)
			if (key->template->parts[i].kind == KP_COLUMN &&
				!column_not_null(v, relid, clauses,
								 shard_find_column(v, key->template->parts[i].text) - v->columns))
				return false;
	}
	return true;
}

/*
 * True when the read through view v gets the table's items by key, the
 * index lacking columns of cols (column indexes) that the query needs: a
 * GSI's (an LSI's come with its Query, which names them: DynamoDB reads
 * them from the table).
 */
static bool
fetches_from_table(ShardTable *v, List *cols)
{
	ListCell   *lc;

	if (v->base == NULL || v->index_local)
		return false;
	foreach(lc, cols)
		if (v->columns[lfirst_int(lc)].unprojected)
			return true;
	return false;
}

/*
 * The columns to fetch, as column indexes, and the attributes to ask for;
 * *attrs is NIL when the whole item is needed.
 */
static List *
fetched_columns(RelInfo *ri, ShardTable *t, List **attrs)
{
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
		 * from them, the merge orders by the sort key, and errors name the
		 * item by them.  Through an index, the table's keys too, which every
		 * index holds: they name the item in the table.  So does the TTL
		 * attribute, by which the scan leaves out the items whose time to
		 * live has passed.
		 */
		const ShardKey *keys[4] = {&t->pk, &t->sk,
			t->base ? &t->base->pk : &t->pk, t->base ? &t->base->sk : &t->sk};

		for (int k = 0; k < 4; k++)
			if (keys[k]->attribute)
				*attrs = list_append_unique(*attrs, makeString(keys[k]->attribute));
		if (shard_expiry_attribute(t))
			*attrs = list_append_unique(*attrs,
										makeString(pstrdup(shard_expiry_attribute(t))));
	}
	return cols;
}

/* The table read (index -1) or the view of the index read through. */
static ShardTable *
reader(RelInfo *ri, int index)
{
	return index < 0 ? ri->table : ri->views[index];
}

/*
 * What the read through reader(ri, index) (analysed in a) sends and reads
 * for lookups partition key values (see read_size).  An index that lacks
 * columns the query needs adds the items got from the table: a GSI's by
 * BatchGetItem, 100 keys a request, max_concurrency at a time, after the
 * index's round; an LSI's by DynamoDB in the Query, an item read more
 * each.
 */
static ReadSize
reader_size(PlannerInfo *root, RelOptInfo *rel, RelInfo *ri, int index, const Analysis *a,
			double lookups, double partitions)
{
	ShardTable *t = reader(ri, index);
	ReadSize	r = read_size(root, rel, t, a, lookups, partitions, -1);
	List	   *attrs;
	List	   *cols = fetched_columns(ri, t, &attrs);
	bool		lacking = false;
	ListCell   *lc;

	foreach(lc, cols)
		lacking |= t->columns[lfirst_int(lc)].unprojected;
	if (!lacking)
		return r;
	if (fetches_from_table(t, cols))
	{
		double		requests = ceil(r.items / BATCH_GET_MAX);
		double		conc = shard_get_server(rel->serverid)->max_concurrency;

		r.requests += requests;
		r.rounds += ceil(requests / conc);
		r.first_rounds++;
	}
	r.items *= 2;
	return r;
}

/* A scan path's fdw_private: see PathPrivate. */
static List *
path_private(List *batch_cols, int index)
{
	return list_make2(batch_cols, makeInteger(index));
}

/* ---------------------------------------------------------------------
 * Callbacks
 * ---------------------------------------------------------------------
 */

/* GetForeignRelSize: analyse the conditions and estimate the rows. */
void
shard_get_rel_size(PlannerInfo *root, RelOptInfo *baserel, Oid foreigntableid)
{
	RelInfo    *ri = palloc0(sizeof(RelInfo));
	ListCell   *lc;

	baserel->fdw_private = ri;
	ri->table = shard_get_table(foreigntableid);
	pull_varattnos((Node *) baserel->reltarget->exprs, baserel->relid, &ri->attrs_used);
	foreach(lc, baserel->baserestrictinfo)
		pull_varattnos((Node *) lfirst_node(RestrictInfo, lc)->clause,
					   baserel->relid, &ri->attrs_used);
	ri->restrict_analysis = conds_analyse(ri->table, baserel->relid,
									baserel->baserestrictinfo, false, 0, NIL);
	ri->views = palloc0(sizeof(ShardTable *) * Max(ri->table->nindexes, 1));
	ri->view_analysis = palloc0(sizeof(Analysis) * Max(ri->table->nindexes, 1));
	for (int i = 0; i < ri->table->nindexes && indexes_readable(root, baserel, ri); i++)
	{
		const char *why;

		ri->views[i] = shard_index_view(ri->table, i, &why);
		if (ri->views[i])
			ri->view_analysis[i] = conds_analyse(ri->views[i], baserel->relid,
												 baserel->baserestrictinfo, false, 0, NIL);
	}

	baserel->rows = rel_rows(root, baserel, ri->table, &ri->restrict_analysis);
}

/*
 * True when path key pk orders by column col as DynamoDB orders the sort
 * key: in the default order of the column's type, under a byte-order
 * collation (numbers, dates and bytes have none).
 */
static bool
pathkey_orders_column(ShardTable *t, Index relid, PathKey *pk, int col)
{
	TypeCacheEntry *tce = lookup_type_cache(t->columns[col].typid,
											TYPECACHE_BTREE_OPFAMILY);
	ListCell   *lc;

	if (pk->pk_opfamily != tce->btree_opf ||
		!conds_byte_order_collation(pk->pk_eclass->ec_collation))
		return false;
	foreach(lc, pk->pk_eclass->ec_members)
	{
		EquivalenceMember *em = lfirst(lc);

		if (conds_column_of(t, relid, em->em_expr) == col)
			return true;
	}
	return false;
}

/*
 * The pathkeys a keyed read of t can deliver: the longest prefix of the
 * query's that follows the sort key's columns (sort_order_columns), all
 * ascending or all descending; else NIL.  When it is a proper prefix,
 * PostgreSQL finishes the order (an Incremental Sort over the groups of
 * rows equal on the prefix).
 */
static List *
ordered_pathkeys(PlannerInfo *root, RelOptInfo *baserel, ShardTable *t)
{
	List	   *cols = conds_sort_order_columns(t);
	int			n = 0;
	ListCell   *lc;

	foreach(lc, root->query_pathkeys)
	{
		PathKey    *pk = lfirst(lc);

		if (n == list_length(cols) ||
			shard_pathkey_ascending(pk) !=
			shard_pathkey_ascending(linitial_node(PathKey, root->query_pathkeys)) ||
			!pathkey_orders_column(t, baserel->relid, pk, list_nth_int(cols, n)))
			break;
		n++;
	}
	return n == 0 ? NIL : list_truncate(list_copy(root->query_pathkeys), n);
}

/* Which column an equivalence class member must be. */
typedef struct MatchColumn
{
	ShardTable *table;
	Index		relid;
	int			col;
} MatchColumn;

/* Callback of generate_implied_equalities_for_column. */
static bool
ec_member_is_column(PlannerInfo *root, RelOptInfo *rel, EquivalenceClass *ec,
					EquivalenceMember *em, void *arg)
{
	MatchColumn *m = arg;

	return conds_column_of(m->table, m->relid, em->em_expr) == m->col;
}

/*
 * True when an IN list in key_conds fixes a sort key column: the rows are
 * whole keys to get, and a Query, which takes one sort key condition,
 * cannot read them in order.
 */
static bool
sort_key_in_list(ShardTable *t, List *key_conds)
{
	ListCell   *lc;

	foreach(lc, key_conds)
	{
		Cond	   *c = lfirst(lc);

		if (c->op == COND_IN && shard_key_has_column(t, &t->sk, c->col))
			return true;
	}
	return false;
}

/*
 * The paths of a read of baserel by its own conditions through
 * reader(ri, index): the plain path, and an ordered one.  A read through
 * an index needs its partition key fixed, and only reads where the index
 * holds every row.
 */
static void
add_read_paths(PlannerInfo *root, RelOptInfo *baserel, RelInfo *ri, int index)
{
	ShardTable *t = reader(ri, index);
	Analysis   *a = index < 0 ? &ri->restrict_analysis : &ri->view_analysis[index];
	Cost		startup;
	Cost		total;
	List	   *pathkeys;
	ReadSize	size;

	if (index >= 0 && !index_holds_rows(t, baserel->relid, baserel->baserestrictinfo))
		return;
	if (index < 0 || a->keyed)
	{
		size = reader_size(root, baserel, ri, index, a, a->full_key ? baserel->rows : 1, 1);
		read_cost(&size, baserel->rows, &startup, &total);
		add_path(baserel, (Path *)
				 shard_create_foreignscan_path(root, baserel, NULL, baserel->rows,
											   startup, total, NIL, NULL, NULL,
											   path_private(NIL, index)));

		/*
		 * The whole order is a little cheaper than the plain read; a prefix
		 * of it dearer, past add_path's fuzz of 1 %, so that both paths
		 * stay and a Sort of every row takes the plain read (whole pages)
		 * while only an Incremental Sort, which stops early under a LIMIT,
		 * takes the prefix (pages of each shard's Limit).
		 */
		pathkeys = a->keyed && !sort_key_in_list(t, a->key_conds) ?
			ordered_pathkeys(root, baserel, t) : NIL;
		if (pathkeys != NIL)
			add_path(baserel, (Path *)
					 shard_create_foreignscan_path(root, baserel, NULL, baserel->rows,
												   startup,
												   total * (list_length(pathkeys) <
															list_length(root->query_pathkeys) ?
															1.05 : 0.99),
												   pathkeys, NULL, NULL,
												   path_private(NIL, index)));
	}

	/*
	 * A time range bounded on one side is read bucket by bucket away from
	 * that side when the query wants its rows in that order and stops at a
	 * LIMIT: the path that delivers that order.
	 */
	if (!a->keyed && root->limit_tuples > 0 &&
		bms_membership(root->all_baserels) == BMS_SINGLETON &&
		(pathkeys = ordered_pathkeys(root, baserel, t)) != NIL)
	{
		Analysis	open = conds_analyse(t, baserel->relid, baserel->baserestrictinfo,
								   false,
								   shard_pathkey_ascending(linitial_node(PathKey, pathkeys)) ?
								   1 : -1, NIL);

		if (open.keyed && open.bucket_open && open.bucket_col == conds_sort_order_column(t))
		{
			size = reader_size(root, baserel, ri, index, &open, 1, 1);
			read_cost(&size, baserel->rows, &startup, &total);
			add_path(baserel, (Path *)
					 shard_create_foreignscan_path(root, baserel, NULL, baserel->rows,
												   startup, total, pathkeys,
												   NULL, NULL, path_private(NIL, index)));
		}
	}
}

/*
 * The parameterized path of a read through reader(ri, index) whose
 * partition key join clauses fix: a nested loop then sends one keyed
 * Query per outer row.  Those clauses are in joininfo, or implied by
 * equivalence classes.  Only where the relation's own conditions do not
 * fix it already, and through an index only where it holds every row.
 */
static void
add_param_path(PlannerInfo *root, RelOptInfo *baserel, RelInfo *ri, int index)
{
	ShardTable *t = reader(ri, index);
	Analysis   *a = index < 0 ? &ri->restrict_analysis : &ri->view_analysis[index];
	List	   *join_conds = NIL;
	List	   *candidates;
	List	   *clauses;
	Relids		outer = NULL;
	ListCell   *lc;
	Analysis	joined;
	ParamPathInfo *ppi;
	double		rows;
	ReadSize	size;
	Cost		startup;
	Cost		total;

	if (a->keyed)
		return;
	candidates = list_copy(baserel->joininfo);
	for (int i = 0; i < t->ncolumns; i++)
	{
		MatchColumn arg = {t, baserel->relid, i};

		if (!shard_key_has_column(t, &t->pk, i))
			continue;
		candidates = list_concat(candidates,
								 generate_implied_equalities_for_column(root, baserel,
																		ec_member_is_column,
																		&arg,
																		baserel->lateral_referencers));
	}
	foreach(lc, candidates)
	{
		RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc);
		Cond		c;

		if (!join_clause_is_movable_to(rinfo, baserel) ||
			!conds_recognise(t, baserel->relid, rinfo->clause, true, &c) ||
			c.op != COND_EQ || !shard_key_has_column(t, &t->pk, c.col))
			continue;
		join_conds = lappend(join_conds, rinfo);
		outer = bms_union(outer, bms_difference(rinfo->clause_relids, baserel->relids));
	}
	if (join_conds == NIL)
		return;
	clauses = list_concat(list_copy(baserel->baserestrictinfo), join_conds);
	joined = conds_analyse(t, baserel->relid, clauses, true, 0, NIL);
	if (!joined.keyed || (index >= 0 && !index_holds_rows(t, baserel->relid, clauses)))
		return;
	ppi = get_baserel_parampathinfo(root, baserel, outer);
	rows = has_stats(baserel) ? ppi->ppi_rows :
		Min(ppi->ppi_rows, default_partition_items(t));

	/* one loop: a round trip for one value */
	size = reader_size(root, baserel, ri, index, &joined, 1, 1);
	read_cost(&size, rows, &startup, &total);
	add_path(baserel, (Path *)
			 shard_create_foreignscan_path(root, baserel, NULL, rows,
										   startup, total, NIL, outer,
										   NULL, path_private(NIL, index)));
}

/* ---------------------------------------------------------------------
 * Parallel Scans
 *
 * A Scan of the whole table may be shared out among PostgreSQL's parallel
 * workers (parallel.c): a partial path, under a Gather.  Its workers are
 * those PostgreSQL gives a heap table of the same size, the pages the
 * rows ANALYZE counted would fill at the width it measured, so that a
 * foreign table and a local copy of it get as many.  Not relpages, which
 * is DynamoDB's TableSizeBytes: DynamoDB updates it some hours late, so
 * a table just loaded would get none.
 * ---------------------------------------------------------------------
 */

/*
 * IsForeignScanParallelSafe: a read may run in a parallel worker, which
 * opens connections of its own as the same user; but not a read of a
 * table with a capacity budget (max_read_units_per_second or
 * max_read_units_per_statement), which holds one statement's requests to
 * a rate or a cap in one backend, and in each worker would hold each
 * one's.
 */
bool
shard_scan_parallel_safe(PlannerInfo *root, RelOptInfo *rel, RangeTblEntry *rte)
{
	ShardTable *t = shard_get_table(rte->relid);

	return t->max_read_units == 0 && t->read_units_cap == 0;
}

/* The pages a heap table of rel's rows would fill. */
static double
heap_pages(RelOptInfo *rel, ShardTable *t)
{
	double		items = has_stats(rel) ? rel->tuples : default_table_items(t);
	int32		width = get_relation_data_width(t->relid, NULL);

	return ceil(items * (width + MAXALIGN(SizeofHeapTupleHeader) + sizeof(ItemIdData)) /
				BLCKSZ);
}

/*
 * The participants among which a partial path's rows are shared: the
 * workers, and the leader for the time gathering theirs leaves it (less
 * with each worker, as PostgreSQL reckons it).
 */
static double
participants(int workers)
{
	double		leader = parallel_leader_participation ? 1.0 - 0.3 * workers : 0.0;

	return workers + Max(leader, 0.0);
}

/*
 * The partial path of a plain Scan of the whole table: not a Query, not
 * through an index, nor of a table whose items move between layouts (its
 * Scan makes two passes, see scan.c).  A query that writes to the table
 * it reads (must_read_all) is never planned in parallel.  Each
 * participant reads its share of the pages and rows, max_concurrency
 * requests in flight.
 */
static void
add_partial_scan_path(PlannerInfo *root, RelOptInfo *baserel, RelInfo *ri)
{
	ShardTable *t = ri->table;
	int			workers;
	double		share;
	ReadSize	size;
	Cost		startup;
	Cost		total;
	ForeignPath *path;

	if (!baserel->consider_parallel || ri->restrict_analysis.keyed || t->nlayouts > 1)
		return;
	workers = compute_parallel_worker(baserel, heap_pages(baserel, t), -1,
									  max_parallel_workers_per_gather);
	if (workers <= 0)
		return;
	share = participants(workers);
	size = read_size(root, baserel, t, &ri->restrict_analysis, 1, 1, -1);
	read_cost(&size, baserel->rows, &startup, &total);
	path = shard_create_foreignscan_path(root, baserel, NULL,
										 clamp_row_est(baserel->rows / share),
										 startup, startup + (total - startup) / share,
										 NIL, NULL, NULL, path_private(NIL, -1));
	path->path.parallel_aware = true;
	path->path.parallel_workers = workers;
	add_partial_path(baserel, (Path *) path);
}

/*
 * GetForeignPaths: the plain path, an ordered one, and parameterized ones,
 * of reads of the table and through its indexes; a partial one of a Scan
 * shared out among parallel workers.
 */
void
shard_get_paths(PlannerInfo *root, RelOptInfo *baserel, Oid foreigntableid)
{
	RelInfo    *ri = baserel->fdw_private;

	for (int index = -1; index < ri->table->nindexes; index++)
		if (index < 0 || ri->views[index])
		{
			add_read_paths(root, baserel, ri, index);
			add_param_path(root, baserel, ri, index);
		}
	add_partial_scan_path(root, baserel, ri);
}

/* Flatten conditions into (column, op, fdw_exprs index) triples. */
static List *
flatten_conds(List *conds, List **fdw_exprs)
{
	List	   *result = NIL;
	ListCell   *lc;

	foreach(lc, conds)
	{
		Cond	   *c = lfirst(lc);

		result = lappend_int(result, c->col);
		result = lappend_int(result, c->op);
		if (c->value)
		{
			*fdw_exprs = lappend(*fdw_exprs, c->value);
			result = lappend_int(result, list_length(*fdw_exprs) - 1);
		}
		else
			result = lappend_int(result, -1);
	}
	return result;
}

/*
 * The rows a LIMIT (with its OFFSET) lets the scan stop after, which sets
 * each shard's Limit; 0 unless this relation is the whole query, every
 * condition is exact, and the rows come in the query's order (or the query
 * asks for none).
 */
static int
shard_limit(PlannerInfo *root, RelOptInfo *baserel, Analysis *a, List *pathkeys)
{
	if (root->limit_tuples <= 0 || !a->exact ||
		bms_membership(root->all_baserels) != BMS_SINGLETON ||
		(root->query_pathkeys != NIL && pathkeys == NIL))
		return 0;
	return (int) Min(root->limit_tuples, 1000000.0);
}

/*
 * True when query q adds items to the DynamoDB table that foreign table
 * relid (t) reads: it is an INSERT into a foreign table on the same server
 * and DynamoDB table, or an UPDATE of one that may move items to a new key:
 * it assigns a column of the item key or one that chooses a calculated or
 * range shard, or the table has legacy unsharded items or earlier layouts
 * (an update moves their items into the newest layout's shard).
 */
static bool
query_adds_items(Query *q, Oid relid, ShardTable *t)
{
	RangeTblEntry *rte;
	ShardTable *target;
	Bitmapset  *updated;

	if ((q->commandType != CMD_INSERT && q->commandType != CMD_UPDATE) ||
		q->resultRelation == 0)
		return false;
	rte = rt_fetch(q->resultRelation, q->rtable);
	if (rte->relkind != RELKIND_FOREIGN_TABLE ||
		GetForeignTable(rte->relid)->serverid != GetForeignTable(relid)->serverid)
		return false;
	target = shard_get_table(rte->relid);
	if (strcmp(target->table, t->table) != 0)
		return false;
	if (q->commandType == CMD_INSERT || target->legacy_unsharded || target->nlayouts > 1)
		return true;
	updated = SHARD_UPDATED_COLS(q, rte);
	for (int i = 0; i < target->ncolumns; i++)
		if (shard_column_option(target, i) != NULL &&
			bms_is_member(target->columns[i].attnum - FirstLowInvalidHeapAttributeNumber,
						  updated))
			return true;
	return false;
}

/*
 * True when the scan must read every item before its first row is used:
 * the query it is planned for, or one it is part of (INSERT ... SELECT),
 * adds items to its DynamoDB table.  DynamoDB reads no snapshot: the later
 * pages of the scan would hold the items written meanwhile, and an UPDATE
 * that moves items ahead of the scan would meet them again and again.
 */
static bool
must_read_all(PlannerInfo *root, Oid relid, ShardTable *t)
{
	for (; root != NULL; root = root->parent_root)
		if (query_adds_items(root->parse, relid, t))
			return true;
	return false;
}

/*
 * The read units the plan of best_path is estimated to consume, as
 * SCAN_PRIVATE_READ_UNITS has them: per execution (a nested loop's: per
 * outer row), none for a batched lookup's scan, whose join node shows
 * those of every batch (shard_lookup_cost).
 */
static List *
estimated_read_units(PlannerInfo *root, RelOptInfo *baserel, ShardTable *t,
					 Analysis *a, ForeignPath *best_path)
{
	ReadSize	size;
	int			limit = shard_limit(root, baserel, a, best_path->path.pathkeys);
	double		units;
	double		first;

	if (best_path->fdw_private != NIL &&
		list_nth(best_path->fdw_private, PATH_PRIVATE_BATCH_COLS) != NIL)
		return list_make2(makeFloat(pstrdup("-1")), makeFloat(pstrdup("-1")));
	size = read_size(root, baserel, t, a, a->full_key ? best_path->path.rows : 1, 1, -1);
	units = read_units(baserel, t, a, &size,
					   limit > 0 ? request_page_limit(limit, (int) Max(size.streams, 1)) : 0,
					   &first);
	return list_make2(makeFloat(psprintf("%.1f", units)), makeFloat(psprintf("%.1f", first)));
}

/*
 * GetForeignPlan: carry the decisions to the executor in fdw_private.  The
 * join clauses of a parameterized path still name the outer relation here;
 * PostgreSQL replaces those Vars in fdw_exprs with parameters afterwards.
 */
ForeignScan *
shard_get_plan(PlannerInfo *root, RelOptInfo *baserel, Oid foreigntableid,
			   ForeignPath *best_path, List *tlist, List *scan_clauses,
			   Plan *outer_plan)
{
	RelInfo    *ri = baserel->fdw_private;
	int			index = best_path->fdw_private ?
		intVal(list_nth(best_path->fdw_private, PATH_PRIVATE_INDEX)) : -1;
	ShardTable *t = reader(ri, index);
	List	   *attrs;
	List	   *cols = fetched_columns(ri, t, &attrs);
	List	   *fdw_exprs = NIL;
	int			order = best_path->path.pathkeys == NIL ? 0 :
		shard_pathkey_ascending(linitial_node(PathKey, best_path->path.pathkeys)) ? 1 : -1;
	Analysis	a = conds_analyse(t, baserel->relid, scan_clauses,
							best_path->path.param_info != NULL, order,
							best_path->fdw_private ?
							list_nth(best_path->fdw_private, PATH_PRIVATE_BATCH_COLS) : NIL);
	ScanOp		op = a.full_key ? SCAN_OP_GET :
		a.keyed ? SCAN_OP_QUERY : SCAN_OP_SCAN;
	List	   *fdw_private;
	List	   *bucket_conds;

	if (op == SCAN_OP_GET && order != 0)
		op = SCAN_OP_QUERY;

	fdw_private = list_make4(makeInteger(op), cols, attrs,
							 flatten_conds(a.key_conds, &fdw_exprs));
	fdw_private = lappend(fdw_private, flatten_conds(a.sort_conds, &fdw_exprs));
	fdw_private = lappend(fdw_private, flatten_conds(a.filters, &fdw_exprs));
	fdw_private = lappend(fdw_private, makeInteger(order));
	/* the participants of a parallel Scan each read their segments whole */
	fdw_private = lappend(fdw_private,
						  makeInteger(best_path->path.parallel_aware ? 0 :
									  shard_limit(root, baserel, &a, best_path->path.pathkeys)));
	fdw_private = lappend(fdw_private,
						  makeBoolean(bms_is_member(SelfItemPointerAttributeNumber -
													FirstLowInvalidHeapAttributeNumber,
													ri->attrs_used)));
	fdw_private = lappend(fdw_private,
						  makeBoolean(must_read_all(root, foreigntableid, ri->table)));
	fdw_private = lappend(fdw_private,
						  list_concat(list_make4_int(a.bucket_col, a.nbuckets,
													 a.bucket_shards, a.bucket_over),
									  list_make3_int(a.bucket_col >= 0 &&
													 conds_sort_order_column(t) == a.bucket_col,
													 root->limit_tuples <= 0,
													 a.bucket_open)));
	bucket_conds = NIL;
	if (a.bucket_col >= 0 && !a.bucket_over && a.bucket_lo)
		bucket_conds = lappend(bucket_conds, a.bucket_lo);
	if (a.bucket_col >= 0 && !a.bucket_over && a.bucket_hi)
		bucket_conds = lappend(bucket_conds, a.bucket_hi);
	fdw_private = lappend(fdw_private, flatten_conds(bucket_conds, &fdw_exprs));
	fdw_private = lappend(fdw_private, t->base ? makeString(pstrdup(t->index)) : NULL);
	fdw_private = lappend(fdw_private, makeBoolean(fetches_from_table(t, cols)));
	fdw_private = lappend(fdw_private, estimated_read_units(root, baserel, t, &a, best_path));
	return make_foreignscan(tlist, extract_actual_clauses(scan_clauses, false),
							baserel->relid, fdw_exprs, fdw_private, NIL, NIL,
							outer_plan);
}

/* ---------------------------------------------------------------------
 * Aggregates (upper.c)
 * ---------------------------------------------------------------------
 */

/*
 * True when column col is among the leading fields of the sort key
 * template that the equalities in conds fix, each of fixed width, so that
 * the begins_with of their text holds exactly the keys with those values.
 */
static bool
in_fixed_prefix(ShardTable *t, List *conds, int col)
{
	KeyTemplate *tmpl = t->sk.template;

	for (int i = 0; tmpl && i < tmpl->nparts; i += 2)
	{
		int			c;

		if (tmpl->parts[i].kind != KP_COLUMN)
			return false;
		c = shard_find_column(t, tmpl->parts[i].text) - t->columns;
		if (!conds_fixed_by(conds, c) || !conds_field_fixed_width(t, i))
			return false;
		if (c == col)
			return true;
	}
	return false;
}

/*
 * True when DynamoDB itself checks every key equality of a: each fixes a
 * column of the partition key, or of the sort key's part of the key
 * condition (the whole sort key, or leading fields of fixed width, which
 * then take the place of any sort key bound), and none only chooses a
 * shard.
 */
static bool
key_conds_evaluated(ShardTable *t, Analysis *a)
{
	ListCell   *lc;

	foreach(lc, a->key_conds)
	{
		Cond	   *c = lfirst(lc);

		if (shard_key_has_column(t, &t->pk, c->col))
			continue;
		if (a->sort_conds != NIL ||
			!(a->full_key || in_fixed_prefix(t, a->key_conds, c->col)))
			return false;
	}
	return true;
}

/*
 * True when filter c goes into the FilterExpression whatever the scan
 * meets when it runs: its value is a constant (a parameter may turn out a
 * NaN or a longer list) that DynamoDB can hold, not a NaN or an infinity,
 * or an IN list of at most MAX_IN_OPERANDS of them.  request.c leaves any
 * other filter to the local check alone.  Adds its operands to *operands.
 */
static bool
filter_always_sent(Cond *c, int *operands)
{
	Expr	   *value = c->value;
	Const	   *k;
	Datum	   *elems;
	bool	   *nulls;
	int			n;
	int16		elmlen;
	bool		elmbyval;
	char		elmalign;
	Oid			elemtype;

	(*operands)++;
	if (value && IsA(value, RelabelType))
		value = ((RelabelType *) value)->arg;
	if (value == NULL || c->op == COND_PREFIX)
		return true;
	if (!IsA(value, Const))
		return false;
	k = (Const *) value;
	if (k->constisnull)
		return true;
	if (c->op != COND_IN)
		return request_infinite_value(k->consttype, k->constvalue) == 0;
	elemtype = get_element_type(k->consttype);
	get_typlenbyvalalign(elemtype, &elmlen, &elmbyval, &elmalign);
	deconstruct_array(DatumGetArrayTypeP(k->constvalue), elemtype, elmlen, elmbyval,
					  elmalign, &elems, &nulls, &n);
	*operands += n;
	for (int i = 0; i < n; i++)
		if (!nulls[i] && request_infinite_value(elemtype, elems[i]) != 0)
			return false;
	return n <= MAX_IN_OPERANDS;
}

/*
 * True when the filters of a all go into the FilterExpression whatever
 * happens (filter_always_sent), and their expression stays well within
 * DynamoDB's 4 KB: at most 80 bytes a condition and 10 an operand.
 */
static bool
filters_always_sent(List *filters)
{
	int			operands = 0;
	ListCell   *lc;

	foreach(lc, filters)
		if (!filter_always_sent(lfirst(lc), &operands))
			return false;
	return list_length(filters) * 80 + operands * 10 <= 4000;
}

/*
 * True when conditions a make the read of t a Query (not a GetItem) that
 * DynamoDB evaluates exactly, so that what DynamoDB counts is what the
 * query counts.
 */
static bool
exact_query(ShardTable *t, Analysis *a)
{
	/* reads bucket by bucket are left to their own executor */
	return a->keyed && a->exact && a->bucket_col < 0 &&
		!a->full_key &&
		!sort_key_in_list(t, a->key_conds) && key_conds_evaluated(t, a) &&
		filters_always_sent(a->filters) &&
		/* a bound on a narrow field misses the keys of wider values */
		(a->sort_conds == NIL || t->sk.template == NULL || conds_field_fixed_width(t, 0));
}

/* A read and its cost, for list_sort. */
typedef struct CostedRead
{
	int			index;
	Cost		total;
} CostedRead;

/* list_sort comparator: CostedReads, the cheapest first. */
static int
costed_read_cmp(const ListCell *a, const ListCell *b)
{
	Cost		ca = ((CostedRead *) lfirst(a))->total;
	Cost		cb = ((CostedRead *) lfirst(b))->total;

	return ca < cb ? -1 : ca > cb ? 1 : 0;
}

/*
 * The reads of foreign relation baserel by its own conditions whose Query
 * DynamoDB evaluates exactly (exact_query), for the aggregates it
 * computes: the table's own (-1), and those through the indexes holding
 * every row, as an IntList of indexes, the cheapest first.
 */
List *
shard_plan_exact_queries(PlannerInfo *root, RelOptInfo *baserel)
{
	RelInfo    *ri = baserel->fdw_private;
	List	   *reads = NIL;
	List	   *result = NIL;
	ListCell   *lc;

	for (int index = -1; index < ri->table->nindexes; index++)
	{
		ShardTable *t = reader(ri, index);
		Analysis   *a = index < 0 ? &ri->restrict_analysis : &ri->view_analysis[index];
		CostedRead *read;
		ReadSize	size;
		Cost		startup;

		if (t == NULL || !exact_query(t, a) ||
			(index >= 0 && !index_holds_rows(t, baserel->relid, baserel->baserestrictinfo)))
			continue;
		read = palloc(sizeof(CostedRead));
		read->index = index;
		size = reader_size(root, baserel, ri, index, a, 1, 1);
		read_cost(&size, 0, &startup, &read->total);
		reads = lappend(reads, read);
	}
	list_sort(reads, costed_read_cmp);
	foreach(lc, reads)
		result = lappend_int(result, ((CostedRead *) lfirst(lc))->index);
	return result;
}

/* Whether the read of baserel through index (-1: none) has filters. */
bool
shard_plan_filtered(RelOptInfo *baserel, int index)
{
	RelInfo    *ri = baserel->fdw_private;

	return (index < 0 ? ri->restrict_analysis.filters :
			ri->view_analysis[index].filters) != NIL;
}

/* What reads baserel: its table (index -1), or the view of an index. */
ShardTable *
shard_plan_table(RelOptInfo *baserel, int index)
{
	return reader(baserel->fdw_private, index);
}

/* The fdw_private of a ForeignPath that reads through index (-1: none). */
List *
shard_plan_path_private(int index)
{
	return path_private(NIL, index);
}

/*
 * True when reading the sort key in order reads column col in its order
 * under collation: col leads the sort key's order, a template's field with
 * the same width for every value, and sorts as its bytes do (see
 * pathkey_orders_column).
 */
bool
shard_plan_sort_column(ShardTable *t, int col, Oid collation)
{
	return col == conds_sort_order_column(t) && conds_byte_order_collation(collation) &&
		(t->sk.template == NULL || conds_field_fixed_width(t, 0));
}

/*
 * True when an equality that the key condition of the read of foreign
 * relation baserel through index (-1: none) uses fixes column col to one
 * value of the column's own type.
 */
bool
shard_plan_fixed_column(RelOptInfo *baserel, int index, int col)
{
	RelInfo    *ri = baserel->fdw_private;
	ListCell   *lc;

	foreach(lc, index < 0 ? ri->restrict_analysis.key_conds :
			ri->view_analysis[index].key_conds)
	{
		Cond	   *c = lfirst(lc);

		if (c->col == col && c->op == COND_EQ &&
			exprType((Node *) c->value) == ri->table->columns[col].typid)
			return true;
	}
	return false;
}

/* ---------------------------------------------------------------------
 * Batched lookup joins (executed in join.c)
 * ---------------------------------------------------------------------
 */

/* Outer rows per batch of Queries, and per BatchGetItem. */
#define LOOKUP_BATCH_ROWS 10000

/*
 * Find in restrictlist (a join's clauses) the equalities that fix key
 * columns of foreign relation inner with values of relation outer; true
 * when they make every read keyed, filling *lookup.  Not for a relation
 * that the statement modifies or that must be read whole first.
 */
bool
shard_lookup_keys(PlannerInfo *root, RelOptInfo *inner, RelOptInfo *outer,
				  List *restrictlist, ShardLookup *lookup)
{
	RelInfo    *ri = inner->fdw_private;
	ShardTable *t = ri->table;
	ListCell   *lc;
	Analysis	a;

	memset(lookup, 0, sizeof(*lookup));
	if (inner->relid == (Index) root->parse->resultRelation ||
		bms_is_member(SelfItemPointerAttributeNumber - FirstLowInvalidHeapAttributeNumber,
					  ri->attrs_used) ||
		must_read_all(root, planner_rt_fetch(inner->relid, root)->relid, t))
		return false;
	foreach(lc, restrictlist)
	{
		RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc);
		Cond		c;

		if (!conds_recognise(t, inner->relid, rinfo->clause, true, &c) || c.op != COND_EQ ||
			!shard_key_uses(t, c.col) || list_member_int(lookup->cols, c.col) ||
			!bms_is_subset(pull_varnos(root, (Node *) c.value), outer->relids) ||
			!OidIsValid(lookup_type_cache(exprType((Node *) c.value),
										  TYPECACHE_HASH_PROC)->hash_proc) ||
			!OidIsValid(lookup_type_cache(t->columns[c.col].typid,
										  TYPECACHE_HASH_PROC)->hash_proc))
			continue;
		lookup->cols = lappend_int(lookup->cols, c.col);
		lookup->outer_exprs = lappend(lookup->outer_exprs, c.value);
		if (shard_key_has_column(t, &t->pk, c.col))
			lookup->pk_clauses = lappend(lookup->pk_clauses, rinfo);
		lookup->collations = lappend_oid(lookup->collations,
										 exprInputCollation((Node *) rinfo->clause));
	}
	if (lookup->cols == NIL)
		return false;
	a = conds_analyse(t, inner->relid, inner->baserestrictinfo, false, 0, lookup->cols);
	lookup->whole_keys = a.full_key;
	lookup->batch_rows = lookup->whole_keys ?
		(int) BATCH_GET_MAX * shard_get_server(inner->serverid)->max_concurrency :
		LOOKUP_BATCH_ROWS;
	return a.keyed;
}

/*
 * The path of the foreign scan under a batched lookup join: it reads what
 * the outer rows of each batch fix (COND_BATCH conditions).
 */
Path *
shard_lookup_path(PlannerInfo *root, RelOptInfo *inner, ShardLookup *lookup)
{
	return (Path *) shard_create_foreignscan_path(root, inner, NULL, inner->rows, 0, 0,
												  NIL, NULL, NULL,
												  path_private(lookup->cols, -1));
}

/*
 * The cost of the reads of a batched lookup join of outer_rows rows: a
 * round of requests per batch, reading the partitions (or whole keys) the
 * batch's rows fix; *units gets the read units they consume (-1 before
 * ANALYZE).  A partition holds the inner items that the join's
 * equalities on the partition key keep for an outer row (their join
 * selectivity under sjinfo, which matches the two sides' common values).
 */
void
shard_lookup_cost(PlannerInfo *root, RelOptInfo *inner, ShardLookup *lookup,
				  SpecialJoinInfo *sjinfo, double outer_rows, Cost *startup,
				  Cost *total, double *units)
{
	RelInfo    *ri = inner->fdw_private;
	Analysis	a = conds_analyse(ri->table, inner->relid, inner->baserestrictinfo, false, 0,
							lookup->cols);
	double		batch = Min(Max(outer_rows, 1.0), lookup->batch_rows);
	double		batches = ceil(Max(outer_rows, 1.0) / batch);
	List	   *pk_exprs = NIL;
	ListCell   *lc1;
	ListCell   *lc2;
	double		partitions;
	double		part_items = -1;
	double		first;
	ReadSize	size;

	if (has_stats(inner) && lookup->pk_clauses != NIL)
		part_items = clamp_row_est(inner->tuples *
								   clauselist_selectivity(root, lookup->pk_clauses, 0,
														  sjinfo->jointype, sjinfo));
	forboth(lc1, lookup->cols, lc2, lookup->outer_exprs)
		if (shard_key_has_column(ri->table, &ri->table->pk, lfirst_int(lc1)))
			pk_exprs = lappend(pk_exprs, lfirst(lc2));
	partitions = pk_exprs == NIL ? 1.0 :
		shard_estimate_num_groups(root, pk_exprs, batch);
	size = read_size(root, inner, ri->table, &a, batch, partitions, part_items);
	read_cost(&size, 0, startup, total);
	*total *= batches;
	*units = read_units(inner, ri->table, &a, &size, 0, &first);
	if (*units > 0)
		*units *= batches;
}
