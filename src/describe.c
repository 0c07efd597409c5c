/*-------------------------------------------------------------------------
 *
 * describe.c
 *		Declaring a foreign table: its key attributes learnt from DynamoDB
 *		when they are not given, then its options checked.
 *
 * A foreign table declared without partition_key gets its key attribute
 * names from DescribeTable once, when it is declared: the extension's
 * event trigger calls shard_fdw_check_table at the end of CREATE and ALTER
 * FOREIGN TABLE, and the names found are recorded as the table's
 * partition_key and sort_key options.  Everything after that (planning,
 * EXPLAIN, every read and write) reads the catalogs only.
 *
 *-------------------------------------------------------------------------
 */
#include "shard_fdw.h"

#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

PG_FUNCTION_INFO_V1(shard_fdw_check_table);

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
 * it), or NULL when the request fails and quiet is true (else the
 * request's error is raised).
 */
static const DdbJson *
describe_table(DdbConn *conn, const char *table, bool quiet, DdbGroup **group)
{
	size_t		len;
	char	   *body = request_describe(table, &len);
	DdbRequest *req;

	*group = ddb_group_create(conn, 1);
	req = ddb_run(*group, "DescribeTable", body, len);
	if (req->status == DDB_OK)
		return ddbjson_get(req->response, "Table");
	if (!quiet)
		ddb_report_error(req);
	return NULL;
}

/*
 * The partition and sort key attributes of DynamoDB table "table", or of
 * its index "index" when that is not NULL, asked with DescribeTable.
 * *sk is NULL when there is no sort key.
 */
static void
describe_keys(Oid serverid, const char *table, const char *index,
			  const char **pk, const char **sk)
{
	DdbGroup   *group;
	const DdbJson *desc = describe_table(shard_get_connection(serverid, GetUserId()),
										 table, false, &group);
	const DdbJson *schema = index ? index_key_schema(desc, index) :
		ddbjson_get(desc, "KeySchema");

	if (index && schema == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_TABLE_NOT_FOUND),
				 errmsg("DynamoDB table \"%s\" has no index \"%s\"", table, index)));
	*pk = NULL;
	*sk = NULL;
	describe_key_schema(schema, pk, sk);
	ddb_group_free(group);
	if (*pk == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_ERROR),
				 errmsg("DescribeTable of \"%s\" gave no partition key", table)));
}

/* True when attribute name is among the attribute names request uses. */
static bool
request_names(const DdbJson *request, const char *name)
{
	const char *members[] = {"Key", "Item", "ExclusiveStartKey"};
	const DdbJson *names = ddbjson_get(request, "ExpressionAttributeNames");

	for (size_t m = 0; m < lengthof(members); m++)
		if (ddbjson_get(ddbjson_get(request, members[m]), name))
			return true;
	for (int i = 0; names && names->kind == DJ_OBJECT && i < names->n; i++)
		if (names->elems[i].kind == DJ_STRING && strcmp(names->elems[i].str, name) == 0)
			return true;
	return false;
}

/*
 * A hint for a request that DynamoDB refused because its key does not
 * match the key schema of table (or of its index, when index is not
 * NULL): the table's actual keys, asked with DescribeTable through conn,
 * and the foreign table options that must name them (those whose key
 * the request did not use, or both when it used them all).  NULL when
 * DescribeTable fails too.  request is the refused request's body.
 */
char *
describe_key_hint(DdbConn *conn, const char *table, const char *index,
				  const DdbJson *request)
{
	DdbGroup   *group;
	const DdbJson *desc = describe_table(conn, table, true, &group);
	const DdbJson *schema;
	const char *pk = NULL;
	const char *sk = NULL;
	bool		pk_used;
	bool		sk_used;
	StringInfoData hint;

	schema = index ? index_key_schema(desc, index) : ddbjson_get(desc, "KeySchema");
	describe_key_schema(schema, &pk, &sk);
	ddb_group_free(group);
	if (pk == NULL)
		return NULL;
	pk_used = request_names(request, pk);
	sk_used = sk == NULL || request_names(request, sk);
	initStringInfo(&hint);
	appendStringInfo(&hint, "The key of %s \"%s\" is partition key \"%s\"",
					 index ? "index" : "table", index ? index : table, pk);
	if (sk)
		appendStringInfo(&hint, " and sort key \"%s\"", sk);
	else
		appendStringInfoString(&hint, " without a sort key");
	if (pk_used == sk_used)
		appendStringInfo(&hint, "; the foreign table's \"partition_key\"%s must name %s.",
						 sk ? " and \"sort_key\" options" : " option",
						 sk ? "them" : "it");
	else
		appendStringInfo(&hint, "; set the foreign table's \"%s\" option to \"%s\".",
						 pk_used ? "sort_key" : "partition_key", pk_used ? sk : pk);
	return hint.data;
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
										 t->table, false, &group);

	if (t->index)
		desc = index_description(desc, t->index);
	*items = described_number(desc, "ItemCount");
	*bytes = described_number(desc, t->index ? "IndexSizeBytes" : "TableSizeBytes");
	ddb_group_free(group);
}

/* Error context: which table's keys were being learnt. */
static void
learn_keys_context(void *arg)
{
	Oid			relid = *(Oid *) arg;

	errcontext("learning the key attributes of foreign table \"%s\" from DynamoDB",
			   get_rel_name(relid));
}

/*
 * Record the key attributes of foreign table relid as its partition_key
 * and sort_key options when it has no partition_key, learning them from
 * DynamoDB.  A sort_key the table already has is kept.  Runs an ALTER
 * FOREIGN TABLE, whose own event trigger then checks the table whole.
 */
static void
learn_keys(Oid relid)
{
	ForeignTable *ft = GetForeignTable(relid);
	const char *table = shard_option_value(ft->options, "table");
	const char *pk;
	const char *sk;
	StringInfoData sql;
	ErrorContextCallback cb;

	if (shard_option_value(ft->options, "partition_key") != NULL || table == NULL)
		return;
	cb.callback = learn_keys_context;
	cb.arg = &relid;
	cb.previous = error_context_stack;
	error_context_stack = &cb;
	describe_keys(ft->serverid, table, shard_option_value(ft->options, "index"), &pk, &sk);
	error_context_stack = cb.previous;
	initStringInfo(&sql);
	appendStringInfo(&sql, "ALTER FOREIGN TABLE %s OPTIONS (ADD partition_key %s",
					 quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)),
												get_rel_name(relid)),
					 quote_literal_cstr(pk));
	if (sk && shard_option_value(ft->options, "sort_key") == NULL)
		appendStringInfo(&sql, ", ADD sort_key %s", quote_literal_cstr(sk));
	appendStringInfoChar(&sql, ')');
	SPI_connect();
	if (SPI_execute(sql.data, false, 0) != SPI_OK_UTILITY)
		elog(ERROR, "shard_fdw: could not record the keys of foreign table \"%s\"",
			 get_rel_name(relid));
	SPI_finish();
}

/*
 * shard_fdw_check_table(regclass): record the key attributes of a foreign
 * table declared without them (learn_keys), then load its options,
 * which checks what the validator cannot see (the columns that templates,
 * shard_by and column options refer to).  The extension's event trigger
 * calls it at the end of CREATE and ALTER FOREIGN TABLE, so that a bad
 * table is rejected when it is declared, not when it is first read.
 */
Datum
shard_fdw_check_table(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);

	if (shard_is_foreign_table(relid))
	{
		learn_keys(relid);
		(void) shard_get_table(relid);
	}
	PG_RETURN_VOID();
}
