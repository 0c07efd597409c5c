/*-------------------------------------------------------------------------
 *
 * shard_fdw.h
 *		Declarations shared by the PostgreSQL side of shard_fdw.
 *
 * The plain-C modules (sigv4, ddbjson, keyfmt, shardhash, awscreds, ...) have
 * headers of their own and never include this one.  This header is grouped
 * by the file that defines each symbol.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHARD_FDW_H
#define SHARD_FDW_H

#include "postgres.h"

#include "executor/tuptable.h"
#include "foreign/foreign.h"
#include "storage/block.h"
#include "lib/ilist.h"
#include "lib/stringinfo.h"
#include "nodes/pathnodes.h"
#include "utils/timestamp.h"

#include "compat.h"
#include "ddbjson.h"
#include "keyfmt.h"
#include "shardhash.h"

/* ---------------------------------------------------------------------
 * in option.c
 * ---------------------------------------------------------------------
 */

typedef enum ShardStrategy
{
	SHARD_NONE,
	SHARD_RANDOM,
	SHARD_CALCULATED,
	SHARD_RANGE,
	SHARD_DYNAMIC
} ShardStrategy;

typedef enum InsertMode
{
	INSERT_MODE_INSERT,
	INSERT_MODE_UPSERT
} InsertMode;

/* How a column's values are stored: the DynamoDB type of its attribute. */
typedef enum DdbType
{
	DDB_TYPE_S,
	DDB_TYPE_N,
	DDB_TYPE_B,
	DDB_TYPE_BOOL,
	DDB_TYPE_M,
	DDB_TYPE_L,
	DDB_TYPE_SS,
	DDB_TYPE_NS,
	DDB_TYPE_BS,
	DDB_TYPE_ITEM				/* attribute '*': the whole item as json */
} DdbType;

/*
 * Without max_concurrency, a read keeps one request in flight per shard it
 * visits, up to this many.
 */
#define SHARD_READ_CONCURRENCY_MAX 128

/* Server options, with defaults applied. */
typedef struct ShardServer
{
	Oid			serverid;
	char	   *region;
	char	   *endpoint;
	long		connect_timeout_ms;
	long		request_timeout_ms;
	int			max_retries;
	int			max_concurrency;
	bool		max_concurrency_set;	/* given, not the default */
	bool		consistent_read;
	char	   *ca_file;
	int			max_read_units;	/* per second; 0: no budget */
	int			max_write_units;
} ShardServer;

/*
 * How a user (through its user mapping, or a superuser without one) gets
 * its credentials: the mapping's static keys, or the server's ambient
 * sources (the AWS SDKs' default chain, or a profile of the shared files);
 * then, with role_arn, the role assumed with them.
 */
typedef struct ShardCredSpec
{
	char	   *servername;		/* for messages */
	char	   *access_key_id;	/* static keys, or NULL */
	char	   *secret_access_key;
	char	   *session_token;	/* NULL when none */
	char	   *profile;		/* a profile of the shared files, or NULL */
	char	   *role_arn;		/* the role to assume, or NULL */
	char	   *external_id;
	char	   *role_session_name;
	int			duration_s;		/* 0: STS's default */
} ShardCredSpec;

/* One column of a foreign table and how it maps to an attribute. */
typedef struct ShardColumn
{
	AttrNumber	attnum;
	char	   *name;			/* column name */
	char	   *attribute;		/* attribute name; "*" for the whole item */
	Oid			typid;
	int32		typmod;
	Oid			collation;
	DdbType		ddb_type;		/* stored type */
	bool		explicit_type;	/* ddb_type was given as an option */
	Oid			elemtype;		/* element type for arrays, else InvalidOid */
} ShardColumn;

/*
 * A key attribute (partition or sort key) and how its value is built from
 * the row: either straight from one column (template NULL, column set) or
 * from a template.
 */
typedef struct ShardKey
{
	char	   *attribute;		/* DynamoDB attribute name; NULL: no such key */
	char	   *format;			/* template text, or NULL */
	KeyTemplate *template;		/* parsed format, or NULL */
	KeyTemplate *base;			/* template of the base key (no {shard}) */
	int			column;			/* index into columns[] when no template */
	DdbType		type;			/* S, N or B */
} ShardKey;

/*
 * A scan hands UPDATE and DELETE the shard an item was read from as the
 * block number of its ctid; this one stands for the legacy unsharded key.
 */
#define LEGACY_SHARD_BLOCK ((BlockNumber) 0xFFFFFFFE)

/* Everything about one foreign table, with defaults applied. */
typedef struct ShardTable
{
	Oid			relid;
	char	   *relname;
	char	   *table;
	char	   *index;
	ShardKey	pk;
	ShardKey	sk;
	ShardKey	index_pk;		/* index keys written with each item, from */
	ShardKey	index_sk;		/* templates; attribute NULL when none */
	int			shards;
	ShardStrategy strategy;
	List	   *shard_by;		/* column indexes (int) into columns[] */
	ShardHash	hash;
	int			shard_base;
	int			nboundaries;
	char	  **boundaries;
	size_t	   *boundary_lens;
	bool		range_normalize;
	char	   *metadata_table;
	char	   *metadata_key;
	int			cooldown_s;
	int			max_shards;
	int			metadata_cache_ms;
	bool		legacy_unsharded;
	InsertMode	insert_mode;
	int			batch_size;
	int			max_partitions; /* time buckets × shards one read visits */
	bool		consistent_read;
	int			max_read_units;	/* per second, the table's or its server's;
								 * 0: no budget */
	int			max_write_units;
	int			ncolumns;
	ShardColumn *columns;		/* non-dropped columns, in attnum order */
	int			nlayouts;		/* 1 + the earlier layouts still read */
	struct ShardTable **layouts;	/* [0] the table itself (the newest
									 * layout), then option layout_history's,
									 * newest first */
	const DdbJson *layout_entry;	/* an earlier layout: its element of
									 * layout_history */
} ShardTable;

extern ShardServer *shard_get_server(Oid serverid);
extern ShardCredSpec *shard_get_cred_spec(Oid serverid, Oid userid);
extern ShardTable *shard_get_table(Oid relid);
extern ShardTable *shard_table_from_options(Oid relid, List *options);
extern const char *shard_option_value(List *options, const char *name);
extern bool shard_is_foreign_table(Oid relid);
extern ShardColumn *shard_find_column(ShardTable *t, const char *name);
extern int	shard_column_index(ShardTable *t, AttrNumber attnum);
extern const char *ddb_type_name(DdbType type);

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
extern void shard_require_utf8_database(void);
extern void shard_connection_init(void);


/* ---------------------------------------------------------------------
 * in transport.c
 * ---------------------------------------------------------------------
 */

/* Counters of requests; kept per scan or modify and per backend. */
typedef struct DdbStats
{
	int64		requests;		/* requests that completed successfully */
	int64		attempts;		/* HTTP attempts, retries included */
	int64		retries;
	int64		throttles;
	int64		items;			/* items returned (reads) or written */
	int64		scanned;		/* ScannedCount */
	double		capacity;		/* consumed capacity units */
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
								 * attempt starts later after the first */
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

	/* private to transport.c */
	int			throttled;		/* attempts throttled */
	int			retry_cost;		/* what its last retry took from the retry
								 * budget, 0 if none */
	double		budget_reserved;	/* units reserved in its group's budget */
	TimestampTz first_attempt_at;
	TimestampTz retry_at;
	dlist_node	node;
} DdbRequest;

extern DdbTransport *transport_create(DdbConn *conn);
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
extern DdbRequest *ddb_wait_any(DdbGroup *group);
extern void ddb_wait_for(DdbRequest *req);
extern DdbRequest *ddb_run(DdbGroup *group, const char *action,
						   const char *body, size_t len);
extern DdbJson *ddb_call(DdbGroup *group, const char *action,
						 const char *body, size_t len);
pg_noreturn extern void ddb_report_error(DdbRequest *req);
extern void report_write_progress(const char *doing, const char *done,
								  const char *relname, int64 rows, long doubt);
extern void ddb_request_json_fault(DdbRequest *req, long status,
								   const char *reason);
extern void ddb_request_shape_fault(DdbRequest *req, const DdbCheck *check);
extern const DdbStats *ddb_backend_stats(void);
extern char *transport_url_host(const char *url);

/* A plain HTTP exchange (a credential source's) in flight on a transport. */
typedef struct HttpExchange HttpExchange;

extern HttpExchange *transport_exchange_start(DdbTransport *t, const char *method,
											  const char *url, List *headers,
											  const char *body,
											  long connect_timeout_ms,
											  long timeout_ms);
extern bool transport_exchange_done(HttpExchange *x);
extern long transport_exchange_result(HttpExchange *x, StringInfo *answer,
									  bool *stale, char *err, size_t errlen);
extern void transport_exchange_wait(HttpExchange *x);
extern void transport_exchange_free(HttpExchange *x);

/* ---------------------------------------------------------------------
 * in budget.c
 * ---------------------------------------------------------------------
 */

extern Budget *budget_for(ShardTable *t, bool write);
extern long budget_delay_us(Budget *b);
extern double budget_reserve(Budget *b);
extern void budget_settle(Budget *b, double reserved, double consumed, bool answered);

/* ---------------------------------------------------------------------
 * in dynamic.c
 * ---------------------------------------------------------------------
 */

/* The shard metadata of one base key, as seed 000 stores it. */
typedef struct DynamicMeta
{
	int			shards;			/* number_of_shards; 0: no metadata */
	int64		last_updated;	/* epoch seconds */
	int			max_shards_ever;	/* the largest count in shard_history */
} DynamicMeta;

typedef struct DynamicStats
{
	int64		keys_created;
	int64		key_throttles;
	int64		growths;
} DynamicStats;

extern DynamicMeta dynamic_meta(ShardTable *t, DdbGroup *group, const char *base,
								bool refresh, bool create);
extern DynamicMeta dynamic_grow(ShardTable *t, DdbGroup *group, const char *base,
								DynamicMeta seen);
extern const DdbJson *dynamic_meta_item(ShardTable *t, DdbGroup *group,
										const char *base);
extern const DynamicStats *dynamic_backend_stats(void);

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
extern DdbRequest *ddb_request_again(DdbRequest *req, const char *action,
									 const char *body, size_t len, bool progressed);

/* ---------------------------------------------------------------------
 * in route.c
 * ---------------------------------------------------------------------
 */

extern char *route_range_key(ShardTable *t, const char *text);
extern int	route_shard(ShardTable *t, const char *const *values);
extern bool route_key_has_column(ShardTable *t, const ShardKey *k, int col);
extern const char *route_key_option(ShardTable *t, int col);
extern bool route_key_uses(ShardTable *t, int col);
extern const char *route_column_option(ShardTable *t, int col);
extern const char **route_template_values(ShardTable *t, const KeyTemplate *tmpl,
										  const char *const *values);
extern char *route_partition_key(ShardTable *t, const char *const *values,
								 long shard, bool base, char *err, size_t errlen);
extern char *route_sort_key(ShardTable *t, const char *const *values,
							char *err, size_t errlen);
extern char *route_index_key(ShardTable *t, const ShardKey *k, const char *const *values);
extern List *route_read_shards(ShardTable *t, const char *const *values,
							   int known_shards);
extern int	route_shards_per_partition(ShardTable *t, const bool *fixed);
extern int	route_bucket_column(ShardTable *t, const bool *fixed);
extern KeyTimeForm route_bucket_form(ShardTable *t, int col);
extern int64 route_time_usecs(Oid typid, Datum value);
extern List *route_read_buckets(ShardTable *t, int col, int64 lo, int64 hi,
								bool desc, int max);

/* Where route_write_shard placed a row of a dynamically sharded table. */
typedef struct RouteDynamic
{
	char	   *base;			/* the row's base key */
	DynamicMeta meta;			/* the metadata its shard was drawn from */
} RouteDynamic;

extern long route_write_shard(ShardTable *t, const char *const *values,
							  DdbGroup *group, bool create, RouteDynamic *dyn);

/* ---------------------------------------------------------------------
 * in layout.c
 * ---------------------------------------------------------------------
 */
extern void layout_load(ShardTable *t, List *options);
extern void layout_record(Oid relid, AlterTableCmd *cmd);
extern int	layout_of_item(ShardTable *t, const DdbJson *item, long *shard);
extern ShardTable *layout_item_layout(ShardTable *t, const DdbJson *item);
extern bool layout_places_column(ShardTable *t, int col);
extern bool layout_item_is_row(ShardTable *t, const DdbJson *item);
extern bool layout_sort_key_is_row(ShardTable *t, const DdbJson *item);
extern char *layout_describe(ShardTable *layout);
extern char *layout_history_without(ShardTable *t, const bool *keep);
extern char *layout_item_identity(ShardTable *t, const DdbJson *item);
extern List *layout_partition_keys(ShardTable *l, const char *const *texts);
extern const char **layout_item_texts(ShardTable *t, ShardTable *l, const DdbJson *item);
extern bool layout_holds(ShardTable *l, const char *const *texts, const char *pk);
extern bool layout_item_settled(ShardTable *t, const DdbJson *item);
extern char *layout_moved_to(ShardTable *t, const char *const *texts, const char *pk,
							 const char *sk);

/* ---------------------------------------------------------------------
 * in describe.c
 * ---------------------------------------------------------------------
 */

extern void shard_describe_size(ShardTable *t, double *items, double *bytes);
extern void describe_key_schema(const DdbJson *schema, const char **pk, const char **sk);
extern char *describe_key_hint(DdbConn *conn, const char *table, const char *index,
							   const DdbJson *request);

/* ---------------------------------------------------------------------
 * in import.c
 * ---------------------------------------------------------------------
 */
extern List *shard_import_schema(ImportForeignSchemaStmt *stmt, Oid serverid);

/* ---------------------------------------------------------------------
 * in codec.c
 * ---------------------------------------------------------------------
 */

extern const char *codec_key_type(const ShardKey *k);
extern DdbType ddb_type_for_column(Oid typid, Oid *elemtype);
extern bool ddb_type_fits_column(DdbType type, Oid typid);
extern void codec_write_value(JsonWriter *w, ShardColumn *col, Datum value);
extern char *codec_key_text(ShardColumn *col, Datum value);
extern Datum codec_read_value(const DdbJson *av, ShardColumn *col,
							  const DdbJson *item, ShardTable *t,
							  bool *isnull);
extern Datum codec_text_to_datum(const char *text, ShardColumn *col,
								 const DdbJson *item, ShardTable *t);
extern void codec_check_number(const char *text, const char *column);
extern char *codec_item_key_text(const DdbJson *item, ShardTable *t);
extern void codec_report_bad_item(DdbRequest *req, ShardTable *t);
extern char *codec_av_text(const DdbJson *av);

/* ---------------------------------------------------------------------
 * in request.c and writebody.c (the reads' bodies are declared in
 * scanstate.h)
 * ---------------------------------------------------------------------
 */

/* BatchWriteItem takes at most this many items. */
#define DDB_BATCH_WRITE_MAX 25

/* TransactWriteItems takes at most this many actions. */
#define DDB_TRANSACT_MAX 100

/*
 * The attribute a conditional PutItem stores beside the row's own: a
 * random token of the put, PUT_TOKEN_HEX hex digits.  When the answer to
 * an attempt is lost and a retry finds the key taken, the stored token
 * tells the put's own item (the lost attempt was applied) from one that
 * was there before, however alike.  Reads never show it.
 */
#define PUT_TOKEN_ATTRIBUTE "shard_fdw_put"
#define PUT_TOKEN_HEX 16


extern void request_write_key_value(JsonWriter *w, const ShardKey *key, const char *text);
extern void request_write_key_texts(JsonWriter *w, ShardTable *t, const char *pk,
									const char *sk);
extern void request_write_partition_condition(JsonWriter *w, ShardTable *t, const char *pk);
extern void request_write_start_key(JsonWriter *w, const DdbJson *start_key);
extern int	request_infinite_value(Oid typid, Datum value);
extern char *request_put(ShardTable *t, const char *item, bool conditional, size_t *len);
extern char *request_get_put_token(ShardTable *t, const DdbJson *item, size_t *len);
extern char *request_batch_put(ShardTable *t, char **items, int n, size_t *len);
extern char *request_update(ShardTable *t, TupleTableSlot *slot, const char *pk,
							const char *sk, const char *const *index_keys, size_t *len);
extern bool request_is_key_attribute(ShardTable *t, const char *attribute);
extern char *request_move(ShardTable *t, const char *old_pk, const char *old_sk,
						  const DdbJson *unchanged, const char *item, size_t *len);
extern char *request_put_checked(ShardTable *t, const char *item, List *others,
								 const char *sk, size_t *len);
extern char *request_delete(ShardTable *t, const char *pk, const char *sk, size_t *len);
extern char *request_delete_item(ShardTable *t, const DdbJson *item, bool unchanged,
								 size_t *len);
extern char *request_meta_get(ShardTable *t, const char *base, size_t *len);
extern char *request_meta_create(ShardTable *t, const char *base, long now, size_t *len);
extern char *request_meta_grow(ShardTable *t, const char *base, const DynamicMeta *seen,
							   int target, long now, size_t *len);
extern char *request_describe(const char *table, size_t *len);
extern int	request_infinite_value(Oid typid, Datum value);
extern char *request_list_tables(const char *last, size_t *len);
extern char *request_sample(const char *table, int limit, int segment, int segments,
							size_t *len);
extern char *request_partition_sample(const char *table, const char *attribute,
									  const char *pk, int limit, size_t *len);
extern char *request_count(ShardTable *t, const char *pk, const DdbJson *start_key,
						   size_t *len);
extern char *request_reshard_read(ShardTable *t, const char *pk, const DdbJson *start_key,
								  size_t *len);

#endif							/* SHARD_FDW_H */
