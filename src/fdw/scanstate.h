/*-------------------------------------------------------------------------
 *
 * scanstate.h
 *		The state of a foreign scan, shared by the files that run one:
 *		scan.c (streams of pages, items to tuples, the callbacks, EXPLAIN),
 *		scanrequest.c (the reads' expressions and request bodies), merge.c
 *		(the order in which the streams' items are returned), fetch.c
 *		(the table's items of an index's, got by key) and parallel.c (a
 *		Scan's segments shared out among parallel workers).
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHARD_FDW_SCANSTATE_H
#define SHARD_FDW_SCANSTATE_H

#include "fdw/fdw.h"

#include "lib/binaryheap.h"
#include "lib/stringinfo.h"
#include "utils/tuplestore.h"


/* One condition as the executor has it: the planner's triple. */
typedef struct ExecCond
{
	int			col;
	CondOp		op;
	int			expr;			/* index into the evaluated values, or -1 */
} ExecCond;

/* One sequence of pages. */
typedef struct Stream
{
	char	   *pk_text;		/* partition key value (Query) */
	int			shard;			/* its shard, or -1 for the base key */
	bool		earlier;		/* a key of an earlier layout */
	int			segment;		/* segment (Scan) */
	List	   *keys;			/* item keys as JSON texts (GetItem) */
	DdbRequest *page;			/* the page being read */
	DdbJson    *items;			/* ... its items */
	int			nitems;
	const DdbJson *lek;			/* ... its LastEvaluatedKey, NULL at the end */
	int			pos;			/* next item of page */
	DdbRequest *ready;			/* the next page, arrived */
	DdbRequest *next;			/* the next page, in flight */
	const DdbJson *head;		/* ordered merge: the item it offers */
	const DdbJson *head_key;	/* ... and that item's sort key */
	char	   *lek_seen;		/* a LastEvaluatedKey, as JSON, that must not
								 * come again (see stream_check_progress) */
	int			lek_steps;		/* pages since lek_seen was taken */
	int			lek_period;		/* pages after which it is taken anew */
	int			bucket;			/* its time bucket's number, or -1 */
	int			run;			/* ordered: streams merged together have
								 * one run number, and runs are read one
								 * after another */
	bool		done;			/* unordered: read to its end */

	/* ordered, while earlier layouts are read: see merge.c */
	bool		bounded;		/* a newest layout's stream, read up to the
								 * frontier of its run */
	const DdbJson *bound;		/* bounded: the frontier when the page being
								 * read was asked for; NULL: none */
	const DdbJson *next_bound;	/* ... when the page in flight was */
	bool		paused;			/* bounded: read up to bound, its next item
								 * lies beyond */
	const DdbJson *reached;		/* an earlier layout's stream: the sort key
								 * its pages received reach (the last
								 * LastEvaluatedKey's), NULL before one */
	bool		reached_end;	/* ... its last page received was its last */
} Stream;

/* The strings of a set (see text_set_add in scan.c) that have one hash. */
typedef struct TextSetEntry
{
	uint32		hash;
	List	   *texts;
} TextSetEntry;

struct ShardScanState
{
	ShardTable *t;
	DdbConn    *conn;
	DdbGroup   *group;
	ScanOp		op;
	List	   *cols;			/* column indexes to convert */
	List	   *attrs;			/* projection attributes, NIL = all */
	ExecCond   *key_conds;
	int			nkey_conds;
	ExecCond   *sort_conds;
	int			nsort_conds;
	ExecCond   *filters;
	int			nfilters;
	int			order;			/* 1 ascending, -1 descending, 0 none */
	int			limit;			/* rows the query needs (LIMIT + OFFSET), 0 unknown */
	int			bucket_col;		/* the column read by time bucket, or -1 */
	int			nbuckets;		/* buckets planned, -1 known at run time */
	int			bucket_shards;	/* shards planned in each bucket */
	bool		bucket_over;	/* too many partitions: a Scan instead */
	bool		bucket_runs;	/* ordered by the buckets: one at a time */
	bool		bucket_ahead;	/* ... the next ones sent meanwhile */
	bool		bucket_open;	/* bounded on one side: read away from it */
	bool		bucket_cut;		/* ... and more buckets than max_partitions
								 * lie beyond the last one listed */
	ExecCond   *bucket_conds;	/* the bucket column's bounds: lo, hi */
	int			nbucket_conds;
	bool		need_ctid;		/* UPDATE/DELETE: the shard in ctid */
	bool		read_all;		/* read to the end before the first row */
	bool		select_count;	/* Select COUNT: pages carry counts, no items */
	bool		fetch;			/* through an index that lacks columns: the
								 * table's items are got by key (fetch.c) */
	struct FetchState *fetcher; /* ... and how */
	bool		keep_pages;		/* pages read stay until the group is reset
								 * (fetch.c's BatchGetItems) */
	List	   *exprs;			/* fdw_exprs, for EXPLAIN */
	List	   *expr_states;
	int			max_inflight;
	int			total_segments; /* Scan: TotalSegments, 0 for one per
								 * stream */
	struct ScanShared *shared;	/* a parallel Scan: the segments its
								 * participants share (parallel.c), in
								 * dynamic shared memory; NULL otherwise */
	int			participant;	/* ... 0 the leader, 1 + a worker's number */
	int		   *segments_by;	/* the leader: the segments each
								 * participant read, over every rescan */
	int			nparticipants;	/* ... the length of segments_by */
	double		read_units;		/* estimated at plan time, -1: unknown */

	/* per execution */
	List	   *lookups;		/* batched lookup: per outer row, key texts
								 * indexed by column (COND_BATCH) */
	Datum	   *values;			/* evaluated fdw_exprs */
	bool	   *nulls;
	Oid		   *types;
	List	   *explain_context;	/* EXPLAIN's deparse context of the plan */
	char	   *key_cond_expr;	/* KeyConditionExpression */
	char	   *filter_expr;	/* FilterExpression */
	char	   *expiry_now;		/* epoch seconds at the statement's start, as
								 * text: items whose TTL is a number below it
								 * have expired ... */
	char	   *expiry_oldest;	/* ... unless below this, five years before;
								 * both NULL when reads keep every item (see
								 * scan_expiry_start) */
	char	   *expression_maps;	/* ProjectionExpression and
									 * ExpressionAttributeNames as JSON
									 * members, or NULL: neither */
	bool		projected;		/* ... with a ProjectionExpression */
	List	   *names;			/* ExpressionAttributeNames, in order */
	List	   *value_names;	/* ExpressionAttributeValues: names ... */
	List	   *value_json;		/* ... and their AttributeValue JSON */
	Stream	   *streams;
	int			nstreams;
	int			cur;			/* unordered: the stream read last */
	int			nstarted;		/* streams [0, nstarted) are sent */
	int			held;			/* unordered: streams from this one on (the
								 * newest layout's) start once the others
								 * are read; nstreams when none waits */
	binaryheap *heap;			/* ordered: streams by their head item */
	int			run_start;		/* ordered: the run being merged is */
	int			run_end;		/* streams [run_start, run_end) */
	int			merge_width;	/* the most streams merged at once */
	bool		in_order;		/* ordered: range shards read one by one */
	char	   *sk_lo;			/* the sort key's bounds sent, or NULL */
	char	   *sk_hi;
	bool		started;
	struct HTAB *seen;			/* with earlier layouts: the identities of
								 * the rows returned, a text set */
	Tuplestorestate *stored;	/* read_all: the rows, each with its shard */
	TupleTableSlot *store_slot; /* ... read back through this slot */
	MemoryContext runcxt;		/* lives for one execution (until rescan) */
	MemoryContext rowcxt;

	/* counters for EXPLAIN ANALYZE, over every rescan */
	int64		pages;
	int64		counted;		/* select_count: the items counted */
	DdbStats	stats;
	int			shards_read;
	int			buckets_read;
};

/* in scanrequest.c: the reads' expressions and bodies */
extern List *request_key_combinations(ShardScanState *ss);
extern const char **request_shared_texts(ShardScanState *ss, const char **texts);
extern char *request_full_sort_key(ShardScanState *ss, const char **texts);
extern char *request_key_condition(ShardScanState *ss, const char **texts);
extern char *request_filter_expression(ShardScanState *ss);
extern char *request_expression_maps(ShardScanState *ss);
extern bool request_lsi_reads_table(ShardScanState *ss);
extern char *request_read_body(ShardScanState *ss, Stream *s,
							   const DdbJson *start_key, size_t *len);

/* in scan.c: the next item read; the error of too many partitions */
extern const DdbJson *scan_next_read(ShardScanState *ss);
extern void scan_check_item_key(ShardTable *t, const DdbJson *item, const ShardKey *k);
extern List *scan_get_streams(List *keys, bool earlier, List *streams);
pg_noreturn extern void scan_too_many_partitions(ShardScanState *ss);

/* in stream.c: a stream's pages and items */
extern void scan_stream_fetch(ShardScanState *ss, Stream *s, const DdbJson *start_key);
extern void scan_receive_page(ShardScanState *ss);
extern const DdbJson *scan_stream_next_item(ShardScanState *ss, Stream *s,
											bool *waiting);
extern const DdbJson *scan_stream_next_item_wait(ShardScanState *ss, Stream *s);
extern void scan_stream_start(ShardScanState *ss, Stream *s);
extern bool scan_start_next(ShardScanState *ss);

/* in merge.c: the streams' items, in arrival order or merged */
extern const DdbJson *merge_next_unordered(ShardScanState *ss);
extern const DdbJson *merge_next_ordered(ShardScanState *ss);
extern void merge_advance(ShardScanState *ss);
extern void merge_bound_streams(ShardScanState *ss);
extern void merge_note_page(ShardScanState *ss, Stream *s, DdbRequest *page);
extern const DdbJson *merge_frontier(ShardScanState *ss, Stream *s);
extern bool merge_beyond(ShardScanState *ss, const DdbJson *a, const DdbJson *b);

/* in parallel.c: a Scan's segments shared out among the participants */
extern int	parallel_claim_segment(ShardScanState *ss);
extern int	parallel_total_segments(ShardScanState *ss);
extern void parallel_explain(ShardScanState *ss, ExplainState *es);

/* in fetch.c: the table's items of an index's */
extern void fetch_begin(ShardScanState *ss);
extern const DdbJson *fetch_next(ShardScanState *ss);
extern void fetch_reset(ShardScanState *ss);
extern void fetch_stop(ShardScanState *ss);
extern int64 fetch_explain_stats(ShardScanState *ss, DdbStats *into);
/* scan.c: the bounds of the TTLs that have passed (expiry_now, expiry_oldest) */
extern void scan_expiry_start(ShardScanState *ss);

/* scan.c: whether a range table's shards hold its sort key in order */
extern bool scan_range_in_key_order(ShardTable *t);

/* scan.c: add the request counters of from to into */
extern void scan_add_stats(DdbStats *into, const DdbStats *from);

#endif							/* SHARD_FDW_SCANSTATE_H */
