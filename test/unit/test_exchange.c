/*-------------------------------------------------------------------------
 *
 * test_exchange.c
 *		Unit tests of an exchange on kept-alive connections (http1.h,
 *		Http1Exchange): what the transport's connections (links.c) do
 *		with each event.  A kept-alive connection found closed has its
 *		request sent again once; whether the server may have acted on a
 *		request that failed; the answer's memory across connections and
 *		across resets of whatever arena is current while it is read; and
 *		an exchange given up, whose late answer belongs to nobody.
 *
 *-------------------------------------------------------------------------
 */
#include "alloc/arena.h"
#include "core/http1.h"
#include "unit.h"

static const char REQUEST[] = "POST / HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}";

#define ANSWER "HTTP/1.1 200 OK\r\nx-amzn-RequestId: R1\r\nContent-Length: 11\r\n\r\n{\"Count\":1}"

/* An exchange of REQUEST in arena, its answer at most 1 MB. */
static void
start(Http1Exchange *x, SfdwArena *arena)
{
	http1_exchange_init(x, REQUEST, sizeof(REQUEST) - 1, 1024 * 1024, arena);
}

/* Feed text to x in pieces of step bytes; the last step's verdict. */
static Http1Next
feed(Http1Exchange *x, const char *text, size_t step)
{
	size_t		len = strlen(text);
	Http1Next	next = HTTP1_WAIT;

	for (size_t pos = 0; pos < len && next == HTTP1_WAIT; pos += step)
		next = http1_exchange_received(x, text + pos, len - pos < step ? len - pos : step);
	return next;
}

/* A new connection, the request sent whole, the answer whole. */
static void
test_plain_exchange(void)
{
	Http1Exchange x;

	start(&x, NULL);
	http1_exchange_on(&x, false);
	http1_exchange_sent(&x, x.out_len);
	CHECK(feed(&x, ANSWER, 1000) == HTTP1_ANSWERED);
	CHECK(x.reusable);
	CHECK(x.answer.status == 200);
	CHECK_STR(x.answer.body.data, "{\"Count\":1}");
	CHECK(!x.reached);
	/* once answered, later events change nothing */
	CHECK(http1_exchange_closed(&x) == HTTP1_ANSWERED);
	CHECK(http1_exchange_broken(&x, "late") == HTTP1_ANSWERED);
	CHECK(x.reusable);
	http1_exchange_free(&x);
}

/*
 * A kept-alive connection closed before any answer: the request goes out
 * again on a new connection, once.  Whether it reached the server is the
 * whole request having gone out on a connection that then failed.
 */
static void
test_resend_once(void)
{
	Http1Exchange x;

	/* closed after the whole request went out: it may have been acted on */
	start(&x, NULL);
	http1_exchange_on(&x, true);
	http1_exchange_sent(&x, x.out_len);
	CHECK(http1_exchange_closed(&x) == HTTP1_RESEND);
	CHECK(x.resent);
	CHECK(x.reached);
	CHECK(x.sent == 0);
	http1_exchange_on(&x, false);
	http1_exchange_sent(&x, x.out_len);
	CHECK(feed(&x, ANSWER, 7) == HTTP1_ANSWERED);
	CHECK(x.reached);
	http1_exchange_free(&x);

	/* the send itself failed halfway: nothing reached the server whole */
	start(&x, NULL);
	http1_exchange_on(&x, true);
	http1_exchange_sent(&x, 5);
	CHECK(http1_exchange_broken(&x, "Send failure: Broken pipe") == HTTP1_RESEND);
	CHECK(!x.reached);
	/* the new connection fails too: no second resend */
	http1_exchange_on(&x, false);
	http1_exchange_sent(&x, x.out_len);
	CHECK(http1_exchange_broken(&x, "Recv failure: Connection reset by peer") == HTTP1_BROKEN);
	CHECK(x.failure == HTTP1_FAIL_IO);
	CHECK(x.reached);
	CHECK(strstr(x.reason, "Connection reset") != NULL);
	http1_exchange_free(&x);

	/* a reused connection that fails again after its resend is not resent twice */
	start(&x, NULL);
	http1_exchange_on(&x, true);
	CHECK(http1_exchange_closed(&x) == HTTP1_RESEND);
	http1_exchange_on(&x, true);
	CHECK(http1_exchange_closed(&x) == HTTP1_BROKEN);
	CHECK(x.failure == HTTP1_FAIL_NOTHING);
	CHECK(!x.reached);
	http1_exchange_free(&x);
}

/* No resend on a new connection, nor once the answer has begun. */
static void
test_no_resend(void)
{
	Http1Exchange x;

	start(&x, NULL);
	http1_exchange_on(&x, false);
	http1_exchange_sent(&x, x.out_len);
	CHECK(http1_exchange_closed(&x) == HTTP1_BROKEN);
	CHECK(x.failure == HTTP1_FAIL_NOTHING);
	CHECK(x.reached);
	http1_exchange_free(&x);

	start(&x, NULL);
	http1_exchange_on(&x, true);
	http1_exchange_sent(&x, x.out_len);
	CHECK(feed(&x, "HTTP/1.1 200 OK\r\nContent-Le", 4) == HTTP1_WAIT);
	CHECK(http1_exchange_closed(&x) == HTTP1_BROKEN);
	CHECK(x.failure == HTTP1_FAIL_PARTIAL);
	CHECK(x.reached);
	http1_exchange_free(&x);

	start(&x, NULL);
	http1_exchange_on(&x, true);
	http1_exchange_sent(&x, x.out_len);
	CHECK(feed(&x, "HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\n{\"Co", 3) == HTTP1_WAIT);
	CHECK(http1_exchange_broken(&x, "Recv failure: Connection reset by peer") == HTTP1_BROKEN);
	CHECK(x.failure == HTTP1_FAIL_IO);
	http1_exchange_free(&x);
}

/* Bytes past the answer, or a second answer in the same read: not reusable. */
static void
test_bytes_past_answer(void)
{
	Http1Exchange x;

	start(&x, NULL);
	http1_exchange_on(&x, false);
	http1_exchange_sent(&x, x.out_len);
	CHECK(feed(&x, ANSWER ANSWER, 1000) == HTTP1_ANSWERED);
	CHECK(!x.reusable);
	CHECK_STR(x.answer.body.data, "{\"Count\":1}");
	http1_exchange_free(&x);

	start(&x, NULL);
	http1_exchange_on(&x, false);
	http1_exchange_sent(&x, x.out_len);
	CHECK(feed(&x, ANSWER "junk", 1000) == HTTP1_ANSWERED);
	CHECK(!x.reusable);
	http1_exchange_free(&x);

	/* the server says it closes: answered, not reusable */
	start(&x, NULL);
	http1_exchange_on(&x, false);
	http1_exchange_sent(&x, x.out_len);
	CHECK(feed(&x, "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}", 9) ==
		  HTTP1_ANSWERED);
	CHECK(!x.reusable);
	http1_exchange_free(&x);

	/* a body read to the close ends with the close */
	start(&x, NULL);
	http1_exchange_on(&x, true);
	http1_exchange_sent(&x, x.out_len);
	CHECK(feed(&x, "HTTP/1.1 200 OK\r\n\r\n{\"a\":1}", 5) == HTTP1_WAIT);
	CHECK(http1_exchange_closed(&x) == HTTP1_ANSWERED);
	CHECK(!x.reusable);
	CHECK_STR(x.answer.body.data, "{\"a\":1}");
	http1_exchange_free(&x);
}

/* A malformed answer breaks the exchange, whatever connection it came on. */
static void
test_malformed(void)
{
	Http1Exchange x;

	start(&x, NULL);
	http1_exchange_on(&x, true);
	http1_exchange_sent(&x, x.out_len);
	CHECK(feed(&x, "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n{}", 1) ==
		  HTTP1_BROKEN);
	CHECK(x.failure == HTTP1_FAIL_MALFORMED);
	CHECK(x.reached);
	CHECK(x.reason[0] != '\0');
	CHECK(http1_exchange_received(&x, "x", 1) == HTTP1_BROKEN);
	http1_exchange_free(&x);
}

/*
 * The answer lives in the exchange's arena, whatever arena is current
 * while its bytes are fed: a header line cut across reads, the body grown,
 * a resend that reads a second answer into the same memory, with the
 * current arena reset between every two reads (a COPY's per-row context).
 * A block put in the current arena would be freed memory at the next read.
 */
static void
test_memory_across_reads(void)
{
	SfdwArena  *own = arena_create();
	SfdwArena  *row = arena_create();
	SfdwArena  *before = arena_switch(row);
	Http1Exchange x;
	Buf			big;
	Http1Next	next = HTTP1_WAIT;

	buf_init_in(&big, own);
	buf_puts(&big, "HTTP/1.1 200 OK\r\nx-amzn-RequestId: 0123456789ABCDEF\r\nContent-Length: 5000\r\n\r\n");
	for (int i = 0; i < 5000; i++)
		buf_putc(&big, (char) ('a' + i % 26));
	start(&x, own);
	http1_exchange_on(&x, true);
	http1_exchange_sent(&x, x.out_len);
	CHECK(feed(&x, "HTTP/1.1 200", 3) == HTTP1_WAIT);
	arena_reset(row);
	CHECK(http1_exchange_broken(&x, "reset") == HTTP1_BROKEN);
	http1_exchange_free(&x);

	start(&x, own);
	http1_exchange_on(&x, true);
	http1_exchange_sent(&x, x.out_len);
	CHECK(http1_exchange_closed(&x) == HTTP1_RESEND);
	arena_reset(row);
	http1_exchange_on(&x, false);
	http1_exchange_sent(&x, x.out_len);
	for (size_t pos = 0; pos < big.len && next == HTTP1_WAIT; pos += 13)
	{
		next = http1_exchange_received(&x, big.data + pos, big.len - pos < 13 ? big.len - pos : 13);
		arena_reset(row);
	}
	CHECK(next == HTTP1_ANSWERED);
	CHECK(x.answer.body.len == 5000);
	CHECK(x.answer.request_id);
	CHECK(memcmp(x.answer.body.data, big.data + big.len - 5000, 5000) == 0);
	http1_exchange_free(&x);
	arena_switch(before);
	arena_delete(row);
	arena_delete(own);
}

/*
 * An exchange given up (its attempt timed out) is broken for good: a late
 * answer takes nothing from it, and the retry, a new exchange, reads only
 * its own answer.
 */
static void
test_abandoned(void)
{
	Http1Exchange old;
	Http1Exchange retry;

	start(&old, NULL);
	http1_exchange_on(&old, false);
	http1_exchange_sent(&old, 10);
	http1_exchange_abandon(&old, "no answer within 100 ms");
	CHECK(!old.reached);
	CHECK(old.failure == HTTP1_FAIL_IO);
	CHECK(feed(&old, ANSWER, 1000) == HTTP1_BROKEN);
	CHECK(old.answer.received == 0);

	start(&retry, NULL);
	http1_exchange_on(&retry, false);
	http1_exchange_sent(&retry, retry.out_len);
	CHECK(feed(&retry, "HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\n{\"Count\":2}", 6) ==
		  HTTP1_ANSWERED);
	CHECK_STR(retry.answer.body.data, "{\"Count\":2}");
	http1_exchange_free(&old);
	http1_exchange_free(&retry);

	/* given up once the whole request was out: it may have been acted on */
	start(&old, NULL);
	http1_exchange_on(&old, false);
	http1_exchange_sent(&old, old.out_len);
	http1_exchange_abandon(&old, "no answer within 100 ms");
	CHECK(old.reached);
	http1_exchange_free(&old);
}

void
suite_exchange(void)
{
	test_plain_exchange();
	test_resend_once();
	test_no_resend();
	test_bytes_past_answer();
	test_malformed();
	test_memory_across_reads();
	test_abandoned();
}
