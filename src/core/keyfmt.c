/*-------------------------------------------------------------------------
 *
 * keyfmt.c
 *		Key templates: parsing, rendering keys, base keys and prefixes, and
 *		decoding stored keys back into column values.
 *
 * Decoding is a backtracking match of the key against the template's parts.
 * Each field tries its spans shortest first, so the earliest field gets the
 * shortest span that lets the rest match; a (part, position) pair that has
 * failed once is remembered, which keeps the search polynomial however many
 * times the separators recur in the key.
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <string.h>

#include "core/keyfmt.h"

/*
 * {shard} spans hold at most this many significant digits, so that they
 * fit a long; a wider {shard:0W} has zeros before them.
 */
#define SHARD_MAX_DIGITS 18

/* The longest date or timestamp an isoformat field matches in a key. */
#define ISO_MAX_LEN 40

/* The names of the time forms in a field's format, by KeyTimeForm. */
static const char *const time_form_names[] = {
	NULL, "isoformat", "month", "day", "hour", "minute"
};

/*
 * The shape of each bucket's text, by KeyTimeForm: D stands for a digit,
 * every other character for itself.
 */
static const char *const bucket_shapes[] = {
	NULL, NULL, "DDDD-DD", "DDDD-DD-DD", "DDDD-DD-DDTDD:00:00Z", "DDDD-DD-DDTDD:DD:00Z"
};

/* True when c is an ASCII digit (isdigit would depend on the locale). */
static bool
is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Append a part to t, whose parts array has room for *cap parts. */
static void
add_part(KeyTemplate *t, int *cap, KeyPartKind kind,
		 const char *text, size_t len, int width)
{
	KeyPart    *p;

	if (t->nparts == *cap)
	{
		*cap *= 2;
		t->parts = sfdw_realloc(t->parts, *cap * sizeof(KeyPart));
	}
	p = &t->parts[t->nparts++];
	p->kind = kind;
	p->text = sfdw_strndup(text, len);
	p->width = width;
	p->form = KT_PLAIN;
}

/*
 * Parse the format of a field named name: "0" followed by the width W, or
 * (not on {shard}) the name of a time form.  Returns false with a message
 * in err when the format is anything else or W is out of range.
 */
static bool
parse_format(const char *name, bool shard, const char *spec, size_t speclen,
			 int *width, KeyTimeForm *form, char *err, size_t errlen)
{
	size_t		i;
	int			w = 0;

	for (int f = KT_ISOFORMAT; f <= KT_MINUTE && !shard; f++)
	{
		if (strlen(time_form_names[f]) == speclen &&
			memcmp(time_form_names[f], spec, speclen) == 0)
		{
			*form = (KeyTimeForm) f;
			return true;
		}
	}
	if (speclen < 2 || spec[0] != '0')
		goto bad;
	for (i = 1; i < speclen; i++)
	{
		if (!is_digit(spec[i]))
			goto bad;
		if (w <= KEYFMT_MAX_WIDTH)
			w = w * 10 + (spec[i] - '0');
	}
	if (w < 1 || w > KEYFMT_MAX_WIDTH)
	{
		sfdw_set_error(err, errlen, "width of field \"%s\" must be between 1 and %d",
				name, KEYFMT_MAX_WIDTH);
		return false;
	}
	*width = w;
	return true;

bad:
	if (shard)
		sfdw_set_error(err, errlen,
				"field \"%s\" has unsupported format \"%.*s\" (only 0W, zero padding to width W, is supported)",
				name, (int) speclen, spec);
	else
		sfdw_set_error(err, errlen,
				"field \"%s\" has unsupported format \"%.*s\" (0W, zero padding to width W, isoformat, month, day, hour and minute are supported)",
				name, (int) speclen, spec);
	return false;
}

/*
 * Parse the field whose "{" is at text[open] and append it to t.  On
 * success *next is the position just after its "}".
 */
static bool
parse_field(KeyTemplate *t, int *cap, bool *seen_shard, const char *text,
			size_t open, size_t *next, char *err, size_t errlen)
{
	size_t		close;
	size_t		namelen = 0;
	bool		has_spec = false;
	char	   *name;
	KeyPartKind kind;
	int			width = 0;
	KeyTimeForm form = KT_PLAIN;
	bool		ok = true;

	for (close = open + 1; text[close] != '}'; close++)
	{
		if (text[close] == '\0')
		{
			sfdw_set_error(err, errlen, "unmatched \"{\" at position %zu", open + 1);
			return false;
		}
		if (text[close] == '{')
		{
			sfdw_set_error(err, errlen, "unexpected \"{\" inside the field at position %zu",
					open + 1);
			return false;
		}
		if (text[close] == ':' && !has_spec)
		{
			has_spec = true;
			namelen = close - (open + 1);
		}
	}
	if (!has_spec)
		namelen = close - (open + 1);
	if (namelen == 0)
	{
		sfdw_set_error(err, errlen, "field at position %zu has an empty name", open + 1);
		return false;
	}

	name = sfdw_strndup(text + open + 1, namelen);
	kind = strcmp(name, "shard") == 0 ? KP_SHARD : KP_COLUMN;
	if (has_spec)
	{
		const char *spec = text + open + 1 + namelen + 1;

		ok = parse_format(name, kind == KP_SHARD, spec, close - (size_t) (spec - text),
						  &width, &form, err, errlen);
	}
	if (ok && t->nparts > 0 && t->parts[t->nparts - 1].kind != KP_LITERAL)
	{
		sfdw_set_error(err, errlen,
				"fields \"%s\" and \"%s\" must be separated by literal text",
				t->parts[t->nparts - 1].text, name);
		ok = false;
	}
	if (ok && (kind == KP_SHARD || width > 0) && t->nparts > 0)
	{
		const char *before = t->parts[t->nparts - 1].text;

		if (is_digit(before[strlen(before) - 1]))
		{
			sfdw_set_error(err, errlen,
					"the text before field \"%s\" must not end with a digit", name);
			ok = false;
		}
	}
	if (ok && kind == KP_SHARD && *seen_shard)
	{
		sfdw_set_error(err, errlen, "field \"shard\" appears more than once");
		ok = false;
	}
	if (ok)
	{
		if (kind == KP_SHARD)
			*seen_shard = true;
		add_part(t, cap, kind, name, namelen, width);
		t->parts[t->nparts - 1].form = form;
	}
	sfdw_free(name);
	*next = close + 1;
	return ok;
}

/*
 * Add the literal text collected in lit as the next part and empty lit.
 * Fails when it begins with a digit right after a field that may end with
 * digits of a varying count ({shard}, 0W, or a time form, whose fraction
 * isoformat() writes only when it is not zero): the field's digits and the
 * literal's would run together and the key could not be split back
 * (parse_field checks the text before a digits-only field the same way).
 */
static bool
add_literal(KeyTemplate *t, int *cap, Buf *lit, char *err, size_t errlen)
{
	const KeyPart *prev = t->nparts > 0 ? &t->parts[t->nparts - 1] : NULL;

	if (prev != NULL &&
		(prev->kind == KP_SHARD || prev->width > 0 || prev->form != KT_PLAIN) &&
		is_digit(lit->data[0]))
	{
		sfdw_set_error(err, errlen,
				"the text after field \"%s\" must not begin with a digit",
				prev->text);
		return false;
	}
	add_part(t, cap, KP_LITERAL, lit->data, lit->len, 0);
	buf_reset(lit);
	return true;
}

/*
 * Parse a template; see keyfmt.h for the syntax and the errors.
 */
KeyTemplate *
keyfmt_parse(const char *text, char *err, size_t errlen)
{
	KeyTemplate *t = sfdw_alloc(sizeof(KeyTemplate));
	int			cap = 8;
	bool		seen_shard = false;
	Buf			lit;
	size_t		i = 0;

	t->parts = sfdw_alloc(cap * sizeof(KeyPart));
	buf_init(&lit);
	while (text[i] != '\0')
	{
		if ((text[i] == '{' && text[i + 1] == '{') ||
			(text[i] == '}' && text[i + 1] == '}'))
		{
			buf_putc(&lit, text[i]);
			i += 2;
		}
		else if (text[i] == '}')
		{
			sfdw_set_error(err, errlen, "unmatched \"}\" at position %zu", i + 1);
			goto fail;
		}
		else if (text[i] == '{')
		{
			if (lit.len > 0 && !add_literal(t, &cap, &lit, err, errlen))
				goto fail;
			if (!parse_field(t, &cap, &seen_shard, text, i, &i, err, errlen))
				goto fail;
		}
		else
			buf_putc(&lit, text[i++]);
	}
	if (lit.len > 0 && !add_literal(t, &cap, &lit, err, errlen))
		goto fail;
	sfdw_free(lit.data);
	if (t->nparts == 0)
	{
		sfdw_set_error(err, errlen, "template is empty");
		keyfmt_free(t);
		return NULL;
	}
	return t;

fail:
	sfdw_free(lit.data);
	keyfmt_free(t);
	return NULL;
}

/*
 * Release a template.
 */
void
keyfmt_free(KeyTemplate *t)
{
	int			i;

	if (t == NULL)
		return;
	for (i = 0; i < t->nparts; i++)
		sfdw_free(t->parts[i].text);
	sfdw_free(t->parts);
	sfdw_free(t);
}

/*
 * Check that value is a non-negative integer: digits, optionally followed
 * by "." and zeros.  On success *digits and *ndigits give its digits
 * without leading zeros ("0" for zero).
 */
static bool
integer_digits(const char *value, const char **digits, size_t *ndigits)
{
	size_t		n = 0;
	size_t		k;

	while (is_digit(value[n]))
		n++;
	if (n == 0)
		return false;
	if (value[n] == '.')
	{
		k = n + 1;
		if (value[k] != '0')
			return false;
		while (value[k] == '0')
			k++;
		if (value[k] != '\0')
			return false;
	}
	else if (value[n] != '\0')
		return false;

	while (n > 1 && *value == '0')
	{
		value++;
		n--;
	}
	*digits = value;
	*ndigits = n;
	return true;
}

/*
 * True when text starts with shape (see bucket_shapes); text is
 * NUL-terminated, or at least as long as shape.
 */
static bool
has_shape(const char *text, const char *shape)
{
	for (; *shape != '\0'; shape++, text++)
	{
		if (*shape == 'D' ? !is_digit(*text) : *text != *shape)
			return false;
	}
	return true;
}

/* A date or timestamp value taken apart (see time_value). */
typedef struct TimeValue
{
	const char *date;			/* YYYY-MM-DD: 10 bytes */
	const char *hms;			/* HH:MM:SS: 8 bytes; NULL for a date */
	char		frac[7];		/* six digits, or "" without a fraction */
	bool		utc;			/* it ended with Z or +00:00 */
} TimeValue;

/*
 * Take value apart as a date or a timestamp: YYYY-MM-DD, optionally
 * followed by THH:MM:SS, a fraction of one to six digits, and Z or +00:00.
 * Returns false when it is not of that form.
 */
static bool
time_value(const char *value, TimeValue *tv)
{
	const char *p = value + 10;
	size_t		n = 0;

	memset(tv, 0, sizeof(*tv));
	if (!has_shape(value, "DDDD-DD-DD"))
		return false;
	tv->date = value;
	if (*p == '\0')
		return true;
	if (!has_shape(p, "TDD:DD:DD"))
		return false;
	tv->hms = p + 1;
	p += 9;
	if (*p == '.')
	{
		for (p++; is_digit(p[n]) && n < 6; n++)
			tv->frac[n] = p[n];
		if (n == 0)
			return false;
		p += n;
		for (; n < 6; n++)
			tv->frac[n] = '0';
	}
	tv->utc = strcmp(p, "Z") == 0 || strcmp(p, "+00:00") == 0;
	return tv->utc || *p == '\0';
}

/*
 * Append the text of time form p->form of value to out; see KeyTimeForm.
 */
static bool
render_time(const KeyPart *p, const char *value, Buf *out, char *err, size_t errlen)
{
	TimeValue	tv;

	if (!time_value(value, &tv))
	{
		sfdw_set_error(err, errlen,
				"value \"%s\" of field \"%s\" is not a date or timestamp",
				value, p->text);
		return false;
	}
	switch (p->form)
	{
		case KT_PLAIN:			/* not called for it (render_part) */
		case KT_ISOFORMAT:
			buf_append(out, tv.date, 10);
			if (tv.hms == NULL)
				break;
			buf_putc(out, 'T');
			buf_append(out, tv.hms, 8);
			if (tv.frac[0] != '\0' && strcmp(tv.frac, "000000") != 0)
			{
				buf_putc(out, '.');
				buf_puts(out, tv.frac);
			}
			if (tv.utc)
				buf_puts(out, "+00:00");
			break;
		case KT_MONTH:
			buf_append(out, tv.date, 7);
			break;
		case KT_DAY:
			buf_append(out, tv.date, 10);
			break;
		case KT_HOUR:
		case KT_MINUTE:
			{
				/* HH or HH:MM kept, the rest of ":00:00Z" after it */
				size_t		kept = p->form == KT_HOUR ? 2 : 5;

				buf_append(out, tv.date, 10);
				buf_putc(out, 'T');
				buf_append(out, tv.hms ? tv.hms : "00:00", kept);
				buf_puts(out, &":00:00Z"[kept - 2]);
			}
			break;
	}
	return true;
}

/*
 * Append part p to out, with value the column text of a KP_COLUMN part and
 * shard the number of a KP_SHARD part.
 */
static bool
render_part(const KeyPart *p, const char *value, long shard, Buf *out,
			char *err, size_t errlen)
{
	char		num[32];
	const char *digits;
	size_t		ndigits;
	size_t		k;

	if (p->kind == KP_LITERAL)
	{
		buf_puts(out, p->text);
		return true;
	}
	if (p->kind == KP_SHARD)
	{
		if (shard < 0)
		{
			sfdw_set_error(err, errlen, "shard number %ld is negative", shard);
			return false;
		}
		snprintf(num, sizeof(num), "%ld", shard);
		digits = num;
		ndigits = strlen(num);
	}
	else
	{
		if (value == NULL)
		{
			sfdw_set_error(err, errlen, "field \"%s\" has no value", p->text);
			return false;
		}
		if (value[0] == '\0')
		{
			sfdw_set_error(err, errlen, "value of field \"%s\" is empty", p->text);
			return false;
		}
		if (p->form != KT_PLAIN)
			return render_time(p, value, out, err, errlen);
		if (p->width == 0)
		{
			buf_puts(out, value);
			return true;
		}
		if (!integer_digits(value, &digits, &ndigits))
		{
			sfdw_set_error(err, errlen,
					"value \"%s\" of field \"%s\" is not a non-negative integer",
					value, p->text);
			return false;
		}
	}
	for (k = ndigits; k < (size_t) p->width; k++)
		buf_putc(out, '0');
	buf_append(out, digits, ndigits);
	return true;
}

/*
 * Render column field p for value; see keyfmt.h.
 */
bool
keyfmt_render_field(const KeyPart *p, const char *value, Buf *out,
					char *err, size_t errlen)
{
	size_t		start = out->len;

	if (render_part(p, value, 0, out, err, errlen))
		return true;
	out->len = start;
	out->data[start] = '\0';
	return false;
}

/*
 * Append parts 0..stop-1 of t to out, leaving out parts skip1 and skip2
 * (-1 for none).  On failure out is restored to what it was.
 */
static bool
render_parts(const KeyTemplate *t, const char *const *values, long shard,
			 int stop, int skip1, int skip2, Buf *out, char *err, size_t errlen)
{
	size_t		start = out->len;
	int			i;

	for (i = 0; i < stop; i++)
	{
		if (i == skip1 || i == skip2)
			continue;
		if (!render_part(&t->parts[i], values ? values[i] : NULL, shard,
						 out, err, errlen))
		{
			out->len = start;
			out->data[start] = '\0';
			return false;
		}
	}
	return true;
}

/* The index of the {shard} part of t, or -1. */
static int
shard_part(const KeyTemplate *t)
{
	int			i;

	for (i = 0; i < t->nparts; i++)
		if (t->parts[i].kind == KP_SHARD)
			return i;
	return -1;
}

/*
 * Render a key; see keyfmt.h.
 */
bool
keyfmt_render(const KeyTemplate *t, const char *const *values, long shard,
			  Buf *out, char *err, size_t errlen)
{
	return render_parts(t, values, shard, t->nparts, -1, -1, out, err, errlen);
}

/*
 * Render the base key; see keyfmt.h for which parts are left out.
 */
bool
keyfmt_render_base(const KeyTemplate *t, const char *const *values,
				   Buf *out, char *err, size_t errlen)
{
	int			s = shard_part(t);
	int			skip2 = -1;

	if (s >= 0 && t->nparts == 1)
	{
		sfdw_set_error(err, errlen,
				"template has nothing but the field \"shard\", so keys have no base key");
		return false;
	}
	if (s >= 2)
		skip2 = s - 1;
	else if (s == 0 && t->nparts > 2)
		skip2 = 1;
	return render_parts(t, values, 0, t->nparts, s, skip2, out, err, errlen);
}

/*
 * Render the prefix shared by every key whose first nknown fields are
 * known; see keyfmt.h.
 */
bool
keyfmt_render_prefix(const KeyTemplate *t, const char *const *values,
					 int nknown, Buf *out, char *err, size_t errlen)
{
	int			stop;
	int			nfields = 0;

	for (stop = 0; stop < t->nparts; stop++)
	{
		const KeyPart *p = &t->parts[stop];

		if (p->kind == KP_LITERAL)
			continue;
		if (p->kind == KP_SHARD || nfields >= nknown)
			break;
		nfields++;
	}
	return render_parts(t, values, 0, stop, -1, -1, out, err, errlen);
}

/* The state of one keyfmt_decode call. */
typedef struct Matcher
{
	const KeyTemplate *t;
	const char *key;
	size_t		keylen;
	KeySpan    *spans;
	bool		padded;			/* 0W fields take W digits at least */
	unsigned char *failed;		/* [part * (keylen + 1) + pos]: no match */
} Matcher;

/*
 * True when text[0..len) is a date or timestamp in an ISO-8601 form:
 * YYYY-MM-DD, optionally followed by THH:MM:SS, a fraction of one to nine
 * digits, and Z or an offset +HH:MM or -HH:MM.
 */
static bool
iso_text(const char *text, size_t len)
{
	size_t		i = 19;
	size_t		digits = 0;

	if (len < 10 || !has_shape(text, "DDDD-DD-DD"))
		return false;
	if (len == 10)
		return true;
	if (len < 19 || !has_shape(text + 10, "TDD:DD:DD"))
		return false;
	if (i < len && text[i] == '.')
	{
		for (i++; i < len && is_digit(text[i]) && digits < 9; i++)
			digits++;
		if (digits == 0)
			return false;
	}
	if (i == len)
		return true;
	if (text[i] == 'Z')
		return i + 1 == len;
	return (text[i] == '+' || text[i] == '-') && i + 6 == len &&
		has_shape(text + i + 1, "DD:DD");
}

/*
 * Match parts part.. of the template against key[pos..], filling their
 * spans.  Fields try their shortest span first.
 */
static bool
match_from(Matcher *m, int part, size_t pos)
{
	const KeyPart *p;
	size_t		memo;

	if (part == m->t->nparts)
		return pos == m->keylen;
	memo = (size_t) part * (m->keylen + 1) + pos;
	if (m->failed[memo])
		return false;

	p = &m->t->parts[part];
	m->spans[part].start = pos;
	if (p->kind == KP_LITERAL)
	{
		size_t		len = strlen(p->text);

		m->spans[part].len = len;
		if (len <= m->keylen - pos &&
			memcmp(m->key + pos, p->text, len) == 0 &&
			match_from(m, part + 1, pos + len))
			return true;
	}
	else if (keyfmt_is_bucket(p))
	{
		const char *shape = bucket_shapes[p->form];
		size_t		len = strlen(shape);

		m->spans[part].len = len;
		if (len <= m->keylen - pos && has_shape(m->key + pos, shape) &&
			match_from(m, part + 1, pos + len))
			return true;
	}
	else
	{
		bool		digits_only = p->kind == KP_SHARD || p->width > 0;
		size_t		maxlen = m->keylen - pos;
		size_t		len;

		if (p->kind == KP_SHARD)
		{
			size_t		widest = p->width > SHARD_MAX_DIGITS ?
				(size_t) p->width : SHARD_MAX_DIGITS;

			if (maxlen > widest)
				maxlen = widest;
		}
		for (len = 1; len <= maxlen; len++)
		{
			if (digits_only && !is_digit(m->key[pos + len - 1]))
				break;
			/* a {shard:0W} wider than a long holds: only zeros before */
			if (p->kind == KP_SHARD && len > SHARD_MAX_DIGITS &&
				m->key[pos + len - 1 - SHARD_MAX_DIGITS] != '0')
				break;
			if (p->form == KT_ISOFORMAT && len > ISO_MAX_LEN)
				break;
			if (p->form == KT_ISOFORMAT && !iso_text(m->key + pos, len))
				continue;
			if (m->padded && len < (size_t) p->width)
				continue;
			m->spans[part].len = len;
			if (match_from(m, part + 1, pos + len))
				return true;
		}
	}
	m->failed[memo] = 1;
	return false;
}

/*
 * Split a stored key into the template's parts; see keyfmt.h.
 */
bool
keyfmt_decode(const KeyTemplate *t, const char *key, size_t keylen,
			  KeySpan *spans, long *shard)
{
	Matcher		m;
	bool		ok;
	int			s;

	if (memchr(key, '\0', keylen) != NULL)
		return false;
	m.t = t;
	m.key = key;
	m.keylen = keylen;
	m.spans = spans;
	m.failed = sfdw_alloc((size_t) t->nparts * (keylen + 1));

	/*
	 * A key the template rendered has every 0W field W digits wide: such a
	 * reading comes first.  Only a key that has none (a legacy key written
	 * with fewer digits) is read with narrower ones.
	 */
	m.padded = true;
	ok = match_from(&m, 0, 0);
	if (!ok)
	{
		m.padded = false;
		memset(m.failed, 0, (size_t) t->nparts * (keylen + 1));
		ok = match_from(&m, 0, 0);
	}
	sfdw_free(m.failed);
	if (!ok)
		return false;

	if (shard != NULL)
	{
		s = shard_part(t);
		*shard = -1;
		if (s >= 0)
		{
			size_t		k;

			*shard = 0;
			for (k = 0; k < spans[s].len; k++)
				*shard = *shard * 10 + (key[spans[s].start + k] - '0');
		}
	}
	return true;
}

/*
 * The text of one part of a decoded key, zero padding removed from 0W
 * fields; allocated with sfdw_alloc.
 */
char *
keyfmt_field_text(const KeyTemplate *t, int part, const char *key,
				  const KeySpan *span)
{
	const char *text = key + span->start;
	size_t		len = span->len;

	if (t->parts[part].width > 0)
	{
		while (len > 1 && *text == '0')
		{
			text++;
			len--;
		}
	}
	return sfdw_strndup(text, len);
}

/*
 * True when part p of a decoded key gives its column's value back.
 */
bool
keyfmt_decodes(const KeyPart *p)
{
	return p->kind == KP_COLUMN && p->form < KT_MONTH;
}

/*
 * True when part p is a time bucket.
 */
bool
keyfmt_is_bucket(const KeyPart *p)
{
	return p->kind == KP_COLUMN && p->form >= KT_MONTH;
}

/*
 * The finest bucket of column "column" in t, or KT_PLAIN.
 */
KeyTimeForm
keyfmt_finest_bucket(const KeyTemplate *t, const char *column)
{
	KeyTimeForm finest = KT_PLAIN;

	for (int i = 0; i < t->nparts; i++)
		if (keyfmt_is_bucket(&t->parts[i]) && strcmp(t->parts[i].text, column) == 0 &&
			t->parts[i].form > finest)
			finest = t->parts[i].form;
	return finest;
}

/*
 * The name of a time form.
 */
const char *
keyfmt_time_form_name(KeyTimeForm form)
{
	return form == KT_PLAIN ? "plain" : time_form_names[form];
}

#define USECS_PER_MINUTE_ ((int64_t) 60 * 1000000)
#define USECS_PER_HOUR_ (60 * USECS_PER_MINUTE_)
#define USECS_PER_DAY_ (24 * USECS_PER_HOUR_)
/* Days from 1970-01-01 to 2000-01-01. */
#define EPOCH_2000_DAYS 10957

/* a / b rounded towards minus infinity, for b > 0. */
static int64_t
floor_div(int64_t a, int64_t b)
{
	return a / b - (a % b < 0);
}

/*
 * Days since 1970-01-01 of year-month-day in the proleptic Gregorian
 * calendar, and back (H. Hinnant's civil calendar algorithms).
 */
static int64_t
days_from_civil(int64_t y, int m, int d)
{
	int64_t		era;
	int64_t		yoe;
	int64_t		doy;

	y -= m <= 2;
	era = floor_div(y, 400);
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	return era * 146097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719468;
}

static void
civil_from_days(int64_t z, int64_t *y, int *m)
{
	int64_t		era;
	int64_t		doe;
	int64_t		yoe;
	int64_t		doy;
	int64_t		mp;

	z += 719468;
	era = floor_div(z, 146097);
	doe = z - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	*m = (int) (mp < 10 ? mp + 3 : mp - 9);
	*y = yoe + era * 400 + (*m <= 2);
}

/* The length of a bucket of form in microseconds; 0 for months. */
static int64_t
bucket_usecs(KeyTimeForm form)
{
	switch (form)
	{
		case KT_MINUTE:
			return USECS_PER_MINUTE_;
		case KT_HOUR:
			return USECS_PER_HOUR_;
		case KT_DAY:
			return USECS_PER_DAY_;
		case KT_PLAIN:
		case KT_ISOFORMAT:
		case KT_MONTH:
			break;
	}
	return 0;
}

/*
 * The start of the month that holds usecs, or of the one after it when
 * next.
 */
static int64_t
month_start(int64_t usecs, bool next)
{
	int64_t		y;
	int			m;

	civil_from_days(floor_div(usecs, USECS_PER_DAY_) + EPOCH_2000_DAYS, &y, &m);
	if (next && m == 12)
	{
		y++;
		m = 1;
	}
	else if (next)
		m++;
	return (days_from_civil(y, m, 1) - EPOCH_2000_DAYS) * USECS_PER_DAY_;
}

/*
 * The start of the bucket holding usecs.
 */
int64_t
keyfmt_bucket_start(KeyTimeForm form, int64_t usecs)
{
	int64_t		len = bucket_usecs(form);

	return len > 0 ? floor_div(usecs, len) * len : month_start(usecs, false);
}

/*
 * The start of the bucket after the one starting at start.
 */
int64_t
keyfmt_bucket_next(KeyTimeForm form, int64_t start)
{
	int64_t		len = bucket_usecs(form);

	return len > 0 ? start + len : month_start(start, true);
}

/*
 * The column leading the template, or NULL.
 */
const char *
keyfmt_leading_column(const KeyTemplate *t)
{
	if (t->nparts > 0 && t->parts[0].kind == KP_COLUMN)
		return t->parts[0].text;
	return NULL;
}

/*
 * The number of fields (columns and {shard}) of the template.
 */
int
keyfmt_field_count(const KeyTemplate *t)
{
	int			n = 0;

	for (int i = 0; i < t->nparts; i++)
		if (t->parts[i].kind != KP_LITERAL)
			n++;
	return n;
}

/*
 * The number of leading column fields whose values are known.
 */
int
keyfmt_known_fields(const KeyTemplate *t, const char *const *values)
{
	int			n = 0;

	for (int i = 0; i < t->nparts; i++)
	{
		if (t->parts[i].kind == KP_LITERAL)
			continue;
		if (t->parts[i].kind == KP_SHARD || values[i] == NULL)
			break;
		n++;
	}
	return n;
}
