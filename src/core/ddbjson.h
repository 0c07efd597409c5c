/*-------------------------------------------------------------------------
 *
 * ddbjson.h
 *		DynamoDB's JSON wire format: a parser that turns a response body into
 *		a plain tree allocated in one arena (ddbjson.c), the checks of
 *		DynamoDB's shapes and its limits on such a tree (ddbshape.c), and
 *		a writer that builds request bodies byte for byte deterministically
 *		(ddbjson.c).
 *
 * AttributeValues ({"S": "x"}, {"N": "1.5"}, {"M": {...}}, ...) are left as
 * tree nodes; turning them into Datums is codec.c's business.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHARD_FDW_DDBJSON_H
#define SHARD_FDW_DDBJSON_H

#include "core/pure.h"

typedef enum DjKind
{
	DJ_NULL,
	DJ_BOOL,
	DJ_NUMBER,
	DJ_STRING,
	DJ_ARRAY,
	DJ_OBJECT,
	DJ_DEFERRED					/* an object not parsed yet: see
								 * ddbjson_parse_ex */
} DjKind;

/*
 * One JSON value.  Strings are NUL-terminated and carry their byte length
 * (they may contain NUL bytes).  A number keeps the text it was written
 * with in str.  An object's members keep their order: keys[i] names
 * elems[i].
 */
typedef struct DdbJson
{
	DjKind		kind;
	bool		boolean;
	char	   *str;
	size_t		len;
	int			n;
	char	  **keys;
	struct DdbJson *elems;
} DdbJson;

/*
 * The nesting ddbjson_parse accepts, the values inside the innermost
 * container counted as a level of their own: room for any response
 * DynamoDB sends, whose attribute values nest at most
 * DDB_MAX_NESTING levels of two JSON levels each under a few levels of
 * envelope, and for the json values that may be written as such.
 */
#define DDBJSON_MAX_DEPTH 128

/*
 * Parse len bytes of text.  On success returns a tree allocated with
 * sfdw_alloc in a few blocks, the text's strings and numbers in a copy of
 * it: the tree holds no pointer into text.  On malformed, truncated or
 * trailing-garbage input returns NULL and writes a one-line reason into
 * err.
 */
extern DdbJson *ddbjson_parse(const char *text, size_t len,
							  char *err, size_t errlen);

/*
 * Free a tree from ddbjson_parse (its root, not any node below it), for
 * hosts whose allocator does not free it with a memory context (the unit
 * tests, the fuzz targets); NULL is allowed.
 */
extern void ddbjson_free(DdbJson *root);

/*
 * ddbjson_parse that also says, through *too_deep, whether the text failed
 * for nesting deeper than DDBJSON_MAX_DEPTH: a fault that no second try
 * cures.
 *
 * When defer is not NULL and the text is an object, the objects in the
 * array that is its member named defer are not parsed: each is a
 * DJ_DEFERRED node whose str and len are its text in the tree's copy,
 * found by following strings and brackets only, and ddbjson_parse_deferred
 * parses it when it is needed.  A page of items that a query reads only
 * the first few of parses no more than those; a fault inside an object
 * is found when it is parsed, and one that is never parsed is never
 * found.
 */
extern DdbJson *ddbjson_parse_ex(const char *text, size_t len,
								 const char *defer, char *err, size_t errlen,
								 bool *too_deep);

/*
 * Parse the DJ_DEFERRED node of the tree root in place, into the tree's
 * arena, as ddbjson_parse would have (nothing happens to another node).
 * Returns false and writes the reason into err, its byte counted in the
 * whole text, when the object's text is no JSON object.
 */
extern bool ddbjson_parse_deferred(DdbJson *root, DdbJson *node,
								   char *err, size_t errlen);

/*
 * The byte offset of the first \u escape in JSON text that is half of a
 * UTF-16 surrogate pair with no other half, or -1.  ddbjson_parse reads
 * such an escape as U+FFFD, another character; DynamoDB never writes one.
 */
extern long ddbjson_lone_surrogate(const char *text, size_t len);

/* The member named key of an object, or NULL (also when obj is no object). */
extern DdbJson *ddbjson_get(const DdbJson *obj, const char *key);

/* A string member's text, or NULL. */
extern const char *ddbjson_get_string(const DdbJson *obj, const char *key);

/* A number member as a double, or 0 when absent. */
extern double ddbjson_get_number(const DdbJson *obj, const char *key);

/*
 * The double nearest to the JSON number text (len bytes, then a NUL, as
 * the parser leaves every number), as strtod reads it (which PostgreSQL
 * backends run with LC_NUMERIC "C"); short numbers without a call to it.
 */
extern double json_number_value(const char *text, size_t len);

/*
 * DynamoDB's shapes (ddbshape.c).
 *
 * An attribute value nests at most DDB_MAX_NESTING levels: a top-level
 * attribute is level 1 and every M or L opens the next level, so at most
 * DDB_MAX_NESTING - 1 of them nest in one another (DynamoDB refuses the
 * item otherwise).
 */
#define DDB_MAX_NESTING 32

/* Whether a text is a number DynamoDB holds, and if not, why. */
typedef enum DdbNumber
{
	DDB_NUMBER_OK,
	DDB_NUMBER_SYNTAX,			/* not a decimal number */
	DDB_NUMBER_DIGITS,			/* more than 38 significant digits */
	DDB_NUMBER_RANGE			/* magnitude outside 1E-130 .. 9.9..9E+125 */
} DdbNumber;

extern DdbNumber ddb_number_check(const char *text, size_t len);

/* DynamoDB's largest item: 400 KB, attribute names and values together. */
#define DDB_MAX_ITEM_BYTES (400 * 1024)

/*
 * DynamoDB's longest expression (UpdateExpression, ConditionExpression,
 * ProjectionExpression...): 4 KB, placeholders as written.
 */
#define DDB_MAX_EXPRESSION_BYTES 4096

/*
 * The size of item (an object of AttributeValues) as DynamoDB counts it
 * against DDB_MAX_ITEM_BYTES: each attribute's name in UTF-8 bytes plus
 * its value's bytes, binary values as their raw bytes (not base64), a
 * number by its significant digits, and containers with their overhead.
 */
extern size_t ddb_item_size(const DdbJson *item);

/*
 * The read units DynamoDB charges for requests reads of items items of
 * item_bytes each on average: a Query's or Scan's items (by_item false)
 * are charged by each request's bytes rounded up to 4 KB, one unit at
 * least; a GetItem's or BatchGetItem's (by_item true) item by item, each
 * rounded up, a key not found one unit too (items is then the keys asked).
 * A unit reads 4 KB strongly consistent, 8 KB eventually consistent.
 */
extern double ddb_read_units(double requests, double items, double item_bytes,
							 bool by_item, bool consistent);

/*
 * The index of the first action of a canceled TransactWriteItems whose
 * condition failed, read from DynamoDB's message, which lists a reason per
 * action ("... [None, ConditionalCheckFailed]"); -1 when none did, or the
 * message (NULL allowed) lists none.
 */
extern int	ddb_failed_action(const char *message);

/* Are len bytes of s well-formed UTF-8 (NUL bytes allowed)? */
extern bool ddb_utf8_valid(const char *s, size_t len);

/*
 * Append len bytes of s for a message: valid UTF-8 as is, control
 * characters, '"', '\' and bytes that are not UTF-8 escaped as \xNN.
 */
extern void ddb_append_printable(Buf *out, const char *s, size_t len);

/*
 * What a check of DynamoDB's shapes found wrong: the response member that
 * holds the fault ("Items[3]", "LastEvaluatedKey"), the item it lies in
 * (NULL when none) with the path of the attribute inside that item
 * ("doc.tags[2]"), and the reason.
 */
typedef struct DdbCheck
{
	const DdbJson *item;
	char		where[128];
	char		attribute[512];
	char		reason[256];
} DdbCheck;

/*
 * Is av a valid AttributeValue at nesting level level (1 for a top-level
 * attribute)?  On failure fills chk's attribute (relative to av) and
 * reason; chk's item and where are left alone.
 */
extern bool ddbjson_check_av(const DdbJson *av, int level, DdbCheck *chk);

/* Is item an object of valid attributes?  On failure fills chk. */
extern bool ddbjson_check_item(const DdbJson *item, DdbCheck *chk);

/*
 * Is items[index], of the n items of a response's Items, valid, and the
 * LastEvaluatedKey lek (or NULL) not its key unless it is the last?  The
 * check of one item that ddbjson_check_response makes of them all.
 */
extern bool ddbjson_check_page_item(const DdbJson *items, int n,
									const DdbJson *lek, int index,
									DdbCheck *chk);

/*
 * Are the members of a successful response that the extension reads
 * (Items, Item, Attributes, Count, ScannedCount, LastEvaluatedKey,
 * Responses, UnprocessedKeys, UnprocessedItems, ConsumedCapacity) of
 * DynamoDB's shapes, every item in them valid, and the LastEvaluatedKey
 * no key of an item before the last of Items?  On failure fills chk.
 */
extern bool ddbjson_check_response(const DdbJson *body, DdbCheck *chk);

/*
 * ddbjson_check_response but for the items of Items, left to whoever
 * reads them (ddbjson_check_page_item): a read that stops early checks no
 * more than it returns.
 */
extern bool ddbjson_check_envelope(const DdbJson *body, DdbCheck *chk);

/*
 * The writer: compact JSON, no spaces, members in the order written.
 * Commas are placed by the writer.  Nesting is limited to
 * JSONW_MAX_DEPTH levels.
 */
#define JSONW_MAX_DEPTH 128

typedef struct JsonWriter
{
	Buf		   *out;
	int			depth;
	bool		first[JSONW_MAX_DEPTH];
} JsonWriter;

extern void jw_init(JsonWriter *w, Buf *out);
extern void jw_begin_object(JsonWriter *w);
extern void jw_end_object(JsonWriter *w);
extern void jw_begin_array(JsonWriter *w);
extern void jw_end_array(JsonWriter *w);
extern void jw_key(JsonWriter *w, const char *key);
extern void jw_string(JsonWriter *w, const char *str, size_t len);
extern void jw_cstring(JsonWriter *w, const char *str);
extern void jw_raw(JsonWriter *w, const char *json);
extern void jw_bool(JsonWriter *w, bool value);
extern void jw_null(JsonWriter *w);
extern void jw_int(JsonWriter *w, long long value);

/* Write the JSON tree v (as parsed) back out. */
extern void jw_tree(JsonWriter *w, const DdbJson *v);

/*
 * The JSON text of tree v, as jw_tree writes it, NUL-terminated, its
 * length in *len when len is not NULL (allocated with sfdw_alloc).
 */
extern char *ddbjson_text(const DdbJson *v, size_t *len);

/*
 * Begin a DynamoDB request body in out (initialised here): the top-level
 * object (jw_begin_body), and its TableName member (jw_begin_request).
 */
extern void jw_begin_body(JsonWriter *w, Buf *out);
extern void jw_begin_request(JsonWriter *w, Buf *out, const char *table);

/*
 * End a DynamoDB request body begun with jw_begin_request (or
 * jw_begin_object): ask for the consumed capacity (reads and writes do, for
 * EXPLAIN ANALYZE and the counters), close the object, and return the text
 * with its length.
 */
extern char *jw_end_request(JsonWriter *w, size_t *len);

/*
 * End a request body begun with jw_begin_request without asking for the
 * consumed capacity (DescribeTable takes no ReturnConsumedCapacity; the
 * metadata and counting requests do not report it).  Returns the body,
 * with its length.
 */
extern char *jw_end_body(JsonWriter *w, size_t *len);

/*
 * The length of the JSON number (RFC 8259:
 * -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?) that s starts with, of at
 * most len bytes; 0 when s does not start with one.
 */
extern size_t json_number_length(const char *s, size_t len);

/* Append str as a quoted, escaped JSON string (used by jw_string). */
extern void json_escape(Buf *out, const char *str, size_t len);

/*
 * Base64 (RFC 4648, with padding) as DynamoDB uses for B values.  decode
 * returns false on bad input.  Both allocate the result with sfdw_alloc.
 */
extern char *base64_encode(const unsigned char *data, size_t len, size_t *outlen);
extern bool base64_decode(const char *text, size_t len,
						  unsigned char **out, size_t *outlen);

#endif							/* SHARD_FDW_DDBJSON_H */
