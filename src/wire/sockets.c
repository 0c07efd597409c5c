/*-------------------------------------------------------------------------
 *
 * sockets.c
 *		The sockets of a libcurl multi handle in an epoll set, and its
 *		timer: libcurl's socket and timer callbacks keep them, a wait
 *		sleeps on the set and hands libcurl (curl_multi_socket_action)
 *		only the sockets that are ready, so a wake-up costs the same with
 *		1 or 128 transfers in flight.
 *
 * The set also opens and closes libcurl's connection sockets, so that it
 * knows when a socket number is reused: a kept-alive connection's socket
 * then stays in the epoll set between the requests it carries, and a
 * request changes nothing in the set.
 *
 * A connection libcurl opened and left to its user (a CONNECT_ONLY
 * transfer's) gets an owner: from then on its readiness goes to the
 * owner's callback, not to libcurl.
 *
 * Everything here but sockets_create runs inside libcurl or around it,
 * and nothing may throw there: a failure fails the transfer instead.
 *
 *-------------------------------------------------------------------------
 */
#include "wire/wire.h"

#include <sys/epoll.h>
#include <unistd.h>

#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "wire/sockets.h"

/* The most ready sockets one wait hands to libcurl (more wait their turn). */
#define MAX_READY 64

/*
 * What the set knows of one socket number.  A connection's socket, which
 * the set opens and closes for libcurl, stays in the epoll set between the
 * requests it carries: a request on a kept-alive connection then changes
 * nothing in the set.  Other sockets (a name resolver's) are in the set
 * exactly while libcurl waits on them.
 */
typedef struct SocketWatch
{
	bool		connection;		/* opened by on_open_socket, not closed yet */
	bool		wanted;			/* libcurl waits on it */
	uint32		events;			/* what the set has it for; 0: not in it */
	void	   *owner;			/* whose I/O it carries once connected, or NULL */
} SocketWatch;

struct SocketSet
{
	CURLM	   *multi;
	SocketReady on_ready;		/* called for sockets with an owner */
	int			epoll_fd;		/* watches the sockets libcurl waits on */
	SocketWatch *watch;			/* per socket number, below nwatch */
	int			nwatch;
	bool		timer_set;		/* libcurl wants to act at timer_at */
	TimestampTz timer_at;
};

/*
 * The set's record of socket s, the array grown to hold it; NULL when it
 * cannot grow.
 */
static SocketWatch *
socket_watch(SocketSet *set, curl_socket_t s)
{
	if (s >= set->nwatch)
	{
		int			n = Max(s + 1, set->nwatch * 2);
		SocketWatch *watch = MemoryContextAllocExtended(GetMemoryChunkContext(set),
														n * sizeof(SocketWatch),
														MCXT_ALLOC_NO_OOM | MCXT_ALLOC_ZERO);

		if (watch == NULL)
			return NULL;
		if (set->watch)
		{
			memcpy(watch, set->watch, set->nwatch * sizeof(SocketWatch));
			pfree(set->watch);
		}
		set->watch = watch;
		set->nwatch = n;
	}
	return &set->watch[s];
}

/*
 * Put s in the epoll set for events, or change what it is there for (a
 * socket closed behind the record's back is added anew).  Returns whether
 * the set took it.
 */
static bool
epoll_watch(SocketSet *set, curl_socket_t s, SocketWatch *w, uint32 events)
{
	struct epoll_event ev = {.events = events,.data.fd = s};

	if (epoll_ctl(set->epoll_fd, w->events ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, s, &ev) != 0 &&
		epoll_ctl(set->epoll_fd, w->events ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, s, &ev) != 0)
		return false;
	w->events = events;
	return true;
}

/* Take s out of the epoll set. */
static void
epoll_unwatch(SocketSet *set, curl_socket_t s, SocketWatch *w)
{
	epoll_ctl(set->epoll_fd, EPOLL_CTL_DEL, s, NULL);
	w->events = 0;
}

/*
 * libcurl socket callback: libcurl waits on socket s for what (or no
 * longer).  A connection's socket no longer waited on stays in the set
 * until it next says something (see SocketWatch).  Returns -1, which
 * fails the transfer, when the set refuses it.
 */
static int
on_socket(CURL *easy, curl_socket_t s, int what, void *arg, void *socketp)
{
	SocketSet  *set = arg;
	SocketWatch *w = socket_watch(set, s);
	uint32		events = ((what & CURL_POLL_IN) ? EPOLLIN : 0) |
		((what & CURL_POLL_OUT) ? EPOLLOUT : 0);

	if (w == NULL)
		return -1;
	w->wanted = what != CURL_POLL_REMOVE;
	if (w->owner)
		return 0;
	if (!w->wanted)
	{
		if (!w->connection && w->events)
			epoll_unwatch(set, s, w);
		return 0;
	}
	if (w->events == events)
		return 0;
	return epoll_watch(set, s, w, events) ? 0 : -1;
}

/* libcurl open socket callback: a connection's socket, recorded so. */
static curl_socket_t
on_open_socket(void *arg, curlsocktype purpose, struct curl_sockaddr *addr)
{
	SocketSet  *set = arg;
	curl_socket_t s = socket(addr->family, addr->socktype | SOCK_CLOEXEC, addr->protocol);
	SocketWatch *w;

	if (s == CURL_SOCKET_BAD)
		return s;
	w = socket_watch(set, s);
	if (w == NULL)
	{
		close(s);
		return CURL_SOCKET_BAD;
	}
	*w = (SocketWatch) {.connection = true};
	return s;
}

/*
 * libcurl close socket callback: a connection's socket is closed, which
 * also takes it out of the epoll set.
 */
static int
on_close_socket(void *arg, curl_socket_t s)
{
	SocketSet  *set = arg;

	if (s < set->nwatch)
		set->watch[s] = (SocketWatch) {0};
	return close(s);
}

/* See sockets.h. */
void
sockets_own(SocketSet *set, CURL *easy)
{
	curl_easy_setopt(easy, CURLOPT_OPENSOCKETFUNCTION, on_open_socket);
	curl_easy_setopt(easy, CURLOPT_OPENSOCKETDATA, set);
	curl_easy_setopt(easy, CURLOPT_CLOSESOCKETFUNCTION, on_close_socket);
	curl_easy_setopt(easy, CURLOPT_CLOSESOCKETDATA, set);
}

/* See sockets.h. */
bool
sockets_watch_own(SocketSet *set, curl_socket_t s, uint32 events, void *owner)
{
	SocketWatch *w = socket_watch(set, s);

	if (w == NULL || !w->connection)
		return false;
	w->owner = owner;
	return w->events == events || epoll_watch(set, s, w, events);
}

/* libcurl timer callback: when libcurl next wants to act (-1: never). */
static int
on_timer(CURLM *multi, long timeout_ms, void *arg)
{
	SocketSet  *set = arg;

	set->timer_set = timeout_ms >= 0;
	if (set->timer_set)
		set->timer_at = GetCurrentTimestamp() + timeout_ms * 1000;
	return 0;
}

/* See sockets.h. */
SocketSet *
sockets_create(CURLM *multi, SocketReady on_ready)
{
	SocketSet  *set = palloc0(sizeof(SocketSet));

	set->multi = multi;
	set->on_ready = on_ready;
	set->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (set->epoll_fd < 0)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_OUT_OF_MEMORY),
				 errmsg("could not create an epoll set: %m")));
	curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, on_socket);
	curl_multi_setopt(multi, CURLMOPT_SOCKETDATA, set);
	curl_multi_setopt(multi, CURLMOPT_TIMERFUNCTION, on_timer);
	curl_multi_setopt(multi, CURLMOPT_TIMERDATA, set);
	return set;
}

/* See sockets.h. */
void
sockets_destroy(SocketSet *set)
{
	close(set->epoll_fd);
}

/* See sockets.h. */
void
sockets_run_timer(SocketSet *set)
{
	int			running;

	if (set->timer_set && set->timer_at <= GetCurrentTimestamp())
	{
		set->timer_set = false;
		curl_multi_socket_action(set->multi, CURL_SOCKET_TIMEOUT, 0, &running);
	}
}

/* See sockets.h. */
int
sockets_wait(SocketSet *set, int timeout_ms, uint32 wait_event)
{
	struct epoll_event ready[MAX_READY];
	int			nready;
	int			running;

	if (timeout_ms > 0 && set->timer_set)
		timeout_ms = (int) Min(timeout_ms,
							   Max(0, (set->timer_at - GetCurrentTimestamp() + 999) / 1000));
	if (timeout_ms > 0)
		pgstat_report_wait_start(wait_event);
	nready = epoll_wait(set->epoll_fd, ready, MAX_READY, timeout_ms);
	if (timeout_ms > 0)
		pgstat_report_wait_end();
	for (int i = 0; i < nready; i++)
	{
		curl_socket_t s = ready[i].data.fd;
		uint32		ev = ready[i].events;

		/* an earlier socket's owner may have closed this one meanwhile */
		if (s >= set->nwatch)
			continue;
		if (set->watch[s].owner)
		{
			set->on_ready(set->watch[s].owner, ev);
			continue;
		}
		if (!set->watch[s].wanted)
		{
			/* a kept-alive connection closed by the server, or sent junk */
			epoll_unwatch(set, s, &set->watch[s]);
			continue;
		}
		curl_multi_socket_action(set->multi, s,
								 ((ev & (EPOLLIN | EPOLLHUP)) ? CURL_CSELECT_IN : 0) |
								 ((ev & EPOLLOUT) ? CURL_CSELECT_OUT : 0) |
								 ((ev & EPOLLERR) ? CURL_CSELECT_ERR : 0),
								 &running);
	}
	return nready;
}
