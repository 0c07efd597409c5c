/*-------------------------------------------------------------------------
 *
 * describe.c
 *		DescribeTable: the key attributes of a DynamoDB table or index, a
 *		table's secondary indexes, and its size; DescribeTimeToLive: its TTL
 *		attribute.
 *
 * A foreign table's keys, indexes and TTL attribute are asked for when it
 * is declared (see sql/ddl.c); everything after that (planning, EXPLAIN,
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

/* The type (S, N or B) AttributeDefinitions give attribute name, or -1. */
static int
attribute_type(const DdbJson *desc, const char *name)
{
	const DdbJson *defs = ddbjson_get(desc, "AttributeDefinitions");

	for (int i = 0; defs && defs->kind == DJ_ARRAY && i < defs->n; i++)
	{
		const char *attr = ddbjson_get_string(&defs->elems[i], "AttributeName");
		const char *type = ddbjson_get_string(&defs->elems[i], "AttributeType");

		if (attr == NULL || type == NULL || strcmp(attr, name) != 0)
			continue;
		return strcmp(type, "N") == 0 ? DDB_TYPE_N : strcmp(type, "B") == 0 ? DDB_TYPE_B :
			strcmp(type, "S") == 0 ? DDB_TYPE_S : -1;
	}
	return -1;
}

/*
 * The secondary indexes a DescribeTable "Table" object lists, as option
 * secondary_indexes records them (indexes.c), or NULL when it lists none:
 * its local ones, and its global ones that are ACTIVE and not being
 * backfilled (DynamoDB refuses to read one being built, and its items
 * would be a part only).  An index whose description lacks what a read
 * needs (its keys and their types, its projection) is left out.
 */
char *
describe_indexes(const DdbJson *desc)
{
	static const char *const lists[] = {"LocalSecondaryIndexes", "GlobalSecondaryIndexes"};
	ShardIndex *indexes = NULL;
	int			n = 0;

	for (size_t l = 0; l < lengthof(lists); l++)
	{
		const DdbJson *list = ddbjson_get(desc, lists[l]);

		for (int i = 0; list && list->kind == DJ_ARRAY && i < list->n; i++)
		{
			const DdbJson *d = &list->elems[i];
			const DdbJson *projection = ddbjson_get(d, "Projection");
			const char *type = ddbjson_get_string(projection, "ProjectionType");
			const char *status = ddbjson_get_string(d, "IndexStatus");
			const DdbJson *backfilling = ddbjson_get(d, "Backfilling");
			const DdbJson *attrs = ddbjson_get(projection, "NonKeyAttributes");
			const char *pk = NULL;
			const char *sk = NULL;
			ShardIndex	idx = {0};
			int			pk_type;
			int			sk_type = DDB_TYPE_S;

			describe_key_schema(ddbjson_get(d, "KeySchema"), &pk, &sk);
			idx.name = (char *) ddbjson_get_string(d, "IndexName");
			idx.local = l == 0;
			idx.pk = (char *) pk;
			idx.sk = (char *) sk;
			if (idx.name == NULL || pk == NULL || type == NULL ||
				(pk_type = attribute_type(desc, pk)) < 0 ||
				(sk && (sk_type = attribute_type(desc, sk)) < 0) ||
				(!idx.local && (status == NULL || strcmp(status, "ACTIVE") != 0)) ||
				(backfilling && backfilling->kind == DJ_BOOL && backfilling->boolean))
				continue;
			idx.pk_type = (DdbType) pk_type;
			idx.sk_type = (DdbType) sk_type;
			if (strcmp(type, "ALL") == 0)
				idx.projection = PROJECT_ALL;
			else if (strcmp(type, "KEYS_ONLY") == 0)
				idx.projection = PROJECT_KEYS_ONLY;
			else if (strcmp(type, "INCLUDE") == 0 && attrs && attrs->kind == DJ_ARRAY &&
					 attrs->n > 0)
			{
				idx.projection = PROJECT_INCLUDE;
				for (int a = 0; a < attrs->n; a++)
					if (attrs->elems[a].kind == DJ_STRING)
						idx.attributes = lappend(idx.attributes,
												 makeString(attrs->elems[a].str));
			}
			else
				continue;
			indexes = n == 0 ? palloc(sizeof(ShardIndex)) :
				repalloc(indexes, sizeof(ShardIndex) * (n + 1));
			indexes[n++] = idx;
		}
	}
	return indexes_option_text(indexes, n);
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
 * there is no sort key, and for a table (not an index) its secondary
 * indexes in *indexes (describe_indexes); a table without the index is an
 * error.  When DynamoDB did not answer, false with why in *why, unless
 * strict, when that is an error; a table that does not exist gives *why
 * NULL.  When not strict, a DescribeTable that fails is retried twice at
 * most: a reset does not make a declaration warn, and an unreachable
 * endpoint does not keep it waiting.
 */
bool
describe_keys(Oid serverid, const char *table, const char *index, bool strict,
			  const char **pk, const char **sk, char **indexes, char **why)
{
	DdbGroup   *group;
	size_t		len;
	char	   *body = request_describe(table, &len);
	DdbRequest *req;
	const DdbJson *schema;

	group = ddb_group_create(shard_get_connection(serverid, GetUserId()), 1);
	req = ddb_request_create(group, "DescribeTable", body, len);
	if (!strict)
		req->max_retries = Min(req->max_retries, 2);
	ddb_submit(req);
	ddb_wait_for(req);
	*pk = NULL;
	*sk = NULL;
	*indexes = NULL;
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
	else
		*indexes = describe_indexes(ddbjson_get(req->response, "Table"));
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

