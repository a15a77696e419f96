/*
 * t_send_tools.c
 *		Tool calls a model gets wrong, through the real libcurl path against
 *		the scripted provider server: a call with no name or id, two calls
 *		with one id (a broken stream: the turn fails with STREAM and keeps
 *		what streamed, and the next turn of the session works), and input
 *		that is not a JSON object (stored, the turn succeeds, and the next
 *		request sends OpenAI the arguments as written and Anthropic an
 *		object).
 *
 * Needs MNEMO_PROVIDER_SERVER (test/client/run.sh builds and exports it)
 * and runs in a fresh database of its own (PGDATABASE).
 */
#define _POSIX_C_SOURCE 200809L

#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "mnemo.h"
#include "tap.h"
#include "helpers.h"

#define KEY "sk-test-secret-4242"

#include "provider.h"
#include "send_helpers.h"

/* A script whose first reply is these SSE bytes and whose second is text. */
static char *
raw_script(const char *sse, const char *then)
{
	json_object *s = json_object_new_string(sse);
	const char *lit = json_object_to_json_string_ext(s, JSON_C_TO_STRING_NOSLASHESCAPE);
	size_t		len = strlen(lit) + strlen(then) + 64;
	char	   *script = malloc(len);

	snprintf(script, len, "reply\n  raw %s\nreply\n  text \"%s\"\n", lit, then);
	json_object_put(s);
	return script;
}

#define OAI(json) "data: " json "\n\n"
#define OAI_DONE "data: [DONE]\n\n"
#define ANT(type, json) "event: " type "\ndata: " json "\n\n"
#define ANT_START ANT("message_start", "{\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\"," \
	"\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"claude-test\"," \
	"\"stop_reason\":null,\"usage\":{\"input_tokens\":5,\"output_tokens\":1}}}")
#define ANT_TEXT(index, text) \
	ANT("content_block_start", "{\"type\":\"content_block_start\",\"index\":" #index \
		",\"content_block\":{\"type\":\"text\",\"text\":\"\"}}") \
	ANT("content_block_delta", "{\"type\":\"content_block_delta\",\"index\":" #index \
		",\"delta\":{\"type\":\"text_delta\",\"text\":\"" text "\"}}") \
	ANT("content_block_stop", "{\"type\":\"content_block_stop\",\"index\":" #index "}")
#define ANT_TOOL(index, block, partial) \
	ANT("content_block_start", "{\"type\":\"content_block_start\",\"index\":" #index \
		",\"content_block\":" block "}") \
	ANT("content_block_delta", "{\"type\":\"content_block_delta\",\"index\":" #index \
		",\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":" partial "}}") \
	ANT("content_block_stop", "{\"type\":\"content_block_stop\",\"index\":" #index "}")
#define ANT_END ANT("message_delta", "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":" \
	"\"tool_use\"},\"usage\":{\"output_tokens\":9}}") \
	ANT("message_stop", "{\"type\":\"message_stop\"}")

typedef struct broken_case
{
	const char *label;
	const char *provider;
	const char *sse;
	const char *why;			/* in the error message */
	int			stored_calls;	/* complete calls before the broken one */
} broken_case;

static const broken_case broken[] = {
	{"openai call without a name", "openai",
		OAI("{\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Let me.\"}}]}")
		OAI("{\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_x\","
			"\"type\":\"function\",\"function\":{\"arguments\":\"{}\"}}]}}]}")
		OAI("{\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}")
		OAI_DONE,
	"without a name", 0},
	{"openai two calls with one id", "openai",
		OAI("{\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Let me.\"}}]}")
		OAI("{\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_d\","
			"\"type\":\"function\",\"function\":{\"name\":\"a\",\"arguments\":\"{}\"}}]}}]}")
		OAI("{\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,\"id\":\"call_d\","
			"\"type\":\"function\",\"function\":{\"name\":\"b\",\"arguments\":\"{}\"}}]}}]}")
		OAI("{\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}")
		OAI_DONE,
	"two tool calls with the id \"call_d\"", 0},
	{"anthropic tool_use without id and name", "anthropic",
		ANT_START ANT_TEXT(0, "Let me.")
		ANT_TOOL(1, "{\"type\":\"tool_use\"}", "\"{}\"")
		ANT_END,
	"without an id or a name", 0},
	{"anthropic two tool_use blocks with one id", "anthropic",
		ANT_START ANT_TEXT(0, "Let me.")
		ANT_TOOL(1, "{\"type\":\"tool_use\",\"id\":\"toolu_d\",\"name\":\"a\",\"input\":{}}", "\"{}\"")
		ANT_TOOL(2, "{\"type\":\"tool_use\",\"id\":\"toolu_d\",\"name\":\"b\",\"input\":{}}", "\"{}\"")
		ANT_END,
	"two tool calls with the id \"toolu_d\"", 1},
};

/*
 * A malformed call fails the turn with STREAM, keeps the text (and the calls
 * complete before it), stores no call the request builder would refuse, and
 * leaves the session usable: the next turn is sent, and answered.
 */
static void
test_broken_calls(mnemo_store *st)
{
	for (size_t i = 0; i < sizeof(broken) / sizeof(broken[0]); i++)
	{
		const broken_case *bc = &broken[i];
		bool		anthropic = strcmp(bc->provider, "anthropic") == 0;
		char	   *script = raw_script(bc->sse, "fine");
		server		s;
		char		url[96];
		char		sid[32];
		mnemo_turn_options o;
		mnemo_turn *t = NULL;
		mnemo_messages *m;
		const mnemo_message *a;
		json_object **log;
		int			n,
					rc,
					tools = 0;

		server_start(&s, script);
		free(script);
		snprintf(sid, sizeof(sid), "broken-%zu", i);
		session(st, sid, bc->provider, anthropic ? "claude-test" : "gpt-4o-mini");
		options(&o, &s, bc->provider, url, sizeof(url));
		o.max_retries = -1;
		rc = mnemo_session_send(st, sid, &o, "go", NULL, 0, NULL, NULL, &t);
		is_int(rc, MNEMO_ERR_STREAM, "%s: STREAM (%s)", bc->label, mnemo_errmsg(st));
		ok(strstr(mnemo_errmsg(st), bc->why) != NULL, "%s: the message says why", bc->label);
		is_str(t ? t->text : NULL, "Let me.", "%s: the turn keeps the text", bc->label);
		is_int(t ? (int) t->n_tool_calls : -1, bc->stored_calls, "%s: and the calls complete before",
			   bc->label);
		mnemo_turn_free(t);
		t = NULL;
		m = messages(st, sid);
		a = last_message(m);
		for (size_t k = 0; a != NULL && k < a->n_parts; k++)
			if (strcmp(a->parts[k].type, "tool") == 0)
			{
				tools++;
				ok(a->parts[k].tool_name[0] != '\0' && a->parts[k].tool_call_id[0] != '\0',
				   "%s: a stored call has a name and an id", bc->label);
			}
		ok(a != NULL && a->n_parts >= 1 && strcmp(a->parts[0].type, "text") == 0 &&
		   strcmp(a->parts[0].text, "Let me.") == 0 && tools == bc->stored_calls &&
		   a->finish_reason != NULL && strcmp(a->finish_reason, "error") == 0,
		   "%s: stored: the text, %d call(s), finish reason error", bc->label, bc->stored_calls);
		mnemo_messages_free(m);

		/* the session is not poisoned */
		rc = mnemo_session_send(st, sid, &o, "again", NULL, 0, NULL, NULL, &t);
		is_int(rc, MNEMO_OK, "%s: the next turn succeeds (%s)", bc->label, mnemo_errmsg(st));
		is_str(t ? t->text : NULL, "fine", "%s: and is answered", bc->label);
		mnemo_turn_free(t);
		log = log_read(&s, &n);
		is_int(n, 2, "%s: two requests", bc->label);
		if (n == 2)
		{
			const char *sent = json_object_to_json_string(jpath(log[1], "body.messages"));

			ok(strstr(sent, "Let me.") != NULL, "%s: the kept text is sent back", bc->label);
		}
		else
			ok(0, "%s: the kept text is sent back", bc->label);
		log_free(log, n);
		m = messages(st, sid);
		is_int((int) m->count, 4, "%s: two turns of two messages", bc->label);
		mnemo_messages_free(m);
		server_stop(&s);
	}
}

typedef struct input_case
{
	const char *label;
	const char *provider;
	const char *sse;
	const char *as_written;		/* the model's text */
} input_case;

static const input_case inputs[] = {
	{"openai arguments never closed", "openai",
		OAI("{\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_a\","
			"\"type\":\"function\",\"function\":{\"name\":\"bash\",\"arguments\":\"{\\\"cmd\\\": \\\"ls\"}}]}}]}")
		OAI("{\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}")
		OAI_DONE,
	"{\"cmd\": \"ls"},
	{"openai arguments an array", "openai",
		OAI("{\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_b\","
			"\"type\":\"function\",\"function\":{\"name\":\"bash\",\"arguments\":\"[1,2]\"}}]}}]}")
		OAI("{\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}")
		OAI_DONE,
	"[1,2]"},
	/* json-c's strict mode takes NaN; jsonb does not */
	{"openai arguments with NaN", "openai",
		OAI("{\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_n\","
			"\"type\":\"function\",\"function\":{\"name\":\"bash\",\"arguments\":\"{\\\"x\\\": NaN}\"}}]}}]}")
		OAI("{\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}")
		OAI_DONE,
	"{\"x\": NaN}"},
	{"anthropic partial_json cut short", "anthropic",
		ANT_START
		ANT_TOOL(0, "{\"type\":\"tool_use\",\"id\":\"toolu_p\",\"name\":\"bash\",\"input\":{}}",
				 "\"{\\\"a\\\":\"")
		ANT_END,
	"{\"a\":"},
};

/*
 * Input that is not a JSON object: the call is stored with the model's text
 * as its input, the turn succeeds, and once answered the next request is
 * one the provider accepts.
 */
static void
test_bad_input(mnemo_store *st)
{
	for (size_t i = 0; i < sizeof(inputs) / sizeof(inputs[0]); i++)
	{
		const input_case *ic = &inputs[i];
		bool		anthropic = strcmp(ic->provider, "anthropic") == 0;
		char	   *script = raw_script(ic->sse, "noted");
		server		s;
		char		url[96];
		char		sid[32];
		mnemo_turn_options o;
		mnemo_turn *t = NULL;
		collected	c = {0};
		mnemo_messages *m;
		const mnemo_message *a;
		json_object **log;
		int			n,
					rc;

		server_start(&s, script);
		free(script);
		snprintf(sid, sizeof(sid), "input-%zu", i);
		session(st, sid, ic->provider, anthropic ? "claude-test" : "gpt-4o-mini");
		options(&o, &s, ic->provider, url, sizeof(url));
		o.max_retries = -1;
		rc = mnemo_session_send(st, sid, &o, "go", NULL, 0, on_part, &c, &t);
		is_int(rc, MNEMO_OK, "%s: the turn succeeds (%s)", ic->label, mnemo_errmsg(st));
		is_str(t ? t->finish_reason : NULL, "tool_calls", "%s: finish reason tool_calls", ic->label);
		is_int(t ? (int) t->n_tool_calls : -1, 1, "%s: one call", ic->label);
		is_int(c.n_tool, 1, "%s: on_part heard it", ic->label);
		is_str(t && t->n_tool_calls ? t->tool_calls[0].input : NULL, ic->as_written,
			   "%s: its input is the model's text as written", ic->label);
		m = messages(st, sid);
		a = last_message(m);
		ok(a != NULL && a->n_parts == 1 && strcmp(a->parts[0].type, "tool") == 0,
		   "%s: stored as a tool part", ic->label);
		if (a != NULL && a->n_parts == 1)
		{
			is_str(a->parts[0].tool_input, ic->as_written, "%s: read back as written", ic->label);
			is_str(a->parts[0].tool_state, "pending", "%s: pending", ic->label);
			ok(strstr(a->parts[0].content, "\"input\":") == NULL,
			   "%s: with no \"input\" object (%s)", ic->label, a->parts[0].content);
			is_int(mnemo_session_tool_result(st, sid, a->parts[0].id, "invalid input", true), MNEMO_OK,
				   "%s: answered with an error result", ic->label);
		}
		mnemo_messages_free(m);
		mnemo_turn_free(t);
		t = NULL;

		rc = mnemo_session_send(st, sid, &o, NULL, NULL, 0, NULL, NULL, &t);
		is_int(rc, MNEMO_OK, "%s: the next turn succeeds (%s)", ic->label, mnemo_errmsg(st));
		mnemo_turn_free(t);
		log = log_read(&s, &n);
		is_int(n, 2, "%s: two requests", ic->label);
		if (n == 2 && anthropic)
		{
			json_object *input = jpath(log[1], "body.messages.1.content.0.input");

			is_str(jstr(log[1], "body.messages.1.content.0.id"), "toolu_p", "%s: the call sent back",
				   ic->label);
			ok(input != NULL && json_object_is_type(input, json_type_object),
			   "%s: its input an object (%s)", ic->label, json_object_to_json_string(input));
			ok(json_object_get_boolean(jpath(log[1], "body.messages.2.content.0.is_error")),
			   "%s: with its error result", ic->label);
		}
		else if (n == 2)
		{
			is_str(jstr(log[1], "body.messages.2.tool_calls.0.function.name"), "bash",
				   "%s: the call sent back", ic->label);
			is_str(jstr(log[1], "body.messages.2.tool_calls.0.function.arguments"), ic->as_written,
				   "%s: its arguments as the model wrote them", ic->label);
			is_str(jstr(log[1], "body.messages.3.content"), "invalid input", "%s: with its result",
				   ic->label);
		}
		else
			ok(0, "%s: a second request", ic->label);
		log_free(log, n);
		server_stop(&s);
	}
}

/*
 * Arguments that are valid JSON but hold what jsonb cannot (a \u0000
 * escape, a lone surrogate escape: models do write both): the call is
 * stored with each such escape as \ufffd, as a NUL in a text delta is, and
 * the turn succeeds; it failed with FORMAT, and the call was lost.
 */
static void
test_unholdable_input(mnemo_store *st)
{
	static const char *const providers[] = {"openai", "anthropic"};

	for (size_t i = 0; i < 2; i++)
	{
		const char *provider = providers[i];
		const char *want = "{\"q\":\"a\\ufffdb\",\"r\":\"\\ufffd\",\"ok\":\"\\ud83d\\ude00\"}";
		server		s;
		char		url[96];
		char		sid[32];
		mnemo_turn_options o;
		mnemo_turn *t = NULL;
		collected	c = {0};
		mnemo_messages *m;
		const mnemo_message *a;
		int			rc;

		server_start(&s, "reply\n  tool bash \"{\\\"q\\\":\\\"a\\\\u0000b\\\",\\\"r\\\":\\\"\\\\ud800\\\","
					 "\\\"ok\\\":\\\"\\\\ud83d\\\\ude00\\\"}\" pieces=3\nreply\n  text \"done\"\n");
		snprintf(sid, sizeof(sid), "unholdable-%s", provider);
		session(st, sid, provider, i == 0 ? "gpt-4o-mini" : "claude-test");
		options(&o, &s, provider, url, sizeof(url));
		o.max_retries = -1;
		rc = mnemo_session_send(st, sid, &o, "go", NULL, 0, on_part, &c, &t);
		is_int(rc, MNEMO_OK, "%s \\u0000 and lone surrogate in arguments: the turn succeeds (%s)",
			   provider, mnemo_errmsg(st));
		is_int(t ? (int) t->n_tool_calls : -1, 1, "%s: one call", provider);
		is_str(t && t->n_tool_calls ? t->tool_calls[0].input : NULL, want,
			   "%s: its input with U+FFFD escapes, the pair kept", provider);
		is_int(c.n_tool, 1, "%s: on_part heard it", provider);
		m = messages(st, sid);
		a = last_message(m);
		ok(a != NULL && a->n_parts == 1 && strcmp(a->parts[0].type, "tool") == 0 &&
		   a->parts[0].tool_input != NULL && strstr(a->parts[0].content, "\"input\":") != NULL,
		   "%s: stored as a tool part with its input object", provider);
		if (a != NULL && a->n_parts == 1)
			is_int(mnemo_session_tool_result(st, sid, a->parts[0].id, "ran", false), MNEMO_OK,
				   "%s: answered", provider);
		else
			ok(0, "%s: answered", provider);
		mnemo_messages_free(m);
		mnemo_turn_free(t);
		t = NULL;
		rc = mnemo_session_send(st, sid, &o, NULL, NULL, 0, NULL, NULL, &t);
		is_int(rc, MNEMO_OK, "%s: the next turn sends it back (%s)", provider, mnemo_errmsg(st));
		mnemo_turn_free(t);
		server_stop(&s);
	}
}

int
main(void)
{
	mnemo_store *st;

	if (mnemo_global_init() != MNEMO_OK)
		bail_out("mnemo_global_init");
	st = open_store(NULL);

	test_broken_calls(st);
	test_bad_input(st);
	test_unholdable_input(st);

	mnemo_store_close(st);
	mnemo_global_cleanup();
	return tap_done();
}
