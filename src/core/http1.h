/*-------------------------------------------------------------------------
 *
 * http1.h
 *		HTTP/1.1 framing of a client on a kept-alive connection: the bytes
 *		of a POST request, and a parser of the response fed the bytes as
 *		they arrive.
 *
 * Plain C (see pure.h): no I/O here.  The caller writes the request's
 * bytes to the connection and feeds what it reads back, in pieces of any
 * size, to http1_response_feed until the answer is whole.
 *
 * The parser reads RFC 9112 as a client must, strict wherever laxness
 * would let a response be framed two ways (smuggled): Content-Length
 * holds digits only and every copy of it agrees, chunked is the only
 * transfer coding, Transfer-Encoding and Content-Length never come
 * together, bare CRs, NUL bytes, obsolete line folding and blanks before
 * a header's colon are refused.  It is lenient where real servers are
 * sloppy: a bare LF ends a line, the reason phrase may be missing.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHARD_FDW_HTTP1_H
#define SHARD_FDW_HTTP1_H

#include "core/pure.h"
#include "core/sigv4.h"

/*
 * The longest header section of a response, status line and final empty
 * line included; the trailers of a chunked body count toward that of the
 * final response.
 */
#define HTTP1_MAX_HEADER_SECTION 65536

/* The longest line of a chunk's size and extensions, line end included. */
#define HTTP1_MAX_CHUNK_LINE 4096

/*
 * http1_write_request
 *		Append a POST request to out: "POST <path> HTTP/1.1", a
 *		"<name>: <value>" line for each of the nhdrs headers in the order
 *		given (one whose value is "" is left out), Content-Length, the empty
 *		line and body_len bytes of body.
 *
 * Returns false, with out as it was and a reason in err, when path does
 * not start with '/' or holds a control character or a space, when a
 * header name is empty or holds a byte that is not an RFC 9110 token
 * character, or when a value holds a CR or an LF (a value never makes a
 * header of its own).  A reason never quotes a value: values carry
 * credentials.
 */
extern bool http1_write_request(Buf *out, const char *path,
								const SigV4Header *hdrs, int nhdrs,
								const char *body, size_t body_len,
								char *err, size_t errlen);

/*
 * http1_url_host
 *		The host (and port) of an http(s) URL as its Host header says it:
 *		what follows "://" up to the first '/' (the whole URL when there is
 *		no "://"), allocated with sfdw_alloc.
 */
extern char *http1_url_host(const char *url);

/*
 * http1_parse_date
 *		The time an HTTP date (IMF-fixdate, "Sun, 06 Nov 1994 08:49:37 GMT",
 *		the form servers send) stands for, in seconds since the epoch;
 *		false for anything else.
 */
extern bool http1_parse_date(const char *s, int64_t *epoch);

typedef enum Http1Result
{
	HTTP1_MORE,					/* the answer is not whole yet */
	HTTP1_DONE,					/* the answer is whole */
	HTTP1_ERROR					/* the answer is malformed or cut short */
} Http1Result;

/* Where a response's parse stands (private to http1.c). */
typedef enum Http1State
{
	HTTP1_STATUS_LINE,
	HTTP1_HEADERS,
	HTTP1_BODY_LENGTH,
	HTTP1_BODY_TO_CLOSE,
	HTTP1_CHUNK_SIZE,
	HTTP1_CHUNK_DATA,
	HTTP1_CHUNK_END,
	HTTP1_TRAILERS,
	HTTP1_FINISHED,
	HTTP1_FAILED
} Http1State;

/* One response being read. */
typedef struct Http1Response
{
	/* what was read, valid once HTTP1_DONE */
	int			status;			/* the final status code, 200..999 */
	bool		keep_alive;		/* the connection may carry another request */
	bool		request_id;		/* an x-amzn-RequestId header came */
	char		crc[16];		/* x-amz-crc32's leading digits as received,
								 * "" if none */
	char		content_type[64];	/* Content-Type up to ';', blanks
									 * trimmed, "" if none, cut to fit */
	char		date[32];		/* Date, blanks trimmed, "" if none or
								 * longer than an HTTP date */
	Buf			body;			/* the body, decoded when chunked */
	size_t		received;		/* bytes of the response taken so far,
								 * headers included */

	/* parser state: private to http1.c */
	Http1State	state;
	size_t		max_body;
	int			minor;			/* the x of the status line's HTTP/1.x */
	bool		interim;		/* the header section is of a 1xx answer */
	bool		conn_close;		/* Connection: close came */
	bool		conn_keep_alive;	/* Connection: keep-alive came */
	bool		chunked;		/* Transfer-Encoding: chunked came */
	bool		has_length;		/* Content-Length came */
	size_t		length;			/* its value */
	size_t		section;		/* bytes of the header section so far */
	size_t		remaining;		/* bytes left of the body or the chunk */
	bool		chunk_cr;		/* the CR after a chunk's data came */
	Buf			line;			/* a line begun in an earlier feed; no
								 * storage until one is */
	bool		line_whole;		/* line holds a whole line, taken */
	SfdwArena  *arena;			/* where body and line live */
	char		error[SFDW_ERRLEN]; /* the reason, once HTTP1_FAILED */
} Http1Response;

/*
 * http1_response_init
 *		Start reading a response whose body may be at most max_body bytes.
 *
 * Its memory (the body, and a line cut across feeds, held from the first
 * time one is) lives in arena, whichever arena is current when it is fed;
 * it is released by http1_response_free, or with the arena.
 */
extern void http1_response_init(Http1Response *r, size_t max_body,
								SfdwArena *arena);

/*
 * http1_response_reset
 *		Start reading another response into r, as http1_response_init
 *		would with the same max_body and arena, keeping the memory r
 *		already holds: it allocates nothing.
 */
extern void http1_response_reset(Http1Response *r);

/*
 * http1_response_free
 *		Release the memory of a response (the body's included).
 */
extern void http1_response_free(Http1Response *r);

/*
 * http1_response_feed
 *		Take the next n bytes of the response.
 *
 * Returns HTTP1_MORE when they were all taken and the response is not
 * whole yet; HTTP1_DONE when it is, with *used the bytes of the n that
 * belong to it (bytes after its end are left alone); HTTP1_ERROR with a
 * one-line reason in err when the response is malformed or its body
 * larger than max_body.  On HTTP1_MORE *used is n, on HTTP1_ERROR 0.
 *
 * The result is the same however the response is cut into pieces.  Once
 * the result is HTTP1_DONE or HTTP1_ERROR, every later call returns it
 * again (with the same reason) and takes nothing.
 */
extern Http1Result http1_response_feed(Http1Response *r, const char *data,
									   size_t n, size_t *used,
									   char *err, size_t errlen);

/*
 * http1_response_eof
 *		The peer closed the connection.
 *
 * Returns HTTP1_DONE when the response was whole already or its body is
 * delimited by the close (no Content-Length, not chunked) and its header
 * section complete; otherwise HTTP1_ERROR with a reason in err that tells
 * an answer never begun (received is 0) from one cut short.
 */
extern Http1Result http1_response_eof(Http1Response *r, char *err, size_t errlen);

/*
 * One request and its answer on kept-alive connections: what each event on
 * the connection carrying it means for it.  The caller moves the bytes:
 * it puts the exchange on a connection (http1_exchange_on), sends what is
 * left of the request, and reports what happened (bytes sent, bytes
 * received, the connection closed or broken); each report returns what
 * to do next.
 *
 * A connection that carried an earlier exchange may have been closed by
 * the server while it sat idle, unnoticed until the next request fails on
 * it before any answer.  That request is sent again once, on a new
 * connection, as RFC 9112 (9.3.1) allows a client to (HTTP1_RESEND); a
 * failure on a new connection, or after the resend, or once any byte of
 * the answer came, ends the exchange (HTTP1_BROKEN).
 *
 * Whether the server may have acted on the request is kept in reached:
 * the whole request went out on a connection that then failed without an
 * answer, the resent one included.  A request cut short on the wire never
 * reached the server whole, and a server acts on none such.
 */
typedef enum Http1Next
{
	HTTP1_WAIT,					/* nothing to do until the connection moves */
	HTTP1_ANSWERED,				/* the answer is whole; see reusable */
	HTTP1_RESEND,				/* close the connection, send again on a new one */
	HTTP1_BROKEN				/* the exchange failed: see failure and reason */
} Http1Next;

/* How an exchange failed. */
typedef enum Http1Failure
{
	HTTP1_FAIL_NONE,
	HTTP1_FAIL_IO,				/* a send or a receive failed */
	HTTP1_FAIL_NOTHING,			/* the connection closed before any answer */
	HTTP1_FAIL_PARTIAL,			/* it closed before the answer was whole */
	HTTP1_FAIL_MALFORMED		/* the answer is not HTTP/1.1 as we read it */
} Http1Failure;

typedef struct Http1Exchange
{
	const char *out;			/* the request's bytes (the caller's) */
	size_t		out_len;
	size_t		sent;			/* bytes of out sent on the current connection */
	bool		reused;			/* the current connection carried an exchange before */
	bool		resent;			/* it was sent again on a new connection */
	bool		reached;		/* see above */
	bool		done;			/* ANSWERED or BROKEN was returned */
	bool		reusable;		/* once ANSWERED: the connection may carry another */
	Http1Failure failure;		/* once BROKEN */
	char		reason[SFDW_ERRLEN];	/* once BROKEN: why, one line */
	Http1Response answer;
} Http1Exchange;

/*
 * http1_exchange_init
 *		Start an exchange of the out_len bytes at out (kept by the caller
 *		until the exchange ends), its answer read as http1_response_init
 *		says, with its memory in arena.
 */
extern void http1_exchange_init(Http1Exchange *x, const char *out, size_t out_len,
								size_t max_body, SfdwArena *arena);

/*
 * http1_exchange_free
 *		Release the memory of an exchange (its answer's).
 */
extern void http1_exchange_free(Http1Exchange *x);

/*
 * http1_exchange_on
 *		The exchange is put on a connection, reused (it carried an
 *		exchange before) or new; it is sent from its first byte.
 */
extern void http1_exchange_on(Http1Exchange *x, bool reused);

/*
 * http1_exchange_sent
 *		n more bytes of the request went out.
 */
extern void http1_exchange_sent(Http1Exchange *x, size_t n);

/*
 * http1_exchange_received
 *		n bytes of the answer came.  HTTP1_ANSWERED when it is whole:
 *		reusable says whether the connection may carry another exchange
 *		(the server keeps it alive, and sent no byte past the answer);
 *		HTTP1_BROKEN when the answer is malformed; else HTTP1_WAIT.
 */
extern Http1Next http1_exchange_received(Http1Exchange *x, const char *data, size_t n);

/*
 * http1_exchange_closed
 *		The server closed the connection.  HTTP1_ANSWERED when that ends an
 *		answer read to the close (the connection is not reusable);
 *		HTTP1_RESEND or HTTP1_BROKEN otherwise (see above).
 */
extern Http1Next http1_exchange_closed(Http1Exchange *x);

/*
 * http1_exchange_broken
 *		A send or a receive on the connection failed, for reason (one
 *		line).  HTTP1_RESEND or HTTP1_BROKEN (see above).
 */
extern Http1Next http1_exchange_broken(Http1Exchange *x, const char *reason);

/*
 * http1_exchange_abandon
 *		The caller gives up on the exchange (a timeout): it is BROKEN with
 *		reason, reached set as for a failed connection.
 */
extern void http1_exchange_abandon(Http1Exchange *x, const char *reason);

#endif							/* SHARD_FDW_HTTP1_H */
