/*-------------------------------------------------------------------------
 *
 * test_avorder.c
 *		Unit tests of DynamoDB's key order (avorder.c).
 *
 *-------------------------------------------------------------------------
 */
#include "core/avorder.h"
#include "unit.h"

/* An AttributeValue {"type": "text"} parsed from JSON. */
/* Two values and the sign their comparison must have. */
typedef struct Comparison
{
	const char *a;
	const char *b;
	int			want;
} Comparison;

static DdbJson *
av(const char *json)
{
	char		err[128];

	return ddbjson_parse(json, strlen(json), err, sizeof(err));
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
	ddbjson_free(ja);
	ddbjson_free(jb);
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
	{
		static const Comparison cases[] = {
			{"1", "2", -1},
			{"10", "9", 1},
			{"-10", "-9", -1},
			{"-1", "1", -1},
			{"0", "-0.0", 0},
			{"0", "0.0001", -1},
			{"0", "-0.0001", 1},
			{"1.5", "1.50", 0},
			{"1.05", "1.5", -1},
			{"100", "1E+2", 0},
			{"1e2", "99.999", 1},
			{"0.001", "1E-3", 0},
			{"0.00999", "0.01", -1},
			{"12345678901234567890123456789012345678", "12345678901234567890123456789012345679", -1},
			{"9.9999999999999999999999999999999999999E+125", "1E+125", 1},
			{"1E-130", "0", 1},
			{"-1E-130", "0", -1},
			{"00012", "12", 0},
			{"123.456", "123.4560001", -1},
			{"-123.456", "-123.4560001", 1},
		};

		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
			check_number(cases[i].a, cases[i].b, cases[i].want);
	}
	CHECK(avorder_number_cmp("abc", "1") == 0);
	CHECK(avorder_number_cmp("1.2.3", "1") == 0);

	/* strings by UTF-8 bytes, not by collation */
	{
		static const Comparison cases[] = {
			{"{\"S\": \"B\"}", "{\"S\": \"a\"}", -1},
			{"{\"S\": \"a\"}", "{\"S\": \"ab\"}", -1},
			{"{\"S\": \"z\"}", "{\"S\": \"\\u00e9\"}", -1},
			{"{\"S\": \"\\u00e9\"}", "{\"S\": \"\\ud83d\\ude00\"}", -1},
			{"{\"S\": \"same\"}", "{\"S\": \"same\"}", 0},
			{"{\"S\": \"00000000000000000042#p\"}", "{\"S\": \"00000000000000000100#a\"}", -1},
		};

		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
			check_order(cases[i].a, cases[i].b, cases[i].want);
	}

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
		ddbjson_free(s);
	}
}
