/*-------------------------------------------------------------------------
 *
 * ddbjson.c
 *		DynamoDB's JSON wire format, read: response bodies parsed into
 *		DdbJson trees, and the trees' members looked up.  Writing is in
 *		jsonwrite.c, both declared in ddbjson.h.
 *
 * The parser reads RFC 8259 to the letter in one pass of recursive
 * descent and builds the tree as it goes:
 *
 *	- One arena per parse.  The tree, a copy of the text and every node
 *	  array live in a few large blocks allocated with sfdw_alloc_uninit (the
 *	  first sized from the text), freed together by ddbjson_free or with
 *	  the memory context they were allocated in.  Nothing in them is read
 *	  before it is written: zeroing them was a measurable part of a parse.
 *	  A container's members wait on a stack (on the C stack while they
 *	  fit) until it closes and are then copied into arrays of their final
 *	  size, so the tree is linear in the size of the text.
 *
 *	- Strings and numbers point into the copy of the text.  A string
 *	  without escapes is ended in place (its closing quote becomes the
 *	  NUL); one with escapes is unescaped in place, which never needs more
 *	  room than the escaped text.  A number keeps the text it was written
 *	  with ("-0", 38 digits), the byte after it overwritten with the NUL.
 *
 *	- RFC 8259 to the letter: raw control characters in strings, NUL
 *	  bytes, numbers outside the grammar, trailing commas and text after
 *	  the value are refused, and so are \u0000 in a member name (names are
 *	  NUL-terminated) and a member name that repeats in its object.  A \u
 *	  escape of half a surrogate pair reads as U+FFFD (the transport
 *	  refuses such text first, see ddbjson_lone_surrogate).  Nesting is
 *	  counted with the values inside the innermost container as a level of
 *	  their own (DDBJSON_MAX_DEPTH).  The reasons are worded as json-c's
 *	  tokener words them.
 *
 * Bytes outside ASCII pass through unchecked: whoever turns a string into
 * a text Datum must verify its encoding.
 *
 *-------------------------------------------------------------------------
 */
#include <float.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ddbjson.h"

/* A block of a tree's arena after the first; the first is the Tree. */
typedef struct ArenaBlock
{
	struct ArenaBlock *next;
} ArenaBlock;

/*
 * The start of a tree's first arena block.  ddbjson_parse returns &root,
 * which is where the block begins.
 */
typedef struct Tree
{
	DdbJson		root;
	ArenaBlock *more;			/* the blocks allocated after this one */
	char	   *free;			/* the unused rest of the current block, */
	size_t		left;			/* kept for the parses of deferred objects */
	size_t		next_block;
} Tree;

/* A value parsed whose container has not closed yet. */
typedef struct Pending
{
	DdbJson		value;
	char	   *name;			/* the member name; NULL in an array */
	size_t		namelen;
	size_t		comma;			/* the byte of the comma before the member */
} Pending;

/* The pending values a parse holds before its stack is allocated. */
#define PENDING_LOCAL 64

/* A parse in progress. */
typedef struct Parser
{
	const char *text;
	size_t		len;
	size_t		pos;			/* the next byte to read */
	size_t		base;			/* where text begins in the whole text */
	char	   *copy;			/* len + 1 bytes: the text, strings ended */
	Tree	   *tree;
	char	   *free;			/* the unused rest of the current block */
	size_t		left;
	size_t		next_block;		/* the size of the block to come */
	Pending    *stack;			/* local, or allocated once it outgrows it */
	size_t		top;
	size_t		cap;
	Pending    *local;			/* PENDING_LOCAL values on the C stack */
	const char *defer;			/* the root's member whose objects wait */
	char	   *err;
	size_t		errlen;
	bool		too_deep;
} Parser;

/* Members up to this many are checked for repeated names pairwise. */
#define PAIRWISE_NAMES 32

/* The bytes that end the plain run of a string: '"', '\' and controls. */
static const bool string_stop[256] = {
	[0x00 ... 0x1F] = true,
	['"'] = true,
	['\\'] = true,
};

/* The bytes a run of number characters is made of. */
static const bool number_char[256] = {
	['0' ... '9'] = true,
	['.'] = true,
	['e'] = true,
	['E'] = true,
	['+'] = true,
	['-'] = true,
};

static bool parse_value(Parser *p, int level, DdbJson *out);

/*
 * Report a problem at the parser's position; returns false for
 * convenience.
 */
static bool
parse_fail(Parser *p, const char *what)
{
	sfdw_set_error(p->err, p->errlen, "%s at byte %zu", what, p->base + p->pos);
	return false;
}

/* Report that the text ended inside a value. */
static bool
parse_ended(Parser *p)
{
	p->pos = p->len;
	return parse_fail(p, "unexpected end of data");
}

/* Step over JSON whitespace (inline: there is seldom any). */
static inline void
skip_ws(Parser *p)
{
	while (p->pos < p->len)
	{
		char		c = p->text[p->pos];

		if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
			break;
		p->pos++;
	}
}

/*
 * size bytes, 8-aligned, from the parse's arena.  A block that is full is
 * followed by one twice as large (or large enough for size).
 */
static void *
arena_alloc(Parser *p, size_t size)
{
	void	   *chunk;

	size = (size + 7) & ~(size_t) 7;
	if (size > p->left)
	{
		size_t		want = p->next_block;
		ArenaBlock *block;

		if (want < size + sizeof(ArenaBlock))
			want = size + sizeof(ArenaBlock);
		block = sfdw_alloc_uninit(want);
		block->next = p->tree->more;
		p->tree->more = block;
		p->free = (char *) (block + 1);
		p->left = want - sizeof(ArenaBlock);
		p->next_block *= 2;
	}
	chunk = p->free;
	p->free += size;
	p->left -= size;
	return chunk;
}

/*
 * Put a value (and its member name, with the byte of the comma before it)
 * on the stack of values waiting for their container to close.
 */
static void
push(Parser *p, const DdbJson *value, char *name, size_t namelen,
	 size_t comma)
{
	Pending    *slot;

	if (p->top == p->cap)
	{
		Pending    *grown = sfdw_alloc_uninit(2 * p->cap * sizeof(Pending));

		memcpy(grown, p->stack, p->cap * sizeof(Pending));
		if (p->stack != p->local)
			sfdw_free(p->stack);
		p->stack = grown;
		p->cap *= 2;
	}
	slot = &p->stack[p->top++];
	slot->value = *value;
	slot->name = name;
	slot->namelen = namelen;
	slot->comma = comma;
}

/* Are the names of two pending members the same? */
static bool
same_name(const Pending *a, const Pending *b)
{
	return a->namelen == b->namelen &&
		memcmp(a->name, b->name, a->namelen) == 0;
}

/* qsort order of pending members: by name, then by place in the text. */
static int
name_order(const void *a, const void *b)
{
	const Pending *x = *(const Pending *const *) a;
	const Pending *y = *(const Pending *const *) b;
	size_t		n = x->namelen < y->namelen ? x->namelen : y->namelen;
	int			c = memcmp(x->name, y->name, n);

	if (c != 0)
		return c;
	if (x->namelen != y->namelen)
		return x->namelen < y->namelen ? -1 : 1;
	return x->comma < y->comma ? -1 : x->comma > y->comma;
}

/*
 * The byte of the comma before the first member (in text order) of the n
 * pending members at m whose name an earlier member has, or 0 when every
 * name differs.  Pairwise for a few members, by sorting for more.
 */
static size_t
repeated_name(const Pending *m, size_t n)
{
	size_t		found = 0;

	if (n <= PAIRWISE_NAMES)
	{
		for (size_t j = 1; j < n; j++)
			for (size_t i = 0; i < j; i++)
				if (same_name(&m[i], &m[j]))
					return m[j].comma;
	}
	else
	{
		const Pending **order = sfdw_alloc(n * sizeof(Pending *));

		for (size_t i = 0; i < n; i++)
			order[i] = &m[i];
		qsort(order, n, sizeof(Pending *), name_order);
		for (size_t i = 1; i < n; i++)
			if (same_name(order[i - 1], order[i]) &&
				(found == 0 || order[i]->comma < found))
				found = order[i]->comma;
		sfdw_free(order);
	}
	return found;
}

/*
 * Close the container out (kind DJ_ARRAY or DJ_OBJECT) whose members are
 * the stack's values from base on: copy them into arrays of their final
 * size and take them off the stack.  Fails on a repeated member name.
 */
static bool
close_container(Parser *p, size_t base, DjKind kind, DdbJson *out)
{
	size_t		n = p->top - base;
	Pending    *m = &p->stack[base];

	out->kind = kind;
	out->n = (int) n;
	if (n == 0)
		return true;
	if (kind == DJ_OBJECT)
	{
		size_t		comma = repeated_name(m, n);

		if (comma != 0)
		{
			sfdw_set_error(p->err, p->errlen,
						   "duplicate object member name near byte %zu",
						   p->base + comma);
			return false;
		}
		/* the values and then their names, in one piece of the arena */
		out->elems = arena_alloc(p, n * (sizeof(DdbJson) + sizeof(char *)));
		out->keys = (char **) (out->elems + n);
		for (size_t i = 0; i < n; i++)
			out->keys[i] = m[i].name;
	}
	else
		out->elems = arena_alloc(p, n * sizeof(DdbJson));
	for (size_t i = 0; i < n; i++)
		out->elems[i] = m[i].value;
	p->top = base;
	return true;
}

/* The value of the four hex digits at p, or -1. */
static long
hex4(const char *p)
{
	long		v = 0;

	for (int i = 0; i < 4; i++)
	{
		int			d = hex_digit_value(p[i]);

		if (d < 0)
			return -1;
		v = v << 4 | d;
	}
	return v;
}

/* Write the code point cp as UTF-8 at out; returns the bytes written. */
static size_t
put_utf8(char *out, unsigned long cp)
{
	if (cp < 0x80)
	{
		out[0] = (char) cp;
		return 1;
	}
	if (cp < 0x800)
	{
		out[0] = (char) (0xC0 | cp >> 6);
		out[1] = (char) (0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp < 0x10000)
	{
		out[0] = (char) (0xE0 | cp >> 12);
		out[1] = (char) (0x80 | ((cp >> 6) & 0x3F));
		out[2] = (char) (0x80 | (cp & 0x3F));
		return 3;
	}
	out[0] = (char) (0xF0 | cp >> 18);
	out[1] = (char) (0x80 | ((cp >> 12) & 0x3F));
	out[2] = (char) (0x80 | ((cp >> 6) & 0x3F));
	out[3] = (char) (0x80 | (cp & 0x3F));
	return 4;
}

/*
 * Read the four hex digits of the \u escape at byte i (the backslash) into
 * *cp.  Fails at the first byte that is no hex digit, or when the text
 * ends.
 */
static bool
read_unicode(Parser *p, size_t i, unsigned long *cp)
{
	for (size_t k = i + 2; k < i + 6; k++)
	{
		if (k >= p->len)
			return parse_ended(p);
		if (hex_digit_value(p->text[k]) < 0)
		{
			p->pos = k;
			return parse_fail(p, "invalid string sequence");
		}
	}
	*cp = (unsigned long) hex4(p->text + i + 2);
	return true;
}

/*
 * The rest of a string with escapes, from byte i of the text on, written
 * to the copy from byte o on (o <= i: unescaped text is never longer).
 * See parse_string for the rest of the contract.
 *
 * Half a surrogate pair becomes U+FFFD: a high half waits for a \u escape
 * of a low half and is replaced when anything else follows.
 */
static bool
parse_escaped(Parser *p, size_t start, size_t i, bool is_name,
			  char **str, size_t *len)
{
	const unsigned char *t = (const unsigned char *) p->text;
	char	   *copy = p->copy;
	size_t		o = i;
	unsigned long high = 0;

	while (i < p->len)
	{
		unsigned char c = t[i];
		unsigned long cp;

		if (high != 0 && (c != '\\' || i + 1 >= p->len || t[i + 1] != 'u'))
		{
			o += put_utf8(copy + o, 0xFFFD);
			high = 0;
		}
		if (c == '"')
		{
			copy[o] = '\0';
			*str = copy + start;
			*len = o - start;
			p->pos = i + 1;
			return true;
		}
		if (c < 0x20)
		{
			p->pos = i;
			return parse_fail(p, "control character in string");
		}
		if (c != '\\')
		{
			copy[o++] = (char) c;
			i++;
			continue;
		}
		if (i + 1 >= p->len)
			return parse_ended(p);
		switch (t[i + 1])
		{
			case '"':
			case '\\':
			case '/':
				copy[o++] = (char) t[i + 1];
				break;
			case 'b':
				copy[o++] = '\b';
				break;
			case 'f':
				copy[o++] = '\f';
				break;
			case 'n':
				copy[o++] = '\n';
				break;
			case 'r':
				copy[o++] = '\r';
				break;
			case 't':
				copy[o++] = '\t';
				break;
			case 'u':
				if (!read_unicode(p, i, &cp))
					return false;
				if (high != 0 && cp >= 0xDC00 && cp <= 0xDFFF)
					cp = 0x10000 + ((high - 0xD800) << 10) + (cp - 0xDC00);
				else if (high != 0)
					o += put_utf8(copy + o, 0xFFFD);
				else if (cp >= 0xDC00 && cp <= 0xDFFF)
					cp = 0xFFFD;
				high = 0;
				if (cp >= 0xD800 && cp <= 0xDBFF)
					high = cp;
				else if (cp == 0 && is_name)
				{
					p->pos = i;
					return parse_fail(p, "member name contains \\u0000");
				}
				else
					o += put_utf8(copy + o, cp);
				i += 6;
				continue;
			default:
				p->pos = i + 1;
				return parse_fail(p, "invalid string sequence");
		}
		i += 2;
	}
	return parse_ended(p);
}

/*
 * Read the string whose opening quote is at the position (a member name
 * when is_name) into *str, NUL-terminated in the copy of the text, and its
 * byte length into *len.
 */
static bool
parse_string(Parser *p, bool is_name, char **str, size_t *len)
{
	const unsigned char *t = (const unsigned char *) p->text;
	size_t		start = p->pos + 1;
	size_t		i = start;

	while (i < p->len && !string_stop[t[i]])
		i++;
	if (i < p->len && t[i] == '"')
	{
		p->copy[i] = '\0';
		*str = p->copy + start;
		*len = i - start;
		p->pos = i + 1;
		return true;
	}
	return parse_escaped(p, start, i, is_name, str, len);
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
 * Read the number at the position, keeping its text: a run of number
 * characters that is one RFC 8259 number (json_number_length).  A run
 * that reaches the end of the text is a whole value only at the top level
 * (is_root); anywhere else the text ended early.
 */
static bool
parse_number(Parser *p, bool is_root, DdbJson *out)
{
	const unsigned char *t = (const unsigned char *) p->text;
	size_t		start = p->pos;
	size_t		end = start;
	size_t		n;

	while (end < p->len && number_char[t[end]])
		end++;
	n = json_number_length(p->text + start, end - start);
	if (end == p->len && !(is_root && n == end - start))
		return parse_ended(p);
	if (n != end - start)
		return parse_fail(p, "invalid number");
	p->copy[end] = '\0';
	out->kind = DJ_NUMBER;
	out->str = p->copy + start;
	out->len = n;
	p->pos = end;
	return true;
}

/*
 * Read the literal word (null, true or false) at the position; expected
 * is the reason when a byte differs.
 */
static bool
parse_literal(Parser *p, const char *word, const char *expected)
{
	for (size_t k = 0; word[k] != '\0'; k++)
	{
		if (p->pos + k >= p->len)
			return parse_ended(p);
		if (p->text[p->pos + k] != word[k])
		{
			p->pos += k;
			return parse_fail(p, expected);
		}
	}
	p->pos += strlen(word);
	return true;
}

/*
 * After a comma at byte comma: fail on the closing bracket close that
 * would make it a trailing comma, which RFC 8259 does not allow.
 */
static bool
no_trailing_comma(Parser *p, size_t comma, char close)
{
	skip_ws(p);
	if (p->pos < p->len && p->text[p->pos] == close)
	{
		p->pos = comma;
		return parse_fail(p, "unexpected character");
	}
	return true;
}

/*
 * The bytes the skip of an object stops at outside strings: brackets,
 * quotes and the NUL that ends the copy.
 */
static const bool skip_stop[256] = {
	['\0'] = true,
	['"'] = true,
	['{'] = true,
	['}'] = true,
	['['] = true,
	[']'] = true,
};

/*
 * Step over the object whose '{' is at the position, to the '}' that
 * balances it, and leave it in out as a DJ_DEFERRED span of the copy to
 * be parsed when it is asked for (ddbjson_parse_deferred).  Only strings
 * and brackets are followed: the span is checked when it is parsed.  The
 * copy is read, not the text: it is the same ahead of the parse, and the
 * NUL after it (the only one: the text has none) ends every loop.
 */
static bool
defer_object(Parser *p, int level, DdbJson *out)
{
	const unsigned char *t = (const unsigned char *) p->copy;
	size_t		start = p->pos;
	size_t		i = start + 1;
	size_t		depth = 1;

	while (depth > 0)
	{
		while (!skip_stop[t[i]])
			i++;
		switch (t[i++])
		{
			case '\0':
				return parse_ended(p);
			case '"':
				for (;;)
				{
					while (!string_stop[t[i]])
						i++;
					if (t[i] == '"')
						break;
					if (t[i] == '\0' || (t[i] == '\\' && t[i + 1] == '\0'))
						return parse_ended(p);
					i += t[i] == '\\' ? 2 : 1;
				}
				i++;
				break;
			case '{':
			case '[':
				depth++;
				break;
			default:
				depth--;
				break;
		}
	}
	out->kind = DJ_DEFERRED;
	out->str = p->copy + start;
	out->len = i - start;
	out->n = level;
	p->pos = i;
	return true;
}

/*
 * Read the array whose '[' is at the position, at nesting level level;
 * when defer, the objects among its values wait (defer_object).
 */
static bool
parse_array(Parser *p, int level, bool defer, DdbJson *out)
{
	size_t		base = p->top;

	p->pos++;
	skip_ws(p);
	if (p->pos < p->len && p->text[p->pos] == ']')
	{
		p->pos++;
		return close_container(p, base, DJ_ARRAY, out);
	}
	for (;;)
	{
		DdbJson		value = {0};
		size_t		comma;

		if (defer)
			skip_ws(p);
		if (!(defer && p->pos < p->len && p->text[p->pos] == '{' ?
			  defer_object(p, level + 1, &value) :
			  parse_value(p, level + 1, &value)))
			return false;
		push(p, &value, NULL, 0, 0);
		skip_ws(p);
		if (p->pos >= p->len)
			return parse_ended(p);
		if (p->text[p->pos] == ']')
			break;
		if (p->text[p->pos] != ',')
			return parse_fail(p, "array value separator ',' expected");
		comma = p->pos++;
		if (!no_trailing_comma(p, comma, ']'))
			return false;
	}
	p->pos++;
	return close_container(p, base, DJ_ARRAY, out);
}

/*
 * Read the value of the root's member whose objects wait (Parser.defer):
 * an array's objects are deferred (parse_array), anything else is read.
 */
static bool
parse_deferring(Parser *p, int level, DdbJson *out)
{
	skip_ws(p);
	return p->pos < p->len && p->text[p->pos] == '[' ?
		parse_array(p, level, true, out) : parse_value(p, level, out);
}

/* Read the object whose '{' is at the position, at nesting level level. */
static bool
parse_object(Parser *p, int level, DdbJson *out)
{
	size_t		base = p->top;
	size_t		comma = 0;

	p->pos++;
	skip_ws(p);
	if (p->pos < p->len && p->text[p->pos] == '}')
	{
		p->pos++;
		return close_container(p, base, DJ_OBJECT, out);
	}
	for (;;)
	{
		DdbJson		value = {0};
		char	   *name;
		size_t		namelen;

		if (p->pos >= p->len)
			return parse_ended(p);
		if (p->text[p->pos] != '"')
			return parse_fail(p, "quoted object property name expected");
		if (!parse_string(p, true, &name, &namelen))
			return false;
		skip_ws(p);
		if (p->pos >= p->len)
			return parse_ended(p);
		if (p->text[p->pos] != ':')
			return parse_fail(p, "object property name separator ':' expected");
		p->pos++;
		if (!(level == 1 && p->defer != NULL && strcmp(name, p->defer) == 0 ?
			  parse_deferring(p, level + 1, &value) :
			  parse_value(p, level + 1, &value)))
			return false;
		push(p, &value, name, namelen, comma);
		skip_ws(p);
		if (p->pos >= p->len)
			return parse_ended(p);
		if (p->text[p->pos] == '}')
			break;
		if (p->text[p->pos] != ',')
			return parse_fail(p, "object value separator ',' expected");
		comma = p->pos++;
		if (!no_trailing_comma(p, comma, '}'))
			return false;
	}
	p->pos++;
	return close_container(p, base, DJ_OBJECT, out);
}

/*
 * Read one value into out (zeroed by the caller), at nesting level level:
 * 1 for the top-level value, one more inside each container, scalars
 * included.
 */
static bool
parse_value(Parser *p, int level, DdbJson *out)
{
	skip_ws(p);
	if (p->pos >= p->len)
		return parse_ended(p);
	if (level > DDBJSON_MAX_DEPTH)
	{
		p->too_deep = true;
		return parse_fail(p, "nesting too deep");
	}
	switch (p->text[p->pos])
	{
		case '{':
			return parse_object(p, level, out);
		case '[':
			return parse_array(p, level, false, out);
		case '"':
			out->kind = DJ_STRING;
			return parse_string(p, false, &out->str, &out->len);
		case 't':
			out->kind = DJ_BOOL;
			out->boolean = true;
			return parse_literal(p, "true", "boolean expected");
		case 'f':
			out->kind = DJ_BOOL;
			return parse_literal(p, "false", "boolean expected");
		case 'n':
			out->kind = DJ_NULL;
			return parse_literal(p, "null", "null expected");
		case '-':
		case '0':
		case '1':
		case '2':
		case '3':
		case '4':
		case '5':
		case '6':
		case '7':
		case '8':
		case '9':
			return parse_number(p, level == 1, out);
		default:
			return parse_fail(p, "unexpected character");
	}
}

/*
 * Parse len bytes of JSON text into a tree allocated with sfdw_alloc.
 *
 * Returns NULL and writes a one-line reason into err (as "what at byte N")
 * on malformed input, input that ends early, anything but whitespace after
 * the value, NUL bytes, repeated member names and nesting deeper than
 * DDBJSON_MAX_DEPTH levels.
 */
DdbJson *
ddbjson_parse(const char *text, size_t len, char *err, size_t errlen)
{
	bool		too_deep;

	return ddbjson_parse_ex(text, len, NULL, err, errlen, &too_deep);
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

/*
 * The bytes of node arrays a tree's first block holds beside the copy of
 * the text: per byte of text, enough for the DynamoDB responses measured
 * (3.6 to 5.5, Scan pages of small items the most) so that most parses
 * allocate one block; at least ARENA_MIN, at most ARENA_MAX plus that, so
 * that a large text of few nodes does not reserve five times its size (the
 * blocks after the first double).
 */
#define ARENA_PER_BYTE 5
#define ARENA_MIN 1024
#define ARENA_MAX (32 * 1024 * 1024)

/* Start a parse of len bytes of text at byte base of a whole text. */
static void
parser_init(Parser *p, Pending *local, const char *text, size_t len,
			size_t base, char *err, size_t errlen)
{
	memset(p, 0, sizeof(*p));
	p->text = text;
	p->len = len;
	p->base = base;
	p->err = err;
	p->errlen = errlen;
	p->cap = PENDING_LOCAL;
	p->local = local;
	p->stack = local;
}

/*
 * Parse one value from the parser's position to the end of its text, at
 * nesting level level, into out; frees the pending stack either way.
 */
static bool
parse_whole(Parser *p, int level, DdbJson *out)
{
	bool		ok;

	ok = parse_value(p, level, out) &&
		(skip_ws(p), p->pos == p->len || parse_fail(p, "unexpected character"));
	if (p->stack != p->local)
		sfdw_free(p->stack);
	return ok;
}

/* See ddbjson.h. */
DdbJson *
ddbjson_parse_ex(const char *text, size_t len, const char *defer,
				 char *err, size_t errlen, bool *too_deep)
{
	const char *nul;
	Parser		p;
	Pending		local[PENDING_LOCAL];
	size_t		copy_size;
	size_t		first;

	*too_deep = false;
	if (len > INT_MAX)
	{
		/* a node's count is an int */
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

	copy_size = (len + 1 + 7) & ~(size_t) 7;
	first = sizeof(Tree) + copy_size + ARENA_MIN +
		(len < ARENA_MAX / ARENA_PER_BYTE ? ARENA_PER_BYTE * len : ARENA_MAX);
	parser_init(&p, local, text, len, 0, err, errlen);
	p.defer = defer;
	p.tree = sfdw_alloc_uninit(first);
	memset(p.tree, 0, sizeof(Tree));
	p.copy = (char *) (p.tree + 1);
	memcpy(p.copy, text, len);
	p.copy[len] = '\0';
	p.free = p.copy + copy_size;
	p.left = first - sizeof(Tree) - copy_size;
	p.next_block = first;

	if (!parse_whole(&p, 1, &p.tree->root))
	{
		*too_deep = p.too_deep;
		ddbjson_free(&p.tree->root);
		return NULL;
	}
	p.tree->free = p.free;
	p.tree->left = p.left;
	p.tree->next_block = p.next_block;
	return &p.tree->root;
}

/*
 * See ddbjson.h.  The span of the copy is read as it was (nothing wrote
 * into it) and its strings are ended in a copy of their own, so that a
 * number's end, which the parse overwrites, is still there to read.
 */
bool
ddbjson_parse_deferred(DdbJson *root, DdbJson *node, char *err, size_t errlen)
{
	Tree	   *tree = (Tree *) root;
	Parser		p;
	Pending		local[PENDING_LOCAL];
	DdbJson		value = {0};

	if (node->kind != DJ_DEFERRED)
		return true;
	parser_init(&p, local, node->str, node->len,
				(size_t) (node->str - (char *) (tree + 1)), err, errlen);
	p.tree = tree;
	p.free = tree->free;
	p.left = tree->left;
	p.next_block = tree->next_block;
	p.copy = arena_alloc(&p, node->len + 1);
	memcpy(p.copy, node->str, node->len);
	p.copy[node->len] = '\0';
	if (!parse_whole(&p, node->n, &value))
		return false;
	tree->free = p.free;
	tree->left = p.left;
	tree->next_block = p.next_block;
	*node = value;
	return true;
}

/* See ddbjson.h. */
void
ddbjson_free(DdbJson *root)
{
	Tree	   *tree = (Tree *) root;
	ArenaBlock *block;

	if (root == NULL)
		return;
	block = tree->more;
	while (block != NULL)
	{
		ArenaBlock *next = block->next;

		sfdw_free(block);
		block = next;
	}
	sfdw_free(tree);
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
		/* the first bytes tell most names apart without a call */
		if (obj->keys[i][0] == key[0] && strcmp(obj->keys[i], key) == 0)
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
 * Returns 0 when the member is missing or not a number.
 */
double
ddbjson_get_number(const DdbJson *obj, const char *key)
{
	DdbJson    *v = ddbjson_get(obj, key);

	if (v == NULL || v->kind != DJ_NUMBER)
		return 0;
	return json_number_value(v->str, v->len);
}

/* Powers of ten a double holds exactly. */
static const double exact_tens[] = {
	1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22
};

/*
 * See ddbjson.h.  Clinger's fast path: a number of at most 15 digits is
 * an integer below 2^53 times a power of ten within 10^+-22, both exact
 * doubles, so one multiplication or division, rounded once, is the
 * correctly rounded value strtod gives.  Anything else goes to strtod, and
 * so does everything where doubles are computed in a wider precision and
 * rounded twice (FLT_EVAL_METHOD other than 0: x87 without SSE2).
 */
double
json_number_value(const char *text, size_t len)
{
	size_t		i = 0;
	bool		negative = false;
	uint64_t	digits = 0;
	int			ndigits = 0;
	int			scale = 0;
	int			exponent = 0;
	bool		exponent_negative = false;
	double		value;

	if (i < len && text[i] == '-')
	{
		negative = true;
		i++;
	}
	for (; i < len && text[i] >= '0' && text[i] <= '9'; i++, ndigits++)
		digits = digits * 10 + (uint64_t) (text[i] - '0');
	if (i < len && text[i] == '.')
		for (i++; i < len && text[i] >= '0' && text[i] <= '9'; i++, ndigits++, scale--)
			digits = digits * 10 + (uint64_t) (text[i] - '0');
	if (i < len && (text[i] == 'e' || text[i] == 'E'))
	{
		i++;
		if (i < len && (text[i] == '+' || text[i] == '-'))
			exponent_negative = text[i++] == '-';
		for (; i < len && text[i] >= '0' && text[i] <= '9' && exponent < 1000; i++)
			exponent = exponent * 10 + (text[i] - '0');
		scale += exponent_negative ? -exponent : exponent;
	}
	if (i != len || ndigits == 0 || ndigits > 15 || scale < -22 || scale > 22 ||
		FLT_EVAL_METHOD != 0)
		return strtod(text, NULL);
	value = (double) digits;
	value = scale < 0 ? value / exact_tens[-scale] : value * exact_tens[scale];
	return negative ? -value : value;
}
