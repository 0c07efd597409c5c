/*-------------------------------------------------------------------------
 *
 * fetch.c
 *		The table's items of a read through a global secondary index that
 *		lacks columns the query needs (a KEYS_ONLY or INCLUDE projection):
 *		the index's items are taken in the read's order, a batch at a time,
 *		and the table's items of their keys got by BatchGetItem, all of a
 *		batch's requests in flight at once; the scan returns the table's
 *		items in the index's order.
 *
 * A global secondary index is only eventually consistent: an index item
 * may name a table item that is gone, or whose index keys have changed
 * since.  Such an item is passed over: the order the scan claims is the
 * index's, which the table's item then no longer has, and every condition
 * is checked again on the table's item.  A batch is as large as the LIMIT
 * when one is sent, else a page of keys, doubling up to max_concurrency
 * BatchGetItems of BATCH_GET_MAX keys, so that a query that stops early
 * gets few keys in vain while a long read keeps every request in flight.
 *
 *-------------------------------------------------------------------------
 */
#include "fdw/fdw.h"

#include "common/hashfn.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"

#include "fdw/scanstate.h"

/* An item of the index, and the table's item got for it. */
typedef struct FetchEntry
{
	char	   *key;			/* its key in the table, as JSON */
	char	   *pk;				/* the index's keys it has, as texts */
	char	   *sk;
	const DdbJson *item;		/* the table's item of key, or NULL */
} FetchEntry;

/* The entries of one batch whose keys have one hash. */
typedef struct KeyEntries
{
	uint32		hash;
	List	   *entries;
} KeyEntries;

typedef struct FetchState
{
	ShardScanState *get;		/* the table's items, got by key */
	MemoryContext batchcxt;		/* one batch: its entries and keys */
	FetchEntry *entries;		/* the batch's entries, in the index's order */
	int			nentries;
	int			next;			/* the entry to return next */
	int			batch;			/* the entries of the next batch */
	bool		index_done;		/* the index's items are all taken */
	int64		fetched;		/* for EXPLAIN ANALYZE: items got */
} FetchState;

/* A new scan state that gets items of the table ss reads an index of. */
static ShardScanState *
get_scan(ShardScanState *ss)
{
	ShardScanState *get = palloc0(sizeof(ShardScanState));
	MemoryContext cxt = GetMemoryChunkContext(ss);

	get->t = ss->t->base;
	get->op = SCAN_OP_GET;
	get->attrs = ss->attrs;
	get->conn = ss->conn;
	get->max_inflight = ss->max_inflight;
	get->bucket_col = -1;
	get->keep_pages = true;
	get->runcxt = AllocSetContextCreate(cxt, "shard_fdw fetch", ALLOCSET_DEFAULT_SIZES);
	get->rowcxt = AllocSetContextCreate(cxt, "shard_fdw fetch row", ALLOCSET_SMALL_SIZES);
	get->group = ddb_group_create(ss->conn, ss->max_inflight);
	ddb_group_set_budget(get->group, ddb_group_budget(ss->group));
	ddb_group_hold(&get->group, cxt);
	get->expression_maps = request_expression_maps(get);
	return get;
}

/*
 * Set scan ss, which reads an index lacking columns it needs, to return
 * the table's items: the index's Query asks for the keys only (the
 * index's, and the table's that name the item), and the BatchGetItems
 * for what the scan was to read.
 */
void
fetch_begin(ShardScanState *ss)
{
	ShardTable *t = ss->t;
	FetchState *f = palloc0(sizeof(FetchState));
	const char *keys[4] = {t->pk.attribute, t->sk.attribute,
	t->base->pk.attribute, t->base->sk.attribute};

	f->get = get_scan(ss);
	f->batchcxt = AllocSetContextCreate(GetMemoryChunkContext(ss), "shard_fdw fetch batch",
										ALLOCSET_DEFAULT_SIZES);
	ss->attrs = NIL;
	for (int k = 0; k < 4; k++)
		if (keys[k])
			ss->attrs = list_append_unique(ss->attrs, makeString(pstrdup(keys[k])));
	ss->fetcher = f;
	fetch_reset(ss);
}

/* The text of item's attribute attr (NULL for none), copied. */
static char *
attribute_text(const DdbJson *item, const char *attr)
{
	const char *text = attr ? codec_av_text(ddbjson_get(item, attr)) : NULL;

	return text ? pstrdup(text) : NULL;
}

/* The key in the table of item (of the table or of its index), as JSON. */
static char *
table_key(ShardTable *base, const DdbJson *item)
{
	return request_item_key_json(base, codec_av_text(ddbjson_get(item, base->pk.attribute)),
								 base->sk.attribute ?
								 codec_av_text(ddbjson_get(item, base->sk.attribute)) : NULL);
}

/*
 * The entries of key's hash in by_key, a hash of the batch's keys, added
 * (*found false) when enter, else NULL when there is none.
 */
static KeyEntries *
key_entries(HTAB *by_key, const char *key, bool enter, bool *found)
{
	uint32		hash = hash_bytes((const unsigned char *) key, strlen(key));

	return hash_search(by_key, &hash, enter ? HASH_ENTER : HASH_FIND, found);
}

/*
 * Take the next batch of the index's items, and get the table's items of
 * their keys, each key once, BATCH_GET_MAX a request.
 */
static void
fetch_batch(ShardScanState *ss)
{
	FetchState *f = ss->fetcher;
	ShardScanState *get = f->get;
	ShardTable *base = ss->t->base;
	HTAB	   *by_key;
	HASHCTL		ctl;
	List	   *keys = NIL;
	List	   *streams;
	const DdbJson *item;
	MemoryContext old;
	ListCell   *lc;
	int			i;

	ddb_group_reset(get->group);
	MemoryContextReset(get->runcxt);
	MemoryContextReset(f->batchcxt);
	old = MemoryContextSwitchTo(f->batchcxt);
	ctl.keysize = sizeof(uint32);
	ctl.entrysize = sizeof(KeyEntries);
	ctl.hcxt = f->batchcxt;
	by_key = hash_create("shard_fdw fetch keys", f->batch, &ctl,
						 HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	f->entries = palloc(sizeof(FetchEntry) * f->batch);
	f->nentries = 0;
	f->next = 0;
	while (f->nentries < f->batch)
	{
		FetchEntry *e = &f->entries[f->nentries];
		KeyEntries *ke;
		bool		found;
		bool		known = false;

		MemoryContextSwitchTo(ss->runcxt);
		item = scan_next_read(ss);
		MemoryContextSwitchTo(f->batchcxt);
		if (item == NULL)
		{
			f->index_done = true;
			break;
		}
		/* every index item holds the table's keys: they name its item */
		scan_check_item_key(ss->t, item, &base->pk);
		scan_check_item_key(ss->t, item, &base->sk);
		e->key = table_key(base, item);
		e->pk = attribute_text(item, ss->t->pk.attribute);
		e->sk = attribute_text(item, ss->t->sk.attribute);
		e->item = NULL;
		ke = key_entries(by_key, e->key, true, &found);
		if (!found)
			ke->entries = NIL;
		foreach(lc, ke->entries)
			known |= strcmp(((FetchEntry *) lfirst(lc))->key, e->key) == 0;
		if (!known)
			keys = lappend(keys, makeString(e->key));
		ke->entries = lappend(ke->entries, e);
		f->nentries++;
	}
	f->batch = Min(f->batch * 2, BATCH_GET_MAX * ss->max_inflight);

	/* the keys, BATCH_GET_MAX a request, all sent at once */
	MemoryContextSwitchTo(get->runcxt);
	streams = scan_get_streams(keys, false, NIL);
	get->nstreams = list_length(streams);
	get->streams = palloc0(sizeof(Stream) * Max(get->nstreams, 1));
	i = 0;
	foreach(lc, streams)
		get->streams[i++] = *(Stream *) lfirst(lc);
	get->nstarted = get->held = get->nstreams;
	get->cur = 0;
	for (i = 0; i < get->nstreams; i++)
		scan_stream_start(get, &get->streams[i]);
	while ((item = merge_next_unordered(get)) != NULL)
	{
		bool		found;
		char	   *key = table_key(base, item);
		KeyEntries *ke = key_entries(by_key, key, false, &found);

		if (ke == NULL)
			continue;
		foreach(lc, ke->entries)
		{
			FetchEntry *e = lfirst(lc);

			if (strcmp(e->key, key) == 0)
				e->item = item;
		}
		f->fetched++;
	}
	MemoryContextSwitchTo(old);
}

/*
 * True when the table's item of entry e has the index keys the index's
 * item had: the index still holds it where the read met it.
 */
static bool
still_indexed(ShardScanState *ss, const FetchEntry *e)
{
	char	   *pk = attribute_text(e->item, ss->t->pk.attribute);
	char	   *sk = attribute_text(e->item, ss->t->sk.attribute);

	return pk != NULL && strcmp(pk, e->pk) == 0 &&
		(e->sk == NULL ? sk == NULL : sk != NULL && strcmp(sk, e->sk) == 0);
}

/*
 * The table's item of the scan's next index item, in the index's order,
 * or NULL at the end; valid until the next batch is taken.
 */
const DdbJson *
fetch_next(ShardScanState *ss)
{
	FetchState *f = ss->fetcher;

	for (;;)
	{
		while (f->next < f->nentries)
		{
			FetchEntry *e = &f->entries[f->next++];

			if (e->item != NULL && still_indexed(ss, e))
				return e->item;
		}
		if (f->index_done)
			return NULL;
		fetch_batch(ss);
	}
}

/* Start again: from the index's first item, with a first batch. */
void
fetch_reset(ShardScanState *ss)
{
	FetchState *f = ss->fetcher;

	if (f->get->group)
		ddb_group_reset(f->get->group);
	MemoryContextReset(f->batchcxt);
	f->entries = NULL;
	f->nentries = 0;
	f->next = 0;
	f->index_done = false;
	f->batch = ss->limit > 0 ? Min(ss->limit, BATCH_GET_MAX * ss->max_inflight) :
		BATCH_GET_MAX;
}

/* Stop getting items, and free what it holds, its group included. */
void
fetch_stop(ShardScanState *ss)
{
	shard_scan_stop(ss->fetcher->get);
}

/*
 * Add the counters of the requests that got the table's items to into;
 * returns the items got.
 */
int64
fetch_explain_stats(ShardScanState *ss, DdbStats *into)
{
	FetchState *f = ss->fetcher;
	DdbStats	stats = f->get->stats;

	if (f->get->group)
		scan_add_stats(&stats, ddb_group_stats(f->get->group));
	scan_add_stats(into, &stats);
	return f->fetched;
}
