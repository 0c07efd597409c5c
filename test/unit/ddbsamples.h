/*-------------------------------------------------------------------------
 *
 * ddbsamples.h
 *		What the unit tests of the parser (test_ddbjson.c) and of
 *		DynamoDB's shapes (test_ddbshape.c) both read: a Query response as
 *		DynamoDB sends it, and a parse of a NUL-terminated text.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHARD_FDW_DDBSAMPLES_H
#define SHARD_FDW_DDBSAMPLES_H

#include <stddef.h>

#include "core/ddbjson.h"

/* A DynamoDB Query response, compact as the service sends it. */
extern const char query_body[];

/* Parse a NUL-terminated text; err receives the reason on failure. */
extern DdbJson *parse(const char *text, char *err, size_t errlen);

#endif							/* SHARD_FDW_DDBSAMPLES_H */
