/*
 * http_error.c
 *		The reading of a provider's HTTP error body: its message, type and
 *		code, and the class of the error, whatever shape the server chose
 *		(OpenAI's {"error": {...}}, Anthropic's {"type": "error", ...},
 *		a proxy's HTML page, nothing at all).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "core/json.h"
#include "stream/stream.h"

static const char *
reason_phrase(int status)
{
	switch (status)
	{
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
		case 501:
			return "Not Implemented";
		case 502:
			return "Bad Gateway";
		case 503:
			return "Service Unavailable";
		case 504:
			return "Gateway Timeout";
		case 529:
			return "Overloaded";
		default:
			return "";
	}
}

/* The body, when it is JSON at all: an object, or NULL. */
static struct json_object *
parse_body(const char *body, size_t len)
{
	json_tokener *tok;
	struct json_object *obj;

	/* an error body worth reading is small; a NUL means it is not JSON */
	if (body == NULL || len == 0 || len > 1024 * 1024 || memchr(body, '\0', len) != NULL)
		return NULL;
	if ((tok = json_tokener_new()) == NULL)
		return NULL;
	obj = json_tokener_parse_ex(tok, body, (int) len);
	if (obj != NULL && (json_tokener_get_error(tok) != json_tokener_success ||
						!json_object_is_type(obj, json_type_object)))
	{
		json_object_put(obj);
		obj = NULL;
	}
	json_tokener_free(tok);
	return obj;
}

/* "HTTP 502 Bad Gateway", then the body if it is short plain text (not a
 * proxy's HTML page), its blanks collapsed. */
static char *
fallback_message(int status, const char *body, size_t len)
{
	mn_buf		m = {0};
	char		head[48];
	const char *phrase = reason_phrase(status);
	size_t		start = 0;

	snprintf(head, sizeof(head), "HTTP %d%s%s", status, phrase[0] ? " " : "", phrase);
	mn_buf_puts(&m, head);
	while (body != NULL && start < len && strchr(" \t\r\n", body[start]) != NULL)
		start++;
	if (body != NULL && start < len && body[start] != '<')
	{
		size_t		n = 0;
		bool		space = true;

		mn_buf_puts(&m, ": ");
		for (size_t i = start; i < len && n < 200; i++)
		{
			unsigned char c = (unsigned char) body[i];

			if (c == ' ' || c == '\t' || c == '\r' || c == '\n')
			{
				if (!space)
					mn_buf_put(&m, " ", 1), n++;
				space = true;
			}
			else if (c >= 0x20 && c < 0x7F)
			{
				mn_buf_put(&m, (const char *) &body[i], 1), n++;
				space = false;
			}
		}
		while (m.len > 0 && m.data[m.len - 1] == ' ')
			m.data[--m.len] = '\0';
	}
	if (m.oom)
	{
		mn_buf_free(&m);
		return NULL;
	}
	return m.data;
}

void
mn_http_error_clear(mn_http_error *e)
{
	if (e == NULL)
		return;
	free(e->message);
	free(e->type);
	free(e->code);
	memset(e, 0, sizeof(*e));
}

int
mn_http_error_parse(int status, const char *body, size_t len, mn_http_error *out)
{
	struct json_object *obj = parse_body(body, len);
	struct json_object *err = NULL;
	const char *message = NULL;

	memset(out, 0, sizeof(*out));
	out->status = status;
	if (obj != NULL)
	{
		const char *object = mn_js_str(obj, "object", NULL);

		if ((err = mn_js_obj(obj, "error")) != NULL)
			message = mn_js_str(err, "message", NULL);	/* OpenAI, Anthropic */
		else if ((message = mn_js_str(obj, "error", NULL)) == NULL)
		{
			/* vLLM's old {"object": "error", ...}; FastAPI's {"detail"} */
			if ((object != NULL && strcmp(object, "error") == 0) ||
				mn_js_str(obj, "message", NULL) != NULL)
			{
				err = obj;
				message = mn_js_str(obj, "message", NULL);
			}
			else
				message = mn_js_str(obj, "detail", NULL);
		}
		if (err != NULL)
		{
			out->type = mn_js_text(err, "type");
			out->code = mn_js_text(err, "code");
			/* Anthropic's spend limit: error.details.error_code */
			if (out->code == NULL)
				out->code = mn_js_text(mn_js_obj(err, "details"), "error_code");
		}
	}
	if (message != NULL && message[0] != '\0')
	{
		if ((out->message = malloc(strlen(message) + 1)) != NULL)
			strcpy(out->message, message);
	}
	else
		out->message = fallback_message(status, body, len);
	json_object_put(obj);
	if (out->message == NULL)
	{
		mn_http_error_clear(out);
		return MNEMO_ERR_NOMEM;
	}
	out->errclass = mn_errclass_of(status, out->type, out->code, out->message);
	out->retryable = (status == 408 || status == 409 || status == 429 || status >= 500) &&
		out->errclass != MN_ERRCLASS_QUOTA;
	return MNEMO_OK;
}
