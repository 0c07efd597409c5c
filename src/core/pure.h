/*-------------------------------------------------------------------------
 *
 * pure.h
 *		What the plain-C modules (SigV4, JSON, key templates, shard hashes)
 *		share: an allocator, a growable byte buffer and a few small helpers.
 *
 * These modules never include postgres.h, so that they can be unit tested
 * on their own and so that PostgreSQL's headers never meet libcurl's or
 * OpenSSL's.  They report failure through return values and never jump
 * out of a call themselves, which is what lets them release third-party
 * objects on every path.
 *
 * The allocator is handed down by the host before the first allocation
 * (sfdw_set_allocator): palloc in the extension (catalog/shim.c), arenas
 * over malloc in the tests (test/alloc).  Memory is allocated in an arena: the current
 * one (sfdw_alloc: in the extension, the current memory context), or one
 * named by the caller (sfdw_alloc_in: a memory context the extension
 * hands down as an SfdwArena).  A block keeps its arena when resized, and
 * goes when its arena is reset.  A structure that allocates after its
 * start (a buffer grown, a line held) therefore names its arena when it
 * starts, and never depends on which arena is current when it is used
 * later.  sfdw_alloc returns zeroed memory,
 * sfdw_alloc_uninit memory as it comes (for a caller that writes every
 * byte before reading it), and neither returns NULL; a host allocator may
 * instead jump out of the call when memory runs out (palloc's ERROR), so
 * no module holds memory of another allocator across an allocation of
 * ours.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHARD_FDW_PURE_H
#define SHARD_FDW_PURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The size of the buffers the modules write an error message into (their
 * err/errlen arguments): every message they write fits.
 */
#define SFDW_ERRLEN 256

/* An arena of the host's (in the extension, a MemoryContext); NULL is the current one. */
typedef struct SfdwArena SfdwArena;

/*
 * The host's allocator: alloc returns size bytes in arena (NULL: the
 * current one), zeroed or as they come; realloc resizes a block in its
 * arena; free frees one (NULL: nothing).  None returns NULL.
 */
typedef struct SfdwAllocator
{
	void	   *(*alloc) (SfdwArena *arena, size_t size, bool zeroed);
	void	   *(*realloc) (void *ptr, size_t size);
	void		(*free) (void *ptr);
} SfdwAllocator;

extern void sfdw_set_allocator(const SfdwAllocator *allocator);

extern void *sfdw_alloc(size_t size);
extern void *sfdw_alloc_in(SfdwArena *arena, size_t size);
extern void *sfdw_alloc_uninit(size_t size);
extern void *sfdw_realloc(void *ptr, size_t size);
extern void sfdw_free(void *ptr);

/* A growable, always NUL-terminated byte buffer. */
typedef struct Buf
{
	char	   *data;
	size_t		len;
	size_t		cap;
} Buf;

extern void buf_init(Buf *buf);
extern void buf_init_in(Buf *buf, SfdwArena *arena);
extern void buf_reset(Buf *buf);
extern void buf_reserve(Buf *buf, size_t more);
extern void buf_append(Buf *buf, const char *data, size_t len);
extern void buf_puts(Buf *buf, const char *str);
extern void buf_putc(Buf *buf, char c);
extern void buf_printf(Buf *buf, const char *fmt,...)
			__attribute__((format(printf, 2, 3)));
extern char *sfdw_strndup(const char *str, size_t len);
extern int	hex_digit_value(char c);
extern void sfdw_set_error(char *err, size_t errlen, const char *fmt,...)
			__attribute__((format(printf, 3, 4)));

#endif							/* SHARD_FDW_PURE_H */
