/*-------------------------------------------------------------------------
 *
 * merge.c
 *		Where the shards are merged: the order in which a scan returns its
 *		streams' items.  In arrival order (round robin over the streams
 *		with an item at hand); merged in the sort key's order, DynamoDB's
 *		(a binary heap of the streams by their head item); or range shards
 *		one after another, when each shard's keys sort before the next's.
 *
 *-------------------------------------------------------------------------
 */
#include "shard_fdw.h"

#include "avorder.h"
#include "scanstate.h"

/* The next item in arrival order, or NULL at the end. */
const DdbJson *
merge_next_unordered(ShardScanState *ss)
{
	for (;;)
	{
		bool		any_waiting = false;

		for (int k = 0; k < ss->held; k++)
		{
			Stream	   *s = &ss->streams[(ss->cur + k) % ss->held];
			bool		waiting = false;
			const DdbJson *item = scan_stream_next_item(ss, s, &waiting);

			if (item)
			{
				ss->cur = s - ss->streams;
				return item;
			}
			any_waiting |= waiting;
		}
		if (!any_waiting && ss->held < ss->nstreams)
		{
			/* the earlier layouts are read: start the newest's streams */
			for (int i = ss->held; i < ss->nstreams; i++)
				scan_stream_fetch(ss, &ss->streams[i], NULL);
			ss->held = ss->nstreams;
			continue;
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
 * The next item in the sort key's order, merging the streams, or NULL at
 * the end.  Every stream's first page is needed before the first item.
 */
const DdbJson *
merge_next_ordered(ShardScanState *ss)
{
	Stream	   *s;
	const DdbJson *item;

	if (ss->heap == NULL)
	{
		ss->heap = binaryheap_allocate(Max(ss->nstreams, 1), stream_cmp, ss);
		for (int i = 0; i < ss->nstreams; i++)
		{
			s = &ss->streams[i];
			s->head = scan_stream_next_item_wait(ss, s);
			if (s->head)
				binaryheap_add_unordered(ss->heap, PointerGetDatum(s));
		}
		binaryheap_build(ss->heap);
	}
	if (binaryheap_empty(ss->heap))
		return NULL;
	s = (Stream *) DatumGetPointer(binaryheap_first(ss->heap));
	item = s->head;

	/*
	 * The item stays valid until the stream moves past its page, which
	 * happens on the next call: advance only then.
	 */
	s->head = NULL;
	return item;
}

/*
 * The next item of range shards read one after another (each shard's keys
 * sort before the next one's), or NULL at the end.  A shard is asked for
 * only when the ones before it are used up, so a LIMIT met early reads no
 * further shard.
 */
const DdbJson *
merge_next_in_order(ShardScanState *ss)
{
	while (ss->cur < ss->nstreams)
	{
		const DdbJson *item = scan_stream_next_item_wait(ss, &ss->streams[ss->cur]);

		if (item)
			return item;
		if (++ss->cur < ss->nstreams)
		{
			scan_stream_fetch(ss, &ss->streams[ss->cur], NULL);
			ss->shards_read++;
		}
	}
	return NULL;
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
