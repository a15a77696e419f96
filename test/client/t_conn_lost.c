/*
 * t_conn_lost.c
 *		The database connection lost in the middle of each kind of call:
 *		a chat turn (waiting for the turn lock, while the reply streams,
 *		while its last writes wait on a lock), a compaction waiting on its
 *		model, a map's workers, and an idle handle, each by
 *		pg_terminate_backend or by an immediate shutdown and restart of
 *		the cluster.  Each call fails with MNEMO_ERR_CONNECTION (not
 *		another code), promptly, leaves nothing half-written, and the
 *		handle goes on after mnemo_store_reconnect.
 *
 * The handle under test connects with application_name mnemo_victim, so
 * that another connection can end exactly its backends (and those of the
 * connections it opens with the same parameters: map workers).  The
 * restarts need MNEMO_TEST_CLUSTER_DIR (test/client/run.sh sets it).
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mnemo.h"
#include "tap.h"
#include "helpers.h"
#include "provider.h"
#include "send_helpers.h"

#define VICTIM "application_name=mnemo_victim"

enum how
{
	TERMINATE,					/* pg_terminate_backend */
	CRASH,						/* immediate shutdown, then start */
	LOCK_THEN_TERMINATE			/* lock the session row, wait for the handle
								 * to wait on it, then terminate */
};

typedef struct killer
{
	const collected *c;			/* wait for this many deltas first */
	int			after_deltas;
	const char *wait_sql;		/* or until this says t */
	int			delay_ms;
	enum how	how;
	const char *sid;
	int			killed;
} killer;

static bool
have_cluster(void)
{
	const char *dir = getenv("MNEMO_TEST_CLUSTER_DIR");

	return dir != NULL && *dir != '\0';
}

static void
cluster(const char *what)
{
	char		cmd[1024];

	snprintf(cmd, sizeof(cmd), "bash test/cluster.sh %s '%s' >/dev/null 2>&1", what,
			 getenv("MNEMO_TEST_CLUSTER_DIR"));
	if (system(cmd) != 0)
		bail_out("bash test/cluster.sh %s failed", what);
}

static int
terminate_victims(void)
{
	char	   *n = sql_value("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
							  "WHERE application_name = 'mnemo_victim'", NULL);
	int			k = atoi(n);

	free(n);
	return k;
}

static bool
sql_true(const char *sql)
{
	char	   *v = sql_value(sql, NULL);
	bool		t = strcmp(v, "t") == 0;

	free(v);
	return t;
}

#define VICTIM_WAITS_ON_LOCK \
	"SELECT count(*) > 0 FROM pg_stat_activity WHERE application_name = 'mnemo_victim' " \
	"AND wait_event_type = 'Lock'"

static void *
kill_thread(void *arg)
{
	killer	   *k = arg;
	int64_t		until = now_ms() + 20000;
	PGconn	   *blocker = NULL;

	while (k->c != NULL && atomic_load(&((collected *) k->c)->deltas) < k->after_deltas &&
		   now_ms() < until)
		sleep_ms(5);
	while (k->wait_sql != NULL && !sql_true(k->wait_sql) && now_ms() < until)
		sleep_ms(5);
	if (k->how == LOCK_THEN_TERMINATE)
	{
		const char *params[1] = {k->sid};

		blocker = PQconnectdb("");
		PQclear(PQexec(blocker, "BEGIN"));
		PQclear(PQexecParams(blocker, "SELECT 1 FROM mnemo.sessions WHERE id = $1 FOR UPDATE",
							 1, NULL, params, NULL, NULL, 0));
		while (!sql_true(VICTIM_WAITS_ON_LOCK) && now_ms() < until)
			sleep_ms(5);
	}
	sleep_ms(k->delay_ms);
	if (k->how == CRASH)
	{
		cluster("crash");
		cluster("start");
		k->killed = 1;
	}
	else
		k->killed = terminate_victims();
	PQfinish(blocker);
	return NULL;
}

static void
start_killer(pthread_t *th, killer *k)
{
	if (pthread_create(th, NULL, kill_thread, k) != 0)
		bail_out("pthread_create");
}

static void
reconnect(mnemo_store *st, const char *label)
{
	if (mnemo_store_reconnect(st) != MNEMO_OK)
		bail_out("%s: reconnect: %s", label, mnemo_errmsg(st));
}

/* No advisory lock is left: the turn lock went with the connection. */
static bool
no_turn_lock(void)
{
	return sql_true("SELECT count(*) = 0 FROM pg_locks WHERE locktype = 'advisory' "
					"AND classid = 1835951469");
}

/* ---- an idle handle ---------------------------------------------------- */

/*
 * An immediate shutdown (a crash) and a restart while the handle is idle:
 * libpq fails the next call with "server closed the connection
 * unexpectedly" while it still calls the connection CONNECTION_OK, and
 * that call said MNEMO_ERR_SERVER.
 */
static void
test_idle_crash(mnemo_store *st)
{
	char		id[MNEMO_ID_MAX + 1];

	if (!have_cluster())
	{
		for (int i = 0; i < 4; i++)
			ok(1, "# SKIP MNEMO_TEST_CLUSTER_DIR is not set: no restart");
		return;
	}
	is_int(mnemo_new_id(st, "msg", id), MNEMO_OK, "idle crash: a call before");
	cluster("crash");
	cluster("start");
	is_code(st, mnemo_new_id(st, "msg", id), MNEMO_ERR_CONNECTION,
			"idle crash: the first call after the restart");
	is_code(st, mnemo_new_id(st, "msg", id), MNEMO_ERR_CONNECTION, "idle crash: and the next");
	reconnect(st, "idle crash");
	is_int(mnemo_new_id(st, "msg", id), MNEMO_OK, "idle crash: after the reconnect");
}

/* ---- a chat turn --------------------------------------------------------- */

typedef struct turn_case
{
	const char *label;
	const char *provider;
	const char *script;
	killer		k;
	bool		crash;
	int			want_messages;	/* stored after the lost turn */
	int			max_ms;
} turn_case;

static void
test_turn(mnemo_store *st, turn_case *tc, PGconn *holder)
{
	server		s;
	char		url[96];
	char		sid[64];
	mnemo_turn_options o;
	mnemo_turn *t = NULL;
	collected	c = {0};
	mnemo_messages *m;
	mnemo_session *loaded = NULL;
	pthread_t	th;
	int64_t		t0;
	int			rc;

	if (tc->crash && !have_cluster())
	{
		for (int i = 0; i < 8; i++)
			ok(1, "# SKIP MNEMO_TEST_CLUSTER_DIR is not set: no restart");
		return;
	}
	snprintf(sid, sizeof(sid), "turn-%s", tc->label);
	server_start(&s, tc->script);
	session(st, sid, tc->provider, strcmp(tc->provider, "openai") == 0 ? "gpt-4o-mini" : "claude-test");
	options(&o, &s, tc->provider, url, sizeof(url));
	o.idle_timeout_ms = 20000;
	if (tc->k.after_deltas > 0)
		tc->k.c = &c;
	tc->k.sid = sid;
	start_killer(&th, &tc->k);
	t0 = now_ms();
	rc = mnemo_session_send(st, sid, &o, "go", NULL, 0, on_part, &c, &t);
	pthread_join(th, NULL);
	PQfinish(holder);
	is_code(st, rc, MNEMO_ERR_CONNECTION, tc->label);
	ok(now_ms() - t0 < tc->max_ms, "%s: within %d ms (%lld)", tc->label, tc->max_ms,
	   (long long) (now_ms() - t0));
	ok(t == NULL || strcmp(t->finish_reason, "error") == 0, "%s: the turn, if any, says error",
	   tc->label);
	mnemo_turn_free(t);
	t = NULL;
	server_stop(&s);

	reconnect(st, tc->label);
	ok(no_turn_lock(), "%s: no turn lock is left", tc->label);
	m = messages(st, sid);
	is_int((int) m->count, tc->want_messages, "%s: %d message(s) stored", tc->label, tc->want_messages);
	if (m->count == 2)
		/* the row's last writes (its part, usage and finish reason) are one
		 * transaction: all or nothing */
		ok(strcmp(m->items[1].role, "assistant") == 0 && m->items[1].n_parts == 0 &&
		   m->items[1].finish_reason == NULL,
		   "%s: the assistant row has neither its part nor its finish reason", tc->label);
	else
		ok(m->count == 0, "%s: nothing of the turn is stored", tc->label);
	mnemo_messages_free(m);
	is_int(mnemo_session_load(st, sid, &loaded), MNEMO_OK, "%s: load", tc->label);
	mnemo_session_free(loaded);

	server_start(&s, "reply\n  text \"fine\"\n");
	options(&o, &s, tc->provider, url, sizeof(url));
	rc = mnemo_session_send(st, sid, &o, "again", NULL, 0, NULL, NULL, &t);
	is_int(rc, MNEMO_OK, "%s: the next turn succeeds (%s)", tc->label, mnemo_errmsg(st));
	mnemo_turn_free(t);
	server_stop(&s);
	m = messages(st, sid);
	ok(tc->want_messages < 2 ||
	   (m->count >= 2 && m->items[1].finish_reason != NULL &&
		strcmp(m->items[1].finish_reason, "interrupted") == 0),
	   "%s: the load marked the dead row interrupted", tc->label);
	mnemo_messages_free(m);
}

static void
test_turns(mnemo_store *st)
{
	turn_case	cases[] = {
		/* the reply stalls after its first delta; the backend is ended */
		{"streaming", "openai", "reply\n  text \"one\" \" two\"\n  stall at=2 seconds=1 then=continue\n",
		{.after_deltas = 1, .delay_ms = 100}, false, 2, 5000},
		/* the same with a tool call after the stall: its part cannot be stored */
		{"tool-call", "anthropic",
			"reply\n  text \"one\"\n  tool bash \"{\\\"cmd\\\":\\\"ls\\\"}\"\n  stall at=5 seconds=1 then=continue\n",
		{.after_deltas = 1, .delay_ms = 100}, false, 2, 5000},
		/* the provider cuts the stream too, after the database went: the
		 * turn's error is the lost connection (nothing of the reply could be
		 * stored), not the stream's */
		{"and-stream-cut", "openai", "reply\n  text \"one\" \" two\"\n  stall at=2 seconds=1 then=close\n",
		{.after_deltas = 1, .delay_ms = 100}, false, 2, 5000},
		/* the turn's last writes wait on a lock held elsewhere */
		{"last-writes", "openai", "reply\n  text \"one\" \" two\"\n  stall at=2 seconds=1 then=continue\n",
		{.after_deltas = 1, .how = LOCK_THEN_TERMINATE, .delay_ms = 50}, false, 2, 5000},
		/* the server crashes and restarts while the reply streams */
		{"crash", "anthropic", "reply\n  text \"one\" \" two\"\n  stall at=5 seconds=5 then=continue\n",
		{.after_deltas = 1, .how = CRASH}, true, 2, 15000},
		/* waiting for the turn lock, which another connection holds */
		{"turn-lock", "openai", "reply\n  text \"x\"\n",
		{.wait_sql = VICTIM_WAITS_ON_LOCK, .delay_ms = 50}, false, 0, 5000},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
	{
		PGconn	   *holder = NULL;

		if (strcmp(cases[i].label, "turn-lock") == 0)
		{
			/* the turn's lock (send.c), held until the turn's backend is gone */
			holder = PQconnectdb("");
			PQclear(PQexec(holder, "SELECT pg_advisory_lock(1835951469, hashtext('turn-turn-lock'))"));
		}
		test_turn(st, &cases[i], holder);
	}
}

/* ---- a compaction ------------------------------------------------------- */

/* A session of long turns, to compact. */
static void
conversation(mnemo_store *st, const char *sid, int turns)
{
	new_session(st, sid);
	for (int i = 0; i < turns; i++)
	{
		mnemo_new_message m = {0};
		char		text[700];

		snprintf(text, sizeof(text), "Message %d: %0600d", i, i);
		m.role = i % 2 ? "assistant" : "user";
		append_text_message(st, sid, &m, text);
	}
}

/*
 * The compaction options of the tests below: the model of server s (its
 * base url written into url), no retries, a short tail.
 */
static void
compact_options(mnemo_compact_options *o, const server *s, char *url, size_t cap)
{
	snprintf(url, cap, "%s/v1", s->url);
	o->provider = "openai";
	o->model = "gpt-compact";
	o->base_url = url;
	o->api_key = KEY;
	o->max_retries = -1;
	o->tail_messages = 2;
	o->idle_timeout_ms = 20000;
}

/*
 * The backend ended while the engine waits on its model: CONNECTION, and
 * the context view and the DAG as they were.
 */
static void
test_compaction(mnemo_store *st)
{
	server		s;
	char		url[96];
	mnemo_compact_options o = MNEMO_COMPACT_OPTIONS_INIT;
	mnemo_compact_result r;
	killer		k = {0};
	pthread_t	th;
	char	   *items_before,
			   *items_after;
	int64_t		t0;
	int			rc;

	conversation(st, "compact-lost", 24);
	items_before = sql_value("SELECT string_agg(item_id, ',' ORDER BY position) "
							 "FROM mnemo.context_items WHERE session_id = 'compact-lost'", NULL);
	server_start(&s, "reply repeat=5\n  text \"A summary.\"\n  stall at=1 seconds=1 then=continue\n");
	compact_options(&o, &s, url, sizeof(url));
	/* once the claim is taken, the engine is on its model */
	k.wait_sql = "SELECT count(*) > 0 FROM mnemo.compaction_claims WHERE session_id = 'compact-lost'";
	k.delay_ms = 300;
	start_killer(&th, &k);
	t0 = now_ms();
	memset(&r, 0, sizeof(r));
	rc = mnemo_compact(st, "compact-lost", &o, &r);
	pthread_join(th, NULL);
	is_code(st, rc, MNEMO_ERR_CONNECTION, "compaction lost on its model");
	ok(now_ms() - t0 < 5000, "compaction: within 5 s (%lld ms)", (long long) (now_ms() - t0));
	is_int(r.summaries, 0, "compaction: no summary counted");
	server_stop(&s);
	reconnect(st, "compaction");
	items_after = sql_value("SELECT string_agg(item_id, ',' ORDER BY position) "
							"FROM mnemo.context_items WHERE session_id = 'compact-lost'", NULL);
	is_str(items_after, items_before, "compaction: the context view is as it was");
	ok(sql_true("SELECT count(*) = 0 FROM mnemo.summary_nodes WHERE session_id = 'compact-lost'") &&
	   sql_true("SELECT count(*) = 24 FROM mnemo.messages WHERE session_id = 'compact-lost'"),
	   "compaction: no summary node or message half-written");
	free(items_before);
	free(items_after);

	/* the handle's next compaction is not locked out by its own dead claim
	 * (it was, until the claim expired: five minutes by default) */
	server_start(&s, "reply repeat=5\n  text \"A summary.\"\n");
	snprintf(url, sizeof(url), "%s/v1", s.url);
	memset(&r, 0, sizeof(r));
	rc = mnemo_compact(st, "compact-lost", &o, &r);
	is_int(rc, MNEMO_OK, "compaction after the reconnect (%s)", mnemo_errmsg(st));
	ok(!r.lost && r.summaries >= 1, "compaction after the reconnect: not locked out by its own "
	   "lost claim (lost %d, summaries %d)", r.lost, r.summaries);
	server_stop(&s);
}

/*
 * A background compaction (mnemo_compact_hook, not blocking) whose
 * connection is lost while it waits on its model: once joined, its claim
 * does not lock out the blocking compaction that follows on the handle.
 */
static void
test_background(mnemo_store *st)
{
	server		s;
	char		url[96];
	mnemo_compact_options o = MNEMO_COMPACT_OPTIONS_INIT;
	killer		k = {0};
	pthread_t	th;
	int64_t		until;
	int			rc;

	conversation(st, "background-lost", 24);
	server_start(&s, "reply repeat=5\n  text \"A summary.\"\n  stall at=1 seconds=1 then=continue\n");
	compact_options(&o, &s, url, sizeof(url));
	k.wait_sql = "SELECT count(*) > 0 FROM mnemo.compaction_claims WHERE session_id = 'background-lost'";
	k.delay_ms = 300;
	start_killer(&th, &k);
	rc = mnemo_compact_hook(st, "background-lost", false, &o);
	is_int(rc, 0, "background compaction started");
	pthread_join(th, NULL);
	/* it ends once its model answers and its next statement fails */
	for (until = now_ms() + 10000; now_ms() < until; sleep_ms(50))
		if (sql_true("SELECT count(*) = 0 FROM pg_stat_activity WHERE application_name = 'mnemo_victim'"))
			break;
	sleep_ms(1500);
	server_stop(&s);
	reconnect(st, "background");

	server_start(&s, "reply repeat=5\n  text \"A summary.\"\n");
	snprintf(url, sizeof(url), "%s/v1", s.url);
	o.budget_tokens = 0;
	rc = mnemo_compact_hook(st, "background-lost", true, &o);
	is_int(rc, MNEMO_OK, "a blocking compaction after it (%s)", mnemo_errmsg(st));
	ok(sql_true("SELECT count(*) >= 1 FROM mnemo.summary_nodes WHERE session_id = 'background-lost'"),
	   "the blocking compaction was not locked out by the lost one's claim");
	server_stop(&s);
}

/*
 * Over the hard threshold the turn compacts on its own connection first;
 * that connection lost while the compaction waits on its model is the
 * turn's CONNECTION, as the lost connection of any call is, not CANCELLED
 * (which says the compaction failed and the handle is fine).
 */
static void
test_hard_threshold(mnemo_store *st)
{
	server		s;
	char		url[96];
	mnemo_turn_options o = MNEMO_TURN_OPTIONS_INIT;
	mnemo_turn *t = NULL;
	killer		k = {0};
	pthread_t	th;
	int64_t		t0;
	int			rc;

	/* 24 messages of ~150 tokens: over a budget of 3000 */
	conversation(st, "hard-lost", 24);
	server_start(&s, "reply\n  text \"A summary.\"\n  stall at=1 seconds=1 then=continue\n"
				 "reply repeat=5\n  text \"ok\"\n");
	o.provider = "openai";
	o.model = "gpt-4o-mini";
	snprintf(url, sizeof(url), "%s/v1", s.url);
	o.base_url = url;
	o.api_key = KEY;
	o.max_retries = -1;
	o.context_limit = 4096 + 4000 + 3000;
	o.idle_timeout_ms = 20000;
	k.wait_sql = "SELECT count(*) > 0 FROM mnemo.compaction_claims WHERE session_id = 'hard-lost'";
	k.delay_ms = 300;
	start_killer(&th, &k);
	t0 = now_ms();
	rc = mnemo_session_send(st, "hard-lost", &o, "go", NULL, 0, NULL, NULL, &t);
	pthread_join(th, NULL);
	is_code(st, rc, MNEMO_ERR_CONNECTION, "hard threshold, lost during the compaction");
	ok(now_ms() - t0 < 5000, "hard threshold: within 5 s (%lld ms)", (long long) (now_ms() - t0));
	ok(t == NULL, "hard threshold: no turn");
	mnemo_turn_free(t);
	reconnect(st, "hard threshold");
	ok(sql_true("SELECT count(*) = 25 FROM mnemo.messages WHERE session_id = 'hard-lost'") &&
	   sql_true("SELECT count(*) = 0 FROM mnemo.summary_nodes WHERE session_id = 'hard-lost'"),
	   "hard threshold: the user turn is stored, no summary");
	server_stop(&s);
}

/* ---- a map's workers ---------------------------------------------------- */

/*
 * Every backend of the run (the caller's and its workers') ended while the
 * workers wait on the model: the run fails with CONNECTION at once, not
 * after the items, and the items go back (in flight under their lease, or
 * pending), none recorded.
 */
static void
test_map(mnemo_store *st)
{
	server		s;
	char		url[96];
	mnemo_map_options mo = MNEMO_MAP_OPTIONS_INIT;
	mnemo_map_run_stats stats = {0};
	mnemo_map_status ms = {0};
	char	   *map_id = NULL;
	killer		k = {0};
	pthread_t	th;
	int64_t		t0;
	int			rc;

	new_session(st, "map-lost");
	server_start(&s, "reply repeat=forever\n  text \"out\"\n  stall at=1 seconds=1 then=continue\n");
	snprintf(url, sizeof(url), "%s/v1", s.url);
	mo.turn.provider = "openai";
	mo.turn.model = "gpt-map";
	mo.turn.base_url = url;
	mo.turn.api_key = KEY;
	mo.concurrency = 3;
	if (mnemo_map_create(st, "map-lost", "Say {{ item }}", "[1,2,3,4,5,6,7,8,9]", &mo, &map_id) != MNEMO_OK)
		bail_out("mnemo_map_create: %s", mnemo_errmsg(st));
	/* the caller and its three workers */
	k.wait_sql = "SELECT count(*) >= 4 FROM pg_stat_activity WHERE application_name = 'mnemo_victim'";
	k.delay_ms = 100;
	start_killer(&th, &k);
	t0 = now_ms();
	rc = mnemo_map_run(st, "map-lost", map_id, &mo, &stats);
	pthread_join(th, NULL);
	is_code(st, rc, MNEMO_ERR_CONNECTION, "map run with its connections lost");
	ok(now_ms() - t0 < 5000, "map run: within 5 s (%lld ms)", (long long) (now_ms() - t0));
	server_stop(&s);
	reconnect(st, "map");
	rc = mnemo_map_get_status(st, "map-lost", map_id, &ms);
	ok(rc == MNEMO_OK && ms.items == 9 && ms.done + ms.failed == stats.done + stats.failed &&
	   ms.done + ms.failed + ms.in_flight + ms.pending == 9,
	   "map run: each item recorded once or still to do (done %d, failed %d, in flight %d, pending %d)",
	   ms.done, ms.failed, ms.in_flight, ms.pending);
	free(map_id);
}

int
main(void)
{
	mnemo_store *st;

	if (mnemo_global_init() != MNEMO_OK)
		bail_out("mnemo_global_init");
	st = open_store(VICTIM);

	test_idle_crash(st);
	test_turns(st);
	test_compaction(st);
	test_background(st);
	test_hard_threshold(st);
	test_map(st);

	mnemo_store_close(st);
	mnemo_global_cleanup();
	return tap_done();
}
