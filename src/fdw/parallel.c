/*-------------------------------------------------------------------------
 *
 * parallel.c
 *		A whole-table Scan shared out among PostgreSQL's parallel workers:
 *		the state the participants share in dynamic shared memory, the
 *		segments handed out from it, and the counters the workers report
 *		back for EXPLAIN ANALYZE.
 *
 * The leader cuts the table into max_concurrency segments for each
 * participant it plans (itself and its workers).  Each participant, the
 * leader too unless it only gathers, claims segments one at a time from a
 * shared counter and reads those it holds as streams of its own, up to
 * max_concurrency in flight, claiming the next as one ends; so every
 * segment is read once, by whoever claimed it, and a participant that
 * starts late or reads slowly takes fewer.  A rescan of the Gather above
 * hands the segments out afresh.
 *
 *-------------------------------------------------------------------------
 */
#include "fdw/fdw.h"

#include "access/parallel.h"
#include "port/atomics.h"
#include "storage/spin.h"

#include "fdw/scanstate.h"


/* The state the participants of a parallel Scan share. */
typedef struct ScanShared
{
	pg_atomic_uint32 next;		/* the next segment to hand out */
	int			total;			/* TotalSegments */
	int			nparticipants;	/* the leader and the workers planned */
	slock_t		mutex;			/* guards what follows */
	DdbStats	stats;			/* the workers' counters, not yet taken
								 * by the leader (items too) */
	int64		pages;
	int			segments_read[FLEXIBLE_ARRAY_MEMBER];	/* by participant,
														 * since the last
														 * take */
} ScanShared;

/* The size of the shared state for the leader and nworkers workers. */
static Size
shared_size(int nworkers)
{
	return add_size(offsetof(ScanShared, segments_read),
					mul_size(sizeof(int), nworkers + 1));
}

/*
 * The next segment this participant reads, claimed for it alone, or -1
 * when every segment has been handed out.
 */
int
parallel_claim_segment(ShardScanState *ss)
{
	ScanShared *shared = ss->shared;
	uint32		segment = pg_atomic_fetch_add_u32(&shared->next, 1);

	if (segment >= (uint32) shared->total)
		return -1;
	SpinLockAcquire(&shared->mutex);
	shared->segments_read[ss->participant]++;
	SpinLockRelease(&shared->mutex);
	return (int) segment;
}

/* TotalSegments of a parallel Scan. */
int
parallel_total_segments(ShardScanState *ss)
{
	return ss->shared->total;
}

/*
 * The leader: add the workers' counters and the segments each participant
 * read to its own, and clear them in the shared state.
 */
static void
take_counters(ShardScanState *ss)
{
	ScanShared *shared = ss->shared;

	SpinLockAcquire(&shared->mutex);
	scan_add_stats(&ss->stats, &shared->stats);
	ss->stats.items += shared->stats.items;
	ss->pages += shared->pages;
	memset(&shared->stats, 0, sizeof(DdbStats));
	shared->pages = 0;
	for (int i = 0; i < shared->nparticipants; i++)
	{
		ss->segments_by[i] += shared->segments_read[i];
		shared->segments_read[i] = 0;
	}
	SpinLockRelease(&shared->mutex);
}

/* EstimateDSMForeignScan: the size of the shared state. */
Size
shard_scan_estimate_dsm(ForeignScanState *node, ParallelContext *pcxt)
{
	return shared_size(pcxt->nworkers);
}

/*
 * InitializeDSMForeignScan: the leader's share of a parallel Scan, cut
 * into max_concurrency segments per participant planned.
 */
void
shard_scan_initialize_dsm(ForeignScanState *node, ParallelContext *pcxt, void *coordinate)
{
	ShardScanState *ss = node->fdw_state;
	ScanShared *shared = coordinate;

	memset(shared, 0, shared_size(pcxt->nworkers));
	pg_atomic_init_u32(&shared->next, 0);
	shared->total = ss->max_inflight * (pcxt->nworkers + 1);
	shared->nparticipants = pcxt->nworkers + 1;
	SpinLockInit(&shared->mutex);
	ss->shared = shared;
	ss->total_segments = shared->total;
	ss->participant = 0;
	ss->nparticipants = shared->nparticipants;
	ss->segments_by = MemoryContextAllocZero(GetMemoryChunkContext(ss),
											 sizeof(int) * ss->nparticipants);
}

/*
 * ReInitializeDSMForeignScan: before a rescan, once the workers are gone,
 * keep their counters and hand every segment out again.
 */
void
shard_scan_reinitialize_dsm(ForeignScanState *node, ParallelContext *pcxt, void *coordinate)
{
	ShardScanState *ss = node->fdw_state;

	take_counters(ss);
	pg_atomic_write_u32(&ss->shared->next, 0);
}

/* InitializeWorkerForeignScan: a worker joins the Scan. */
void
shard_scan_initialize_worker(ForeignScanState *node, shm_toc *toc, void *coordinate)
{
	ShardScanState *ss = node->fdw_state;

	ss->shared = coordinate;
	ss->participant = ParallelWorkerNumber + 1;
}

/*
 * ShutdownForeignScan, while the shared state is still there: a worker
 * reports its counters, once; the leader takes them, and the workers are
 * done by then unless a LIMIT above stopped the Gather early.
 */
void
shard_scan_shutdown(ForeignScanState *node)
{
	ShardScanState *ss = node->fdw_state;
	ScanShared *shared = ss->shared;
	DdbStats	total = ss->stats;

	if (shared == NULL)
		return;
	if (!IsParallelWorker())
	{
		take_counters(ss);
		return;
	}
	if (ss->group)
		scan_add_stats(&total, ddb_group_stats(ss->group));
	SpinLockAcquire(&shared->mutex);
	scan_add_stats(&shared->stats, &total);
	shared->stats.items += total.items;
	shared->pages += ss->pages;
	SpinLockRelease(&shared->mutex);
	ss->shared = NULL;
}

/*
 * What EXPLAIN shows of a parallel-aware Scan: that its segments are
 * shared out; with ANALYZE, how many and how many were read (each once),
 * and with VERBOSE, how many each participant read.
 */
void
parallel_explain(ShardScanState *ss, ExplainState *es)
{
	int			read = 0;
	StringInfoData by;

	ExplainPropertyText("Parallel Scan", "segments shared out among the participants", es);
	if (!es->analyze || ss->segments_by == NULL)
		return;
	initStringInfo(&by);
	for (int i = 0; i < ss->nparticipants; i++)
	{
		read += ss->segments_by[i];
		if (i == 0)
			appendStringInfo(&by, "leader %d", ss->segments_by[i]);
		else
			appendStringInfo(&by, ", worker %d %d", i - 1, ss->segments_by[i]);
	}
	ExplainPropertyInteger("Scan Segments", NULL, ss->total_segments, es);
	ExplainPropertyInteger("Scan Segments Read", NULL, read, es);
	if (es->verbose)
		ExplainPropertyText("Scan Segments Read by Participant", by.data, es);
}
