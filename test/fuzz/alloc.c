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

#include "pure.h"

void *
sfdw_alloc(size_t size)
{
	void	   *p = calloc(1, size ? size : 1);

	if (p == NULL)
		abort();
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
