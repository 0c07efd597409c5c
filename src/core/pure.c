/*-------------------------------------------------------------------------
 *
 * pure.c
 *		The byte buffer and the small helpers shared by the plain-C modules.
 *
 *-------------------------------------------------------------------------
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/pure.h"

/* The bytes a buffer starts with, and those it takes once it outgrows them. */
#define BUF_FIRST 64
#define BUF_GROWN 512

/* The host's allocator (see pure.h). */
static const SfdwAllocator *host;

/* See pure.h: set once, before the first allocation. */
void
sfdw_set_allocator(const SfdwAllocator *allocator)
{
	host = allocator;
}

/* Zeroed memory in the current arena. */
void *
sfdw_alloc(size_t size)
{
	return host->alloc(NULL, size, true);
}

/* Zeroed memory in arena (NULL: the current one). */
void *
sfdw_alloc_in(SfdwArena *arena, size_t size)
{
	return host->alloc(arena, size, true);
}

/* Memory as it comes, in the current arena, for a caller that writes it all. */
void *
sfdw_alloc_uninit(size_t size)
{
	return host->alloc(NULL, size, false);
}

/* Resize memory of sfdw_alloc, sfdw_alloc_in or sfdw_alloc_uninit, in its arena. */
void *
sfdw_realloc(void *ptr, size_t size)
{
	return host->realloc(ptr, size);
}

/* Free memory of the allocator (NULL: nothing). */
void
sfdw_free(void *ptr)
{
	if (ptr)
		host->free(ptr);
}

/* Start an empty buffer in the current arena. */
void
buf_init(Buf *buf)
{
	buf_init_in(buf, NULL);
}

/* Start an empty buffer in arena (NULL: the current one); it grows there. */
void
buf_init_in(Buf *buf, SfdwArena *arena)
{
	buf->cap = BUF_FIRST;
	buf->len = 0;
	buf->data = sfdw_alloc_in(arena, buf->cap);
	buf->data[0] = '\0';
}

/* Empty the buffer, keeping its storage. */
void
buf_reset(Buf *buf)
{
	buf->len = 0;
	buf->data[0] = '\0';
}

/*
 * Make room for "more" further bytes plus the terminating NUL, so that
 * appending them copies nothing already held.  A buffer that outgrows
 * its first bytes takes BUF_GROWN at once: a request body or a string to
 * sign then moves once, not three times.
 */
void
buf_reserve(Buf *buf, size_t more)
{
	size_t		need = buf->len + more + 1;

	if (need <= buf->cap)
		return;
	if (buf->cap < BUF_GROWN)
		buf->cap = BUF_GROWN;
	while (buf->cap < need)
		buf->cap *= 2;
	buf->data = sfdw_realloc(buf->data, buf->cap);
}

/* Append len bytes, which may contain NULs. */
void
buf_append(Buf *buf, const char *data, size_t len)
{
	buf_reserve(buf, len);
	memcpy(buf->data + buf->len, data, len);
	buf->len += len;
	buf->data[buf->len] = '\0';
}

/* Append a NUL-terminated string. */
void
buf_puts(Buf *buf, const char *str)
{
	buf_append(buf, str, strlen(str));
}

/* Append one byte. */
void
buf_putc(Buf *buf, char c)
{
	buf_reserve(buf, 1);
	buf->data[buf->len++] = c;
	buf->data[buf->len] = '\0';
}

/* Append printf-style formatted text. */
void
buf_printf(Buf *buf, const char *fmt,...)
{
	for (;;)
	{
		va_list		args;
		size_t		avail = buf->cap - buf->len;
		int			n;

		va_start(args, fmt);
		n = vsnprintf(buf->data + buf->len, avail, fmt, args);
		va_end(args);
		if (n < 0)
			return;
		if ((size_t) n < avail)
		{
			buf->len += n;
			return;
		}
		buf_reserve(buf, n);
	}
}

/* Copy len bytes into a new NUL-terminated string. */
char *
sfdw_strndup(const char *str, size_t len)
{
	char	   *copy = sfdw_alloc(len + 1);

	memcpy(copy, str, len);
	copy[len] = '\0';
	return copy;
}

/* The value of the hex digit c, or -1 if c is not one. */
int
hex_digit_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * Write a formatted message into err (errlen bytes; err may be NULL).  When
 * the message does not fit, it is cut at a UTF-8 character boundary, so
 * that the caller can hand it on as text.
 */
void
sfdw_set_error(char *err, size_t errlen, const char *fmt,...)
{
	va_list		args;
	int			n;
	size_t		end;

	if (err == NULL || errlen == 0)
		return;
	va_start(args, fmt);
	n = vsnprintf(err, errlen, fmt, args);
	va_end(args);
	if (n < 0 || (size_t) n < errlen)
		return;

	/* Drop a multibyte character that lost its tail to the truncation. */
	end = errlen - 1;
	while (end > 0 && ((unsigned char) err[end - 1] & 0xC0) == 0x80)
		end--;
	if (end > 0 && ((unsigned char) err[end - 1] & 0x80) != 0)
	{
		unsigned char lead = (unsigned char) err[end - 1];
		size_t		seqlen = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2;

		if ((errlen - 1) - (end - 1) < seqlen)
			err[end - 1] = '\0';
	}
}
