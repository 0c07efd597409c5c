/*-------------------------------------------------------------------------
 *
 * fuzz_exchange.c
 *		libFuzzer target: a stateful run of exchanges (http1.h,
 *		Http1Exchange) on a connection that is kept alive, closed, reset
 *		and replaced, as the transport's connections (links.c) drive them.
 *
 * The input is a script of events, a byte each with its operands: start
 * an exchange (on the kept-alive connection when there is one), send part
 * of the request, receive bytes of the answer in pieces, the server
 * closing the connection, a send or a receive failing, the exchange given
 * up (a timeout), the server closing the idle connection, and a reset of
 * the arena that is current while bytes are fed (a COPY's per-row memory
 * context, reset between rows).  Each verdict is followed as links.c
 * follows it.
 *
 * Beyond "no crash, no leak, no undefined behaviour, no use of freed
 * memory", it checks what the transport relies on, after every event: a
 * request is sent again only from a kept-alive connection, once, before
 * any byte of its answer, and then from its first byte with an answer
 * begun afresh; reached never goes back, and only a request sent whole
 * reaches the server; a broken exchange says how and why; an answered
 * one reads as its bytes read when parsed whole, within its limit, and is
 * reusable only when kept alive; after its verdict, an exchange changes
 * no more.
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>
#include <string.h>

#include "alloc/arena.h"
#include "core/http1.h"

/* A small limit, so that bodies reach it. */
#define MAX_BODY 2048

static const char REQUEST[] =
"POST / HTTP/1.1\r\nhost: dynamodb\r\nContent-Length: 15\r\n\r\n{\"TableName\":1}";

/* The run's state. */
typedef struct Run
{
	const unsigned char *data;
	size_t		size;
	size_t		pos;
	SfdwArena  *own;			/* the exchanges' memory */
	SfdwArena  *row;			/* current while bytes are fed */
	bool		active;			/* x is in flight */
	bool		kept;			/* a kept-alive connection waits */
	Http1Exchange x;
	Buf			fed;			/* bytes fed since the exchange was last put on a connection */
	bool		ever_whole;		/* the request went out whole on some connection */
} Run;

/* The next byte of the script, 0 past its end. */
static unsigned
next_byte(Run *run)
{
	return run->pos < run->size ? run->data[run->pos++] : 0;
}

/* End the exchange in flight: its memory goes. */
static void
finish(Run *run)
{
	http1_exchange_free(&run->x);
	arena_reset(run->own);
	run->active = false;
}

/* Abort unless an ended exchange stays as it ended under further events. */
static void
check_settled(Run *run, Http1Next verdict)
{
	Http1Exchange *x = &run->x;
	bool		reusable = x->reusable;
	Http1Failure failure = x->failure;

	if (http1_exchange_received(x, "HTTP/1.1 200 OK\r\n\r\n", 19) != verdict ||
		http1_exchange_closed(x) != verdict ||
		http1_exchange_broken(x, "again") != verdict ||
		x->reusable != reusable || x->failure != failure)
		abort();
}

/* Abort unless an answered exchange reads as its bytes read parsed whole. */
static void
check_answer(Run *run)
{
	Http1Exchange *x = &run->x;
	Http1Response whole;
	size_t		used;
	char		err[SFDW_ERRLEN];
	Http1Result r;

	if (x->answer.status < 100 || x->answer.status > 999 ||
		x->answer.body.len > MAX_BODY ||
		x->answer.body.data[x->answer.body.len] != '\0' ||
		(x->reusable && !x->answer.keep_alive))
		abort();
	http1_response_init(&whole, MAX_BODY, NULL);
	r = http1_response_feed(&whole, run->fed.data, run->fed.len, &used, err, sizeof(err));
	if (r == HTTP1_MORE)
		r = http1_response_eof(&whole, err, sizeof(err));
	if (r != HTTP1_DONE || whole.status != x->answer.status ||
		whole.body.len != x->answer.body.len ||
		memcmp(whole.body.data, x->answer.body.data, whole.body.len) != 0 ||
		(x->reusable && used != run->fed.len))
		abort();
	http1_response_free(&whole);
}

/* Follow a verdict as links.c does; check what it implies. */
static void
follow(Run *run, Http1Next verdict, bool was_reused, size_t received_before)
{
	Http1Exchange *x = &run->x;

	switch (verdict)
	{
		case HTTP1_WAIT:
			if (x->done)
				abort();
			return;
		case HTTP1_RESEND:
			if (!was_reused || received_before > 0 || !x->resent || x->sent != 0 ||
				x->answer.received != 0 || x->done)
				abort();
			run->kept = false;
			run->fed.len = 0;
			http1_exchange_on(x, false);
			return;
		case HTTP1_ANSWERED:
			if (!x->done || x->failure != HTTP1_FAIL_NONE || x->sent != x->out_len)
				abort();
			check_answer(run);
			check_settled(run, verdict);
			run->kept = x->reusable;
			finish(run);
			return;
		case HTTP1_BROKEN:
			if (!x->done || x->failure == HTTP1_FAIL_NONE || x->reason[0] == '\0' ||
				memchr(x->reason, '\0', sizeof(x->reason)) == NULL)
				abort();
			check_settled(run, verdict);
			run->kept = false;
			finish(run);
			return;
	}
}

/* Run one event of the script. */
static void
event(Run *run)
{
	Http1Exchange *x = &run->x;
	unsigned	op = next_byte(run) % 8;
	bool		reused = x->reused;
	bool		reached = x->reached;
	size_t		received = x->answer.received;
	Http1Next	verdict = HTTP1_WAIT;

	if (!run->active && op != 7 && op != 6)
	{
		/* every event but those two starts an exchange when none runs */
		http1_exchange_init(x, REQUEST, sizeof(REQUEST) - 1, MAX_BODY, run->own);
		http1_exchange_on(x, run->kept);
		run->kept = false;
		run->active = true;
		run->ever_whole = false;
		run->fed.len = 0;
		return;
	}
	switch (op)
	{
		case 0:
		case 1:
			if (x->sent < x->out_len)
			{
				size_t		n = 1 + next_byte(run) % (x->out_len - x->sent);

				http1_exchange_sent(x, n);
				run->ever_whole |= x->sent == x->out_len;
				return;
			}
			/* FALLTHROUGH */
		case 2:
			{
				size_t		n = next_byte(run) % 64;

				if (x->sent < x->out_len)
					return;
				n = n < run->size - run->pos ? n : run->size - run->pos;
				buf_append(&run->fed, (const char *) run->data + run->pos, n);
				verdict = http1_exchange_received(x, (const char *) run->data + run->pos, n);
				run->pos += n;
				break;
			}
		case 3:
			verdict = http1_exchange_closed(x);
			break;
		case 4:
			verdict = http1_exchange_broken(x, "Recv failure: Connection reset by peer");
			break;
		case 5:
			http1_exchange_abandon(x, "no answer within 100 ms");
			verdict = HTTP1_BROKEN;
			break;
		case 6:
			arena_reset(run->row);
			return;
		case 7:
			run->kept = false;	/* the server closed the idle connection */
			return;
	}
	if (reached && !x->reached)
		abort();
	if (x->reached && !run->ever_whole)
		abort();
	follow(run, verdict, reused, received);
}

int
LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	Run			run = {.data = data, .size = size};
	SfdwArena  *before;

	run.own = arena_create();
	run.row = arena_create();
	buf_init(&run.fed);
	before = arena_switch(run.row);
	while (run.pos < run.size)
		event(&run);
	if (run.active)
		finish(&run);
	arena_switch(before);
	arena_delete(run.row);
	arena_delete(run.own);
	sfdw_free(run.fed.data);
	return 0;
}
