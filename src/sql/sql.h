/*-------------------------------------------------------------------------
 *
 * sql.h
 *		The sql layer: what PostgreSQL calls by name.  The FDW's handler and
 *		validator (shard_fdw.c), the SQL functions (functions.c), IMPORT
 *		FOREIGN SCHEMA (import.c), resharding (reshard.c) and the DDL event
 *		triggers (ddl.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHARD_FDW_SQL_H
#define SHARD_FDW_SQL_H

#include "fdw/fdw.h"

/* ---------------------------------------------------------------------
 * in import.c
 * ---------------------------------------------------------------------
 */
extern List *shard_import_schema(ImportForeignSchemaStmt *stmt, Oid serverid);

/* ---------------------------------------------------------------------
 * in ddl.c
 * ---------------------------------------------------------------------
 */
extern void ddl_record_indexes(Oid relid, List *options, const char *indexes);

#endif							/* SHARD_FDW_SQL_H */
