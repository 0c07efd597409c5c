/*-------------------------------------------------------------------------
 *
 * test_ddbjson.c
 *		Unit tests of ddbjson.c, the parser: values, strings, numbers,
 *		lookups, DynamoDB's bodies, malformed input, trees written back,
 *		deferred items and a parse cut short (the writer is
 *		test_jsonwrite.c's, DynamoDB's shapes test_ddbshape.c's).
 *
 * Every tree and buffer is freed again so that a leak checker sees
 * nothing.
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>

#include "core/ddbjson.h"
#include "ddbsamples.h"
#include "unit.h"

/* A DynamoDB throttling error body. */
static const char error_body[] =
"{\"__type\":\"com.amazonaws.dynamodb.v20120810#"
"ProvisionedThroughputExceededException\","
"\"message\":\"The level of configured provisioned throughput for the "
"table was exceeded. Consider increasing your provisioning level with "
"the UpdateTable API.\","
"\"ThrottlingReasons\":[{\"reason\":\"TableWriteKeyRangeThroughputExceeded\","
"\"resource\":\"arn:aws:dynamodb:us-east-1:123456789012:table/orders\"}]}";

/* The text of a string or number node, or NULL for no node. */
static const char *
text_of(const DdbJson *v)
{
	return v != NULL ? v->str : NULL;
}

/* The typed value of attribute name in an item: item.name.type. */
static DdbJson *
attr(const DdbJson *item, const char *name, const char *type)
{
	return ddbjson_get(ddbjson_get(item, name), type);
}

/*
 * Does parsing len bytes of text fail with exactly the message want?
 */
static int
rejects_len(const char *text, size_t len, const char *want)
{
	char		err[256] = "";
	DdbJson    *v = ddbjson_parse(text, len, err, sizeof(err));

	if (v != NULL)
	{
		ddbjson_free(v);
		printf("     accepted: %s\n", text);
		return 0;
	}
	if (strcmp(err, want) != 0)
	{
		printf("     input: %s\n     err:   %s\n     want:  %s\n",
			   text, err, want);
		return 0;
	}
	return 1;
}

/* rejects_len for a NUL-terminated text. */
static int
rejects(const char *text, const char *want)
{
	return rejects_len(text, strlen(text), want);
}

/* A text the parser must refuse, and the message it must give. */
typedef struct Rejected
{
	const char *text;
	const char *want;
} Rejected;

/* Whether each of the n texts of cases is refused as its case wants. */
static int
rejects_all(const Rejected *cases, size_t n)
{
	int			all = 1;

	for (size_t i = 0; i < n; i++)
		all &= rejects(cases[i].text, cases[i].want);
	return all;
}

/*
 * Does text parse and come back from jw_tree as expected?
 */
static int
writes_back(const char *text, const char *expected)
{
	char		err[256] = "";
	DdbJson    *v = parse(text, err, sizeof(err));
	char	   *back;
	int			ok;

	if (v == NULL)
	{
		printf("     input: %s\n     err:   %s\n", text, err);
		return 0;
	}
	back = ddbjson_text(v, NULL);
	ok = strcmp(back, expected) == 0;
	if (!ok)
		printf("     got:  %s\n     want: %s\n", back, expected);
	sfdw_free(back);
	ddbjson_free(v);
	return ok;
}

/* Compact text in the writer's own style survives parse and jw_tree. */
static int
round_trips(const char *text)
{
	return writes_back(text, text);
}

static void
test_kinds(void)
{
	char		err[256] = "";
	DdbJson    *v = parse(" [null, true,false ,0,\"s\",[],{}] ",
						  err, sizeof(err));

	CHECK(v != NULL && v->kind == DJ_ARRAY && v->n == 7);
	if (v == NULL || v->n != 7)
	{
		ddbjson_free(v);
		return;
	}
	CHECK(v->keys == NULL);
	CHECK(v->elems[0].kind == DJ_NULL);
	CHECK(v->elems[1].kind == DJ_BOOL && v->elems[1].boolean);
	CHECK(v->elems[2].kind == DJ_BOOL && !v->elems[2].boolean);
	CHECK(v->elems[3].kind == DJ_NUMBER && v->elems[3].len == 1);
	CHECK_STR(v->elems[3].str, "0");
	CHECK(v->elems[4].kind == DJ_STRING && v->elems[4].len == 1);
	CHECK_STR(v->elems[4].str, "s");
	CHECK(v->elems[5].kind == DJ_ARRAY && v->elems[5].n == 0);
	CHECK(v->elems[6].kind == DJ_OBJECT && v->elems[6].n == 0);
	ddbjson_free(v);

	/* Scalars at the top level, the number one ending with the input. */
	v = parse("null", err, sizeof(err));
	CHECK(v != NULL && v->kind == DJ_NULL);
	ddbjson_free(v);
	v = parse("false", err, sizeof(err));
	CHECK(v != NULL && v->kind == DJ_BOOL && !v->boolean);
	ddbjson_free(v);
	v = parse("\"top\"", err, sizeof(err));
	CHECK(v != NULL && v->kind == DJ_STRING && strcmp(v->str, "top") == 0);
	ddbjson_free(v);
	v = parse("-12", err, sizeof(err));
	CHECK(v != NULL && v->kind == DJ_NUMBER && strcmp(v->str, "-12") == 0);
	ddbjson_free(v);
	v = parse("\t4.5e1\r\n", err, sizeof(err));
	CHECK(v != NULL && v->kind == DJ_NUMBER && strcmp(v->str, "4.5e1") == 0);
	ddbjson_free(v);
}

static void
test_nesting(void)
{
	char		err[256] = "";
	DdbJson    *v = parse("{\"a\":{\"b\":[1,{\"c\":[[],[true]]}]},\"d\":[]}",
						  err, sizeof(err));
	DdbJson    *b;
	DdbJson    *c;

	CHECK(v != NULL);
	if (v == NULL)
		return;
	b = ddbjson_get(ddbjson_get(v, "a"), "b");
	CHECK(b != NULL && b->kind == DJ_ARRAY && b->n == 2);
	if (b == NULL || b->n != 2)
	{
		ddbjson_free(v);
		return;
	}
	CHECK_STR(b->elems[0].str, "1");
	c = ddbjson_get(&b->elems[1], "c");
	CHECK(c != NULL && c->kind == DJ_ARRAY && c->n == 2);
	CHECK(c != NULL && c->elems[0].n == 0 && c->elems[1].n == 1);
	CHECK(c != NULL && c->elems[1].elems[0].kind == DJ_BOOL);
	CHECK(ddbjson_get(v, "d") != NULL && ddbjson_get(v, "d")->n == 0);
	ddbjson_free(v);
}

/* Fill text with levels nested arrays around inner; returns text. */
static char *
nested(char *text, int levels, const char *inner)
{
	memset(text, '[', levels);
	strcpy(text + levels, inner);
	memset(text + levels + strlen(inner), ']', levels);
	text[2 * levels + strlen(inner)] = '\0';
	return text;
}

static void
test_depth(void)
{
	char		text[512];
	char		err[256] = "";
	bool		too_deep = false;
	DdbJson    *v;

	/*
	 * The values inside the innermost container are a level of their own;
	 * member names are not.
	 */
	v = parse(nested(text, DDBJSON_MAX_DEPTH, ""), err, sizeof(err));
	CHECK(v != NULL);
	ddbjson_free(v);
	v = parse(nested(text, DDBJSON_MAX_DEPTH - 1, "1"), err, sizeof(err));
	CHECK(v != NULL);
	ddbjson_free(v);
	CHECK(rejects(nested(text, DDBJSON_MAX_DEPTH, "1"), "nesting too deep at byte 128"));
	CHECK(rejects(nested(text, DDBJSON_MAX_DEPTH + 1, ""), "nesting too deep at byte 128"));
	CHECK(rejects(nested(text, DDBJSON_MAX_DEPTH - 1, "{\"a\":1}"),
				  "nesting too deep at byte 132"));

	/* Only depth is a fault that says so. */
	nested(text, DDBJSON_MAX_DEPTH + 1, "");
	CHECK(ddbjson_parse_ex(text, strlen(text), NULL, err, sizeof(err), &too_deep) == NULL);
	CHECK(too_deep);
	CHECK(ddbjson_parse_ex("[1,", 3, NULL, err, sizeof(err), &too_deep) == NULL);
	CHECK(!too_deep);
	CHECK(ddbjson_parse_ex("[1,}", 4, NULL, err, sizeof(err), &too_deep) == NULL);
	CHECK(!too_deep);
}

static void
test_member_order(void)
{
	char		err[256] = "";
	DdbJson    *v = parse("{\"z\":1,\"a\":2,\"m\":3}", err, sizeof(err));
	Buf			text;
	int			i;
	int			in_order = 1;

	CHECK(v != NULL && v->n == 3);
	if (v != NULL)
	{
		CHECK_STR(v->keys[0], "z");
		CHECK_STR(v->keys[1], "a");
		CHECK_STR(v->keys[2], "m");
		CHECK_STR(v->elems[1].str, "2");
	}
	ddbjson_free(v);

	/* Enough members to check repeated names by sorting. */
	buf_init(&text);
	buf_putc(&text, '{');
	for (i = 299; i >= 0; i--)
		buf_printf(&text, "\"k%d\":%d%s", i, i, i > 0 ? "," : "}");
	v = ddbjson_parse(text.data, text.len, err, sizeof(err));
	CHECK(v != NULL && v->n == 300);
	for (i = 0; v != NULL && i < v->n; i++)
	{
		char		want[16];

		snprintf(want, sizeof(want), "k%d", 299 - i);
		if (strcmp(v->keys[i], want) != 0)
			in_order = 0;
	}
	CHECK(in_order);
	ddbjson_free(v);
	sfdw_free(text.data);
}

static void
test_strings(void)
{
	char		err[256] = "";
	DdbJson    *v = parse("[\"a\\nb\\\"c\\\\d\\/e\\tf\\r\\b\\f\","
						  "\"\\u00e9\",\"\\ud83d\\ude00\",\"a\\u0000b\","
						  "\"caf\xc3\xa9 \xf0\x9f\x98\x80\",\"\"]",
						  err, sizeof(err));

	CHECK(v != NULL && v->n == 6);
	if (v == NULL || v->n != 6)
	{
		ddbjson_free(v);
		return;
	}
	CHECK_STR(v->elems[0].str, "a\nb\"c\\d/e\tf\r\b\f");
	CHECK(v->elems[0].len == 14);
	CHECK_STR(v->elems[1].str, "\xc3\xa9");
	CHECK(v->elems[1].len == 2);
	CHECK_STR(v->elems[2].str, "\xf0\x9f\x98\x80");
	CHECK(v->elems[2].len == 4);
	CHECK(v->elems[3].len == 3);
	CHECK(memcmp(v->elems[3].str, "a\0b", 4) == 0);
	CHECK_STR(v->elems[4].str, "caf\xc3\xa9 \xf0\x9f\x98\x80");
	CHECK(v->elems[5].kind == DJ_STRING && v->elems[5].len == 0);
	CHECK_STR(v->elems[5].str, "");
	ddbjson_free(v);

	/* Member names are unescaped too. */
	v = parse("{\"a\\u00e9\\\"\":1}", err, sizeof(err));
	CHECK(v != NULL && strcmp(v->keys[0], "a\xc3\xa9\"") == 0);
	ddbjson_free(v);
}

/* Does text parse to a one-string array holding exactly want (len bytes)? */
static int
string_is(const char *text, const char *want, size_t len)
{
	char		err[256] = "";
	DdbJson    *v = parse(text, err, sizeof(err));
	int			ok = v != NULL && v->kind == DJ_ARRAY && v->n == 1 &&
		v->elems[0].kind == DJ_STRING && v->elems[0].len == len &&
		memcmp(v->elems[0].str, want, len + 1) == 0;

	if (!ok)
		printf("     input: %s\n     err:   %s\n", text, err);
	ddbjson_free(v);
	return ok;
}

static void
test_surrogates(void)
{
	/* A pair is one character; half of one is U+FFFD. */
	CHECK(string_is("[\"\\uD83D\\uDE00\"]", "\xf0\x9f\x98\x80", 4));
	CHECK(string_is("[\"\\ud800\"]", "\xef\xbf\xbd", 3));
	CHECK(string_is("[\"\\udc00x\"]", "\xef\xbf\xbdx", 4));
	CHECK(string_is("[\"\\ud800x\"]", "\xef\xbf\xbdx", 4));
	CHECK(string_is("[\"\\ud800\\u0041\"]", "\xef\xbf\xbd" "A", 4));
	CHECK(string_is("[\"\\ud800\\n\"]", "\xef\xbf\xbd\n", 4));
	CHECK(string_is("[\"\\ud800\\ud83d\\ude00\"]",
					"\xef\xbf\xbd\xf0\x9f\x98\x80", 7));
	CHECK(string_is("[\"\\udbff\\udfff\"]", "\xf4\x8f\xbf\xbf", 4));
	CHECK(string_is("[\"\\u007f\\u0080\\u07ff\\u0800\\uffff\"]",
					"\x7f\xc2\x80\xdf\xbf\xe0\xa0\x80\xef\xbf\xbf", 11));
	CHECK(rejects("[\"\\ud800\\x\"]", "invalid string sequence at byte 9"));
	CHECK(rejects("[\"\\ud800\\u12\"]", "invalid string sequence at byte 12"));
	CHECK(rejects("[\"\\ud800\\", "unexpected end of data at byte 9"));
	CHECK(rejects("[\"\\ud800\\u00", "unexpected end of data at byte 12"));
	/* Never \u0000 in a name, even after half a pair. */
	CHECK(rejects("{\"\\ud800\\u0000\":1}",
				  "member name contains \\u0000 at byte 8"));
}

static void
test_string_places(void)
{
	char		err[256] = "";
	char		text[] = "{\"k\\u00e9\":[\"plain\",\"esc\\\"aped\",\"\",12,-0.5e3]}";
	DdbJson    *v = parse(text, err, sizeof(err));
	DdbJson    *a;

	/* The tree holds no pointer into the text it came from. */
	memset(text, 'x', sizeof(text) - 1);
	CHECK(v != NULL && v->n == 1);
	if (v == NULL || v->n != 1)
	{
		ddbjson_free(v);
		return;
	}
	CHECK_STR(v->keys[0], "k\xc3\xa9");
	a = &v->elems[0];
	CHECK(a->kind == DJ_ARRAY && a->n == 5);
	if (a->n == 5)
	{
		CHECK_STR(a->elems[0].str, "plain");
		CHECK_STR(a->elems[1].str, "esc\"aped");
		CHECK(a->elems[1].len == 8);
		CHECK_STR(a->elems[2].str, "");
		CHECK_STR(a->elems[3].str, "12");
		CHECK_STR(a->elems[4].str, "-0.5e3");
		CHECK(a->elems[4].len == 6);
	}
	ddbjson_free(v);

	/* Bytes outside ASCII and DEL pass through as they are. */
	CHECK(string_is("[\"\x7f\xff\xc3\"]", "\x7f\xff\xc3", 3));
}

static void
test_whitespace(void)
{
	/* Space, tab, LF and CR, anywhere between tokens; nothing else. */
	CHECK(writes_back(" \t\r\n{ \t\r\n\"a\" \t\r\n: \t\r\n[ \t\r\n1 \t\r\n, "
					  "\t\r\ntrue \t\r\n] \t\r\n} \t\r\n", "{\"a\":[1,true]}"));
	CHECK(rejects("\f[]", "unexpected character at byte 0"));
	CHECK(rejects("[\v1]", "unexpected character at byte 1"));
	CHECK(rejects("[1]\f", "unexpected character at byte 3"));
	CHECK(rejects("[\xc2\xa0" "1]", "unexpected character at byte 1"));
}

static void
test_many_names(void)
{
	Buf			text;
	int			i;

	/* Past the pairwise check: the first repeat in the text is named. */
	buf_init(&text);
	buf_putc(&text, '{');
	for (i = 0; i < 100; i++)
		buf_printf(&text, "%s\"m%d\":%d", i > 0 ? "," : "", i % 90, i);
	buf_putc(&text, '}');
	{
		char		want[64];
		const char *at = strstr(text.data, ",\"m0\":90");

		snprintf(want, sizeof(want), "duplicate object member name near byte %zu",
				 (size_t) (at - text.data));
		CHECK(rejects(text.data, want));
	}
	sfdw_free(text.data);
}

static void
test_numbers(void)
{
	static const char *const texts[] = {
		"1E+2", "-0.000123", "12345678901234567890123456789012345678",
		"-0", "0", "1.5e-7", "-9223372036854775809", "18446744073709551616",
		"9223372036854775807", "1.0", "100", "2E2", "-1e-130",
		"0.1000000000000000000000000001"
	};
	char		err[256] = "";
	Buf			text;
	DdbJson    *v;
	size_t		i;
	int			kept = 1;

	buf_init(&text);
	buf_putc(&text, '[');
	for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
		buf_printf(&text, "%s%s", i > 0 ? " , " : "", texts[i]);
	buf_putc(&text, ']');
	v = ddbjson_parse(text.data, text.len, err, sizeof(err));
	CHECK(v != NULL && v->n == (int) (sizeof(texts) / sizeof(texts[0])));
	for (i = 0; v != NULL && i < (size_t) v->n; i++)
	{
		if (v->elems[i].kind != DJ_NUMBER ||
			strcmp(v->elems[i].str, texts[i]) != 0 ||
			v->elems[i].len != strlen(texts[i]))
		{
			printf("     number %s came back as %s\n", texts[i],
				   v->elems[i].str);
			kept = 0;
		}
	}
	CHECK(kept);
	ddbjson_free(v);
	sfdw_free(text.data);

	v = parse("{\"big\":12345678901234567890123456789012345678,\"e\":1E+2,"
			  "\"s\":\"5\",\"neg\":-0.5}", err, sizeof(err));
	CHECK(v != NULL);
	CHECK_STR(text_of(ddbjson_get(v, "big")),
			  "12345678901234567890123456789012345678");
	CHECK(ddbjson_get_number(v, "e") == 100.0);
	CHECK(ddbjson_get_number(v, "neg") == -0.5);
	CHECK(ddbjson_get_number(v, "s") == 0);
	CHECK(ddbjson_get_number(v, "missing") == 0);
	ddbjson_free(v);
}

static void
test_lookups(void)
{
	char		err[256] = "";
	DdbJson    *v = parse("{\"s\":\"x\",\"n\":3,\"o\":{},\"a\":[1]}",
						  err, sizeof(err));

	CHECK(v != NULL);
	CHECK_STR(ddbjson_get_string(v, "s"), "x");
	CHECK(ddbjson_get_string(v, "n") == NULL);
	CHECK(ddbjson_get_string(v, "missing") == NULL);
	CHECK(ddbjson_get(v, "o") != NULL);
	CHECK(ddbjson_get(v, "S") == NULL);
	CHECK(ddbjson_get(ddbjson_get(v, "a"), "0") == NULL);
	CHECK(ddbjson_get(NULL, "s") == NULL);
	CHECK(ddbjson_get_string(NULL, "s") == NULL);
	CHECK(ddbjson_get_number(NULL, "n") == 0);
	ddbjson_free(v);
}

static void
test_query_response(void)
{
	char		err[256] = "";
	DdbJson    *v = ddbjson_parse(query_body, strlen(query_body),
								  err, sizeof(err));
	DdbJson    *items;
	DdbJson    *first;
	DdbJson    *lek;
	DdbJson    *cap;
	DdbJson    *lines;
	DdbJson    *tags;

	CHECK(v != NULL);
	if (v == NULL)
	{
		printf("     err: %s\n", err);
		return;
	}
	CHECK(v->n == 5);
	CHECK_STR(v->keys[0], "ConsumedCapacity");
	CHECK_STR(v->keys[4], "ScannedCount");
	CHECK_STR(text_of(ddbjson_get(v, "Count")), "2");
	CHECK(ddbjson_get_number(v, "Count") == 2);
	CHECK(ddbjson_get_number(v, "ScannedCount") == 2);

	items = ddbjson_get(v, "Items");
	CHECK(items != NULL && items->kind == DJ_ARRAY && items->n == 2);
	first = items != NULL && items->n == 2 ? &items->elems[0] : NULL;
	CHECK(first != NULL && first->n == 8);
	CHECK(first != NULL && strcmp(first->keys[7], "lines") == 0);
	CHECK_STR(text_of(attr(first, "pk", "S")), "cust#1");
	CHECK_STR(text_of(attr(first, "total", "N")), "129.95");
	CHECK_STR(text_of(attr(first, "blob", "B")), "AAEC/w==");
	CHECK(attr(first, "paid", "BOOL") != NULL &&
		  attr(first, "paid", "BOOL")->boolean);
	CHECK(attr(first, "note", "NULL") != NULL &&
		  attr(first, "note", "NULL")->kind == DJ_BOOL);
	tags = attr(first, "tags", "SS");
	CHECK(tags != NULL && tags->n == 2);
	CHECK_STR(tags != NULL && tags->n == 2 ? tags->elems[1].str : NULL,
			  "rush");
	lines = attr(first, "lines", "L");
	CHECK(lines != NULL && lines->n == 1);
	CHECK_STR(text_of(lines != NULL && lines->n == 1 ?
					  attr(ddbjson_get(&lines->elems[0], "M"), "qty", "N") :
					  NULL), "2");
	CHECK(items != NULL && items->n == 2 && items->elems[1].n == 3);

	lek = ddbjson_get(v, "LastEvaluatedKey");
	CHECK(lek != NULL && lek->n == 2);
	CHECK_STR(text_of(attr(lek, "sk", "S")), "order#2024-02-11");

	cap = ddbjson_get(v, "ConsumedCapacity");
	CHECK_STR(text_of(ddbjson_get(cap, "CapacityUnits")), "0.5");
	CHECK(ddbjson_get_number(cap, "CapacityUnits") == 0.5);
	CHECK_STR(ddbjson_get_string(cap, "TableName"), "orders");
	ddbjson_free(v);

	/* The same body laid out with whitespace parses to the same tree. */
	CHECK(writes_back("{ \"Count\" : 2 ,\n\t\"Items\" : [ ] ,\r\n"
					  "  \"ScannedCount\" : 0 }\n",
					  "{\"Count\":2,\"Items\":[],\"ScannedCount\":0}"));
}

static void
test_error_body(void)
{
	char		err[256] = "";
	DdbJson    *v = ddbjson_parse(error_body, strlen(error_body),
								  err, sizeof(err));
	DdbJson    *reasons;

	CHECK(v != NULL);
	if (v == NULL)
		return;
	CHECK_STR(ddbjson_get_string(v, "__type"),
			  "com.amazonaws.dynamodb.v20120810#"
			  "ProvisionedThroughputExceededException");
	CHECK(strncmp(ddbjson_get_string(v, "message"), "The level of", 12) == 0);
	reasons = ddbjson_get(v, "ThrottlingReasons");
	CHECK(reasons != NULL && reasons->kind == DJ_ARRAY && reasons->n == 1);
	CHECK_STR(ddbjson_get_string(&reasons->elems[0], "reason"),
			  "TableWriteKeyRangeThroughputExceeded");
	CHECK_STR(ddbjson_get_string(&reasons->elems[0], "resource"),
			  "arn:aws:dynamodb:us-east-1:123456789012:table/orders");
	ddbjson_free(v);
}

static void
test_large_body(void)
{
	char		err[256] = "";
	Buf			text;
	DdbJson    *v;
	DdbJson    *items;
	int			i;

	buf_init(&text);
	buf_puts(&text, "{\"Items\":[");
	for (i = 0; i < 20000; i++)
		buf_printf(&text, "%s{\"pk\":{\"S\":\"item#%05d\"},"
				   "\"n\":{\"N\":\"%d\"},\"tags\":{\"SS\":[\"a\",\"b\"]}}",
				   i > 0 ? "," : "", i, i);
	buf_puts(&text, "],\"Count\":20000}");
	CHECK(text.len > 1000000);
	v = ddbjson_parse(text.data, text.len, err, sizeof(err));
	CHECK(v != NULL);
	items = ddbjson_get(v, "Items");
	CHECK(items != NULL && items->n == 20000);
	if (items != NULL && items->n == 20000)
		CHECK_STR(ddbjson_get_string(ddbjson_get(&items->elems[12345], "pk"),
									 "S"), "item#12345");
	ddbjson_free(v);
	sfdw_free(text.data);
}

static void
test_truncation(void)
{
	static const Rejected ends[] = {
		{"", "unexpected end of data at byte 0"},
		{"  \n", "unexpected end of data at byte 3"},
		{"{\"Count\":2,\"Item", "unexpected end of data at byte 16"},
		{"{\"Count\":2,\"Items\"", "unexpected end of data at byte 18"},
		{"{\"Count\":", "unexpected end of data at byte 9"},
		{"{\"Count\":12", "unexpected end of data at byte 11"},
		{"[\"\\u00", "unexpected end of data at byte 6"},
		{"[\"\\ud83d", "unexpected end of data at byte 8"},
		{"tru", "unexpected end of data at byte 3"},
		{"-", "unexpected end of data at byte 1"},
		{"1e", "unexpected end of data at byte 2"},
		{"[-", "unexpected end of data at byte 2"},
		{"[12", "unexpected end of data at byte 3"},
		{"[\"\\", "unexpected end of data at byte 3"},
		{"{\"a\"", "unexpected end of data at byte 4"},
		{"{ ", "unexpected end of data at byte 2"},
	};
	size_t		len = strlen(query_body);
	size_t		cut;
	int			all = 1;

	/* Every proper prefix of the body ends early, whatever it cuts. */
	for (cut = 0; cut < len; cut++)
	{
		char		want[64];

		snprintf(want, sizeof(want), "unexpected end of data at byte %zu", cut);
		if (!rejects_len(query_body, cut, want))
			all = 0;
	}
	CHECK(all);

	CHECK(rejects_all(ends, lengthof(ends)));
}

static void
test_garbage(void)
{
	static const Rejected garbage[] = {
		{"{} x", "unexpected character at byte 3"},
		{"{}}", "unexpected character at byte 2"},
		{"[1]]", "unexpected character at byte 3"},
		{"1 2", "unexpected character at byte 2"},
		{"nullx", "unexpected character at byte 4"},
		{"{\"a\":1}{}", "unexpected character at byte 7"},
	};

	CHECK(rejects_all(garbage, lengthof(garbage)));
	CHECK(rejects_len("{}\0", 3, "unexpected NUL byte at byte 2"));
	CHECK(rejects_len("[\"a\0b\"]", 7, "unexpected NUL byte at byte 3"));

	/* The reason is optional. */
	CHECK(ddbjson_parse("{} x", 4, NULL, 0) == NULL);
}

static void
test_invalid(void)
{
	static const Rejected invalid[] = {
		/* Escapes. */
		{"[\"\\x\"]", "invalid string sequence at byte 3"},
		{"[\"\\u12g4\"]", "invalid string sequence at byte 6"},
		{"[\"\\U0041\"]", "invalid string sequence at byte 3"},
		{"[\"\\'\"]", "invalid string sequence at byte 3"},
		{"[\"\\u12\"]", "invalid string sequence at byte 6"},

		/* Structure. */
		{"[1,]", "unexpected character at byte 2"},
		{"{\"a\":1,}", "unexpected character at byte 6"},
		{"[1 2]", "array value separator ',' expected at byte 3"},
		{"{\"a\" 1}", "object property name separator ':' expected at byte 5"},
		{"{a:1}", "quoted object property name expected at byte 1"},
		{"{'a':1}", "quoted object property name expected at byte 1"},
		{"{\"a\":1,2}", "quoted object property name expected at byte 7"},
		{"{\"a\":1 \"b\":2}", "object value separator ',' expected at byte 7"},
		{"[1,,2]", "unexpected character at byte 3"},
		{"[ 1 , ]", "unexpected character at byte 4"},
		{"[truth]", "boolean expected at byte 4"},
		{"[fals]", "boolean expected at byte 5"},
		{"[nullx]", "array value separator ',' expected at byte 5"},
		{"['a']", "unexpected character at byte 1"},
		{"/* c */{}", "unexpected character at byte 0"},
		{"[True]", "unexpected character at byte 1"},
		{"[nul]", "null expected at byte 4"},

		/* Numbers outside RFC 8259's grammar. */
		{"[1.]", "invalid number at byte 1"},
		{"[01]", "invalid number at byte 1"},
		{"[00]", "invalid number at byte 1"},
		{"[-01]", "invalid number at byte 1"},
		{"[-.5]", "invalid number at byte 1"},
		{"[1.e5]", "invalid number at byte 1"},
		{"[.5]", "unexpected character at byte 1"},
		{"[+1]", "unexpected character at byte 1"},
		{"[1e+]", "invalid number at byte 1"},
		{"[NaN]", "unexpected character at byte 1"},
		{"[Infinity]", "unexpected character at byte 1"},
		{"[1-2]", "invalid number at byte 1"},
		{"[2e5e]", "invalid number at byte 1"},
		{"[0.5.1]", "invalid number at byte 1"},
		{"[-Infinity]", "invalid number at byte 1"},
		{"0x10", "unexpected character at byte 1"},

		/* What JSON or our tree does not allow. */
		{"[\"a\tb\"]", "control character in string at byte 3"},
		{"{\"a\nb\":1}", "control character in string at byte 3"},
		{"{\"a\\u0000b\":1}", "member name contains \\u0000 at byte 3"},
		{"{\"a\":1,\"a\":2}", "duplicate object member name near byte 6"},
		/* Near the comma before the first member whose name came before. */
		{"{\"a\":[1],\"b\":2,\"a\":\"x\"}", "duplicate object member name near byte 14"},
		{"{\"a\":1,\"b\":2,\"b\":3,\"a\":4}", "duplicate object member name near byte 12"},
		{"{\"a\\u0062\":1,\"ab\":2}", "duplicate object member name near byte 12"},
		{"[{\"k\":{\"x\":1},\"k\":{\"x\":1}}]", "duplicate object member name near byte 13"},
	};

	CHECK(rejects_all(invalid, lengthof(invalid)));
}

static void
test_round_trip(void)
{
	CHECK(round_trips("{}"));
	CHECK(round_trips("[]"));
	CHECK(round_trips("null"));
	CHECK(round_trips("true"));
	CHECK(round_trips("-0"));
	CHECK(round_trips("\"x\""));
	CHECK(round_trips("[[[]],{},[{}]]"));
	CHECK(round_trips("{\"a\":[1,2.5,-3e-7,{\"b\":null}],"
					  "\"c\":{\"d\":\"e\\u0000f\\n\\\"\\\\\"},"
					  "\"\xc3\xa9\":\"\xf0\x9f\x98\x80\"}"));
	CHECK(round_trips("[\"\\u001f\\b\\f\\r\\t\x7f/\","
					  "12345678901234567890123456789012345678]"));
	CHECK(round_trips(query_body));
	CHECK(round_trips(error_body));

	/* Other spellings come back in the writer's own. */
	CHECK(writes_back("[ \"\\/\\u00E9\\ud83d\\ude00\\u000A\" ]",
					  "[\"/\xc3\xa9\xf0\x9f\x98\x80\\n\"]"));
	CHECK(writes_back("{ \"a\" :\t1E+2 }", "{\"a\":1E+2}"));

	/* A number at the top level ends with the input. */
	CHECK(round_trips("7"));
}

/* Escapes of half a surrogate pair, found before the parser reads U+FFFD. */
static void
test_lone_surrogate(void)
{
#define LONE(text) ddbjson_lone_surrogate(text, strlen(text))
	CHECK(LONE("{\"S\":\"a\"}") == -1);
	CHECK(LONE("{\"S\":\"\\ud83c\\udfb2\"}") == -1);	/* a pair: U+1F3B2 */
	CHECK(LONE("{\"S\":\"\\u00e9\\n\"}") == -1);
	CHECK(LONE("{\"S\":\"\\\\ud800\"}") == -1);	/* an escaped backslash, then text */
	CHECK(LONE("{\"S\":\"\\ud800\"}") == 6);
	CHECK(LONE("{\"S\":\"x\\udc00\"}") == 7);
	CHECK(LONE("{\"S\":\"\\ud800\\u0041\"}") == 6);
	CHECK(LONE("\\uD83C") == 0);
	CHECK(LONE("\\") == -1);
#undef LONE
}

/* The next of a fixed sequence of pseudo-random numbers (xorshift64). */
static uint64_t
next_random(uint64_t *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return *state;
}

/* Does json_number_value give strtod's double, to the bit, for text? */
static bool
number_value_as_strtod(const char *text)
{
	double		fast = json_number_value(text, strlen(text));
	double		slow = strtod(text, NULL);

	return memcmp(&fast, &slow, sizeof(double)) == 0;
}

/*
 * Numbers read without strtod read as strtod reads them: edge cases of the
 * fast path (15 and 16 digits, 10^22 and 10^23, negative zero), then
 * 200,000 random numbers of every shape the grammar allows.
 */
static void
test_number_values(void)
{
	static const char *const edges[] = {
		"0", "-0", "-0.0", "0e5", "-0.0e-3", "0.5", "0.1", "4.35", "-12.75",
		"123456789012345", "1234567890123456", "999999999999999",
		"9007199254740993", "18446744073709551617", "1e22", "1e23", "1e-22",
		"1e-23", "1.5E+3", "25e-1", "0.000000000000000000001", "1e400",
		"1e-400", "123456789012345e7", "1e0001", "3.141592653589793"
	};
	uint64_t	state = UINT64_C(0x9E3779B97F4A7C15);
	int			bad = 0;

	for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); i++)
		if (!number_value_as_strtod(edges[i]))
		{
			printf("  json_number_value(\"%s\") differs from strtod\n", edges[i]);
			bad++;
		}
	for (int n = 0; n < 200000; n++)
	{
		char		text[80];
		size_t		len = 0;
		int			whole = 1 + (int) (next_random(&state) % 18);
		int			frac = (int) (next_random(&state) % 12);

		if (next_random(&state) % 2)
			text[len++] = '-';
		text[len++] = (char) ('0' + (whole > 1 ? 1 + next_random(&state) % 9 : next_random(&state) % 10));
		for (int k = 1; k < whole; k++)
			text[len++] = (char) ('0' + next_random(&state) % 10);
		if (frac > 0)
		{
			text[len++] = '.';
			for (int k = 0; k < frac; k++)
				text[len++] = (char) ('0' + next_random(&state) % 10);
		}
		if (next_random(&state) % 3 == 0)
		{
			text[len++] = next_random(&state) % 2 ? 'e' : 'E';
			if (next_random(&state) % 2)
				text[len++] = next_random(&state) % 2 ? '-' : '+';
			len += (size_t) snprintf(text + len, sizeof(text) - len, "%d",
									 (int) (next_random(&state) % 40));
		}
		text[len] = '\0';
		if (!number_value_as_strtod(text))
		{
			if (bad < 10)
				printf("  json_number_value(\"%s\") differs from strtod\n", text);
			bad++;
		}
	}
	CHECK(bad == 0);
}

/* The JSON number grammar shared by the parser and the codec. */
static void
test_json_number_length(void)
{
	static const struct
	{
		const char *text;
		size_t		len;		/* 0: the whole text */
		size_t		want;
	}			cases[] = {
		{"0", 0, 1},
		{"-0", 0, 2},
		{"01", 0, 1},
		{"123", 0, 3},
		{"-12.50", 0, 6},
		{"1.5e+3x", 0, 6},
		{"1E-130", 0, 6},
		{"12345", 3, 3},
		{"1.5", 2, 0},
		{"1.", 0, 0},
		{".5", 0, 0},
		{"-", 0, 0},
		{"+1", 0, 0},
		{"1e", 0, 0},
		{"1e+", 0, 0},
		{"NaN", 0, 0},
		{"", 0, 0},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
	{
		size_t		len = cases[i].len ? cases[i].len : strlen(cases[i].text);

		CHECK(json_number_length(cases[i].text, len) == cases[i].want);
	}
}

/*
 * Parse len bytes of text whole, and with the objects of Items deferred
 * and then each parsed: do both fail, or give the same tree?
 */
static bool
deferred_as_whole(const char *text, size_t len)
{
	char		whole_reason[256] = "";
	char		reason[256] = "";
	bool		too_deep;
	DdbJson    *whole = ddbjson_parse_ex(text, len, NULL, whole_reason,
										 sizeof(whole_reason), &too_deep);
	DdbJson    *lazy = ddbjson_parse_ex(text, len, "Items", reason, sizeof(reason),
										&too_deep);
	DdbJson    *items = ddbjson_get(lazy, "Items");
	bool		parsed = lazy != NULL;
	bool		same;

	for (int i = 0; parsed && items != NULL && items->kind == DJ_ARRAY &&
		 i < items->n; i++)
		parsed = ddbjson_parse_deferred(lazy, &items->elems[i], reason,
										sizeof(reason));
	same = parsed == (whole != NULL);
	if (same && whole != NULL)
	{
		size_t		whole_len;
		size_t		lazy_len;
		char	   *whole_text = ddbjson_text(whole, &whole_len);
		char	   *lazy_text = ddbjson_text(lazy, &lazy_len);

		same = whole_len == lazy_len && memcmp(whole_text, lazy_text, whole_len) == 0;
		sfdw_free(whole_text);
		sfdw_free(lazy_text);
	}
	ddbjson_free(whole);
	ddbjson_free(lazy);
	return same;
}

/* deferred_as_whole for a NUL-terminated text. */
static bool
deferred_same(const char *text)
{
	return deferred_as_whole(text, strlen(text));
}

/*
 * Does text fail to parse whole, and with the objects of Items deferred
 * parse, its item index (alone of those up to it) failing as the whole
 * parse does?
 */
static bool
deferred_fails_as_whole(const char *text, int index)
{
	char		whole_err[256] = "";
	char		err[256] = "";
	bool		too_deep;
	DdbJson    *whole = ddbjson_parse(text, strlen(text), whole_err, sizeof(whole_err));
	DdbJson    *lazy = ddbjson_parse_ex(text, strlen(text), "Items", err,
										sizeof(err), &too_deep);
	DdbJson    *items = ddbjson_get(lazy, "Items");
	bool		ok = whole == NULL && items != NULL && index < items->n;

	for (int i = 0; ok && i <= index; i++)
		ok = ddbjson_parse_deferred(lazy, &items->elems[i], err, sizeof(err)) ==
			(i < index);
	ok = ok && strcmp(err, whole_err) == 0;
	if (!ok)
		printf("     input: %s\n     whole: %s\n     item:  %s\n", text, whole_err, err);
	ddbjson_free(lazy);
	return ok;
}

/* Append a random JSON value, at most depth containers deep. */
static void
random_json(Buf *out, uint64_t *state, int depth)
{
	static const char *const pieces[] = {
		"a", "Z", " ", "}", "]", "{", "[", ",", ":", "\\\"", "\\\\", "\\/",
		"\\n", "\\u00e9", "\\ud83d\\ude00", "\xc3\xa9",
	};
	int			n = (int) (next_random(state) % 4);

	switch (next_random(state) % (depth > 0 ? 6 : 4))
	{
		case 0:
			buf_printf(out, next_random(state) % 2 ? "%d" : "-%d.%de%d",
					   (int) (next_random(state) % 1000),
					   (int) (next_random(state) % 100), (int) (next_random(state) % 30));
			break;
		case 1:
			buf_puts(out, next_random(state) % 2 ? "true" : "null");
			break;
		case 2:
		case 3:
			buf_putc(out, '"');
			for (int i = 0; i < n * 2; i++)
				buf_puts(out, pieces[next_random(state) % (sizeof(pieces) / sizeof(pieces[0]))]);
			buf_putc(out, '"');
			break;
		case 4:
			buf_putc(out, '[');
			for (int i = 0; i < n; i++)
			{
				buf_puts(out, i > 0 ? (next_random(state) % 4 ? "," : " , ") : "");
				random_json(out, state, depth - 1);
			}
			buf_putc(out, ']');
			break;
		case 5:
			buf_putc(out, '{');
			for (int i = 0; i < n; i++)
			{
				buf_printf(out, "%s\"k%d\":", i > 0 ? "," : "",
						   (int) (next_random(state) % 6));
				random_json(out, state, depth - 1);
			}
			buf_putc(out, '}');
			break;
	}
}

/*
 * The objects of the root's Items wait until they are parsed: found by
 * following strings and brackets, whatever the strings hold, parsed into
 * the tree as a whole parse would have, and failing where and as a whole
 * parse fails.  Then 20,000 random responses, half of them with a byte
 * changed, put in or taken out: the deferred parse and the whole one
 * succeed together and give the same tree.
 */
static void
test_deferred_items(void)
{
	char		err[256] = "";
	bool		too_deep;
	DdbJson    *v = ddbjson_parse_ex(query_body, strlen(query_body), "Items",
									 err, sizeof(err), &too_deep);
	DdbJson    *items = ddbjson_get(v, "Items");
	char	   *text;
	size_t		len;
	uint64_t	state = 0x5DEECE66DULL;
	int			same = 0;
	int			failed = 0;
	const int	rounds = 20000;

	CHECK(v != NULL && items != NULL && items->n == 2);
	CHECK(items->elems[0].kind == DJ_DEFERRED && items->elems[1].kind == DJ_DEFERRED);
	CHECK(strncmp(items->elems[1].str, "{\"pk\":{\"S\":\"cust#1\"},\"sk\":{\"S\":\"order#2024-02-11\"},\"total\":{\"N\":\"7\"}}",
				  items->elems[1].len) == 0 && items->elems[1].len == 69);
	CHECK(ddbjson_get(ddbjson_get(v, "LastEvaluatedKey"), "pk")->kind == DJ_OBJECT);
	CHECK(ddbjson_get_number(ddbjson_get(v, "ConsumedCapacity"), "CapacityUnits") == 0.5);
	/* written out before it is parsed: its text, as it came */
	text = ddbjson_text(v, &len);
	CHECK(len == strlen(query_body) && memcmp(text, query_body, len) == 0);
	sfdw_free(text);
	CHECK(ddbjson_parse_deferred(v, &items->elems[1], err, sizeof(err)));
	CHECK(strcmp(text_of(attr(&items->elems[1], "total", "N")), "7") == 0);
	CHECK(items->elems[0].kind == DJ_DEFERRED);
	CHECK(ddbjson_parse_deferred(v, &items->elems[1], err, sizeof(err)));
	CHECK(ddbjson_parse_deferred(v, &items->elems[0], err, sizeof(err)));
	CHECK(strcmp(text_of(attr(&items->elems[0], "total", "N")), "129.95") == 0);
	CHECK(strcmp(text_of(attr(ddbjson_get(&attr(&items->elems[0], "lines", "L")->elems[0], "M"),
							  "sku", "S")), "A-1") == 0);
	ddbjson_free(v);

	/* strings that hold brackets and quotes; numbers the parse ends */
	CHECK(deferred_same("{\"Items\":[{\"a\":{\"S\":\"}]\\\"{[\\\\\"}},{\"b\":{\"S\":\"x\"}}]}"));
	CHECK(deferred_same("{\"Items\":[{\"n\":12,\"m\":[3.5e1,-0]} , {\"t\":true}\n]}"));
	/* only the root's Items, and only objects in it */
	text = "{\"X\":{\"Items\":[{\"a\":1}]},\"Items\":[{\"Items\":[{\"b\":2}]},3]}";
	v = ddbjson_parse_ex(text, strlen(text), "Items", err, sizeof(err), &too_deep);
	items = ddbjson_get(v, "Items");
	CHECK(v != NULL && ddbjson_get(ddbjson_get(v, "X"), "Items")->elems[0].kind == DJ_OBJECT);
	CHECK(items->elems[0].kind == DJ_DEFERRED && items->elems[1].kind == DJ_NUMBER);
	CHECK(ddbjson_parse_deferred(v, &items->elems[0], err, sizeof(err)) &&
		  ddbjson_get(&items->elems[0], "Items")->elems[0].kind == DJ_OBJECT);
	ddbjson_free(v);

	/* faults inside an item: found when it is parsed, as the whole parse words them */
	CHECK(deferred_fails_as_whole("{\"Items\":[{\"a\":{\"S\":\"x\"}},{\"a\":tru}],\"Count\":2}", 1));
	CHECK(deferred_fails_as_whole("{\"Items\":[{\"a\":1,\"a\":2}]}", 0));
	CHECK(deferred_fails_as_whole("{\"Items\":[{\"a\":\"\x01\"}]}", 0));
	CHECK(deferred_fails_as_whole("{\"Items\":[{},{\"a\":1,}]}", 1));
	CHECK(deferred_fails_as_whole("{\"Items\":[{\"a\":\"\\q\"}]}", 0));
	/* and outside: the text ends inside an item, or a bracket closes it wrong */
	CHECK(rejects("{\"Items\":[{\"a\":\"x\"", "unexpected end of data at byte 18"));
	text = "{\"Items\":[{\"a\":\"x\"";
	v = ddbjson_parse_ex(text, strlen(text), "Items", err, sizeof(err), &too_deep);
	CHECK(v == NULL && strcmp(err, "unexpected end of data at byte 18") == 0);
	CHECK(deferred_same("{\"Items\":[{\"a\":1]}"));
	CHECK(deferred_same("{\"Items\":[{\"a\":[}]]}"));

	for (int round = 0; round < rounds; round++)
	{
		Buf			body;
		int			nitems = (int) (next_random(&state) % 4);

		buf_init(&body);
		buf_puts(&body, "{\"Count\":1,\"Items\":[");
		for (int i = 0; i < nitems; i++)
		{
			if (i > 0)
				buf_putc(&body, ',');
			if (next_random(&state) % 8 == 0)
				random_json(&body, &state, 2);
			else
			{
				buf_puts(&body, "{\"k\":");
				random_json(&body, &state, 3);
				buf_putc(&body, '}');
			}
		}
		buf_puts(&body, "],\"LastEvaluatedKey\":{\"k\":{\"S\":\"}\"}}}");
		if (next_random(&state) % 2)
		{
			static const char bytes[] = "\"{}[],:\\ 1a";
			size_t		at = next_random(&state) % body.len;
			char		byte = bytes[next_random(&state) % (sizeof(bytes) - 1)];

			switch (next_random(&state) % 3)
			{
				case 0:
					body.data[at] = byte;
					break;
				case 1:
					memmove(body.data + at, body.data + at + 1, body.len - at - 1);
					body.len--;
					break;
				case 2:
					buf_putc(&body, ' ');
					memmove(body.data + at + 1, body.data + at, body.len - at - 1);
					body.data[at] = byte;
					break;
			}
		}
		if (deferred_as_whole(body.data, body.len))
			same++;
		else if (failed++ < 3)
			printf("     differs: %.*s\n", (int) body.len, body.data);
		sfdw_free(body.data);
	}
	CHECK(same == rounds);
}

/*
 * A parse cut short by the allocator jumping out (palloc's out-of-memory
 * ERROR), at every allocation in turn: the tree's first block, its later
 * ones, the stack of pending values as it grows, the order that checks
 * many member names.  What sfdw_alloc gave out is freed as a memory
 * context would be, and LeakSanitizer reports anything else when the tests
 * end.
 */
static void
test_parse_cut_short(void)
{
	Buf			text;
	volatile int jumps = 0;
	volatile bool completed = false;

	buf_init(&text);
	buf_puts(&text, "{\"Items\":[");
	for (int i = 0; i < 300; i++)
		buf_puts(&text, i > 0 ? ",{}" : "{}");
	buf_putc(&text, ']');
	for (int i = 0; i < 40; i++)
		buf_printf(&text, ",\"k%d\":{\"S\":\"x\"}", i);
	buf_putc(&text, '}');
	for (volatile long budget = 0; budget < 200 && !completed; budget++)
	{
		jmp_buf		jump;
		char		err[SFDW_ERRLEN];

		unit_alloc_start(&jump, budget);
		if (setjmp(jump) == 0)
			completed = ddbjson_parse(text.data, text.len, err, sizeof(err)) != NULL;
		else
			jumps++;
		unit_alloc_end();
	}
	CHECK(jumps >= 5);
	CHECK(completed);
	sfdw_free(text.data);
}

void
suite_ddbjson(void)
{
	test_kinds();
	test_nesting();
	test_depth();
	test_member_order();
	test_strings();
	test_surrogates();
	test_string_places();
	test_whitespace();
	test_many_names();
	test_numbers();
	test_lookups();
	test_query_response();
	test_error_body();
	test_large_body();
	test_truncation();
	test_garbage();
	test_invalid();
	test_round_trip();
	test_lone_surrogate();
	test_json_number_length();
	test_number_values();
	test_deferred_items();
	test_parse_cut_short();
}
