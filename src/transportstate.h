/*-------------------------------------------------------------------------
 *
 * transportstate.h
 *		The transport's state, shared by the files that run it:
 *		transport.c (DynamoDB requests) and exchange.c (the credential
 *		sources' plain HTTP exchanges, on the same multi handle).
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHARD_FDW_TRANSPORTSTATE_H
#define SHARD_FDW_TRANSPORTSTATE_H

#include "shard_fdw.h"

#include <curl/curl.h>

#include "lib/stringinfo.h"

#include "sigv4.h"
#include "sockets.h"

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
	CURLM	   *multi;
	char	   *url;
	CURLU	   *curlu;			/* url, parsed */
	char	   *host;			/* the Host header, as signed */
	dlist_head	queue;			/* queued requests of every group */
	dlist_head	attempts;		/* attempts in flight */
	dlist_head	groups;
	dlist_head	exchanges;		/* plain exchanges in flight */
	dlist_head	spares;			/* ended attempts, kept for their easy handles */
	int			nspares;
	int			max_spares;
	SocketSet  *sockets;		/* what waits sleep on */
	RetryBudget budget;
	bool		proven;			/* the endpoint answered as DynamoDB */
	char		key_day[9];		/* the YYYYMMDD signing_key is for */
	uint32		key_generation; /* of the credentials it is derived from */
	unsigned char signing_key[SIGV4_KEY_LEN];
};


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
 * Let libcurl act on its due timeouts and on the sockets that are ready,
 * and collect finished transfers, first waiting at most timeout_ms (0:
 * not at all) when none had finished.  Returns whether a plain exchange
 * ended.
 */
extern bool transport_drive(DdbTransport *t, int timeout_ms);

/*
 * Append n bytes to buf from inside a libcurl callback, where nothing may
 * throw; false, which fails the transfer, when buf would hold more than
 * max bytes (at most MaxAllocSize - 1) or no memory is left.
 */
extern bool append_in_callback(StringInfo buf, const char *data, size_t n, size_t max);

#endif							/* SHARD_FDW_TRANSPORTSTATE_H */
