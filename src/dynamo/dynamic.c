/*-------------------------------------------------------------------------
 *
 * dynamic.c
 *		Dynamic sharding, as the audit log's: the partition key metadata
 *		table, read through a per-backend cache, created with one shard for
 *		a new key, and grown when DynamoDB throttles the key.
 *
 * The metadata item has exactly the audit-log article's schema, so that
 * applications following the article can share it: the key attribute
 * (metadata_key, holding the base key), number_of_shards (N), last_updated
 * (N, epoch seconds) and shard_history (SS of "epoch:count").  Growth
 * doubles the count (up to max_shards) with an UpdateItem conditioned on
 * the last_updated value read (optimistic locking), at most once per
 * cooldown, after a random back-off so that many writers do not all try at
 * once.
 *
 *-------------------------------------------------------------------------
 */
#include "dynamo/dynamo.h"

#include <time.h>

#include "miscadmin.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"

/* The longest base key the cache holds; DynamoDB's limit is 2048 bytes. */
#define META_KEY_MAX 2048

typedef struct MetaKey
{
	Oid			relid;
	char		base[META_KEY_MAX + 1];
} MetaKey;

typedef struct MetaEntry
{
	MetaKey		key;
	DynamicMeta meta;
	TimestampTz fetched_at;
} MetaEntry;

static HTAB *meta_cache = NULL;

/* Cumulative counters of this backend. */
static DynamicStats dynamic_stats;

/* The cache entry of (t, base), made on first use. */
static MetaEntry *
meta_entry(ShardTable *t, const char *base)
{
	MetaKey		key;
	bool		found;
	MetaEntry  *entry;

	if (meta_cache == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(MetaKey);
		ctl.entrysize = sizeof(MetaEntry);
		meta_cache = hash_create("shard_fdw shard metadata", 64, &ctl,
								 HASH_ELEM | HASH_BLOBS);
	}
	if (strlen(base) > META_KEY_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("base key of foreign table \"%s\" is longer than %d bytes",
						t->relname, META_KEY_MAX)));
	memset(&key, 0, sizeof(key));
	key.relid = t->relid;
	strcpy(key.base, base);
	entry = hash_search(meta_cache, &key, HASH_ENTER, &found);
	if (!found)
		entry->fetched_at = 0;
	return entry;
}

/* Read a metadata item of dynamic_meta_item into *meta; false when there is none. */
static bool
parse_meta(const DdbJson *item, DynamicMeta *meta)
{
	const char *n;
	const char *updated;
	const DdbJson *history;

	if (item == NULL)
		return false;
	n = codec_av_text(ddbjson_get(item, "number_of_shards"));
	updated = codec_av_text(ddbjson_get(item, "last_updated"));
	meta->shards = atoi(n);
	meta->last_updated = strtoll(updated, NULL, 10);
	meta->max_shards_ever = meta->shards;
	history = ddbjson_get(ddbjson_get(item, "shard_history"), "SS");
	for (int i = 0; history && history->kind == DJ_ARRAY && i < history->n; i++)
	{
		const char *colon = strchr(history->elems[i].str, ':');

		if (colon)
			meta->max_shards_ever = Max(meta->max_shards_ever, atoi(colon + 1));
	}
	if (meta->shards < 1)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_INVALID_DATA_TYPE),
				 errmsg("shard metadata item has number_of_shards %d", meta->shards)));
	return true;
}

/*
 * The metadata item of base key base, read strongly consistently, or NULL
 * when there is none.  It lives as long as the group.  An item without
 * number_of_shards or last_updated (written by someone else) is an error.
 */
const DdbJson *
dynamic_meta_item(ShardTable *t, DdbGroup *group, const char *base)
{
	size_t		len;
	char	   *body = request_meta_get(t, base, &len);
	const DdbJson *item = ddbjson_get(ddb_call(group, "GetItem", body, len), "Item");
	const char *const needed[] = {"number_of_shards", "last_updated"};

	if (item == NULL || item->kind != DJ_OBJECT)
		return NULL;
	for (size_t i = 0; i < lengthof(needed); i++)
		if (codec_av_text(ddbjson_get(item, needed[i])) == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_FDW_INVALID_DATA_TYPE),
					 errmsg("shard metadata item of key \"%s\" in DynamoDB table \"%s\" has no attribute \"%s\"",
							base, t->metadata_table, needed[i]),
					 errhint("Give the item its \"%s\", or delete it to start the key anew with one shard.",
							 needed[i])));
	return item;
}

/* Create the metadata of a new key, with one shard; false if it exists. */
static bool
create_meta(ShardTable *t, DdbGroup *group, const char *base)
{
	size_t		len;
	char	   *body = request_meta_create(t, base, (long) time(NULL), &len);
	DdbRequest *req;

	req = ddb_run(group, "PutItem", body, len);
	if (req->status == DDB_OK)
	{
		dynamic_stats.keys_created++;
		return true;
	}
	if (strcmp(req->error_type, "ConditionalCheckFailedException") == 0)
		return false;
	ddb_report_error(req);
}

/*
 * The shard metadata of base key base: from the cache while it is younger
 * than metadata_cache_ms (and refresh is false), else read from the
 * metadata table.  A writer (create) makes it for a new key; a reader of a
 * key without metadata gets shards = 0.
 */
DynamicMeta
dynamic_meta(ShardTable *t, DdbGroup *group, const char *base, bool refresh,
			 bool create)
{
	MetaEntry  *entry = meta_entry(t, base);
	TimestampTz now = GetCurrentTimestamp();
	DynamicMeta meta = {0};

	if (!refresh && entry->fetched_at != 0 &&
		!TimestampDifferenceExceeds(entry->fetched_at, now, t->metadata_cache_ms))
		return entry->meta;
	for (int tries = 0; tries < 3; tries++)
	{
		if (parse_meta(dynamic_meta_item(t, group, base), &meta))
			break;
		if (!create)
			return meta;
		if (create_meta(t, group, base))
			continue;
	}
	entry = meta_entry(t, base);
	entry->meta = meta;
	entry->fetched_at = now;
	return meta;
}

/*
 * React to DynamoDB throttling writes of base key base that were made with
 * the metadata seen: unless another writer grew the key already, or it grew
 * less than cooldown_s ago, wait a random back-off and double the shard
 * count (up to max_shards) with an UpdateItem conditioned on the
 * last_updated read.  Returns the metadata to write with next.
 */
DynamicMeta
dynamic_grow(ShardTable *t, DdbGroup *group, const char *base, DynamicMeta seen)
{
	DynamicMeta meta = dynamic_meta(t, group, base, true, true);
	long		now = (long) time(NULL);
	int			target;
	size_t		len;
	char	   *body;
	DdbRequest *req;
	long		backoff_ms;

	dynamic_stats.key_throttles++;
	/* last_updated has whole seconds: a full cooldown has passed only after */
	if (meta.shards > seen.shards || meta.shards >= t->max_shards ||
		(t->cooldown_s > 0 && now - meta.last_updated <= t->cooldown_s))
		return meta;

	/* a random back-off, so that writers throttled together do not all try */
	backoff_ms = (long) pg_prng_uint64_range(&pg_global_prng_state, 0,
											 Min(1000, t->cooldown_s * 100 + 100));
	for (long waited = 0; waited < backoff_ms; waited += 10)
	{
		CHECK_FOR_INTERRUPTS();
		pg_usleep(10000L);
	}
	meta = dynamic_meta(t, group, base, true, true);
	if (meta.shards > seen.shards || meta.shards >= t->max_shards)
		return meta;

	target = Min(meta.shards * 2, t->max_shards);
	body = request_meta_grow(t, base, &meta, target, (long) time(NULL), &len);
	req = ddb_run(group, "UpdateItem", body, len);
	if (req->status == DDB_OK)
		dynamic_stats.growths++;
	else if (strcmp(req->error_type, "ConditionalCheckFailedException") != 0)
		ddb_report_error(req);
	return dynamic_meta(t, group, base, true, true);
}

/*
 * The shard a new row with the given column values is written to
 * (route_write_shard).  A dynamically sharded table's count is its base
 * key's metadata, trusted for metadata_cache_ms, read through group, and
 * made with one shard for a new key when create (a write) or taken as one
 * shard when not (the tools); *place, when not NULL, gets the base key and
 * the metadata used.  Other strategies send nothing.
 */
long
dynamic_write_shard(ShardTable *t, const char *const *values, DdbGroup *group,
					bool create, DynamicPlace *place)
{
	char		err[SFDW_ERRLEN];
	char	   *base;
	DynamicMeta meta;

	if (t->strategy != SHARD_DYNAMIC)
		return route_write_shard(t, values, 0);
	base = route_partition_key(t, values, 0, true, err, sizeof(err));
	if (base == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot build the base key of a row of foreign table \"%s\": %s",
						t->relname, err)));
	meta = dynamic_meta(t, group, base, false, create);
	if (place)
	{
		place->base = base;
		place->meta = meta;
	}
	return route_write_shard(t, values, meta.shards);
}

/* The cumulative dynamic sharding counters of this backend. */
const DynamicStats *
dynamic_backend_stats(void)
{
	return &dynamic_stats;
}
