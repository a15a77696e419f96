/*
 * anthropic_stream.c
 *		The decoder of Anthropic Messages streams (stream: true), and of the
 *		servers that imitate them (llama.cpp's and vLLM's /v1/messages).
 *
 * Named events: message_start, then per content block content_block_start,
 * content_block_delta..., content_block_stop, then message_delta (the
 * stop reason and cumulative usage) and message_stop, the end.  ping may
 * come anywhere and error may end the stream after the 200.  The API adds
 * event, block and delta types over time and says to ignore the ones a
 * client does not know, so this decoder does (server tool blocks,
 * citations, redacted thinking); an event whose data is not a JSON object
 * still fails the stream, if it is one of the events it reads.
 *
 * Blocks are told apart by their index.  A tool_use block's input streams
 * as pieces of JSON text (input_json_delta, the first often "") and is
 * parsed at its content_block_stop; a block with no piece at all keeps the
 * input of its content_block_start (or {} when that has none, as
 * llama.cpp's start block).  The event's name decides what it is; the
 * data's "type" is read only when the name is missing.
 */
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "core/json.h"
#include "stream/stream.h"

typedef struct anthropic_state
{
	int			unused;
} anthropic_state;

static void *
anthropic_create(void)
{
	return calloc(1, sizeof(anthropic_state));
}

static void
anthropic_destroy(void *state)
{
	free(state);
}

static mn_finish
finish_of(const char *raw)
{
	if (strcmp(raw, "end_turn") == 0 || strcmp(raw, "stop_sequence") == 0)
		return MN_FINISH_STOP;
	if (strcmp(raw, "max_tokens") == 0 || strcmp(raw, "model_context_window_exceeded") == 0)
		return MN_FINISH_LENGTH;
	if (strcmp(raw, "tool_use") == 0)
		return MN_FINISH_TOOL_CALLS;
	if (strcmp(raw, "refusal") == 0)
		return MN_FINISH_REFUSAL;
	if (strcmp(raw, "pause_turn") == 0)
		return MN_FINISH_PAUSE;
	return MN_FINISH_OTHER;
}

/* message_start's and message_delta's usage: whatever counts it has. */
static int
usage(mn_stream *s, struct json_object *u)
{
	mnemo_tokens t;

	if (u == NULL)
		return 0;
	t.input = mn_js_count(u, "input_tokens");
	t.output = mn_js_count(u, "output_tokens");
	t.cache_read = mn_js_count(u, "cache_read_input_tokens");
	t.cache_write = mn_js_count(u, "cache_creation_input_tokens");
	t.reasoning = -1;
	if (t.input < 0 && t.output < 0 && t.cache_read < 0 && t.cache_write < 0)
		return 0;
	return mn_stream_set_usage(s, &t);
}

static int
block_index(struct json_object *obj)
{
	int64_t		index;

	if (!mn_js_int(obj, "index", &index) || index < 0 || index > 1000000000)
		return 0;
	return (int) index;
}

static int
block_start(mn_stream *s, struct json_object *obj)
{
	int			index = block_index(obj);
	struct json_object *block = mn_js_obj(obj, "content_block");
	const char *type = mn_js_str(block, "type", NULL);
	const char *text;
	size_t		len = 0;
	mn_tool    *t;
	int			rc;

	if (type == NULL)
		return 0;
	if (strcmp(type, "text") == 0)
	{
		text = mn_js_str(block, "text", &len);
		return text ? mn_stream_text(s, MN_DELTA_TEXT, index, text, len) : 0;
	}
	if (strcmp(type, "thinking") == 0)
	{
		if ((text = mn_js_str(block, "thinking", &len)) != NULL &&
			(rc = mn_stream_text(s, MN_DELTA_REASONING, index, text, len)) != 0)
			return rc;
		text = mn_js_str(block, "signature", &len);
		return text ? mn_stream_text(s, MN_DELTA_REASONING_SIGNATURE, index, text, len) : 0;
	}
	if (strcmp(type, "tool_use") == 0)
	{
		struct json_object *input = mn_js_obj(block, "input");
		const char *id = mn_js_str(block, "id", NULL);
		const char *name = mn_js_str(block, "name", NULL);

		/* the API always names its calls: one without is a broken stream,
		 * not a call to store and send back (the id answers it) */
		if (id == NULL || id[0] == '\0' || name == NULL || name[0] == '\0')
			return mn_stream_fail(s, MN_STREAM_ERR_MALFORMED, MN_ERRCLASS_OTHER, NULL, NULL,
								  "a tool_use block without an id or a name");
		/* a block index used twice: the first call is over */
		if ((t = mn_stream_tool_find(s, index)) != NULL &&
			(rc = mn_stream_tool_end(s, t)) != 0)
			return rc;
		rc = mn_stream_tool_open(s, index, id, name, &t);
		if (rc == 0 && input != NULL && json_object_object_length(input) > 0)
		{
			const char *json = json_object_to_json_string_ext(input,
															  JSON_C_TO_STRING_PLAIN |
															  JSON_C_TO_STRING_NOSLASHESCAPE);

			if (json != NULL)
				rc = mn_stream_tool_default_input(s, t, json, strlen(json));
		}
		return rc;
	}
	return 0;					/* server tools, redacted thinking, new types */
}

static int
block_delta(mn_stream *s, struct json_object *obj)
{
	int			index = block_index(obj);
	struct json_object *delta = mn_js_obj(obj, "delta");
	const char *type = mn_js_str(delta, "type", NULL);
	const char *text;
	size_t		len = 0;
	mn_tool    *t;

	if (type == NULL)
		return 0;
	if (strcmp(type, "text_delta") == 0)
	{
		text = mn_js_str(delta, "text", &len);
		return text ? mn_stream_text(s, MN_DELTA_TEXT, index, text, len) : 0;
	}
	if (strcmp(type, "input_json_delta") == 0)
	{
		text = mn_js_str(delta, "partial_json", &len);
		/* a server tool's input streams the same way: not ours, skipped */
		if (text == NULL || (t = mn_stream_tool_find(s, index)) == NULL)
			return 0;
		return mn_stream_tool_input(s, t, text, len);
	}
	if (strcmp(type, "thinking_delta") == 0)
	{
		text = mn_js_str(delta, "thinking", &len);
		return text ? mn_stream_text(s, MN_DELTA_REASONING, index, text, len) : 0;
	}
	if (strcmp(type, "signature_delta") == 0)
	{
		text = mn_js_str(delta, "signature", &len);
		return text ? mn_stream_text(s, MN_DELTA_REASONING_SIGNATURE, index, text, len) : 0;
	}
	return 0;					/* citations_delta and newer kinds */
}

static int
message_delta(mn_stream *s, struct json_object *obj)
{
	const char *stop = mn_js_str(mn_js_obj(obj, "delta"), "stop_reason", NULL);
	int			rc;

	if ((rc = usage(s, mn_js_obj(obj, "usage"))) != 0)
		return rc;
	if (stop != NULL)
		return mn_stream_set_finish(s, finish_of(stop), stop);
	return 0;
}

static int
provider_error(mn_stream *s, struct json_object *obj)
{
	struct json_object *err = mn_js_obj(obj, "error");
	const char *message = mn_js_str(err, "message", NULL);
	char	   *type = mn_js_text(err, "type");
	int			rc;

	if (message == NULL || message[0] == '\0')
		message = "the server reported an error in the stream";
	rc = mn_stream_fail(s, MN_STREAM_ERR_PROVIDER, mn_errclass_of(0, type, NULL, message),
						type, NULL, "%s", message);
	free(type);
	return rc;
}

/* The events read; anything else is skipped unread. */
static const char *const known[] = {
	"message_start", "content_block_start", "content_block_delta",
	"content_block_stop", "message_delta", "message_stop", "error", "message"
};

static int
anthropic_event(mn_stream *s, void *state, const mn_sse_event *ev)
{
	const char *name = NULL;
	struct json_object *obj;
	struct mn_buf *scratch;
	const char *text;
	size_t		tlen;
	int			block;
	int			rc = 0;

	(void) state;
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]) && name == NULL; i++)
		if (mn_sse_type_is(ev, known[i]))
			name = known[i];
	if (name == NULL)
		return 0;				/* ping, and event types newer than this code */
	if (strcmp(name, "content_block_delta") == 0 && (scratch = mn_stream_text_scratch(s)) != NULL &&
		mn_text_chunk_anthropic(ev->data, ev->len, scratch, &block, &text, &tlen))
		return mn_stream_chunk_text(s, block, text, tlen);

	obj = mn_stream_parse_json(s, ev->data, ev->len, false);
	if (obj == NULL || !json_object_is_type(obj, json_type_object))
	{
		json_object_put(obj);
		if (strcmp(name, "error") == 0)
			return mn_stream_fail(s, MN_STREAM_ERR_PROVIDER, MN_ERRCLASS_OTHER, NULL, NULL,
								  "the server reported an error in the stream");
		if (strcmp(name, "message") == 0 && ev->len == 0)
			return 0;
		return mn_stream_fail(s, MN_STREAM_ERR_MALFORMED, MN_ERRCLASS_OTHER, NULL, NULL,
							  "a %s event is not a JSON object (%zu bytes)", name, ev->len);
	}
	/* no event name: the data's type decides (a C string: json-c's own) */
	if (strcmp(name, "message") == 0 &&
		(name = mn_js_str(obj, "type", NULL)) == NULL)
		name = "";

	if (strcmp(name, "message_start") == 0)
	{
		struct json_object *msg = mn_js_obj(obj, "message");

		rc = mn_stream_start(s, mn_js_str(msg, "id", NULL), mn_js_str(msg, "model", NULL));
		if (rc == 0)
			rc = usage(s, mn_js_obj(msg, "usage"));
	}
	else if (strcmp(name, "content_block_start") == 0)
		rc = block_start(s, obj);
	else if (strcmp(name, "content_block_delta") == 0)
		rc = block_delta(s, obj);
	else if (strcmp(name, "content_block_stop") == 0)
	{
		mn_tool    *t = mn_stream_tool_find(s, block_index(obj));

		if (t != NULL)
			rc = mn_stream_tool_end(s, t);
	}
	else if (strcmp(name, "message_delta") == 0)
		rc = message_delta(s, obj);
	else if (strcmp(name, "message_stop") == 0)
		rc = mn_stream_terminal(s);
	else if (strcmp(name, "error") == 0)
		rc = provider_error(s, obj);
	json_object_put(obj);
	return rc;
}

const mn_decoder mn_anthropic_decoder = {
	.name = "anthropic",
	.create = anthropic_create,
	.event = anthropic_event,
	.destroy = anthropic_destroy,
};
