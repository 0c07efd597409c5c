/*-------------------------------------------------------------------------
 *
 * retry.c
 *		Where retries are decided: which failures are retried, how long to
 *		wait before the next attempt, and when to stop.  One policy for
 *		every request: exponential backoff with full jitter, max_retries
 *		attempts (max_throttle_retries of them throttled), a deadline of
 *		request_timeout_ms from the first attempt, and a per-connection
 *		budget for retries of errors other than throttles, as in the AWS
 *		SDKs' standard mode; throttles back off from a larger base.  A
 *		batch's unprocessed part, or a throttled write sent into a grown key
 *		space, is a retry under the same policy (transport.c's
 *		ddb_request_again).
 *
 * answer.c judges each answer (may another attempt succeed?), and
 * transport.c asks here whether, and when, to make it.
 *
 *-------------------------------------------------------------------------
 */
#include "wire/wire.h"

#include <math.h>

/*
 * Backoff before retry n (1-based): random[0,1) * min(base * 2^(n-1), CAP),
 * full jitter as in the AWS SDKs.  The base is DynamoDB's in the SDKs
 * (25 ms), and a throttle's is larger (500 ms, the throttled base of the
 * SDKs' retry modes): a table that throttles needs time, not more
 * requests.  CAP is the SDKs' longest backoff.
 */
#define RETRY_BASE_MS 25.0
#define RETRY_THROTTLE_BASE_MS 500.0
#define RETRY_CAP_MS 20000.0

/* The retry budget of a connection: its size, and what a retry costs. */
#define RETRY_BUDGET 500
#define RETRY_COST 5
#define RETRY_TIMEOUT_COST 10

/* See wire.h: a full budget. */
void
retry_budget_init(RetryBudget *budget)
{
	budget->tokens = RETRY_BUDGET;
}

/*
 * See wire.h: a success gives back what its last retry cost, or one
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
 * The delay before retry number n (1-based) of a request, throttled or
 * not: full jitter over an exponentially growing, capped window.
 */
long
retry_backoff_us(int n, bool throttled)
{
	double		base = throttled ? RETRY_THROTTLE_BASE_MS : RETRY_BASE_MS;
	double		window = Min(RETRY_CAP_MS, base * pow(2.0, Max(n, 1) - 1));

	return (long) (pg_prng_double(&pg_global_prng_state) * window * 1000.0);
}

/* True when req has attempts left and its deadline has not passed. */
bool
retry_within_limits(DdbRequest *req)
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
	if (!retry_within_limits(req) || req->throttled > req->max_throttle_retries)
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
	req->retry_at = GetCurrentTimestamp() + retry_backoff_us(req->attempts, throttle);
	return true;
}
