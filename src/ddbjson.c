/*-------------------------------------------------------------------------
 *
 * ddbjson.c
 *		DynamoDB's JSON wire format: response bodies parsed into DdbJson
 *		trees, request bodies written byte for byte, and the base64 that
 *		carries B values.
 *
 * json-c's tokener, in strict mode, parses the text.  Its tree is then
 * copied into DdbJson nodes while a cursor walks the source text in step
 * with it, one value at a time.  The walk exists for what json-c cannot
 * give us:
 *
 *	- A number's text as written.  json-c keeps the text of numbers that
 *	  have a fraction or an exponent, but stores integers as int64/uint64:
 *	  "-0" would come back as "0", and an integer beyond 64 bits (DynamoDB
 *	  numbers have up to 38 digits) is silently clamped.  The walk takes
 *	  every number's text, integer or not, straight from the source.
 *
 *	- Rejecting what strict mode still accepts: numbers outside RFC 8259's
 *	  grammar ("1.", "01", "-.5", NaN, Infinity), single-quoted member
 *	  names, raw control characters inside strings, and member names that
 *	  contain \u0000 (json-c cuts names at the first NUL).
 *
 *	- Rejecting duplicate member names.  json-c keeps one member per name,
 *	  so its tree and the source no longer line up and the walk notices.
 *
 * Both trees are visited once and every node array is allocated at its
 * final size, so the copy is linear in the size of the input.  Strings come
 * from json-c already unescaped and keep their length, NULs included.
 * Bytes outside ASCII pass through unchecked: whoever turns a string into
 * a text Datum must verify its encoding.
 *
 *-------------------------------------------------------------------------
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "ddbjson.h"

/* The source text as the copy walks through it. */
typedef struct Walk
{
	const char *text;
	size_t		len;
	size_t		pos;
	char	   *err;
	size_t		errlen;
} Walk;

static const char b64_alphabet[] =
"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static bool walk_value(Walk *wk, struct json_object *jo, DdbJson *out);

/*
 * Release the storage of a tree that ddbjson_parse gives up on.
 *
 * The tree may be partly built: nodes not yet reached are still zeroed.
 * The node itself is not freed.
 */
static void
release_tree(DdbJson *v)
{
	int			i;

	for (i = 0; i < v->n; i++)
	{
		if (v->keys != NULL && v->keys[i] != NULL)
			sfdw_free(v->keys[i]);
		if (v->elems != NULL)
			release_tree(&v->elems[i]);
	}
	if (v->str != NULL)
		sfdw_free(v->str);
	if (v->keys != NULL)
		sfdw_free(v->keys);
	if (v->elems != NULL)
		sfdw_free(v->elems);
}

/*
 * Report a problem at the walk's position; returns false for convenience.
 */
static bool
walk_fail(Walk *wk, const char *what)
{
	sfdw_set_error(wk->err, wk->errlen, "%s at byte %zu", what, wk->pos);
	return false;
}

/*
 * Report that the source no longer matches json-c's tree.
 *
 * The source has already been accepted by json-c, so the two differ only
 * where an object repeats a member name (json-c kept a single member for
 * it) or where json-c ran out of memory, which it reports as a successful
 * parse of null.  Where the walk notices may be past the repeated name.
 */
static bool
walk_mismatch(Walk *wk)
{
	sfdw_set_error(wk->err, wk->errlen,
			  "duplicate object member name near byte %zu", wk->pos);
	return false;
}

/* Step over JSON whitespace. */
static void
walk_skip_ws(Walk *wk)
{
	while (wk->pos < wk->len)
	{
		char		c = wk->text[wk->pos];

		if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
			break;
		wk->pos++;
	}
}

/*
 * Step over whitespace and then the byte c.
 *
 * Returns false, leaving the position on the offending byte, when the next
 * byte is not c.
 */
static bool
walk_expect(Walk *wk, char c)
{
	walk_skip_ws(wk);
	if (wk->pos >= wk->len || wk->text[wk->pos] != c)
		return false;
	wk->pos++;
	return true;
}

/*
 * Step over the literal word (null, true or false) at the position.
 */
static bool
walk_literal(Walk *wk, const char *word)
{
	size_t		n = strlen(word);

	if (wk->len - wk->pos < n || memcmp(wk->text + wk->pos, word, n) != 0)
		return walk_mismatch(wk);
	wk->pos += n;
	return true;
}

/*
 * Step over the quoted string at the position.
 *
 * json-c has decoded the escapes; this only finds the closing quote,
 * rejecting raw control characters and, in a member name (is_name), the
 * escape \u0000.
 */
static bool
walk_string(Walk *wk, bool is_name)
{
	size_t		i;

	if (wk->pos >= wk->len || wk->text[wk->pos] != '"')
	{
		if (wk->pos < wk->len && wk->text[wk->pos] == '\'')
			return walk_fail(wk, "unexpected character");
		return walk_mismatch(wk);
	}
	for (i = wk->pos + 1; i < wk->len; i++)
	{
		unsigned char c = (unsigned char) wk->text[i];

		if (c == '"')
		{
			wk->pos = i + 1;
			return true;
		}
		if (c == '\\')
		{
			if (is_name && wk->len - i >= 6 &&
				memcmp(wk->text + i + 1, "u0000", 5) == 0)
			{
				wk->pos = i;
				return walk_fail(wk, "member name contains \\u0000");
			}
			i++;
		}
		else if (c < 0x20)
		{
			wk->pos = i;
			return walk_fail(wk, "control character in string");
		}
	}
	wk->pos = wk->len;
	return walk_mismatch(wk);
}

/* Does the byte at i exist and is it a decimal digit? */
static bool
digit_at(const Walk *wk, size_t i)
{
	return i < wk->len && wk->text[i] >= '0' && wk->text[i] <= '9';
}

/*
 * Take the number at the position, keeping its source text.
 *
 * The text must follow RFC 8259:
 * -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
 */
static bool
walk_number(Walk *wk, DdbJson *out)
{
	const char *t = wk->text;
	size_t		i = wk->pos;

	if (i < wk->len && memchr("\"{[tfn", t[i], 6) != NULL)
		return walk_mismatch(wk);
	if (i < wk->len && t[i] == '-')
		i++;
	if (i < wk->len && t[i] == '0')
		i++;
	else if (digit_at(wk, i))
	{
		while (digit_at(wk, i))
			i++;
	}
	else
		return walk_fail(wk, "invalid number");
	if (i < wk->len && t[i] == '.')
	{
		i++;
		if (!digit_at(wk, i))
			return walk_fail(wk, "invalid number");
		while (digit_at(wk, i))
			i++;
	}
	if (i < wk->len && (t[i] == 'e' || t[i] == 'E'))
	{
		i++;
		if (i < wk->len && (t[i] == '+' || t[i] == '-'))
			i++;
		if (!digit_at(wk, i))
			return walk_fail(wk, "invalid number");
		while (digit_at(wk, i))
			i++;
	}
	if (i < wk->len && memchr("0123456789.eE+-", t[i], 15) != NULL)
		return walk_fail(wk, "invalid number");

	out->kind = DJ_NUMBER;
	out->len = i - wk->pos;
	out->str = sfdw_strndup(t + wk->pos, out->len);
	wk->pos = i;
	return true;
}

/*
 * Copy the json-c array jo into out, walking its source.
 */
static bool
walk_array(Walk *wk, struct json_object *jo, DdbJson *out)
{
	size_t		n = json_object_array_length(jo);
	size_t		i;

	if (!walk_expect(wk, '['))
		return walk_mismatch(wk);
	out->kind = DJ_ARRAY;
	out->n = (int) n;
	if (n > 0)
		out->elems = sfdw_alloc(n * sizeof(DdbJson));
	for (i = 0; i < n; i++)
	{
		if (i > 0 && !walk_expect(wk, ','))
			return walk_mismatch(wk);
		if (!walk_value(wk, json_object_array_get_idx(jo, i), &out->elems[i]))
			return false;
	}
	if (!walk_expect(wk, ']'))
		return walk_mismatch(wk);
	return true;
}

/*
 * Copy the json-c object jo into out, walking its source.
 *
 * json-c lists members in the order they were first seen, which is the
 * source order as long as no name repeats.
 */
static bool
walk_object(Walk *wk, struct json_object *jo, DdbJson *out)
{
	int			n = json_object_object_length(jo);
	struct json_object_iterator it = json_object_iter_begin(jo);
	int			i;

	if (!walk_expect(wk, '{'))
		return walk_mismatch(wk);
	out->kind = DJ_OBJECT;
	out->n = n;
	if (n > 0)
	{
		out->keys = sfdw_alloc(n * sizeof(char *));
		out->elems = sfdw_alloc(n * sizeof(DdbJson));
	}
	for (i = 0; i < n; i++)
	{
		const char *name = json_object_iter_peek_name(&it);

		if (i > 0 && !walk_expect(wk, ','))
			return walk_mismatch(wk);
		walk_skip_ws(wk);
		if (!walk_string(wk, true))
			return false;
		if (!walk_expect(wk, ':'))
			return walk_mismatch(wk);
		out->keys[i] = sfdw_strndup(name, strlen(name));
		if (!walk_value(wk, json_object_iter_peek_value(&it), &out->elems[i]))
			return false;
		json_object_iter_next(&it);
	}
	if (!walk_expect(wk, '}'))
		return walk_mismatch(wk);
	return true;
}

/*
 * Copy the json-c value jo (NULL for a JSON null) into out, stepping the
 * walk over its source text.
 *
 * On failure err is set; out may be partly filled and is left for the
 * caller to release.
 */
static bool
walk_value(Walk *wk, struct json_object *jo, DdbJson *out)
{
	walk_skip_ws(wk);
	switch (json_object_get_type(jo))
	{
		case json_type_null:
			out->kind = DJ_NULL;
			return walk_literal(wk, "null");
		case json_type_boolean:
			out->kind = DJ_BOOL;
			out->boolean = json_object_get_boolean(jo);
			return walk_literal(wk, out->boolean ? "true" : "false");
		case json_type_int:
		case json_type_double:
			return walk_number(wk, out);
		case json_type_string:
			{
				int			len = json_object_get_string_len(jo);

				if (!walk_string(wk, false))
					return false;
				out->kind = DJ_STRING;
				out->len = (size_t) len;
				out->str = sfdw_strndup(json_object_get_string(jo), out->len);
				return true;
			}
		case json_type_array:
			return walk_array(wk, jo, out);
		case json_type_object:
			return walk_object(wk, jo, out);
	}
	return walk_mismatch(wk);
}

/*
 * Parse len bytes of JSON text into a tree allocated with sfdw_alloc.
 *
 * Returns NULL and writes a one-line reason into err (as "what at byte N")
 * on malformed input, input that ends early, anything but whitespace after
 * the value, NUL bytes, repeated member names and nesting deeper than
 * DDBJSON_MAX_DEPTH levels.  json-c's objects and tokener are released on
 * every path.
 */
DdbJson *
ddbjson_parse(const char *text, size_t len, char *err, size_t errlen)
{
	bool		too_deep;

	return ddbjson_parse_ex(text, len, err, errlen, &too_deep);
}

/* The value of the four hex digits at p, or -1. */
static long
hex4(const char *p)
{
	long		v = 0;

	for (int i = 0; i < 4; i++)
	{
		char		c = p[i];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= c - '0';
		else if (c >= 'a' && c <= 'f')
			v |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			v |= c - 'A' + 10;
		else
			return -1;
	}
	return v;
}

/* See ddbjson.h. */
long
ddbjson_lone_surrogate(const char *text, size_t len)
{
	const char *end = text + len;
	const char *p = text;

	while ((p = memchr(p, '\\', (size_t) (end - p))) != NULL)
	{
		long		v = end - p >= 6 && p[1] == 'u' ? hex4(p + 2) : -1;

		if (v >= 0xDC00 && v <= 0xDFFF)
			return p - text;
		if (v >= 0xD800 && v <= 0xDBFF)
		{
			long		low = end - p >= 12 && p[6] == '\\' && p[7] == 'u' ?
				hex4(p + 8) : -1;

			if (low < 0xDC00 || low > 0xDFFF)
				return p - text;
			p += 12;
		}
		else
			p += end - p >= 2 ? 2 : 1;
	}
	return -1;
}

/* See ddbjson.h. */
DdbJson *
ddbjson_parse_ex(const char *text, size_t len, char *err, size_t errlen,
				 bool *too_deep)
{
	struct json_tokener *tok;
	struct json_object *jo;
	enum json_tokener_error jerr;
	const char *nul;
	DdbJson    *root;
	Walk		wk;

	if (len > INT_MAX)
	{
		sfdw_set_error(err, errlen, "JSON text of %zu bytes is too large", len);
		return NULL;
	}
	nul = memchr(text, '\0', len);
	if (nul != NULL)
	{
		sfdw_set_error(err, errlen, "unexpected NUL byte at byte %zu",
				  (size_t) (nul - text));
		return NULL;
	}
	*too_deep = false;
	tok = json_tokener_new_ex(DDBJSON_MAX_DEPTH);
	if (tok == NULL)
	{
		sfdw_set_error(err, errlen, "out of memory");
		return NULL;
	}
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);

	/*
	 * json_tokener_parse_ex returns NULL whenever it reports an error, so on
	 * those paths only the tokener needs releasing.
	 */
	jo = json_tokener_parse_ex(tok, text, (int) len);
	jerr = json_tokener_get_error(tok);
	if (jerr == json_tokener_continue)
	{
		/*
		 * The tokener wants more input.  A number at the top level only ends
		 * at the next byte, so offer one space: if that does not complete
		 * the value, the text ended early.
		 */
		jo = json_tokener_parse_ex(tok, " ", 1);
		jerr = json_tokener_get_error(tok);
		if (jerr != json_tokener_success)
		{
			json_tokener_free(tok);
			sfdw_set_error(err, errlen, "unexpected end of data at byte %zu", len);
			return NULL;
		}
	}
	else if (jerr != json_tokener_success)
	{
		size_t		at = json_tokener_get_parse_end(tok);

		*too_deep = jerr == json_tokener_error_depth;
		json_tokener_free(tok);
		sfdw_set_error(err, errlen, "%s at byte %zu",
				  json_tokener_error_desc(jerr), at);
		return NULL;
	}
	json_tokener_free(tok);

	wk.text = text;
	wk.len = len;
	wk.pos = 0;
	wk.err = err;
	wk.errlen = errlen;
	root = sfdw_alloc(sizeof(DdbJson));
	if (!walk_value(&wk, jo, root))
	{
		json_object_put(jo);
		release_tree(root);
		sfdw_free(root);
		return NULL;
	}
	json_object_put(jo);
	return root;
}

/*
 * The member named key of the object obj.
 *
 * Returns NULL when there is no such member or obj is NULL or no object.
 */
DdbJson *
ddbjson_get(const DdbJson *obj, const char *key)
{
	int			i;

	if (obj == NULL || obj->kind != DJ_OBJECT)
		return NULL;
	for (i = 0; i < obj->n; i++)
	{
		if (strcmp(obj->keys[i], key) == 0)
			return &obj->elems[i];
	}
	return NULL;
}

/*
 * The text of obj's string member key.
 *
 * Returns NULL when the member is missing or not a string.
 */
const char *
ddbjson_get_string(const DdbJson *obj, const char *key)
{
	DdbJson    *v = ddbjson_get(obj, key);

	if (v == NULL || v->kind != DJ_STRING)
		return NULL;
	return v->str;
}

/*
 * The value of obj's number member key as a double.
 *
 * Returns 0 when the member is missing or not a number.  The conversion
 * uses strtod, which PostgreSQL backends run with LC_NUMERIC "C".
 */
double
ddbjson_get_number(const DdbJson *obj, const char *key)
{
	DdbJson    *v = ddbjson_get(obj, key);

	if (v == NULL || v->kind != DJ_NUMBER)
		return 0;
	return strtod(v->str, NULL);
}

/* ---------------------------------------------------------------------
 * DynamoDB's shapes
 * ---------------------------------------------------------------------
 */

/* DynamoDB's number limits: 38 significant digits, 1E-130 to 9.9..9E+125. */
#define DDB_NUMBER_MAX_DIGITS 38
#define DDB_NUMBER_MAX_EXPONENT 125
#define DDB_NUMBER_MIN_EXPONENT (-130)

/*
 * Is text a number DynamoDB holds?  The grammar is DynamoDB's:
 * [+-]?(digits[.digits*]|.digits)([eE][+-]?digits)?, at most 38
 * significant digits, a magnitude from 1E-130 to 9.9..9E+125 (zero has
 * none).
 */
DdbNumber
ddb_number_check(const char *text, size_t len)
{
	size_t		i = 0;
	int			digits = 0;		/* mantissa digits seen */
	int			point = -1;		/* digits before the point */
	int			first = -1;		/* index of the first nonzero digit */
	int			last = -1;		/* index of the last nonzero digit */
	long		exponent = 0;
	bool		negative_exp = false;
	long		magnitude;

	/* an exponent past this is out of range whatever the digits */
	long		clamp = (long) len + 1000;

	if (i < len && (text[i] == '+' || text[i] == '-'))
		i++;
	for (; i < len; i++)
	{
		char		c = text[i];

		if (c >= '0' && c <= '9')
		{
			if (c != '0')
			{
				if (first < 0)
					first = digits;
				last = digits;
			}
			digits++;
		}
		else if (c == '.' && point < 0)
			point = digits;
		else
			break;
	}
	if (digits == 0)
		return DDB_NUMBER_SYNTAX;
	if (i < len && (text[i] == 'e' || text[i] == 'E'))
	{
		size_t		start;

		i++;
		if (i < len && (text[i] == '+' || text[i] == '-'))
			negative_exp = text[i++] == '-';
		start = i;
		for (; i < len && text[i] >= '0' && text[i] <= '9'; i++)
			if (exponent < clamp)
				exponent = exponent * 10 + (text[i] - '0');
		if (i == start)
			return DDB_NUMBER_SYNTAX;
		if (negative_exp)
			exponent = -exponent;
	}
	if (i != len)
		return DDB_NUMBER_SYNTAX;
	if (first < 0)
		return DDB_NUMBER_OK;
	if (last - first + 1 > DDB_NUMBER_MAX_DIGITS)
		return DDB_NUMBER_DIGITS;
	if (point < 0)
		point = digits;
	magnitude = exponent + (point - first - 1);
	if (magnitude > DDB_NUMBER_MAX_EXPONENT || magnitude < DDB_NUMBER_MIN_EXPONENT)
		return DDB_NUMBER_RANGE;
	return DDB_NUMBER_OK;
}

/*
 * The length of the UTF-8 sequence at s (at most len bytes), or 0 when it
 * is not one: no overlong forms, no surrogates, nothing past U+10FFFF.
 */
static size_t
utf8_sequence(const unsigned char *s, size_t len)
{
	unsigned char c = s[0];
	size_t		n;
	unsigned char lo = 0x80;
	unsigned char hi = 0xBF;

	if (c < 0x80)
		return 1;
	if (c >= 0xC2 && c <= 0xDF)
		n = 2;
	else if (c >= 0xE0 && c <= 0xEF)
	{
		n = 3;
		if (c == 0xE0)
			lo = 0xA0;
		else if (c == 0xED)
			hi = 0x9F;
	}
	else if (c >= 0xF0 && c <= 0xF4)
	{
		n = 4;
		if (c == 0xF0)
			lo = 0x90;
		else if (c == 0xF4)
			hi = 0x8F;
	}
	else
		return 0;
	if (len < n || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t k = 2; k < n; k++)
		if (s[k] < 0x80 || s[k] > 0xBF)
			return 0;
	return n;
}

/* See ddbjson.h. */
bool
ddb_utf8_valid(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *) s;
	size_t		i = 0;

	while (i < len)
	{
		size_t		n;

		if (p[i] < 0x80)
		{
			i++;
			continue;
		}
		n = utf8_sequence(p + i, len - i);
		if (n == 0)
			return false;
		i += n;
	}
	return true;
}

/* See ddbjson.h. */
void
ddb_append_printable(Buf *out, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *) s;
	size_t		i = 0;

	while (i < len)
	{
		size_t		n = utf8_sequence(p + i, len - i);

		if (n == 0 || p[i] < 0x20 || p[i] == 0x7F || p[i] == '"' || p[i] == '\\')
		{
			buf_printf(out, "\\x%02X", p[i]);
			i++;
			continue;
		}
		buf_append(out, s + i, n);
		i += n;
	}
}

/* What a JSON value is, for messages. */
static const char *
kind_name(const DdbJson *v)
{
	switch (v->kind)
	{
		case DJ_NULL:
			return "null";
		case DJ_BOOL:
			return v->boolean ? "true" : "false";
		case DJ_NUMBER:
			return "a JSON number";
		case DJ_STRING:
			return "a string";
		case DJ_ARRAY:
			return "an array";
		case DJ_OBJECT:
			return "an object";
	}
	return "?";
}

/*
 * Record the reason of a fault found at the innermost level (the path is
 * filled in on the way out); returns false for convenience.
 */
static bool check_fail(DdbCheck *chk, const char *fmt,...)
			__attribute__((format(printf, 2, 3)));

static bool
check_fail(DdbCheck *chk, const char *fmt,...)
{
	va_list		ap;

	va_start(ap, fmt);
	vsnprintf(chk->reason, sizeof(chk->reason), fmt, ap);
	va_end(ap);
	chk->attribute[0] = '\0';
	return false;
}

/*
 * Put a step in front of chk's attribute path on the way out of a fault:
 * a member name (with a dot after it unless an index follows), or an index
 * when name is NULL.
 */
static void
check_prepend(DdbCheck *chk, const char *name, size_t namelen, int index)
{
	Buf			step;

	buf_init(&step);
	if (name != NULL)
		ddb_append_printable(&step, name, namelen);
	else
		buf_printf(&step, "[%d]", index);
	if (chk->attribute[0] != '\0' && chk->attribute[0] != '[')
		buf_putc(&step, '.');
	buf_puts(&step, chk->attribute);
	snprintf(chk->attribute, sizeof(chk->attribute), "%s", step.data);
	sfdw_free(step.data);
}

/* Check the members of a set of type tag (SS, NS or BS). */
static bool
check_set(const char *tag, const DdbJson *v, DdbCheck *chk)
{
	if (v->kind != DJ_ARRAY)
		return check_fail(chk, "%s value is %s, not an array", tag, kind_name(v));
	if (v->n == 0)
		return check_fail(chk, "%s value is an empty set", tag);
	for (int i = 0; i < v->n; i++)
	{
		const DdbJson *e = &v->elems[i];
		bool		ok = e->kind == DJ_STRING;

		if (!ok)
			check_fail(chk, "%s member is %s, not a string", tag, kind_name(e));
		else if (tag[0] == 'S' && !ddb_utf8_valid(e->str, e->len))
			ok = check_fail(chk, "SS member is not valid UTF-8");
		else if (tag[0] == 'N' && ddb_number_check(e->str, e->len) != DDB_NUMBER_OK)
			ok = check_fail(chk, "NS member is not a DynamoDB number");
		else if (tag[0] == 'B' && !base64_decode(e->str, e->len, NULL, NULL))
			ok = check_fail(chk, "BS member is not valid base64");
		if (!ok)
		{
			check_prepend(chk, NULL, 0, i);
			return false;
		}
	}
	return true;
}

/* See ddbjson.h. */
bool
ddbjson_check_av(const DdbJson *av, int level, DdbCheck *chk)
{
	const char *tag;
	const DdbJson *v;

	if (av->kind != DJ_OBJECT)
		return check_fail(chk, "value is %s, not an AttributeValue", kind_name(av));
	if (av->n != 1)
		return check_fail(chk, "AttributeValue has %d members, not one", av->n);
	tag = av->keys[0];
	v = &av->elems[0];
	switch (tag[0])
	{
		case 'S':
			if (tag[1] == '\0')
			{
				if (v->kind != DJ_STRING)
					return check_fail(chk, "S value is %s, not a string", kind_name(v));
				if (!ddb_utf8_valid(v->str, v->len))
					return check_fail(chk, "S value is not valid UTF-8");
				return true;
			}
			if (strcmp(tag, "SS") == 0)
				return check_set(tag, v, chk);
			break;
		case 'N':
			if (tag[1] == '\0')
			{
				if (v->kind != DJ_STRING)
					return check_fail(chk, "N value is %s, not a string", kind_name(v));
				if (ddb_number_check(v->str, v->len) != DDB_NUMBER_OK)
					return check_fail(chk, "N value is not a DynamoDB number");
				return true;
			}
			if (strcmp(tag, "NS") == 0)
				return check_set(tag, v, chk);
			if (strcmp(tag, "NULL") == 0)
			{
				if (v->kind != DJ_BOOL || !v->boolean)
					return check_fail(chk, "NULL value is %s, not true", kind_name(v));
				return true;
			}
			break;
		case 'B':
			if (tag[1] == '\0')
			{
				if (v->kind != DJ_STRING)
					return check_fail(chk, "B value is %s, not a string", kind_name(v));
				if (!base64_decode(v->str, v->len, NULL, NULL))
					return check_fail(chk, "B value is not valid base64");
				return true;
			}
			if (strcmp(tag, "BS") == 0)
				return check_set(tag, v, chk);
			if (strcmp(tag, "BOOL") == 0)
			{
				if (v->kind != DJ_BOOL)
					return check_fail(chk, "BOOL value is %s, not a boolean", kind_name(v));
				return true;
			}
			break;
		case 'M':
		case 'L':
			if (tag[1] != '\0')
				break;
			if (v->kind != (tag[0] == 'M' ? DJ_OBJECT : DJ_ARRAY))
				return check_fail(chk, "%s value is %s, not %s", tag, kind_name(v),
								  tag[0] == 'M' ? "an object" : "an array");
			if (level >= DDB_MAX_NESTING)
				return check_fail(chk, "%s value nests deeper than DynamoDB's %d levels",
								  tag, DDB_MAX_NESTING);
			for (int i = 0; i < v->n; i++)
			{
				if (tag[0] == 'M' && !ddb_utf8_valid(v->keys[i], strlen(v->keys[i])))
				{
					check_fail(chk, "map key is not valid UTF-8");
					check_prepend(chk, v->keys[i], strlen(v->keys[i]), 0);
					return false;
				}
				if (!ddbjson_check_av(&v->elems[i], level + 1, chk))
				{
					if (tag[0] == 'M')
						check_prepend(chk, v->keys[i], strlen(v->keys[i]), 0);
					else
						check_prepend(chk, NULL, 0, i);
					return false;
				}
			}
			return true;
	}
	{
		Buf			name;

		buf_init(&name);
		ddb_append_printable(&name, tag, strlen(tag));
		check_fail(chk, "unknown AttributeValue type \"%s\"", name.data);
		sfdw_free(name.data);
	}
	return false;
}

/* See ddbjson.h. */
bool
ddbjson_check_item(const DdbJson *item, DdbCheck *chk)
{
	if (item->kind != DJ_OBJECT)
	{
		chk->item = NULL;
		return check_fail(chk, "item is %s, not an object", kind_name(item));
	}
	for (int i = 0; i < item->n; i++)
	{
		const char *name = item->keys[i];
		size_t		len = strlen(name);
		bool		ok;

		if (!ddb_utf8_valid(name, len))
			ok = check_fail(chk, "attribute name is not valid UTF-8");
		else
			ok = ddbjson_check_av(&item->elems[i], 1, chk);
		if (!ok)
		{
			chk->item = item;
			check_prepend(chk, name, len, 0);
			return false;
		}
	}
	return true;
}

/* Name the response member that holds a fault: "Items[3]" and the like. */
static void
check_where(DdbCheck *chk, const char *member, const char *sub, int index)
{
	Buf			where;

	buf_init(&where);
	buf_puts(&where, member);
	if (sub != NULL)
	{
		buf_putc(&where, '.');
		ddb_append_printable(&where, sub, strlen(sub));
	}
	if (index >= 0)
		buf_printf(&where, "[%d]", index);
	snprintf(chk->where, sizeof(chk->where), "%s", where.data);
	sfdw_free(where.data);
}

/*
 * Check an array of items found at member (sub names the table inside it,
 * or is NULL).
 */
static bool
check_items(const DdbJson *items, const char *member, const char *sub,
			DdbCheck *chk)
{
	if (items->kind != DJ_ARRAY)
	{
		check_where(chk, member, sub, -1);
		chk->item = NULL;
		return check_fail(chk, "%s, not an array of items", kind_name(items));
	}
	for (int i = 0; i < items->n; i++)
		if (!ddbjson_check_item(&items->elems[i], chk))
		{
			check_where(chk, member, sub, i);
			return false;
		}
	return true;
}

/* Check a single item found at member (not checked when absent). */
static bool
check_one_item(const DdbJson *item, const char *member, DdbCheck *chk)
{
	if (item == NULL || ddbjson_check_item(item, chk))
		return true;
	check_where(chk, member, NULL, -1);
	return false;
}

/* Record a fault of the envelope itself (no item involved). */
static bool
check_envelope(DdbCheck *chk, const char *member, const char *sub,
			   int index, const char *what, const DdbJson *v)
{
	check_where(chk, member, sub, index);
	chk->item = NULL;
	return check_fail(chk, "%s, not %s", kind_name(v), what);
}

/* A count: a non-negative integer. */
static bool
check_count(const DdbJson *body, const char *member, DdbCheck *chk)
{
	const DdbJson *v = ddbjson_get(body, member);

	if (v == NULL)
		return true;
	if (v->kind != DJ_NUMBER || strspn(v->str, "0123456789") != v->len)
		return check_envelope(chk, member, NULL, -1, "a count", v);
	return true;
}

/* ConsumedCapacity: an object or an array of them, numbers as numbers. */
static bool
check_capacity(const DdbJson *body, DdbCheck *chk)
{
	const DdbJson *cc = ddbjson_get(body, "ConsumedCapacity");
	int			n;

	if (cc == NULL)
		return true;
	if (cc->kind != DJ_OBJECT && cc->kind != DJ_ARRAY)
		return check_envelope(chk, "ConsumedCapacity", NULL, -1,
							  "an object or an array", cc);
	n = cc->kind == DJ_ARRAY ? cc->n : 1;
	for (int i = 0; i < n; i++)
	{
		const DdbJson *one = cc->kind == DJ_ARRAY ? &cc->elems[i] : cc;
		const DdbJson *units = ddbjson_get(one, "CapacityUnits");
		int			index = cc->kind == DJ_ARRAY ? i : -1;

		if (one->kind != DJ_OBJECT)
			return check_envelope(chk, "ConsumedCapacity", NULL, index,
								  "an object", one);
		if (units != NULL && units->kind != DJ_NUMBER)
			return check_envelope(chk, "ConsumedCapacity", NULL, index,
								  "an object whose CapacityUnits is a number", units);
	}
	return true;
}

/* Responses: tables' arrays of items, or TransactGetItems' array. */
static bool
check_responses(const DdbJson *body, DdbCheck *chk)
{
	const DdbJson *r = ddbjson_get(body, "Responses");

	if (r == NULL)
		return true;
	if (r->kind == DJ_OBJECT)
	{
		for (int i = 0; i < r->n; i++)
			if (!check_items(&r->elems[i], "Responses", r->keys[i], chk))
				return false;
		return true;
	}
	if (r->kind != DJ_ARRAY)
		return check_envelope(chk, "Responses", NULL, -1,
							  "an object or an array", r);
	for (int i = 0; i < r->n; i++)
	{
		if (r->elems[i].kind != DJ_OBJECT)
			return check_envelope(chk, "Responses", NULL, i, "an object",
								  &r->elems[i]);
		if (!check_one_item(ddbjson_get(&r->elems[i], "Item"), "Responses", chk))
		{
			check_where(chk, "Responses", NULL, i);
			return false;
		}
	}
	return true;
}

/* UnprocessedKeys: per table, an object whose Keys are items. */
static bool
check_unprocessed_keys(const DdbJson *body, DdbCheck *chk)
{
	const DdbJson *u = ddbjson_get(body, "UnprocessedKeys");

	if (u == NULL)
		return true;
	if (u->kind != DJ_OBJECT)
		return check_envelope(chk, "UnprocessedKeys", NULL, -1, "an object", u);
	for (int i = 0; i < u->n; i++)
	{
		const DdbJson *keys = ddbjson_get(&u->elems[i], "Keys");

		if (u->elems[i].kind != DJ_OBJECT || keys == NULL)
			return check_envelope(chk, "UnprocessedKeys", u->keys[i], -1,
								  "an object with Keys", &u->elems[i]);
		if (!check_items(keys, "UnprocessedKeys", u->keys[i], chk))
			return false;
	}
	return true;
}

/* UnprocessedItems: per table, an array of PutRequest or DeleteRequest. */
static bool
check_unprocessed_items(const DdbJson *body, DdbCheck *chk)
{
	const DdbJson *u = ddbjson_get(body, "UnprocessedItems");

	if (u == NULL)
		return true;
	if (u->kind != DJ_OBJECT)
		return check_envelope(chk, "UnprocessedItems", NULL, -1, "an object", u);
	for (int i = 0; i < u->n; i++)
	{
		const DdbJson *reqs = &u->elems[i];

		if (reqs->kind != DJ_ARRAY)
			return check_envelope(chk, "UnprocessedItems", u->keys[i], -1,
								  "an array", reqs);
		for (int k = 0; k < reqs->n; k++)
		{
			const DdbJson *put = ddbjson_get(ddbjson_get(&reqs->elems[k], "PutRequest"), "Item");
			const DdbJson *del = ddbjson_get(ddbjson_get(&reqs->elems[k], "DeleteRequest"), "Key");
			const DdbJson *item = put != NULL ? put : del;

			if (reqs->elems[k].kind != DJ_OBJECT || reqs->elems[k].n != 1 ||
				item == NULL)
				return check_envelope(chk, "UnprocessedItems", u->keys[i], k,
									  "a PutRequest with an Item or a DeleteRequest with a Key",
									  &reqs->elems[k]);
			if (!ddbjson_check_item(item, chk))
			{
				check_where(chk, "UnprocessedItems", u->keys[i], k);
				return false;
			}
		}
	}
	return true;
}

/* See ddbjson.h. */
bool
ddbjson_check_response(const DdbJson *body, DdbCheck *chk)
{
	const DdbJson *items = ddbjson_get(body, "Items");
	const DdbJson *lek = ddbjson_get(body, "LastEvaluatedKey");

	if (items != NULL && !check_items(items, "Items", NULL, chk))
		return false;
	if (!check_one_item(ddbjson_get(body, "Item"), "Item", chk) ||
		!check_one_item(ddbjson_get(body, "Attributes"), "Attributes", chk) ||
		!check_one_item(lek, "LastEvaluatedKey", chk))
		return false;
	if (lek != NULL && lek->n == 0)
	{
		check_where(chk, "LastEvaluatedKey", NULL, -1);
		chk->item = NULL;
		return check_fail(chk, "an empty object, not a key");
	}
	return check_count(body, "Count", chk) &&
		check_count(body, "ScannedCount", chk) &&
		check_responses(body, chk) &&
		check_unprocessed_keys(body, chk) &&
		check_unprocessed_items(body, chk) &&
		check_capacity(body, chk);
}

/*
 * Start writing one JSON value into out.
 */
void
jw_init(JsonWriter *w, Buf *out)
{
	w->out = out;
	w->depth = 0;
	w->first[0] = true;
}

/*
 * The comma bookkeeping slot for the current level.
 *
 * Levels past JSONW_MAX_DEPTH share the last slot, so their commas come out
 * wrong; callers keep within the limit.
 */
static int
jw_slot(const JsonWriter *w)
{
	return w->depth < JSONW_MAX_DEPTH ? w->depth : JSONW_MAX_DEPTH - 1;
}

/*
 * Put the comma that separates this value or member from the previous one.
 *
 * A member name leaves its level marked "first" so that its value gets no
 * comma.
 */
static void
jw_separate(JsonWriter *w)
{
	int			slot = jw_slot(w);

	if (!w->first[slot])
		buf_putc(w->out, ',');
	w->first[slot] = false;
}

/* Open a container with the bracket c. */
static void
jw_open(JsonWriter *w, char c)
{
	jw_separate(w);
	buf_putc(w->out, c);
	w->depth++;
	w->first[jw_slot(w)] = true;
}

/* Close a container with the bracket c. */
static void
jw_close(JsonWriter *w, char c)
{
	w->depth--;
	buf_putc(w->out, c);
}

/* Write "{"; members follow as jw_key plus a value each. */
void
jw_begin_object(JsonWriter *w)
{
	jw_open(w, '{');
}

/* Write "}" for the innermost open object. */
void
jw_end_object(JsonWriter *w)
{
	jw_close(w, '}');
}

/* Write "["; the elements follow. */
void
jw_begin_array(JsonWriter *w)
{
	jw_open(w, '[');
}

/* Write "]" for the innermost open array. */
void
jw_end_array(JsonWriter *w)
{
	jw_close(w, ']');
}

/*
 * Write a member name and its colon, with a comma before it if needed.
 *
 * The next call must write the member's value.
 */
void
jw_key(JsonWriter *w, const char *key)
{
	jw_separate(w);
	json_escape(w->out, key, strlen(key));
	buf_putc(w->out, ':');
	w->first[jw_slot(w)] = true;
}

/* Write len bytes of str, which may contain NULs, as a string value. */
void
jw_string(JsonWriter *w, const char *str, size_t len)
{
	jw_separate(w);
	json_escape(w->out, str, len);
}

/* Write a NUL-terminated string as a string value. */
void
jw_cstring(JsonWriter *w, const char *str)
{
	jw_string(w, str, strlen(str));
}

/*
 * Write json, which must be one complete JSON value (such as a number's
 * text), unchanged.
 */
void
jw_raw(JsonWriter *w, const char *json)
{
	jw_separate(w);
	buf_puts(w->out, json);
}

/* Write true or false. */
void
jw_bool(JsonWriter *w, bool value)
{
	jw_separate(w);
	buf_puts(w->out, value ? "true" : "false");
}

/* Write null. */
void
jw_null(JsonWriter *w)
{
	jw_separate(w);
	buf_puts(w->out, "null");
}

/* Write an integer in decimal. */
void
jw_int(JsonWriter *w, long long value)
{
	jw_separate(w);
	buf_printf(w->out, "%lld", value);
}

/*
 * Write the tree v as one value.
 *
 * Numbers are written with their text and members in their order, so a
 * compact text written the way this writer writes comes back byte for byte.
 */
void
jw_tree(JsonWriter *w, const DdbJson *v)
{
	int			i;

	switch (v->kind)
	{
		case DJ_NULL:
			jw_null(w);
			break;
		case DJ_BOOL:
			jw_bool(w, v->boolean);
			break;
		case DJ_NUMBER:
			jw_raw(w, v->str);
			break;
		case DJ_STRING:
			jw_string(w, v->str, v->len);
			break;
		case DJ_ARRAY:
			jw_begin_array(w);
			for (i = 0; i < v->n; i++)
				jw_tree(w, &v->elems[i]);
			jw_end_array(w);
			break;
		case DJ_OBJECT:
			jw_begin_object(w);
			for (i = 0; i < v->n; i++)
			{
				jw_key(w, v->keys[i]);
				jw_tree(w, &v->elems[i]);
			}
			jw_end_object(w);
			break;
	}
}

/* See ddbjson.h. */
void
jw_begin_request(JsonWriter *w, Buf *out, const char *table)
{
	buf_init(out);
	jw_init(w, out);
	jw_begin_object(w);
	jw_key(w, "TableName");
	jw_cstring(w, table);
}

/* See ddbjson.h. */
char *
jw_end_request(JsonWriter *w, size_t *len)
{
	jw_key(w, "ReturnConsumedCapacity");
	jw_cstring(w, "TOTAL");
	jw_end_object(w);
	*len = w->out->len;
	return w->out->data;
}

/*
 * Append len bytes of str as a quoted JSON string.
 *
 * '"' and '\' are escaped with a backslash; control characters below 0x20
 * as \b \t \n \f \r or else \u00xx (lower-case hex), NUL included.  All
 * other bytes, UTF-8 sequences and DEL among them, are copied unchanged.
 */
void
json_escape(Buf *out, const char *str, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	size_t		run = 0;
	size_t		i;

	buf_putc(out, '"');
	for (i = 0; i < len; i++)
	{
		unsigned char c = (unsigned char) str[i];
		char		esc[7];

		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		buf_append(out, str + run, i - run);
		run = i + 1;
		esc[0] = '\\';
		switch (c)
		{
			case '"':
			case '\\':
				esc[1] = (char) c;
				break;
			case '\b':
				esc[1] = 'b';
				break;
			case '\t':
				esc[1] = 't';
				break;
			case '\n':
				esc[1] = 'n';
				break;
			case '\f':
				esc[1] = 'f';
				break;
			case '\r':
				esc[1] = 'r';
				break;
			default:
				memcpy(esc + 1, "u00", 3);
				esc[4] = hex[c >> 4];
				esc[5] = hex[c & 0xf];
				buf_append(out, esc, 6);
				continue;
		}
		buf_append(out, esc, 2);
	}
	buf_append(out, str + run, len - run);
	buf_putc(out, '"');
}

/*
 * Encode len bytes as base64 with padding.
 *
 * Returns a NUL-terminated string allocated with sfdw_alloc and stores its
 * length in *outlen unless outlen is NULL.
 */
char *
base64_encode(const unsigned char *data, size_t len, size_t *outlen)
{
	size_t		n = (len + 2) / 3 * 4;
	char	   *out = sfdw_alloc(n + 1);
	char	   *p = out;
	size_t		i;

	for (i = 0; i + 3 <= len; i += 3)
	{
		uint32_t	v = (uint32_t) data[i] << 16 |
			(uint32_t) data[i + 1] << 8 | data[i + 2];

		*p++ = b64_alphabet[v >> 18];
		*p++ = b64_alphabet[(v >> 12) & 0x3f];
		*p++ = b64_alphabet[(v >> 6) & 0x3f];
		*p++ = b64_alphabet[v & 0x3f];
	}
	if (len - i == 1)
	{
		uint32_t	v = (uint32_t) data[i] << 16;

		*p++ = b64_alphabet[v >> 18];
		*p++ = b64_alphabet[(v >> 12) & 0x3f];
		*p++ = '=';
		*p++ = '=';
	}
	else if (len - i == 2)
	{
		uint32_t	v = (uint32_t) data[i] << 16 | (uint32_t) data[i + 1] << 8;

		*p++ = b64_alphabet[v >> 18];
		*p++ = b64_alphabet[(v >> 12) & 0x3f];
		*p++ = b64_alphabet[(v >> 6) & 0x3f];
		*p++ = '=';
	}
	if (outlen != NULL)
		*outlen = n;
	return out;
}

/* The 6-bit value of a base64 character, or -1 for anything else. */
static int
b64_value(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

/*
 * Decode len bytes of padded standard base64.
 *
 * On success *out is a buffer allocated with sfdw_alloc (NUL-terminated
 * for convenience) holding *outlen bytes; with out NULL the text is only
 * checked.  Returns false, with *out NULL and *outlen 0, when the length
 * is not a multiple of four, a character is outside the alphabet, '='
 * appears other than as the last one or two characters, or the bits that
 * padding discards are not zero (so every byte string has exactly one
 * accepted encoding).
 */
bool
base64_decode(const char *text, size_t len, unsigned char **out,
			  size_t *outlen)
{
	size_t		pad = 0;
	size_t		n;
	unsigned char *buf = NULL;
	unsigned char *p;
	size_t		i;

	if (out != NULL)
	{
		*out = NULL;
		*outlen = 0;
	}
	if (len % 4 != 0)
		return false;
	if (len > 0 && text[len - 1] == '=')
		pad = text[len - 2] == '=' ? 2 : 1;
	n = len / 4 * 3 - pad;
	if (out != NULL)
		buf = sfdw_alloc(n + 1);
	p = buf;
	for (i = 0; i < len; i += 4)
	{
		int			quad = (i + 4 == len) ? (int) (4 - pad) : 4;
		uint32_t	v = 0;
		int			j;

		for (j = 0; j < 4; j++)
		{
			int			d = j < quad ? b64_value(text[i + j]) : 0;

			if (d < 0)
			{
				if (buf != NULL)
					sfdw_free(buf);
				return false;
			}
			v = v << 6 | (uint32_t) d;
		}
		if ((quad == 2 && (v & 0xffff) != 0) ||
			(quad == 3 && (v & 0xff) != 0))
		{
			if (buf != NULL)
				sfdw_free(buf);
			return false;
		}
		if (buf == NULL)
			continue;
		*p++ = (unsigned char) (v >> 16);
		if (quad > 2)
			*p++ = (unsigned char) (v >> 8);
		if (quad > 3)
			*p++ = (unsigned char) v;
	}
	if (out != NULL)
	{
		*out = buf;
		*outlen = n;
	}
	return true;
}
