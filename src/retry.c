/*-------------------------------------------------------------------------
 *
 * retry.c
 *		Where retries are decided: which failures are retried, how long to
 *		wait before the next attempt, and when to stop.  One policy for
 *		every request: exponential backoff with full jitter, max_retries
 *		attempts (max_throttle_retries of them throttled), a deadline of
 *		request_timeout_ms from the first attempt, and a per-connection
 *		budget for retries of errors other than throttles, as in the AWS
 *		SDKs' standard mode.  A batch's unprocessed part, or a throttled
 *		write sent into a grown key space, is a retry under the same policy
 *		(ddb_request_again).
 *
 * transport.c judges each answer (may another attempt succeed?) and asks
 * here whether, and when, to make it.
 *
 *-------------------------------------------------------------------------
 */
#include "shard_fdw.h"

#include <math.h>

/* Backoff: delay = random[0,1) * min(BASE * 2^attempt, CAP). */
#define RETRY_BASE_MS 25.0
#define RETRY_CAP_MS 5000.0

/* The retry budget of a connection: its size, and what a retry costs. */
#define RETRY_BUDGET 500
#define RETRY_COST 5
#define RETRY_TIMEOUT_COST 10

/* See shard_fdw.h: a full budget. */
void
retry_budget_init(RetryBudget *budget)
{
	budget->tokens = RETRY_BUDGET;
}

/*
 * See shard_fdw.h: a success gives back what its last retry cost, or one
 * token when it needed none (the SDKs' standard mode).
 */
void
retry_budget_refill(RetryBudget *budget, DdbRequest *req)
{
	budget->tokens = Min(RETRY_BUDGET, budget->tokens + (req->retry_cost ? req->retry_cost : 1));
}

/*
 * True for the errors DynamoDB answers when it throttles a request (the
 * table's, an index's, a key's or the account's throughput was exceeded):
 * retried without spending the retry budget, and counted as throttles.
 */
bool
retry_is_throttle(const char *type)
{
	return strcmp(type, "ProvisionedThroughputExceededException") == 0 ||
		strcmp(type, "ThrottlingException") == 0 ||
		strcmp(type, "RequestLimitExceeded") == 0 ||
		strcmp(type, "LimitExceededException") == 0;
}

/*
 * True for the errors the AWS SDKs retry as transient besides 5xx answers:
 * a request that timed out inside DynamoDB, one sent while an earlier one
 * of the same connection had not finished, and a transaction whose
 * ClientRequestToken an attempt still in progress carries (sent again
 * with the same token, its retry gets that attempt's outcome).
 */
bool
retry_is_transient(const char *type)
{
	return strcmp(type, "RequestTimeout") == 0 ||
		strcmp(type, "RequestTimeoutException") == 0 ||
		strcmp(type, "PriorRequestNotComplete") == 0 ||
		strcmp(type, "TransactionInProgressException") == 0;
}

/*
 * The delay before attempt number n (1-based) of a retry: full jitter over
 * an exponentially growing, capped window.
 */
static long
backoff_us(int attempt)
{
	double		window = Min(RETRY_CAP_MS, RETRY_BASE_MS * pow(2.0, attempt));

	return (long) (pg_prng_double(&pg_global_prng_state) * window * 1000.0);
}

/* True when req has attempts left and its deadline has not passed. */
static bool
within_limits(DdbRequest *req)
{
	return req->attempts <= req->max_retries &&
		!TimestampDifferenceExceeds(req->first_attempt_at, GetCurrentTimestamp(),
									req->timeout_ms);
}

/*
 * After a failed attempt of req that another attempt may mend: true, with
 * req->retry_at set, when the policy allows another attempt; false when
 * req has used up its attempts, its throttled attempts, its deadline, or
 * (for an error other than a throttle) the connection's budget, of which
 * a retry spends its cost.  timeout: the attempt timed out, which costs
 * more.
 */
bool
retry_schedule(DdbRequest *req, RetryBudget *budget, bool timeout)
{
	bool		throttle = req->last_throttled;

	if (throttle)
		req->throttled++;
	if (!within_limits(req) || req->throttled > req->max_throttle_retries)
		return false;
	if (!throttle)
	{
		int			cost = timeout ? RETRY_TIMEOUT_COST : RETRY_COST;

		if (budget->tokens < cost)
		{
			req->budget_spent = true;
			return false;
		}
		budget->tokens -= cost;
		req->retry_cost = cost;
	}
	req->retry_at = GetCurrentTimestamp() + backoff_us(req->attempts);
	return true;
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

	if (!progressed && !within_limits(req))
		return NULL;
	next = ddb_request_create(req->group, action, body, len);
	next->owner = req->owner;
	next->max_retries = req->max_retries;
	next->max_throttle_retries = req->max_throttle_retries;
	next->timeout_ms = req->timeout_ms;
	next->maybe_applied = req->maybe_applied;
	next->rows = req->rows;
	if (!progressed)
	{
		next->attempts = req->attempts;
		next->first_attempt_at = req->first_attempt_at;
	}
	ddb_count_retry(req);
	ddb_submit_after(next, backoff_us(Max(next->attempts, 1)));
	return next;
}
