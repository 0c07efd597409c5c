/*-------------------------------------------------------------------------
 *
 * describe.c
 *		DescribeTable: the key attributes of a DynamoDB table or index,
 *		and its size; DescribeTimeToLive: its TTL attribute.
 *
 * A foreign table's keys and TTL attribute are asked for when it is
 * declared (see sql/ddl.c); everything after that (planning, EXPLAIN,
 * every read and write, the errors they raise) reads the catalogs only.
 *
 *-------------------------------------------------------------------------
 */
#include "dynamo/dynamo.h"

#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"


/*
 * The HASH and RANGE attributes of a KeySchema array, into *pk and *sk
 * (left alone when absent), as palloc'd copies.
 */
void
describe_key_schema(const DdbJson *schema, const char **pk, const char **sk)
{
	for (int i = 0; schema && schema->kind == DJ_ARRAY && i < schema->n; i++)
	{
		const char *name = ddbjson_get_string(&schema->elems[i], "AttributeName");
		const char *type = ddbjson_get_string(&schema->elems[i], "KeyType");

		if (name && type && strcmp(type, "HASH") == 0)
			*pk = pstrdup(name);
		else if (name && type && strcmp(type, "RANGE") == 0)
			*sk = pstrdup(name);
	}
}

/*
 * The description of index (a GSI or LSI) in a DescribeTable "Table"
 * object, or NULL when the table has no such index.
 */
static const DdbJson *
index_description(const DdbJson *desc, const char *index)
{
	const char *lists[] = {"GlobalSecondaryIndexes", "LocalSecondaryIndexes"};

	for (size_t l = 0; l < lengthof(lists); l++)
	{
		const DdbJson *idx = ddbjson_get(desc, lists[l]);

		for (int i = 0; idx && idx->kind == DJ_ARRAY && i < idx->n; i++)
		{
			const char *name = ddbjson_get_string(&idx->elems[i], "IndexName");

			if (name && strcmp(name, index) == 0)
				return &idx->elems[i];
		}
	}
	return NULL;
}

/*
 * The KeySchema of index (a GSI or LSI) in a DescribeTable "Table" object,
 * or NULL when the table has no such index.
 */
static const DdbJson *
index_key_schema(const DdbJson *desc, const char *index)
{
	return ddbjson_get(index_description(desc, index), "KeySchema");
}

/*
 * The "Table" object of DynamoDB table "table" from DescribeTable through
 * a new group of conn, which lives as long as *group (the caller frees
 * it); the request's failure is raised.
 */
static const DdbJson *
describe_table(DdbConn *conn, const char *table, DdbGroup **group)
{
	size_t		len;
	char	   *body = request_describe(table, &len);

	*group = ddb_group_create(conn, 1);
	return ddbjson_get(ddb_call(*group, "DescribeTable", body, len), "Table");
}

/*
 * The partition and sort key attributes of DynamoDB table "table", or of
 * its index "index" when that is not NULL, asked with DescribeTable on
 * serverid with the current user's credentials: true, with *sk NULL when
 * there is no sort key; a table without the index is an error.  When
 * DynamoDB did not answer, false with why in *why, unless strict, when
 * that is an error; a table that does not exist gives *why NULL.  A
 * DescribeTable that fails is not retried when not strict: a declaration
 * does not wait on an unreachable endpoint.
 */
bool
describe_keys(Oid serverid, const char *table, const char *index, bool strict,
			  const char **pk, const char **sk, char **why)
{
	DdbGroup   *group;
	size_t		len;
	char	   *body = request_describe(table, &len);
	DdbRequest *req;
	const DdbJson *schema;

	group = ddb_group_create(shard_get_connection(serverid, GetUserId()), 1);
	req = ddb_request_create(group, "DescribeTable", body, len);
	if (!strict)
		req->max_retries = 0;
	ddb_submit(req);
	ddb_wait_for(req);
	*pk = NULL;
	*sk = NULL;
	*why = NULL;
	if (req->status != DDB_OK)
	{
		if (strict)
			ddb_report_error(req);
		if (strcmp(req->error_type, "ResourceNotFoundException") != 0)
			*why = psprintf("%s: %s", req->error_type, req->error_message);
		ddb_group_free(group);
		return false;
	}
	schema = ddbjson_get(ddbjson_get(req->response, "Table"), "KeySchema");
	if (index)
		schema = index_key_schema(ddbjson_get(req->response, "Table"), index);
	describe_key_schema(schema, pk, sk);
	ddb_group_free(group);
	if (*pk == NULL)
		ereport(ERROR,
				(errcode(index ? ERRCODE_FDW_TABLE_NOT_FOUND : ERRCODE_FDW_ERROR),
				 index ?
				 errmsg("DynamoDB table \"%s\" has no index \"%s\"", table, index) :
				 errmsg("DescribeTable of \"%s\" gave no partition key", table)));
	return *pk != NULL;
}

/*
 * The TTL attribute of DynamoDB table "table", asked with DescribeTimeToLive
 * on serverid with the current user's credentials, not retried (a
 * declaration does not wait on an unreachable endpoint): true, with
 * *attribute the attribute when TTL is enabled or being enabled, NULL when
 * it is disabled or being disabled (DynamoDB deletes no item by it then);
 * false when DynamoDB did not answer, with why in *why (NULL when the table
 * does not exist).
 */
bool
describe_ttl(Oid serverid, const char *table, const char **attribute, char **why)
{
	DdbGroup   *group;
	size_t		len;
	char	   *body = request_describe(table, &len);
	DdbRequest *req;
	const DdbJson *desc;
	const char *status;
	const char *name;

	group = ddb_group_create(shard_get_connection(serverid, GetUserId()), 1);
	req = ddb_request_create(group, "DescribeTimeToLive", body, len);
	req->max_retries = 0;
	ddb_submit(req);
	ddb_wait_for(req);
	*attribute = NULL;
	*why = NULL;
	if (req->status != DDB_OK)
	{
		if (strcmp(req->error_type, "ResourceNotFoundException") != 0)
			*why = psprintf("%s: %s", req->error_type, req->error_message);
		ddb_group_free(group);
		return false;
	}
	desc = ddbjson_get(req->response, "TimeToLiveDescription");
	status = ddbjson_get_string(desc, "TimeToLiveStatus");
	name = ddbjson_get_string(desc, "AttributeName");
	if (status && name && name[0] != '\0' &&
		(strcmp(status, "ENABLED") == 0 || strcmp(status, "ENABLING") == 0))
		*attribute = pstrdup(name);
	ddb_group_free(group);
	return true;
}

/* A number of a description, or -1 when it has none. */
static double
described_number(const DdbJson *desc, const char *key)
{
	return ddbjson_get(desc, key) ? ddbjson_get_number(desc, key) : -1;
}

/*
 * What DescribeTable says of the DynamoDB table (or index) foreign table t
 * reads: its ItemCount into *items and its size in bytes into *bytes (-1
 * when absent).  DynamoDB updates both about every six hours.
 */
void
shard_describe_size(ShardTable *t, double *items, double *bytes)
{
	DdbGroup   *group;
	const DdbJson *desc = describe_table(shard_get_connection(GetForeignTable(t->relid)->serverid,
															  GetUserId()),
										 t->table, &group);

	if (t->index)
		desc = index_description(desc, t->index);
	*items = described_number(desc, "ItemCount");
	*bytes = described_number(desc, t->index ? "IndexSizeBytes" : "TableSizeBytes");
	ddb_group_free(group);
}

