/*-------------------------------------------------------------------------
 *
 * avorder.h
 *		DynamoDB's order of key values: S by UTF-8 bytes, N numerically, B
 *		by bytes.  The shard merge orders items by it.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHARD_FDW_AVORDER_H
#define SHARD_FDW_AVORDER_H

#include "core/ddbjson.h"

/*
 * Compare two decimal number texts as DynamoDB N values ("-1.5", "2E+3",
 * "0.001"): negative, zero or positive like strcmp.  Texts that are not
 * numbers compare as zero.
 */
extern int	avorder_number_cmp(const char *a, const char *b);

/*
 * Compare two scalar AttributeValues ({"S": ...}, {"N": ...}, {"B": ...})
 * in DynamoDB's order.  A NULL or malformed value sorts first; values of
 * different types compare by type name (S, N and B keys never mix).
 */
extern int	avorder_compare(const DdbJson *a, const DdbJson *b);

#endif							/* SHARD_FDW_AVORDER_H */
