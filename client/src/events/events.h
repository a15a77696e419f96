/*
 * events.h
 *		The event bus of a handle (events.c) and the feed that fills it from
 *		other processes' commits (feed.c).
 *
 * Owns: events/.  May call: core/ only.  store/, transcript/ and chat/
 * publish through mn_emit after the server committed what they report.
 */
#ifndef MNEMO_EVENTS_H
#define MNEMO_EVENTS_H

#include "core/core.h"

/* Publish on the handle (the library's own writes use it). */
void		mn_emit(mnemo_store *st, mnemo_event_type type, const char *session_id,
					const char *id, int64_t seq, const char *data, bool remote);

/* The event type a notification's "event" names (summary_committed is
 * MNEMO_EVENT_COMPACTION_COMPLETED), or -1 if none (events.c). */
int			mn_event_type_of_name(const char *name);

#endif							/* MNEMO_EVENTS_H */
