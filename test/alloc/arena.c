/*-------------------------------------------------------------------------
 *
 * arena.c
 *		The plain-C modules' allocator in the unit tests and the fuzz
 *		targets (see arena.h).
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"

struct SfdwArena
{
	void	  **blocks;
	int			nblocks;
	int			cap;
	SfdwArena  *next;			/* in the list of every arena */
};

static SfdwArena *arenas = NULL;
static SfdwArena *current = NULL;
static jmp_buf *fail_jump = NULL;
static long fail_budget = -1;

/* Stop the process: the tests have run out of memory. */
static void
out_of_memory(void)
{
	fprintf(stderr, "out of memory\n");
	abort();
}

/* See arena.h. */
SfdwArena *
arena_create(void)
{
	SfdwArena  *arena = calloc(1, sizeof(SfdwArena));

	if (arena == NULL)
		out_of_memory();
	arena->next = arenas;
	arenas = arena;
	return arena;
}

/* See arena.h. */
SfdwArena *
arena_switch(SfdwArena *arena)
{
	SfdwArena  *old = current;

	current = arena;
	return old;
}

/* See arena.h. */
void
arena_reset(SfdwArena *arena)
{
	for (int i = 0; i < arena->nblocks; i++)
		free(arena->blocks[i]);
	arena->nblocks = 0;
}

/* See arena.h. */
void
arena_delete(SfdwArena *arena)
{
	SfdwArena **link = &arenas;

	arena_reset(arena);
	while (*link != arena)
		link = &(*link)->next;
	*link = arena->next;
	if (current == arena)
		current = NULL;
	free(arena->blocks);
	free(arena);
}

/* See arena.h. */
void
arena_fail_after(jmp_buf *jump, long budget)
{
	fail_jump = jump;
	fail_budget = budget;
}

/* Put block p in arena (NULL: none). */
static void
keep(SfdwArena *arena, void *p)
{
	if (arena == NULL)
		return;
	if (arena->nblocks == arena->cap)
	{
		void	  **grown;

		arena->cap = arena->cap ? arena->cap * 2 : 16;
		grown = realloc(arena->blocks, arena->cap * sizeof(void *));
		if (grown == NULL)
			out_of_memory();
		arena->blocks = grown;
	}
	arena->blocks[arena->nblocks++] = p;
}

/* Take block p out of its arena, if it is in one; returns that arena. */
static SfdwArena *
drop(void *p)
{
	for (SfdwArena *arena = arenas; p != NULL && arena != NULL; arena = arena->next)
		for (int i = 0; i < arena->nblocks; i++)
			if (arena->blocks[i] == p)
			{
				arena->blocks[i] = arena->blocks[--arena->nblocks];
				return arena;
			}
	return NULL;
}

/* Jump instead of allocating when the failure budget is spent. */
static void
maybe_fail(void)
{
	if (fail_jump != NULL && fail_budget-- == 0)
		longjmp(*fail_jump, 1);
}

/* Zeroed or not, in arena (NULL: the current one). */
static void *
arena_alloc(SfdwArena *arena, size_t size, bool zeroed)
{
	void	   *p;

	maybe_fail();
	p = zeroed ? calloc(1, size ? size : 1) : malloc(size ? size : 1);
	if (p == NULL)
		out_of_memory();
	/* filled with a byte no parse writes, so a read of one never written shows */
	if (!zeroed)
		memset(p, 0xA5, size);
	keep(arena ? arena : current, p);
	return p;
}

/* A block resized in its arena. */
static void *
arena_realloc(void *ptr, size_t size)
{
	SfdwArena  *arena;
	void	   *p;

	maybe_fail();
	arena = drop(ptr);
	p = realloc(ptr, size ? size : 1);
	if (p == NULL)
		out_of_memory();
	keep(arena, p);
	return p;
}

/* A block freed, and out of its arena. */
static void
arena_free(void *ptr)
{
	drop(ptr);
	free(ptr);
}

static const SfdwAllocator arena_allocator = {arena_alloc, arena_realloc, arena_free};

/* See arena.h. */
void
arena_install(void)
{
	sfdw_set_allocator(&arena_allocator);
}
