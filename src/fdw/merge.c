/*-------------------------------------------------------------------------
 *
 * merge.c
 *		Where the shards are merged: the order in which a scan returns its
 *		streams' items.  In arrival order (round robin over the streams
 *		with an item at hand); or merged in the sort key's order, DynamoDB's
 *		(a binary heap of the streams by their head item), run after run
 *		when the streams fall into runs whose keys sort before the next
 *		run's (range shards, time buckets); while a table has earlier
 *		layouts, the newest layout's streams bounded by the frontier.
 *
 *-------------------------------------------------------------------------
 */
#include "fdw/fdw.h"

#include "core/avorder.h"
#include "fdw/scanstate.h"

/*
 * The next item in arrival order, or NULL at the end.  Streams not sent
 * yet (a read of many time buckets sends max_concurrency at a time, a
 * parallel Scan the segments it claims) are sent as others end.
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
				waiting = scan_start_next(ss);
			}
			any_waiting |= waiting;
		}
		if (!any_waiting && ss->held < ss->nstreams)
		{
			/* the earlier layouts are read: start the newest's streams */
			int			window = ss->bucket_col >= 0 ? ss->max_inflight : ss->nstreams;

			ss->held = ss->nstreams;
			while (ss->nstarted < ss->nstreams && window-- > 0)
				scan_stream_start(ss, &ss->streams[ss->nstarted++]);
			continue;
		}
		if (!any_waiting)
			return NULL;
		scan_receive_page(ss);
	}
}

/* ---------------------------------------------------------------------
 * The frontier: ordered reads while items move between layouts
 * ---------------------------------------------------------------------
 *
 * Items move only from an earlier layout into the newest (shard_fdw_reshard,
 * an UPDATE), each in one TransactWriteItems that deletes the old item and
 * puts the new one with the same sort key.  An ordered read merges the
 * streams of every layout; were they all read at once, a row moving after
 * the newest layout's stream read past its sort key and before the earlier
 * layout's stream reached it would be met in neither.
 *
 * So in a run that has earlier layouts' streams, the newest layout's
 * streams are bounded: each of their pages is trusted up to the frontier
 * at the moment it was asked for, the least sort key (in the merge's
 * direction) the earlier streams' pages received reach (a page reaches its
 * LastEvaluatedKey; a stream whose last page came does not bound), and
 * without bound once all those pages came.  Claim: a row whose item exists
 * throughout the read, with sort key k, is returned.  Let P be the bounded
 * page that reads k's place, asked for at time t with frontier F, k not
 * beyond F (items beyond F are not returned from P but from a later page,
 * asked for with a frontier further on).  Every earlier stream's pages up
 * to F came before t, so each earlier layout's place of k was read before
 * t.  If the row's item was in that earlier layout when its place was
 * read, it was returned from there.  Otherwise it had moved into the
 * newest layout before that, so before t, and never leaves it for an
 * earlier one: P, read after t, returns it.  A row met twice is returned
 * once (seen_before in scan.c).
 *
 * A bounded stream that meets an item beyond its bound, or ends a page
 * whose LastEvaluatedKey lies beyond it (or that is its last), pauses: in
 * the heap it stands at its bound, after items with that sort key.  When
 * it comes on top, every other stream's head lies beyond that bound, so
 * every earlier stream's pages reach beyond it and the frontier has moved
 * on: the stream resumes after its bound (an ExclusiveStartKey made of its
 * partition key and the bound) under the new frontier.  Bounded streams
 * ask for one page at a time, when it is needed, so that each page is
 * bounded by the frontier of its moment; a LIMIT read still asks for its
 * page Limit of items, not for whole shards.
 */

/* True when sort key value a comes after b in the merge's order. */
bool
merge_beyond(ShardScanState *ss, const DdbJson *a, const DdbJson *b)
{
	return ss->order * avorder_compare(a, b) > 0;
}

/*
 * Mark bounded the newest layout's streams of each run that has earlier
 * layouts' streams (an ordered Query of the table, not of an index; a
 * legacy base key receives no moved item).
 */
void
merge_bound_streams(ShardScanState *ss)
{
	if (ss->order == 0 || ss->op != SCAN_OP_QUERY || ss->t->nlayouts == 1 || ss->t->index)
		return;
	for (int i = 0; i < ss->nstreams; i++)
	{
		Stream	   *s = &ss->streams[i];

		if (s->earlier || s->shard < 0)
			continue;
		for (int k = 0; k < ss->nstreams && !s->bounded; k++)
			s->bounded = ss->streams[k].earlier && ss->streams[k].run == s->run;
	}
}

/*
 * Note how far the pages of an earlier layout's stream s reach, page (its
 * page just received) included: its LastEvaluatedKey's sort key, copied
 * into the execution's memory, or its end.
 */
void
merge_note_page(ShardScanState *ss, Stream *s, DdbRequest *page)
{
	const DdbJson *lek = ddbjson_get(page->response, "LastEvaluatedKey");
	const DdbJson *sk;
	char	   *text;
	size_t		len;
	char		err[SFDW_ERRLEN];
	MemoryContext old;

	if (!s->earlier || ss->order == 0 || ss->op != SCAN_OP_QUERY)
		return;
	if (lek == NULL || lek->kind != DJ_OBJECT || lek->n == 0)
	{
		s->reached_end = true;
		return;
	}
	sk = ddbjson_get(lek, ss->t->sk.attribute);
	if (sk == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_ERROR),
				 errmsg("DynamoDB Query of foreign table \"%s\" returned a LastEvaluatedKey without sort key attribute \"%s\"",
						ss->t->relname, ss->t->sk.attribute)));
	text = ddbjson_text(sk, &len);
	old = MemoryContextSwitchTo(ss->runcxt);
	s->reached = ddbjson_parse(text, len, err, sizeof(err));
	MemoryContextSwitchTo(old);
	if (s->reached == NULL)
		elog(ERROR, "shard_fdw: could not parse a sort key written: %s", err);
}

/*
 * The frontier of bounded stream s's run: the least sort key, in the
 * merge's order, that the pages received of the run's earlier streams
 * reach; NULL when they have all come.  Each has a page by then (see
 * start_run).
 */
const DdbJson *
merge_frontier(ShardScanState *ss, Stream *s)
{
	const DdbJson *frontier = NULL;

	for (int i = 0; i < ss->nstreams; i++)
	{
		Stream	   *e = &ss->streams[i];

		if (!e->earlier || e->run != s->run || e->reached_end)
			continue;
		if (e->reached == NULL)
			elog(ERROR, "shard_fdw: a bounded stream was sent before an earlier layout's");
		if (frontier == NULL || merge_beyond(ss, frontier, e->reached))
			frontier = e->reached;
	}
	return frontier;
}

/* Where stream s stands in the merge: its head's sort key, or its bound. */
static const DdbJson *
stream_position(ShardScanState *ss, Stream *s)
{
	return s->paused ? s->bound : s->head_key;
}

/*
 * Heap order of streams: by head item's sort key, DynamoDB's order, a
 * paused stream after the items at its bound.
 */
static int
stream_cmp(Datum a, Datum b, void *arg)
{
	ShardScanState *ss = arg;
	Stream	   *sa = (Stream *) DatumGetPointer(a);
	Stream	   *sb = (Stream *) DatumGetPointer(b);
	int			c = ss->order * avorder_compare(stream_position(ss, sa),
											   stream_position(ss, sb));

	if (c == 0)
		c = (int) sa->paused - (int) sb->paused;
	/* binaryheap keeps the largest on top */
	return -c;
}

/*
 * Take stream s's next item as its head, waiting for its page if need be;
 * true when the stream stays in the merge (with an item, or paused).
 */
static bool
stream_head(ShardScanState *ss, Stream *s)
{
	s->head = scan_stream_next_item_wait(ss, s);
	s->head_key = ddbjson_get(s->head, ss->t->sk.attribute);
	return s->head != NULL || s->paused;
}

/*
 * Send the streams of the next run (unless sent ahead), wait for their
 * first pages and put them in the heap: the earlier layouts' first, so
 * that the frontier bounds the newest's first pages.  Time buckets read
 * without a LIMIT send the runs after it too, max_concurrency streams
 * ahead, up to the first bounded one.
 */
static void
start_run(ShardScanState *ss)
{
	int			unsent = ss->nstarted;

	ss->run_start = ss->run_end;
	ss->run_end = ss->run_start + 1;
	while (ss->run_end < ss->nstreams &&
		   ss->streams[ss->run_end].run == ss->streams[ss->run_start].run)
		ss->run_end++;
	for (int bounded = 0; bounded < 2; bounded++)
	{
		for (int i = Max(unsent, ss->run_start); i < ss->run_end; i++)
			if (ss->streams[i].bounded == bounded)
				scan_stream_start(ss, &ss->streams[i]);
		ss->nstarted = Max(ss->nstarted, ss->run_end);
		/* with no LIMIT to stop early, the next buckets' requests go out now */
		for (; ss->bucket_runs && ss->bucket_ahead && ss->nstarted < ss->nstreams &&
			 !ss->streams[ss->nstarted].bounded &&
			 ss->nstarted - ss->run_start < ss->max_inflight; ss->nstarted++)
			scan_stream_start(ss, &ss->streams[ss->nstarted]);
		for (int i = ss->run_start; i < ss->run_end; i++)
		{
			Stream	   *s = &ss->streams[i];

			if (s->bounded == bounded && stream_head(ss, s))
				binaryheap_add_unordered(ss->heap, PointerGetDatum(s));
		}
	}
	binaryheap_build(ss->heap);
}

/*
 * Resume paused stream s after its bound, under the frontier of now, and
 * take its next head.
 */
static void
resume_stream(ShardScanState *ss, Stream *s)
{
	s->paused = false;
	/* pages start anew from another key: their LastEvaluatedKeys may recur */
	s->lek_seen = NULL;
	s->lek_steps = 0;
	s->lek_period = 0;
	scan_stream_fetch(ss, s, request_resume_key(ss->t, s->pk_text, s->bound));
	if (stream_head(ss, s))
		binaryheap_replace_first(ss->heap, PointerGetDatum(s));
	else
		(void) binaryheap_remove_first(ss->heap);
}

/*
 * The next item in the sort key's order, or NULL at the end: the streams
 * of a run are merged, and runs follow one another (range shards whose
 * keys sort before the next one's, time buckets).  A run is sent only when
 * the ones before it are used up, so a LIMIT met early reads no further;
 * every stream of a run has its first page before the run's first item.
 * A paused stream on top resumes (see the frontier above).
 */
const DdbJson *
merge_next_ordered(ShardScanState *ss)
{
	Stream	   *s;
	const DdbJson *item;

	if (ss->heap == NULL)
		ss->heap = binaryheap_allocate(Max(ss->nstreams, 1), stream_cmp, ss);
	for (;;)
	{
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
		if (!s->paused)
			break;
		resume_stream(ss, s);
	}
	item = s->head;

	/*
	 * The item stays valid until the stream moves past its page, which
	 * happens on the next call: advance only then.
	 */
	s->head = NULL;
	s->head_key = NULL;
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
	if (s->head != NULL || s->paused)
		return;
	if (stream_head(ss, s))
		binaryheap_replace_first(ss->heap, PointerGetDatum(s));
	else
		(void) binaryheap_remove_first(ss->heap);
}
