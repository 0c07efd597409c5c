/*-------------------------------------------------------------------------
 *
 * main.c
 *		Runs every unit test suite and prints "N passed, N failed".
 *
 * Usage: unit_tests SIGV4_TESTDATA_DIR
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>

#include "pure.h"
#include "unit.h"

int			unit_passed = 0;
int			unit_failed = 0;

/* The plain-C modules allocate through these; the extension uses palloc. */
void *
sfdw_alloc(size_t size)
{
	void	   *p = calloc(1, size ? size : 1);

	if (p == NULL)
	{
		fprintf(stderr, "out of memory\n");
		exit(2);
	}
	return p;
}

void *
sfdw_realloc(void *ptr, size_t size)
{
	void	   *p = realloc(ptr, size ? size : 1);

	if (p == NULL)
	{
		fprintf(stderr, "out of memory\n");
		exit(2);
	}
	return p;
}

void
sfdw_free(void *ptr)
{
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
	suite_sigv4(argv[1]);
	suite_ddbjson();
	suite_keyfmt();
	suite_shardhash();
	suite_avorder();
	printf("%d passed, %d failed\n", unit_passed, unit_failed);
	return unit_failed == 0 ? 0 : 1;
}
