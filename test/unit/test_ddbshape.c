/*-------------------------------------------------------------------------
 *
 * test_ddbshape.c
 *		Unit tests of ddbshape.c: whether a parsed body has DynamoDB's
 *		shapes (AttributeValues, items, the members of a response, the
 *		envelope of a page whose items are read later), DynamoDB's numbers,
 *		UTF-8 as DynamoDB takes it, and the failed action of a canceled
 *		transaction.
 *
 * Every tree and buffer is freed again so that a leak checker sees
 * nothing.
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <string.h>

#include "core/ddbjson.h"
#include "ddbsamples.h"
#include "unit.h"

static void
test_failed_action(void)
{
	char		message[200];

	CHECK(ddb_failed_action(NULL) == -1);
	CHECK(ddb_failed_action("no list") == -1);
	CHECK(ddb_failed_action("[]") == -1);
	CHECK(ddb_failed_action("[None, None]") == -1);
	CHECK(ddb_failed_action("[ConditionalCheckFailed, None]") == 0);
	CHECK(ddb_failed_action("[None, ConditionalCheckFailed]") == 1);
	CHECK(ddb_failed_action("[None, TransactionConflict, ConditionalCheckFailed]") == 2);
	CHECK(ddb_failed_action("[None, ConditionalCheckFailedX]") == -1);
	CHECK(ddb_failed_action("[None, ConditionalCheckFailed") == -1);
	CHECK(ddb_failed_action("a [ConditionalCheckFailed] then [None]") == -1);
	snprintf(message, sizeof(message), "%s[None, None, ConditionalCheckFailed, None]",
			 "Transaction cancelled, please refer cancellation reasons for specific reasons ");
	CHECK(ddb_failed_action(message) == 2);
}

/*
 * Does the item text parse and pass ddbjson_check_item?  Prints why not.
 */
static int
item_valid(const char *text)
{
	char		err[256] = "";
	DdbJson    *v = parse(text, err, sizeof(err));
	DdbCheck	chk;
	int			ok;

	if (v == NULL)
	{
		printf("     input: %s\n     err:   %s\n", text, err);
		return 0;
	}
	ok = ddbjson_check_item(v, &chk);
	if (!ok)
		printf("     input: %s\n     %s: %s\n", text, chk.attribute, chk.reason);
	ddbjson_free(v);
	return ok;
}

/*
 * Parse text and run check (ddbjson_check_item or ddbjson_check_response)
 * on it into *chk: the tree when the text parses and the check refuses it;
 * else NULL, after printing why.
 */
static DdbJson *
refused_by(const char *text, bool (*check) (const DdbJson *, DdbCheck *), DdbCheck *chk)
{
	char		err[256] = "";
	DdbJson    *v = parse(text, err, sizeof(err));

	if (v == NULL)
	{
		printf("     input: %s\n     err:   %s\n", text, err);
		return NULL;
	}
	memset(chk, 0, sizeof(*chk));
	if (check(v, chk))
	{
		printf("     accepted: %s\n", text);
		ddbjson_free(v);
		return NULL;
	}
	return v;
}

/*
 * Does the item text parse but fail ddbjson_check_item at attribute with
 * reason, the fault placed in the item itself?
 */
static int
item_rejects(const char *text, const char *attribute, const char *reason)
{
	DdbCheck	chk;
	DdbJson    *v = refused_by(text, ddbjson_check_item, &chk);
	int			ok;

	if (v == NULL)
		return 0;
	ok = chk.item == v && strcmp(chk.attribute, attribute) == 0 &&
		strcmp(chk.reason, reason) == 0;
	if (!ok)
		printf("     input: %s\n     got:  %s: %s\n     want: %s: %s\n",
			   text, chk.attribute, chk.reason, attribute, reason);
	ddbjson_free(v);
	return ok;
}

/*
 * Does the response text parse but fail ddbjson_check_response at where
 * (and attribute, "" for a fault outside any item) with reason?
 */
static int
response_rejects(const char *text, const char *where, const char *attribute,
				 const char *reason)
{
	DdbCheck	chk;
	DdbJson    *v = refused_by(text, ddbjson_check_response, &chk);
	int			ok;

	if (v == NULL)
		return 0;
	ok = strcmp(chk.where, where) == 0 && strcmp(chk.attribute, attribute) == 0 &&
		strcmp(chk.reason, reason) == 0 && (chk.item != NULL) == (attribute[0] != '\0');
	if (!ok)
		printf("     input: %s\n     got:  %s %s: %s\n     want: %s %s: %s\n",
			   text, chk.where, chk.attribute, chk.reason, where, attribute, reason);
	ddbjson_free(v);
	return ok;
}

/* Append inner to out inside levels of open ... close. */
static void
nest(Buf *out, int levels, const char *open, const char *inner, const char *close)
{
	for (int i = 0; i < levels; i++)
		buf_puts(out, open);
	buf_puts(out, inner);
	for (int i = 0; i < levels; i++)
		buf_puts(out, close);
}

/* An item with attribute a holding levels nested M around inner. */
static char *
nested_item(Buf *out, int levels, const char *inner)
{
	buf_reset(out);
	buf_puts(out, "{\"a\":");
	nest(out, levels, "{\"M\":{\"k\":", inner, "}}");
	buf_puts(out, "}");
	return out->data;
}

static void
test_check_av(void)
{
	Buf			text;
	char		err[256] = "";
	DdbJson    *v;
	DdbCheck	chk;

	/* Every type, as DynamoDB sends it. */
	v = parse(query_body, err, sizeof(err));
	CHECK(v != NULL && ddbjson_check_response(v, &chk));
	ddbjson_free(v);
	CHECK(item_valid("{}"));
	CHECK(item_valid("{\"s\":{\"S\":\"\"},\"e\":{\"S\":\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"},"
					 "\"n\":{\"N\":\"-1.5E+3\"},\"z\":{\"N\":\"0\"},\"b\":{\"B\":\"\"},"
					 "\"t\":{\"BOOL\":false},\"u\":{\"NULL\":true},\"m\":{\"M\":{}},"
					 "\"l\":{\"L\":[]},\"ss\":{\"SS\":[\"\",\"x\"]},\"ns\":{\"NS\":[\"1\",\"+2\"]},"
					 "\"bs\":{\"BS\":[\"AA==\"]},\"nul\":{\"S\":\"a\\u0000b\"}}"));

	/* Shapes that are no AttributeValue, each named by its path. */
	CHECK(item_rejects("{\"a\":{\"S\":5}}", "a", "S value is a JSON number, not a string"));
	CHECK(item_rejects("{\"a\":{\"S\":null}}", "a", "S value is null, not a string"));
	CHECK(item_rejects("{\"a\":{\"N\":true}}", "a", "N value is true, not a string"));
	CHECK(item_rejects("{\"a\":{\"N\":\"12abc\"}}", "a", "N value is not a DynamoDB number"));
	CHECK(item_rejects("{\"a\":{\"N\":\"\"}}", "a", "N value is not a DynamoDB number"));
	CHECK(item_rejects("{\"a\":{\"N\":\"1e999\"}}", "a", "N value is not a DynamoDB number"));
	CHECK(item_rejects("{\"a\":{\"B\":\"not base64\"}}", "a", "B value is not valid base64"));
	CHECK(item_rejects("{\"a\":{\"B\":[]}}", "a", "B value is an array, not a string"));
	CHECK(item_rejects("{\"a\":{\"BOOL\":\"yes\"}}", "a", "BOOL value is a string, not a boolean"));
	CHECK(item_rejects("{\"a\":{\"NULL\":false}}", "a", "NULL value is false, not true"));
	CHECK(item_rejects("{\"a\":{\"M\":[]}}", "a", "M value is an array, not an object"));
	CHECK(item_rejects("{\"a\":{\"L\":{}}}", "a", "L value is an object, not an array"));
	CHECK(item_rejects("{\"a\":{\"M\":{\"k\":5}}}", "a.k", "value is a JSON number, not an AttributeValue"));
	CHECK(item_rejects("{\"a\":{\"M\":{\"k\":{\"N\":true}}}}", "a.k", "N value is true, not a string"));
	CHECK(item_rejects("{\"a\":{\"L\":[{\"S\":\"x\"},{\"N\":{}}]}}", "a[1]", "N value is an object, not a string"));
	CHECK(item_rejects("{\"a\":{\"M\":{\"k\":{\"L\":[{\"M\":{\"x\":{\"BOOL\":1}}}]}}}}",
					   "a.k[0].x", "BOOL value is a JSON number, not a boolean"));
	CHECK(item_rejects("{\"a\":{\"Z\":\"1\"}}", "a", "unknown AttributeValue type \"Z\""));
	CHECK(item_rejects("{\"a\":{\"s\":\"1\"}}", "a", "unknown AttributeValue type \"s\""));
	CHECK(item_rejects("{\"a\":{\"\":\"\"}}", "a", "unknown AttributeValue type \"\""));
	CHECK(item_rejects("{\"a\":{\"SSS\":[\"x\"]}}", "a", "unknown AttributeValue type \"SSS\""));
	CHECK(item_rejects("{\"a\":{\"\\u00ff\\u0001\":1}}", "a", "unknown AttributeValue type \"\xc3\xbf\\x01\""));
	CHECK(item_rejects("{\"a\":{}}", "a", "AttributeValue has 0 members, not one"));
	CHECK(item_rejects("{\"a\":{\"S\":\"x\",\"N\":\"1\"}}", "a", "AttributeValue has 2 members, not one"));
	CHECK(item_rejects("{\"a\":\"x\"}", "a", "value is a string, not an AttributeValue"));
	CHECK(item_rejects("{\"a\":{\"SS\":[1,2]}}", "a[0]", "SS member is a JSON number, not a string"));
	CHECK(item_rejects("{\"a\":{\"NS\":[\"1\",\"abc\"]}}", "a[1]", "NS member is not a DynamoDB number"));
	CHECK(item_rejects("{\"a\":{\"BS\":[\"A\"]}}", "a[0]", "BS member is not valid base64"));
	CHECK(item_rejects("{\"a\":{\"SS\":\"x\"}}", "a", "SS value is a string, not an array"));
	CHECK(item_rejects("{\"a\":{\"NS\":[]}}", "a", "NS value is an empty set"));

	/* Invalid UTF-8: in an S (also inside a map), a set, a name. */
	CHECK(item_rejects("{\"a\":{\"S\":\"\xff\"}}", "a", "S value is not valid UTF-8"));
	CHECK(item_rejects("{\"a\":{\"M\":{\"k\":{\"S\":\"x\xc3\"}}}}", "a.k", "S value is not valid UTF-8"));
	CHECK(item_rejects("{\"a\":{\"SS\":[\"\xed\xa0\x80\"]}}", "a[0]", "SS member is not valid UTF-8"));
	CHECK(item_rejects("{\"a\":{\"M\":{\"k\xc0\xaf\":{\"S\":\"x\"}}}}", "a.k\\xC0\\xAF", "map key is not valid UTF-8"));
	CHECK(item_rejects("{\"a\xf5\":{\"S\":\"x\"}}", "a\\xF5", "attribute name is not valid UTF-8"));

	/*
	 * Nesting: DynamoDB takes 31 M or L in one another, the innermost
	 * holding a value of level 32, and refuses a 32nd M or L even empty.
	 */
	buf_init(&text);
	CHECK(item_valid(nested_item(&text, DDB_MAX_NESTING - 1, "{\"S\":\"x\"}")));
	CHECK(item_valid(nested_item(&text, DDB_MAX_NESTING - 2, "{\"L\":[]}")));
	CHECK(item_rejects(nested_item(&text, DDB_MAX_NESTING - 1, "{\"L\":[]}"),
					   "a.k.k.k.k.k.k.k.k.k.k.k.k.k.k.k.k.k.k.k.k.k.k.k.k.k.k.k.k.k.k.k",
					   "L value nests deeper than DynamoDB's 32 levels"));
	sfdw_free(text.data);
}

/*
 * Does the envelope check of text pass, and does its item index of Items
 * fail with where, attribute and reason (index -1: every item passes)?
 */
static int
items_checked_later(const char *text, int index, const char *where,
					const char *attribute, const char *reason)
{
	char		err[256] = "";
	bool		too_deep;
	DdbJson    *v = ddbjson_parse_ex(text, strlen(text), "Items", err, sizeof(err),
									 &too_deep);
	DdbJson    *items = ddbjson_get(v, "Items");
	DdbCheck	chk;
	int			ok = v != NULL && ddbjson_check_envelope(v, &chk) && items != NULL;

	for (int i = 0; ok && i < items->n; i++)
	{
		bool		passes;

		ok = ddbjson_parse_deferred(v, &items->elems[i], err, sizeof(err));
		passes = ok && ddbjson_check_page_item(items->elems, items->n,
											   ddbjson_get(v, "LastEvaluatedKey"),
											   i, &chk);

		ok = passes == (i != index) &&
			(passes || (strcmp(chk.where, where) == 0 &&
						strcmp(chk.attribute, attribute) == 0 &&
						strcmp(chk.reason, reason) == 0));
	}
	if (!ok)
		printf("     input: %s\n     got:  %s %s: %s\n", text, chk.where, chk.attribute,
			   chk.reason);
	ddbjson_free(v);
	return ok;
}

/*
 * The envelope check leaves the items of Items to their reader, who finds
 * the fault the whole check finds, at the same place; faults outside the
 * items are still the envelope's.
 */
static void
test_check_envelope(void)
{
	DdbCheck	chk;
	char		err[256] = "";
	const char *text = "{\"Items\":[{\"k\":{\"S\":5}}],\"Count\":\"1\"}";
	DdbJson    *v = ddbjson_parse(text, strlen(text), err, sizeof(err));

	CHECK(items_checked_later("{\"Items\":[{},1]}", 1, "Items[1]", "",
							  "item is a JSON number, not an object"));
	CHECK(items_checked_later("{\"Items\":[{\"k\":{\"S\":\"a\"}},{\"k\":{\"S\":5}}]}", 1,
							  "Items[1]", "k", "S value is a JSON number, not a string"));
	CHECK(items_checked_later("{\"Items\":[{\"k\":{\"S\":\"a\"}}],\"Count\":1}", -1,
							  "", "", ""));
	CHECK(v != NULL && !ddbjson_check_envelope(v, &chk) &&
		  strcmp(chk.where, "Count") == 0 && chk.item == NULL);
	ddbjson_free(v);
	text = "{\"Items\":{}}";
	v = ddbjson_parse(text, strlen(text), err, sizeof(err));
	CHECK(v != NULL && !ddbjson_check_envelope(v, &chk) &&
		  strcmp(chk.where, "Items") == 0 &&
		  strcmp(chk.reason, "an object, not an array of items") == 0);
	ddbjson_free(v);
}

static void
test_check_response(void)
{
	static const struct
	{
		const char *text;
		const char *where;
		const char *attribute;
		const char *reason;
	}			refused[] = {
		{"{\"Items\":{}}",
			"Items", "", "an object, not an array of items"},
		{"{\"Items\":[{},1]}",
			"Items[1]", "", "item is a JSON number, not an object"},
		{"{\"Items\":[{\"k\":{\"S\":\"a\"}},{\"k\":{\"S\":5}}]}",
			"Items[1]", "k", "S value is a JSON number, not a string"},
		{"{\"Item\":[]}",
			"Item", "", "item is an array, not an object"},
		{"{\"Attributes\":{\"v\":{\"N\":\"x\"}}}",
			"Attributes", "v", "N value is not a DynamoDB number"},
		{"{\"Count\":\"1\"}",
			"Count", "", "a string, not a count"},
		{"{\"ScannedCount\":-1}",
			"ScannedCount", "", "a JSON number, not a count"},
		{"{\"ScannedCount\":1.5}",
			"ScannedCount", "", "a JSON number, not a count"},
		{"{\"LastEvaluatedKey\":\"k\"}",
			"LastEvaluatedKey", "", "item is a string, not an object"},
		{"{\"LastEvaluatedKey\":{}}",
			"LastEvaluatedKey", "", "an empty object, not a key"},
		{"{\"LastEvaluatedKey\":{\"k\":{\"Z\":\"1\"}}}",
			"LastEvaluatedKey", "k", "unknown AttributeValue type \"Z\""},
		/* a LastEvaluatedKey may name the last item, never an earlier one */
		{"{\"Items\":[{\"p\":{\"S\":\"g\"},\"s\":{\"N\":\"1.50\"},\"v\":{\"S\":\"x\"}},"
			"{\"p\":{\"S\":\"g\"},\"s\":{\"N\":\"2\"}}],"
			"\"LastEvaluatedKey\":{\"s\":{\"N\":\"15E-1\"},\"p\":{\"S\":\"g\"}}}",
			"LastEvaluatedKey", "", "the key of Items[0], not of the last of the page's 2 items: the next page would return items again"},
		{"{\"Responses\":{\"t\":{}}}",
			"Responses.t", "", "an object, not an array of items"},
		{"{\"Responses\":{\"t\":[{\"a\":{\"S\":\"x\"}},{\"a\":{\"BOOL\":\"yes\"}}]}}",
			"Responses.t[1]", "a", "BOOL value is a string, not a boolean"},
		{"{\"Responses\":\"x\"}",
			"Responses", "", "a string, not an object or an array"},
		{"{\"Responses\":[{\"Item\":{\"a\":{\"L\":{}}}}]}",
			"Responses[0]", "a", "L value is an object, not an array"},
		{"{\"UnprocessedKeys\":[]}",
			"UnprocessedKeys", "", "an array, not an object"},
		{"{\"UnprocessedKeys\":{\"t\":{}}}",
			"UnprocessedKeys.t", "", "an object, not an object with Keys"},
		{"{\"UnprocessedKeys\":{\"t\":{\"Keys\":[{\"k\":{\"S\":1}}]}}}",
			"UnprocessedKeys.t[0]", "k", "S value is a JSON number, not a string"},
		{"{\"UnprocessedItems\":{\"t\":[{\"PutRequest\":{}}]}}",
			"UnprocessedItems.t[0]", "", "an object, not a PutRequest with an Item or a DeleteRequest with a Key"},
		{"{\"UnprocessedItems\":{\"t\":[{\"DeleteRequest\":{\"Key\":{\"k\":{\"N\":\"\"}}}}]}}",
			"UnprocessedItems.t[0]", "k", "N value is not a DynamoDB number"},
		{"{\"TableNames\":5}",
			"TableNames", "", "a JSON number, not an array of table names"},
		{"{\"TableNames\":[\"a\",7]}",
			"TableNames[1]", "", "a JSON number, not a table name"},
		{"{\"TableNames\":[],\"LastEvaluatedTableName\":[]}",
			"LastEvaluatedTableName", "", "an array, not a table name"},
		{"{\"ConsumedCapacity\":5}",
			"ConsumedCapacity", "", "a JSON number, not an object or an array"},
		{"{\"ConsumedCapacity\":{\"CapacityUnits\":\"1\"}}",
			"ConsumedCapacity", "", "a string, not an object whose CapacityUnits is a number"},
		{"{\"ConsumedCapacity\":[{\"CapacityUnits\":1},[]]}",
			"ConsumedCapacity[1]", "", "an array, not an object"},
	};
	Buf			text;
	char		err[256] = "";
	DdbJson    *v;
	DdbCheck	chk;

	for (size_t i = 0; i < lengthof(refused); i++)
		CHECK(response_rejects(refused[i].text, refused[i].where, refused[i].attribute,
							   refused[i].reason));
	for (int i = 0; i < 4; i++)
	{
		static const char *const fine[] = {
			/* the last item */
			"{\"Items\":[{\"p\":{\"S\":\"g\"},\"s\":{\"N\":\"1\"}},{\"p\":{\"S\":\"g\"},\"s\":{\"N\":\"2\"}}],"
			"\"LastEvaluatedKey\":{\"p\":{\"S\":\"g\"},\"s\":{\"N\":\"2\"}}}",
			/* an item a filter left out, past the page's */
			"{\"Items\":[{\"p\":{\"S\":\"g\"},\"s\":{\"N\":\"1\"}},{\"p\":{\"S\":\"g\"},\"s\":{\"N\":\"2\"}}],"
			"\"LastEvaluatedKey\":{\"p\":{\"S\":\"g\"},\"s\":{\"N\":\"7\"}}}",
			/* the same value under another type is another key */
			"{\"Items\":[{\"p\":{\"S\":\"1\"}},{\"p\":{\"S\":\"2\"}}],\"LastEvaluatedKey\":{\"p\":{\"N\":\"1\"}}}",
			/* items projected without the key cannot be matched */
			"{\"Items\":[{\"v\":{\"S\":\"1\"}},{\"v\":{\"S\":\"2\"}}],\"LastEvaluatedKey\":{\"p\":{\"S\":\"1\"}}}",
		};

		v = parse(fine[i], err, sizeof(err));
		CHECK(v != NULL && ddbjson_check_response(v, &chk));
		ddbjson_free(v);
	}

	/*
	 * The deepest item DynamoDB holds, in the deepest envelope the
	 * extension reads (BatchWriteItem's UnprocessedItems), parses and
	 * passes.
	 */
	buf_init(&text);
	buf_puts(&text, "{\"UnprocessedItems\":{\"t\":[{\"PutRequest\":{\"Item\":{\"a\":");
	nest(&text, DDB_MAX_NESTING - 1, "{\"L\":[", "{\"S\":\"x\"}", "]}");
	buf_puts(&text, "}}}]}}");
	v = parse(text.data, err, sizeof(err));
	CHECK(v != NULL && ddbjson_check_response(v, &chk));
	ddbjson_free(v);
	sfdw_free(text.data);
}

static void
test_ddb_numbers(void)
{
	static const char *const good[] = {
		"0", "-0", "+1", ".5", "5.", "00012", "1e5", "1E+5", "1e-130",
		"9.9e125", "-1.5e-3", "0e999999999999999999",
		"12345678901234567890123456789012345678",
		"1000000000000000000000000000000000000000000",
		"0.0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000001",
	};
	static const char *const syntax[] = {
		"", "-", ".", "+.", " 1", "1 ", "0x10", "1e", "1e+", "1e 5", "1.2.3",
		"Infinity", "NaN", "--1", "1e5.5", "1,5",
	};

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		CHECK(ddb_number_check(good[i], strlen(good[i])) == DDB_NUMBER_OK);
	for (size_t i = 0; i < sizeof(syntax) / sizeof(syntax[0]); i++)
		CHECK(ddb_number_check(syntax[i], strlen(syntax[i])) == DDB_NUMBER_SYNTAX);
	CHECK(ddb_number_check("123456789012345678901234567890123456789", 39) == DDB_NUMBER_DIGITS);
	CHECK(ddb_number_check("1.00000000000000000000000000000000000001", 40) == DDB_NUMBER_DIGITS);
	CHECK(ddb_number_check("1e126", 5) == DDB_NUMBER_RANGE);
	CHECK(ddb_number_check("1e-131", 6) == DDB_NUMBER_RANGE);
	CHECK(ddb_number_check("1e99999999999999999999", 22) == DDB_NUMBER_RANGE);
	CHECK(ddb_number_check("1e-99999999999999999999", 23) == DDB_NUMBER_RANGE);
	/* the length bounds the text: a NUL inside is no end */
	CHECK(ddb_number_check("1\0" "2", 3) == DDB_NUMBER_SYNTAX);
}

static void
test_utf8(void)
{
	Buf			out;

	CHECK(ddb_utf8_valid("", 0));
	CHECK(ddb_utf8_valid("a\0b", 3));
	CHECK(ddb_utf8_valid("\xc2\x80\xdf\xbf\xe0\xa0\x80\xef\xbf\xbf\xf0\x90\x80\x80\xf4\x8f\xbf\xbf", 18));
	CHECK(!ddb_utf8_valid("\x80", 1));
	CHECK(!ddb_utf8_valid("\xc0\x80", 2));		/* overlong */
	CHECK(!ddb_utf8_valid("\xc1\xbf", 2));
	CHECK(!ddb_utf8_valid("\xe0\x9f\xbf", 3));
	CHECK(!ddb_utf8_valid("\xf0\x8f\xbf\xbf", 4));
	CHECK(!ddb_utf8_valid("\xed\xa0\x80", 3));	/* surrogate */
	CHECK(!ddb_utf8_valid("\xf4\x90\x80\x80", 4));	/* past U+10FFFF */
	CHECK(!ddb_utf8_valid("\xf5\x80\x80\x80", 4));
	CHECK(!ddb_utf8_valid("\xe2\x82", 2));		/* cut short */
	CHECK(!ddb_utf8_valid("\xe2\x82\x41", 3));

	/*
	 * A sequence judges the same wherever it sits among ASCII bytes, which
	 * the validator skips eight at a time: at every offset of a word, cut
	 * by a word's end, and with every length of ASCII after it.
	 */
	{
		static const struct
		{
			const char *seq;
			bool		valid;
		}			seqs[] = {
			{"\xc3\xa9", true},
			{"\xe2\x82\xac", true},
			{"\xf0\x9f\x98\x80", true},
			{"\x80", false},
			{"\xc0\x80", false},
			{"\xed\xa0\x80", false},
			{"\xe2\x82", false},
			{"\xff", false},
		};

		for (size_t k = 0; k < sizeof(seqs) / sizeof(seqs[0]); k++)
			for (size_t before = 0; before <= 17; before++)
				for (size_t after = 0; after <= 17; after++)
				{
					char		text[64];
					size_t		n = strlen(seqs[k].seq);

					memset(text, 'a', before);
					memcpy(text + before, seqs[k].seq, n);
					memset(text + before + n, 'z', after);
					CHECK(ddb_utf8_valid(text, before + n + after) == seqs[k].valid);
				}
	}

	buf_init(&out);
	ddb_append_printable(&out, "a\xc3\xa9\"\\\x01\xff\x7f" "b", 9);
	CHECK_STR(out.data, "a\xc3\xa9\\x22\\x5C\\x01\\xFF\\x7F" "b");
	sfdw_free(out.data);
}

/* Read units as DynamoDB charges them. */
static void
test_read_units(void)
{
	/* a Query of 20 items of 900 bytes: 18,000 bytes, 5 × 4 KB, halved */
	CHECK(ddb_read_units(1, 20, 900, false, false) == 2.5);
	CHECK(ddb_read_units(1, 20, 900, false, true) == 5);
	/* split over 10 requests: 1,800 bytes each, one unit each */
	CHECK(ddb_read_units(10, 20, 900, false, true) == 10);
	/* nothing read still costs a request its unit */
	CHECK(ddb_read_units(4, 0, 900, false, false) == 2);
	CHECK(ddb_read_units(0, 0, 900, false, false) == 0);
	/* by item: each item rounded up on its own (a 4.1 KB item is 2 units) */
	CHECK(ddb_read_units(1, 3, 4200, true, true) == 6);
	CHECK(ddb_read_units(1, 3, 100, true, false) == 1.5);
}

void
suite_ddbshape(void)
{
	test_read_units();
	test_failed_action();
	test_ddb_numbers();
	test_utf8();
	test_check_av();
	test_check_response();
	test_check_envelope();
}
