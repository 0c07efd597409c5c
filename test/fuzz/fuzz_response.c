/*-------------------------------------------------------------------------
 *
 * fuzz_response.c
 *		libFuzzer target: a DynamoDB response body through what the
 *		extension runs on every answer, ddbjson_parse_ex and
 *		ddbjson_check_response, and the message of an error body through
 *		ddb_failed_action.
 *
 * Beyond "no crash, no leak, no undefined behaviour" it checks what the
 * readers rely on: any text that parses is written back by jw_tree as text
 * that parses and is written back the same (the writer and the parser
 * agree), a response that passes the check still passes after that, every
 * item in it has S, N and B values that are strings, a failed check
 * leaves its messages NUL-terminated, every JSON number reads as the
 * double strtod reads (json_number_value's fast path), and a read as a
 * scan's (the objects of Items deferred, the envelope checked, then each
 * item parsed and checked as it is read) parses exactly what the whole
 * parse does, into the same tree, and passes exactly when the whole check
 * does.
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>
#include <string.h>

#include "core/ddbjson.h"

/* Abort unless every AttributeValue of a checked tree has its shape. */
static void
assert_av(const DdbJson *av)
{
	const DdbJson *v;
	const char *tag;

	if (av->kind != DJ_OBJECT || av->n != 1)
		abort();
	tag = av->keys[0];
	v = &av->elems[0];
	if ((strcmp(tag, "S") == 0 || strcmp(tag, "N") == 0 || strcmp(tag, "B") == 0) &&
		(v->kind != DJ_STRING || v->str == NULL))
		abort();
	if (strcmp(tag, "M") == 0 || strcmp(tag, "L") == 0)
		for (int i = 0; i < v->n; i++)
			assert_av(&v->elems[i]);
}

static void
assert_items(const DdbJson *items)
{
	if (items == NULL)
		return;
	if (items->kind != DJ_ARRAY)
		abort();
	for (int i = 0; i < items->n; i++)
		for (int k = 0; k < items->elems[i].n; k++)
			assert_av(&items->elems[i].elems[k]);
}

/* Abort unless every number of the tree reads as strtod reads it. */
static void
assert_numbers(const DdbJson *v)
{
	if (v->kind == DJ_NUMBER)
	{
		double		fast = json_number_value(v->str, v->len);
		double		slow = strtod(v->str, NULL);

		if (memcmp(&fast, &slow, sizeof(double)) != 0)
			abort();
	}
	if (v->kind == DJ_OBJECT || v->kind == DJ_ARRAY)
		for (int i = 0; i < v->n; i++)
			assert_numbers(&v->elems[i]);
}

/*
 * Parse data as a scan does, the objects of Items deferred, and read the
 * tree as it does: the envelope checked, then each item parsed and
 * checked in turn.  Returns the tree, or NULL when the text or an item
 * fails to parse; *passes says whether every check passed.
 */
static DdbJson *
read_as_scan(const unsigned char *data, size_t size, bool *passes)
{
	char		err[256];
	bool		too_deep;
	DdbCheck	chk;
	DdbJson    *lazy = ddbjson_parse_ex((const char *) data, size, "Items",
										err, sizeof(err), &too_deep);
	DdbJson    *items = ddbjson_get(lazy, "Items");
	const DdbJson *lek = ddbjson_get(lazy, "LastEvaluatedKey");

	*passes = lazy != NULL && ddbjson_check_envelope(lazy, &chk);
	for (int i = 0; items != NULL && items->kind == DJ_ARRAY && i < items->n; i++)
	{
		if (!ddbjson_parse_deferred(lazy, &items->elems[i], err, sizeof(err)))
		{
			if (memchr(err, '\0', sizeof(err)) == NULL)
				abort();
			ddbjson_free(lazy);
			return NULL;
		}
		if (*passes)
			*passes = ddbjson_check_page_item(items->elems, items->n, lek, i, &chk);
	}
	return lazy;
}

int
LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	char		err[256];
	bool		too_deep;
	DdbCheck	chk;
	DdbJson    *body = ddbjson_parse_ex((const char *) data, size, NULL, err,
										sizeof(err), &too_deep);
	bool		scan_passes;
	DdbJson    *lazy = read_as_scan(data, size, &scan_passes);
	DdbJson    *again;
	char	   *text;
	char	   *text_again;
	size_t		len;
	size_t		len_again;

	if ((body == NULL) != (lazy == NULL))
		abort();
	if (body == NULL)
	{
		if (memchr(err, '\0', sizeof(err)) == NULL)
			abort();
		return 0;
	}
	if (ddb_failed_action(ddbjson_get_string(body, "message")) < -1)
		abort();
	assert_numbers(body);

	/* Whatever parses is written back as text that parses to the same. */
	text = ddbjson_text(body, &len);
	again = ddbjson_parse_ex(text, len, NULL, err, sizeof(err), &too_deep);
	if (again == NULL)
		abort();
	text_again = ddbjson_text(again, &len_again);
	if (len_again != len || memcmp(text, text_again, len) != 0)
		abort();
	sfdw_free(text_again);
	/* ... and so is the tree read as a scan reads it */
	text_again = ddbjson_text(lazy, &len_again);
	if (len_again != len || memcmp(text, text_again, len) != 0)
		abort();
	sfdw_free(text_again);
	sfdw_free(text);
	ddbjson_free(lazy);

	if (scan_passes != ddbjson_check_response(body, &chk))
		abort();
	if (ddbjson_check_response(body, &chk))
	{
		assert_items(ddbjson_get(body, "Items"));
		if (!ddbjson_check_response(again, &chk))
			abort();
	}
	else if (memchr(chk.reason, '\0', sizeof(chk.reason)) == NULL ||
			 memchr(chk.where, '\0', sizeof(chk.where)) == NULL ||
			 memchr(chk.attribute, '\0', sizeof(chk.attribute)) == NULL)
		abort();
	ddbjson_free(again);
	ddbjson_free(body);
	return 0;
}
