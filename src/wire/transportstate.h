/*-------------------------------------------------------------------------
 *
 * transportstate.h
 *		The transport's state, shared by the files that run it:
 *		transport.c (DynamoDB requests), answer.c (what each attempt's
 *		outcome says), links.c (the connections that carry them) and
 *		exchange.c (the credential sources' plain HTTP exchanges, on the
 *		same multi handle).
 *
 * Where the memory of the request path lives, and who frees it.  A wait
 * reads answers in whatever memory context its caller has current (a
 * COPY's per-row one, reset before the next row), so nothing here is
 * allocated in the current context unless it dies with the call:
 *
 *	conn->cxt (a child of CacheMemoryContext; deleted when the connection
 *	is dropped):
 *		the DdbTransport, its url and host, its SocketSet, and every
 *		DdbLink, kept alive across attempts and statements (link_close
 *		frees one; links_close_all, from transport_destroy, every one).
 *		libcurl's own objects (the multi handle, the parsed URL, each
 *		link's CONNECT_ONLY transfer) are malloc'd by libcurl and freed
 *		with the object that holds them.
 *	a group's context (a child of conn->cxt; ddb_group_free, or the end of
 *	the (sub)transaction that made it):
 *		the group, and under it one context per request.
 *	a request's context, req->cxt (ddb_request_free, or with its group):
 *		its body, its errors, its parsed response, and each DdbAttempt:
 *		the request's bytes (out) and the answer being read (x.answer),
 *		whose body and held line are allocated in req->cxt by name
 *		(http1_exchange_init's arena), never in the current context, and
 *		grow there.  An attempt that is resent on a new connection keeps
 *		its memory (http1_exchange_on, http1_response_reset); attempt_free
 *		frees it when the attempt ends.
 *	the current context of transport_exchange_start's caller:
 *		an HttpExchange and its answer, freed by transport_exchange_free
 *		or with that context (a reset callback).
 *	TopMemoryContext:
 *		the endpoints proven to be DynamoDB, for the backend's life.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHARD_FDW_TRANSPORTSTATE_H
#define SHARD_FDW_TRANSPORTSTATE_H

#include "wire/wire.h"

#include <curl/curl.h>

#include "lib/stringinfo.h"

#include "core/http1.h"
#include "core/sigv4.h"
#include "wire/sockets.h"

/* The longest a wait sleeps before checking for interrupts. */
#define POLL_MS 20

/*
 * A pause this long between two moves of the transport leaves a plain
 * exchange's timeout running unwatched.
 */
#define UNATTENDED_US 1000000

struct DdbTransport
{
	DdbConn    *conn;
	TransportPrepareFn prepare; /* before signing: the credentials there */
	void	   *prepare_arg;
	CURLM	   *multi;
	char	   *url;
	CURLU	   *curlu;			/* url, parsed */
	char	   *host;			/* the Host header, as signed */
	bool		raw;			/* connections carry the bytes as they are (plain
								 * http, no proxy): links.c uses the socket */
	dlist_head	queue;			/* queued requests of every group */
	dlist_head	attempts;		/* attempts in flight */
	TimestampTz next_deadline;	/* no attempt times out before */
	dlist_head	groups;
	dlist_head	exchanges;		/* plain exchanges in flight */
	dlist_head	links;			/* connections carrying an attempt or connecting */
	dlist_head	idle;			/* connections kept alive for the next attempts */
	int			nidle;
	int			max_idle;
	SocketSet  *sockets;		/* what waits sleep on */
	TimestampTz answered_at;	/* when the last answer came, or 0 */
	long		answer_gap_us;	/* the recent time between answers (moving
								 * average), see gather_us */
	RetryBudget budget;
	bool		proven;			/* the endpoint answered as DynamoDB */
	char		key_day[9];		/* the YYYYMMDD signing_key is for */
	uint32		key_generation; /* of the credentials it is derived from */
	unsigned char signing_key[SIGV4_KEY_LEN];
};


/*
 * A group of requests (one scan or one modify): how many of them may run
 * at once, and their counters.
 */
struct DdbGroup
{
	DdbConn    *conn;
	MemoryContext cxt;
	int			nest_level;		/* transaction nesting level that made it */
	DdbGroup  **holder;		/* where its owner keeps it, or NULL */
	int			max_inflight;
	int			running;		/* requests with an attempt in flight */
	int			unfinished;		/* requests queued or running */
	Budget	   *budget;			/* the capacity budget it keeps to, or NULL
								 * (the requests of no table) */
	dlist_head	done;			/* finished, not yet handed out */
	DdbStats	stats;
	DdbStats	flushed;		/* stats as last handed to stat.c */
	TimestampTz flushed_at;		/* ... when */
	dlist_node	node;
};

/*
 * A connection carrying DynamoDB requests: libcurl opens it (name
 * resolution, TCP, TLS: a CONNECT_ONLY transfer on the multi handle), and
 * links.c frames the requests and answers on it (HTTP/1.1, http1.c).
 */
typedef struct DdbLink DdbLink;

/*
 * One attempt of a request: its bytes as sent, and the answer as it
 * arrives.  Allocated in its request's memory.
 */
typedef struct DdbAttempt
{
	DdbRequest *req;
	DdbLink    *link;			/* the connection carrying it, or NULL */
	Buf			out;			/* the HTTP request, head and body */
	Http1Exchange x;			/* out and its answer on the connections */
	TimestampTz started;		/* when it was started */
	TimestampTz deadline;		/* when it times out */
	int64		clock_offset_s; /* the clock offset it was signed with */
	bool		from_dynamodb;	/* the answer came with x-amzn-RequestId or
								 * x-amz-crc32, or as a DynamoDB error */
	char		errbuf[CURL_ERROR_SIZE];
	dlist_node	node;
} DdbAttempt;

/* in links.c */

/*
 * Put attempt a on a connection, a kept-alive one if there is one, and
 * send it (or send it once connected).
 */
extern void link_attach(DdbTransport *t, DdbAttempt *a);

/*
 * Take attempt a off its connection, which is closed when it was halfway
 * through a's exchange.
 */
extern void link_detach(DdbTransport *t, DdbAttempt *a);

/*
 * A transfer libcurl reports done that is a connection's opening: true
 * when it was one (and it was dealt with).
 */
extern bool link_opened(DdbTransport *t, CURL *easy, CURLcode result);

/* Fail every attempt past its deadline. */
extern void links_expire(DdbTransport *t);

/* Close every connection (the transport ends). */
extern void links_close_all(DdbTransport *t);

/* What a wait calls for a ready connection socket (see sockets.h). */
extern void link_ready(void *owner, uint32 events);

/* in answer.c */

/* What an attempt's answer calls for. */
typedef enum AnswerVerdict
{
	ANSWER_FINAL,				/* the request is done: answered or failed */
	ANSWER_RETRY,				/* another attempt may succeed */
	ANSWER_THROTTLED			/* throttled: another attempt may succeed */
} AnswerVerdict;

/*
 * Judge a transfer that ended with an HTTP answer (status): req's
 * response, or its error, recorded.
 */
extern AnswerVerdict judge_answer(DdbRequest *req, DdbAttempt *a, long status);

/*
 * Judge a transfer that ended without an HTTP answer.  Returns true when
 * another attempt may succeed.
 */
extern bool judge_transport_error(DdbRequest *req, DdbAttempt *a, CURLcode code);

/* The clock offset requests are signed with now (see aws_signing_time). */
extern int64 aws_clock_offset(void);

/* Whether the endpoint url has answered as DynamoDB in this backend. */
extern bool endpoint_known(const char *url);

/* Remember that the transport's endpoint answered as DynamoDB. */
extern void endpoint_proven(DdbTransport *t);

/*
 * After a failed attempt of req on an endpoint that has not yet answered
 * as DynamoDB in this backend (code: libcurl's result; retry: the
 * verdict so far): label req's error when the attempt suggests that the
 * endpoint is wrong, for the message should the retries not mend it, and
 * return whether to retry.
 *
 * A failure to connect (no such host, refused, a TLS handshake cut short)
 * is retried as anywhere: a backend's first request meets the same resets
 * and restarts as any other.  An HTTP answer that is not DynamoDB's is
 * retried only when it is what a front answers while what it fronts is
 * away (500, 502, 503, 504); a web server's answer to a request it does
 * not know is final.  A connection closed, or an attempt timed out, with
 * no answer is a transport failure like any other, and not labeled.
 */
extern bool endpoint_suspect(DdbRequest *req, DdbAttempt *a, CURLcode code, bool retry);

/* in transport.c */

/*
 * Deal with an attempt that ended: code is CURLE_OK when an answer came
 * whole (a->answer), else why none did (a->errbuf says more).
 */
extern void attempt_done(DdbTransport *t, DdbAttempt *a, CURLcode code);

/* A plain HTTP exchange (a credential source's) on the multi handle. */
struct HttpExchange
{
	DdbTransport *t;			/* NULL once its transfer is freed */
	CURL	   *easy;
	struct curl_slist *headers;
	StringInfoData answer;
	bool		done;
	CURLcode	result;			/* once done */
	TimestampTz driven_at;		/* when the transport last moved it */
	bool		idled;			/* the transport paused while it ran */
	char		errbuf[CURL_ERROR_SIZE];
	dlist_node	node;
};

/*
 * What a backend waits for, reported as its wait event (see
 * transport_wait_event in transport.c).
 */
typedef enum TransportWait
{
	WAIT_REQUESTS,				/* DynamoDB's answers, or a retry's time */
	WAIT_BUDGET,				/* a capacity budget to be out of debt */
	WAIT_CREDENTIALS			/* a credential source */
} TransportWait;

/*
 * Let libcurl act on its due timeouts and on the sockets that are ready,
 * and collect finished transfers, first waiting at most timeout_ms (0:
 * not at all) when none had finished, for what.  Returns whether a plain
 * exchange ended.
 */
extern bool transport_drive(DdbTransport *t, int timeout_ms, TransportWait what);

/*
 * Append n bytes to buf from inside a libcurl callback, where nothing may
 * throw; false, which fails the transfer, when buf would hold more than
 * max bytes (at most MaxAllocSize - 1) or no memory is left.
 */
extern bool append_in_callback(StringInfo buf, const char *data, size_t n, size_t max);

#endif							/* SHARD_FDW_TRANSPORTSTATE_H */
