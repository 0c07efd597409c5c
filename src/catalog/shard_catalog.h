/*-------------------------------------------------------------------------
 *
 * shard_catalog.h
 *		The catalog layer: a foreign server's and a foreign table's options
 *		loaded and checked (option.c), a table's earlier layouts (layout.c),
 *		its secondary indexes (indexes.c) and the views of them that reads
 *		plan with (indexview.c), which shard and key a row has (route.c),
 *		and values between Datums and DynamoDB's AttributeValues
 *		(codec.c).  Reads the catalogs only: nothing here sends a request.
 *		Above the plain-C core (core/), below every other layer.  (Not
 *		catalog.h: PostgreSQL has one of that name.)
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHARD_FDW_SHARD_CATALOG_H
#define SHARD_FDW_SHARD_CATALOG_H

#include "postgres.h"

#include "executor/tuptable.h"
#include "foreign/foreign.h"
#include "storage/block.h"
#include "lib/ilist.h"
#include "lib/stringinfo.h"
#include "nodes/pathnodes.h"
#include "utils/timestamp.h"

#include "compat.h"
#include "core/ddbjson.h"
#include "core/keyfmt.h"
#include "core/shardhash.h"

/*
 * Push an error context callback, fn(arg), on the stack PostgreSQL's
 * errors run; pop it with pop_error_context.  An error unwinds the stack
 * by itself.
 */
static inline void
push_error_context(ErrorContextCallback *cb, void (*fn) (void *), void *arg)
{
	cb->callback = fn;
	cb->arg = arg;
	cb->previous = error_context_stack;
	error_context_stack = cb;
}

/* Pop the error context callback push_error_context pushed. */
static inline void
pop_error_context(ErrorContextCallback *cb)
{
	error_context_stack = cb->previous;
}

/* ---------------------------------------------------------------------
 * in shim.c
 * ---------------------------------------------------------------------
 */

extern void shim_install(void);

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
	char	   *region;			/* given, or resolved (awsenv_resolve_server) */
	char	   *endpoint;		/* likewise */
	int			use_fips;		/* -1: not given, else false or true */
	int			use_dualstack;
	long		connect_timeout_ms;
	long		request_timeout_ms; /* a request's deadline, retries included */
	long		attempt_timeout_ms; /* one attempt's */
	int			max_idle_connection_s;	/* a kept-alive connection idle longer
										 * is closed, not reused */
	int			max_retries;
	int			max_concurrency;
	bool		max_concurrency_set;	/* given, not the default */
	bool		consistent_read;
	char	   *ca_file;
	int			max_read_units;	/* per second; 0: no budget */
	int			max_write_units;
	bool		use_indexes;	/* the planner may read secondary indexes */
	int			read_units_cap; /* per statement; 0: no cap */
	int			write_units_cap;
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
	bool		not_null;		/* declared NOT NULL */
	bool		unprojected;	/* in an index's view (shard_index_view): the
								 * index does not hold its attribute */
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

/* How much of each item a secondary index holds: its ProjectionType. */
typedef enum IndexProjection
{
	PROJECT_ALL,
	PROJECT_KEYS_ONLY,			/* its keys and the table's */
	PROJECT_INCLUDE				/* ... and the attributes listed */
} IndexProjection;

/*
 * A global or local secondary index of the DynamoDB table, as option
 * secondary_indexes records it (indexes.c).
 */
typedef struct ShardIndex
{
	char	   *name;
	bool		local;			/* an LSI; else a GSI */
	char	   *pk;				/* its partition key attribute */
	DdbType		pk_type;		/* S, N or B */
	char	   *sk;				/* its sort key attribute, or NULL */
	DdbType		sk_type;
	IndexProjection projection;
	List	   *attributes;		/* INCLUDE: the other attributes it holds
								 * (String) */
} ShardIndex;

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
	char	   *ttl_attribute;	/* the table's TTL attribute (option
								 * ttl_attribute, learnt from DynamoDB), or
								 * NULL */
	bool		include_expired;	/* reads keep the items whose TTL has
									 * passed */
	int			read_units_cap; /* per statement, the table's or its server's;
								 * 0: no cap */
	int			write_units_cap;
	int			ncolumns;
	ShardColumn *columns;		/* non-dropped columns, in attnum order */
	int			nlayouts;		/* 1 + the earlier layouts still read */
	struct ShardTable **layouts;	/* [0] the table itself (the newest
									 * layout), then option layout_history's,
									 * newest first */
	const DdbJson *layout_entry;	/* an earlier layout: its element of
									 * layout_history */
	int			nindexes;		/* the DynamoDB table's secondary indexes */
	ShardIndex *indexes;		/* (option secondary_indexes) */
	bool		use_indexes;	/* the planner may read them */
	struct ShardTable *base;	/* a view of one of them (shard_index_view):
								 * the table it is an index of; else NULL */
	bool		index_local;	/* a view: index is an LSI */
} ShardTable;

extern ShardServer *shard_get_server(Oid serverid);
extern ShardCredSpec *shard_get_cred_spec(Oid serverid, Oid userid);
extern ShardTable *shard_table_from_options(Oid relid, List *options);
extern const char *shard_option_value(List *options, const char *name);
extern bool shard_is_foreign_table(Oid relid);
extern void shard_require_utf8_database(void);
extern ShardColumn *shard_find_column(ShardTable *t, const char *name);
extern int	shard_column_index(ShardTable *t, AttrNumber attnum);
extern const char *ddb_type_name(DdbType type);
extern bool shard_key_has_column(ShardTable *t, const ShardKey *k, int col);
extern const char *shard_key_option(ShardTable *t, int col);
extern bool shard_key_uses(ShardTable *t, int col);
extern const char *shard_column_option(ShardTable *t, int col);
extern const char *shard_expiry_attribute(ShardTable *t);

/* ---------------------------------------------------------------------
 * in indexes.c
 * ---------------------------------------------------------------------
 */

extern ShardIndex *indexes_parse(const char *value, int *n);
extern char *indexes_option_text(const ShardIndex *indexes, int n);
extern const char *index_projection_name(IndexProjection projection);
extern int	shard_index_find(ShardTable *t, const char *name);

/* ---------------------------------------------------------------------
 * in indexview.c
 * ---------------------------------------------------------------------
 */

extern ShardTable *shard_index_view(ShardTable *t, int i, const char **why);

/* ---------------------------------------------------------------------
 * in awsenv.c
 * ---------------------------------------------------------------------
 */

extern const char *awsenv_get(const char *name);
extern char *awsenv_shared_file(const char *variable, const char *name);
extern char *awsenv_read_file(const char *path, char **why);
extern const char *awsenv_profile(const char *profile);
extern char *awsenv_region(const char *option, const char *profile);
extern char *awsenv_endpoint(const char *service, const char *host, const char *option,
							 const char *region, int use_fips, int use_dualstack,
							 const char *profile);
extern void awsenv_resolve_server(ShardServer *server, const char *profile);

/* ---------------------------------------------------------------------
 * in route.c
 * ---------------------------------------------------------------------
 */

extern char *route_range_key(ShardTable *t, const char *text);
extern int	route_shard(ShardTable *t, const char *const *values);
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

extern long route_write_shard(ShardTable *t, const char *const *values,
							  int known_shards);

/* ---------------------------------------------------------------------
 * in layout.c
 * ---------------------------------------------------------------------
 */
extern ShardTable *shard_get_table(Oid relid);
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
 * in codec.c
 * ---------------------------------------------------------------------
 */

/*
 * The attribute a conditional PutItem stores beside the row's own: a
 * random token of the put, PUT_TOKEN_HEX hex digits.  When the answer to
 * an attempt is lost and a retry finds the key taken, the stored token
 * tells the put's own item (the lost attempt was applied) from one that
 * was there before, however alike.  Reads never show it.
 */
#define PUT_TOKEN_ATTRIBUTE "shard_fdw_put"
#define PUT_TOKEN_HEX 16

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
extern char *codec_av_text(const DdbJson *av);
extern char *codec_key_field(ShardTable *t, ShardKey *k, const DdbJson *item,
							 const char *colname);

#endif							/* SHARD_FDW_SHARD_CATALOG_H */
