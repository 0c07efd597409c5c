/*-------------------------------------------------------------------------
 *
 * analyze.c
 *		ANALYZE of a foreign table: a bounded sample of its items, read by
 *		parallel Scan a few segments at a time, and the number of items.
 *
 * The table is cut into TotalSegments segments of about one page (1 MB)
 * each, going by DescribeTable's TableSizeBytes.  Segments picked at
 * random are read whole, max_concurrency at a time, until the items read
 * reach SAMPLE_READ_FACTOR times the rows PostgreSQL asks for, or every
 * segment is read.  The rows are sampled from the items read (reservoir
 * sampling), and PostgreSQL computes the columns' statistics from them.
 * The table's row count is the items read when every segment was read;
 * otherwise DescribeTable's ItemCount when it agrees with the sample
 * (within a factor of two of the items read scaled by the fraction of
 * segments read), else that scaled figure.  Its size in pages
 * (relpages) is TableSizeBytes in blocks of BLCKSZ, so that the planner
 * knows the size of an item as DynamoDB counts it, and estimates the
 * read units of a read (plan.c).
 *
 *-------------------------------------------------------------------------
 */
#include "fdw/fdw.h"

#include <math.h>

#include "access/htup_details.h"
#include "executor/tuptable.h"
#include "utils/rel.h"


/* The items read for a sample: this many times the rows sampled. */
#define SAMPLE_READ_FACTOR 4

/* The bytes of one segment: about one page of a Scan. */
#define SEGMENT_BYTES (1024.0 * 1024.0)

/* DynamoDB's largest TotalSegments. */
#define MAX_TOTAL_SEGMENTS 1000000

/* The segments of a table whose size DescribeTable does not give. */
#define DEFAULT_SEGMENTS 64

/*
 * What DescribeTable said of the table being analyzed: AnalyzeForeignTable
 * asks it for the table's pages, before the sample, which then uses it.
 */
static struct
{
	Oid			relid;
	double		items;
	double		bytes;
}			described;

/* The reservoir of sampled rows. */
typedef struct Sample
{
	HeapTuple  *rows;
	int			targrows;
	int			nrows;			/* rows in the reservoir */
	double		seen;			/* items read */
	MemoryContext cxt;			/* where the rows live */
} Sample;

/* ShardRowFn: offer one row to the reservoir (algorithm R). */
static void
sample_row(TupleTableSlot *slot, void *arg)
{
	Sample	   *sample = arg;
	int			pos;
	MemoryContext old;

	if (sample->nrows < sample->targrows)
		pos = sample->nrows++;
	else if (pg_prng_double(&pg_global_prng_state) * (sample->seen + 1) < sample->targrows)
	{
		pos = (int) pg_prng_uint64_range(&pg_global_prng_state, 0, sample->targrows - 1);
		heap_freetuple(sample->rows[pos]);
	}
	else
		pos = -1;
	sample->seen++;
	if (pos < 0)
		return;
	old = MemoryContextSwitchTo(sample->cxt);
	sample->rows[pos] = heap_form_tuple(slot->tts_tupleDescriptor,
										slot->tts_values, slot->tts_isnull);
	MemoryContextSwitchTo(old);
}

/*
 * AcquireSampleRowsFunc: sample up to targrows rows of the foreign table
 * into rows; *totalrows gets the table's estimated row count.
 */
static int
acquire_sample(Relation rel, int elevel, HeapTuple *rows, int targrows,
			   double *totalrows, double *totaldeadrows)
{
	ShardTable *t = shard_get_table(RelationGetRelid(rel));
	int			wave = shard_get_server(GetForeignTable(t->relid)->serverid)->max_concurrency;
	double		items;
	double		bytes;
	int			total;
	int		   *order;
	int			read = 0;
	Sample		sample = {0};
	TupleTableSlot *slot = MakeSingleTupleTableSlot(RelationGetDescr(rel), &TTSOpsVirtual);
	DdbStats	sum = {0};

	if (described.relid == t->relid)
	{
		items = described.items;
		bytes = described.bytes;
		described.relid = InvalidOid;
	}
	else
		shard_describe_size(t, &items, &bytes);
	if (bytes > 0)
		total = (int) Min(ceil(bytes / SEGMENT_BYTES), MAX_TOTAL_SEGMENTS);
	else
		total = DEFAULT_SEGMENTS;
	total = Max(total, wave);

	/* the segments in a random order (Fisher-Yates, as far as needed) */
	order = palloc(sizeof(int) * total);
	for (int i = 0; i < total; i++)
		order[i] = i;
	sample.rows = rows;
	sample.targrows = targrows;
	sample.cxt = CurrentMemoryContext;
	while (read < total && sample.seen < (double) SAMPLE_READ_FACTOR * targrows)
	{
		int			n = Min(wave, total - read);
		DdbStats	stats;

		for (int i = read; i < read + n; i++)
		{
			int			j = (int) pg_prng_uint64_range(&pg_global_prng_state, i, total - 1);
			int			tmp = order[i];

			order[i] = order[j];
			order[j] = tmp;
		}
		shard_scan_segments(t->relid, order + read, n, total, slot, sample_row, &sample,
							&stats);
		sum.requests += stats.requests;
		read += n;
	}
	ExecDropSingleTupleTableSlot(slot);

	if (read == total)
		*totalrows = sample.seen;
	else
	{
		double		scaled = sample.seen * total / read;

		*totalrows = items >= sample.seen && items <= 2 * scaled && items >= scaled / 2 ?
			items : scaled;
	}
	*totaldeadrows = 0;
	ereport(elevel,
			(errmsg("\"%s\": read %d of %d segments (%lld requests), %.0f items; sampled %d rows, estimated %.0f rows",
					RelationGetRelationName(rel), read, total, (long long) sum.requests,
					sample.seen, sample.nrows, *totalrows)));
	return sample.nrows;
}

/*
 * AnalyzeForeignTable: sample by acquire_sample; the table's pages are
 * its TableSizeBytes in blocks (one at least: DynamoDB may not know it yet).
 */
bool
shard_analyze(Relation relation, AcquireSampleRowsFunc *func, BlockNumber *totalpages)
{
	ShardTable *t = shard_get_table(RelationGetRelid(relation));

	shard_describe_size(t, &described.items, &described.bytes);
	described.relid = t->relid;
	*func = acquire_sample;
	*totalpages = (BlockNumber) Max(1.0, Min(ceil(described.bytes / BLCKSZ),
											 (double) MaxBlockNumber));
	return true;
}
