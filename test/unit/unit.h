/*-------------------------------------------------------------------------
 *
 * unit.h
 *		A minimal harness for the unit tests of the plain-C modules.
 *
 * Each suite is a function that runs CHECKs; main.c runs every suite and
 * prints the closing line "N passed, N failed".  A CHECK that fails prints
 * where and why and counts as failed; the suite goes on.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHARD_FDW_UNIT_H
#define SHARD_FDW_UNIT_H

#include <stdio.h>
#include <string.h>

extern int	unit_passed;
extern int	unit_failed;

extern void unit_check(int ok, const char *file, int line, const char *what);
extern void unit_check_str(const char *got, const char *want,
						   const char *file, int line, const char *what);

#define CHECK(cond) unit_check((cond) ? 1 : 0, __FILE__, __LINE__, #cond)
#define CHECK_STR(got, want) unit_check_str((got), (want), __FILE__, __LINE__, #got)

/* The suites, one per module. */
extern void suite_sigv4(const char *testdata_dir);
extern void suite_ddbjson(void);
extern void suite_keyfmt(void);
extern void suite_shardhash(void);
extern void suite_avorder(void);

#endif							/* SHARD_FDW_UNIT_H */
