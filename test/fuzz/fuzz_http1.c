/*-------------------------------------------------------------------------
 *
 * fuzz_http1.c
 *		libFuzzer target: the input as an HTTP/1.1 response through the
 *		parser of http1.c, and pieces of it as the path and headers of a
 *		request through http1_write_request.
 *
 * The response is fed twice, whole and cut into pieces (empty ones
 * among them) whose sizes come from a running hash of the input's bytes,
 * then the connection is closed if the answer is not whole yet.  Beyond
 * "no crash, no leak, no undefined behaviour" it checks what the
 * transport relies on: both feedings read alike (result, reason, status,
 * keep_alive, x-amz-crc32, Content-Type, request id, body and, once DONE,
 * the bytes taken), a body never outgrows the limit and stays
 * NUL-terminated, and DONE takes no more bytes than it was given.  A
 * request is only written when its path and header names are valid and
 * no header value holds a CR or an LF, with exactly one line a header
 * whose value is not empty; a refused one leaves the buffer as it was.
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>
#include <string.h>

#include "core/http1.h"

/* A small limit, so that bodies reach it. */
#define MAX_BODY 4096

/* The most bytes of the input a request's path or header takes. */
#define PIECE_MAX 64

/* One feeding of the response and what it read. */
typedef struct Run
{
	Http1Response r;
	Http1Result result;
	size_t		used;			/* added up over the calls */
	char		err[SFDW_ERRLEN];
} Run;

/*
 * Feed the size bytes of data to a new response: whole when cut is false,
 * else in pieces of 0 to 4 bytes, now and then up to 700.
 */
static void
feed(Run *run, const char *data, size_t size, bool cut)
{
	size_t		pos = 0;
	unsigned	hash = (unsigned) size;

	http1_response_init(&run->r, MAX_BODY, NULL);
	run->result = HTTP1_MORE;
	run->used = 0;
	run->err[0] = '\0';
	while (pos < size && run->result == HTTP1_MORE)
	{
		size_t		piece = size - pos;
		size_t		used;

		if (cut)
		{
			hash = hash * 33 + (unsigned char) data[pos];
			piece = (hash >> 3) % 8 == 0 ? (hash >> 8) % 700 : (hash >> 8) % 5;
			if (piece > size - pos)
				piece = size - pos;
		}
		run->result = http1_response_feed(&run->r, data + pos, piece, &used,
										  run->err, sizeof(run->err));
		if (run->result == HTTP1_DONE && used > piece)
			abort();
		run->used += used;
		pos += piece;
	}
	if (run->result == HTTP1_MORE)
		run->result = http1_response_eof(&run->r, run->err, sizeof(run->err));
}

/* Abort unless two feedings read alike and within the limits. */
static void
compare(const Run *a, const Run *b, size_t size)
{
	const Http1Response *x = &a->r;
	const Http1Response *y = &b->r;

	if (a->result != b->result || strcmp(a->err, b->err) != 0 ||
		x->status != y->status || x->keep_alive != y->keep_alive ||
		x->request_id != y->request_id || strcmp(x->crc, y->crc) != 0 ||
		strcmp(x->content_type, y->content_type) != 0 ||
		x->body.len != y->body.len ||
		memcmp(x->body.data, y->body.data, x->body.len) != 0)
		abort();
	if (x->body.len > MAX_BODY || x->body.data[x->body.len] != '\0')
		abort();
	if (a->result == HTTP1_DONE &&
		(a->used != b->used || a->used > size || x->received != a->used ||
		 y->received != b->used || x->status < 200 || x->status > 999))
		abort();
	if (a->result == HTTP1_ERROR && (a->err[0] == '\0' || x->keep_alive))
		abort();
}

/* A NUL-terminated copy of at most PIECE_MAX bytes of data from *pos on. */
static char *
take_piece(const char *data, size_t size, size_t *pos)
{
	size_t		len = size - *pos < PIECE_MAX ? size - *pos : PIECE_MAX;
	char	   *piece = sfdw_strndup(data + *pos, len);

	*pos += len;
	return piece;
}

/* Is name an RFC 9110 token? */
static bool
is_token(const char *name)
{
	static const char tchar[] = "!#$%&'*+-.^_`|~0123456789"
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

	return name[0] != '\0' && strspn(name, tchar) == strlen(name);
}

/* Write a request of the input's pieces; abort on what must be refused. */
static void
write_request(const char *data, size_t size)
{
	size_t		pos = 0;
	char	   *path = take_piece(data, size, &pos);
	char	   *name = take_piece(data, size, &pos);
	char	   *value = take_piece(data, size, &pos);
	char	   *token = take_piece(data, size, &pos);
	SigV4Header hdrs[4] = {
		{"host", "dynamodb.us-east-1.amazonaws.com"},
		{name, "1"},
		{"x-amz-security-token", token},
		{"authorization", value},
	};
	char		err[SFDW_ERRLEN];
	Buf			out;
	bool		valid;
	size_t		lines = 3;		/* the request line, Content-Length, the end */
	size_t		crlfs = 0;

	valid = path[0] == '/' && is_token(name);
	for (const char *c = path; *c; c++)
		valid = valid && (unsigned char) *c > ' ' && *c != 0x7F;
	for (int i = 0; i < 4; i++)
	{
		valid = valid && strpbrk(hdrs[i].value, "\r\n") == NULL;
		lines += hdrs[i].value[0] != '\0';
	}

	buf_init(&out);
	buf_puts(&out, "keep");
	if (http1_write_request(&out, path, hdrs, 4, "{}", 2, err, sizeof(err)))
	{
		if (!valid || memcmp(out.data, "keepPOST ", 9) != 0)
			abort();
		for (const char *c = out.data; (c = strstr(c, "\r\n")) != NULL; c += 2)
			crlfs++;
		if (crlfs != lines)
			abort();
	}
	else if (valid || out.len != 4 || strcmp(out.data, "keep") != 0 ||
			 memchr(err, '\0', sizeof(err)) == NULL)
		abort();
	sfdw_free(out.data);
	sfdw_free(path);
	sfdw_free(name);
	sfdw_free(value);
	sfdw_free(token);
}

int
LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	const char *text = (const char *) data;
	Run			whole;
	Run			pieces;

	feed(&whole, text, size, false);
	feed(&pieces, text, size, true);
	compare(&whole, &pieces, size);
	http1_response_free(&whole.r);
	http1_response_free(&pieces.r);
	write_request(text, size);
	return 0;
}
