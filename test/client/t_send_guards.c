/*
 * t_send_guards.c
 *		What a chat turn refuses before it writes anything, and what it
 *		sends: options that cannot make a request (tools that are not an
 *		array of definitions, a threshold or a price that is not a number),
 *		a call back into the handle from the turn's part callback, a key
 *		that would add a header, a base URL of another protocol; the
 *		User-Agent it sends.
 *
 * Needs MNEMO_PROVIDER_SERVER (test/client/run.sh builds and exports it)
 * and runs in a fresh database of its own (PGDATABASE).
 */
#define _POSIX_C_SOURCE 200809L

#include <json-c/json.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mnemo.h"
#include "tap.h"
#include "helpers.h"

#define KEY "sk-test-secret-4242"

#include "provider.h"
#include "send_helpers.h"

/* The number of messages of sid. */
static int
count_messages(mnemo_store *st, const char *sid)
{
	mnemo_messages *m = messages(st, sid);
	int			n = (int) m->count;

	mnemo_messages_free(m);
	return n;
}

/* The number of requests the server saw. */
static int
count_requests(const server *s)
{
	int			n;
	json_object **log = log_read(s, &n);

	log_free(log, n);
	return n;
}

/* Options refused before the first commit: nothing stored, nothing sent. */
static void
test_bad_options(mnemo_store *st)
{
	static const mnemo_price nan_price[] = {{"gpt-4o-mini", NAN, 1, 0, 0}};
	static const mnemo_price neg_price[] = {{"gpt-4o-mini", 1, -2, 0, 0}};
	static const struct
	{
		const char *label;
		const char *tools;
		double		soft;
		const mnemo_price *prices;
		size_t		n_prices;
		const char *why;
	}			c[] = {
		{"tools not an array", "{\"x\":1}", 0, NULL, 0, "not a JSON array"},
		{"tools not JSON", "[{\"name\":", 0, NULL, 0, "not a JSON array"},
		{"a tool without a name", "[{\"description\":\"d\"}]", 0, NULL, 0, "has no name"},
		{"a tool's parameters not an object", "[{\"name\":\"a\",\"parameters\":[]}]", 0, NULL, 0,
		"parameters is not a JSON object"},
		{"soft_threshold infinite", NULL, INFINITY, NULL, 0, "soft_threshold"},
		{"soft_threshold NaN", NULL, NAN, NULL, 0, "soft_threshold"},
		{"soft_threshold over 1", NULL, 1.5, NULL, 0, "soft_threshold"},
		{"soft_threshold negative", NULL, -0.5, NULL, 0, "soft_threshold"},
		{"n_prices without prices", NULL, 0, NULL, 2, "prices is NULL"},
		{"a price NaN", NULL, 0, nan_price, 1, "price 0"},
		{"a price negative", NULL, 0, neg_price, 1, "price 0"},
	};
	server		s;
	char		url[96];
	mnemo_turn_options o;
	mnemo_turn *t = NULL;
	int			rc;

	server_start(&s, "reply repeat=forever\n  text \"ok\"\n");
	session(st, "options", "openai", "gpt-4o-mini");
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++)
	{
		options(&o, &s, "openai", url, sizeof(url));
		o.tools = c[i].tools;
		o.soft_threshold = c[i].soft;
		o.prices = c[i].prices;
		o.n_prices = c[i].n_prices;
		rc = mnemo_session_send(st, "options", &o, "hello", NULL, 0, NULL, NULL, &t);
		is_int(rc, MNEMO_ERR_INVALID_ARGUMENT, "%s: INVALID_ARGUMENT (%s)", c[i].label, mnemo_errmsg(st));
		ok(strstr(mnemo_errmsg(st), c[i].why) != NULL, "%s: the message says why", c[i].label);
		ok(t == NULL, "%s: no turn", c[i].label);
		is_int(count_messages(st, "options"), 0, "%s: nothing stored", c[i].label);
	}
	/* a negative count or time is a mistake, not the default that 0 is */
	for (size_t i = 0; i < 6; i++)
	{
		static const char *const names[] = {"context_limit", "max_output_tokens",
			"compaction_output_budget", "connect_timeout_ms", "idle_timeout_ms",
		"doom_loop_threshold"};
		int		   *fields[6];

		options(&o, &s, "openai", url, sizeof(url));
		fields[0] = &o.context_limit;
		fields[1] = &o.max_output_tokens;
		fields[2] = &o.compaction_output_budget;
		fields[3] = &o.connect_timeout_ms;
		fields[4] = &o.idle_timeout_ms;
		fields[5] = &o.doom_loop_threshold;
		*fields[i] = -1;
		rc = mnemo_session_send(st, "options", &o, "hello", NULL, 0, NULL, NULL, &t);
		is_int(rc, MNEMO_ERR_INVALID_ARGUMENT, "%s -1: INVALID_ARGUMENT (%s)", names[i], mnemo_errmsg(st));
		ok(strstr(mnemo_errmsg(st), names[i]) != NULL, "%s -1: the message names it", names[i]);
		is_int(count_messages(st, "options"), 0, "%s -1: nothing stored", names[i]);
	}
	is_int(count_requests(&s), 0, "bad options: no request sent");

	/* the same options, made good, go through */
	options(&o, &s, "openai", url, sizeof(url));
	o.tools = "[{\"name\":\"a\",\"parameters\":{\"type\":\"object\"}}]";
	o.soft_threshold = 1;
	o.prices = neg_price;
	o.n_prices = 0;
	rc = mnemo_session_send(st, "options", &o, "hello", NULL, 0, NULL, NULL, &t);
	is_int(rc, MNEMO_OK, "good options: the turn runs (%s)", mnemo_errmsg(st));
	mnemo_turn_free(t);
	is_int(count_messages(st, "options"), 2, "good options: the user turn and the reply");
	server_stop(&s);
}

typedef struct reentry
{
	const char *sid;
	const mnemo_turn_options *o;
	int			send_rc;
	char		send_msg[256];
	int			read_rc;
	int			new_id_rc;
	int			calls;
} reentry;

/* A part callback that calls back into the handle: refused each time. */
static int
reenter(mnemo_store *st, const mnemo_stream_part *p, void *arg)
{
	reentry    *r = arg;
	mnemo_messages *m = NULL;
	mnemo_turn *t = NULL;

	(void) p;
	if (r->calls++ > 0)
		return 0;
	r->send_rc = mnemo_session_send(st, r->sid, r->o, "nested", NULL, 0, NULL, NULL, &t);
	snprintf(r->send_msg, sizeof(r->send_msg), "%s", mnemo_errmsg(st));
	mnemo_turn_free(t);
	r->read_rc = mnemo_messages_get(st, r->sid, NULL, false, &m);
	mnemo_messages_free(m);
	{
		char		id[MNEMO_ID_MAX + 1];

		r->new_id_rc = mnemo_new_id(st, "part", id);
	}
	return 0;
}

static void
test_reentry(mnemo_store *st)
{
	server		s;
	char		url[96];
	mnemo_turn_options o;
	mnemo_turn *t = NULL;
	reentry		r = {"reentry", &o, 0, "", 0, 0, 0};
	int			rc;

	server_start(&s, "reply\n  text \"one\" \" two\"\nreply\n  text \"nested reply\"\n");
	session(st, "reentry", "openai", "gpt-4o-mini");
	options(&o, &s, "openai", url, sizeof(url));
	rc = mnemo_session_send(st, "reentry", &o, "hello", NULL, 0, reenter, &r, &t);
	is_int(r.send_rc, MNEMO_ERR_INVALID_ARGUMENT, "mnemo_session_send from on_part: INVALID_ARGUMENT");
	ok(strstr(r.send_msg, "callback") != NULL, "... saying why (%s)", r.send_msg);
	is_int(r.read_rc, MNEMO_ERR_INVALID_ARGUMENT, "a read from on_part: refused too");
	is_int(r.new_id_rc, MNEMO_ERR_INVALID_ARGUMENT, "mnemo_new_id from on_part: refused too");
	is_int(rc, MNEMO_OK, "the turn goes on and succeeds (%s)", mnemo_errmsg(st));
	is_int(mnemo_errcode(st), MNEMO_OK, "the refusal is not the turn's error");
	is_str(t ? t->text : NULL, "one two", "the turn's reply");
	ok(r.calls >= 2, "on_part heard every delta (%d)", r.calls);
	mnemo_turn_free(t);
	is_int(count_messages(st, "reentry"), 2, "nothing of the nested call stored");
	is_int(count_requests(&s), 1, "one request");

	/* after the turn the handle is the caller's again */
	rc = mnemo_session_send(st, "reentry", &o, "again", NULL, 0, NULL, NULL, &t);
	is_int(rc, MNEMO_OK, "the next call on the handle works (%s)", mnemo_errmsg(st));
	mnemo_turn_free(t);
	server_stop(&s);
}

/*
 * A key that would add a header, a base URL of another protocol: refused
 * before anything is written or sent, and neither echoed.
 */
static void
test_endpoint(mnemo_store *st)
{
	static const struct
	{
		const char *label;
		const char *provider;
		const char *key;
		const char *base;		/* NULL: the server's */
		const char *env;		/* set to base instead of the options */
		const char *why;
	}			c[] = {
		{"a key with CR LF", "openai", KEY "\r\nX-Injected: 1", NULL, NULL, "control character"},
		{"a key with LF", "anthropic", KEY "\n", NULL, NULL, "control character"},
		{"a key with a tab", "openai", "sk-\tx", NULL, NULL, "control character"},
		{"a file:// base URL", "openai", KEY, "file:///etc/passwd#", NULL, "http:// or https://"},
		{"an ftp:// base URL", "anthropic", KEY, "ftp://127.0.0.1:1", NULL, "http:// or https://"},
		{"a base URL without a scheme", "openai", KEY, "127.0.0.1:1/v1", NULL, "http:// or https://"},
		{"a file:// ANTHROPIC_BASE_URL", "anthropic", KEY, "file:///etc/passwd#", "ANTHROPIC_BASE_URL",
		"http:// or https://"},
	};
	server		s;
	char		url[96];
	mnemo_turn_options o;
	mnemo_turn *t = NULL;
	json_object **log;
	int			n,
				rc;

	server_start(&s, "reply repeat=forever\n  text \"ok\"\n");
	session(st, "endpoint", "openai", "gpt-4o-mini");
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++)
	{
		options(&o, &s, c[i].provider, url, sizeof(url));
		o.api_key = c[i].key;
		o.model = "some-model";
		if (c[i].env != NULL)
		{
			setenv(c[i].env, c[i].base, 1);
			o.base_url = NULL;
		}
		else if (c[i].base != NULL)
			o.base_url = c[i].base;
		rc = mnemo_session_send(st, "endpoint", &o, "hello", NULL, 0, NULL, NULL, &t);
		if (c[i].env != NULL)
			unsetenv(c[i].env);
		is_int(rc, MNEMO_ERR_INVALID_ARGUMENT, "%s: INVALID_ARGUMENT (%s)", c[i].label, mnemo_errmsg(st));
		ok(strstr(mnemo_errmsg(st), c[i].why) != NULL, "%s: the message says why", c[i].label);
		ok(strstr(mnemo_errmsg(st), "sk-") == NULL && strstr(mnemo_errmsg(st), "root:") == NULL &&
		   strstr(mnemo_errmsg(st), "passwd") == NULL, "%s: and echoes neither key, URL nor file",
		   c[i].label);
		is_int(count_messages(st, "endpoint"), 0, "%s: nothing stored", c[i].label);
	}
	log = log_read(&s, &n);
	is_int(n, 0, "refused endpoints: no request sent");
	for (int k = 0; k < n; k++)
		ok(jpath(log[k], "headers.x-injected") == NULL, "no injected header");
	log_free(log, n);
	server_stop(&s);
}

/* The User-Agent names the library's version, as version.h has it. */
static void
test_user_agent(mnemo_store *st)
{
	server		s;
	char		url[96];
	char		want[64];
	mnemo_turn_options o;
	mnemo_turn *t = NULL;
	json_object **log;
	int			n;

	snprintf(want, sizeof(want), "libmnemo/%d.%d.%d", MNEMO_VERSION_MAJOR, MNEMO_VERSION_MINOR,
			 MNEMO_VERSION_PATCH);
	server_start(&s, "reply\n  text \"ok\"\n");
	session(st, "agent", "anthropic", "claude-test");
	options(&o, &s, "anthropic", url, sizeof(url));
	is_int(mnemo_session_send(st, "agent", &o, "hi", NULL, 0, NULL, NULL, &t), MNEMO_OK,
		   "a turn (%s)", mnemo_errmsg(st));
	mnemo_turn_free(t);
	log = log_read(&s, &n);
	is_str(n == 1 ? jstr(log[0], "headers.user-agent") : NULL, want, "the User-Agent is %s", want);
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

	test_bad_options(st);
	test_reentry(st);
	test_endpoint(st);
	test_user_agent(st);

	mnemo_store_close(st);
	mnemo_global_cleanup();
	return tap_done();
}
