/*-------------------------------------------------------------------------
 *
 * unit.h
 *		A minimal harness for the unit tests of the plain-C modules.
 *
 * Each test/unit/test_NAME.c defines suite_NAME(void), a function that
 * runs CHECKs; the Makefile lists them in suites.h and main.c runs every
 * one, then prints the closing line "N passed, N failed".  A CHECK that
 * fails prints where and why and counts as failed; the suite goes on.  A
 * new suite is a new file, nothing else.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHARD_FDW_UNIT_H
#define SHARD_FDW_UNIT_H

#include <setjmp.h>
#include <stdio.h>
#include <string.h>

extern int	unit_passed;
extern int	unit_failed;
extern const char *unit_testdata_dir;	/* the AWS SigV4 test suite */

/*
 * From unit_alloc_start on, sfdw_alloc records what it gives out and, after
 * budget more allocations, jumps to jump instead of returning (palloc's
 * out-of-memory ERROR); unit_alloc_end frees what was recorded, as the end
 * of a memory context would, and stops.
 */
extern void unit_alloc_start(jmp_buf *jump, long budget);
extern void unit_alloc_end(void);

extern void unit_check(int ok, const char *file, int line, const char *what);
extern void unit_check_str(const char *got, const char *want,
						   const char *file, int line, const char *what);

#define CHECK(cond) unit_check((cond) ? 1 : 0, __FILE__, __LINE__, #cond)
#define CHECK_STR(got, want) unit_check_str((got), (want), __FILE__, __LINE__, #got)

/* The number of elements of an array (a table of cases). */
#define lengthof(array) (sizeof(array) / sizeof((array)[0]))

/* The suites, one per test_NAME.c (suites.h is made by the Makefile). */
#define UNIT_SUITE(name) extern void suite_##name(void);
#include "suites.h"
#undef UNIT_SUITE

#endif							/* SHARD_FDW_UNIT_H */
