/*-------------------------------------------------------------------------
 *
 * ddbshape.c
 *		DynamoDB's shapes: whether a parsed response body is what the
 *		DynamoDB API reference says its members are (AttributeValues, items,
 *		Count, keys, Responses, Unprocessed*, ConsumedCapacity), whether
 *		a number's text is one DynamoDB holds, an item's size as DynamoDB
 *		counts it, and which action of a canceled transaction failed its
 *		condition.  A fault is reported with the attribute path and the
 *		item it was found in (DdbCheck).
 *
 *-------------------------------------------------------------------------
 */
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/avorder.h"
#include "core/ddbjson.h"

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

/* ---------------------------------------------------------------------
 * Item sizes
 * ---------------------------------------------------------------------
 */

/*
 * The bytes a number's text (a valid DynamoDB number) takes in an item:
 * its significant digits in base 100, pairs aligned on the decimal point
 * (so 1.5 is "01" "50"), one byte of exponent, and one more when it is
 * negative; zero takes one byte.
 */
static size_t
number_size(const char *text, size_t len)
{
	size_t		i = 0;
	bool		negative = false;
	long		point = -1;		/* digits before the decimal point */
	long		digits = 0;
	long		first = -1;		/* index of the first nonzero digit */
	long		last = -1;		/* index of the last nonzero digit */
	long		exponent = 0;
	long		lead;
	long		units;

	if (i < len && (text[i] == '+' || text[i] == '-'))
		negative = text[i++] == '-';
	for (; i < len && ((text[i] >= '0' && text[i] <= '9') || text[i] == '.'); i++)
	{
		if (text[i] == '.')
		{
			point = digits;
			continue;
		}
		if (text[i] != '0')
		{
			if (first < 0)
				first = digits;
			last = digits;
		}
		digits++;
	}
	if (first < 0)
		return 1;
	if (i < len && (text[i] == 'e' || text[i] == 'E'))
		exponent = strtol(text + i + 1, NULL, 10);
	if (point < 0)
		point = digits;
	/* the integer digits of the significant ones, counted from the first */
	lead = point + exponent - first;
	/* a digit of padding makes them an even number */
	units = (lead % 2 != 0 ? 1 : 0) + (last - first + 1);
	return (size_t) ((units + 1) / 2) + 1 + (negative ? 1 : 0);
}

/* The raw bytes of base64 text (len bytes, with or without padding). */
static size_t
base64_size(const char *text, size_t len)
{
	while (len > 0 && text[len - 1] == '=')
		len--;
	return len * 3 / 4;
}

/*
 * The bytes AttributeValue av takes in an item, as DynamoDB counts them: S
 * its UTF-8 bytes, N number_size, B its raw bytes, BOOL and NULL one, a
 * set the sum of its members, L and M three plus each element and one
 * byte per element (a map's names counted too).  A value of no known type
 * counts nothing.
 */
static size_t
av_size(const DdbJson *av)
{
	const char *tag;
	const DdbJson *v;
	size_t		size = 0;

	if (av->kind != DJ_OBJECT || av->n != 1)
		return 0;
	tag = av->keys[0];
	v = &av->elems[0];
	if (strcmp(tag, "BOOL") == 0 || strcmp(tag, "NULL") == 0)
		return 1;
	if (strcmp(tag, "L") == 0 || strcmp(tag, "M") == 0)
	{
		size = 3;
		for (int i = 0; v->kind == (tag[0] == 'M' ? DJ_OBJECT : DJ_ARRAY) && i < v->n; i++)
			size += (tag[0] == 'M' ? strlen(v->keys[i]) : 0) + av_size(&v->elems[i]) + 1;
		return size;
	}
	for (int i = 0; i < (v->kind == DJ_ARRAY ? v->n : 1); i++)
	{
		const DdbJson *s = v->kind == DJ_ARRAY ? &v->elems[i] : v;

		if (s->kind != DJ_STRING)
			continue;
		if (tag[0] == 'S')
			size += s->len;
		else if (tag[0] == 'N')
			size += number_size(s->str, s->len);
		else if (tag[0] == 'B')
			size += base64_size(s->str, s->len);
	}
	return size;
}

/* See ddbjson.h. */
size_t
ddb_item_size(const DdbJson *item)
{
	size_t		size = 0;

	for (int i = 0; item->kind == DJ_OBJECT && i < item->n; i++)
		size += strlen(item->keys[i]) + av_size(&item->elems[i]);
	return size;
}

/* The 4 KB blocks that bytes take, one at least. */
static double
blocks_4k(double bytes)
{
	double		n = (double) (long long) (bytes / 4096.0);

	if (n * 4096.0 < bytes)
		n++;
	return n < 1 ? 1 : n;
}

/* See ddbjson.h. */
double
ddb_read_units(double requests, double items, double item_bytes, bool by_item,
			   bool consistent)
{
	double		share = consistent ? 1.0 : 0.5;

	if (requests <= 0)
		return 0;
	if (by_item)
		return items * blocks_4k(item_bytes) * share;
	return requests * blocks_4k(items / requests * item_bytes) * share;
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
		uint64_t	word;

		/* ASCII, the common case, eight bytes at a time */
		if (len - i >= sizeof(word))
		{
			memcpy(&word, p + i, sizeof(word));
			if ((word & UINT64_C(0x8080808080808080)) == 0)
			{
				i += sizeof(word);
				continue;
			}
		}
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
		case DJ_DEFERRED:
			return "an object not parsed yet";
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
 * Check the item at member[index] (sub names the table inside member, or
 * is NULL; index -1: the item is member itself), naming that place in chk
 * on failure.
 */
static bool
check_item_in(const DdbJson *item, const char *member, const char *sub,
			  int index, DdbCheck *chk)
{
	if (ddbjson_check_item(item, chk))
		return true;
	check_where(chk, member, sub, index);
	return false;
}

/* Check a single item found at member (not checked when absent). */
static bool
check_one_item(const DdbJson *item, const char *member, DdbCheck *chk)
{
	return item == NULL || check_item_in(item, member, NULL, -1, chk);
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

/*
 * Check an array of items found at member (sub names the table inside it,
 * or is NULL).
 */
static bool
check_items(const DdbJson *items, const char *member, const char *sub,
			DdbCheck *chk)
{
	if (items->kind != DJ_ARRAY)
		return check_envelope(chk, member, sub, -1, "an array of items", items);
	for (int i = 0; i < items->n; i++)
		if (!check_item_in(&items->elems[i], member, sub, i, chk))
			return false;
	return true;
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

/*
 * Is a a scalar key value equal to b: the same type, S, N or B, and the
 * same value in DynamoDB's order (so "1.50" equals "1.5")?
 */
static bool
key_value_equal(const DdbJson *a, const DdbJson *b)
{
	return a != NULL && b != NULL && a->kind == DJ_OBJECT &&
		b->kind == DJ_OBJECT && a->n == 1 && b->n == 1 &&
		strcmp(a->keys[0], b->keys[0]) == 0 &&
		strchr("SNB", a->keys[0][0]) != NULL && a->keys[0][1] == '\0' &&
		avorder_compare(a, b) == 0;
}

/*
 * A LastEvaluatedKey is the key of the last item read for the page, and
 * every item returned was read at or before it: it may name the page's
 * last item, or one the page does not return, never an earlier one.  A
 * read resumed from an earlier item would return items again.  Is lek
 * (when an object) not the key of items[index], n items in all?
 */
static bool
check_lek_after(const DdbJson *items, int n, const DdbJson *lek, int index,
				DdbCheck *chk)
{
	bool		same = true;

	if (lek == NULL || lek->kind != DJ_OBJECT || index >= n - 1)
		return true;
	for (int k = 0; k < lek->n && same; k++)
		same = key_value_equal(&lek->elems[k],
							   ddbjson_get(&items[index], lek->keys[k]));
	if (!same)
		return true;
	check_where(chk, "LastEvaluatedKey", NULL, -1);
	chk->item = NULL;
	return check_fail(chk, "the key of Items[%d], not of the last of the page's %d items: the next page would return items again",
					  index, n);
}

/* See ddbjson.h. */
bool
ddbjson_check_page_item(const DdbJson *items, int n, const DdbJson *lek,
						int index, DdbCheck *chk)
{
	return check_item_in(&items[index], "Items", NULL, index, chk) &&
		check_lek_after(items, n, lek, index, chk);
}

/* See ddbjson.h. */
bool
ddbjson_check_response(const DdbJson *body, DdbCheck *chk)
{
	const DdbJson *items = ddbjson_get(body, "Items");
	const DdbJson *lek = ddbjson_get(body, "LastEvaluatedKey");

	if (items != NULL && !check_items(items, "Items", NULL, chk))
		return false;
	if (!ddbjson_check_envelope(body, chk))
		return false;
	for (int i = 0; items != NULL && i < items->n; i++)
		if (!check_lek_after(items->elems, items->n, lek, i, chk))
			return false;
	return true;
}

/* ListTables' TableNames, an array of strings, and its LastEvaluatedTableName. */
static bool
check_table_names(const DdbJson *body, DdbCheck *chk)
{
	const DdbJson *names = ddbjson_get(body, "TableNames");
	const DdbJson *last = ddbjson_get(body, "LastEvaluatedTableName");

	if (names != NULL && names->kind != DJ_ARRAY)
		return check_envelope(chk, "TableNames", NULL, -1, "an array of table names", names);
	for (int i = 0; names != NULL && i < names->n; i++)
		if (names->elems[i].kind != DJ_STRING)
			return check_envelope(chk, "TableNames", NULL, i, "a table name",
								  &names->elems[i]);
	if (last != NULL && last->kind != DJ_STRING)
		return check_envelope(chk, "LastEvaluatedTableName", NULL, -1, "a table name", last);
	return true;
}

/* See ddbjson.h. */
bool
ddbjson_check_envelope(const DdbJson *body, DdbCheck *chk)
{
	const DdbJson *items = ddbjson_get(body, "Items");
	const DdbJson *lek = ddbjson_get(body, "LastEvaluatedKey");

	if (items != NULL && items->kind != DJ_ARRAY)
		return check_envelope(chk, "Items", NULL, -1, "an array of items", items);
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
		check_table_names(body, chk) &&
		check_capacity(body, chk);
}

/* See ddbjson.h. */
int
ddb_failed_action(const char *message)
{
	static const char failed[] = "ConditionalCheckFailed";
	const char *p = message ? strrchr(message, '[') : NULL;

	for (int i = 0; p != NULL && *p != ']' && *p != '\0'; i++)
	{
		p++;
		while (*p == ' ')
			p++;
		if (strncmp(p, failed, sizeof(failed) - 1) == 0 &&
			(p[sizeof(failed) - 1] == ',' || p[sizeof(failed) - 1] == ']'))
			return i;
		p += strcspn(p, ",]");
	}
	return -1;
}
