/*
 * names.c
 *		The names of the stream's enumerations, and the class of a
 *		provider error.
 */
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "stream/stream.h"

const char *
mn_finish_name(mn_finish f)
{
	switch (f)
	{
		case MN_FINISH_NONE:
			return NULL;
		case MN_FINISH_STOP:
			return "stop";
		case MN_FINISH_LENGTH:
			return "length";
		case MN_FINISH_TOOL_CALLS:
			return "tool_calls";
		case MN_FINISH_CONTENT_FILTER:
			return "content_filter";
		case MN_FINISH_REFUSAL:
			return "refusal";
		case MN_FINISH_PAUSE:
			return "pause";
		case MN_FINISH_OTHER:
			return "other";
	}
	return "other";
}

const char *
mn_errclass_name(mn_errclass c)
{
	switch (c)
	{
		case MN_ERRCLASS_OTHER:
			return "other";
		case MN_ERRCLASS_BAD_REQUEST:
			return "bad_request";
		case MN_ERRCLASS_CONTEXT_OVERFLOW:
			return "context_overflow";
		case MN_ERRCLASS_AUTH:
			return "auth";
		case MN_ERRCLASS_PERMISSION:
			return "permission";
		case MN_ERRCLASS_NOT_FOUND:
			return "not_found";
		case MN_ERRCLASS_TOO_LARGE:
			return "too_large";
		case MN_ERRCLASS_RATE_LIMIT:
			return "rate_limit";
		case MN_ERRCLASS_QUOTA:
			return "quota";
		case MN_ERRCLASS_TIMEOUT:
			return "timeout";
		case MN_ERRCLASS_OVERLOADED:
			return "overloaded";
		case MN_ERRCLASS_SERVER:
			return "server";
	}
	return "other";
}

const char *
mn_stream_state_name(mn_stream_state s)
{
	switch (s)
	{
		case MN_STREAM_OPEN:
			return "open";
		case MN_STREAM_COMPLETE:
			return "complete";
		case MN_STREAM_FAILED:
			return "failed";
		case MN_STREAM_STOPPED:
			return "stopped";
		case MN_STREAM_INTERRUPTED:
			return "interrupted";
	}
	return "open";
}

static bool
eq(const char *a, const char *b)
{
	return a != NULL && strcmp(a, b) == 0;
}

static mn_errclass
class_of_status(int status)
{
	switch (status)
	{
		case 400:
		case 422:
			return MN_ERRCLASS_BAD_REQUEST;
		case 401:
			return MN_ERRCLASS_AUTH;
		case 402:
			return MN_ERRCLASS_QUOTA;
		case 403:
			return MN_ERRCLASS_PERMISSION;
		case 404:
			return MN_ERRCLASS_NOT_FOUND;
		case 408:
		case 504:
			return MN_ERRCLASS_TIMEOUT;
		case 409:
			return MN_ERRCLASS_OTHER;
		case 413:
			return MN_ERRCLASS_TOO_LARGE;
		case 429:
			return MN_ERRCLASS_RATE_LIMIT;
		case 503:
		case 529:
			return MN_ERRCLASS_OVERLOADED;
		default:
			break;
	}
	if (status >= 500 && status <= 599)
		return MN_ERRCLASS_SERVER;
	if (status >= 400 && status <= 499)
		return MN_ERRCLASS_BAD_REQUEST;
	return MN_ERRCLASS_OTHER;
}

/*
 * The words are OpenAI's and Anthropic's documented error types and codes,
 * and the local servers' (llama.cpp, vLLM): see provider-streaming.md.
 * What the status says comes first where it is definite; the type refines
 * what a status cannot tell (quota against rate limit, a prompt too long
 * against any other bad request), and classifies a mid-stream error, whose
 * status is the 200 of the stream.
 */
mn_errclass
mn_errclass_of(int status, const char *type, const char *code, const char *message)
{
	if (eq(code, "insufficient_quota") || eq(type, "insufficient_quota") ||
		eq(code, "billing_hard_limit_reached") || eq(type, "billing_error") ||
		eq(code, "enforced_spend_limit_reached"))
		return MN_ERRCLASS_QUOTA;
	if (eq(code, "context_length_exceeded") || eq(type, "exceed_context_size_error") ||
		(message != NULL && (status == 0 || status == 400) &&
		 (strstr(message, "prompt is too long") != NULL ||
		  strstr(message, "maximum context length") != NULL ||
		  strstr(message, "context window") != NULL)))
		return MN_ERRCLASS_CONTEXT_OVERFLOW;

	if (status >= 400)
		return class_of_status(status);

	/* a mid-stream error: by its type, or the HTTP status llama.cpp and
	 * vLLM put in an integer code */
	if (eq(type, "invalid_request_error") || eq(type, "BadRequestError"))
		return MN_ERRCLASS_BAD_REQUEST;
	if (eq(type, "authentication_error"))
		return MN_ERRCLASS_AUTH;
	if (eq(type, "permission_error"))
		return MN_ERRCLASS_PERMISSION;
	if (eq(type, "not_found_error") || eq(type, "NotFoundError"))
		return MN_ERRCLASS_NOT_FOUND;
	if (eq(type, "request_too_large"))
		return MN_ERRCLASS_TOO_LARGE;
	if (eq(type, "rate_limit_error") || eq(code, "rate_limit_exceeded") ||
		eq(type, "tokens") || eq(type, "requests"))
		return MN_ERRCLASS_RATE_LIMIT;
	if (eq(type, "overloaded_error") || eq(type, "unavailable_error"))
		return MN_ERRCLASS_OVERLOADED;
	if (eq(type, "timeout_error"))
		return MN_ERRCLASS_TIMEOUT;
	if (eq(type, "api_error") || eq(type, "server_error") ||
		eq(type, "InternalServerError"))
		return MN_ERRCLASS_SERVER;
	if (code != NULL && strlen(code) == 3 && mn_all_digits(code, 3))
		return class_of_status(atoi(code));
	return MN_ERRCLASS_OTHER;
}

