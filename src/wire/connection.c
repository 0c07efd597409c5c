/*-------------------------------------------------------------------------
 *
 * connection.c
 *		The per-backend cache of DynamoDB connections, one per (server,
 *		user), kept across statements so that libcurl reuses its HTTP
 *		connections; invalidated when the server or a user mapping changes,
 *		and cleaned up at the end of each (sub)transaction.
 *
 * A scan or modify keeps the connection it was handed until it ends, and
 * its requests live in the connection's memory, so a connection handed out
 * in the current transaction is neither closed nor rebuilt before the
 * transaction ends: whatever holds it is gone by then.
 *
 *-------------------------------------------------------------------------
 */
#include "wire/wire.h"

#include "access/xact.h"
#include "catalog/pg_user_mapping.h"
#include "commands/dbcommands.h"
#include "funcapi.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/memutils.h"
#include "utils/syscache.h"

typedef struct ConnKey
{
	Oid			serverid;
	Oid			userid;
} ConnKey;

typedef struct ConnEntry
{
	ConnKey		key;
	DdbConn    *conn;
} ConnEntry;

static HTAB *conn_cache = NULL;

PG_FUNCTION_INFO_V1(shard_fdw_disconnect_all);

/* Free a connection and everything it holds. */
static void
conn_destroy(DdbConn *conn)
{
	if (conn->transport)
		transport_destroy(conn->transport);
	if (conn->creds)
		credentials_destroy(conn->creds);
	MemoryContextDelete(conn->cxt);
}

/*
 * What the transport calls before it signs (transport_create): the
 * connection's credentials (arg) fetched, or their refresh moved on.
 */
static void
prepare_credentials(void *arg, DdbTransport *t)
{
	credentials_ensure(arg, t);
}

/* Load options and credentials into conn and start its transport. */
static void
conn_build(DdbConn *conn)
{
	MemoryContext old;

	conn->cxt = AllocSetContextCreate(CacheMemoryContext, "shard_fdw connection",
									  ALLOCSET_SMALL_SIZES);
	old = MemoryContextSwitchTo(conn->cxt);
	PG_TRY();
	{
		ShardCredSpec *spec = shard_get_cred_spec(conn->serverid, conn->userid);

		conn->server = shard_get_server(conn->serverid);
		awsenv_resolve_server(conn->server, spec->profile);
		conn->creds = credentials_create(conn->server, spec);
		conn->transport = transport_create(conn, prepare_credentials, conn->creds);
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(old);
		MemoryContextDelete(conn->cxt);
		conn->cxt = NULL;
		PG_RE_THROW();
	}
	PG_END_TRY();
	MemoryContextSwitchTo(old);
	conn->invalid = false;
}

/*
 * The connection userid uses for serverid, made on first use; in use until
 * the transaction ends.  One whose options changed is rebuilt when no
 * earlier part of the transaction has it.
 */
DdbConn *
shard_get_connection(Oid serverid, Oid userid)
{
	ConnKey		key;
	ConnEntry  *entry;
	bool		found;

	shard_require_utf8_database();
	shard_connection_init();
	memset(&key, 0, sizeof(key));
	key.serverid = serverid;
	key.userid = userid;
	entry = hash_search(conn_cache, &key, HASH_ENTER, &found);
	if (found && entry->conn->cxt != NULL && entry->conn->invalid &&
		!entry->conn->in_use)
	{
		conn_destroy(entry->conn);
		entry->conn->cxt = NULL;
	}
	if (!found)
	{
		entry->conn = MemoryContextAllocZero(CacheMemoryContext, sizeof(DdbConn));
		entry->conn->serverid = serverid;
		entry->conn->userid = userid;
	}
	if (entry->conn->cxt == NULL)
		conn_build(entry->conn);
	entry->conn->in_use = true;
	return entry->conn;
}

/* Mark every connection for rebuilding; catalog invalidation callback. */
static void
conn_invalidate(Datum arg, int cacheid, uint32 hashvalue)
{
	HASH_SEQ_STATUS scan;
	ConnEntry  *entry;

	hash_seq_init(&scan, conn_cache);
	while ((entry = hash_seq_search(&scan)) != NULL)
		entry->conn->invalid = true;
}

/*
 * At the end of a (sub)transaction, stop and forget every request started
 * in it, which nothing can use any more; a committed subtransaction's
 * requests pass to its parent instead.  At the end of the transaction no
 * connection is in use any more.
 */
static void
conn_end_level(int nest_level, bool committed_sub)
{
	HASH_SEQ_STATUS scan;
	ConnEntry  *entry;

	hash_seq_init(&scan, conn_cache);
	while ((entry = hash_seq_search(&scan)) != NULL)
	{
		if (nest_level == 1)
			entry->conn->in_use = false;
		if (entry->conn->cxt == NULL)
			continue;
		if (committed_sub)
			transport_subcommit(entry->conn->transport, nest_level);
		else
			transport_abort(entry->conn->transport, nest_level);
	}
}

/* Transaction callback. */
static void
conn_xact_callback(XactEvent event, void *arg)
{
	if (event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT ||
		event == XACT_EVENT_COMMIT || event == XACT_EVENT_PARALLEL_COMMIT ||
		event == XACT_EVENT_PREPARE)
		conn_end_level(1, false);
}

/* Subtransaction callback. */
static void
conn_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
					  SubTransactionId parentSubid, void *arg)
{
	if (event == SUBXACT_EVENT_ABORT_SUB)
		conn_end_level(GetCurrentTransactionNestLevel(), false);
	else if (event == SUBXACT_EVENT_COMMIT_SUB)
		conn_end_level(GetCurrentTransactionNestLevel(), true);
}

/* Set up the cache and its callbacks, once per backend. */
void
shard_connection_init(void)
{
	HASHCTL		ctl;

	if (conn_cache != NULL)
		return;
	ctl.keysize = sizeof(ConnKey);
	ctl.entrysize = sizeof(ConnEntry);
	conn_cache = hash_create("shard_fdw connections", 8, &ctl,
							 HASH_ELEM | HASH_BLOBS);
	RegisterXactCallback(conn_xact_callback, NULL);
	RegisterSubXactCallback(conn_subxact_callback, NULL);
	CacheRegisterSyscacheCallback(FOREIGNSERVEROID, conn_invalidate, (Datum) 0);
	CacheRegisterSyscacheCallback(USERMAPPINGOID, conn_invalidate, (Datum) 0);
}

/*
 * shard_fdw_disconnect_all(): close every cached connection the current
 * transaction has not used; returns whether any was closed.
 */
Datum
shard_fdw_disconnect_all(PG_FUNCTION_ARGS)
{
	HASH_SEQ_STATUS scan;
	ConnEntry  *entry;
	bool		closed = false;

	shard_connection_init();
	hash_seq_init(&scan, conn_cache);
	while ((entry = hash_seq_search(&scan)) != NULL)
	{
		if (entry->conn->cxt == NULL || entry->conn->in_use)
			continue;
		conn_destroy(entry->conn);
		entry->conn->cxt = NULL;
		closed = true;
	}
	PG_RETURN_BOOL(closed);
}
