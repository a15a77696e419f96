/*
 * t_compact.c
 *		The compaction engine (mnemo_compact) against the scripted provider
 *		server and the real server functions: each level's outcome, the
 *		fall-through, the file-id footer through condensation, the claim.
 *
 * Needs MNEMO_PROVIDER_SERVER (test/client/run.sh builds and exports it).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libpq-fe.h>
#include <sys/wait.h>

#include "mnemo.h"
#include "tap.h"
#include "helpers.h"
#include "provider.h"

#define CONTENT_ID "sha256:00c0ffee00c0ffee"

/*
 * A session of `turns` user/assistant pairs of long-ish text, the first
 * user message with a file reference.
 */
static void
conversation_with(mnemo_store *st, const char *sid, int turns, const char *system_prompt)
{
	mnemo_new_session spec = {0};
	int			i;

	spec.id = sid;
	spec.provider_id = "openai";
	spec.model_id = "gpt-chat";
	spec.system_prompt = system_prompt;
	create_session(st, &spec);
	for (i = 0; i < turns; i++)
	{
		mnemo_new_message m[2];
		mnemo_new_part user[2];
		mnemo_new_part answer;
		char		utext[700],
					atext[700];

		memset(m, 0, sizeof(m));
		memset(user, 0, sizeof(user));
		memset(&answer, 0, sizeof(answer));
		snprintf(utext, sizeof(utext), "Question %d: %0600d", i, i);
		snprintf(atext, sizeof(atext), "Answer %d: %0600d", i, i);
		user[0].type = "text";
		user[0].text = utext;
		user[1].type = "file_ref";
		user[1].content_id = CONTENT_ID;
		user[1].path = "/src/big.c";
		answer.type = "text";
		answer.text = atext;
		m[0].role = "user";
		m[0].parts = user;
		m[0].n_parts = i == 0 ? 2 : 1;
		m[1].role = "assistant";
		m[1].parts = &answer;
		m[1].n_parts = 1;
		if (mnemo_messages_append(st, sid, m, 2, NULL) != MNEMO_OK)
			bail_out("append: %s", mnemo_errmsg(st));
	}
}

static void
conversation(mnemo_store *st, const char *sid, int turns)
{
	conversation_with(st, sid, turns, NULL);
}

static void
options(mnemo_compact_options *o, const server *s, char *url, size_t urlsize)
{
	mnemo_compact_options init = MNEMO_COMPACT_OPTIONS_INIT;

	*o = init;
	o->provider = "openai";
	o->model = "gpt-compact";
	snprintf(url, urlsize, "%s/v1", s->url);
	o->base_url = url;
	o->api_key = KEY;
	o->max_retries = -1;
	o->tail_messages = 2;
}

/* The text of the live summary node of sid whose span starts first, and
 * its level. */
static char *
first_summary(mnemo_store *st, const char *sid, int *level)
{
	mnemo_summary_nodes *nodes = NULL;
	mnemo_parts *parts = NULL;
	char	   *text = NULL;

	if (mnemo_summary_nodes_get(st, sid, false, &nodes) != MNEMO_OK || nodes->count == 0)
		bail_out("no summary nodes: %s", mnemo_errmsg(st));
	*level = nodes->items[0].level;
	if (mnemo_parts_get(st, sid, nodes->items[0].id, &parts) != MNEMO_OK)
		bail_out("parts: %s", mnemo_errmsg(st));
	text = strdup(parts->items[0].text ? parts->items[0].text : "");
	mnemo_parts_free(parts);
	mnemo_summary_nodes_free(nodes);
	return text;
}

static int
count_events(mnemo_store *st, const mnemo_event *ev, void *arg)
{
	int		   *n = arg;

	(void) st;
	if (ev->type == MNEMO_EVENT_COMPACTION_COMPLETED)
		n[0]++;
	else if (ev->type == MNEMO_EVENT_COMPACTION_FAILED)
		n[1]++;
	return 0;
}

static void
test_level1(mnemo_store *st)
{
	server		s;
	mnemo_compact_options o;
	mnemo_compact_result r;
	char		url[96];
	char	   *text;
	int			level = 0;
	int			n = 0;
	json_object **log;
	int			events[2] = {0, 0};
	int			sub;

	server_start(&s, "reply\n  text \"## Goal\\nAnswer questions.\" pieces=3\n");
	conversation(st, "cmp-l1", 5);
	options(&o, &s, url, sizeof(url));
	sub = mnemo_event_subscribe(st, MNEMO_EVENT_ANY, count_events, events);
	is_int(mnemo_compact(st, "cmp-l1", &o, &r), MNEMO_OK, "L1: mnemo_compact");
	mnemo_event_unsubscribe(st, sub);
	is_int(r.summaries, 1, "L1: one summary");
	is_int(r.level, 1, "L1: at level 1");
	ok(!r.lost, "L1: nobody else held the claim");
	ok(r.tokens_after < r.tokens_before, "L1: the context is smaller (%lld -> %lld)",
	   (long long) r.tokens_before, (long long) r.tokens_after);
	{
		mnemo_checkpoints *cps = NULL;
		char		label[MNEMO_ID_MAX + 16];

		snprintf(label, sizeof(label), "compact-%s", r.summary_id);
		is_int(mnemo_checkpoints_list(st, "cmp-l1", &cps), MNEMO_OK, "L1: list the checkpoints");
		ok(cps != NULL && cps->count == 1 && strcmp(cps->items[0].label, label) == 0 &&
		   cps->items[0].is_auto, "L1: an auto checkpoint compact-<summary id> after the commit");
		mnemo_checkpoints_free(cps);
	}
	text = first_summary(st, "cmp-l1", &level);
	is_int(level, 1, "L1: the node says level 1");
	ok(strncmp(text, "## Goal\nAnswer questions.", 25) == 0, "L1: the model's text");
	ok(strstr(text, "\n\n[LCM File IDs: " CONTENT_ID "]") != NULL,
	   "L1: the footer names the block's file id, which the model left out");
	free(text);
	log = log_read(&s, &n);
	is_int(n, 1, "L1: one request");
	ok(n > 0 && strstr(jstr(log[0], "body.messages.0.content"), "## Key Instructions & Constraints") != NULL,
	   "L1: the structured prompt");
	ok(n > 0 && strstr(jstr(log[0], "body.messages.0.content"), "[USER]: Question 0:") != NULL,
	   "L1: the block's transcript, oldest first");
	ok(n > 0 && strstr(jstr(log[0], "body.messages.0.content"), "Question 4") == NULL,
	   "L1: the fresh tail is not sent");
	is_str(n > 0 ? jstr(log[0], "body.model") : NULL, "gpt-compact", "L1: the compaction model");
	log_free(log, n);
	is_int(events[0], 1, "L1: COMPACTION_COMPLETED published");
	is_int(events[1], 0, "L1: no COMPACTION_FAILED");
	server_stop(&s);
}

static void
test_level2(mnemo_store *st)
{
	server		s;
	mnemo_compact_options o;
	mnemo_compact_result r;
	char		url[96];
	char	   *text;
	int			level = 0;
	int			n = 0;
	json_object **log;

	/* the first answer is longer than the block; the second is short */
	server_start(&s, "reply\n  text_tokens 3000\nreply\n  text \"GOAL: answer\"\n");
	conversation(st, "cmp-l2", 5);
	options(&o, &s, url, sizeof(url));
	is_int(mnemo_compact(st, "cmp-l2", &o, &r), MNEMO_OK, "L2: mnemo_compact");
	is_int(r.level, 2, "L2: L1 too long, L2 accepted");
	text = first_summary(st, "cmp-l2", &level);
	is_int(level, 2, "L2: the node says level 2");
	ok(strncmp(text, "GOAL: answer\n\n[LCM File IDs: " CONTENT_ID "]", 40) == 0,
	   "L2: the model's text and the footer");
	free(text);
	log = log_read(&s, &n);
	is_int(n, 2, "L2: two requests");
	ok(n == 2 && strstr(jstr(log[1], "body.messages.0.content"), "COMPRESSED") != NULL,
	   "L2: the aggressive prompt");
	ok(n == 2 && strstr(jstr(log[1], "body.messages.0.content"), "Answer 0: ") != NULL &&
	   strlen(jstr(log[1], "body.messages.0.content")) < strlen(jstr(log[0], "body.messages.0.content")),
	   "L2: the inputs are cut");
	log_free(log, n);
	server_stop(&s);
}

static void
test_level3(mnemo_store *st)
{
	server		s;
	mnemo_compact_options o;
	mnemo_compact_result r;
	char		url[96];
	char	   *text;
	int			level = 0;
	int			n = 0;
	json_object **log;

	server_start(&s, "reply\n  error 400\nreply\n  error 400\n");
	conversation(st, "cmp-l3", 5);
	options(&o, &s, url, sizeof(url));
	is_int(mnemo_compact(st, "cmp-l3", &o, &r), MNEMO_OK, "L3: mnemo_compact");
	is_int(r.level, 3, "L3: L1 and L2 failed, L3 ran");
	text = first_summary(st, "cmp-l3", &level);
	is_int(level, 3, "L3: the node says level 3");
	ok(mnemo_estimate_tokens(text) <= 512, "L3: at most 512 tokens (%d)", mnemo_estimate_tokens(text));
	ok(strstr(text, "[LCM File IDs: " CONTENT_ID "]") != NULL, "L3: the footer");
	free(text);
	log = log_read(&s, &n);
	is_int(n, 2, "L3: both levels asked the model");
	log_free(log, n);
	server_stop(&s);

	/* nobody listening: the same, without an error reaching the caller */
	conversation(st, "cmp-down", 5);
	o.base_url = "http://127.0.0.1:9/v1";
	is_int(mnemo_compact(st, "cmp-down", &o, &r), MNEMO_OK, "provider down: mnemo_compact");
	is_int(r.level, 3, "provider down: L3");
	is_int(r.summaries, 1, "provider down: one summary");
}

static void
test_footer_through_condensation(mnemo_store *st)
{
	server		s;
	mnemo_compact_options o;
	mnemo_compact_result r;
	char		url[96];
	char	   *text;
	int			level = 0;
	mnemo_summary_nodes *nodes = NULL;

	/* two leaves by L1 (the model names no file), then a condensation by L3 */
	server_start(&s, "reply\n  text \"first\"\nreply\n  text \"second\"\n");
	conversation(st, "cmp-f", 9);
	options(&o, &s, url, sizeof(url));
	o.block_tokens = 1;
	o.budget_tokens = 1;
	o.max_rounds = 2;
	is_int(mnemo_compact(st, "cmp-f", &o, &r), MNEMO_OK, "footer: two leaf rounds");
	is_int(r.levels[1], 2, "footer: both at L1");
	server_stop(&s);
	o.base_url = "http://127.0.0.1:9/v1";
	o.max_rounds = 10;
	is_int(mnemo_compact(st, "cmp-f", &o, &r), MNEMO_OK, "footer: then down to condensation");
	ok(r.levels[3] >= 1, "footer: L3 when the provider is down");
	text = first_summary(st, "cmp-f", &level);
	ok(strstr(text, "[LCM File IDs: " CONTENT_ID "]") != NULL,
	   "footer: the id of the first leaf survives L1 -> condense -> L3");
	free(text);
	if (mnemo_summary_nodes_get(st, "cmp-f", false, &nodes) != MNEMO_OK)
		bail_out("nodes: %s", mnemo_errmsg(st));
	ok(nodes->count >= 1 && strcmp(nodes->items[0].kind, "condensed") == 0,
	   "footer: the oldest live node is a condensation");
	mnemo_summary_nodes_free(nodes);
}

/* Run sql on a connection of its own (another process's compactor). */
static void
other_process(const char *sql)
{
	PGconn	   *conn = PQconnectdb("");
	PGresult   *res = PQexec(conn, sql);

	if (PQresultStatus(res) != PGRES_TUPLES_OK)
		bail_out("%s: %s", sql, PQerrorMessage(conn));
	PQclear(res);
	PQfinish(conn);
}

static void
test_claim(mnemo_store *st)
{
	mnemo_compact_options o = MNEMO_COMPACT_OPTIONS_INIT;
	mnemo_compact_result r;
	mnemo_summary_nodes *nodes = NULL;

	conversation(st, "cmp-claim", 5);
	o.first_level = 3;
	o.tail_messages = 2;
	o.block_tokens = 1;
	o.max_rounds = 1;
	o.budget_tokens = 1;
	/* another compactor holds a live claim: this one does nothing, and
	 * that is no error */
	other_process("SELECT mnemo.claim_compaction('cmp-claim', 'other', 60000)");
	is_int(mnemo_compact(st, "cmp-claim", &o, &r), MNEMO_OK, "claim held elsewhere: no error");
	ok(r.lost, "claim held elsewhere: lost is set");
	is_int(r.summaries, 0, "claim held elsewhere: nothing committed");
	/* it dies; its claim expires; the next compactor proceeds */
	other_process("SELECT mnemo.claim_compaction('cmp-claim', 'other', 1), pg_sleep(0.01)");
	is_int(mnemo_compact(st, "cmp-claim", &o, &r), MNEMO_OK, "after expiry: mnemo_compact");
	ok(!r.lost, "after expiry: the claim was taken over");
	is_int(r.summaries, 1, "after expiry: one summary");
	o.holder = "fixed-holder";
	is_int(mnemo_compact(st, "cmp-claim", &o, &r), MNEMO_OK, "released: the next one claims again");
	is_int(r.summaries, 1, "released: one more summary");
	o.first_level = 4;
	is_int(mnemo_compact(st, "cmp-claim", &o, &r), MNEMO_ERR_INVALID_ARGUMENT, "level 4");
	o.first_level = 3;
	is_int(mnemo_compact(st, "cmp-nope", &o, &r), MNEMO_ERR_SESSION_NOT_FOUND, "missing session");
	if (mnemo_summary_nodes_get(st, "cmp-claim", false, &nodes) != MNEMO_OK)
		bail_out("nodes: %s", mnemo_errmsg(st));
	is_int((int) nodes->count, 2, "claim: two summaries");
	mnemo_summary_nodes_free(nodes);
}

/* Four processes compact one session at once, each with its own store. */
static void
test_four_processes(mnemo_store *st)
{
	pid_t		pids[4];
	int			failures = 0;
	int			i;
	PGconn	   *conn;
	PGresult   *res;

	conversation(st, "cmp-four", 20);
	for (i = 0; i < 4; i++)
	{
		if ((pids[i] = fork()) < 0)
			bail_out("fork");
		if (pids[i] == 0)
		{
			mnemo_compact_options o = MNEMO_COMPACT_OPTIONS_INIT;
			mnemo_compact_result r;
			mnemo_store *mine = mnemo_store_open(NULL);
			int			rc;

			o.first_level = 3;
			o.tail_messages = 2;
			o.block_tokens = 1;
			o.budget_tokens = 1;
			o.max_rounds = 50;
			do
				rc = mnemo_compact(mine, "cmp-four", &o, &r);
			while (rc == MNEMO_OK && r.lost);
			mnemo_store_close(mine);
			_exit(rc == MNEMO_OK ? 0 : 1);
		}
	}
	for (i = 0; i < 4; i++)
	{
		int			status;

		waitpid(pids[i], &status, 0);
		failures += !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	is_int(failures, 0, "four processes: no error reached any of them");
	conn = PQconnectdb("");
	res = PQexec(conn,
				 "SELECT (SELECT count(*) FROM (SELECT item_id FROM mnemo.summary_edges "
				 "  WHERE session_id = 'cmp-four' GROUP BY item_id HAVING count(*) > 1) d), "
				 "(SELECT count(*) FROM mnemo.summary_nodes('cmp-four', true)), "
				 "(SELECT count(*) FROM mnemo.messages m WHERE session_id = 'cmp-four' AND NOT is_summary "
				 "  AND NOT EXISTS (SELECT 1 FROM mnemo.get_context_items('cmp-four') c WHERE c.item_id = m.id) "
				 "  AND NOT EXISTS (SELECT 1 FROM mnemo.get_context_items('cmp-four') c "
				 "    JOIN LATERAL mnemo.expand_summary('cmp-four', c.item_id, true) e ON true "
				 "    WHERE c.item_type = 'summary' AND e.item_id = m.id)), "
				 "(SELECT count(*) FROM mnemo.compaction_claims WHERE session_id = 'cmp-four')");
	if (PQresultStatus(res) != PGRES_TUPLES_OK)
		bail_out("four processes: %s", PQerrorMessage(conn));
	is_str(PQgetvalue(res, 0, 0), "0", "four processes: no item covered by two summaries");
	ok(atoi(PQgetvalue(res, 0, 1)) >= 5, "four processes: they compacted (%s nodes)",
	   PQgetvalue(res, 0, 1));
	is_str(PQgetvalue(res, 0, 2), "0", "four processes: every message reachable from the context");
	is_str(PQgetvalue(res, 0, 3), "0", "four processes: the claim released");
	PQclear(res);
	PQfinish(conn);
}

/* A compactor killed with kill -9 while its model answers: its claim
 * expires and the next compactor proceeds. */
static void
test_kill(mnemo_store *st)
{
	server		s;
	char		url[96];
	mnemo_compact_options o;
	mnemo_compact_result r;
	pid_t		pid;
	int64_t		until;
	bool		claimed = false;
	int			status;

	server_start(&s, "reply\n  text \"slow\" \" reply\"\n  stall at=1 seconds=30\n");
	conversation(st, "cmp-kill", 5);
	options(&o, &s, url, sizeof(url));
	o.claim_ttl_ms = 1500;
	if ((pid = fork()) < 0)
		bail_out("fork");
	if (pid == 0)
	{
		mnemo_store *mine = mnemo_store_open(NULL);

		(void) mnemo_compact(mine, "cmp-kill", &o, &r);
		_exit(0);
	}
	/* the child has the claim and waits on the model */
	for (until = now_ms() + 10000; now_ms() < until && !claimed; sleep_ms(20))
	{
		PGconn	   *conn = PQconnectdb("");
		PGresult   *res = PQexec(conn, "SELECT 1 FROM mnemo.compaction_claims WHERE session_id = 'cmp-kill'");

		claimed = PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1;
		PQclear(res);
		PQfinish(conn);
	}
	ok(claimed, "kill -9: the compactor took the claim");
	sleep_ms(200);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	ok(WIFSIGNALED(status), "kill -9: it died");
	o.first_level = 3;
	is_int(mnemo_compact(st, "cmp-kill", &o, &r), MNEMO_OK, "kill -9: a compactor before the expiry");
	ok(r.lost && r.summaries == 0, "kill -9: finds the claim live and does nothing");
	sleep_ms(1600);
	is_int(mnemo_compact(st, "cmp-kill", &o, &r), MNEMO_OK, "kill -9: after the expiry");
	ok(!r.lost && r.summaries == 1, "kill -9: the next compactor proceeds (%d summaries)", r.summaries);
	server_stop(&s);
}

/* The thresholds of a turn with the engine as its hook. */
static void
test_thresholds(mnemo_store *st)
{
	server		s;
	char		url[96];
	mnemo_turn_options o = MNEMO_TURN_OPTIONS_INIT;
	mnemo_compact_options soft = MNEMO_COMPACT_OPTIONS_INIT;
	mnemo_compact_options hard = MNEMO_COMPACT_OPTIONS_INIT;
	mnemo_turn *t = NULL;
	mnemo_store *own;
	mnemo_summary_nodes *nodes = NULL;
	json_object **log;
	json_object *msgs;
	size_t		chars = 0;
	int			n = 0;
	int			rc;

	server_start(&s, "reply repeat=10\n  text \"ok\"\n");
	o.provider = "openai";
	snprintf(url, sizeof(url), "%s/v1", s.url);
	o.base_url = url;
	o.api_key = KEY;
	o.context_limit = 4096 + 4000 + 1000;	/* 1000 tokens of context */
	o.compact = mnemo_compact_hook;
	soft.first_level = 3;
	soft.tail_messages = 2;
	soft.block_tokens = 1;

	/* about 900 tokens: over the soft threshold (600), under the hard one;
	 * the turn returns while a thread of its own compacts */
	own = open_store(NULL);
	conversation(own, "cmp-soft", 3);
	o.compact_arg = &soft;
	rc = mnemo_session_send(own, "cmp-soft", &o, "hi", NULL, 0, NULL, NULL, &t);
	ok(rc == MNEMO_OK && t != NULL && t->compaction_triggered,
	   "soft threshold: the turn ends, compaction triggered (%s)", mnemo_errmsg(own));
	mnemo_turn_free(t);
	t = NULL;
	rc = mnemo_session_send(own, "cmp-soft", &o, "next", NULL, 0, NULL, NULL, &t);
	is_int(rc, MNEMO_OK, "soft threshold: the next turn proceeds meanwhile");
	mnemo_turn_free(t);
	t = NULL;
	mnemo_store_close(own);		/* joins the background compaction */
	if (mnemo_summary_nodes_get(st, "cmp-soft", false, &nodes) != MNEMO_OK)
		bail_out("nodes: %s", mnemo_errmsg(st));
	ok(nodes->count >= 1, "soft threshold: the background compaction committed (%zu)", nodes->count);
	mnemo_summary_nodes_free(nodes);

	/* about 1500 tokens: over the hard threshold; the turn waits for the
	 * engine to bring the context under 1000 before the request */
	hard = soft;
	hard.budget_tokens = 1000;
	hard.max_rounds = 20;
	o.compact_arg = &hard;
	conversation(st, "cmp-hard", 5);
	rc = mnemo_session_send(st, "cmp-hard", &o, "hi", NULL, 0, NULL, NULL, &t);
	is_int(rc, MNEMO_OK, "hard threshold: the turn goes on (%s)", mnemo_errmsg(st));
	mnemo_turn_free(t);
	log = log_read(&s, &n);
	msgs = n > 0 ? jpath(log[n - 1], "body.messages") : NULL;
	for (size_t i = 0; msgs != NULL && i < json_object_array_length(msgs); i++)
	{
		const char *c = jstr(json_object_array_get_idx(msgs, i), "content");

		chars += c ? strlen(c) : 0;
	}
	ok(msgs != NULL && chars / 4 <= 1000,
	   "hard threshold: the request the provider received is under the limit (%zu tokens)",
	   chars / 4);
	ok(msgs != NULL && strstr(json_object_to_json_string(msgs), "[LCM File IDs: " CONTENT_ID "]") != NULL,
	   "hard threshold: it carries the summary");
	log_free(log, n);
	server_stop(&s);
}


/* ---- the engine as a turn's default (no hook set) ---------------------- */

/* Counts and the last data of the compaction events heard on a handle. */
typedef struct heard
{
	const char *sid;			/* only this session's */
	int			started;
	int			completed;
	int			failed;
	int			remote;			/* of them, delivered by the feed */
	char		data[512];		/* the last COMPLETED's */
	char		id[MNEMO_ID_MAX + 1];
} heard;

static int
hear(mnemo_store *st, const mnemo_event *ev, void *arg)
{
	heard	   *h = arg;

	(void) st;
	if (strcmp(ev->session_id, h->sid) != 0)
		return 0;
	if (ev->type == MNEMO_EVENT_COMPACTION_STARTED)
		h->started++;
	else if (ev->type == MNEMO_EVENT_COMPACTION_FAILED)
		h->failed++;
	else if (ev->type == MNEMO_EVENT_COMPACTION_COMPLETED)
	{
		/* the first one's */
		if (h->completed++ == 0)
		{
			snprintf(h->data, sizeof(h->data), "%s", ev->data ? ev->data : "");
			snprintf(h->id, sizeof(h->id), "%s", ev->id ? ev->id : "");
		}
	}
	else
		return 0;
	h->remote += ev->remote;
	return 0;
}

/* An integer member of a JSON object's text; -1 when it has none. */
static long long
member(const char *json, const char *key)
{
	json_object *o = json_tokener_parse(json);
	json_object *v;
	long long	n = -1;

	if (o != NULL && json_object_object_get_ex(o, key, &v))
		n = json_object_get_int64(v);
	json_object_put(o);
	return n;
}

static int
count_sql(const char *sql)
{
	PGconn	   *conn = PQconnectdb("");
	PGresult   *res = PQexec(conn, sql);
	int			n;

	if (PQresultStatus(res) != PGRES_TUPLES_OK)
		bail_out("%s: %s", sql, PQerrorMessage(conn));
	n = atoi(PQgetvalue(res, 0, 0));
	PQclear(res);
	PQfinish(conn);
	return n;
}

static void
turn_options(mnemo_turn_options *o, const server *s, char *url, size_t urlsize, int usable)
{
	mnemo_turn_options init = MNEMO_TURN_OPTIONS_INIT;

	*o = init;
	o->provider = "openai";
	snprintf(url, urlsize, "%s/v1", s->url);
	o->base_url = url;
	o->api_key = KEY;
	o->context_limit = 4096 + 4000 + usable;
}

/*
 * Over the soft threshold with no hook set, the turn returns and the engine
 * compacts on a thread of its own; the next turn goes on while the model it
 * asked is still answering; the next turn after it ended publishes its
 * outcome on the caller's handle.
 */
static void
test_default_soft(mnemo_store *st)
{
	server		s;
	char		url[96];
	mnemo_turn_options o;
	mnemo_turn *t = NULL;
	mnemo_store *own = open_store(NULL);
	heard		h = {.sid = "cmp-dsoft"};
	json_object **log;
	int			n = 0;
	int64_t		until;
	int			rc;

	/* the turn; the compaction's Level 1, slow; the next turns */
	server_start(&s, "reply\n  text \"ok\"\nreply\n  wait_ms 2000\n  text \"## Goal\\nshort\"\n"
				 "reply repeat=50\n  text \"ok\"\n");
	/* 14 messages of ~150 tokens: over 60% of 3000, under 3000 */
	conversation(own, "cmp-dsoft", 7);
	turn_options(&o, &s, url, sizeof(url), 3000);
	mnemo_event_subscribe(own, MNEMO_EVENT_ANY, hear, &h);
	rc = mnemo_session_send(own, "cmp-dsoft", &o, "hi", NULL, 0, NULL, NULL, &t);
	ok(rc == MNEMO_OK && t != NULL && t->compaction_triggered,
	   "default soft: the turn ends over the soft threshold (%s)", mnemo_errmsg(own));
	mnemo_turn_free(t);
	t = NULL;
	is_int(h.started, 1, "default soft: COMPACTION_STARTED on the caller's handle");
	/* the engine asks the turn's model for Level 1 */
	for (until = now_ms() + 10000; now_ms() < until && n < 2; sleep_ms(20))
	{
		log = log_read(&s, &n);
		log_free(log, n);
	}
	log = log_read(&s, &n);
	ok(n == 2 && strstr(jstr(log[1], "body.messages.0.content"), "## Key Instructions") != NULL,
	   "default soft: the background compaction asked the turn's provider for Level 1");
	log_free(log, n);
	rc = mnemo_session_send(own, "cmp-dsoft", &o, "next", NULL, 0, NULL, NULL, &t);
	is_int(rc, MNEMO_OK, "default soft: the next turn proceeds (%s)", mnemo_errmsg(own));
	mnemo_turn_free(t);
	t = NULL;
	is_int(count_sql("SELECT count(*) FROM mnemo.summary_nodes('cmp-dsoft', true)"), 0,
		   "default soft: ... while the compaction still waits on its model");
	is_int(count_sql("SELECT count(*) FROM mnemo.compaction_claims WHERE session_id = 'cmp-dsoft'"), 1,
		   "default soft: ... holding the claim");
	is_int(h.completed, 0, "default soft: no outcome published before it ends");
	for (until = now_ms() + 15000; now_ms() < until &&
		 count_sql("SELECT count(*) FROM mnemo.compaction_claims WHERE session_id = 'cmp-dsoft'") > 0;)
		sleep_ms(50);
	ok(count_sql("SELECT count(*) FROM mnemo.summary_nodes('cmp-dsoft', true)") >= 1,
	   "default soft: the background compaction committed");
	rc = mnemo_session_send(own, "cmp-dsoft", &o, "third", NULL, 0, NULL, NULL, &t);
	is_int(rc, MNEMO_OK, "default soft: a third turn");
	mnemo_turn_free(t);
	is_int(h.completed, 1, "default soft: COMPACTION_COMPLETED published by the next turn");
	is_int(h.remote, 0, "default soft: in process, not from the feed");
	ok(member(h.data, "tokens_after") > 0 &&
	   member(h.data, "tokens_after") < member(h.data, "tokens_before"),
	   "default soft: its data says the context shrank (%s)", h.data);
	is_int((int) member(h.data, "level"), 1, "default soft: at level 1");
	ok(h.id[0] != '\0', "default soft: with the summary's id");
	mnemo_store_close(own);
	server_stop(&s);
	(void) st;
}

/* The tokens of a request body as the client estimates them: the system
 * prompt, the tools as given, every message's text. */
static int
request_tokens(json_object *body, const char *tools)
{
	json_object *msgs = jpath(body, "messages");
	int			tokens = mnemo_estimate_tokens(tools);

	for (size_t i = 0; msgs != NULL && i < json_object_array_length(msgs); i++)
		tokens += mnemo_estimate_tokens(jstr(json_object_array_get_idx(msgs, i), "content"));
	return tokens;
}

/*
 * Over the hard threshold with no hook set, the turn waits for the engine
 * to bring the context under the turn's own budget (its system prompt and
 * tools counted), and sends only then; events in process and on another
 * process's feed.
 */
static void
test_default_hard(mnemo_store *st)
{
	server		s;
	char		url[96];
	char		system[801];
	char		tools[600];
	mnemo_turn_options o;
	mnemo_turn *t = NULL;
	mnemo_store *follower = open_store(NULL);
	heard		h = {.sid = "cmp-dhard"},
				f = {.sid = "cmp-dhard"};
	json_object **log;
	int			n = 0,
				total;
	int			sub;
	int			rc;

	server_start(&s, "reply repeat=50\n  text \"## Goal\\ncontinue\"\n");
	memset(system, 's', 800);
	system[800] = '\0';			/* 200 tokens */
	snprintf(tools, sizeof(tools),
			 "[{\"name\": \"read\", \"description\": \"%0400d\", \"parameters\": {\"type\": \"object\"}}]", 0);
	conversation_with(st, "cmp-dhard", 10, system);	/* ~3000 tokens */
	turn_options(&o, &s, url, sizeof(url), 1500);
	o.tools = tools;
	if (mnemo_feed_follow(follower, "cmp-dhard", 0) != MNEMO_OK)
		bail_out("follow: %s", mnemo_errmsg(follower));
	while (mnemo_feed_poll(follower, 0) > 0)
		;
	mnemo_event_subscribe(follower, MNEMO_EVENT_ANY, hear, &f);
	sub = mnemo_event_subscribe(st, MNEMO_EVENT_ANY, hear, &h);
	rc = mnemo_session_send(st, "cmp-dhard", &o, "hi", NULL, 0, NULL, NULL, &t);
	is_int(rc, MNEMO_OK, "default hard: the turn goes on (%s)", mnemo_errmsg(st));
	mnemo_turn_free(t);
	log = log_read(&s, &n);
	ok(n >= 2, "default hard: the engine asked the model before the turn's request (%d requests)", n);
	total = n > 0 ? request_tokens(log[n - 1], tools) : 0;
	ok(n > 0 && strstr(jstr(log[n - 1], "body.messages.0.content"), system) != NULL,
	   "default hard: the turn's request carries the system prompt");
	ok(n > 0 && jpath(log[n - 1], "body.tools") != NULL, "default hard: ... and the tools");
	ok(total > 0 && total <= 1500,
	   "default hard: the request the provider received is under the limit (%d of 1500 tokens, "
	   "system prompt and tools included)", total);
	ok(n > 0 && strstr(json_object_to_json_string(jpath(log[n - 1], "body.messages")),
					   "continue\\n\\n[LCM File IDs: " CONTENT_ID "]") != NULL,
	   "default hard: it carries the summary");
	log_free(log, n);
	/* the blocking compaction's (and maybe, after the turn, a background
	 * one's: under the budget may still be over the soft threshold) */
	mnemo_event_unsubscribe(st, sub);
	ok(h.started >= 1, "default hard: COMPACTION_STARTED in process");
	ok(h.completed >= 1, "default hard: COMPACTION_COMPLETED in process");
	ok(member(h.data, "tokens_before") > 1500 && member(h.data, "tokens_after") <= 1500 - 200 - 110,
	   "default hard: tokens before over, after under the turn's budget (%s)", h.data);
	ok(member(h.data, "level") >= 1, "default hard: the level used");
	is_int(count_sql("SELECT count(*) FROM mnemo.summary_nodes('cmp-dhard', false) "
					 "WHERE id = (SELECT item_id FROM mnemo.get_context_items('cmp-dhard') "
					 "WHERE item_type = 'summary' ORDER BY position DESC LIMIT 1)"), 1,
		   "default hard: a live summary node in context");

	/* another process hears it on the feed */
	for (int64_t until = now_ms() + 5000; now_ms() < until && (f.started == 0 || f.completed == 0);)
		if (mnemo_feed_poll(follower, 200) < 0)
			bail_out("poll: %s", mnemo_errmsg(follower));
	ok(f.started >= 1 && f.remote > 0, "default hard: the feed delivers compaction_started");
	ok(f.completed >= 1, "default hard: the feed delivers the summary as COMPACTION_COMPLETED");
	ok(member(f.data, "level") >= 1 && member(f.data, "tokens") > 0 && member(f.data, "items") >= 3,
	   "default hard: with its level, tokens and the items it replaced (%s)", f.data);
	ok(strstr(f.data, "\"kind\": \"leaf\"") != NULL || strstr(f.data, "\"kind\": \"condensed\"") != NULL,
	   "default hard: and its kind");
	mnemo_store_close(follower);
	server_stop(&s);
}

/*
 * Summaries alone over the budget: after compaction the turn still cannot
 * send its context under the limit, so it sends nothing.
 */
static void
test_default_never_over(mnemo_store *st)
{
	server		s;
	char		url[96];
	mnemo_turn_options o;
	mnemo_turn *t = NULL;
	json_object **log;
	int			n = 0;
	int			rc;

	server_start(&s, "reply repeat=50\n  text \"ok\"\n");
	conversation(st, "cmp-over", 6);
	/* one round of Level 3 at 150 tokens: a summary, kept whatever the
	 * budget, over the turn's 100 */
	turn_options(&o, &s, url, sizeof(url), 100);
	o.compact = mnemo_compact_hook;
	{
		mnemo_compact_options c = MNEMO_COMPACT_OPTIONS_INIT;

		c.first_level = 3;
		c.l3_tokens = 150;
		c.tail_messages = -1;
		c.block_tokens = 1;
		c.max_rounds = 1;
		o.compact_arg = &c;
		rc = mnemo_session_send(st, "cmp-over", &o, "hi", NULL, 0, NULL, NULL, &t);
	}
	is_int(rc, MNEMO_ERR_CANCELLED, "over after compaction: the turn fails (%s)", mnemo_errmsg(st));
	ok(t == NULL, "over after compaction: no turn");
	log = log_read(&s, &n);
	is_int(n, 0, "over after compaction: nothing was sent");
	log_free(log, n);
	server_stop(&s);
}

/* A real Claude Code session log (test/data/claude-code/README.md). */
#define TRANSCRIPT "test/data/claude-code/29/77bc73228c/1/full.jsonl"


/* The end of a compaction as a follower hears it: release_compaction's
 * notification, the one COMPLETED or FAILED carrying tokens_before. */
typedef struct outcome
{
	int			completed;
	int			failed;
	bool		remote;
	char		data[512];
	char		id[MNEMO_ID_MAX + 1];
} outcome;

static int
hear_outcome(mnemo_store *st, const mnemo_event *ev, void *arg)
{
	outcome    *o = arg;

	(void) st;
	if ((ev->type != MNEMO_EVENT_COMPACTION_COMPLETED && ev->type != MNEMO_EVENT_COMPACTION_FAILED) ||
		ev->data == NULL || member(ev->data, "tokens_before") < 0)
		return 0;
	if (ev->type == MNEMO_EVENT_COMPACTION_COMPLETED)
		o->completed++;
	else
		o->failed++;
	o->remote = ev->remote;
	snprintf(o->data, sizeof(o->data), "%s", ev->data);
	snprintf(o->id, sizeof(o->id), "%s", ev->id ? ev->id : "");
	return 0;
}

static void
poll_outcome(mnemo_store *follower, const outcome *o)
{
	for (int64_t until = now_ms() + 5000; now_ms() < until && o->completed + o->failed == 0;)
		if (mnemo_feed_poll(follower, 200) < 0)
			bail_out("poll: %s", mnemo_errmsg(follower));
}

/*
 * Another process following the session hears how a compaction ended:
 * completed with the context's size before and after, the level and the
 * summary; failed with the error (here: the commit cannot get the session
 * row another transaction holds, under lock_timeout).
 */
static void
test_feed_outcome(mnemo_store *st)
{
	mnemo_compact_options o = MNEMO_COMPACT_OPTIONS_INIT;
	mnemo_compact_result r;
	mnemo_store *follower = open_store(NULL);
	mnemo_store *impatient = open_store("options='-c lock_timeout=300'");
	outcome		heard_end = {0};
	PGconn	   *blocker;
	PGresult   *res;
	int			rc;

	conversation(st, "cmp-fout", 5);
	if (mnemo_feed_follow(follower, "cmp-fout", 0) != MNEMO_OK)
		bail_out("follow: %s", mnemo_errmsg(follower));
	while (mnemo_feed_poll(follower, 0) > 0)
		;
	mnemo_event_subscribe(follower, MNEMO_EVENT_ANY, hear_outcome, &heard_end);
	o.first_level = 3;
	o.tail_messages = 2;
	o.block_tokens = 1;
	o.max_rounds = 1;
	o.budget_tokens = 1;
	rc = mnemo_compact(st, "cmp-fout", &o, &r);
	is_int(rc, MNEMO_OK, "feed outcome: mnemo_compact (%s)", mnemo_errmsg(st));
	poll_outcome(follower, &heard_end);
	is_int(heard_end.completed, 1, "feed outcome: the follower hears compaction_completed");
	ok(heard_end.remote, "feed outcome: ... from the feed");
	ok(member(heard_end.data, "tokens_before") == r.tokens_before &&
	   member(heard_end.data, "tokens_after") == r.tokens_after &&
	   r.tokens_before > r.tokens_after,
	   "feed outcome: with the context's tokens before > after, as in process (%s)", heard_end.data);
	is_int((int) member(heard_end.data, "level"), 3, "feed outcome: the level used");
	is_str(heard_end.id, r.summary_id, "feed outcome: the summary's id");
	ok(strstr(heard_end.data, r.summary_id) != NULL, "feed outcome: ... also as summary_id");

	/* a compaction that fails: its commit waits on a row lock past lock_timeout */
	blocker = PQconnectdb("");
	res = PQexec(blocker, "BEGIN; SELECT 1 FROM mnemo.sessions WHERE id = 'cmp-fout' FOR UPDATE");
	if (PQresultStatus(res) != PGRES_TUPLES_OK)
		bail_out("blocker: %s", PQerrorMessage(blocker));
	PQclear(res);
	memset(&heard_end, 0, sizeof(heard_end));
	o.no_prune = true;
	rc = mnemo_compact(impatient, "cmp-fout", &o, &r);
	ok(rc != MNEMO_OK, "feed outcome: the compaction fails (%d: %s)", rc, mnemo_errmsg(impatient));
	PQclear(PQexec(blocker, "ROLLBACK"));
	PQfinish(blocker);
	poll_outcome(follower, &heard_end);
	is_int(heard_end.failed, 1, "feed outcome: the follower hears compaction_failed");
	is_int(heard_end.completed, 0, "feed outcome: and no compaction_completed");
	ok(member(heard_end.data, "tokens_before") == r.tokens_before && r.tokens_before > 0,
	   "feed outcome: with the context's tokens before (%s)", heard_end.data);
	ok(strstr(heard_end.data, "\"error\"") != NULL && strstr(heard_end.data, "lock") != NULL,
	   "feed outcome: and the error's message");
	is_int(count_sql("SELECT count(*) FROM mnemo.compaction_claims WHERE session_id = 'cmp-fout'"), 0,
		   "feed outcome: the claim was released");
	mnemo_store_close(impatient);
	mnemo_store_close(follower);
}

/*
 * A real transcript (277 user/assistant lines, 102 tool calls, tool outputs
 * up to 32 KB) compacted down to a small budget (its fresh tail and little
 * more) through Level 1 and the condensations: the context ends under the budget, every original message
 * comes back from expand_summary exactly once, and mnemo verify passes.
 */
static void
test_transcript(mnemo_store *st)
{
	server		s;
	mnemo_compact_options o;
	mnemo_compact_result r;
	mnemo_import_options io = MNEMO_IMPORT_OPTIONS_INIT;
	char		url[96];
	char		sid[MNEMO_ID_MAX + 1];
	char		cmd[512];
	int64_t		n = 0;
	int			requests = 0;
	int			rounds = 0;
	json_object **log;
	FILE	   *f = fopen(TRANSCRIPT, "rb");
	const char *bin = getenv("MNEMO_BIN");

	if (f == NULL)
		bail_out("%s: cannot open", TRANSCRIPT);
	io.session_id = "cmp-real";
	if (mnemo_import_jsonl(st, f, &io, sid, &n) != MNEMO_OK)
		bail_out("import: %s", mnemo_errmsg(st));
	fclose(f);
	ok(n >= 100, "transcript: %lld messages imported", (long long) n);

	server_start(&s, "reply repeat=5000\n  text \"## Goal\\nContinue the kimi-cli work.\"\n");
	options(&o, &s, url, sizeof(url));
	/* its last two user turns alone hold 6,919 tokens (the fresh tail): the
	 * leaves' summaries must be condensed to fit what is left */
	o.budget_tokens = 6960;
	o.block_tokens = 3000;
	o.max_rounds = 1000;
	o.tail_messages = 4;
	do
		is_int(mnemo_compact(st, "cmp-real", &o, &r), MNEMO_OK, "transcript: compaction %d", rounds);
	while (r.summaries > 0 && r.tokens_after > o.budget_tokens && ++rounds < 5);
	ok(r.tokens_after <= o.budget_tokens, "transcript: the context is under the budget (%lld of %d)",
	   (long long) r.tokens_after, o.budget_tokens);
	log = log_read(&s, &requests);
	log_free(log, requests);
	ok(requests > 10, "transcript: the model summarised (%d requests)", requests);
	ok(count_sql("SELECT count(*) FROM mnemo.summary_nodes('cmp-real', true) WHERE kind = 'condensed'") > 0,
	   "transcript: summaries were condensed");
	is_int(count_sql("SELECT count(*) FROM mnemo.messages m WHERE session_id = 'cmp-real' AND NOT is_summary "
					 "AND NOT EXISTS (SELECT 1 FROM mnemo.get_context_items('cmp-real') c WHERE c.item_id = m.id)"),
		   count_sql("SELECT count(*) FROM (SELECT DISTINCT e.item_id FROM mnemo.get_context_items('cmp-real') c "
					 "  JOIN LATERAL mnemo.expand_summary('cmp-real', c.item_id, true) e ON true "
					 "  WHERE c.item_type = 'summary' AND e.item_type = 'message') d"),
		   "transcript: expand_summary gives back every message out of context");
	is_int(count_sql("SELECT count(*) FROM (SELECT e.item_id FROM mnemo.get_context_items('cmp-real') c "
					 "  JOIN LATERAL mnemo.expand_summary('cmp-real', c.item_id, true) e ON true "
					 "  WHERE c.item_type = 'summary' AND e.item_type = 'message' "
					 "  GROUP BY e.item_id HAVING count(*) > 1) d"), 0,
		   "transcript: ... each exactly once");
	if (bin != NULL)
	{
		int			status;

		snprintf(cmd, sizeof(cmd), "'%s' verify cmp-real >/dev/null", bin);
		status = system(cmd);
		ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		   "transcript: mnemo verify passes (every message reachable, byte for byte)");
	}
	else
		ok(true, "transcript: # SKIP mnemo verify: no MNEMO_BIN");
	server_stop(&s);
}

int
main(void)
{
	mnemo_store *st;

	if (mnemo_global_init() != MNEMO_OK)
		bail_out("mnemo_global_init");
	st = open_store(NULL);
	test_level1(st);
	test_level2(st);
	test_level3(st);
	test_footer_through_condensation(st);
	test_claim(st);
	test_four_processes(st);
	test_kill(st);
	test_thresholds(st);
	test_default_soft(st);
	test_default_hard(st);
	test_default_never_over(st);
	test_feed_outcome(st);
	test_transcript(st);
	mnemo_store_close(st);
	mnemo_global_cleanup();
	return tap_done();
}
