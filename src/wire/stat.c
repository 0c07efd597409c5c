/*-------------------------------------------------------------------------
 *
 * stat.c
 *		The counters of shard_fdw_stat: what every backend's requests to
 *		DynamoDB came to, per database, foreign table and server, in shared
 *		memory.  Only when shard_fdw is in shared_preload_libraries: without
 *		it nothing is counted here, and the view says how to enable it.
 *
 * A fixed-size hash of at most shard_fdw.stat_max entries, keyed by
 * (database, foreign table, server); requests of no foreign table
 * (shard_fdw_request, IMPORT FOREIGN SCHEMA, the DescribeTable of a
 * declaration) count under the server alone.  Once the hash is full, a new
 * key's counters go to one overflow entry, whose database, table and
 * server are all invalid, until shard_fdw_stat_reset() empties the hash.
 *
 * A backend does not touch shared memory per request: a group of requests
 * (transport.c) counts in its own DdbStats, and hands what it counted
 * since its last flush here when it is freed (the end of its scan or
 * modify, or of the transaction) and at most once a second while it runs.
 * A flush takes the lock shared to find its entry, exclusive only to make
 * one; an entry's counters are added to under its spinlock.
 *
 *-------------------------------------------------------------------------
 */
#include "wire/wire.h"

#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/timestamp.h"

#define STAT_TRANCHE "shard_fdw"

typedef struct StatKey
{
	Oid			dbid;
	Oid			relid;
	Oid			serverid;
} StatKey;

typedef struct StatEntry
{
	StatKey		key;
	slock_t		mutex;			/* guards counts */
	DdbStats	counts;
} StatEntry;

/* The shared state beside the hash. */
typedef struct StatShared
{
	LWLock	   *lock;			/* the hash: shared to find, exclusive to
								 * add or remove entries */
	TimestampTz reset_at;		/* the server's start, or the last reset */
	StatEntry	overflow;		/* the keys no entry was left for */
} StatShared;

/* shard_fdw.stat_max: the entries of the hash. */
static int	stat_max = 1000;

static StatShared *shared = NULL;
static HTAB *entries = NULL;

static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

#ifdef SHARD_HAVE_SHMEM_REQUEST_HOOK
static shmem_request_hook_type prev_shmem_request_hook = NULL;
#endif

/* The shared memory the counters take. */
static Size
stat_size(void)
{
	return add_size(MAXALIGN(sizeof(StatShared)),
					hash_estimate_size(stat_max, sizeof(StatEntry)));
}

/* Ask for the shared memory and the lock (shmem_request_hook, or at load). */
static void
stat_shmem_request(void)
{
#ifdef SHARD_HAVE_SHMEM_REQUEST_HOOK
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
#endif
	RequestAddinShmemSpace(stat_size());
	RequestNamedLWLockTranche(STAT_TRANCHE, 1);
}

/* Attach to the counters, making them at the server's start. */
static void
stat_shmem_startup(void)
{
	HASHCTL		info;
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	shared = ShmemInitStruct("shard_fdw stat", sizeof(StatShared), &found);
	if (!found)
	{
		memset(shared, 0, sizeof(StatShared));
		shared->lock = &(GetNamedLWLockTranche(STAT_TRANCHE))->lock;
		shared->reset_at = GetCurrentTimestamp();
		SpinLockInit(&shared->overflow.mutex);
	}
	memset(&info, 0, sizeof(info));
	info.keysize = sizeof(StatKey);
	info.entrysize = sizeof(StatEntry);
	entries = ShmemInitHash("shard_fdw stat entries", stat_max, stat_max, &info,
							HASH_ELEM | HASH_BLOBS);
	LWLockRelease(AddinShmemInitLock);
}

/*
 * At load by shared_preload_libraries: the setting shard_fdw.stat_max (a
 * setting read at the server's start cannot be made later) and the
 * shared memory of the counters.  Loaded otherwise, nothing.
 */
void
stat_init(void)
{
	if (!process_shared_preload_libraries_in_progress)
		return;
	DefineCustomIntVariable("shard_fdw.stat_max",
							"The foreign tables and servers shard_fdw_stat counts for.",
							"Once they are all in use, the counters of the others "
							"go to one row until shard_fdw_stat_reset().",
							&stat_max, 1000, 10, 1000000,
							PGC_POSTMASTER, 0, NULL, NULL, NULL);
#ifdef SHARD_HAVE_SHMEM_REQUEST_HOOK
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = stat_shmem_request;
#else
	stat_shmem_request();
#endif
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = stat_shmem_startup;
}

/* Add the counters the view shows of from to into. */
static void
stat_add(DdbStats *into, const DdbStats *from)
{
	into->requests += from->requests;
	into->retries += from->retries;
	into->throttles += from->throttles;
	into->errors += from->errors;
	into->read_items += from->read_items;
	into->returned_items += from->returned_items;
	into->read_units += from->read_units;
	into->write_units += from->write_units;
}

/*
 * The entry of key, made if there is room, else the overflow entry; the
 * caller holds the lock shared, and still holds it (exclusive, maybe) on
 * return.
 */
static StatEntry *
stat_entry(const StatKey *key)
{
	StatEntry  *e = hash_search(entries, key, HASH_FIND, NULL);
	bool		found;

	if (e != NULL)
		return e;
	LWLockRelease(shared->lock);
	LWLockAcquire(shared->lock, LW_EXCLUSIVE);
	/* another backend may have made it meanwhile */
	e = hash_search(entries, key, HASH_FIND, NULL);
	if (e == NULL && hash_get_num_entries(entries) < stat_max &&
		(e = hash_search(entries, key, HASH_ENTER_NULL, &found)) != NULL)
	{
		SpinLockInit(&e->mutex);
		memset(&e->counts, 0, sizeof(e->counts));
	}
	return e ? e : &shared->overflow;
}

/*
 * Add what a group counted since its last flush (total less *flushed) to
 * the shared counters of foreign table relid (InvalidOid: none) on server
 * serverid in this database, and remember total as flushed.  Throws
 * nothing: it runs at the end of transactions and in the transport's
 * callbacks too.
 */
void
stat_flush(Oid relid, Oid serverid, const DdbStats *total, DdbStats *flushed)
{
	DdbStats	delta = {0};
	StatKey		key;
	StatEntry  *e;

	delta.requests = total->requests - flushed->requests;
	delta.retries = total->retries - flushed->retries;
	delta.throttles = total->throttles - flushed->throttles;
	delta.errors = total->errors - flushed->errors;
	delta.read_items = total->read_items - flushed->read_items;
	delta.returned_items = total->returned_items - flushed->returned_items;
	delta.read_units = total->read_units - flushed->read_units;
	delta.write_units = total->write_units - flushed->write_units;
	*flushed = *total;
	if (shared == NULL || (delta.requests == 0 && delta.retries == 0 &&
						   delta.throttles == 0))
		return;
	memset(&key, 0, sizeof(key));
	key.dbid = MyDatabaseId;
	key.relid = relid;
	key.serverid = serverid;
	LWLockAcquire(shared->lock, LW_SHARED);
	e = stat_entry(&key);
	SpinLockAcquire(&e->mutex);
	stat_add(&e->counts, &delta);
	SpinLockRelease(&e->mutex);
	LWLockRelease(shared->lock);
}

/* Refuse a use of the counters when shard_fdw was not preloaded. */
static void
stat_check_loaded(void)
{
	if (shared == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("shard_fdw_stat needs shard_fdw in shared_preload_libraries"),
				 errhint("Add shard_fdw to shared_preload_libraries in postgresql.conf and restart the server; the rest of shard_fdw works without it.")));
}

/*
 * A copy of every entry's counters (the overflow entry last, when it
 * counted anything), in the current memory context, and the time of the
 * last reset.
 */
DdbStatRow *
stat_rows(int *nrows, TimestampTz *reset_at)
{
	HASH_SEQ_STATUS seq;
	StatEntry  *e;
	DdbStatRow *rows;
	int			n = 0;

	stat_check_loaded();
	LWLockAcquire(shared->lock, LW_SHARED);
	rows = palloc0(sizeof(DdbStatRow) * (hash_get_num_entries(entries) + 1));
	hash_seq_init(&seq, entries);
	while ((e = hash_seq_search(&seq)) != NULL)
	{
		rows[n].dbid = e->key.dbid;
		rows[n].relid = e->key.relid;
		rows[n].serverid = e->key.serverid;
		SpinLockAcquire(&e->mutex);
		rows[n].counts = e->counts;
		SpinLockRelease(&e->mutex);
		n++;
	}
	SpinLockAcquire(&shared->overflow.mutex);
	rows[n].counts = shared->overflow.counts;
	SpinLockRelease(&shared->overflow.mutex);
	if (rows[n].counts.requests > 0)
		n++;
	*reset_at = shared->reset_at;
	LWLockRelease(shared->lock);
	*nrows = n;
	return rows;
}

/* Empty the counters; returns the time of the reset. */
TimestampTz
stat_reset(void)
{
	HASH_SEQ_STATUS seq;
	StatEntry  *e;
	TimestampTz now = GetCurrentTimestamp();

	stat_check_loaded();
	LWLockAcquire(shared->lock, LW_EXCLUSIVE);
	hash_seq_init(&seq, entries);
	while ((e = hash_seq_search(&seq)) != NULL)
		hash_search(entries, &e->key, HASH_REMOVE, NULL);
	SpinLockAcquire(&shared->overflow.mutex);
	memset(&shared->overflow.counts, 0, sizeof(shared->overflow.counts));
	SpinLockRelease(&shared->overflow.mutex);
	shared->reset_at = now;
	LWLockRelease(shared->lock);
	return now;
}
