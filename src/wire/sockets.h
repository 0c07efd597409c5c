/*-------------------------------------------------------------------------
 *
 * sockets.h
 *		The sockets of a libcurl multi handle in an epoll set, and its
 *		timer: what transport.c waits on (see sockets.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHARD_FDW_SOCKETS_H
#define SHARD_FDW_SOCKETS_H

#include <stdbool.h>
#include <stdint.h>

#include <curl/curl.h>

typedef struct SocketSet SocketSet;

/*
 * What a wait calls for a ready socket that has an owner (see
 * sockets_watch_own), with the epoll events it is ready for.
 */
typedef void (*SocketReady) (void *owner, uint32_t events);

/*
 * The socket set of multi, allocated in the current memory context; it
 * becomes multi's socket and timer callbacks.  A ready socket that has an
 * owner goes to on_ready instead of libcurl.  Errors out when the epoll
 * set cannot be made.
 */
extern SocketSet *sockets_create(CURLM *multi, SocketReady on_ready);

/* Close the epoll set (after curl_multi_cleanup of its multi handle). */
extern void sockets_destroy(SocketSet *set);

/* Have libcurl open and close easy's connections through set. */
extern void sockets_own(SocketSet *set, CURL *easy);

/*
 * Watch connection socket s for events (EPOLLIN, EPOLLOUT) on behalf of
 * owner, whose I/O it now carries (a connection libcurl opened and left
 * to its user): a wait hands it to on_ready rather than libcurl.  It stays
 * so until libcurl closes it.  False when s is not a connection's socket
 * of the set or the epoll set refuses it.
 */
extern bool sockets_watch_own(SocketSet *set, curl_socket_t s, uint32_t events, void *owner);

/* Let libcurl act on its timeouts if they are due. */
extern void sockets_run_timer(SocketSet *set);

/*
 * Wait at most timeout_ms (0: not at all; less when libcurl's timer is
 * due sooner) for sockets to be ready, the backend reporting wait_event
 * while it sleeps, and let libcurl act on those that are.  Returns how
 * many were.
 */
extern int	sockets_wait(SocketSet *set, int timeout_ms, uint32_t wait_event);

#endif							/* SHARD_FDW_SOCKETS_H */
