/*-------------------------------------------------------------------------
 *
 * sigv4.c
 *		AWS Signature Version 4 signing of one HTTP request.
 *
 * A signature is built in three steps, each kept in the output for the
 * caller to log or test: the canonical request (method, path, query,
 * headers, signed header list and payload hash, one per line), the string
 * to sign (algorithm, time, credential scope and the hash of the canonical
 * request) and the Authorization value, whose signature is an HMAC of the
 * string to sign under a key derived from the secret, the date, the region
 * and the service.
 *
 * OpenSSL is used only for SHA-256, through its EVP digest calls, which
 * OpenSSL 3 does not deprecate; HMAC is built on it here (RFC 2104).  Key
 * material is wiped once used.
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "core/sigv4.h"

#define SIGV4_ALGORITHM		"AWS4-HMAC-SHA256"
#define SIGV4_TERMINATOR	"aws4_request"
#define SIGV4_KEY_PREFIX	"AWS4"
#define SIGV4_DATE_LEN		8	/* the YYYYMMDD that opens amz_date */
#define SIGV4_AMZ_DATE_LEN	16	/* YYYYMMDDTHHMMSSZ */
#define SHA256_LEN			32
#define SHA256_BLOCK		64	/* the block size HMAC pads keys to */

/* One path segment, pointing into the caller's path. */
typedef struct PathSegment
{
	const char *start;
	size_t		len;
} PathSegment;

/* One query parameter, name and value already in canonical encoding. */
typedef struct QueryParam
{
	char	   *name;
	char	   *value;
} QueryParam;

/* One header to sign, its name lower-cased; order keeps duplicates stable. */
typedef struct CanonHeader
{
	char	   *name;
	const char *value;
	int			order;
} CanonHeader;

/*
 * is_unreserved
 *		Whether c is in RFC 3986's unreserved set.
 *
 * Those are the only bytes SigV4 leaves unescaped: ASCII letters, digits
 * and "-._~".
 */
static bool
is_unreserved(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
		(c >= '0' && c <= '9') ||
		c == '-' || c == '.' || c == '_' || c == '~';
}

/*
 * is_blank
 *		Whether c is white space inside a header value.
 *
 * Space, tab, CR and LF; runs of them collapse to one space.
 */
static bool
is_blank(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/*
 * is_plain_token
 *		Whether str is non-empty and free of blanks and control characters.
 *
 * With no_slash, a '/' also disqualifies it (a credential scope part).
 */
static bool
is_plain_token(const char *str, bool no_slash)
{
	const unsigned char *p = (const unsigned char *) str;

	if (*p == '\0')
		return false;
	for (; *p != '\0'; p++)
	{
		if (*p <= ' ' || *p == 0x7f || (no_slash && *p == '/'))
			return false;
	}
	return true;
}

/*
 * sigv4_uri_encode
 *		Append len bytes of data to buf, escaping all but unreserved bytes.
 *
 * Escapes are "%XX" with upper-case hex digits, as SigV4 requires.
 */
void
sigv4_uri_encode(Buf *buf, const char *data, size_t len)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t		i;

	for (i = 0; i < len; i++)
	{
		unsigned char c = (unsigned char) data[i];

		if (is_unreserved(c))
			buf_putc(buf, (char) c);
		else
		{
			char		esc[3];

			esc[0] = '%';
			esc[1] = hex[c >> 4];
			esc[2] = hex[c & 0x0f];
			buf_append(buf, esc, 3);
		}
	}
}

/*
 * uri_decode
 *		Append len bytes of src to buf with "%XX" escapes decoded.
 *
 * '+' is kept as it is.  Returns false on a '%' not followed by two hex
 * digits, leaving buf partly written.
 */
static bool
uri_decode(Buf *buf, const char *src, size_t len)
{
	size_t		i;

	for (i = 0; i < len; i++)
	{
		if (src[i] == '%')
		{
			int			hi;
			int			lo;

			if (len - i < 3)
				return false;
			hi = hex_digit_value(src[i + 1]);
			lo = hex_digit_value(src[i + 2]);
			if (hi < 0 || lo < 0)
				return false;
			buf_putc(buf, (char) (hi * 16 + lo));
			i += 2;
		}
		else
			buf_putc(buf, src[i]);
	}
	return true;
}

/*
 * reencode
 *		Return src's len bytes percent-decoded then re-encoded canonically.
 *
 * The result is allocated with sfdw_alloc.  Returns NULL on bad
 * percent-encoding.
 */
static char *
reencode(const char *src, size_t len)
{
	Buf			decoded;
	Buf			encoded;
	bool		ok;

	buf_init(&decoded);
	ok = uri_decode(&decoded, src, len);
	if (!ok)
	{
		sfdw_free(decoded.data);
		return NULL;
	}
	buf_init(&encoded);
	sigv4_uri_encode(&encoded, decoded.data, decoded.len);
	sfdw_free(decoded.data);
	return encoded.data;
}

/*
 * hex_encode
 *		Write len bytes as lower-case hex into out[2 * len + 1].
 */
static void
hex_encode(const unsigned char *bytes, size_t len, char *out)
{
	static const char hex[] = "0123456789abcdef";
	size_t		i;

	for (i = 0; i < len; i++)
	{
		out[2 * i] = hex[bytes[i] >> 4];
		out[2 * i + 1] = hex[bytes[i] & 0x0f];
	}
	out[2 * len] = '\0';
}

/*
 * digest_ctx
 *		The SHA-256 digest context every hash of this module reuses, or NULL
 *		if OpenSSL cannot make one.
 *
 * OpenSSL's one-shot calls look the algorithm up and allocate a context
 * on every call, a good part of a request's signing; the algorithm is
 * fetched and the context made once per process instead.
 */
static EVP_MD_CTX *
digest_ctx(void)
{
	static EVP_MD *md = NULL;
	static EVP_MD_CTX *ctx = NULL;

	if (md == NULL)
		md = EVP_MD_fetch(NULL, "SHA256", NULL);
	if (ctx == NULL)
		ctx = EVP_MD_CTX_new();
	if (md == NULL || ctx == NULL || EVP_DigestInit_ex(ctx, md, NULL) != 1)
		return NULL;
	return ctx;
}

/*
 * sha256_of_two
 *		Write the SHA-256 of alen bytes at a followed by blen bytes at b
 *		into md[SHA256_LEN].
 *
 * Returns false if OpenSSL fails.
 */
static bool
sha256_of_two(const void *a, size_t alen, const void *b, size_t blen,
			  unsigned char *md)
{
	EVP_MD_CTX *ctx = digest_ctx();
	unsigned int mdlen = 0;

	return ctx != NULL &&
		EVP_DigestUpdate(ctx, a, alen) == 1 &&
		EVP_DigestUpdate(ctx, b, blen) == 1 &&
		EVP_DigestFinal_ex(ctx, md, &mdlen) == 1 &&
		mdlen == SHA256_LEN;
}

/*
 * sha256
 *		Write the SHA-256 of len bytes of data into md[SHA256_LEN].
 *
 * data may be NULL when len is 0.  Returns false if OpenSSL fails.
 */
static bool
sha256(const unsigned char *data, size_t len, unsigned char *md)
{
	return sha256_of_two(data != NULL ? data : (const unsigned char *) "", len,
						 "", 0, md);
}

/*
 * hmac_sha256
 *		Write HMAC-SHA256(key, msg) into md[SHA256_LEN] (RFC 2104).
 *
 * Returns false if OpenSSL fails.
 */
static bool
hmac_sha256(const unsigned char *key, size_t keylen,
			const char *msg, size_t msglen, unsigned char *md)
{
	unsigned char pad[SHA256_BLOCK];
	unsigned char inner[SHA256_LEN];
	bool		ok = true;

	memset(pad, 0, sizeof(pad));
	if (keylen > SHA256_BLOCK)
		ok = sha256(key, keylen, pad);
	else
		memcpy(pad, key, keylen);
	for (int i = 0; i < SHA256_BLOCK; i++)
		pad[i] ^= 0x36;
	ok = ok && sha256_of_two(pad, SHA256_BLOCK, msg, msglen, inner);
	for (int i = 0; i < SHA256_BLOCK; i++)
		pad[i] ^= 0x36 ^ 0x5c;
	ok = ok && sha256_of_two(pad, SHA256_BLOCK, inner, SHA256_LEN, md);
	OPENSSL_cleanse(pad, sizeof(pad));
	OPENSSL_cleanse(inner, sizeof(inner));
	return ok;
}

/*
 * valid_amz_date
 *		Whether d has the shape "YYYYMMDDTHHMMSSZ".
 */
static bool
valid_amz_date(const char *d)
{
	int			i;

	for (i = 0; i < SIGV4_AMZ_DATE_LEN; i++)
	{
		if (i == SIGV4_DATE_LEN)
		{
			if (d[i] != 'T')
				return false;
		}
		else if (i == SIGV4_AMZ_DATE_LEN - 1)
		{
			if (d[i] != 'Z')
				return false;
		}
		else if (d[i] < '0' || d[i] > '9')
			return false;
	}
	return d[SIGV4_AMZ_DATE_LEN] == '\0';
}

/*
 * append_canonical_uri
 *		Append the canonical form of path to buf.
 *
 * With normalize, drops empty, "." and ".." segments (".." also drops the
 * segment before it, never climbing above the root), keeps a trailing
 * slash and percent-encodes each segment.  Without it, appends the path as
 * it is.  An empty path gives "/".
 */
static void
append_canonical_uri(Buf *buf, const char *path, bool normalize)
{
	PathSegment *segs;
	size_t		nsegs = 0;
	size_t		maxsegs = 1;
	size_t		pathlen = strlen(path);
	const char *p;
	size_t		i;

	if (pathlen == 0)
	{
		buf_putc(buf, '/');
		return;
	}
	if (!normalize)
	{
		buf_append(buf, path, pathlen);
		return;
	}

	for (p = path; *p != '\0'; p++)
		if (*p == '/')
			maxsegs++;
	segs = sfdw_alloc(maxsegs * sizeof(PathSegment));

	p = path;
	for (;;)
	{
		const char *end = strchr(p, '/');
		size_t		len;

		if (end == NULL)
			end = path + pathlen;
		len = end - p;
		if (len == 2 && p[0] == '.' && p[1] == '.')
		{
			if (nsegs > 0)
				nsegs--;
		}
		else if (len > 0 && !(len == 1 && p[0] == '.'))
		{
			segs[nsegs].start = p;
			segs[nsegs].len = len;
			nsegs++;
		}
		if (*end == '\0')
			break;
		p = end + 1;
	}

	for (i = 0; i < nsegs; i++)
	{
		buf_putc(buf, '/');
		sigv4_uri_encode(buf, segs[i].start, segs[i].len);
	}
	if (nsegs == 0 || path[pathlen - 1] == '/')
		buf_putc(buf, '/');
	sfdw_free(segs);
}

/*
 * query_param_cmp
 *		qsort order of QueryParams: by encoded name, then encoded value.
 */
static int
query_param_cmp(const void *a, const void *b)
{
	const QueryParam *pa = a;
	const QueryParam *pb = b;
	int			c = strcmp(pa->name, pb->name);

	return c != 0 ? c : strcmp(pa->value, pb->value);
}

/*
 * append_canonical_query
 *		Append the canonical form of the raw query string to buf.
 *
 * Returns false, with a reason in err, on bad percent-encoding.
 */
static bool
append_canonical_query(Buf *buf, const char *query, char *err, size_t errlen)
{
	QueryParam *params;
	size_t		nparams = 0;
	size_t		maxparams = 1;
	const char *p;
	size_t		i;
	bool		ok = true;

	for (p = query; *p != '\0'; p++)
		if (*p == '&')
			maxparams++;
	params = sfdw_alloc(maxparams * sizeof(QueryParam));

	p = query;
	while (ok)
	{
		const char *end = strchr(p, '&');
		const char *eq;
		size_t		len;

		if (end == NULL)
			end = p + strlen(p);
		len = end - p;
		if (len > 0)
		{
			eq = memchr(p, '=', len);
			params[nparams].name = reencode(p, eq ? (size_t) (eq - p) : len);
			params[nparams].value = eq ? reencode(eq + 1, end - eq - 1)
				: reencode("", 0);
			if (params[nparams].name == NULL || params[nparams].value == NULL)
			{
				sfdw_set_error(err, errlen,
						"bad percent-encoding in query parameter \"%.*s\"",
						(int) len, p);
				ok = false;
			}
			nparams++;
		}
		if (*end == '\0')
			break;
		p = end + 1;
	}

	if (ok)
	{
		qsort(params, nparams, sizeof(QueryParam), query_param_cmp);
		for (i = 0; i < nparams; i++)
		{
			if (i > 0)
				buf_putc(buf, '&');
			buf_puts(buf, params[i].name);
			buf_putc(buf, '=');
			buf_puts(buf, params[i].value);
		}
	}

	for (i = 0; i < nparams; i++)
	{
		if (params[i].name != NULL)
			sfdw_free(params[i].name);
		if (params[i].value != NULL)
			sfdw_free(params[i].value);
	}
	sfdw_free(params);
	return ok;
}

/*
 * canon_header_cmp
 *		qsort order of CanonHeaders: by name, then by order given.
 */
static int
canon_header_cmp(const void *a, const void *b)
{
	const CanonHeader *ha = a;
	const CanonHeader *hb = b;
	int			c = strcmp(ha->name, hb->name);

	if (c != 0)
		return c;
	return (ha->order > hb->order) - (ha->order < hb->order);
}

/*
 * append_trimmed_value
 *		Append value to buf trimmed, with inner runs of blanks as one space.
 */
static void
append_trimmed_value(Buf *buf, const char *value)
{
	const unsigned char *p = (const unsigned char *) value;

	while (is_blank(*p))
		p++;
	while (*p != '\0')
	{
		const unsigned char *word = p;

		while (*p != '\0' && !is_blank(*p))
			p++;
		buf_append(buf, (const char *) word, (size_t) (p - word));
		while (is_blank(*p))
			p++;
		if (*p != '\0')
			buf_putc(buf, ' ');
	}
}

/*
 * lower_copy
 *		Return an sfdw_alloc'd copy of str with ASCII letters lower-cased.
 */
static char *
lower_copy(const char *str)
{
	size_t		len = strlen(str);
	char	   *copy = sfdw_strndup(str, len);
	size_t		i;

	for (i = 0; i < len; i++)
		if (copy[i] >= 'A' && copy[i] <= 'Z')
			copy[i] = (char) (copy[i] - 'A' + 'a');
	return copy;
}

/*
 * append_canonical_headers
 *		Append the canonical header lines to creq and the ';'-joined
 *		lower-cased names to signed_headers.
 *
 * Returns false, with a reason in err, on a malformed header name, a
 * missing value or the lack of a "host" header.
 */
static bool
append_canonical_headers(Buf *creq, Buf *signed_headers,
						 const SigV4Header *headers, int nheaders,
						 char *err, size_t errlen)
{
	CanonHeader *canon;
	int			i;
	bool		have_host = false;
	bool		ok = true;

	for (i = 0; i < nheaders; i++)
	{
		const char *name = headers[i].name;

		if (name == NULL || headers[i].value == NULL)
		{
			sfdw_set_error(err, errlen, "header %d has no name or no value", i);
			return false;
		}
		if (!is_plain_token(name, false) || strchr(name, ':') != NULL)
		{
			sfdw_set_error(err, errlen, "invalid header name \"%s\"", name);
			return false;
		}
	}

	canon = sfdw_alloc((nheaders > 0 ? nheaders : 1) * sizeof(CanonHeader));
	for (i = 0; i < nheaders; i++)
	{
		canon[i].name = lower_copy(headers[i].name);
		canon[i].value = headers[i].value;
		canon[i].order = i;
		if (strcmp(canon[i].name, "host") == 0)
			have_host = true;
	}
	if (!have_host)
	{
		sfdw_set_error(err, errlen, "no \"host\" header to sign");
		ok = false;
	}
	else
	{
		qsort(canon, nheaders, sizeof(CanonHeader), canon_header_cmp);
		for (i = 0; i < nheaders; i++)
		{
			bool		same_as_previous = i > 0 &&
				strcmp(canon[i].name, canon[i - 1].name) == 0;

			if (same_as_previous)
				buf_putc(creq, ',');
			else
			{
				if (i > 0)
				{
					buf_putc(creq, '\n');
					buf_putc(signed_headers, ';');
				}
				buf_puts(creq, canon[i].name);
				buf_putc(creq, ':');
				buf_puts(signed_headers, canon[i].name);
			}
			append_trimmed_value(creq, canon[i].value);
		}
		buf_putc(creq, '\n');
	}

	for (i = 0; i < nheaders; i++)
		sfdw_free(canon[i].name);
	sfdw_free(canon);
	return ok;
}

/*
 * check_input
 *		Whether in is well formed enough to sign; if not, says why in err.
 *
 * Covers what sigv4_sign's contract lists except header names, the host
 * header and the query string, which are checked as they are read.
 */
static bool
check_input(const SigV4Input *in, char *err, size_t errlen)
{
	if (in->method == NULL || !is_plain_token(in->method, false))
	{
		sfdw_set_error(err, errlen, "missing or invalid HTTP method");
		return false;
	}
	if (in->path == NULL || in->query == NULL)
	{
		sfdw_set_error(err, errlen, "missing request path or query string");
		return false;
	}
	if (in->nheaders < 0 || (in->nheaders > 0 && in->headers == NULL))
	{
		sfdw_set_error(err, errlen, "invalid header array");
		return false;
	}
	if (in->payload == NULL && in->payload_len > 0)
	{
		sfdw_set_error(err, errlen, "payload length given without a payload");
		return false;
	}
	if (in->access_key == NULL || !is_plain_token(in->access_key, true) ||
		in->region == NULL || !is_plain_token(in->region, true) ||
		in->service == NULL || !is_plain_token(in->service, true))
	{
		sfdw_set_error(err, errlen,
				"access key, region and service must be non-empty, without '/', blanks or control characters");
		return false;
	}
	if (in->secret_key == NULL || in->secret_key[0] == '\0')
	{
		sfdw_set_error(err, errlen, "missing secret key");
		return false;
	}
	if (in->amz_date == NULL || !valid_amz_date(in->amz_date))
	{
		sfdw_set_error(err, errlen, "request time is not of the form YYYYMMDDTHHMMSSZ");
		return false;
	}
	return true;
}

/*
 * sigv4_signing_key
 *		Derive the signing key; see sigv4.h for the contract.
 *
 * The signing key is the HMAC chain "AWS4" + secret -> date -> region ->
 * service -> "aws4_request".
 */
bool
sigv4_signing_key(const char *secret, const char *amz_date, const char *region,
				  const char *service, unsigned char *out)
{
	size_t		prefixlen = strlen(SIGV4_KEY_PREFIX);
	size_t		secretlen = strlen(secret);
	size_t		keylen = prefixlen + secretlen;
	unsigned char *key = sfdw_alloc(keylen);
	unsigned char k_date[SHA256_LEN];
	unsigned char k_region[SHA256_LEN];
	unsigned char k_service[SHA256_LEN];
	bool		ok;

	memcpy(key, SIGV4_KEY_PREFIX, prefixlen);
	memcpy(key + prefixlen, secret, secretlen);
	ok = hmac_sha256(key, keylen, amz_date, SIGV4_DATE_LEN, k_date) &&
		hmac_sha256(k_date, SHA256_LEN, region, strlen(region), k_region) &&
		hmac_sha256(k_region, SHA256_LEN, service, strlen(service), k_service) &&
		hmac_sha256(k_service, SHA256_LEN, SIGV4_TERMINATOR,
					strlen(SIGV4_TERMINATOR), out);
	OPENSSL_cleanse(key, keylen);
	OPENSSL_cleanse(k_date, sizeof(k_date));
	OPENSSL_cleanse(k_region, sizeof(k_region));
	OPENSSL_cleanse(k_service, sizeof(k_service));
	sfdw_free(key);
	return ok;
}

/*
 * derive_signature
 *		Write the hex signature of string_to_sign into sig[65], with the
 *		caller's signing key or one derived now.  Returns false if OpenSSL
 *		fails.
 */
static bool
derive_signature(const SigV4Input *in, const Buf *string_to_sign, char *sig)
{
	unsigned char k_signing[SHA256_LEN];
	unsigned char mac[SHA256_LEN];
	const unsigned char *key = in->signing_key;
	bool		ok = true;

	if (key == NULL)
	{
		ok = sigv4_signing_key(in->secret_key, in->amz_date, in->region,
							   in->service, k_signing);
		key = k_signing;
	}
	ok = ok && hmac_sha256(key, SHA256_LEN, string_to_sign->data,
						   string_to_sign->len, mac);
	if (ok)
		hex_encode(mac, SHA256_LEN, sig);
	OPENSSL_cleanse(k_signing, sizeof(k_signing));
	return ok;
}

/*
 * append_scope
 *		Append the credential scope: date/region/service/aws4_request.
 */
static void
append_scope(Buf *buf, const SigV4Input *in)
{
	buf_append(buf, in->amz_date, SIGV4_DATE_LEN);
	buf_putc(buf, '/');
	buf_puts(buf, in->region);
	buf_putc(buf, '/');
	buf_puts(buf, in->service);
	buf_puts(buf, "/" SIGV4_TERMINATOR);
}

/*
 * sigv4_sign
 *		Sign one request; see sigv4.h for the contract.
 */
bool
sigv4_sign(const SigV4Input *in, SigV4Output *out, char *err, size_t errlen)
{
	Buf			signed_headers;
	unsigned char digest[SHA256_LEN];
	char		hex[2 * SHA256_LEN + 1];
	char		signature[2 * SHA256_LEN + 1];

	memset(out, 0, sizeof(*out));
	if (!check_input(in, err, errlen))
		return false;

	buf_init(&out->canonical_request);
	buf_init(&out->string_to_sign);
	buf_init(&out->authorization);
	buf_init(&signed_headers);

	/* The canonical request. */
	buf_puts(&out->canonical_request, in->method);
	buf_putc(&out->canonical_request, '\n');
	append_canonical_uri(&out->canonical_request, in->path,
						 in->normalize_path);
	buf_putc(&out->canonical_request, '\n');
	if (!append_canonical_query(&out->canonical_request, in->query,
								err, errlen))
		goto fail;
	buf_putc(&out->canonical_request, '\n');
	if (!append_canonical_headers(&out->canonical_request, &signed_headers,
								  in->headers, in->nheaders, err, errlen))
		goto fail;
	buf_putc(&out->canonical_request, '\n');
	buf_append(&out->canonical_request, signed_headers.data,
			   signed_headers.len);
	buf_putc(&out->canonical_request, '\n');
	if (!sha256(in->payload, in->payload_len, digest))
		goto crypto_fail;
	hex_encode(digest, SHA256_LEN, hex);
	buf_puts(&out->canonical_request, hex);

	/* The string to sign. */
	if (!sha256((const unsigned char *) out->canonical_request.data,
				out->canonical_request.len, digest))
		goto crypto_fail;
	hex_encode(digest, SHA256_LEN, hex);
	buf_puts(&out->string_to_sign, SIGV4_ALGORITHM "\n");
	buf_puts(&out->string_to_sign, in->amz_date);
	buf_putc(&out->string_to_sign, '\n');
	append_scope(&out->string_to_sign, in);
	buf_putc(&out->string_to_sign, '\n');
	buf_puts(&out->string_to_sign, hex);

	/* The Authorization header. */
	if (!derive_signature(in, &out->string_to_sign, signature))
		goto crypto_fail;
	buf_puts(&out->authorization, SIGV4_ALGORITHM " Credential=");
	buf_puts(&out->authorization, in->access_key);
	buf_putc(&out->authorization, '/');
	append_scope(&out->authorization, in);
	buf_puts(&out->authorization, ", SignedHeaders=");
	buf_append(&out->authorization, signed_headers.data, signed_headers.len);
	buf_puts(&out->authorization, ", Signature=");
	buf_puts(&out->authorization, signature);

	sfdw_free(signed_headers.data);
	return true;

crypto_fail:
	sfdw_set_error(err, errlen, "OpenSSL failed to compute SHA-256 or HMAC");
fail:
	sfdw_free(signed_headers.data);
	sigv4_output_free(out);
	return false;
}

/*
 * sigv4_output_free
 *		Release the buffers of a SigV4Output; see sigv4.h.
 */
void
sigv4_output_free(SigV4Output *out)
{
	if (out->canonical_request.data != NULL)
		sfdw_free(out->canonical_request.data);
	if (out->string_to_sign.data != NULL)
		sfdw_free(out->string_to_sign.data);
	if (out->authorization.data != NULL)
		sfdw_free(out->authorization.data);
	memset(out, 0, sizeof(*out));
}

/*
 * put_digits
 *		Write the width lowest decimal digits of value (>= 0) into out.
 *
 * Pads with leading zeros; writes no NUL.
 */
static void
put_digits(char *out, int value, int width)
{
	while (width-- > 0)
	{
		out[width] = (char) ('0' + value % 10);
		value /= 10;
	}
}

/*
 * sigv4_amz_date
 *		Format t as "YYYYMMDDTHHMMSSZ"; see sigv4.h.
 */
void
sigv4_amz_date(time_t t, char *out)
{
	struct tm	tm;

	if (gmtime_r(&t, &tm) == NULL ||
		tm.tm_year < -1900 || tm.tm_year > 9999 - 1900)
	{
		out[0] = '\0';
		return;
	}
	put_digits(out, tm.tm_year + 1900, 4);
	put_digits(out + 4, tm.tm_mon + 1, 2);
	put_digits(out + 6, tm.tm_mday, 2);
	out[8] = 'T';
	put_digits(out + 9, tm.tm_hour, 2);
	put_digits(out + 11, tm.tm_min, 2);
	put_digits(out + 13, tm.tm_sec, 2);
	out[15] = 'Z';
	out[16] = '\0';
}

/*
 * sigv4_sha256_hex
 *		Hex SHA-256 of data; see sigv4.h.
 */
void
sigv4_sha256_hex(const unsigned char *data, size_t len, char *out)
{
	unsigned char digest[SHA256_LEN];

	if (!sha256(data, len, digest))
	{
		out[0] = '\0';
		return;
	}
	hex_encode(digest, SHA256_LEN, out);
}

/* See sigv4.h. */
void
sigv4_post_input(SigV4Input *in, const SigV4Header *headers, int nheaders,
				 const char *body, size_t len, const char *access_key,
				 const char *secret_key, const char *region, const char *service,
				 const char *amz_date)
{
	memset(in, 0, sizeof(*in));
	in->method = "POST";
	in->path = "/";
	in->query = "";
	in->headers = headers;
	in->nheaders = nheaders;
	in->payload = (const unsigned char *) body;
	in->payload_len = len;
	in->access_key = access_key;
	in->secret_key = secret_key;
	in->region = region;
	in->service = service;
	in->amz_date = amz_date;
	in->normalize_path = true;
}
