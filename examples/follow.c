/*
 * follow.c: events in process and across processes.  One handle writes,
 * another follows the session through the feed (LISTEN/NOTIFY, caught up by
 * seq), as `mnemo tail` does from another process; both hear every message
 * once, in seq order.
 *
 *   cc -o follow follow.c $(pkg-config --cflags --libs mnemo)
 *   PGDATABASE=app ./follow
 *
 * It checks what it gets back and exits 1 on any surprise.
 */
#include <stdio.h>
#include <string.h>
#include <mnemo.h>

#define CHECK(cond) \
	do { \
		if (!(cond)) { \
			fprintf(stderr, "follow.c:%d: check failed: %s\n", __LINE__, #cond); \
			goto done; \
		} \
	} while (0)

/* What a handler saw: the seqs of the messages, in the order delivered. */
typedef struct heard
{
	int64_t		seqs[16];
	int			n;
	int			remote;
} heard;

static int
on_message(mnemo_store *st, const mnemo_event *ev, void *arg)
{
	heard	   *h = arg;

	(void) st;
	printf("%s: %s %s seq %lld\n", ev->remote ? "follower" : "writer",
		   mnemo_event_name(ev->type), ev->id, (long long) ev->seq);
	if (h->n < 16)
		h->seqs[h->n++] = ev->seq;
	h->remote += ev->remote;
	return 0;					/* non-zero: this handler failed */
}

static mnemo_store *
open_store(void)
{
	mnemo_store *st = mnemo_store_open(NULL);

	if (st != NULL && mnemo_errcode(st) != MNEMO_OK)
	{
		fprintf(stderr, "cannot open the store: %s\n", mnemo_errmsg(st));
		mnemo_store_close(st);
		return NULL;
	}
	return st;
}

int
main(void)
{
	mnemo_store *writer = open_store(),
			   *follower = open_store();
	mnemo_session *session = NULL;
	heard		local = {0},
				remote = {0};
	int			status = 1;

	CHECK(writer != NULL && follower != NULL);
	CHECK(mnemo_session_create(writer, NULL, &session) == MNEMO_OK);
	CHECK(mnemo_event_subscribe(writer, MNEMO_EVENT_MESSAGE_CREATED, on_message, &local) > 0);
	CHECK(mnemo_event_subscribe(follower, MNEMO_EVENT_MESSAGE_CREATED, on_message, &remote) > 0);

	/* one message before following: after_seq 0 delivers it too */
	for (int i = 1; i <= 3; i++)
	{
		char		body[32];
		mnemo_new_part text = MNEMO_NEW_PART_INIT;
		mnemo_new_message msg = {.role = "user", .n_parts = 1, .parts = &text};

		snprintf(body, sizeof(body), "message %d", i);
		text.type = "text";
		text.text = body;
		CHECK(mnemo_message_append(writer, session->id, &msg, NULL) == MNEMO_OK);
		if (i == 1)
			CHECK(mnemo_feed_follow(follower, session->id, 0) == MNEMO_OK);
	}

	/* each poll waits up to a second for notifications and delivers them */
	for (int tries = 0; remote.n < 3 && tries < 10; tries++)
	{
		int			n = mnemo_feed_poll(follower, 1000);	/* events, or an error */

		if (n == MNEMO_ERR_CONNECTION)
		{
			/* the server went away: reconnect; the next poll catches up by seq */
			CHECK(mnemo_store_reconnect(follower) == MNEMO_OK);
			continue;
		}
		CHECK(n >= 0);
	}

	CHECK(local.n == 3 && local.remote == 0);
	CHECK(remote.n == 3 && remote.remote == 3);
	for (int i = 0; i < 3; i++)
		CHECK(local.seqs[i] == i + 1 && remote.seqs[i] == i + 1);
	status = 0;

done:
	if (status != 0 && writer != NULL && mnemo_errcode(writer) != MNEMO_OK)
		fprintf(stderr, "writer: %s\n", mnemo_errmsg(writer));
	if (status != 0 && follower != NULL && mnemo_errcode(follower) != MNEMO_OK)
		fprintf(stderr, "follower: %s\n", mnemo_errmsg(follower));
	mnemo_session_free(session);
	mnemo_store_close(follower);
	mnemo_store_close(writer);
	return status;
}
