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

#include "pure.h"
#include "unit.h"

int			unit_passed = 0;
int			unit_failed = 0;
const char *unit_testdata_dir = NULL;

/*
 * The plain-C modules allocate through these; the extension uses palloc.
 * Between unit_alloc_start and unit_alloc_end, every allocation is also
 * recorded, so that unit_alloc_end frees what is left as a memory context
 * would, and after budget allocations the next one jumps to the jmp_buf
 * instead of returning, as palloc's out-of-memory ERROR does.
 */
#define UNIT_ALLOC_MAX 4096

static jmp_buf *alloc_jump = NULL;
static long alloc_budget = -1;
static void *recorded[UNIT_ALLOC_MAX];
static int	nrecorded = 0;

/* Forget ptr among the recorded allocations, if it is one. */
static void
forget(void *ptr)
{
	for (int i = 0; ptr != NULL && i < nrecorded; i++)
		if (recorded[i] == ptr)
			recorded[i] = NULL;
}

/* Record ptr when recording; jump first when the budget is spent. */
static void *
record(void *ptr)
{
	if (alloc_jump == NULL)
		return ptr;
	if (alloc_budget-- == 0)
	{
		free(ptr);
		longjmp(*alloc_jump, 1);
	}
	if (nrecorded == UNIT_ALLOC_MAX)
	{
		fprintf(stderr, "more than %d allocations recorded\n", UNIT_ALLOC_MAX);
		exit(2);
	}
	recorded[nrecorded++] = ptr;
	return ptr;
}

void
unit_alloc_start(jmp_buf *jump, long budget)
{
	alloc_jump = jump;
	alloc_budget = budget;
	nrecorded = 0;
}

void
unit_alloc_end(void)
{
	alloc_jump = NULL;
	for (int i = 0; i < nrecorded; i++)
		free(recorded[i]);
	nrecorded = 0;
}

void *
sfdw_alloc(size_t size)
{
	void	   *p = calloc(1, size ? size : 1);

	if (p == NULL)
	{
		fprintf(stderr, "out of memory\n");
		exit(2);
	}
	return record(p);
}

/*
 * Not zeroed, and filled with a byte that no test expects: a read of a
 * byte never written shows, besides being what valgrind reports.
 */
void *
sfdw_alloc_uninit(size_t size)
{
	void	   *p = malloc(size ? size : 1);

	if (p == NULL)
	{
		fprintf(stderr, "out of memory\n");
		exit(2);
	}
	memset(p, 0xA5, size);
	return record(p);
}

void *
sfdw_realloc(void *ptr, size_t size)
{
	void	   *p;

	forget(ptr);
	p = realloc(ptr, size ? size : 1);
	if (p == NULL)
	{
		fprintf(stderr, "out of memory\n");
		exit(2);
	}
	return record(p);
}

void
sfdw_free(void *ptr)
{
	forget(ptr);
	free(ptr);
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
#define UNIT_SUITE(name) suite_##name();
#include "suites.h"
#undef UNIT_SUITE
	printf("%d passed, %d failed\n", unit_passed, unit_failed);
	return unit_failed == 0 ? 0 : 1;
}
