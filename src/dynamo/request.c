/*-------------------------------------------------------------------------
 *
 * request.c
 *		The pieces of the DynamoDB requests that read, and the bodies that
 *		need no scan: keys written as AttributeValues, the key that resumes
 *		a Query, and the tables and tools' requests (DescribeTable,
 *		ListTables, samples, Select COUNT).  A scan's own expressions and
 *		bodies are built from its state in fdw/scanrequest.c; the writes'
 *		bodies are in writebody.c.
 *
 *-------------------------------------------------------------------------
 */
#include "dynamo/dynamo.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/lsyscache.h"
#include "utils/numeric.h"

#include "core/avorder.h"

/* ---------------------------------------------------------------------
 * Keys and conditions
 * ---------------------------------------------------------------------
 */

/* See dynamo.h: a key attribute's value text as an AttributeValue. */
void
request_write_key_value(JsonWriter *w, const ShardKey *key, const char *text)
{
	jw_begin_object(w);
	jw_key(w, codec_key_type(key));
	jw_cstring(w, text);
	jw_end_object(w);
}

/* Write the key object of partition key pk and sort key sk (texts). */
void
request_write_key_texts(JsonWriter *w, ShardTable *t, const char *pk, const char *sk)
{
	jw_begin_object(w);
	jw_key(w, t->pk.attribute);
	request_write_key_value(w, &t->pk, pk);
	if (sk)
	{
		jw_key(w, t->sk.attribute);
		request_write_key_value(w, &t->sk, sk);
	}
	jw_end_object(w);
}




/* See dynamo.h: the key object of a GetItem, as JSON text. */
char *
request_item_key_json(ShardTable *t, const char *pk, const char *sk)
{
	Buf			out;
	JsonWriter	w;

	buf_init(&out);
	jw_init(&w, &out);
	request_write_key_texts(&w, t, pk, sk);
	return out.data;
}

/*
 * The ExclusiveStartKey that resumes a Query of partition key value pk
 * after sort key value sk (an AttributeValue, which no item need have).
 */
DdbJson *
request_resume_key(ShardTable *t, const char *pk, const DdbJson *sk)
{
	Buf			out;
	JsonWriter	w;
	char		err[SFDW_ERRLEN];
	DdbJson    *key;

	jw_begin_body(&w, &out);
	jw_key(&w, t->pk.attribute);
	request_write_key_value(&w, &t->pk, pk);
	jw_key(&w, t->sk.attribute);
	jw_tree(&w, sk);
	jw_end_object(&w);
	key = ddbjson_parse(out.data, out.len, err, sizeof(err));
	if (key == NULL)
		elog(ERROR, "shard_fdw: could not parse a key written: %s", err);
	return key;
}

/* Write a read's ExclusiveStartKey: start_key, unless NULL (the start). */
void
request_write_start_key(JsonWriter *w, const DdbJson *start_key)
{
	if (start_key)
	{
		jw_key(w, "ExclusiveStartKey");
		jw_tree(w, start_key);
	}
}

/* ---------------------------------------------------------------------
 * Tables and tools
 * ---------------------------------------------------------------------
 */

/* The DescribeTable body of table "table". */
char *
request_describe(const char *table, size_t *len)
{
	Buf			out;
	JsonWriter	w;

	jw_begin_request(&w, &out, table);
	return jw_end_body(&w, len);
}

/* The ListTables body of the page after table last (NULL: the first). */
char *
request_list_tables(const char *last, size_t *len)
{
	Buf			out;
	JsonWriter	w;

	jw_begin_body(&w, &out);
	if (last)
	{
		jw_key(&w, "ExclusiveStartTableName");
		jw_cstring(&w, last);
	}
	return jw_end_body(&w, len);
}

/*
 * The Scan body that samples the first limit items of segment segment of
 * segments of table "table".
 */
char *
request_sample(const char *table, int limit, int segment, int segments, size_t *len)
{
	Buf			out;
	JsonWriter	w;

	jw_begin_request(&w, &out, table);
	jw_key(&w, "Limit");
	jw_int(&w, limit);
	jw_key(&w, "Segment");
	jw_int(&w, segment);
	jw_key(&w, "TotalSegments");
	jw_int(&w, segments);
	return jw_end_body(&w, len);
}

/*
 * Begin a Query's KeyConditionExpression, the partition key attribute
 * equal to :k, up to the value of :k, which the caller writes before it
 * closes ExpressionAttributeValues.
 */
static void
begin_partition_condition(JsonWriter *w, const char *attribute)
{
	jw_key(w, "KeyConditionExpression");
	jw_cstring(w, "#k = :k");
	jw_key(w, "ExpressionAttributeNames");
	jw_begin_object(w);
	jw_key(w, "#k");
	jw_cstring(w, attribute);
	jw_end_object(w);
	jw_key(w, "ExpressionAttributeValues");
	jw_begin_object(w);
	jw_key(w, ":k");
}

/*
 * The Query body that samples the first limit items of the S partition
 * key value pk of table "table", whose partition key is attribute.
 */
char *
request_partition_sample(const char *table, const char *attribute, const char *pk,
						 int limit, size_t *len)
{
	Buf			out;
	JsonWriter	w;

	jw_begin_request(&w, &out, table);
	begin_partition_condition(&w, attribute);
	jw_begin_object(&w);
	jw_key(&w, "S");
	jw_cstring(&w, pk);
	jw_end_object(&w);
	jw_end_object(&w);
	jw_key(&w, "Limit");
	jw_int(&w, limit);
	return jw_end_body(&w, len);
}

/* Write a Query's KeyConditionExpression: the partition key equal to pk. */
void
request_write_partition_condition(JsonWriter *w, ShardTable *t, const char *pk)
{
	begin_partition_condition(w, t->pk.attribute);
	request_write_key_value(w, &t->pk, pk);
	jw_end_object(w);
}

/*
 * The Query body that counts the items of partition key pk (Select COUNT),
 * from start_key on (NULL for the first page).
 */
char *
request_count(ShardTable *t, const char *pk, const DdbJson *start_key, size_t *len)
{
	Buf			out;
	JsonWriter	w;

	jw_begin_request(&w, &out, t->table);
	request_write_partition_condition(&w, t, pk);
	jw_key(&w, "Select");
	jw_cstring(&w, "COUNT");
	request_write_start_key(&w, start_key);
	return jw_end_body(&w, len);
}
