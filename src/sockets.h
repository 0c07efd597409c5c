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

#include <curl/curl.h>

typedef struct SocketSet SocketSet;

/*
 * The socket set of multi, allocated in the current memory context; it
 * becomes multi's socket and timer callbacks.  Errors out when the epoll
 * set cannot be made.
 */
extern SocketSet *sockets_create(CURLM *multi);

/* Close the epoll set (after curl_multi_cleanup of its multi handle). */
extern void sockets_destroy(SocketSet *set);

/* Have libcurl open and close easy's connections through set. */
extern void sockets_own(SocketSet *set, CURL *easy);

/* Let libcurl act on its timeouts if they are due. */
extern void sockets_run_timer(SocketSet *set);

/*
 * Wait at most timeout_ms (0: not at all; less when libcurl's timer is
 * due sooner) for sockets to be ready, and let libcurl act on those that
 * are.
 */
extern void sockets_wait(SocketSet *set, int timeout_ms);

#endif							/* SHARD_FDW_SOCKETS_H */
