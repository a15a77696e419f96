/*
 * feed.c
 *		Following sessions written by other processes: LISTEN/NOTIFY turned
 *		into the handle's events, with catch-up by seq.
 *
 * The extension sends a NOTIFY at commit for sessions marked with
 * mnemo.watch(), payload {"event", "session_id", "id", "seq"} (notify.c), on
 * the channel of the session's tenant, which watch() returns: a name with 128
 * random bits, so the channel is as private as the sessions it announces.
 * A pooled handle may follow sessions of several tenants: it LISTENs on each
 * of their channels.
 * A notification is only a hint: the messages themselves are the truth.
 * For each followed session we remember the seq of the last message
 * delivered, and the invariant is that every message with a greater seq is
 * still to be delivered, and none with a smaller or equal one ever again:
 *	- a message_created at or below last was already delivered and is
 *	  dropped;
 *	- one above last makes us read the messages with seq > last from
 *	  mnemo.messages in seq order and deliver them, whether notifications
 *	  were missed or not: the payload is never delivered as it stands,
 *	  because any role that knows the channel may NOTIFY it with a forged one.
 * Seqs of a session are reserved under its row lock and committed in order,
 * so the messages a catch-up reads have no holes that fill in later.
 *
 * LISTEN is in effect before any catch-up read (follow and mn_feed_resume
 * both LISTEN before the next poll reads), so a message is either read by
 * the catch-up or announced after it, never neither.  After a reconnect the
 * notifications sent while the connection was down are gone: every followed
 * session is caught up first thing in the next poll.  Non-message events
 * (part_updated, ...) carry no seq we could catch up by: those sent while
 * disconnected are lost.
 *
 * Handlers run inside mnemo_feed_poll and may call the library on the same
 * handle, follow and unfollow included; the loops below therefore keep no
 * pointer into the follow array across a handler call, only the session id.
 * A nested mnemo_feed_poll is refused.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json.h>

#include "core/json.h"
#include "events/events.h"

/* Messages read per catch-up query. */
#define MN_FEED_PAGE "500"
#define MN_FEED_PAGE_ROWS 500

/* "mnemo_" and 32 hex digits (notify.c), and room to spare */
#define MN_CHANNEL_MAX 63

typedef struct mn_follow
{
	char	   *session_id;
	char		channel[MN_CHANNEL_MAX + 1];	/* its tenant's, from mnemo.watch */
	int64_t		last_seq;		/* the last message delivered */
	bool		catch_up;		/* read what is past last_seq before trusting
								 * notifications (after follow, reconnect) */
} mn_follow;

struct mn_feed
{
	mn_follow  *items;
	size_t		n;
	size_t		cap;
	bool		listening;		/* LISTEN on every followed channel is in
								 * effect on the connection of backend
								 * listen_pid */
	int			listen_pid;
	bool		resume;			/* watch and LISTEN again before polling */
	bool		polling;
};

static const mn_stmt watch_stmt = {
	"mnemo_feed_watch",
	"SELECT mnemo.watch($1)",
	1
};

/* a page costs its rows: get_messages would build the whole line first */
static const mn_stmt page_stmt = {
	"mnemo_feed_page",
	"SELECT id, seq FROM mnemo.get_messages_after($1, $2, " MN_FEED_PAGE ")",
	2
};

static int	feed_resume(mnemo_store *st);
static void feed_release(mnemo_store *st);

/* Followed sessions are listened for again on every new connection. */
static const mn_attachment feed_attachment = {feed_release, feed_resume};

static struct mn_feed *
ensure_feed(mnemo_store *st)
{
	if (st->feed == NULL && (st->feed = calloc(1, sizeof(struct mn_feed))) != NULL)
		mn_attach(st, &feed_attachment);
	return st->feed;
}

static mn_follow *
find(const struct mn_feed *feed, const char *session_id)
{
	for (size_t i = 0; feed != NULL && i < feed->n; i++)
		if (strcmp(feed->items[i].session_id, session_id) == 0)
			return &feed->items[i];
	return NULL;
}

/*
 * Mark the session watched; channel gets the channel its notifications go
 * to: one per tenant, named by the server with 128 random bits, so that only
 * a role that may read the session learns it.
 */
static int
watch(mnemo_store *st, const char *session_id, char channel[MN_CHANNEL_MAX + 1])
{
	const char *params[1] = {session_id};
	PGresult   *res = mn_exec(st, &watch_stmt, params);
	const char *name;
	size_t		len;

	if (res == NULL)
		return st->errcode;
	name = PQntuples(res) == 1 && !PQgetisnull(res, 0, 0) ? PQgetvalue(res, 0, 0) : "";
	len = strlen(name);
	/* it becomes part of a LISTEN command: only the characters the server uses */
	if (len == 0 || len > MN_CHANNEL_MAX || strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_") != len)
	{
		PQclear(res);
		return mn_fail(st, MNEMO_ERR_PROTOCOL, "mnemo.watch returned no valid channel name");
	}
	memcpy(channel, name, len + 1);
	PQclear(res);
	return MNEMO_OK;
}

/* LISTEN or UNLISTEN (verb) on channel, a name checked by watch(). */
static int
channel_command(mnemo_store *st, const char *verb, const char *channel)
{
	char		sql[16 + MN_CHANNEL_MAX];

	snprintf(sql, sizeof(sql), "%s %s", verb, channel);
	return mn_exec_command(st, sql);
}

static bool
channel_followed(const struct mn_feed *feed, const char *channel)
{
	for (size_t i = 0; feed != NULL && i < feed->n; i++)
		if (strcmp(feed->items[i].channel, channel) == 0)
			return true;
	return false;
}

/* LISTEN on channel (the server ignores a repeat) on this connection. */
static int
listen_on(mnemo_store *st, const char *channel)
{
	int			rc = channel_command(st, "LISTEN", channel);

	if (rc == MNEMO_OK && !st->feed->listening)
	{
		st->feed->listening = true;
		st->feed->listen_pid = PQbackendPID(st->conn);
	}
	return rc;
}

static int
connection_lost(mnemo_store *st)
{
	const char *msg = st->conn ? PQerrorMessage(st->conn) : "";
	size_t		len = strlen(msg);

	while (len > 0 && (msg[len - 1] == '\n' || msg[len - 1] == ' '))
		len--;
	return mn_fail(st, MNEMO_ERR_CONNECTION, "%.*s", (int) len,
				   len ? msg : "the connection to the server was lost");
}

/*
 * Watch every followed session and LISTEN again on a new connection.  A
 * session purged meanwhile stays followed (and silent) rather than making
 * the reconnect fail.
 */
static int
resume(mnemo_store *st)
{
	struct mn_feed *feed = st->feed;
	int			rc;

	feed->listening = false;
	for (size_t i = 0; i < feed->n; i++)
	{
		mn_follow  *f = &feed->items[i];

		f->catch_up = true;
		rc = watch(st, f->session_id, f->channel);
		if (rc != MNEMO_OK && rc != MNEMO_ERR_SESSION_NOT_FOUND)
			return rc;
		if ((rc = listen_on(st, f->channel)) != MNEMO_OK)
			return rc;
	}
	feed->resume = false;
	mn_clear_error(st);
	return MNEMO_OK;
}

static int
feed_resume(mnemo_store *st)
{
	if (st == NULL || st->feed == NULL)
		return MNEMO_OK;
	st->feed->resume = true;
	return resume(st);
}

static void
feed_release(mnemo_store *st)
{
	if (st == NULL || st->feed == NULL)
		return;
	for (size_t i = 0; i < st->feed->n; i++)
		free(st->feed->items[i].session_id);
	free(st->feed->items);
	free(st->feed);
	st->feed = NULL;
}

/*
 * Deliver the messages of the session with seq > its last_seq, in seq
 * order, a page at a time.  Stops quietly if a handler unfollows it.
 */
static int
catch_up(mnemo_store *st, const char *session_id, int *delivered)
{
	char		sid[MNEMO_ID_MAX + 1];
	char		id[MNEMO_ID_MAX + 1];
	char		after[24];
	mn_follow  *f;

	/* our own copy: the follow entry may go away in a handler */
	snprintf(sid, sizeof(sid), "%s", session_id);
	for (;;)
	{
		const char *params[2];
		PGresult   *res;
		int			rows;

		if ((f = find(st->feed, sid)) == NULL)
			return MNEMO_OK;
		params[0] = sid;
		params[1] = mn_i64_param(after, f->last_seq);
		if ((res = mn_exec(st, &page_stmt, params)) == NULL)
			return st->errcode;
		rows = PQntuples(res);
		for (int r = 0; r < rows; r++)
		{
			int64_t		seq = strtoll(PQgetvalue(res, r, 1), NULL, 10);

			if ((f = find(st->feed, sid)) == NULL)
				break;
			if (seq <= f->last_seq)
				continue;
			f->last_seq = seq;
			snprintf(id, sizeof(id), "%s", PQgetvalue(res, r, 0));
			mn_emit(st, MNEMO_EVENT_MESSAGE_CREATED, sid, id, seq, NULL, true);
			(*delivered)++;
		}
		PQclear(res);
		if (rows < MN_FEED_PAGE_ROWS)
		{
			if ((f = find(st->feed, sid)) != NULL)
				f->catch_up = false;
			return MNEMO_OK;
		}
	}
}

static int
catch_up_all(mnemo_store *st, int *delivered)
{
	/* by index, re-checked each time: handlers may change the array */
	for (size_t i = 0; st->feed != NULL && i < st->feed->n; i++)
	{
		char		sid[MNEMO_ID_MAX + 1];
		int			rc;

		if (!st->feed->items[i].catch_up)
			continue;
		snprintf(sid, sizeof(sid), "%s", st->feed->items[i].session_id);
		if ((rc = catch_up(st, sid, delivered)) != MNEMO_OK)
			return rc;
	}
	return MNEMO_OK;
}

/*
 * One notification.  Anything we do not understand is ignored: every role
 * may NOTIFY on channel mnemo, and a newer extension may send new events.
 */
static int
handle(mnemo_store *st, const char *payload, int *delivered)
{
	struct json_object *obj = json_tokener_parse(payload);
	struct json_object *v;
	const char *name;
	const char *session_id;
	const char *id;
	char		sid[MNEMO_ID_MAX + 1];
	char		ids[MNEMO_ID_MAX + 1];
	int64_t		seq = -1;
	int			type;
	mn_follow  *f;
	int			rc = MNEMO_OK;

	if (obj == NULL)
		return MNEMO_OK;
	if (!json_object_is_type(obj, json_type_object))
		goto done;
	name = mn_js_str(obj, "event", NULL);
	session_id = mn_js_str(obj, "session_id", NULL);
	id = mn_js_str(obj, "id", NULL);
	if (json_object_object_get_ex(obj, "seq", &v) && json_object_is_type(v, json_type_int))
		seq = json_object_get_int64(v);
	type = mn_event_type_of_name(name);
	if (type < 0 || session_id == NULL || strlen(session_id) > MNEMO_ID_MAX ||
		(id != NULL && strlen(id) > MNEMO_ID_MAX))
		goto done;
	if ((f = find(st->feed, session_id)) == NULL)
		goto done;
	snprintf(sid, sizeof(sid), "%s", session_id);
	if (id != NULL)
		snprintf(ids, sizeof(ids), "%s", id);

	if (type == MNEMO_EVENT_MESSAGE_CREATED)
	{
		if (seq <= 0 || id == NULL || seq <= f->last_seq)
			goto done;			/* delivered already */

		/*
		 * Any role that can connect may NOTIFY mnemo with any payload, so a
		 * message is only delivered once read from mnemo.messages: a forged
		 * notification must not take the place of the real message.
		 */
		rc = catch_up(st, sid, delivered);
		goto done;
	}

	/*
	 * An event about a message we have not delivered yet (a part of it, a
	 * summary committed after it): deliver the messages first, so that a
	 * follower always hears of a message before anything about it.
	 */
	if (f->catch_up || seq > f->last_seq)
	{
		if ((rc = catch_up(st, sid, delivered)) != MNEMO_OK)
			goto done;
		if (find(st->feed, sid) == NULL)
			goto done;
	}
	mn_emit(st, (mnemo_event_type) type, sid, id ? ids : NULL, seq > 0 ? seq : 0,
			payload, true);
	(*delivered)++;

done:
	json_object_put(obj);
	return rc;
}

/* Deliver the notifications libpq has read or can read without waiting. */
static int
drain(mnemo_store *st, int *delivered)
{
	PGnotify   *n;

	if (!PQconsumeInput(st->conn))
		return connection_lost(st);
	while ((n = PQnotifies(st->conn)) != NULL)
	{
		int			rc = MNEMO_OK;

		if (channel_followed(st->feed, n->relname))
			rc = handle(st, n->extra, delivered);
		PQfreemem(n);
		if (rc != MNEMO_OK)
			return rc;
	}
	return MNEMO_OK;
}

/* Wait until the socket is readable or wait_ms (< 0: forever) has passed. */
static int
wait_socket(mnemo_store *st, int wait_ms)
{
	struct pollfd pfd;

	pfd.fd = PQsocket(st->conn);
	pfd.events = POLLIN;
	pfd.revents = 0;
	if (pfd.fd < 0)
		return connection_lost(st);
	if (poll(&pfd, 1, wait_ms) < 0 && errno != EINTR)
		return mn_fail(st, MNEMO_ERR_IO, "poll: %s", strerror(errno));
	return MNEMO_OK;
}

static int
poll_loop(mnemo_store *st, int timeout_ms, int *delivered)
{
	int64_t		deadline = timeout_ms > 0 ? mn_now_ms() + timeout_ms : 0;
	int			rc;

	/*
	 * A connection other than the one we listened on (a reconnect whose
	 * resume failed or did not run) has neither our LISTEN nor the
	 * notifications sent meanwhile.
	 */
	if (st->feed->n > 0 && st->feed->listening &&
		st->feed->listen_pid != PQbackendPID(st->conn))
		st->feed->resume = true;
	if (st->feed->resume && (rc = resume(st)) != MNEMO_OK)
		return rc;
	for (;;)
	{
		int			wait_ms = -1;

		if ((rc = catch_up_all(st, delivered)) != MNEMO_OK)
			return rc;
		if ((rc = drain(st, delivered)) != MNEMO_OK)
			return rc;
		if (*delivered > 0 || timeout_ms == 0)
			return MNEMO_OK;
		if (timeout_ms > 0)
		{
			int64_t		left = deadline - mn_now_ms();

			if (left <= 0)
				return MNEMO_OK;
			wait_ms = (int) left;
		}
		if ((rc = wait_socket(st, wait_ms)) != MNEMO_OK)
			return rc;
	}
}

MNEMO_API int
mnemo_feed_poll(mnemo_store *st, int timeout_ms)
{
	int			delivered = 0;
	int			rc;

	if (st == NULL)
		return MNEMO_ERR_INVALID_ARGUMENT;
	mn_clear_error(st);
	if (ensure_feed(st) == NULL)
		return mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
	if (st->feed->polling)
		return mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT,
					   "mnemo_feed_poll cannot be called from an event handler");
	if (st->conn == NULL || PQstatus(st->conn) != CONNECTION_OK)
		return connection_lost(st);

	st->feed->polling = true;
	rc = poll_loop(st, timeout_ms, &delivered);
	if (st->feed != NULL)
		st->feed->polling = false;
	if (rc != MNEMO_OK)
		return rc;
	/* what handlers did on the handle is not the poll's error */
	mn_clear_error(st);
	return delivered;
}

MNEMO_API int
mnemo_feed_follow(mnemo_store *st, const char *session_id, int64_t after_seq)
{
	struct mn_feed *feed;
	char	   *copy;
	char		channel[MN_CHANNEL_MAX + 1];
	int			rc;

	if (st == NULL)
		return MNEMO_ERR_INVALID_ARGUMENT;
	mn_clear_error(st);
	if (session_id == NULL || session_id[0] == '\0' || strlen(session_id) > MNEMO_ID_MAX)
		return mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT, "invalid session id");
	if (after_seq < 0)
		return mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT, "after_seq must not be negative");
	if ((feed = ensure_feed(st)) == NULL)
		return mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
	if (find(feed, session_id) != NULL)
		return MNEMO_OK;		/* already followed: its position stays */

	/* mnemo.watch also proves the session exists and is ours to read (MN001) */
	if ((rc = watch(st, session_id, channel)) != MNEMO_OK)
		return rc;
	if ((rc = listen_on(st, channel)) != MNEMO_OK)
		return rc;

	if (feed->n == feed->cap)
	{
		size_t		cap = feed->cap ? feed->cap * 2 : 4;
		mn_follow  *items = realloc(feed->items, cap * sizeof(mn_follow));

		if (items == NULL)
			return mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
		feed->items = items;
		feed->cap = cap;
	}
	if ((copy = strdup(session_id)) == NULL)
		return mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
	feed->items[feed->n].session_id = copy;
	memcpy(feed->items[feed->n].channel, channel, sizeof(channel));
	feed->items[feed->n].last_seq = after_seq;
	feed->items[feed->n].catch_up = true;
	feed->n++;
	return MNEMO_OK;
}

/*
 * The session is not unwatched: the flag is shared by every follower of the
 * session in every process, and we cannot know whether others remain.
 */
MNEMO_API int
mnemo_feed_unfollow(mnemo_store *st, const char *session_id)
{
	struct mn_feed *feed;
	mn_follow  *f;
	char		channel[MN_CHANNEL_MAX + 1];
	int			rc;

	if (st == NULL)
		return MNEMO_ERR_INVALID_ARGUMENT;
	mn_clear_error(st);
	if (session_id == NULL)
		return mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT, "invalid session id");
	feed = st->feed;
	if ((f = find(feed, session_id)) == NULL)
		return mn_fail(st, MNEMO_ERR_NOT_FOUND, "session \"%s\" is not followed", session_id);
	memcpy(channel, f->channel, sizeof(channel));
	free(f->session_id);
	memmove(f, f + 1, (size_t) (feed->items + feed->n - (f + 1)) * sizeof(mn_follow));
	feed->n--;
	if (feed->listening && !channel_followed(feed, channel))
	{
		/* a stale LISTEN costs little: the session is unfollowed either way */
		if ((rc = channel_command(st, "UNLISTEN", channel)) != MNEMO_OK)
			return rc;
		if (feed->n == 0)
			feed->listening = false;
	}
	return MNEMO_OK;
}

MNEMO_API int
mnemo_feed_socket(const mnemo_store *st)
{
	return st != NULL && st->conn != NULL ? PQsocket(st->conn) : -1;
}
