/*-------------------------------------------------------------------------
 *
 * modifystate.h
 *		The state of a write through the ModifyTable node, shared by
 *		modify.c (INSERT, COPY, the callbacks), update.c (UPDATE and
 *		DELETE) and direct.c (an UPDATE run by its scan).
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHARD_FDW_MODIFYSTATE_H
#define SHARD_FDW_MODIFYSTATE_H

#include "fdw/fdw.h"

#include "executor/tuptable.h"

/* item_json's shard for a new row: the table's strategy chooses. */
#define SHARD_BY_STRATEGY (-1)

/* The members of a ForeignModify's fdw_private list. */
typedef enum ModifyPrivate
{
	MODIFY_PRIVATE_DO_NOTHING	/* Boolean: ON CONFLICT DO NOTHING */
} ModifyPrivate;

typedef struct ModifyState
{
	ShardTable *t;
	DdbConn    *conn;
	DdbGroup   *group;
	bool		do_nothing;
	bool		pipelined;		/* COPY, insert mode: rows sent without waiting */
	bool		buffered;		/* COPY, upsert mode: rows gathered in batches */
	DynamicPlace dyn;			/* dynamic: where the last row was placed */
	AttrNumber	ctid_attno;		/* UPDATE, DELETE: junk columns */
	AttrNumber *old_attnos;		/* by column index, 0 when none (an UPDATE
								 * run by its scan: the columns themselves) */
	TupleTableSlot *rowslot;	/* UPDATE: a row whose write is sent again */
	int			in_flight;		/* pipelined rows not yet judged */
	char	  **items;			/* buffered: the items of the batch ... */
	char	  **identities;		/* ... their keys (item_identity) ... */
	TupleTableSlot **copies;	/* ... or, dynamic, copies of the rows ... */
	int			nitems;			/* ... and how many there are */
	char	  **recent;			/* pipelined: keys of the last rows sent, */
	int			nrecent;		/* a ring of this many, */
	int			next_recent;	/* the next slot to fill */
	MemoryContext batchcxt;		/* holds the batch's items or recent keys */
	MemoryContext rowcxt;
	int64		written;		/* rows written so far by this statement */
	int64		doubt;			/* rows of failed writes that may have taken
								 * effect (see modify_report_error) */
} ModifyState;

/* Set up the state of a modify on rinfo's relation. */
extern ModifyState *modify_setup(EState *estate, ResultRelInfo *rinfo, bool do_nothing);

/* The JSON text of the row's item, and its keys (see write_item). */
extern char *modify_item_json(ModifyState *ms, TupleTableSlot *slot, long shard,
							  char **pk, char **sk);

/*
 * The key texts of the row's columns that its item key or its shard is
 * made of, indexed by column as route.c takes them.
 */
extern const char **modify_row_key_texts(ModifyState *ms, TupleTableSlot *slot);

/* Wait for every PutItem of the modify and judge them all. */
extern void modify_judge_all(ModifyState *ms);

/* Write the rows COPY gathered (upsert mode) and start a new batch. */
extern void modify_write_buffered(ModifyState *ms);

/*
 * Report the failure of a write of rows rows of the statement; when an
 * attempt of it may have taken effect, the error's context counts them
 * among the rows that may have been written.
 */
pg_noreturn extern void modify_report_error(ModifyState *ms, DdbRequest *req, int rows);

/* Push the error context of a modify; pop it with pop_error_context. */
extern void modify_push_context(ModifyState *ms, ErrorContextCallback *cb);

/*
 * Push the error context of the modify whose result relation is range
 * table entry rti of estate, when the extension modifies it (an UPDATE's
 * or a DELETE's scan of its own table): an error of the scan then says
 * what the statement wrote before it.  Returns whether it pushed one.
 */
extern bool modify_push_context_of(EState *estate, Index rti, ErrorContextCallback *cb);

/*
 * The write of one row of an UPDATE over its item, in flight (update.c):
 * an UpdateItem (or several, one after the other, for a wide row) when
 * the key stays, a TransactWriteItems that moves the item when it
 * changes, followed to where shard_fdw_reshard moved the item meanwhile.
 * Its requests are in ms->group, owned by it; update_judge judges each as
 * it finishes, until the row's verdict is in.
 */
typedef struct UpdateRow UpdateRow;

typedef enum UpdateVerdict
{
	UPDATE_PENDING,				/* its next request is sent */
	UPDATE_WRITTEN,				/* counted in ms->written */
	UPDATE_GONE,				/* its item was gone: the row is not updated */
	UPDATE_REFUSED				/* failed: update_refused reports why */
} UpdateVerdict;

extern UpdateRow *update_start(ModifyState *ms, TupleTableSlot *old, ItemPointer tid,
							   TupleTableSlot *slot, MemoryContext cxt);
extern UpdateVerdict update_judge(ModifyState *ms, DdbRequest *req, UpdateRow **row);
pg_noreturn extern void update_refused(ModifyState *ms, UpdateRow *row);
extern void update_row_store(UpdateRow *row, TupleTableSlot *slot);
extern void update_row_free(UpdateRow *row);

#endif							/* SHARD_FDW_MODIFYSTATE_H */
