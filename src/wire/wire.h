/*-------------------------------------------------------------------------
 *
 * wire.h
 *		The wire layer: DynamoDB requests in flight over HTTP inside one
 *		backend (transport.c, on connections kept alive by links.c, waits on
 *		sockets.c), when to retry them (retry.c), the credentials they are
 *		signed with (credentials.c, the sources' plain exchanges in
 *		exchange.c, a credential_process run by process.c), connections per
 *		server and user (connection.c), capacity budgets (budget.c), and
 *		the counters of every backend's requests in shared memory (stat.c).
 *		Knows requests as actions and bodies, not what they mean: that is
 *		the dynamo layer's.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHARD_FDW_WIRE_H
#define SHARD_FDW_WIRE_H

#include "catalog/shard_catalog.h"

/* ---------------------------------------------------------------------
 * in credentials.c
 * ---------------------------------------------------------------------
 */

/*
 * The credentials a connection signs with; the keys are NULL until
 * credentials_ensure first fetches them.  generation changes whenever the
 * keys do, so that a signer deriving keys from them knows when to derive
 * again.  The secrets of the keys they replaced are kept until the next
 * change, for errors to requests signed with them to be blanked of them.
 */
typedef struct ShardCredentials
{
	char	   *access_key_id;
	char	   *secret_access_key;
	char	   *session_token;	/* NULL when none */
	char	   *previous_secret_access_key; /* NULL when none */
	char	   *previous_session_token; /* NULL when none */
	uint32		generation;
	ShardServer *server;
	ShardCredSpec *spec;
	MemoryContext cxt;
	struct ShardCredState *state;	/* private to credentials.c */
} ShardCredentials;

typedef struct DdbTransport DdbTransport;

extern ShardCredentials *credentials_create(ShardServer *server, ShardCredSpec *spec);
extern void credentials_ensure(ShardCredentials *c, DdbTransport *t);
extern void credentials_destroy(ShardCredentials *c);
extern const char *credentials_source_name(ShardCredentials *c);

/* ---------------------------------------------------------------------
 * in connection.c
 * ---------------------------------------------------------------------
 */

/*
 * A connection to DynamoDB for one user on one server: its options, its
 * credentials and the transport (libcurl multi handle and its connection
 * cache).  Cached per backend for as long as the options stay the same.
 */
typedef struct DdbConn
{
	Oid			serverid;
	Oid			userid;
	MemoryContext cxt;
	ShardServer *server;
	ShardCredentials *creds;
	DdbTransport *transport;
	bool		invalid;		/* options changed: rebuild when not in use */
	bool		in_use;			/* handed out in the current transaction */
} DdbConn;

extern DdbConn *shard_get_connection(Oid serverid, Oid userid);
extern void shard_connection_init(void);


/* ---------------------------------------------------------------------
 * in transport.c (and answer.c: the faults of answers, the signing time)
 * ---------------------------------------------------------------------
 */

/*
 * Counters of requests; kept per group (a scan, a modify), per backend,
 * and per table and server in shared memory (stat.c).
 */
typedef struct DdbStats
{
	int64		requests;		/* requests that finished, failed or not */
	int64		attempts;		/* HTTP attempts, retries included */
	int64		retries;
	int64		throttles;
	int64		errors;			/* requests that failed for good */
	int64		items;			/* a scan's rows returned, or items written
								 * (counted by the scan or the writer) */
	int64		scanned;		/* a scan's ScannedCount of the pages it
								 * read (counted by the scan) */
	int64		read_items;		/* what the answers say DynamoDB read:
								 * ScannedCount, and the items of GetItem
								 * and BatchGetItem */
	int64		returned_items; /* ... and returned: Count, and those items */
	double		read_units;		/* consumed capacity of reads */
	double		write_units;	/* ... of every other request */
	int64		budget_wait_us; /* time held back by a capacity budget */
} DdbStats;

typedef enum DdbStatus
{
	DDB_QUEUED,					/* waiting for a free slot or its retry time */
	DDB_RUNNING,				/* an attempt is in flight */
	DDB_OK,
	DDB_FAILED
} DdbStatus;

typedef struct DdbGroup DdbGroup;
typedef struct Budget Budget;	/* in budget.c */

/*
 * One DynamoDB API call, with its retries.  Lives in its own memory
 * context, which holds the body, the response and its parse tree;
 * ddb_request_free releases all of it.
 */
typedef struct DdbRequest
{
	DdbGroup   *group;
	MemoryContext cxt;
	const char *action;			/* "Query", "PutItem", ... */
	char	   *body;
	size_t		body_len;
	void	   *owner;			/* the caller's back-pointer */
	int			rows;			/* the rows of a statement it writes, for
								 * ddb_group_rows_in_doubt */
	int			max_retries;	/* the server's, unless the caller lowers it */
	int			max_throttle_retries;	/* of throttled attempts; likewise */
	int			timeout_ms;		/* the server's request_timeout_ms: no
								 * attempt runs past it after the first
								 * began */
	int			attempt_timeout_ms; /* the server's attempt_timeout_ms: one
									 * attempt's longest wait for its answer */
	bool		items_later;	/* the items of its Items are checked as they
								 * are read (ddbjson_check_page_item), not
								 * on arrival */
	bool		parse_later;	/* ... and parsed then, too
								 * (ddbjson_parse_deferred) */

	DdbStatus	status;
	DdbJson    *response;		/* parsed body once DDB_OK */
	long		http_status;	/* of the last attempt; 0 when none answered */
	char	   *error_type;		/* short DynamoDB error type, or a transport
								 * error name */
	char	   *error_message;
	bool		last_throttled; /* DynamoDB throttled its last attempt (a
								 * throttling error, or a transaction
								 * cancelled for throttling only) */
	bool		key_throttled;	/* a KeyRangeThroughputExceeded reason came */
	bool		throttle_reasons;	/* a throttle came with ThrottlingReasons */
	bool		maybe_applied;	/* an attempt reached DynamoDB whole, and its
								 * answer, if any, does not say whether it
								 * took effect */
	DdbCheck   *fault;			/* what broke DynamoDB's shapes in an answer
								 * that parsed, or NULL */
	int			attempts;
	bool		budget_spent;	/* a retry was refused: the connection's retry
								 * budget was spent */

	/* private to the transport (transportstate.h) */
	int			throttled;		/* attempts throttled */
	bool		clock_mended;	/* sent again once, outside the retry
								 * policy, signed with a mended clock */
	int			retry_cost;		/* what its last retry took from the retry
								 * budget, 0 if none */
	double		budget_reserved;	/* units reserved in its group's budget */
	TimestampTz first_attempt_at;
	TimestampTz retry_at;
	dlist_node	node;
} DdbRequest;

/* What a transport calls before it signs (transport_create). */
typedef void (*TransportPrepareFn) (void *arg, DdbTransport *t);

extern DdbTransport *transport_create(DdbConn *conn, TransportPrepareFn prepare,
									  void *prepare_arg);
extern void transport_destroy(DdbTransport *t);
extern void transport_abort(DdbTransport *t, int nest_level);
extern void transport_subcommit(DdbTransport *t, int nest_level);
extern DdbGroup *ddb_group_create(DdbConn *conn, int max_inflight);
extern void ddb_group_set_max_inflight(DdbGroup *group, int max_inflight);
extern void ddb_group_reset(DdbGroup *group);
extern void ddb_group_free(DdbGroup *group);
extern void ddb_group_hold(DdbGroup **holder, MemoryContext cxt);
extern long ddb_group_rows_in_doubt(DdbGroup *group);
extern DdbStats *ddb_group_stats(DdbGroup *group);
extern DdbConn *ddb_group_conn(DdbGroup *group);
extern void ddb_group_set_budget(DdbGroup *group, Budget *budget);
extern Budget *ddb_group_budget(DdbGroup *group);
extern DdbRequest *ddb_request_create(DdbGroup *group, const char *action,
									  const char *body, size_t len);
extern void ddb_request_free(DdbRequest *req);
extern void ddb_submit(DdbRequest *req);
extern void ddb_submit_after(DdbRequest *req, long delay_us);
extern void ddb_count_retry(DdbRequest *req);
extern DdbRequest *ddb_request_again(DdbRequest *req, const char *action,
									 const char *body, size_t len, bool progressed);
extern DdbRequest *ddb_wait_any(DdbGroup *group);
extern void ddb_wait_for(DdbRequest *req);
extern DdbRequest *ddb_run(DdbGroup *group, const char *action,
						   const char *body, size_t len);
extern void ddb_request_json_fault(DdbRequest *req, long status,
								   const char *reason);
extern void ddb_request_shape_fault(DdbRequest *req, const DdbCheck *check);
extern const DdbStats *ddb_backend_stats(void);
extern time_t aws_signing_time(void);

/* A plain HTTP exchange (a credential source's) in flight on a transport. */
typedef struct HttpExchange HttpExchange;

extern HttpExchange *transport_exchange_start(DdbTransport *t, const char *method,
											  const char *url, List *headers,
											  const char *body,
											  long connect_timeout_ms,
											  long timeout_ms);
extern bool transport_exchange_done(HttpExchange *x);
extern long transport_exchange_result(HttpExchange *x, StringInfo *answer,
									  bool *stale, bool *timed_out,
									  char *err, size_t errlen);
extern void transport_exchange_wait(HttpExchange *x);
extern void transport_exchange_free(HttpExchange *x);
extern void transport_pause(DdbTransport *t, long ms);

/* ---------------------------------------------------------------------
 * in process.c
 * ---------------------------------------------------------------------
 */

/* A child process run for its standard output (a credential_process). */
typedef struct ChildProcess ChildProcess;

extern ChildProcess *child_start(const char *command, long timeout_ms, size_t max_output,
								 char *err, size_t errlen);
extern bool child_done(ChildProcess *p);
extern int	child_result(ChildProcess *p, StringInfo *output, char *err, size_t errlen);
extern void child_stop(ChildProcess *p);

/* ---------------------------------------------------------------------
 * in budget.c
 * ---------------------------------------------------------------------
 */

extern Budget *budget_for(ShardTable *t, bool write);
extern long budget_delay_us(Budget *b);
extern double budget_reserve(Budget *b);
extern void budget_settle(Budget *b, double reserved, double consumed, bool answered);
extern bool budget_paces(Budget *b);
extern Oid	budget_relid(Budget *b);
extern bool budget_past_cap(Budget *b);
extern void budget_check_cap(Budget *b);

/* ---------------------------------------------------------------------
 * in stat.c
 * ---------------------------------------------------------------------
 */

/* The counters of one foreign table (or none) and server of a database. */
typedef struct DdbStatRow
{
	Oid			dbid;
	Oid			relid;			/* InvalidOid: requests of no foreign table,
								 * or (with dbid and serverid invalid too)
								 * those no entry was left for */
	Oid			serverid;
	DdbStats	counts;
} DdbStatRow;

extern void stat_init(void);
extern void stat_flush(Oid relid, Oid serverid, const DdbStats *total, DdbStats *flushed);
extern DdbStatRow *stat_rows(int *nrows, TimestampTz *reset_at);
extern TimestampTz stat_reset(void);

/* ---------------------------------------------------------------------
 * in retry.c
 * ---------------------------------------------------------------------
 */

/* The retry budget of a connection (AWS SDKs' standard mode). */
typedef struct RetryBudget
{
	int			tokens;
} RetryBudget;

extern void retry_budget_init(RetryBudget *budget);
extern void retry_budget_refill(RetryBudget *budget, DdbRequest *req);
extern bool retry_is_throttle(const char *type);
extern bool retry_is_transient(const char *type);
extern bool retry_schedule(DdbRequest *req, RetryBudget *budget, bool timeout);
extern bool retry_within_limits(DdbRequest *req);
extern long retry_backoff_us(int n, bool throttled);

#endif							/* SHARD_FDW_WIRE_H */
