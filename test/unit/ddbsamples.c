/*-------------------------------------------------------------------------
 *
 * ddbsamples.c
 *		The samples and helpers the parser's and the shapes' unit tests
 *		share (see ddbsamples.h).
 *
 *-------------------------------------------------------------------------
 */
#include <string.h>

#include "ddbsamples.h"

const char	query_body[] =
"{\"ConsumedCapacity\":{\"CapacityUnits\":0.5,\"TableName\":\"orders\"},"
"\"Count\":2,"
"\"Items\":["
"{\"pk\":{\"S\":\"cust#1\"},\"sk\":{\"S\":\"order#2024-01-05\"},"
"\"total\":{\"N\":\"129.95\"},\"tags\":{\"SS\":[\"gift\",\"rush\"]},"
"\"blob\":{\"B\":\"AAEC/w==\"},\"paid\":{\"BOOL\":true},"
"\"note\":{\"NULL\":true},"
"\"lines\":{\"L\":[{\"M\":{\"sku\":{\"S\":\"A-1\"},\"qty\":{\"N\":\"2\"}}}]}},"
"{\"pk\":{\"S\":\"cust#1\"},\"sk\":{\"S\":\"order#2024-02-11\"},"
"\"total\":{\"N\":\"7\"}}],"
"\"LastEvaluatedKey\":{\"pk\":{\"S\":\"cust#1\"},"
"\"sk\":{\"S\":\"order#2024-02-11\"}},"
"\"ScannedCount\":2}";

DdbJson *
parse(const char *text, char *err, size_t errlen)
{
	return ddbjson_parse(text, strlen(text), err, errlen);
}
