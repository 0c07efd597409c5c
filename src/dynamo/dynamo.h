/*-------------------------------------------------------------------------
 *
 * dynamo.h
 *		The dynamo layer: the DynamoDB requests above the wire.  Their
 *		bodies (request.c, writebody.c), a failed request as a PostgreSQL
 *		error (report.c, which sends no request), dynamic sharding's
 *		metadata table (dynamic.c), and DescribeTable and
 *		DescribeTimeToLive (describe.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHARD_FDW_DYNAMO_H
#define SHARD_FDW_DYNAMO_H

#include "wire/wire.h"

/* ---------------------------------------------------------------------
 * in dynamic.c
 * ---------------------------------------------------------------------
 */

/* The shard metadata of one base key, as the audit log's metadata holds it. */
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

/* Where dynamic_write_shard placed a row of a dynamically sharded table. */
typedef struct DynamicPlace
{
	char	   *base;			/* the row's base key */
	DynamicMeta meta;			/* the metadata its shard was drawn from */
} DynamicPlace;

extern long dynamic_write_shard(ShardTable *t, const char *const *values, DdbGroup *group,
								bool create, DynamicPlace *place);

/* ---------------------------------------------------------------------
 * in describe.c
 * ---------------------------------------------------------------------
 */

extern void shard_describe_size(ShardTable *t, double *items, double *bytes);
extern void describe_key_schema(const DdbJson *schema, const char **pk, const char **sk);
extern char *describe_indexes(const DdbJson *desc);
extern bool describe_keys(Oid serverid, const char *table, const char *index, bool strict,
						  const char **pk, const char **sk, char **indexes, char **why);
extern bool describe_ttl(Oid serverid, const char *table, const char **attribute,
						 char **why);

/* ---------------------------------------------------------------------
 * in report.c
 * ---------------------------------------------------------------------
 */

extern DdbJson *ddb_call(DdbGroup *group, const char *action,
						 const char *body, size_t len);
pg_noreturn extern void ddb_report_error(DdbRequest *req);
extern void report_write_progress(const char *doing, const char *done,
								  const char *relname, int64 rows, long doubt);
extern void report_bad_item(DdbRequest *req, ShardTable *t);

/* ---------------------------------------------------------------------
 * in request.c and writebody.c (a scan's bodies are the fdw layer's:
 * fdw/scanstate.h)
 * ---------------------------------------------------------------------
 */

/* BatchWriteItem takes at most this many items. */
#define DDB_BATCH_WRITE_MAX 25

/* TransactWriteItems takes at most this many actions. */
#define DDB_TRANSACT_MAX 100



extern void request_write_key_value(JsonWriter *w, const ShardKey *key, const char *text);
extern void request_write_key_texts(JsonWriter *w, ShardTable *t, const char *pk,
									const char *sk);
extern void request_write_partition_condition(JsonWriter *w, ShardTable *t, const char *pk);
extern void request_write_start_key(JsonWriter *w, const DdbJson *start_key);
extern char *request_item_key_json(ShardTable *t, const char *pk, const char *sk);
extern DdbJson *request_resume_key(ShardTable *t, const char *pk, const DdbJson *sk);
extern char *request_put(ShardTable *t, const char *item, bool conditional, size_t *len);
extern char *request_get_put_token(ShardTable *t, const DdbJson *item, size_t *len);
extern char *request_batch_put(ShardTable *t, char **items, int n, size_t *len);
extern List *request_update(ShardTable *t, TupleTableSlot *slot, const char *pk,
							const char *sk, const char *const *index_keys);
extern bool request_is_key_attribute(ShardTable *t, const char *attribute);
extern char *request_get_item(ShardTable *t, const char *pk, const char *sk, size_t *len);
extern char *request_move(ShardTable *t, const DdbJson *unchanged, const char *moved,
						  size_t *len);
extern char *request_move_row(ShardTable *t, const DdbJson *stored, const char *row_item,
							  size_t *len);
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
extern char *request_list_tables(const char *last, size_t *len);
extern char *request_sample(const char *table, int limit, int segment, int segments,
							size_t *len);
extern char *request_partition_sample(const char *table, const char *attribute,
									  const char *pk, int limit, size_t *len);
extern char *request_count(ShardTable *t, const char *pk, const DdbJson *start_key,
						   size_t *len);
extern char *request_reshard_read(ShardTable *t, const char *pk, const DdbJson *start_key,
								  size_t *len);

#endif							/* SHARD_FDW_DYNAMO_H */
