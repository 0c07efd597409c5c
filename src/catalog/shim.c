/*-------------------------------------------------------------------------
 *
 * shim.c
 *		The allocator the extension hands down to the plain-C modules
 *		(core/pure.h): PostgreSQL's memory contexts.  Their allocations are
 *		palloc'd in the current memory context, or in the one passed as
 *		their SfdwArena, and so freed with it.
 *
 *-------------------------------------------------------------------------
 */
#include "catalog/shard_catalog.h"

#include "utils/memutils.h"

/* size bytes in arena, a MemoryContext (NULL: the current one). */
static void *
shim_alloc(SfdwArena *arena, size_t size, bool zeroed)
{
	return MemoryContextAllocExtended(arena ? (MemoryContext) arena : CurrentMemoryContext,
									  Max(size, 1), MCXT_ALLOC_HUGE | (zeroed ? MCXT_ALLOC_ZERO : 0));
}

/* A block resized in its memory context. */
static void *
shim_realloc(void *ptr, size_t size)
{
	return repalloc_huge(ptr, Max(size, 1));
}

/* A block freed. */
static void
shim_free(void *ptr)
{
	pfree(ptr);
}

static const SfdwAllocator shim = {shim_alloc, shim_realloc, shim_free};

/* Hand palloc down to the plain-C modules; the library's load does it. */
void
shim_install(void)
{
	sfdw_set_allocator(&shim);
}
