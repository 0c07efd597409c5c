/*-------------------------------------------------------------------------
 *
 * answer.c
 *		What an attempt's outcome says: the error it records (secrets
 *		blanked out), whether another attempt may mend it (throttling, a
 *		transient error, a transport failure, a signature refused for this
 *		host's clock), and whether the endpoint has shown itself to be
 *		DynamoDB or looks like the wrong one.
 *
 * Part of the transport (transportstate.h): transport.c hands each
 * attempt that ended here, and finishes or queues its request by the
 * verdict.  What it learns for the backend's life is kept here: the
 * endpoints proven to be DynamoDB, and how far AWS's clock is from this
 * host's.
 *
 *-------------------------------------------------------------------------
 */
#include "wire/wire.h"

#include <curl/curl.h>
#include <zlib.h>

#include "utils/memutils.h"

#include "core/http1.h"
#include "wire/transportstate.h"

/*
 * The endpoints (URLs) that have answered as DynamoDB in this backend.
 * Until an endpoint has, a failure that suggests it is the wrong one is
 * labeled so, for the message should the retries not mend it
 * (endpoint_suspect).
 */
static List *proven_endpoints = NIL;

/*
 * How far AWS's clock is ahead of this host's, in seconds, as learnt from
 * the Date of an answer that refused a signature for its time
 * (clock_skew_mended); every request is signed with the time corrected by
 * it (aws_signing_time), for the backend's life.
 */
static int64 clock_offset_s = 0;

/* A skew smaller than this is not taken as the reason for a refusal (the SDKs'). */
#define CLOCK_SKEW_MIN_S (4 * 60)

/*
 * Record an error on req, the type without its "namespace#" prefix.  A
 * signature error repeats the canonical request, session token included:
 * the token (and the secret, should an answer echo it) is blanked out,
 * since messages reach logs; so are those of the keys the current ones
 * replaced, which requests still in flight may have been signed with.
 */
static void
set_error(DdbRequest *req, const char *type, const char *message)
{
	const char *hash = strrchr(type, '#');
	const ShardCredentials *creds = req->group->conn->creds;
	const char *secrets[] = {creds->session_token, creds->secret_access_key,
	creds->previous_session_token, creds->previous_secret_access_key};
	char	   *text = MemoryContextStrdup(req->cxt, message ? message : "");
	char	   *at;

	req->error_type = MemoryContextStrdup(req->cxt, hash ? hash + 1 : type);
	for (size_t i = 0; i < lengthof(secrets); i++)
		while (secrets[i] && secrets[i][0] && (at = strstr(text, secrets[i])) != NULL)
			memset(at, '*', strlen(secrets[i]));
	req->error_message = text;
}

/* See wire.h: fail req for an answer that is no JSON object. */
void
ddb_request_json_fault(DdbRequest *req, long status, const char *reason)
{
	set_error(req, "InvalidResponse",
			  psprintf("the response (HTTP %ld) is not valid JSON: %s",
					   status, reason));
	req->maybe_applied = true;
}

/* See wire.h: fail req for an answer that parsed but breaks DynamoDB's shapes. */
void
ddb_request_shape_fault(DdbRequest *req, const DdbCheck *check)
{
	set_error(req, "InvalidResponse",
			  check->item ?
			  psprintf("the response (HTTP 200) breaks DynamoDB's shapes: attribute \"%s\" of %s: %s",
					   check->attribute, check->where, check->reason) :
			  psprintf("the response (HTTP 200) breaks DynamoDB's shapes: %s: %s",
					   check->where, check->reason));
	req->fault = MemoryContextAlloc(req->cxt, sizeof(DdbCheck));
	*req->fault = *check;
	req->maybe_applied = true;
}

/* The ThrottlingReasons of an error body (throttlingReasons in some). */
static const DdbJson *
throttling_reasons(const DdbJson *body)
{
	const DdbJson *reasons = ddbjson_get(body, "ThrottlingReasons");

	if (reasons == NULL)
		reasons = ddbjson_get(body, "throttlingReasons");
	return reasons && reasons->kind == DJ_ARRAY && reasons->n > 0 ? reasons : NULL;
}

/* True when any ThrottlingReasons entry names a key-range reason. */
static bool
has_key_range_reason(const DdbJson *body)
{
	const DdbJson *reasons = throttling_reasons(body);

	if (reasons == NULL)
		return false;
	for (int i = 0; i < reasons->n; i++)
	{
		const char *reason = ddbjson_get_string(&reasons->elems[i], "reason");

		if (reason && strstr(reason, "KeyRangeThroughputExceeded"))
			return true;
	}
	return false;
}

/*
 * True when a TransactionCanceledException body cancels for throttling
 * only: each of its CancellationReasons is ThrottlingError or None (the
 * action that caused nothing), one at least ThrottlingError.  That is
 * how DynamoDB says a transaction was throttled.
 */
static bool
transaction_throttled(const DdbJson *body)
{
	const DdbJson *reasons = ddbjson_get(body, "CancellationReasons");
	bool		throttled = false;

	if (strcmp(ddbjson_get_string(body, "__type") ? ddbjson_get_string(body, "__type") : "",
			   "com.amazonaws.dynamodb.v20120810#TransactionCanceledException") != 0 ||
		reasons == NULL || reasons->kind != DJ_ARRAY)
		return false;
	for (int i = 0; i < reasons->n; i++)
	{
		const char *code = ddbjson_get_string(&reasons->elems[i], "Code");

		if (code == NULL || (strcmp(code, "None") != 0 && strcmp(code, "ThrottlingError") != 0))
			return false;
		throttled |= strcmp(code, "ThrottlingError") == 0;
	}
	return throttled;
}

/* See wire.h: now, on AWS's clock as far as this backend has learnt it. */
time_t
aws_signing_time(void)
{
	return (time_t) (time(NULL) + clock_offset_s);
}

/* See transportstate.h. */
int64
aws_clock_offset(void)
{
	return clock_offset_s;
}

/*
 * Whether req's answer (in a) refused its signature for its time, in one
 * of the ways the AWS SDKs recognise (DynamoDB's InvalidSignatureException
 * "Signature expired", and the other services' words for it), and its Date
 * shows the clock the attempt was signed with off by CLOCK_SKEW_MIN_S or
 * more: true (sign again), the clock offset taken from that Date unless
 * another answer has set it so already (the attempts of a statement in
 * flight together meet the same refusal).  A refused signature whose Date
 * agrees with the attempt's clock is wrong for another reason, and not
 * retried.
 */
static bool
clock_skew_mended(DdbRequest *req, DdbAttempt *a)
{
	static const char *const types[] = {
		"InvalidSignatureException", "RequestTimeTooSkewed", "RequestExpired",
		"RequestInTheFuture", "SignatureDoesNotMatch", "AuthFailure",
	};
	int64		server_time;
	int64		skew;
	bool		known = false;

	for (size_t i = 0; i < lengthof(types); i++)
		known |= strcmp(req->error_type, types[i]) == 0;
	if (!known || !http1_parse_date(a->x.answer.date, &server_time))
		return false;
	skew = server_time - (int64) time(NULL);
	if (llabs(skew - a->clock_offset_s) < CLOCK_SKEW_MIN_S)
		return false;
	if (llabs(skew - clock_offset_s) >= CLOCK_SKEW_MIN_S)
	{
		ereport(LOG,
				(errmsg("shard_fdw: this host's clock is %lld s %s DynamoDB's; requests are signed with DynamoDB's time",
						llabs(skew), skew > 0 ? "behind" : "ahead of")));
		clock_offset_s = skew;
	}
	return true;
}

/* See transportstate.h. */
AnswerVerdict
judge_answer(DdbRequest *req, DdbAttempt *a, long status)
{
	char		err[SFDW_ERRLEN];
	DdbJson    *body;
	bool		too_deep;
	long		surrogate;
	MemoryContext old;

	req->http_status = status;
	if (a->x.answer.crc[0] != '\0')
	{
		unsigned long crc = crc32(0L, (const Bytef *) a->x.answer.body.data,
								  (uInt) a->x.answer.body.len);

		if (strtoul(a->x.answer.crc, NULL, 10) != crc)
		{
			set_error(req, "CRC32CheckFailed",
					  "the response body does not match its x-amz-crc32 header");
			req->maybe_applied = true;
			return ANSWER_RETRY;
		}
	}
	surrogate = ddbjson_lone_surrogate(a->x.answer.body.data, a->x.answer.body.len);
	if (surrogate >= 0)
	{
		/* it came whole (the CRC matched): a second try reads the same */
		set_error(req, "InvalidResponse",
				  psprintf("the response (HTTP %ld) escapes half a UTF-16 surrogate pair at byte %ld, which is not Unicode",
						   status, surrogate));
		req->maybe_applied = true;
		return ANSWER_FINAL;
	}
	old = MemoryContextSwitchTo(req->cxt);
	body = ddbjson_parse_ex(a->x.answer.body.data, a->x.answer.body.len,
							req->parse_later ? "Items" : NULL,
							err, sizeof(err), &too_deep);
	MemoryContextSwitchTo(old);
	if (body == NULL || body->kind != DJ_OBJECT)
	{
		ddb_request_json_fault(req, status, body ? "not an object" : err);
		/* the same text would come back, and fail the same way */
		return too_deep ? ANSWER_FINAL : ANSWER_RETRY;
	}
	/* an error is an error whatever its status says */
	if (status == 200 && ddbjson_get(body, "__type") == NULL)
	{
		DdbCheck	check;

		if (!(req->items_later ? ddbjson_check_envelope(body, &check) :
			  ddbjson_check_response(body, &check)))
		{
			/* it parsed, so it is what the server meant to send: no retry */
			ddb_request_shape_fault(req, &check);
			return ANSWER_FINAL;
		}
		req->response = body;
		return ANSWER_FINAL;
	}
	a->from_dynamodb |= ddbjson_get_string(body, "__type") != NULL;
	set_error(req, ddbjson_get_string(body, "__type") ? ddbjson_get_string(body, "__type") : "HttpError",
			  ddbjson_get_string(body, "message") ? ddbjson_get_string(body, "message") :
			  ddbjson_get_string(body, "Message"));
	req->last_throttled = retry_is_throttle(req->error_type) || transaction_throttled(body);
	if (req->last_throttled)
	{
		req->key_throttled |= has_key_range_reason(body);
		req->throttle_reasons |= throttling_reasons(body) != NULL;
		return ANSWER_THROTTLED;
	}
	if (status >= 500 || retry_is_transient(req->error_type))
	{
		req->maybe_applied = true;
		return ANSWER_RETRY;
	}
	/* signed with a time DynamoDB's clock refuses: once more, with its time */
	if (!req->clock_mended && clock_skew_mended(req, a))
	{
		req->clock_mended = true;
		return ANSWER_RETRY;
	}
	return ANSWER_FINAL;
}

/* See transportstate.h. */
bool
judge_transport_error(DdbRequest *req, DdbAttempt *a, CURLcode code)
{
	const char *detail = a->errbuf[0] ? a->errbuf : curl_easy_strerror(code);

	req->http_status = 0;
	req->last_throttled = false;
	set_error(req, code == CURLE_OPERATION_TIMEDOUT ? "Timeout" : "ConnectionError", detail);
	switch (code)
	{
		case CURLE_COULDNT_RESOLVE_HOST:
		case CURLE_COULDNT_RESOLVE_PROXY:
		case CURLE_COULDNT_CONNECT:
		case CURLE_OPERATION_TIMEDOUT:
		case CURLE_SEND_ERROR:
		case CURLE_RECV_ERROR:
		case CURLE_GOT_NOTHING:
		case CURLE_PARTIAL_FILE:
		case CURLE_WRITE_ERROR:
		case CURLE_WEIRD_SERVER_REPLY:
		case CURLE_HTTP2:
		case CURLE_HTTP2_STREAM:
		case CURLE_SSL_CONNECT_ERROR:
			return true;
		default:
			return false;
	}
}

/* See transportstate.h. */
bool
endpoint_known(const char *url)
{
	ListCell   *lc;

	foreach(lc, proven_endpoints)
		if (strcmp(lfirst(lc), url) == 0)
			return true;
	return false;
}

/* See transportstate.h. */
void
endpoint_proven(DdbTransport *t)
{
	MemoryContext old;

	if (t->proven)
		return;
	t->proven = true;
	old = MemoryContextSwitchTo(TopMemoryContext);
	proven_endpoints = lappend(proven_endpoints, pstrdup(t->url));
	MemoryContextSwitchTo(old);
}

/* See transportstate.h. */
bool
endpoint_suspect(DdbRequest *req, DdbAttempt *a, CURLcode code, bool retry)
{
	long		status = a->x.answer.status;
	Buf			type;
	Buf			start;

	if (code == CURLE_COULDNT_RESOLVE_HOST || code == CURLE_COULDNT_CONNECT ||
		code == CURLE_SSL_CONNECT_ERROR)
		req->error_type = pstrdup("EndpointUnreachable");
	if (code != CURLE_OK)
		return retry;
	/* the server's bytes, which need not be UTF-8, shown escaped */
	buf_init(&type);
	ddb_append_printable(&type, a->x.answer.content_type, strlen(a->x.answer.content_type));
	buf_init(&start);
	ddb_append_printable(&start, a->x.answer.body.data, Min(a->x.answer.body.len, 80));
	req->error_type = pstrdup("NotDynamoDB");
	req->error_message = psprintf("%s%s%sbody \"%s%s\"",
								  type.len ? "Content-Type " : "",
								  type.data, type.len ? ", " : "",
								  start.data, a->x.answer.body.len > 80 ? "..." : "");
	return retry && (status == 500 || status == 502 || status == 503 || status == 504);
}
