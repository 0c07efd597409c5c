/*-------------------------------------------------------------------------
 *
 * exchange.c
 *		Plain HTTP exchanges outside DynamoDB's protocol (the credential
 *		sources' GETs, PUTs and POSTs, see credentials.c), run on a
 *		transport's multi handle beside its DynamoDB requests and moving
 *		whenever they do; and the pauses of a credential source that waits
 *		on something else, during which the transport moves on too.
 *
 *-------------------------------------------------------------------------
 */
#include "wire/wire.h"

#include "miscadmin.h"
#include "utils/memutils.h"

#include "wire/transportstate.h"

/* The largest answer a credential source may send. */
#define PLAIN_MAX_ANSWER (1024 * 1024)

/* Add a header line to a list; on error the list is freed. */
static struct curl_slist *
add_line(struct curl_slist *list, const char *line)
{
	struct curl_slist *result = curl_slist_append(list, line);

	if (result == NULL)
	{
		curl_slist_free_all(list);
		ereport(ERROR,
				(errcode(ERRCODE_FDW_OUT_OF_MEMORY),
				 errmsg("out of memory")));
	}
	return result;
}

/* libcurl write callback of a plain exchange: append to a StringInfo. */
static size_t
on_plain_body(char *data, size_t size, size_t nmemb, void *arg)
{
	StringInfo	answer = arg;
	size_t		n = size * nmemb;

	return append_in_callback(answer, data, n, PLAIN_MAX_ANSWER) ? n : 0;
}

/* Stop an exchange's transfer and free libcurl's objects; idempotent. */
void
transport_exchange_free(HttpExchange *x)
{
	if (x->t == NULL)
		return;
	curl_multi_remove_handle(x->t->multi, x->easy);
	curl_easy_cleanup(x->easy);
	curl_slist_free_all(x->headers);
	dlist_delete(&x->node);
	x->t = NULL;
}

/* Memory context callback: the memory of an exchange goes away. */
static void
exchange_gone(void *arg)
{
	transport_exchange_free(arg);
}

/*
 * Start an HTTP exchange outside DynamoDB's protocol on t's multi handle,
 * alongside its DynamoDB requests: method ("GET", "PUT", "POST") on url
 * with headers (a List of "Name: value" strings) and body (NULL: none; ""
 * sends an empty one, copied).  It moves whenever the transport does, and
 * ends with transport_exchange_free or with the current memory context,
 * where it is allocated.
 */
HttpExchange *
transport_exchange_start(DdbTransport *t, const char *method, const char *url,
						 List *headers, const char *body, long connect_timeout_ms,
						 long timeout_ms)
{
	HttpExchange *x = palloc0(sizeof(HttpExchange));
	MemoryContextCallback *cb = palloc(sizeof(MemoryContextCallback));
	const char *ca_file = t->conn->server->ca_file;
	struct curl_slist *list = NULL;
	ListCell   *lc;

	initStringInfo(&x->answer);
	x->easy = curl_easy_init();
	if (x->easy == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_OUT_OF_MEMORY),
				 errmsg("could not create a libcurl handle")));
	x->t = t;
	x->driven_at = GetCurrentTimestamp();
	dlist_push_tail(&t->exchanges, &x->node);
	cb->func = exchange_gone;
	cb->arg = x;
	MemoryContextRegisterResetCallback(CurrentMemoryContext, cb);

	foreach(lc, headers)
		list = add_line(list, lfirst(lc));
	/* libcurl would otherwise wait for a 100-continue */
	x->headers = add_line(list, "Expect:");
	curl_easy_setopt(x->easy, CURLOPT_URL, url);
	curl_easy_setopt(x->easy, CURLOPT_HTTPHEADER, x->headers);
	if (body)
	{
		curl_easy_setopt(x->easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t) strlen(body));
		curl_easy_setopt(x->easy, CURLOPT_COPYPOSTFIELDS, body);
	}
	if (strcmp(method, "POST") != 0 && strcmp(method, "GET") != 0)
		curl_easy_setopt(x->easy, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(x->easy, CURLOPT_WRITEFUNCTION, on_plain_body);
	curl_easy_setopt(x->easy, CURLOPT_WRITEDATA, &x->answer);
	curl_easy_setopt(x->easy, CURLOPT_ERRORBUFFER, x->errbuf);
	curl_easy_setopt(x->easy, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(x->easy, CURLOPT_CONNECTTIMEOUT_MS, connect_timeout_ms);
	curl_easy_setopt(x->easy, CURLOPT_TIMEOUT_MS, timeout_ms);
	curl_easy_setopt(x->easy, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(x->easy, CURLOPT_SSL_VERIFYHOST, 2L);
	curl_easy_setopt(x->easy, CURLOPT_PROTOCOLS_STR, "http,https");
	if (ca_file)
		curl_easy_setopt(x->easy, CURLOPT_CAINFO, ca_file);
	sockets_own(t->sockets, x->easy);
	if (curl_multi_add_handle(t->multi, x->easy) != CURLM_OK)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_OUT_OF_MEMORY),
				 errmsg("could not start an HTTP request")));
	return x;
}

/*
 * Whether the exchange has ended (answered or failed); libcurl first
 * moves the transport on, without waiting, so that an answer that came
 * while nobody watched counts.
 */
bool
transport_exchange_done(HttpExchange *x)
{
	if (!x->done)
		transport_drive(x->t, 0, WAIT_CREDENTIALS);
	return x->done;
}

/*
 * The outcome of an ended exchange: the HTTP status, its body in *answer
 * (owned by the exchange), or 0 with libcurl's reason in err when no
 * answer came.  *timed_out tells that none came within the timeout;
 * *stale, that the timeout ran out while nobody moved the transport
 * (between statements, or while the executor worked on rows): the answer
 * may have been there in time, so asking again is worth it.
 */
long
transport_exchange_result(HttpExchange *x, StringInfo *answer, bool *stale,
						  bool *timed_out, char *err, size_t errlen)
{
	long		status = 0;

	Assert(x->done);
	*answer = &x->answer;
	*timed_out = x->result == CURLE_OPERATION_TIMEDOUT;
	*stale = *timed_out && x->idled;
	if (x->result == CURLE_OK)
		curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &status);
	else
		strlcpy(err, x->errbuf[0] ? x->errbuf : curl_easy_strerror(x->result), errlen);
	return status;
}

/*
 * Wait until x has ended, moving the transport (DynamoDB requests in
 * flight go on; queued ones are not started).  Interruptible.
 */
void
transport_exchange_wait(HttpExchange *x)
{
	while (!x->done)
	{
		CHECK_FOR_INTERRUPTS();
		transport_drive(x->t, POLL_MS, WAIT_CREDENTIALS);
	}
}

/*
 * Move t on for at most ms milliseconds (and at most POLL_MS; less when
 * a transfer ends), its DynamoDB requests and plain exchanges in flight
 * going on, while a credential source waits on something other than an
 * exchange: a process's output.  Interruptible.
 */
void
transport_pause(DdbTransport *t, long ms)
{
	CHECK_FOR_INTERRUPTS();
	transport_drive(t, (int) Max(0, Min(ms, POLL_MS)), WAIT_CREDENTIALS);
}
