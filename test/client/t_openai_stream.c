/*
 * t_openai_stream.c
 *		The OpenAI Chat Completions stream decoder (client/src/stream/openai_stream.c
 *		over client/src/stream/sse.c); the request body and the HTTP error
 *		bodies are t_openai_request.c's.
 *
 * No database.  Every recorded stream of shared/PROVIDERS.md and
 * shared/reference/provider-streaming.md, and one crafted stream per
 * deviation that reference lists, is decoded to a transcript of deltas
 * (test/fuzz/streams.h) that must be exactly the one written here: whole,
 * one byte at a time, split in two at every byte, in random chunkings, and
 * with CRLF and lone-CR line ends.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "../fuzz/streams.h"

static const golden goldens[] = {
	{"openai_text",
	 "PROVIDERS.md text reply: text deltas, stop, usage chunk, DONE",
	 "START id=chatcmpl-1 model=gpt-4o-mini\n"
	 "TEXT[0] \"Hel\"\n"
	 "TEXT[0] \"lo\"\n"
	 "FINISH stop raw=stop\n"
	 "USAGE in=19 out=2 cache_read=0 cache_write=0 reasoning=0\n"
	 "DONE\n"
	 "state: complete\n"},
	{"openai_tool",
	 "PROVIDERS.md tool call: fragments concatenated and parsed at the finish",
	 "START id=chatcmpl-2 model=(null)\n"
	 "TOOL_START #0 index=0 id=call_1 name=bash\n"
	 "TOOL_INPUT #0 \"{\\\"cmd\\\":\"\n"
	 "TOOL_INPUT #0 \"\\\"ls\\\"}\"\n"
	 "TOOL_END #0 id=call_1 name=bash \"{\\\"cmd\\\":\\\"ls\\\"}\" valid {\"cmd\":\"ls\"}\n"
	 "FINISH tool_calls raw=tool_calls\n"
	 "USAGE in=40 out=12 cache_read=0 cache_write=0 reasoning=0\n"
	 "DONE\n"
	 "state: complete\n"},
	{"openai_text_recorded",
	 "recorded text reply with service_tier, obfuscation, usage null",
	 "START id=chatcmpl-A1 model=gpt-4o-2024-08-06\n"
	 "TEXT[0] \"Hello\"\n"
	 "TEXT[0] \" there!\"\n"
	 "FINISH stop raw=stop\n"
	 "USAGE in=14 out=3 cache_read=0 cache_write=0 reasoning=0\n"
	 "DONE\n"
	 "state: complete\n"},
	{"openai_tool_recorded",
	 "recorded tool call, arguments split inside a key",
	 "START id=chatcmpl-B2 model=gpt-4o-2024-08-06\n"
	 "TOOL_START #0 index=0 id=call_4Xzl name=get_weather\n"
	 "TOOL_INPUT #0 \"{\\\"\"\n"
	 "TOOL_INPUT #0 \"city\"\n"
	 "TOOL_INPUT #0 \"\\\":\\\"Paris\\\"}\"\n"
	 "TOOL_END #0 id=call_4Xzl name=get_weather \"{\\\"city\\\":\\\"Paris\\\"}\" valid {\"city\":\"Paris\"}\n"
	 "FINISH tool_calls raw=tool_calls\n"
	 "USAGE in=44 out=16 cache_read=0 cache_write=0 reasoning=0\n"
	 "DONE\n"
	 "state: complete\n"},
	{"openai_error_midstream",
	 "an error chunk after the 200 ends the turn with a provider error, the text so far delivered",
	 "START id=chatcmpl-C3 model=gpt-4o-2024-08-06\n"
	 "TEXT[0] \"Partial\"\n"
	 "ERROR kind=1 class=server type=server_error code=(null) \"The server had an error while processing your request. Sorry about that!\"\n"
	 "state: failed\n"},
	{"llamacpp_text",
	 "llama.cpp: content null in the first chunk, timings, no usage",
	 "START id=chatcmpl-Lx model=qwen2.5-7b\n"
	 "TEXT[0] \"Hello\"\n"
	 "FINISH stop raw=stop\n"
	 "DONE\n"
	 "state: complete\n"},
	{"llamacpp_tool",
	 "llama.cpp tool call (--jinja), whole arguments in one fragment",
	 "START id=chatcmpl-Ly model=qwen2.5-7b\n"
	 "TOOL_START #0 index=0 id=Xk3pQ9 name=get_weather\n"
	 "TOOL_INPUT #0 \"{\\\"city\\\":\\\"Paris\\\"}\"\n"
	 "TOOL_END #0 id=Xk3pQ9 name=get_weather \"{\\\"city\\\":\\\"Paris\\\"}\" valid {\"city\":\"Paris\"}\n"
	 "FINISH tool_calls raw=tool_calls\n"
	 "DONE\n"
	 "state: complete\n"},
	{"llamacpp_error",
	 "llama.cpp mid-stream error with an integer code, then EOF",
	 "ERROR kind=1 class=server type=server_error code=500 \"...\"\n"
	 "state: failed\n"},
	{"vllm_text",
	 "vLLM: finish_reason on the last content chunk, stop_reason next to it",
	 "START id=chatcmpl-9f model=Qwen/Qwen2.5-7B-Instruct\n"
	 "TEXT[0] \"Hello\"\n"
	 "FINISH stop raw=stop\n"
	 "USAGE in=12 out=1 cache_read=0 cache_write=0 reasoning=0\n"
	 "DONE\n"
	 "state: complete\n"},
	{"vllm_error_done",
	 "vLLM: an error then [DONE]: failed, the [DONE] ignored",
	 "ERROR kind=1 class=server type=InternalServerError code=500 \"...\"\n"
	 "state: failed\n"},
	{"ollama_tool",
	 "Ollama: a whole tool call in one chunk, with usage",
	 "START id=chatcmpl-612 model=qwen3:8b\n"
	 "TOOL_START #0 index=0 id=call_k2j4 name=get_weather\n"
	 "TOOL_INPUT #0 \"{\\\"city\\\":\\\"Paris\\\"}\"\n"
	 "TOOL_END #0 id=call_k2j4 name=get_weather \"{\\\"city\\\":\\\"Paris\\\"}\" valid {\"city\":\"Paris\"}\n"
	 "FINISH tool_calls raw=tool_calls\n"
	 "USAGE in=80 out=18 cache_read=0 cache_write=0 reasoning=0\n"
	 "DONE\n"
	 "state: complete\n"},
	{"openrouter_tool",
	 "OpenRouter: keep-alive comments, tool index 1, finish stop read as tool_calls",
	 "START id=gen-1 model=meta-llama/llama-4-maverick\n"
	 "TOOL_START #0 index=1 id=call_a1 name=bash\n"
	 "TOOL_INPUT #0 \"{\\\"cmd\\\":\"\n"
	 "TOOL_INPUT #0 \"\\\"ls -la\\\"}\"\n"
	 "TOOL_END #0 id=call_a1 name=bash \"{\\\"cmd\\\":\\\"ls -la\\\"}\" valid {\"cmd\":\"ls -la\"}\n"
	 "FINISH tool_calls raw=stop\n"
	 "USAGE in=100 out=20 cache_read=0 cache_write=0 reasoning=0\n"
	 "DONE\n"
	 "state: complete\n"},
	{"openai_parallel_interleaved",
	 "parallel calls whose fragments interleave, data: without the space",
	 "START id=chatcmpl-P model=(null)\n"
	 "TOOL_START #0 index=0 id=call_w name=get_weather\n"
	 "TOOL_START #1 index=1 id=call_s name=get_stock_price\n"
	 "TOOL_INPUT #0 \"{\\\"ci\"\n"
	 "TOOL_INPUT #1 \"{\\\"ticker\\\":\"\n"
	 "TOOL_INPUT #0 \"ty\\\": \\\"Paris\\\"}\"\n"
	 "TOOL_INPUT #1 \"\\\"ACME\\\"}\"\n"
	 "TOOL_END #0 id=call_w name=get_weather \"{\\\"city\\\": \\\"Paris\\\"}\" valid {\"city\":\"Paris\"}\n"
	 "TOOL_END #1 id=call_s name=get_stock_price \"{\\\"ticker\\\":\\\"ACME\\\"}\" valid {\"ticker\":\"ACME\"}\n"
	 "FINISH tool_calls raw=tool_calls\n"
	 "USAGE in=60 out=30 cache_read=0 cache_write=0 reasoning=0\n"
	 "DONE\n"
	 "state: complete\n"},
	{"llamacpp_reasoning",
	 "llama.cpp reasoning_content, then content, a keep-alive comment between",
	 "START id=chatcmpl-R model=qwen3-8b\n"
	 "REASONING[0] \"Think\"\n"
	 "REASONING[0] \"ing.\"\n"
	 "TEXT[0] \"Answer\"\n"
	 "FINISH stop raw=stop\n"
	 "DONE\n"
	 "state: complete\n"},
	{"ollama_reasoning",
	 "Ollama delta.reasoning and multi-byte UTF-8 text",
	 "START id=chatcmpl-7 model=qwen3:8b\n"
	 "REASONING[0] \"Hmm\"\n"
	 "TEXT[0] \"Caf\\xc3\\xa9 \\xe2\\x98\\x95 \\xf0\\x9f\\x98\\x80\"\n"
	 "FINISH stop raw=stop\n"
	 "DONE\n"
	 "state: complete\n"},
	{"openai_refusal",
	 "refusal deltas, and stop after a refusal read as refusal",
	 "START id=chatcmpl-F model=gpt-4o\n"
	 "REFUSAL[0] \"I can't \"\n"
	 "REFUSAL[0] \"help with that.\"\n"
	 "FINISH refusal raw=stop\n"
	 "DONE\n"
	 "state: complete\n"},
	{"openai_length",
	 "finish length; cached tokens moved out of input, reasoning tokens kept",
	 "START id=chatcmpl-L model=o4-mini\n"
	 "TEXT[0] \"Once upon\"\n"
	 "FINISH length raw=length\n"
	 "USAGE in=200 out=50 cache_read=800 cache_write=0 reasoning=20\n"
	 "DONE\n"
	 "state: complete\n"},
	{"openai_no_usage",
	 "no usage chunk (no include_usage): complete, no USAGE",
	 "START id=chatcmpl-N model=(null)\n"
	 "TEXT[0] \"Hi\"\n"
	 "FINISH stop raw=stop\n"
	 "DONE\n"
	 "state: complete\n"},
	{"openai_done_without_finish",
	 "[DONE] with no finish reason: interrupted, not complete",
	 "START id=chatcmpl-G model=(null)\n"
	 "TEXT[0] \"Partial\"\n"
	 "state: interrupted\n"},
	{"openai_eof",
	 "the body ends mid-event with no finish and no [DONE]: interrupted, the half event dropped",
	 "START id=chatcmpl-E model=(null)\n"
	 "TEXT[0] \"Partial\"\n"
	 "state: interrupted\n"},
	{"ollama_error_eof",
	 "Ollama after an error: an empty content delta then EOF: interrupted",
	 "START id=chatcmpl-9 model=qwen3:8b\n"
	 "state: interrupted\n"},
	{"openai_content_filter",
	 "finish content_filter",
	 "START id=chatcmpl-C model=(null)\n"
	 "TEXT[0] \"Well\"\n"
	 "FINISH content_filter raw=content_filter\n"
	 "DONE\n"
	 "state: complete\n"},
	{"openai_unknown_finish",
	 "an unknown finish reason is other, the raw word kept",
	 "START id=chatcmpl-U model=(null)\n"
	 "TEXT[0] \"x\"\n"
	 "FINISH other raw=abort\n"
	 "DONE\n"
	 "state: complete\n"},
	{"vllm_continuous_usage",
	 "usage on every chunk (continuous_usage_stats): each delivered, the last the turn's",
	 "START id=chatcmpl-V model=m\n"
	 "USAGE in=12 out=0 cache_read=0 cache_write=0 reasoning=0\n"
	 "TEXT[0] \"Hi\"\n"
	 "USAGE in=12 out=1 cache_read=0 cache_write=0 reasoning=0\n"
	 "TEXT[0] \"!\"\n"
	 "FINISH stop raw=stop\n"
	 "USAGE in=12 out=2 cache_read=0 cache_write=0 reasoning=0\n"
	 "DONE\n"
	 "state: complete\n"},
	{"openai_error_string_code",
	 "an error with a string code: rate_limit class; nothing after it delivered",
	 "START id=chatcmpl-S model=(null)\n"
	 "TEXT[0] \"Par\"\n"
	 "ERROR kind=1 class=rate_limit type=tokens code=rate_limit_exceeded \"Rate limit reached for gpt-4o\"\n"
	 "state: failed\n"},
	{"openai_error_bare_string",
	 "{\"error\": \"text\"}: a provider error with that message",
	 "ERROR kind=1 class=other type=(null) code=(null) \"model runner has unexpectedly stopped\"\n"
	 "state: failed\n"},
	{"vllm_old_error",
	 "vLLM's old top-level error object, integer code; a context-length message",
	 "ERROR kind=1 class=context_overflow type=BadRequestError code=400 \"This model's maximum context length is 4096 tokens.\"\n"
	 "state: failed\n"},
	{"openai_error_event",
	 "a named error event",
	 "ERROR kind=1 class=server type=server_error code=(null) \"boom\"\n"
	 "state: failed\n"},
	{"openai_malformed",
	 "JSON cut short in a data line: a malformed-event error, nothing after it",
	 "START id=chatcmpl-M model=(null)\n"
	 "TEXT[0] \"ok\"\n"
	 "ERROR kind=2 class=other type=(null) code=(null) \"a stream event is not a JSON object (64 bytes)\"\n"
	 "state: failed\n"},
	{"openai_not_object",
	 "JSON that is not an object: a malformed-event error",
	 "ERROR kind=2 class=other type=(null) code=(null) \"a stream event is not a JSON object (5 bytes)\"\n"
	 "state: failed\n"},
	{"openai_bad_arguments",
	 "arguments that are not JSON, or not an object: TOOL_END invalid, not a stream error",
	 "START id=chatcmpl-B model=(null)\n"
	 "TOOL_START #0 index=0 id=call_x name=bash\n"
	 "TOOL_INPUT #0 \"{\\\"cmd\\\": ls}\"\n"
	 "TOOL_START #1 index=1 id=call_y name=bash\n"
	 "TOOL_INPUT #1 \"[1]\"\n"
	 "TOOL_END #0 id=call_x name=bash \"{\\\"cmd\\\": ls}\" invalid\n"
	 "TOOL_END #1 id=call_y name=bash \"[1]\" invalid\n"
	 "FINISH tool_calls raw=tool_calls\n"
	 "DONE\n"
	 "state: complete\n"},
	{"ollama_same_index",
	 "two whole calls under one index, told apart by id; empty arguments read as {}",
	 "START id=chatcmpl-2 model=qwen3:8b\n"
	 "TOOL_START #0 index=0 id=call_one name=read\n"
	 "TOOL_INPUT #0 \"{\\\"path\\\":\\\"a\\\"}\"\n"
	 "TOOL_START #1 index=0 id=call_two name=now\n"
	 "TOOL_END #0 id=call_one name=read \"{\\\"path\\\":\\\"a\\\"}\" valid {\"path\":\"a\"}\n"
	 "TOOL_END #1 id=call_two name=now \"{}\" valid {}\n"
	 "FINISH tool_calls raw=tool_calls\n"
	 "DONE\n"
	 "state: complete\n"},
	{"openai_function_call",
	 "the deprecated function_call delta is a tool call",
	 "START id=chatcmpl-O model=(null)\n"
	 "TOOL_START #0 index=-2 id=call_0 name=lookup\n"
	 "TOOL_INPUT #0 \"{\\\"q\\\":1}\"\n"
	 "TOOL_END #0 id=call_0 name=lookup \"{\\\"q\\\":1}\" valid {\"q\":1}\n"
	 "FINISH tool_calls raw=function_call\n"
	 "DONE\n"
	 "state: complete\n"},
	{"openai_odd_tool",
	 "a call without id gets call_0, its start waits for the name; choice 1 ignored; empty event ignored",
	 "START id=chatcmpl-Q model=(null)\n"
	 "TOOL_START #0 index=0 id=call_0 name=f\n"
	 "TOOL_INPUT #0 \"{\\\"a\\\":\"\n"
	 "TOOL_INPUT #0 \"1}\"\n"
	 "TOOL_END #0 id=call_0 name=f \"{\\\"a\\\":1}\" valid {\"a\":1}\n"
	 "FINISH tool_calls raw=tool_calls\n"
	 "DONE\n"
	 "state: complete\n"},
	{"openai_tool_no_finish",
	 "a tool call and [DONE] without a finish: the call ends, the turn is interrupted",
	 "START id=chatcmpl-T model=(null)\n"
	 "TOOL_START #0 index=0 id=call_t name=bash\n"
	 "TOOL_INPUT #0 \"{}\"\n"
	 "TOOL_END #0 id=call_t name=bash \"{}\" valid {}\n"
	 "state: interrupted\n"},
};

/* ---- the stream's accessors and states ---- */

static mn_stream *
run(const char *bytes, size_t len, const mn_stream_limits *lim, rec *r)
{
	mn_stream  *s = mn_stream_new(MN_PROVIDER_OPENAI, lim, rec_delta, r);

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
	mn_stream  *s = run(openai_length, sizeof(openai_length) - 1, NULL, &r);
	mnemo_tokens u;
	const char *raw = NULL;

	is_int(mn_stream_state_of(s), MN_STREAM_COMPLETE, "a finished reply's state is complete");
	ok(mn_stream_usage(s, &u) && u.input == 200 && u.output == 50 && u.cache_read == 800 &&
	   u.cache_write == 0 && u.reasoning == 20,
	   "mn_stream_usage: input 1000 - 800 cached = 200, output 50, cache_read 800, reasoning 20");
	is_int(mn_stream_finish(s, &raw), MN_FINISH_LENGTH, "mn_stream_finish: length");
	is_str(raw, "length", "... and the raw word");
	ok(mn_stream_error_of(s) == NULL, "no error on a complete stream");
	is_int(mn_stream_tool_calls(s), 0, "no tool calls");
	is_int(mn_stream_stop_value(s), 0, "not stopped by the callback");
	mn_stream_free(s);
	free(r.p);

	memset(&r, 0, sizeof(r));
	s = run(openai_no_usage, sizeof(openai_no_usage) - 1, NULL, &r);
	ok(!mn_stream_usage(s, &u) && u.input == 0 && u.output == 0,
	   "mn_stream_usage is false (and zeros) when the server sent no usage");
	mn_stream_free(s);
	free(r.p);

	memset(&r, 0, sizeof(r));
	s = run(openai_error_string_code, sizeof(openai_error_string_code) - 1, NULL, &r);
	{
		const mn_stream_error *e = mn_stream_error_of(s);

		is_int(mn_stream_state_of(s), MN_STREAM_FAILED, "an error chunk: state failed");
		ok(e != NULL && e->kind == MN_STREAM_ERR_PROVIDER && e->errclass == MN_ERRCLASS_RATE_LIMIT &&
		   strcmp(e->type, "tokens") == 0 && strcmp(e->code, "rate_limit_exceeded") == 0 &&
		   strcmp(e->message, "Rate limit reached for gpt-4o") == 0,
		   "mn_stream_error_of: provider error, rate_limit, its type, code and message");
	}
	mn_stream_free(s);
	free(r.p);

	memset(&r, 0, sizeof(r));
	s = run(openai_parallel_interleaved, sizeof(openai_parallel_interleaved) - 1, NULL, &r);
	is_int(mn_stream_tool_calls(s), 2, "mn_stream_tool_calls counts the parallel calls");
	mn_stream_free(s);
	free(r.p);

	ok(mn_stream_new((mn_provider) 99, NULL, rec_delta, &r) == NULL,
	   "mn_stream_new refuses an unknown provider");
	is_str(mn_finish_name(MN_FINISH_TOOL_CALLS), "tool_calls", "mn_finish_name(TOOL_CALLS)");
	ok(mn_finish_name(MN_FINISH_NONE) == NULL, "mn_finish_name(NONE) is NULL");
	is_str(mn_stream_state_name(MN_STREAM_INTERRUPTED), "interrupted", "mn_stream_state_name");
}

/* The caller stops the stream (cancel, or a part it could not persist). */
static void
test_stop(void)
{
	rec			r = {0};
	mn_stream  *s = mn_stream_new(MN_PROVIDER_OPENAI, NULL, rec_delta, &r);
	mn_stream_state st;

	r.stop_at = 2;
	st = mn_stream_feed(s, openai_text, 700);
	is_int(st, MN_STREAM_STOPPED, "a callback returning non-zero stops the stream: feed says stopped");
	is_int(mn_stream_stop_value(s), 42, "mn_stream_stop_value is what the callback returned");
	st = mn_stream_feed(s, openai_text + 700, sizeof(openai_text) - 1 - 700);
	is_int(st, MN_STREAM_STOPPED, "later bytes are ignored");
	is_int(mn_stream_end(s), MN_STREAM_STOPPED, "mn_stream_end keeps stopped (not interrupted)");
	is_str(r.p, "START id=chatcmpl-1 model=gpt-4o-mini\nTEXT[0] \"Hel\"\n",
		   "no delta after the one that stopped it");
	mn_stream_free(s);
	free(r.p);

	/* after the end, bytes change nothing */
	memset(&r, 0, sizeof(r));
	s = mn_stream_new(MN_PROVIDER_OPENAI, NULL, rec_delta, &r);
	mn_stream_feed(s, openai_text, 300);
	is_int(mn_stream_end(s), MN_STREAM_INTERRUPTED, "mn_stream_end while open: interrupted");
	is_int(mn_stream_feed(s, openai_text + 300, sizeof(openai_text) - 1 - 300),
		   MN_STREAM_INTERRUPTED, "feeding after the end does nothing");
	is_int(r.ndeltas, 1, "... and delivers nothing (START was all before it)");
	mn_stream_free(s);
	free(r.p);
}

/* Limits: what a hostile server can make the stream hold. */
static void
test_limits(void)
{
	rec			r = {0};
	mn_stream_limits lim = {.max_event = 200};
	mn_stream  *s = run(openai_text_recorded, sizeof(openai_text_recorded) - 1, &lim, &r);
	const mn_stream_error *e = mn_stream_error_of(s);

	ok(e != NULL && e->kind == MN_STREAM_ERR_TOO_LARGE,
	   "an event over max_event fails the stream with a too-large error (%s)", e ? e->message : "none");
	mn_stream_free(s);
	free(r.p);

	memset(&r, 0, sizeof(r));
	lim = (mn_stream_limits) {.max_tool_input = 10};
	s = run(openai_tool_recorded, sizeof(openai_tool_recorded) - 1, &lim, &r);
	e = mn_stream_error_of(s);
	ok(e != NULL && e->kind == MN_STREAM_ERR_TOO_LARGE && strstr(r.p, "TOOL_END") == NULL,
	   "a tool input over max_tool_input (16 bytes > 10) fails the stream before its end");
	mn_stream_free(s);
	free(r.p);

	memset(&r, 0, sizeof(r));
	lim = (mn_stream_limits) {.max_tool_calls = 1};
	s = run(openai_parallel_interleaved, sizeof(openai_parallel_interleaved) - 1, &lim, &r);
	e = mn_stream_error_of(s);
	ok(e != NULL && e->kind == MN_STREAM_ERR_TOO_LARGE && strstr(r.p, "TOOL_START #1") == NULL,
	   "a second call over max_tool_calls 1 fails the stream");
	mn_stream_free(s);
	free(r.p);
}

/* Data that json-c must not choke on, and text that must arrive whole. */
static void
test_odd_data(void)
{
	static const struct
	{
		const char *bytes;
		size_t		len;
		const char *want;
		const char *what;
	}			c[] = {
		{"data: {\"choices\":[{\"delta\":{\"content\":\"a\\u0000b\"}}]}\n\ndata: [DONE]\n\n", 0,
		 "START id=(null) model=(null)\nTEXT[0] \"a\\x00b\"\nstate: interrupted\n",
		 "\\u0000 in content: the text keeps it, with its length (choice without index is 0)"},
		{"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\\ud800!\"}}]}\n\n", 0,
		 "START id=(null) model=(null)\nTEXT[0] \"\\xef\\xbf\\xbd!\"\nstate: interrupted\n",
		 "a lone surrogate escape arrives as U+FFFD: text is always valid UTF-8"},
		{"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\xff\"}}]}\n\n", 0,
		 "START id=(null) model=(null)\nTEXT[0] \"\\xef\\xbf\\xbd\"\nstate: interrupted\n",
		 "an invalid byte on the wire arrives as U+FFFD"},
		{"data: {\"a\":\0}\n\n", 15,
		 "ERROR kind=2 class=other type=(null) code=(null) \"a stream event is not a JSON object (7 bytes)\"\nstate: failed\n",
		 "a NUL byte in a data line: malformed"},
		{"event: ping\ndata: {}\n\nevent: whatever\ndata: [1\n\ndata: [DONE]\n\n", 0,
		 "state: interrupted\n",
		 "events with another name than message (or error) are ignored"},
		{"data:   [DONE]  \n\n", 0, "state: interrupted\n", "blanks around [DONE] are allowed"},
		{"data: {\"choices\":\ndata: [{\"index\":0,\"delta\":{\"content\":\"hi\"},\n"
		 "data: \"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n", 0,
		 "START id=(null) model=(null)\nTEXT[0] \"hi\"\nFINISH stop raw=stop\nDONE\nstate: complete\n",
		 "a chunk spread over several data lines (joined with LF) decodes as one"},
		{"data: {\"choices\":null,\"usage\":{\"prompt_tokens\":-5,\"completion_tokens\":2.0}}\n\n"
		 "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":7,\"tool_calls\":{}},\"finish_reason\":3}]}\n\n", 0,
		 "START id=(null) model=(null)\nUSAGE in=0 out=2 cache_read=0 cache_write=0 reasoning=0\nstate: interrupted\n",
		 "fields of the wrong type are ignored, a negative count reads 0, 2.0 reads 2"},
		{"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"ca\",\"function\":{\"arguments\":\"{}\"}},"
		 "{\"index\":1,\"id\":\"cb\",\"function\":{\"name\":\"b\",\"arguments\":\"{}\"}}]}}]}\n\n"
		 "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"name\":\"a\"}}]},\"finish_reason\":\"tool_calls\"}]}\n\n", 0,
		 "START id=(null) model=(null)\nTOOL_START #0 index=1 id=cb name=b\nTOOL_INPUT #0 \"{}\"\n"
		 "TOOL_START #1 index=0 id=ca name=a\nTOOL_INPUT #1 \"{}\"\n"
		 "TOOL_END #1 id=ca name=a \"{}\" valid {}\nTOOL_END #0 id=cb name=b \"{}\" valid {}\n"
		 "FINISH tool_calls raw=tool_calls\nstate: interrupted\n",
		 "calls are numbered as they start: a later call whose name comes first is #0 (found by fuzz_openai)"},
		{"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c\",\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"a\\\":1} x\"}}]},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n", 0,
		 "START id=(null) model=(null)\nTOOL_START #0 index=0 id=c name=f\nTOOL_INPUT #0 \"{\\\"a\\\":1} x\"\n"
		 "TOOL_END #0 id=c name=f \"{\\\"a\\\":1} x\" invalid\nFINISH tool_calls raw=tool_calls\nDONE\nstate: complete\n",
		 "tool input with trailing garbage is invalid (strict: one JSON object)"},
		{"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c\",\"function\":{\"name\":\"f\",\"arguments\":\"{'a':1,}\"}}]},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n", 0,
		 "START id=(null) model=(null)\nTOOL_START #0 index=0 id=c name=f\nTOOL_INPUT #0 \"{'a':1,}\"\n"
		 "TOOL_END #0 id=c name=f \"{'a':1,}\" invalid\nFINISH tool_calls raw=tool_calls\nDONE\nstate: complete\n",
		 "single quotes and a trailing comma are not JSON for a tool input"},
		{"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Let me.\"}}]}\n\n"
		 "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_x\",\"type\":\"function\",\"function\":{\"arguments\":\"{}\"}}]}}]}\n\n"
		 "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n", 0,
		 "START id=(null) model=(null)\nTEXT[0] \"Let me.\"\n"
		 "ERROR kind=2 class=other type=(null) code=(null) \"a tool call without a name\"\nstate: failed\n",
		 "a tool call that never gets a name: malformed, the text before it delivered"},
		{"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_d\",\"function\":{\"name\":\"a\",\"arguments\":\"{}\"}},"
		 "{\"index\":1,\"id\":\"call_d\",\"function\":{\"name\":\"b\",\"arguments\":\"{}\"}}]}}]}\n\n"
		 "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n", 0,
		 "START id=(null) model=(null)\nTOOL_START #0 index=0 id=call_d name=a\nTOOL_INPUT #0 \"{}\"\n"
		 "ERROR kind=2 class=other type=(null) code=(null) \"two tool calls with the id \\\"call_d\\\"\"\nstate: failed\n",
		 "two calls with one id in a reply: malformed at the second"},
	};

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++)
	{
		char	   *got = decode_whole(MN_PROVIDER_OPENAI, c[i].bytes,
									   c[i].len ? c[i].len : strlen(c[i].bytes));

		is_str(got, c[i].want, "%s", c[i].what);
		free(got);
	}

	/* nesting deeper than the parser's limit */
	{
		size_t		depth = 5000,
					len = 0;
		char	   *deep = malloc(depth * 2 + 32);
		char	   *got;

		memcpy(deep, "data: ", 6);
		len = 6;
		for (size_t i = 0; i < depth; i++)
			deep[len++] = '[';
		for (size_t i = 0; i < depth; i++)
			deep[len++] = ']';
		deep[len++] = '\n';
		deep[len++] = '\n';
		got = decode_whole(MN_PROVIDER_OPENAI, deep, len);
		ok(strstr(got, "ERROR kind=2") != NULL && strstr(got, "state: failed") != NULL,
		   "5000 nested arrays: a malformed-event error, no crash");
		free(got);
		free(deep);
	}
}

int
main(void)
{
	for (size_t i = 0; i < sizeof(goldens) / sizeof(goldens[0]); i++)
		check_golden(&goldens[i], 1000 + (uint32_t) i);
	check_text_chunks("openai_text", 2);
	test_accessors();
	test_stop();
	test_limits();
	test_odd_data();
	return tap_done();
}
