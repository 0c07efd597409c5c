/*-------------------------------------------------------------------------
 *
 * arena.h
 *		The allocator the unit tests and the fuzz targets hand down to the
 *		plain-C modules (pure.h, arena_install): malloc, so that
 *		AddressSanitizer sees every block, with arenas that behave as the
 *		extension's memory contexts.
 *
 * A block is allocated in an arena: the one named (sfdw_alloc_in), or the
 * current one (sfdw_alloc, sfdw_alloc_uninit; none until arena_switch
 * makes one current, and then the block is only the caller's).  It stays
 * in its arena when resized, and is freed when its arena is reset.  A
 * structure that keeps a block past a reset of the arena it landed in
 * then holds freed memory, which AddressSanitizer reports at its next use:
 * this is how the tests find memory put in the wrong context.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHARD_FDW_TEST_ARENA_H
#define SHARD_FDW_TEST_ARENA_H

#include <setjmp.h>

#include "core/pure.h"

/* Hand the arena allocator down to the plain-C modules (sfdw_set_allocator). */
extern void arena_install(void);

extern SfdwArena *arena_create(void);
extern SfdwArena *arena_switch(SfdwArena *arena);	/* returns the one before */
extern void arena_reset(SfdwArena *arena);
extern void arena_delete(SfdwArena *arena);

/*
 * After budget more allocations, the next one frees nothing and jumps to
 * jump instead of returning, as palloc's out-of-memory ERROR does; a NULL
 * jump stops this.
 */
extern void arena_fail_after(jmp_buf *jump, long budget);

#endif							/* SHARD_FDW_TEST_ARENA_H */
