/*-------------------------------------------------------------------------
 *
 * budget.c
 *		Capacity budgets: what a statement may consume of a table's
 *		capacity.  A pace, max_read_units_per_second and
 *		max_write_units_per_second, that its requests keep to, and a cap,
 *		max_read_units_per_statement and max_write_units_per_statement,
 *		past which it stops (the table's options, or its server's).
 *
 * A budget is one per table and kind (reads, writes), shared by every
 * request of the statement on that table and begun anew with each
 * statement; every table's requests have one, paced or capped or not, and
 * the shared counters of shard_fdw_stat (stat.c) know the table by it.
 *
 * The pace is a token bucket.  It starts empty and fills at the budget's
 * rate.  A request starts only when the bucket is not in debt, and
 * reserves what requests of its kind have cost so far (one unit before any
 * answered); its answer's ConsumedCapacity then replaces the reservation.
 * An answer is handed to the scan only once the bucket is out of debt
 * again, so that the statement never ends ahead of its budget: a statement
 * that consumed C units takes at least C / rate seconds.
 *
 * The cap is held against what the answers say was consumed: DynamoDB
 * charges a request before its answer says how much, so once the answers
 * have taken the statement past its cap it sends no further request
 * (budget_past_cap), and it stops with an error the next time it would
 * wait (budget_check_cap).  The answer that went past is handed out
 * first, so that a write counts the rows it wrote; requests in flight
 * then add what they cost.  transport.c applies both; the waiting
 * happens there, interruptibly.
 *
 *-------------------------------------------------------------------------
 */
#include "wire/wire.h"

#include <math.h>

#include "access/xact.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"

typedef struct BudgetKey
{
	Oid			relid;
	bool		write;
} BudgetKey;

struct Budget
{
	BudgetKey	key;
	char		relname[NAMEDATALEN];	/* the table's name, for the cap's error */
	double		rate;			/* units per second; 0: not paced */
	int			cap;			/* units per statement; 0: no cap */
	double		tokens;			/* may be negative: debt */
	TimestampTz filled_at;		/* when tokens were last brought up to date */
	TimestampTz statement;		/* the statement start it belongs to */
	double		spent;			/* units consumed by answered requests */
	int64		answered;		/* requests answered */
};

static HTAB *budgets = NULL;

/*
 * The budget of table t for reads or writes in the current statement.
 * Lives for the backend; begun anew (empty) when a new statement first
 * asks for it.
 */
Budget *
budget_for(ShardTable *t, bool write)
{
	int			rate = write ? t->max_write_units : t->max_read_units;
	int			cap = write ? t->write_units_cap : t->read_units_cap;
	BudgetKey	key;
	Budget	   *b;
	bool		found;
	TimestampTz statement = GetCurrentStatementStartTimestamp();

	if (budgets == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(BudgetKey);
		ctl.entrysize = sizeof(Budget);
		ctl.hcxt = TopMemoryContext;
		budgets = hash_create("shard_fdw budgets", 16, &ctl,
							  HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}
	memset(&key, 0, sizeof(key));
	key.relid = t->relid;
	key.write = write;
	b = hash_search(budgets, &key, HASH_ENTER, &found);
	if (!found || b->statement != statement || b->rate != rate || b->cap != cap)
	{
		strlcpy(b->relname, t->relname, sizeof(b->relname));
		b->rate = rate;
		b->cap = cap;
		b->tokens = 0;
		b->filled_at = GetCurrentTimestamp();
		b->statement = statement;
		b->spent = 0;
		b->answered = 0;
	}
	return b;
}

/* Bring the bucket's tokens up to now (it holds at most one second's). */
static void
budget_fill(Budget *b, TimestampTz now)
{
	if (now > b->filled_at)
	{
		b->tokens = Min(b->rate, b->tokens + b->rate * (double) (now - b->filled_at) / 1e6);
		b->filled_at = now;
	}
}

/*
 * Microseconds until the bucket is out of debt (0 when it is not in debt
 * now).
 */
long
budget_delay_us(Budget *b)
{
	if (b->rate <= 0)
		return 0;
	budget_fill(b, GetCurrentTimestamp());
	if (b->tokens >= 0)
		return 0;
	return (long) ceil(-b->tokens / b->rate * 1e6);
}

/*
 * Reserve, for a request about to start, what requests have cost so far
 * on average (one unit before any answered); returns the reservation.
 */
double
budget_reserve(Budget *b)
{
	double		units = b->answered > 0 ? b->spent / b->answered : 1.0;

	b->tokens -= units;
	return units;
}

/*
 * Settle a request's reservation with the capacity its answer says it
 * consumed (a failed request consumed none that is known).
 */
void
budget_settle(Budget *b, double reserved, double consumed, bool answered)
{
	b->tokens += reserved - consumed;
	if (answered)
	{
		b->spent += consumed;
		b->answered++;
	}
}

/* Whether the budget paces its requests (it has a rate). */
bool
budget_paces(Budget *b)
{
	return b->rate > 0;
}

/* The foreign table the budget is of. */
Oid
budget_relid(Budget *b)
{
	return b->key.relid;
}

/* Whether the statement's answers consumed more than the budget's cap. */
bool
budget_past_cap(Budget *b)
{
	return b->cap > 0 && b->spent > b->cap;
}

/*
 * Stop the statement when its answers have consumed more than the cap of
 * the budget: the error names the table, the option and what was consumed.
 */
void
budget_check_cap(Budget *b)
{
	const char *kind = b->key.write ? "write" : "read";

	if (!budget_past_cap(b))
		return;
	ereport(ERROR,
			(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
			 errmsg("foreign table \"%s\" consumed %.1f %s units in this statement, past its max_%s_units_per_statement of %d",
					b->relname, b->spent, kind, kind, b->cap),
			 errdetail("No request is sent once a statement's answers have consumed more than its cap; those in flight then may have consumed more."),
			 errhint("Raise max_%s_units_per_statement on the foreign table or its server, or make the statement %s less.",
					 kind, kind)));
}
