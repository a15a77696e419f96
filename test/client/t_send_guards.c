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

int
main(void)
{
	mnemo_store *st;

	if (mnemo_global_init() != MNEMO_OK)
		bail_out("mnemo_global_init");
	st = open_store(NULL);

	test_bad_options(st);

	mnemo_store_close(st);
	mnemo_global_cleanup();
	return tap_done();
}
