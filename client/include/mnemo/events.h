/*
 * mnemo/events.h
 *		In-process events and the cross-process feed.
 *
 * A part of the public API: include <mnemo.h>, which includes every part
 * (the conventions of every call are at its head).
 */
#ifndef MNEMO_API_EVENTS_H
#define MNEMO_API_EVENTS_H

#include "store.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------
 * Events
 *
 * In-process: handlers subscribed on a handle are called inline, in
 * subscription order, by the call that publishes (the library's own calls,
 * mnemo_event_publish, or mnemo_feed_poll).  A handler returning non-zero
 * has failed: the failure is counted and the caller carries on.  Handlers
 * may subscribe and unsubscribe from inside a handler.
 *
 * Cross-process: mnemo_feed_follow() watches a session, LISTENs on channel
 * mnemo, and mnemo_feed_poll() turns the extension's notifications into the
 * same events, catching up by seq so that no message is missed or delivered
 * twice, across reconnects too.
 * ------------------------------------------------------------------------ */
typedef enum mnemo_event_type
{
	MNEMO_EVENT_ANY = 0,		/* subscribe only: every type */
	MNEMO_EVENT_SESSION_CREATED,
	MNEMO_EVENT_SESSION_CLOSED,
	MNEMO_EVENT_MESSAGE_CREATED,
	MNEMO_EVENT_COMPACTION_TRIGGERED,
	MNEMO_EVENT_COMPACTION_COMPLETED,
	MNEMO_EVENT_COMPACTION_FAILED,
	MNEMO_EVENT_DOOM_LOOP_DETECTED,
	MNEMO_EVENT_MAP_STARTED,
	MNEMO_EVENT_MAP_ITEM_COMPLETED,
	MNEMO_EVENT_MAP_COMPLETED,
	/* write notifications of the extension, delivered by the feed */
	MNEMO_EVENT_PART_CREATED,
	MNEMO_EVENT_PART_UPDATED,
	MNEMO_EVENT_MESSAGE_UPDATED,
	MNEMO_EVENT_CONTEXT_SWAPPED,
	MNEMO_EVENT_PARTS_PRUNED,
	/* a compaction took its claim (or, on the feed, claim_compaction did);
	 * after the others, so that their values stay those of 0.2 */
	MNEMO_EVENT_COMPACTION_STARTED,
	MNEMO_EVENT_TYPE_COUNT_
} mnemo_event_type;

typedef struct mnemo_event
{
	mnemo_event_type type;
	const char *session_id;
	const char *id;				/* the message, part or summary; or NULL */
	int64_t		seq;			/* the message's seq; 0 when none */
	const char *data;			/* JSON object with the details, or NULL */
	bool		remote;			/* delivered by the feed */
} mnemo_event;

/* Valid only during the call; copy what you keep. */
typedef int (*mnemo_event_fn) (mnemo_store *st, const mnemo_event *event, void *arg);

/* The name of an event type: "message_created", ...; NULL if unknown. */
MNEMO_API const char *mnemo_event_name(mnemo_event_type type);

/* Call fn for every event of type (MNEMO_EVENT_ANY: all) published on this
 * handle.  Returns a subscription id (> 0), or a negative error:
 * INVALID_ARGUMENT (no fn, unknown type), NOMEM. */
MNEMO_API int mnemo_event_subscribe(mnemo_store *st, mnemo_event_type type,
									mnemo_event_fn fn, void *arg);

/* Errors: NOT_FOUND for an unknown subscription id. */
MNEMO_API int mnemo_event_unsubscribe(mnemo_store *st, int subscription);

/* Call the handlers subscribed to event->type (and to ANY).
 * Errors: INVALID_ARGUMENT (event NULL, unknown type). */
MNEMO_API int mnemo_event_publish(mnemo_store *st, const mnemo_event *event);

/* How many handler calls have failed on this handle so far. */
MNEMO_API uint64_t mnemo_event_failures(const mnemo_store *st);

/*
 * Follow a session from another process: mnemo.watch() it, LISTEN mnemo,
 * and deliver MESSAGE_CREATED for every message with seq > after_seq (the
 * ones already there first, then new ones as they commit), plus the other
 * write notifications for it.  Errors: SESSION_NOT_FOUND.
 */
MNEMO_API int mnemo_feed_follow(mnemo_store *st, const char *session_id, int64_t after_seq);

/* Stop following (the session stays watched for other followers).
 * Errors: INVALID_ARGUMENT (no session id), NOT_FOUND (not followed here). */
MNEMO_API int mnemo_feed_unfollow(mnemo_store *st, const char *session_id);

/*
 * Wait up to timeout_ms (0: do not wait, < 0: forever) for notifications
 * and deliver them as events.  Returns the number of events delivered, or a
 * negative error; after MNEMO_ERR_CONNECTION, mnemo_store_reconnect() and
 * poll again: the feed catches up from the last seq it delivered.
 */
MNEMO_API int mnemo_feed_poll(mnemo_store *st, int timeout_ms);

/* The connection's socket, for the caller's own poll()/select(); -1 if none. */
MNEMO_API int mnemo_feed_socket(const mnemo_store *st);

#ifdef __cplusplus
}
#endif

#endif							/* MNEMO_API_EVENTS_H */
