/*
 * t_send.c
 *		Chat turns through the real libcurl path: mnemo_session_send()
 *		against the scripted provider server (test/provider_server, started
 *		here for each scenario with its own script, port file and request
 *		log), and what is in the database afterwards, including after the
 *		sending process is killed with SIGKILL mid-stream.  Retries,
 *		failures, timeouts and cancelling are t_send_failures.c's.
 *
 * Needs MNEMO_PROVIDER_SERVER (test/client/run.sh builds and exports it)
 * and runs in a fresh database of its own (PGDATABASE).
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mnemo.h"
#include "tap.h"
#include "helpers.h"

#define KEY "sk-test-secret-4242"

#include "provider.h"
#include "send_helpers.h"

static double
dabs(double x)
{
	return x < 0 ? -x : x;
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

/*
 * The context sent respects the budget, and the oldest message, the task,
 * is not left out to get there (issue 30): the blocking compaction
 * summarises it, and the request carries the summary.
 */
static void
test_budget(mnemo_store *st)
{
	server		s;
	char		url[96];
	mnemo_turn_options o;
	mnemo_turn *t = NULL;
	mnemo_new_message msg = {0};
	mnemo_summary_nodes *nodes = NULL;
	char		big[801];
	json_object **log;
	json_object *msgs;
	size_t		chars = 0;
	int			n;
	const char *sent;

	/* the summary's and the turn's replies */
	server_start(&s, "reply repeat=10\n  text \"fine\"\n");
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
	msgs = n ? jpath(log[n - 1], "body.messages") : NULL;
	sent = msgs ? json_object_to_json_string(msgs) : "";
	for (size_t i = 0; msgs != NULL && i < json_object_array_length(msgs); i++)
	{
		const char *c = jstr(json_object_array_get_idx(msgs, i), "content");

		chars += c ? strlen(c) : 0;
	}
	ok(n >= 2 && chars / 4 <= 150, "budget: the request is under the budget (%zu tokens, %d requests)",
	   chars / 4, n);
	ok(strstr(sent, "xxxxxxxx") == NULL, "budget: the oldest message, over the budget, is not sent whole");
	ok(strstr(sent, "and now?") != NULL, "budget: the new user message is");
	ok(mnemo_summary_nodes_get(st, "budget", false, &nodes) == MNEMO_OK && nodes->count == 1,
	   "budget: the oldest message is summarised, not dropped");
	ok(strstr(sent, "\"fine\"") != NULL, "budget: and the request carries its summary");
	mnemo_summary_nodes_free(nodes);
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
		{
			size_t		n = strlen(t->message_id);

			ok(strncmp(part_id, t->message_id, n) == 0 && part_id[n] == ':' &&
			   strspn(part_id + n + 1, "0123456789") == strlen(part_id + n + 1) && part_id[n + 1] != '\0',
			   "%s tools: the call's part id is its message's id and its index (%s)", provider, part_id);
		}
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


/*
 * A user message with an image goes to the provider with the image once, in
 * the provider's image block, and its text without the placeholder that
 * stands for the image in the context's text; an image alone, with no text
 * block.
 */
static void
test_images(mnemo_store *st, const char *provider, const char *model)
{
	server		s;
	char		url[96];
	char		sid[32];
	mnemo_turn_options o;
	mnemo_turn *t = NULL;
	mnemo_new_message msg = {0};
	mnemo_new_part parts[2] = {MNEMO_NEW_PART_INIT, MNEMO_NEW_PART_INIT};
	json_object **log;
	json_object *msgs;
	const char *sent;
	bool		anthropic = strcmp(provider, "anthropic") == 0;
	int			n;

	snprintf(sid, sizeof(sid), "images_%s", provider);
	session(st, sid, provider, model);
	server_start(&s, "reply\n  text \"a cat\"\n");
	msg.role = "user";
	parts[0].type = "text";
	parts[0].text = "what is in this picture?";
	parts[1].type = "image";
	parts[1].content = "{\"type\": \"image\", \"media_type\": \"image/png\", \"data\": \"iVBORw0KGgoAAAANSUhEUg==\"}";
	msg.parts = parts;
	msg.n_parts = 2;
	if (mnemo_message_append(st, sid, &msg, NULL) != MNEMO_OK)
		bail_out("append an image: %s", mnemo_errmsg(st));
	msg.parts = &parts[1];
	msg.n_parts = 1;
	if (mnemo_message_append(st, sid, &msg, NULL) != MNEMO_OK)
		bail_out("append an image alone: %s", mnemo_errmsg(st));
	options(&o, &s, provider, url, sizeof(url));
	is_int(mnemo_session_send(st, sid, &o, "and this one?", NULL, 0, NULL, NULL, &t), MNEMO_OK,
		   "%s images: send succeeds (%s)", provider, mnemo_errmsg(st));
	log = log_read(&s, &n);
	msgs = n ? jpath(log[n - 1], "body.messages") : NULL;
	sent = msgs ? json_object_to_json_string_ext(msgs, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE) : "";
	ok(strstr(sent, "[Image: ") == NULL, "%s images: no placeholder text is sent for an image (%s)",
	   provider, sent);
	if (anthropic)
	{
		ok(strstr(sent, "{\"type\":\"text\",\"text\":\"what is in this picture?\"},"
				  "{\"type\":\"image\",\"source\":{\"type\":\"base64\",\"media_type\":\"image/png\","
				  "\"data\":\"iVBORw0KGgoAAAANSUhEUg==\"}}") != NULL,
		   "anthropic images: the text, then the image as an image block");
		ok(strstr(sent, "\"type\":\"text\",\"text\":\"\"") == NULL,
		   "anthropic images: no empty text block for the image alone");
	}
	else
	{
		ok(strstr(sent, "\"content\":[{\"type\":\"text\",\"text\":\"what is in this picture?\"},"
				  "{\"type\":\"image_url\",\"image_url\":{\"url\":\"data:image/png;base64,"
				  "iVBORw0KGgoAAAANSUhEUg==\"}}]") != NULL,
		   "openai images: the text, then the image as an image_url part");
		ok(strstr(sent, "\"content\":[{\"type\":\"image_url\",\"image_url\":{\"url\":\"data:image/png;base64,"
				  "iVBORw0KGgoAAAANSUhEUg==\"}}]") != NULL,
		   "openai images: the image alone is an image_url part and no text part");
	}
	log_free(log, n);
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
	test_nul(st);
	test_images(st, "openai", "gpt-4o-mini");
	test_images(st, "anthropic", "claude-test");
	test_doom_loop(st);
	test_thresholds(st);
	test_kill(st);

	mnemo_store_close(st);
	mnemo_global_cleanup();
	return tap_done();
}
