/*-------------------------------------------------------------------------
 *
 * awsregion.c
 *		A region's endpoint for an AWS service (see awsregion.h).
 *
 *-------------------------------------------------------------------------
 */
#include "core/awsregion.h"

#include <stdio.h>
#include <string.h>

typedef struct Partition
{
	const char *name;
	const char *prefix;			/* of its regions' names; "" for the rest */
	const char *suffix;
	const char *dualstack_suffix;	/* NULL: no dual-stack endpoints */
} Partition;

/* Longer prefixes first: us-isob- before us-iso-, the default last. */
static const Partition partitions[] = {
	{"aws-cn", "cn-", "amazonaws.com.cn", "api.amazonwebservices.com.cn"},
	{"aws-us-gov", "us-gov-", "amazonaws.com", "api.aws"},
	{"aws-iso-b", "us-isob-", "sc2s.sgov.gov", NULL},
	{"aws-iso-f", "us-isof-", "csp.hci.ic.gov", NULL},
	{"aws-iso", "us-iso-", "c2s.ic.gov", NULL},
	{"aws-iso-e", "eu-isoe-", "cloud.adc-e.uk", NULL},
	{"aws", "", "amazonaws.com", "api.aws"},
};

/* s is a DNS label: 1 to 63 lower-case letters, digits and inner hyphens. */
static bool
dns_label(const char *s)
{
	size_t		len = strlen(s);

	if (len == 0 || len > 63 || s[0] == '-' || s[len - 1] == '-')
		return false;
	for (size_t i = 0; i < len; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
			return false;
	return true;
}

/* See awsregion.h. */
bool
awsregion_endpoint(const char *service, const char *region, bool fips, bool dualstack,
				   char *url, size_t urlsize, char *err, size_t errlen)
{
	const Partition *p = partitions;
	int			len;

	if (!dns_label(region))
	{
		snprintf(err, errlen, "region \"%s\" is not a region's name (lower-case letters, digits and hyphens)",
				 region);
		return false;
	}
	while (strncmp(region, p->prefix, strlen(p->prefix)) != 0)
		p++;
	if (dualstack && p->dualstack_suffix == NULL)
	{
		snprintf(err, errlen, "partition %s of region %s has no dual-stack endpoints",
				 p->name, region);
		return false;
	}
	len = snprintf(url, urlsize, "https://%s%s.%s.%s", service,
				   fips && (dualstack || strcmp(p->name, "aws-us-gov") != 0) ? "-fips" : "",
				   region, dualstack ? p->dualstack_suffix : p->suffix);
	if (len < 0 || (size_t) len >= urlsize)
	{
		snprintf(err, errlen, "endpoint of %s in region %s is too long", service, region);
		return false;
	}
	return true;
}
