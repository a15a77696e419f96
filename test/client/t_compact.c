/*
 * t_compact.c
 *		The compaction engine (mnemo_compact) against the scripted provider
 *		server and the real server functions: each level's outcome, the
 *		fall-through, the file-id footer through condensation, the claim,
 *		several processes, a compactor killed, the thresholds.  The engine
 *		as a turn's default is t_compact_default.c's.
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
#include "compact_helpers.h"

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

/*
 * text after the annotation commit_summary put before it (the engine asks
 * for one): the header naming the summary, then its "Expand for details
 * about" line when it has one.
 */
static const char *
summary_body(const char *text)
{
	const char *p = text;

	if (strncmp(p, "[Summary ", 9) == 0 && strchr(p, '\n') != NULL)
		p = strchr(p, '\n') + 1;
	if (strncmp(p, "[Expand for details about: ", 27) == 0 && strchr(p, '\n') != NULL)
		p = strchr(p, '\n') + 1;
	return p;
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
	{
		char		header[MNEMO_ID_MAX + 64];

		snprintf(header, sizeof(header), "[Summary %s: leaf, depth 0, ", r.summary_id);
		ok(strncmp(text, header, strlen(header)) == 0,
		   "L1: the engine's summary is annotated: its header names it (%.60s)", text);
	}
	ok(strncmp(summary_body(text), "## Goal\nAnswer questions.", 25) == 0, "L1: the model's text");
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
	ok(strncmp(summary_body(text), "GOAL: answer\n\n[LCM File IDs: " CONTENT_ID "]", 40) == 0,
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
	ok(mnemo_estimate_tokens(summary_body(text)) <= 512, "L3: its text at most 512 tokens (%d)",
	   mnemo_estimate_tokens(summary_body(text)));
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
			/* a budget of 1 is below any session's floor: compacting as
			 * far as it goes ends in OVER_BUDGET, which is no race's error */
			_exit(rc == MNEMO_OK || rc == MNEMO_ERR_OVER_BUDGET ? 0 : 1);
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
	/* the task, with the file reference, stays verbatim at this budget;
	 * the summary of the rest carries what it covered */
	ok(msgs != NULL && strstr(json_object_to_json_string(msgs), "Content-ID: " CONTENT_ID) != NULL,
	   "hard threshold: it carries the task's file reference");
	log_free(log, n);
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
	mnemo_store_close(st);
	mnemo_global_cleanup();
	return tap_done();
}
