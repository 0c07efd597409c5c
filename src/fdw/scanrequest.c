/*-------------------------------------------------------------------------
 *
 * scanrequest.c
 *		The requests of a scan, built from its state when it runs: the
 *		expressions' attribute names and values, the per-shard Query's
 *		KeyConditionExpression, the FilterExpression, the projection, the
 *		pages' Limit, and the bodies of Query, Scan, GetItem and
 *		BatchGetItem.
 *
 * Expressions name attributes through ExpressionAttributeNames (#n0, #n1,
 * ...) and values through ExpressionAttributeValues (:v0, ...; :pk is each
 * shard's own partition key value), so no attribute name or value is ever
 * spliced into an expression's text.
 *
 *-------------------------------------------------------------------------
 */
#include "fdw/fdw.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/lsyscache.h"
#include "utils/numeric.h"

#include "core/avorder.h"
#include "fdw/scanstate.h"

/* ---------------------------------------------------------------------
 * Expressions and names
 * ---------------------------------------------------------------------
 */

/* The position of attribute name in ss->names, added if absent. */
static int
name_index(ShardScanState *ss, const char *name)
{
	int			i = 0;
	ListCell   *lc;

	foreach(lc, ss->names)
	{
		if (strcmp(strVal(lfirst(lc)), name) == 0)
			return i;
		i++;
	}
	ss->names = lappend(ss->names, makeString(pstrdup(name)));
	return i;
}

/* Add an expression value (AttributeValue JSON); returns its ":vN" name. */
static char *
add_value(ShardScanState *ss, const char *av_json)
{
	char	   *name = psprintf(":v%d", list_length(ss->value_names));

	ss->value_names = lappend(ss->value_names, makeString(name));
	ss->value_json = lappend(ss->value_json, makeString(pstrdup(av_json)));
	return name;
}

/* {"type": "text"} as JSON text. */
static char *
av_json(const char *type, const char *text)
{
	Buf			out;
	JsonWriter	w;

	jw_begin_body(&w, &out);
	jw_key(&w, type);
	jw_cstring(&w, text);
	jw_end_object(&w);
	return out.data;
}

/* {"BOOL": value} as JSON text. */
static char *
av_json_bool(bool value)
{
	Buf			out;
	JsonWriter	w;

	jw_begin_body(&w, &out);
	jw_key(&w, "BOOL");
	jw_bool(&w, value);
	jw_end_object(&w);
	return out.data;
}

/*
 * Drop the expression names and values added since there were names of
 * them and values: DynamoDB refuses those that no expression uses.
 */
static void
forget_names_since(ShardScanState *ss, int names, int values)
{
	ss->names = list_truncate(ss->names, names);
	ss->value_names = list_truncate(ss->value_names, values);
	ss->value_json = list_truncate(ss->value_json, values);
}

/*
 * See fdw.h: 1 when value (of type typid) is a NaN or plus infinity,
 * which sort above every other value in PostgreSQL, -1 for minus infinity,
 * 0 for any other value: the infinite ones are never stored.
 */
int
request_infinite_value(Oid typid, Datum value)
{
	double		d;

	switch (typid)
	{
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
			return TIMESTAMP_IS_NOEND(DatumGetTimestamp(value)) ? 1 :
				TIMESTAMP_IS_NOBEGIN(DatumGetTimestamp(value)) ? -1 : 0;
		case DATEOID:
			return DATE_IS_NOEND(DatumGetDateADT(value)) ? 1 :
				DATE_IS_NOBEGIN(DatumGetDateADT(value)) ? -1 : 0;
		case NUMERICOID:
			if (numeric_is_nan(DatumGetNumeric(value)))
				return 1;
			if (!numeric_is_inf(DatumGetNumeric(value)))
				return 0;
			d = DatumGetFloat8(DirectFunctionCall1(numeric_float8, value));
			break;
		case FLOAT4OID:
			d = DatumGetFloat4(value);
			break;
		case FLOAT8OID:
			d = DatumGetFloat8(value);
			break;
		default:
			return 0;
	}
	return isnan(d) || d == INFINITY ? 1 : d == -INFINITY ? -1 : 0;
}

/* The key text of evaluated value i compared with column col. */
static char *
value_text(ShardScanState *ss, int col, int i)
{
	ShardColumn c = ss->t->columns[col];

	c.typid = ss->types[i];
	return codec_key_text(&c, ss->values[i]);
}

/*
 * The key text of the value after evaluated value i (one more for
 * integers, one microsecond or day later for times), for turning
 * "greater than" into "at least"; NULL when there is none.
 */
static char *
next_value_text(ShardScanState *ss, int col, int i)
{
	ShardColumn c = ss->t->columns[col];
	Datum		v = ss->values[i];

	c.typid = ss->types[i];
	switch (c.typid)
	{
		case INT2OID:
			v = Int64GetDatum((int64) DatumGetInt16(v) + 1);
			c.typid = INT8OID;
			break;
		case INT4OID:
			v = Int64GetDatum((int64) DatumGetInt32(v) + 1);
			c.typid = INT8OID;
			break;
		case INT8OID:
			if (DatumGetInt64(v) == PG_INT64_MAX)
				return NULL;
			v = Int64GetDatum(DatumGetInt64(v) + 1);
			break;
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
			v = Int64GetDatum(DatumGetInt64(v) + 1);
			break;
		case DATEOID:
			v = Int32GetDatum(DatumGetInt32(v) + 1);
			break;
		default:
			return NULL;
	}
	return codec_key_text(&c, v);
}

/* The prefix of the LIKE 'prefix%' pattern that is evaluated value i. */
static char *
like_prefix_text(ShardScanState *ss, int col, int i)
{
	char	   *pattern = value_text(ss, col, i);

	pattern[strlen(pattern) - 1] = '\0';
	return pattern;
}

/* ---------------------------------------------------------------------
 * Conditions
 * ---------------------------------------------------------------------
 */

/* The most key combinations an IN list may make. */
#define MAX_KEY_COMBINATIONS 10000

/* The elements of evaluated array value i, their NULL flags and their type. */
static int
array_elements(ShardScanState *ss, int i, Datum **elems, bool **nulls, Oid *elemtype)
{
	int16		elmlen;
	bool		elmbyval;
	char		elmalign;
	int			n;

	*elemtype = get_element_type(ss->types[i]);
	get_typlenbyvalalign(*elemtype, &elmlen, &elmbyval, &elmalign);
	deconstruct_array(DatumGetArrayTypeP(ss->values[i]), *elemtype,
					  elmlen, elmbyval, elmalign, elems, nulls, &n);
	return n;
}

/*
 * Combinations with a batched lookup's rows (see COND_BATCH): each of
 * combos with each row's texts laid over it, or combos unchanged when the
 * scan has no batched conditions.
 */
static List *
batch_combinations(ShardScanState *ss, List *combos)
{
	List	   *result = NIL;
	ListCell   *lc;
	bool		batched = false;

	for (int i = 0; i < ss->nkey_conds; i++)
		batched |= ss->key_conds[i].op == COND_BATCH;
	if (!batched)
		return combos;
	foreach(lc, combos)
	{
		ListCell   *lc2;

		foreach(lc2, ss->lookups)
		{
			const char **row = lfirst(lc2);
			const char **copy = palloc(sizeof(char *) * Max(ss->t->ncolumns, 1));

			memcpy(copy, lfirst(lc), sizeof(char *) * ss->t->ncolumns);
			for (int i = 0; i < ss->nkey_conds; i++)
				if (ss->key_conds[i].op == COND_BATCH)
					copy[ss->key_conds[i].col] = row[ss->key_conds[i].col];
			result = lappend(result, copy);
		}
	}
	return result;
}

/*
 * texts without the values of batched conditions, which differ from one
 * combination to the next: what every Query of a batched lookup shares.
 */
const char **
request_shared_texts(ShardScanState *ss, const char **texts)
{
	const char **copy = palloc(sizeof(char *) * Max(ss->t->ncolumns, 1));

	memcpy(copy, texts, sizeof(char *) * ss->t->ncolumns);
	for (int i = 0; i < ss->nkey_conds; i++)
		if (ss->key_conds[i].op == COND_BATCH)
			copy[ss->key_conds[i].col] = NULL;
	return copy;
}

/*
 * Every combination of values the key conditions fix, each an array of key
 * texts indexed by column: one combination for equalities alone, one per
 * element (or product of elements) for IN lists.  NIL when a value is NULL
 * or infinite (nothing matches).
 */
List *
request_key_combinations(ShardScanState *ss)
{
	List	   *combos = list_make1(palloc0(sizeof(char *) * Max(ss->t->ncolumns, 1)));

	for (int i = 0; i < ss->nkey_conds; i++)
	{
		ExecCond   *c = &ss->key_conds[i];
		List	   *next = NIL;
		ListCell   *lc;
		Datum	   *elems;
		bool	   *nulls;
		int			n;
		Oid			elemtype;

		if (c->op == COND_BATCH)
			continue;			/* below */
		if (ss->nulls[c->expr])
			return NIL;
		/* no stored key is a NaN or an infinity */
		if (c->op != COND_IN && request_infinite_value(ss->types[c->expr], ss->values[c->expr]) != 0)
			return NIL;
		if (c->op != COND_IN)
		{
			char	   *text = value_text(ss, c->col, c->expr);

			foreach(lc, combos)
				((const char **) lfirst(lc))[c->col] = text;
			continue;
		}
		n = array_elements(ss, c->expr, &elems, &nulls, &elemtype);
		foreach(lc, combos)
		{
			for (int e = 0; e < n; e++)
			{
				ShardColumn col = ss->t->columns[c->col];
				const char **copy;

				if (nulls[e] || request_infinite_value(elemtype, elems[e]) != 0)
					continue;
				copy = palloc(sizeof(char *) * Max(ss->t->ncolumns, 1));
				memcpy(copy, lfirst(lc), sizeof(char *) * ss->t->ncolumns);
				col.typid = elemtype;
				copy[c->col] = codec_key_text(&col, elems[e]);
				next = lappend(next, copy);
			}
		}
		if (list_length(next) > MAX_KEY_COMBINATIONS)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("IN lists on the keys of foreign table \"%s\" make more than %d keys",
							ss->t->relname, MAX_KEY_COMBINATIONS)));
		combos = next;
	}
	return batch_combinations(ss, combos);
}

/* The number of leading fields of template tmpl whose columns are fixed. */
static int
leading_fixed(ShardTable *t, KeyTemplate *tmpl, const char **texts)
{
	return keyfmt_known_fields(tmpl, route_template_values(t, tmpl, texts));
}

/*
 * The sort key text the row has when every column of the sort key is
 * fixed, or NULL.
 */
char *
request_full_sort_key(ShardScanState *ss, const char **texts)
{
	ShardTable *t = ss->t;
	char		err[SFDW_ERRLEN];

	if (t->sk.template && leading_fixed(t, t->sk.template, texts) < keyfmt_field_count(t->sk.template))
		return NULL;
	return route_sort_key(t, texts, err, sizeof(err));
}

/*
 * The sort key's name in ExpressionAttributeNames, taken only where a
 * condition uses it: DynamoDB refuses a name that no expression uses.
 */
static int
sort_key_name(ShardScanState *ss)
{
	return name_index(ss, ss->t->sk.attribute);
}

/*
 * value (a column's key text) as template field p writes it, for a bound
 * on the field.
 */
static char *
field_text(ShardScanState *ss, const KeyPart *p, const char *value)
{
	Buf			out;
	char		err[SFDW_ERRLEN];

	buf_init(&out);
	if (!keyfmt_render_field(p, value, &out, err, sizeof(err)))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot bound the sort key of foreign table \"%s\": %s",
						ss->t->relname, err)));
	return out.data;
}

/*
 * Add the sort key's part of the KeyConditionExpression to buf.  Returns
 * false when the conditions cannot match any stored key.
 */
static bool
sort_key_condition(ShardScanState *ss, const char **texts, StringInfo buf)
{
	ShardTable *t = ss->t;
	const char *type = codec_key_type(&t->sk);
	char	   *full;
	char	   *lo = NULL;
	char	   *hi = NULL;
	bool		lo_inclusive = false;
	bool		hi_inclusive = false;

	if (t->sk.attribute == NULL)
		return true;
	full = request_full_sort_key(ss, texts);
	if (full && full[0] == '\0')
		return false;			/* no stored key is empty */
	if (full)
	{
		appendStringInfo(buf, " AND #n%d = %s", sort_key_name(ss), add_value(ss, av_json(type, full)));
		return true;
	}
	if (t->sk.template && leading_fixed(t, t->sk.template, texts) > 0)
	{
		Buf			out;
		char		err[SFDW_ERRLEN];

		buf_init(&out);
		if (keyfmt_render_prefix(t->sk.template, route_template_values(t, t->sk.template, texts),
								 leading_fixed(t, t->sk.template, texts),
								 &out, err, sizeof(err)))
			appendStringInfo(buf, " AND begins_with(#n%d, %s)", sort_key_name(ss),
							 add_value(ss, av_json("S", out.data)));
		return true;
	}
	for (int i = 0; i < ss->nsort_conds; i++)
	{
		ExecCond   *c = &ss->sort_conds[i];
		char	   *text;
		int			width = t->sk.template ? t->sk.template->parts[0].width : 0;
		bool		inclusive = c->op == COND_GE || c->op == COND_LE;
		int			infinite;

		if (ss->nulls[c->expr])
			return false;
		if (c->op == COND_PREFIX)
		{
			appendStringInfo(buf, " AND begins_with(#n%d, %s)", sort_key_name(ss),
							 add_value(ss, av_json("S", like_prefix_text(ss, c->col, c->expr))));
			return true;
		}

		/*
		 * A NaN or plus infinity is above every stored number, minus
		 * infinity below: as a bound it excludes every key or none.
		 */
		infinite = request_infinite_value(ss->types[c->expr], ss->values[c->expr]);
		if (infinite != 0)
		{
			if ((infinite > 0) == (c->op == COND_GT || c->op == COND_GE))
				return false;
			continue;
		}

		/*
		 * A template's leading field turns every bound into an inclusive
		 * lower one or an exclusive upper one: "> v" is ">= v+1", "<= v"
		 * is "< v+1" (the key goes on after the field).
		 */
		if (t->sk.template && (c->op == COND_GT || c->op == COND_LE))
			text = next_value_text(ss, c->col, c->expr);
		else
			text = value_text(ss, c->col, c->expr);
		if (t->sk.template)
			inclusive = c->op == COND_GT || c->op == COND_GE;
		if (text && t->sk.template && t->sk.template->parts[0].form != KT_PLAIN)
			text = field_text(ss, &t->sk.template->parts[0], text);

		/*
		 * DynamoDB refuses an empty key value, which every stored key is
		 * above: as a lower bound it excludes nothing, as an upper one
		 * everything.
		 */
		if (text && text[0] == '\0' && strcmp(type, "N") != 0)
		{
			if (c->op == COND_GT || c->op == COND_GE)
				continue;
			return false;
		}
		if (c->op == COND_GT || c->op == COND_GE)
		{
			if (text && width > 0 && text[0] == '-')
				text = NULL;	/* every stored value is greater */
			else if (text && width > 0)
				text = psprintf("%0*ld", width, atol(text));
			if (text && width > 0 && (int) strlen(text) > width)
				return false;	/* no stored value is greater */
			lo = text;
			lo_inclusive = inclusive;
		}
		else
		{
			if (text && width > 0 && text[0] == '-')
				return false;	/* no stored value is smaller */
			if (text && width > 0)
				text = psprintf("%0*ld", width, atol(text));
			if (text && width > 0 && (int) strlen(text) > width)
				text = NULL;	/* every stored value is smaller */
			hi = text;
			hi_inclusive = inclusive;
		}
	}
	ss->sk_lo = lo;
	ss->sk_hi = hi;
	if (lo && hi)
	{
		/* an empty range matches nothing; DynamoDB would refuse it */
		int			order = strcmp(type, "N") == 0 ? avorder_number_cmp(lo, hi) : strcmp(lo, hi);

		if (order > 0 || (order == 0 && !(lo_inclusive && hi_inclusive)))
			return false;
		/* BETWEEN is inclusive: an exclusive bound is rechecked locally */
		appendStringInfo(buf, " AND #n%d BETWEEN %s AND %s", sort_key_name(ss),
						 add_value(ss, av_json(type, lo)), add_value(ss, av_json(type, hi)));
	}
	else if (lo)
		appendStringInfo(buf, " AND #n%d %s %s", sort_key_name(ss), lo_inclusive ? ">=" : ">",
						 add_value(ss, av_json(type, lo)));
	else if (hi)
		appendStringInfo(buf, " AND #n%d %s %s", sort_key_name(ss), hi_inclusive ? "<=" : "<",
						 add_value(ss, av_json(type, hi)));
	return true;
}

/*
 * The AttributeValue JSON of value (of type typid) compared with column
 * col in a FilterExpression, or NULL when no DynamoDB value stands for it
 * (a NaN or an infinity).
 */
static char *
filter_operand(ShardColumn *col, Oid typid, Datum value)
{
	ShardColumn c = *col;

	if (typid == BOOLOID)
		return av_json_bool(DatumGetBool(value));
	if (request_infinite_value(typid, value) != 0)
		return NULL;
	c.typid = typid;
	return av_json(col->ddb_type == DDB_TYPE_N ? "N" : "S", codec_key_text(&c, value));
}

/*
 * Add filter c to buf as a DynamoDB condition; false when DynamoDB cannot
 * say what PostgreSQL says of it (an IN list of more than
 * MAX_IN_OPERANDS values, a value DynamoDB cannot hold), and it is left
 * to the local check alone.
 */
static bool
filter_condition(ShardScanState *ss, ExecCond *c, StringInfo buf)
{
	static const char *const ops[] = {
		[COND_EQ] = "=", [COND_LT] = "<", [COND_LE] = "<=",
		[COND_GT] = ">", [COND_GE] = ">=",
	};
	ShardColumn *col = &ss->t->columns[c->col];
	int			n = name_index(ss, col->attribute);
	char	   *operand;

	if (c->op == COND_NULL || c->op == COND_NOT_NULL)
	{
		char	   *null_type = add_value(ss, av_json("S", "NULL"));

		appendStringInfo(buf, c->op == COND_NULL ?
						 "(attribute_not_exists(#n%d) OR attribute_type(#n%d, %s))" :
						 "(attribute_exists(#n%d) AND NOT attribute_type(#n%d, %s))",
						 n, n, null_type);
		return true;
	}
	if (!ss->nulls[c->expr] && c->op == COND_PREFIX)
	{
		appendStringInfo(buf, "begins_with(#n%d, %s)", n,
						 add_value(ss, av_json("S", like_prefix_text(ss, c->col, c->expr))));
		return true;
	}
	if (!ss->nulls[c->expr] && c->op == COND_IN)
	{
		Datum	   *elems;
		bool	   *nulls;
		Oid			elemtype;
		int			count = array_elements(ss, c->expr, &elems, &nulls, &elemtype);
		int			used = 0;

		/* a NULL element matches no row, as in PostgreSQL's WHERE */
		for (int e = 0; e < count; e++)
		{
			if (nulls[e])
				continue;
			if (++used > MAX_IN_OPERANDS ||
				(operand = filter_operand(col, elemtype, elems[e])) == NULL)
				return false;
			if (used == 1)
				appendStringInfo(buf, "#n%d IN (", n);
			else
				appendStringInfoString(buf, ", ");
			appendStringInfoString(buf, add_value(ss, operand));
		}
		if (used > 0)
		{
			appendStringInfoChar(buf, ')');
			return true;
		}
	}
	else if (!ss->nulls[c->expr])
	{
		operand = filter_operand(col, ss->types[c->expr], ss->values[c->expr]);
		if (operand == NULL)
			return false;
		appendStringInfo(buf, "#n%d %s %s", n, ops[c->op], add_value(ss, operand));
		return true;
	}
	/* a NULL value, or an IN list of NULLs only: nothing compares true */
	appendStringInfo(buf, "(attribute_not_exists(#n%d) AND attribute_exists(#n%d))", n, n);
	return true;
}

/*
 * Widen cond, the text of filter c, to keep the items that do not store
 * its column as an attribute of the column's type (conds_superset_filter):
 * "(cond OR NOT attribute_type(#n, :v))", which an absent attribute meets.
 */
static void
keep_unstored(ShardScanState *ss, ExecCond *c, StringInfo cond)
{
	ShardColumn *col = &ss->t->columns[c->col];
	char	   *text;

	if (!conds_superset_filter(ss->t, c->col, c->op))
		return;
	text = pstrdup(cond->data);
	resetStringInfo(cond);
	appendStringInfo(cond, "(%s OR NOT attribute_type(#n%d, %s))", text,
					 name_index(ss, col->attribute),
					 add_value(ss, av_json("S", ddb_type_name(col->ddb_type))));
}

/*
 * Write to buf, empty, the condition that an item's time to live has not
 * passed, as scan.c's check of each item has it (see scan_expiry_start):
 * its TTL attribute is not a number, or a number not below expiry_now, or
 * below expiry_oldest, "(NOT attribute_type(#t, :N) OR #t >= :now OR #t <
 * :oldest)"; when the scan leaves such items out and can filter on the
 * attribute (conds_expiry_filter).
 */
static void
unexpired_condition(ShardScanState *ss, StringInfo buf)
{
	const char *attribute = conds_expiry_filter(ss->t);
	int			n;

	if (attribute == NULL || ss->expiry_now == NULL)
		return;
	n = name_index(ss, attribute);
	appendStringInfo(buf, "(NOT attribute_type(#n%d, %s)", n, add_value(ss, av_json("S", "N")));
	appendStringInfo(buf, " OR #n%d >= %s", n, add_value(ss, av_json("N", ss->expiry_now)));
	appendStringInfo(buf, " OR #n%d < %s)", n, add_value(ss, av_json("N", ss->expiry_oldest)));
}

/*
 * The FilterExpression of the items' time to live and of the filters, or
 * NULL.  A filter DynamoDB cannot evaluate is left out, and so are all
 * the filters when they would make it longer than DynamoDB takes: every
 * filter is checked locally too, as is the time to live.  GetItem and
 * BatchGetItem take none (nor the names it would use).
 */
char *
request_filter_expression(ShardScanState *ss)
{
	StringInfoData buf;
	StringInfoData cond;
	int			names;
	int			values;
	int			unexpired;

	if (ss->op == SCAN_OP_GET)
		return NULL;
	initStringInfo(&buf);
	initStringInfo(&cond);
	unexpired_condition(ss, &buf);
	unexpired = buf.len;
	names = list_length(ss->names);
	values = list_length(ss->value_names);
	for (int i = 0; i < ss->nfilters; i++)
	{
		int			cond_names = list_length(ss->names);
		int			cond_values = list_length(ss->value_names);

		resetStringInfo(&cond);
		if (!filter_condition(ss, &ss->filters[i], &cond))
		{
			forget_names_since(ss, cond_names, cond_values);
			continue;
		}
		keep_unstored(ss, &ss->filters[i], &cond);
		appendStringInfo(&buf, "%s%s", buf.len > 0 ? " AND " : "", cond.data);
	}
	if (buf.len > DDB_MAX_EXPRESSION_BYTES)
	{
		forget_names_since(ss, names, values);
		buf.len = unexpired;
		buf.data[unexpired] = '\0';
	}
	return buf.len > 0 ? buf.data : NULL;
}

/*
 * The Limit of each shard's pages when the query needs limit rows from
 * nshards merged shards.  A hash spreads rows evenly, so how many of the
 * merge's first limit rows a shard holds is about Poisson with mean
 * limit / nshards (binomial, whose tail is lighter).  Each page asks for
 * the least count past which the expected number of shards still short,
 * PAGE_SHORT_SHARDS, is small: one statement in a hundred waits for a
 * second page.  A shard that runs out before the merge has enough is read
 * on, page by page, so no row is ever missed; it costs a round trip.
 * Means too large for the recurrence (exp underflows) take the normal
 * tail six deviations out.
 */
#define PAGE_SHORT_SHARDS 0.01

int
request_page_limit(int limit, int nshards)
{
	double		mean;
	double		term;
	double		below = 0;

	if (nshards <= 1)
		return limit;
	mean = (double) limit / nshards;
	if (mean > 500)
		return Min(limit, (int) ceil(mean + 6 * sqrt(mean)));
	term = exp(-mean);
	for (int k = 0; k < limit; k++)
	{
		/* below is P(X <= k), term P(X = k + 1) after this */
		below += term;
		term *= mean / (k + 1);
		if (k > 0 && nshards * (1 - below) <= PAGE_SHORT_SHARDS)
			return k;
	}
	return limit;
}

/*
 * The KeyConditionExpression of a Query for the key values texts: the
 * partition key equal to :pk (each shard's own value, see
 * request_read_body) and the sort key's part; NULL when the conditions
 * cannot match any stored key.
 */
char *
request_key_condition(ShardScanState *ss, const char **texts)
{
	StringInfoData kc;

	initStringInfo(&kc);
	appendStringInfo(&kc, "#n%d = :pk", name_index(ss, ss->t->pk.attribute));
	return sort_key_condition(ss, texts, &kc) ? kc.data : NULL;
}

/* ---------------------------------------------------------------------
 * Request bodies
 * ---------------------------------------------------------------------
 */

/*
 * The projection expression, or NULL for whole items or a count.  A
 * projection longer than DynamoDB's 4 KB (a table of some 600 columns) is
 * left out, and the names only it used with it: whole items are read.
 */
static char *
projection_expression(ShardScanState *ss)
{
	int			names = list_length(ss->names);
	StringInfoData buf;
	ListCell   *lc;

	if (ss->attrs == NIL || ss->select_count)
		return NULL;
	initStringInfo(&buf);
	foreach(lc, ss->attrs)
		appendStringInfo(&buf, "%s#n%d", buf.len ? ", " : "",
						 name_index(ss, strVal(lfirst(lc))));
	if (buf.len > DDB_MAX_EXPRESSION_BYTES)
	{
		forget_names_since(ss, names, list_length(ss->value_names));
		return NULL;
	}
	return buf.data;
}

/*
 * ProjectionExpression and ExpressionAttributeNames as JSON members (NULL
 * when a read has neither), which every body of the scan carries: made once
 * per scan start, after the key condition and the filter have named their
 * attributes.  ss->projected says whether there is a projection.
 */
char *
request_expression_maps(ShardScanState *ss)
{
	char	   *projection = projection_expression(ss);
	Buf			out;
	JsonWriter	w;
	ListCell   *lc;
	int			i = 0;

	ss->projected = projection != NULL;
	buf_init(&out);
	jw_init(&w, &out);
	if (projection)
	{
		jw_key(&w, "ProjectionExpression");
		jw_cstring(&w, projection);
	}
	if (ss->names != NIL)
	{
		jw_key(&w, "ExpressionAttributeNames");
		jw_begin_object(&w);
		foreach(lc, ss->names)
		{
			char		key[16];

			snprintf(key, sizeof(key), "#n%d", i++);
			jw_key(&w, key);
			jw_cstring(&w, strVal(lfirst(lc)));
		}
		jw_end_object(&w);
	}
	return out.len > 0 ? out.data : NULL;
}

/* Write ExpressionAttributeValues, with the partition key's own value. */
static void
write_values(ShardScanState *ss, JsonWriter *w, const char *pk_json)
{
	ListCell   *lc1;
	ListCell   *lc2;

	if (pk_json == NULL && ss->value_names == NIL)
		return;
	jw_key(w, "ExpressionAttributeValues");
	jw_begin_object(w);
	if (pk_json)
	{
		jw_key(w, ":pk");
		jw_raw(w, pk_json);
	}
	forboth(lc1, ss->value_names, lc2, ss->value_json)
	{
		jw_key(w, strVal(lfirst(lc1)));
		jw_raw(w, strVal(lfirst(lc2)));
	}
	jw_end_object(w);
}

/*
 * True when scan ss reads a local secondary index that lacks columns the
 * scan needs, which DynamoDB then reads from the table in the Query: when
 * its ProjectionExpression names them, or without one (whole items, or a
 * projection over DynamoDB's limit), with Select ALL_ATTRIBUTES.
 */
bool
request_lsi_reads_table(ShardScanState *ss)
{
	ListCell   *lc;

	if (ss->t->base == NULL || !ss->t->index_local || ss->select_count)
		return false;
	foreach(lc, ss->cols)
		if (ss->t->columns[lfirst_int(lc)].unprojected)
			return true;
	return false;
}

/*
 * The JSON body of the request for the next page of stream s (start_key:
 * the previous page's LastEvaluatedKey, or NULL): a Query of the stream's
 * shard (its partition key as :pk; with select_count, Select COUNT and no
 * projection), a Scan segment, or a GetItem or BatchGetItem of its keys.
 */
char *
request_read_body(ShardScanState *ss, Stream *s, const DdbJson *start_key, size_t *len)
{
	ShardTable *t = ss->t;
	Buf			out;
	JsonWriter	w;
	ListCell   *lc;

	jw_begin_body(&w, &out);
	if (ss->op == SCAN_OP_GET)
	{
		bool		batch = list_length(s->keys) > 1;

		if (batch)
		{
			jw_key(&w, "RequestItems");
			jw_begin_object(&w);
			jw_key(&w, t->table);
			jw_begin_object(&w);
			jw_key(&w, "Keys");
			jw_begin_array(&w);
			foreach(lc, s->keys)
				jw_raw(&w, strVal(lfirst(lc)));
			jw_end_array(&w);
		}
		else
		{
			jw_key(&w, "TableName");
			jw_cstring(&w, t->table);
			jw_key(&w, "Key");
			jw_raw(&w, strVal(linitial(s->keys)));
		}
		if (t->consistent_read)
		{
			jw_key(&w, "ConsistentRead");
			jw_bool(&w, true);
		}
		if (ss->expression_maps)
			jw_raw(&w, ss->expression_maps);
		if (batch)
		{
			jw_end_object(&w);
			jw_end_object(&w);
		}
	}
	else
	{
		jw_key(&w, "TableName");
		jw_cstring(&w, t->table);
		if (t->index)
		{
			jw_key(&w, "IndexName");
			jw_cstring(&w, t->index);
		}
		if (ss->op == SCAN_OP_QUERY)
		{
			jw_key(&w, "KeyConditionExpression");
			jw_cstring(&w, ss->key_cond_expr);
		}
		if (ss->filter_expr)
		{
			jw_key(&w, "FilterExpression");
			jw_cstring(&w, ss->filter_expr);
		}
		if (ss->select_count)
		{
			jw_key(&w, "Select");
			jw_cstring(&w, "COUNT");
		}
		if (ss->expression_maps)
			jw_raw(&w, ss->expression_maps);
		write_values(ss, &w, ss->op == SCAN_OP_QUERY ?
					 av_json(codec_key_type(&t->pk), s->pk_text) : NULL);
		if (ss->op == SCAN_OP_SCAN && Max(ss->total_segments, ss->nstreams) > 1)
		{
			jw_key(&w, "Segment");
			jw_int(&w, s->segment);
			jw_key(&w, "TotalSegments");
			jw_int(&w, ss->total_segments > 0 ? ss->total_segments : ss->nstreams);
		}
		if (ss->order < 0)
		{
			jw_key(&w, "ScanIndexForward");
			jw_bool(&w, false);
		}
		if (ss->limit > 0)
		{
			jw_key(&w, "Limit");
			jw_int(&w, request_page_limit(ss->limit, ss->merge_width));
		}
		/* an LSI reads the table's attributes it lacks itself */
		if (request_lsi_reads_table(ss) && !ss->projected)
		{
			jw_key(&w, "Select");
			jw_cstring(&w, "ALL_ATTRIBUTES");
		}
		/* a GSI is only eventually consistent; an LSI is the table's */
		if (t->consistent_read && (t->index == NULL || (t->base && t->index_local)))
		{
			jw_key(&w, "ConsistentRead");
			jw_bool(&w, true);
		}
		request_write_start_key(&w, start_key);
	}
	return jw_end_request(&w, len);
}
