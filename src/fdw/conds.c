/*-------------------------------------------------------------------------
 *
 * conds.c
 *		Reading a scan's WHERE conditions for the planner: which are
 *		comparisons DynamoDB can evaluate (and whether exactly as
 *		PostgreSQL would), which fix the partition and sort keys, which
 *		collations order text as DynamoDB orders it, and what a list of
 *		conditions allows: a Query, a GetItem, a sort key condition, a
 *		FilterExpression, a read by time bucket.
 *
 *-------------------------------------------------------------------------
 */
#include "fdw/fdw.h"

#include "access/htup_details.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_database.h"
#include "catalog/pg_operator.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/clauses.h"
#include "optimizer/optimizer.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"
#include "utils/typcache.h"


/* ---------------------------------------------------------------------
 * Recognising conditions
 * ---------------------------------------------------------------------
 */

/* The column of rel that expr is (under a binary-compatible cast), or -1. */
int
conds_column_of(ShardTable *t, Index relid, Expr *expr)
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
bool
conds_byte_order_collation(Oid collation)
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
bool
conds_recognise(ShardTable *t, Index relid, Expr *clause, bool outer_ok, Cond *cond)
{
	if (IsA(clause, NullTest))
	{
		NullTest   *nt = (NullTest *) clause;

		if (nt->argisrow)
			return false;
		cond->col = conds_column_of(t, relid, nt->arg);
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
		cond->col = conds_column_of(t, relid, linitial(sa->args));
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
		cond->col = conds_column_of(t, relid, left);
		if (cond->col < 0)
		{
			cond->col = conds_column_of(t, relid, right);
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
		return conds_byte_order_collation(op->inputcollid);
	}
	return false;
}

/* ---------------------------------------------------------------------
 * Keys
 * ---------------------------------------------------------------------
 */

/* True when an equality in conds fixes column col. */
bool
conds_fixed_by(List *conds, int col)
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
		return conds_fixed_by(conds, k->column);
	for (int i = 0; i < k->template->nparts; i++)
		if (k->template->parts[i].kind == KP_COLUMN &&
			!conds_fixed_by(conds, shard_find_column(t, k->template->parts[i].text) - t->columns))
			return false;
	return true;
}

/*
 * True when conds fix the partition key of every layout of t: a Query
 * must read each layout's keys of the partition.
 */
static bool
partition_fixed(ShardTable *t, List *conds)
{
	for (int i = 0; i < t->nlayouts; i++)
		if (!key_fixed(t->layouts[i], &t->layouts[i]->pk, conds))
			return false;
	return true;
}

/*
 * The columns (indexed by column) that the equalities in conds fix: an
 * array of t->ncolumns flags.
 */
static bool *
fixed_columns(ShardTable *t, List *conds)
{
	bool	   *fixed = palloc0(sizeof(bool) * Max(t->ncolumns, 1));
	ListCell   *lc;

	foreach(lc, conds)
		fixed[((Cond *) lfirst(lc))->col] = true;
	return fixed;
}

/*
 * True when the key that a keyed read sends holds the value an equality
 * fixes column col to, fixed (indexed by column) saying which columns
 * equalities fix: col is in the partition key, or is the sort key, or is
 * a field of the sort key's template that the fields before it are all
 * fixed with (the begins_with of their text, or the whole sort key).
 * Otherwise the equality only chose the shard, if that, and DynamoDB does
 * not check it.
 */
bool
conds_in_key(ShardTable *t, const bool *fixed, int col)
{
	const KeyTemplate *tmpl = t->sk.template;

	if (shard_key_has_column(t, &t->pk, col))
		return true;
	if (!shard_key_has_column(t, &t->sk, col))
		return false;
	if (tmpl == NULL)
		return true;
	for (int p = 0; p < tmpl->nparts; p++)
	{
		int			c;

		if (tmpl->parts[p].kind != KP_COLUMN)
			continue;
		c = shard_find_column(t, tmpl->parts[p].text) - t->columns;
		if (!fixed[c])
			return false;
		if (c == col)
			return true;
	}
	return false;
}

/*
 * True when DynamoDB's order of column col's stored values is the order of
 * its values (text aside, whose collation is the caller's to check):
 * numbers, timestamps and dates stored as N, bytes as B, and text, dates
 * and timestamps (fixed-width ISO-8601) as S.  An integer stored as S
 * ("10" before "9") or text stored as N ("10" after "9") is not.
 */
static bool
stored_order_agrees(ShardColumn *col)
{
	switch (col->ddb_type)
	{
		case DDB_TYPE_N:
			return col->typid != TEXTOID;
		case DDB_TYPE_B:
			return true;
		case DDB_TYPE_S:
			return col->typid == TEXTOID || col->typid == VARCHAROID ||
				col->typid == DATEOID || col->typid == TIMESTAMPOID ||
				col->typid == TIMESTAMPTZOID;
		default:
			return false;
	}
}

/*
 * True when DynamoDB's equality of key column col's stored values is
 * PostgreSQL's: not for text stored as N, where "5.0" is 5, unless a
 * template writes its text into an S key.
 */
static bool
stored_equality_agrees(ShardTable *t, int col)
{
	return t->columns[col].ddb_type != DDB_TYPE_N || t->columns[col].typid != TEXTOID ||
		!((t->pk.template == NULL && t->pk.column == col) ||
		  (t->sk.attribute && t->sk.template == NULL && t->sk.column == col));
}

/*
 * The column the sort key's order follows, or -1: the sort key column
 * itself when its stored values sort as its values do, or the first field
 * of its template when that field's text sorts as its values do (a
 * zero-padded integer whose width holds every value of its type: a wider
 * value is written whole, "20000000000" under {n:010}, and sorts among
 * the narrower ones by its first digits; a timestamp written with fixed
 * width, or as isoformat() writes it, not a time bucket).  isoformat()
 * leaves the zero fraction out, so a timestamp without time zone sorts
 * only when what follows it sorts before "." (#, or nothing); with time
 * zone "+00:00" follows, and it always does.
 */
int
conds_sort_order_column(ShardTable *t)
{
	const char *lead;
	ShardColumn *col;
	int			width;
	const KeyPart *first;

	if (t->sk.attribute == NULL)
		return -1;
	if (t->sk.template == NULL)
		return stored_order_agrees(&t->columns[t->sk.column]) ? t->sk.column : -1;
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
	if (width > 0 && conds_field_fixed_width(t, 0))
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
bool
conds_field_fixed_width(ShardTable *t, int i)
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
List *
conds_sort_order_columns(ShardTable *t)
{
	KeyTemplate *tmpl = t->sk.template;
	int			lead = conds_sort_order_column(t);
	List	   *cols;

	if (lead < 0)
		return NIL;
	cols = list_make1_int(lead);
	for (int i = 0; tmpl && i + 2 < tmpl->nparts; i += 2)
	{
		KeyPart    *next = &tmpl->parts[i + 2];
		ShardColumn *col;

		if (!conds_field_fixed_width(t, i) || tmpl->parts[i + 1].kind != KP_LITERAL ||
			next->kind != KP_COLUMN)
			break;
		col = shard_find_column(t, next->text);
		if (next->form != KT_PLAIN)
			break;
		if (!conds_field_fixed_width(t, i + 2) && next->width == 0 &&
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
	return conds_byte_order_collation(c->collation);
}

/* ---------------------------------------------------------------------
 * Analysis
 * ---------------------------------------------------------------------
 */

/*
 * True when a key template of some layout of t holds column col: an item
 * may keep its value only inside that key.
 */
static bool
in_key_template(ShardTable *t, int col)
{
	for (int i = 0; i < t->nlayouts; i++)
	{
		ShardTable *l = t->layouts[i];

		if ((l->pk.template && shard_key_has_column(l, &l->pk, col)) ||
			(l->sk.template && shard_key_has_column(l, &l->sk, col)))
			return true;
	}
	return false;
}

/*
 * True when a filter op on column col must also keep the items that do
 * not store col as an attribute of the type the column is written as
 * (absent, or another type): the column is a field of a key template (in
 * any layout, or, read through an index, of the table's), and an item
 * written by another application may hold its value only inside that key,
 * whence it is decoded.  Such a filter lets through every item that could
 * match, and PostgreSQL's check of the rows decides.  IS NULL keeps the
 * items without the attribute by itself.
 */
bool
conds_superset_filter(ShardTable *t, int col, CondOp op)
{
	return op != COND_NULL &&
		(shard_key_uses(t, col) || (t->base && in_key_template(t->base, col)));
}

/*
 * The TTL attribute that the FilterExpression of a Query or Scan checks,
 * leaving out the items whose time to live has passed (see scan.c), or
 * NULL: the table's reads keep every item, or the attribute is a key,
 * which a Query's FilterExpression cannot name (PostgreSQL alone leaves
 * them out then, and no read is exact).
 */
const char *
conds_expiry_filter(ShardTable *t)
{
	const char *attribute = shard_expiry_attribute(t);

	return attribute && !request_is_key_attribute(t, attribute) ? attribute : NULL;
}

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

	/*
	 * a Query's FilterExpression cannot name key attributes, nor, through
	 * an index, attributes it lacks
	 */
	if (col->ddb_type == DDB_TYPE_ITEM || col->explicit_type || col->unprojected ||
		request_is_key_attribute(t, col->attribute))
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
	bool	   *fixed = fixed_columns(t, a->key_conds);
	Cond	   *lo = NULL;
	Cond	   *hi = NULL;
	ListCell   *lc;
	Datum		lo_value;
	Datum		hi_value;
	int			col;

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
 * Add condition c, which the key sent does not check, to a's filters when
 * it can be one.
 */
static void
add_filter(ShardTable *t, Analysis *a, Cond *c)
{
	if (filterable(t, c))
		a->filters = lappend(a->filters, c);
}

/*
 * Sort out conditions (RestrictInfos) into key equalities, the sort key
 * condition and filters.  outer_ok admits values from other relations
 * (join clauses of a parameterized path); open_order, see find_buckets.
 * batch_cols (an IntList) are the key columns a batched lookup join fixes
 * from its outer rows.
 */
Analysis
conds_analyse(ShardTable *t, Index relid, List *clauses, bool outer_ok, int open_order,
		List *batch_cols)
{
	Analysis	a = {0};
	List	   *sort_candidates = NIL;
	List	   *recognised = NIL;
	int			order_col = conds_sort_order_column(t);
	ListCell   *lc;
	int			used = 0;

	a.exact = shard_expiry_attribute(t) == NULL || conds_expiry_filter(t) != NULL;
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

		if (!conds_recognise(t, relid, rinfo->clause, outer_ok, c))
		{
			a.exact = false;
			continue;
		}
		c->rinfo = rinfo;
		recognised = lappend(recognised, c);
		/* every item read has its key attributes */
		if (c->op == COND_NOT_NULL &&
			((t->pk.template == NULL && t->pk.column == c->col) ||
			 (t->sk.attribute && t->sk.template == NULL && t->sk.column == c->col)))
			continue;
		if ((c->op == COND_EQ || c->op == COND_IN) &&
			shard_key_uses(t, c->col))
		{
			a.key_conds = lappend(a.key_conds, c);
			a.exact &= stored_equality_agrees(t, c->col);
		}
		else if (c->col == order_col && c->op != COND_NULL && c->op != COND_NOT_NULL &&
				 (c->op != COND_PREFIX || t->sk.template == NULL) &&
				 (c->op == COND_EQ || c->op == COND_PREFIX || order_agrees(t, c->col)))
			sort_candidates = lappend(sort_candidates, c);
		else if (filterable(t, c))
		{
			a.filters = lappend(a.filters, c);
			a.exact &= !conds_superset_filter(t, c->col, c->op);
		}
		else
			a.exact = false;
	}
	a.keyed = partition_fixed(t, a.key_conds);
	/* an index's keys repeat: no condition on them makes one item's key */
	a.full_key = a.keyed && t->index == NULL &&
		(t->sk.attribute == NULL || key_fixed(t, &t->sk, a.key_conds));

	/*
	 * An IN list on a sort key column makes whole keys to get; short of a
	 * whole key it is a filter, since a Query takes one sort key condition
	 * (also when the column is in the partition key as well).
	 */
	if (!a.full_key)
	{
		List	   *kept = NIL;

		foreach(lc, a.key_conds)
		{
			Cond	   *c = lfirst(lc);

			if (c->op == COND_IN && (!shard_key_has_column(t, &t->pk, c->col) ||
									 shard_key_has_column(t, &t->sk, c->col)))
			{
				a.exact = false;
				add_filter(t, &a, c);
			}
			else if (c->op == COND_BATCH && !shard_key_has_column(t, &t->pk, c->col) &&
					 !list_member_int(t->shard_by, c->col))
				continue;
			else
				kept = lappend(kept, c);
		}
		a.key_conds = kept;
		a.keyed = partition_fixed(t, a.key_conds);
	}
	if (!a.keyed)
		find_buckets(t, &a, recognised, open_order);

	/*
	 * An equality whose value the key sent does not hold (one that only
	 * chose the shard, or any equality of a Scan) is DynamoDB's to check
	 * only as a filter.
	 */
	{
		bool	   *fixed = fixed_columns(t, a.key_conds);

		foreach(lc, a.key_conds)
		{
			Cond	   *c = lfirst(lc);

			if (c->op != COND_BATCH && !(a.keyed && conds_in_key(t, fixed, c->col)))
			{
				a.exact = false;
				add_filter(t, &a, c);
			}
		}
	}

	/*
	 * DynamoDB takes one sort key condition: a prefix, or a lower bound, an
	 * upper bound or both (BETWEEN, which is inclusive at both ends).  The
	 * rest are filters where they can be.  An equality on the sort key
	 * column went to key_conds above.
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
	foreach(lc, sort_candidates)
		if (!list_member_ptr(a.sort_conds, lfirst(lc)))
			add_filter(t, &a, lfirst(lc));
	return a;
}
