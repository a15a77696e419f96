/*
 * errors.c: the providers' HTTP error responses.
 *
 * The bodies are the real APIs' shapes (reference/provider-streaming.md
 * §1.5 and §2.4): OpenAI's {"error":{message,type,param,code}} and
 * Anthropic's {"type":"error","error":{type,message},"request_id"}, with each
 * status's usual type, code and message unless the script gives its own.
 */
#define _POSIX_C_SOURCE 200809L

#include "ps.h"

#include <stdlib.h>
#include <string.h>

typedef struct error_default
{
	int			status;
	const char *type;
	const char *code;			/* raw JSON */
	const char *message;
} error_default;

/*
 * Near-verbatim bodies of the real APIs (reference/provider-streaming.md
 * §1.5, §2.4).  Messages that would echo the key on the real API do not here.
 */
static const error_default openai_errors[] = {
	{400, "invalid_request_error", "null", "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead."},
	{401, "invalid_request_error", "\"invalid_api_key\"", "Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys."},
	{403, "request_forbidden", "\"unsupported_country_region_territory\"", "Country, region, or territory not supported"},
	{404, "invalid_request_error", "\"model_not_found\"", NULL},
	{409, "invalid_request_error", "null", "The request conflicts with another request in progress."},
	{413, "invalid_request_error", "null", "Request too large."},
	{422, "invalid_request_error", "null", "Unprocessable entity."},
	{429, "tokens", "\"rate_limit_exceeded\"", "Rate limit reached for gpt-4o in organization org-test on tokens per min (TPM): Limit 30000, Used 30000, Requested 1200. Please try again in 2.4s."},
	{500, "server_error", "null", "The server had an error while processing your request. Sorry about that!"},
	{502, "server_error", "null", "Bad gateway."},
	{503, "server_error", "null", "The server is overloaded or not ready yet."},
	{504, "server_error", "null", "Gateway timeout."},
};

static const error_default anthropic_errors[] = {
	{400, "invalid_request_error", NULL, "messages: at least one message is required"},
	{401, "authentication_error", NULL, "invalid x-api-key"},
	{402, "billing_error", NULL, "Your credit balance is too low to access the Anthropic API."},
	{403, "permission_error", NULL, "Your API key does not have permission to use the specified resource."},
	{404, "not_found_error", NULL, NULL},
	{409, "invalid_request_error", NULL, "Conflict."},
	{413, "request_too_large", NULL, "Request exceeds the maximum allowed number of bytes."},
	{429, "rate_limit_error", NULL, "This request would exceed the rate limit for your organization of 50 requests per minute. Please try again later."},
	{500, "api_error", NULL, "Internal server error"},
	{503, "api_error", NULL, "Service unavailable"},
	{504, "timeout_error", NULL, "Request timed out"},
	{529, "overloaded_error", NULL, "Overloaded"},
};

static const error_default *
find_default(dialect d, int status)
{
	const error_default *t = d == DIALECT_ANTHROPIC ? anthropic_errors : openai_errors;
	size_t		n = d == DIALECT_ANTHROPIC ? sizeof(anthropic_errors) / sizeof(anthropic_errors[0])
		: sizeof(openai_errors) / sizeof(openai_errors[0]);

	for (size_t i = 0; i < n; i++)
		if (t[i].status == status)
			return &t[i];
	return NULL;
}

void
render_error(const reply *r, const request_info *ri, int status,
			 const char *type, const char *message, const char *code,
			 rendered *out)
{
	dialect		d = ri->dialect;
	const error_default *def = find_default(d, status);
	buf			msg = {0};

	memset(out, 0, sizeof(*out));
	out->content_type = d == DIALECT_ANTHROPIC ? "application/json" : "application/json; charset=utf-8";
	if (r && r->err_body)
		buf_puts(&out->body, r->err_body);
	else
	{
		if (type == NULL)
			type = r && r->err_type ? r->err_type
				: def ? def->type
				: status >= 500 ? (d == DIALECT_ANTHROPIC ? "api_error" : "server_error")
				: "invalid_request_error";
		if (message == NULL)
			message = r && r->err_message ? r->err_message : def ? def->message : NULL;
		if (message)
			buf_puts(&msg, message);
		else if (status == 404)
		{
			if (d == DIALECT_ANTHROPIC)
				buf_printf(&msg, "model: %s", ri->model ? ri->model : "unknown");
			else
				buf_printf(&msg, "The model `%s` does not exist or you do not have access to it.",
						   ri->model ? ri->model : "unknown");
		}
		else
			buf_printf(&msg, "HTTP %d", status);

		if (d == DIALECT_ANTHROPIC)
		{
			buf_puts(&out->body, "{\"type\":\"error\",\"error\":{\"type\":");
			buf_json_cstr(&out->body, type);
			buf_puts(&out->body, ",\"message\":");
			buf_json_str(&out->body, msg.p, msg.len);
			buf_printf(&out->body, "},\"request_id\":\"req_%ld\"}", ri->number);
		}
		else
		{
			if (code == NULL)
				code = r && r->err_code ? r->err_code : def ? def->code : "null";
			/* a 429 for an exhausted quota is its own type and message */
			if (r && r->err_code && strcmp(r->err_code, "\"insufficient_quota\"") == 0)
			{
				if (r->err_type == NULL)
					type = "insufficient_quota";
				if (r->err_message == NULL)
				{
					msg.len = 0;
					buf_puts(&msg, "You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.");
				}
			}
			buf_puts(&out->body, "{\"error\":{\"message\":");
			buf_json_str(&out->body, msg.p, msg.len);
			buf_puts(&out->body, ",\"type\":");
			buf_json_cstr(&out->body, type);
			buf_printf(&out->body, ",\"param\":%s,\"code\":%s}}",
					   r && r->err_param ? r->err_param : "null", code);
		}
	}
	buf_free(&msg);
	out->event_offsets = xmalloc(2 * sizeof(size_t));
	out->event_offsets[0] = 0;
	out->event_offsets[1] = out->body.len;
	out->nevents = 1;
}

const char *
status_reason(int status)
{
	switch (status)
	{
		case 100:
			return "Continue";
		case 200:
			return "OK";
		case 400:
			return "Bad Request";
		case 401:
			return "Unauthorized";
		case 402:
			return "Payment Required";
		case 403:
			return "Forbidden";
		case 404:
			return "Not Found";
		case 405:
			return "Method Not Allowed";
		case 408:
			return "Request Timeout";
		case 409:
			return "Conflict";
		case 413:
			return "Payload Too Large";
		case 422:
			return "Unprocessable Entity";
		case 429:
			return "Too Many Requests";
		case 500:
			return "Internal Server Error";
		case 502:
			return "Bad Gateway";
		case 503:
			return "Service Unavailable";
		case 504:
			return "Gateway Timeout";
		case 529:
			return "Site Overloaded";
		default:
			return status < 400 ? "OK" : "Error";
	}
}
