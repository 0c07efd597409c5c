/*-------------------------------------------------------------------------
 *
 * sigv4.h
 *		AWS Signature Version 4: the canonical request, the string to sign
 *		and the Authorization header of one HTTP request.
 *
 * The signer is plain C over OpenSSL and the allocator of pure.h.  It does
 * no I/O and reads no clock: the caller supplies every header to sign, the
 * body, the credentials and the request time, and sends the Authorization
 * value it gets back as the "Authorization" header of the same request.
 *
 * Only the headers passed in are signed.  A session token is signed by
 * passing it as an "x-amz-security-token" header like any other.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHARD_FDW_SIGV4_H
#define SHARD_FDW_SIGV4_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "core/pure.h"

/* One header to sign, as it will be sent. */
typedef struct SigV4Header
{
	const char *name;			/* any case; no ':', blanks or controls */
	const char *value;			/* untrimmed; blank runs count as one space */
} SigV4Header;

/* Everything that goes into a signature. */
typedef struct SigV4Input
{
	const char *method;			/* "GET", "POST"; used as given */
	const char *path;			/* raw request path as sent, e.g. "/" */
	const char *query;			/* raw query string after '?', "" when none */
	const SigV4Header *headers; /* every header to sign, host and x-amz-date
								 * included; names any case; values untrimmed */
	int			nheaders;
	const unsigned char *payload;	/* the body; NULL allowed when empty */
	size_t		payload_len;
	const char *access_key;
	const char *secret_key;
	const char *region;
	const char *service;
	const char *amz_date;		/* "YYYYMMDDTHHMMSSZ" */
	bool		normalize_path; /* true for every service but S3 */
	const unsigned char *signing_key;	/* SIGV4_KEY_LEN bytes from
										 * sigv4_signing_key for this date,
										 * region and service, or NULL to
										 * derive it from secret_key */
} SigV4Input;

/*
 * What a signature produces; each buffer is NUL-terminated.  The canonical
 * request carries every signed header value, a session token included, so
 * it must not be logged where credentials may not go.
 */
typedef struct SigV4Output
{
	Buf			canonical_request;
	Buf			string_to_sign;
	Buf			authorization;	/* the value of the Authorization header */
} SigV4Output;

/*
 * sigv4_sign
 *		Sign one request.
 *
 * On success returns true and fills out, whose buffers the call initialises
 * (whatever out held before is overwritten, not freed); release them with
 * sigv4_output_free.  Returns false, with out released and zeroed and a
 * reason in err (truncated to errlen; err may be NULL), when the input is
 * malformed: a required string missing or empty; a method holding a blank
 * or a control character; an access key, region or service holding '/', a
 * blank or a control character; an amz_date not of the form
 * YYYYMMDDTHHMMSSZ; a header name that is empty or holds ':', a blank or a
 * control character; no "host" header; or a '%' in the query string not
 * followed by two hex digits.  It also returns false if OpenSSL fails.
 *
 * The canonical request follows the rules the AWS test suite checks:
 * - header names are lower-cased and sorted; values of headers with the
 *	 same name are joined with "," in the order given; each value is
 *	 trimmed and its inner runs of blanks (space, tab, CR, LF) become one
 *	 space;
 * - the query string is split at '&' (empty pieces dropped) and each piece
 *	 at its first '='; names and values are percent-decoded ('+' stays a
 *	 '+'), re-encoded with everything but RFC 3986's unreserved characters
 *	 escaped, and sorted by name then value; a name without a value is
 *	 written "name=";
 * - with normalize_path, "." and ".." segments and empty segments are
 *	 removed (keeping a trailing slash) and every byte of each segment
 *	 other than an unreserved character is percent-encoded, '%' included,
 *	 so that a path sent as "/a%20b" is signed as "/a%2520b", the double
 *	 encoding those services check; without it (S3) the path is used
 *	 exactly as sent, and so must already be percent-encoded.  An empty
 *	 path counts as "/";
 * - the payload hash is the hex SHA-256 of the body.
 */
extern bool sigv4_sign(const SigV4Input *in, SigV4Output *out,
					   char *err, size_t errlen);

/*
 * sigv4_post_input
 *		Fill in for a POST of len bytes of body to path "/" of a service
 *		that normalizes paths (DynamoDB's JSON protocol, STS's query
 *		protocol), with the given headers, keys, region, service and
 *		amz_date; in->signing_key is left NULL.  Every pointer is kept, not
 *		copied.
 */
extern void sigv4_post_input(SigV4Input *in, const SigV4Header *headers, int nheaders,
							 const char *body, size_t len,
							 const char *access_key, const char *secret_key,
							 const char *region, const char *service,
							 const char *amz_date);

/*
 * sigv4_output_free
 *		Release the buffers of a SigV4Output and zero it.
 *
 * Safe on an output that is zeroed or already released, so it may be called
 * after sigv4_sign whatever that returned.
 */
extern void sigv4_output_free(SigV4Output *out);

#define SIGV4_KEY_LEN 32

/*
 * Derive the signing key of a secret for the day of amz_date
 * ("YYYYMMDD..."), a region and a service into out[SIGV4_KEY_LEN]: the key
 * stays the same all day, so a caller signing many requests can derive it
 * once.  Returns false if OpenSSL fails.  The key is a secret: wipe it
 * when done.
 */
extern bool sigv4_signing_key(const char *secret, const char *amz_date,
							  const char *region, const char *service,
							  unsigned char *out);

/*
 * sigv4_amz_date
 *		Format t (UTC) as "YYYYMMDDTHHMMSSZ" into out[17].
 *
 * A t whose year falls outside 0000-9999 yields the empty string.
 */
extern void sigv4_amz_date(time_t t, char *out);

/*
 * sigv4_sha256_hex
 *		Write the lower-case hex SHA-256 of len bytes of data into out[65].
 *
 * data may be NULL when len is 0.  If OpenSSL fails, out is the empty
 * string.
 */
extern void sigv4_sha256_hex(const unsigned char *data, size_t len, char *out);

/*
 * sigv4_uri_encode
 *		Append len bytes of data to buf, escaping every byte but RFC 3986's
 *		unreserved ones as "%XX" (upper-case hex), as SigV4 and the AWS
 *		query protocol's form bodies want.
 */
extern void sigv4_uri_encode(Buf *buf, const char *data, size_t len);

#endif							/* SHARD_FDW_SIGV4_H */
