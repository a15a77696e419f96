/*
 * t_import_sessions.c
 *		mnemo_import_jsonl on a file of several sessions (OpenAI request
 *		bodies one a line; the CLI's cases, OpenHands runs and tau-bench
 *		results, are in transcripts.sh).
 *
 *	- Without options.session the import takes one session: a file of two
 *	  is MNEMO_ERR_FORMAT naming the line where the second begins, and
 *	  nothing is stored, the first session included.
 *	- With it, each document is a session of its own: the callback hears
 *	  each after the commit, in file order, with its message count;
 *	  session_id_out is the first, *imported the messages of all, and
 *	  subscribers hear one session_created each.
 *	- options.session_id names one session: a file of two is refused.
 *	- A second session that fails after the first was stored rolls the
 *	  first back too.
 *	- A record after a document (a message line after a request body) joins
 *	  that document's session.
 *	- mnemo exports one after another: each header begins a session, which
 *	  keeps its own id, title and checkpoints; a header whose id is taken
 *	  fails the import (MN004), the sessions before it in the file included,
 *	  and the store goes on; a header after headerless messages is refused;
 *	  a session id that is twice in the file is named so (not "imported
 *	  before", which the store never saw).
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mnemo.h"
#include "tap.h"
#include "helpers.h"
#include "transcript_helpers.h"


/* Two request bodies, one a line: the second has the tool call and result. */
static const char two_bodies[] =
	"{\"model\": \"gpt-4o\", \"messages\": [{\"role\": \"system\", \"content\": \"Be brief.\"}, "
	"{\"role\": \"user\", \"content\": \"hello\"}, {\"role\": \"assistant\", \"content\": \"hi\"}]}\n"
	"{\"model\": \"gpt-4o-mini\", \"messages\": [{\"role\": \"user\", \"content\": \"weather?\"}, "
	"{\"role\": \"assistant\", \"content\": null, \"tool_calls\": [{\"id\": \"call_1\", \"type\": "
	"\"function\", \"function\": {\"name\": \"weather\", \"arguments\": \"{\\\"city\\\": \\\"Oslo\\\"}\"}}]}, "
	"{\"role\": \"tool\", \"tool_call_id\": \"call_1\", \"content\": \"rain\"}, "
	"{\"role\": \"assistant\", \"content\": \"It rains.\"}]}\n";

/* A body, then a message of its own line. */
static const char body_then_message[] =
	"{\"model\": \"gpt-4o\", \"messages\": [{\"role\": \"system\", \"content\": \"Be brief.\"}, "
	"{\"role\": \"user\", \"content\": \"hello\"}, {\"role\": \"assistant\", \"content\": \"hi\"}]}\n"
	"{\"role\": \"user\", \"content\": \"and one more\"}\n";

/* Two bodies, the first with no message. */
static const char first_empty[] =
	"{\"model\": \"m\", \"messages\": []}\n"
	"{\"model\": \"m\", \"messages\": [{\"role\": \"user\", \"content\": \"hi\"}]}\n";

/* Two exports, one after the other (mnemo export A B). */
static const char two_exports[] =
	"{\"type\": \"mnemo.session\", \"version\": 1, \"id\": \"t-cat-a\", \"title\": \"first\"}\n"
	"{\"id\": \"m1\", \"role\": \"user\", \"parts\": [{\"type\": \"text\", \"text\": \"hello a\"}]}\n"
	"{\"type\": \"mnemo.checkpoint\", \"label\": \"after-a\"}\n"
	"{\"type\": \"mnemo.session\", \"version\": 1, \"id\": \"t-cat-b\", \"title\": \"second\"}\n"
	"{\"id\": \"m1\", \"role\": \"user\", \"parts\": [{\"type\": \"text\", \"text\": \"hello b\"}]}\n"
	"{\"id\": \"m2\", \"role\": \"assistant\", \"parts\": [{\"type\": \"text\", \"text\": \"hi\"}]}\n";

/* A new session, then one whose id two_exports took. */
static const char new_then_taken[] =
	"{\"type\": \"mnemo.session\", \"version\": 1, \"id\": \"t-cat-c\"}\n"
	"{\"id\": \"m1\", \"role\": \"user\", \"parts\": [{\"type\": \"text\", \"text\": \"hello c\"}]}\n"
	"{\"type\": \"mnemo.session\", \"version\": 1, \"id\": \"t-cat-b\"}\n"
	"{\"id\": \"m1\", \"role\": \"user\", \"parts\": [{\"type\": \"text\", \"text\": \"hello b\"}]}\n";

/* One export twice (a file concatenated with itself): its id, new to the
 * store, is in the file twice. */
static const char same_twice[] =
	"{\"type\": \"mnemo.session\", \"version\": 1, \"id\": \"t-cat-twice\"}\n"
	"{\"role\": \"user\", \"parts\": [{\"type\": \"text\", \"text\": \"hello\"}]}\n"
	"{\"type\": \"mnemo.session\", \"version\": 1, \"id\": \"t-cat-twice\"}\n"
	"{\"role\": \"user\", \"parts\": [{\"type\": \"text\", \"text\": \"hello\"}]}\n";

/* Messages without a header, then a header. */
static const char header_late[] =
	"{\"role\": \"user\", \"parts\": [{\"type\": \"text\", \"text\": \"hi\"}]}\n"
	"{\"type\": \"mnemo.session\", \"version\": 1, \"id\": \"t-cat-late\"}\n";

typedef struct heard
{
	int			n;
	char		ids[4][MNEMO_ID_MAX + 1];
	int64_t		messages[4];
} heard;

static void
on_session(const char *session_id, int64_t messages, void *arg)
{
	heard	   *h = arg;

	if (h->n < 4)
	{
		snprintf(h->ids[h->n], sizeof(h->ids[h->n]), "%s", session_id);
		h->messages[h->n] = messages;
	}
	h->n++;
}

static int	created_events;

static int
on_event(mnemo_store *st, const mnemo_event *ev, void *arg)
{
	(void) st;
	(void) arg;
	if (ev->type == MNEMO_EVENT_SESSION_CREATED)
		created_events++;
	return 0;
}



static void
mnemo_exports(mnemo_store *st, mnemo_import_options *opts)
{
	mnemo_import_options one = MNEMO_IMPORT_OPTIONS_INIT;
	heard		h = {0};
	char		sid[MNEMO_ID_MAX + 1] = "";
	char	   *v;
	int64_t		n = -1;
	size_t		before = count_sessions(st);
	int			rc;

	rc = import_text(st, two_exports, &one, sid, &n);
	is_code(st, rc, MNEMO_ERR_FORMAT, "two mnemo exports, no session callback");
	ok(strstr(mnemo_errmsg(st), "line 4: a second session in the file (of mnemo)") != NULL,
	   "the error names the second header's line: %s", mnemo_errmsg(st));
	is_int((int) (count_sessions(st) - before), 0, "and nothing is stored");

	opts->progress_arg = &h;
	rc = import_text(st, two_exports, opts, sid, &n);
	is_code(st, rc, MNEMO_OK, "two mnemo exports with a session callback");
	is_int(h.n, 2, "the callback hears a session for each header");
	is_str(h.ids[0], "t-cat-a", "the first keeps its header's id");
	is_str(h.ids[1], "t-cat-b", "the second keeps its own");
	is_int((int) h.messages[0], 1, "the first holds the message after its header");
	is_int((int) h.messages[1], 2, "the second the two after its own");
	v = sql_value("SELECT string_agg(id || ':' || title, ',' ORDER BY id) FROM mnemo.sessions "
				  "WHERE id IN ('t-cat-a', 't-cat-b')", NULL);
	is_str(v, "t-cat-a:first,t-cat-b:second", "each session has its header's title");
	free(v);
	v = sql_value("SELECT string_agg(session_id || '@' || seq, ',') FROM mnemo.checkpoints "
				  "WHERE label = 'after-a'", NULL);
	is_str(v, "t-cat-a@1", "a checkpoint line belongs to the session above it");
	free(v);

	/* a header whose id is taken: MN004, and the new session before it goes too */
	h.n = 0;
	before = count_sessions(st);
	rc = import_text(st, new_then_taken, opts, sid, &n);
	is_code(st, rc, MNEMO_ERR_DUPLICATE_ID, "a second header whose session exists");
	ok(strstr(mnemo_errmsg(st), "line 3: session \"t-cat-b\" of this transcript already exists") != NULL,
	   "the error names the session and the line of its header: %s", mnemo_errmsg(st));
	is_str(mnemo_sqlstate(st), "MN004", "with MN004");
	is_int(h.n, 0, "the callback hears nothing");
	is_int((int) (count_sessions(st) - before), 0, "the first session of the file is not left behind");
	rc = import_text(st, body_then_message, NULL, sid, &n);
	is_code(st, rc, MNEMO_OK, "the store goes on: the next import succeeds");

	rc = import_text(st, same_twice, opts, sid, &n);
	is_code(st, rc, MNEMO_ERR_DUPLICATE_ID, "a session that is in the file twice");
	ok(strstr(mnemo_errmsg(st), "line 3: session \"t-cat-twice\" is in this file twice "
			  "(first on line 1;") != NULL && strstr(mnemo_errmsg(st), "imported before") == NULL,
	   "is named as such, not as imported before: %s", mnemo_errmsg(st));
	ok(!session_exists(st, "t-cat-twice"), "and is not left behind");

	rc = import_text(st, header_late, opts, sid, &n);
	is_code(st, rc, MNEMO_ERR_FORMAT, "a header after headerless messages");
	ok(strstr(mnemo_errmsg(st), "line 2: a session header after the first line") != NULL,
	   "is refused as before: %s", mnemo_errmsg(st));
}

int
main(void)
{
	mnemo_store *st = open_store(NULL);
	mnemo_import_options opts = MNEMO_IMPORT_OPTIONS_INIT;
	char		sid[MNEMO_ID_MAX + 1] = "";
	int64_t		n = -1;
	size_t		before;
	heard		h = {0};
	mnemo_session *s = NULL;
	char	   *second_empty;
	int			rc;

	before = count_sessions(st);

	/* one session expected: the second is refused, and the first goes too */
	rc = import_text(st, two_bodies, NULL, sid, &n);
	is_code(st, rc, MNEMO_ERR_FORMAT, "two request bodies, no session callback");
	ok(strstr(mnemo_errmsg(st), "line 2: a second session in the file") != NULL,
	   "the error names the line where the second session begins: %s", mnemo_errmsg(st));
	is_int((int) (count_sessions(st) - before), 0, "and nothing is stored");

	/* --session names one */
	opts.session = on_session;
	opts.progress_arg = &h;
	opts.session_id = "t-import-sessions-one";
	rc = import_text(st, two_bodies, &opts, sid, &n);
	is_code(st, rc, MNEMO_ERR_FORMAT, "two request bodies under one session_id");
	is_int(h.n, 0, "the callback hears nothing of an import that failed");
	is_int((int) (count_sessions(st) - before), 0, "and nothing is stored");

	/*
	 * A second session that fails once the first is stored (its session
	 * made and its messages appended, in the transaction): the first goes
	 * too.  A body with no message fails at its end.
	 */
	opts.session_id = NULL;
	second_empty = malloc(sizeof(two_bodies) + 64);
	if (second_empty == NULL)
		bail_out("out of memory");
	memcpy(second_empty, two_bodies, strchr(two_bodies, '\n') + 1 - two_bodies);
	strcpy(second_empty + (strchr(two_bodies, '\n') + 1 - two_bodies),
		   "{\"model\": \"gpt-4o\", \"messages\": []}\n");
	rc = import_text(st, second_empty, &opts, sid, &n);
	free(second_empty);
	is_code(st, rc, MNEMO_ERR_FORMAT, "a second body with no message");
	ok(strstr(mnemo_errmsg(st), "no message in the session of line 2") != NULL,
	   "the error says what is wrong: %s", mnemo_errmsg(st));
	is_int(h.n, 0, "the callback hears nothing of it");
	is_int((int) (count_sessions(st) - before), 0, "the first session, stored before, is not left behind");

	/* the first of several is empty (so named: nothing to detect it by) */
	opts.format = "openai";
	rc = import_text(st, first_empty, &opts, sid, &n);
	opts.format = NULL;
	is_code(st, rc, MNEMO_ERR_FORMAT, "a first body with no message, and a second");
	ok(strstr(mnemo_errmsg(st), "no message in the session of line 1") != NULL,
	   "the error names the first session's line: %s", mnemo_errmsg(st));
	is_int((int) (count_sessions(st) - before), 0, "and nothing is stored");

	/* a message after a body is a record of the body's session, not a new one */
	rc = import_text(st, body_then_message, NULL, sid, &n);
	is_code(st, rc, MNEMO_OK, "a request body and a message after it, no session callback");
	is_int((int) n, 4, "one session of the body's three messages and the one after");
	is_int((int) (count_sessions(st) - before), 1, "one session is stored");
	before = count_sessions(st);

	/* both, each a session */
	if (mnemo_event_subscribe(st, MNEMO_EVENT_SESSION_CREATED, on_event, NULL) <= 0)
		bail_out("subscribe: %s", mnemo_errmsg(st));
	rc = import_text(st, two_bodies, &opts, sid, &n);
	is_code(st, rc, MNEMO_OK, "two request bodies with a session callback");
	is_int(h.n, 2, "the callback hears two sessions");
	is_int((int) h.messages[0], 3, "the first holds the first body's three messages");
	is_int((int) h.messages[1], 3,
		   "the second holds the second body's three (the tool result completes its call)");
	is_str(sid, h.ids[0], "session_id_out is the first session");
	ok(strcmp(h.ids[0], h.ids[1]) != 0, "the two are different sessions");
	is_int((int) n, 6, "imported counts the messages of both");
	is_int(created_events, 2, "subscribers hear one session_created each, after the commit");
	is_int((int) (count_sessions(st) - before), 2, "two sessions are stored");
	if (mnemo_session_get(st, h.ids[1], &s) != MNEMO_OK)
		bail_out("get %s: %s", h.ids[1], mnemo_errmsg(st));
	is_str(s->model_id, "gpt-4o-mini", "each session takes its own body's model");
	mnemo_session_free(s);
	if (mnemo_session_get(st, h.ids[0], &s) != MNEMO_OK)
		bail_out("get %s: %s", h.ids[0], mnemo_errmsg(st));
	is_str(s->model_id, "gpt-4o", "the first keeps the first body's");
	mnemo_session_free(s);

	mnemo_exports(st, &opts);

	mnemo_store_close(st);
	return tap_done();
}
