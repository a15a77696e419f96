/*
 * t_send.c
 *		Chat turns through the real libcurl path: mnemo_session_send()
 *		against the scripted provider server (test/provider_server, started
 *		here for each scenario with its own script, port file and request
 *		log), and what is in the database afterwards, including after the
 *		sending process is killed with SIGKILL mid-stream.
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
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mnemo.h"
#include "tap.h"
#include "helpers.h"

#define KEY "sk-test-secret-4242"

#include "provider.h"

static double
dabs(double x)
{
	return x < 0 ? -x : x;
}

/* ---- the turn's callback --------------------------------------------------- */

typedef struct collected
{
	char		text[8192];
	size_t		len;
	int			n_text;
	int			n_reasoning;
	int			n_tool;
	char		tool_part[MNEMO_ID_MAX + 1];
	int			stop_after;		/* > 0: return non-zero at that delta */
	atomic_int	deltas;
} collected;

static int
on_part(mnemo_store *st, const mnemo_stream_part *p, void *arg)
{
	collected  *c = arg;

	(void) st;
	if (strcmp(p->type, "text") == 0)
	{
		if (c->len + p->len < sizeof(c->text))
		{
			memcpy(c->text + c->len, p->delta, p->len);
			c->len += p->len;
		}
		c->n_text++;
	}
	else if (strcmp(p->type, "reasoning") == 0)
		c->n_reasoning++;
	else if (strcmp(p->type, "tool") == 0)
	{
		c->n_tool++;
		snprintf(c->tool_part, sizeof(c->tool_part), "%s", p->part_id);
	}
	atomic_fetch_add(&c->deltas, 1);
	return c->stop_after > 0 && atomic_load(&c->deltas) >= c->stop_after;
}

static void
options(mnemo_turn_options *o, const server *s, const char *provider, char *url, size_t urlsize)
{
	memset(o, 0, sizeof(*o));
	o->provider = provider;
	snprintf(url, urlsize, "%s%s", s->url, strcmp(provider, "openai") == 0 ? "/v1" : "");
	o->base_url = url;
	o->api_key = KEY;
}

static void
session(mnemo_store *st, const char *id, const char *provider, const char *model)
{
	mnemo_new_session spec = {0};

	spec.id = id;
	spec.provider_id = provider;
	spec.model_id = model;
	spec.system_prompt = "You are terse.";
	create_session(st, &spec);
}

static mnemo_messages *
messages(mnemo_store *st, const char *sid)
{
	mnemo_messages *m = NULL;

	if (mnemo_messages_get(st, sid, NULL, true, &m) != MNEMO_OK)
		bail_out("messages of %s: %s", sid, mnemo_errmsg(st));
	return m;
}

static const mnemo_message *
last_message(const mnemo_messages *m)
{
	return m->count ? &m->items[m->count - 1] : NULL;
}

/* ---- the scenarios --------------------------------------------------------- */

static int
count_created(mnemo_store *st, const mnemo_event *ev, void *arg)
{
	(void) st;
	(void) ev;
	(*(int *) arg)++;
	return 0;
}

static const mnemo_price prices[] = {
	{"gpt-4o-mini", 2.0, 8.0, 1.0, 0.0},
	{"claude-test", 3.0, 15.0, 0.3, 3.75},
};

static void
test_text(mnemo_store *st, const char *provider, const char *model, const char *chunks)
{
	char		script[1024];
	char		sid[64];
	char		url[96];
	server		s;
	mnemo_turn_options o;
	mnemo_turn *t = NULL;
	collected	c = {0};
	mnemo_messages *m;
	const mnemo_message *a;
	json_object **log;
	json_object *body;
	int			n,
				rc;
	char	   *raw;
	const char *want = "Hello, wörld! Streaming is fun.";
	double		cost;
	bool		anthropic = strcmp(provider, "anthropic") == 0;
	mnemo_new_message msg = {0};
	int			created,
				sub;

	snprintf(script, sizeof(script),
			 "reply\n  text \"Hello, wörld! Streaming is fun.\" pieces=6\n  chunks %s\n"
			 "  usage input=100 output=20 cache_read=10\n", chunks);
	server_start(&s, script);
	snprintf(sid, sizeof(sid), "text-%s", provider);
	session(st, sid, provider, model);
	msg.role = "user";
	append_text_message(st, sid, &msg, "an earlier question");
	msg.role = "assistant";
	append_text_message(st, sid, &msg, "an earlier answer");

	options(&o, &s, provider, url, sizeof(url));
	o.provider = NULL;			/* from the session */
	o.prices = prices;
	o.n_prices = 2;
	created = 0;
	sub = mnemo_event_subscribe(st, MNEMO_EVENT_MESSAGE_CREATED, count_created, &created);
	rc = mnemo_session_send(st, sid, &o, "Say hello", NULL, 0, on_part, &c, &t);
	mnemo_event_unsubscribe(st, sub);
	is_int(rc, MNEMO_OK, "%s, chunks %s: send succeeds (%s)", provider, chunks, mnemo_errmsg(st));
	if (t == NULL)
		bail_out("no turn");
	is_str(t->text, want, "%s: the turn's text is the reply", provider);
	c.text[c.len] = '\0';
	is_str(c.text, want, "%s: the on_part deltas concatenate to the reply", provider);
	ok(c.n_text >= 2, "%s: the reply reached on_part in pieces (%d)", provider, c.n_text);
	is_str(t->finish_reason, "stop", "%s: finish reason stop", provider);
	is_int(t->tokens.output, 20, "%s: output tokens", provider);
	is_int(t->tokens.cache_read, 10, "%s: cache-read tokens", provider);
	/* OpenAI's prompt_tokens include the cached ones, Anthropic's do not */
	is_int(t->tokens.input, anthropic ? 100 : 90, "%s: input tokens, cache reads apart", provider);
	cost = anthropic ? (100 * 3.0 + 20 * 15.0 + 10 * 0.3) / 1e6 : (90 * 2.0 + 20 * 8.0 + 10 * 1.0) / 1e6;
	ok(dabs(t->cost - cost) < 1e-12, "%s: cost from the price table (%g)", provider, t->cost);
	is_int(mnemo_http_status(st), 200, "%s: mnemo_http_status", provider);
	is_int(created, 2, "%s: MESSAGE_CREATED for the user and the assistant message", provider);
	ok(t->user_message_id[0] && t->message_id[0] && !t->compaction_triggered && !t->doom_loop,
	   "%s: the turn names both messages, no compaction, no doom loop", provider);

	m = messages(st, sid);
	a = last_message(m);
	is_int(m->count, 4, "%s: the earlier turns, the user message and the reply are stored", provider);
	is_str(m->items[2].role, "user", "%s: the user message", provider);
	is_str(m->items[2].n_parts ? m->items[2].parts[0].text : NULL, "Say hello", "%s: its text part", provider);
	is_str(a->id, t->message_id, "%s: the assistant row is the turn's", provider);
	is_str(a->finish_reason, "stop", "%s: stored finish reason", provider);
	ok(a->tokens.output == 20 && a->tokens.cache_read == 10 && dabs(a->cost - cost) < 1e-12,
	   "%s: stored usage and cost", provider);
	is_int(a->n_parts, 1, "%s: one part", provider);
	is_str(a->n_parts ? a->parts[0].text : NULL, want, "%s: the text part holds the reply", provider);
	is_str(a->model_id, model, "%s: the model is recorded", provider);
	{
		mnemo_checkpoints *cps = NULL;
		char		label[48];

		snprintf(label, sizeof(label), "turn-%lld", (long long) a->seq);
		is_int(mnemo_checkpoints_list(st, sid, &cps), MNEMO_OK, "%s: list the checkpoints", provider);
		ok(cps != NULL && cps->count == 1 && strcmp(cps->items[0].label, label) == 0 &&
		   cps->items[0].is_auto && cps->items[0].seq == a->seq,
		   "%s: the completed turn added one auto checkpoint, %s, at its seq", provider, label);
		mnemo_checkpoints_free(cps);
	}
	mnemo_messages_free(m);
	mnemo_turn_free(t);

	log = log_read(&s, &n);
	is_int(n, 1, "%s: one request", provider);
	body = n ? jpath(log[0], "body") : NULL;
	if (anthropic)
	{
		is_str(jstr(body, "system"), "You are terse.", "anthropic: the system prompt at the top");
		is_str(jstr(body, "messages.0.content"), "an earlier question", "anthropic: the earlier user turn");
		ok(strstr(json_object_to_json_string(jpath(body, "messages.1")), "an earlier answer") != NULL,
		   "anthropic: the earlier answer");
		is_str(jstr(log[0], "headers.anthropic-version"), "2023-06-01", "anthropic: anthropic-version");
		is_str(jstr(log[0], "auth"), "x-api-key", "anthropic: the key in x-api-key");
	}
	else
	{
		is_str(jstr(body, "messages.0.role"), "system", "openai: the system prompt first");
		is_str(jstr(body, "messages.0.content"), "You are terse.", "openai: its text");
		is_str(jstr(body, "messages.1.content"), "an earlier question", "openai: the earlier user turn");
		is_str(jstr(body, "messages.2.content"), "an earlier answer", "openai: the earlier answer");
		is_str(jstr(log[0], "auth"), "bearer", "openai: the key as a bearer token");
	}
	ok(strstr(json_object_to_json_string(jpath(body, "messages")), "Say hello") != NULL,
	   "%s: the new user turn is sent", provider);
	is_str(jstr(log[0], "key"), "match", "%s: the key reached the server", provider);
	ok(json_object_get_boolean(jpath(log[0], "stream")), "%s: a streamed request", provider);
	log_free(log, n);
	raw = slurp(s.log);
	ok(strstr(raw, KEY) == NULL, "%s: the key is not in the request log", provider);
	free(raw);
	server_stop(&s);
}

/* The context sent respects the budget: the oldest message is left out. */
static void
test_budget(mnemo_store *st)
{
	server		s;
	char		url[96];
	mnemo_turn_options o;
	mnemo_turn *t = NULL;
	mnemo_new_message msg = {0};
	char		big[801];
	json_object **log;
	int			n;
	const char *sent;

	server_start(&s, "reply\n  text \"fine\"\n");
	session(st, "budget", "openai", "gpt-4o-mini");
	memset(big, 'x', 800);
	big[800] = '\0';
	msg.role = "user";
	append_text_message(st, "budget", &msg, big);	/* 200 tokens */
	msg.role = "assistant";
	append_text_message(st, "budget", &msg, "a recent answer");
	options(&o, &s, "openai", url, sizeof(url));
	/* usable 150 - the system prompt's 3 tokens */
	o.context_limit = 4096 + 4000 + 150;
	is_int(mnemo_session_send(st, "budget", &o, "and now?", NULL, 0, NULL, NULL, &t), MNEMO_OK,
		   "budget: send succeeds (%s)", mnemo_errmsg(st));
	log = log_read(&s, &n);
	sent = n ? json_object_to_json_string(jpath(log[0], "body.messages")) : "";
	ok(strstr(sent, "xxxxxxxx") == NULL, "budget: the oldest message, over the budget, is not sent");
	ok(strstr(sent, "a recent answer") && strstr(sent, "and now?"), "budget: the recent ones are");
	ok(t && t->compaction_triggered, "budget: over the soft threshold, compaction is triggered");
	log_free(log, n);
	mnemo_turn_free(t);
	server_stop(&s);
}

static void
test_tools(mnemo_store *st, const char *provider, const char *model)
{
	server		s;
	char		url[96];
	char		sid[64];
	mnemo_turn_options o;
	mnemo_turn *t = NULL;
	collected	c = {0};
	json_object **log;
	json_object *in;
	int			n;
	bool		anthropic = strcmp(provider, "anthropic") == 0;
	char		call_id[128] = "";
	char		part_id[MNEMO_ID_MAX + 1] = "";
	const char *sent;

	server_start(&s, "reply\n  text \"Let me look.\"\n"
				 "  tool bash \"{\\\"cmd\\\":\\\"ls -la\\\"}\" split=0,3,5\n"
				 "reply\n  text \"Two files.\"\n");
	snprintf(sid, sizeof(sid), "tools-%s", provider);
	session(st, sid, provider, model);
	options(&o, &s, provider, url, sizeof(url));
	o.tools = "[{\"name\":\"bash\",\"description\":\"run a command\",\"parameters\":"
		"{\"type\":\"object\",\"properties\":{\"cmd\":{\"type\":\"string\"}}}}]";
	is_int(mnemo_session_send(st, sid, &o, "list files", NULL, 0, on_part, &c, &t), MNEMO_OK,
		   "%s tools: send succeeds (%s)", provider, mnemo_errmsg(st));
	if (t == NULL)
		bail_out("no turn");
	is_str(t->finish_reason, "tool_calls", "%s tools: finish reason tool_calls", provider);
	is_int(t->n_tool_calls, 1, "%s tools: one tool call", provider);
	if (t->n_tool_calls == 1)
	{
		is_str(t->tool_calls[0].name, "bash", "%s tools: its name", provider);
		in = json_tokener_parse(t->tool_calls[0].input);
		is_str(jstr(in, "cmd"), "ls -la", "%s tools: its input, assembled from fragments", provider);
		json_object_put(in);
		snprintf(call_id, sizeof(call_id), "%s", t->tool_calls[0].call_id);
		snprintf(part_id, sizeof(part_id), "%s", t->tool_calls[0].part_id);
	}
	is_int(c.n_tool, 1, "%s tools: on_part got the call", provider);
	is_str(c.tool_part, part_id, "%s tools: with its stored part", provider);
	is_str(t->text, "Let me look.", "%s tools: the text before the call", provider);
	mnemo_turn_free(t);
	t = NULL;

	{
		mnemo_messages *m = messages(st, sid);
		const mnemo_message *a = last_message(m);

		is_int(a->n_parts, 2, "%s tools: a text part and a tool part", provider);
		if (a->n_parts == 2)
		{
			is_str(a->parts[0].type, "text", "%s tools: text first", provider);
			is_str(a->parts[1].tool_state, "pending", "%s tools: the tool part is pending", provider);
			is_str(a->parts[1].tool_call_id, call_id, "%s tools: with the call id", provider);
		}
		mnemo_messages_free(m);
	}

	is_int(mnemo_session_tool_start(st, sid, part_id), MNEMO_OK, "%s tools: tool_start", provider);
	is_int(mnemo_session_tool_result(st, sid, part_id, "a.txt\nb.txt", false), MNEMO_OK,
		   "%s tools: tool_result", provider);
	{
		mnemo_messages *m = messages(st, sid);
		const mnemo_message *a = last_message(m);
		const mnemo_part *p = a->n_parts == 2 ? &a->parts[1] : NULL;

		ok(p && strcmp(p->tool_state, "completed") == 0 && p->started_at > 0 &&
		   p->completed_at >= p->started_at && p->tool_output && strcmp(p->tool_output, "a.txt\nb.txt") == 0,
		   "%s tools: the part is completed, with its output and times", provider);
		mnemo_messages_free(m);
	}

	/* the loop goes on without a new user message */
	is_int(mnemo_session_send(st, sid, &o, NULL, NULL, 0, NULL, NULL, &t), MNEMO_OK,
		   "%s tools: the next send, with no user text (%s)", provider, mnemo_errmsg(st));
	is_str(t ? t->text : NULL, "Two files.", "%s tools: the answer", provider);
	mnemo_turn_free(t);
	log = log_read(&s, &n);
	is_int(n, 2, "%s tools: two requests", provider);
	sent = n == 2 ? json_object_to_json_string(jpath(log[1], "body.messages")) : "";
	if (anthropic)
	{
		is_str(jstr(log[1], "body.messages.1.content.1.type"), "tool_use", "anthropic: the call as tool_use");
		is_str(jstr(log[1], "body.messages.1.content.1.id"), call_id, "anthropic: with its id");
		is_str(jstr(log[1], "body.messages.1.content.1.input.cmd"), "ls -la", "anthropic: and its input");
		is_str(jstr(log[1], "body.messages.2.content.0.type"), "tool_result", "anthropic: the result as tool_result");
		is_str(jstr(log[1], "body.messages.2.content.0.tool_use_id"), call_id, "anthropic: for the call");
		ok(strstr(sent, "a.txt\\nb.txt") != NULL, "anthropic: with the output");
		ok(strstr(json_object_to_json_string(jpath(log[1], "body.tools")), "input_schema") != NULL,
		   "anthropic: the tools as Anthropic's");
	}
	else
	{
		is_str(jstr(log[1], "body.messages.2.tool_calls.0.id"), call_id, "openai: the call as tool_calls");
		is_str(jstr(log[1], "body.messages.2.tool_calls.0.function.name"), "bash", "openai: with its name");
		is_str(jstr(log[1], "body.messages.3.role"), "tool", "openai: the result as role tool");
		is_str(jstr(log[1], "body.messages.3.tool_call_id"), call_id, "openai: for the call");
		is_str(jstr(log[1], "body.messages.3.content"), "a.txt\nb.txt", "openai: with the output");
		is_str(jstr(log[1], "body.tools.0.type"), "function", "openai: the tools as functions");
	}
	log_free(log, n);
	server_stop(&s);
}

/* Anthropic's thinking: a reasoning part with its signature, sent back with
 * the tool turn it belongs to. */
static void
test_thinking(mnemo_store *st)
{
	server		s;
	char		url[96];
	mnemo_turn_options o;
	mnemo_turn *t = NULL;
	collected	c = {0};
	mnemo_messages *m;
	const mnemo_message *a;
	json_object **log;
	json_object *content;
	int			n;

	server_start(&s, "reply\n  thinking \"Let me think.\" pieces=2 signature=\"sig-123\"\n"
				 "  tool bash \"{\\\"cmd\\\":\\\"pwd\\\"}\"\n"
				 "reply\n  text \"Done.\"\n");
	session(st, "thinking", "anthropic", "claude-test");
	options(&o, &s, "anthropic", url, sizeof(url));
	is_int(mnemo_session_send(st, "thinking", &o, "where am I?", NULL, 0, on_part, &c, &t), MNEMO_OK,
		   "thinking: send succeeds (%s)", mnemo_errmsg(st));
	ok(c.n_reasoning >= 1, "thinking: reasoning deltas reach on_part (%d)", c.n_reasoning);
	is_str(t ? t->text : NULL, "", "thinking: no text in the reply");
	m = messages(st, "thinking");
	a = last_message(m);
	is_int(a->n_parts, 2, "thinking: a reasoning part and a tool part");
	if (a->n_parts == 2)
	{
		is_str(a->parts[0].type, "reasoning", "thinking: the reasoning part first");
		is_str(a->parts[0].text, "Let me think.", "thinking: its text");
		content = json_tokener_parse(a->parts[0].content);
		is_str(jstr(content, "signature"), "sig-123", "thinking: the signature kept in its content");
		json_object_put(content);
	}
	if (t != NULL && t->n_tool_calls == 1)
		mnemo_session_tool_result(st, "thinking", t->tool_calls[0].part_id, "/home", false);
	mnemo_messages_free(m);
	mnemo_turn_free(t);
	t = NULL;
	is_int(mnemo_session_send(st, "thinking", &o, NULL, NULL, 0, NULL, NULL, &t), MNEMO_OK,
		   "thinking: the next send");
	mnemo_turn_free(t);
	log = log_read(&s, &n);
	is_str(n == 2 ? jstr(log[1], "body.messages.1.content.0.type") : NULL, "thinking",
		   "thinking: sent back as a thinking block");
	is_str(n == 2 ? jstr(log[1], "body.messages.1.content.0.signature") : NULL, "sig-123",
		   "thinking: with its signature");
	is_str(n == 2 ? jstr(log[1], "body.messages.1.content.0.thinking") : NULL, "Let me think.",
		   "thinking: and its text");
	log_free(log, n);
	server_stop(&s);
}

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

/* U+0000 in a reply: on_part gets it, the store keeps U+FFFD there and
 * the rest of the text after it. */
static void
test_nul(mnemo_store *st)
{
	server		s;
	char		url[96];
	mnemo_turn_options o;
	mnemo_turn *t = NULL;
	collected	c = {0};
	mnemo_messages *m;
	int			rc;

	session(st, "nul", "openai", "gpt-4o-mini");
	server_start(&s, "reply\n  text \"before\\u0000after\" \" end\"\n");
	options(&o, &s, "openai", url, sizeof(url));
	rc = mnemo_session_send(st, "nul", &o, "go", NULL, 0, on_part, &c, &t);
	is_int(rc, MNEMO_OK, "a reply holding U+0000 (%s)", mnemo_errmsg(st));
	ok(c.len == 16 && memcmp(c.text, "before\0after end", 16) == 0, "on_part got the NUL as it came");
	is_str(t ? t->text : NULL, "before\xEF\xBF\xBD" "after end", "the turn's text has U+FFFD for it");
	m = messages(st, "nul");
	is_str(last_message(m)->n_parts == 1 ? last_message(m)->parts[0].text : NULL,
		   "before\xEF\xBF\xBD" "after end", "the stored part keeps the text after it");
	mnemo_messages_free(m);
	mnemo_turn_free(t);
	server_stop(&s);
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

static int
count_event(mnemo_store *st, const mnemo_event *ev, void *arg)
{
	(void) st;
	(void) ev;
	(*(int *) arg)++;
	return 0;
}

static void
test_doom_loop(mnemo_store *st)
{
	server		s;
	char		url[96];
	mnemo_turn_options o;
	mnemo_turn *t = NULL;
	int			events = 0;
	int			sub,
				i;
	bool		flags[3] = {0};

	server_start(&s, "reply repeat=3\n  tool read \"{\\\"path\\\":\\\"a.txt\\\"}\"\n");
	session(st, "doom", "openai", "gpt-4o-mini");
	options(&o, &s, "openai", url, sizeof(url));
	sub = mnemo_event_subscribe(st, MNEMO_EVENT_DOOM_LOOP_DETECTED, count_event, &events);
	for (i = 0; i < 3; i++)
	{
		if (mnemo_session_send(st, "doom", &o, i == 0 ? "read it" : NULL, NULL, 0, NULL, NULL, &t) != MNEMO_OK ||
			t == NULL || t->n_tool_calls != 1)
			bail_out("doom loop turn %d: %s", i, mnemo_errmsg(st));
		flags[i] = t->doom_loop;
		mnemo_session_tool_result(st, "doom", t->tool_calls[0].part_id, "same", false);
		mnemo_turn_free(t);
		t = NULL;
	}
	ok(!flags[0] && !flags[1], "doom loop: not after one or two identical calls");
	ok(flags[2], "doom loop: the third identical call in a row is flagged");
	is_int(events, 1, "doom loop: DOOM_LOOP_DETECTED published once");
	mnemo_event_unsubscribe(st, sub);
	server_stop(&s);
}

typedef struct hook_log
{
	int			blocking;
	int			background;
	int			requests_at_blocking;	/* requests made when the hook ran */
	int			fail;
	const server *s;
} hook_log;

static int
hook(mnemo_store *st, const char *sid, bool blocking, void *arg)
{
	hook_log   *h = arg;
	json_object **log;
	int			n;

	(void) st;
	(void) sid;
	if (blocking)
	{
		h->blocking++;
		log = log_read(h->s, &n);
		h->requests_at_blocking = n;
		log_free(log, n);
	}
	else
		h->background++;
	return h->fail;
}

static void
test_thresholds(mnemo_store *st)
{
	server		s;
	char		url[96];
	mnemo_turn_options o;
	mnemo_turn *t = NULL;
	hook_log	h = {0};
	char		text[1201];
	mnemo_new_message msg = {0};
	int			rc;
	int			triggered = 0;
	int			sub;
	json_object **log;
	int			n;

	server_start(&s, "reply repeat=4\n  text \"ok\"\n");
	h.s = &s;
	options(&o, &s, "openai", url, sizeof(url));
	o.context_limit = 4096 + 4000 + 203;	/* 200 tokens for the context */
	o.compact = hook;
	o.compact_arg = &h;
	sub = mnemo_event_subscribe(st, MNEMO_EVENT_COMPACTION_TRIGGERED, count_event, &triggered);

	/* small: neither threshold */
	session(st, "small", "openai", "gpt-4o-mini");
	rc = mnemo_session_send(st, "small", &o, "hi", NULL, 0, NULL, NULL, &t);
	ok(rc == MNEMO_OK && t && !t->compaction_triggered && h.blocking == 0 && h.background == 0,
	   "under both thresholds: no hook, no compaction");
	mnemo_turn_free(t);
	t = NULL;

	/* 130 tokens: over the soft threshold (120), under the hard one */
	session(st, "soft", "openai", "gpt-4o-mini");
	memset(text, 'a', 520);
	text[520] = '\0';
	msg.role = "user";
	append_text_message(st, "soft", &msg, text);
	rc = mnemo_session_send(st, "soft", &o, "hi", NULL, 0, NULL, NULL, &t);
	ok(rc == MNEMO_OK && t && t->compaction_triggered, "soft threshold: compaction_triggered");
	ok(h.blocking == 0 && h.background == 1, "soft threshold: the hook ran once, not blocking");
	is_int(triggered, 1, "soft threshold: COMPACTION_TRIGGERED published");
	mnemo_turn_free(t);
	t = NULL;

	/* 300 tokens: over the hard threshold */
	session(st, "hard", "openai", "gpt-4o-mini");
	memset(text, 'b', 1200);
	text[1200] = '\0';
	append_text_message(st, "hard", &msg, text);
	h.background = 0;
	rc = mnemo_session_send(st, "hard", &o, "hi", NULL, 0, NULL, NULL, &t);
	is_int(rc, MNEMO_OK, "hard threshold: the turn goes on (%s)", mnemo_errmsg(st));
	is_int(h.blocking, 1, "hard threshold: the hook ran blocking");
	is_int(h.requests_at_blocking, 2, "hard threshold: before this turn's request");
	mnemo_turn_free(t);
	t = NULL;

	/* a blocking hook that fails fails the turn before the provider */
	h.fail = 1;
	rc = mnemo_session_send(st, "hard", &o, "again", NULL, 0, NULL, NULL, &t);
	ok(rc != MNEMO_OK && t == NULL, "a failing blocking hook fails the turn (%s)", mnemo_errmsg(st));
	log = log_read(&s, &n);
	is_int(n, 3, "a failing blocking hook: no request made");
	log_free(log, n);
	mnemo_event_unsubscribe(st, sub);
	server_stop(&s);
}

/* ---- kill -9 mid-stream ------------------------------------------------ */

static void
test_kill(mnemo_store *st)
{
	server		s;
	char		url[96];
	mnemo_turn_options o;
	mnemo_turn *t = NULL;
	mnemo_session *sess = NULL;
	mnemo_messages *m;
	pid_t		child;
	int64_t		until;
	int			status;
	bool		row = false,
				prompt_kept = true;
	json_object **log;
	int			n;

	server_start(&s, "reply\n  text \"never\" \" finished\"\n  stall at=3 seconds=60\n"
				 "reply\n  text \"resumed\"\n");
	session(st, "killed", "openai", "gpt-4o-mini");
	options(&o, &s, "openai", url, sizeof(url));
	fflush(stdout);
	if ((child = fork()) < 0)
		bail_out("fork: %s", strerror(errno));
	if (child == 0)
	{
		mnemo_store *cst = mnemo_store_open(NULL);

		mnemo_session_send(cst, "killed", &o, "the turn before the crash", NULL, 0, NULL, NULL, NULL);
		_exit(0);
	}
	/* until the assistant row is there: the reply is streaming */
	for (until = now_ms() + 10000; !row && now_ms() < until; sleep_ms(20))
	{
		m = messages(st, "killed");
		row = m->count == 2;
		mnemo_messages_free(m);
	}
	ok(row, "kill -9: the child is streaming");
	sleep_ms(200);
	is_int(mnemo_session_load(st, "killed", &sess), MNEMO_OK, "kill -9: load while the turn is alive");
	mnemo_session_free(sess);
	sess = NULL;
	m = messages(st, "killed");
	ok(m->count == 2 && m->items[1].finish_reason == NULL, "a live turn is not marked interrupted");
	mnemo_messages_free(m);

	kill(child, SIGKILL);
	waitpid(child, &status, 0);
	ok(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "kill -9: the child was killed");

	/* the server notices the dead backend at once; allow it a moment */
	for (until = now_ms() + 5000; now_ms() < until; sleep_ms(50))
	{
		bool		marked;

		if (mnemo_session_load(st, "killed", &sess) != MNEMO_OK)
			bail_out("load: %s", mnemo_errmsg(st));
		prompt_kept = prompt_kept && sess->system_prompt &&
			strcmp(sess->system_prompt, "You are terse.") == 0;
		mnemo_session_free(sess);
		sess = NULL;
		m = messages(st, "killed");
		marked = m->count == 2 && m->items[1].finish_reason &&
			strcmp(m->items[1].finish_reason, "interrupted") == 0;
		mnemo_messages_free(m);
		if (marked)
			break;
	}
	ok(prompt_kept, "kill -9: load restores the system prompt");
	m = messages(st, "killed");
	is_str(m->count == 2 ? m->items[0].parts[0].text : NULL, "the turn before the crash",
		   "kill -9: the user turn is stored");
	is_str(m->count == 2 ? m->items[1].finish_reason : NULL, "interrupted",
		   "kill -9: load marks the dead turn interrupted");
	mnemo_messages_free(m);

	is_int(mnemo_session_send(st, "killed", &o, "are you there?", NULL, 0, NULL, NULL, &t), MNEMO_OK,
		   "kill -9: the next send works (%s)", mnemo_errmsg(st));
	is_str(t ? t->text : NULL, "resumed", "kill -9: and answers");
	mnemo_turn_free(t);
	log = log_read(&s, &n);
	ok(n == 2 && strstr(json_object_to_json_string(jpath(log[1], "body.messages")),
						"the turn before the crash") != NULL,
	   "kill -9: the next request contains the user turn of the dead one");
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

	test_text(st, "openai", "gpt-4o-mini", "random seed=42 max=7");
	test_text(st, "anthropic", "claude-test", "1");
	test_budget(st);
	test_tools(st, "openai", "gpt-4o-mini");
	test_tools(st, "anthropic", "claude-test");
	test_thinking(st);
	test_retries(st);
	test_nul(st);
	test_failures(st, "openai", "gpt-4o-mini");
	test_failures(st, "anthropic", "claude-test");
	test_connect_timeout(st);
	test_cancel(st);
	test_doom_loop(st);
	test_thresholds(st);
	test_kill(st);

	mnemo_store_close(st);
	mnemo_global_cleanup();
	return tap_done();
}
