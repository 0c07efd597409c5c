/*-------------------------------------------------------------------------
 *
 * test_awsregion.c
 *		Unit tests of a region's endpoints (src/core/awsregion.c): every
 *		partition, FIPS and dual-stack, against the endpoints AWS's
 *		endpoint rules for DynamoDB give (the SDKs' published test cases).
 *
 *-------------------------------------------------------------------------
 */
#include "core/awsregion.h"
#include "unit.h"

typedef struct Case
{
	const char *region;
	bool		fips;
	bool		dualstack;
	const char *url;			/* NULL: refused */
} Case;

static const Case dynamodb_cases[] = {
	{"us-east-1", false, false, "https://dynamodb.us-east-1.amazonaws.com"},
	{"us-east-1", true, false, "https://dynamodb-fips.us-east-1.amazonaws.com"},
	{"us-east-1", false, true, "https://dynamodb.us-east-1.api.aws"},
	{"us-east-1", true, true, "https://dynamodb-fips.us-east-1.api.aws"},
	{"ap-south-2", true, true, "https://dynamodb-fips.ap-south-2.api.aws"},
	{"eu-west-3", false, false, "https://dynamodb.eu-west-3.amazonaws.com"},
	{"cn-north-1", false, false, "https://dynamodb.cn-north-1.amazonaws.com.cn"},
	{"cn-northwest-1", false, false, "https://dynamodb.cn-northwest-1.amazonaws.com.cn"},
	{"cn-north-1", true, false, "https://dynamodb-fips.cn-north-1.amazonaws.com.cn"},
	{"cn-north-1", false, true, "https://dynamodb.cn-north-1.api.amazonwebservices.com.cn"},
	{"cn-north-1", true, true, "https://dynamodb-fips.cn-north-1.api.amazonwebservices.com.cn"},
	{"us-gov-west-1", false, false, "https://dynamodb.us-gov-west-1.amazonaws.com"},
	{"us-gov-west-1", true, false, "https://dynamodb.us-gov-west-1.amazonaws.com"},
	{"us-gov-east-1", true, false, "https://dynamodb.us-gov-east-1.amazonaws.com"},
	{"us-gov-east-1", false, true, "https://dynamodb.us-gov-east-1.api.aws"},
	{"us-gov-east-1", true, true, "https://dynamodb-fips.us-gov-east-1.api.aws"},
	{"us-iso-east-1", false, false, "https://dynamodb.us-iso-east-1.c2s.ic.gov"},
	{"us-iso-west-1", false, false, "https://dynamodb.us-iso-west-1.c2s.ic.gov"},
	{"us-iso-east-1", true, false, "https://dynamodb-fips.us-iso-east-1.c2s.ic.gov"},
	{"us-iso-east-1", false, true, NULL},
	{"us-isob-east-1", false, false, "https://dynamodb.us-isob-east-1.sc2s.sgov.gov"},
	{"us-isob-east-1", true, false, "https://dynamodb-fips.us-isob-east-1.sc2s.sgov.gov"},
	{"us-isob-east-1", true, true, NULL},
	{"eu-isoe-west-1", false, false, "https://dynamodb.eu-isoe-west-1.cloud.adc-e.uk"},
	{"us-isof-south-1", false, false, "https://dynamodb.us-isof-south-1.csp.hci.ic.gov"},
	/* a region no partition names is aws's, as the SDKs resolve it */
	{"xx-moon-1", false, false, "https://dynamodb.xx-moon-1.amazonaws.com"},
	/* not a DNS label: refused, never put into a host name */
	{"", false, false, NULL},
	{"US-EAST-1", false, false, NULL},
	{"us-east-1.evil.example", false, false, NULL},
	{"us-east-1/x", false, false, NULL},
	{"-us-east-1", false, false, NULL},
	{"us-east-1-", false, false, NULL},
	{"a123456789012345678901234567890123456789012345678901234567890123", false, false, NULL},
};

/* Every case above, and an error message for each refusal. */
static void
test_dynamodb(void)
{
	for (size_t i = 0; i < sizeof(dynamodb_cases) / sizeof(dynamodb_cases[0]); i++)
	{
		const Case *c = &dynamodb_cases[i];
		char		url[256] = "";
		char		err[SFDW_ERRLEN] = "";
		bool		ok = awsregion_endpoint("dynamodb", c->region, c->fips, c->dualstack,
											url, sizeof(url), err, sizeof(err));

		CHECK(ok == (c->url != NULL));
		if (c->url)
			CHECK_STR(url, c->url);
		else
			CHECK(err[0] != '\0');
	}
}

/* STS follows the same rules: GovCloud's plain name is its FIPS endpoint. */
static void
test_sts(void)
{
	char		url[256];
	char		err[SFDW_ERRLEN];

	CHECK(awsregion_endpoint("sts", "eu-central-1", false, false, url, sizeof(url), err, sizeof(err)));
	CHECK_STR(url, "https://sts.eu-central-1.amazonaws.com");
	CHECK(awsregion_endpoint("sts", "us-east-2", true, false, url, sizeof(url), err, sizeof(err)));
	CHECK_STR(url, "https://sts-fips.us-east-2.amazonaws.com");
	CHECK(awsregion_endpoint("sts", "us-gov-west-1", true, false, url, sizeof(url), err, sizeof(err)));
	CHECK_STR(url, "https://sts.us-gov-west-1.amazonaws.com");
	CHECK(awsregion_endpoint("sts", "cn-northwest-1", false, false, url, sizeof(url), err, sizeof(err)));
	CHECK_STR(url, "https://sts.cn-northwest-1.amazonaws.com.cn");
}

/* A buffer too small is an error, never a truncated URL. */
static void
test_small_buffer(void)
{
	char		url[20];
	char		err[SFDW_ERRLEN];

	CHECK(!awsregion_endpoint("dynamodb", "us-east-1", false, false, url, sizeof(url), err, sizeof(err)));
	CHECK(strstr(err, "too long") != NULL);
}

void
suite_awsregion(void)
{
	test_dynamodb();
	test_sts();
	test_small_buffer();
}
