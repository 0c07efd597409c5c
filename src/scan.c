/*-------------------------------------------------------------------------
 *
 * scan.c
 *		The executor's side of a scan: one stream of pages per shard
 *		(Query), per segment (Scan) or per batch of keys (GetItem,
 *		BatchGetItem), every stream's requests in flight at once, and items
 *		turned into tuples, either as they arrive or merged in the sort
 *		key's order.
 *
 * A stream holds at most two pages (the one being read and the next one,
 * fetched ahead), so memory stays bounded whatever the result size.  When
 * the query stops early (LIMIT), EndForeignScan drops what is in flight.
 *
 *-------------------------------------------------------------------------
 */
#include "shard_fdw.h"

#include <math.h>

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "commands/explain.h"
#include "executor/executor.h"
#include "lib/binaryheap.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/datetime.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/numeric.h"
#include "utils/tuplestore.h"

#include "avorder.h"
#include "plan.h"
#include "scan.h"

/* BatchGetItem takes at most this many keys. */
#define BATCH_GET_MAX 100

/* One condition as the executor has it: the planner's triple. */
typedef struct ExecCond
{
	int			col;
	CondOp		op;
	int			expr;			/* index into the evaluated values, or -1 */
} ExecCond;

/* One sequence of pages. */
typedef struct Stream
{
	char	   *pk_text;		/* partition key value (Query) */
	int			shard;			/* its shard, or -1 for the base key */
	int			segment;		/* segment (Scan) */
	List	   *keys;			/* item keys as JSON texts (GetItem) */
	DdbRequest *page;			/* the page being read */
	int			pos;			/* next item of page */
	DdbRequest *ready;			/* the next page, arrived */
	DdbRequest *next;			/* the next page, in flight */
	const DdbJson *head;		/* ordered merge: the item it offers */
	char	   *lek_seen;		/* a LastEvaluatedKey, as JSON, that must not
								 * come again (see stream_check_progress) */
	int			lek_steps;		/* pages since lek_seen was taken */
	int			lek_period;		/* pages after which it is taken anew */
} Stream;

struct ShardScanState
{
	ShardTable *t;
	DdbConn    *conn;
	DdbGroup   *group;
	ScanOp		op;
	List	   *cols;			/* column indexes to convert */
	List	   *attrs;			/* projection attributes, NIL = all */
	ExecCond   *key_conds;
	int			nkey_conds;
	ExecCond   *sort_conds;
	int			nsort_conds;
	ExecCond   *filters;
	int			nfilters;
	int			order;			/* 1 ascending, -1 descending, 0 none */
	int			limit;			/* rows the query needs (LIMIT + OFFSET), 0 unknown */
	bool		need_ctid;		/* UPDATE/DELETE: the shard in ctid */
	bool		read_all;		/* read to the end before the first row */
	List	   *exprs;			/* fdw_exprs, for EXPLAIN */
	List	   *expr_states;
	int			max_inflight;

	/* per execution */
	Datum	   *values;			/* evaluated fdw_exprs */
	bool	   *nulls;
	Oid		   *types;
	char	   *key_cond_expr;	/* KeyConditionExpression */
	char	   *filter_expr;	/* FilterExpression */
	List	   *names;			/* ExpressionAttributeNames, in order */
	List	   *value_names;	/* ExpressionAttributeValues: names ... */
	List	   *value_json;		/* ... and their AttributeValue JSON */
	Stream	   *streams;
	int			nstreams;
	int			cur;			/* unordered: the stream read last */
	binaryheap *heap;			/* ordered: streams by their head item */
	bool		in_order;		/* ordered: range shards read one by one */
	char	   *sk_lo;			/* the sort key's bounds sent, or NULL */
	char	   *sk_hi;
	bool		started;
	Tuplestorestate *stored;	/* read_all: the rows, each with its shard */
	TupleTableSlot *store_slot; /* ... read back through this slot */
	MemoryContext runcxt;		/* lives for one execution (until rescan) */
	MemoryContext rowcxt;

	/* counters for EXPLAIN ANALYZE, over every rescan */
	int64		pages;
	DdbStats	stats;
	int			shards_read;
};

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

	buf_init(&out);
	jw_init(&w, &out);
	jw_begin_object(&w);
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

	buf_init(&out);
	jw_init(&w, &out);
	jw_begin_object(&w);
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

/* The DynamoDB type letter of a key. */
static const char *
key_type(ShardKey *k)
{
	return k->template ? "S" : k->type == DDB_TYPE_N ? "N" :
		k->type == DDB_TYPE_B ? "B" : "S";
}

/*
 * 1 when value (of type typid) is a NaN or plus infinity, which sort above
 * every other value in PostgreSQL, -1 for minus infinity, 0 for any other
 * value: the infinite ones are never stored.
 */
static int
infinite_value(Oid typid, Datum value)
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
 * Every combination of values the key conditions fix, each an array of key
 * texts indexed by column: one combination for equalities alone, one per
 * element (or product of elements) for IN lists.  NIL when a value is NULL
 * or infinite (nothing matches).
 */
static List *
key_combinations(ShardScanState *ss)
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

		if (ss->nulls[c->expr])
			return NIL;
		/* no stored key is a NaN or an infinity */
		if (c->op != COND_IN && infinite_value(ss->types[c->expr], ss->values[c->expr]) != 0)
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

				if (nulls[e] || infinite_value(elemtype, elems[e]) != 0)
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
	return combos;
}

/* The number of leading fields of template tmpl whose columns are fixed. */
static int
leading_fixed(ShardTable *t, KeyTemplate *tmpl, const char **texts)
{
	int			n = 0;

	for (int i = 0; i < tmpl->nparts; i++)
	{
		KeyPart    *p = &tmpl->parts[i];

		if (p->kind == KP_LITERAL)
			continue;
		if (p->kind == KP_SHARD ||
			texts[shard_find_column(t, p->text) - t->columns] == NULL)
			break;
		n++;
	}
	return n;
}

/* The number of fields of a template. */
static int
field_count(KeyTemplate *tmpl)
{
	int			n = 0;

	for (int i = 0; i < tmpl->nparts; i++)
		if (tmpl->parts[i].kind != KP_LITERAL)
			n++;
	return n;
}

/*
 * The sort key text the row has when every column of the sort key is
 * fixed, or NULL.
 */
static char *
full_sort_key(ShardScanState *ss, const char **texts)
{
	ShardTable *t = ss->t;
	char		err[SFDW_ERRLEN];

	if (t->sk.template && leading_fixed(t, t->sk.template, texts) < field_count(t->sk.template))
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
 * Add the sort key's part of the KeyConditionExpression to buf.  Returns
 * false when the conditions cannot match any stored key.
 */
static bool
sort_key_condition(ShardScanState *ss, const char **texts, StringInfo buf)
{
	ShardTable *t = ss->t;
	const char *type = key_type(&t->sk);
	char	   *full;
	char	   *lo = NULL;
	char	   *hi = NULL;
	bool		lo_inclusive = false;
	bool		hi_inclusive = false;

	if (t->sk.attribute == NULL)
		return true;
	full = full_sort_key(ss, texts);
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
		infinite = infinite_value(ss->types[c->expr], ss->values[c->expr]);
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
		if (c->op == COND_GT || c->op == COND_GE)
		{
			if (text && width > 0 && text[0] == '-')
				text = NULL;	/* every stored value is greater */
			else if (text && width > 0)
				text = psprintf("%0*ld", width, atol(text));
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

/* The longest expression DynamoDB takes, in bytes. */
#define MAX_EXPRESSION_BYTES 4096

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
	if (infinite_value(typid, value) != 0)
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
 * The FilterExpression of the filters, or NULL.  A filter DynamoDB cannot
 * evaluate is left out, and so is the whole expression when it would be
 * longer than DynamoDB takes: every filter is checked locally too.
 */
static char *
filter_expression(ShardScanState *ss)
{
	StringInfoData buf;
	StringInfoData cond;
	int			names = list_length(ss->names);
	int			values = list_length(ss->value_names);

	if (ss->nfilters == 0)
		return NULL;
	initStringInfo(&buf);
	initStringInfo(&cond);
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
		appendStringInfo(&buf, "%s%s", buf.len > 0 ? " AND " : "", cond.data);
	}
	if (buf.len > MAX_EXPRESSION_BYTES)
	{
		forget_names_since(ss, names, values);
		return NULL;
	}
	return buf.len > 0 ? buf.data : NULL;
}

/*
 * The Limit of each shard's pages when the query needs limit rows from
 * nshards merged shards.  A hash spreads rows evenly, so the first rows of
 * the merge come about evenly from every shard: each page asks for twice
 * its share (at least 10, at most limit), and a shard that runs out before
 * the merge has enough is read on, page by page, so no row is ever missed.
 */
static int
shard_page_limit(int limit, int nshards)
{
	if (nshards <= 1)
		return limit;
	return Min(limit, Max(10, (2 * limit + nshards - 1) / nshards + 1));
}

/* ---------------------------------------------------------------------
 * Request bodies
 * ---------------------------------------------------------------------
 */

/* Write ProjectionExpression and the name and value maps. */
static void
write_expression_maps(ShardScanState *ss, JsonWriter *w, const char *projection)
{
	ListCell   *lc;
	int			i = 0;

	if (projection)
	{
		jw_key(w, "ProjectionExpression");
		jw_cstring(w, projection);
	}
	if (ss->names != NIL)
	{
		jw_key(w, "ExpressionAttributeNames");
		jw_begin_object(w);
		foreach(lc, ss->names)
		{
			char		key[16];

			snprintf(key, sizeof(key), "#n%d", i++);
			jw_key(w, key);
			jw_cstring(w, strVal(lfirst(lc)));
		}
		jw_end_object(w);
	}
}

/* The projection expression, or NULL for whole items. */
static char *
projection_expression(ShardScanState *ss)
{
	StringInfoData buf;
	ListCell   *lc;

	if (ss->attrs == NIL)
		return NULL;
	initStringInfo(&buf);
	foreach(lc, ss->attrs)
		appendStringInfo(&buf, "%s#n%d", buf.len ? ", " : "",
						 name_index(ss, strVal(lfirst(lc))));
	return buf.data;
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
 * The JSON body of the request for the next page of stream s (start_key:
 * the previous page's LastEvaluatedKey, or NULL).  Deterministic, so that
 * EXPLAIN VERBOSE can print it.
 */
static char *
build_body(ShardScanState *ss, Stream *s, const DdbJson *start_key, size_t *len)
{
	ShardTable *t = ss->t;
	Buf			out;
	JsonWriter	w;
	char	   *projection = projection_expression(ss);
	ListCell   *lc;

	buf_init(&out);
	jw_init(&w, &out);
	jw_begin_object(&w);
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
		write_expression_maps(ss, &w, projection);
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
		write_expression_maps(ss, &w, projection);
		write_values(ss, &w, ss->op == SCAN_OP_QUERY ?
					 av_json(key_type(&t->pk), s->pk_text) : NULL);
		if (ss->op == SCAN_OP_SCAN && ss->nstreams > 1)
		{
			jw_key(&w, "Segment");
			jw_int(&w, s->segment);
			jw_key(&w, "TotalSegments");
			jw_int(&w, ss->nstreams);
		}
		if (ss->order < 0)
		{
			jw_key(&w, "ScanIndexForward");
			jw_bool(&w, false);
		}
		if (ss->limit > 0)
		{
			jw_key(&w, "Limit");
			jw_int(&w, shard_page_limit(ss->limit, ss->in_order ? 1 : ss->nstreams));
		}
		if (t->consistent_read && t->index == NULL)
		{
			jw_key(&w, "ConsistentRead");
			jw_bool(&w, true);
		}
		if (start_key)
		{
			jw_key(&w, "ExclusiveStartKey");
			jw_tree(&w, start_key);
		}
	}
	return jw_end_request(&w, len);
}

/* ---------------------------------------------------------------------
 * Streams
 * ---------------------------------------------------------------------
 */

/* The DynamoDB operation of a stream's requests. */
static const char *
stream_action(ShardScanState *ss, Stream *s)
{
	if (ss->op == SCAN_OP_GET)
		return list_length(s->keys) > 1 ? "BatchGetItem" : "GetItem";
	return ss->op == SCAN_OP_QUERY ? "Query" : "Scan";
}

/* Send the request for the next page of stream s. */
static void
stream_fetch(ShardScanState *ss, Stream *s, const DdbJson *start_key)
{
	size_t		len;
	char	   *body = build_body(ss, s, start_key, &len);

	s->next = ddb_request_create(ss->group, stream_action(ss, s), body, len);
	s->next->owner = s;
	pfree(body);
	ddb_submit(s->next);
}

/*
 * The keys of a BatchGetItem page that DynamoDB left unprocessed, as JSON
 * texts, or NIL.
 */
static List *
unprocessed_keys(ShardScanState *ss, DdbRequest *page)
{
	const DdbJson *u = ddbjson_get(ddbjson_get(page->response, "UnprocessedKeys"),
								   ss->t->table);
	const DdbJson *keys = ddbjson_get(u, "Keys");
	List	   *result = NIL;

	for (int i = 0; keys && keys->kind == DJ_ARRAY && i < keys->n; i++)
	{
		Buf			out;
		JsonWriter	w;

		buf_init(&out);
		jw_init(&w, &out);
		jw_tree(&w, &keys->elems[i]);
		result = lappend(result, makeString(out.data));
	}
	return result;
}

/*
 * Stop a stream whose LastEvaluatedKey comes back: pages would repeat for
 * ever.  Brent's cycle finding, over the keys as JSON texts: the key kept
 * is taken anew after 1, 2, 4, ... pages, so a key that repeats is caught
 * on the next page, a cycle of two on the page after, and any cycle within
 * twice its start and length, with one key held per stream.
 */
static void
stream_check_progress(ShardScanState *ss, Stream *s, DdbRequest *req,
					  const DdbJson *lek)
{
	Buf			text;
	JsonWriter	w;

	buf_init(&text);
	jw_init(&w, &text);
	jw_tree(&w, lek);
	if (s->lek_seen != NULL && strcmp(s->lek_seen, text.data) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_ERROR),
				 errmsg("DynamoDB %s of foreign table \"%s\" returned the same LastEvaluatedKey again",
						req->action, ss->t->relname),
				 errdetail("LastEvaluatedKey %s came back after %d page%s, so the pages would repeat for ever.",
						   text.data, s->lek_steps + 1, s->lek_steps == 0 ? "" : "s")));
	if (++s->lek_steps >= s->lek_period)
	{
		if (s->lek_seen != NULL)
			pfree(s->lek_seen);
		s->lek_seen = text.data;
		s->lek_period = Max(s->lek_period, 1) * 2;
		s->lek_steps = 0;
	}
	else
		pfree(text.data);
}

/*
 * Make an arrived page the one being read, and fetch the page after it
 * if there is one (right away, or when it is needed if a Limit was sent).
 */
static void
stream_take_page(ShardScanState *ss, Stream *s, DdbRequest *req)
{
	const DdbJson *lek = ddbjson_get(req->response, "LastEvaluatedKey");
	DdbStats   *stats = ddb_group_stats(ss->group);

	s->page = req;
	s->pos = 0;
	ss->pages++;
	stats->scanned += (int64) ddbjson_get_number(req->response, "ScannedCount");
	if (lek != NULL && ss->op != SCAN_OP_GET)
		stream_check_progress(ss, s, req, lek);
	if (ss->op == SCAN_OP_GET)
	{
		List	   *left = unprocessed_keys(ss, req);

		if (left != NIL)
		{
			s->keys = left;
			stream_fetch(ss, s, NULL);
		}
	}
	else if (lek && lek->kind == DJ_OBJECT && lek->n > 0 && ss->limit == 0)
		stream_fetch(ss, s, lek);
}

/* Wait for the next page of any stream and file it with its stream. */
static void
receive_page(ShardScanState *ss)
{
	DdbRequest *req = ddb_wait_any(ss->group);
	Stream	   *s;

	if (req == NULL)
		elog(ERROR, "shard_fdw: no page in flight");
	if (req->status != DDB_OK)
	{
		codec_report_bad_item(req, ss->t);
		ddb_report_error(req);
	}
	s = req->owner;
	s->next = NULL;
	if (s->page == NULL)
		stream_take_page(ss, s, req);
	else
		s->ready = req;
}

/* The items of a page, whatever the operation. */
static const DdbJson *
page_items(ShardScanState *ss, DdbRequest *page, int *count)
{
	const DdbJson *items;

	if (strcmp(page->action, "GetItem") == 0)
	{
		items = ddbjson_get(page->response, "Item");
		*count = items ? 1 : 0;
		return items;
	}
	if (strcmp(page->action, "BatchGetItem") == 0)
		items = ddbjson_get(ddbjson_get(page->response, "Responses"), ss->t->table);
	else
		items = ddbjson_get(page->response, "Items");
	if (items == NULL || items->kind != DJ_ARRAY)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_ERROR),
				 errmsg("DynamoDB %s response has no items", page->action)));
	*count = items->n;
	return items->elems;
}

/*
 * The next item of stream s, or NULL when it has none at hand; *waiting
 * says whether more may come.
 */
static const DdbJson *
stream_next_item(ShardScanState *ss, Stream *s, bool *waiting)
{
	for (;;)
	{
		if (s->page)
		{
			int			count;
			const DdbJson *items = page_items(ss, s->page, &count);
			const DdbJson *lek = ddbjson_get(s->page->response, "LastEvaluatedKey");

			if (s->pos < count)
				return &items[s->pos++];
			if (s->next == NULL && s->ready == NULL && ss->limit > 0 &&
				ss->op != SCAN_OP_GET && lek && lek->kind == DJ_OBJECT && lek->n > 0)
				stream_fetch(ss, s, lek);
			ddb_request_free(s->page);
			s->page = NULL;
			if (s->ready)
			{
				DdbRequest *ready = s->ready;

				s->ready = NULL;
				stream_take_page(ss, s, ready);
				continue;
			}
		}
		*waiting = s->next != NULL;
		return NULL;
	}
}

/* The next item of stream s, waiting for its next page if need be. */
static const DdbJson *
stream_next_item_wait(ShardScanState *ss, Stream *s)
{
	for (;;)
	{
		bool		waiting = false;
		const DdbJson *item = stream_next_item(ss, s, &waiting);

		if (item || !waiting)
			return item;
		receive_page(ss);
	}
}

/* The next item in arrival order, or NULL at the end. */
static const DdbJson *
next_item_unordered(ShardScanState *ss)
{
	for (;;)
	{
		bool		any_waiting = false;

		for (int k = 0; k < ss->nstreams; k++)
		{
			Stream	   *s = &ss->streams[(ss->cur + k) % ss->nstreams];
			bool		waiting = false;
			const DdbJson *item = stream_next_item(ss, s, &waiting);

			if (item)
			{
				ss->cur = s - ss->streams;
				return item;
			}
			any_waiting |= waiting;
		}
		if (!any_waiting)
			return NULL;
		receive_page(ss);
	}
}

/* Heap order of streams: by head item's sort key, DynamoDB's order. */
static int
stream_cmp(Datum a, Datum b, void *arg)
{
	ShardScanState *ss = arg;
	const char *sk = ss->t->sk.attribute;
	int			c = avorder_compare(ddbjson_get(((Stream *) DatumGetPointer(a))->head, sk),
									ddbjson_get(((Stream *) DatumGetPointer(b))->head, sk));

	/* binaryheap keeps the largest on top */
	return ss->order > 0 ? -c : c;
}

/*
 * The next item in the sort key's order, merging the streams, or NULL at
 * the end.  Every stream's first page is needed before the first item.
 */
static const DdbJson *
next_item_ordered(ShardScanState *ss)
{
	Stream	   *s;
	const DdbJson *item;

	if (ss->heap == NULL)
	{
		ss->heap = binaryheap_allocate(Max(ss->nstreams, 1), stream_cmp, ss);
		for (int i = 0; i < ss->nstreams; i++)
		{
			s = &ss->streams[i];
			s->head = stream_next_item_wait(ss, s);
			if (s->head)
				binaryheap_add_unordered(ss->heap, PointerGetDatum(s));
		}
		binaryheap_build(ss->heap);
	}
	if (binaryheap_empty(ss->heap))
		return NULL;
	s = (Stream *) DatumGetPointer(binaryheap_first(ss->heap));
	item = s->head;

	/*
	 * The item stays valid until the stream moves past its page, which
	 * happens on the next call: advance only then.
	 */
	s->head = NULL;
	return item;
}

/*
 * The next item of range shards read one after another (each shard's keys
 * sort before the next one's), or NULL at the end.  A shard is asked for
 * only when the ones before it are used up, so a LIMIT met early reads no
 * further shard.
 */
static const DdbJson *
next_item_in_order(ShardScanState *ss)
{
	while (ss->cur < ss->nstreams)
	{
		const DdbJson *item = stream_next_item_wait(ss, &ss->streams[ss->cur]);

		if (item)
			return item;
		if (++ss->cur < ss->nstreams)
		{
			stream_fetch(ss, &ss->streams[ss->cur], NULL);
			ss->shards_read++;
		}
	}
	return NULL;
}

/* Move the stream whose item the ordered merge returned last forward. */
static void
advance_ordered(ShardScanState *ss)
{
	Stream	   *s;

	if (ss->heap == NULL || binaryheap_empty(ss->heap))
		return;
	s = (Stream *) DatumGetPointer(binaryheap_first(ss->heap));
	if (s->head != NULL)
		return;
	s->head = stream_next_item_wait(ss, s);
	if (s->head)
		binaryheap_replace_first(ss->heap, PointerGetDatum(s));
	else
		(void) binaryheap_remove_first(ss->heap);
}

/* ---------------------------------------------------------------------
 * Tuples
 * ---------------------------------------------------------------------
 */

/*
 * The text of column col decoded from key k of item, or NULL when the key
 * template does not hold the column or the key does not match it.
 */
static char *
decode_from_key(ShardTable *t, ShardKey *k, const DdbJson *item, const char *colname)
{
	const char *key;
	KeySpan    *spans;

	if (k->template == NULL || k->attribute == NULL)
		return NULL;
	key = codec_av_text(ddbjson_get(item, k->attribute));
	if (key == NULL)
		return NULL;
	for (int pass = 0; pass < 2; pass++)
	{
		/* a key that is not sharded may be a legacy base key */
		KeyTemplate *tmpl = pass == 0 ? k->template : k->base;

		if (tmpl == NULL)
			break;
		spans = palloc(sizeof(KeySpan) * tmpl->nparts);
		if (!keyfmt_decode(tmpl, key, strlen(key), spans, NULL))
			continue;
		for (int i = 0; i < tmpl->nparts; i++)
			if (tmpl->parts[i].kind == KP_COLUMN &&
				strcmp(tmpl->parts[i].text, colname) == 0)
				return keyfmt_field_text(tmpl, i, key, &spans[i]);
		return NULL;
	}
	return NULL;
}

/*
 * The shard an item's partition key names: its {shard} field, 0 when the
 * template has none, LEGACY_SHARD_BLOCK for a bare (base) key.
 */
static BlockNumber
item_shard(ShardTable *t, const DdbJson *item)
{
	const char *key;
	KeySpan    *spans;
	long		shard;

	if (t->pk.template == NULL)
		return 0;
	key = codec_av_text(ddbjson_get(item, t->pk.attribute));
	if (key == NULL)
		return 0;
	spans = palloc(sizeof(KeySpan) * t->pk.template->nparts);
	if (!keyfmt_decode(t->pk.template, key, strlen(key), spans, &shard))
		return LEGACY_SHARD_BLOCK;
	return shard < 0 ? 0 : (BlockNumber) shard;
}

/*
 * Refuse an item that lacks key attribute k or holds it as another type:
 * every read asks for the key attributes and DynamoDB always has them, so
 * such an item is a broken answer, never a row to fill with NULLs.
 */
static void
check_item_key(ShardTable *t, const DdbJson *item, ShardKey *k)
{
	const DdbJson *av;

	if (k->attribute == NULL)
		return;
	av = ddbjson_get(item, k->attribute);
	if (av != NULL && strcmp(av->keys[0], key_type(k)) == 0)
		return;
	ereport(ERROR,
			(errcode(ERRCODE_FDW_INVALID_DATA_TYPE),
			 errmsg("DynamoDB answered with an item (%s) of foreign table \"%s\" whose key attribute \"%s\" is %s",
					codec_item_key_text(item, t), t->relname, k->attribute,
					av == NULL ? "missing" : psprintf("of type %s, not %s", av->keys[0], key_type(k)))));
}

/* Fill the values of slot from item (the slot is left empty). */
static void
item_to_values(ShardScanState *ss, const DdbJson *item, TupleTableSlot *slot)
{
	ShardTable *t = ss->t;
	ListCell   *lc;

	check_item_key(t, item, &t->pk);
	check_item_key(t, item, &t->sk);
	ExecClearTuple(slot);
	memset(slot->tts_isnull, true, sizeof(bool) * slot->tts_tupleDescriptor->natts);
	foreach(lc, ss->cols)
	{
		ShardColumn *col = &t->columns[lfirst_int(lc)];
		int			att = col->attnum - 1;
		const DdbJson *av = ddbjson_get(item, col->attribute);

		if (av == NULL && col->ddb_type != DDB_TYPE_ITEM)
		{
			char	   *text = decode_from_key(t, &t->pk, item, col->name);

			if (text == NULL)
				text = decode_from_key(t, &t->sk, item, col->name);
			if (text != NULL)
			{
				slot->tts_values[att] = codec_text_to_datum(text, col, item, t);
				slot->tts_isnull[att] = false;
			}
			continue;
		}
		slot->tts_values[att] = codec_read_value(av, col, item, t,
												 &slot->tts_isnull[att]);
	}
}

/*
 * Store the values filled in slot as its row, with the item's shard in
 * ctid when UPDATE or DELETE need it.
 */
static void
store_row(ShardScanState *ss, TupleTableSlot *slot, BlockNumber shard)
{
	if (ss->need_ctid)
	{
		HeapTuple	tuple = heap_form_tuple(slot->tts_tupleDescriptor,
											slot->tts_values, slot->tts_isnull);

		ItemPointerSet(&tuple->t_self, shard, 1);
		ExecStoreHeapTuple(tuple, slot, false);
	}
	else
		ExecStoreVirtualTuple(slot);
}

/* Fill slot from item. */
static void
item_to_slot(ShardScanState *ss, const DdbJson *item, TupleTableSlot *slot)
{
	item_to_values(ss, item, slot);
	store_row(ss, slot, ss->need_ctid ? item_shard(ss->t, item) : 0);
}

/* ---------------------------------------------------------------------
 * Starting and stopping
 * ---------------------------------------------------------------------
 */

/* The item key JSON of a GetItem for partition key pk and sort key sk. */
static char *
item_key_json(ShardTable *t, const char *pk, const char *sk)
{
	Buf			out;
	JsonWriter	w;

	buf_init(&out);
	jw_init(&w, &out);
	jw_begin_object(&w);
	jw_key(&w, t->pk.attribute);
	jw_raw(&w, av_json(key_type(&t->pk), pk));
	if (sk)
	{
		jw_key(&w, t->sk.attribute);
		jw_raw(&w, av_json(key_type(&t->sk), sk));
	}
	jw_end_object(&w);
	return out.data;
}

/*
 * True when a range-sharded table's shards hold its sort key in order:
 * the shards range over the sort key itself, not normalized.  Then shard
 * i's items all sort before shard i+1's.
 */
static bool
range_in_key_order(ShardTable *t)
{
	return t->strategy == SHARD_RANGE && !t->range_normalize &&
		t->sk.attribute && t->sk.template == NULL && !t->legacy_unsharded &&
		list_length(t->shard_by) == 1 && linitial_int(t->shard_by) == t->sk.column;
}

/*
 * True when range shard number shard (shard_base counted in) can hold a
 * sort key within the bounds sent.
 */
static bool
range_shard_meets_bounds(ShardScanState *ss, int shard)
{
	ShardTable *t = ss->t;
	int			i = shard - t->shard_base;

	if (ss->sk_hi && strcmp(t->boundaries[i], ss->sk_hi) > 0)
		return false;
	if (ss->sk_lo && i + 1 < t->nboundaries && strcmp(t->boundaries[i + 1], ss->sk_lo) <= 0)
		return false;
	return true;
}

/*
 * The partition key values the scan reads: one per shard (and the base
 * key with legacy_unsharded), as a list of Stream templates.  Range shards
 * that cannot hold a sort key within the bounds sent are left out.
 */
static List *
partition_streams(ShardScanState *ss, const char **texts)
{
	ShardTable *t = ss->t;
	List	   *result = NIL;
	ListCell   *lc;
	char		err[SFDW_ERRLEN];
	List	   *shards;

	if (t->strategy == SHARD_DYNAMIC)
	{
		/* every shard the key ever had, as its shard_history records */
		char	   *base = route_partition_key(t, texts, 0, true, err, sizeof(err));
		DynamicMeta meta;

		if (base == NULL)
			return NIL;
		/* read afresh: another writer may have grown the key meanwhile */
		meta = dynamic_meta(t, ss->group, base, true, false);
		shards = route_read_shards(t, texts, meta.max_shards_ever);
	}
	else
		shards = route_read_shards(t, texts, t->shards);
	foreach(lc, shards)
	{
		Stream	   *s = palloc0(sizeof(Stream));

		s->shard = lfirst_int(lc);
		if (range_in_key_order(t) && !range_shard_meets_bounds(ss, s->shard))
			continue;
		s->pk_text = route_partition_key(t, texts, s->shard, false, err, sizeof(err));
		/* a value no stored key can have; DynamoDB refuses an empty key */
		if (s->pk_text == NULL || s->pk_text[0] == '\0')
			return NIL;
		result = lappend(result, s);
	}
	if (t->legacy_unsharded && t->strategy != SHARD_NONE)
	{
		Stream	   *s = palloc0(sizeof(Stream));

		s->shard = -1;
		s->pk_text = route_partition_key(t, texts, 0, true, err, sizeof(err));
		if (s->pk_text && s->pk_text[0] != '\0')
			result = lappend(result, s);
	}
	return result;
}

/* Evaluate the expressions and build the streams, then send. */
static void
scan_start(ShardScanState *ss, ExprContext *econtext)
{
	MemoryContext old;
	ListCell   *lc;
	int			i = 0;
	List	   *combos;
	List	   *streams = NIL;
	StringInfoData kc;

	MemoryContextReset(ss->runcxt);
	old = MemoryContextSwitchTo(ss->runcxt);
	ss->names = NIL;
	ss->value_names = NIL;
	ss->value_json = NIL;
	ss->heap = NULL;
	ss->sk_lo = NULL;
	ss->sk_hi = NULL;
	foreach(lc, ss->expr_states)
	{
		ExprState  *state = lfirst(lc);

		ss->values[i] = ExecEvalExpr(state, econtext, &ss->nulls[i]);
		ss->types[i] = exprType((Node *) state->expr);
		i++;
	}
	combos = key_combinations(ss);
	if (ss->op == SCAN_OP_SCAN)
	{
		for (int seg = 0; seg < ss->max_inflight; seg++)
		{
			Stream	   *s = palloc0(sizeof(Stream));

			s->segment = seg;
			streams = lappend(streams, s);
		}
	}
	else if (ss->op == SCAN_OP_GET)
	{
		List	   *keys = NIL;
		Stream	   *batch = NULL;

		foreach(lc, combos)
		{
			const char **texts = lfirst(lc);
			char	   *sk = ss->t->sk.attribute ? full_sort_key(ss, texts) : NULL;
			ListCell   *lc2;

			if (sk && sk[0] == '\0')
				continue;		/* no stored key is empty */
			foreach(lc2, partition_streams(ss, texts))
				keys = list_append_unique(keys,
										  makeString(item_key_json(ss->t, ((Stream *) lfirst(lc2))->pk_text, sk)));
		}
		foreach(lc, keys)
		{
			if (batch == NULL || list_length(batch->keys) == BATCH_GET_MAX)
			{
				batch = palloc0(sizeof(Stream));
				streams = lappend(streams, batch);
			}
			batch->keys = lappend(batch->keys, lfirst(lc));
		}
	}
	else if (combos != NIL)
	{
		/* IN lists here are on partition key columns: one sort key condition */
		List	   *seen = NIL;

		initStringInfo(&kc);
		appendStringInfo(&kc, "#n%d = :pk", name_index(ss, ss->t->pk.attribute));
		if (sort_key_condition(ss, linitial(combos), &kc))
		{
			foreach(lc, combos)
			{
				ListCell   *lc2;

				foreach(lc2, partition_streams(ss, lfirst(lc)))
				{
					Stream	   *s = lfirst(lc2);

					if (list_member(seen, makeString(s->pk_text)))
						continue;
					seen = lappend(seen, makeString(s->pk_text));
					streams = lappend(streams, s);
				}
			}
		}
		ss->key_cond_expr = kc.data;
	}
	ss->filter_expr = filter_expression(ss);
	ss->nstreams = list_length(streams);
	ss->streams = palloc0(sizeof(Stream) * Max(ss->nstreams, 1));
	i = 0;
	foreach(lc, streams)
		ss->streams[i++] = *(Stream *) lfirst(lc);
	ss->in_order = ss->order != 0 && ss->op == SCAN_OP_QUERY && range_in_key_order(ss->t);
	if (ss->in_order && ss->order < 0)
	{
		/* descending: the last shard first */
		for (i = 0; i < ss->nstreams / 2; i++)
		{
			Stream		tmp = ss->streams[i];

			ss->streams[i] = ss->streams[ss->nstreams - 1 - i];
			ss->streams[ss->nstreams - 1 - i] = tmp;
		}
	}
	ss->shards_read = ss->op == SCAN_OP_SCAN ? 0 : ss->nstreams;
	if (ss->in_order)
		ss->shards_read = Min(ss->nstreams, 1);
	for (i = 0; i < (ss->in_order ? Min(ss->nstreams, 1) : ss->nstreams); i++)
		stream_fetch(ss, &ss->streams[i], NULL);
	ss->cur = 0;
	ss->started = true;
	MemoryContextSwitchTo(old);
}

/* Unpack a flattened condition list. */
static ExecCond *
unpack_conds(List *flat, int *n)
{
	ExecCond   *conds = palloc0(sizeof(ExecCond) * Max(list_length(flat) / 3, 1));

	*n = list_length(flat) / 3;
	for (int i = 0; i < *n; i++)
	{
		conds[i].col = list_nth_int(flat, 3 * i);
		conds[i].op = (CondOp) list_nth_int(flat, 3 * i + 1);
		conds[i].expr = list_nth_int(flat, 3 * i + 2);
	}
	return conds;
}

/* The state of the scan a ForeignScan node runs (its BeginForeignScan). */
ShardScanState *
shard_scan_create(ForeignScanState *node, int eflags)
{
	ForeignScan *fs = (ForeignScan *) node->ss.ps.plan;
	EState	   *estate = node->ss.ps.state;
	ShardScanState *ss = palloc0(sizeof(ShardScanState));
	RangeTblEntry *rte = exec_rt_fetch(fs->scan.scanrelid, estate);
	Oid			userid = OidIsValid(SHARD_SCAN_USER(fs, rte)) ? SHARD_SCAN_USER(fs, rte) : GetUserId();
	int			nexprs = list_length(fs->fdw_exprs);

	ss->t = shard_get_table(rte->relid);
	ss->op = intVal(list_nth(fs->fdw_private, SCAN_PRIVATE_OP));
	ss->cols = list_nth(fs->fdw_private, SCAN_PRIVATE_COLUMNS);
	ss->attrs = list_nth(fs->fdw_private, SCAN_PRIVATE_ATTRS);
	ss->key_conds = unpack_conds(list_nth(fs->fdw_private, SCAN_PRIVATE_KEY_CONDS),
								 &ss->nkey_conds);
	ss->sort_conds = unpack_conds(list_nth(fs->fdw_private, SCAN_PRIVATE_SORT_CONDS),
								  &ss->nsort_conds);
	ss->filters = unpack_conds(list_nth(fs->fdw_private, SCAN_PRIVATE_FILTERS),
							   &ss->nfilters);
	ss->order = intVal(list_nth(fs->fdw_private, SCAN_PRIVATE_ORDER));
	ss->limit = intVal(list_nth(fs->fdw_private, SCAN_PRIVATE_LIMIT));
	ss->need_ctid = boolVal(list_nth(fs->fdw_private, SCAN_PRIVATE_NEED_CTID));
	ss->read_all = boolVal(list_nth(fs->fdw_private, SCAN_PRIVATE_READ_ALL));
	ss->exprs = fs->fdw_exprs;
	ss->values = palloc0(sizeof(Datum) * Max(nexprs, 1));
	ss->nulls = palloc0(sizeof(bool) * Max(nexprs, 1));
	ss->types = palloc0(sizeof(Oid) * Max(nexprs, 1));
	ss->runcxt = AllocSetContextCreate(estate->es_query_cxt, "shard_fdw scan",
									   ALLOCSET_DEFAULT_SIZES);
	ss->rowcxt = AllocSetContextCreate(estate->es_query_cxt, "shard_fdw row",
									   ALLOCSET_DEFAULT_SIZES);
	if (eflags & EXEC_FLAG_EXPLAIN_ONLY)
		return ss;
	ss->expr_states = ExecInitExprList(fs->fdw_exprs, (PlanState *) node);
	ss->conn = shard_get_connection(GetForeignTable(rte->relid)->serverid, userid);
	ss->max_inflight = ss->conn->server->max_concurrency;
	/*
	 * At the transaction level of the executor's state, not of a fetch, and
	 * gone with that state's memory even if nothing ends the scan.
	 */
	ss->group = ddb_group_create(ss->conn, ss->max_inflight);
	ddb_group_hold(&ss->group, GetMemoryChunkContext(ss));
	return ss;
}

/* BeginForeignScan */
void
shard_begin_scan(ForeignScanState *node, int eflags)
{
	node->fdw_state = shard_scan_create(node, eflags);
}

/* The foreign table and the connection of a scan. */
ShardTable *
shard_scan_table(ShardScanState *ss)
{
	return ss->t;
}

DdbConn *
shard_scan_conn(ShardScanState *ss)
{
	return ss->conn;
}

/* The scan's next item, in its order, or NULL at the end. */
static const DdbJson *
next_item(ShardScanState *ss)
{
	const DdbJson *item;
	MemoryContext old = MemoryContextSwitchTo(ss->runcxt);

	if (ss->in_order)
		item = next_item_in_order(ss);
	else if (ss->order != 0)
	{
		advance_ordered(ss);
		item = next_item_ordered(ss);
	}
	else
		item = next_item_unordered(ss);
	MemoryContextSwitchTo(old);
	if (item)
		ss->stats.items++;
	return item;
}

/*
 * read_all: read every item into a tuplestore (on disk past work_mem),
 * each row followed by the shard its item came from.
 */
static void
store_all(ShardScanState *ss, TupleTableSlot *slot)
{
	TupleDesc	desc = slot->tts_tupleDescriptor;
	int			natts = desc->natts;
	TupleDesc	store_desc;
	Datum	   *values;
	bool	   *nulls;
	const DdbJson *item;
	MemoryContext old = MemoryContextSwitchTo(ss->runcxt);

	store_desc = CreateTemplateTupleDesc(natts + 1);
	for (int i = 1; i <= natts; i++)
		TupleDescCopyEntry(store_desc, i, desc, i);
	TupleDescInitEntry(store_desc, natts + 1, "shard", INT8OID, -1, 0);
	ss->store_slot = MakeSingleTupleTableSlot(store_desc, &TTSOpsMinimalTuple);
	ss->stored = tuplestore_begin_heap(false, false, work_mem);
	values = palloc(sizeof(Datum) * (natts + 1));
	nulls = palloc0(sizeof(bool) * (natts + 1));
	MemoryContextSwitchTo(old);
	while ((item = next_item(ss)) != NULL)
	{
		MemoryContextReset(ss->rowcxt);
		old = MemoryContextSwitchTo(ss->rowcxt);
		item_to_values(ss, item, slot);
		memcpy(values, slot->tts_values, sizeof(Datum) * natts);
		memcpy(nulls, slot->tts_isnull, sizeof(bool) * natts);
		values[natts] = Int64GetDatum(ss->need_ctid ? item_shard(ss->t, item) : 0);
		tuplestore_putvalues(ss->stored, store_desc, values, nulls);
		MemoryContextSwitchTo(old);
	}
	ExecClearTuple(slot);
}

/* read_all: the next row from the tuplestore (filled on the first call). */
static TupleTableSlot *
next_stored(ShardScanState *ss, TupleTableSlot *slot)
{
	int			natts = slot->tts_tupleDescriptor->natts;
	MemoryContext old;
	bool		found;

	if (ss->stored == NULL)
		store_all(ss, slot);
	MemoryContextReset(ss->rowcxt);
	/* a row read back from disk is allocated here, and the slot frees it */
	old = MemoryContextSwitchTo(ss->runcxt);
	found = tuplestore_gettupleslot(ss->stored, true, false, ss->store_slot);
	MemoryContextSwitchTo(old);
	if (!found)
		return ExecClearTuple(slot);
	slot_getallattrs(ss->store_slot);
	ExecClearTuple(slot);
	memcpy(slot->tts_values, ss->store_slot->tts_values, sizeof(Datum) * natts);
	memcpy(slot->tts_isnull, ss->store_slot->tts_isnull, sizeof(bool) * natts);
	old = MemoryContextSwitchTo(ss->rowcxt);
	store_row(ss, slot, (BlockNumber) DatumGetInt64(ss->store_slot->tts_values[natts]));
	MemoryContextSwitchTo(old);
	return slot;
}

/* IterateForeignScan */
TupleTableSlot *
shard_iterate_scan(ForeignScanState *node)
{
	ShardScanState *ss = node->fdw_state;
	TupleTableSlot *slot = node->ss.ss_ScanTupleSlot;
	const DdbJson *item;
	MemoryContext old;

	if (!ss->started)
		scan_start(ss, node->ss.ps.ps_ExprContext);
	if (ss->read_all)
		return next_stored(ss, slot);
	MemoryContextReset(ss->rowcxt);
	item = next_item(ss);
	if (item == NULL)
		return ExecClearTuple(slot);
	old = MemoryContextSwitchTo(ss->rowcxt);
	item_to_slot(ss, item, slot);
	MemoryContextSwitchTo(old);
	return slot;
}

/*
 * The scan's next item whose row passes the plan's conditions, or NULL at
 * the end, for a scan that does more than return rows (direct modify).
 * The item is valid until the next call.
 */
const DdbJson *
shard_scan_next_match(ShardScanState *ss, ForeignScanState *node)
{
	ExprContext *econtext = node->ss.ps.ps_ExprContext;
	TupleTableSlot *slot = node->ss.ss_ScanTupleSlot;
	const DdbJson *item;

	if (!ss->started)
		scan_start(ss, econtext);
	while ((item = next_item(ss)) != NULL)
	{
		MemoryContext old;

		if (node->ss.ps.qual == NULL)
			return item;
		MemoryContextReset(ss->rowcxt);
		old = MemoryContextSwitchTo(ss->rowcxt);
		item_to_slot(ss, item, slot);
		MemoryContextSwitchTo(old);
		ResetExprContext(econtext);
		econtext->ecxt_scantuple = slot;
		if (ExecQual(node->ss.ps.qual, econtext))
			return item;
	}
	return NULL;
}

/* Add the request counters of from to into (items are counted apart). */
static void
add_stats(DdbStats *into, const DdbStats *from)
{
	into->requests += from->requests;
	into->attempts += from->attempts;
	into->retries += from->retries;
	into->throttles += from->throttles;
	into->scanned += from->scanned;
	into->capacity += from->capacity;
}

/*
 * Stop the streams and free what they hold, keeping the group (and its
 * counters) for the next start.
 */
static void
scan_reset(ShardScanState *ss)
{
	if (ss->stored)
	{
		tuplestore_end(ss->stored);
		ExecDropSingleTupleTableSlot(ss->store_slot);
		ss->stored = NULL;
		ss->store_slot = NULL;
	}
	if (ss->group)
		ddb_group_reset(ss->group);
	ss->started = false;
}

/* Stop the streams and free what they hold, the group included. */
void
shard_scan_stop(ShardScanState *ss)
{
	scan_reset(ss);
	if (ss->group)
	{
		add_stats(&ss->stats, ddb_group_stats(ss->group));
		ddb_group_free(ss->group);
		ss->group = NULL;
	}
}

/* ReScanForeignScan: start again, with the parameters as they now are. */
void
shard_rescan(ForeignScanState *node)
{
	scan_reset(node->fdw_state);
}

/* EndForeignScan */
void
shard_end_scan(ForeignScanState *node)
{
	ShardScanState *ss = node->fdw_state;

	if (ss)
		shard_scan_stop(ss);
}

/* ---------------------------------------------------------------------
 * EXPLAIN
 * ---------------------------------------------------------------------
 */

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
	return "?";
}

/* Conditions as text: "col op value AND ...". */
static char *
conds_text(ShardScanState *ss, ExecCond *conds, int n)
{
	static const char *const ops[] = {
		[COND_EQ] = "=", [COND_NE] = "<>", [COND_LT] = "<", [COND_LE] = "<=",
		[COND_GT] = ">", [COND_GE] = ">=", [COND_PREFIX] = "begins with",
		[COND_IN] = "= ANY", [COND_NULL] = "IS NULL", [COND_NOT_NULL] = "IS NOT NULL",
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
			if (ss->key_conds[i].col == lfirst_int(lc) && ss->key_conds[i].op == COND_EQ)
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

/* ExplainForeignScan: what goes to DynamoDB, and with ANALYZE what it cost. */
void
shard_explain_scan(ForeignScanState *node, ExplainState *es)
{
	shard_scan_explain(node->fdw_state, es);
}

/* What EXPLAIN shows of a scan (ExplainForeignScan). */
void
shard_scan_explain(ShardScanState *ss, ExplainState *es)
{
	ShardTable *t = ss->t;
	static const char *const opnames[] = {
		[SCAN_OP_SCAN] = "Scan", [SCAN_OP_QUERY] = "Query",
		[SCAN_OP_GET] = "GetItem (BatchGetItem for several keys)",
	};

	ExplainPropertyText("DynamoDB Operation", opnames[ss->op], es);
	ExplainPropertyText("DynamoDB Table", t->table, es);
	if (t->index)
		ExplainPropertyText("DynamoDB Index", t->index, es);
	if (ss->op != SCAN_OP_SCAN)
	{
		ExplainPropertyText("Shards", shards_text(ss), es);
		if (t->pk.format)
			ExplainPropertyText("Partition Key",
								psprintf("%s = %s", t->pk.attribute,
										 quote_literal_cstr(t->pk.format)), es);
		ExplainPropertyText("Key Condition", conds_text(ss, ss->key_conds, ss->nkey_conds), es);
	}
	if (ss->nsort_conds > 0)
		ExplainPropertyText("Sort Key Condition",
							conds_text(ss, ss->sort_conds, ss->nsort_conds), es);
	if (ss->nfilters > 0)
		ExplainPropertyText("DynamoDB Filter", conds_text(ss, ss->filters, ss->nfilters), es);
	if (ss->order != 0)
		ExplainPropertyText("Merge", psprintf("%s %s%s", t->sk.attribute,
											  ss->order > 0 ? "ASC" : "DESC",
											  range_in_key_order(t) ?
											  " (range shards read one after another)" : ""),
							es);
	if (ss->read_all)
		ExplainPropertyText("Read Ahead", "every item, before the first write", es);
	if (ss->limit > 0)
		ExplainPropertyInteger("Limit per Shard", NULL,
							   shard_page_limit(ss->limit,
												ss->started && !ss->in_order ? ss->nstreams :
												t->strategy == SHARD_NONE ||
												(ss->order != 0 && range_in_key_order(t)) ? 1 :
												t->shards + (t->legacy_unsharded ? 1 : 0)),
							   es);
	if (es->verbose)
	{
		StringInfoData buf;
		ListCell   *lc;

		initStringInfo(&buf);
		foreach(lc, ss->attrs)
			appendStringInfo(&buf, "%s%s", buf.len ? ", " : "", strVal(lfirst(lc)));
		ExplainPropertyText("Projection", ss->attrs ? buf.data : "(all attributes)", es);
	}
	if (es->analyze)
	{
		DdbStats	total = ss->stats;

		if (ss->group)
			add_stats(&total, ddb_group_stats(ss->group));
		if (ss->op != SCAN_OP_SCAN)
			ExplainPropertyInteger("Shards Read", NULL, ss->shards_read, es);
		ExplainPropertyInteger("DynamoDB Requests", NULL, total.requests, es);
		ExplainPropertyInteger("DynamoDB Pages", NULL, ss->pages, es);
		ExplainPropertyInteger("DynamoDB Items Scanned", NULL, total.scanned, es);
		ExplainPropertyInteger("DynamoDB Items Returned", NULL, total.items, es);
		ExplainPropertyFloat("DynamoDB Consumed Capacity", NULL, total.capacity, 1, es);
		ExplainPropertyInteger("DynamoDB Retries", NULL, total.retries, es);
		ExplainPropertyInteger("DynamoDB Throttles", NULL, total.throttles, es);
	}
}
