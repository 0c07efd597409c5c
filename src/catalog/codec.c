/*-------------------------------------------------------------------------
 *
 * codec.c
 *		Values between PostgreSQL and DynamoDB: a Datum of a column becomes
 *		an AttributeValue ({"S": ...}, {"N": ...}, ...) in a request body,
 *		and an AttributeValue of an item becomes a Datum of a column.
 *
 * Numbers travel as decimal text, so 38-digit values are exact; NaN,
 * infinities and numbers DynamoDB cannot hold are refused before anything
 * is sent.  Timestamps are written as ISO-8601 UTC with six fractional
 * digits, so that they sort as text.  A stored value that does not fit its
 * column is an error naming the column, the attribute and the item's key.
 *
 *-------------------------------------------------------------------------
 */
#include "catalog/shard_catalog.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "datatype/timestamp.h"
#include "fmgr.h"
#include "mb/pg_wchar.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/datetime.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/numeric.h"
#include "utils/syscache.h"

/* DynamoDB's number precision, for messages (ddb_number_check checks it). */
#define DDB_MAX_DIGITS 38

/*
 * A type's input function, set up for InputFunctionCall: looking it up
 * for every value read was a good part of a Scan's CPU per item.
 */
typedef struct InputFunction
{
	Oid			typid;
	Oid			ioparam;
	FmgrInfo	flinfo;
} InputFunction;

#define INPUT_FUNCTIONS 16

/* The input functions kept (input_function), in input_cxt. */
static InputFunction input_functions[INPUT_FUNCTIONS];
static int	input_count = 0;
static bool input_stale = false;
static MemoryContext input_cxt = NULL;

/* What an error during the conversion of one value is about. */
typedef struct ReadContext
{
	ShardColumn *col;
	const DdbJson *item;
	ShardTable *t;
} ReadContext;

/* ---------------------------------------------------------------------
 * Type mapping
 * ---------------------------------------------------------------------
 */

/* True for the types stored as N by default. */
static bool
is_number_type(Oid typid)
{
	return typid == INT2OID || typid == INT4OID || typid == INT8OID ||
		typid == NUMERICOID || typid == FLOAT4OID || typid == FLOAT8OID;
}

/*
 * The DynamoDB type a column of type typid is stored as by default; for
 * arrays *elemtype receives the element type.
 */
DdbType
ddb_type_for_column(Oid typid, Oid *elemtype)
{
	Oid			elem = get_element_type(typid);

	*elemtype = elem;
	if (OidIsValid(elem))
	{
		if (is_number_type(elem))
			return DDB_TYPE_NS;
		if (elem == BYTEAOID)
			return DDB_TYPE_BS;
		return DDB_TYPE_SS;
	}
	if (is_number_type(typid))
		return DDB_TYPE_N;
	if (typid == BYTEAOID)
		return DDB_TYPE_B;
	if (typid == BOOLOID)
		return DDB_TYPE_BOOL;
	if (typid == JSONOID || typid == JSONBOID)
		return DDB_TYPE_M;
	return DDB_TYPE_S;
}

/* True when a column of type typid can be stored as type. */
bool
ddb_type_fits_column(DdbType type, Oid typid)
{
	Oid			elem = get_element_type(typid);
	bool		json = typid == JSONOID || typid == JSONBOID;

	switch (type)
	{
		case DDB_TYPE_S:
			return !OidIsValid(elem);
		case DDB_TYPE_N:
			return is_number_type(typid) || typid == TIMESTAMPTZOID ||
				typid == TIMESTAMPOID || typid == TEXTOID;
		case DDB_TYPE_B:
			return typid == BYTEAOID;
		case DDB_TYPE_BOOL:
			return typid == BOOLOID;
		case DDB_TYPE_M:
			return json;
		case DDB_TYPE_L:
			return json || OidIsValid(elem);
		case DDB_TYPE_SS:
			return OidIsValid(elem) && !is_number_type(elem) && elem != BYTEAOID;
		case DDB_TYPE_NS:
			return OidIsValid(elem) && is_number_type(elem);
		case DDB_TYPE_BS:
			return elem == BYTEAOID;
		case DDB_TYPE_ITEM:
			return json;
	}
	return false;
}

/* The output function of a type. */
static Oid
type_output(Oid typid)
{
	Oid			func;
	bool		varlena;

	getTypeOutputInfo(typid, &func, &varlena);
	return func;
}

/* ---------------------------------------------------------------------
 * Numbers
 * ---------------------------------------------------------------------
 */

/*
 * Check that text is a finite decimal number DynamoDB can hold; errors
 * name the column.
 */
void
codec_check_number(const char *text, const char *column)
{
	switch (ddb_number_check(text, strlen(text)))
	{
		case DDB_NUMBER_OK:
			break;
		case DDB_NUMBER_SYNTAX:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
					 errmsg("value \"%s\" of column \"%s\" is not a number", text, column)));
			break;
		case DDB_NUMBER_DIGITS:
			ereport(ERROR,
					(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
					 errmsg("value of column \"%s\" has more than %d significant digits", column, DDB_MAX_DIGITS),
					 errdetail("DynamoDB numbers hold at most %d significant digits.", DDB_MAX_DIGITS)));
			break;
		case DDB_NUMBER_RANGE:
			ereport(ERROR,
					(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
					 errmsg("value of column \"%s\" is out of range for a DynamoDB number", column),
					 errdetail("DynamoDB numbers range from 1E-130 to 9.9999999999999999999999999999999999999E+125 in magnitude.")));
			break;
	}
}

/* The number text of a numeric-family value; NaN and infinities refused. */
static char *
number_text(ShardColumn *col, Oid typid, Datum value)
{
	char	   *text;

	switch (typid)
	{
		case INT2OID:
			return psprintf("%d", (int) DatumGetInt16(value));
		case INT4OID:
			return psprintf("%d", DatumGetInt32(value));
		case INT8OID:
			return psprintf(INT64_FORMAT, DatumGetInt64(value));
		case FLOAT4OID:
		case FLOAT8OID:
			{
				double		d = typid == FLOAT4OID ?
					(double) DatumGetFloat4(value) : DatumGetFloat8(value);

				if (isnan(d) || isinf(d))
					ereport(ERROR,
							(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
							 errmsg("cannot store %s in column \"%s\"",
									isnan(d) ? "NaN" : "infinity", col->name),
							 errdetail("DynamoDB numbers are finite.")));
				/* -0 equals 0, so it must be stored and found as 0 */
				if (d == 0)
					return pstrdup("0");
				text = OidOutputFunctionCall(type_output(typid), value);
				break;
			}
		case NUMERICOID:
			{
				Numeric		n = DatumGetNumeric(value);

				if (numeric_is_nan(n) || numeric_is_inf(n))
					ereport(ERROR,
							(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
							 errmsg("cannot store %s in column \"%s\"",
									numeric_is_nan(n) ? "NaN" : "infinity", col->name),
							 errdetail("DynamoDB numbers are finite.")));
				text = numeric_normalize(n);
				break;
			}
		default:
			text = OidOutputFunctionCall(type_output(typid), value);
			break;
	}
	codec_check_number(text, col->name);
	return text;
}

/* ---------------------------------------------------------------------
 * Text forms
 * ---------------------------------------------------------------------
 */

/* ISO-8601 text of a timestamp (UTC for timestamptz), six fraction digits. */
static char *
timestamp_text(ShardColumn *col, Timestamp ts, bool utc)
{
	struct pg_tm tm;
	fsec_t		fsec;

	if (TIMESTAMP_NOT_FINITE(ts) ||
		timestamp2tm(ts, NULL, &tm, &fsec, NULL, NULL) != 0 ||
		tm.tm_year < 1 || tm.tm_year > 9999)
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("timestamp in column \"%s\" cannot be stored", col->name),
				 errdetail("Stored timestamps are finite and within years 1 to 9999, so that they sort as text.")));
	return psprintf("%04d-%02d-%02dT%02d:%02d:%02d.%06d%s",
					tm.tm_year, tm.tm_mon, tm.tm_mday,
					tm.tm_hour, tm.tm_min, tm.tm_sec, (int) fsec,
					utc ? "Z" : "");
}

/*
 * The text form of a scalar value of type typid as stored in an S
 * attribute or a key: ISO-8601 for dates and timestamps, the output
 * function's text otherwise.
 */
static char *
scalar_text(ShardColumn *col, Oid typid, Datum value)
{
	switch (typid)
	{
		case TIMESTAMPTZOID:
			return timestamp_text(col, DatumGetTimestampTz(value), true);
		case TIMESTAMPOID:
			return timestamp_text(col, DatumGetTimestamp(value), false);
		case DATEOID:
			{
				DateADT		d = DatumGetDateADT(value);
				int			y,
							m,
							day;

				if (DATE_NOT_FINITE(d))
					y = 0;		/* refused below, as out of range */
				else
					j2date(d + POSTGRES_EPOCH_JDATE, &y, &m, &day);
				if (y < 1 || y > 9999)
					ereport(ERROR,
							(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
							 errmsg("date in column \"%s\" cannot be stored", col->name),
							 errdetail("Stored dates are finite and within years 1 to 9999, so that they sort as text.")));
				return psprintf("%04d-%02d-%02d", y, m, day);
			}
	}
	if (is_number_type(typid))
		return number_text(col, typid, value);
	return OidOutputFunctionCall(type_output(typid), value);
}

/* The base64 text of a bytea value. */
static char *
base64_text(Datum value)
{
	bytea	   *b = DatumGetByteaPP(value);
	size_t		len;

	return base64_encode((unsigned char *) VARDATA_ANY(b), VARSIZE_ANY_EXHDR(b), &len);
}

/*
 * The text a column value contributes to a key: the number text for N
 * keys and numeric columns, the scalar text otherwise; bytea as base64.
 */
char *
codec_key_text(ShardColumn *col, Datum value)
{
	if (col->typid == BYTEAOID)
		return base64_text(value);
	if (col->ddb_type == DDB_TYPE_N && !is_number_type(col->typid))
		return number_text(col, col->typid, value);
	return scalar_text(col, col->typid, value);
}

/* ---------------------------------------------------------------------
 * Writing AttributeValues
 * ---------------------------------------------------------------------
 */

/* Write {"type": "text"}. */
static void
write_typed_string(JsonWriter *w, const char *type, const char *text, size_t len)
{
	jw_begin_object(w);
	jw_key(w, type);
	jw_string(w, text, len);
	jw_end_object(w);
}

/* Epoch seconds of a timestamp, as exact number text. */
static char *
epoch_text(ShardColumn *col, Timestamp ts)
{
	int64		us;
	bool		negative;
	char	   *text;

	if (TIMESTAMP_NOT_FINITE(ts))
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("timestamp in column \"%s\" cannot be stored as a number", col->name)));
	us = ts + (int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * USECS_PER_DAY;
	negative = us < 0;
	if (negative)
		us = -us;
	text = psprintf("%s" INT64_FORMAT ".%06d", negative ? "-" : "",
					us / USECS_PER_SEC, (int) (us % USECS_PER_SEC));
	/* drop trailing zeros of the fraction, and the point if none is left */
	for (char *end = text + strlen(text) - 1; *end == '0' || *end == '.'; end--)
	{
		bool		point = *end == '.';

		*end = '\0';
		if (point)
			break;
	}
	return text;
}

/* A timestamp from epoch seconds given as number text, exact to the microsecond. */
static Datum
timestamp_from_epoch(const char *text)
{
	Datum		n = DirectFunctionCall3(numeric_in, CStringGetDatum(text),
										ObjectIdGetDatum(InvalidOid),
										Int32GetDatum(-1));
	Datum		us;

	n = DirectFunctionCall2(numeric_mul, n,
							DirectFunctionCall1(int8_numeric, Int64GetDatum(USECS_PER_SEC)));
	n = DirectFunctionCall2(numeric_round, n, Int32GetDatum(0));
	us = DirectFunctionCall1(numeric_int8, n);
	return TimestampTzGetDatum(DatumGetInt64(us) -
							   (int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * USECS_PER_DAY);
}

/* Raise "the json value nests deeper than DynamoDB takes". */
static void
too_deep(ShardColumn *col)
{
	ereport(ERROR,
			(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
			 errmsg("value of column \"%s\" nests too deeply for DynamoDB", col->name),
			 errdetail("DynamoDB stores at most %d levels of nesting: at most %d objects and arrays in one another.",
					   DDB_MAX_NESTING, DDB_MAX_NESTING - 1)));
}

/*
 * Write a parsed JSON value as the AttributeValue it stands for, at
 * nesting level level (1 for the attribute itself).
 */
static void
write_json_as_av(JsonWriter *w, ShardColumn *col, const DdbJson *j, int level)
{
	if ((j->kind == DJ_ARRAY || j->kind == DJ_OBJECT) && level >= DDB_MAX_NESTING)
		too_deep(col);
	switch (j->kind)
	{
		case DJ_NULL:
			jw_begin_object(w);
			jw_key(w, "NULL");
			jw_bool(w, true);
			jw_end_object(w);
			break;
		case DJ_BOOL:
			jw_begin_object(w);
			jw_key(w, "BOOL");
			jw_bool(w, j->boolean);
			jw_end_object(w);
			break;
		case DJ_NUMBER:
			codec_check_number(j->str, col->name);
			write_typed_string(w, "N", j->str, j->len);
			break;
		case DJ_STRING:
			write_typed_string(w, "S", j->str, j->len);
			break;
		case DJ_ARRAY:
			jw_begin_object(w);
			jw_key(w, "L");
			jw_begin_array(w);
			for (int i = 0; i < j->n; i++)
				write_json_as_av(w, col, &j->elems[i], level + 1);
			jw_end_array(w);
			jw_end_object(w);
			break;
		case DJ_OBJECT:
			jw_begin_object(w);
			jw_key(w, "M");
			jw_begin_object(w);
			for (int i = 0; i < j->n; i++)
			{
				jw_key(w, j->keys[i]);
				write_json_as_av(w, col, &j->elems[i], level + 1);
			}
			jw_end_object(w);
			jw_end_object(w);
			break;
		case DJ_DEFERRED:
			/* write_json_value parses the whole text */
			elog(ERROR, "column \"%s\": a JSON object was left unparsed", col->name);
	}
}

/* Write a json or jsonb value: objects as M, arrays as L, and so on. */
static void
write_json_value(JsonWriter *w, ShardColumn *col, Datum value)
{
	char	   *text = OidOutputFunctionCall(type_output(col->typid), value);
	char		err[SFDW_ERRLEN];
	bool		deep;
	DdbJson    *j = ddbjson_parse_ex(text, strlen(text), NULL, err, sizeof(err),
								   &deep);

	if (j == NULL && deep)
		too_deep(col);
	if (j == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
				 errmsg("value of column \"%s\" is not valid JSON: %s", col->name, err)));
	if (col->ddb_type == DDB_TYPE_M && j->kind != DJ_OBJECT && col->explicit_type)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("value of column \"%s\" is not a JSON object", col->name),
				 errdetail("The column's ddb_type is M.")));
	if (col->ddb_type == DDB_TYPE_L && j->kind != DJ_ARRAY)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("value of column \"%s\" is not a JSON array", col->name),
				 errdetail("The column's ddb_type is L.")));
	write_json_as_av(w, col, j, 1);
}

/* Write an array value as a set (SS, NS, BS) or a list (L). */
static void
write_array_value(JsonWriter *w, ShardColumn *col, Datum value)
{
	ArrayType  *arr = DatumGetArrayTypeP(value);
	int16		elmlen;
	bool		elmbyval;
	char		elmalign;
	Datum	   *elems;
	bool	   *nulls;
	int			n;
	char	  **texts;
	const char *settype = col->ddb_type == DDB_TYPE_NS ? "NS" :
		col->ddb_type == DDB_TYPE_BS ? "BS" : "SS";
	bool		list = col->ddb_type == DDB_TYPE_L;

	get_typlenbyvalalign(col->elemtype, &elmlen, &elmbyval, &elmalign);
	deconstruct_array(arr, col->elemtype, elmlen, elmbyval, elmalign,
					  &elems, &nulls, &n);
	if (n == 0 && !list)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot store an empty array in column \"%s\" as a DynamoDB set", col->name),
				 errhint("Store NULL instead, or set the column's ddb_type to L.")));
	texts = palloc(sizeof(char *) * n);
	for (int i = 0; i < n; i++)
	{
		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("array in column \"%s\" has a NULL element", col->name),
					 errdetail("DynamoDB sets and lists of this kind cannot hold NULLs.")));
		texts[i] = col->elemtype == BYTEAOID ? base64_text(elems[i]) :
			scalar_text(col, col->elemtype, elems[i]);
		if (!list)
			for (int k = 0; k < i; k++)
				if (strcmp(texts[k], texts[i]) == 0)
					ereport(ERROR,
							(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
							 errmsg("array in column \"%s\" holds \"%s\" twice", col->name, texts[i]),
							 errdetail("DynamoDB sets cannot hold duplicates."),
							 errhint("Set the column's ddb_type to L to store a list.")));
	}
	jw_begin_object(w);
	jw_key(w, list ? "L" : settype);
	jw_begin_array(w);
	for (int i = 0; i < n; i++)
	{
		if (list)
			write_typed_string(w, is_number_type(col->elemtype) ? "N" :
							   col->elemtype == BYTEAOID ? "B" : "S",
							   texts[i], strlen(texts[i]));
		else
			jw_cstring(w, texts[i]);
	}
	jw_end_array(w);
	jw_end_object(w);
}

/*
 * Write the AttributeValue of a non-null value of column col.  Errors (NaN,
 * numbers out of DynamoDB's range, sets with duplicates) come before
 * anything is sent.
 */
void
codec_write_value(JsonWriter *w, ShardColumn *col, Datum value)
{
	char	   *text;

	switch (col->ddb_type)
	{
		case DDB_TYPE_S:
			text = scalar_text(col, col->typid, value);
			write_typed_string(w, "S", text, strlen(text));
			break;
		case DDB_TYPE_N:
			if (col->typid == TIMESTAMPTZOID || col->typid == TIMESTAMPOID)
				text = epoch_text(col, DatumGetTimestamp(value));
			else
				text = number_text(col, col->typid, value);
			write_typed_string(w, "N", text, strlen(text));
			break;
		case DDB_TYPE_B:
			text = codec_key_text(col, value);
			write_typed_string(w, "B", text, strlen(text));
			break;
		case DDB_TYPE_BOOL:
			jw_begin_object(w);
			jw_key(w, "BOOL");
			jw_bool(w, DatumGetBool(value));
			jw_end_object(w);
			break;
		case DDB_TYPE_M:
		case DDB_TYPE_ITEM:
			write_json_value(w, col, value);
			break;
		case DDB_TYPE_L:
			if (OidIsValid(col->elemtype))
				write_array_value(w, col, value);
			else
				write_json_value(w, col, value);
			break;
		case DDB_TYPE_SS:
		case DDB_TYPE_NS:
		case DDB_TYPE_BS:
			write_array_value(w, col, value);
			break;
	}
}

/* ---------------------------------------------------------------------
 * Reading AttributeValues
 * ---------------------------------------------------------------------
 */

/* The scalar text of an S, N or B AttributeValue, or NULL. */
char *
codec_av_text(const DdbJson *av)
{
	if (av == NULL || av->kind != DJ_OBJECT || av->n != 1 ||
		av->elems[0].kind != DJ_STRING)
		return NULL;
	return av->elems[0].str;
}

/*
 * "pk = "x", sk = "y"": the key of an item, for messages.  A key value that
 * is no valid S, N or B is shown as the JSON it came as, bytes that are not
 * UTF-8 escaped.
 */
char *
codec_item_key_text(const DdbJson *item, ShardTable *t)
{
	Buf			buf;
	ShardKey   *keys[2] = {&t->pk, &t->sk};

	buf_init(&buf);
	for (int i = 0; i < 2; i++)
	{
		const DdbJson *av;
		const char *v;
		DdbCheck	chk;

		if (keys[i]->attribute == NULL)
			continue;
		av = ddbjson_get(item, keys[i]->attribute);
		v = codec_av_text(av);
		buf_printf(&buf, "%s%s = ", buf.len ? ", " : "", keys[i]->attribute);
		if (av == NULL)
			buf_puts(&buf, "?");
		else if (v != NULL && ddbjson_check_av(av, 1, &chk))
			buf_printf(&buf, "\"%s\"", v);
		else
		{
			Buf			json;
			JsonWriter	w;

			buf_init(&json);
			jw_init(&w, &json);
			jw_tree(&w, av);
			if (ddb_utf8_valid(json.data, json.len))
				buf_append(&buf, json.data, json.len);
			else
				ddb_append_printable(&buf, json.data, json.len);
		}
	}
	return buf.data;
}

/*
 * The text of column colname decoded from key k of item, or NULL when the
 * key template does not hold the column or the key does not match it.
 */
char *
codec_key_field(ShardTable *t, ShardKey *k, const DdbJson *item, const char *colname)
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
		/* a time bucket does not give the value back: only finer fields do */
		for (int i = 0; i < tmpl->nparts; i++)
			if (keyfmt_decodes(&tmpl->parts[i]) &&
				strcmp(tmpl->parts[i].text, colname) == 0)
				return keyfmt_field_text(tmpl, i, key, &spans[i]);
		return NULL;
	}
	return NULL;
}

/* Error context callback naming the column, attribute and item key. */
static void
read_error_context(void *arg)
{
	ReadContext *rc = arg;

	errcontext("column \"%s\" of foreign table \"%s\", attribute \"%s\" of item (%s)",
			   rc->col->name, rc->t->relname, rc->col->attribute,
			   codec_item_key_text(rc->item, rc->t));
}

/* Raise "the stored value does not fit the column". */
static void
misfit(ShardColumn *col, const char *type)
{
	ereport(ERROR,
			(errcode(ERRCODE_FDW_INVALID_DATA_TYPE),
			 errmsg("stored %s value does not fit column \"%s\" of type %s",
					type, col->name, format_type_be(col->typid))));
}

/*
 * A DynamoDB number as a JSON number: itself when JSON's grammar takes it
 * (DynamoDB sends numbers normalized), else its numeric spelling ("007"
 * and "+7" are numbers to DynamoDB, not to JSON).
 */
static const char *
json_number_text(const char *text)
{
	if (json_number_length(text, strlen(text)) == strlen(text))
		return text;
	return DatumGetCString(DirectFunctionCall1(numeric_out,
											   DirectFunctionCall3(numeric_in,
																   CStringGetDatum(text),
																   ObjectIdGetDatum(InvalidOid),
																   Int32GetDatum(-1))));
}

/* Convert an AttributeValue to JSON text, appending to buf. */
static void
av_to_json(JsonWriter *w, const DdbJson *av)
{
	const char *type;
	const DdbJson *v;

	if (av->kind != DJ_OBJECT || av->n != 1)
	{
		jw_null(w);
		return;
	}
	type = av->keys[0];
	v = &av->elems[0];
	if (strcmp(type, "S") == 0 || strcmp(type, "B") == 0)
		jw_string(w, v->str, v->len);
	else if (strcmp(type, "N") == 0)
		jw_raw(w, json_number_text(v->str));
	else if (strcmp(type, "BOOL") == 0)
		jw_bool(w, v->boolean);
	else if (strcmp(type, "NULL") == 0)
		jw_null(w);
	else if (strcmp(type, "M") == 0)
	{
		jw_begin_object(w);
		for (int i = 0; i < v->n; i++)
		{
			jw_key(w, v->keys[i]);
			av_to_json(w, &v->elems[i]);
		}
		jw_end_object(w);
	}
	else if (strcmp(type, "L") == 0)
	{
		jw_begin_array(w);
		for (int i = 0; i < v->n; i++)
			av_to_json(w, &v->elems[i]);
		jw_end_array(w);
	}
	else if (strcmp(type, "SS") == 0 || strcmp(type, "BS") == 0 ||
			 strcmp(type, "NS") == 0)
	{
		bool		numbers = type[0] == 'N';

		jw_begin_array(w);
		for (int i = 0; i < v->n; i++)
		{
			if (numbers)
				jw_raw(w, json_number_text(v->elems[i].str));
			else
				jw_string(w, v->elems[i].str, v->elems[i].len);
		}
		jw_end_array(w);
	}
	else
		jw_null(w);
}

/* Forget the input functions at the next lookup: a type changed. */
static void
input_functions_stale(Datum arg, int cacheid, uint32 hashvalue)
{
	input_stale = true;
}

/*
 * The input function of type typid, set up for calls and kept for the
 * backend.  Up to INPUT_FUNCTIONS types are kept; one more, or a change
 * to any type, starts the list anew (not in the invalidation callback
 * itself, which may run while an input function is being called).
 */
static InputFunction *
input_function(Oid typid)
{
	InputFunction *f;
	Oid			infunc;

	if (input_cxt == NULL)
	{
		input_cxt = AllocSetContextCreate(CacheMemoryContext,
										  "shard_fdw input functions",
										  ALLOCSET_SMALL_SIZES);
		CacheRegisterSyscacheCallback(TYPEOID, input_functions_stale, (Datum) 0);
	}
	if (input_stale || input_count == INPUT_FUNCTIONS)
	{
		MemoryContextReset(input_cxt);
		input_count = 0;
		input_stale = false;
	}
	for (int i = 0; i < input_count; i++)
		if (input_functions[i].typid == typid)
			return &input_functions[i];
	f = &input_functions[input_count];
	getTypeInputInfo(typid, &infunc, &f->ioparam);
	fmgr_info_cxt(infunc, &f->flinfo, input_cxt);
	f->typid = typid;
	input_count++;
	return f;
}

/* A value of type typid (typmod) from its text form. */
static Datum
datum_from_text(Oid typid, int32 typmod, const char *text)
{
	InputFunction *f = input_function(typid);

	return InputFunctionCall(&f->flinfo, (char *) text, f->ioparam, typmod);
}

/*
 * A json or jsonb Datum holding the JSON form of av (a whole item if M,
 * its put token left out).
 */
static Datum
json_datum(ShardColumn *col, const DdbJson *av, bool whole_item)
{
	Buf			out;
	JsonWriter	w;

	buf_init(&out);
	jw_init(&w, &out);
	if (whole_item)
	{
		jw_begin_object(&w);
		for (int i = 0; i < av->n; i++)
		{
			if (strcmp(av->keys[i], PUT_TOKEN_ATTRIBUTE) == 0)
				continue;
			jw_key(&w, av->keys[i]);
			av_to_json(&w, &av->elems[i]);
		}
		jw_end_object(&w);
	}
	else
		av_to_json(&w, av);
	return datum_from_text(col->typid, col->typmod, out.data);
}

/* A bytea Datum from base64 text. */
static Datum
bytea_from_base64(ShardColumn *col, const char *text, size_t len)
{
	unsigned char *raw;
	size_t		rawlen;
	bytea	   *result;

	if (!base64_decode(text, len, &raw, &rawlen))
		ereport(ERROR,
				(errcode(ERRCODE_FDW_INVALID_DATA_TYPE),
				 errmsg("stored B value of column \"%s\" is not valid base64", col->name)));
	result = palloc(VARHDRSZ + rawlen);
	SET_VARSIZE(result, VARHDRSZ + rawlen);
	memcpy(VARDATA(result), raw, rawlen);
	return PointerGetDatum(result);
}

/* Whether text is an optional minus sign and digits, nothing else. */
static bool
plain_integer_text(const char *text)
{
	if (*text == '-')
		text++;
	if (*text == '\0')
		return false;
	for (; *text; text++)
		if (*text < '0' || *text > '9')
			return false;
	return true;
}

/*
 * A number column's value from N text.  An integer column takes any
 * spelling of an integral value ("6", "6.000", "6E0"); plain digits go
 * straight to its input function.
 */
static Datum
number_from_text(ShardColumn *col, Oid typid, int32 typmod, const char *text)
{
	if ((typid == INT2OID || typid == INT4OID || typid == INT8OID) &&
		!plain_integer_text(text))
	{
		Numeric		n = DatumGetNumeric(DirectFunctionCall3(numeric_in,
															CStringGetDatum(text),
															ObjectIdGetDatum(InvalidOid),
															Int32GetDatum(-1)));
		Datum		trunc = DirectFunctionCall2(numeric_trunc, NumericGetDatum(n),
												Int32GetDatum(0));

		if (!DatumGetBool(DirectFunctionCall2(numeric_eq, NumericGetDatum(n), trunc)))
			ereport(ERROR,
					(errcode(ERRCODE_FDW_INVALID_DATA_TYPE),
					 errmsg("stored number %s does not fit column \"%s\" of type %s",
							text, col->name, format_type_be(typid))));
		return DirectFunctionCall1(typid == INT2OID ? numeric_int2 :
								   typid == INT4OID ? numeric_int4 : numeric_int8,
								   NumericGetDatum(n));
	}
	return datum_from_text(typid, typmod, text);
}

/* An array column's value from a set or a list. */
static Datum
array_from_av(ShardColumn *col, const char *type, const DdbJson *v)
{
	int			n = v->n;
	Datum	   *elems = palloc(sizeof(Datum) * Max(n, 1));
	int16		elmlen;
	bool		elmbyval;
	char		elmalign;
	bool		list = strcmp(type, "L") == 0;

	for (int i = 0; i < n; i++)
	{
		const DdbJson *e = &v->elems[i];
		const char *text = list ? codec_av_text(e) : e->str;
		size_t		len = list ? (text ? strlen(text) : 0) : e->len;

		if (text == NULL)
			misfit(col, "L");
		if (col->elemtype == BYTEAOID)
			elems[i] = bytea_from_base64(col, text, len);
		else if (is_number_type(col->elemtype))
			elems[i] = number_from_text(col, col->elemtype, -1, text);
		else
			elems[i] = datum_from_text(col->elemtype, -1, text);
	}
	get_typlenbyvalalign(col->elemtype, &elmlen, &elmbyval, &elmalign);
	return PointerGetDatum(construct_array(elems, n, col->elemtype,
										   elmlen, elmbyval, elmalign));
}

/* Convert one AttributeValue; the error context is already set. */
static Datum
read_value(const DdbJson *av, ShardColumn *col, const DdbJson *item,
		   bool *isnull)
{
	const char *type;
	const DdbJson *v;

	*isnull = false;
	if (col->ddb_type == DDB_TYPE_ITEM)
		return json_datum(col, item, true);
	if (av == NULL || av->kind != DJ_OBJECT || av->n != 1)
	{
		*isnull = true;
		if (av != NULL)
			misfit(col, "malformed");
		return (Datum) 0;
	}
	type = av->keys[0];
	v = &av->elems[0];
	/* a json column holds JSON null as NULL, SQL NULL as no attribute */
	if (col->typid == JSONOID || col->typid == JSONBOID)
		return json_datum(col, av, false);
	if (strcmp(type, "NULL") == 0)
	{
		*isnull = true;
		return (Datum) 0;
	}
	if (OidIsValid(col->elemtype))
	{
		if (strcmp(type, "SS") != 0 && strcmp(type, "NS") != 0 &&
			strcmp(type, "BS") != 0 && strcmp(type, "L") != 0)
			misfit(col, type);
		return array_from_av(col, type, v);
	}
	if (strcmp(type, "BOOL") == 0)
	{
		if (col->typid != BOOLOID)
			misfit(col, type);
		return BoolGetDatum(v->boolean);
	}
	if (v->kind != DJ_STRING)
		misfit(col, type);
	if (strcmp(type, "B") == 0)
	{
		if (col->typid != BYTEAOID)
			misfit(col, type);
		return bytea_from_base64(col, v->str, v->len);
	}
	if (strcmp(type, "N") == 0)
	{
		if (col->typid == TIMESTAMPTZOID || col->typid == TIMESTAMPOID)
			return timestamp_from_epoch(v->str);
		if (is_number_type(col->typid))
			return number_from_text(col, col->typid, col->typmod, v->str);
		if (col->typid == TEXTOID || col->typid == VARCHAROID || col->typid == BPCHAROID)
			return datum_from_text(col->typid, col->typmod, v->str);
		misfit(col, type);
	}
	if (strcmp(type, "S") != 0 || col->typid == BYTEAOID || col->typid == BOOLOID)
		misfit(col, type);
	if (memchr(v->str, '\0', v->len) != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNTRANSLATABLE_CHARACTER),
				 errmsg("stored S value of column \"%s\" contains a NUL character", col->name)));
	(void) pg_verifymbstr(v->str, v->len, false);
	return datum_from_text(col->typid, col->typmod, v->str);
}

/*
 * The value of column col from an item's AttributeValue av, or, when av is
 * NULL and text is not, from text decoded out of a key template field;
 * under an error context naming the column, the attribute and the item's
 * key.
 */
static Datum
read_in_context(const DdbJson *av, const char *text, ShardColumn *col,
				const DdbJson *item, ShardTable *t, bool *isnull)
{
	ReadContext rc = {col, item, t};
	ErrorContextCallback cb;
	Datum		result;

	push_error_context(&cb, read_error_context, &rc);
	*isnull = false;
	if (text == NULL)
		result = read_value(av, col, item, isnull);
	else if (col->typid == BYTEAOID)
		result = bytea_from_base64(col, text, strlen(text));
	else if (is_number_type(col->typid))
		result = number_from_text(col, col->typid, col->typmod, text);
	else
		result = datum_from_text(col->typid, col->typmod, text);
	pop_error_context(&cb);
	return result;
}

/*
 * The value of column col from an item's AttributeValue av (NULL when the
 * item lacks the attribute).  Errors name the column, the attribute and
 * the item's key.
 */
Datum
codec_read_value(const DdbJson *av, ShardColumn *col, const DdbJson *item,
				 ShardTable *t, bool *isnull)
{
	return read_in_context(av, NULL, col, item, t, isnull);
}

/*
 * The value of column col from text decoded out of a key template field,
 * with the same error context as codec_read_value.
 */
Datum
codec_text_to_datum(const char *text, ShardColumn *col, const DdbJson *item,
					ShardTable *t)
{
	bool		isnull;

	return read_in_context(NULL, text, col, item, t, &isnull);
}

/*
 * The DynamoDB type letter of key k's values: S for a template's text,
 * else its column's S, N or B.
 */
const char *
codec_key_type(const ShardKey *k)
{
	return k->template ? "S" : k->type == DDB_TYPE_N ? "N" :
		k->type == DDB_TYPE_B ? "B" : "S";
}
