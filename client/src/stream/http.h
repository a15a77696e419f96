/*
 * http.h
 *		The libcurl transport of chat turns (http.c): one POST of a request
 *		body to a provider, its response body fed to a stream as it arrives.
 *
 * A store's transport (a curl easy handle kept for connection reuse, a
 * multi handle to wait on, the cancel flag and the last HTTP status) is
 * made by the first turn and kept in the store (st->http) until
 * mnemo_store_close: a reconnect replaces the libpq connection, not the
 * transport, so mnemo_turn_cancel() from another thread reads only the
 * handle's own field.
 */
#ifndef MNEMO_HTTP_H
#define MNEMO_HTTP_H

#include <stdbool.h>
#include <stddef.h>

#include "core/core.h"
#include "stream/stream.h"

typedef struct mn_http_post
{
	mn_provider provider;
	const char *url;			/* the full endpoint */
	const char *api_key;		/* sent in the provider's header, nowhere
								 * else; redacted from any message */
	const char *body;
	size_t		body_len;
	int			connect_timeout_ms; /* > 0 */
	int			idle_timeout_ms;	/* > 0: no byte for this long fails */
	int			max_retries;	/* >= 0 */
	mn_stream  *stream;			/* receives a 2xx body */
} mn_http_post;

/*
 * POST, retrying 429 / 5xx / 529 before the first body byte (not 429
 * insufficient_quota), and a connection that failed before any response
 * (refused, unresolved, closed or reset), up to max_retries times with
 * exponential backoff honouring retry-after-ms, then retry-after in seconds
 * or as an HTTP-date (capped at 60 s).
 *
 * Returns MNEMO_OK when a 2xx body was read to its end (the stream's state
 * says whether it was complete), else the error, set on the handle:
 * AUTH, HTTP, RATE_LIMITED (the provider's message), NETWORK (could not
 * connect), TIMEOUT (connect or idle), CANCELLED (mnemo_turn_cancel), STREAM
 * (the connection dropped mid-body), NOMEM, or what the stream's callback
 * returned to stop it (mn_stream_stop_value).  *accepted says whether a
 * response's headers said 2xx: the stream began.
 */
int			mn_http_send(mnemo_store *st, const mn_http_post *post, bool *accepted);

/* Clear the cancel flag at the start of a turn (creating the transport). */
int			mn_http_begin(mnemo_store *st);

#endif							/* MNEMO_HTTP_H */
