/*
 * openai_stream.c
 *		The decoder of OpenAI Chat Completions streams (stream: true), and
 *		of the servers that speak it: llama.cpp's llama-server, vLLM,
 *		Ollama's /v1, OpenRouter and the gateways in front of them.
 *
 * Each event is one data line holding a chat.completion.chunk, and the
 * stream ends with the literal "data: [DONE]".  The servers differ in ways
 * a strict reader would trip on (provider-streaming.md, section 3), so
 * this one is lenient where the meaning is still clear:
 *
 *	- fields it does not know (obfuscation, service_tier, timings,
 *	  system_fingerprint, vLLM's stop_reason, ...) are ignored, and so are
 *	  "usage": null and choices other than the first (n > 1);
 *	- tool-call fragments are keyed by the index the server gives, which
 *	  may start at 1 (OpenRouter) or interleave; a fragment that brings a
 *	  new id under an index already in use starts another call (Ollama
 *	  sends each call whole, in one chunk); a call is complete when the
 *	  choice's finish_reason arrives, or at [DONE] without one;
 *	- the reply's tool calls, not finish_reason, say whether the model
 *	  called tools (OpenRouter reports "stop");
 *	- reasoning text comes as reasoning_content (llama.cpp, older vLLM) or
 *	  reasoning (Ollama, newer vLLM, OpenRouter);
 *	- usage comes in its own chunk with empty choices (include_usage), on
 *	  every chunk (vLLM's continuous_usage_stats), or not at all;
 *	- an error after the 200 is a data line holding {"error": {...}} whose
 *	  code may be a string, an integer (llama.cpp, vLLM) or null, or a
 *	  bare string; vLLM's old {"object": "error", ...} too.  It ends the
 *	  turn, whether [DONE] follows (vLLM) or the connection closes
 *	  (llama.cpp).
 *
 * An event that is not JSON, or JSON that is not an object, fails the
 * stream: a reply with a chunk missing would be silently wrong.
 */
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "core/json.h"
#include "stream/stream.h"

/* The slots of calls that come without an index. */
#define NO_INDEX		(-1)
#define FUNCTION_CALL	(-2)	/* the deprecated delta.function_call */

typedef struct openai_state
{
	bool		refusal;		/* a refusal delta came */
} openai_state;

static void *
openai_create(void)
{
	return calloc(1, sizeof(openai_state));
}

static void
openai_destroy(void *state)
{
	free(state);
}

static mn_finish
finish_of(const char *raw, bool refusal)
{
	if (strcmp(raw, "stop") == 0)
		return refusal ? MN_FINISH_REFUSAL : MN_FINISH_STOP;
	if (strcmp(raw, "length") == 0)
		return MN_FINISH_LENGTH;
	if (strcmp(raw, "tool_calls") == 0 || strcmp(raw, "function_call") == 0)
		return MN_FINISH_TOOL_CALLS;
	if (strcmp(raw, "content_filter") == 0)
		return MN_FINISH_CONTENT_FILTER;
	return MN_FINISH_OTHER;
}

static int
usage_chunk(mn_stream *s, struct json_object *usage)
{
	mnemo_tokens u;
	int64_t		prompt = mn_js_count(usage, "prompt_tokens");
	int64_t		cached = mn_js_count(mn_js_obj(usage, "prompt_tokens_details"), "cached_tokens");

	u.output = mn_js_count(usage, "completion_tokens");
	if (prompt < 0 && u.output < 0)
		return 0;				/* nothing we can use */
	u.reasoning = mn_js_count(mn_js_obj(usage, "completion_tokens_details"), "reasoning_tokens");
	u.cache_write = -1;
	if (prompt >= 0)
	{
		/* prompt_tokens includes the cached ones; mnemo counts them apart */
		if (cached < 0)
			cached = 0;
		if (cached > prompt)
			cached = prompt;
		u.input = prompt - cached;
		u.cache_read = cached;
	}
	else
		u.input = u.cache_read = -1;
	return mn_stream_set_usage(s, &u);
}

/* One element of delta.tool_calls (or the old delta.function_call, with
 * index FUNCTION_CALL and fn the fragment itself). */
static int
tool_fragment(mn_stream *s, int64_t index, const char *id, struct json_object *fn)
{
	const char *name = mn_js_str(fn, "name", NULL);
	size_t		alen = 0;
	const char *args = mn_js_str(fn, "arguments", &alen);
	mn_tool    *t = mn_stream_tool_find(s, index);
	int			rc;

	/*
	 * Only the first fragment of a call carries its id, so a different id
	 * under the same index is another call (Ollama numbers whole calls as
	 * it likes).
	 */
	if (t != NULL && id != NULL && id[0] != '\0')
	{
		const char *have = mn_stream_tool_id(t);

		if (have[0] != '\0' && strcmp(have, id) != 0)
			t = NULL;
	}
	if (t == NULL)
		rc = mn_stream_tool_open(s, index, id, name, &t);
	else
		rc = mn_stream_tool_set(s, t, id, name);
	if (rc != 0)
		return rc;
	if (args != NULL)
		return mn_stream_tool_input(s, t, args, alen);
	return 0;
}

static int
choice_delta(mn_stream *s, openai_state *st, struct json_object *delta)
{
	const char *text;
	size_t		len = 0;
	struct json_object *calls;
	struct json_object *fc;
	int			rc;

	/* reasoning first: servers that send both in one chunk think first */
	if ((text = mn_js_str(delta, "reasoning_content", &len)) == NULL)
		text = mn_js_str(delta, "reasoning", &len);
	if (text != NULL && (rc = mn_stream_text(s, MN_DELTA_REASONING, 0, text, len)) != 0)
		return rc;
	if ((text = mn_js_str(delta, "content", &len)) != NULL &&
		(rc = mn_stream_text(s, MN_DELTA_TEXT, 0, text, len)) != 0)
		return rc;
	if ((text = mn_js_str(delta, "refusal", &len)) != NULL && len > 0)
	{
		st->refusal = true;
		if ((rc = mn_stream_text(s, MN_DELTA_REFUSAL, 0, text, len)) != 0)
			return rc;
	}
	if ((calls = mn_js_arr(delta, "tool_calls")) != NULL)
	{
		size_t		n = json_object_array_length(calls);

		for (size_t i = 0; i < n; i++)
		{
			struct json_object *frag = json_object_array_get_idx(calls, i);
			int64_t		index;

			if (!json_object_is_type(frag, json_type_object))
				continue;
			if (!mn_js_int(frag, "index", &index) || index < 0)
				index = NO_INDEX;
			rc = tool_fragment(s, index, mn_js_str(frag, "id", NULL),
							   mn_js_obj(frag, "function"));
			if (rc != 0)
				return rc;
		}
	}
	if ((fc = mn_js_obj(delta, "function_call")) != NULL &&
		(rc = tool_fragment(s, FUNCTION_CALL, NULL, fc)) != 0)
		return rc;
	return 0;
}

/* An error chunk: {"error": {...}}, {"error": "text"}, or vLLM's old
 * top-level {"object": "error", "message", "type", "code"}. */
static int
provider_error(mn_stream *s, struct json_object *obj)
{
	struct json_object *err = mn_js_obj(obj, "error");
	const char *message;
	char	   *type;
	char	   *code;
	int			rc;

	if (err != NULL)
		message = mn_js_str(err, "message", NULL);
	else if ((message = mn_js_str(obj, "error", NULL)) == NULL)
	{
		err = obj;
		message = mn_js_str(obj, "message", NULL);
	}
	type = err ? mn_js_text(err, "type") : NULL;
	code = err ? mn_js_text(err, "code") : NULL;
	if (message == NULL || message[0] == '\0')
		message = "the server reported an error in the stream";
	rc = mn_stream_fail(s, MN_STREAM_ERR_PROVIDER, mn_errclass_of(0, type, code, message),
						type, code, "%s", message);
	free(type);
	free(code);
	return rc;
}

static bool
is_error_chunk(struct json_object *obj)
{
	struct json_object *v;
	const char *object;

	if (json_object_object_get_ex(obj, "error", &v) && v != NULL)
		return true;
	object = mn_js_str(obj, "object", NULL);
	return object != NULL && strcmp(object, "error") == 0;
}

static int
openai_event(mn_stream *s, void *state, const mn_sse_event *ev)
{
	openai_state *st = state;
	const char *data = ev->data;
	size_t		len = ev->len;
	bool		error_event = mn_sse_type_is(ev, "error");
	struct json_object *obj;
	struct json_object *choices;
	struct json_object *usage;
	struct mn_buf *scratch;
	const char *text;
	size_t		tlen;
	int			rc = 0;

	/* Chat Completions names no events; a named one is someone else's,
	 * except an explicit error */
	if (!mn_sse_type_is(ev, "message") && !error_event)
		return 0;
	while (len > 0 && (*data == ' ' || *data == '\t' || *data == '\n' || *data == '\r'))
		data++, len--;
	while (len > 0 && (data[len - 1] == ' ' || data[len - 1] == '\t' ||
					   data[len - 1] == '\n' || data[len - 1] == '\r'))
		len--;
	if (len == 0)
		return 0;				/* an empty keep-alive event */
	if (len == 6 && memcmp(data, "[DONE]", 6) == 0 && !error_event)
		return mn_stream_terminal(s);

	/* the plain text chunk, once the first chunk has started the reply */
	if (!error_event && mn_stream_started(s) && (scratch = mn_stream_text_scratch(s)) != NULL &&
		mn_text_chunk_openai(ev->data, ev->len, scratch, &text, &tlen))
		return mn_stream_chunk_text(s, 0, text, tlen);

	obj = mn_stream_parse_json(s, ev->data, ev->len, false);
	if (obj == NULL || !json_object_is_type(obj, json_type_object))
	{
		json_object_put(obj);
		if (error_event)
			return mn_stream_fail(s, MN_STREAM_ERR_PROVIDER, MN_ERRCLASS_OTHER, NULL, NULL,
								  "the server reported an error in the stream");
		return mn_stream_fail(s, MN_STREAM_ERR_MALFORMED, MN_ERRCLASS_OTHER, NULL, NULL,
							  "a stream event is not a JSON object (%zu bytes)", ev->len);
	}
	if (error_event || is_error_chunk(obj))
	{
		rc = provider_error(s, obj);
		json_object_put(obj);
		return rc;
	}

	rc = mn_stream_start(s, mn_js_str(obj, "id", NULL), mn_js_str(obj, "model", NULL));
	if (rc == 0 && (choices = mn_js_arr(obj, "choices")) != NULL)
	{
		size_t		n = json_object_array_length(choices);

		for (size_t i = 0; i < n && rc == 0; i++)
		{
			struct json_object *choice = json_object_array_get_idx(choices, i);
			struct json_object *delta;
			const char *finish;
			int64_t		index = 0;

			if (!json_object_is_type(choice, json_type_object))
				continue;
			if (mn_js_int(choice, "index", &index) && index != 0)
				continue;		/* n > 1: the first choice is the reply */
			if ((delta = mn_js_obj(choice, "delta")) != NULL &&
				(rc = choice_delta(s, st, delta)) != 0)
				break;
			/* vLLM puts the finish on the last content chunk: after it */
			if ((finish = mn_js_str(choice, "finish_reason", NULL)) != NULL)
			{
				if ((rc = mn_stream_tools_end_all(s)) != 0)
					break;
				rc = mn_stream_set_finish(s, finish_of(finish, st->refusal), finish);
			}
		}
	}
	if (rc == 0 && (usage = mn_js_obj(obj, "usage")) != NULL)
		rc = usage_chunk(s, usage);
	json_object_put(obj);
	return rc;
}

const mn_decoder mn_openai_decoder = {
	.name = "openai",
	.create = openai_create,
	.event = openai_event,
	.destroy = openai_destroy,
};
