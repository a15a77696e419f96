/*
 * streams.h
 *		Provider byte streams for the streaming tests and the fuzz corpus,
 *		and a recorder that writes the deltas a stream decodes as text.
 *
 * The recorded streams are copied byte for byte from shared/PROVIDERS.md
 * and shared/reference/provider-streaming.md (which cut them down from the
 * official SDKs' recorded fixtures and the local servers' code); the HTTP
 * header lines of two of them are left out, as the transport strips them.
 * The crafted ones reproduce, one each, the deviations that reference
 * lists.  Used by test/client/t_openai_stream.c, t_anthropic_stream.c and
 * test/fuzz/make_corpus.c (which writes the seed corpus from them).
 */
#ifndef MNEMO_TEST_STREAMS_H
#define MNEMO_TEST_STREAMS_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "../../client/src/stream/stream.h"

#define MAYBE_UNUSED __attribute__((unused))

/* ========================================================================
 * Recorded streams
 * ======================================================================== */

/* PROVIDERS.md, OpenAI text reply */
static const char openai_text[] =
	"data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1730000000,\"model\":\"gpt-4o-mini\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":null}]}\n"
	"\n"
	"data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1730000000,\"model\":\"gpt-4o-mini\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"},\"finish_reason\":null}]}\n"
	"\n"
	"data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1730000000,\"model\":\"gpt-4o-mini\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lo\"},\"finish_reason\":null}]}\n"
	"\n"
	"data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1730000000,\"model\":\"gpt-4o-mini\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n"
	"\n"
	"data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1730000000,\"model\":\"gpt-4o-mini\",\"choices\":[],\"usage\":{\"prompt_tokens\":19,\"completion_tokens\":2,\"total_tokens\":21,\"prompt_tokens_details\":{\"cached_tokens\":0},\"completion_tokens_details\":{\"reasoning_tokens\":0}}}\n"
	"\n"
	"data: [DONE]\n"
	"\n";

/* PROVIDERS.md, OpenAI tool call */
static const char openai_tool[] =
	"data: {\"id\":\"chatcmpl-2\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"bash\",\"arguments\":\"\"}}]},\"finish_reason\":null}]}\n"
	"\n"
	"data: {\"id\":\"chatcmpl-2\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"cmd\\\":\"}}]},\"finish_reason\":null}]}\n"
	"\n"
	"data: {\"id\":\"chatcmpl-2\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"\\\"ls\\\"}\"}}]},\"finish_reason\":null}]}\n"
	"\n"
	"data: {\"id\":\"chatcmpl-2\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n"
	"\n"
	"data: {\"id\":\"chatcmpl-2\",\"object\":\"chat.completion.chunk\",\"choices\":[],\"usage\":{\"prompt_tokens\":40,\"completion_tokens\":12,\"total_tokens\":52}}\n"
	"\n"
	"data: [DONE]\n"
	"\n";

/* PROVIDERS.md, Anthropic text reply */
static const char anthropic_text[] =
	"event: message_start\n"
	"data: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"claude-sonnet-4-5\",\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":25,\"cache_creation_input_tokens\":0,\"cache_read_input_tokens\":0,\"output_tokens\":1}}}\n"
	"\n"
	"event: content_block_start\n"
	"data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n"
	"\n"
	"event: ping\n"
	"data: {\"type\":\"ping\"}\n"
	"\n"
	"event: content_block_delta\n"
	"data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hel\"}}\n"
	"\n"
	"event: content_block_delta\n"
	"data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"lo\"}}\n"
	"\n"
	"event: content_block_stop\n"
	"data: {\"type\":\"content_block_stop\",\"index\":0}\n"
	"\n"
	"event: message_delta\n"
	"data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":2}}\n"
	"\n"
	"event: message_stop\n"
	"data: {\"type\":\"message_stop\"}\n"
	"\n";

/* PROVIDERS.md, Anthropic tool call (from its content_block_start) */
static const char anthropic_tool[] =
	"event: content_block_start\n"
	"data: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"bash\",\"input\":{}}}\n"
	"\n"
	"event: content_block_delta\n"
	"data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"cmd\\\":\"}}\n"
	"\n"
	"event: content_block_delta\n"
	"data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"\\\"ls\\\"}\"}}\n"
	"\n"
	"event: content_block_stop\n"
	"data: {\"type\":\"content_block_stop\",\"index\":1}\n"
	"\n"
	"event: message_delta\n"
	"data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":30}}\n"
	"\n"
	"event: message_stop\n"
	"data: {\"type\":\"message_stop\"}\n"
	"\n";

/* provider-streaming.md 1.3, text reply with include_usage */
static const char openai_text_recorded[] =
	"data: {\"id\":\"chatcmpl-A1\",\"object\":\"chat.completion.chunk\",\"created\":1727346168,\"model\":\"gpt-4o-2024-08-06\",\"service_tier\":\"default\",\"system_fingerprint\":\"fp_50\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\",\"refusal\":null},\"logprobs\":null,\"finish_reason\":null}],\"usage\":null,\"obfuscation\":\"q3\"}\n"
	"\n"
	"data: {\"id\":\"chatcmpl-A1\",\"object\":\"chat.completion.chunk\",\"created\":1727346168,\"model\":\"gpt-4o-2024-08-06\",\"service_tier\":\"default\",\"system_fingerprint\":\"fp_50\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hello\"},\"logprobs\":null,\"finish_reason\":null}],\"usage\":null,\"obfuscation\":\"Yh7\"}\n"
	"\n"
	"data: {\"id\":\"chatcmpl-A1\",\"object\":\"chat.completion.chunk\",\"created\":1727346168,\"model\":\"gpt-4o-2024-08-06\",\"service_tier\":\"default\",\"system_fingerprint\":\"fp_50\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\" there!\"},\"logprobs\":null,\"finish_reason\":null}],\"usage\":null,\"obfuscation\":\"eL\"}\n"
	"\n"
	"data: {\"id\":\"chatcmpl-A1\",\"object\":\"chat.completion.chunk\",\"created\":1727346168,\"model\":\"gpt-4o-2024-08-06\",\"service_tier\":\"default\",\"system_fingerprint\":\"fp_50\",\"choices\":[{\"index\":0,\"delta\":{},\"logprobs\":null,\"finish_reason\":\"stop\"}],\"usage\":null,\"obfuscation\":\"a\"}\n"
	"\n"
	"data: {\"id\":\"chatcmpl-A1\",\"object\":\"chat.completion.chunk\",\"created\":1727346168,\"model\":\"gpt-4o-2024-08-06\",\"service_tier\":\"default\",\"system_fingerprint\":\"fp_50\",\"choices\":[],\"usage\":{\"prompt_tokens\":14,\"completion_tokens\":3,\"total_tokens\":17,\"prompt_tokens_details\":{\"cached_tokens\":0,\"audio_tokens\":0},\"completion_tokens_details\":{\"reasoning_tokens\":0,\"audio_tokens\":0,\"accepted_prediction_tokens\":0,\"rejected_prediction_tokens\":0}}}\n"
	"\n"
	"data: [DONE]\n"
	"\n";

/* provider-streaming.md 1.4, tool-call reply (recorded shape) */
static const char openai_tool_recorded[] =
	"data: {\"id\":\"chatcmpl-B2\",\"object\":\"chat.completion.chunk\",\"created\":1727346182,\"model\":\"gpt-4o-2024-08-06\",\"system_fingerprint\":\"fp_14\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"index\":0,\"id\":\"call_4Xzl\",\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"arguments\":\"\"}}],\"refusal\":null},\"logprobs\":null,\"finish_reason\":null}]}\n"
	"\n"
	"data: {\"id\":\"chatcmpl-B2\",\"object\":\"chat.completion.chunk\",\"created\":1727346182,\"model\":\"gpt-4o-2024-08-06\",\"system_fingerprint\":\"fp_14\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"\"}}]},\"logprobs\":null,\"finish_reason\":null}]}\n"
	"\n"
	"data: {\"id\":\"chatcmpl-B2\",\"object\":\"chat.completion.chunk\",\"created\":1727346182,\"model\":\"gpt-4o-2024-08-06\",\"system_fingerprint\":\"fp_14\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"city\"}}]},\"logprobs\":null,\"finish_reason\":null}]}\n"
	"\n"
	"data: {\"id\":\"chatcmpl-B2\",\"object\":\"chat.completion.chunk\",\"created\":1727346182,\"model\":\"gpt-4o-2024-08-06\",\"system_fingerprint\":\"fp_14\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"\\\":\\\"Paris\\\"}\"}}]},\"logprobs\":null,\"finish_reason\":null}]}\n"
	"\n"
	"data: {\"id\":\"chatcmpl-B2\",\"object\":\"chat.completion.chunk\",\"created\":1727346182,\"model\":\"gpt-4o-2024-08-06\",\"system_fingerprint\":\"fp_14\",\"choices\":[{\"index\":0,\"delta\":{},\"logprobs\":null,\"finish_reason\":\"tool_calls\"}]}\n"
	"\n"
	"data: {\"id\":\"chatcmpl-B2\",\"object\":\"chat.completion.chunk\",\"created\":1727346182,\"model\":\"gpt-4o-2024-08-06\",\"system_fingerprint\":\"fp_14\",\"choices\":[],\"usage\":{\"prompt_tokens\":44,\"completion_tokens\":16,\"total_tokens\":60,\"completion_tokens_details\":{\"reasoning_tokens\":0}}}\n"
	"\n"
	"data: [DONE]\n"
	"\n";

/* provider-streaming.md 1.5, error after the 200 (no [DONE]) */
static const char openai_error_midstream[] =
	"data: {\"id\":\"chatcmpl-C3\",\"object\":\"chat.completion.chunk\",\"created\":1727346190,\"model\":\"gpt-4o-2024-08-06\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Partial\"},\"logprobs\":null,\"finish_reason\":null}]}\n"
	"\n"
	"data: {\"error\":{\"message\":\"The server had an error while processing your request. Sorry about that!\",\"type\":\"server_error\",\"param\":null,\"code\":null}}\n"
	"\n";

/* provider-streaming.md 2.2, text reply (recorded fixture) */
static const char anthropic_text_recorded[] =
	"event: message_start\n"
	"data: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_4QpJ\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"claude-3-opus-latest\",\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":11,\"output_tokens\":1}}}\n"
	"\n"
	"event: content_block_start\n"
	"data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n"
	"\n"
	"event: ping\n"
	"data: {\"type\": \"ping\"}\n"
	"\n"
	"event: content_block_delta\n"
	"data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hello\"}}\n"
	"\n"
	"event: content_block_delta\n"
	"data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\" there!\"}}\n"
	"\n"
	"event: content_block_stop\n"
	"data: {\"type\":\"content_block_stop\",\"index\":0}\n"
	"\n"
	"event: message_delta\n"
	"data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":6}}\n"
	"\n"
	"event: message_stop\n"
	"data: {\"type\":\"message_stop\"}\n"
	"\n";

/* provider-streaming.md 2.3, text then tool use (recorded fixture) */
static const char anthropic_text_tool_recorded[] =
	"event: message_start\n"
	"data: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_019Q\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-sonnet-4-20250514\",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":377,\"cache_creation_input_tokens\":0,\"cache_read_input_tokens\":0,\"output_tokens\":1,\"service_tier\":\"standard\"}}}\n"
	"\n"
	"event: content_block_start\n"
	"data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n"
	"\n"
	"event: ping\n"
	"data: {\"type\": \"ping\"}\n"
	"\n"
	"event: content_block_delta\n"
	"data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"I'll check the weather in Paris.\"}}\n"
	"\n"
	"event: content_block_stop\n"
	"data: {\"type\":\"content_block_stop\",\"index\":0}\n"
	"\n"
	"event: content_block_start\n"
	"data: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_01NR\",\"name\":\"get_weather\",\"input\":{}}}\n"
	"\n"
	"event: content_block_delta\n"
	"data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"\"}}\n"
	"\n"
	"event: content_block_delta\n"
	"data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"locati\"}}\n"
	"\n"
	"event: content_block_delta\n"
	"data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"on\\\": \\\"Paris\\\"}\"}}\n"
	"\n"
	"event: content_block_stop\n"
	"data: {\"type\":\"content_block_stop\",\"index\":1}\n"
	"\n"
	"event: message_delta\n"
	"data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":65}}\n"
	"\n"
	"event: message_stop\n"
	"data: {\"type\":\"message_stop\"}\n"
	"\n";

/* provider-streaming.md 2.4, error event after the 200 */
static const char anthropic_error_midstream[] =
	"event: message_start\n"
	"data: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_E1\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"claude-sonnet-4-5\",\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":20,\"output_tokens\":1}}}\n"
	"\n"
	"event: content_block_start\n"
	"data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n"
	"\n"
	"event: content_block_delta\n"
	"data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Partial\"}}\n"
	"\n"
	"event: error\n"
	"data: {\"type\": \"error\", \"error\": {\"type\": \"overloaded_error\", \"message\": \"Overloaded\"}}\n"
	"\n";

/* provider-streaming.md 3.1, llama.cpp text */
static const char llamacpp_text[] =
	"data: {\"choices\":[{\"finish_reason\":null,\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":null}}],\"created\":1755000000,\"id\":\"chatcmpl-Lx\",\"model\":\"qwen2.5-7b\",\"system_fingerprint\":\"b6100-abc1234\",\"object\":\"chat.completion.chunk\"}\n"
	"\n"
	"data: {\"choices\":[{\"finish_reason\":null,\"index\":0,\"delta\":{\"content\":\"Hello\"}}],\"created\":1755000000,\"id\":\"chatcmpl-Lx\",\"model\":\"qwen2.5-7b\",\"system_fingerprint\":\"b6100-abc1234\",\"object\":\"chat.completion.chunk\"}\n"
	"\n"
	"data: {\"choices\":[{\"finish_reason\":\"stop\",\"index\":0,\"delta\":{}}],\"created\":1755000000,\"id\":\"chatcmpl-Lx\",\"model\":\"qwen2.5-7b\",\"system_fingerprint\":\"b6100-abc1234\",\"object\":\"chat.completion.chunk\",\"timings\":{\"prompt_n\":12,\"prompt_ms\":40.1,\"predicted_n\":2,\"predicted_ms\":30.2}}\n"
	"\n"
	"data: [DONE]\n"
	"\n";

/* provider-streaming.md 3.1, llama.cpp tool call */
static const char llamacpp_tool[] =
	"data: {\"choices\":[{\"finish_reason\":null,\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":null}}],\"created\":1755000001,\"id\":\"chatcmpl-Ly\",\"model\":\"qwen2.5-7b\",\"system_fingerprint\":\"b6100-abc1234\",\"object\":\"chat.completion.chunk\"}\n"
	"\n"
	"data: {\"choices\":[{\"finish_reason\":null,\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"Xk3pQ9\",\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"arguments\":\"\"}}]}}],\"created\":1755000001,\"id\":\"chatcmpl-Ly\",\"model\":\"qwen2.5-7b\",\"system_fingerprint\":\"b6100-abc1234\",\"object\":\"chat.completion.chunk\"}\n"
	"\n"
	"data: {\"choices\":[{\"finish_reason\":null,\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"city\\\":\\\"Paris\\\"}\"}}]}}],\"created\":1755000001,\"id\":\"chatcmpl-Ly\",\"model\":\"qwen2.5-7b\",\"system_fingerprint\":\"b6100-abc1234\",\"object\":\"chat.completion.chunk\"}\n"
	"\n"
	"data: {\"choices\":[{\"finish_reason\":\"tool_calls\",\"index\":0,\"delta\":{}}],\"created\":1755000001,\"id\":\"chatcmpl-Ly\",\"model\":\"qwen2.5-7b\",\"system_fingerprint\":\"b6100-abc1234\",\"object\":\"chat.completion.chunk\"}\n"
	"\n"
	"data: [DONE]\n"
	"\n";

/* provider-streaming.md 3.1, llama.cpp mid-stream error (then EOF) */
static const char llamacpp_error[] =
	"data: {\"error\":{\"code\":500,\"message\":\"...\",\"type\":\"server_error\"}}\n"
	"\n";

/* provider-streaming.md 3.2, vLLM text, finish on the content chunk */
static const char vllm_text[] =
	"data: {\"id\":\"chatcmpl-9f\",\"object\":\"chat.completion.chunk\",\"created\":1755000002,\"model\":\"Qwen/Qwen2.5-7B-Instruct\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"logprobs\":null,\"finish_reason\":null}]}\n"
	"\n"
	"data: {\"id\":\"chatcmpl-9f\",\"object\":\"chat.completion.chunk\",\"created\":1755000002,\"model\":\"Qwen/Qwen2.5-7B-Instruct\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hello\"},\"logprobs\":null,\"finish_reason\":\"stop\",\"stop_reason\":null}]}\n"
	"\n"
	"data: {\"id\":\"chatcmpl-9f\",\"object\":\"chat.completion.chunk\",\"created\":1755000002,\"model\":\"Qwen/Qwen2.5-7B-Instruct\",\"choices\":[],\"usage\":{\"prompt_tokens\":12,\"total_tokens\":13,\"completion_tokens\":1}}\n"
	"\n"
	"data: [DONE]\n"
	"\n";

/* provider-streaming.md 3.2, vLLM error then [DONE] */
static const char vllm_error_done[] =
	"data: {\"error\":{\"message\":\"...\",\"type\":\"InternalServerError\",\"param\":null,\"code\":500}}\n"
	"\n"
	"data: [DONE]\n"
	"\n";

/* provider-streaming.md 3.3, Ollama whole tool call */
static const char ollama_tool[] =
	"data: {\"id\":\"chatcmpl-612\",\"object\":\"chat.completion.chunk\",\"created\":1755000003,\"model\":\"qwen3:8b\",\"system_fingerprint\":\"fp_ollama\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\",\"tool_calls\":[{\"id\":\"call_k2j4\",\"index\":0,\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"arguments\":\"{\\\"city\\\":\\\"Paris\\\"}\"}}]},\"finish_reason\":null}]}\n"
	"\n"
	"data: {\"id\":\"chatcmpl-612\",\"object\":\"chat.completion.chunk\",\"created\":1755000003,\"model\":\"qwen3:8b\",\"system_fingerprint\":\"fp_ollama\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n"
	"\n"
	"data: {\"id\":\"chatcmpl-612\",\"object\":\"chat.completion.chunk\",\"created\":1755000003,\"model\":\"qwen3:8b\",\"system_fingerprint\":\"fp_ollama\",\"choices\":[],\"usage\":{\"prompt_tokens\":80,\"completion_tokens\":18,\"total_tokens\":98}}\n"
	"\n"
	"data: [DONE]\n"
	"\n";

/* provider-streaming.md 1.5, a 429 with retry-after (the body) */
static const char openai_429_body[] MAYBE_UNUSED =
	"{\"error\":{\"message\":\"Rate limit reached for gpt-4o in organization org-x on tokens per min (TPM): Limit 30000, Used 30000, Requested 1200. Please try again in 2.4s.\",\"type\":\"tokens\",\"param\":null,\"code\":\"rate_limit_exceeded\"}}";

/* provider-streaming.md 2.4, a 529 (the body) */
static const char anthropic_529_body[] MAYBE_UNUSED =
	"{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"},\"request_id\":\"req_012\"}";

/* ========================================================================
 * Crafted streams: one deviation each (provider-streaming.md section 3)
 * ======================================================================== */

#define D(json) "data: " json "\n\n"
#define E(name, json) "event: " name "\ndata: " json "\n\n"

/* OpenRouter: a keep-alive comment, tool-call index starting at 1, and
 * finish_reason "stop" with a tool call; usage on the finish chunk. */
static const char openrouter_tool[] =
	": OPENROUTER PROCESSING\n\n"
	D("{\"id\":\"gen-1\",\"model\":\"meta-llama/llama-4-maverick\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":null}]}")
	": OPENROUTER PROCESSING\n\n"
	D("{\"id\":\"gen-1\",\"model\":\"meta-llama/llama-4-maverick\",\"choices\":[{\"index\":0,\"delta\":{\"content\":null,\"tool_calls\":[{\"index\":1,\"id\":\"call_a1\",\"type\":\"function\",\"function\":{\"name\":\"bash\",\"arguments\":\"{\\\"cmd\\\":\"}}]},\"finish_reason\":null}]}")
	D("{\"id\":\"gen-1\",\"model\":\"meta-llama/llama-4-maverick\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,\"function\":{\"arguments\":\"\\\"ls -la\\\"}\"}}]},\"finish_reason\":null}]}")
	D("{\"id\":\"gen-1\",\"model\":\"meta-llama/llama-4-maverick\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":100,\"completion_tokens\":20,\"total_tokens\":120}}")
	D("[DONE]");

/* Two parallel calls whose fragments interleave (0, 1, 0, 1), some data
 * lines without the optional space. */
static const char openai_parallel_interleaved[] =
	D("{\"id\":\"chatcmpl-P\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"index\":0,\"id\":\"call_w\",\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"arguments\":\"\"}}]},\"finish_reason\":null}]}")
	"data:{\"id\":\"chatcmpl-P\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,\"id\":\"call_s\",\"type\":\"function\",\"function\":{\"name\":\"get_stock_price\",\"arguments\":\"\"}}]},\"finish_reason\":null}]}\n\n"
	"data:{\"id\":\"chatcmpl-P\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"ci\"}}]},\"finish_reason\":null}]}\n\n"
	D("{\"id\":\"chatcmpl-P\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,\"function\":{\"arguments\":\"{\\\"ticker\\\":\"}}]},\"finish_reason\":null}]}")
	D("{\"id\":\"chatcmpl-P\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"ty\\\": \\\"Paris\\\"}\"}}]},\"finish_reason\":null}]}")
	D("{\"id\":\"chatcmpl-P\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,\"function\":{\"arguments\":\"\\\"ACME\\\"}\"}}]},\"finish_reason\":null}]}")
	D("{\"id\":\"chatcmpl-P\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}")
	D("{\"id\":\"chatcmpl-P\",\"choices\":[],\"usage\":{\"prompt_tokens\":60,\"completion_tokens\":30,\"total_tokens\":90}}")
	D("[DONE]");

/* llama.cpp with a reasoning model: reasoning_content, then content; a
 * keep-alive comment between. */
static const char llamacpp_reasoning[] =
	D("{\"choices\":[{\"finish_reason\":null,\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":null}}],\"created\":1755000004,\"id\":\"chatcmpl-R\",\"model\":\"qwen3-8b\",\"object\":\"chat.completion.chunk\"}")
	D("{\"choices\":[{\"finish_reason\":null,\"index\":0,\"delta\":{\"reasoning_content\":\"Think\"}}],\"created\":1755000004,\"id\":\"chatcmpl-R\",\"model\":\"qwen3-8b\",\"object\":\"chat.completion.chunk\"}")
	D("{\"choices\":[{\"finish_reason\":null,\"index\":0,\"delta\":{\"reasoning_content\":\"ing.\"}}],\"created\":1755000004,\"id\":\"chatcmpl-R\",\"model\":\"qwen3-8b\",\"object\":\"chat.completion.chunk\"}")
	": keep-alive\n\n"
	D("{\"choices\":[{\"finish_reason\":null,\"index\":0,\"delta\":{\"content\":\"Answer\"}}],\"created\":1755000004,\"id\":\"chatcmpl-R\",\"model\":\"qwen3-8b\",\"object\":\"chat.completion.chunk\"}")
	D("{\"choices\":[{\"finish_reason\":\"stop\",\"index\":0,\"delta\":{}}],\"created\":1755000004,\"id\":\"chatcmpl-R\",\"model\":\"qwen3-8b\",\"object\":\"chat.completion.chunk\",\"timings\":{\"prompt_n\":5,\"predicted_n\":4}}")
	D("[DONE]");

/* Ollama with a thinking model: delta.reasoning, multi-byte text. */
static const char ollama_reasoning[] =
	D("{\"id\":\"chatcmpl-7\",\"object\":\"chat.completion.chunk\",\"created\":1755000005,\"model\":\"qwen3:8b\",\"system_fingerprint\":\"fp_ollama\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\",\"reasoning\":\"Hmm\"},\"finish_reason\":null}]}")
	D("{\"id\":\"chatcmpl-7\",\"object\":\"chat.completion.chunk\",\"created\":1755000005,\"model\":\"qwen3:8b\",\"system_fingerprint\":\"fp_ollama\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Caf\xc3\xa9 \xe2\x98\x95 \xf0\x9f\x98\x80\"},\"finish_reason\":null}]}")
	D("{\"id\":\"chatcmpl-7\",\"object\":\"chat.completion.chunk\",\"created\":1755000005,\"model\":\"qwen3:8b\",\"system_fingerprint\":\"fp_ollama\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}")
	D("[DONE]");

/* A refusal (OpenAI's structured-output refusal field), then stop. */
static const char openai_refusal[] =
	D("{\"id\":\"chatcmpl-F\",\"object\":\"chat.completion.chunk\",\"model\":\"gpt-4o\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":null,\"refusal\":\"\"},\"finish_reason\":null}]}")
	D("{\"id\":\"chatcmpl-F\",\"object\":\"chat.completion.chunk\",\"model\":\"gpt-4o\",\"choices\":[{\"index\":0,\"delta\":{\"refusal\":\"I can't \"},\"finish_reason\":null}]}")
	D("{\"id\":\"chatcmpl-F\",\"object\":\"chat.completion.chunk\",\"model\":\"gpt-4o\",\"choices\":[{\"index\":0,\"delta\":{\"refusal\":\"help with that.\"},\"finish_reason\":null}]}")
	D("{\"id\":\"chatcmpl-F\",\"object\":\"chat.completion.chunk\",\"model\":\"gpt-4o\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}")
	D("[DONE]");

/* Cut by max tokens; cached and reasoning tokens in the usage chunk;
 * "usage": null on the earlier chunks, as the API documents it. */
static const char openai_length[] =
	D("{\"id\":\"chatcmpl-L\",\"object\":\"chat.completion.chunk\",\"model\":\"o4-mini\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":null}],\"usage\":null}")
	D("{\"id\":\"chatcmpl-L\",\"object\":\"chat.completion.chunk\",\"model\":\"o4-mini\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Once upon\"},\"finish_reason\":null}],\"usage\":null}")
	D("{\"id\":\"chatcmpl-L\",\"object\":\"chat.completion.chunk\",\"model\":\"o4-mini\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"length\"}],\"usage\":null}")
	D("{\"id\":\"chatcmpl-L\",\"object\":\"chat.completion.chunk\",\"model\":\"o4-mini\",\"choices\":[],\"usage\":{\"prompt_tokens\":1000,\"completion_tokens\":50,\"total_tokens\":1050,\"prompt_tokens_details\":{\"cached_tokens\":800,\"audio_tokens\":0},\"completion_tokens_details\":{\"reasoning_tokens\":20}}}")
	D("[DONE]");

/* No stream_options sent (or an old server): no usage at all. */
static const char openai_no_usage[] =
	D("{\"id\":\"chatcmpl-N\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Hi\"},\"finish_reason\":null}]}")
	D("{\"id\":\"chatcmpl-N\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}")
	D("[DONE]");

/* A gateway hiding an upstream failure behind a clean [DONE]. */
static const char openai_done_without_finish[] =
	D("{\"id\":\"chatcmpl-G\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Partial\"},\"finish_reason\":null}]}")
	D("[DONE]");

/* The connection closes mid-reply: no finish, no [DONE], half an event. */
static const char openai_eof[] =
	D("{\"id\":\"chatcmpl-E\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Partial\"},\"finish_reason\":null}]}")
	"data: {\"id\":\"chatcmpl-E\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\" more";

/* Ollama's /v1 writer after an error: an empty content delta, then EOF. */
static const char ollama_error_eof[] =
	D("{\"id\":\"chatcmpl-9\",\"object\":\"chat.completion.chunk\",\"created\":1755000006,\"model\":\"qwen3:8b\",\"system_fingerprint\":\"fp_ollama\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":null}]}");

static const char openai_content_filter[] =
	D("{\"id\":\"chatcmpl-C\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Well\"},\"finish_reason\":null}]}")
	D("{\"id\":\"chatcmpl-C\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"content_filter\"}]}")
	D("[DONE]");

/* A finish reason this code does not know (vLLM's abort). */
static const char openai_unknown_finish[] =
	D("{\"id\":\"chatcmpl-U\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"},\"finish_reason\":\"abort\"}]}")
	D("[DONE]");

/* vLLM with continuous_usage_stats: cumulative usage on every chunk. */
static const char vllm_continuous_usage[] =
	D("{\"id\":\"chatcmpl-V\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"logprobs\":null,\"finish_reason\":null}],\"usage\":{\"prompt_tokens\":12,\"total_tokens\":12,\"completion_tokens\":0}}")
	D("{\"id\":\"chatcmpl-V\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"},\"logprobs\":null,\"finish_reason\":null}],\"usage\":{\"prompt_tokens\":12,\"total_tokens\":13,\"completion_tokens\":1}}")
	D("{\"id\":\"chatcmpl-V\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"!\"},\"logprobs\":null,\"finish_reason\":\"stop\",\"stop_reason\":null}],\"usage\":{\"prompt_tokens\":12,\"total_tokens\":14,\"completion_tokens\":2}}")
	D("[DONE]");

/* Error chunks in every shape: a string code, a bare string, vLLM's old
 * top-level object, and a named error event. */
static const char openai_error_string_code[] =
	D("{\"id\":\"chatcmpl-S\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Par\"},\"finish_reason\":null}]}")
	D("{\"error\":{\"message\":\"Rate limit reached for gpt-4o\",\"type\":\"tokens\",\"param\":null,\"code\":\"rate_limit_exceeded\"}}")
	D("{\"id\":\"chatcmpl-S\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"never seen\"},\"finish_reason\":null}]}");
static const char openai_error_bare_string[] =
	D("{\"error\":\"model runner has unexpectedly stopped\"}");
static const char vllm_old_error[] =
	D("{\"object\":\"error\",\"message\":\"This model's maximum context length is 4096 tokens.\",\"type\":\"BadRequestError\",\"param\":null,\"code\":400}");
static const char openai_error_event[] =
	"event: error\ndata: {\"error\":{\"message\":\"boom\",\"type\":\"server_error\",\"code\":null}}\n\n";

/* Broken data: JSON cut short, and JSON that is not an object. */
static const char openai_malformed[] =
	D("{\"id\":\"chatcmpl-M\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"},\"finish_reason\":null}]}")
	D("{\"id\":\"chatcmpl-M\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}")
	D("{\"id\":\"chatcmpl-M\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"never seen\"},\"finish_reason\":null}]}")
	D("[DONE]");
static const char openai_not_object[] =
	D("[1,2]")
	D("[DONE]");

/* Tool input the model got wrong: not JSON, and JSON but not an object. */
static const char openai_bad_arguments[] =
	D("{\"id\":\"chatcmpl-B\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_x\",\"type\":\"function\",\"function\":{\"name\":\"bash\",\"arguments\":\"{\\\"cmd\\\": ls}\"}},{\"index\":1,\"id\":\"call_y\",\"type\":\"function\",\"function\":{\"name\":\"bash\",\"arguments\":\"[1]\"}}]},\"finish_reason\":null}]}")
	D("{\"id\":\"chatcmpl-B\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}")
	D("[DONE]");

/* Ollama numbering two whole calls with the same index; an empty
 * arguments string (a tool without parameters). */
static const char ollama_same_index[] =
	D("{\"id\":\"chatcmpl-2\",\"model\":\"qwen3:8b\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\",\"tool_calls\":[{\"id\":\"call_one\",\"index\":0,\"type\":\"function\",\"function\":{\"name\":\"read\",\"arguments\":\"{\\\"path\\\":\\\"a\\\"}\"}}]},\"finish_reason\":null}]}")
	D("{\"id\":\"chatcmpl-2\",\"model\":\"qwen3:8b\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\",\"tool_calls\":[{\"id\":\"call_two\",\"index\":0,\"type\":\"function\",\"function\":{\"name\":\"now\",\"arguments\":\"\"}}]},\"finish_reason\":null}]}")
	D("{\"id\":\"chatcmpl-2\",\"model\":\"qwen3:8b\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}")
	D("[DONE]");

/* The deprecated function_call delta of old models. */
static const char openai_function_call[] =
	D("{\"id\":\"chatcmpl-O\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":null,\"function_call\":{\"name\":\"lookup\",\"arguments\":\"\"}},\"finish_reason\":null}]}")
	D("{\"id\":\"chatcmpl-O\",\"choices\":[{\"index\":0,\"delta\":{\"function_call\":{\"arguments\":\"{\\\"q\\\":1}\"}},\"finish_reason\":null}]}")
	D("{\"id\":\"chatcmpl-O\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"function_call\"}]}")
	D("[DONE]");

/* A call with no id, whose name comes after some input; a second choice
 * (n = 2) that is not the reply; an empty keep-alive event. */
static const char openai_odd_tool[] =
	D("{\"id\":\"chatcmpl-Q\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"a\\\":\"}}]},\"finish_reason\":null},{\"index\":1,\"delta\":{\"content\":\"other choice\"},\"finish_reason\":null}]}")
	"data:\n\n"
	D("{\"id\":\"chatcmpl-Q\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"name\":\"f\",\"arguments\":\"1}\"}}]},\"finish_reason\":null}]}")
	D("{\"id\":\"chatcmpl-Q\",\"choices\":[{\"index\":1,\"delta\":{},\"finish_reason\":\"length\"},{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}")
	D("[DONE]");

/* Tool fragments, then [DONE] with no finish reason: the call still ends,
 * the reply is truncated. */
static const char openai_tool_no_finish[] =
	D("{\"id\":\"chatcmpl-T\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_t\",\"type\":\"function\",\"function\":{\"name\":\"bash\",\"arguments\":\"{}\"}}]},\"finish_reason\":null}]}")
	D("[DONE]");

/* Anthropic extended thinking: a thinking block with its signature, then
 * text; cache counts in message_start. */
static const char anthropic_thinking[] =
	E("message_start", "{\"type\":\"message_start\",\"message\":{\"id\":\"msg_T\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"claude-sonnet-4-5\",\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":50,\"cache_creation_input_tokens\":1000,\"cache_read_input_tokens\":2000,\"output_tokens\":1}}}")
	E("content_block_start", "{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\",\"signature\":\"\"}}")
	E("content_block_delta", "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"Let me \"}}")
	E("content_block_delta", "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"think.\"}}")
	E("content_block_delta", "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"signature_delta\",\"signature\":\"EqQBCgIYAhIM\"}}")
	E("content_block_stop", "{\"type\":\"content_block_stop\",\"index\":0}")
	E("content_block_start", "{\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}")
	E("content_block_delta", "{\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"text_delta\",\"text\":\"42\"}}")
	E("content_block_stop", "{\"type\":\"content_block_stop\",\"index\":1}")
	E("message_delta", "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":120}}")
	E("message_stop", "{\"type\":\"message_stop\"}");

/* What the API may add: an unknown event (with data that is not even
 * JSON), server-tool blocks and their input deltas, a citations delta, an
 * unknown delta type; pings everywhere; cumulative input counts in
 * message_delta. */
static const char anthropic_unknown[] =
	E("message_start", "{\"type\":\"message_start\",\"message\":{\"id\":\"msg_U\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"claude-opus-4-1\",\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":10,\"output_tokens\":1}}}")
	E("ping", "{\"type\": \"ping\"}")
	E("content_block_future", "<<not json>>")
	E("content_block_start", "{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"server_tool_use\",\"id\":\"srvtoolu_1\",\"name\":\"web_search\",\"input\":{}}}")
	E("content_block_delta", "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"query\\\": \\\"x\\\"}\"}}")
	E("content_block_stop", "{\"type\":\"content_block_stop\",\"index\":0}")
	E("content_block_start", "{\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"web_search_tool_result\",\"tool_use_id\":\"srvtoolu_1\",\"content\":[]}}")
	E("content_block_stop", "{\"type\":\"content_block_stop\",\"index\":1}")
	E("content_block_start", "{\"type\":\"content_block_start\",\"index\":2,\"content_block\":{\"type\":\"text\",\"text\":\"\",\"citations\":null}}")
	E("content_block_delta", "{\"type\":\"content_block_delta\",\"index\":2,\"delta\":{\"type\":\"citations_delta\",\"citation\":{\"type\":\"web_search_result_location\",\"url\":\"https://example.com\"}}}")
	E("ping", "{\"type\": \"ping\"}")
	E("content_block_delta", "{\"type\":\"content_block_delta\",\"index\":2,\"delta\":{\"type\":\"text_delta\",\"text\":\"Found it.\"}}")
	E("content_block_delta", "{\"type\":\"content_block_delta\",\"index\":2,\"delta\":{\"type\":\"sparkle_delta\",\"sparkle\":true}}")
	E("content_block_stop", "{\"type\":\"content_block_stop\",\"index\":2}")
	E("message_delta", "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":{\"input_tokens\":15,\"cache_read_input_tokens\":5,\"output_tokens\":9,\"server_tool_use\":{\"web_search_requests\":1}}}")
	E("ping", "{\"type\": \"ping\"}")
	E("message_stop", "{\"type\":\"message_stop\"}");

/* llama.cpp's /v1/messages: no ping, a tool_use start block without
 * input, no delta; a second block with its input in the start block. */
static const char anthropic_tool_inputs[] =
	E("message_start", "{\"type\":\"message_start\",\"message\":{\"id\":\"msg_L\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"qwen2.5-7b\",\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":30,\"output_tokens\":0}}}")
	E("content_block_start", "{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_a\",\"name\":\"now\"}}")
	E("content_block_stop", "{\"type\":\"content_block_stop\",\"index\":0}")
	E("content_block_start", "{\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_b\",\"name\":\"read\",\"input\":{\"path\":\"a.txt\"}}}")
	E("content_block_stop", "{\"type\":\"content_block_stop\",\"index\":1}")
	E("content_block_start", "{\"type\":\"content_block_start\",\"index\":2,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_c\",\"name\":\"bash\",\"input\":{}}}")
	E("content_block_delta", "{\"type\":\"content_block_delta\",\"index\":2,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"cmd\\\": ls}\"}}")
	E("content_block_stop", "{\"type\":\"content_block_stop\",\"index\":2}")
	E("message_delta", "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":40}}")
	E("message_stop", "{\"type\":\"message_stop\"}");

/* message_stop with no stop reason before it: truncated. */
static const char anthropic_no_stop_reason[] =
	E("message_start", "{\"type\":\"message_start\",\"message\":{\"id\":\"msg_N\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"claude-sonnet-4-5\",\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":5,\"output_tokens\":1}}}")
	E("content_block_start", "{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}")
	E("content_block_delta", "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi\"}}")
	E("message_stop", "{\"type\":\"message_stop\"}");

/* The connection drops inside a tool call's input. */
static const char anthropic_eof[] =
	E("message_start", "{\"type\":\"message_start\",\"message\":{\"id\":\"msg_E\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"claude-sonnet-4-5\",\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":5,\"output_tokens\":1}}}")
	E("content_block_start", "{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_e\",\"name\":\"bash\",\"input\":{}}}")
	E("content_block_delta", "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"cmd\\\":\"}}")
	"event: content_block_delta\ndata: {\"type\":\"content_block_de";

/* A data line cut short in the middle of the stream. */
static const char anthropic_malformed[] =
	E("message_start", "{\"type\":\"message_start\",\"message\":{\"id\":\"msg_M\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"claude-sonnet-4-5\",\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":5,\"output_tokens\":1}}}")
	E("content_block_start", "{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}")
	E("content_block_delta", "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"ok\"}}")
	E("content_block_delta", "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_del")
	E("content_block_delta", "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"never seen\"}}")
	E("message_stop", "{\"type\":\"message_stop\"}");

/* Other error events: api_error and rate_limit_error. */
static const char anthropic_error_api[] =
	E("error", "{\"type\":\"error\",\"error\":{\"type\":\"api_error\",\"message\":\"Internal server error\"}}");
static const char anthropic_error_rate[] =
	E("message_start", "{\"type\":\"message_start\",\"message\":{\"id\":\"msg_R\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"claude-sonnet-4-5\",\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":5,\"output_tokens\":1}}}")
	E("error", "{\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\",\"message\":\"Number of request tokens has exceeded your per-minute rate limit\"}}")
	E("message_stop", "{\"type\":\"message_stop\"}");

/* A server that leaves out the event lines: the data's type decides. */
static const char anthropic_no_event_lines[] =
	D("{\"type\":\"message_start\",\"message\":{\"id\":\"msg_D\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"m\",\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}")
	D("{\"type\":\"ping\"}")
	D("{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}")
	D("{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"yes\"}}")
	D("{\"type\":\"content_block_stop\",\"index\":0}")
	D("{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"stop_sequence\",\"stop_sequence\":\"END\"},\"usage\":{\"output_tokens\":2}}")
	D("{\"type\":\"message_stop\"}");

/* Two tool calls in one reply, after text (Anthropic's parallel calls). */
static const char anthropic_two_tools[] =
	E("message_start", "{\"type\":\"message_start\",\"message\":{\"id\":\"msg_2\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"claude-sonnet-4-5\",\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":100,\"cache_creation_input_tokens\":0,\"cache_read_input_tokens\":0,\"output_tokens\":1}}}")
	E("content_block_start", "{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}")
	E("content_block_delta", "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Both.\"}}")
	E("content_block_stop", "{\"type\":\"content_block_stop\",\"index\":0}")
	E("content_block_start", "{\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"get_weather\",\"input\":{},\"caller\":{\"type\":\"direct\"}}}")
	E("content_block_delta", "{\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"\"}}")
	E("content_block_delta", "{\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"city\\\": \\\"Paris\\\"}\"}}")
	E("content_block_stop", "{\"type\":\"content_block_stop\",\"index\":1}")
	E("content_block_start", "{\"type\":\"content_block_start\",\"index\":2,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_2\",\"name\":\"get_time\",\"input\":{}}}")
	E("content_block_delta", "{\"type\":\"content_block_delta\",\"index\":2,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"tz\\\": \\\"CET\\\"}\"}}")
	E("content_block_stop", "{\"type\":\"content_block_stop\",\"index\":2}")
	E("message_delta", "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":80}}")
	E("message_stop", "{\"type\":\"message_stop\"}");

#undef D
#undef E

/* ========================================================================
 * The table (for the corpus and for loops over all of them)
 * ======================================================================== */

typedef struct fixture
{
	const char *name;
	mn_provider provider;
	const char *bytes;
	size_t		len;
} fixture;

#define FX(p, v) {#v, p, v, sizeof(v) - 1}

static const fixture fixtures[] MAYBE_UNUSED = {
	FX(MN_PROVIDER_OPENAI, openai_text),
	FX(MN_PROVIDER_OPENAI, openai_tool),
	FX(MN_PROVIDER_OPENAI, openai_text_recorded),
	FX(MN_PROVIDER_OPENAI, openai_tool_recorded),
	FX(MN_PROVIDER_OPENAI, openai_error_midstream),
	FX(MN_PROVIDER_OPENAI, llamacpp_text),
	FX(MN_PROVIDER_OPENAI, llamacpp_tool),
	FX(MN_PROVIDER_OPENAI, llamacpp_error),
	FX(MN_PROVIDER_OPENAI, vllm_text),
	FX(MN_PROVIDER_OPENAI, vllm_error_done),
	FX(MN_PROVIDER_OPENAI, ollama_tool),
	FX(MN_PROVIDER_OPENAI, openrouter_tool),
	FX(MN_PROVIDER_OPENAI, openai_parallel_interleaved),
	FX(MN_PROVIDER_OPENAI, llamacpp_reasoning),
	FX(MN_PROVIDER_OPENAI, ollama_reasoning),
	FX(MN_PROVIDER_OPENAI, openai_refusal),
	FX(MN_PROVIDER_OPENAI, openai_length),
	FX(MN_PROVIDER_OPENAI, openai_no_usage),
	FX(MN_PROVIDER_OPENAI, openai_done_without_finish),
	FX(MN_PROVIDER_OPENAI, openai_eof),
	FX(MN_PROVIDER_OPENAI, ollama_error_eof),
	FX(MN_PROVIDER_OPENAI, openai_content_filter),
	FX(MN_PROVIDER_OPENAI, openai_unknown_finish),
	FX(MN_PROVIDER_OPENAI, vllm_continuous_usage),
	FX(MN_PROVIDER_OPENAI, openai_error_string_code),
	FX(MN_PROVIDER_OPENAI, openai_error_bare_string),
	FX(MN_PROVIDER_OPENAI, vllm_old_error),
	FX(MN_PROVIDER_OPENAI, openai_error_event),
	FX(MN_PROVIDER_OPENAI, openai_malformed),
	FX(MN_PROVIDER_OPENAI, openai_not_object),
	FX(MN_PROVIDER_OPENAI, openai_bad_arguments),
	FX(MN_PROVIDER_OPENAI, ollama_same_index),
	FX(MN_PROVIDER_OPENAI, openai_function_call),
	FX(MN_PROVIDER_OPENAI, openai_odd_tool),
	FX(MN_PROVIDER_OPENAI, openai_tool_no_finish),
	FX(MN_PROVIDER_ANTHROPIC, anthropic_text),
	FX(MN_PROVIDER_ANTHROPIC, anthropic_tool),
	FX(MN_PROVIDER_ANTHROPIC, anthropic_text_recorded),
	FX(MN_PROVIDER_ANTHROPIC, anthropic_text_tool_recorded),
	FX(MN_PROVIDER_ANTHROPIC, anthropic_error_midstream),
	FX(MN_PROVIDER_ANTHROPIC, anthropic_thinking),
	FX(MN_PROVIDER_ANTHROPIC, anthropic_unknown),
	FX(MN_PROVIDER_ANTHROPIC, anthropic_tool_inputs),
	FX(MN_PROVIDER_ANTHROPIC, anthropic_no_stop_reason),
	FX(MN_PROVIDER_ANTHROPIC, anthropic_eof),
	FX(MN_PROVIDER_ANTHROPIC, anthropic_malformed),
	FX(MN_PROVIDER_ANTHROPIC, anthropic_error_api),
	FX(MN_PROVIDER_ANTHROPIC, anthropic_error_rate),
	FX(MN_PROVIDER_ANTHROPIC, anthropic_no_event_lines),
	FX(MN_PROVIDER_ANTHROPIC, anthropic_two_tools),
};

#undef FX

#define N_FIXTURES (sizeof(fixtures) / sizeof(fixtures[0]))

/* The fixture of that name (NULL when there is none). */
static MAYBE_UNUSED const fixture *
fixture_named(const char *name)
{
	for (size_t i = 0; i < N_FIXTURES; i++)
		if (strcmp(fixtures[i].name, name) == 0)
			return &fixtures[i];
	return NULL;
}

/* ========================================================================
 * The recorder: deltas as lines of text
 *
 * One line per delta, text escaped (\n, \", \\, other control and
 * non-ASCII bytes as \xNN), then "state: <state>" at the end.  Two runs
 * that decode the same deltas print the same text, whatever the chunking.
 * ======================================================================== */

typedef struct rec
{
	char	   *p;
	size_t		len;
	size_t		cap;
	int			ndeltas;
	int			stop_at;		/* > 0: return 42 from that delta (1-based) */
} rec;

static MAYBE_UNUSED void
rec_put(rec *r, const char *s, size_t n)
{
	if (r->len + n + 1 > r->cap)
	{
		size_t		cap = r->cap ? r->cap : 1024;

		while (cap < r->len + n + 1)
			cap *= 2;
		r->p = realloc(r->p, cap);
		if (r->p == NULL)
		{
			fprintf(stderr, "out of memory\n");
			exit(3);
		}
		r->cap = cap;
	}
	memcpy(r->p + r->len, s, n);
	r->len += n;
	r->p[r->len] = '\0';
}

__attribute__((format(printf, 2, 3)))
static MAYBE_UNUSED void
rec_printf(rec *r, const char *fmt,...)
{
	char		tmp[512];
	va_list		ap;
	int			n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	rec_put(r, tmp, n < (int) sizeof(tmp) ? (size_t) n : sizeof(tmp) - 1);
}

static MAYBE_UNUSED void
rec_esc(rec *r, const char *s, size_t n)
{
	rec_put(r, "\"", 1);
	if (s == NULL)
		rec_put(r, "(null)", 6);
	for (size_t i = 0; s != NULL && i < n; i++)
	{
		unsigned char c = (unsigned char) s[i];

		if (c == '\n')
			rec_put(r, "\\n", 2);
		else if (c == '"' || c == '\\')
		{
			rec_put(r, "\\", 1);
			rec_put(r, (const char *) &c, 1);
		}
		else if (c < 0x20 || c >= 0x7F)
			rec_printf(r, "\\x%02x", c);
		else
			rec_put(r, (const char *) &c, 1);
	}
	rec_put(r, "\"", 1);
}

static MAYBE_UNUSED int
rec_delta(void *arg, const mn_delta *d)
{
	rec		   *r = arg;

	r->ndeltas++;
	switch (d->kind)
	{
		case MN_DELTA_START:
			rec_printf(r, "START id=%s model=%s\n", d->id ? d->id : "(null)",
					   d->model ? d->model : "(null)");
			break;
		case MN_DELTA_TEXT:
		case MN_DELTA_REASONING:
		case MN_DELTA_REASONING_SIGNATURE:
		case MN_DELTA_REFUSAL:
			rec_printf(r, "%s[%d] ",
					   d->kind == MN_DELTA_TEXT ? "TEXT" :
					   d->kind == MN_DELTA_REASONING ? "REASONING" :
					   d->kind == MN_DELTA_REFUSAL ? "REFUSAL" : "SIGNATURE", d->block);
			rec_esc(r, d->text, d->len);
			rec_put(r, "\n", 1);
			if (d->text == NULL || d->text[d->len] != '\0')
				rec_printf(r, "BUG: text not NUL-terminated\n");
			break;
		case MN_DELTA_TOOL_START:
			rec_printf(r, "TOOL_START #%d index=%lld id=%s name=%s\n", d->tool,
					   (long long) d->provider_index, d->id, d->name);
			break;
		case MN_DELTA_TOOL_INPUT:
			rec_printf(r, "TOOL_INPUT #%d ", d->tool);
			rec_esc(r, d->text, d->len);
			rec_put(r, "\n", 1);
			break;
		case MN_DELTA_TOOL_END:
			rec_printf(r, "TOOL_END #%d id=%s name=%s ", d->tool, d->id, d->name);
			rec_esc(r, d->text, d->len);
			if (d->input_valid)
				rec_printf(r, " valid %s\n",
						   json_object_to_json_string_ext(d->input, JSON_C_TO_STRING_PLAIN));
			else
				rec_printf(r, " invalid%s\n", d->input ? " BUG: input set" : "");
			break;
		case MN_DELTA_USAGE:
			rec_printf(r, "USAGE in=%lld out=%lld cache_read=%lld cache_write=%lld reasoning=%lld\n",
					   (long long) d->usage->input, (long long) d->usage->output,
					   (long long) d->usage->cache_read, (long long) d->usage->cache_write,
					   (long long) d->usage->reasoning);
			break;
		case MN_DELTA_FINISH:
			rec_printf(r, "FINISH %s raw=%s\n", mn_finish_name(d->finish), d->raw_finish);
			break;
		case MN_DELTA_ERROR:
			rec_printf(r, "ERROR kind=%d class=%s type=%s code=%s ",
					   (int) d->error->kind, mn_errclass_name(d->error->errclass),
					   d->error->type ? d->error->type : "(null)",
					   d->error->code ? d->error->code : "(null)");
			rec_esc(r, d->error->message, strlen(d->error->message));
			rec_put(r, "\n", 1);
			break;
		case MN_DELTA_DONE:
			rec_printf(r, "DONE\n");
			break;
	}
	return r->stop_at > 0 && r->ndeltas == r->stop_at ? 42 : 0;
}

/*
 * Decode bytes[0..len) fed in the chunks that end at cuts[0..ncuts) (in
 * increasing order; the last chunk runs to len), then end the stream.
 * Returns the transcript (malloc'd); *state gets the final state.
 */
static MAYBE_UNUSED char *
decode_cuts(mn_provider provider, const mn_stream_limits *limits, const char *bytes,
			size_t len, const size_t *cuts, size_t ncuts, int stop_at,
			mn_stream_state *state)
{
	rec			r = {0};
	mn_stream  *s = mn_stream_new(provider, limits, rec_delta, &r);
	size_t		at = 0;
	mn_stream_state st;

	if (s == NULL)
	{
		fprintf(stderr, "mn_stream_new failed\n");
		exit(3);
	}
	r.stop_at = stop_at;
	rec_put(&r, "", 0);
	for (size_t i = 0; i <= ncuts; i++)
	{
		size_t		end = i < ncuts ? cuts[i] : len;

		mn_stream_feed(s, bytes + at, end - at);
		at = end;
	}
	st = mn_stream_end(s);
	rec_printf(&r, "state: %s\n", mn_stream_state_name(st));
	if (state != NULL)
		*state = st;
	mn_stream_free(s);
	return r.p;
}

static MAYBE_UNUSED char *
decode_whole(mn_provider provider, const char *bytes, size_t len)
{
	return decode_cuts(provider, NULL, bytes, len, NULL, 0, 0, NULL);
}

static MAYBE_UNUSED char *
rec_dup(const char *s)
{
	char	   *d = malloc(strlen(s) + 1);

	if (d == NULL)
		exit(3);
	return strcpy(d, s);
}

/* A small deterministic generator, so that "random" chunkings repeat. */
static MAYBE_UNUSED uint32_t
lcg_next(uint32_t *seed)
{
	*seed = *seed * 1664525u + 1013904223u;
	return *seed >> 8;
}

/*
 * Check that chunkings of bytes decode to want: byte by byte, every split
 * in two, and nrandom random chunkings from seed.  Returns NULL when all
 * match, else a description of the first that did not (malloc'd); *tried
 * gets the number of chunkings decoded.
 */
static MAYBE_UNUSED char *
check_chunkings(mn_provider provider, const char *bytes, size_t len, const char *want,
				int nrandom, uint32_t seed, size_t *tried)
{
	size_t	   *cuts = malloc((len + 1) * sizeof(size_t));
	char	   *got;
	char		why[160];
	size_t		n = 0;

	if (cuts == NULL)
		exit(3);
#define TRY(desc_fmt, ...) \
	do { \
		got = decode_cuts(provider, NULL, bytes, len, cuts, n, 0, NULL); \
		(*tried)++; \
		if (strcmp(got, want) != 0) \
		{ \
			snprintf(why, sizeof(why), desc_fmt, __VA_ARGS__); \
			free(got); \
			free(cuts); \
			return rec_dup(why); \
		} \
		free(got); \
	} while (0)

	*tried = 0;
	/* one byte at a time */
	for (n = 0; n + 1 < len; n++)
		cuts[n] = n + 1;
	TRY("one byte at a time (%zu chunks)", n + 1);
	/* every split in two */
	for (size_t k = 0; k <= len; k++)
	{
		cuts[0] = k;
		n = 1;
		TRY("split in two at byte %zu", k);
	}
	/* random chunkings, from 1-byte to 64-byte pieces */
	for (int i = 0; i < nrandom; i++)
	{
		size_t		at = 0;
		uint32_t	maxlen = 1 + lcg_next(&seed) % 64;

		n = 0;
		while (at < len)
		{
			at += 1 + lcg_next(&seed) % maxlen;
			if (at < len)
				cuts[n++] = at;
		}
		TRY("random chunking %d (%zu chunks, seed-derived)", i, n + 1);
	}
#undef TRY
	free(cuts);
	return NULL;
}

/* The stream with each LF replaced by CRLF (crlf) or by a lone CR. */
static MAYBE_UNUSED char *
with_line_ends(const char *bytes, size_t len, bool crlf, size_t *outlen)
{
	char	   *out = malloc(len * 2 + 1);
	size_t		o = 0;

	if (out == NULL)
		exit(3);
	for (size_t i = 0; i < len; i++)
	{
		if (bytes[i] == '\n')
		{
			out[o++] = '\r';
			if (crlf)
				out[o++] = '\n';
		}
		else
			out[o++] = bytes[i];
	}
	out[o] = '\0';
	*outlen = o;
	return out;
}

/* ========================================================================
 * For the TAP tests (tap.h included first): a decoded transcript checked
 * whole, in every chunking, and with CRLF and lone-CR line ends
 * ======================================================================== */

#ifdef MNEMO_TAP_H

typedef struct golden
{
	const char *fixture;		/* a name in fixtures[] */
	const char *why;			/* what it shows */
	const char *want;			/* the transcript */
} golden;

static MAYBE_UNUSED void
check_golden(const golden *g, uint32_t seed)
{
	const fixture *f = fixture_named(g->fixture);
	char	   *got;
	char	   *bad;
	size_t		tried = 0;

	if (f == NULL)
		bail_out("no fixture named %s", g->fixture);
	got = decode_whole(f->provider, f->bytes, f->len);
	is_str(got, g->want, "%s: %s", f->name, g->why);
	free(got);
	{
		mn_stream_limits json_only = {.json_only = true};

		got = decode_cuts(f->provider, &json_only, f->bytes, f->len, NULL, 0, 0, NULL);
		is_str(got, g->want, "%s: the same with every event read by json-c", f->name);
		free(got);
	}

	bad = check_chunkings(f->provider, f->bytes, f->len, g->want, 50, seed, &tried);
	ok(bad == NULL, "%s: the same deltas byte by byte, split in two at each of %zu bytes, "
	   "and in 50 random chunkings (%zu decodes)%s%s", f->name, f->len, tried,
	   bad ? "; differs: " : "", bad ? bad : "");
	free(bad);

	for (int crlf = 1; crlf >= 0; crlf--)
	{
		size_t		len;
		char	   *v = with_line_ends(f->bytes, f->len, crlf, &len);

		got = decode_whole(f->provider, v, len);
		bad = strcmp(got, g->want) == 0 ? NULL : rec_dup("decoded whole");
		if (bad == NULL)
			bad = check_chunkings(f->provider, v, len, g->want, 20, seed + 1, &tried);
		ok(bad == NULL, "%s: the same with %s line ends, in every chunking%s%s", f->name,
		   crlf ? "CRLF" : "lone CR", bad ? "; differs: " : "", bad ? bad : "");
		free(bad);
		free(got);
		free(v);
	}
}

/* The plain text chunks of a text reply ("Hel", "lo") take the path
 * without json-c (text_chunk.c), and none does when the stream is
 * json_only; check_golden checks that both paths give the same deltas, the
 * fuzzers the same on any input. */
static MAYBE_UNUSED void
check_text_chunks(const char *fixture_name, size_t want)
{
	const fixture *f = fixture_named(fixture_name);

	if (f == NULL)
		bail_out("no fixture named %s", fixture_name);
	for (int json_only = 0; json_only <= 1; json_only++)
	{
		mn_stream_limits lim = {.json_only = json_only};
		rec			r = {0};
		mn_stream  *s = mn_stream_new(f->provider, &lim, rec_delta, &r);

		if (s == NULL)
			bail_out("mn_stream_new failed");
		mn_stream_feed(s, f->bytes, f->len);
		mn_stream_end(s);
		is_int((int) mn_stream_chunk_count(s), json_only ? 0 : (int) want,
			   "%s%s: %zu text chunks read without json-c", f->name,
			   json_only ? ", json_only" : "", json_only ? (size_t) 0 : want);
		mn_stream_free(s);
		free(r.p);
	}
}

#endif							/* MNEMO_TAP_H */

#endif							/* MNEMO_TEST_STREAMS_H */
