/*-------------------------------------------------------------------------
 *
 * fuzz_response.c
 *		libFuzzer target: a DynamoDB response body through what the
 *		extension runs on every answer, ddbjson_parse_ex and
 *		ddbjson_check_response, and the message of an error body through
 *		ddb_failed_action.
 *
 * Beyond "no crash, no leak, no undefined behaviour" it checks what the
 * readers rely on: a response that passes the check still passes after
 * being written back with jw_tree and parsed again (the writer and the
 * parser agree), every item in it has S, N and B values that are strings,
 * and a failed check leaves its messages NUL-terminated.
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>
#include <string.h>

#include "ddbjson.h"

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

int
LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	char		err[256];
	bool		too_deep;
	DdbCheck	chk;
	DdbJson    *body = ddbjson_parse_ex((const char *) data, size, err, sizeof(err),
										&too_deep);

	if (body == NULL)
	{
		if (memchr(err, '\0', sizeof(err)) == NULL)
			abort();
		return 0;
	}
	if (ddb_failed_action(ddbjson_get_string(body, "message")) < -1)
		abort();
	if (ddbjson_check_response(body, &chk))
	{
		Buf			out;
		JsonWriter	w;
		DdbJson    *again;

		assert_items(ddbjson_get(body, "Items"));
		buf_init(&out);
		jw_init(&w, &out);
		jw_tree(&w, body);
		again = ddbjson_parse_ex(out.data, out.len, err, sizeof(err), &too_deep);
		if (again == NULL || !ddbjson_check_response(again, &chk))
			abort();
		ddbjson_free(again);
		sfdw_free(out.data);
	}
	else if (memchr(chk.reason, '\0', sizeof(chk.reason)) == NULL ||
			 memchr(chk.where, '\0', sizeof(chk.where)) == NULL ||
			 memchr(chk.attribute, '\0', sizeof(chk.attribute)) == NULL)
		abort();
	ddbjson_free(body);
	return 0;
}
