/*-------------------------------------------------------------------------
 *
 * main.c
 *		Runs every unit test suite and prints "N passed, N failed".
 *
 * Usage: unit_tests SIGV4_TESTDATA_DIR
 *
 *-------------------------------------------------------------------------
 */
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/arena.h"
#include "unit.h"

int			unit_passed = 0;
int			unit_failed = 0;
const char *unit_testdata_dir = NULL;

/*
 * From unit_alloc_start to unit_alloc_end, allocations go to an arena of
 * their own (test/alloc/arena.h), freed at the end as a memory context
 * would be, and after budget of them the next one jumps to the jmp_buf
 * instead of returning, as palloc's out-of-memory ERROR does.
 */
static SfdwArena *budget_arena = NULL;
static SfdwArena *arena_before = NULL;

void
unit_alloc_start(jmp_buf *jump, long budget)
{
	budget_arena = arena_create();
	arena_before = arena_switch(budget_arena);
	arena_fail_after(jump, budget);
}

void
unit_alloc_end(void)
{
	arena_fail_after(NULL, -1);
	arena_switch(arena_before);
	arena_delete(budget_arena);
	budget_arena = NULL;
}

void
unit_check(int ok, const char *file, int line, const char *what)
{
	if (ok)
		unit_passed++;
	else
	{
		unit_failed++;
		printf("FAIL %s:%d: %s\n", file, line, what);
	}
}

void
unit_check_str(const char *got, const char *want,
			   const char *file, int line, const char *what)
{
	int			ok = got != NULL && want != NULL && strcmp(got, want) == 0;

	unit_check(ok, file, line, what);
	if (!ok)
		printf("     got:  %s\n     want: %s\n",
			   got ? got : "(null)", want ? want : "(null)");
}

int
main(int argc, char **argv)
{
	if (argc != 2)
	{
		fprintf(stderr, "usage: %s SIGV4_TESTDATA_DIR\n", argv[0]);
		return 2;
	}
	unit_testdata_dir = argv[1];
	arena_install();
#define UNIT_SUITE(name) suite_##name();
#include "suites.h"
#undef UNIT_SUITE
	printf("%d passed, %d failed\n", unit_passed, unit_failed);
	return unit_failed == 0 ? 0 : 1;
}
