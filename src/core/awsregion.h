/*-------------------------------------------------------------------------
 *
 * awsregion.h
 *		A region's endpoint for an AWS service, by the rules of the AWS
 *		SDKs' endpoint resolution: the region's partition gives the DNS
 *		suffix, FIPS and dual-stack the host's shape.
 *
 *	partition	regions				suffix				dual-stack suffix
 *	aws			(the rest)			amazonaws.com		api.aws
 *	aws-cn		cn-*				amazonaws.com.cn	api.amazonwebservices.com.cn
 *	aws-us-gov	us-gov-*			amazonaws.com		api.aws
 *	aws-iso		us-iso-*			c2s.ic.gov			(none)
 *	aws-iso-b	us-isob-*			sc2s.sgov.gov		(none)
 *	aws-iso-e	eu-isoe-*			cloud.adc-e.uk		(none)
 *	aws-iso-f	us-isof-*			csp.hci.ic.gov		(none)
 *
 * The endpoint is https://<service>.<region>.<suffix>, the dual-stack
 * suffix with dual-stack; FIPS makes the service's label <service>-fips,
 * except in aws-us-gov without dual-stack, whose plain names are FIPS
 * endpoints already.  Dual-stack where the partition has none, and a
 * region that is not a DNS label, are errors.
 *
 * Plain C (see pure.h).
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHARD_FDW_AWSREGION_H
#define SHARD_FDW_AWSREGION_H

#include "core/pure.h"

/*
 * The endpoint of service (a DNS label: "dynamodb", "sts") in region,
 * written into url (urlsize bytes; 256 hold any); false with the reason in
 * err (errlen bytes) when there is none.
 */
extern bool awsregion_endpoint(const char *service, const char *region, bool fips,
							   bool dualstack, char *url, size_t urlsize,
							   char *err, size_t errlen);

#endif							/* SHARD_FDW_AWSREGION_H */
