/*
 * t_anthropic_stream.c
 *		The Anthropic Messages stream decoder (client/src/stream/anthropic_stream.c
 *		over client/src/stream/sse.c), the request body and the HTTP error bodies.
 *
 * No database.  Every recorded stream of shared/PROVIDERS.md and
 * shared/reference/provider-streaming.md, and crafted streams for what the
 * API may add or a server may get wrong, decoded to a transcript of deltas
 * (test/fuzz/streams.h) that must be exactly the one written here: whole,
 * one byte at a time, split in two at every byte, in random chunkings, and
 * with CRLF and lone-CR line ends.
 */
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "../fuzz/streams.h"

static const golden goldens[] = {
	{"anthropic_text",
	 "PROVIDERS.md text reply: usage from message_start and message_delta, ping ignored",
	 "START id=msg_1 model=claude-sonnet-4-5\n"
	 "USAGE in=25 out=1 cache_read=0 cache_write=0 reasoning=0\n"
	 "TEXT[0] \"Hel\"\n"
	 "TEXT[0] \"lo\"\n"
	 "USAGE in=25 out=2 cache_read=0 cache_write=0 reasoning=0\n"
	 "FINISH stop raw=end_turn\n"
	 "DONE\n"
	 "state: complete\n"},
	{"anthropic_tool",
	 "PROVIDERS.md tool call (no message_start): partial JSON concatenated, parsed at content_block_stop",
	 "TOOL_START #0 index=1 id=toolu_1 name=bash\n"
	 "TOOL_INPUT #0 \"{\\\"cmd\\\":\"\n"
	 "TOOL_INPUT #0 \"\\\"ls\\\"}\"\n"
	 "TOOL_END #0 id=toolu_1 name=bash \"{\\\"cmd\\\":\\\"ls\\\"}\" valid {\"cmd\":\"ls\"}\n"
	 "USAGE in=0 out=30 cache_read=0 cache_write=0 reasoning=0\n"
	 "FINISH tool_calls raw=tool_use\n"
	 "DONE\n"
	 "state: complete\n"},
	{"anthropic_text_recorded",
	 "recorded text reply",
	 "START id=msg_4QpJ model=claude-3-opus-latest\n"
	 "USAGE in=11 out=1 cache_read=0 cache_write=0 reasoning=0\n"
	 "TEXT[0] \"Hello\"\n"
	 "TEXT[0] \" there!\"\n"
	 "USAGE in=11 out=6 cache_read=0 cache_write=0 reasoning=0\n"
	 "FINISH stop raw=end_turn\n"
	 "DONE\n"
	 "state: complete\n"},
	{"anthropic_text_tool_recorded",
	 "recorded text then tool use, an empty first partial_json",
	 "START id=msg_019Q model=claude-sonnet-4-20250514\n"
	 "USAGE in=377 out=1 cache_read=0 cache_write=0 reasoning=0\n"
	 "TEXT[0] \"I'll check the weather in Paris.\"\n"
	 "TOOL_START #0 index=1 id=toolu_01NR name=get_weather\n"
	 "TOOL_INPUT #0 \"{\\\"locati\"\n"
	 "TOOL_INPUT #0 \"on\\\": \\\"Paris\\\"}\"\n"
	 "TOOL_END #0 id=toolu_01NR name=get_weather \"{\\\"location\\\": \\\"Paris\\\"}\" valid {\"location\":\"Paris\"}\n"
	 "USAGE in=377 out=65 cache_read=0 cache_write=0 reasoning=0\n"
	 "FINISH tool_calls raw=tool_use\n"
	 "DONE\n"
	 "state: complete\n"},
	{"anthropic_error_midstream",
	 "an error event after the 200: overloaded, the text so far delivered",
	 "START id=msg_E1 model=claude-sonnet-4-5\n"
	 "USAGE in=20 out=1 cache_read=0 cache_write=0 reasoning=0\n"
	 "TEXT[0] \"Partial\"\n"
	 "ERROR kind=1 class=overloaded type=overloaded_error code=(null) \"Overloaded\"\n"
	 "state: failed\n"},
	{"anthropic_thinking",
	 "thinking deltas and the signature, then text in block 1; cache counts",
	 "START id=msg_T model=claude-sonnet-4-5\n"
	 "USAGE in=50 out=1 cache_read=2000 cache_write=1000 reasoning=0\n"
	 "REASONING[0] \"Let me \"\n"
	 "REASONING[0] \"think.\"\n"
	 "SIGNATURE[0] \"EqQBCgIYAhIM\"\n"
	 "TEXT[1] \"42\"\n"
	 "USAGE in=50 out=120 cache_read=2000 cache_write=1000 reasoning=0\n"
	 "FINISH stop raw=end_turn\n"
	 "DONE\n"
	 "state: complete\n"},
	{"anthropic_unknown",
	 "unknown events, server-tool blocks, citations and unknown deltas ignored; cumulative input counts",
	 "START id=msg_U model=claude-opus-4-1\n"
	 "USAGE in=10 out=1 cache_read=0 cache_write=0 reasoning=0\n"
	 "TEXT[2] \"Found it.\"\n"
	 "USAGE in=15 out=9 cache_read=5 cache_write=0 reasoning=0\n"
	 "FINISH stop raw=end_turn\n"
	 "DONE\n"
	 "state: complete\n"},
	{"anthropic_tool_inputs",
	 "tool_use start without input ({}), input given in the start block, invalid partial JSON",
	 "START id=msg_L model=qwen2.5-7b\n"
	 "USAGE in=30 out=0 cache_read=0 cache_write=0 reasoning=0\n"
	 "TOOL_START #0 index=0 id=toolu_a name=now\n"
	 "TOOL_END #0 id=toolu_a name=now \"{}\" valid {}\n"
	 "TOOL_START #1 index=1 id=toolu_b name=read\n"
	 "TOOL_END #1 id=toolu_b name=read \"{\\\"path\\\":\\\"a.txt\\\"}\" valid {\"path\":\"a.txt\"}\n"
	 "TOOL_START #2 index=2 id=toolu_c name=bash\n"
	 "TOOL_INPUT #2 \"{\\\"cmd\\\": ls}\"\n"
	 "TOOL_END #2 id=toolu_c name=bash \"{\\\"cmd\\\": ls}\" invalid\n"
	 "USAGE in=30 out=40 cache_read=0 cache_write=0 reasoning=0\n"
	 "FINISH tool_calls raw=tool_use\n"
	 "DONE\n"
	 "state: complete\n"},
	{"anthropic_no_stop_reason",
	 "message_stop without a stop reason: interrupted",
	 "START id=msg_N model=claude-sonnet-4-5\n"
	 "USAGE in=5 out=1 cache_read=0 cache_write=0 reasoning=0\n"
	 "TEXT[0] \"Hi\"\n"
	 "state: interrupted\n"},
	{"anthropic_eof",
	 "the body ends inside a tool call's input: interrupted, no TOOL_END",
	 "START id=msg_E model=claude-sonnet-4-5\n"
	 "USAGE in=5 out=1 cache_read=0 cache_write=0 reasoning=0\n"
	 "TOOL_START #0 index=0 id=toolu_e name=bash\n"
	 "TOOL_INPUT #0 \"{\\\"cmd\\\":\"\n"
	 "state: interrupted\n"},
	{"anthropic_malformed",
	 "a data line cut short: a malformed-event error, nothing after it",
	 "START id=msg_M model=claude-sonnet-4-5\n"
	 "USAGE in=5 out=1 cache_read=0 cache_write=0 reasoning=0\n"
	 "TEXT[0] \"ok\"\n"
	 "ERROR kind=2 class=other type=(null) code=(null) \"a content_block_delta event is not a JSON object (65 bytes)\"\n"
	 "state: failed\n"},
	{"anthropic_error_api",
	 "an api_error event before anything else",
	 "ERROR kind=1 class=server type=api_error code=(null) \"Internal server error\"\n"
	 "state: failed\n"},
	{"anthropic_error_rate",
	 "a rate_limit_error event; the message_stop after it ignored",
	 "START id=msg_R model=claude-sonnet-4-5\n"
	 "USAGE in=5 out=1 cache_read=0 cache_write=0 reasoning=0\n"
	 "ERROR kind=1 class=rate_limit type=rate_limit_error code=(null) \"Number of request tokens has exceeded your per-minute rate limit\"\n"
	 "state: failed\n"},
	{"anthropic_no_event_lines",
	 "no event lines: the data's type decides; stop_sequence is stop",
	 "START id=msg_D model=m\n"
	 "USAGE in=3 out=1 cache_read=0 cache_write=0 reasoning=0\n"
	 "TEXT[0] \"yes\"\n"
	 "USAGE in=3 out=2 cache_read=0 cache_write=0 reasoning=0\n"
	 "FINISH stop raw=stop_sequence\n"
	 "DONE\n"
	 "state: complete\n"},
	{"anthropic_two_tools",
	 "two tool_use blocks after text, an unknown caller field",
	 "START id=msg_2 model=claude-sonnet-4-5\n"
	 "USAGE in=100 out=1 cache_read=0 cache_write=0 reasoning=0\n"
	 "TEXT[0] \"Both.\"\n"
	 "TOOL_START #0 index=1 id=toolu_1 name=get_weather\n"
	 "TOOL_INPUT #0 \"{\\\"city\\\": \\\"Paris\\\"}\"\n"
	 "TOOL_END #0 id=toolu_1 name=get_weather \"{\\\"city\\\": \\\"Paris\\\"}\" valid {\"city\":\"Paris\"}\n"
	 "TOOL_START #1 index=2 id=toolu_2 name=get_time\n"
	 "TOOL_INPUT #1 \"{\\\"tz\\\": \\\"CET\\\"}\"\n"
	 "TOOL_END #1 id=toolu_2 name=get_time \"{\\\"tz\\\": \\\"CET\\\"}\" valid {\"tz\":\"CET\"}\n"
	 "USAGE in=100 out=80 cache_read=0 cache_write=0 reasoning=0\n"
	 "FINISH tool_calls raw=tool_use\n"
	 "DONE\n"
	 "state: complete\n"},
};

#define MSG_START \
	"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_S\",\"type\":\"message\"," \
	"\"role\":\"assistant\",\"content\":[],\"model\":\"m\",\"stop_reason\":null,\"stop_sequence\":null," \
	"\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n"

/* Each stop reason, and where it lands in the vocabulary. */
static void
test_stop_reasons(void)
{
	static const struct
	{
		const char *raw;
		mn_finish	want;
	}			c[] = {
		{"end_turn", MN_FINISH_STOP},
		{"stop_sequence", MN_FINISH_STOP},
		{"max_tokens", MN_FINISH_LENGTH},
		{"model_context_window_exceeded", MN_FINISH_LENGTH},
		{"tool_use", MN_FINISH_TOOL_CALLS},
		{"pause_turn", MN_FINISH_PAUSE},
		{"refusal", MN_FINISH_REFUSAL},
		{"something_new", MN_FINISH_OTHER},
	};

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++)
	{
		char		bytes[1024];
		rec			r = {0};
		mn_stream  *s = mn_stream_new(MN_PROVIDER_ANTHROPIC, NULL, rec_delta, &r);
		const char *raw = NULL;
		mn_stream_state st;
		int			n;

		n = snprintf(bytes, sizeof(bytes), MSG_START
					 "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"%s\","
					 "\"stop_sequence\":null},\"usage\":{\"output_tokens\":3}}\n\n"
					 "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n", c[i].raw);
		mn_stream_feed(s, bytes, (size_t) n);
		st = mn_stream_end(s);
		ok(st == MN_STREAM_COMPLETE && mn_stream_finish(s, &raw) == c[i].want &&
		   raw != NULL && strcmp(raw, c[i].raw) == 0,
		   "stop_reason %s is %s, the raw word kept", c[i].raw, mn_finish_name(c[i].want));
		mn_stream_free(s);
		free(r.p);
	}
}

static mn_stream *
run(const char *bytes, size_t len, const mn_stream_limits *lim, rec *r)
{
	mn_stream  *s = mn_stream_new(MN_PROVIDER_ANTHROPIC, lim, rec_delta, r);

	if (s == NULL)
		bail_out("mn_stream_new failed");
	mn_stream_feed(s, bytes, len);
	mn_stream_end(s);
	return s;
}

static void
test_accessors(void)
{
	rec			r = {0};
	mn_stream  *s = run(anthropic_thinking, sizeof(anthropic_thinking) - 1, NULL, &r);
	mnemo_tokens u;
	const mn_stream_error *e;

	ok(mn_stream_usage(s, &u) && u.input == 50 && u.output == 120 && u.cache_read == 2000 &&
	   u.cache_write == 1000 && u.reasoning == 0,
	   "usage: input and cache counts from message_start, output from message_delta");
	is_int(mn_stream_state_of(s), MN_STREAM_COMPLETE, "complete after message_stop");
	mn_stream_free(s);
	free(r.p);

	memset(&r, 0, sizeof(r));
	s = run(anthropic_error_midstream, sizeof(anthropic_error_midstream) - 1, NULL, &r);
	e = mn_stream_error_of(s);
	ok(e != NULL && e->kind == MN_STREAM_ERR_PROVIDER && e->errclass == MN_ERRCLASS_OVERLOADED &&
	   strcmp(e->type, "overloaded_error") == 0 && e->code == NULL &&
	   strcmp(e->message, "Overloaded") == 0,
	   "an error event: provider error, overloaded (by its type: the status was 200)");
	mn_stream_free(s);
	free(r.p);

	memset(&r, 0, sizeof(r));
	s = run(anthropic_two_tools, sizeof(anthropic_two_tools) - 1, NULL, &r);
	is_int(mn_stream_tool_calls(s), 2, "two tool calls");
	mn_stream_free(s);
	free(r.p);
}

static void
test_odd_events(void)
{
	static const struct
	{
		const char *bytes;
		const char *want;
		const char *what;
	}			c[] = {
		{"event: error\ndata: overloaded\n\n",
		 "ERROR kind=1 class=other type=(null) code=(null) \"the server reported an error in the stream\"\n"
		 "state: failed\n",
		 "an error event whose data is not JSON is still a provider error"},
		{"event: message_start\ndata: [\"not an object\"]\n\n",
		 "ERROR kind=2 class=other type=(null) code=(null) \"a message_start event is not a JSON object (17 bytes)\"\n"
		 "state: failed\n",
		 "a known event with data that is not an object: malformed"},
		{MSG_START
		 "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":5,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\n\n"
		 "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":6,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{}\"}}\n\n"
		 "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":7}\n\n",
		 "START id=msg_S model=m\nUSAGE in=1 out=1 cache_read=0 cache_write=0 reasoning=0\n"
		 "TEXT[5] \"x\"\nstate: interrupted\n",
		 "text for a block never started is text; input or a stop for no tool is ignored"},
		{MSG_START
		 "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"a\",\"input\":{}}}\n\n"
		 "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"x\\\":1}\"}}\n\n"
		 "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_2\",\"name\":\"b\",\"input\":{}}}\n\n"
		 "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":5}}\n\n"
		 "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
		 "START id=msg_S model=m\nUSAGE in=1 out=1 cache_read=0 cache_write=0 reasoning=0\n"
		 "TOOL_START #0 index=0 id=toolu_1 name=a\nTOOL_INPUT #0 \"{\\\"x\\\":1}\"\n"
		 "TOOL_END #0 id=toolu_1 name=a \"{\\\"x\\\":1}\" valid {\"x\":1}\n"
		 "TOOL_START #1 index=0 id=toolu_2 name=b\n"
		 "USAGE in=1 out=5 cache_read=0 cache_write=0 reasoning=0\nFINISH tool_calls raw=tool_use\n"
		 "TOOL_END #1 id=toolu_2 name=b \"{}\" valid {}\nDONE\nstate: complete\n",
		 "a block index started twice ends the first call; message_stop ends a call left open"},
		{MSG_START
		 "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":null},\"usage\":{\"output_tokens\":null}}\n\n"
		 "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
		 "START id=msg_S model=m\nUSAGE in=1 out=1 cache_read=0 cache_write=0 reasoning=0\nstate: interrupted\n",
		 "null stop_reason and null counts change nothing"},
		{MSG_START
		 "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\ndata: \"index\":0,\n"
		 ": keep-alive in the middle\ndata: \"delta\":{\"type\":\"text_delta\",\"text\":\"hi\"}}\n\n",
		 "START id=msg_S model=m\nUSAGE in=1 out=1 cache_read=0 cache_write=0 reasoning=0\n"
		 "TEXT[0] \"hi\"\nstate: interrupted\n",
		 "an event spread over several data lines, a comment among them, decodes as one"},
		{"event: message\ndata: {\"type\":\"message_stop\"}\n\n",
		 "state: interrupted\n",
		 "an explicit \"message\" event is read by its data's type"},
		{MSG_START
		 "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hm.\"}}\n\n"
		 "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\"}}\n\n"
		 "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1}\n\n",
		 "START id=msg_S model=m\nUSAGE in=1 out=1 cache_read=0 cache_write=0 reasoning=0\n"
		 "TEXT[0] \"Hm.\"\n"
		 "ERROR kind=2 class=other type=(null) code=(null) \"a tool_use block without an id or a name\"\n"
		 "state: failed\n",
		 "a tool_use block without id and name: malformed, the text before it delivered"},
		{MSG_START
		 "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"input\":{}}}\n\n",
		 "START id=msg_S model=m\nUSAGE in=1 out=1 cache_read=0 cache_write=0 reasoning=0\n"
		 "ERROR kind=2 class=other type=(null) code=(null) \"a tool_use block without an id or a name\"\n"
		 "state: failed\n",
		 "a tool_use block with an id and no name: malformed"},
		{MSG_START
		 "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"a\",\"input\":{}}}\n\n"
		 "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n"
		 "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"b\",\"input\":{}}}\n\n",
		 "START id=msg_S model=m\nUSAGE in=1 out=1 cache_read=0 cache_write=0 reasoning=0\n"
		 "TOOL_START #0 index=0 id=toolu_1 name=a\nTOOL_END #0 id=toolu_1 name=a \"{}\" valid {}\n"
		 "ERROR kind=2 class=other type=(null) code=(null) \"two tool calls with the id \\\"toolu_1\\\"\"\n"
		 "state: failed\n",
		 "two tool_use blocks with one id: malformed at the second (the API refuses it back)"},
	};

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++)
	{
		char	   *got = decode_whole(MN_PROVIDER_ANTHROPIC, c[i].bytes, strlen(c[i].bytes));

		is_str(got, c[i].want, "%s", c[i].what);
		free(got);
	}
	{
		static const char nul_name[] = "event: message_stop\0x\ndata: {\"type\":\"message_stop\"}\n\n";
		char	   *got = decode_whole(MN_PROVIDER_ANTHROPIC, nul_name, sizeof(nul_name) - 1);

		is_str(got, "state: interrupted\n",
			   "an event named message_stop, a NUL and more is not message_stop (found by fuzz_sse)");
		free(got);
	}
}

/* ---- the request body ---- */

static const mn_req_tool_call calls_a[] = {
	{"toolu_1", "get_weather", " {\"city\": \"Paris\", \"days\": 123456789012345678901234567890}\n"},
	{"toolu_2", "bash", "{\"cmd\": ls}"},
};
static const mn_req_tool_call calls_b[] = {
	{"toolu_3", "now", NULL},
};

static const mn_req_message conversation[] = {
	{.role = MN_REQ_USER, .text = "Weather in Paris?"},
	{.role = MN_REQ_ASSISTANT, .text = "Checking.", .reasoning = "They want weather.",
	 .reasoning_signature = "EqQBsig", .tool_calls = calls_a, .n_tool_calls = 2},
	{.role = MN_REQ_TOOL_RESULT, .tool_call_id = "toolu_1", .text = "Sunny, 21 C"},
	{.role = MN_REQ_TOOL_RESULT, .tool_call_id = "toolu_2", .text = "ls: bad input", .is_error = true},
	{.role = MN_REQ_USER, .text = "And the time?"},
	{.role = MN_REQ_ASSISTANT, .reasoning = "no signature: not sent", .tool_calls = calls_b,
	 .n_tool_calls = 1},
	{.role = MN_REQ_TOOL_RESULT, .tool_call_id = "toolu_3", .text = ""},
	{.role = MN_REQ_ASSISTANT, .text = ""},
	{.role = MN_REQ_USER, .text = ""},
	{.role = MN_REQ_ASSISTANT, .text = "It is noon."},
	{.role = MN_REQ_USER, .text = "Thanks"},
};

static const char tools[] =
	"[{\"name\":\"get_weather\",\"description\":\"Weather by city\",\"parameters\":{\"type\":\"object\","
	"\"properties\":{\"city\":{\"type\":\"string\"}}}},"
	"{\"type\":\"function\",\"function\":{\"name\":\"bash\",\"parameters\":{\"type\":\"object\"}}},"
	"{\"name\":\"now\",\"input_schema\":{\"type\":\"object\",\"properties\":{}}}]";

static const char expected_body[] =
	"{\"model\":\"claude-sonnet-4-5\",\"max_tokens\":2048,\"system\":\"You are terse.\",\"messages\":["
	"{\"role\":\"user\",\"content\":\"Weather in Paris?\"},"
	"{\"role\":\"assistant\",\"content\":["
	"{\"type\":\"thinking\",\"thinking\":\"They want weather.\",\"signature\":\"EqQBsig\"},"
	"{\"type\":\"text\",\"text\":\"Checking.\"},"
	"{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"get_weather\","
	"\"input\":{\"city\": \"Paris\", \"days\": 123456789012345678901234567890}},"
	"{\"type\":\"tool_use\",\"id\":\"toolu_2\",\"name\":\"bash\",\"input\":{}}]},"
	"{\"role\":\"user\",\"content\":["
	"{\"type\":\"tool_result\",\"tool_use_id\":\"toolu_1\",\"content\":\"Sunny, 21 C\"},"
	"{\"type\":\"tool_result\",\"tool_use_id\":\"toolu_2\",\"content\":\"ls: bad input\",\"is_error\":true},"
	"{\"type\":\"text\",\"text\":\"And the time?\"}]},"
	"{\"role\":\"assistant\",\"content\":["
	"{\"type\":\"tool_use\",\"id\":\"toolu_3\",\"name\":\"now\",\"input\":{}}]},"
	"{\"role\":\"user\",\"content\":["
	"{\"type\":\"tool_result\",\"tool_use_id\":\"toolu_3\",\"content\":\"\"}]},"
	"{\"role\":\"assistant\",\"content\":\"It is noon.\"},"
	"{\"role\":\"user\",\"content\":\"Thanks\"}],"
	"\"tools\":["
	"{\"name\":\"get_weather\",\"description\":\"Weather by city\",\"input_schema\":{\"type\":\"object\","
	"\"properties\":{\"city\":{\"type\":\"string\"}}}},"
	"{\"name\":\"bash\",\"input_schema\":{\"type\":\"object\"}},"
	"{\"name\":\"now\",\"input_schema\":{\"type\":\"object\",\"properties\":{}}}],"
	"\"temperature\":1,\"thinking\":{\"type\":\"enabled\",\"budget_tokens\":1024},\"stream\":true}";

static struct json_object *
get(struct json_object *o, const char *path)
{
	/* a dotted path; numbers index arrays */
	while (*path != '\0' && o != NULL)
	{
		char		tok[64];
		size_t		n = strcspn(path, ".");

		snprintf(tok, sizeof(tok), "%.*s", (int) n, path);
		path += n + (path[n] == '.');
		if (tok[0] >= '0' && tok[0] <= '9')
			o = json_object_is_type(o, json_type_array) ?
				json_object_array_get_idx(o, (size_t) atoi(tok)) : NULL;
		else if (!json_object_object_get_ex(o, tok, &o))
			o = NULL;
	}
	return o;
}

static const char *
sget(struct json_object *o, const char *path)
{
	o = get(o, path);
	return o && json_object_is_type(o, json_type_string) ? json_object_get_string(o) : NULL;
}

static void
test_request(void)
{
	mn_request	req = {
		.model = "claude-sonnet-4-5", .system = "You are terse.",
		.messages = conversation, .n_messages = sizeof(conversation) / sizeof(conversation[0]),
		.tools = tools, .max_output_tokens = 2048, .has_temperature = true, .temperature = 1.0,
		.thinking_budget = 1024,
	};
	char	   *body = NULL,
			   *err = NULL;
	size_t		len = 0;
	struct json_object *o;

	is_int(mn_request_body(MN_PROVIDER_ANTHROPIC, &req, &body, &len, &err), MNEMO_OK,
		   "mn_request_body(Anthropic) builds a body");
	is_str(body, expected_body, "the body is exactly the expected JSON, in the documented field order");
	is_int(len, body ? strlen(body) : 0, "*len is its length");
	o = body ? json_tokener_parse(body) : NULL;
	ok(o != NULL, "the body is valid JSON");
	is_str(sget(o, "model"), "claude-sonnet-4-5", "model");
	is_int(json_object_get_int(get(o, "max_tokens")), 2048, "max_tokens (required)");
	is_str(sget(o, "system"), "You are terse.", "system is a top-level string");
	ok(json_object_get_boolean(get(o, "stream")), "stream: true");
	ok(get(o, "stream_options") == NULL, "no stream_options (OpenAI's)");
	is_str(sget(o, "messages.0.role"), "user", "the first message is the user's, not a system message");
	is_str(sget(o, "messages.0.content"), "Weather in Paris?", "a lone user text keeps the string form");
	is_str(sget(o, "messages.1.content.0.type"), "thinking", "reasoning with a signature is a thinking block");
	is_str(sget(o, "messages.1.content.0.signature"), "EqQBsig", "... carrying its signature");
	is_str(sget(o, "messages.1.content.1.text"), "Checking.", "then the text block");
	is_str(sget(o, "messages.1.content.2.type"), "tool_use", "then a tool_use block");
	is_str(sget(o, "messages.1.content.2.id"), "toolu_1", "... with the call's id");
	is_str(sget(o, "messages.1.content.2.name"), "get_weather", "... and name");
	is_str(sget(o, "messages.1.content.2.input.city"), "Paris", "... and its input as an object");
	ok(strstr(body, "\"days\": 123456789012345678901234567890}") != NULL,
	   "the input is copied as written (blanks around it trimmed, the 30-digit number intact)");
	ok(json_object_object_length(get(o, "messages.1.content.3.input")) == 0,
	   "an input that is not JSON goes as {} (the API needs an object)");
	is_str(sget(o, "messages.2.role"), "user", "tool results go back in a user message");
	is_int(json_object_array_length(get(o, "messages.2.content")), 3,
		   "... one for both results and the user text after them");
	is_str(sget(o, "messages.2.content.0.type"), "tool_result", "a tool_result block");
	is_str(sget(o, "messages.2.content.0.tool_use_id"), "toolu_1", "... with tool_use_id");
	is_str(sget(o, "messages.2.content.0.content"), "Sunny, 21 C", "... and the output as content");
	ok(get(o, "messages.2.content.0.is_error") == NULL, "... and no is_error when it worked");
	ok(json_object_get_boolean(get(o, "messages.2.content.1.is_error")), "is_error: true on a failed tool");
	is_str(sget(o, "messages.2.content.2.text"), "And the time?", "the user's text after the results");
	is_int(json_object_array_length(get(o, "messages.3.content")), 1,
		   "reasoning without a signature is left out");
	ok(strstr(body, "no signature") == NULL, "... entirely");
	is_str(sget(o, "messages.5.content"), "It is noon.",
		   "an empty assistant turn and an empty user turn are left out (the API refuses them)");
	is_int(json_object_array_length(get(o, "messages")), 7, "seven messages in all");
	is_str(sget(o, "tools.0.name"), "get_weather", "tools[0].name");
	is_str(sget(o, "tools.0.description"), "Weather by city", "tools[0].description");
	is_str(sget(o, "tools.0.input_schema.type"), "object", "parameters becomes input_schema");
	is_str(sget(o, "tools.1.name"), "bash", "an OpenAI-shaped definition is converted");
	ok(get(o, "tools.1.type") == NULL && get(o, "tools.1.function") == NULL,
	   "... without its wrapper");
	is_int(json_object_get_int(get(o, "thinking.budget_tokens")), 1024, "thinking.budget_tokens");
	is_str(sget(o, "thinking.type"), "enabled", "thinking.type enabled");
	json_object_put(o);
	free(body);
	free(err);

	req.max_output_tokens = 0;
	is_int(mn_request_body(MN_PROVIDER_ANTHROPIC, &req, &body, NULL, &err), MNEMO_ERR_INVALID_ARGUMENT,
		   "max_output_tokens 0 is refused: Anthropic requires max_tokens");
	is_str(err, "max_output_tokens must be positive (Anthropic requires max_tokens)", "... saying so");
	free(err);

	req.max_output_tokens = 10;
	req.system = "";
	req.tools = NULL;
	req.has_temperature = false;
	req.thinking_budget = 0;
	req.n_messages = 1;
	mn_request_body(MN_PROVIDER_ANTHROPIC, &req, &body, NULL, NULL);
	is_str(body, "{\"model\":\"claude-sonnet-4-5\",\"max_tokens\":10,\"messages\":["
		   "{\"role\":\"user\",\"content\":\"Weather in Paris?\"}],\"stream\":true}",
		   "the smallest body: no system, tools, temperature or thinking");
	free(body);

	/* a user message with images: a text block, then image blocks */
	{
		static const mn_req_image imgs[] = {
			{"image/jpeg", "AAAA", NULL}, {NULL, NULL, "https://example.com/cat.png"}
		};
		mn_req_message im = {.role = MN_REQ_USER,.text = "what is this?",.images = imgs,.n_images = 2};

		req.messages = &im;
		req.n_messages = 1;
		mn_request_body(MN_PROVIDER_ANTHROPIC, &req, &body, NULL, NULL);
		is_str(body, "{\"model\":\"claude-sonnet-4-5\",\"max_tokens\":10,\"messages\":["
			   "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"what is this?\"},"
			   "{\"type\":\"image\",\"source\":{\"type\":\"base64\",\"media_type\":\"image/jpeg\",\"data\":\"AAAA\"}},"
			   "{\"type\":\"image\",\"source\":{\"type\":\"url\",\"url\":\"https://example.com/cat.png\"}}]}],"
			   "\"stream\":true}",
			   "images go as Anthropic image blocks: base64 with its media type, or a URL source");
		free(body);
	}
}

/* ---- HTTP error bodies ---- */

static void
test_http_errors(void)
{
	static const struct
	{
		int			status;
		const char *body;
		const char *message;
		const char *type;
		const char *code;
		mn_errclass errclass;
		bool		retryable;
		const char *what;
	}			c[] = {
		{529, anthropic_529_body, "Overloaded", "overloaded_error", NULL, MN_ERRCLASS_OVERLOADED, true,
		 "the reference's 529: overloaded, retryable"},
		{401, "{\"type\":\"error\",\"error\":{\"type\":\"authentication_error\",\"message\":\"invalid x-api-key\"},"
		 "\"request_id\":\"req_1\"}", "invalid x-api-key", "authentication_error", NULL,
		 MN_ERRCLASS_AUTH, false, "401 authentication_error"},
		{400, "{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\","
		 "\"message\":\"prompt is too long: 215000 tokens > 200000 maximum\"}}",
		 "prompt is too long: 215000 tokens > 200000 maximum", "invalid_request_error", NULL,
		 MN_ERRCLASS_CONTEXT_OVERFLOW, false, "400 prompt is too long: context overflow"},
		{400, "{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"max_tokens: Field required\"}}",
		 "max_tokens: Field required", "invalid_request_error", NULL, MN_ERRCLASS_BAD_REQUEST, false,
		 "400 other invalid request"},
		{402, "{\"type\":\"error\",\"error\":{\"type\":\"billing_error\",\"message\":\"Your credit balance is too low\"}}",
		 "Your credit balance is too low", "billing_error", NULL, MN_ERRCLASS_QUOTA, false, "402 billing_error"},
		{403, "{\"type\":\"error\",\"error\":{\"type\":\"permission_error\",\"message\":\"no access\"}}",
		 "no access", "permission_error", NULL, MN_ERRCLASS_PERMISSION, false, "403 permission_error"},
		{404, "{\"type\":\"error\",\"error\":{\"type\":\"not_found_error\",\"message\":\"model: claude-9\"}}",
		 "model: claude-9", "not_found_error", NULL, MN_ERRCLASS_NOT_FOUND, false, "404 not_found_error"},
		{413, "{\"type\":\"error\",\"error\":{\"type\":\"request_too_large\",\"message\":\"Request exceeds the maximum allowed number of bytes.\"}}",
		 "Request exceeds the maximum allowed number of bytes.", "request_too_large", NULL,
		 MN_ERRCLASS_TOO_LARGE, false, "413 request_too_large"},
		{429, "{\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\",\"message\":\"Number of request tokens has exceeded your per-minute rate limit\"}}",
		 "Number of request tokens has exceeded your per-minute rate limit", "rate_limit_error", NULL,
		 MN_ERRCLASS_RATE_LIMIT, true, "429 rate_limit_error: retryable"},
		{429, "{\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\",\"message\":\"You have reached your specified API usage limits.\","
		 "\"details\":{\"error_code\":\"enforced_spend_limit_reached\"}}}",
		 "You have reached your specified API usage limits.", "rate_limit_error", "enforced_spend_limit_reached",
		 MN_ERRCLASS_QUOTA, false, "429 spend limit (details.error_code): quota, final"},
		{500, "{\"type\":\"error\",\"error\":{\"type\":\"api_error\",\"message\":\"Internal server error\"}}",
		 "Internal server error", "api_error", NULL, MN_ERRCLASS_SERVER, true, "500 api_error"},
		{504, "{\"type\":\"error\",\"error\":{\"type\":\"timeout_error\",\"message\":\"Request timed out\"}}",
		 "Request timed out", "timeout_error", NULL, MN_ERRCLASS_TIMEOUT, true, "504 timeout_error"},
	};

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++)
	{
		mn_http_error e;
		int			rc = mn_http_error_parse(c[i].status, c[i].body, strlen(c[i].body), &e);
		bool		same = rc == MNEMO_OK && e.status == c[i].status &&
			e.message && strcmp(e.message, c[i].message) == 0 &&
			((e.type == NULL && c[i].type == NULL) || (e.type && c[i].type && strcmp(e.type, c[i].type) == 0)) &&
			((e.code == NULL && c[i].code == NULL) || (e.code && c[i].code && strcmp(e.code, c[i].code) == 0)) &&
			e.errclass == c[i].errclass && e.retryable == c[i].retryable;

		ok(same, "HTTP %d, %s: message, type, code, class %s, %sretryable", c[i].status, c[i].what,
		   mn_errclass_name(c[i].errclass), c[i].retryable ? "" : "not ");
		if (!same)
			diag("got message=\"%s\" type=%s code=%s class=%s retryable=%d", e.message ? e.message : "(null)",
				 e.type ? e.type : "(null)", e.code ? e.code : "(null)",
				 mn_errclass_name(e.errclass), e.retryable);
		mn_http_error_clear(&e);
	}
}

int
main(void)
{
	for (size_t i = 0; i < sizeof(goldens) / sizeof(goldens[0]); i++)
		check_golden(&goldens[i], 2000 + (uint32_t) i);
	check_text_chunks("anthropic_text", 2);
	test_stop_reasons();
	test_accessors();
	test_odd_events();
	test_request();
	test_http_errors();
	return tap_done();
}
