/*-------------------------------------------------------------------------
 *
 * ddbjson.c
 *		DynamoDB's JSON wire format: response bodies parsed into DdbJson
 *		trees, request bodies written byte for byte, and the base64 that
 *		carries B values.
 *
 * json-c's tokener parses the text.  Its tree is then copied into DdbJson
 * nodes while a cursor walks the source text in step with it, one value at
 * a time.  The walk exists for what json-c cannot give us:
 *
 *	- A number's text as written.  json-c keeps the text of numbers that
 *	  have a fraction or an exponent, but stores integers as int64/uint64:
 *	  "-0" would come back as "0", and an integer beyond 64 bits (DynamoDB
 *	  numbers have up to 38 digits) is silently clamped.  The walk takes
 *	  every number's text, integer or not, straight from the source.
 *
 *	- RFC 8259 to the letter.  json-c's lenient mode accepts more (trailing
 *	  commas, comments, single quotes, "True", NaN, hexadecimal and other
 *	  numbers outside the grammar, text after the value), and its strict
 *	  mode cannot be used: from json-c 0.17 on it refuses every byte above
 *	  0x7F in a string, so all of UTF-8.  The walk steps over exactly
 *	  RFC 8259's syntax and refuses the rest where json-c's tree and the
 *	  source part ways, as well as raw control characters inside strings
 *	  and member names that contain \u0000 (json-c cuts names at the first
 *	  NUL).
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
 * json-c's tree while ddbjson_parse copies it.  The copy allocates with
 * the host's allocator, which may jump out of the call (palloc's
 * out-of-memory error); the tree left behind is released by the next
 * parse or by ddbjson_release_abandoned.
 */
static struct json_object *parsing = NULL;

/*
 * Release the storage below a node: of a tree that ddbjson_parse gives up
 * on, or of one ddbjson_free frees.  The tree may be partly built: nodes
 * not yet reached are still zeroed.  The node itself is not freed.
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
 * Report that the source no longer matches json-c's tree: json-c's lenient
 * parse took something RFC 8259 does not allow (see the banner), or ran
 * out of memory, which it reports as a successful parse of null.
 */
static bool
walk_mismatch(Walk *wk)
{
	return walk_fail(wk, "unexpected character");
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

/* True when byte k of s (len bytes long) is a digit. */
static bool
digit_at(const char *s, size_t len, size_t k)
{
	return k < len && s[k] >= '0' && s[k] <= '9';
}

/* See ddbjson.h. */
size_t
json_number_length(const char *s, size_t len)
{
	size_t		i = 0;

	if (i < len && s[i] == '-')
		i++;
	if (i < len && s[i] == '0')
		i++;
	else if (digit_at(s, len, i))
	{
		while (digit_at(s, len, i))
			i++;
	}
	else
		return 0;
	if (i < len && s[i] == '.')
	{
		if (!digit_at(s, len, i + 1))
			return 0;
		i++;
		while (digit_at(s, len, i))
			i++;
	}
	if (i < len && (s[i] == 'e' || s[i] == 'E'))
	{
		i++;
		if (i < len && (s[i] == '+' || s[i] == '-'))
			i++;
		if (!digit_at(s, len, i))
			return 0;
		while (digit_at(s, len, i))
			i++;
	}
	return i;
}

/*
 * Take the number at the position, keeping its source text: an RFC 8259
 * number (json_number_length) not run on into more number characters.
 */
static bool
walk_number(Walk *wk, DdbJson *out)
{
	const char *t = wk->text;
	size_t		n;

	if (wk->pos < wk->len && memchr("\"{[tfn", t[wk->pos], 6) != NULL)
		return walk_mismatch(wk);
	n = json_number_length(t + wk->pos, wk->len - wk->pos);
	if (n == 0 || (wk->pos + n < wk->len &&
				   memchr("0123456789.eE+-", t[wk->pos + n], 15) != NULL))
		return walk_fail(wk, "invalid number");
	out->kind = DJ_NUMBER;
	out->len = n;
	out->str = sfdw_strndup(t + wk->pos, n);
	wk->pos += n;
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
	{
		size_t		at = wk->pos;

		/* more members than json-c kept: a name came twice */
		if (walk_expect(wk, ',') && (walk_skip_ws(wk), wk->pos < wk->len) &&
			wk->text[wk->pos] == '"')
		{
			sfdw_set_error(wk->err, wk->errlen,
						   "duplicate object member name near byte %zu", at);
			return false;
		}
		wk->pos = at;
		return walk_mismatch(wk);
	}
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

	ddbjson_release_abandoned();
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
	parsing = jo;
	root = sfdw_alloc(sizeof(DdbJson));
	if (!walk_value(&wk, jo, root) ||
		(walk_skip_ws(&wk), wk.pos < len && !walk_mismatch(&wk)))
	{
		ddbjson_release_abandoned();
		release_tree(root);
		sfdw_free(root);
		return NULL;
	}
	ddbjson_release_abandoned();
	return root;
}

/* See ddbjson.h. */
void
ddbjson_free(DdbJson *root)
{
	if (root == NULL)
		return;
	release_tree(root);
	sfdw_free(root);
}

/* See ddbjson.h. */
void
ddbjson_release_abandoned(void)
{
	if (parsing != NULL)
		json_object_put(parsing);
	parsing = NULL;
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
	return jw_end_body(w, len);
}

/* See ddbjson.h. */
char *
jw_end_body(JsonWriter *w, size_t *len)
{
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
