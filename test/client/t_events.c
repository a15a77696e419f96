/*
 * t_events.c
 *		The in-process event bus: subscriptions, order, unsubscribing (from
 *		inside handlers too), failing handlers, re-entrant publishing, and the
 *		events the library's own writes publish.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mnemo.h"
#include "tap.h"

/* What the handlers saw, as "tag:name;" in call order. */
static char trace[4096];

static void
trace_add(const char *tag, const mnemo_event *ev)
{
	size_t		len = strlen(trace);

	snprintf(trace + len, sizeof(trace) - len, "%s:%s;", tag,
			 mnemo_event_name(ev->type) ? mnemo_event_name(ev->type) : "?");
}

static void
trace_reset(void)
{
	trace[0] = '\0';
}

/* A recording handler: arg is its tag. */
static int
tag_handler(mnemo_store *st, const mnemo_event *ev, void *arg)
{
	(void) st;
	trace_add((const char *) arg, ev);
	return 0;
}

static int
failing_handler(mnemo_store *st, const mnemo_event *ev, void *arg)
{
	(void) st;
	trace_add((const char *) arg, ev);
	return -1;
}

/* The last event a `keep` handler saw, copied. */
typedef struct kept
{
	int			calls;
	mnemo_event_type type;
	char		session_id[MNEMO_ID_MAX + 1];
	char		id[MNEMO_ID_MAX + 1];
	bool		has_id;
	int64_t		seq;
	char		data[256];
	bool		has_data;
	bool		remote;
} kept;

static int
keep_handler(mnemo_store *st, const mnemo_event *ev, void *arg)
{
	kept	   *k = arg;

	(void) st;
	k->calls++;
	k->type = ev->type;
	snprintf(k->session_id, sizeof(k->session_id), "%s", ev->session_id ? ev->session_id : "");
	k->has_id = ev->id != NULL;
	snprintf(k->id, sizeof(k->id), "%s", ev->id ? ev->id : "");
	k->seq = ev->seq;
	k->has_data = ev->data != NULL;
	snprintf(k->data, sizeof(k->data), "%s", ev->data ? ev->data : "");
	k->remote = ev->remote;
	return 0;
}

/* Message events of the library, in order. */
typedef struct msg_log
{
	int			n;
	char		ids[8][MNEMO_ID_MAX + 1];
	int64_t		seqs[8];
	bool		remote[8];
} msg_log;

static int
msg_log_handler(mnemo_store *st, const mnemo_event *ev, void *arg)
{
	msg_log    *log = arg;

	(void) st;
	if (log->n < 8)
	{
		snprintf(log->ids[log->n], sizeof(log->ids[0]), "%s", ev->id ? ev->id : "");
		log->seqs[log->n] = ev->seq;
		log->remote[log->n] = ev->remote;
	}
	log->n++;
	return 0;
}

/* Unsubscribes the subscription *arg (itself or another) when called. */
typedef struct unsub_ctx
{
	int			target;
	int			rc;
	int			calls;
	const char *tag;
} unsub_ctx;

static int
unsub_handler(mnemo_store *st, const mnemo_event *ev, void *arg)
{
	unsub_ctx  *u = arg;

	trace_add(u->tag, ev);
	u->calls++;
	u->rc = mnemo_event_unsubscribe(st, u->target);
	return 0;
}

/* Subscribes many handlers (growing the array under the dispatch). */
typedef struct sub_ctx
{
	int			ids[40];
	int			n;
} sub_ctx;

static int
sub_many_handler(mnemo_store *st, const mnemo_event *ev, void *arg)
{
	sub_ctx    *s = arg;

	trace_add("grow", ev);
	for (int i = 0; i < 40 && s->n < 40; i++)
		s->ids[s->n++] = mnemo_event_subscribe(st, MNEMO_EVENT_ANY, tag_handler, (void *) "new");
	return 0;
}

/* Publishes MAP_ITEM_COMPLETED from inside a MAP_STARTED handler. */
static int
republish_handler(mnemo_store *st, const mnemo_event *ev, void *arg)
{
	mnemo_event inner = {.type = MNEMO_EVENT_MAP_ITEM_COMPLETED, .session_id = ev->session_id};

	(void) arg;
	trace_add("re", ev);
	if (ev->type == MNEMO_EVENT_MAP_STARTED && mnemo_event_publish(st, &inner) != MNEMO_OK)
		trace_add("re-failed", ev);
	return 0;
}

/* Makes a failing library call: its error must not leak to the publisher. */
static int
erring_handler(mnemo_store *st, const mnemo_event *ev, void *arg)
{
	mnemo_session *s = NULL;

	(void) ev;
	*(int *) arg = mnemo_session_get(st, "no_such_session", &s);
	return 0;
}

static int
publish(mnemo_store *st, mnemo_event_type type, const char *session_id)
{
	mnemo_event ev = {.type = type, .session_id = session_id};

	return mnemo_event_publish(st, &ev);
}

static void
test_names(void)
{
	is_str(mnemo_event_name(MNEMO_EVENT_SESSION_CREATED), "session_created", "name of SESSION_CREATED");
	is_str(mnemo_event_name(MNEMO_EVENT_MESSAGE_CREATED), "message_created", "name of MESSAGE_CREATED");
	is_str(mnemo_event_name(MNEMO_EVENT_COMPACTION_COMPLETED), "compaction_completed",
		   "name of COMPACTION_COMPLETED");
	is_str(mnemo_event_name(MNEMO_EVENT_DOOM_LOOP_DETECTED), "doom_loop_detected",
		   "name of DOOM_LOOP_DETECTED");
	is_str(mnemo_event_name(MNEMO_EVENT_MAP_ITEM_COMPLETED), "map_item_completed",
		   "name of MAP_ITEM_COMPLETED");
	is_str(mnemo_event_name(MNEMO_EVENT_PART_UPDATED), "part_updated", "name of PART_UPDATED");
	is_str(mnemo_event_name(MNEMO_EVENT_PARTS_PRUNED), "parts_pruned", "name of PARTS_PRUNED");
	is_str(mnemo_event_name(MNEMO_EVENT_COMPACTION_STARTED), "compaction_started",
		   "name of COMPACTION_STARTED");
	is_int(MNEMO_EVENT_COMPACTION_STARTED, MNEMO_EVENT_PARTS_PRUNED + 1,
		   "COMPACTION_STARTED comes after the 0.2 types: their values are unchanged");
	ok(mnemo_event_name(MNEMO_EVENT_ANY) == NULL, "ANY is not an event: no name");
	ok(mnemo_event_name(MNEMO_EVENT_TYPE_COUNT_) == NULL, "an unknown type has no name");
	{
		int			named = 1;

		for (int t = MNEMO_EVENT_ANY + 1; t < MNEMO_EVENT_TYPE_COUNT_; t++)
			if (mnemo_event_name((mnemo_event_type) t) == NULL)
				named = 0;
		ok(named, "every event type has a name");
	}
}

static void
test_subscribe_and_order(mnemo_store *st)
{
	kept		k = {0};
	int			a,
				any,
				c,
				kid;
	mnemo_event ev = {
		.type = MNEMO_EVENT_MESSAGE_CREATED, .session_id = "sess_x", .id = "msg_y",
		.seq = 7, .data = "{\"k\": 1}", .remote = false
	};

	a = mnemo_event_subscribe(st, MNEMO_EVENT_MESSAGE_CREATED, tag_handler, (void *) "a");
	any = mnemo_event_subscribe(st, MNEMO_EVENT_ANY, tag_handler, (void *) "any");
	c = mnemo_event_subscribe(st, MNEMO_EVENT_MESSAGE_CREATED, tag_handler, (void *) "c");
	kid = mnemo_event_subscribe(st, MNEMO_EVENT_MESSAGE_CREATED, keep_handler, &k);
	ok(a > 0 && any > 0 && c > 0 && kid > 0, "subscribe returns ids > 0");
	ok(a != any && any != c && c != kid && a != c, "subscription ids are distinct");

	trace_reset();
	is_int(mnemo_event_publish(st, &ev), MNEMO_OK, "publish succeeds");
	is_str(trace, "a:message_created;any:message_created;c:message_created;",
		   "handlers of the type and of ANY run in subscription order");
	is_int(k.calls, 1, "the handler is called once per publish");
	is_str(k.session_id, "sess_x", "the event's session id reaches the handler");
	is_str(k.id, "msg_y", "the event's id reaches the handler");
	is_int(k.seq, 7, "the event's seq reaches the handler");
	is_str(k.data, "{\"k\": 1}", "the event's data reaches the handler");
	ok(!k.remote, "a local publish is not remote");

	trace_reset();
	is_int(publish(st, MNEMO_EVENT_SESSION_CLOSED, "sess_x"), MNEMO_OK, "publish another type");
	is_str(trace, "any:session_closed;", "only ANY hears a type nobody else subscribed to");

	is_int(mnemo_event_unsubscribe(st, a), MNEMO_OK, "unsubscribe");
	trace_reset();
	publish(st, MNEMO_EVENT_MESSAGE_CREATED, "sess_x");
	is_str(trace, "any:message_created;c:message_created;", "an unsubscribed handler is not called");
	is_int(mnemo_event_unsubscribe(st, a), MNEMO_ERR_NOT_FOUND, "unsubscribing twice: NOT_FOUND");
	is_int(mnemo_errcode(st), MNEMO_ERR_NOT_FOUND, "the handle reports NOT_FOUND");
	is_int(mnemo_event_unsubscribe(st, 987654), MNEMO_ERR_NOT_FOUND, "an unknown id: NOT_FOUND");
	is_int(mnemo_event_unsubscribe(st, 0), MNEMO_ERR_NOT_FOUND, "id 0: NOT_FOUND");

	/* a new subscription's id is not a recycled one */
	{
		int			again = mnemo_event_subscribe(st, MNEMO_EVENT_MESSAGE_CREATED, tag_handler,
												  (void *) "a2");

		ok(again > 0 && again != a && again != any && again != c && again != kid,
		   "ids are not reused after an unsubscribe");
		mnemo_event_unsubscribe(st, again);
	}

	mnemo_event_unsubscribe(st, any);
	mnemo_event_unsubscribe(st, c);
	mnemo_event_unsubscribe(st, kid);
	trace_reset();
	publish(st, MNEMO_EVENT_MESSAGE_CREATED, "sess_x");
	is_str(trace, "", "no handler left, nothing called");
}

static void
test_argument_errors(mnemo_store *st)
{
	mnemo_event ev = {.type = MNEMO_EVENT_ANY, .session_id = "s"};

	is_int(mnemo_event_subscribe(st, MNEMO_EVENT_ANY, NULL, NULL), MNEMO_ERR_INVALID_ARGUMENT,
		   "subscribe without a handler: INVALID_ARGUMENT");
	is_int(mnemo_event_subscribe(st, MNEMO_EVENT_TYPE_COUNT_, tag_handler, NULL),
		   MNEMO_ERR_INVALID_ARGUMENT, "subscribe to an unknown type: INVALID_ARGUMENT");
	is_int(mnemo_event_publish(st, &ev), MNEMO_ERR_INVALID_ARGUMENT,
		   "publishing ANY: INVALID_ARGUMENT");
	is_int(mnemo_event_publish(st, NULL), MNEMO_ERR_INVALID_ARGUMENT,
		   "publishing NULL: INVALID_ARGUMENT");
	is_int(mnemo_event_subscribe(NULL, MNEMO_EVENT_ANY, tag_handler, NULL),
		   MNEMO_ERR_INVALID_ARGUMENT, "subscribe on a NULL handle: INVALID_ARGUMENT");
	is_int((long long) mnemo_event_failures(NULL), 0, "failures of a NULL handle: 0");
}

static void
test_unsubscribe_inside(mnemo_store *st)
{
	unsub_ctx	self = {.tag = "self"};
	unsub_ctx	other = {.tag = "killer"};
	int			later;

	/* a handler that removes itself runs once */
	self.target = mnemo_event_subscribe(st, MNEMO_EVENT_MAP_STARTED, unsub_handler, &self);
	trace_reset();
	publish(st, MNEMO_EVENT_MAP_STARTED, "s");
	publish(st, MNEMO_EVENT_MAP_STARTED, "s");
	is_int(self.calls, 1, "a handler that unsubscribes itself is called once");
	is_int(self.rc, MNEMO_OK, "unsubscribing itself from inside a handler succeeds");

	/* a handler that removes a later one: the later one is not called */
	other.target = -1;
	{
		int			killer = mnemo_event_subscribe(st, MNEMO_EVENT_MAP_STARTED, unsub_handler, &other);

		later = mnemo_event_subscribe(st, MNEMO_EVENT_MAP_STARTED, tag_handler, (void *) "later");
		other.target = later;
		trace_reset();
		publish(st, MNEMO_EVENT_MAP_STARTED, "s");
		is_str(trace, "killer:map_started;",
			   "a handler unsubscribed by an earlier one is not called for the same event");
		is_int(other.rc, MNEMO_OK, "unsubscribing another from inside a handler succeeds");
		trace_reset();
		publish(st, MNEMO_EVENT_MAP_STARTED, "s");
		is_str(trace, "killer:map_started;", "nor afterwards");
		is_int(other.rc, MNEMO_ERR_NOT_FOUND, "and unsubscribing it again is NOT_FOUND");
		mnemo_event_unsubscribe(st, killer);
	}
}

static void
test_subscribe_inside(mnemo_store *st)
{
	sub_ctx		s = {.n = 0};
	int			grow = mnemo_event_subscribe(st, MNEMO_EVENT_MAP_COMPLETED, sub_many_handler, &s);
	int			all_ok = 1;

	trace_reset();
	publish(st, MNEMO_EVENT_MAP_COMPLETED, "s");
	is_str(trace, "grow:map_completed;",
		   "handlers subscribed during an event first hear the next one");
	for (int i = 0; i < s.n; i++)
		if (s.ids[i] <= 0)
			all_ok = 0;
	ok(s.n == 40 && all_ok, "40 subscriptions made from inside a handler");
	mnemo_event_unsubscribe(st, grow);
	trace_reset();
	publish(st, MNEMO_EVENT_MAP_COMPLETED, "s");
	ok(strncmp(trace, "new:map_completed;", 18) == 0 && strlen(trace) == 40 * 18,
	   "they are called for the next event, each once");
	for (int i = 0; i < s.n; i++)
		mnemo_event_unsubscribe(st, s.ids[i]);
}

static void
test_republish(mnemo_store *st)
{
	int			re = mnemo_event_subscribe(st, MNEMO_EVENT_ANY, republish_handler, NULL);
	int			tail = mnemo_event_subscribe(st, MNEMO_EVENT_ANY, tag_handler, (void *) "tail");

	trace_reset();
	is_int(publish(st, MNEMO_EVENT_MAP_STARTED, "s"), MNEMO_OK, "publish with a re-publishing handler");
	is_str(trace, "re:map_started;re:map_item_completed;tail:map_item_completed;tail:map_started;",
		   "a publish from inside a handler runs its handlers at once, then the outer ones go on");
	mnemo_event_unsubscribe(st, re);
	mnemo_event_unsubscribe(st, tail);
}

static void
test_failures_and_library_events(mnemo_store *st)
{
	kept		created = {0};
	kept		closed = {0};
	msg_log		log = {0};
	int			erring_rc = 0;
	uint64_t	failures_before = mnemo_event_failures(st);
	mnemo_session *s = NULL;
	mnemo_message *m = NULL;
	mnemo_message_ref ref = {.seq = 0};
	mnemo_message_ref refs[3];
	mnemo_new_part text = MNEMO_NEW_PART_INIT;
	mnemo_new_message msg = {.role = "user", .n_parts = 1, .parts = &text};
	mnemo_new_message batch[3] = {
		{.role = "user"}, {.role = "assistant"}, {.role = "user"}
	};
	int			sc,
				fail,
				after,
				err,
				ml,
				cl;

	text.type = "text";
	text.text = "hello";

	sc = mnemo_event_subscribe(st, MNEMO_EVENT_SESSION_CREATED, keep_handler, &created);
	fail = mnemo_event_subscribe(st, MNEMO_EVENT_MESSAGE_CREATED, failing_handler, (void *) "fail");
	after = mnemo_event_subscribe(st, MNEMO_EVENT_MESSAGE_CREATED, tag_handler, (void *) "after");
	err = mnemo_event_subscribe(st, MNEMO_EVENT_MESSAGE_CREATED, erring_handler, &erring_rc);
	ml = mnemo_event_subscribe(st, MNEMO_EVENT_MESSAGE_CREATED, msg_log_handler, &log);
	cl = mnemo_event_subscribe(st, MNEMO_EVENT_SESSION_CLOSED, keep_handler, &closed);

	if (mnemo_session_create(st, NULL, &s) != MNEMO_OK)
		bail_out("mnemo_session_create: %s", mnemo_errmsg(st));
	is_int(created.calls, 1, "mnemo_session_create publishes SESSION_CREATED");
	is_str(created.session_id, s->id, "with the new session's id");
	ok(!created.remote, "not remote");

	trace_reset();
	is_int(mnemo_message_append(st, s->id, &msg, &ref), MNEMO_OK,
		   "an append succeeds although a handler fails");
	is_int(mnemo_errcode(st), MNEMO_OK, "and the handle has no error (not even a handler's own)");
	is_int(erring_rc, MNEMO_ERR_SESSION_NOT_FOUND, "(the handler's own call did fail)");
	is_int((long long) (mnemo_event_failures(st) - failures_before), 1,
		   "the failing handler is counted once");
	is_str(trace, "fail:message_created;after:message_created;",
		   "the handlers after a failing one still run, in order");
	is_int(mnemo_message_get(st, s->id, ref.id, &m), MNEMO_OK, "the message was stored");
	if (m)
	{
		is_int(m->seq, 1, "at seq 1");
		is_str(m->session_id, s->id, "in the session");
	}
	mnemo_message_free(m);
	is_int(log.n, 1, "MESSAGE_CREATED published once for one append");
	is_str(log.ids[0], ref.id, "with the message's id");
	is_int(log.seqs[0], ref.seq, "and its seq");
	ok(!log.remote[0], "not remote");

	is_int(mnemo_messages_append(st, s->id, batch, 3, refs), MNEMO_OK, "a batch append succeeds");
	is_int(log.n, 4, "a batch of three publishes three MESSAGE_CREATED");
	if (log.n == 4)
	{
		is_str(log.ids[1], refs[0].id, "the batch's first message first");
		is_int(log.seqs[1], 2, "at seq 2");
		is_str(log.ids[3], refs[2].id, "the last one last");
		is_int(log.seqs[3], 4, "at seq 4");
	}
	is_int((long long) (mnemo_event_failures(st) - failures_before), 4,
		   "failures keep counting, one per failed call");

	/* a failed write publishes nothing */
	{
		mnemo_new_message bad = {.role = "nobody"};
		int			before = log.n;

		ok(mnemo_message_append(st, s->id, &bad, NULL) < 0, "an invalid append fails");
		is_int(log.n, before, "and publishes no MESSAGE_CREATED");
		ok(mnemo_message_append(st, "no_such_session", &msg, NULL) < 0,
		   "an append to a missing session fails");
		is_int(log.n, before, "and publishes nothing either");
	}

	is_int(mnemo_session_soft_delete(st, s->id), MNEMO_OK, "soft delete");
	is_int(closed.calls, 1, "mnemo_session_soft_delete publishes SESSION_CLOSED");
	is_str(closed.session_id, s->id, "with the session's id");

	mnemo_event_unsubscribe(st, sc);
	mnemo_event_unsubscribe(st, fail);
	mnemo_event_unsubscribe(st, after);
	mnemo_event_unsubscribe(st, err);
	mnemo_event_unsubscribe(st, ml);
	mnemo_event_unsubscribe(st, cl);
	mnemo_session_free(s);
}

static void
test_publish_error_isolation(mnemo_store *st)
{
	int			erring_rc = 0;
	int			err = mnemo_event_subscribe(st, MNEMO_EVENT_COMPACTION_FAILED, erring_handler,
											&erring_rc);

	is_int(publish(st, MNEMO_EVENT_COMPACTION_FAILED, "s"), MNEMO_OK,
		   "mnemo_event_publish succeeds although a handler's call failed");
	is_int(mnemo_errcode(st), MNEMO_OK, "and leaves no error on the handle");
	mnemo_event_unsubscribe(st, err);
}

int
main(void)
{
	mnemo_store *st;

	test_names();

	st = mnemo_store_open(NULL);
	if (st == NULL || mnemo_errcode(st) != MNEMO_OK)
		bail_out("cannot open the store: %s", st ? mnemo_errmsg(st) : "out of memory");
	is_int((long long) mnemo_event_failures(st), 0, "a new handle has no failures");

	test_subscribe_and_order(st);
	test_argument_errors(st);
	test_unsubscribe_inside(st);
	test_subscribe_inside(st);
	test_republish(st);
	test_failures_and_library_events(st);
	test_publish_error_isolation(st);

	/* subscriptions still there when the store closes are freed with it */
	mnemo_event_subscribe(st, MNEMO_EVENT_ANY, tag_handler, (void *) "left");
	mnemo_store_close(st);
	return tap_done();
}
