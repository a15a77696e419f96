/*
 * events.c
 *		The in-process event bus of a store handle.
 *
 * Handlers are kept in an array in subscription order and called inline by
 * whoever publishes: the library's own writes (mn_emit), the application
 * (mnemo_event_publish) and the feed (feed.c).  A handler that returns
 * non-zero is counted in `failures` and the publisher carries on, as the
 * seed's EventBus logs and swallows a handler's exception.
 *
 * Handlers may subscribe, unsubscribe (themselves or others) and publish
 * again while a dispatch is running, so the array must not move under a
 * dispatch loop nor lose entries it is walking:
 *	- the loop indexes the array afresh on every step and copies the entry
 *	  before calling it, so a realloc by a nested subscribe does no harm;
 *	- a dispatch calls only the entries that existed when it started, so a
 *	  handler subscribed during an event first hears the next one;
 *	- an unsubscribe during any dispatch only clears the entry (fn = NULL);
 *	  the outermost dispatch compacts the array when it returns.
 * Closing the store from inside a handler is not supported.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "events/events.h"

typedef struct mn_sub
{
	int			id;
	mnemo_event_type type;
	mnemo_event_fn fn;			/* NULL: unsubscribed during a dispatch */
	void	   *arg;
} mn_sub;

struct mn_events
{
	mn_sub	   *subs;
	size_t		n;
	size_t		cap;
	int			next_id;
	int			depth;			/* dispatches running (nested publishes) */
	bool		dirty;			/* entries cleared during a dispatch */
	uint64_t	failures;
};

/*
 * The names, indexed by type.  The feed maps the extension's notification
 * names back through this table (see mn_event_type_of_name).
 */
static const char *const event_names[MNEMO_EVENT_TYPE_COUNT_] = {
	[MNEMO_EVENT_ANY] = NULL,
	[MNEMO_EVENT_SESSION_CREATED] = "session_created",
	[MNEMO_EVENT_SESSION_CLOSED] = "session_closed",
	[MNEMO_EVENT_MESSAGE_CREATED] = "message_created",
	[MNEMO_EVENT_COMPACTION_TRIGGERED] = "compaction_triggered",
	[MNEMO_EVENT_COMPACTION_COMPLETED] = "compaction_completed",
	[MNEMO_EVENT_COMPACTION_FAILED] = "compaction_failed",
	[MNEMO_EVENT_DOOM_LOOP_DETECTED] = "doom_loop_detected",
	[MNEMO_EVENT_MAP_STARTED] = "map_started",
	[MNEMO_EVENT_MAP_ITEM_COMPLETED] = "map_item_completed",
	[MNEMO_EVENT_MAP_COMPLETED] = "map_completed",
	[MNEMO_EVENT_PART_CREATED] = "part_created",
	[MNEMO_EVENT_PART_UPDATED] = "part_updated",
	[MNEMO_EVENT_MESSAGE_UPDATED] = "message_updated",
	[MNEMO_EVENT_CONTEXT_SWAPPED] = "context_swapped",
	[MNEMO_EVENT_PARTS_PRUNED] = "parts_pruned",
	[MNEMO_EVENT_COMPACTION_STARTED] = "compaction_started",
};

static void events_release(mnemo_store *st);

static const mn_attachment events_attachment = {events_release, NULL};

MNEMO_API const char *
mnemo_event_name(mnemo_event_type type)
{
	if ((int) type <= MNEMO_EVENT_ANY || type >= MNEMO_EVENT_TYPE_COUNT_)
		return NULL;
	return event_names[type];
}

int
mn_event_type_of_name(const char *name)
{
	if (name == NULL)
		return -1;
	/* commit_summary's notification is the compaction the seed reports */
	if (strcmp(name, "summary_committed") == 0)
		return MNEMO_EVENT_COMPACTION_COMPLETED;
	for (int t = MNEMO_EVENT_ANY + 1; t < MNEMO_EVENT_TYPE_COUNT_; t++)
		if (strcmp(event_names[t], name) == 0)
			return t;
	return -1;
}

static bool
valid_type(int type)
{
	return type > MNEMO_EVENT_ANY && type < MNEMO_EVENT_TYPE_COUNT_;
}

/* Drop the entries cleared during a dispatch; only with no dispatch running. */
static void
compact(struct mn_events *ev)
{
	size_t		kept = 0;

	for (size_t i = 0; i < ev->n; i++)
		if (ev->subs[i].fn != NULL)
			ev->subs[kept++] = ev->subs[i];
	ev->n = kept;
	ev->dirty = false;
}

static void
dispatch(mnemo_store *st, const mnemo_event *event)
{
	struct mn_events *ev = st->events;
	size_t		n;

	if (ev == NULL || ev->n == 0)
		return;
	n = ev->n;
	ev->depth++;
	for (size_t i = 0; i < n; i++)
	{
		/* copied: a handler may grow (move) the array */
		mn_sub		sub = ev->subs[i];

		if (sub.fn == NULL)
			continue;
		if (sub.type != MNEMO_EVENT_ANY && sub.type != event->type)
			continue;
		if (sub.fn(st, event, sub.arg) != 0)
			ev->failures++;
	}
	ev->depth--;
	if (ev->depth == 0 && ev->dirty)
		compact(ev);
}

void
mn_emit(mnemo_store *st, mnemo_event_type type, const char *session_id,
		const char *id, int64_t seq, const char *data, bool remote)
{
	mnemo_event event;

	if (st == NULL || st->events == NULL)
		return;
	event.type = type;
	event.session_id = session_id;
	event.id = id;
	event.seq = seq;
	event.data = data;
	event.remote = remote;
	dispatch(st, &event);
	/* the publisher succeeded; a handler's own failed calls are not its error */
	mn_clear_error(st);
}

MNEMO_API int
mnemo_event_subscribe(mnemo_store *st, mnemo_event_type type, mnemo_event_fn fn, void *arg)
{
	struct mn_events *ev;

	if (st == NULL)
		return MNEMO_ERR_INVALID_ARGUMENT;
	mn_clear_error(st);
	if (fn == NULL)
		return mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT, "the event handler is NULL");
	if (type != MNEMO_EVENT_ANY && !valid_type(type))
		return mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT, "unknown event type %d", (int) type);
	if (st->events == NULL)
	{
		st->events = calloc(1, sizeof(struct mn_events));
		if (st->events == NULL)
			return mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
		st->events->next_id = 1;
		mn_attach(st, &events_attachment);
	}
	ev = st->events;
	if (ev->next_id == INT_MAX)
		return mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT, "subscription ids exhausted");
	if (ev->n == ev->cap)
	{
		size_t		cap = ev->cap ? ev->cap * 2 : 8;
		mn_sub	   *subs = realloc(ev->subs, cap * sizeof(mn_sub));

		if (subs == NULL)
			return mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
		ev->subs = subs;
		ev->cap = cap;
	}
	ev->subs[ev->n].id = ev->next_id;
	ev->subs[ev->n].type = type;
	ev->subs[ev->n].fn = fn;
	ev->subs[ev->n].arg = arg;
	ev->n++;
	/* ids are never reused, so a stale id cannot remove a newer handler */
	return ev->next_id++;
}

MNEMO_API int
mnemo_event_unsubscribe(mnemo_store *st, int subscription)
{
	struct mn_events *ev;

	if (st == NULL)
		return MNEMO_ERR_INVALID_ARGUMENT;
	mn_clear_error(st);
	ev = st->events;
	for (size_t i = 0; ev != NULL && i < ev->n; i++)
	{
		if (ev->subs[i].id != subscription || ev->subs[i].fn == NULL)
			continue;
		if (ev->depth > 0)
		{
			/* a dispatch is walking the array: leave the slot, empty */
			ev->subs[i].fn = NULL;
			ev->dirty = true;
		}
		else
		{
			memmove(&ev->subs[i], &ev->subs[i + 1], (ev->n - i - 1) * sizeof(mn_sub));
			ev->n--;
		}
		return MNEMO_OK;
	}
	return mn_fail(st, MNEMO_ERR_NOT_FOUND, "no subscription %d", subscription);
}

MNEMO_API int
mnemo_event_publish(mnemo_store *st, const mnemo_event *event)
{
	if (st == NULL)
		return MNEMO_ERR_INVALID_ARGUMENT;
	mn_clear_error(st);
	if (event == NULL)
		return mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT, "the event is NULL");
	if (!valid_type(event->type))
		return mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT, "unknown event type %d",
					   (int) event->type);
	dispatch(st, event);
	/* a handler's own failed calls are not the publisher's error */
	mn_clear_error(st);
	return MNEMO_OK;
}

MNEMO_API uint64_t
mnemo_event_failures(const mnemo_store *st)
{
	return st != NULL && st->events != NULL ? st->events->failures : 0;
}

static void
events_release(mnemo_store *st)
{
	if (st == NULL || st->events == NULL)
		return;
	free(st->events->subs);
	free(st->events);
	st->events = NULL;
}
