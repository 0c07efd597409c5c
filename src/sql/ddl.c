/*-------------------------------------------------------------------------
 *
 * ddl.c
 *		The extension's DDL event triggers: what ALTER FOREIGN TABLE may not
 *		change, checked at its start (shard_fdw_check_alter); and a foreign
 *		table's keys and secondary indexes learnt or checked against
 *		DynamoDB, then its options checked, then its TTL attribute learnt,
 *		at the end of CREATE and ALTER FOREIGN TABLE (shard_fdw_check_table).
 *		ddl_record_indexes records the indexes for shard_fdw_refresh_indexes
 *		(functions.c) too.
 *
 * A foreign table declared without partition_key gets its key attribute
 * names from DescribeTable, recorded as its partition_key and sort_key
 * options.  Keys that are declared are checked against DescribeTable: a
 * table whose keys DynamoDB does not have is refused, naming both.  The
 * same DescribeTable gives a foreign table of the DynamoDB table itself
 * (not of one of its indexes) the table's secondary indexes, recorded as
 * its option secondary_indexes.  A table declared without ttl_attribute
 * gets the TTL attribute DescribeTimeToLive names, when TTL is enabled,
 * recorded as that option.  When DynamoDB cannot be asked (unreachable, no
 * credentials yet, an action denied), the declaration stands, with a
 * warning, and so do the indexes recorded before; when the DynamoDB table
 * does not exist yet, with nothing to check, silently.  Everything after
 * the declaration (planning, EXPLAIN, every read and write, the errors
 * they raise) reads the catalogs only.
 *
 * With check_function_bodies off, as the scripts of pg_dump and pg_restore
 * set it, DynamoDB is not asked at all: a restore recreates the
 * declarations as they were dumped, on a host that may not reach DynamoDB
 * yet, without a request; the checks that read the catalogs only still run.
 *
 *-------------------------------------------------------------------------
 */
#include "sql/sql.h"

#include "access/xact.h"
#include "catalog/namespace.h"
#include "commands/event_trigger.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "parser/parse_type.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/resowner.h"

PG_FUNCTION_INFO_V1(shard_fdw_check_alter);
PG_FUNCTION_INFO_V1(shard_fdw_check_table);

/*
 * What DynamoDB said is being recorded: the ALTER that records it checks
 * nothing more.
 */
static bool recording = false;

/*
 * Refuse renaming column name of t when that would change what it reads:
 * an option names it (the option would name a column that no longer
 * exists), or it has no column option "attribute", so that its attribute
 * is its name and the items already written would no longer be read.
 */
static void
check_rename_column(ShardTable *t, const char *name)
{
	ShardColumn *col = shard_find_column(t, name);
	const char *option;
	ListCell   *lc;

	if (col == NULL)
		return;
	option = shard_column_option(t, col - t->columns);
	if (option != NULL && strcmp(option, "partition_key") != 0 &&
		strcmp(option, "sort_key") != 0)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot rename column \"%s\" of foreign table \"%s\": option \"%s\" names it",
						name, t->relname, option),
				 errhint("Recreate the foreign table with the new column name in its options; the stored items keep their keys.")));
	foreach(lc, GetForeignColumnOptions(t->relid, col->attnum))
		if (strcmp(lfirst_node(DefElem, lc)->defname, "attribute") == 0)
			return;
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("cannot rename column \"%s\" of foreign table \"%s\": its values are stored under attribute \"%s\"",
					name, t->relname, col->attribute),
			 errhint("Give the column the option attribute '%s' first; then it keeps its attribute under any name.",
					 col->attribute)));
}

/*
 * Refuse changing the type of column name of t to type_name when the
 * column makes the item key or chooses the shard and DynamoDB would store
 * the new type otherwise (a number as a string, say): the items already written
 * would no longer be found.  A column option "ddb_type" fixes the stored
 * type; shard_fdw_check_table checks that the new type fits it.
 */
static void
check_column_type(ShardTable *t, const char *name, TypeName *type_name)
{
	ShardColumn *col = shard_find_column(t, name);
	const char *option;
	Oid			typid;
	int32		typmod;
	Oid			elem;
	DdbType		stored;

	if (col == NULL || col->explicit_type ||
		(option = shard_column_option(t, col - t->columns)) == NULL)
		return;
	typenameTypeIdAndMod(NULL, type_name, &typid, &typmod);
	stored = ddb_type_for_column(typid, &elem);
	if (stored != col->ddb_type)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_INVALID_DATA_TYPE),
				 errmsg("cannot change the type of column \"%s\" of foreign table \"%s\" from %s to %s",
						name, t->relname, format_type_be(col->typid), format_type_be(typid)),
				 errdetail("Option \"%s\" uses the column, whose values are stored as DynamoDB type %s, and would be as %s: the items already written could no longer be found.",
						   option, ddb_type_name(col->ddb_type), ddb_type_name(stored))));
}

/*
 * shard_fdw_check_alter(): the event trigger run at the start of ALTER
 * [FOREIGN] TABLE on a shard_fdw foreign table.  It refuses what the end
 * of the command can no longer tell apart from a sound table: renaming a
 * column that an option names, and changing how the values of a key or
 * shard_by column are stored.  shard_fdw_check_table checks the rest when
 * the command is done.
 */
Datum
shard_fdw_check_alter(PG_FUNCTION_ARGS)
{
	EventTriggerData *trigdata;
	Node	   *stmt;
	RangeVar   *relation;
	Oid			relid;
	ShardTable *t;
	ListCell   *lc;

	if (!CALLED_AS_EVENT_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_EVENT_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("shard_fdw_check_alter() must be called as an event trigger")));
	trigdata = (EventTriggerData *) fcinfo->context;
	stmt = trigdata->parsetree;
	if (IsA(stmt, RenameStmt) && ((RenameStmt *) stmt)->renameType == OBJECT_COLUMN)
		relation = ((RenameStmt *) stmt)->relation;
	else if (IsA(stmt, AlterTableStmt))
		relation = ((AlterTableStmt *) stmt)->relation;
	else
		PG_RETURN_VOID();
	relid = RangeVarGetRelid(relation, NoLock, true);
	if (!OidIsValid(relid) || !shard_is_foreign_table(relid))
		PG_RETURN_VOID();

	if (IsA(stmt, RenameStmt))
	{
		check_rename_column(shard_get_table(relid), ((RenameStmt *) stmt)->subname);
		PG_RETURN_VOID();
	}
	t = NULL;
	foreach(lc, ((AlterTableStmt *) stmt)->cmds)
	{
		AlterTableCmd *cmd = lfirst_node(AlterTableCmd, lc);

		if (cmd->subtype == AT_GenericOptions)
			layout_record(relid, cmd);
		if (cmd->subtype != AT_AlterColumnType)
			continue;
		if (t == NULL)
			t = shard_get_table(relid);
		check_column_type(t, cmd->name, castNode(ColumnDef, cmd->def)->typeName);
	}
	PG_RETURN_VOID();
}

/* Error context: which table's keys were being learnt. */
static void
learn_keys_context(void *arg)
{
	Oid			relid = *(Oid *) arg;

	errcontext("learning the key attributes of foreign table \"%s\" from DynamoDB",
			   get_rel_name(relid));
}

/*
 * Record what DynamoDB said of foreign table relid: run ALTER FOREIGN
 * TABLE relid OPTIONS (changes), changes being the text of the options
 * list, without the checks its event trigger would run (recording).
 */
static void
record_options(Oid relid, const char *changes)
{
	StringInfoData sql;

	initStringInfo(&sql);
	appendStringInfo(&sql, "ALTER FOREIGN TABLE %s OPTIONS (%s)",
					 quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)),
												get_rel_name(relid)),
					 changes);
	SPI_connect();
	recording = true;
	PG_TRY();
	{
		if (SPI_execute(sql.data, false, 0) != SPI_OK_UTILITY)
			elog(ERROR, "shard_fdw: could not record the options of foreign table \"%s\"",
				 get_rel_name(relid));
	}
	PG_FINALLY();
	{
		recording = false;
	}
	PG_END_TRY();
	SPI_finish();
}

/*
 * The item of an OPTIONS list that makes option secondary_indexes of a
 * table whose options are options indexes (NULL: none), or NULL when it
 * already is.
 */
static char *
indexes_change(List *options, const char *indexes)
{
	const char *recorded = shard_option_value(options, "secondary_indexes");

	if (recorded == NULL ? indexes == NULL : indexes != NULL && strcmp(recorded, indexes) == 0)
		return NULL;
	if (indexes == NULL)
		return "DROP secondary_indexes";
	return psprintf("%s secondary_indexes %s", recorded ? "SET" : "ADD",
					quote_literal_cstr(indexes));
}

/*
 * Record indexes (a value of option secondary_indexes, NULL for none) as
 * the secondary indexes of foreign table relid, whose options are
 * options, unless it records them already.
 */
void
ddl_record_indexes(Oid relid, List *options, const char *indexes)
{
	char	   *change = indexes_change(options, indexes);

	if (change)
		record_options(relid, change);
}

/*
 * Record the key attributes of foreign table relid (DynamoDB table
 * "table", read through index when not NULL), which has no partition_key,
 * as its partition_key and sort_key options, learnt from DynamoDB, and a
 * table's secondary indexes.  A sort_key the table already has is kept.
 */
static void
learn_keys(Oid relid, ForeignTable *ft, const char *table, const char *index)
{
	const char *pk;
	const char *sk;
	char	   *indexes;
	char	   *why;
	char	   *change;
	StringInfoData changes;
	ErrorContextCallback cb;

	push_error_context(&cb, learn_keys_context, &relid);
	describe_keys(ft->serverid, table, index, true, &pk, &sk, &indexes, &why);
	pop_error_context(&cb);
	initStringInfo(&changes);
	appendStringInfo(&changes, "ADD partition_key %s", quote_literal_cstr(pk));
	if (sk && shard_option_value(ft->options, "sort_key") == NULL)
		appendStringInfo(&changes, ", ADD sort_key %s", quote_literal_cstr(sk));
	if (index == NULL && (change = indexes_change(ft->options, indexes)) != NULL)
		appendStringInfo(&changes, ", %s", change);
	record_options(relid, changes.data);
}

/* "partition key "p" and sort key "s"", or "... and no sort key". */
static char *
keys_text(const char *pk, const char *sk)
{
	return sk ? psprintf("partition key \"%s\" and sort key \"%s\"", pk, sk) :
		psprintf("partition key \"%s\" and no sort key", pk);
}

/*
 * Ask DynamoDB question(ft, arg, why) about foreign table ft in a
 * subtransaction of its own, so that a declaration outlives a DynamoDB it
 * cannot reach: its answer (true, the answer in arg), or false with why in
 * *why (NULL when the table does not exist), an error the asking raised
 * turned into that text.
 */
static bool
ask(bool (*question) (ForeignTable *ft, void *arg, char **why), ForeignTable *ft,
	void *arg, char **why)
{
	MemoryContext cxt = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	volatile bool known = false;

	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(cxt);
	PG_TRY();
	{
		known = question(ft, arg, why);
		ReleaseCurrentSubTransaction();
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(cxt);
		edata = CopyErrorData();
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
		*why = edata->message;
	}
	PG_END_TRY();
	MemoryContextSwitchTo(cxt);
	CurrentResourceOwner = owner;
	return known;
}

/* The keys of a DynamoDB table or index, and a table's indexes, asked for by ask(). */
typedef struct KeysAsked
{
	const char *table;
	const char *index;			/* NULL: the table's own */
	const char *pk;				/* the answer */
	const char *sk;
	char	   *indexes;
} KeysAsked;

/* ask()'s question for the keys (describe_keys). */
static bool
ask_keys(ForeignTable *ft, void *arg, char **why)
{
	KeysAsked  *k = arg;

	return describe_keys(ft->serverid, k->table, k->index, false,
						 &k->pk, &k->sk, &k->indexes, why);
}

/* The TTL attribute of a DynamoDB table, asked for by ask(). */
typedef struct TtlAsked
{
	const char *table;
	const char *attribute;		/* the answer; NULL: TTL is off */
} TtlAsked;

/* ask()'s question for the TTL attribute (describe_ttl). */
static bool
ask_ttl(ForeignTable *ft, void *arg, char **why)
{
	TtlAsked   *q = arg;

	return describe_ttl(ft->serverid, q->table, &q->attribute, why);
}

/*
 * Check the keys foreign table relid declares (partition_key, and
 * sort_key or its absence) against those of DynamoDB table "table" (read
 * through index when not NULL): refused when they differ, with a warning
 * when DynamoDB could not say.  A table's secondary indexes are recorded
 * as DynamoDB gave them.  True when DynamoDB described the table.
 */
static bool
check_keys(Oid relid, ForeignTable *ft, const char *table, const char *index)
{
	static const char denied[] = "AccessDeniedException:";
	const char *declared_pk = shard_option_value(ft->options, "partition_key");
	const char *declared_sk = shard_option_value(ft->options, "sort_key");
	KeysAsked	k = {.table = table, .index = index};
	char	   *why;

	if (!ask(ask_keys, ft, &k, &why))
	{
		if (why)
			ereport(WARNING,
					(errcode(ERRCODE_FDW_UNABLE_TO_ESTABLISH_CONNECTION),
					 errmsg("could not check the keys of foreign table \"%s\" against DynamoDB",
							get_rel_name(relid)),
					 errdetail("%s", why),
					 strncmp(why, denied, sizeof(denied) - 1) == 0 ?
					 errhint("The declaration stands; allow IAM action dynamodb:DescribeTable on the table for an ALTER FOREIGN TABLE to check them again.") :
					 errhint("The declaration stands; an ALTER FOREIGN TABLE checks them again.")));
		return false;
	}
	if (strcmp(declared_pk, k.pk) == 0 &&
		(declared_sk == NULL ? k.sk == NULL : k.sk != NULL && strcmp(declared_sk, k.sk) == 0))
	{
		if (index == NULL)
			ddl_record_indexes(relid, ft->options, k.indexes);
		return true;
	}
	ereport(ERROR,
			(errcode(ERRCODE_FDW_INVALID_COLUMN_NAME),
			 errmsg("foreign table \"%s\" declares keys that DynamoDB %s \"%s\" does not have",
					get_rel_name(relid), index ? "index" : "table", index ? index : table),
			 errdetail("The foreign table declares %s; %s \"%s\" has %s.",
					   keys_text(declared_pk, declared_sk), index ? "index" : "table",
					   index ? index : table, keys_text(k.pk, k.sk)),
			 errhint("Set the options partition_key and sort_key to the %s's keys, or leave them out to have them learnt.",
					 index ? "index" : "table")));
}

/*
 * Record the TTL attribute of DynamoDB table "table", which foreign table
 * relid reads, as its option ttl_attribute, when DynamoDB has one enabled;
 * with a warning when DynamoDB could not say.
 */
static void
learn_ttl(Oid relid, ForeignTable *ft, const char *table)
{
	static const char denied[] = "AccessDeniedException:";
	TtlAsked	q = {.table = table};
	char	   *why;

	if (!ask(ask_ttl, ft, &q, &why))
	{
		if (why)
			ereport(WARNING,
					(errcode(ERRCODE_FDW_UNABLE_TO_ESTABLISH_CONNECTION),
					 errmsg("could not learn the TTL attribute of foreign table \"%s\" from DynamoDB",
							get_rel_name(relid)),
					 errdetail("%s", why),
					 strncmp(why, denied, sizeof(denied) - 1) == 0 ?
					 errhint("Reads keep the items whose time to live has passed; allow IAM action dynamodb:DescribeTimeToLive on the table, or give the option ttl_attribute.") :
					 errhint("Reads keep the items whose time to live has passed; an ALTER FOREIGN TABLE asks again, or give the option ttl_attribute.")));
		return;
	}
	if (q.attribute)
		record_options(relid, psprintf("ADD ttl_attribute %s", quote_literal_cstr(q.attribute)));
}

/*
 * shard_fdw_check_table(regclass): learn the key attributes of a foreign
 * table declared without them (learn_keys), and load its options, which
 * checks what the validator cannot see (the columns that templates,
 * shard_by and column options refer to); then check the keys it declares
 * (check_keys); last, learn its TTL attribute when it has no ttl_attribute
 * (learn_ttl).  The extension's event trigger calls it at the end of CREATE
 * and ALTER FOREIGN TABLE, so that a bad table is rejected when it is
 * declared, not when it is first read.  With check_function_bodies off
 * (a restore), keys and TTL are neither learnt nor checked: a table without
 * partition_key stays so until an ALTER learns it.
 */
Datum
shard_fdw_check_table(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	ForeignTable *ft;
	const char *table;
	const char *index;
	bool		described;

	if (!shard_is_foreign_table(relid) || recording)
		PG_RETURN_VOID();
	ft = GetForeignTable(relid);
	table = shard_option_value(ft->options, "table");
	index = shard_option_value(ft->options, "index");
	if (table && shard_option_value(ft->options, "partition_key") == NULL)
	{
		if (!check_function_bodies)
			PG_RETURN_VOID();
		learn_keys(relid, ft, table, index);
		(void) shard_get_table(relid);
		described = true;
	}
	else
	{
		/* options that cannot hold are refused before DynamoDB is asked */
		(void) shard_get_table(relid);
		described = table && check_function_bodies &&
			check_keys(relid, ft, table, index);
	}
	/* a DynamoDB that could not describe the table is not asked again */
	ft = GetForeignTable(relid);
	if (described && shard_option_value(ft->options, "ttl_attribute") == NULL)
		learn_ttl(relid, ft, table);
	PG_RETURN_VOID();
}
