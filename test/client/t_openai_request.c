/*
 * t_openai_request.c
 *		The OpenAI Chat Completions request body (mn_request_body) and the
 *		HTTP error bodies (mn_http_error_parse) of client/src/stream.
 *
 * No database.  The body of a conversation with every kind of message is
 * compared byte for byte with the one written here (expected_body); the
 * decoder of the reply stream is t_openai_stream.c's.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "../fuzz/streams.h"

/* ---- the request body ---- */

static const mn_req_tool_call calls[] = {
	{"call_1", "bash", "{\"cmd\":\"ls\",\"n\":123456789012345678901234567890}"},
};

static const mn_req_message conversation[] = {
	{.role = MN_REQ_USER, .text = "List files"},
	{.role = MN_REQ_ASSISTANT, .text = "", .tool_calls = calls, .n_tool_calls = 1,
	 .reasoning = "not sent to OpenAI", .reasoning_signature = "sig"},
	{.role = MN_REQ_TOOL_RESULT, .tool_call_id = "call_1", .text = "a.txt\nb.txt", .is_error = true},
	{.role = MN_REQ_ASSISTANT, .text = "Two files."},
	{.role = MN_REQ_USER, .text = "Thanks \"quoted\" caf\xc3\xa9\t\x01"},
};

static const char tools_neutral[] =
	"[{\"name\":\"bash\",\"description\":\"Run a command\","
	"\"parameters\":{\"type\":\"object\",\"properties\":{\"cmd\":{\"type\":\"string\","
	"\"maxLength\":1e400}},\"required\":[\"cmd\"]}}]";

static const char expected_body[] =
	"{\"model\":\"gpt-4o-mini\",\"messages\":["
	"{\"role\":\"system\",\"content\":\"You are terse.\"},"
	"{\"role\":\"user\",\"content\":\"List files\"},"
	"{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"call_1\",\"type\":\"function\","
	"\"function\":{\"name\":\"bash\",\"arguments\":\"{\\\"cmd\\\":\\\"ls\\\",\\\"n\\\":123456789012345678901234567890}\"}}]},"
	"{\"role\":\"tool\",\"tool_call_id\":\"call_1\",\"content\":\"a.txt\\nb.txt\"},"
	"{\"role\":\"assistant\",\"content\":\"Two files.\"},"
	"{\"role\":\"user\",\"content\":\"Thanks \\\"quoted\\\" caf\xc3\xa9\\t\\u0001\"}],"
	"\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"bash\",\"description\":\"Run a command\","
	"\"parameters\":{\"type\":\"object\",\"properties\":{\"cmd\":{\"type\":\"string\","
	"\"maxLength\":1e400}},\"required\":[\"cmd\"]}}}],"
	"\"max_completion_tokens\":1024,\"temperature\":0.2,\"stream\":true,"
	"\"stream_options\":{\"include_usage\":true}}";

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
		.model = "gpt-4o-mini", .system = "You are terse.",
		.messages = conversation, .n_messages = 5, .tools = tools_neutral,
		.max_output_tokens = 1024, .has_temperature = true, .temperature = 0.2,
	};
	char	   *body = NULL,
			   *err = NULL;
	size_t		len = 0;
	struct json_object *o;

	is_int(mn_request_body(MN_PROVIDER_OPENAI, &req, &body, &len, &err), MNEMO_OK,
		   "mn_request_body(OpenAI) builds a body");
	is_str(body, expected_body, "the body is exactly the expected JSON, in the documented field order");
	is_int(len, body ? strlen(body) : 0, "*len is its length");
	o = body ? json_tokener_parse(body) : NULL;
	ok(o != NULL, "the body is valid JSON");
	is_str(sget(o, "model"), "gpt-4o-mini", "model");
	ok(json_object_get_boolean(get(o, "stream")), "stream: true");
	ok(json_object_get_boolean(get(o, "stream_options.include_usage")),
	   "stream_options.include_usage: true (usage in the last chunk)");
	is_int(json_object_get_int(get(o, "max_completion_tokens")), 1024, "max_completion_tokens");
	ok(get(o, "max_tokens") == NULL, "no max_tokens beside it");
	ok(json_object_get_double(get(o, "temperature")) == 0.2, "temperature 0.2");
	is_str(sget(o, "messages.0.role"), "system", "the system prompt is the first message");
	is_str(sget(o, "messages.0.content"), "You are terse.", "... with its text");
	is_str(sget(o, "messages.1.role"), "user", "then the user message");
	ok(get(o, "messages.2.content") == NULL && json_object_object_get_ex(get(o, "messages.2"), "content", NULL),
	   "an assistant turn that only called tools has content null");
	is_str(sget(o, "messages.2.tool_calls.0.id"), "call_1", "tool_calls[0].id");
	is_str(sget(o, "messages.2.tool_calls.0.type"), "function", "tool_calls[0].type function");
	is_str(sget(o, "messages.2.tool_calls.0.function.name"), "bash", "tool_calls[0].function.name");
	is_str(sget(o, "messages.2.tool_calls.0.function.arguments"), calls[0].input,
		   "arguments is the input text exactly, as a string (the 30-digit number intact)");
	ok(get(o, "messages.2.reasoning") == NULL && strstr(body, "not sent") == NULL,
	   "reasoning is not sent to OpenAI");
	is_str(sget(o, "messages.3.role"), "tool", "a tool result is a tool message");
	is_str(sget(o, "messages.3.tool_call_id"), "call_1", "... with the call's id");
	is_str(sget(o, "messages.3.content"), "a.txt\nb.txt", "... and the output as content");
	ok(get(o, "messages.3.is_error") == NULL, "... and no is_error (OpenAI has none)");
	is_str(sget(o, "messages.5.content"), "Thanks \"quoted\" caf\xc3\xa9\t\x01",
		   "quotes, UTF-8 and control characters round-trip");
	is_str(sget(o, "tools.0.type"), "function", "tools[0].type function");
	is_str(sget(o, "tools.0.function.name"), "bash", "tools[0].function.name");
	is_str(sget(o, "tools.0.function.description"), "Run a command", "tools[0].function.description");
	is_str(sget(o, "tools.0.function.parameters.required.0"), "cmd",
		   "tools[0].function.parameters is the schema");
	ok(strstr(body, "\"maxLength\":1e400") != NULL,
	   "the schema is copied as written (1e400 is not rounded to infinity)");
	json_object_put(o);
	free(body);
	free(err);

	/* variants */
	req.legacy_max_tokens = true;
	req.system = NULL;
	req.has_temperature = false;
	req.tools = "[{\"type\":\"function\",\"function\":{\"name\":\"now\",\"strict\":true}},"
		"{\"name\":\"read\",\"input_schema\":{\"type\":\"object\"}}]";
	mn_request_body(MN_PROVIDER_OPENAI, &req, &body, NULL, NULL);
	o = body ? json_tokener_parse(body) : NULL;
	is_int(json_object_get_int(get(o, "max_tokens")), 1024, "legacy_max_tokens: max_tokens");
	ok(get(o, "max_completion_tokens") == NULL, "... and no max_completion_tokens");
	is_str(sget(o, "messages.0.role"), "user", "no system prompt: no system message");
	ok(get(o, "temperature") == NULL, "no temperature unless asked");
	is_str(sget(o, "tools.0.function.name"), "now", "an OpenAI-shaped definition is read");
	is_str(sget(o, "tools.0.function.parameters.type"), "object",
		   "a tool without parameters gets an empty object schema");
	ok(json_object_get_boolean(get(o, "tools.0.function.strict")), "strict is passed through");
	is_str(sget(o, "tools.1.function.parameters.type"), "object", "input_schema is read as parameters");
	ok(get(o, "tools.1.function.input_schema") == NULL, "... and not sent under its own name");
	json_object_put(o);
	free(body);

	req.max_output_tokens = 0;
	req.tools = NULL;
	mn_request_body(MN_PROVIDER_OPENAI, &req, &body, NULL, NULL);
	ok(body != NULL && strstr(body, "max_") == NULL && strstr(body, "\"tools\"") == NULL,
	   "max_output_tokens 0 and no tools: neither field");
	free(body);

	/* a user message with images: content parts, text then image_url */
	{
		static const mn_req_image imgs[] = {
			{"image/jpeg", "AAAA", NULL}, {NULL, NULL, "https://example.com/cat.png"}
		};
		mn_req_message im = {.role = MN_REQ_USER,.text = "what is this?",.images = imgs,.n_images = 2};

		req.messages = &im;
		req.n_messages = 1;
		req.system = NULL;
		req.has_temperature = false;
		mn_request_body(MN_PROVIDER_OPENAI, &req, &body, NULL, NULL);
		ok(body != NULL && strstr(body, "\"messages\":[{\"role\":\"user\",\"content\":["
								  "{\"type\":\"text\",\"text\":\"what is this?\"},"
								  "{\"type\":\"image_url\",\"image_url\":{\"url\":\"data:image/jpeg;base64,AAAA\"}},"
								  "{\"type\":\"image_url\",\"image_url\":{\"url\":\"https://example.com/cat.png\"}}]}]") != NULL,
		   "images go as OpenAI image_url parts: base64 as a data: URL, or the URL (%s)", body ? body : "");
		free(body);
	}
}

static void
test_request_errors(void)
{
	static const mn_req_tool_call noid[] = {{"", "bash", "{}"}};
	static const mn_req_message bad_call[] = {{.role = MN_REQ_ASSISTANT, .tool_calls = noid, .n_tool_calls = 1}};
	static const mn_req_message bad_result[] = {{.role = MN_REQ_TOOL_RESULT, .text = "x"}};
	static const mn_req_message bad_utf8[] = {{.role = MN_REQ_USER, .text = "a\xff"}};
	static const mn_req_message bad_role[] = {{.role = (mn_req_role) 9, .text = "a"}};
	static const struct
	{
		mn_request	req;
		const char *want;
	}			c[] = {
		{{.model = NULL}, "a model is required"},
		{{.model = "m", .tools = "{\"name\":\"x\"}"}, "the tool definitions are not a JSON array"},
		{{.model = "m", .tools = "[{\"name\":\"x\"},]"}, "the tool definitions are not a JSON array"},
		{{.model = "m", .tools = "[{\"description\":\"x\"}]"}, "tool definition 0 has no name"},
		{{.model = "m", .tools = "[{\"name\":\"x\",\"parameters\":[]}]"},
		 "tool definition 0: parameters is not a JSON object"},
		{{.model = "m", .tools = "[{\"name\":\"x\",\"description\":5}]"},
		 "tool definition 0: description is not a string"},
		{{.model = "m", .tools = "[7]"}, "tool definition 0 is not a JSON object"},
		{{.model = "m", .messages = bad_call, .n_messages = 1},
		 "message 0: tool call 0 needs an id and a name"},
		{{.model = "m", .messages = bad_result, .n_messages = 1},
		 "message 0: a tool result needs the tool call's id"},
		{{.model = "m", .messages = bad_utf8, .n_messages = 1}, "message 0: the text is not valid UTF-8"},
		{{.model = "m", .messages = bad_role, .n_messages = 1}, "message 0: unknown role 9"},
		{{.model = "m", .messages = NULL, .n_messages = 2}, "n_messages is 2 but messages is NULL"},
		{{.model = "m", .has_temperature = true, .temperature = NAN},
		 "temperature must be a finite number >= 0"},
	};

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++)
	{
		char	   *body = (char *) "untouched",
				   *err = NULL;
		int			rc = mn_request_body(MN_PROVIDER_OPENAI, &c[i].req, &body, NULL, &err);

		ok(rc == MNEMO_ERR_INVALID_ARGUMENT && body == NULL && err != NULL &&
		   strcmp(err, c[i].want) == 0,
		   "refused with MNEMO_ERR_INVALID_ARGUMENT: \"%s\"%s%s", c[i].want,
		   err && strcmp(err, c[i].want) ? "; got: " : "", err && strcmp(err, c[i].want) ? err : "");
		free(err);
	}
	{
		char	   *body;
		mn_request	req = {.model = NULL};

		is_int(mn_request_body(MN_PROVIDER_OPENAI, &req, &body, NULL, NULL),
			   MNEMO_ERR_INVALID_ARGUMENT, "errmsg may be NULL");
		is_int(mn_request_body((mn_provider) 0, &(mn_request) {.model = "m"}, &body, NULL, NULL),
			   MNEMO_ERR_INVALID_ARGUMENT, "an unknown provider is refused");
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
		{429, openai_429_body,
		 "Rate limit reached for gpt-4o in organization org-x on tokens per min (TPM): Limit 30000, "
		 "Used 30000, Requested 1200. Please try again in 2.4s.",
		 "tokens", "rate_limit_exceeded", MN_ERRCLASS_RATE_LIMIT, true,
		 "the reference's 429: rate limit, retryable"},
		{429, "{\"error\":{\"message\":\"You exceeded your current quota, please check your plan and billing details.\","
		 "\"type\":\"insufficient_quota\",\"param\":null,\"code\":\"insufficient_quota\"}}",
		 "You exceeded your current quota, please check your plan and billing details.",
		 "insufficient_quota", "insufficient_quota", MN_ERRCLASS_QUOTA, false,
		 "429 insufficient_quota: quota, final"},
		{401, "{\"error\":{\"message\":\"Incorrect API key provided: sk-abc***xyz.\",\"type\":\"invalid_request_error\","
		 "\"param\":null,\"code\":\"invalid_api_key\"}}",
		 "Incorrect API key provided: sk-abc***xyz.", "invalid_request_error", "invalid_api_key",
		 MN_ERRCLASS_AUTH, false, "401: auth, final"},
		{400, "{\"error\":{\"message\":\"This model's maximum context length is 128000 tokens.\","
		 "\"type\":\"invalid_request_error\",\"param\":\"messages\",\"code\":\"context_length_exceeded\"}}",
		 "This model's maximum context length is 128000 tokens.", "invalid_request_error",
		 "context_length_exceeded", MN_ERRCLASS_CONTEXT_OVERFLOW, false, "400 context_length_exceeded"},
		{404, "{\"error\":{\"message\":\"The model `gpt-9` does not exist\",\"type\":\"invalid_request_error\","
		 "\"param\":null,\"code\":\"model_not_found\"}}",
		 "The model `gpt-9` does not exist", "invalid_request_error", "model_not_found",
		 MN_ERRCLASS_NOT_FOUND, false, "404 unknown model"},
		{400, "{\"error\":{\"code\":400,\"message\":\"the request exceeds the available context size, try increasing it\","
		 "\"type\":\"exceed_context_size_error\",\"n_prompt_tokens\":13392,\"n_ctx\":8192}}",
		 "the request exceeds the available context size, try increasing it", "exceed_context_size_error",
		 "400", MN_ERRCLASS_CONTEXT_OVERFLOW, false, "llama.cpp: integer code, context overflow"},
		{503, "{\"error\":{\"code\":503,\"message\":\"Loading model\",\"type\":\"unavailable_error\"}}",
		 "Loading model", "unavailable_error", "503", MN_ERRCLASS_OVERLOADED, true,
		 "llama.cpp 503 while the model loads: retryable"},
		{400, "{\"error\":{\"message\":\"tool_choice auto requires --enable-auto-tool-choice\",\"type\":\"BadRequestError\","
		 "\"param\":null,\"code\":400}}",
		 "tool_choice auto requires --enable-auto-tool-choice", "BadRequestError", "400",
		 MN_ERRCLASS_BAD_REQUEST, false, "vLLM: class-name type, integer code"},
		{404, "{\"object\":\"error\",\"message\":\"The model `x` does not exist.\",\"type\":\"NotFoundError\","
		 "\"param\":null,\"code\":404}",
		 "The model `x` does not exist.", "NotFoundError", "404", MN_ERRCLASS_NOT_FOUND, false,
		 "vLLM's old top-level error object"},
		{404, "{\"error\":{\"message\":\"model \\\"llama9\\\" not found, try pulling it first\",\"type\":\"not_found_error\","
		 "\"param\":null,\"code\":null}}",
		 "model \"llama9\" not found, try pulling it first", "not_found_error", NULL,
		 MN_ERRCLASS_NOT_FOUND, false, "Ollama 404, code null"},
		{500, "{\"error\":\"llama runner process has terminated\"}",
		 "llama runner process has terminated", NULL, NULL, MN_ERRCLASS_SERVER, true,
		 "Ollama's native {\"error\": \"text\"}: retryable 500"},
		{422, "{\"detail\":\"Field required\"}", "Field required", NULL, NULL,
		 MN_ERRCLASS_BAD_REQUEST, false, "FastAPI's {\"detail\"}"},
		{502, "<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>",
		 "HTTP 502 Bad Gateway", NULL, NULL, MN_ERRCLASS_SERVER, true,
		 "a proxy's HTML page: the status, not the page"},
		{500, "", "HTTP 500 Internal Server Error", NULL, NULL, MN_ERRCLASS_SERVER, true,
		 "an empty body: the status"},
		{503, "  upstream connect error\r\n or disconnect\treset  ",
		 "HTTP 503 Service Unavailable: upstream connect error or disconnect reset", NULL, NULL,
		 MN_ERRCLASS_OVERLOADED, true, "plain text: the status and the text, blanks collapsed"},
		{418, "[1,2]", "HTTP 418: [1,2]", NULL, NULL, MN_ERRCLASS_BAD_REQUEST, false,
		 "JSON that is not an object; a status with no known phrase"},
		{409, "{\"error\":{\"message\":\"conflict\"}}", "conflict", NULL, NULL, MN_ERRCLASS_OTHER, true,
		 "409: retryable, as the SDK does"},
		{408, "{\"error\":{\"message\":\"\"}}", "HTTP 408 Request Timeout: {\"error\":{\"message\":\"\"}}",
		 NULL, NULL, MN_ERRCLASS_TIMEOUT, true, "an empty message: the status and the body instead"},
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

	/* the body need not be NUL-terminated: only len bytes are read */
	{
		char		buf[64];
		mn_http_error e;

		memcpy(buf, "{\"error\":{\"message\":\"cut\"}}GARBAGE-NOT-READ", 44);
		mn_http_error_parse(500, buf, 28, &e);
		is_str(e.message, "cut", "only len bytes of the body are read");
		mn_http_error_clear(&e);
		mn_http_error_parse(500, NULL, 0, &e);
		is_str(e.message, "HTTP 500 Internal Server Error", "a NULL body is the empty body");
		mn_http_error_clear(&e);
		mn_http_error_clear(&e);
		mn_http_error_clear(NULL);
		ok(1, "mn_http_error_clear twice, and on NULL, is harmless");
	}
}

int
main(void)
{
	test_request();
	test_request_errors();
	test_http_errors();
	return tap_done();
}
