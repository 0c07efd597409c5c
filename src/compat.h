/*-------------------------------------------------------------------------
 *
 * compat.h
 *		Every difference between the PostgreSQL versions shard_fdw builds
 *		against (13 to 18; 15, 17 and 18 are tested, test/versions.sh) lives
 *		here.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHARD_FDW_COMPAT_H
#define SHARD_FDW_COMPAT_H

#include "postgres.h"

#if PG_VERSION_NUM < 130000
#error "shard_fdw needs PostgreSQL 13 or later"
#endif

/*
 * PostgreSQL 18 replaced pg_attribute_noreturn(), written after a
 * declaration, by pg_noreturn, written before it; GCC and clang take the
 * older attribute there too.
 */
#if PG_VERSION_NUM < 180000
#define pg_noreturn pg_attribute_noreturn()
#endif

/*
 * PostgreSQL 18 moved ExplainState and the ExplainProperty functions out of
 * commands/explain.h into headers of their own.
 */
#if PG_VERSION_NUM >= 180000
#include "commands/explain_format.h"
#include "commands/explain_state.h"
#endif

/*
 * PostgreSQL 15 added shmem_request_hook, where a library loaded by
 * shared_preload_libraries asks for shared memory and locks; before it,
 * they were asked for in _PG_init itself.
 */
#if PG_VERSION_NUM >= 150000
#define SHARD_HAVE_SHMEM_REQUEST_HOOK 1
#endif

/*
 * The wait event a backend reports while it waits for DynamoDB: PostgreSQL
 * 17 gives an extension's wait events names of their own (made once per
 * name in shared memory, on first use; *id caches it), before which they
 * are all "Extension".  PostgreSQL 14 moved the wait events out of
 * pgstat.h.
 */
#if PG_VERSION_NUM >= 140000
#include "utils/wait_event.h"
#else
#include "pgstat.h"
#endif
#if PG_VERSION_NUM >= 170000
#define shard_wait_event(id, name) \
	(*(id) != 0 ? *(id) : (*(id) = WaitEventExtensionNew(name)))
#else
#define shard_wait_event(id, name) ((void) (id), (void) (name), (uint32) PG_WAIT_EXTENSION)
#endif

/* PostgreSQL 14 added batch inserts to the FDW API. */
#if PG_VERSION_NUM >= 140000
#define SHARD_HAVE_BATCH_INSERT 1
#endif

/*
 * PostgreSQL 14 gave a ModifyTable the columns each UPDATE assigns, whose
 * new values lead its subplan's targetlist, and a direct modify's scan its
 * ResultRelInfo: an UPDATE can run in its scan.
 */
#if PG_VERSION_NUM >= 140000
#define SHARD_HAVE_DIRECT_UPDATE 1
#endif

/*
 * The user a foreign scan runs as: PostgreSQL 16 moved it from the range
 * table entry to the ForeignScan node.
 */
#if PG_VERSION_NUM >= 160000
#define SHARD_SCAN_USER(fs, rte) ((fs)->checkAsUser)
#else
#define SHARD_SCAN_USER(fs, rte) ((rte)->checkAsUser)
#endif

/*
 * The columns an UPDATE assigns: PostgreSQL 16 moved them from the range
 * table entry to its RTEPermissionInfo.
 */
#if PG_VERSION_NUM >= 160000
#include "parser/parse_relation.h"
#define SHARD_UPDATED_COLS(query, rte) \
	(getRTEPermissionInfo((query)->rteperminfos, (rte))->updatedCols)
#else
#define SHARD_UPDATED_COLS(query, rte) ((rte)->updatedCols)
#endif

/* PostgreSQL 16 replaced the ACL check of each kind of object by one. */
#if PG_VERSION_NUM >= 160000
#define shard_server_aclcheck(serverid, roleid, mode) \
	object_aclcheck(ForeignServerRelationId, (serverid), (roleid), (mode))
#else
#define shard_server_aclcheck(serverid, roleid, mode) \
	pg_foreign_server_aclcheck((serverid), (roleid), (mode))
#endif

/*
 * PostgreSQL 17 added fdw_restrictinfo to create_foreignscan_path, and 18
 * disabled_nodes.
 */
#if PG_VERSION_NUM >= 180000
#define shard_create_foreignscan_path(root, rel, target, rows, startup, total, \
									  pathkeys, outer, outer_plan, private) \
	create_foreignscan_path((root), (rel), (target), (rows), 0, (startup), \
							(total), (pathkeys), (outer), (outer_plan), \
							NIL, (private))
#elif PG_VERSION_NUM >= 170000
#define shard_create_foreignscan_path(root, rel, target, rows, startup, total, \
									  pathkeys, outer, outer_plan, private) \
	create_foreignscan_path((root), (rel), (target), (rows), (startup), \
							(total), (pathkeys), (outer), (outer_plan), \
							NIL, (private))
#else
#define shard_create_foreignscan_path(root, rel, target, rows, startup, total, \
									  pathkeys, outer, outer_plan, private) \
	create_foreignscan_path((root), (rel), (target), (rows), (startup), \
							(total), (pathkeys), (outer), (outer_plan), \
							(private))
#endif

/* The same differences in create_foreign_upper_path. */
#if PG_VERSION_NUM >= 180000
#define shard_create_foreign_upper_path(root, rel, target, rows, startup, total, \
										pathkeys, outer_path, private) \
	create_foreign_upper_path((root), (rel), (target), (rows), 0, (startup), \
							  (total), (pathkeys), (outer_path), NIL, (private))
#elif PG_VERSION_NUM >= 170000
#define shard_create_foreign_upper_path(root, rel, target, rows, startup, total, \
										pathkeys, outer_path, private) \
	create_foreign_upper_path((root), (rel), (target), (rows), (startup), \
							  (total), (pathkeys), (outer_path), NIL, (private))
#else
#define shard_create_foreign_upper_path(root, rel, target, rows, startup, total, \
										pathkeys, outer_path, private) \
	create_foreign_upper_path((root), (rel), (target), (rows), (startup), \
							  (total), (pathkeys), (outer_path), (private))
#endif

/*
 * Whether a path key sorts ascending: PostgreSQL 18 gives its direction as
 * a CompareType instead of a btree strategy number.
 */
#if PG_VERSION_NUM >= 180000
#define shard_pathkey_ascending(pk) ((pk)->pk_cmptype == COMPARE_LT)
#else
#include "access/stratnum.h"
#define shard_pathkey_ascending(pk) ((pk)->pk_strategy == BTLessStrategyNumber)
#endif

/*
 * PostgreSQL 18 no longer names the OID of the "POSIX" collation, which
 * its catalog still pins at 951.
 */
#include "catalog/pg_collation.h"
#ifndef POSIX_COLLATION_OID
#define POSIX_COLLATION_OID 951
#endif

/* PostgreSQL 14 added estimate_num_groups' EstimationInfo. */
#if PG_VERSION_NUM >= 140000
#define shard_estimate_num_groups(root, exprs, rows) \
	estimate_num_groups(root, exprs, rows, NULL, NULL)
#else
#define shard_estimate_num_groups(root, exprs, rows) \
	estimate_num_groups(root, exprs, rows, NULL)
#endif

/*
 * Where the catalogs keep the locale a collation, or the database, sorts
 * by (the file including this includes pg_collation.h, pg_database.h and
 * builtins.h): PostgreSQL 15 made collcollate and datcollate text and gave
 * the database a locale provider; 17 added the builtin provider, whose
 * locale is in colllocale or datlocale and whose "C" and "C.UTF-8" sort by
 * code point.  Only libc's and the builtin provider's locales are read.
 */
#if PG_VERSION_NUM >= 150000
#define SHARD_DATABASE_PROVIDER(tup) (((Form_pg_database) GETSTRUCT(tup))->datlocprovider)
#define SHARD_LOCALE_TEXT(d) TextDatumGetCString(d)
#else
#define SHARD_DATABASE_PROVIDER(tup) COLLPROVIDER_LIBC
#define SHARD_LOCALE_TEXT(d) pstrdup(NameStr(*DatumGetName(d)))
#endif
#if PG_VERSION_NUM >= 170000
#define SHARD_LOCALE_ATTR(cache, tup, is_default, isnull) \
	SysCacheGetAttr((cache), (tup), (is_default) ? Anum_pg_database_datlocale : \
					Anum_pg_collation_colllocale, (isnull))
#define SHARD_BUILTIN_BYTE_ORDER(provider, locale) \
	((provider) == COLLPROVIDER_BUILTIN && \
	 (strcmp((locale), "C") == 0 || strcmp((locale), "C.UTF-8") == 0))
#else
#define SHARD_LOCALE_ATTR(cache, tup, is_default, isnull) (*(isnull) = true, (Datum) 0)
#define SHARD_BUILTIN_BYTE_ORDER(provider, locale) false
#endif

/*
 * Whether clause can be true only where column attnum of relation relid
 * is not NULL (a strict comparison of it, IS NOT NULL, ...):
 * find_nonnullable_vars answers with a list of Vars before PostgreSQL 16,
 * with a multibitmapset of the columns (offset as in a Bitmapset of
 * attnos) by relation since.
 */
#include "access/sysattr.h"
#include "optimizer/clauses.h"
#if PG_VERSION_NUM >= 160000
#include "nodes/multibitmapset.h"
#define shard_clause_needs_column(clause, relid, attnum) \
	mbms_is_member((relid), (attnum) - FirstLowInvalidHeapAttributeNumber, \
				   find_nonnullable_vars(clause))
#else
static inline bool
shard_clause_needs_column(Node *clause, Index relid, AttrNumber attnum)
{
	ListCell   *lc;

	foreach(lc, find_nonnullable_vars(clause))
	{
		Var		   *var = lfirst(lc);

		if (var->varno == (int) relid && var->varattno == attnum)
			return true;
	}
	return false;
}
#endif

/*
 * PostgreSQL 15 added the pg_prng generator, Boolean nodes,
 * MarkGUCPrefixReserved and InitMaterializedSRF; older versions get
 * stand-ins.
 */
#if PG_VERSION_NUM >= 150000
#include "common/pg_prng.h"
#else
#include "funcapi.h"
#include "miscadmin.h"
#include "nodes/value.h"
#include "utils/tuplestore.h"

#define pg_prng_double(state) \
	((double) random() / ((double) MAX_RANDOM_VALUE + 1.0))
#define pg_prng_uint64_range(state, lo, hi) \
	((uint64) (lo) + (uint64) random() % ((uint64) (hi) - (uint64) (lo) + 1))
#define MarkGUCPrefixReserved(prefix) EmitWarningsOnPlaceholders(prefix)
#define makeBoolean(b) makeInteger((b) ? 1 : 0)
#define boolVal(v) (intVal(v) != 0)

/* Set up a function returning a set in materialize mode. */
static inline void
InitMaterializedSRF(FunctionCallInfo fcinfo, int flags)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	MemoryContext old;
	TupleDesc	desc;

	if (rsinfo == NULL || !IsA(rsinfo, ReturnSetInfo) ||
		!(rsinfo->allowedModes & SFRM_Materialize))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("set-valued function called in context that cannot accept a set")));
	old = MemoryContextSwitchTo(rsinfo->econtext->ecxt_per_query_memory);
	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	rsinfo->returnMode = SFRM_Materialize;
	rsinfo->setResult = tuplestore_begin_heap(true, false, work_mem);
	rsinfo->setDesc = desc;
	MemoryContextSwitchTo(old);
}
#endif

#endif							/* SHARD_FDW_COMPAT_H */
