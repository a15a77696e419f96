/*
 * t_compact_default.c
 *		The compaction engine as a chat turn's default (no hook set), against
 *		the scripted provider server: soft and hard thresholds, never over
 *		the model's window, the outcome on the event feed, and a compacted
 *		session's transcript.
 *
 * Needs MNEMO_PROVIDER_SERVER (test/client/run.sh builds and exports it).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libpq-fe.h>

#include "mnemo.h"
#include "tap.h"
#include "helpers.h"
#include "provider.h"
#include "compact_helpers.h"

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
	/* the prompt, which holds the file reference, is the task: it stays
	 * verbatim (a quarter of the budget holds it); the rest is summarised */
	ok(n > 0 && strstr(json_object_to_json_string(jpath(log[n - 1], "body.messages")),
					   "\"[Summary ") != NULL &&
	   strstr(json_object_to_json_string(jpath(log[n - 1], "body.messages")),
			  "]\\n## Goal\\ncontinue\"") != NULL,
	   "default hard: it carries the summary, after its annotation");
	ok(n > 0 && strstr(json_object_to_json_string(jpath(log[n - 1], "body.messages")),
					   "Content-ID: " CONTENT_ID) != NULL,
	   "default hard: and the task, with its file reference, verbatim");
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

	/*
	 * A compaction that fails: its commit waits past lock_timeout on the
	 * session row lock an append in flight holds (FOR NO KEY UPDATE, which
	 * the claim's FOR KEY SHARE does not wait for).
	 */
	blocker = PQconnectdb("");
	res = PQexec(blocker, "BEGIN; SELECT 1 FROM mnemo.sessions WHERE id = 'cmp-fout' FOR NO KEY UPDATE");
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
	/* its last two user turns alone hold 6,919 tokens; at 80 the fresh
	 * tail is a quarter of that, and the leaves' summaries (one per 3,000
	 * tokens) must be condensed to fit what is left */
	o.budget_tokens = 80;
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
	test_default_soft(st);
	test_default_hard(st);
	test_default_never_over(st);
	test_feed_outcome(st);
	test_transcript(st);
	mnemo_store_close(st);
	mnemo_global_cleanup();
	return tap_done();
}
