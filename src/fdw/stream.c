/*-------------------------------------------------------------------------
 *
 * stream.c
 *		A scan's streams: one per shard (Query), per segment (Scan) or per
 *		batch of keys (GetItem, BatchGetItem), each a sequence of pages.
 *		A stream's next page is fetched while its current one is read, its
 *		LastEvaluatedKey followed, its UnprocessedKeys asked again, and its
 *		items handed out one at a time, within its bounds, to merge.c.
 *
 * A stream holds at most two pages (the one being read and the next one,
 * fetched ahead), so memory stays bounded whatever the result size.  The
 * pages' requests are built in scanrequest.c; scan.c starts the streams
 * and turns their items into tuples.
 *
 *-------------------------------------------------------------------------
 */
#include "fdw/fdw.h"

#include "miscadmin.h"
#include "utils/memutils.h"

#include "core/avorder.h"
#include "fdw/scanstate.h"

/* The DynamoDB operation of a stream's requests. */
static const char *
stream_action(ShardScanState *ss, Stream *s)
{
	if (ss->op == SCAN_OP_GET)
		return list_length(s->keys) > 1 ? "BatchGetItem" : "GetItem";
	return ss->op == SCAN_OP_QUERY ? "Query" : "Scan";
}

/*
 * Stop a stream whose LastEvaluatedKey comes back: pages would repeat for
 * ever.  Brent's cycle finding, over the keys as JSON texts: the key kept
 * is taken anew after 1, 2, 4, ... pages, so a key that repeats is caught
 * on the next page, a cycle of two on the page after, and any cycle within
 * twice its start and length, with one key held per stream.  Checked as
 * the page after a key is asked for (stream_follow): a page no other
 * follows repeats nothing, and a top-N reads most shards in one page.
 */
static void
stream_check_progress(ShardScanState *ss, Stream *s, const DdbJson *lek)
{
	char	   *text = ddbjson_text(lek, NULL);

	if (s->lek_seen != NULL && strcmp(s->lek_seen, text) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_ERROR),
				 errmsg("DynamoDB %s of foreign table \"%s\" returned the same LastEvaluatedKey again",
						stream_action(ss, s), ss->t->relname),
				 errdetail("LastEvaluatedKey %s came back after %d page%s, so the pages would repeat for ever.",
						   text, s->lek_steps + 1, s->lek_steps == 0 ? "" : "s")));
	if (++s->lek_steps >= s->lek_period)
	{
		if (s->lek_seen != NULL)
			pfree(s->lek_seen);
		s->lek_seen = text;
		s->lek_period = Max(s->lek_period, 1) * 2;
		s->lek_steps = 0;
	}
	else
		pfree(text);
}

/*
 * Send the request for the next page of stream s; a bounded stream's page
 * is bounded by the frontier of now (see merge.c).
 */
void
scan_stream_fetch(ShardScanState *ss, Stream *s, const DdbJson *start_key)
{
	size_t		len;
	char	   *body = request_read_body(ss, s, start_key, &len);

	if (s->bounded)
		s->next_bound = merge_frontier(ss, s);
	s->next = ddb_request_create(ss->group, stream_action(ss, s), body, len);
	s->next->owner = s;
	/*
	 * A Query's or Scan's items are checked as the stream reads them, and
	 * parsed then too when streams share a LIMIT: each asks for more items
	 * than its share (request_page_limit), and a top-N reads few of them
	 * (see ddbjson_parse_ex).  A page read whole costs more that way.
	 */
	s->next->items_later = ss->op != SCAN_OP_GET;
	s->next->parse_later = s->next->items_later && ss->limit > 0 &&
		ss->merge_width > 1;
	pfree(body);
	ddb_submit(s->next);
}

/* Send the request for the page after the one whose LastEvaluatedKey is lek. */
static void
stream_follow(ShardScanState *ss, Stream *s, const DdbJson *lek)
{
	stream_check_progress(ss, s, lek);
	scan_stream_fetch(ss, s, lek);
}

/*
 * Send the first page's request of stream s, counting the shards and time
 * buckets the scan reads.
 */
void
scan_stream_start(ShardScanState *ss, Stream *s)
{
	if (s->bucket >= 0 && (s == ss->streams || s[-1].bucket != s->bucket))
		ss->buckets_read++;
	ss->shards_read++;
	scan_stream_fetch(ss, s, NULL);
}

/*
 * Send the first page of the next stream waiting to start: the next one
 * held back, or in a parallel Scan, the stream of the next segment this
 * participant claims (parallel.c).  False when none is left.
 */
bool
scan_start_next(ShardScanState *ss)
{
	Stream	   *s;

	if (ss->shared)
	{
		int			segment = parallel_claim_segment(ss);

		if (segment < 0)
			return false;
		s = &ss->streams[ss->nstarted++];
		s->segment = segment;
		s->bucket = -1;
	}
	else if (ss->nstarted < ss->held)
		s = &ss->streams[ss->nstarted++];
	else
		return false;
	scan_stream_start(ss, s);
	return true;
}

/*
 * The keys of a BatchGetItem page that DynamoDB left unprocessed, as JSON
 * texts, or NIL.
 */
static List *
unprocessed_keys(ShardScanState *ss, DdbRequest *page)
{
	const DdbJson *u = ddbjson_get(ddbjson_get(page->response, "UnprocessedKeys"),
								   ss->t->table);
	const DdbJson *keys = ddbjson_get(u, "Keys");
	List	   *result = NIL;

	for (int i = 0; keys && keys->kind == DJ_ARRAY && i < keys->n; i++)
	{
		Buf			out;
		JsonWriter	w;

		buf_init(&out);
		jw_init(&w, &out);
		jw_tree(&w, &keys->elems[i]);
		result = lappend(result, makeString(out.data));
	}
	return result;
}

/*
 * Raise the error of a failed page: one that broke DynamoDB's shapes inside
 * an item names the attribute and the item's key.
 */
pg_noreturn static void
report_page_error(ShardScanState *ss, DdbRequest *page)
{
	report_bad_item(page, ss->t);
	ddb_report_error(page);
}

/* The items of a page, whatever the operation (none under Select COUNT). */
static DdbJson *
page_items(ShardScanState *ss, DdbRequest *page, int *count)
{
	DdbJson    *items;

	if (strcmp(page->action, "GetItem") == 0)
	{
		items = ddbjson_get(page->response, "Item");
		*count = items ? 1 : 0;
		return items;
	}
	if (ss->select_count)
	{
		*count = 0;
		return NULL;
	}
	if (strcmp(page->action, "BatchGetItem") == 0)
		items = ddbjson_get(ddbjson_get(page->response, "Responses"), ss->t->table);
	else
		items = ddbjson_get(page->response, "Items");
	if (items == NULL || items->kind != DJ_ARRAY)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_ERROR),
				 errmsg("DynamoDB %s response has no items", page->action)));
	*count = items->n;
	return items->elems;
}

/*
 * Make an arrived page the one being read, and fetch the page after it
 * if there is one (right away, or when it is needed if a Limit was sent
 * or the stream is bounded).
 */
static void
stream_take_page(ShardScanState *ss, Stream *s, DdbRequest *req)
{
	const DdbJson *lek = ddbjson_get(req->response, "LastEvaluatedKey");
	DdbStats   *stats = ddb_group_stats(ss->group);

	s->page = req;
	s->items = page_items(ss, req, &s->nitems);
	s->lek = lek != NULL && lek->kind == DJ_OBJECT && lek->n > 0 ? lek : NULL;
	s->pos = 0;
	s->bound = s->next_bound;
	ss->pages++;
	stats->scanned += (int64) ddbjson_get_number(req->response, "ScannedCount");
	if (ss->select_count)
		ss->counted += (int64) ddbjson_get_number(req->response, "Count");
	if (ss->op == SCAN_OP_GET)
	{
		List	   *left = unprocessed_keys(ss, req);

		if (left != NIL)
		{
			size_t		len;
			char	   *body;

			/* the keys left are asked again as a retry of this page */
			bool		progressed = list_length(left) < list_length(s->keys);

			s->keys = left;
			body = request_read_body(ss, s, NULL, &len);
			s->next = ddb_request_again(req, stream_action(ss, s), body, len, progressed);
			pfree(body);
			if (s->next == NULL)
				ereport(ERROR,
						(errcode(ERRCODE_FDW_ERROR),
						 errmsg("DynamoDB left %d key%s of foreign table \"%s\" unread",
								list_length(left), list_length(left) == 1 ? "" : "s",
								ss->t->relname),
						 errdetail("BatchGetItem returned them as UnprocessedKeys after %d attempt%s.",
								   req->attempts, req->attempts == 1 ? "" : "s"),
						 errhint("Raise the server's max_retries or request_timeout_ms, or the table's capacity.")));
		}
	}
	else if (s->lek != NULL && ss->limit == 0 && !s->bounded)
		stream_follow(ss, s, s->lek);
}

/* Wait for the next page of any stream and file it with its stream. */
void
scan_receive_page(ShardScanState *ss)
{
	DdbRequest *req = ddb_wait_any(ss->group);
	Stream	   *s;

	if (req == NULL)
		elog(ERROR, "shard_fdw: no page in flight");
	if (req->status != DDB_OK)
		report_page_error(ss, req);
	s = req->owner;
	s->next = NULL;
	merge_note_page(ss, s, req);
	if (s->page == NULL)
		stream_take_page(ss, s, req);
	else
		s->ready = req;
}

/*
 * True when bounded stream s must not return what lies at the sort key of
 * key (an item, or a LastEvaluatedKey; NULL: past its partition's end)
 * from its page: beyond the page's bound.
 */
static bool
past_bound(ShardScanState *ss, Stream *s, const DdbJson *key)
{
	const DdbJson *sk;

	if (!s->bounded || s->bound == NULL)
		return false;
	sk = ddbjson_get(key, ss->t->sk.attribute);
	return sk == NULL || merge_beyond(ss, sk, s->bound);
}

/*
 * Check the item the stream s is at, of a page whose items are checked as
 * they are read (items_later), parsing it first if its page left it
 * unparsed (parse_later).
 */
static void
read_page_item(ShardScanState *ss, Stream *s)
{
	DdbCheck	check;

	if (s->page->parse_later)
	{
		char		err[SFDW_ERRLEN];
		MemoryContext old = MemoryContextSwitchTo(s->page->cxt);
		bool		parsed = ddbjson_parse_deferred(s->page->response,
													&s->items[s->pos],
													err, sizeof(err));

		/* the item lives in the page's tree, and goes with it */
		MemoryContextSwitchTo(old);
		if (!parsed)
		{
			ddb_request_json_fault(s->page, 200, err);
			ddb_report_error(s->page);
		}
	}
	if (!ddbjson_check_page_item(s->items, s->nitems, s->lek, s->pos, &check))
	{
		ddb_request_shape_fault(s->page, &check);
		report_page_error(ss, s->page);
	}
}

/*
 * Free a page the stream has read, unless the scan keeps its items until
 * its group is reset (keep_pages).
 */
static void
release_page(ShardScanState *ss, DdbRequest *page)
{
	if (!ss->keep_pages)
		ddb_request_free(page);
}

/*
 * The next item of stream s, or NULL when it has none at hand; *waiting
 * says whether more may come.  A bounded stream that reaches its page's
 * bound pauses instead (see merge.c).
 */
const DdbJson *
scan_stream_next_item(ShardScanState *ss, Stream *s, bool *waiting)
{
	for (;;)
	{
		if (s->page)
		{
			const DdbJson *item = s->pos < s->nitems ? &s->items[s->pos] : NULL;

			if (item != NULL)
			{
				if (s->page->items_later)
					read_page_item(ss, s);
				/* a merge orders items by a sort key it must trust */
				if (ss->order != 0)
					scan_check_item_key(ss->t, item, &ss->t->sk);
				if (!past_bound(ss, s, item))
				{
					s->pos++;
					return item;
				}
			}
			if (item != NULL || past_bound(ss, s, s->lek))
			{
				release_page(ss, s->page);
				s->page = NULL;
				s->paused = true;
				*waiting = false;
				return NULL;
			}
			if (s->next == NULL && s->ready == NULL && (ss->limit > 0 || s->bounded) &&
				ss->op != SCAN_OP_GET && s->lek != NULL)
				stream_follow(ss, s, s->lek);
			release_page(ss, s->page);
			s->page = NULL;
			if (s->ready)
			{
				DdbRequest *ready = s->ready;

				s->ready = NULL;
				stream_take_page(ss, s, ready);
				continue;
			}
		}
		*waiting = s->next != NULL;
		return NULL;
	}
}

/* The next item of stream s, waiting for its next page if need be. */
const DdbJson *
scan_stream_next_item_wait(ShardScanState *ss, Stream *s)
{
	for (;;)
	{
		bool		waiting = false;
		const DdbJson *item = scan_stream_next_item(ss, s, &waiting);

		if (item || !waiting)
			return item;
		scan_receive_page(ss);
	}
}
