/*-------------------------------------------------------------------------
 *
 * report.c
 *		A failed DynamoDB request as a PostgreSQL error: the SQLSTATE and
 *		hint its error type maps to, the table and index it concerned, what
 *		DynamoDB said and how many attempts were made, and for a key schema
 *		that does not match the foreign table's options, the table's real
 *		keys and the option to set; for a permission IAM denied, the action
 *		and the resource to allow it on.
 *
 *-------------------------------------------------------------------------
 */
#include "dynamo/dynamo.h"

#include "utils/builtins.h"

#include "core/awsregion.h"

typedef struct ErrorMapping
{
	const char *type;
	int			sqlstate;
	const char *hint;
} ErrorMapping;

static const ErrorMapping error_map[] = {
	{"ResourceNotFoundException", ERRCODE_FDW_TABLE_NOT_FOUND,
	"Check the foreign table's \"table\" and \"index\" options, and the server's region and endpoint."},
	{"ConditionalCheckFailedException", ERRCODE_FDW_ERROR, NULL},
	{"ValidationException", ERRCODE_FDW_ERROR, NULL},
	{"SerializationException", ERRCODE_FDW_ERROR, NULL},
	{"ProvisionedThroughputExceededException", ERRCODE_INSUFFICIENT_RESOURCES,
	"DynamoDB kept throttling the request; raise the table's capacity, shard the hot key, or raise the server's max_retries."},
	{"ThrottlingException", ERRCODE_INSUFFICIENT_RESOURCES,
	"DynamoDB kept throttling the request; try again later or raise the server's max_retries."},
	{"RequestLimitExceeded", ERRCODE_INSUFFICIENT_RESOURCES, NULL},
	{"LimitExceededException", ERRCODE_INSUFFICIENT_RESOURCES, NULL},
	{"ItemCollectionSizeLimitExceededException", ERRCODE_PROGRAM_LIMIT_EXCEEDED, NULL},
	{"TransactionConflictException", ERRCODE_T_R_SERIALIZATION_FAILURE,
	"Another request was writing the item at the same time (a move by shard_fdw_reshard, or a transaction); run the statement again."},
	{"TransactionCanceledException", ERRCODE_T_R_SERIALIZATION_FAILURE,
	"Another request was writing the item at the same time (a move by shard_fdw_reshard, or a transaction); run the statement again."},
	{"UnrecognizedClientException", ERRCODE_INVALID_AUTHORIZATION_SPECIFICATION,
	"Check the user mapping's access_key_id."},
	{"InvalidSignatureException", ERRCODE_INVALID_AUTHORIZATION_SPECIFICATION,
	"Check the user mapping's secret_access_key and the server's region."},
	{"IncompleteSignatureException", ERRCODE_INVALID_AUTHORIZATION_SPECIFICATION, NULL},
	{"MissingAuthenticationTokenException", ERRCODE_INVALID_AUTHORIZATION_SPECIFICATION, NULL},
	{"ExpiredTokenException", ERRCODE_INVALID_AUTHORIZATION_SPECIFICATION,
	"The user mapping's session_token has expired."},
	{"ConnectionError", ERRCODE_FDW_UNABLE_TO_ESTABLISH_CONNECTION,
	"Check the server's endpoint option and that DynamoDB is reachable."},
	{"Timeout", ERRCODE_FDW_UNABLE_TO_ESTABLISH_CONNECTION,
	"Raise the server's attempt_timeout_ms (one attempt), request_timeout_ms (all its attempts) or connect_timeout_ms."},
	{NULL}
};

/* DynamoDB's words when a request's key is not the table's key schema. */
static const char *const key_schema_errors[] = {
	"missed key schema element",
	"key element does not match the schema",
	"One of the required keys was not given a value",
	"Missing the key",
	"Query key condition not supported",
	NULL
};

/*
 * The DynamoDB table a request body names (the first of a batch or a
 * transaction), with its IndexName in *index (NULL when none); NULL when
 * the body names none.  *parsed gets the parsed body.
 */
static const char *
request_target(DdbRequest *req, const char **index, const DdbJson **parsed)
{
	char		err[SFDW_ERRLEN];
	const DdbJson *body = ddbjson_parse(req->body, req->body_len, err, sizeof(err));
	const DdbJson *items;

	*parsed = body;
	*index = ddbjson_get_string(body, "IndexName");
	if (ddbjson_get_string(body, "TableName"))
		return ddbjson_get_string(body, "TableName");
	items = ddbjson_get(body, "RequestItems");
	if (items && items->kind == DJ_OBJECT && items->n > 0)
		return items->keys[0];
	items = ddbjson_get(body, "TransactItems");
	if (items && items->kind == DJ_ARRAY && items->n > 0 &&
		items->elems[0].kind == DJ_OBJECT && items->elems[0].n > 0)
		return ddbjson_get_string(&items->elems[0].elems[0], "TableName");
	return NULL;
}

/* The detail of a failed request: [type: ]message (HTTP status, attempts). */
static char *
failure_detail(DdbRequest *req, bool with_type)
{
	StringInfoData buf;

	initStringInfo(&buf);
	if (with_type)
		appendStringInfo(&buf, "%s: ", req->error_type);
	appendStringInfoString(&buf, req->error_message);
	if (req->http_status)
		appendStringInfo(&buf, " (HTTP %ld, ", req->http_status);
	else
		appendStringInfoString(&buf, " (");
	appendStringInfo(&buf, "%d attempt%s)", req->attempts, req->attempts == 1 ? "" : "s");
	if (req->budget_spent)
		appendStringInfoString(&buf, "; no further retry: failures on this connection have spent its retry budget");
	return buf.data;
}

/* The IAM action of each action of a TransactWriteItems. */
static const char *const transact_permissions[][2] = {
	{"Put", "PutItem"}, {"Update", "UpdateItem"}, {"Delete", "DeleteItem"},
	{"ConditionCheck", "ConditionCheckItem"},
};

/*
 * The IAM actions request req needs, for a message: dynamodb:<its action>,
 * or for a TransactWriteItems (body its parsed body) those of its
 * actions (there is no TransactWriteItems permission).
 */
static char *
request_permissions(DdbRequest *req, const DdbJson *body)
{
	const DdbJson *items = ddbjson_get(body, "TransactItems");
	StringInfoData buf;

	if (strcmp(req->action, "TransactWriteItems") != 0 || items == NULL ||
		items->kind != DJ_ARRAY)
		return psprintf("dynamodb:%s", req->action);
	initStringInfo(&buf);
	for (size_t k = 0; k < lengthof(transact_permissions); k++)
		for (int i = 0; i < items->n; i++)
			if (ddbjson_get(&items->elems[i], transact_permissions[k][0]))
			{
				appendStringInfo(&buf, "%sdynamodb:%s", buf.len ? " and " : "",
								 transact_permissions[k][1]);
				break;
			}
	return buf.data;
}

/*
 * Raise the error of a request IAM denied (AccessDeniedException): the
 * request's action and table, DynamoDB's text in the detail, and a hint
 * naming the IAM action and the resource to allow, as DynamoDB's message
 * names them ("... is not authorized to perform: dynamodb:Query on
 * resource: arn:aws:dynamodb:...:table/T because ..."), or else as the
 * request gives them.  Returns for other failures.
 */
static void
report_access_denied(DdbRequest *req, const char *servername, const char *region)
{
	static const char perform[] = "not authorized to perform: ";
	static const char on_resource[] = " on resource: ";
	const char *table;
	const char *index;
	const DdbJson *body;
	const char *at = strstr(req->error_message, perform);
	char	   *permission = NULL;
	const char *resource = NULL;

	if (strcmp(req->error_type, "AccessDeniedException") != 0)
		return;
	table = request_target(req, &index, &body);
	if (at)
	{
		at += sizeof(perform) - 1;
		permission = pnstrdup(at, strcspn(at, " "));
		at += strlen(permission);
		if (strncmp(at, on_resource, sizeof(on_resource) - 1) == 0)
		{
			at += sizeof(on_resource) - 1;
			resource = pnstrdup(at, strcspn(at, " "));
		}
	}
	if (permission == NULL || permission[0] == '\0')
		permission = request_permissions(req, body);
	if (resource == NULL || resource[0] == '\0')
		resource = table == NULL ? "*" :
			psprintf("arn:aws:dynamodb:%s:<account>:table/%s%s%s", region, table,
					 index ? "/index/" : "", index ? index : "");
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 table ?
			 errmsg("permission denied for DynamoDB %s on table \"%s\"", req->action, table) :
			 errmsg("permission denied for DynamoDB %s", req->action),
			 errdetail("%s", failure_detail(req, true)),
			 errhint("Allow IAM action%s %s on resource %s for the credentials this user signs with on server \"%s\".",
					 strstr(permission, " and ") ? "s" : "", permission, resource, servername)));
}

/*
 * Raise the error of a request that failed for a reason the user must
 * mend in the server's or the foreign table's options or in an IAM
 * policy, naming what to change; return when the failure is of another
 * kind.
 */
static void
report_wrong_options(DdbRequest *req)
{
	const ShardServer *server = ddb_group_conn(req->group)->server;
	const char *servername = GetForeignServer(server->serverid)->servername;
	const char *table;
	const char *index;
	const DdbJson *body;

	if (strcmp(req->error_type, "EndpointUnreachable") == 0)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_UNABLE_TO_ESTABLISH_CONNECTION),
				 errmsg("could not connect to endpoint \"%s\" of server \"%s\"",
						server->endpoint, servername),
				 errdetail("%s", failure_detail(req, false)),
				 errhint("Start DynamoDB (or DynamoDB Local) there, or set the server's \"endpoint\" option to where it runs: ALTER SERVER %s OPTIONS (SET endpoint 'http://host:port').",
						 quote_identifier(servername))));
	if (strcmp(req->error_type, "NotDynamoDB") == 0)
	{
		char		url[256];
		char		err[SFDW_ERRLEN];

		if (!awsregion_endpoint("dynamodb", server->region, false, false, url, sizeof(url),
								err, sizeof(err)))
			strlcpy(url, "https://dynamodb.<region>.amazonaws.com", sizeof(url));
		ereport(ERROR,
				(errcode(ERRCODE_FDW_UNABLE_TO_ESTABLISH_CONNECTION),
				 errmsg("endpoint \"%s\" of server \"%s\" does not answer like DynamoDB",
						server->endpoint, servername),
				 errdetail("%s", failure_detail(req, false)),
				 errhint("Set the server's \"endpoint\" option to DynamoDB's URL (%s) or to DynamoDB Local's (http://host:port): ALTER SERVER %s OPTIONS (SET endpoint '...').",
						 url, quote_identifier(servername))));
	}
	report_access_denied(req, servername, server->region);
	if (strcmp(req->error_type, "ResourceNotFoundException") != 0 &&
		strcmp(req->error_type, "ValidationException") != 0)
		return;
	table = request_target(req, &index, &body);
	if (table == NULL)
		return;
	if (req->error_type[0] == 'R')
		ereport(ERROR,
				(errcode(ERRCODE_FDW_TABLE_NOT_FOUND),
				 index ?
				 errmsg("DynamoDB table \"%s\" or its index \"%s\" not found", table, index) :
				 errmsg("DynamoDB table \"%s\" not found", table),
				 errdetail("%s", failure_detail(req, true)),
				 errhint("Check the foreign table's \"table\"%s, and the \"region\" and \"endpoint\" options of server \"%s\".",
						 index ? " and \"index\" options" : " option", servername)));
	if (index && strstr(req->error_message, "does not have the specified index"))
		ereport(ERROR,
				(errcode(ERRCODE_FDW_TABLE_NOT_FOUND),
				 errmsg("DynamoDB table \"%s\" has no index \"%s\"", table, index),
				 errdetail("%s", failure_detail(req, true)),
				 errhint("Check the foreign table's \"index\" option; a foreign table of the table itself learns its indexes again with shard_fdw_refresh_indexes().")));
	for (int i = 0; key_schema_errors[i]; i++)
		if (strstr(req->error_message, key_schema_errors[i]))
			ereport(ERROR,
					(errcode(ERRCODE_FDW_INVALID_COLUMN_NAME),
					 errmsg("DynamoDB %s request failed: the key does not match the key schema of table \"%s\"%s%s%s",
							req->action, table, index ? " (index \"" : "",
							index ? index : "", index ? "\")" : ""),
					 errdetail("%s", failure_detail(req, true)),
					 errhint("The foreign table's \"partition_key\" and \"sort_key\" options name other keys than the %s's, which may have changed since the foreign table was declared (keys are checked then, when DynamoDB can be reached): declare it again with the %s's keys.",
							 index ? "index" : "table", index ? "index" : "table")));
}

/*
 * Raise the error of a failed request: SQLSTATE by DynamoDB error type,
 * DynamoDB's own type and message in the detail.  Failures that wrong
 * options explain (endpoint, table, index, key attributes) say which
 * option to change.
 */
void
ddb_report_error(DdbRequest *req)
{
	const ErrorMapping *m;
	int			sqlstate = ERRCODE_FDW_ERROR;
	const char *hint = NULL;

	report_wrong_options(req);
	for (m = error_map; m->type; m++)
		if (strcmp(m->type, req->error_type) == 0)
		{
			sqlstate = m->sqlstate;
			hint = m->hint;
			break;
		}
	if (m->type == NULL && req->http_status >= 500)
		hint = "DynamoDB answered with a server error; raise the server's max_retries to retry longer.";

	ereport(ERROR,
			(errcode(sqlstate),
			 errmsg("DynamoDB %s request failed: %s", req->action, req->error_type),
			 errdetail("%s", failure_detail(req, false)),
			 hint ? errhint("%s", hint) : 0));
}

/*
 * The error context of a statement that writes (doing: "writing to",
 * "deleting from"; done: "written", "deleted") to foreign table relname:
 * the rows of the statement known to be done, and those that may have
 * been, their answers lost or never awaited.
 */
void
report_write_progress(const char *doing, const char *done, const char *relname,
					  int64 rows, long doubt)
{
	if (doubt > 0)
		errcontext("%s foreign table \"%s\": %lld row%s of this statement %s, and up to %ld more may have been (DynamoDB's answers to them were lost or not awaited)",
				   doing, relname, (long long) rows, rows == 1 ? "" : "s", done, doubt);
	else
		errcontext("%s foreign table \"%s\": %lld row%s of this statement %s",
				   doing, relname, (long long) rows, rows == 1 ? "" : "s", done);
}

/*
 * Raise the error of a request whose answer broke DynamoDB's shapes inside
 * an item of table t: the attribute, the item's key and what is wrong.
 * Returns for other failures, which are left to ddb_report_error.
 */
void
report_bad_item(DdbRequest *req, ShardTable *t)
{
	if (req->fault == NULL || req->fault->item == NULL)
		return;
	ereport(ERROR,
			(errcode(ERRCODE_FDW_INVALID_DATA_TYPE),
			 errmsg("DynamoDB %s response holds a malformed attribute \"%s\" in item (%s) of foreign table \"%s\"",
					req->action, req->fault->attribute,
					codec_item_key_text(req->fault->item, t), t->relname),
			 errdetail("%s: %s.", req->fault->where, req->fault->reason)));
}

/*
 * Run one request to completion and return its parsed response, which
 * lives as long as the group; errors out when it fails.
 */
DdbJson *
ddb_call(DdbGroup *group, const char *action, const char *body, size_t len)
{
	DdbRequest *req = ddb_run(group, action, body, len);

	if (req->status != DDB_OK)
		ddb_report_error(req);
	return req->response;
}
