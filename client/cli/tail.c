/*
 * tail.c
 *		mnemo tail SESSION: follow a session live through the feed.
 *
 * The feed (mnemo_feed_follow / mnemo_feed_poll) delivers message_created
 * for every message past a seq, catching up by seq after a reconnect, so
 * nothing is missed or printed twice.  The handler only queues the ids: the
 * messages are read and printed after the poll returns, where a lost
 * connection can be waited out and the read retried.  SIGINT and SIGTERM end
 * the loop at the next poll (which waits at most POLL_MS), with status 0.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

#define POLL_MS 200
#define BACKOFF_MIN_MS 100
#define BACKOFF_MAX_MS 5000

static int	run(const char *db, int argc, char **argv);

const cli_command cli_tail = {
	"tail",
	"follow a session live, printing each message as it commits",
	"Usage: mnemo tail SESSION [--after SEQ]\n"
	"\n"
	"Follow the session from this or another process and print each message\n"
	"as it commits, in seq order, as 'mnemo show' prints them.  By default\n"
	"only messages appended from now on; with --after SEQ, every message after\n"
	"that seq first (--after 0: the whole session).  The session is marked\n"
	"watched (mnemo.watch) so that appends notify.  A lost connection is\n"
	"retried with backoff and the feed catches up where it was.  Runs until\n"
	"interrupted (SIGINT, SIGTERM), then unwatches the session (unless it was\n"
	"watched before) and exits with status 0.\n"
	"\n"
	"Options:\n"
	"  --after SEQ  print the messages after this seq first\n"
	"\n"
	"Exit status 3 when the session does not exist.\n",
	run
};

static volatile sig_atomic_t stop;

static void
on_signal(int sig)
{
	(void) sig;
	stop = 1;
}

typedef struct queued
{
	char	  **ids;
	size_t		n;
	size_t		cap;
	bool		oom;
} queued;

static int
on_message(mnemo_store *st, const mnemo_event *ev, void *arg)
{
	queued	   *q = arg;
	char	  **grown;

	(void) st;
	if (ev->id == NULL)
		return 0;
	if (q->n == q->cap)
	{
		size_t		cap = q->cap ? q->cap * 2 : 64;

		if ((grown = realloc(q->ids, cap * sizeof(*grown))) == NULL)
		{
			q->oom = true;
			return 1;
		}
		q->ids = grown;
		q->cap = cap;
	}
	if ((q->ids[q->n] = strdup(ev->id)) == NULL)
	{
		q->oom = true;
		return 1;
	}
	q->n++;
	return 0;
}

static void
queue_clear(queued *q)
{
	for (size_t i = 0; i < q->n; i++)
		free(q->ids[i]);
	q->n = 0;
}

/* Print what is queued; the queue stays when the read fails. */
static int
print_queued(mnemo_store *st, const char *session_id, queued *q)
{
	mnemo_messages *list = NULL;
	int			rc;

	if (q->n == 0)
		return MNEMO_OK;
	rc = mnemo_messages_get_by_ids(st, session_id, (const char *const *) q->ids, q->n, &list);
	if (rc != MNEMO_OK)
		return rc;
	for (size_t i = 0; i < list->count; i++)
		cli_print_message(stdout, &list->items[i]);
	fflush(stdout);
	mnemo_messages_free(list);
	queue_clear(q);
	return MNEMO_OK;
}

static void
sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long) (ms % 1000) * 1000000L};

	/* a signal cuts the sleep short, which is what we want */
	(void) nanosleep(&ts, NULL);
}

/* Reconnect until it works or a signal says stop; false when stopped. */
static bool
reconnect(mnemo_store *st)
{
	int			backoff = BACKOFF_MIN_MS;

	while (!stop)
	{
		fprintf(stderr, "mnemo: %s; reconnecting in %.1f s\n", mnemo_errmsg(st), backoff / 1000.0);
		for (int waited = 0; waited < backoff && !stop; waited += 100)
			sleep_ms(100);
		if (stop)
			break;
		if (mnemo_store_reconnect(st) == MNEMO_OK)
		{
			fprintf(stderr, "mnemo: reconnected\n");
			return true;
		}
		if (mnemo_errcode(st) != MNEMO_ERR_CONNECTION)
			return false;
		backoff = backoff * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : backoff * 2;
	}
	return false;
}

static int
run(const char *db, int argc, char **argv)
{
	const char *after_text = NULL;
	cli_option	opts[] = {{"after", &after_text, NULL}};
	const char *pos[1];
	struct sigaction sa;
	queued		q = {0};
	mnemo_store *st;
	int64_t		after = -1;
	bool		was_watched = false;
	int			rc;

	if ((rc = cli_parse(&cli_tail, argc, argv, opts, 1, pos, 1, 1, NULL)) != CLI_OK)
		return rc == CLI_HELP_SHOWN ? CLI_OK : rc;
	if (after_text != NULL && !cli_parse_count(&cli_tail, "--after", after_text, 0, INT64_MAX, &after))
		return CLI_USAGE;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	if ((st = cli_open(db, &rc)) == NULL)
		return rc;
	{
		mnemo_session *s = NULL;

		if (mnemo_session_get(st, pos[0], &s) != MNEMO_OK)
		{
			rc = cli_fail(st);
			mnemo_store_close(st);
			return rc;
		}
		if (after < 0)
			after = s->last_seq;
		was_watched = s->watched;
		mnemo_session_free(s);
	}
	if (mnemo_event_subscribe(st, MNEMO_EVENT_MESSAGE_CREATED, on_message, &q) < 0 ||
		mnemo_feed_follow(st, pos[0], after) != MNEMO_OK)
	{
		rc = cli_fail(st);
		mnemo_store_close(st);
		return rc;
	}

	rc = MNEMO_OK;
	while (!stop)
	{
		rc = mnemo_feed_poll(st, POLL_MS);
		if (rc >= 0)
			rc = print_queued(st, pos[0], &q);
		if (q.oom)
		{
			fprintf(stderr, "mnemo: out of memory\n");
			rc = MNEMO_ERR_NOMEM;
			break;
		}
		if (rc == MNEMO_ERR_CONNECTION)
		{
			if (!reconnect(st))
				break;
			rc = MNEMO_OK;
			continue;
		}
		if (rc < 0)
			break;
		rc = MNEMO_OK;
	}
	if (stop)
		rc = CLI_OK;
	else
		rc = rc == MNEMO_ERR_NOMEM ? CLI_ERROR : cli_fail(st);
	/* following watched the session; unwatch what was not watched before
	 * (another follower's watch is left alone) */
	if (!was_watched && mnemo_session_unwatch(st, pos[0]) != MNEMO_OK && rc == CLI_OK)
		rc = cli_fail(st);
	queue_clear(&q);
	free(q.ids);
	mnemo_store_close(st);
	return rc;
}
