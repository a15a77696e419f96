/*
 * t_send_failures.c
 *		Chat turns that do not go well, through the real libcurl path:
 *		mnemo_session_send() against the scripted provider server retrying
 *		after 429s, 5xx and a server restarted mid-turn, failing on errors
 *		of every kind, timing out on a connect that never completes, and
 *		cancelled by its callback or another thread; what is in the database
 *		afterwards.
 *
 * Needs MNEMO_PROVIDER_SERVER (test/client/run.sh builds and exports it)
 * and runs in a fresh database of its own (PGDATABASE).
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <fcntl.h>
#include <arpa/inet.h>
#include <json-c/json.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "mnemo.h"
#include "tap.h"
#include "helpers.h"

#define KEY "sk-test-secret-4242"

#include "provider.h"
#include "send_helpers.h"

/* ---- the scenarios --------------------------------------------------------- */

typedef struct restarter
{
	server	   *s;
	const char *script;
	int			port;
} restarter;

/* Start the server on the port the turn is refused on, 200 ms in: during
 * the first retry's wait (0.5 s and more). */
static void *
restart_thread(void *arg)
{
	restarter  *r = arg;

	sleep_ms(200);
	server_start_on(r->s, r->script, r->port);
	return NULL;
}

static void
test_retries(mnemo_store *st)
{
	server		s;
	char		url[96];
	mnemo_turn_options o;
	mnemo_turn *t = NULL;
	json_object **log;
	int			n,
				rc;
	int64_t		t0,
				t1;
	mnemo_messages *m;
	char	   *raw;

	session(st, "retry", "openai", "gpt-4o-mini");

	/* 429 with retry-after-ms (and retry-after, which it overrides) */
	server_start(&s, "reply\n  error 429 retry_after=1 retry_after_ms=400\nreply\n  text \"ok after the retry\"\n");
	options(&o, &s, "openai", url, sizeof(url));
	rc = mnemo_session_send(st, "retry", &o, "one", NULL, 0, NULL, NULL, &t);
	is_int(rc, MNEMO_OK, "429: retried and succeeded (%s)", mnemo_errmsg(st));
	is_str(t ? t->text : NULL, "ok after the retry", "429: the second reply");
	mnemo_turn_free(t);
	t = NULL;
	log = log_read(&s, &n);
	is_int(n, 2, "429: two requests");
	if (n == 2)
	{
		t0 = json_object_get_int64(jpath(log[0], "t_ms"));
		t1 = json_object_get_int64(jpath(log[1], "t_ms"));
		ok(t1 - t0 >= 400 && t1 - t0 < 950, "429: retried after retry-after-ms (%lld ms)", (long long) (t1 - t0));
		is_int(json_object_get_int(jpath(log[0], "status")), 429, "429: the first was refused");
	}
	log_free(log, n);
	m = messages(st, "retry");
	is_int(m->count, 2, "429: the refused attempt left no row");
	mnemo_messages_free(m);
	server_stop(&s);

	/* 500 then success, with the default backoff */
	server_start(&s, "reply\n  error 500\nreply\n  text \"ok after the 500\"\n");
	options(&o, &s, "openai", url, sizeof(url));
	rc = mnemo_session_send(st, "retry", &o, "two", NULL, 0, NULL, NULL, &t);
	is_int(rc, MNEMO_OK, "500: retried and succeeded (%s)", mnemo_errmsg(st));
	is_str(t ? t->text : NULL, "ok after the 500", "500: the second reply");
	mnemo_turn_free(t);
	t = NULL;
	log = log_read(&s, &n);
	is_int(n, 2, "500: two requests");
	log_free(log, n);
	server_stop(&s);

	/* still 429 after the retries */
	server_start(&s, "reply repeat=2\n  error 429 retry_after_ms=50\n");
	options(&o, &s, "openai", url, sizeof(url));
	o.max_retries = 1;
	rc = mnemo_session_send(st, "retry", &o, "three", NULL, 0, NULL, NULL, &t);
	is_int(rc, MNEMO_ERR_RATE_LIMITED, "429 twice, one retry: RATE_LIMITED");
	ok(t == NULL, "429 twice: no turn");
	is_int(mnemo_http_status(st), 429, "429 twice: mnemo_http_status");
	log = log_read(&s, &n);
	is_int(n, 2, "429 twice: two requests");
	log_free(log, n);
	server_stop(&s);

	/* an error object sent with 200 (as some proxies do), for both
	 * dialects: the provider's message, not "the stream ended" */
	for (int anthropic = 0; anthropic <= 1; anthropic++)
	{
		const char *label = anthropic ? "200 JSON error (anthropic)" : "200 JSON error (openai)";

		server_start(&s, "reply\n  error 200 message=\"hidden failure\"\n");
		options(&o, &s, anthropic ? "anthropic" : "openai", url, sizeof(url));
		rc = mnemo_session_send(st, "retry", &o, "json", NULL, 0, NULL, NULL, &t);
		is_int(rc, MNEMO_ERR_HTTP, "%s: HTTP (%s)", label, mnemo_errmsg(st));
		ok(strstr(mnemo_errmsg(st), "hidden failure") != NULL, "%s: the provider's message", label);
		ok(t == NULL, "%s: no turn, as nothing streamed", label);
		log = log_read(&s, &n);
		is_int(n, 1, "%s: not retried", label);
		log_free(log, n);
		server_stop(&s);
	}

	/* insufficient quota is not retried */
	server_start(&s, "reply repeat=3\n  error 429 code=insufficient_quota\n");
	options(&o, &s, "openai", url, sizeof(url));
	rc = mnemo_session_send(st, "retry", &o, "four", NULL, 0, NULL, NULL, &t);
	is_int(rc, MNEMO_ERR_RATE_LIMITED, "429 insufficient_quota: RATE_LIMITED");
	ok(strstr(mnemo_errmsg(st), "quota") != NULL, "429 insufficient_quota: the provider's message (%s)",
	   mnemo_errmsg(st));
	log = log_read(&s, &n);
	is_int(n, 1, "429 insufficient_quota: not retried");
	log_free(log, n);
	server_stop(&s);

	/* a wrong key */
	server_start(&s, "reply\n  text \"never\"\n");
	options(&o, &s, "anthropic", url, sizeof(url));
	o.api_key = "sk-wrong-key-0000";
	o.model = "claude-test";
	rc = mnemo_session_send(st, "retry", &o, "five", NULL, 0, NULL, NULL, &t);
	is_int(rc, MNEMO_ERR_AUTH, "401: AUTH");
	ok(strstr(mnemo_errmsg(st), "sk-wrong-key-0000") == NULL && strstr(mnemo_errmsg(st), "401") != NULL,
	   "401: the message names the status, not the key (%s)", mnemo_errmsg(st));
	is_int(mnemo_http_status(st), 401, "401: mnemo_http_status");
	m = messages(st, "retry");
	{
		const mnemo_message *u = m->count >= 2 ? &m->items[m->count - 2] : NULL;
		const mnemo_message *a = last_message(m);

		ok(u != NULL && strcmp(u->role, "user") == 0 && u->n_parts == 1 &&
		   strcmp(u->parts[0].text, "five") == 0,
		   "401: the user turn is stored");
		ok(a != NULL && strcmp(a->role, "assistant") == 0 && a->n_parts == 0 &&
		   a->finish_reason != NULL && strcmp(a->finish_reason, "error") == 0,
		   "401: the assistant row written before the call is empty, finish reason error (%s)",
		   a && a->finish_reason ? a->finish_reason : "none");
	}
	mnemo_messages_free(m);
	raw = slurp(s.log);
	ok(strstr(raw, "sk-wrong") == NULL, "401: the key is not in the request log");
	free(raw);
	server_stop(&s);

	/* no key at all */
	memset(&o, 0, sizeof(o));
	o.provider = "openai";
	unsetenv("OPENAI_API_KEY");
	rc = mnemo_session_send(st, "retry", &o, "six", NULL, 0, NULL, NULL, &t);
	is_int(rc, MNEMO_ERR_NO_PROVIDER, "no key: NO_PROVIDER");
	m = messages(st, "retry");
	ok(m->count >= 2 && strcmp(last_message(m)->role, "assistant") == 0 &&
	   strcmp(m->items[m->count - 2].parts[0].text, "five") == 0, "no key: nothing written");
	mnemo_messages_free(m);

	/* nothing listening */
	options(&o, &s, "openai", url, sizeof(url));
	o.max_retries = -1;
	rc = mnemo_session_send(st, "retry", &o, "seven", NULL, 0, NULL, NULL, &t);
	is_int(rc, MNEMO_ERR_NETWORK, "no server: NETWORK (%s)", mnemo_errmsg(st));

	/* retry-after as an HTTP-date, two seconds ahead */
	{
		char		date[64];
		char		script[256];
		time_t		when = time(NULL) + 2;

		strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S GMT", gmtime(&when));
		snprintf(script, sizeof(script),
				 "reply\n  error 429\n  header \"retry-after: %s\"\nreply\n  text \"ok after the date\"\n",
				 date);
		server_start(&s, script);
		options(&o, &s, "openai", url, sizeof(url));
		rc = mnemo_session_send(st, "retry", &o, "date", NULL, 0, NULL, NULL, &t);
		is_int(rc, MNEMO_OK, "429 with an HTTP-date retry-after: retried and succeeded (%s)",
			   mnemo_errmsg(st));
		mnemo_turn_free(t);
		t = NULL;
		log = log_read(&s, &n);
		if (n == 2)
		{
			t0 = json_object_get_int64(jpath(log[0], "t_ms"));
			t1 = json_object_get_int64(jpath(log[1], "t_ms"));
			ok(t1 - t0 >= 900 && t1 - t0 < 2600, "429: waited until the date (%lld ms, %s)",
			   (long long) (t1 - t0), date);
		}
		else
			ok(0, "429 with an HTTP-date: two requests (%d)", n);
		log_free(log, n);
		server_stop(&s);
	}

	/* a refused connection is retried: the server comes up during the wait */
	{
		restarter	r;
		pthread_t	th;

		server_start(&s, "reply\n  text \"never asked\"\n");
		r.port = s.port;
		server_stop(&s);
		r.s = &s;
		r.script = "reply\n  text \"ok after the refusal\"\n";
		options(&o, &s, "openai", url, sizeof(url));
		snprintf(url, sizeof(url), "http://127.0.0.1:%d/v1", r.port);
		if (pthread_create(&th, NULL, restart_thread, &r) != 0)
			bail_out("pthread_create");
		rc = mnemo_session_send(st, "retry", &o, "refused", NULL, 0, NULL, NULL, &t);
		pthread_join(th, NULL);
		is_int(rc, MNEMO_OK, "connection refused, then a server: retried and succeeded (%s)",
			   mnemo_errmsg(st));
		is_str(t ? t->text : NULL, "ok after the refusal", "refused: the reply of the retry");
		mnemo_turn_free(t);
		t = NULL;
		log = log_read(&s, &n);
		is_int(n, 1, "refused: the server saw one request");
		log_free(log, n);
		server_stop(&s);
	}
}
static void *
cancel_later(void *arg)
{
	sleep_ms(1200);
	mnemo_turn_cancel(arg);
	return NULL;
}

/*
 * A retry-after too large for an int64_t of ms (the conversion from double
 * was undefined, and on x86-64 gave a negative wait, so the turn retried at
 * once): capped at 60 s like any other, so the turn is still waiting when
 * it is cancelled 1.2 s in.
 */
static void
test_huge_retry_after(mnemo_store *st)
{
	static const char *const headers[] = {"retry-after: 1e300", "retry-after-ms: 1e30",
	"retry-after: inf"};

	session(st, "huge-wait", "openai", "gpt-4o-mini");
	for (size_t i = 0; i < sizeof(headers) / sizeof(headers[0]); i++)
	{
		server		s;
		char		url[96];
		char		script[256];
		mnemo_turn_options o;
		mnemo_turn *t = NULL;
		pthread_t	th;
		json_object **log;
		int64_t		t0;
		int			n,
					rc;

		snprintf(script, sizeof(script), "reply\n  error 429\n  header \"%s\"\nreply\n  text \"too soon\"\n",
				 headers[i]);
		server_start(&s, script);
		options(&o, &s, "openai", url, sizeof(url));
		o.max_retries = 1;
		t0 = now_ms();
		if (pthread_create(&th, NULL, cancel_later, st) != 0)
			bail_out("pthread_create");
		rc = mnemo_session_send(st, "huge-wait", &o, "wait", NULL, 0, NULL, NULL, &t);
		pthread_join(th, NULL);
		is_int(rc, MNEMO_ERR_CANCELLED, "%s: still waiting when cancelled (%s)", headers[i],
			   mnemo_errmsg(st));
		ok(now_ms() - t0 >= 1100 && now_ms() - t0 < 3000, "%s: cancelled during the wait (%lld ms)",
		   headers[i], (long long) (now_ms() - t0));
		log = log_read(&s, &n);
		is_int(n, 1, "%s: not retried at once", headers[i]);
		log_free(log, n);
		mnemo_turn_free(t);
		server_stop(&s);
	}
}

typedef struct failure_case
{
	const char *label;
	const char *script;
	int			idle_ms;
	int			want_rc;
	const char *want_finish;
	int			max_ms;
} failure_case;

static void
test_failures(mnemo_store *st, const char *provider, const char *model)
{
	static const failure_case cases[] = {
		{"mid-stream error", "reply\n  text \"Partial\" \" answer\"\n  mid_error at=4\n", 0,
		MNEMO_ERR_STREAM, "error", 5000},
		/* %d: Anthropic's stream opens with three events before any text */
		{"stall", "reply\n  text \"slow\" \" reply\"\n  stall at=%d seconds=30\n", 500,
		MNEMO_ERR_TIMEOUT, "error", 3000},
		{"drop", "reply\n  text \"cut\" \" off\" \" here\"\n  drop at=4\n", 0,
		MNEMO_ERR_STREAM, "error", 5000},
		{"truncated", "reply\n  text \"cut\" \" short\"\n  truncate at=4\n", 0,
		MNEMO_ERR_STREAM, "error", 5000},
	};
	size_t		i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
	{
		const failure_case *fc = &cases[i];
		server		s;
		char		url[96];
		char		sid[64];
		mnemo_turn_options o;
		mnemo_turn *t = NULL;
		collected	c = {0};
		mnemo_messages *m;
		const mnemo_message *a;
		int64_t		t0;
		int			rc;

		char		script[256];

		snprintf(script, sizeof(script), fc->script, strcmp(provider, "anthropic") == 0 ? 5 : 2);
		server_start(&s, script);
		snprintf(sid, sizeof(sid), "fail-%s-%zu", provider, i);
		session(st, sid, provider, model);
		options(&o, &s, provider, url, sizeof(url));
		o.idle_timeout_ms = fc->idle_ms;
		t0 = now_ms();
		rc = mnemo_session_send(st, sid, &o, "go", NULL, 0, on_part, &c, &t);
		is_int(rc, fc->want_rc, "%s %s: %s (%s)", provider, fc->label, mnemo_strerror(fc->want_rc),
			   mnemo_errmsg(st));
		ok(now_ms() - t0 < fc->max_ms, "%s %s: within %d ms (%lld)", provider, fc->label, fc->max_ms,
		   (long long) (now_ms() - t0));
		c.text[c.len] = '\0';
		ok(t != NULL && c.len > 0 && strcmp(t->text, c.text) == 0,
		   "%s %s: the turn holds what streamed (\"%s\")", provider, fc->label, t ? t->text : "");
		is_str(t ? t->finish_reason : NULL, fc->want_finish, "%s %s: turn finish reason", provider, fc->label);
		m = messages(st, sid);
		a = last_message(m);
		is_str(a->finish_reason, fc->want_finish, "%s %s: stored finish reason", provider, fc->label);
		ok(a->n_parts == 1 && strcmp(a->parts[0].text, c.text) == 0,
		   "%s %s: the streamed text is stored", provider, fc->label);
		{
			mnemo_checkpoints *cps = NULL;

			ok(mnemo_checkpoints_list(st, sid, &cps) == MNEMO_OK && cps->count == 0,
			   "%s %s: a failed turn adds no checkpoint", provider, fc->label);
			mnemo_checkpoints_free(cps);
		}
		mnemo_messages_free(m);
		mnemo_turn_free(t);
		server_stop(&s);
	}
}

typedef struct canceller
{
	mnemo_store *st;
	collected  *c;
} canceller;

static void *
cancel_thread(void *arg)
{
	canceller  *k = arg;
	int64_t		until = now_ms() + 10000;

	/* once the reply has begun (and stalled) */
	while (atomic_load(&k->c->deltas) < 1 && now_ms() < until)
		sleep_ms(10);
	sleep_ms(200);
	mnemo_turn_cancel(k->st);
	return NULL;
}

/* A listener whose accept queue is full: connections hang in SYN_SENT. */
static int
full_listener(int *port, int *fds, int nfds)
{
	struct sockaddr_in a;
	socklen_t	len = sizeof(a);
	int			l = socket(AF_INET, SOCK_STREAM, 0);
	int			i;

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (l < 0 || bind(l, (struct sockaddr *) &a, sizeof(a)) != 0 || listen(l, 0) != 0 ||
		getsockname(l, (struct sockaddr *) &a, &len) != 0)
		bail_out("listener: %s", strerror(errno));
	*port = ntohs(a.sin_port);
	for (i = 0; i < nfds; i++)
	{
		fds[i] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
		connect(fds[i], (struct sockaddr *) &a, sizeof(a));
	}
	sleep_ms(100);
	return l;
}

static void
test_connect_timeout(mnemo_store *st)
{
	mnemo_turn_options o = {0};
	mnemo_turn *t = NULL;
	char		url[64];
	int			fds[4];
	int			port,
				l,
				i,
				rc;
	int64_t		t0;

	l = full_listener(&port, fds, 4);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/v1", port);
	o.provider = "openai";
	o.base_url = url;
	o.api_key = KEY;
	o.model = "gpt-4o-mini";
	o.connect_timeout_ms = 300;
	o.max_retries = -1;
	session(st, "connect", "openai", "gpt-4o-mini");
	t0 = now_ms();
	rc = mnemo_session_send(st, "connect", &o, "anyone?", NULL, 0, NULL, NULL, &t);
	is_int(rc, MNEMO_ERR_TIMEOUT, "connect timeout: TIMEOUT (%s)", mnemo_errmsg(st));
	ok(now_ms() - t0 < 2000, "connect timeout: after about connect_timeout_ms (%lld ms)",
	   (long long) (now_ms() - t0));
	ok(t == NULL, "connect timeout: no turn");
	for (i = 0; i < 4; i++)
		close(fds[i]);
	close(l);
}

static void
test_cancel(mnemo_store *st)
{
	server		s;
	char		url[96];
	mnemo_turn_options o;
	mnemo_turn *t = NULL;
	collected	c = {0};
	canceller	k = {st, &c};
	pthread_t	th;
	int64_t		t0;
	int			rc;
	mnemo_messages *m;

	server_start(&s, "reply\n  text \"wait\" \" for it\"\n  stall at=3 seconds=30\n"
				 "reply\n  text \"a\" \"b\" \"c\" \"d\"\n");
	session(st, "cancel", "openai", "gpt-4o-mini");
	options(&o, &s, "openai", url, sizeof(url));
	pthread_create(&th, NULL, cancel_thread, &k);
	t0 = now_ms();
	rc = mnemo_session_send(st, "cancel", &o, "go", NULL, 0, on_part, &c, &t);
	pthread_join(th, NULL);
	is_int(rc, MNEMO_ERR_CANCELLED, "cancel from another thread: CANCELLED");
	ok(now_ms() - t0 < 1500, "cancel: promptly (%lld ms)", (long long) (now_ms() - t0));
	is_str(t ? t->finish_reason : NULL, "cancelled", "cancel: finish reason cancelled");
	m = messages(st, "cancel");
	is_str(last_message(m)->finish_reason, "cancelled", "cancel: stored");
	mnemo_messages_free(m);
	mnemo_turn_free(t);
	t = NULL;

	/* the part callback stops the turn */
	memset(&c, 0, sizeof(c));
	c.stop_after = 2;
	rc = mnemo_session_send(st, "cancel", &o, "again", NULL, 0, on_part, &c, &t);
	is_int(rc, MNEMO_ERR_CANCELLED, "on_part returning non-zero: CANCELLED");
	is_str(t ? t->text : NULL, "ab", "on_part stop: what streamed until then");
	mnemo_turn_free(t);
	server_stop(&s);
}

/* on_part: end every other backend of the database (the turn's own), once */
static int
end_turn_backend(mnemo_store *st, const mnemo_stream_part *part, void *arg)
{
	int		   *done = arg;

	(void) st;
	(void) part;
	if (!*done)
	{
		free(sql_value("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
					   "WHERE datname = current_database() AND pid <> pg_backend_pid() "
					   "AND backend_type = 'client backend'", NULL));
		*done = 1;
	}
	return 0;
}

/*
 * The database lost while the reply streams: the call fails with the
 * connection's error, and the turn it hands back says so too (finish reason
 * "error"), whatever the provider's stream said.
 */
static void
test_database_lost(mnemo_store *st)
{
	server		s;
	char		url[96];
	mnemo_turn_options o;
	mnemo_turn *t = NULL;
	int			done = 0;
	int			rc;

	/* one text part: written with the turn's last writes, after the stream */
	server_start(&s, "reply\n  text \"only\" \" this\"\n");
	session(st, "lost", "openai", "gpt-4o-mini");
	options(&o, &s, "openai", url, sizeof(url));
	rc = mnemo_session_send(st, "lost", &o, "go", NULL, 0, end_turn_backend, &done, &t);
	ok(rc == MNEMO_ERR_CONNECTION || rc == MNEMO_ERR_NETWORK,
	   "database lost mid-turn: a connection error (%d: %s)", rc, mnemo_errmsg(st));
	ok(t == NULL || (t->finish_reason != NULL && strcmp(t->finish_reason, "error") == 0),
	   "database lost mid-turn: the turn's finish reason is error (%s)",
	   t && t->finish_reason ? t->finish_reason : "no turn");
	mnemo_turn_free(t);
	server_stop(&s);
	if (mnemo_store_reconnect(st) != MNEMO_OK)
		bail_out("reconnect: %s", mnemo_errmsg(st));
}

int
main(void)
{
	mnemo_store *st;

	if (mnemo_global_init() != MNEMO_OK)
		bail_out("mnemo_global_init");
	st = open_store(NULL);

	test_retries(st);
	test_huge_retry_after(st);
	test_failures(st, "openai", "gpt-4o-mini");
	test_failures(st, "anthropic", "claude-test");
	test_connect_timeout(st);
	test_cancel(st);
	test_database_lost(st);

	mnemo_store_close(st);
	mnemo_global_cleanup();
	return tap_done();
}
