/*-------------------------------------------------------------------------
 *
 * functions.c
 *		SQL functions for the people who run shard_fdw: a raw DynamoDB call
 *		through a server's connection, and the backend's request counters.
 *
 *-------------------------------------------------------------------------
 */
#include "shard_fdw.h"

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "foreign/foreign.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"

PG_FUNCTION_INFO_V1(shard_fdw_request);
PG_FUNCTION_INFO_V1(shard_fdw_stats);

/*
 * shard_fdw_request(server name, operation text, body jsonb) returns jsonb:
 * run one DynamoDB API call (CreateTable, DescribeTable, GetItem, ...) with
 * the caller's user mapping, with the usual signing and retries, and
 * return DynamoDB's answer.
 */
Datum
shard_fdw_request(PG_FUNCTION_ARGS)
{
	char	   *servername = NameStr(*PG_GETARG_NAME(0));
	char	   *operation = text_to_cstring(PG_GETARG_TEXT_PP(1));
	Jsonb	   *body = PG_GETARG_JSONB_P(2);
	ForeignServer *server = GetForeignServerByName(servername, false);
	char	   *text = JsonbToCString(NULL, &body->root, VARSIZE(body));
	DdbConn    *conn;
	DdbGroup   *group;
	DdbJson    *response;
	Buf			out;
	JsonWriter	w;
	Datum		result;

	if (server->fdwid != get_foreign_data_wrapper_oid("shard_fdw", false))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("server \"%s\" does not use shard_fdw", servername)));
	for (const char *p = operation; *p; p++)
		if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z')))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("invalid DynamoDB operation name \"%s\"", operation)));
	conn = shard_get_connection(server->serverid, GetUserId());
	group = ddb_group_create(conn, 1);
	response = ddb_call(group, pstrdup(operation), text, strlen(text));
	buf_init(&out);
	jw_init(&w, &out);
	jw_tree(&w, response);
	result = DirectFunctionCall1(jsonb_in, CStringGetDatum(out.data));
	ddb_group_free(group);
	PG_RETURN_DATUM(result);
}

/*
 * shard_fdw_stats(): this backend's cumulative request, retry, throttle
 * and capacity counters.
 */
Datum
shard_fdw_stats(PG_FUNCTION_ARGS)
{
	const DdbStats *s = ddb_backend_stats();
	TupleDesc	desc;
	Datum		values[5];
	bool		nulls[5] = {0};

	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	values[0] = Int64GetDatum(s->requests);
	values[1] = Int64GetDatum(s->attempts);
	values[2] = Int64GetDatum(s->retries);
	values[3] = Int64GetDatum(s->throttles);
	values[4] = Float8GetDatum(s->capacity);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(desc), values, nulls)));
}
