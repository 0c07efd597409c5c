/*-------------------------------------------------------------------------
 *
 * links.c
 *		The connections that carry DynamoDB requests.  libcurl opens each
 *		one (name resolution, TCP, TLS, timeouts: a CONNECT_ONLY transfer
 *		on the transport's multi handle) and leaves it open; the requests
 *		and answers on it are framed here (HTTP/1.1, http1.c) and moved
 *		with curl_easy_send and curl_easy_recv, which encrypt when the
 *		endpoint is https, or with send and recv on the socket when it is
 *		plain http reached without a proxy.
 *
 * A request through libcurl's HTTP layer cost more than everything else a
 * shard request does together: a connection object looked up and set up,
 * header lines formatted a byte at a time, two liveness polls.  Here a
 * request is one send of bytes written once, and its answer is parsed as
 * it arrives.
 *
 * What each event on a connection means for the attempt it carries
 * (answered, resend on a new connection, failed, and whether the request
 * may have reached DynamoDB) is decided by the attempt's Http1Exchange, in
 * plain C (http1.h); here the bytes are moved and the verdicts followed.
 *
 * A connection kept alive between requests waits in the transport's idle
 * list, its socket watched for input: a server that closes it, or sends
 * anything unasked, has it closed at the next wait.  One idle longer than
 * the server's max_idle_connection_s is closed when next wanted, not used:
 * DynamoDB and the balancers before it close idle connections, and a
 * request sent as they do is lost.  One that the server
 * closed unnoticed fails the next request before any answer; that request
 * moves to a new connection once, as libcurl would have resent it.
 *
 * A connection's transfer is attached to it for good by its first
 * curl_easy_send (an empty one as soon as it is open, on plain http),
 * which keeps libcurl's connection cache from ever judging it idle and
 * closing it; a connection opened for an attempt that is gone by then is
 * closed rather than kept.  On plain http with no proxy the bytes then
 * bypass libcurl, whose curl_easy_send and curl_easy_recv find their
 * connection by a walk of every connection of the multi handle.  A proxy
 * that libcurl takes from the environment is always a CONNECT tunnel, so
 * that the bytes framed here reach DynamoDB as they are.
 *
 *-------------------------------------------------------------------------
 */
#include "wire/wire.h"

#include <poll.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "wire/transportstate.h"

/* What one receive reads at most. */
#define RECV_CHUNK 16384

/*
 * TCP keepalive: a connection silent this long is probed, every interval
 * after, so that a peer gone without a word (a NAT or load balancer that
 * dropped the flow) fails the attempt waiting on it, instead of leaving it
 * to its timeout.
 */
#define KEEPALIVE_IDLE_S 15L
#define KEEPALIVE_INTERVAL_S 5L

struct DdbLink
{
	DdbTransport *t;
	CURL	   *easy;			/* its CONNECT_ONLY transfer */
	curl_socket_t sock;			/* CURL_SOCKET_BAD while it opens */
	DdbAttempt *attempt;		/* the attempt it carries, or NULL */
	bool		used;			/* it has carried a whole exchange */
	bool		sending;		/* watched for output: a send was cut short */
	bool		idle;			/* in t->idle, not t->links */
	TimestampTz idle_since;		/* when it last went idle */
	char		errbuf[CURL_ERROR_SIZE];
	dlist_node	node;			/* in t->links or t->idle */
};

static void link_send(DdbLink *l);

/*
 * Send (out) or receive up to len bytes of buf on l; *n is how many went
 * or came, 0 on receiving when the server closed the connection.
 * CURLE_AGAIN when the socket can do nothing now; another failure leaves
 * its reason in l->errbuf.
 */
static CURLcode
link_io(DdbLink *l, bool out, char *buf, size_t len, size_t *n)
{
	ssize_t		moved;

	*n = 0;
	if (!l->t->raw)
		return out ? curl_easy_send(l->easy, buf, len, n) :
			curl_easy_recv(l->easy, buf, len, n);
	do
		moved = out ? send(l->sock, buf, len, MSG_NOSIGNAL) : recv(l->sock, buf, len, 0);
	while (moved < 0 && errno == EINTR);
	if (moved < 0)
	{
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return CURLE_AGAIN;
		snprintf(l->errbuf, sizeof(l->errbuf), "%s failure: %s",
				 out ? "Send" : "Recv", strerror(errno));
		return out ? CURLE_SEND_ERROR : CURLE_RECV_ERROR;
	}
	*n = (size_t) moved;
	return CURLE_OK;
}

/* Close a connection and free it; it is in t->links or t->idle. */
static void
link_close(DdbLink *l)
{
	DdbTransport *t = l->t;

	if (l->attempt)
		l->attempt->link = NULL;
	if (l->idle)
		t->nidle--;
	dlist_delete(&l->node);
	curl_multi_remove_handle(t->multi, l->easy);
	curl_easy_cleanup(l->easy);
	pfree(l);
}

/*
 * A new connection to the transport's endpoint, opening; the attempt it is
 * for is sent once it is open.
 */
static DdbLink *
link_open(DdbTransport *t)
{
	const ShardServer *server = t->conn->server;
	DdbLink    *l = MemoryContextAllocZero(t->conn->cxt, sizeof(DdbLink));

	l->t = t;
	l->sock = CURL_SOCKET_BAD;
	l->easy = curl_easy_init();
	if (l->easy == NULL)
	{
		pfree(l);
		ereport(ERROR,
				(errcode(ERRCODE_FDW_OUT_OF_MEMORY),
				 errmsg("could not create a libcurl handle")));
	}
	curl_easy_setopt(l->easy, CURLOPT_CURLU, t->curlu);
	curl_easy_setopt(l->easy, CURLOPT_CONNECT_ONLY, 1L);
	curl_easy_setopt(l->easy, CURLOPT_PRIVATE, l);
	curl_easy_setopt(l->easy, CURLOPT_ERRORBUFFER, l->errbuf);
	curl_easy_setopt(l->easy, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(l->easy, CURLOPT_CONNECTTIMEOUT_MS, server->connect_timeout_ms);
	curl_easy_setopt(l->easy, CURLOPT_TCP_NODELAY, 1L);
	curl_easy_setopt(l->easy, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(l->easy, CURLOPT_TCP_KEEPIDLE, KEEPALIVE_IDLE_S);
	curl_easy_setopt(l->easy, CURLOPT_TCP_KEEPINTVL, KEEPALIVE_INTERVAL_S);
	/* the bytes are HTTP/1.1 (http1.c): ALPN must not let a server pick h2 */
	curl_easy_setopt(l->easy, CURLOPT_HTTP_VERSION, (long) CURL_HTTP_VERSION_1_1);
	curl_easy_setopt(l->easy, CURLOPT_HTTPPROXYTUNNEL, 1L);
	curl_easy_setopt(l->easy, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(l->easy, CURLOPT_SSL_VERIFYHOST, 2L);
	if (server->ca_file)
		curl_easy_setopt(l->easy, CURLOPT_CAINFO, server->ca_file);
	sockets_own(t->sockets, l->easy);
	if (curl_multi_add_handle(t->multi, l->easy) != CURLM_OK)
	{
		curl_easy_cleanup(l->easy);
		pfree(l);
		ereport(ERROR,
				(errcode(ERRCODE_FDW_OUT_OF_MEMORY),
				 errmsg("could not open a connection to DynamoDB")));
	}
	dlist_push_tail(&t->links, &l->node);
	return l;
}

/* End l's attempt with code, closing l; message says why. */
static void
link_fail(DdbLink *l, CURLcode code, const char *message)
{
	DdbAttempt *a = l->attempt;
	DdbTransport *t = l->t;

	http1_exchange_abandon(&a->x, message);
	strlcpy(a->errbuf, message, sizeof(a->errbuf));
	link_close(l);
	attempt_done(t, a, code);
}

/* Put a on l and send it, or wait for l to open. */
static void
link_carry(DdbLink *l, DdbAttempt *a)
{
	l->attempt = a;
	a->link = l;
	http1_exchange_on(&a->x, l->used);
	if (l->sock != CURL_SOCKET_BAD)
		link_send(l);
}

/*
 * Whether an idle connection is as it was left: nothing has come on it
 * since its last answer.  A server that closed it, or sent anything
 * unasked (an answer to nothing, bytes past an answer), has made it
 * unusable: read as the next request's answer, those bytes would answer
 * the wrong request.  The wait that would have noticed may not have come
 * before the connection is wanted again.  A TLS record that carries no
 * data (a session ticket) reads as nothing, and leaves it usable.
 */
static bool
link_untouched(DdbLink *l)
{
	struct pollfd pfd = {.fd = l->sock, .events = POLLIN};
	char		buf[RECV_CHUNK];
	size_t		n = 0;
	int			rc;

	do
		rc = poll(&pfd, 1, 0);
	while (rc < 0 && errno == EINTR);
	if (rc == 0)
		return true;
	return rc > 0 && link_io(l, false, buf, sizeof(buf), &n) == CURLE_AGAIN;
}

/* See transportstate.h. */
void
link_attach(DdbTransport *t, DdbAttempt *a)
{
	DdbLink    *l = NULL;
	TimestampTz oldest = GetCurrentTimestamp() -
		(TimestampTz) t->conn->server->max_idle_connection_s * USECS_PER_SEC;

	while (l == NULL && !dlist_is_empty(&t->idle))
	{
		/* the most recently used: the least likely to have been closed */
		l = dlist_container(DdbLink, node, dlist_pop_head_node(&t->idle));
		t->nidle--;
		l->idle = false;
		dlist_push_tail(&t->links, &l->node);
		/* idle too long: the server or a balancer may be closing it now */
		if (l->idle_since < oldest || !link_untouched(l))
		{
			link_close(l);
			l = NULL;
		}
	}
	if (l == NULL)
		l = link_open(t);
	link_carry(l, a);
}

/* See transportstate.h. */
void
link_detach(DdbTransport *t, DdbAttempt *a)
{
	DdbLink    *l = a->link;

	if (l == NULL)
		return;
	a->link = NULL;
	l->attempt = NULL;
	/* halfway through an exchange, the connection is of no further use */
	if (l->sock != CURL_SOCKET_BAD)
		link_close(l);
}

/*
 * Hand l back to the idle list after a whole exchange, or close it when
 * the server said it would or the list is full.
 */
static void
link_release(DdbLink *l, bool reusable)
{
	DdbTransport *t = l->t;

	l->attempt->link = NULL;
	l->attempt = NULL;
	if (!reusable || t->nidle >= t->max_idle)
	{
		link_close(l);
		return;
	}
	dlist_delete(&l->node);
	dlist_push_head(&t->idle, &l->node);
	l->used = true;
	l->idle = true;
	l->idle_since = GetCurrentTimestamp();
	t->nidle++;
}

/*
 * Act on what an event on l meant for its attempt's exchange (http1.h):
 * hand the answer over, send the attempt again on a new connection, or
 * end it as failed, libcurl's code io_code when a send or a receive
 * failed.  Returns false when l is no longer the attempt's.
 */
static bool
link_follow(DdbLink *l, Http1Next next, CURLcode io_code)
{
	DdbAttempt *a = l->attempt;
	DdbTransport *t = l->t;

	switch (next)
	{
		case HTTP1_WAIT:
			return true;
		case HTTP1_ANSWERED:
			link_release(l, a->x.reusable);
			attempt_done(t, a, CURLE_OK);
			return false;
		case HTTP1_RESEND:
			link_close(l);
			link_carry(link_open(t), a);
			return false;
		case HTTP1_BROKEN:
			break;
	}
	strlcpy(a->errbuf, a->x.reason, sizeof(a->errbuf));
	link_close(l);
	switch (a->x.failure)
	{
		case HTTP1_FAIL_NOTHING:
			io_code = CURLE_GOT_NOTHING;
			break;
		case HTTP1_FAIL_PARTIAL:
			io_code = CURLE_PARTIAL_FILE;
			break;
		case HTTP1_FAIL_MALFORMED:
			io_code = CURLE_WEIRD_SERVER_REPLY;
			break;
		case HTTP1_FAIL_IO:
		case HTTP1_FAIL_NONE:
			break;
	}
	attempt_done(t, a, io_code);
	return false;
}

/* A send or a receive on l failed with rc: see link_follow. */
static void
link_broken(DdbLink *l, CURLcode rc)
{
	Http1Next	next = http1_exchange_broken(&l->attempt->x,
											 l->errbuf[0] ? l->errbuf : curl_easy_strerror(rc));

	link_follow(l, next, rc);
}

/* Send what is left of l's attempt; wait for output room when cut short. */
static void
link_send(DdbLink *l)
{
	Http1Exchange *x = &l->attempt->x;

	while (x->sent < x->out_len)
	{
		size_t		n = 0;
		CURLcode	rc = link_io(l, true, (char *) x->out + x->sent,
								 x->out_len - x->sent, &n);

		if (rc == CURLE_AGAIN)
		{
			if (!l->sending &&
				!sockets_watch_own(l->t->sockets, l->sock, EPOLLOUT, l))
				link_fail(l, CURLE_SEND_ERROR, "could not wait on the connection's socket");
			else
				l->sending = true;
			return;
		}
		if (rc != CURLE_OK)
		{
			link_broken(l, rc);
			return;
		}
		http1_exchange_sent(x, n);
	}
	if (l->sending)
	{
		l->sending = false;
		if (!sockets_watch_own(l->t->sockets, l->sock, EPOLLIN, l))
			link_fail(l, CURLE_RECV_ERROR, "could not wait on the connection's socket");
	}
}

/* Read what has arrived of l's answer; finish its attempt once whole. */
static void
link_receive(DdbLink *l)
{
	char		buf[RECV_CHUNK];

	for (;;)
	{
		size_t		n = 0;
		CURLcode	rc = link_io(l, false, buf, sizeof(buf), &n);

		if (rc == CURLE_AGAIN)
			return;
		if (rc != CURLE_OK)
		{
			link_broken(l, rc);
			return;
		}
		if (!link_follow(l, n == 0 ? http1_exchange_closed(&l->attempt->x) :
						 http1_exchange_received(&l->attempt->x, buf, n),
						 CURLE_RECV_ERROR))
			return;
	}
}

/* See transportstate.h. */
void
link_ready(void *owner, uint32 events)
{
	DdbLink    *l = owner;

	if (l->attempt == NULL)
	{
		char		buf[RECV_CHUNK];
		size_t		n = 0;

		/*
		 * An idle connection: a TLS record the server sends unasked (a
		 * session ticket) reads as nothing; a close or anything else ends it.
		 */
		if (link_io(l, false, buf, sizeof(buf), &n) != CURLE_AGAIN)
			link_close(l);
		return;
	}
	if (l->sending)
		link_send(l);
	else
		link_receive(l);
}

/* See transportstate.h. */
bool
link_opened(DdbTransport *t, CURL *easy, CURLcode result)
{
	DdbLink    *l = NULL;
	curl_socket_t sock = CURL_SOCKET_BAD;

	curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **) &l);
	if (l == NULL || l->easy != easy)
		return false;
	if (l->attempt == NULL)
	{
		/* its attempt is gone: see the file's comment */
		link_close(l);
		return true;
	}
	if (result != CURLE_OK)
	{
		link_fail(l, result, l->errbuf[0] ? l->errbuf : curl_easy_strerror(result));
		return true;
	}
	if (curl_easy_getinfo(easy, CURLINFO_ACTIVESOCKET, &sock) != CURLE_OK ||
		sock == CURL_SOCKET_BAD ||
		!sockets_watch_own(t->sockets, sock, EPOLLIN, l))
	{
		link_fail(l, CURLE_COULDNT_CONNECT, "the new connection has no socket to wait on");
		return true;
	}
	l->sock = sock;
	l->errbuf[0] = '\0';
	if (t->raw)
	{
		size_t		n;

		/* attach the transfer to its connection: see the file's comment */
		curl_easy_send(easy, "", 0, &n);
	}
	link_send(l);
	return true;
}

/*
 * See transportstate.h.  The attempts are walked only once the earliest
 * deadline has passed, which few waits see.
 */
void
links_expire(DdbTransport *t)
{
	dlist_mutable_iter it;
	TimestampTz now = GetCurrentTimestamp();

	if (now < t->next_deadline)
		return;
	t->next_deadline = DT_NOEND;
	dlist_foreach_modify(it, &t->attempts)
	{
		DdbAttempt *a = dlist_container(DdbAttempt, node, it.cur);

		if (a->deadline > now)
		{
			t->next_deadline = Min(t->next_deadline, a->deadline);
			continue;
		}
		if (a->deadline - a->started < (TimestampTz) a->req->attempt_timeout_ms * 1000)
			snprintf(a->errbuf, sizeof(a->errbuf),
					 "no answer within the request's %d ms (request_timeout_ms)",
					 a->req->timeout_ms);
		else
			snprintf(a->errbuf, sizeof(a->errbuf),
					 "no answer within the attempt's %d ms (attempt_timeout_ms)",
					 a->req->attempt_timeout_ms);
		http1_exchange_abandon(&a->x, a->errbuf);
		link_detach(t, a);
		attempt_done(t, a, CURLE_OPERATION_TIMEDOUT);
	}
}

/* See transportstate.h. */
void
links_close_all(DdbTransport *t)
{
	dlist_mutable_iter it;

	dlist_foreach_modify(it, &t->links)
		link_close(dlist_container(DdbLink, node, it.cur));
	dlist_foreach_modify(it, &t->idle)
		link_close(dlist_container(DdbLink, node, it.cur));
}
