/*-------------------------------------------------------------------------
 *
 * test_avorder.c
 *		Unit tests of DynamoDB's key order (avorder.c).
 *
 *-------------------------------------------------------------------------
 */
#include "avorder.h"
#include "unit.h"

/* An AttributeValue {"type": "text"} parsed from JSON. */
static DdbJson *
av(const char *json)
{
	char		err[128];

	return ddbjson_parse(json, strlen(json), err, sizeof(err));
}

/* Free a tree from av(). */
static void
av_free(DdbJson *j)
{
	if (j == NULL)
		return;
	for (int i = 0; i < j->n; i++)
	{
		if (j->keys)
			sfdw_free(j->keys[i]);
		if (j->elems[i].kind == DJ_OBJECT || j->elems[i].kind == DJ_ARRAY)
		{
			DdbJson    *inner = &j->elems[i];

			for (int k = 0; k < inner->n; k++)
			{
				if (inner->keys)
					sfdw_free(inner->keys[k]);
				sfdw_free(inner->elems[k].str);
			}
			sfdw_free(inner->keys);
			sfdw_free(inner->elems);
		}
		sfdw_free(j->elems[i].str);
	}
	sfdw_free(j->keys);
	sfdw_free(j->elems);
	sfdw_free(j->str);
	sfdw_free(j);
}

/* The sign of x. */
static int
sign(int x)
{
	return (x > 0) - (x < 0);
}

/* Check that compare(a, b) has the expected sign, both ways round. */
static void
check_order(const char *a, const char *b, int want)
{
	DdbJson    *ja = av(a);
	DdbJson    *jb = av(b);
	int			got = sign(avorder_compare(ja, jb));
	int			back = sign(avorder_compare(jb, ja));

	unit_check(got == want && back == -want, __FILE__, __LINE__, a);
	if (got != want || back != -want)
		printf("     %s vs %s: got %d / %d, want %d\n", a, b, got, back, want);
	av_free(ja);
	av_free(jb);
}

/* Check number comparison, both ways round. */
static void
check_number(const char *a, const char *b, int want)
{
	int			got = sign(avorder_number_cmp(a, b));
	int			back = sign(avorder_number_cmp(b, a));

	unit_check(got == want && back == -want, __FILE__, __LINE__, a);
	if (got != want || back != -want)
		printf("     %s vs %s: got %d / %d, want %d\n", a, b, got, back, want);
}

void
suite_avorder(void)
{
	/* numbers compare numerically, whatever their notation */
	check_number("1", "2", -1);
	check_number("10", "9", 1);
	check_number("-10", "-9", -1);
	check_number("-1", "1", -1);
	check_number("0", "-0.0", 0);
	check_number("0", "0.0001", -1);
	check_number("0", "-0.0001", 1);
	check_number("1.5", "1.50", 0);
	check_number("1.05", "1.5", -1);
	check_number("100", "1E+2", 0);
	check_number("1e2", "99.999", 1);
	check_number("0.001", "1E-3", 0);
	check_number("0.00999", "0.01", -1);
	check_number("12345678901234567890123456789012345678",
				 "12345678901234567890123456789012345679", -1);
	check_number("9.9999999999999999999999999999999999999E+125", "1E+125", 1);
	check_number("1E-130", "0", 1);
	check_number("-1E-130", "0", -1);
	check_number("00012", "12", 0);
	check_number("123.456", "123.4560001", -1);
	check_number("-123.456", "-123.4560001", 1);
	CHECK(avorder_number_cmp("abc", "1") == 0);
	CHECK(avorder_number_cmp("1.2.3", "1") == 0);

	/* strings by UTF-8 bytes, not by collation */
	check_order("{\"S\": \"B\"}", "{\"S\": \"a\"}", -1);
	check_order("{\"S\": \"a\"}", "{\"S\": \"ab\"}", -1);
	check_order("{\"S\": \"z\"}", "{\"S\": \"\\u00e9\"}", -1);
	check_order("{\"S\": \"\\u00e9\"}", "{\"S\": \"\\ud83d\\ude00\"}", -1);
	check_order("{\"S\": \"same\"}", "{\"S\": \"same\"}", 0);
	check_order("{\"S\": \"00000000000000000042#p\"}", "{\"S\": \"00000000000000000100#a\"}", -1);

	/* numbers numerically */
	check_order("{\"N\": \"9\"}", "{\"N\": \"10\"}", -1);
	check_order("{\"N\": \"-3\"}", "{\"N\": \"-20\"}", 1);

	/* binary by decoded bytes: "/w==" is 0xff, "AA==" is 0x00, "gA==" 0x80 */
	check_order("{\"B\": \"AA==\"}", "{\"B\": \"/w==\"}", -1);
	check_order("{\"B\": \"gA==\"}", "{\"B\": \"/w==\"}", -1);
	check_order("{\"B\": \"AAE=\"}", "{\"B\": \"AA==\"}", 1);

	/* missing values first */
	CHECK(avorder_compare(NULL, NULL) == 0);
	{
		DdbJson    *s = av("{\"S\": \"x\"}");

		CHECK(avorder_compare(NULL, s) < 0);
		CHECK(avorder_compare(s, NULL) > 0);
		av_free(s);
	}
}
