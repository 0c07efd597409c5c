/*-------------------------------------------------------------------------
 *
 * test_itemsize.c
 *		Unit tests of an item's size as DynamoDB counts it against its
 *		400 KB (ddb_item_size, src/core/ddbshape.c).
 *
 * Each expected size was measured on DynamoDB Local 2.9.30: the largest
 * binary attribute that an item holding the value beside it still takes,
 * subtracted from 409,600 bytes.
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <string.h>

#include "core/ddbjson.h"
#include "unit.h"

/*
 * The size of the item {"v": value} (value an AttributeValue's JSON text)
 * less the one byte of the name "v"; -1 when the text does not parse.
 */
static long
value_size(const char *value)
{
	char		text[512];
	char		err[128];
	DdbJson    *item;
	long		size;

	snprintf(text, sizeof(text), "{\"v\":%s}", value);
	item = ddbjson_parse(text, strlen(text), err, sizeof(err));
	if (item == NULL)
		return -1;
	size = (long) ddb_item_size(item) - 1;
	ddbjson_free(item);
	return size;
}

/* Numbers: significant digits in base 100, aligned on the point. */
static void
test_numbers(void)
{
	CHECK(value_size("{\"N\":\"0\"}") == 1);
	CHECK(value_size("{\"N\":\"-0\"}") == 1);
	CHECK(value_size("{\"N\":\"1\"}") == 2);
	CHECK(value_size("{\"N\":\"10\"}") == 2);
	CHECK(value_size("{\"N\":\"12\"}") == 2);
	CHECK(value_size("{\"N\":\"99\"}") == 2);
	CHECK(value_size("{\"N\":\"100\"}") == 2);
	CHECK(value_size("{\"N\":\"101\"}") == 3);
	CHECK(value_size("{\"N\":\"123\"}") == 3);
	CHECK(value_size("{\"N\":\"1234\"}") == 3);
	CHECK(value_size("{\"N\":\"1000000\"}") == 2);
	CHECK(value_size("{\"N\":\"1E5\"}") == 2);
	CHECK(value_size("{\"N\":\"0.1\"}") == 2);
	CHECK(value_size("{\"N\":\"0.001\"}") == 2);
	CHECK(value_size("{\"N\":\"1.5\"}") == 3);
	CHECK(value_size("{\"N\":\"1.01\"}") == 3);
	CHECK(value_size("{\"N\":\"12.5\"}") == 3);
	CHECK(value_size("{\"N\":\"-1\"}") == 3);
	CHECK(value_size("{\"N\":\"-12\"}") == 3);
	CHECK(value_size("{\"N\":\"-123\"}") == 4);
	CHECK(value_size("{\"N\":\"12345678901234567890123456789012345678\"}") == 20);
}

/* Strings, binaries, booleans and NULL. */
static void
test_scalars(void)
{
	CHECK(value_size("{\"S\":\"\"}") == 0);
	CHECK(value_size("{\"S\":\"abc\"}") == 3);
	CHECK(value_size("{\"S\":\"\\u00e9\"}") == 2);
	CHECK(value_size("{\"S\":\"\xc3\xa9\"}") == 2);
	CHECK(value_size("{\"S\":\"\\ud83d\\ude00\"}") == 4);
	CHECK(value_size("{\"B\":\"\"}") == 0);
	CHECK(value_size("{\"B\":\"YQ==\"}") == 1);
	CHECK(value_size("{\"B\":\"YWI=\"}") == 2);
	CHECK(value_size("{\"B\":\"YWJj\"}") == 3);
	CHECK(value_size("{\"BOOL\":true}") == 1);
	CHECK(value_size("{\"NULL\":true}") == 1);
}

/* Sets, lists and maps. */
static void
test_containers(void)
{
	CHECK(value_size("{\"SS\":[\"a\",\"bb\"]}") == 3);
	CHECK(value_size("{\"NS\":[\"1\",\"12\",\"123\"]}") == 7);
	CHECK(value_size("{\"BS\":[\"YWJj\",\"ZA==\"]}") == 4);
	CHECK(value_size("{\"L\":[]}") == 3);
	CHECK(value_size("{\"L\":[{\"S\":\"a\"}]}") == 5);
	CHECK(value_size("{\"L\":[{\"S\":\"a\"},{\"S\":\"bb\"}]}") == 8);
	CHECK(value_size("{\"L\":[{\"L\":[]}]}") == 7);
	CHECK(value_size("{\"M\":{}}") == 3);
	CHECK(value_size("{\"M\":{\"x\":{\"S\":\"a\"}}}") == 6);
	CHECK(value_size("{\"M\":{\"xy\":{\"S\":\"a\"},\"z\":{\"S\":\"bb\"}}}") == 11);
}

/* Names count in UTF-8 bytes, every attribute's. */
static void
test_items(void)
{
	static const char item[] =
		"{\"pk\":{\"S\":\"k\"},\"\xc3\xa9t\xc3\xa9\":{\"N\":\"1.5\"},\"b\":{\"B\":\"YWJj\"}}";
	char		err[128];
	DdbJson    *v = ddbjson_parse(item, strlen(item), err, sizeof(err));

	CHECK(v != NULL && ddb_item_size(v) == 2 + 1 + 5 + 3 + 1 + 3);
	ddbjson_free(v);
	v = ddbjson_parse("{}", 2, err, sizeof(err));
	CHECK(v != NULL && ddb_item_size(v) == 0);
	ddbjson_free(v);
}

void
suite_itemsize(void)
{
	test_numbers();
	test_scalars();
	test_containers();
	test_items();
}
