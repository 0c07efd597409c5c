/*-------------------------------------------------------------------------
 *
 * avorder.c
 *		DynamoDB's order of key values, for merging shard streams.
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>
#include <string.h>

#include "core/avorder.h"

/* A decimal number split into sign, significant digits and magnitude. */
typedef struct Decimal
{
	int			sign;			/* -1, 0 or 1 */
	const char *digits;			/* first significant digit */
	int			ndigits;		/* significant digits, point skipped */
	long		magnitude;		/* position of the first digit: 1 for 1..9 */
} Decimal;

/* Parse number text into d; false when it is not a number. */
static bool
parse_decimal(const char *text, Decimal *d)
{
	const char *p = text;
	int			before_point = 0;
	bool		seen_point = false;
	bool		seen_digit = false;
	long		leading_zeros_after_point = 0;
	const char *first = NULL;
	const char *last = NULL;
	long		exponent = 0;

	d->sign = 1;
	if (*p == '-' || *p == '+')
		d->sign = *p++ == '-' ? -1 : 1;
	for (; *p && *p != 'e' && *p != 'E'; p++)
	{
		if (*p == '.')
		{
			if (seen_point)
				return false;
			seen_point = true;
			continue;
		}
		if (*p < '0' || *p > '9')
			return false;
		seen_digit = true;
		if (first == NULL && *p == '0')
		{
			if (seen_point)
				leading_zeros_after_point++;
			continue;
		}
		if (first == NULL)
			first = p;
		if (*p != '0')
			last = p;
		if (!seen_point)
			before_point++;
	}
	if (!seen_digit)
		return false;
	if (*p == 'e' || *p == 'E')
	{
		char	   *end;

		exponent = strtol(p + 1, &end, 10);
		if (end == p + 1 || *end != '\0')
			return false;
	}
	else if (*p != '\0')
		return false;
	if (first == NULL)
	{
		d->sign = 0;
		d->digits = NULL;
		d->ndigits = 0;
		d->magnitude = 0;
		return true;
	}
	d->digits = first;
	d->ndigits = 0;
	for (const char *q = first; q <= last; q++)
		if (*q != '.')
			d->ndigits++;
	d->magnitude = (before_point > 0 ? before_point : -leading_zeros_after_point) +
		exponent;
	return true;
}

/* Compare the absolute values of two nonzero decimals. */
static int
abs_cmp(const Decimal *a, const Decimal *b)
{
	const char *pa = a->digits;
	const char *pb = b->digits;
	int			na = a->ndigits;
	int			nb = b->ndigits;

	if (a->magnitude != b->magnitude)
		return a->magnitude < b->magnitude ? -1 : 1;
	while (na > 0 && nb > 0)
	{
		if (*pa == '.')
		{
			pa++;
			continue;
		}
		if (*pb == '.')
		{
			pb++;
			continue;
		}
		if (*pa != *pb)
			return *pa < *pb ? -1 : 1;
		pa++, pb++, na--, nb--;
	}
	return na > 0 ? 1 : nb > 0 ? -1 : 0;
}

int
avorder_number_cmp(const char *a, const char *b)
{
	Decimal		da;
	Decimal		db;
	int			c;

	if (!parse_decimal(a, &da) || !parse_decimal(b, &db))
		return 0;
	if (da.sign != db.sign)
		return da.sign < db.sign ? -1 : 1;
	if (da.sign == 0)
		return 0;
	c = abs_cmp(&da, &db);
	return da.sign > 0 ? c : -c;
}

/* Compare byte strings as memcmp does, a prefix first. */
static int
bytes_cmp(const char *a, size_t alen, const char *b, size_t blen)
{
	int			c = memcmp(a, b, alen < blen ? alen : blen);

	if (c != 0)
		return c < 0 ? -1 : 1;
	return alen < blen ? -1 : alen > blen ? 1 : 0;
}

int
avorder_compare(const DdbJson *a, const DdbJson *b)
{
	const char *ta;
	const char *tb;
	int			c;

	if (a == NULL || a->kind != DJ_OBJECT || a->n != 1 || a->elems[0].kind != DJ_STRING)
		return (b == NULL || b->kind != DJ_OBJECT || b->n != 1) ? 0 : -1;
	if (b == NULL || b->kind != DJ_OBJECT || b->n != 1 || b->elems[0].kind != DJ_STRING)
		return 1;
	ta = a->keys[0];
	tb = b->keys[0];
	c = strcmp(ta, tb);
	if (c != 0)
		return c < 0 ? -1 : 1;
	if (strcmp(ta, "N") == 0)
		return avorder_number_cmp(a->elems[0].str, b->elems[0].str);
	if (strcmp(ta, "B") == 0)
	{
		unsigned char *ra;
		unsigned char *rb;
		size_t		la;
		size_t		lb;
		bool		oka = base64_decode(a->elems[0].str, a->elems[0].len, &ra, &la);
		bool		okb = base64_decode(b->elems[0].str, b->elems[0].len, &rb, &lb);

		c = (oka && okb) ? bytes_cmp((char *) ra, la, (char *) rb, lb) : 0;
		if (oka)
			sfdw_free(ra);
		if (okb)
			sfdw_free(rb);
		return c;
	}
	return bytes_cmp(a->elems[0].str, a->elems[0].len, b->elems[0].str, b->elems[0].len);
}
