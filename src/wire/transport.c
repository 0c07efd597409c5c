/*-------------------------------------------------------------------------
 *
 * transport.c
 *		DynamoDB requests over HTTP: many requests in flight inside one
 *		backend on connections of their own (links.c), each attempt signed
 *		afresh with SigV4, its answer judged (answer.c); a failed attempt
 *		that another may mend is queued again when retry.c's policy allows
 *		it, and one that fails for good is reported by report.c.
 *
 * Requests belong to a group (one scan or one modify), which bounds how
 * many of them run at once and collects their counters.  Groups and their
 * requests live in memory of the connection, so that a transaction abort
 * can stop every transfer before anything it points to is freed.
 *
 * libcurl's multi interface opens the connections and runs the credential
 * sources' plain HTTP exchanges (exchange.c).  Waits sleep on an epoll set
 * of every socket (sockets.c) with a short timeout, hand libcurl the ready
 * sockets it waits on and links.c those of open connections, and check
 * for interrupts between sleeps, so a cancel or statement_timeout stops a
 * scan promptly.
 *
 *-------------------------------------------------------------------------
 */
#include "wire/wire.h"

#include <curl/curl.h>

#include "access/xact.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/memutils.h"

#include "core/sigv4.h"
#include "wire/sockets.h"
#include "wire/transportstate.h"

#define DDB_TARGET_PREFIX "DynamoDB_20120810."
#define DDB_CONTENT_TYPE "application/x-amz-json-1.0"

/* A running group hands its counters to stat.c at most this often. */
#define STAT_FLUSH_US 1000000

/* Cumulative counters of this backend. */
static DdbStats backend_stats;

static bool curl_ready = false;

/* ---------------------------------------------------------------------
 * Transport lifetime
 * ---------------------------------------------------------------------
 */

/* Initialize libcurl the first time it is needed. */
static void
curl_init_once(void)
{
	if (curl_ready)
		return;
	if (curl_global_init(CURL_GLOBAL_ALL) != CURLE_OK)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_UNABLE_TO_ESTABLISH_CONNECTION),
				 errmsg("could not initialize libcurl")));
	curl_ready = true;
}

/* Refuse an endpoint that is not an http(s) URL. */
pg_noreturn static void
refuse_endpoint(const char *endpoint)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("invalid value for option \"endpoint\": \"%s\"", endpoint),
			 errhint("The endpoint is a URL such as https://dynamodb.us-east-1.amazonaws.com or http://127.0.0.1:8000.")));
}

/*
 * Whether libcurl may take a proxy for a plain http URL from the
 * environment (it reads http_proxy only in lower case, and all_proxy).
 */
static bool
proxy_in_environment(void)
{
	static const char *const names[] = {"http_proxy", "all_proxy", "ALL_PROXY"};

	for (size_t i = 0; i < lengthof(names); i++)
	{
		const char *value = getenv(names[i]);

		if (value && value[0])
			return true;
	}
	return false;
}

/*
 * Make the transport of conn: the multi handle, the set of its sockets,
 * and the endpoint's URL and Host header.  Before it signs a request, and
 * when a plain exchange ended, it calls prepare(prepare_arg, t), which
 * makes sure the credentials it signs with are there (the connection
 * hands credentials_ensure down).  Allocated in conn->cxt.
 */
DdbTransport *
transport_create(DdbConn *conn, TransportPrepareFn prepare, void *prepare_arg)
{
	DdbTransport *t = palloc0(sizeof(DdbTransport));
	const char *endpoint = conn->server->endpoint;
	const char *hoststart;

	curl_init_once();
	hoststart = strstr(endpoint, "://");
	if (hoststart == NULL ||
		(strncmp(endpoint, "http://", 7) != 0 && strncmp(endpoint, "https://", 8) != 0))
		refuse_endpoint(endpoint);
	t->conn = conn;
	t->prepare = prepare;
	t->prepare_arg = prepare_arg;
	t->host = http1_url_host(endpoint);
	t->raw = strncmp(endpoint, "http://", 7) == 0 && !proxy_in_environment();
	t->url = psprintf("%.*s/", (int) (hoststart + 3 + strlen(t->host) - endpoint), endpoint);

	/*
	 * The URL is parsed once: a transfer handed the string parses it anew,
	 * which was a measurable part of libcurl's work per request.
	 */
	t->curlu = curl_url();
	if (t->curlu == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_OUT_OF_MEMORY),
				 errmsg("could not create a libcurl URL handle")));
	if (curl_url_set(t->curlu, CURLUPART_URL, t->url, 0) != CURLUE_OK)
	{
		curl_url_cleanup(t->curlu);
		refuse_endpoint(endpoint);
	}
	t->proven = endpoint_known(t->url);
	retry_budget_init(&t->budget);
	dlist_init(&t->queue);
	dlist_init(&t->attempts);
	t->next_deadline = DT_NOEND;
	dlist_init(&t->groups);
	dlist_init(&t->exchanges);
	dlist_init(&t->links);
	dlist_init(&t->idle);
	t->max_idle = Max(conn->server->max_concurrency, SHARD_READ_CONCURRENCY_MAX);
	t->multi = curl_multi_init();
	if (t->multi == NULL)
	{
		curl_url_cleanup(t->curlu);
		ereport(ERROR,
				(errcode(ERRCODE_FDW_OUT_OF_MEMORY),
				 errmsg("could not create a libcurl multi handle")));
	}
	/* the credential sources' exchanges keep a few connections alive */
	curl_multi_setopt(t->multi, CURLMOPT_MAXCONNECTS, (long) t->max_idle);
	PG_TRY();
	{
		t->sockets = sockets_create(t->multi, link_ready);
	}
	PG_CATCH();
	{
		curl_multi_cleanup(t->multi);
		curl_url_cleanup(t->curlu);
		PG_RE_THROW();
	}
	PG_END_TRY();
	return t;
}

/*
 * Take one attempt off its connection and out of the attempts in flight,
 * and free its bytes: an answer judged was parsed into a tree of its own.
 */
static void
attempt_free(DdbTransport *t, DdbAttempt *a)
{
	link_detach(t, a);
	dlist_delete(&a->node);
	sfdw_free(a->out.data);
	http1_exchange_free(&a->x);
	pfree(a);
}

/*
 * At the end of a (sub)transaction at nest_level, every group made there
 * or deeper: freed, its transfers stopped, when it aborted; handed to the
 * parent, to live on until the parent ends, when it committed.
 */
static void
groups_end(DdbTransport *t, int nest_level, bool committed)
{
	dlist_mutable_iter it;

	dlist_foreach_modify(it, &t->groups)
	{
		DdbGroup   *g = dlist_container(DdbGroup, node, it.cur);

		if (g->nest_level < nest_level)
			continue;
		if (committed)
			g->nest_level = nest_level - 1;
		else
			ddb_group_free(g);
	}
}

/*
 * Forget every group made at nest_level or deeper: stop their transfers
 * and free their memory.  Called at the end of a (sub)transaction.
 */
void
transport_abort(DdbTransport *t, int nest_level)
{
	groups_end(t, nest_level, false);
}

/*
 * Hand the groups of a committed subtransaction at nest_level to its
 * parent, so that they live on until the parent ends.
 */
void
transport_subcommit(DdbTransport *t, int nest_level)
{
	groups_end(t, nest_level, true);
}

/* Free the transport and everything in flight on it. */
void
transport_destroy(DdbTransport *t)
{
	dlist_mutable_iter it;

	transport_abort(t, 0);
	dlist_foreach_modify(it, &t->exchanges)
		transport_exchange_free(dlist_container(HttpExchange, node, it.cur));
	links_close_all(t);
	curl_multi_cleanup(t->multi);
	curl_url_cleanup(t->curlu);
	sockets_destroy(t->sockets);
	explicit_bzero(t->signing_key, sizeof(t->signing_key));
}

/* ---------------------------------------------------------------------
 * Groups and requests
 * ---------------------------------------------------------------------
 */

/*
 * A new group of requests on conn, at most max_inflight of them in flight
 * at once.  It lives until ddb_group_free or the end of the
 * (sub)transaction that made it (a committed subtransaction hands it to
 * its parent), so it is made where the state that uses it is: a cursor's
 * scan, begun outside a subtransaction and read inside it, goes on after
 * the subtransaction rolls back.
 */
DdbGroup *
ddb_group_create(DdbConn *conn, int max_inflight)
{
	MemoryContext cxt = AllocSetContextCreate(conn->cxt, "shard_fdw requests",
											  ALLOCSET_DEFAULT_SIZES);
	DdbGroup   *g = MemoryContextAllocZero(cxt, sizeof(DdbGroup));

	g->conn = conn;
	g->cxt = cxt;
	g->nest_level = GetCurrentTransactionNestLevel();
	g->max_inflight = Max(1, max_inflight);
	g->flushed_at = GetCurrentTimestamp();
	dlist_init(&g->done);
	dlist_push_tail(&conn->transport->groups, &g->node);
	return g;
}

/* Let up to max_inflight requests of group be in flight at once. */
void
ddb_group_set_max_inflight(DdbGroup *g, int max_inflight)
{
	g->max_inflight = Max(1, max_inflight);
}

/*
 * Stop every request of the group and free them all, those handed out
 * included; the group stays, with its counters and its transaction level.
 */
void
ddb_group_reset(DdbGroup *g)
{
	DdbTransport *t = g->conn->transport;
	dlist_mutable_iter it;

	dlist_foreach_modify(it, &t->attempts)
	{
		DdbAttempt *a = dlist_container(DdbAttempt, node, it.cur);

		if (a->req->group == g)
		{
			if (g->budget)
				budget_settle(g->budget, a->req->budget_reserved, 0, false);
			attempt_free(t, a);
		}
	}
	dlist_foreach_modify(it, &t->queue)
	{
		DdbRequest *req = dlist_container(DdbRequest, node, it.cur);

		if (req->group == g)
		{
			if (g->budget)
				budget_settle(g->budget, req->budget_reserved, 0, false);
			dlist_delete(&req->node);
		}
	}
	/* every request lives in a child context of the group's */
	MemoryContextDeleteChildren(g->cxt);
	dlist_init(&g->done);
	g->running = 0;
	g->unfinished = 0;
}

/*
 * Hand what the group counted since it last did to the shared counters
 * of its table (its budget's) and server.
 */
static void
group_flush(DdbGroup *g)
{
	stat_flush(g->budget ? budget_relid(g->budget) : InvalidOid, g->conn->serverid,
			   &g->stats, &g->flushed);
	g->flushed_at = GetCurrentTimestamp();
}

/*
 * Stop every request of the group, hand its counters to the shared ones,
 * and free it; its holder forgets it.
 */
void
ddb_group_free(DdbGroup *g)
{
	ddb_group_reset(g);
	group_flush(g);
	if (g->holder)
		*g->holder = NULL;
	dlist_delete(&g->node);
	MemoryContextDelete(g->cxt);
}

/* Memory context callback: the memory of a group's holder goes away. */
static void
holder_gone(void *arg)
{
	DdbGroup  **holder = arg;

	if (*holder)
		ddb_group_free(*holder);
}

/*
 * Make *holder, which lives in memory context cxt, the holder of the group
 * it points to: when cxt goes away with the group still there, the group
 * is freed too.  A cursor that failed and is then closed drops its
 * executor state without ending it; its scan's requests go with it rather
 * than at the end of the transaction.  The group's end, if it comes first,
 * clears *holder.
 */
void
ddb_group_hold(DdbGroup **holder, MemoryContext cxt)
{
	MemoryContextCallback *cb = MemoryContextAlloc(cxt, sizeof(MemoryContextCallback));

	(*holder)->holder = holder;
	cb->func = holder_gone;
	cb->arg = holder;
	MemoryContextRegisterResetCallback(cxt, cb);
}

/*
 * The rows (DdbRequest.rows) of the group's requests not handed out yet
 * that may have taken effect: finished ones that succeeded, those in
 * flight whose request went out whole, and any an attempt of which
 * reached DynamoDB unanswered (maybe_applied).  A statement that stops
 * with them unjudged says they may have been written.
 */
long
ddb_group_rows_in_doubt(DdbGroup *g)
{
	DdbTransport *t = g->conn->transport;
	dlist_iter	it;
	long		rows = 0;

	dlist_foreach(it, &t->attempts)
	{
		DdbAttempt *a = dlist_container(DdbAttempt, node, it.cur);

		if (a->req->group == g &&
			(a->req->maybe_applied || a->x.sent == a->x.out_len))
			rows += a->req->rows;
	}
	dlist_foreach(it, &t->queue)
	{
		DdbRequest *req = dlist_container(DdbRequest, node, it.cur);

		if (req->group == g && req->maybe_applied)
			rows += req->rows;
	}
	dlist_foreach(it, &g->done)
	{
		DdbRequest *req = dlist_container(DdbRequest, node, it.cur);

		if (req->status == DDB_OK || req->maybe_applied)
			rows += req->rows;
	}
	return rows;
}

/* The counters of a group. */
DdbStats *
ddb_group_stats(DdbGroup *g)
{
	return &g->stats;
}

/* The connection a group's requests go through. */
DdbConn *
ddb_group_conn(DdbGroup *g)
{
	return g->conn;
}

/*
 * Make the group keep to budget, its table's (NULL: none): its requests
 * start only when the budget is not in debt, their answers are handed out
 * only once it is out of debt again and while the statement is within its
 * cap, and they count for the table in shard_fdw_stat.
 */
void
ddb_group_set_budget(DdbGroup *g, Budget *budget)
{
	g->budget = budget;
}

/* The capacity budget the group keeps to, or NULL. */
Budget *
ddb_group_budget(DdbGroup *g)
{
	return g->budget;
}


/* The cumulative counters of this backend. */
const DdbStats *
ddb_backend_stats(void)
{
	return &backend_stats;
}

/*
 * A new request of the group for DynamoDB operation action with the given
 * JSON body (copied).  It is not sent until ddb_submit.
 */
DdbRequest *
ddb_request_create(DdbGroup *group, const char *action,
				   const char *body, size_t len)
{
	MemoryContext cxt;
	DdbRequest *req;

	/* a SQL_ASCII database's text may be any bytes; DynamoDB takes UTF-8 */
	if (GetDatabaseEncoding() == PG_SQL_ASCII && !ddb_utf8_valid(body, len))
		ereport(ERROR,
				(errcode(ERRCODE_CHARACTER_NOT_IN_REPERTOIRE),
				 errmsg("DynamoDB %s request would carry text that is not UTF-8", action),
				 errdetail("The database is SQL_ASCII, which stores text unchecked, and DynamoDB takes UTF-8 only.")));
	cxt = AllocSetContextCreate(group->cxt, "shard_fdw request", ALLOCSET_SMALL_SIZES);
	req = MemoryContextAllocZero(cxt, sizeof(DdbRequest));

	req->group = group;
	req->cxt = cxt;
	req->action = action;
	req->body = MemoryContextAlloc(cxt, len + 1);
	memcpy(req->body, body, len);
	req->body[len] = '\0';
	req->body_len = len;
	req->max_retries = group->conn->server->max_retries;
	req->max_throttle_retries = req->max_retries;
	req->timeout_ms = (int) Min(group->conn->server->request_timeout_ms, INT_MAX);
	req->attempt_timeout_ms = (int) Min(group->conn->server->attempt_timeout_ms, INT_MAX);
	req->status = DDB_QUEUED;
	return req;
}

/* Free a finished request, its response included. */
void
ddb_request_free(DdbRequest *req)
{
	Assert(req->status == DDB_OK || req->status == DDB_FAILED);
	MemoryContextDelete(req->cxt);
}

/* Queue the request to start no sooner than delay_us from now. */
void
ddb_submit_after(DdbRequest *req, long delay_us)
{
	req->status = DDB_QUEUED;
	req->retry_at = delay_us > 0 ? GetCurrentTimestamp() + delay_us : 0;
	req->group->unfinished++;
	dlist_push_tail(&req->group->conn->transport->queue, &req->node);
}

/* Queue the request; it starts as soon as its group has a free slot. */
void
ddb_submit(DdbRequest *req)
{
	ddb_submit_after(req, 0);
}

/* Count a retry of req, in its group's counters and the backend's. */
void
ddb_count_retry(DdbRequest *req)
{
	req->group->stats.retries++;
	backend_stats.retries++;
}

/*
 * A request that carries on finished request req with a new body for
 * action (req's own, or GetItem for the one key a BatchGetItem left): what
 * DynamoDB left unprocessed by it (UnprocessedItems, UnprocessedKeys), or
 * a write it throttled to the end sent again (into a grown key space).
 * It is a retry of req under the same policy as every retry: it starts
 * after the backoff of req's next attempt, its attempts count on from
 * req's against max_retries, and req's deadline (request_timeout_ms from
 * its first attempt) holds; throttles are counted afresh.  When req made
 * progress (DynamoDB processed part of it, or the key space grew), the new
 * request starts a fresh allowance instead, since a batch that moves on
 * every attempt finishes.  It inherits owner, rows and maybe_applied,
 * and is queued.  Returns NULL, queuing nothing, when the
 * policy allows no further attempt: the caller reports what is left
 * undone.  req stays the caller's to free.
 */
DdbRequest *
ddb_request_again(DdbRequest *req, const char *action, const char *body, size_t len,
				  bool progressed)
{
	DdbRequest *next;

	if (!progressed && !retry_within_limits(req))
		return NULL;
	next = ddb_request_create(req->group, action, body, len);
	next->owner = req->owner;
	next->max_retries = req->max_retries;
	next->max_throttle_retries = req->max_throttle_retries;
	next->timeout_ms = req->timeout_ms;
	next->attempt_timeout_ms = req->attempt_timeout_ms;
	next->maybe_applied = req->maybe_applied;
	next->rows = req->rows;
	if (!progressed)
	{
		next->attempts = req->attempts;
		next->first_attempt_at = req->first_attempt_at;
	}
	ddb_count_retry(req);
	ddb_submit_after(next, retry_backoff_us(next->attempts, req->last_throttled));
	return next;
}

/* ---------------------------------------------------------------------
 * Attempts
 * ---------------------------------------------------------------------
 */

/* See transportstate.h. */
bool
append_in_callback(StringInfo buf, const char *data, size_t n, size_t max)
{
	size_t		need = (size_t) buf->len + n + 1;

	if (need > max + 1)
		return false;
	if (need > (size_t) buf->maxlen)
	{
		size_t		newlen = buf->maxlen;
		char	   *grown;

		while (newlen < need)
			newlen *= 2;
		newlen = Min(newlen, max + 1);
		grown = MemoryContextAllocExtended(GetMemoryChunkContext(buf->data),
										   newlen, MCXT_ALLOC_NO_OOM);
		if (grown == NULL)
			return false;
		memcpy(grown, buf->data, buf->len);
		pfree(buf->data);
		buf->data = grown;
		buf->maxlen = (int) newlen;
	}
	memcpy(buf->data + buf->len, data, n);
	buf->len += (int) n;
	buf->data[buf->len] = '\0';
	return true;
}

/*
 * Write one attempt of req, signed with the time it is sent, as HTTP into
 * out.
 */
static void
request_bytes(DdbTransport *t, DdbRequest *req, Buf *out)
{
	ShardCredentials *creds = t->conn->creds;
	char		amz_date[17];
	char	   *target = psprintf(DDB_TARGET_PREFIX "%s", req->action);
	SigV4Header hdrs[6];
	int			nhdrs = 0;
	SigV4Input in;
	SigV4Output sig;
	char		err[SFDW_ERRLEN];

	sigv4_amz_date(aws_signing_time(), amz_date);
	if (strncmp(t->key_day, amz_date, 8) != 0 || t->key_generation != creds->generation)
	{
		/* the signing key lasts a day: derive it once a day, or anew with new keys */
		if (!sigv4_signing_key(creds->secret_access_key, amz_date,
							   t->conn->server->region, "dynamodb", t->signing_key))
			ereport(ERROR,
					(errcode(ERRCODE_FDW_UNABLE_TO_ESTABLISH_CONNECTION),
					 errmsg("could not derive the SigV4 signing key")));
		memcpy(t->key_day, amz_date, 8);
		t->key_day[8] = '\0';
		t->key_generation = creds->generation;
	}
	hdrs[nhdrs++] = (SigV4Header) {"host", t->host};
	hdrs[nhdrs++] = (SigV4Header) {"content-type", DDB_CONTENT_TYPE};
	hdrs[nhdrs++] = (SigV4Header) {"x-amz-date", amz_date};
	hdrs[nhdrs++] = (SigV4Header) {"x-amz-target", target};
	if (creds->session_token)
		hdrs[nhdrs++] = (SigV4Header) {"x-amz-security-token", creds->session_token};

	sigv4_post_input(&in, hdrs, nhdrs, req->body, req->body_len,
					 creds->access_key_id, creds->secret_access_key,
					 t->conn->server->region, "dynamodb", amz_date);
	in.signing_key = t->signing_key;
	if (!sigv4_sign(&in, &sig, err, sizeof(err)))
		ereport(ERROR,
				(errcode(ERRCODE_FDW_UNABLE_TO_ESTABLISH_CONNECTION),
				 errmsg("could not sign a DynamoDB request: %s", err)));
	hdrs[nhdrs++] = (SigV4Header) {"authorization", sig.authorization.data};
	if (!http1_write_request(out, "/", hdrs, nhdrs, req->body, req->body_len,
							 err, sizeof(err)))
		ereport(ERROR,
				(errcode(ERRCODE_FDW_UNABLE_TO_ESTABLISH_CONNECTION),
				 errmsg("could not write a DynamoDB request: %s", err)));
	sigv4_output_free(&sig);
	pfree(target);
}

/* Start one attempt of req. */
static void
attempt_start(DdbTransport *t, DdbRequest *req)
{
	DdbAttempt *a;
	MemoryContext old;

	/* temporary credentials are fetched, or a refresh moved on, before signing */
	t->prepare(t->prepare_arg, t);
	old = MemoryContextSwitchTo(req->cxt);
	a = palloc0(sizeof(DdbAttempt));
	a->req = req;
	buf_init(&a->out);
	a->clock_offset_s = aws_clock_offset();
	request_bytes(t, req, &a->out);
	http1_exchange_init(&a->x, a->out.data, a->out.len, MaxAllocSize - 1,
						(SfdwArena *) req->cxt);
	MemoryContextSwitchTo(old);
	a->started = GetCurrentTimestamp();
	if (req->attempts == 0)
		req->first_attempt_at = a->started;
	/* its own timeout, within what is left of the request's */
	a->deadline = Min(a->started + (TimestampTz) req->attempt_timeout_ms * 1000,
					  req->first_attempt_at + (TimestampTz) req->timeout_ms * 1000);
	t->next_deadline = Min(t->next_deadline, a->deadline);
	dlist_push_tail(&t->attempts, &a->node);

	req->status = DDB_RUNNING;
	req->attempts++;
	req->group->running++;
	req->group->stats.attempts++;
	backend_stats.attempts++;
	/* last: a connection that fails at once ends the attempt here */
	link_attach(t, a);
}

/*
 * Start every queued request that is due and whose group has room and is
 * within its cap.
 */
static void
start_due(DdbTransport *t)
{
	dlist_mutable_iter it;
	TimestampTz now = GetCurrentTimestamp();

	dlist_foreach_modify(it, &t->queue)
	{
		DdbRequest *req = dlist_container(DdbRequest, node, it.cur);

		Budget	   *budget = req->group->budget;

		if (req->retry_at > now || req->group->running >= req->group->max_inflight ||
			(budget && budget_past_cap(budget)))
			continue;
		if (budget && req->budget_reserved == 0)
		{
			if (budget_delay_us(budget) > 0)
				continue;
			req->budget_reserved = budget_reserve(budget);
		}
		dlist_delete(&req->node);
		attempt_start(t, req);
	}
}

/*
 * Milliseconds until the next queued retry is due or a group's budget is
 * out of debt, at most POLL_MS; the requests of a group past its cap do
 * not count.
 */
static int
poll_timeout(DdbTransport *t)
{
	dlist_iter	it;
	TimestampTz now = GetCurrentTimestamp();
	long		ms = POLL_MS;

	dlist_foreach(it, &t->groups)
	{
		DdbGroup   *g = dlist_container(DdbGroup, node, it.cur);
		long		delay = g->budget ? budget_delay_us(g->budget) : 0;

		if (delay > 0)
			ms = Min(ms, (delay + 999) / 1000);
	}

	dlist_foreach(it, &t->queue)
	{
		DdbRequest *req = dlist_container(DdbRequest, node, it.cur);

		if (req->retry_at > now)
			ms = Min(ms, (long) ((req->retry_at - now) / 1000));
		else if (req->group->budget && req->budget_reserved == 0 &&
				 budget_delay_us(req->group->budget) > 0)
			continue;			/* the groups' budgets were counted above */
		else if (req->group->budget && budget_past_cap(req->group->budget))
			continue;			/* never sent: its group's wait stops */
		else if (req->group->running < req->group->max_inflight)
			ms = 0;
	}
	return (int) Max(ms, 0);
}

/* A response's ConsumedCapacity (an object or an array). */
static double
consumed_capacity(const DdbJson *body)
{
	const DdbJson *cc = ddbjson_get(body, "ConsumedCapacity");
	double		total = 0;

	if (cc == NULL)
		return 0;
	if (cc->kind == DJ_OBJECT)
		return ddbjson_get_number(cc, "CapacityUnits");
	if (cc->kind == DJ_ARRAY)
		for (int i = 0; i < cc->n; i++)
			total += ddbjson_get_number(&cc->elems[i], "CapacityUnits");
	return total;
}

/* Whether DynamoDB operation action reads (its capacity is read units). */
static bool
action_reads(const char *action)
{
	static const char *const reads[] = {
		"GetItem", "BatchGetItem", "Query", "Scan", "TransactGetItems",
	};

	for (size_t i = 0; i < lengthof(reads); i++)
		if (strcmp(action, reads[i]) == 0)
			return true;
	return false;
}

/*
 * Count in stats the items a read's answer says DynamoDB read and
 * returned: a Query's or Scan's ScannedCount and Count, the item of a
 * GetItem, the items of a BatchGetItem (both read and returned).
 */
static void
count_items(DdbStats *stats, const DdbRequest *req)
{
	const DdbJson *body = req->response;
	const DdbJson *responses = ddbjson_get(body, "Responses");
	const DdbJson *item = ddbjson_get(body, "Item");
	int64		n = 0;

	if (ddbjson_get(body, "Count") != NULL)
	{
		stats->read_items += (int64) ddbjson_get_number(body, "ScannedCount");
		stats->returned_items += (int64) ddbjson_get_number(body, "Count");
		return;
	}
	if (strcmp(req->action, "GetItem") == 0)
		n = item != NULL && item->kind == DJ_OBJECT;
	else if (strcmp(req->action, "BatchGetItem") == 0 && responses != NULL &&
			 responses->kind == DJ_OBJECT)
		for (int i = 0; i < responses->n; i++)
			if (responses->elems[i].kind == DJ_ARRAY)
				n += responses->elems[i].n;
	stats->read_items += n;
	stats->returned_items += n;
}

/*
 * Hand a finished request to its group, and count it, failed or not (a
 * duplicate key is a request too); capacity and items come with
 * successes.  A running group hands its counters to shard_fdw_stat's at
 * most once every STAT_FLUSH_US.
 */
static void
finish(DdbRequest *req, DdbStatus status)
{
	DdbGroup   *g = req->group;

	req->status = status;
	g->unfinished--;
	dlist_push_tail(&g->done, &req->node);
	g->stats.requests++;
	backend_stats.requests++;
	if (status == DDB_OK)
	{
		double		cc = consumed_capacity(req->response);
		bool		reads = action_reads(req->action);

		*(reads ? &g->stats.read_units : &g->stats.write_units) += cc;
		*(reads ? &backend_stats.read_units : &backend_stats.write_units) += cc;
		count_items(&g->stats, req);
		if (g->budget)
			budget_settle(g->budget, req->budget_reserved, cc, true);
	}
	else
	{
		g->stats.errors++;
		if (g->budget)
			budget_settle(g->budget, req->budget_reserved, 0, false);
	}
	req->budget_reserved = 0;
	if (GetCurrentTimestamp() - g->flushed_at >= STAT_FLUSH_US)
		group_flush(g);
}

/*
 * A wait for the answers of two attempts or more, none of them arrived
 * yet, may first sleep, so that the answers arriving meanwhile are read
 * after one wake-up rather than one each: a backend woken from sleep paid
 * about 25 us of CPU for it on the virtual machines measured
 * (doc/benchmarks.md), and a top-100 over 100 shards woke 90 times.  It sleeps for
 * a share of the time the oldest has been awaited (1 / GATHER_SHARE, at
 * most GATHER_MAX_US), which delays an answer by at most that share of
 * its round trip, and only when the answers have lately come at least one
 * to such a sleep (answer_gap_us): a sleep that catches none costs a
 * wake-up more, and one shorter than GATHER_MIN_US would catch too few.
 * The gap between two answers counts for at most twice GATHER_MAX_US
 * (more than any sleep), so that the pause between two statements is soon
 * forgotten.
 */
#define GATHER_SHARE 16
#define GATHER_MIN_US 100
#define GATHER_MAX_US 1000

/* Note an answer's arrival in the moving average of the gaps between them. */
static void
answer_arrived(DdbTransport *t)
{
	TimestampTz now = GetCurrentTimestamp();
	long		gap = t->answered_at == 0 ? 2 * GATHER_MAX_US :
		(long) Min(now - t->answered_at, 2 * GATHER_MAX_US);

	t->answer_gap_us = (3 * t->answer_gap_us + gap) / 4;
	t->answered_at = now;
}

/* The microseconds a wait sleeps before it waits on the sockets, or 0. */
static long
gather_us(DdbTransport *t, TimestampTz now)
{
	DdbAttempt *oldest;
	long		us;

	if (dlist_is_empty(&t->attempts))
		return 0;
	oldest = dlist_head_element(DdbAttempt, node, &t->attempts);
	if (!dlist_has_next(&t->attempts, &oldest->node))
		return 0;
	us = Min((long) (now - oldest->started) / GATHER_SHARE, GATHER_MAX_US);
	return us >= GATHER_MIN_US && t->answer_gap_us <= us ? us : 0;
}

/* See transportstate.h: judge it, then finish the request or queue its retry. */
void
attempt_done(DdbTransport *t, DdbAttempt *a, CURLcode code)
{
	DdbRequest *req = a->req;
	bool		retry;
	bool		timeout = code == CURLE_OPERATION_TIMEDOUT;
	bool		was_mended = req->clock_mended;

	req->group->running--;
	answer_arrived(t);
	/* the whole request went out on a connection that failed unanswered */
	req->maybe_applied |= a->x.reached;
	a->from_dynamodb = a->x.answer.request_id || a->x.answer.crc[0] != '\0';
	if (code == CURLE_OK)
	{
		AnswerVerdict verdict = judge_answer(req, a, a->x.answer.status);

		if (verdict == ANSWER_THROTTLED)
		{
			req->group->stats.throttles++;
			backend_stats.throttles++;
		}
		retry = verdict != ANSWER_FINAL;
	}
	else
		retry = judge_transport_error(req, a, code);
	if (a->from_dynamodb)
		endpoint_proven(t);
	else if (!t->proven && req->response == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(req->cxt);

		retry = endpoint_suspect(req, a, code, retry);
		MemoryContextSwitchTo(old);
	}
	attempt_free(t, a);

	if (!retry)
	{
		if (req->response != NULL)
			retry_budget_refill(&t->budget, req);
		finish(req, req->response ? DDB_OK : DDB_FAILED);
		return;
	}
	/* signed again with the clock mended: at once, whatever the policy */
	if (req->clock_mended && !was_mended)
		req->retry_at = 0;
	else if (!retry_schedule(req, &t->budget, timeout))
	{
		finish(req, DDB_FAILED);
		return;
	}
	ddb_count_retry(req);
	req->status = DDB_QUEUED;
	dlist_push_tail(&t->queue, &req->node);
}

/* The plain exchange whose transfer easy is, or NULL. */
static HttpExchange *
exchange_of(DdbTransport *t, CURL *easy)
{
	dlist_iter	it;

	dlist_foreach(it, &t->exchanges)
	{
		HttpExchange *x = dlist_container(HttpExchange, node, it.cur);

		if (x->easy == easy)
			return x;
	}
	return NULL;
}

/*
 * Collect the transfers libcurl has finished: attempts are judged, plain
 * exchanges marked done.  Returns whether any finished; *exchange_ended
 * is set when an exchange did.
 */
static bool
collect_finished(DdbTransport *t, bool *exchange_ended)
{
	int			left;
	CURLMsg    *msg;
	bool		finished = false;

	while ((msg = curl_multi_info_read(t->multi, &left)) != NULL)
	{
		HttpExchange *x;

		if (msg->msg != CURLMSG_DONE)
			continue;
		finished = true;
		x = exchange_of(t, msg->easy_handle);
		if (x != NULL)
		{
			x->done = true;
			x->result = msg->data.result;
			*exchange_ended = true;
			continue;
		}
		link_opened(t, msg->easy_handle, msg->data.result);
	}
	return finished;
}

/*
 * The wait event of what: "Extension" before PostgreSQL 17, and from it
 * one named for what the backend waits for.
 */
static uint32
transport_wait_event(TransportWait what)
{
	static uint32 ids[] = {[WAIT_REQUESTS] = 0, [WAIT_BUDGET] = 0, [WAIT_CREDENTIALS] = 0};
	static const char *const names[] = {
		[WAIT_REQUESTS] = "ShardFdwRequest",
		[WAIT_BUDGET] = "ShardFdwBudget",
		[WAIT_CREDENTIALS] = "ShardFdwCredentials",
	};

	return shard_wait_event(&ids[what], names[what]);
}

/* See transportstate.h. */
bool
transport_drive(DdbTransport *t, int timeout_ms, TransportWait what)
{
	bool		exchange_ended = false;
	TimestampTz now = GetCurrentTimestamp();
	long		gather = 0;
	uint32		wait_event;
	dlist_iter	it;

	dlist_foreach(it, &t->exchanges)
	{
		HttpExchange *x = dlist_container(HttpExchange, node, it.cur);

		x->idled |= now - x->driven_at > UNATTENDED_US;
		x->driven_at = now;
	}
	sockets_run_timer(t->sockets);
	if (collect_finished(t, &exchange_ended))
		timeout_ms = 0;
	else if (timeout_ms > 0)
		gather = gather_us(t, now);
	wait_event = timeout_ms > 0 ? transport_wait_event(what) : 0;
	/* a gathering wait sleeps only when nothing is ready */
	if (gather == 0 || sockets_wait(t->sockets, 0, 0) <= 0)
	{
		if (gather > 0)
		{
			pgstat_report_wait_start(wait_event);
			pg_usleep(gather);
			pgstat_report_wait_end();
		}
		sockets_wait(t->sockets, timeout_ms, wait_event);
	}
	sockets_run_timer(t->sockets);
	collect_finished(t, &exchange_ended);
	links_expire(t);
	return exchange_ended;
}

/*
 * Move the transport forward once: start what is due, let libcurl work,
 * collect finished transfers, and if none finished sleep briefly on the
 * sockets, waiting for what; a credential refresh whose exchange ended
 * moves on.  Interrupts are checked on every call.
 */
static void
transport_step(DdbTransport *t, TransportWait what)
{
	CHECK_FOR_INTERRUPTS();
	start_due(t);
	if (transport_drive(t, poll_timeout(t), what))
		t->prepare(t->prepare_arg, t);
}

/*
 * Move the transport forward once for group; when its budget is in debt,
 * the time it takes counts as time held back by the budget.
 */
static void
group_step(DdbGroup *group)
{
	bool		held = group->budget && budget_delay_us(group->budget) > 0;
	TimestampTz start = held ? GetCurrentTimestamp() : 0;

	transport_step(group->conn->transport, held ? WAIT_BUDGET : WAIT_REQUESTS);
	if (held)
		group->stats.budget_wait_us += GetCurrentTimestamp() - start;
}

/* Whether the group's budget holds its answers back (it is in debt). */
static bool
budget_holds(DdbGroup *group)
{
	return group->budget && budget_delay_us(group->budget) > 0;
}

/*
 * The next finished request of the group (succeeded or failed for good),
 * waiting for one if need be, and for the group's budget to be out of
 * debt; NULL when the group has nothing left.  A statement past its
 * budget's cap stops here, once the answers that came are handed out.
 */
DdbRequest *
ddb_wait_any(DdbGroup *group)
{
	for (;;)
	{
		if (!dlist_is_empty(&group->done) && !budget_holds(group))
		{
			DdbRequest *req = dlist_container(DdbRequest, node,
											  dlist_pop_head_node(&group->done));

			return req;
		}
		if (group->budget)
			budget_check_cap(group->budget);
		if (group->unfinished == 0 && dlist_is_empty(&group->done))
			return NULL;
		group_step(group);
	}
}

/*
 * Wait until req has finished and its group's budget is out of debt, and
 * take it out of its group's done list.  A statement past its budget's
 * cap stops here rather than wait for req (which is then not sent).
 */
void
ddb_wait_for(DdbRequest *req)
{
	while (req->status == DDB_QUEUED || req->status == DDB_RUNNING ||
		   budget_holds(req->group))
	{
		if (req->group->budget && req->status != DDB_OK && req->status != DDB_FAILED)
			budget_check_cap(req->group->budget);
		group_step(req->group);
	}
	dlist_delete(&req->node);
}

/*
 * Run one request to completion and return it, succeeded or failed; the
 * caller judges it and frees it (or leaves it to the group).
 */
DdbRequest *
ddb_run(DdbGroup *group, const char *action, const char *body, size_t len)
{
	DdbRequest *req = ddb_request_create(group, action, body, len);

	ddb_submit(req);
	ddb_wait_for(req);
	return req;
}
