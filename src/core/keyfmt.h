/*-------------------------------------------------------------------------
 *
 * keyfmt.h
 *		Key templates: how a row's columns and its shard number become the
 *		text of a DynamoDB key attribute, and how a stored key is taken
 *		apart again.
 *
 * A template is literal text with fields.  {name} inserts the text of the
 * column "name", {shard} the shard number, and {name:0W} a non-negative
 * integer zero-padded to at least W digits, so that numbers sort as text
 * ({score:020}).  A date or timestamp column's field may name a time form:
 * {ts:isoformat} is the text Python's isoformat() writes, and {ts:month},
 * {ts:day}, {ts:hour} and {ts:minute} the time bucket the value falls in
 * (see KeyTimeForm).  {{ and }} stand for literal braces.  Two fields must be
 * separated by literal text, or a stored key could not be split back into
 * its fields, and that text must not begin with a digit after {shard}, a
 * 0W field or a time form, nor end with one before {shard} or a 0W field;
 * {shard} may appear once.  A column literally named "shard"
 * cannot be referenced.
 *
 * Plain C (see pure.h): memory comes from sfdw_alloc, and failures come
 * back as false or NULL with a one-line message in the caller's err buffer.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHARD_FDW_KEYFMT_H
#define SHARD_FDW_KEYFMT_H

#include "core/pure.h"

typedef enum KeyPartKind
{
	KP_LITERAL,
	KP_COLUMN,
	KP_SHARD
} KeyPartKind;

/*
 * The text a column field gives a date or timestamp.  Values come in as
 * the extension writes them (2023-10-27, 2023-10-27T14:03:05.123456 and,
 * in UTC, 2023-10-27T14:03:05.123456Z); a bucket is the UTC time the value
 * falls in, truncated, written as the time-series article's strftime
 * strings write it (a timestamp without time zone is taken as UTC).
 *
 *	KT_PLAIN		the value's own text (2023-10-27T14:03:05.123456Z)
 *	KT_ISOFORMAT	Python's isoformat(): 2023-10-27T14:03:05.123456+00:00,
 *					no fraction when it is zero (2023-10-27T14:03:05+00:00),
 *					no offset without a time zone, 2023-10-27 for a date
 *	KT_MONTH		%Y-%m				2023-10
 *	KT_DAY			%Y-%m-%d			2023-10-27
 *	KT_HOUR			%Y-%m-%dT%H:00:00Z	2023-10-27T14:00:00Z
 *	KT_MINUTE		%Y-%m-%dT%H:%M:00Z	2023-10-27T14:03:00Z
 *
 * A bucket (KT_MONTH and after) loses the finer digits, so a stored key
 * never gives its column's value back (keyfmt_decodes).
 */
typedef enum KeyTimeForm
{
	KT_PLAIN,
	KT_ISOFORMAT,
	KT_MONTH,
	KT_DAY,
	KT_HOUR,
	KT_MINUTE
} KeyTimeForm;

/*
 * One piece of a template.  text is the literal text (braces unescaped),
 * the column name, or "shard".  width is W of a {name:0W} or {shard:0W}
 * field, 0 when the field is not zero-padded (always 0 for literals).
 * form is the time form of a column field (KT_PLAIN for every other part).
 * Consecutive literal text is always one part.
 */
typedef struct KeyPart
{
	KeyPartKind kind;
	char	   *text;
	int			width;
	KeyTimeForm form;
} KeyPart;

typedef struct KeyTemplate
{
	int			nparts;
	KeyPart    *parts;
} KeyTemplate;

/* Where one part of a template lies in a stored key: key[start..start+len). */
typedef struct KeySpan
{
	size_t		start;
	size_t		len;
} KeySpan;

/* The largest W accepted in a {name:0W} field. */
#define KEYFMT_MAX_WIDTH 1024

/*
 * Parse a template.  Returns it allocated with sfdw_alloc (release it with
 * keyfmt_free), or NULL with a message in err when the template is empty,
 * has an unmatched or stray brace, a field with an empty name, a format
 * other than 0W or a time form (only 0W on {shard}) or a width outside
 * 1..KEYFMT_MAX_WIDTH,
 * two fields with no literal text between them, or {shard} more than once.
 */
extern KeyTemplate *keyfmt_parse(const char *text, char *err, size_t errlen);

/* Release a template from keyfmt_parse; NULL is allowed. */
extern void keyfmt_free(KeyTemplate *t);

/*
 * Render a key and append it to out.  values[i] is the text of part i when
 * that part is a KP_COLUMN (other entries are ignored and may be NULL;
 * values itself may be NULL for a template without columns); shard is the
 * number rendered for KP_SHARD.  Returns false with a message in err,
 * leaving out as it was, when a column's value is NULL or empty, when the
 * value of a 0W field is not a non-negative integer (digits, and optionally
 * a fraction of zeros only: "12.00" renders as 12), when the value of a
 * time form is not a date or a timestamp (YYYY-MM-DD, optionally followed
 * by THH:MM:SS, a fraction of up to six digits and Z or +00:00), or when a
 * {shard} field is given a negative shard.
 */
extern bool keyfmt_render(const KeyTemplate *t, const char *const *values,
						  long shard, Buf *out, char *err, size_t errlen);

/*
 * Render the text of column field p (a KP_COLUMN part) for value and append
 * it to out, as keyfmt_render would; the same errors.  For the bounds of
 * key conditions on a field.
 */
extern bool keyfmt_render_field(const KeyPart *p, const char *value, Buf *out,
								char *err, size_t errlen);

/*
 * Render the base key, the key a row would have without sharding, and
 * append it to out: the {shard} field and the literal part just before it
 * are left out (game_X#3 -> game_X; /shared/f.txt_2 -> /shared/f.txt;
 * {base}#_{shard} -> base).  When that literal is the template's first
 * part it is kept (album#{shard} -> "album#"); when {shard} itself comes
 * first, the literal just after it is left out instead ({shard}#{g} -> g),
 * unless it is the last part.  Without a {shard} field the base key is the
 * whole key.  A base key is never empty: for a template that is only
 * {shard}, returns false.  Otherwise the same errors as keyfmt_render.
 */
extern bool keyfmt_render_base(const KeyTemplate *t, const char *const *values,
							   Buf *out, char *err, size_t errlen);

/*
 * Render the longest prefix that every key whose first nknown fields have
 * the given values starts with, and append it to out (for begins_with and
 * for the bounds of key conditions).  values is indexed by part, as for
 * keyfmt_render.  Rendering stops at the first field that is not among the
 * first nknown fields, and at {shard}, whose value is never known here; the
 * literal text up to that field is included.  nknown = 0 gives the fixed
 * literal prefix ("album#" for album#{shard}, "" for {game_id}#{shard});
 * nknown = 1 on {score:020}#{player_id} gives "00000000000000000042#".
 * Same errors as keyfmt_render for the values used.
 */
extern bool keyfmt_render_prefix(const KeyTemplate *t, const char *const *values,
								 int nknown, Buf *out, char *err, size_t errlen);

/*
 * Split a stored key of keylen bytes (no NUL needed) into the template's
 * parts.  Returns true and fills spans[i] (spans has t->nparts entries) for
 * every part when the key matches; then *shard, when shard is not NULL,
 * gets the shard number, or -1 when the template has no {shard}.  Returns
 * false when the key does not match, leaving *shard alone and spans
 * undefined.  A key holding a NUL byte matches no template: rendering
 * takes column texts as C strings, so no rendered key holds one.
 *
 * Literals must match exactly; {shard} and 0W fields match one or more
 * ASCII digits ({shard} at most 18, or W of {shard:0W} with zeros before
 * the last 18), buckets their shape (2023-10-27T14:00:00Z for an hour),
 * isoformat fields a date or timestamp in any ISO-8601 form PostgreSQL
 * reads (a fraction of up to nine digits, Z or any +HH:MM or -HH:MM
 * offset), other fields one or more bytes.  When
 * several splits match, the earliest field takes the shortest span that
 * lets the rest match: "a#b#3" on {g}#{shard} gives g = "a#b", shard = 3.
 * A split whose 0W fields are all W digits wide or wider, as rendering
 * writes them, comes before any other: "x#3#05#y" on {a}#{b:02}#{c} gives
 * a = "x#3", b = "05", c = "y"; a legacy key with fewer digits ("x#3#y")
 * still decodes.
 */
extern bool keyfmt_decode(const KeyTemplate *t, const char *key, size_t keylen,
						  KeySpan *spans, long *shard);

/*
 * The text of part number "part" of a decoded key, as a new NUL-terminated
 * string from sfdw_alloc.  A 0W field loses its zero padding ("0042" -> "42",
 * "0000" -> "0").
 */
extern char *keyfmt_field_text(const KeyTemplate *t, int part, const char *key,
							   const KeySpan *span);

/*
 * True when the text of part p of a decoded key gives its column's value
 * back: a column field that is not a time bucket.
 */
extern bool keyfmt_decodes(const KeyPart *p);

/* True when part p is a column field holding a time bucket. */
extern bool keyfmt_is_bucket(const KeyPart *p);

/*
 * The finest time bucket of column "column" in the template (KT_MINUTE is
 * finer than KT_HOUR, ... than KT_MONTH), or KT_PLAIN when no bucket field
 * holds it.
 */
extern KeyTimeForm keyfmt_finest_bucket(const KeyTemplate *t, const char *column);

/*
 * Time buckets as instants, in microseconds since 2000-01-01 00:00 UTC
 * (PostgreSQL's epoch): the start of the bucket of form (KT_MONTH ...
 * KT_MINUTE) that holds usecs, and the start of the bucket after the one
 * starting at start.
 */
extern int64_t keyfmt_bucket_start(KeyTimeForm form, int64_t usecs);

/* The name of a time form as a field's format spells it ("hour"). */
extern const char *keyfmt_time_form_name(KeyTimeForm form);
extern int64_t keyfmt_bucket_next(KeyTimeForm form, int64_t start);

/* The number of fields (columns and {shard}) of the template. */
extern int	keyfmt_field_count(const KeyTemplate *t);

/*
 * The number of leading fields known: column fields whose values (indexed
 * by part, as for keyfmt_render) are not NULL, counted up to the first
 * unknown one or {shard}, whose value is never known here.  As many
 * fields as keyfmt_render_prefix can render.
 */
extern int	keyfmt_known_fields(const KeyTemplate *t, const char *const *values);

/* The column the template starts with, or NULL when it starts otherwise. */
extern const char *keyfmt_leading_column(const KeyTemplate *t);

#endif							/* SHARD_FDW_KEYFMT_H */
