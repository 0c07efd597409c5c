/*-------------------------------------------------------------------------
 *
 * plan.c
 *		The planner's side of a scan: which WHERE conditions become the
 *		partition key values (so that the scan is a Query, or a GetItem when
 *		the whole key is known), which become the sort key condition or the
 *		FilterExpression, which columns are fetched, whether the order of the
 *		sort key can be claimed for ORDER BY, and whether a LIMIT can be sent
 *		as each shard's Limit.
 *
 * Every condition is also kept as a local qual: PostgreSQL checks every row
 * DynamoDB returns.  A condition DynamoDB evaluates exactly as PostgreSQL
 * would is "exact"; a LIMIT goes to DynamoDB only when every condition is.
 *
 *-------------------------------------------------------------------------
 */
#include "shard_fdw.h"

#include <math.h>

#include "access/htup_details.h"
#include "access/stratnum.h"
#include "access/sysattr.h"
#include "catalog/pg_class.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_database.h"
#include "catalog/pg_operator.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/clauses.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "optimizer/planmain.h"
#include "optimizer/restrictinfo.h"
#include "parser/parsetree.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/lsyscache.h"
#include "utils/selfuncs.h"
#include "utils/syscache.h"
#include "utils/typcache.h"

#include "plan.h"

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
	bool		full_key;		/* ... and every sort key column too */
	bool		exact;			/* DynamoDB evaluates every condition exactly */
	int			bucket_col;		/* the column read bucket by bucket, or -1 */
	Cond	   *bucket_lo;		/* its lower bound ... */
	Cond	   *bucket_hi;		/* ... and its upper one */
	int			nbuckets;		/* buckets, -1 when known only at run time */
	int			bucket_shards;	/* shards read in each bucket */
	bool		bucket_over;	/* more partitions than max_partitions */
	bool		bucket_open;	/* bounded on one side, read away from it */
} Analysis;

/* Planner state of one foreign relation, in baserel->fdw_private. */
typedef struct RelInfo
{
	ShardTable *table;
	Bitmapset  *attrs_used;		/* columns the query needs, attno-offset */
	Analysis	restrict_analysis;	/* of the relation's own conditions */
} RelInfo;

/* ---------------------------------------------------------------------
 * Recognising conditions
 * ---------------------------------------------------------------------
 */

/* The column of rel that expr is (under a binary-compatible cast), or -1. */
static int
column_of(ShardTable *t, Index relid, Expr *expr)
{
	Var		   *var;

	if (IsA(expr, RelabelType))
		expr = ((RelabelType *) expr)->arg;
	if (!IsA(expr, Var))
		return -1;
	var = (Var *) expr;
	if (var->varno != (int) relid || var->varlevelsup != 0 || var->varattno <= 0)
		return -1;
	return shard_column_index(t, var->varattno);
}

/*
 * True when expr can be the value side of a condition: a constant or a
 * parameter; an expression of neither columns nor anything volatile or
 * subqueries, evaluated when the scan starts (now(), '...'::timestamptz
 * - interval '1 day'); or with outer_ok any expression that does not use
 * rel and calls nothing volatile (a join clause, which becomes a
 * parameter).
 */
static bool
is_value(Expr *expr, Index relid, bool outer_ok)
{
	if (IsA(expr, RelabelType))
		expr = ((RelabelType *) expr)->arg;
	if (IsA(expr, Const))
		return !((Const *) expr)->constisnull;
	if (IsA(expr, Param))
		return true;
	if (contain_volatile_functions((Node *) expr) || contain_subplans((Node *) expr))
		return false;
	if (!contain_var_clause((Node *) expr))
		return true;
	return outer_ok && !bms_is_member(relid, pull_varnos(NULL, (Node *) expr));
}

/*
 * True when expr can be the array of column = ANY (array): a value, or an
 * ARRAY[...] (an IN list) of values.
 */
static bool
is_array_value(Expr *expr, Index relid, bool outer_ok)
{
	ListCell   *lc;

	if (!IsA(expr, ArrayExpr))
		return is_value(expr, relid, outer_ok);
	foreach(lc, ((ArrayExpr *) expr)->elements)
		if (!is_value(lfirst(lc), relid, outer_ok))
			return false;
	return true;
}

/*
 * The number of elements of an array value, or -1 when it is known only
 * when the scan runs (a parameter).
 */
static int
array_value_length(Expr *expr)
{
	if (IsA(expr, ArrayExpr))
		return list_length(((ArrayExpr *) expr)->elements);
	if (IsA(expr, Const))
	{
		ArrayType  *array = DatumGetArrayTypeP(((Const *) expr)->constvalue);

		return ArrayGetNItems(ARR_NDIM(array), ARR_DIMS(array));
	}
	return -1;
}

/*
 * The prefix of a constant LIKE pattern of the form 'prefix%', or NULL when
 * the pattern is of another form.
 */
static char *
like_prefix(Expr *pattern)
{
	Const	   *c;
	char	   *str;
	size_t		len;

	if (!IsA(pattern, Const) || ((Const *) pattern)->constisnull)
		return NULL;
	c = (Const *) pattern;
	if (c->consttype != TEXTOID)
		return NULL;
	str = TextDatumGetCString(c->constvalue);
	len = strlen(str);
	if (len < 2 || str[len - 1] != '%')
		return NULL;
	for (size_t i = 0; i < len - 1; i++)
		if (str[i] == '%' || str[i] == '_' || str[i] == '\\')
			return NULL;
	str[len - 1] = '\0';
	return str;
}

/*
 * True when a value of type valtype is written as a value of column col's
 * type would be, so that DynamoDB compares like with like: the same type,
 * integers of any width, or text and varchar.  A timestamp compared with a
 * date column, say, is not (its text is longer, and PostgreSQL converts
 * one to the other in the session's time zone).  Nor is character(n),
 * which compares without its trailing spaces.
 */
static bool
same_text_form(ShardTable *t, int col, Oid valtype)
{
	Oid			coltype = t->columns[col].typid;

	if (coltype == BPCHAROID)
		return false;
	if (coltype == valtype)
		return true;
	if ((coltype == INT2OID || coltype == INT4OID || coltype == INT8OID) &&
		(valtype == INT2OID || valtype == INT4OID || valtype == INT8OID))
		return true;
	return (coltype == TEXTOID || coltype == VARCHAROID) &&
		(valtype == TEXTOID || valtype == VARCHAROID);
}

/* True when the comparison under collation is byte-wise equality. */
static bool
collation_exact_eq(Oid collation)
{
	return !OidIsValid(collation) || get_collation_isdeterministic(collation);
}

/*
 * The provider and the locale that collation sorts by (the database's for
 * the default collation), or false when the catalogs do not say.
 */
static bool
collation_locale(Oid collation, char *provider, char **locale)
{
	bool		is_default = collation == DEFAULT_COLLATION_OID;
	int			cache = is_default ? DATABASEOID : COLLOID;
	HeapTuple	tup = SearchSysCache1(cache, ObjectIdGetDatum(is_default ?
															 MyDatabaseId : collation));
	Datum		d;
	bool		isnull;

	if (!HeapTupleIsValid(tup))
		return false;
	*provider = is_default ? SHARD_DATABASE_PROVIDER(tup) :
		((Form_pg_collation) GETSTRUCT(tup))->collprovider;
	if (*provider == COLLPROVIDER_LIBC)
		d = SysCacheGetAttr(cache, tup, is_default ? Anum_pg_database_datcollate :
							Anum_pg_collation_collcollate, &isnull);
	else
		d = SHARD_LOCALE_ATTR(cache, tup, is_default, &isnull);
	*locale = isnull ? NULL : SHARD_LOCALE_TEXT(d);
	ReleaseSysCache(tup);
	return *locale != NULL;
}

/*
 * True when ordering under collation is byte order, as DynamoDB's is:
 * "C" and "POSIX", glibc's C.UTF-8 (code point order, which is the order
 * of UTF-8's bytes) and PostgreSQL 17's builtin C.UTF-8, named directly
 * or as the database's default.
 */
static bool
collation_byte_order(Oid collation)
{
	char		provider;
	char	   *locale;

	if (!OidIsValid(collation) || collation == C_COLLATION_OID ||
		collation == POSIX_COLLATION_OID)
		return true;
	if (!collation_locale(collation, &provider, &locale))
		return false;
	if (provider == COLLPROVIDER_LIBC)
		return strcmp(locale, "C") == 0 || strcmp(locale, "POSIX") == 0 ||
			strcmp(locale, "C.UTF-8") == 0 || strcmp(locale, "C.utf8") == 0;
	return SHARD_BUILTIN_BYTE_ORDER(provider, locale);
}

/*
 * If clause is a condition on one column of rel that DynamoDB can evaluate,
 * fill *cond and return true.  Recognised: column op value with op one of
 * the btree operators of the column type's default operator family
 * (=, <, <=, >, >=), text LIKE 'prefix%', and IS [NOT] NULL.  Comparisons
 * are only taken where DynamoDB agrees with PostgreSQL: equality under a
 * deterministic collation, order on text only under a byte-order collation.
 */
static bool
recognise(ShardTable *t, Index relid, Expr *clause, bool outer_ok, Cond *cond)
{
	if (IsA(clause, NullTest))
	{
		NullTest   *nt = (NullTest *) clause;

		if (nt->argisrow)
			return false;
		cond->col = column_of(t, relid, nt->arg);
		cond->op = nt->nulltesttype == IS_NULL ? COND_NULL : COND_NOT_NULL;
		cond->value = NULL;
		return cond->col >= 0;
	}
	if (IsA(clause, ScalarArrayOpExpr))
	{
		ScalarArrayOpExpr *sa = (ScalarArrayOpExpr *) clause;
		Expr	   *array = lsecond(sa->args);
		TypeCacheEntry *tce;

		if (!sa->useOr || list_length(sa->args) != 2)
			return false;
		cond->col = column_of(t, relid, linitial(sa->args));
		if (cond->col < 0 || !is_array_value(array, relid, outer_ok))
			return false;
		tce = lookup_type_cache(t->columns[cond->col].typid, TYPECACHE_BTREE_OPFAMILY);
		if (!OidIsValid(tce->btree_opf) ||
			get_op_opfamily_strategy(sa->opno, tce->btree_opf) != BTEqualStrategyNumber ||
			!same_text_form(t, cond->col, get_element_type(exprType((Node *) array))))
			return false;
		cond->op = COND_IN;
		cond->value = array;
		return collation_exact_eq(sa->inputcollid);
	}
	if (IsA(clause, OpExpr))
	{
		OpExpr	   *op = (OpExpr *) clause;
		Expr	   *left;
		Expr	   *right;
		Oid			opno = op->opno;
		TypeCacheEntry *tce;
		int			strategy;

		if (list_length(op->args) != 2)
			return false;
		left = linitial(op->args);
		right = lsecond(op->args);
		cond->col = column_of(t, relid, left);
		if (cond->col < 0)
		{
			cond->col = column_of(t, relid, right);
			if (cond->col < 0)
				return false;
			opno = get_commutator(opno);
			right = left;
		}
		if (!is_value(right, relid, outer_ok))
			return false;
		cond->value = right;
		if (opno == OID_TEXT_LIKE_OP)
		{
			if (like_prefix(right) == NULL || !collation_exact_eq(op->inputcollid))
				return false;
			cond->op = COND_PREFIX;
			return true;
		}
		tce = lookup_type_cache(t->columns[cond->col].typid, TYPECACHE_BTREE_OPFAMILY);
		if (!OidIsValid(tce->btree_opf) || !OidIsValid(opno) ||
			!same_text_form(t, cond->col, exprType((Node *) right)))
			return false;
		strategy = get_op_opfamily_strategy(opno, tce->btree_opf);
		switch (strategy)
		{
			case BTEqualStrategyNumber:
				cond->op = COND_EQ;
				return collation_exact_eq(op->inputcollid);
			case BTLessStrategyNumber:
				cond->op = COND_LT;
				break;
			case BTLessEqualStrategyNumber:
				cond->op = COND_LE;
				break;
			case BTGreaterStrategyNumber:
				cond->op = COND_GT;
				break;
			case BTGreaterEqualStrategyNumber:
				cond->op = COND_GE;
				break;
			default:
				return false;
		}
		return collation_byte_order(op->inputcollid);
	}
	return false;
}

/* ---------------------------------------------------------------------
 * Keys
 * ---------------------------------------------------------------------
 */

/* True when an equality in conds fixes column col. */
static bool
fixed_by(List *conds, int col)
{
	ListCell   *lc;

	foreach(lc, conds)
	{
		Cond	   *c = lfirst(lc);

		if (c->col == col && (c->op == COND_EQ || c->op == COND_IN || c->op == COND_BATCH))
			return true;
	}
	return false;
}

/* True when the equalities in conds fix every column key k is made of. */
static bool
key_fixed(ShardTable *t, ShardKey *k, List *conds)
{
	if (k->attribute == NULL)
		return false;
	if (k->template == NULL)
		return fixed_by(conds, k->column);
	for (int i = 0; i < k->template->nparts; i++)
		if (k->template->parts[i].kind == KP_COLUMN &&
			!fixed_by(conds, shard_find_column(t, k->template->parts[i].text) - t->columns))
			return false;
	return true;
}

/*
 * The column the sort key's order follows, or -1: the sort key column
 * itself, or the first field of its template when that field's text sorts
 * as its values do (a zero-padded integer, a timestamp written with fixed
 * width, or as isoformat() writes it, not a time bucket).  isoformat()
 * leaves the zero fraction out, so a timestamp without time zone sorts
 * only when what follows it sorts before "." (#, or nothing); with time
 * zone "+00:00" follows, and it always does.
 */
static int
sort_order_column(ShardTable *t)
{
	const char *lead;
	ShardColumn *col;
	int			width;
	const KeyPart *first;

	if (t->sk.attribute == NULL)
		return -1;
	if (t->sk.template == NULL)
		return t->sk.column;
	lead = keyfmt_leading_column(t->sk.template);
	if (lead == NULL)
		return -1;
	col = shard_find_column(t, lead);
	first = &t->sk.template->parts[0];
	width = first->width;
	if (keyfmt_is_bucket(first))
		return -1;
	if (first->form == KT_ISOFORMAT && col->typid == TIMESTAMPOID &&
		t->sk.template->nparts > 1 && (unsigned char) t->sk.template->parts[1].text[0] >= '.')
		return -1;
	if (width > 0 &&
		(col->typid == INT2OID || col->typid == INT4OID || col->typid == INT8OID))
		return col - t->columns;
	if (width == 0 && (col->typid == TIMESTAMPTZOID || col->typid == TIMESTAMPOID ||
							  col->typid == DATEOID))
		return col - t->columns;
	return -1;
}

/*
 * True when the text of sort key template field i is as wide for every
 * value and sorts as the values do: a zero-padded integer whose width holds
 * every value of its type, a date or a timestamp in its own form (fixed
 * width; Python's isoformat drops zero microseconds, a time bucket drops
 * the finer digits).
 */
static bool
field_fixed_width(ShardTable *t, int i)
{
	KeyPart    *p = &t->sk.template->parts[i];
	Oid			typid = shard_find_column(t, p->text)->typid;

	if (p->width > 0)
		return (typid == INT2OID && p->width >= 5) ||
			(typid == INT4OID && p->width >= 10) ||
			(typid == INT8OID && p->width >= 19);
	return p->form == KT_PLAIN &&
		(typid == TIMESTAMPTZOID || typid == TIMESTAMPOID || typid == DATEOID);
}

/*
 * The columns whose order the sort key's order follows, in order, as an
 * IntList (NIL when none): the sort key column itself, or the leading
 * field of its template (sort_order_column) and the fields after it as
 * long as each field before is of fixed width (then every key has the next
 * field at the same place, after the same literal) and each is a
 * zero-padded integer, a date, a timestamp, or text that ends the
 * template.
 */
static List *
sort_order_columns(ShardTable *t)
{
	KeyTemplate *tmpl = t->sk.template;
	int			lead = sort_order_column(t);
	List	   *cols;

	if (lead < 0)
		return NIL;
	cols = list_make1_int(lead);
	for (int i = 0; tmpl && i + 2 < tmpl->nparts; i += 2)
	{
		KeyPart    *next = &tmpl->parts[i + 2];
		ShardColumn *col;

		if (!field_fixed_width(t, i) || tmpl->parts[i + 1].kind != KP_LITERAL ||
			next->kind != KP_COLUMN)
			break;
		col = shard_find_column(t, next->text);
		if (next->form != KT_PLAIN)
			break;
		if (!field_fixed_width(t, i + 2) && next->width == 0 &&
			!((col->typid == TEXTOID || col->typid == VARCHAROID) &&
			  i + 2 == tmpl->nparts - 1))
			break;
		if (next->width > 0 && col->typid != INT2OID && col->typid != INT4OID &&
			col->typid != INT8OID)
			break;
		cols = lappend_int(cols, col - t->columns);
	}
	return cols;
}

/*
 * True when DynamoDB orders the sort key attribute as PostgreSQL orders
 * column col: numbers and bytes always, text only under a byte-order
 * collation.
 */
static bool
order_agrees(ShardTable *t, int col)
{
	ShardColumn *c = &t->columns[col];

	if (t->sk.template)
		return true;
	if (c->ddb_type == DDB_TYPE_N || c->ddb_type == DDB_TYPE_B)
		return true;
	return collation_byte_order(c->collation);
}

/* ---------------------------------------------------------------------
 * Analysis
 * ---------------------------------------------------------------------
 */

/*
 * True when condition c may go into a FilterExpression: DynamoDB compares
 * the attribute's values as PostgreSQL compares the column's, and an IN
 * list is not known to be longer than DynamoDB takes.
 */
static bool
filterable(ShardTable *t, Cond *c)
{
	ShardColumn *col = &t->columns[c->col];
	CondOp		op = c->op;

	/* a Query's FilterExpression cannot name key attributes */
	if (col->ddb_type == DDB_TYPE_ITEM || col->explicit_type ||
		route_key_uses(t, c->col))
		return false;
	if (op == COND_NULL || op == COND_NOT_NULL)
		return true;
	if (op == COND_IN && array_value_length(c->value) > MAX_IN_OPERANDS)
		return false;
	switch (col->typid)
	{
		case INT2OID:
		case INT4OID:
		case INT8OID:
		case NUMERICOID:
			return op != COND_PREFIX;
		case TEXTOID:
		case VARCHAROID:
			return true;
		case BOOLOID:
			return op == COND_EQ || op == COND_IN;
	}
	return false;
}

/* The value of a constant, or false when expr is not one. */
static bool
const_value(Expr *expr, Datum *value)
{
	if (IsA(expr, RelabelType))
		expr = ((RelabelType *) expr)->arg;
	if (!IsA(expr, Const) || ((Const *) expr)->constisnull)
		return false;
	*value = ((Const *) expr)->constvalue;
	return true;
}

/* True when a date or timestamp value is infinite. */
static bool
time_infinite(Oid typid, Datum value)
{
	if (typid == DATEOID)
		return DATE_NOT_FINITE(DatumGetDateADT(value));
	return TIMESTAMP_NOT_FINITE(DatumGetTimestamp(value));
}

/*
 * Read by time bucket when the partition key's one open column is a
 * bucketed date or timestamp (route_bucket_column) that conds bound on
 * both sides, or on one side when the rows are wanted in the order
 * away from it (open_order: 1 ascending from a lower bound, -1 descending
 * from an upper one; 0 when no such order and LIMIT are known): then a is
 * keyed, each bucket a partition.  When both bounds are constants the
 * buckets are counted here, and more partitions than max_partitions, or an
 * infinite bound, leave the read a Scan (bucket_over).
 */
static void
find_buckets(ShardTable *t, Analysis *a, List *conds, int open_order)
{
	bool	   *fixed = palloc0(sizeof(bool) * Max(t->ncolumns, 1));
	Cond	   *lo = NULL;
	Cond	   *hi = NULL;
	ListCell   *lc;
	Datum		lo_value;
	Datum		hi_value;
	int			col;

	foreach(lc, a->key_conds)
		fixed[((Cond *) lfirst(lc))->col] = true;
	col = route_bucket_column(t, fixed);
	if (col < 0)
		return;
	foreach(lc, conds)
	{
		Cond	   *c = lfirst(lc);

		if (c->col != col)
			continue;
		if ((c->op == COND_GT || c->op == COND_GE) && lo == NULL)
			lo = c;
		else if ((c->op == COND_LT || c->op == COND_LE) && hi == NULL)
			hi = c;
	}
	if ((lo == NULL && hi == NULL) ||
		((lo == NULL || hi == NULL) && open_order != (lo ? 1 : -1)))
		return;
	a->bucket_col = col;
	a->bucket_lo = lo;
	a->bucket_hi = hi;
	a->bucket_open = lo == NULL || hi == NULL;
	a->bucket_shards = route_shards_per_partition(t, fixed);
	a->nbuckets = -1;
	if (a->bucket_open && const_value((lo ? lo : hi)->value, &lo_value) &&
		time_infinite(t->columns[col].typid, lo_value))
	{
		a->bucket_over = true;
		return;
	}
	if (!a->bucket_open && const_value(lo->value, &lo_value) &&
		const_value(hi->value, &hi_value))
	{
		Oid			typid = t->columns[col].typid;
		int			max = t->max_partitions / a->bucket_shards;

		if (time_infinite(typid, lo_value) || time_infinite(typid, hi_value))
			a->bucket_over = true;
		else
			a->nbuckets = list_length(route_read_buckets(t, col,
														 route_time_usecs(typid, lo_value),
														 route_time_usecs(typid, hi_value) -
														 (hi->op == COND_LT ? 1 : 0),
														 false, max));
		if (a->bucket_over || a->nbuckets > max)
		{
			a->bucket_over = true;
			return;
		}
	}
	a->keyed = true;
}

/*
 * Sort out conditions (RestrictInfos) into key equalities, the sort key
 * condition and filters.  outer_ok admits values from other relations
 * (join clauses of a parameterized path); open_order, see find_buckets.
 * batch_cols (an IntList) are the key columns a batched lookup join fixes
 * from its outer rows.
 */
static Analysis
analyse(ShardTable *t, Index relid, List *clauses, bool outer_ok, int open_order,
		List *batch_cols)
{
	Analysis	a = {0};
	List	   *sort_candidates = NIL;
	List	   *recognised = NIL;
	int			order_col = sort_order_column(t);
	ListCell   *lc;
	int			used = 0;

	a.exact = true;
	a.bucket_col = -1;
	foreach(lc, batch_cols)
	{
		Cond	   *c = palloc0(sizeof(Cond));

		c->col = lfirst_int(lc);
		c->op = COND_BATCH;
		a.key_conds = lappend(a.key_conds, c);
	}
	foreach(lc, clauses)
	{
		RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc);
		Cond	   *c = palloc(sizeof(Cond));

		if (!recognise(t, relid, rinfo->clause, outer_ok, c))
		{
			a.exact = false;
			continue;
		}
		c->rinfo = rinfo;
		recognised = lappend(recognised, c);
		if ((c->op == COND_EQ || c->op == COND_IN) &&
			route_key_uses(t, c->col))
			a.key_conds = lappend(a.key_conds, c);
		else if (c->col == order_col && c->op != COND_NULL && c->op != COND_NOT_NULL &&
				 (c->op != COND_PREFIX || t->sk.template == NULL) &&
				 (c->op == COND_EQ || c->op == COND_PREFIX || order_agrees(t, c->col)))
			sort_candidates = lappend(sort_candidates, c);
		else if (filterable(t, c))
			a.filters = lappend(a.filters, c);
		else
			a.exact = false;
	}
	a.keyed = key_fixed(t, &t->pk, a.key_conds);
	a.full_key = a.keyed && (t->sk.attribute == NULL || key_fixed(t, &t->sk, a.key_conds));

	/*
	 * An IN list on a sort key column makes whole keys to get; short of a
	 * whole key it stays local, since a Query takes one sort key condition
	 * (also when the column is in the partition key as well).
	 */
	if (!a.full_key)
	{
		List	   *kept = NIL;

		foreach(lc, a.key_conds)
		{
			Cond	   *c = lfirst(lc);

			if (c->op == COND_IN && (!route_key_has_column(t, &t->pk, c->col) ||
									 route_key_has_column(t, &t->sk, c->col)))
				a.exact = false;
			else if (c->op == COND_BATCH && !route_key_has_column(t, &t->pk, c->col) &&
					 !list_member_int(t->shard_by, c->col))
				continue;
			else
				kept = lappend(kept, c);
		}
		a.key_conds = kept;
		a.keyed = key_fixed(t, &t->pk, a.key_conds);
	}
	if (!a.keyed)
		find_buckets(t, &a, recognised, open_order);

	/*
	 * DynamoDB takes one sort key condition: a prefix, or a lower bound, an
	 * upper bound or both (BETWEEN, which is inclusive at both ends).  The
	 * rest stay local only.  An equality on the sort key column went to
	 * key_conds above.
	 */
	{
		Cond	   *lo = NULL;
		Cond	   *hi = NULL;
		Cond	   *prefix = NULL;

		foreach(lc, sort_candidates)
		{
			Cond	   *c = lfirst(lc);

			if (c->op == COND_PREFIX && prefix == NULL)
				prefix = c;
			else if ((c->op == COND_GT || c->op == COND_GE) && lo == NULL)
				lo = c;
			else if ((c->op == COND_LT || c->op == COND_LE) && hi == NULL)
				hi = c;
		}
		if (prefix)
		{
			a.sort_conds = list_make1(prefix);
			used = 1;
		}
		else
		{
			if (lo)
				a.sort_conds = lappend(a.sort_conds, lo);
			if (hi)
				a.sort_conds = lappend(a.sort_conds, hi);
			used = list_length(a.sort_conds);
			/* BETWEEN is inclusive: an exclusive bound with it is rechecked */
			if (lo && hi && (lo->op == COND_GT || hi->op == COND_LT) &&
				t->sk.template == NULL)
				a.exact = false;
			/* a bound on a template's field is exact only before a literal */
			if (lo && hi && t->sk.template && t->sk.template->nparts == 1)
				a.exact = false;
		}
		if (used < list_length(sort_candidates))
			a.exact = false;
	}
	if (!a.keyed && a.sort_conds != NIL)
	{
		/* without a partition key there is no key condition: filter instead */
		a.sort_conds = NIL;
		a.exact = false;
	}
	return a;
}

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
#define ITEM_COST 0.02			/* reading and converting one item */
#define PAGE_ITEMS 2000.0		/* items in one page (1 MB), roughly */

/* What a read sends and reads. */
typedef struct ReadSize
{
	double		requests;
	double		rounds;			/* round trips one after another */
	double		items;			/* items read */
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

/* The items of one partition key value, over all its shards. */
static double
partition_items(PlannerInfo *root, RelOptInfo *rel, ShardTable *t)
{
	List	   *vars = NIL;

	if (!has_stats(rel))
		return default_partition_items(t);
	for (int i = 0; i < t->ncolumns; i++)
		if (route_key_has_column(t, &t->pk, i))
			vars = lappend(vars, makeVar(rel->relid, t->columns[i].attnum,
										 t->columns[i].typid, -1, InvalidOid, 0));
	if (vars == NIL)
		return rel->tuples;
	return rel->tuples / Max(shard_estimate_num_groups(root, vars, rel->tuples), 1.0);
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
		fixed &= fixed_by(a->key_conds, lfirst_int(lc));
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
 * partitions bounds the partition key values among them.
 */
static ReadSize
read_size(PlannerInfo *root, RelOptInfo *rel, ShardTable *t, const Analysis *a,
		  double lookups, double partitions)
{
	ReadSize	r;
	double		conc = shard_get_server(rel->serverid)->max_concurrency;

	if (a->full_key && t->index == NULL)
	{
		r.items = lookups;
		r.requests = ceil(lookups / BATCH_GET_MAX);
		r.rounds = ceil(r.requests / conc);
	}
	else if (a->keyed)
	{
		int			all;
		int			shards = shards_read(t, a, &all);
		double		per_stream = partition_items(root, rel, t) / all *
			sort_selectivity(root, rel, a);
		double		pages = Max(1.0, ceil(per_stream / PAGE_ITEMS));
		double		streams = shards == 1 ?
			Min(lookups, Min(partitions, lookups) * all) :
			Min(partitions, lookups) * shards;

		r.items = streams * per_stream;
		r.requests = streams * pages;
		r.rounds = ceil(streams / conc) * pages;
	}
	else
	{
		r.items = has_stats(rel) ? rel->tuples : default_table_items(t);
		r.requests = Max(conc, ceil(r.items / PAGE_ITEMS));
		r.rounds = ceil(r.requests / conc);
	}
	return r;
}

/* The cost of a read of size r returning rows rows. */
static void
read_cost(const ReadSize *r, double rows, Cost *startup, Cost *total)
{
	*startup = ROUND_TRIP_COST;
	*total = r->rounds * ROUND_TRIP_COST + r->requests * REQUEST_COST +
		r->items * ITEM_COST + rows * cpu_tuple_cost;
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
	ri->restrict_analysis = analyse(ri->table, baserel->relid,
									baserel->baserestrictinfo, false, 0, NIL);

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
		!collation_byte_order(pk->pk_eclass->ec_collation))
		return false;
	foreach(lc, pk->pk_eclass->ec_members)
	{
		EquivalenceMember *em = lfirst(lc);

		if (column_of(t, relid, em->em_expr) == col)
			return true;
	}
	return false;
}

/*
 * The pathkeys the scan can deliver when keyed: the longest prefix of the
 * query's that follows the sort key's columns (sort_order_columns), all
 * ascending or all descending; else NIL.  When it is a proper prefix,
 * PostgreSQL finishes the order (an Incremental Sort over the groups of
 * rows equal on the prefix).
 */
static List *
ordered_pathkeys(PlannerInfo *root, RelOptInfo *baserel, RelInfo *ri)
{
	List	   *cols = sort_order_columns(ri->table);
	int			n = 0;
	ListCell   *lc;

	foreach(lc, root->query_pathkeys)
	{
		PathKey    *pk = lfirst(lc);

		if (n == list_length(cols) ||
			shard_pathkey_ascending(pk) !=
			shard_pathkey_ascending(linitial_node(PathKey, root->query_pathkeys)) ||
			!pathkey_orders_column(ri->table, baserel->relid, pk, list_nth_int(cols, n)))
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

	return column_of(m->table, m->relid, em->em_expr) == m->col;
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

		if (c->op == COND_IN && route_key_has_column(t, &t->sk, c->col))
			return true;
	}
	return false;
}

/* GetForeignPaths: the plain path, an ordered one, and parameterized ones. */
void
shard_get_paths(PlannerInfo *root, RelOptInfo *baserel, Oid foreigntableid)
{
	RelInfo    *ri = baserel->fdw_private;
	Analysis   *a = &ri->restrict_analysis;
	Cost		startup;
	Cost		total;
	List	   *pathkeys;
	ListCell   *lc;
	List	   *join_conds = NIL;
	List	   *candidates;
	Relids		outer = NULL;
	ReadSize	size;

	size = read_size(root, baserel, ri->table, a, a->full_key ? baserel->rows : 1, 1);
	read_cost(&size, baserel->rows, &startup, &total);
	add_path(baserel, (Path *)
			 shard_create_foreignscan_path(root, baserel, NULL, baserel->rows,
										   startup, total, NIL, NULL, NULL, NIL));

	pathkeys = a->keyed && !sort_key_in_list(ri->table, a->key_conds) ?
		ordered_pathkeys(root, baserel, ri) : NIL;
	/*
	 * The whole order is a little cheaper than the plain read; a prefix of
	 * it dearer, past add_path's fuzz of 1 %, so that both paths stay and a
	 * Sort of every row takes the plain read (whole pages) while only an
	 * Incremental Sort, which stops early under a LIMIT, takes the prefix
	 * (pages of each shard's Limit).
	 */
	if (pathkeys != NIL)
		add_path(baserel, (Path *)
				 shard_create_foreignscan_path(root, baserel, NULL, baserel->rows,
											   startup,
											   total * (list_length(pathkeys) <
														list_length(root->query_pathkeys) ?
														1.05 : 0.99),
											   pathkeys, NULL, NULL, NIL));

	/*
	 * A time range bounded on one side is read bucket by bucket away from
	 * that side when the query wants its rows in that order and stops at a
	 * LIMIT: the path that delivers that order.
	 */
	if (!a->keyed && root->limit_tuples > 0 &&
		bms_membership(root->all_baserels) == BMS_SINGLETON &&
		(pathkeys = ordered_pathkeys(root, baserel, ri)) != NIL)
	{
		Analysis	open = analyse(ri->table, baserel->relid, baserel->baserestrictinfo,
								   false,
								   shard_pathkey_ascending(linitial_node(PathKey, pathkeys)) ?
								   1 : -1, NIL);

		if (open.keyed && open.bucket_open && open.bucket_col == sort_order_column(ri->table))
		{
			size = read_size(root, baserel, ri->table, &open, 1, 1);
			read_cost(&size, baserel->rows, &startup, &total);
			add_path(baserel, (Path *)
					 shard_create_foreignscan_path(root, baserel, NULL, baserel->rows,
												   startup, total, pathkeys,
												   NULL, NULL, NIL));
		}
	}

	/*
	 * Join clauses that fix partition key columns make a parameterized
	 * path: a nested loop then sends one keyed Query per outer row.  Those
	 * clauses are in joininfo, or implied by equivalence classes.
	 */
	candidates = list_copy(baserel->joininfo);
	for (int i = 0; i < ri->table->ncolumns; i++)
	{
		MatchColumn arg = {ri->table, baserel->relid, i};

		if (!route_key_has_column(ri->table, &ri->table->pk, i))
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
			!recognise(ri->table, baserel->relid, rinfo->clause, true, &c) ||
			c.op != COND_EQ || !route_key_has_column(ri->table, &ri->table->pk, c.col))
			continue;
		join_conds = lappend(join_conds, rinfo);
		outer = bms_union(outer, bms_difference(rinfo->clause_relids, baserel->relids));
	}
	if (join_conds != NIL && !a->keyed)
	{
		Analysis	joined = analyse(ri->table, baserel->relid,
									 list_concat(list_copy(baserel->baserestrictinfo),
												 join_conds), true, 0, NIL);

		if (joined.keyed)
		{
			ParamPathInfo *ppi = get_baserel_parampathinfo(root, baserel, outer);
			double		rows = has_stats(baserel) ? ppi->ppi_rows :
				Min(ppi->ppi_rows, default_partition_items(ri->table));

			/* one loop: a round trip for one value */
			size = read_size(root, baserel, ri->table, &joined, 1, 1);
			read_cost(&size, rows, &startup, &total);
			add_path(baserel, (Path *)
					 shard_create_foreignscan_path(root, baserel, NULL, rows,
												   startup, total, NIL, outer,
												   NULL, NIL));
		}
	}
}

/*
 * The columns to fetch, as column indexes, and the attributes to ask for;
 * *attrs is NIL when the whole item is needed.
 */
static List *
fetched_columns(RelInfo *ri, List **attrs)
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
		 * from them, the merge orders by the sort key, and errors name the
		 * item by them.
		 */
		if (t->pk.attribute)
			*attrs = list_append_unique(*attrs, makeString(t->pk.attribute));
		if (t->sk.attribute)
			*attrs = list_append_unique(*attrs, makeString(t->sk.attribute));
	}
	return cols;
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
		if (route_column_option(target, i) != NULL &&
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
	List	   *attrs;
	List	   *cols = fetched_columns(ri, &attrs);
	List	   *fdw_exprs = NIL;
	int			order = best_path->path.pathkeys == NIL ? 0 :
		shard_pathkey_ascending(linitial_node(PathKey, best_path->path.pathkeys)) ? 1 : -1;
	Analysis	a = analyse(ri->table, baserel->relid, scan_clauses,
							best_path->path.param_info != NULL, order,
							best_path->fdw_private ? linitial(best_path->fdw_private) : NIL);
	ScanOp		op = a.full_key && ri->table->index == NULL ? SCAN_OP_GET :
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
	fdw_private = lappend(fdw_private,
						  makeInteger(shard_limit(root, baserel, &a, best_path->path.pathkeys)));
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
													 sort_order_column(ri->table) == a.bucket_col,
													 root->limit_tuples <= 0,
													 a.bucket_open)));
	bucket_conds = NIL;
	if (a.bucket_col >= 0 && !a.bucket_over && a.bucket_lo)
		bucket_conds = lappend(bucket_conds, a.bucket_lo);
	if (a.bucket_col >= 0 && !a.bucket_over && a.bucket_hi)
		bucket_conds = lappend(bucket_conds, a.bucket_hi);
	fdw_private = lappend(fdw_private, flatten_conds(bucket_conds, &fdw_exprs));
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
		if (!fixed_by(conds, c) || !field_fixed_width(t, i))
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

		if (route_key_has_column(t, &t->pk, c->col))
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
 * True when the conditions of foreign relation baserel make a Query (not a
 * GetItem) that DynamoDB evaluates exactly, so that what DynamoDB counts
 * is what the query counts; *filtered says whether some of them are
 * filters, which DynamoDB applies after a Limit.
 */
bool
shard_plan_exact_query(RelOptInfo *baserel, bool *filtered)
{
	RelInfo    *ri = baserel->fdw_private;
	Analysis   *a = &ri->restrict_analysis;

	ShardTable *t = ri->table;

	*filtered = a->filters != NIL;
	/* reads bucket by bucket are left to their own executor */
	return a->keyed && a->exact && a->bucket_col < 0 &&
		!(a->full_key && t->index == NULL) &&
		!sort_key_in_list(t, a->key_conds) && key_conds_evaluated(t, a) &&
		filters_always_sent(a->filters) &&
		/* a bound on a narrow field misses the keys of wider values */
		(a->sort_conds == NIL || t->sk.template == NULL || field_fixed_width(t, 0));
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
	return col == sort_order_column(t) && collation_byte_order(collation) &&
		(t->sk.template == NULL || field_fixed_width(t, 0));
}

/*
 * True when an equality that the scan's key condition uses fixes column
 * col of foreign relation baserel to one value of the column's own type.
 */
bool
shard_plan_fixed_column(RelOptInfo *baserel, int col)
{
	RelInfo    *ri = baserel->fdw_private;
	ListCell   *lc;

	foreach(lc, ri->restrict_analysis.key_conds)
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

		if (!recognise(t, inner->relid, rinfo->clause, true, &c) || c.op != COND_EQ ||
			!route_key_uses(t, c.col) || list_member_int(lookup->cols, c.col) ||
			!bms_is_subset(pull_varnos(root, (Node *) c.value), outer->relids) ||
			!OidIsValid(lookup_type_cache(exprType((Node *) c.value),
										  TYPECACHE_HASH_PROC)->hash_proc) ||
			!OidIsValid(lookup_type_cache(t->columns[c.col].typid,
										  TYPECACHE_HASH_PROC)->hash_proc))
			continue;
		lookup->cols = lappend_int(lookup->cols, c.col);
		lookup->outer_exprs = lappend(lookup->outer_exprs, c.value);
		lookup->collations = lappend_oid(lookup->collations,
										 exprInputCollation((Node *) rinfo->clause));
	}
	if (lookup->cols == NIL)
		return false;
	a = analyse(t, inner->relid, inner->baserestrictinfo, false, 0, lookup->cols);
	lookup->whole_keys = a.full_key && t->index == NULL;
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
												  list_make1(lookup->cols));
}

/*
 * The cost of the reads of a batched lookup join of outer_rows rows: a
 * round of requests per batch, reading the partitions (or whole keys) the
 * batch's rows fix.
 */
void
shard_lookup_cost(PlannerInfo *root, RelOptInfo *inner, ShardLookup *lookup,
				  double outer_rows, Cost *startup, Cost *total)
{
	RelInfo    *ri = inner->fdw_private;
	Analysis	a = analyse(ri->table, inner->relid, inner->baserestrictinfo, false, 0,
							lookup->cols);
	double		batch = Min(Max(outer_rows, 1.0), lookup->batch_rows);
	double		batches = ceil(Max(outer_rows, 1.0) / batch);
	List	   *pk_exprs = NIL;
	ListCell   *lc1;
	ListCell   *lc2;
	double		partitions;
	ReadSize	size;

	forboth(lc1, lookup->cols, lc2, lookup->outer_exprs)
		if (route_key_has_column(ri->table, &ri->table->pk, lfirst_int(lc1)))
			pk_exprs = lappend(pk_exprs, lfirst(lc2));
	partitions = pk_exprs == NIL ? 1.0 :
		shard_estimate_num_groups(root, pk_exprs, batch);
	size = read_size(root, inner, ri->table, &a, batch, partitions);
	read_cost(&size, 0, startup, total);
	*total *= batches;
}
