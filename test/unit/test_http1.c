/*-------------------------------------------------------------------------
 *
 * test_http1.c
 *		Unit tests of the HTTP/1.1 framing (src/http1.c): the bytes of a
 *		request and their refusals, and the response parser over a table
 *		of answers, each fed whole, a byte at a time and cut in two at
 *		every offset, which must all read alike.
 *
 * Every buffer and response is freed again so that a leak checker sees
 * nothing.
 *
 *-------------------------------------------------------------------------
 */
#include "core/http1.h"
#include "unit.h"

/* The body limit of the cases that do not name one. */
#define DEFAULT_MAX_BODY (1024 * 1024)

/* What a run of the parser over one input gave. */
typedef struct Outcome
{
	Http1Result result;
	int			status;
	bool		keep_alive;
	bool		request_id;
	char		crc[16];
	char		content_type[64];
	Buf			body;
	size_t		used;			/* added up over the calls */
	size_t		received;
	char		err[SFDW_ERRLEN];
	bool		repeats;		/* later calls gave the same, taking nothing */
} Outcome;

/* One response to parse and what it must read as. */
typedef struct Case
{
	const char *name;
	const char *input;
	size_t		len;
	size_t		max_body;		/* 0: DEFAULT_MAX_BODY */
	bool		eof;			/* the connection closes after the input */
	Http1Result result;
	int			status;
	bool		keep_alive;
	const char *body;			/* NULL: "" */
	const char *crc;			/* NULL: "" */
	const char *content_type;	/* NULL: "" */
	bool		request_id;
	size_t		used;			/* of an answer DONE; 0: the whole input */
	const char *error;			/* a piece of the reason of an ERROR */
} Case;

/* The input of a case: a string literal, NUL bytes in it included. */
#define IN(s) .input = (s), .len = sizeof(s) - 1

/*
 * Run the parser over c's input cut into pieces: the first of first
 * bytes, then pieces of step bytes (0: the rest whole), then the close
 * of the connection if c says so.
 */
static void
run(const Case *c, size_t first, size_t step, Outcome *o)
{
	Http1Response r;
	size_t		pos = 0;
	size_t		piece = first < c->len ? first : c->len;
	size_t		used;
	char		again[SFDW_ERRLEN];

	memset(o, 0, sizeof(Outcome));
	http1_response_init(&r, c->max_body ? c->max_body : DEFAULT_MAX_BODY, NULL);
	for (;;)
	{
		o->result = http1_response_feed(&r, c->input + pos, piece, &used,
										o->err, sizeof(o->err));
		o->used += used;
		pos += piece;
		if (o->result != HTTP1_MORE || pos == c->len)
			break;
		piece = step == 0 || c->len - pos < step ? c->len - pos : step;
	}
	if (o->result == HTTP1_MORE && c->eof)
		o->result = http1_response_eof(&r, o->err, sizeof(o->err));

	o->repeats = true;
	if (o->result != HTTP1_MORE)
	{
		again[0] = '\0';
		o->repeats = http1_response_feed(&r, "HTTP/1.1 200 OK\r\n", 17, &used,
										 again, sizeof(again)) == o->result &&
			used == 0 &&
			(o->result == HTTP1_DONE || strcmp(again, o->err) == 0);
		again[0] = '\0';
		o->repeats = o->repeats &&
			http1_response_eof(&r, again, sizeof(again)) == o->result &&
			(o->result == HTTP1_DONE || strcmp(again, o->err) == 0);
	}
	o->status = r.status;
	o->keep_alive = r.keep_alive;
	o->request_id = r.request_id;
	memcpy(o->crc, r.crc, sizeof(o->crc));
	memcpy(o->content_type, r.content_type, sizeof(o->content_type));
	o->received = r.received;
	buf_init(&o->body);
	buf_append(&o->body, r.body.data, r.body.len);
	http1_response_free(&r);
}

/* Did two runs read alike? */
static bool
same_outcome(const Outcome *a, const Outcome *b)
{
	return a->result == b->result && a->status == b->status &&
		a->keep_alive == b->keep_alive && a->request_id == b->request_id &&
		strcmp(a->crc, b->crc) == 0 &&
		strcmp(a->content_type, b->content_type) == 0 &&
		a->body.len == b->body.len &&
		memcmp(a->body.data, b->body.data, a->body.len) == 0 &&
		strcmp(a->err, b->err) == 0 &&
		a->repeats == b->repeats &&
		(a->result != HTTP1_DONE ||
		 (a->used == b->used && a->received == b->received));
}

/* Print a run (fed as how says) that read otherwise than the whole input. */
static void
report_mismatch(const Case *c, const char *how, const Outcome *o)
{
	printf("     case \"%s\" %s: result %d, status %d, err \"%s\", body %zu bytes\n",
		   c->name, how, (int) o->result, o->status, o->err, o->body.len);
}

/*
 * Whether the cut at offset k is tried: every one of a short input, the
 * first and last few hundred and some between of a long one.
 */
static bool
cut_tried(size_t len, size_t k)
{
	return len <= 4096 || k < 300 || k + 300 > len || k % 509 == 0;
}

/* Run one case every way and check what it read. */
static void
check_case(const Case *c)
{
	Outcome		whole;
	Outcome		other;
	bool		alike = true;
	size_t		want_used = c->used ? c->used : c->len;

	run(c, c->len, 0, &whole);
	unit_check(whole.result == c->result, __FILE__, __LINE__, c->name);
	if (whole.result != c->result)
		printf("     result %d, reason \"%s\"\n", (int) whole.result, whole.err);
	if (c->result == HTTP1_DONE)
	{
		CHECK(whole.status == c->status);
		CHECK(whole.keep_alive == c->keep_alive);
		CHECK(whole.request_id == c->request_id);
		CHECK_STR(whole.body.data, c->body ? c->body : "");
		CHECK_STR(whole.crc, c->crc ? c->crc : "");
		CHECK_STR(whole.content_type, c->content_type ? c->content_type : "");
		CHECK(whole.used == want_used);
		CHECK(whole.received == want_used);
	}
	if (c->result == HTTP1_ERROR)
	{
		unit_check(strstr(whole.err, c->error) != NULL, __FILE__, __LINE__, c->name);
		if (strstr(whole.err, c->error) == NULL)
			printf("     reason \"%s\", wanted \"%s\" in it\n", whole.err, c->error);
		CHECK(!whole.keep_alive);
	}
	CHECK(whole.repeats);

	run(c, 1, 1, &other);
	if (!same_outcome(&whole, &other))
	{
		report_mismatch(c, "fed a byte at a time", &other);
		alike = false;
	}
	sfdw_free(other.body.data);
	unit_check(alike, __FILE__, __LINE__, "fed a byte at a time, it reads alike");

	alike = true;
	for (size_t k = 0; k <= c->len; k++)
	{
		if (!cut_tried(c->len, k))
			continue;
		run(c, k, 0, &other);
		if (alike && !same_outcome(&whole, &other))
		{
			char		how[64];

			snprintf(how, sizeof(how), "cut at %zu", k);
			report_mismatch(c, how, &other);
			alike = false;
		}
		sfdw_free(other.body.data);
	}
	unit_check(alike, __FILE__, __LINE__, "cut in two anywhere, it reads alike");
	sfdw_free(whole.body.data);
}

/* The responses of the table, each read every way. */
static void
test_responses(void)
{
	static const Case cases[] = {
		{.name = "DynamoDB answer with Content-Length",
			IN("HTTP/1.1 200 OK\r\n"
			   "Server: Server\r\n"
			   "Date: Mon, 01 Jan 2024 00:00:00 GMT\r\n"
			   "Content-Type: application/x-amz-json-1.0\r\n"
			   "Content-Length: 11\r\n"
			   "Connection: keep-alive\r\n"
			   "x-amzn-RequestId: 0K1TF3D3NLDIN6H0SQ5RVG2IBFVV4KQNSO5AEMVJF66Q9ASUAAJG\r\n"
			   "x-amz-crc32: 2745614147\r\n"
			   "\r\n"
			   "{\"Count\":0}"),
			.result = HTTP1_DONE, .status = 200, .keep_alive = true,
			.body = "{\"Count\":0}", .crc = "2745614147",
		.content_type = "application/x-amz-json-1.0", .request_id = true},
		{.name = "header names in any case, blanks around values",
			IN("HTTP/1.1 200 OK\r\n"
			   "CONTENT-TYPE:application/json ; charset=utf-8\r\n"
			   "X-AMZN-REQUESTID:\r\n"
			   "X-Amz-Crc32: \t 42abc \t\r\n"
			   "content-length:\t2 \r\n"
			   "\r\n"
			   "{}"),
			.result = HTTP1_DONE, .status = 200, .keep_alive = true,
			.body = "{}", .crc = "42", .content_type = "application/json",
		.request_id = true},
		{.name = "the last Content-Type and x-amz-crc32 count, cut to fit",
			IN("HTTP/1.1 200 OK\r\n"
			   "Content-Type: text/plain\r\n"
			   "Content-Type: application/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n"
			   "x-amz-crc32: 1\r\n"
			   "x-amz-crc32: 12345678901234567890\r\n"
			   "Content-Length: 0\r\n"
			   "\r\n"),
			.result = HTTP1_DONE, .status = 200, .keep_alive = true,
			.crc = "123456789012345",
		.content_type = "application/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"},
		{.name = "status line without a reason phrase",
			IN("HTTP/1.1 200\r\nContent-Length: 1\r\n\r\nx"),
			.result = HTTP1_DONE, .status = 200, .keep_alive = true, .body = "x"},
		{.name = "status line with an empty reason phrase, status 999",
			IN("HTTP/1.1 999 \r\nContent-Length: 1\r\n\r\nx"),
			.result = HTTP1_DONE, .status = 999, .keep_alive = true, .body = "x"},
		{.name = "a DynamoDB error answer",
			IN("HTTP/1.1 400 Bad Request\r\n"
			   "Content-Type: application/x-amz-json-1.0\r\n"
			   "Content-Length: 112\r\n"
			   "x-amzn-RequestId: X\r\n"
			   "x-amz-crc32: 3490421145\r\n"
			   "\r\n"
			   "{\"__type\":\"com.amazonaws.dynamodb.v20120810#ResourceNotFoundException\","
			   "\"message\":\"Requested resource not found\"}"),
			.result = HTTP1_DONE, .status = 400, .keep_alive = true,
			.body = "{\"__type\":\"com.amazonaws.dynamodb.v20120810#ResourceNotFoundException\","
			"\"message\":\"Requested resource not found\"}",
			.crc = "3490421145", .content_type = "application/x-amz-json-1.0",
		.request_id = true},
		{.name = "chunked, with extensions and trailers",
			IN("HTTP/1.1 200 OK\r\n"
			   "Transfer-Encoding: Chunked\r\n"
			   "Content-Type: application/json\r\n"
			   "\r\n"
			   "5;name=value\r\n"
			   "hello\r\n"
			   "6 ; a=\"b;c\"\r\n"
			   " world\r\n"
			   "000000000000000a\r\n"
			   "0123456789\r\n"
			   "0;last\r\n"
			   "x-amz-crc32: 77\r\n"
			   "Checksum: abc\r\n"
			   "\r\n"),
			.result = HTTP1_DONE, .status = 200, .keep_alive = true,
		.body = "hello world0123456789", .content_type = "application/json"},
		{.name = "chunked with bare LF line ends, upper-case hex",
			IN("HTTP/1.1 200 OK\nTransfer-Encoding: chunked\n\nA\n0123456789\n0\n\n"),
			.result = HTTP1_DONE, .status = 200, .keep_alive = true,
		.body = "0123456789"},
		{.name = "bare LF line ends",
			IN("HTTP/1.1 200 OK\nContent-Length: 3\nx-amz-crc32: 123\n\nabc"),
			.result = HTTP1_DONE, .status = 200, .keep_alive = true,
		.body = "abc", .crc = "123"},
		{.name = "HTTP/1.0 without keep-alive",
			IN("HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\nx"),
			.result = HTTP1_DONE, .status = 200, .keep_alive = false, .body = "x"},
		{.name = "HTTP/1.0 with keep-alive",
			IN("HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 1\r\n\r\nx"),
			.result = HTTP1_DONE, .status = 200, .keep_alive = true, .body = "x"},
		{.name = "HTTP/1.0 with keep-alive and close",
			IN("HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nConnection: close\r\n"
			   "Content-Length: 1\r\n\r\nx"),
			.result = HTTP1_DONE, .status = 200, .keep_alive = false, .body = "x"},
		{.name = "Connection: close among other tokens",
			IN("HTTP/1.1 200 OK\r\nConnection: Upgrade,, CLOSE \r\nContent-Length: 1\r\n\r\nx"),
			.result = HTTP1_DONE, .status = 200, .keep_alive = false, .body = "x"},
		{.name = "Connection tokens that are not close",
			IN("HTTP/1.1 200 OK\r\nConnection: closed, x-close\r\nContent-Length: 0\r\n\r\n"),
			.result = HTTP1_DONE, .status = 200, .keep_alive = true},
		{.name = "100-continue and 103 before the final answer",
			IN("HTTP/1.1 100 Continue\r\n\r\n"
			   "HTTP/1.1 103 Early Hints\r\n"
			   "x-amz-crc32: 9\r\n"
			   "Content-Length: 5\r\n"
			   "Content-Type: text/html\r\n"
			   "Connection: close\r\n"
			   "\r\n"
			   "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"),
			.result = HTTP1_DONE, .status = 200, .keep_alive = true, .body = "ok"},
		{.name = "101 switching protocols",
			IN("HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\n\r\n"),
		.result = HTTP1_ERROR, .error = "switched protocols"},
		{.name = "204 with a Content-Length",
			IN("HTTP/1.1 204 No Content\r\nContent-Length: 10\r\n\r\n"),
			.result = HTTP1_DONE, .status = 204, .keep_alive = true},
		{.name = "304 with a Content-Length over the limit",
			IN("HTTP/1.1 304 Not Modified\r\nContent-Length: 100\r\n\r\n"),
			.max_body = 10,
			.result = HTTP1_DONE, .status = 304, .keep_alive = true},
		{.name = "204 then more bytes",
			IN("HTTP/1.1 204 No Content\r\n\r\nHTTP/1.1 200 OK\r\n"),
			.result = HTTP1_DONE, .status = 204, .keep_alive = true, .used = 27},
		{.name = "body up to the close",
			IN("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nabc\r\ndef"),
			.eof = true,
			.result = HTTP1_DONE, .status = 200, .keep_alive = false,
		.body = "abc\r\ndef", .content_type = "text/plain"},
		{.name = "empty body up to the close",
			IN("HTTP/1.1 500 Internal Server Error\r\n\r\n"),
			.eof = true,
			.result = HTTP1_DONE, .status = 500, .keep_alive = false},
		{.name = "body up to the close, no close yet",
			IN("HTTP/1.1 200 OK\r\n\r\nabc"),
		.result = HTTP1_MORE},
		{.name = "body up to the close, over the limit",
			IN("HTTP/1.1 200 OK\r\n\r\n0123456789A"),
			.max_body = 10, .eof = true,
		.result = HTTP1_ERROR, .error = "the response body is larger than 10 bytes"},
		{.name = "body up to the close, at the limit",
			IN("HTTP/1.1 200 OK\r\n\r\n0123456789"),
			.max_body = 10, .eof = true,
			.result = HTTP1_DONE, .status = 200, .keep_alive = false,
		.body = "0123456789"},
		{.name = "close in the body",
			IN("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc"),
			.eof = true,
			.result = HTTP1_ERROR,
		.error = "the connection closed after 42 bytes, before the answer was complete"},
		{.name = "close in the headers",
			IN("HTTP/1.1 200 OK\r\nContent-Le"),
			.eof = true,
			.result = HTTP1_ERROR,
		.error = "the connection closed after 27 bytes, before the answer was complete"},
		{.name = "close in a chunk",
			IN("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel"),
			.eof = true,
		.result = HTTP1_ERROR, .error = "the connection closed after 53 bytes"},
		{.name = "close before the trailers end",
			IN("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n"),
			.eof = true,
		.result = HTTP1_ERROR, .error = "the connection closed after 60 bytes"},
		{.name = "close before any byte",
			IN(""),
			.eof = true,
		.result = HTTP1_ERROR, .error = "the connection closed before any answer"},
		{.name = "nothing yet",
			IN(""),
		.result = HTTP1_MORE},
		{.name = "Content-Length repeated, agreeing",
			IN("HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 3 , 3\r\n\r\nabc"),
			.result = HTTP1_DONE, .status = 200, .keep_alive = true, .body = "abc"},
		{.name = "Content-Length repeated, disagreeing",
			IN("HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd"),
		.result = HTTP1_ERROR, .error = "Content-Length 4 disagrees with Content-Length 3"},
		{.name = "Content-Length list, disagreeing",
			IN("HTTP/1.1 200 OK\r\nContent-Length: 3, 30\r\n\r\nabc"),
		.result = HTTP1_ERROR, .error = "disagrees"},
		{.name = "Content-Length with an empty element",
			IN("HTTP/1.1 200 OK\r\nContent-Length: 3,\r\n\r\nabc"),
		.result = HTTP1_ERROR, .error = "Content-Length \"3,\" is not a number"},
		{.name = "Content-Length not a number",
			IN("HTTP/1.1 200 OK\r\nContent-Length: abc\r\n\r\n"),
		.result = HTTP1_ERROR, .error = "Content-Length \"abc\" is not a number"},
		{.name = "Content-Length with a sign",
			IN("HTTP/1.1 200 OK\r\nContent-Length: +1\r\n\r\nx"),
		.result = HTTP1_ERROR, .error = "Content-Length \"+1\" is not a number"},
		{.name = "Content-Length negative",
			IN("HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n"),
		.result = HTTP1_ERROR, .error = "is not a number"},
		{.name = "Content-Length empty",
			IN("HTTP/1.1 200 OK\r\nContent-Length: \r\n\r\n"),
		.result = HTTP1_ERROR, .error = "Content-Length \"\" is not a number"},
		{.name = "Content-Length that overflows",
			IN("HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999999\r\n\r\n"),
		.result = HTTP1_ERROR, .error = "the response body is larger than 1048576 bytes"},
		{.name = "Content-Length over the limit",
			IN("HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\n0123456789A"),
			.max_body = 10,
		.result = HTTP1_ERROR, .error = "the response body is larger than 10 bytes"},
		{.name = "Content-Length at the limit, leading zeros",
			IN("HTTP/1.1 200 OK\r\nContent-Length: 0010\r\n\r\n0123456789"),
			.max_body = 10,
			.result = HTTP1_DONE, .status = 200, .keep_alive = true,
		.body = "0123456789"},
		{.name = "Content-Length and Transfer-Encoding",
			IN("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"
			   "0\r\n\r\n"),
		.result = HTTP1_ERROR, .error = "both Transfer-Encoding and Content-Length"},
		{.name = "Transfer-Encoding and Content-Length",
			IN("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n"
			   "0\r\n\r\n"),
		.result = HTTP1_ERROR, .error = "both Transfer-Encoding and Content-Length"},
		{.name = "Transfer-Encoding gzip",
			IN("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n"),
		.result = HTTP1_ERROR, .error = "unsupported transfer coding \"gzip\""},
		{.name = "Transfer-Encoding gzip, chunked",
			IN("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"),
		.result = HTTP1_ERROR, .error = "unsupported transfer coding \"gzip, chunked\""},
		{.name = "Transfer-Encoding chunked twice",
			IN("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n"
			   "Transfer-Encoding: chunked\r\n\r\n"),
		.result = HTTP1_ERROR, .error = "chunked comes twice"},
		{.name = "Transfer-Encoding in HTTP/1.0",
			IN("HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"),
		.result = HTTP1_ERROR, .error = "an HTTP/1.0 response has Transfer-Encoding"},
		{.name = "obsolete line folding",
			IN("HTTP/1.1 200 OK\r\nX-A: b\r\n c\r\nContent-Length: 0\r\n\r\n"),
		.result = HTTP1_ERROR, .error = "a header line is folded (begins with a blank): \" c\""},
		{.name = "obsolete line folding with a tab",
			IN("HTTP/1.1 200 OK\r\nX-A: b\r\n\tContent-Length: 5\r\n\r\n"),
		.result = HTTP1_ERROR, .error = "folded"},
		{.name = "header line without a colon",
			IN("HTTP/1.1 200 OK\r\nContent-Length 0\r\n\r\n"),
		.result = HTTP1_ERROR, .error = "a header line has no colon: \"Content-Length 0\""},
		{.name = "space before the colon",
			IN("HTTP/1.1 200 OK\r\nContent-Length : 0\r\n\r\n"),
		.result = HTTP1_ERROR, .error = "a header name is followed by a blank"},
		{.name = "tab before the colon",
			IN("HTTP/1.1 200 OK\r\nTransfer-Encoding\t: chunked\r\n\r\n"),
		.result = HTTP1_ERROR, .error = "followed by a blank"},
		{.name = "header without a name",
			IN("HTTP/1.1 200 OK\r\n: x\r\n\r\n"),
		.result = HTTP1_ERROR, .error = "a header line has no name"},
		{.name = "header name not a token",
			IN("HTTP/1.1 200 OK\r\nX(A): b\r\n\r\n"),
		.result = HTTP1_ERROR, .error = "a header name is not a token: \"X(A): b\""},
		{.name = "header name with a space",
			IN("HTTP/1.1 200 OK\r\nContent Length: 0\r\n\r\n"),
		.result = HTTP1_ERROR, .error = "not a token"},
		{.name = "bare CR in a header line",
			IN("HTTP/1.1 200 OK\r\nX-A: b\rContent-Length: 5\r\n\r\n"),
		.result = HTTP1_ERROR, .error = "a line holds a bare CR: \"X-A: b\\x0DContent-Length: 5\""},
		{.name = "CR CR LF",
			IN("HTTP/1.1 200 OK\r\nContent-Length: 0\r\r\n\r\n"),
		.result = HTTP1_ERROR, .error = "bare CR"},
		{.name = "NUL in a header value",
			IN("HTTP/1.1 200 OK\r\nX-A: b\0c\r\n\r\n"),
		.result = HTTP1_ERROR, .error = "a line holds a NUL byte: \"X-A: b\\x00c\""},
		{.name = "bare CR in the reason phrase",
			IN("HTTP/1.1 200 O\rK\r\n\r\n"),
		.result = HTTP1_ERROR, .error = "bare CR"},
		{.name = "interim answer's bad header",
			IN("HTTP/1.1 100 Continue\r\nX A: b\r\n\r\nHTTP/1.1 200 OK\r\n\r\n"),
		.result = HTTP1_ERROR, .error = "not a token"},
		{.name = "bad chunk size",
			IN("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"),
		.result = HTTP1_ERROR, .error = "chunk size \"zz\" is not hexadecimal"},
		{.name = "chunk size with a sign",
			IN("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n-5\r\n"),
		.result = HTTP1_ERROR, .error = "chunk size \"-5\" is not hexadecimal"},
		{.name = "chunk size followed by junk",
			IN("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5 x\r\nhello\r\n0\r\n\r\n"),
		.result = HTTP1_ERROR, .error = "chunk size \"5 x\" is not hexadecimal"},
		{.name = "empty chunk size",
			IN("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\r\n"),
		.result = HTTP1_ERROR, .error = "chunk size \"\" is not hexadecimal"},
		{.name = "chunk size of 17 hex digits",
			IN("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n00000000000000001\r\nx\r\n"),
		.result = HTTP1_ERROR, .error = "has more than 16 hex digits"},
		{.name = "chunk size of 16 hex digits, over the limit",
			IN("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffff\r\nx\r\n"),
		.result = HTTP1_ERROR, .error = "the response body is larger than 1048576 bytes"},
		{.name = "chunk data not followed by CRLF",
			IN("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcX\r\n0\r\n\r\n"),
		.result = HTTP1_ERROR, .error = "the chunk data is not followed by CRLF"},
		{.name = "chunk data followed by CR CR",
			IN("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\r\n0\r\n\r\n"),
		.result = HTTP1_ERROR, .error = "not followed by CRLF"},
		{.name = "chunked data over the limit",
			IN("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n6\r\n012345\r\n5\r\n6789A\r\n0\r\n\r\n"),
			.max_body = 10,
		.result = HTTP1_ERROR, .error = "the response body is larger than 10 bytes"},
		{.name = "chunked data at the limit",
			IN("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n6\r\n012345\r\n4\r\n6789\r\n0\r\n\r\n"),
			.max_body = 10,
			.result = HTTP1_DONE, .status = 200, .keep_alive = true,
		.body = "0123456789"},
		{.name = "bad trailer",
			IN("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nbroken\r\n\r\n"),
		.result = HTTP1_ERROR, .error = "a header line has no colon: \"broken\""},
		{.name = "bytes after the end",
			IN("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 200 OK\r\n"),
			.result = HTTP1_DONE, .status = 200, .keep_alive = true, .body = "ok",
		.used = 40},
		{.name = "bytes after the chunked end",
			IN("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n\r\n"),
			.result = HTTP1_DONE, .status = 200, .keep_alive = true, .body = "ok",
		.used = 59},
		{.name = "SSH banner",
			IN("SSH-2.0-OpenSSH_8.9p1 Ubuntu-3ubuntu0.6\r\n"),
		.result = HTTP1_ERROR,
		.error = "the status line is not HTTP/1.x: \"SSH-2.0-OpenSSH_8.9p1 Ubuntu-3ubuntu0.6\""},
		{.name = "HTML without a line end",
			IN("<html><head><title>Welcome to nginx!</title></head><body>"),
		.result = HTTP1_ERROR,
		.error = "the status line is not HTTP/1.x: \"<html><head><title>Welcome to nginx!</ti...\""},
		{.name = "a first line of 41 bytes, CRLF",
			IN("<html><head><title>Welcome to nginx!</tit\r\n"),
		.result = HTTP1_ERROR,
		.error = "the status line is not HTTP/1.x: \"<html><head><title>Welcome to nginx!</ti...\""},
		{.name = "a first line of 40 bytes, CRLF",
			IN("<html><head><title>Welcome to nginx!</ti\r\n"),
		.result = HTTP1_ERROR,
		.error = "the status line is not HTTP/1.x: \"<html><head><title>Welcome to nginx!</ti\""},
		{.name = "a short first line, no line end yet",
			IN("<html>"),
		.result = HTTP1_MORE},
		{.name = "a short first line, then the close",
			IN("<html>"),
			.eof = true,
		.result = HTTP1_ERROR, .error = "the connection closed after 6 bytes"},
		{.name = "TLS alert",
			IN("\x15\x03\x03\x00\x02\x02\x46\n"),
		.result = HTTP1_ERROR, .error = "not HTTP/1.x: \"\\x15\\x03\\x03\\x00\\x02\\x02F\""},
		{.name = "HTTP/2",
			IN("HTTP/2 200\r\n\r\n"),
		.result = HTTP1_ERROR, .error = "the status line is not HTTP/1.x: \"HTTP/2 200\""},
		{.name = "HTTP/1.2",
			IN("HTTP/1.2 200 OK\r\n\r\n"),
		.result = HTTP1_ERROR, .error = "not HTTP/1.x"},
		{.name = "lower-case http",
			IN("http/1.1 200 OK\r\n\r\n"),
		.result = HTTP1_ERROR, .error = "not HTTP/1.x"},
		{.name = "two-digit status",
			IN("HTTP/1.1 20 OK\r\n\r\n"),
		.result = HTTP1_ERROR, .error = "not HTTP/1.x"},
		{.name = "status 099",
			IN("HTTP/1.1 099 X\r\n\r\n"),
		.result = HTTP1_ERROR, .error = "not HTTP/1.x"},
		{.name = "no space after the status",
			IN("HTTP/1.1 200OK\r\n\r\n"),
		.result = HTTP1_ERROR, .error = "not HTTP/1.x"},
		{.name = "version only",
			IN("HTTP/1.1\r\n\r\n"),
		.result = HTTP1_ERROR, .error = "not HTTP/1.x: \"HTTP/1.1\""},
		{.name = "an empty line first",
			IN("\r\nHTTP/1.1 200 OK\r\n\r\n"),
		.result = HTTP1_ERROR, .error = "not HTTP/1.x: \"\""},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_case(&cases[i]);
}

/*
 * Append to b header lines "x-pad: aaa..." of size bytes in all (0, or 9
 * and more).
 */
static void
pad_headers(Buf *b, size_t size)
{
	while (size > 0)
	{
		size_t		line = size > 1009 ? 1000 : size;

		buf_puts(b, "x-pad: ");
		for (size_t k = 0; k < line - 9; k++)
			buf_putc(b, 'a');
		buf_puts(b, "\r\n");
		size -= line;
	}
}

/*
 * Write into b a response with no body whose header section is size bytes:
 * the status line of status, Content-Length: 0, padding and the empty line.
 */
static void
padded_response(Buf *b, const char *status, size_t size)
{
	size_t		start = b->len;

	buf_printf(b, "HTTP/1.1 %s OK\r\nContent-Length: 0\r\n", status);
	pad_headers(b, size - (b->len - start) - 2);
	buf_puts(b, "\r\n");
}

/*
 * Write into b a chunked response whose header section is 1048 bytes,
 * with a body "x" and trailer lines of size bytes.
 */
static void
trailed_response(Buf *b, size_t size)
{
	buf_puts(b, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n");
	pad_headers(b, 1001);
	buf_puts(b, "\r\n1\r\nx\r\n0\r\n");
	pad_headers(b, size);
	buf_puts(b, "\r\n");
}

/*
 * Write into b a chunked response whose first chunk-size line is size
 * bytes, its extension of e's making up the length.
 */
static void
chunk_line_response(Buf *b, size_t size)
{
	buf_puts(b, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1;");
	for (size_t k = 0; k < size - 4; k++)
		buf_putc(b, 'e');
	buf_puts(b, "\r\nx\r\n0\r\n\r\n");
}

/* Run check_case over a response built in b; b is emptied after. */
static void
check_built(Case *c, Buf *b, const char *name, Http1Result result,
			const char *body, const char *error)
{
	c->name = name;
	c->input = b->data;
	c->len = b->len;
	c->result = result;
	c->status = 200;
	c->keep_alive = true;
	c->body = body;
	c->error = error;
	check_case(c);
	buf_reset(b);
}

/* The limits on the header section and on chunk-size lines. */
static void
test_limits(void)
{
	static const char too_long[] = "the header section is longer than 65536 bytes";
	Buf			b;
	Case		c;

	memset(&c, 0, sizeof(c));
	buf_init(&b);

	padded_response(&b, "200", HTTP1_MAX_HEADER_SECTION);
	CHECK(b.len == HTTP1_MAX_HEADER_SECTION);
	check_built(&c, &b, "a header section of 65536 bytes", HTTP1_DONE, NULL, NULL);

	padded_response(&b, "200", HTTP1_MAX_HEADER_SECTION + 1);
	CHECK(b.len == HTTP1_MAX_HEADER_SECTION + 1);
	check_built(&c, &b, "a header section of 65537 bytes", HTTP1_ERROR, NULL,
				too_long);

	/* each interim answer has a section of its own */
	padded_response(&b, "100", HTTP1_MAX_HEADER_SECTION);
	padded_response(&b, "102", HTTP1_MAX_HEADER_SECTION);
	buf_puts(&b, "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx");
	check_built(&c, &b, "interim header sections of 65536 bytes", HTTP1_DONE,
				"x", NULL);

	padded_response(&b, "100", HTTP1_MAX_HEADER_SECTION + 1);
	check_built(&c, &b, "an interim header section of 65537 bytes", HTTP1_ERROR,
				NULL, too_long);

	/* one line with no end in sight */
	buf_puts(&b, "HTTP/1.1 200 OK\r\nx-long: ");
	while (b.len <= HTTP1_MAX_HEADER_SECTION + 10)
		buf_puts(&b, "0123456789");
	check_built(&c, &b, "a header line longer than a section", HTTP1_ERROR, NULL,
				too_long);

	/* trailers count toward the section of the headers */
	trailed_response(&b, HTTP1_MAX_HEADER_SECTION - 1050);
	check_built(&c, &b, "trailers up to the section's limit", HTTP1_DONE, "x", NULL);
	trailed_response(&b, HTTP1_MAX_HEADER_SECTION - 1049);
	check_built(&c, &b, "trailers over the section's limit", HTTP1_ERROR, NULL,
				too_long);

	chunk_line_response(&b, HTTP1_MAX_CHUNK_LINE);
	check_built(&c, &b, "a chunk-size line of 4096 bytes", HTTP1_DONE, "x", NULL);
	chunk_line_response(&b, HTTP1_MAX_CHUNK_LINE + 1);
	check_built(&c, &b, "a chunk-size line of 4097 bytes", HTTP1_ERROR, NULL,
				"a chunk-size line is longer than 4096 bytes");
	sfdw_free(b.data);
}

/* A large body fed in socket-sized reads lands whole. */
static void
test_large_body(void)
{
	Http1Response r;
	Buf			in;
	size_t		used;
	size_t		pos = 0;
	char		err[SFDW_ERRLEN];
	Http1Result res = HTTP1_MORE;

	buf_init(&in);
	buf_puts(&in, "HTTP/1.1 200 OK\r\nContent-Length: 300000\r\n\r\n");
	for (int i = 0; i < 300000; i++)
		buf_putc(&in, (char) ('a' + i % 26));
	http1_response_init(&r, 300000, NULL);
	while (res == HTTP1_MORE && pos < in.len)
	{
		size_t		n = in.len - pos < 16384 ? in.len - pos : 16384;

		res = http1_response_feed(&r, in.data + pos, n, &used, err, sizeof(err));
		pos += used;
	}
	CHECK(res == HTTP1_DONE);
	CHECK(pos == in.len);
	CHECK(r.body.len == 300000);
	CHECK(r.body.data[r.body.len] == '\0');
	CHECK(memcmp(r.body.data, in.data + in.len - 300000, 300000) == 0);
	http1_response_free(&r);
	http1_response_free(&r);
	sfdw_free(in.data);
}

/* A typical DynamoDB request, byte for byte. */
static void
test_write_request(void)
{
	static const SigV4Header hdrs[] = {
		{"host", "dynamodb.eu-west-1.amazonaws.com"},
		{"content-type", "application/x-amz-json-1.0"},
		{"x-amz-date", "20240101T000000Z"},
		{"x-amz-security-token", ""},
		{"x-amz-target", "DynamoDB_20120810.GetItem"},
		{"authorization",
			"AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20240101/eu-west-1/dynamodb/aws4_request, "
			"SignedHeaders=content-type;host;x-amz-date;x-amz-target, "
		"Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7"},
	};
	static const char body[] = "{\"TableName\":\"orders\",\"Key\":{\"pk\":{\"S\":\"a\"}}}";
	static const char want[] =
	"POST / HTTP/1.1\r\n"
	"host: dynamodb.eu-west-1.amazonaws.com\r\n"
	"content-type: application/x-amz-json-1.0\r\n"
	"x-amz-date: 20240101T000000Z\r\n"
	"x-amz-target: DynamoDB_20120810.GetItem\r\n"
	"authorization: AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20240101/eu-west-1/dynamodb/aws4_request, "
	"SignedHeaders=content-type;host;x-amz-date;x-amz-target, "
	"Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7\r\n"
	"Content-Length: 45\r\n"
	"\r\n"
	"{\"TableName\":\"orders\",\"Key\":{\"pk\":{\"S\":\"a\"}}}";
	Buf			out;
	char		err[SFDW_ERRLEN] = "";

	buf_init(&out);
	CHECK(http1_write_request(&out, "/", hdrs, 6, body, sizeof(body) - 1,
							  err, sizeof(err)));
	CHECK_STR(out.data, want);
	CHECK(out.len == sizeof(want) - 1);

	/* appended after what out holds; no headers, no body */
	buf_reset(&out);
	buf_puts(&out, "before|");
	CHECK(http1_write_request(&out, "/a/b%20c?x=1", hdrs, 0, NULL, 0,
							  err, sizeof(err)));
	CHECK_STR(out.data, "before|POST /a/b%20c?x=1 HTTP/1.1\r\nContent-Length: 0\r\n\r\n");

	/* a body with NUL bytes is sent whole */
	buf_reset(&out);
	CHECK(http1_write_request(&out, "/", hdrs + 2, 1, "a\0b", 3, err, sizeof(err)));
	CHECK(out.len == 71);
	CHECK(memcmp(out.data + out.len - 24, "Content-Length: 3\r\n\r\na\0b", 24) == 0);
	sfdw_free(out.data);
}

/* Requests refused, out left as it was, no value shown. */
static void
test_write_request_refused(void)
{
	static const struct
	{
		const char *path;
		const char *name;
		const char *value;
		const char *error;
	}			cases[] = {
		{"/", "x-amz-security-token", "secret\r\nx-evil: 1", "value of request header \"x-amz-security-token\" holds a CR or an LF"},
		{"/", "authorization", "secret\n", "holds a CR or an LF"},
		{"/", "authorization", "\rsecret", "holds a CR or an LF"},
		{"/", "x-a\r\nx-evil", "1", "the request header name \"x-a\\x0D\\x0Ax-evil\" holds a character that is not a token character"},
		{"/", "x-a\n", "1", "not a token character"},
		{"/", "x a", "1", "not a token character"},
		{"/", "x-a:", "1", "not a token character"},
		{"/", "x-\303\251", "1", "not a token character"},
		{"/", "", "1", "a request header name is empty"},
		{"/", "", "", "a request header name is empty"},
		{"", "host", "h", "the request path \"\" does not start with '/'"},
		{"x/", "host", "h", "does not start with '/'"},
		{"/a b", "host", "h", "the request path \"/a b\" holds a control character or a space"},
		{"/a\tb", "host", "h", "holds a control character or a space"},
		{"/a\r\nx-evil: 1", "host", "h", "holds a control character or a space"},
		{"/\177", "host", "h", "holds a control character or a space"},
	};
	Buf			out;

	buf_init(&out);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
	{
		SigV4Header hdrs[3] = {
			{"host", "h"},
			{cases[i].name, cases[i].value},
			{"x-amz-target", "t"},
		};
		char		err[SFDW_ERRLEN] = "";

		buf_reset(&out);
		buf_puts(&out, "kept");
		CHECK(!http1_write_request(&out, cases[i].path, hdrs, 3, "{}", 2,
								   err, sizeof(err)));
		CHECK_STR(out.data, "kept");
		CHECK(out.len == 4);
		unit_check(strstr(err, cases[i].error) != NULL, __FILE__, __LINE__,
				   cases[i].error);
		if (strstr(err, cases[i].error) == NULL)
			printf("     reason \"%s\"\n", err);
		CHECK(strstr(err, "secret") == NULL);
	}
	sfdw_free(out.data);
}

/* The Date header is kept whole; an HTTP date reads as its time. */
static void
test_date(void)
{
	static const char answer[] =
		"HTTP/1.1 400 Bad Request\r\nDate:  Sat, 28 Nov 2026 22:50:00 GMT \r\n"
		"Content-Length: 0\r\n\r\n";
	static const char long_date[] =
		"HTTP/1.1 200 OK\r\nDate: Saturday, 28-Nov-2026 22:50:00 GMT, or so\r\n"
		"Content-Length: 0\r\n\r\n";
	/* calendar.timegm(email.utils.parsedate(s)) */
	static const struct
	{
		const char *date;
		int64_t		epoch;
	}			dates[] = {
		{"Sun, 06 Nov 1994 08:49:37 GMT", 784111777},
		{"Thu, 01 Jan 1970 00:00:00 GMT", 0},
		{"Tue, 29 Feb 2000 23:59:59 GMT", 951868799},
		{"Sat, 28 Nov 2026 22:50:00 GMT", 1795906200},
		{"Mon, 01 Mar 2100 12:00:00 GMT", 4107585600},
		{"Fri, 31 Dec 2038 01:02:03 GMT", 2177370123},
	};
	static const char *const refused[] = {
		"", "Sun, 06 Nov 1994 08:49:37 UTC", "Sunday, 06-Nov-94 08:49:37 GMT",
		"Sun Nov  6 08:49:37 1994", "Sun, 6 Nov 1994 08:49:37 GMT",
		"Sun, 06 Nov 1994 08:49:37 GMT ", "Sun, 06 Xyz 1994 08:49:37 GMT",
		"Sun, 06 Nov 1994 24:00:00 GMT", "Sun, 00 Nov 1994 08:49:37 GMT",
		"Sun, 06 Nov 1969 23:59:59 GMT", "Dim, 06 Nov 1994 08:49:37 GMT",
		"Sun, 06 Nov 19a4 08:49:37 GMT", "Sun; 06 Nov 1994 08:49:37 GMT",
	};
	Http1Response r;
	size_t		used;
	char		err[SFDW_ERRLEN];
	int64_t		epoch;

	http1_response_init(&r, DEFAULT_MAX_BODY, NULL);
	CHECK(http1_response_feed(&r, answer, sizeof(answer) - 1, &used, err, sizeof(err)) == HTTP1_DONE);
	CHECK_STR(r.date, "Sat, 28 Nov 2026 22:50:00 GMT");
	http1_response_reset(&r);
	CHECK(http1_response_feed(&r, long_date, sizeof(long_date) - 1, &used, err, sizeof(err)) == HTTP1_DONE);
	CHECK_STR(r.date, "");
	http1_response_free(&r);
	for (size_t i = 0; i < sizeof(dates) / sizeof(dates[0]); i++)
	{
		epoch = -1;
		CHECK(http1_parse_date(dates[i].date, &epoch));
		CHECK(epoch == dates[i].epoch);
	}
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		CHECK(!http1_parse_date(refused[i], &epoch));
}

void
suite_http1(void)
{
	test_write_request();
	test_write_request_refused();
	test_responses();
	test_limits();
	test_large_body();
	test_date();
}
