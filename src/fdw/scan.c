/*-------------------------------------------------------------------------
 *
 * scan.c
 *		The executor's side of a scan: its streams started (one of pages
 *		per shard, segment or batch of keys, read in stream.c), every
 *		stream's requests in flight at once, items turned into tuples, and
 *		the scan callbacks.  The requests' bodies are built in
 *		scanrequest.c; merge.c decides which stream's item comes next (as
 *		they arrive, or merged in the sort key's order); explain.c says
 *		what EXPLAIN shows of a scan.
 *
 * When the query stops early (LIMIT), EndForeignScan drops what is in
 * flight.
 *
 *-------------------------------------------------------------------------
 */
#include "fdw/fdw.h"

#include "access/htup_details.h"
#include "access/xact.h"
#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/lsyscache.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"

#include "core/avorder.h"
#include "fdw/modifystate.h"
#include "fdw/scanstate.h"

/* ---------------------------------------------------------------------
 * Tuples
 * ---------------------------------------------------------------------
 */

/*
 * Refuse an item of foreign table t that lacks key attribute k or holds it
 * as another type: every read asks for the key attributes and DynamoDB
 * always has them, so such an item is a broken answer, never a row to
 * fill with NULLs.
 */
void
scan_check_item_key(ShardTable *t, const DdbJson *item, const ShardKey *k)
{
	const DdbJson *av;

	if (k->attribute == NULL)
		return;
	av = ddbjson_get(item, k->attribute);
	if (av != NULL && strcmp(av->keys[0], codec_key_type(k)) == 0)
		return;
	ereport(ERROR,
			(errcode(ERRCODE_FDW_INVALID_DATA_TYPE),
			 errmsg("DynamoDB answered with an item (%s) of foreign table \"%s\" whose key attribute \"%s\" is %s",
					codec_item_key_text(item, t), t->relname, k->attribute,
					av == NULL ? "missing" : psprintf("of type %s, not %s", av->keys[0], codec_key_type(k)))));
}

/*
 * The value of column col (an index into t's columns) in item, stored
 * under layout l (one of t's layouts): its attribute, or when the item
 * lacks it, its text in a key, as l's templates wrote it (and read
 * through an index, the table's keys, as the layout that stores the item
 * wrote them).
 */
Datum
scan_item_column(ShardTable *t, ShardTable *l, const DdbJson *item, int col, bool *isnull)
{
	ShardColumn *c = &t->columns[col];
	const DdbJson *av = ddbjson_get(item, c->attribute);

	if (av == NULL && c->ddb_type != DDB_TYPE_ITEM)
	{
		char	   *text = codec_key_field(l, &l->pk, item, c->name);

		if (text == NULL)
			text = codec_key_field(t, &t->sk, item, c->name);
		if (text == NULL && t->base)
		{
			ShardTable *b = layout_item_layout(t->base, item);

			text = codec_key_field(b, &b->pk, item, c->name);
			if (text == NULL)
				text = codec_key_field(t->base, &t->base->sk, item, c->name);
		}
		*isnull = text == NULL;
		return text == NULL ? (Datum) 0 : codec_text_to_datum(text, c, item, t);
	}
	return codec_read_value(av, c, item, t, isnull);
}

/*
 * The value of column col (an index into the table's columns) in item:
 * see scan_item_column; the item's layout is found here.
 */
Datum
shard_scan_item_value(ShardScanState *ss, const DdbJson *item, int col, bool *isnull)
{
	return scan_item_column(ss->t, layout_item_layout(ss->t, item), item, col, isnull);
}

/*
 * Fill the values of slot from item, stored under layout (an index into
 * the table's layouts, -1 for a legacy base key); the slot is left empty.
 */
static void
item_to_values(ShardScanState *ss, const DdbJson *item, int layout, TupleTableSlot *slot)
{
	ShardTable *t = ss->t;
	ShardTable *l = layout < 0 ? t : t->layouts[layout];
	ListCell   *lc;

	scan_check_item_key(t, item, &t->pk);
	scan_check_item_key(t, item, &t->sk);
	ExecClearTuple(slot);
	memset(slot->tts_isnull, true, sizeof(bool) * slot->tts_tupleDescriptor->natts);
	foreach(lc, ss->cols)
	{
		int			att = t->columns[lfirst_int(lc)].attnum - 1;

		slot->tts_values[att] = scan_item_column(t, l, item, lfirst_int(lc),
												 &slot->tts_isnull[att]);
	}
}

/*
 * Store the values filled in slot as its row, with the item's shard and
 * layout in ctid when UPDATE or DELETE need them: the shard (its {shard}
 * field, LEGACY_SHARD_BLOCK for a bare base key) as the block number, the
 * index of its layout plus one as the offset.
 */
static void
store_row(ShardScanState *ss, TupleTableSlot *slot, BlockNumber shard, int layout)
{
	if (ss->need_ctid)
	{
		HeapTuple	tuple = heap_form_tuple(slot->tts_tupleDescriptor,
											slot->tts_values, slot->tts_isnull);

		ItemPointerSet(&tuple->t_self, shard, (OffsetNumber) (layout + 1));
		ExecStoreHeapTuple(tuple, slot, false);
	}
	else
		ExecStoreVirtualTuple(slot);
}

/*
 * Where item is stored: its layout (index into the table's layouts, -1
 * for a legacy base key), returned, and its shard in *shard as store_row
 * puts it in ctid.  Only UPDATE and DELETE need the shard, and only they
 * and a table with earlier layouts (whose items are decoded by the
 * templates of their own layout) the layout: 0 otherwise.
 */
static int
item_place(ShardScanState *ss, const DdbJson *item, BlockNumber *shard)
{
	long		n;
	int			layout;

	*shard = 0;
	if (!ss->need_ctid && ss->t->nlayouts == 1)
		return 0;
	layout = layout_of_item(ss->t, item, &n);
	*shard = layout < 0 ? LEGACY_SHARD_BLOCK : (BlockNumber) n;
	return layout;
}

/* Fill slot from item. */
static void
item_to_slot(ShardScanState *ss, const DdbJson *item, TupleTableSlot *slot)
{
	BlockNumber shard;
	int			layout = item_place(ss, item, &shard);

	item_to_values(ss, item, layout, slot);
	store_row(ss, slot, shard, Max(layout, 0));
}

/* ---------------------------------------------------------------------
 * Starting and stopping
 * ---------------------------------------------------------------------
 */

/*
 * True when a range-sharded table's shards hold its sort key in order:
 * the shards range over the sort key itself, not normalized.  Then shard
 * i's items all sort before shard i+1's.
 */
bool
scan_range_in_key_order(ShardTable *t)
{
	return t->strategy == SHARD_RANGE && !t->range_normalize && t->nlayouts == 1 &&
		t->sk.attribute && t->sk.template == NULL && !t->legacy_unsharded &&
		list_length(t->shard_by) == 1 && linitial_int(t->shard_by) == t->sk.column;
}

/*
 * True when range shard number shard (shard_base counted in) can hold a
 * sort key within the bounds sent.
 */
static bool
range_shard_meets_bounds(ShardScanState *ss, int shard)
{
	ShardTable *t = ss->t;
	int			i = shard - t->shard_base;

	if (ss->sk_hi && strcmp(t->boundaries[i], ss->sk_hi) > 0)
		return false;
	if (ss->sk_lo && i + 1 < t->nboundaries && strcmp(t->boundaries[i + 1], ss->sk_lo) <= 0)
		return false;
	return true;
}

/* Raise "the range spans more partitions than max_partitions". */
void
scan_too_many_partitions(ShardScanState *ss)
{
	ShardTable *t = ss->t;
	ShardColumn *col = &t->columns[ss->bucket_col];

	ereport(ERROR,
			(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
			 errmsg("the range of column \"%s\" spans more partitions than foreign table \"%s\" reads in one scan",
					col->name, t->relname),
			 errdetail("Its %s buckets times their shards are more than max_partitions (%d).",
					   keyfmt_time_form_name(route_bucket_form(t, ss->bucket_col)),
					   t->max_partitions),
			 errhint("Narrow the range, or raise option \"max_partitions\" of the foreign table.")));
}

/*
 * The partition key values the scan reads under one layout: one per shard,
 * appended to *result as Stream templates (keys that repeat are dropped by
 * the callers, in constant time each).  Range shards that cannot hold a
 * sort key within the bounds sent are left out.  False when the values
 * make no stored key.
 */
static bool
layout_streams(ShardScanState *ss, ShardTable *t, const char **texts, List **result,
			   bool earlier)
{
	ListCell   *lc;
	char		err[SFDW_ERRLEN];
	List	   *shards;

	if (t->strategy == SHARD_DYNAMIC)
	{
		/* every shard the key ever had, as its shard_history records */
		char	   *base = route_partition_key(t, texts, 0, true, err, sizeof(err));
		DynamicMeta meta;

		if (base == NULL)
			return false;
		/* read afresh: another writer may have grown the key meanwhile */
		meta = dynamic_meta(t, ss->group, base, true, false);
		shards = route_read_shards(t, texts, meta.max_shards_ever);
	}
	else
		shards = route_read_shards(t, texts, t->shards);
	foreach(lc, shards)
	{
		Stream	   *s = palloc0(sizeof(Stream));

		s->shard = lfirst_int(lc);
		s->earlier = earlier;
		if (scan_range_in_key_order(t) && !range_shard_meets_bounds(ss, s->shard))
			continue;
		s->pk_text = route_partition_key(t, texts, s->shard, false, err, sizeof(err));
		/* a value no stored key can have; DynamoDB refuses an empty key */
		if (s->pk_text == NULL || s->pk_text[0] == '\0')
			return false;
		*result = lappend(*result, s);
	}
	return true;
}

/*
 * The partition key values the scan reads: those of the earlier layouts
 * still in the table's history, then those of the newest layout (a key
 * the earlier layouts share once, and once more if the newest has it
 * too), and the base key with legacy_unsharded, as a list of Stream
 * templates.  Items only ever move from an earlier layout to the newest,
 * so a read that finishes the earlier layouts' keys before it starts the
 * newest's meets every row at least once (see scan_start).
 */
static List *
partition_streams(ShardScanState *ss, const char **texts)
{
	ShardTable *t = ss->t;
	List	   *result = NIL;
	char		err[SFDW_ERRLEN];

	for (int i = 1; i < t->nlayouts; i++)
		if (!layout_streams(ss, t->layouts[i], texts, &result, true))
			return NIL;
	if (!layout_streams(ss, t, texts, &result, false))
		return NIL;
	if (t->legacy_unsharded && t->strategy != SHARD_NONE)
	{
		Stream	   *s = palloc0(sizeof(Stream));

		s->shard = -1;
		s->pk_text = route_partition_key(t, texts, 0, true, err, sizeof(err));
		if (s->pk_text && s->pk_text[0] != '\0')
			result = lappend(result, s);
	}
	return result;
}

/*
 * The key texts of the bucket column, one per time bucket the scan reads
 * (newest first for a descending order), or a list of one NULL when it
 * reads no buckets; NIL when a bound is NULL (nothing matches).  Errors
 * when a bound is infinite, or the buckets are more than max_partitions
 * allows.  A range open on one side lists max_partitions' worth of buckets
 * away from the other (bucket_cut when more lie beyond).
 */
static List *
bucket_texts(ShardScanState *ss)
{
	ShardTable *t = ss->t;
	ShardColumn *col;
	int64		bounds[2] = {MIN_TIMESTAMP, END_TIMESTAMP - 1};
	List	   *texts;
	int			max;

	if (ss->bucket_col < 0 || ss->bucket_over)
		return list_make1(NULL);
	col = &t->columns[ss->bucket_col];
	for (int i = 0; i < ss->nbucket_conds; i++)
	{
		ExecCond   *c = &ss->bucket_conds[i];
		bool		upper = c->op == COND_LT || c->op == COND_LE;

		if (ss->nulls[c->expr])
			return NIL;
		if (col->typid == DATEOID ? DATE_NOT_FINITE(DatumGetDateADT(ss->values[c->expr])) :
			TIMESTAMP_NOT_FINITE(DatumGetTimestamp(ss->values[c->expr])))
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("cannot read the time buckets of column \"%s\" of foreign table \"%s\" up to infinity",
							col->name, t->relname),
					 errhint("Bound the column by finite values.")));
		bounds[upper] = route_time_usecs(col->typid, ss->values[c->expr]);
		/* ts < b reads up to the bucket of the instant before b */
		if (c->op == COND_LT)
			bounds[upper]--;
	}
	max = t->max_partitions / Max(ss->bucket_shards, 1);
	texts = route_read_buckets(t, ss->bucket_col, bounds[0], bounds[1], ss->order < 0, max);
	ss->bucket_cut = false;
	if (list_length(texts) > max && ss->bucket_open)
	{
		texts = list_truncate(texts, max);
		ss->bucket_cut = true;
	}
	else if (list_length(texts) > max)
		scan_too_many_partitions(ss);
	return texts;
}

/*
 * Add a copy of text to the set of strings *set, made in cxt with the
 * copy; false when the set has it already.
 */
static bool
text_set_add(HTAB **set, MemoryContext cxt, const char *text)
{
	uint32		hash = hash_bytes((const unsigned char *) text, strlen(text));
	TextSetEntry *entry;
	bool		found;
	ListCell   *lc;
	MemoryContext old;

	if (*set == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(uint32);
		ctl.entrysize = sizeof(TextSetEntry);
		ctl.hcxt = cxt;
		*set = hash_create("shard_fdw text set", 64, &ctl,
						   HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}
	entry = hash_search(*set, &hash, HASH_ENTER, &found);
	if (!found)
		entry->texts = NIL;
	foreach(lc, entry->texts)
		if (strcmp(lfirst(lc), text) == 0)
			return false;
	old = MemoryContextSwitchTo(cxt);
	entry->texts = lappend(entry->texts, pstrdup(text));
	MemoryContextSwitchTo(old);
	return true;
}

/*
 * Streams that get the items of keys (a List of item keys as JSON texts),
 * BATCH_GET_MAX a stream (a BatchGetItem, or a GetItem for one key), of an
 * earlier layout when earlier, appended to streams.
 */
List *
scan_get_streams(List *keys, bool earlier, List *streams)
{
	Stream	   *batch = NULL;
	ListCell   *lc;

	foreach(lc, keys)
	{
		if (batch == NULL || list_length(batch->keys) == BATCH_GET_MAX)
		{
			batch = palloc0(sizeof(Stream));
			batch->earlier = earlier;
			streams = lappend(streams, batch);
		}
		batch->keys = lappend(batch->keys, lfirst(lc));
	}
	return streams;
}

/* Evaluate the expressions and build the streams, then send. */
static void
scan_start(ShardScanState *ss, ExprContext *econtext)
{
	MemoryContext old;
	ListCell   *lc;
	int			i = 0;
	List	   *combos;
	List	   *streams = NIL;

	MemoryContextReset(ss->runcxt);
	old = MemoryContextSwitchTo(ss->runcxt);
	ss->names = NIL;
	ss->value_names = NIL;
	ss->value_json = NIL;
	ss->heap = NULL;
	ss->seen = NULL;
	ss->sk_lo = NULL;
	ss->sk_hi = NULL;
	foreach(lc, ss->expr_states)
	{
		ExprState  *state = lfirst(lc);

		ss->values[i] = ExecEvalExpr(state, econtext, &ss->nulls[i]);
		ss->types[i] = exprType((Node *) state->expr);
		i++;
	}
	combos = request_key_combinations(ss);
	scan_expiry_start(ss);
	if (ss->op == SCAN_OP_SCAN && ss->shared)
	{
		/*
		 * A parallel Scan: every segment a stream, started as this
		 * participant claims it (scan_start_next)
		 */
		ss->total_segments = parallel_total_segments(ss);
		for (int seg = 0; seg < ss->total_segments; seg++)
			streams = lappend(streams, palloc0(sizeof(Stream)));
	}
	else if (ss->op == SCAN_OP_SCAN)
	{
		/* two passes while the table has earlier layouts: see in_its_pass */
		int			passes = ss->t->nlayouts > 1 ? 2 : 1;

		ss->total_segments = passes > 1 ? ss->max_inflight : 0;
		for (int pass = 0; pass < passes; pass++)
			for (int seg = 0; seg < ss->max_inflight; seg++)
			{
				Stream	   *s = palloc0(sizeof(Stream));

				s->segment = seg;
				s->earlier = pass < passes - 1;
				streams = lappend(streams, s);
			}
	}
	else if (ss->op == SCAN_OP_GET)
	{
		/* the earlier layouts' keys, then the newest's */
		List	   *keys[2] = {NIL, NIL};
		HTAB	   *seen = NULL;

		foreach(lc, combos)
		{
			const char **texts = lfirst(lc);
			char	   *sk = ss->t->sk.attribute ? request_full_sort_key(ss, texts) : NULL;
			ListCell   *lc2;

			/*
			 * No stored key is empty, nor has a part no row can be written
			 * with (an empty or negative one), which leaves no sort key
			 */
			if (ss->t->sk.attribute && (sk == NULL || sk[0] == '\0'))
				continue;
			foreach(lc2, partition_streams(ss, texts))
			{
				Stream	   *s = lfirst(lc2);
				int			phase = s->earlier ? 0 : 1;
				char	   *key = request_item_key_json(ss->t, s->pk_text, sk);

				if (text_set_add(&seen, CurrentMemoryContext,
								 psprintf("%d%s", phase, key)))
					keys[phase] = lappend(keys[phase], makeString(key));
			}
		}
		for (int phase = 0; phase < 2; phase++)
			streams = scan_get_streams(keys[phase], phase == 0, streams);
	}
	else if (combos != NIL)
	{
		/*
		 * IN lists here are on partition key columns: one sort key
		 * condition.  A time bucket is a partition of its own, the same
		 * key condition in each: its streams come together, the newest
		 * bucket first under a descending order.
		 */
		HTAB	   *seen = NULL;
		List	   *buckets = bucket_texts(ss);

		ss->key_cond_expr = request_key_condition(ss, request_shared_texts(ss, linitial(combos)));
		for (int b = 0; ss->key_cond_expr && b < list_length(buckets); b++)
		{
			foreach(lc, combos)
			{
				const char **texts = lfirst(lc);
				ListCell   *lc2;

				if (ss->bucket_col >= 0 && !ss->bucket_over)
				{
					texts = palloc(sizeof(char *) * ss->t->ncolumns);
					memcpy(texts, lfirst(lc), sizeof(char *) * ss->t->ncolumns);
					texts[ss->bucket_col] = list_nth(buckets, b);
				}
				foreach(lc2, partition_streams(ss, texts))
				{
					Stream	   *s = lfirst(lc2);
					/* a key read in both phases, once in each */
					if (!text_set_add(&seen, CurrentMemoryContext,
									  psprintf("%d%s", s->earlier, s->pk_text)))
						continue;
					s->bucket = list_nth(buckets, b) ? b : -1;
					s->run = ss->bucket_runs && ss->order != 0 ? b : 0;
					streams = lappend(streams, s);
				}
			}
		}
		if (ss->bucket_col >= 0 && list_length(streams) > ss->t->max_partitions)
			scan_too_many_partitions(ss);
	}
	ss->filter_expr = request_filter_expression(ss);
	ss->expression_maps = request_expression_maps(ss);
	ss->nstreams = list_length(streams);
	if (ss->op != SCAN_OP_SCAN && !ss->conn->server->max_concurrency_set)
		ddb_group_set_max_inflight(ss->group,
								   Max(ss->max_inflight,
									   Min(ss->nstreams, SHARD_READ_CONCURRENCY_MAX)));
	ss->streams = palloc0(sizeof(Stream) * Max(ss->nstreams, 1));
	i = 0;
	foreach(lc, streams)
		ss->streams[i++] = *(Stream *) lfirst(lc);
	ss->in_order = ss->order != 0 && ss->op == SCAN_OP_QUERY && scan_range_in_key_order(ss->t);
	if (ss->in_order && ss->order < 0)
	{
		/* descending: the last shard first */
		for (i = 0; i < ss->nstreams / 2; i++)
		{
			Stream		tmp = ss->streams[i];

			ss->streams[i] = ss->streams[ss->nstreams - 1 - i];
			ss->streams[ss->nstreams - 1 - i] = tmp;
		}
	}
	/* range shards read in order are runs of one */
	for (i = 0; i < ss->nstreams && ss->in_order; i++)
		ss->streams[i].run = i;
	merge_bound_streams(ss);
	ss->merge_width = 0;
	for (int first = 0; first < ss->nstreams; first = i)
	{
		for (i = first; i < ss->nstreams && ss->streams[i].run == ss->streams[first].run; i++)
			;
		ss->merge_width = Max(ss->merge_width, i - first);
	}
	ss->shards_read = 0;
	ss->buckets_read = 0;
	ss->run_start = ss->run_end = 0;

	/*
	 * Unordered, the newest layout's streams wait until the earlier
	 * layouts' are read (merge_next_unordered starts them): a row moving
	 * meanwhile is met in its old place or its new one, or both (and
	 * returned once, see seen_before).
	 */
	ss->held = ss->nstreams;
	for (i = ss->nstreams - 1; ss->order == 0 && i >= 0 && !ss->streams[i].earlier; i--)
		ss->held = i;
	if (ss->held == 0)
		ss->held = ss->nstreams;

	/*
	 * Ordered, the merge sends run after run.  Unordered, time buckets send
	 * a window of max_concurrency streams at a time, a parallel Scan as
	 * many segments as it claims, other reads all.
	 */
	ss->nstarted = 0;
	if (ss->shared)
	{
		for (i = 0; i < ss->max_inflight && scan_start_next(ss); i++)
			;
	}
	else
	{
		if (ss->order == 0)
			ss->nstarted = Min(ss->held, ss->bucket_col >= 0 ? ss->max_inflight : ss->nstreams);
		for (i = 0; i < ss->nstarted; i++)
			scan_stream_start(ss, &ss->streams[i]);
	}
	ss->cur = 0;
	ss->started = true;
	MemoryContextSwitchTo(old);
}

/*
 * What a scan of foreign table relid reads: the table, or through its
 * secondary index named by index (a String; NULL: none), that index's
 * view.  The plan named an index the table recorded then; an error says
 * when it is no longer one a read may go through.
 */
static ShardTable *
scan_reader(Oid relid, Node *index)
{
	ShardTable *t = shard_get_table(relid);
	int			i;
	ShardTable *v;
	const char *why = "the foreign table no longer records it";

	if (index == NULL)
		return t;
	i = shard_index_find(t, strVal(index));
	v = i < 0 ? NULL : shard_index_view(t, i, &why);
	if (v == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_ERROR),
				 errmsg("cannot read foreign table \"%s\" through index \"%s\"",
						t->relname, strVal(index)),
				 errdetail("The plan reads through it, but %s.", why),
				 errhint("Run the statement again: it is planned anew.")));
	return v;
}

/* Unpack a flattened condition list. */
static ExecCond *
unpack_conds(List *flat, int *n)
{
	ExecCond   *conds = palloc0(sizeof(ExecCond) * Max(list_length(flat) / 3, 1));

	*n = list_length(flat) / 3;
	for (int i = 0; i < *n; i++)
	{
		conds[i].col = list_nth_int(flat, 3 * i);
		conds[i].op = (CondOp) list_nth_int(flat, 3 * i + 1);
		conds[i].expr = list_nth_int(flat, 3 * i + 2);
	}
	return conds;
}

/* The state of the scan a ForeignScan node runs (its BeginForeignScan). */
ShardScanState *
shard_scan_create(ForeignScanState *node, int eflags)
{
	ForeignScan *fs = (ForeignScan *) node->ss.ps.plan;
	EState	   *estate = node->ss.ps.state;
	ShardScanState *ss = palloc0(sizeof(ShardScanState));
	/* an aggregate's scan (upper.c) reads the one relation it is over */
	Index		rtindex = fs->scan.scanrelid > 0 ? fs->scan.scanrelid :
		(Index) bms_next_member(fs->fs_relids, -1);
	RangeTblEntry *rte = exec_rt_fetch(rtindex, estate);
	Oid			userid = OidIsValid(SHARD_SCAN_USER(fs, rte)) ? SHARD_SCAN_USER(fs, rte) : GetUserId();
	int			nexprs = list_length(fs->fdw_exprs);
	List	   *buckets;

	ss->t = scan_reader(rte->relid, list_nth(fs->fdw_private, SCAN_PRIVATE_INDEX));
	ss->op = intVal(list_nth(fs->fdw_private, SCAN_PRIVATE_OP));
	ss->cols = list_nth(fs->fdw_private, SCAN_PRIVATE_COLUMNS);
	ss->attrs = list_nth(fs->fdw_private, SCAN_PRIVATE_ATTRS);
	ss->key_conds = unpack_conds(list_nth(fs->fdw_private, SCAN_PRIVATE_KEY_CONDS),
								 &ss->nkey_conds);
	ss->sort_conds = unpack_conds(list_nth(fs->fdw_private, SCAN_PRIVATE_SORT_CONDS),
								  &ss->nsort_conds);
	ss->filters = unpack_conds(list_nth(fs->fdw_private, SCAN_PRIVATE_FILTERS),
							   &ss->nfilters);
	ss->order = intVal(list_nth(fs->fdw_private, SCAN_PRIVATE_ORDER));
	ss->limit = intVal(list_nth(fs->fdw_private, SCAN_PRIVATE_LIMIT));
	ss->need_ctid = boolVal(list_nth(fs->fdw_private, SCAN_PRIVATE_NEED_CTID));
	ss->read_all = boolVal(list_nth(fs->fdw_private, SCAN_PRIVATE_READ_ALL));
	/*
	 * A Scan's pass is judged from the whole item, as the move judges it;
	 * an item read through an index is told from another by all of it.
	 */
	if ((ss->op == SCAN_OP_SCAN || ss->t->index) && ss->t->nlayouts > 1)
		ss->attrs = NIL;
	buckets = list_nth(fs->fdw_private, SCAN_PRIVATE_BUCKETS);
	ss->bucket_col = list_nth_int(buckets, BUCKET_COLUMN);
	ss->nbuckets = list_nth_int(buckets, BUCKET_COUNT);
	ss->bucket_shards = list_nth_int(buckets, BUCKET_SHARDS);
	ss->bucket_over = list_nth_int(buckets, BUCKET_OVER) != 0;
	ss->bucket_runs = list_nth_int(buckets, BUCKET_RUNS) != 0;
	ss->bucket_ahead = list_nth_int(buckets, BUCKET_AHEAD) != 0;
	ss->bucket_open = list_nth_int(buckets, BUCKET_OPEN) != 0;
	ss->bucket_conds = unpack_conds(list_nth(fs->fdw_private, SCAN_PRIVATE_BUCKET_CONDS),
									&ss->nbucket_conds);
	ss->fetch = boolVal(list_nth(fs->fdw_private, SCAN_PRIVATE_FETCH));
	ss->read_units = floatVal(linitial(list_nth(fs->fdw_private, SCAN_PRIVATE_READ_UNITS)));
	ss->exprs = fs->fdw_exprs;
	ss->values = palloc0(sizeof(Datum) * Max(nexprs, 1));
	ss->nulls = palloc0(sizeof(bool) * Max(nexprs, 1));
	ss->types = palloc0(sizeof(Oid) * Max(nexprs, 1));
	ss->runcxt = AllocSetContextCreate(estate->es_query_cxt, "shard_fdw scan",
									   ALLOCSET_DEFAULT_SIZES);
	ss->rowcxt = AllocSetContextCreate(estate->es_query_cxt, "shard_fdw row",
									   ALLOCSET_DEFAULT_SIZES);
	if (eflags & EXEC_FLAG_EXPLAIN_ONLY)
		return ss;
	ss->expr_states = ExecInitExprList(fs->fdw_exprs, (PlanState *) node);
	ss->conn = shard_get_connection(GetForeignTable(rte->relid)->serverid, userid);
	ss->max_inflight = ss->conn->server->max_concurrency;
	/*
	 * At the transaction level of the executor's state, not of a fetch, and
	 * gone with that state's memory even if nothing ends the scan.
	 */
	ss->group = ddb_group_create(ss->conn, ss->max_inflight);
	ddb_group_set_budget(ss->group, budget_for(ss->t, false));
	ddb_group_hold(&ss->group, GetMemoryChunkContext(ss));
	if (ss->fetch)
		fetch_begin(ss);
	return ss;
}

/* BeginForeignScan */
void
shard_begin_scan(ForeignScanState *node, int eflags)
{
	node->fdw_state = shard_scan_create(node, eflags);
}

/* The foreign table and the connection of a scan. */
ShardTable *
shard_scan_table(ShardScanState *ss)
{
	return ss->t;
}

DdbConn *
shard_scan_conn(ShardScanState *ss)
{
	return ss->conn;
}

/*
 * True when the row of item came before in this execution: while items
 * move between layouts, a read may meet one in both (shard_fdw_reshard
 * moves it between the read of one shard and of another).  The
 * identities seen are kept in runcxt; what making one takes, in rowcxt.
 */
static bool
seen_before(ShardScanState *ss, const DdbJson *item)
{
	MemoryContext old = MemoryContextSwitchTo(ss->rowcxt);
	bool		added = text_set_add(&ss->seen, ss->runcxt,
									 layout_item_identity(ss->t, item));

	MemoryContextSwitchTo(old);
	return !added;
}

/*
 * True when a Scan of the whole table returns item in the pass that read
 * it (the stream last read, ss->cur).  While the table has earlier
 * layouts, a Scan makes two passes over the table, each segment by
 * segment: the first returns only the items not settled (stored under an
 * earlier layout's key that the newest layout does not give their row),
 * the second, sent once the first has read every segment to its end, only
 * the settled ones.  shard_fdw_reshard only moves items out of an earlier
 * layout into the newest, so a row is met: either its item is unsettled
 * when the first pass reads its key (returned then), or it had moved
 * before, and lies at its newest key before the second pass starts, where
 * nothing moves it again (returned then; a row returned in both passes is
 * returned once, see seen_before).  A single Scan could pass the row's new
 * key before the move and its old key after.  ANALYZE's sampling Scan
 * (shard_scan_segments) makes one pass, whose streams are all newest.
 */
static bool
in_its_pass(ShardScanState *ss, const DdbJson *item)
{
	if (ss->op != SCAN_OP_SCAN || !ss->streams[0].earlier)
		return true;
	return ss->streams[ss->cur].earlier != layout_item_settled(ss->t, item);
}

/*
 * The next item the scan's streams read, in its order (as they arrive, or
 * merged), or NULL at the end.  It is valid until the next call.
 */
const DdbJson *
scan_next_read(ShardScanState *ss)
{
	if (ss->order == 0)
		return merge_next_unordered(ss);
	merge_advance(ss);
	return merge_next_ordered(ss);
}

/*
 * True when a read of t may meet one row twice: the table's items move
 * between its layouts (also when t is a view of one of its indexes).
 */
static bool
rows_may_repeat(ShardTable *t)
{
	return t->nlayouts > 1 || (t->base && t->base->nlayouts > 1);
}

/*
 * Five years of 365 days: DynamoDB never deletes an item whose TTL lies
 * further in the past, so such an item has not expired.
 */
#define TTL_HORIZON_S (5 * 365 * SECS_PER_DAY)

/*
 * Set the bounds of the TTLs that have passed, for the scan's
 * FilterExpression (scanrequest.c) and its own check of each item
 * (item_expired): DynamoDB's time to live deletes, some time after it,
 * an item whose TTL attribute is a number of epoch seconds before now,
 * but no more than five years before, and never one whose attribute is
 * missing or of another type.  "Now" is the statement's start, in whole
 * seconds, the same for every scan and page of the statement.  NULL
 * bounds when the table's reads keep every item.
 */
void
scan_expiry_start(ShardScanState *ss)
{
	int64		now;

	ss->expiry_now = ss->expiry_oldest = NULL;
	if (shard_expiry_attribute(ss->t) == NULL)
		return;
	now = GetCurrentStatementStartTimestamp() / USECS_PER_SEC +
		(int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY;
	ss->expiry_now = psprintf(INT64_FORMAT, now);
	ss->expiry_oldest = psprintf(INT64_FORMAT, now - TTL_HORIZON_S);
}

/*
 * True when the time to live of item has passed (see scan_expiry_start):
 * the scan leaves it out, also where DynamoDB's filter did not (GetItem,
 * a TTL attribute that is a key).
 */
static bool
item_expired(ShardScanState *ss, const DdbJson *item)
{
	const DdbJson *av;

	if (ss->expiry_now == NULL)
		return false;
	av = ddbjson_get(item, shard_expiry_attribute(ss->t));
	if (av == NULL || av->kind != DJ_OBJECT || av->n != 1 ||
		strcmp(av->keys[0], "N") != 0 || av->elems[0].kind != DJ_STRING)
		return false;
	return avorder_number_cmp(av->elems[0].str, ss->expiry_now) < 0 &&
		avorder_number_cmp(av->elems[0].str, ss->expiry_oldest) >= 0;
}

/*
 * The scan's next item, in its order, or NULL at the end: the table's item
 * of each index item when they are got by key (fetch.c).  A Scan passes
 * over the items that are not the table's rows (layout_item_is_row), and
 * a scan an UPDATE or DELETE reads over those whose sort key is not the
 * table's (layout_sort_key_is_row); every scan over the items whose time
 * to live has passed (item_expired).
 */
static const DdbJson *
next_item(ShardScanState *ss)
{
	const DdbJson *item;
	MemoryContext old = MemoryContextSwitchTo(ss->runcxt);

	do
		item = ss->fetch ? fetch_next(ss) : scan_next_read(ss);
	while (item &&
		   ((ss->op == SCAN_OP_SCAN && !layout_item_is_row(ss->t, item)) ||
			(ss->need_ctid && !layout_sort_key_is_row(ss->t, item)) ||
			item_expired(ss, item) ||
			(rows_may_repeat(ss->t) &&
			 (!in_its_pass(ss, item) || seen_before(ss, item)))));
	MemoryContextSwitchTo(old);
	if (item)
		ss->stats.items++;
	return item;
}

/*
 * read_all: read every item into a tuplestore (on disk past work_mem),
 * each row followed by where its item came from (item_place: the layout
 * in the high 32 bits, the shard in the low).
 */
static void
store_all(ShardScanState *ss, TupleTableSlot *slot)
{
	TupleDesc	desc = slot->tts_tupleDescriptor;
	int			natts = desc->natts;
	TupleDesc	store_desc;
	Datum	   *values;
	bool	   *nulls;
	const DdbJson *item;
	MemoryContext old = MemoryContextSwitchTo(ss->runcxt);

	store_desc = CreateTemplateTupleDesc(natts + 1);
	for (int i = 1; i <= natts; i++)
		TupleDescCopyEntry(store_desc, i, desc, i);
	TupleDescInitEntry(store_desc, natts + 1, "shard", INT8OID, -1, 0);
	ss->store_slot = MakeSingleTupleTableSlot(store_desc, &TTSOpsMinimalTuple);
	ss->stored = tuplestore_begin_heap(false, false, work_mem);
	values = palloc(sizeof(Datum) * (natts + 1));
	nulls = palloc0(sizeof(bool) * (natts + 1));
	MemoryContextSwitchTo(old);
	while ((item = next_item(ss)) != NULL)
	{
		MemoryContextReset(ss->rowcxt);
		old = MemoryContextSwitchTo(ss->rowcxt);
		{
			BlockNumber shard;
			int			layout = item_place(ss, item, &shard);

			item_to_values(ss, item, layout, slot);
			values[natts] = Int64GetDatum(((int64) Max(layout, 0) << 32) | shard);
		}
		memcpy(values, slot->tts_values, sizeof(Datum) * natts);
		memcpy(nulls, slot->tts_isnull, sizeof(bool) * natts);
		tuplestore_putvalues(ss->stored, store_desc, values, nulls);
		MemoryContextSwitchTo(old);
	}
	ExecClearTuple(slot);
}

/* read_all: the next row from the tuplestore (filled on the first call). */
static TupleTableSlot *
next_stored(ShardScanState *ss, TupleTableSlot *slot)
{
	int			natts = slot->tts_tupleDescriptor->natts;
	MemoryContext old;
	bool		found;
	int64		place;

	if (ss->stored == NULL)
		store_all(ss, slot);
	MemoryContextReset(ss->rowcxt);
	/* a row read back from disk is allocated here, and the slot frees it */
	old = MemoryContextSwitchTo(ss->runcxt);
	found = tuplestore_gettupleslot(ss->stored, true, false, ss->store_slot);
	MemoryContextSwitchTo(old);
	if (!found)
		return ExecClearTuple(slot);
	slot_getallattrs(ss->store_slot);
	ExecClearTuple(slot);
	memcpy(slot->tts_values, ss->store_slot->tts_values, sizeof(Datum) * natts);
	memcpy(slot->tts_isnull, ss->store_slot->tts_isnull, sizeof(bool) * natts);
	old = MemoryContextSwitchTo(ss->rowcxt);
	place = DatumGetInt64(ss->store_slot->tts_values[natts]);
	store_row(ss, slot, (BlockNumber) (place & 0xFFFFFFFF), (int) (place >> 32));
	MemoryContextSwitchTo(old);
	return slot;
}

/*
 * The scan's next row, in node's scan slot (empty at the end): from the
 * tuplestore when the scan reads every item first (read_all).
 */
static TupleTableSlot *
next_row(ShardScanState *ss, ForeignScanState *node)
{
	TupleTableSlot *slot = node->ss.ss_ScanTupleSlot;
	const DdbJson *item;
	MemoryContext old;

	if (!ss->started)
		scan_start(ss, node->ss.ps.ps_ExprContext);
	if (ss->read_all)
		return next_stored(ss, slot);
	MemoryContextReset(ss->rowcxt);
	item = next_item(ss);
	if (item == NULL)
		return ExecClearTuple(slot);
	old = MemoryContextSwitchTo(ss->rowcxt);
	item_to_slot(ss, item, slot);
	MemoryContextSwitchTo(old);
	return slot;
}

/* IterateForeignScan */
TupleTableSlot *
shard_iterate_scan(ForeignScanState *node)
{
	ShardScanState *ss = node->fdw_state;
	TupleTableSlot *slot;
	ErrorContextCallback cb;
	bool		modifying = ss->need_ctid &&
		modify_push_context_of(node->ss.ps.state,
							   ((ForeignScan *) node->ss.ps.plan)->scan.scanrelid, &cb);

	slot = next_row(ss, node);
	if (modifying)
		pop_error_context(&cb);
	return slot;
}

/*
 * The scan's next item whose row passes the plan's conditions, or NULL at
 * the end, for a scan that does more than return rows (direct modify).
 * The item is valid until the next call.
 */
const DdbJson *
shard_scan_next_match(ShardScanState *ss, ForeignScanState *node)
{
	ExprContext *econtext = node->ss.ps.ps_ExprContext;
	TupleTableSlot *slot = node->ss.ss_ScanTupleSlot;
	const DdbJson *item;

	if (!ss->started)
		scan_start(ss, econtext);
	while ((item = next_item(ss)) != NULL)
	{
		MemoryContext old;

		if (node->ss.ps.qual == NULL)
			return item;
		MemoryContextReset(ss->rowcxt);
		old = MemoryContextSwitchTo(ss->rowcxt);
		item_to_slot(ss, item, slot);
		MemoryContextSwitchTo(old);
		ResetExprContext(econtext);
		econtext->ecxt_scantuple = slot;
		if (ExecQual(node->ss.ps.qual, econtext))
			return item;
	}
	return NULL;
}

/*
 * The scan's next row that passes qual (NULL: every row), in node's scan
 * slot, or an empty slot at the end, for a scan that does more than return
 * rows and needs them whole (an UPDATE run by its scan).  The node's
 * per-tuple memory is reset at each row: the row, and what is computed
 * from it there, is valid until the next call.
 */
TupleTableSlot *
shard_scan_next_row(ShardScanState *ss, ForeignScanState *node, ExprState *qual)
{
	ExprContext *econtext = node->ss.ps.ps_ExprContext;

	for (;;)
	{
		TupleTableSlot *slot = next_row(ss, node);

		ResetExprContext(econtext);
		econtext->ecxt_scantuple = slot;
		if (TupIsNull(slot) || ExecQual(qual, econtext))
			return slot;
	}
}

/*
 * Read segments segs[0..nsegs - 1] of a parallel Scan in total segments of
 * foreign table relid whole, every segment's pages in flight at once (up
 * to max_concurrency), handing each item's row to fn in slot, a slot of
 * the table's row type.  *stats gets the requests' counters.  For ANALYZE,
 * which samples a table a few segments at a time.
 */
void
shard_scan_segments(Oid relid, const int *segs, int nsegs, int total,
					TupleTableSlot *slot, ShardRowFn fn, void *arg,
					DdbStats *stats)
{
	ShardScanState *ss = palloc0(sizeof(ShardScanState));
	const DdbJson *item;

	ss->t = shard_get_table(relid);
	ss->op = SCAN_OP_SCAN;
	for (int i = 0; i < ss->t->ncolumns; i++)
		ss->cols = lappend_int(ss->cols, i);
	ss->key_conds = unpack_conds(NIL, &ss->nkey_conds);
	ss->sort_conds = unpack_conds(NIL, &ss->nsort_conds);
	ss->filters = unpack_conds(NIL, &ss->nfilters);
	ss->runcxt = AllocSetContextCreate(CurrentMemoryContext, "shard_fdw sample",
									   ALLOCSET_DEFAULT_SIZES);
	ss->rowcxt = AllocSetContextCreate(CurrentMemoryContext, "shard_fdw sample row",
									   ALLOCSET_DEFAULT_SIZES);
	ss->conn = shard_get_connection(GetForeignTable(relid)->serverid, GetUserId());
	ss->max_inflight = ss->conn->server->max_concurrency;
	ss->group = ddb_group_create(ss->conn, ss->max_inflight);
	ddb_group_set_budget(ss->group, budget_for(ss->t, false));
	ddb_group_hold(&ss->group, GetMemoryChunkContext(ss));
	ss->total_segments = total;
	ss->bucket_col = -1;
	scan_expiry_start(ss);
	ss->read_units = -1;
	ss->nstreams = nsegs;
	ss->nstarted = nsegs;
	ss->streams = palloc0(sizeof(Stream) * Max(nsegs, 1));
	for (int i = 0; i < nsegs; i++)
	{
		ss->streams[i].segment = segs[i];
		ss->streams[i].bucket = -1;
		scan_stream_start(ss, &ss->streams[i]);
	}
	ss->started = true;
	while ((item = next_item(ss)) != NULL)
	{
		MemoryContext old;
		BlockNumber shard;

		MemoryContextReset(ss->rowcxt);
		old = MemoryContextSwitchTo(ss->rowcxt);
		item_to_values(ss, item, item_place(ss, item, &shard), slot);
		ExecStoreVirtualTuple(slot);
		fn(slot, arg);
		MemoryContextSwitchTo(old);
	}
	shard_scan_stop(ss);
	*stats = ss->stats;
	MemoryContextDelete(ss->runcxt);
	MemoryContextDelete(ss->rowcxt);
}

/* Add the request counters of from to into (items are counted apart). */
void
scan_add_stats(DdbStats *into, const DdbStats *from)
{
	into->requests += from->requests;
	into->attempts += from->attempts;
	into->retries += from->retries;
	into->throttles += from->throttles;
	into->scanned += from->scanned;
	into->read_units += from->read_units;
	into->write_units += from->write_units;
	into->budget_wait_us += from->budget_wait_us;
}

/*
 * Stop the streams and free what they hold, keeping the group (and its
 * counters) for the next start.
 */
void
shard_scan_reset(ShardScanState *ss)
{
	if (ss->stored)
	{
		tuplestore_end(ss->stored);
		ExecDropSingleTupleTableSlot(ss->store_slot);
		ss->stored = NULL;
		ss->store_slot = NULL;
	}
	if (ss->group)
		ddb_group_reset(ss->group);
	if (ss->fetcher)
		fetch_reset(ss);
	ss->started = false;
}

/* Stop the streams and free what they hold, the group included. */
void
shard_scan_stop(ShardScanState *ss)
{
	shard_scan_reset(ss);
	if (ss->fetcher)
		fetch_stop(ss);
	if (ss->group)
	{
		scan_add_stats(&ss->stats, ddb_group_stats(ss->group));
		ddb_group_free(ss->group);
		ss->group = NULL;
	}
}

/* ReScanForeignScan: start again, with the parameters as they now are. */
void
shard_rescan(ForeignScanState *node)
{
	shard_scan_reset(node->fdw_state);
}

/*
 * Start a batched lookup's scan (COND_BATCH conditions) afresh for the
 * outer rows of lookups: per row, key texts indexed by column, in memory
 * that lasts until the next call.
 */
void
shard_scan_set_lookups(ForeignScanState *node, List *lookups)
{
	ShardScanState *ss = node->fdw_state;

	shard_scan_reset(ss);
	ss->lookups = lookups;
}

/* EndForeignScan */
void
shard_end_scan(ForeignScanState *node)
{
	ShardScanState *ss = node->fdw_state;

	if (ss)
		shard_scan_stop(ss);
}
