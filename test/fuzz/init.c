/*-------------------------------------------------------------------------
 *
 * init.c
 *		What every fuzz target does before its first input: hand the arena
 *		allocator down to the plain-C modules (test/alloc/arena.h).
 *
 *-------------------------------------------------------------------------
 */
#include "alloc/arena.h"

int			LLVMFuzzerInitialize(int *argc, char ***argv);

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void) argc;
	(void) argv;
	arena_install();
	return 0;
}
