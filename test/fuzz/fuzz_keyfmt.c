/*-------------------------------------------------------------------------
 *
 * fuzz_keyfmt.c
 *		libFuzzer target: key templates and the stored keys decoded with
 *		them (keyfmt.c).  The input is a template, a newline, and a key.
 *
 * A template that parses is rendered as a prefix and a base key with no
 * values known; a key that decodes has every field's text taken, is
 * rendered again from those texts and its shard, and the rendered key must
 * decode to the same column texts and shard (padding aside, decoding is
 * what rendering undoes; a {shard} of "06" is shard 6, rendered "6").
 * Time forms write one text of many a key may hold (2023-10-27T14:03:05Z
 * is rendered 2023-10-27T14:03:05+00:00 by isoformat): their texts need
 * not come back, but rendering what the rendered key decodes to must
 * give that key byte for byte.  A legacy key, read with a 0W field
 * narrower than W digits, is no key the template renders: rendering its
 * fields pads them, and the padded key may split otherwise where fields
 * hold the template's separators, so only its decoding is checked.
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>
#include <string.h>

#include "core/keyfmt.h"

int
LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	const char *nl = memchr(data, '\n', size);
	char	   *text;
	const char *key;
	size_t		keylen;
	char		err[256];
	KeyTemplate *t;
	KeySpan    *spans;
	KeySpan    *again;
	const char **values;
	const char **values2;
	long		shard = -1;
	long		shard2 = -1;
	Buf			out;
	Buf			out2;

	if (nl == NULL)
		return 0;
	text = sfdw_strndup((const char *) data, (size_t) (nl - (const char *) data));
	key = nl + 1;
	keylen = size - (size_t) (nl - (const char *) data) - 1;
	t = keyfmt_parse(text, err, sizeof(err));
	sfdw_free(text);
	if (t == NULL)
		return 0;

	buf_init(&out);
	(void) keyfmt_render_prefix(t, NULL, 0, &out, err, sizeof(err));
	(void) keyfmt_leading_column(t);

	spans = sfdw_alloc(sizeof(KeySpan) * t->nparts);
	again = sfdw_alloc(sizeof(KeySpan) * t->nparts);
	values = sfdw_alloc(sizeof(char *) * t->nparts);
	values2 = sfdw_alloc(sizeof(char *) * t->nparts);
	buf_init(&out2);
	/* no value known, no field known */
	if (keyfmt_known_fields(t, values) != 0)
		abort();
	if (keyfmt_decode(t, key, keylen, spans, &shard))
	{
		bool		legacy = false;

		for (int i = 0; i < t->nparts; i++)
		{
			if (spans[i].start > keylen || spans[i].len > keylen - spans[i].start)
				abort();
			if (t->parts[i].kind != KP_LITERAL)
				values[i] = keyfmt_field_text(t, i, key, &spans[i]);
			legacy |= spans[i].len < (size_t) t->parts[i].width;
		}
		/* known fields are counted among the fields */
		if (keyfmt_known_fields(t, values) > keyfmt_field_count(t))
			abort();
		buf_reset(&out);
		if (keyfmt_render(t, values, shard, &out, err, sizeof(err)) && !legacy)
		{
			if (!keyfmt_decode(t, out.data, out.len, again, &shard2) || shard2 != shard)
				abort();
			for (int i = 0; i < t->nparts; i++)
			{
				values2[i] = NULL;
				if (t->parts[i].kind != KP_COLUMN)
					continue;
				values2[i] = keyfmt_field_text(t, i, out.data, &again[i]);
				if (t->parts[i].form == KT_PLAIN && strcmp(values2[i], values[i]) != 0)
					abort();
			}
			buf_reset(&out2);
			if (!keyfmt_render(t, values2, shard2, &out2, err, sizeof(err)) ||
				out2.len != out.len || memcmp(out2.data, out.data, out.len) != 0)
				abort();
			for (int i = 0; i < t->nparts; i++)
				sfdw_free((char *) values2[i]);
		}
		buf_reset(&out);
		(void) keyfmt_render_base(t, values, &out, err, sizeof(err));
		buf_reset(&out);
		(void) keyfmt_render_prefix(t, values, t->nparts, &out, err, sizeof(err));
		for (int i = 0; i < t->nparts; i++)
			if (t->parts[i].kind != KP_LITERAL)
				sfdw_free((char *) values[i]);
	}
	sfdw_free(values);
	sfdw_free(values2);
	sfdw_free(out2.data);
	sfdw_free(again);
	sfdw_free(spans);
	sfdw_free(out.data);
	keyfmt_free(t);
	return 0;
}
