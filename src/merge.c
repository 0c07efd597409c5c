/*-------------------------------------------------------------------------
 *
 * merge.c
 *		Where the shards are merged: the order in which a scan returns its
 *		streams' items.  In arrival order (round robin over the streams
 *		with an item at hand); or merged in the sort key's order, DynamoDB's
 *		(a binary heap of the streams by their head item), run after run
 *		when the streams fall into runs whose keys sort before the next
 *		run's (range shards, time buckets).
 *
 *-------------------------------------------------------------------------
 */
#include "shard_fdw.h"

#include "avorder.h"
#include "scanstate.h"

/*
 * The next item in arrival order, or NULL at the end.  Streams not sent
 * yet (a read of many time buckets sends max_concurrency at a time) are
 * sent as others end.
 */
const DdbJson *
merge_next_unordered(ShardScanState *ss)
{
	for (;;)
	{
		bool		any_waiting = false;

		for (int k = 0; k < ss->nstarted; k++)
		{
			Stream	   *s = &ss->streams[(ss->cur + k) % ss->nstarted];
			bool		waiting = false;
			const DdbJson *item = scan_stream_next_item(ss, s, &waiting);

			if (item)
			{
				ss->cur = s - ss->streams;
				return item;
			}
			if (!waiting && !s->done)
			{
				s->done = true;
				if (ss->nstarted < ss->nstreams)
				{
					scan_stream_start(ss, &ss->streams[ss->nstarted++]);
					waiting = true;
				}
			}
			any_waiting |= waiting;
		}
		if (!any_waiting)
			return NULL;
		scan_receive_page(ss);
	}
}

/* Heap order of streams: by head item's sort key, DynamoDB's order. */
static int
stream_cmp(Datum a, Datum b, void *arg)
{
	ShardScanState *ss = arg;
	const char *sk = ss->t->sk.attribute;
	int			c = avorder_compare(ddbjson_get(((Stream *) DatumGetPointer(a))->head, sk),
									ddbjson_get(((Stream *) DatumGetPointer(b))->head, sk));

	/* binaryheap keeps the largest on top */
	return ss->order > 0 ? -c : c;
}

/*
 * Send the streams of the next run (unless sent ahead), wait for their
 * first pages and put them in the heap.  Time buckets read without a
 * LIMIT send the runs after it too, max_concurrency streams ahead.
 */
static void
start_run(ShardScanState *ss)
{
	ss->run_start = ss->run_end;
	ss->run_end = ss->run_start + 1;
	while (ss->run_end < ss->nstreams &&
		   ss->streams[ss->run_end].run == ss->streams[ss->run_start].run)
		ss->run_end++;
	for (; ss->nstarted < ss->run_end; ss->nstarted++)
		scan_stream_start(ss, &ss->streams[ss->nstarted]);
	/* with no LIMIT to stop early, the next buckets' requests go out now */
	for (; ss->bucket_runs && ss->bucket_ahead && ss->nstarted < ss->nstreams &&
		 ss->nstarted - ss->run_start < ss->max_inflight; ss->nstarted++)
		scan_stream_start(ss, &ss->streams[ss->nstarted]);
	for (int i = ss->run_start; i < ss->run_end; i++)
	{
		Stream	   *s = &ss->streams[i];

		s->head = scan_stream_next_item_wait(ss, s);
		if (s->head)
			binaryheap_add_unordered(ss->heap, PointerGetDatum(s));
	}
	binaryheap_build(ss->heap);
}

/*
 * The next item in the sort key's order, or NULL at the end: the streams
 * of a run are merged, and runs follow one another (range shards whose
 * keys sort before the next one's, time buckets).  A run is sent only when
 * the ones before it are used up, so a LIMIT met early reads no further;
 * every stream of a run has its first page before the run's first item.
 */
const DdbJson *
merge_next_ordered(ShardScanState *ss)
{
	Stream	   *s;
	const DdbJson *item;

	if (ss->heap == NULL)
		ss->heap = binaryheap_allocate(Max(ss->nstreams, 1), stream_cmp, ss);
	while (binaryheap_empty(ss->heap))
	{
		/* a range open on one side ends only where max_partitions cut it */
		if (ss->run_end >= ss->nstreams && ss->bucket_cut)
			scan_too_many_partitions(ss);
		if (ss->run_end >= ss->nstreams)
			return NULL;
		start_run(ss);
	}
	s = (Stream *) DatumGetPointer(binaryheap_first(ss->heap));
	item = s->head;

	/*
	 * The item stays valid until the stream moves past its page, which
	 * happens on the next call: advance only then.
	 */
	s->head = NULL;
	return item;
}

/* Move the stream whose item the ordered merge returned last forward. */
void
merge_advance(ShardScanState *ss)
{
	Stream	   *s;

	if (ss->heap == NULL || binaryheap_empty(ss->heap))
		return;
	s = (Stream *) DatumGetPointer(binaryheap_first(ss->heap));
	if (s->head != NULL)
		return;
	s->head = scan_stream_next_item_wait(ss, s);
	if (s->head)
		binaryheap_replace_first(ss->heap, PointerGetDatum(s));
	else
		(void) binaryheap_remove_first(ss->heap);
}
