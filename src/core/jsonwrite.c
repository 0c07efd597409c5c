/*-------------------------------------------------------------------------
 *
 * jsonwrite.c
 *		DynamoDB's JSON wire format, written: request bodies written byte
 *		for byte (JsonWriter), a parsed tree written back out, and the
 *		base64 that carries B values (see ddbjson.h; the reading is in
 *		ddbjson.c).
 *
 *-------------------------------------------------------------------------
 */
#include <string.h>

#include "core/ddbjson.h"

static const char b64_alphabet[] =
"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* A byte of every lane of a word. */
#define LANES(b) (UINT64_C(0x0101010101010101) * (b))

/*
 * The length of the run of bytes at s (len of them) that a JSON string
 * holds as they are: up to the first '"', '\\' or control character.
 *
 * On a little-endian machine, eight bytes a step: a lane is zero after the
 * XOR with '"' or '\\', or is below 0x20, when the lane's top bit survives
 * (v - 1) & ~v, or (x - 0x20) & ~x.  A borrow only runs upward from such a
 * lane, so the lowest top bit set is the first byte that stops the run.
 * (The parser reads byte by byte: the strings of a response are mostly
 * names and type tags of a few bytes, where a word step costs more.)
 */
static inline size_t
plain_run(const unsigned char *s, size_t len)
{
	size_t		i = 0;

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	for (; len - i >= sizeof(uint64_t); i += sizeof(uint64_t))
	{
		uint64_t	x;
		uint64_t	quote;
		uint64_t	backslash;
		uint64_t	stops;

		memcpy(&x, s + i, sizeof(x));
		quote = x ^ LANES('"');
		backslash = x ^ LANES('\\');
		stops = (((quote - LANES(1)) & ~quote) |
				 ((backslash - LANES(1)) & ~backslash) |
				 ((x - LANES(0x20)) & ~x)) & LANES(0x80);
		if (stops != 0)
			return i + (size_t) __builtin_ctzll(stops) / 8;
	}
#endif
	while (i < len && s[i] >= 0x20 && s[i] != '"' && s[i] != '\\')
		i++;
	return i;
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
 * Write json unchanged: one complete JSON value (such as a number's text),
 * or, in place of a member of an object, one or more complete members
 * ("a":1,"b":2).
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
		case DJ_DEFERRED:
			/* its text as it came */
			jw_separate(w);
			buf_append(w->out, v->str, v->len);
			break;
	}
}

/* See ddbjson.h. */
char *
ddbjson_text(const DdbJson *v, size_t *len)
{
	Buf			out;
	JsonWriter	w;

	buf_init(&out);
	jw_init(&w, &out);
	jw_tree(&w, v);
	if (len)
		*len = out.len;
	return out.data;
}

/* See ddbjson.h. */
void
jw_begin_body(JsonWriter *w, Buf *out)
{
	buf_init(out);
	jw_init(w, out);
	jw_begin_object(w);
}

/* See ddbjson.h. */
void
jw_begin_request(JsonWriter *w, Buf *out, const char *table)
{
	jw_begin_body(w, out);
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
		unsigned char c;
		char		esc[7];

		i += plain_run((const unsigned char *) str + i, len - i);
		if (i == len)
			break;
		c = (unsigned char) str[i];
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
