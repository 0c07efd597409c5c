/*-------------------------------------------------------------------------
 *
 * test_jsonwrite.c
 *		Unit tests of jsonwrite.c: JSON string escaping, the writer
 *		(JsonWriter) and base64.
 *
 * Every buffer and base64 result is freed again so that a leak checker
 * sees nothing.
 *
 *-------------------------------------------------------------------------
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "core/ddbjson.h"
#include "unit.h"

/* Write the AttributeValue {"type": "text"}. */
static void
write_av(JsonWriter *w, const char *type, const char *text)
{
	jw_begin_object(w);
	jw_key(w, type);
	jw_cstring(w, text);
	jw_end_object(w);
}

/* Write the AttributeValue {"type": json}, json written as it is. */
static void
write_av_raw(JsonWriter *w, const char *type, const char *json)
{
	jw_begin_object(w);
	jw_key(w, type);
	jw_raw(w, json);
	jw_end_object(w);
}

static void
test_escape(void)
{
	Buf			out;

	buf_init(&out);
	json_escape(&out, "a\"\\\n\t\r\b\f\x01\x1f\x7f/\xc3\xa9\0z", 16);
	CHECK_STR(out.data,
			  "\"a\\\"\\\\\\n\\t\\r\\b\\f\\u0001\\u001f"
			  "\x7f/\xc3\xa9\\u0000z\"");
	buf_reset(&out);
	json_escape(&out, "", 0);
	CHECK_STR(out.data, "\"\"");
	buf_reset(&out);
	json_escape(&out, "\0", 1);
	CHECK_STR(out.data, "\"\\u0000\"");
	buf_reset(&out);
	json_escape(&out, "plain text", 10);
	CHECK_STR(out.data, "\"plain text\"");
	sfdw_free(out.data);
}

/* The escaped form of one byte, as RFC 8259 and json_escape write it. */
static void
escape_byte(Buf *out, unsigned char c)
{
	static const char short_form[] = {['"'] = '"', ['\\'] = '\\', ['\b'] = 'b',
	['\t'] = 't', ['\n'] = 'n', ['\f'] = 'f', ['\r'] = 'r'};

	if (c < sizeof(short_form) && short_form[c] != '\0')
		buf_printf(out, "\\%c", short_form[c]);
	else if (c < 0x20)
		buf_printf(out, "\\u%04x", c);
	else
		buf_putc(out, (char) c);
}

/*
 * Strings written eight bytes a step stop at the right byte wherever it
 * lies, and read back: every length up to 24, a stopping byte at every
 * offset, among plain bytes on both sides of every lane boundary value
 * (0x1F/0x20, 0x7F/0x80, 0xFF, and the neighbours of '"' and '\\').
 */
static void
test_plain_runs(void)
{
	static const unsigned char plain[] = {' ', '!', '#', '[', ']', 'a', 0x7f, 0x80, 0xc3, 0xff};
	static const unsigned char stops[] = {'"', '\\', 0x00, 0x01, 0x1f, '\n'};
	int			bad = 0;

	for (size_t len = 0; len <= 24; len++)
		for (size_t at = 0; at <= len; at++)
			for (size_t k = 0; k < sizeof(stops); k++)
				for (size_t f = 0; f < sizeof(plain); f++)
				{
					char		text[32];
					Buf			want;
					Buf			got;
					Buf			doc;
					char		err[128];
					DdbJson    *v;

					for (size_t i = 0; i < len; i++)
						text[i] = (char) plain[(f + i) % sizeof(plain)];
					if (at < len)
						text[at] = (char) stops[k];
					buf_init(&want);
					buf_putc(&want, '"');
					for (size_t i = 0; i < len; i++)
						escape_byte(&want, (unsigned char) text[i]);
					buf_putc(&want, '"');
					buf_init(&got);
					json_escape(&got, text, len);
					bad += got.len != want.len || memcmp(got.data, want.data, got.len) != 0;
					/* and the escaped text reads back as the bytes */
					buf_init(&doc);
					buf_append(&doc, "[", 1);
					buf_append(&doc, got.data, got.len);
					buf_append(&doc, "]", 1);
					v = ddbjson_parse(doc.data, doc.len, err, sizeof(err));
					bad += v == NULL || v->elems[0].len != len ||
						memcmp(v->elems[0].str, text, len) != 0;
					ddbjson_free(v);
					/* a raw control character is refused where it is */
					if (at < len && stops[k] < 0x20)
					{
						buf_reset(&doc);
						buf_append(&doc, "\"", 1);
						buf_append(&doc, text, len);
						buf_append(&doc, "\"", 1);
						bad += ddbjson_parse(doc.data, doc.len, err, sizeof(err)) != NULL;
					}
					sfdw_free(want.data);
					sfdw_free(got.data);
					sfdw_free(doc.data);
				}
	CHECK(bad == 0);
}

static void
test_writer(void)
{
	static const unsigned char blob[] = {0x00, 0x01, 0x02, 0xff};
	Buf			out;
	JsonWriter	w;
	char	   *b64;

	buf_init(&out);
	jw_init(&w, &out);
	jw_begin_object(&w);
	jw_key(&w, "TableName");
	jw_cstring(&w, "orders");
	jw_key(&w, "Item");
	jw_begin_object(&w);

	jw_key(&w, "pk");
	write_av(&w, "S", "cust#1");

	jw_key(&w, "total");
	write_av(&w, "N", "129.95");

	jw_key(&w, "blob");
	jw_begin_object(&w);
	jw_key(&w, "B");
	b64 = base64_encode(blob, sizeof(blob), NULL);
	jw_cstring(&w, b64);
	sfdw_free(b64);
	jw_end_object(&w);

	jw_key(&w, "paid");
	write_av_raw(&w, "BOOL", "true");

	jw_key(&w, "note");
	write_av_raw(&w, "NULL", "true");

	jw_key(&w, "addr");
	jw_begin_object(&w);
	jw_key(&w, "M");
	jw_begin_object(&w);
	jw_key(&w, "city");
	write_av(&w, "S", "Z\xc3\xbcrich");
	jw_key(&w, "zip");
	write_av(&w, "N", "8001");
	jw_end_object(&w);
	jw_end_object(&w);

	jw_key(&w, "lines");
	jw_begin_object(&w);
	jw_key(&w, "L");
	jw_begin_array(&w);
	jw_begin_object(&w);
	jw_key(&w, "S");
	jw_string(&w, "a\"b\0c", 5);
	jw_end_object(&w);
	write_av(&w, "N", "-1E+2");
	jw_end_array(&w);
	jw_end_object(&w);

	jw_key(&w, "tags");
	jw_begin_object(&w);
	jw_key(&w, "SS");
	jw_begin_array(&w);
	jw_cstring(&w, "gift");
	jw_cstring(&w, "rush");
	jw_end_array(&w);
	jw_end_object(&w);

	jw_end_object(&w);
	jw_key(&w, "ConditionExpression");
	jw_cstring(&w, "attribute_not_exists(#pk)");
	jw_key(&w, "ExpressionAttributeNames");
	jw_begin_object(&w);
	jw_key(&w, "#pk");
	jw_cstring(&w, "pk");
	jw_end_object(&w);
	jw_end_object(&w);

	CHECK_STR(out.data,
			  "{\"TableName\":\"orders\",\"Item\":{"
			  "\"pk\":{\"S\":\"cust#1\"},"
			  "\"total\":{\"N\":\"129.95\"},"
			  "\"blob\":{\"B\":\"AAEC/w==\"},"
			  "\"paid\":{\"BOOL\":true},"
			  "\"note\":{\"NULL\":true},"
			  "\"addr\":{\"M\":{\"city\":{\"S\":\"Z\xc3\xbcrich\"},"
			  "\"zip\":{\"N\":\"8001\"}}},"
			  "\"lines\":{\"L\":[{\"S\":\"a\\\"b\\u0000c\"},"
			  "{\"N\":\"-1E+2\"}]},"
			  "\"tags\":{\"SS\":[\"gift\",\"rush\"]}},"
			  "\"ConditionExpression\":\"attribute_not_exists(#pk)\","
			  "\"ExpressionAttributeNames\":{\"#pk\":\"pk\"}}");
	CHECK(w.depth == 0);
	CHECK(out.len == strlen(out.data));

	/* Every value kind as array elements. */
	buf_reset(&out);
	jw_init(&w, &out);
	jw_begin_array(&w);
	jw_int(&w, LLONG_MIN);
	jw_int(&w, 0);
	jw_raw(&w, "1.5");
	jw_begin_object(&w);
	jw_end_object(&w);
	jw_begin_array(&w);
	jw_end_array(&w);
	jw_null(&w);
	jw_bool(&w, false);
	jw_cstring(&w, "x");
	jw_end_array(&w);
	CHECK_STR(out.data, "[-9223372036854775808,0,1.5,{},[],null,false,\"x\"]");

	/* A request body's beginning and end. */
	sfdw_free(out.data);
	jw_begin_request(&w, &out, "t");
	{
		size_t		len = 0;
		char	   *body = jw_end_request(&w, &len);

		CHECK_STR(body, "{\"TableName\":\"t\",\"ReturnConsumedCapacity\":\"TOTAL\"}");
		CHECK(len == strlen(body));
		CHECK(w.depth == 0);
	}

	/* A scalar alone. */
	buf_reset(&out);
	jw_init(&w, &out);
	jw_int(&w, LLONG_MAX);
	CHECK_STR(out.data, "9223372036854775807");
	sfdw_free(out.data);
}

static void
test_writer_depth(void)
{
	Buf			out;
	Buf			want;
	JsonWriter	w;
	int			levels = JSONW_MAX_DEPTH - 1;
	int			i;

	/* Every level keeps its own commas, down to the deepest allowed. */
	buf_init(&out);
	buf_init(&want);
	jw_init(&w, &out);
	for (i = 0; i < levels; i++)
	{
		jw_begin_array(&w);
		jw_int(&w, i);
		buf_printf(&want, "[%d,", i);
	}
	jw_int(&w, -1);
	buf_puts(&want, "-1");
	for (i = levels - 1; i >= 0; i--)
	{
		jw_end_array(&w);
		jw_int(&w, i);
		buf_printf(&want, "],%d", i);
	}
	CHECK(w.depth == 0);
	CHECK_STR(out.data, want.data);
	sfdw_free(out.data);
	sfdw_free(want.data);
}

static void
test_base64(void)
{
	static const char *const plain[] = {
		"", "f", "fo", "foo", "foob", "fooba", "foobar"
	};
	static const char *const coded[] = {
		"", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"
	};
	static const char *const bad[] = {
		"Zg=", "Zg", "Zg=a", "Z===", "====", "Zm9v!A==", "Zh==", "Zm9=",
		"Zm9v\n", "Zm-v", "Zm_v", "Zm9 ", "=Zm9", "Zg==Zg==", "Zm9vYg=\n"
	};
	unsigned char all[256];
	unsigned char sentinel[1];
	unsigned char *dec;
	size_t		declen;
	char	   *enc;
	size_t		enclen;
	size_t		i;
	int			ok;

	for (i = 0; i < sizeof(plain) / sizeof(plain[0]); i++)
	{
		enc = base64_encode((const unsigned char *) plain[i], strlen(plain[i]),
							&enclen);
		CHECK_STR(enc, coded[i]);
		CHECK(enclen == strlen(coded[i]));
		sfdw_free(enc);

		ok = base64_decode(coded[i], strlen(coded[i]), &dec, &declen);
		CHECK(ok && declen == strlen(plain[i]) &&
			  memcmp(dec, plain[i], declen) == 0);
		sfdw_free(dec);
	}

	for (i = 0; i < 256; i++)
		all[i] = (unsigned char) (255 - i);
	enc = base64_encode(all, sizeof(all), &enclen);
	CHECK(enclen == 344);
	ok = base64_decode(enc, enclen, &dec, &declen);
	CHECK(ok && declen == 256 && memcmp(dec, all, 256) == 0);
	sfdw_free(enc);
	sfdw_free(dec);

	ok = 1;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
	{
		dec = sentinel;
		declen = 99;
		if (base64_decode(bad[i], strlen(bad[i]), &dec, &declen) ||
			dec != NULL || declen != 0)
		{
			printf("     accepted base64: %s\n", bad[i]);
			ok = 0;
		}
	}
	CHECK(ok);
	CHECK(!base64_decode("Zm9v\0Zm9", 8, &dec, &declen));
}

static void
test_base64_check(void)
{
	CHECK(base64_decode("", 0, NULL, NULL));
	CHECK(base64_decode("AAEC/w==", 8, NULL, NULL));
	CHECK(!base64_decode("AAEC/x==", 8, NULL, NULL));
	CHECK(!base64_decode("A===", 4, NULL, NULL));
	CHECK(!base64_decode("AA=A", 4, NULL, NULL));
	CHECK(!base64_decode("AAE", 3, NULL, NULL));
}

void
suite_jsonwrite(void)
{
	test_escape();
	test_plain_runs();
	test_writer();
	test_writer_depth();
	test_base64();
	test_base64_check();
}
