/*-------------------------------------------------------------------------
 *
 * shim.c
 *		What the plain-C modules need from their host, provided with
 *		PostgreSQL's memory contexts: their allocations are palloc'd in the
 *		current memory context, or in the one passed as their SfdwArena,
 *		and so freed with it.
 *
 *-------------------------------------------------------------------------
 */
#include "shard_fdw.h"

#include "utils/memutils.h"

/* Zeroed memory in the current memory context. */
void *
sfdw_alloc(size_t size)
{
	return sfdw_alloc_in(NULL, size);
}

/* Zeroed memory in arena, a MemoryContext (NULL: the current one). */
void *
sfdw_alloc_in(SfdwArena *arena, size_t size)
{
	return MemoryContextAllocExtended(arena ? (MemoryContext) arena : CurrentMemoryContext,
									  Max(size, 1), MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
}

/* Memory as it comes, in the current memory context. */
void *
sfdw_alloc_uninit(size_t size)
{
	return MemoryContextAllocExtended(CurrentMemoryContext, Max(size, 1),
									  MCXT_ALLOC_HUGE);
}

/* Resize memory from sfdw_alloc or sfdw_alloc_uninit. */
void *
sfdw_realloc(void *ptr, size_t size)
{
	return repalloc_huge(ptr, Max(size, 1));
}

/* Free memory from sfdw_alloc. */
void
sfdw_free(void *ptr)
{
	if (ptr)
		pfree(ptr);
}
