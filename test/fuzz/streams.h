/*
 * streams.h
 *		Provider byte streams for the streaming tests and the fuzz corpus;
 *		with them, recorder.h's recorder of the deltas a stream decodes.
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

#include "recorder.h"

#endif							/* MNEMO_TEST_STREAMS_H */
