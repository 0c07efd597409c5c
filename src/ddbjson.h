/*-------------------------------------------------------------------------
 *
 * ddbjson.h
 *		DynamoDB's JSON wire format: a parser that turns a response body into
 *		a plain tree (json-c is used inside ddbjson.c only), and a writer
 *		that builds request bodies byte for byte deterministically.
 *
 * AttributeValues ({"S": "x"}, {"N": "1.5"}, {"M": {...}}, ...) are left as
 * tree nodes; turning them into Datums is codec.c's business.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHARD_FDW_DDBJSON_H
#define SHARD_FDW_DDBJSON_H

#include "pure.h"

typedef enum DjKind
{
	DJ_NULL,
	DJ_BOOL,
	DJ_NUMBER,
	DJ_STRING,
	DJ_ARRAY,
	DJ_OBJECT
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
 * Parse len bytes of text.  On success returns a tree allocated with
 * sfdw_alloc.  On malformed, truncated or trailing-garbage input returns
 * NULL and writes a one-line reason into err.
 */
extern DdbJson *ddbjson_parse(const char *text, size_t len,
							  char *err, size_t errlen);

/* The member named key of an object, or NULL (also when obj is no object). */
extern DdbJson *ddbjson_get(const DdbJson *obj, const char *key);

/* A string member's text, or NULL. */
extern const char *ddbjson_get_string(const DdbJson *obj, const char *key);

/* A number member as a double, or 0 when absent. */
extern double ddbjson_get_number(const DdbJson *obj, const char *key);

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
 * Begin a DynamoDB request body in out (initialised here): the top-level
 * object and its TableName member.
 */
extern void jw_begin_request(JsonWriter *w, Buf *out, const char *table);

/*
 * End a DynamoDB request body begun with jw_begin_request (or
 * jw_begin_object): ask for the consumed capacity (every request does, for
 * EXPLAIN ANALYZE and the counters), close the object, and return the text
 * with its length.
 */
extern char *jw_end_request(JsonWriter *w, size_t *len);

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
