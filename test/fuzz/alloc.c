/*-------------------------------------------------------------------------
 *
 * alloc.c
 *		The allocator of the plain-C modules for the fuzz targets: malloc,
 *		as in the unit tests, so that AddressSanitizer sees every block.
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pure.h"

void *
sfdw_alloc(size_t size)
{
	void	   *p = calloc(1, size ? size : 1);

	if (p == NULL)
		abort();
	return p;
}

/* Filled with a byte no parse writes, so a read of one never written shows. */
void *
sfdw_alloc_uninit(size_t size)
{
	void	   *p = malloc(size ? size : 1);

	if (p == NULL)
		abort();
	memset(p, 0xA5, size);
	return p;
}

void *
sfdw_realloc(void *ptr, size_t size)
{
	void	   *p = realloc(ptr, size ? size : 1);

	if (p == NULL)
		abort();
	return p;
}

void
sfdw_free(void *ptr)
{
	free(ptr);
}
