/*-------------------------------------------------------------------------
 *
 * compat.h
 *		Every difference between the PostgreSQL versions shard_fdw builds
 *		against (13 to 17; 15 is the one tested) lives here.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHARD_FDW_COMPAT_H
#define SHARD_FDW_COMPAT_H

#include "postgres.h"

#if PG_VERSION_NUM < 130000
#error "shard_fdw needs PostgreSQL 13 or later"
#endif

/* PostgreSQL 14 added batch inserts to the FDW API. */
#if PG_VERSION_NUM >= 140000
#define SHARD_HAVE_BATCH_INSERT 1
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

/* PostgreSQL 17 added fdw_restrictinfo to create_foreignscan_path. */
#if PG_VERSION_NUM >= 170000
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

#endif							/* SHARD_FDW_COMPAT_H */
