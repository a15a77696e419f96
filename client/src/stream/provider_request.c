/*
 * provider_request.c
 *		The JSON body of a streamed turn for each provider.
 *
 * The body is written as text, field by field, in the order the providers
 * document, rather than built as a json-c tree: JSON the caller hands over
 * (tool schemas, tool inputs the model produced earlier) is checked by
 * json-c and then copied as written, so a number json-c would round (an
 * integer beyond 64 bits, a long decimal) reaches the provider unchanged,
 * as it reaches the database elsewhere in libmnemo (core/json.c).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "core/json.h"
#include "stream/stream.h"

/* ------------------------------------------------------------------------
 * Checking caller JSON
 * ------------------------------------------------------------------------ */

/*
 * Parse text (NUL-terminated) strictly as one JSON value with nothing but
 * blanks around it; a new reference or NULL.  *span gets the value without
 * the blanks, for copying.
 */
static struct json_object *
parse_strict(const char *text, mn_span *span)
{
	size_t		len = strlen(text);
	json_tokener *tok;
	struct json_object *obj;
	size_t		start = 0,
				end = len;

	if (len >= (size_t) INT32_MAX)
		return NULL;
	tok = json_tokener_new_ex(JSON_TOKENER_DEFAULT_DEPTH);
	if (tok == NULL)
		return NULL;
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	obj = json_tokener_parse_ex(tok, text, (int) len + 1);
	if (obj != NULL && json_tokener_get_error(tok) != json_tokener_success)
	{
		json_object_put(obj);
		obj = NULL;
	}
	json_tokener_free(tok);
	if (obj == NULL)
		return NULL;
	while (start < len && strchr(" \t\r\n", text[start]) != NULL)
		start++;
	while (end > start && strchr(" \t\r\n", text[end - 1]) != NULL)
		end--;
	span->p = text + start;
	span->len = end - start;
	return obj;
}

/* ------------------------------------------------------------------------
 * Building the body
 * ------------------------------------------------------------------------ */

typedef struct builder
{
	mn_buf		out;
	char	   *err;			/* the first complaint, malloc'd */
	bool		nomem;
} builder;

__attribute__((format(printf, 2, 3)))
static bool
complain(builder *b, const char *fmt,...)
{
	va_list		ap;
	int			n;

	if (b->err != NULL || b->nomem)
		return false;
	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || (b->err = malloc((size_t) n + 1)) == NULL)
	{
		b->nomem = true;
		return false;
	}
	va_start(ap, fmt);
	vsnprintf(b->err, (size_t) n + 1, fmt, ap);
	va_end(ap);
	return false;
}

static void
put(builder *b, const char *s)
{
	mn_buf_puts(&b->out, s);
}

static void
put_span(builder *b, mn_span v)
{
	mn_buf_put(&b->out, v.p, v.len);
}

static void
put_str(builder *b, const char *s)
{
	s = s ? s : "";
	mn_buf_put_jstr(&b->out, s, strlen(s));
}

/* A "key": prefix, with a comma before it unless it is the first. */
static void
key(builder *b, bool *first, const char *k)
{
	if (!*first)
		put(b, ",");
	*first = false;
	mn_buf_put_jstr(&b->out, k, strlen(k));
	put(b, ":");
}

/* Text the caller gave: the provider refuses invalid UTF-8. */
static bool
check_text(builder *b, const char *s, const char *what, size_t i)
{
	if (s != NULL && !mn_utf8_valid(s, strlen(s)))
		return complain(b, "message %zu: the %s is not valid UTF-8", i, what);
	return true;
}

static bool
nonempty(const char *s)
{
	return s != NULL && s[0] != '\0';
}

static const char *
text_of(const mn_req_message *m)
{
	return m->text ? m->text : "";
}

/*
 * The tool definitions, converted.  A definition is an object with a
 * string name, an optional string description and an optional object
 * parameters (or input_schema), possibly wrapped OpenAI's way in
 * {"type": "function", "function": {...}}.
 */
static bool
put_tools(builder *b, mn_provider provider, const char *tools)
{
	mn_span		all;
	struct json_object *arr = parse_strict(tools, &all);
	size_t		pos = 0;
	size_t		i = 0;
	mn_span		elem;
	bool		ok = true;

	if (arr == NULL || !json_object_is_type(arr, json_type_array))
	{
		json_object_put(arr);
		return complain(b, "the tool definitions are not a JSON array");
	}
	put(b, "[");
	while (ok && mn_json_next_element(all, &pos, &elem))
	{
		struct json_object *def = json_object_array_get_idx(arr, i);
		struct json_object *fn;
		mn_span		fspan = elem,
					v;
		bool		first = true;
		const char *schema_key = "parameters";

		if (!json_object_is_type(def, json_type_object))
		{
			ok = complain(b, "tool definition %zu is not a JSON object", i);
			break;
		}
		if (json_object_object_get_ex(def, "function", &fn) &&
			json_object_is_type(fn, json_type_object))
		{
			def = fn;
			mn_json_member(elem, "function", &fspan);
		}
		if (mn_js_str(def, "name", NULL) == NULL || mn_js_str(def, "name", NULL)[0] == '\0')
		{
			ok = complain(b, "tool definition %zu has no name", i);
			break;
		}
		if (json_object_object_get_ex(def, "description", &fn) && fn != NULL &&
			!json_object_is_type(fn, json_type_string))
		{
			ok = complain(b, "tool definition %zu: description is not a string", i);
			break;
		}
		if (mn_js_obj(def, "parameters") == NULL && mn_js_obj(def, "input_schema") != NULL)
			schema_key = "input_schema";
		if (json_object_object_get_ex(def, schema_key, &fn) && fn != NULL &&
			!json_object_is_type(fn, json_type_object))
		{
			ok = complain(b, "tool definition %zu: %s is not a JSON object", i, schema_key);
			break;
		}

		if (i > 0)
			put(b, ",");
		if (provider == MN_PROVIDER_OPENAI)
			put(b, "{\"type\":\"function\",\"function\":{");
		else
			put(b, "{");
		mn_json_member(fspan, "name", &v);
		key(b, &first, "name");
		put_span(b, v);
		if (mn_js_str(def, "description", NULL) != NULL &&
			mn_json_member(fspan, "description", &v))
		{
			key(b, &first, "description");
			put_span(b, v);
		}
		key(b, &first, provider == MN_PROVIDER_OPENAI ? "parameters" : "input_schema");
		if (mn_js_obj(def, schema_key) != NULL && mn_json_member(fspan, schema_key, &v))
			put_span(b, v);
		else
			put(b, "{\"type\":\"object\",\"properties\":{}}");
		if (provider == MN_PROVIDER_OPENAI && json_object_object_get_ex(def, "strict", &fn) &&
			json_object_is_type(fn, json_type_boolean) && mn_json_member(fspan, "strict", &v))
		{
			key(b, &first, "strict");
			put_span(b, v);
		}
		put(b, provider == MN_PROVIDER_OPENAI ? "}}" : "}");
		i++;
	}
	put(b, "]");
	json_object_put(arr);
	return ok;
}

static bool
check_messages(builder *b, const mn_request *req)
{
	if (req->n_messages > 0 && req->messages == NULL)
		return complain(b, "n_messages is %zu but messages is NULL", req->n_messages);
	for (size_t i = 0; i < req->n_messages; i++)
	{
		const mn_req_message *m = &req->messages[i];

		switch (m->role)
		{
			case MN_REQ_USER:
				break;
			case MN_REQ_ASSISTANT:
				if (m->n_tool_calls > 0 && m->tool_calls == NULL)
					return complain(b, "message %zu: n_tool_calls is %zu but tool_calls is NULL",
									i, m->n_tool_calls);
				for (size_t k = 0; k < m->n_tool_calls; k++)
				{
					if (!nonempty(m->tool_calls[k].id) || !nonempty(m->tool_calls[k].name))
						return complain(b, "message %zu: tool call %zu needs an id and a name",
										i, k);
					if (!check_text(b, m->tool_calls[k].id, "tool call id", i) ||
						!check_text(b, m->tool_calls[k].name, "tool name", i) ||
						!check_text(b, m->tool_calls[k].input, "tool input", i))
						return false;
				}
				if (!check_text(b, m->reasoning, "reasoning", i) ||
					!check_text(b, m->reasoning_signature, "reasoning signature", i))
					return false;
				break;
			case MN_REQ_TOOL_RESULT:
				if (!nonempty(m->tool_call_id))
					return complain(b, "message %zu: a tool result needs the tool call's id", i);
				if (!check_text(b, m->tool_call_id, "tool call id", i))
					return false;
				break;
			default:
				return complain(b, "message %zu: unknown role %d", i, (int) m->role);
		}
		if (!check_text(b, m->text, "text", i))
			return false;
	}
	return true;
}

/* ---- OpenAI Chat Completions ---- */

/* {"type":"image_url","image_url":{"url": a data: URL or the URL}}, after a
 * comma unless first */
static void
openai_image(builder *b, const mn_req_image *img, bool first)
{
	put(b, first ? "{\"type\":\"image_url\",\"image_url\":{\"url\":"
		: ",{\"type\":\"image_url\",\"image_url\":{\"url\":");
	if (img->data != NULL)
	{
		mn_buf		url = {0};

		mn_buf_puts(&url, "data:");
		mn_buf_puts(&url, img->media_type ? img->media_type : "image/png");
		mn_buf_puts(&url, ";base64,");
		mn_buf_puts(&url, img->data);
		if (url.oom)
			b->nomem = true;
		else
			put_str(b, url.data);
		mn_buf_free(&url);
	}
	else
		put_str(b, img->url ? img->url : "");
	put(b, "}}");
}

static void
openai_messages(builder *b, const mn_request *req)
{
	bool		first_msg = true;

	put(b, "[");
	if (nonempty(req->system))
	{
		put(b, "{\"role\":\"system\",\"content\":");
		put_str(b, req->system);
		put(b, "}");
		first_msg = false;
	}
	for (size_t i = 0; i < req->n_messages; i++)
	{
		const mn_req_message *m = &req->messages[i];

		if (!first_msg)
			put(b, ",");
		first_msg = false;
		switch (m->role)
		{
			case MN_REQ_USER:
				put(b, "{\"role\":\"user\",\"content\":");
				if (m->n_images == 0)
					put_str(b, text_of(m));
				else
				{
					/* an image alone (its text was its placeholder) has no text block */
					put(b, "[");
					if (nonempty(m->text))
					{
						put(b, "{\"type\":\"text\",\"text\":");
						put_str(b, m->text);
						put(b, "}");
					}
					for (size_t k = 0; k < m->n_images; k++)
						openai_image(b, &m->images[k], k == 0 && !nonempty(m->text));
					put(b, "]");
				}
				put(b, "}");
				break;
			case MN_REQ_ASSISTANT:
				put(b, "{\"role\":\"assistant\",\"content\":");
				/* a reply that only called tools has null content */
				if (m->n_tool_calls > 0 && !nonempty(m->text))
					put(b, "null");
				else
					put_str(b, text_of(m));
				if (m->n_tool_calls > 0)
				{
					put(b, ",\"tool_calls\":[");
					for (size_t k = 0; k < m->n_tool_calls; k++)
					{
						const mn_req_tool_call *c = &m->tool_calls[k];

						if (k > 0)
							put(b, ",");
						put(b, "{\"id\":");
						put_str(b, c->id);
						put(b, ",\"type\":\"function\",\"function\":{\"name\":");
						put_str(b, c->name);
						/* arguments is a string: the input as the model wrote it */
						put(b, ",\"arguments\":");
						put_str(b, c->input ? c->input : "{}");
						put(b, "}}");
					}
					put(b, "]");
				}
				put(b, "}");
				break;
			case MN_REQ_TOOL_RESULT:
				put(b, "{\"role\":\"tool\",\"tool_call_id\":");
				put_str(b, m->tool_call_id);
				put(b, ",\"content\":");
				put_str(b, text_of(m));
				put(b, "}");
				break;
		}
	}
	put(b, "]");
}

static bool
openai_body(builder *b, const mn_request *req)
{
	bool		first = true;

	put(b, "{");
	key(b, &first, "model");
	put_str(b, req->model);
	key(b, &first, "messages");
	openai_messages(b, req);
	if (req->tools != NULL)
	{
		key(b, &first, "tools");
		if (!put_tools(b, MN_PROVIDER_OPENAI, req->tools))
			return false;
	}
	if (req->max_output_tokens > 0)
	{
		key(b, &first, req->legacy_max_tokens ? "max_tokens" : "max_completion_tokens");
		mn_buf_put_i64(&b->out, req->max_output_tokens);
	}
	if (req->has_temperature)
	{
		key(b, &first, "temperature");
		mn_buf_put_double(&b->out, req->temperature);
	}
	key(b, &first, "stream");
	put(b, "true");
	key(b, &first, "stream_options");
	put(b, "{\"include_usage\":true}");
	put(b, "}");
	return true;
}

/* ---- Anthropic Messages ---- */

static bool
user_side(const mn_req_message *m)
{
	return m->role == MN_REQ_USER || m->role == MN_REQ_TOOL_RESULT;
}

/* A block separator: a comma unless it is the first block. */
static void
block(builder *b, int *nblocks)
{
	if ((*nblocks)++ > 0)
		put(b, ",");
}

/*
 * One user message made of messages[from..to): text blocks and tool
 * results in the order given.  A lone text keeps the plain string form.
 */
static void
anthropic_user(builder *b, const mn_request *req, size_t from, size_t to, bool *first_msg)
{
	int			nblocks = 0;
	size_t		nonempty_parts = 0;

	for (size_t i = from; i < to; i++)
		if (req->messages[i].role == MN_REQ_TOOL_RESULT || nonempty(req->messages[i].text) ||
			req->messages[i].n_images > 0)
			nonempty_parts++;
	if (nonempty_parts == 0)
		return;					/* the API refuses empty content */
	if (!*first_msg)
		put(b, ",");
	*first_msg = false;
	put(b, "{\"role\":\"user\",\"content\":");
	if (to - from == 1 && req->messages[from].role == MN_REQ_USER &&
		req->messages[from].n_images == 0)
	{
		put_str(b, req->messages[from].text);
		put(b, "}");
		return;
	}
	put(b, "[");
	for (size_t i = from; i < to; i++)
	{
		const mn_req_message *m = &req->messages[i];

		if (m->role == MN_REQ_USER)
		{
			if (nonempty(m->text))
			{
				block(b, &nblocks);
				put(b, "{\"type\":\"text\",\"text\":");
				put_str(b, m->text);
				put(b, "}");
			}
			for (size_t k = 0; k < m->n_images; k++)
			{
				const mn_req_image *img = &m->images[k];

				block(b, &nblocks);
				if (img->data != NULL)
				{
					put(b, "{\"type\":\"image\",\"source\":{\"type\":\"base64\",\"media_type\":");
					put_str(b, img->media_type ? img->media_type : "image/png");
					put(b, ",\"data\":");
					put_str(b, img->data);
				}
				else
				{
					put(b, "{\"type\":\"image\",\"source\":{\"type\":\"url\",\"url\":");
					put_str(b, img->url ? img->url : "");
				}
				put(b, "}}");
			}
		}
		else
		{
			block(b, &nblocks);
			put(b, "{\"type\":\"tool_result\",\"tool_use_id\":");
			put_str(b, m->tool_call_id);
			put(b, ",\"content\":");
			put_str(b, text_of(m));
			if (m->is_error)
				put(b, ",\"is_error\":true");
			put(b, "}");
		}
	}
	put(b, "]}");
}

static void
anthropic_assistant(builder *b, const mn_req_message *m, bool *first_msg)
{
	bool		thinking = nonempty(m->reasoning) && nonempty(m->reasoning_signature);
	int			nblocks = 0;

	if (!thinking && !nonempty(m->text) && m->n_tool_calls == 0)
		return;					/* nothing the API would accept */
	if (!*first_msg)
		put(b, ",");
	*first_msg = false;
	put(b, "{\"role\":\"assistant\",\"content\":");
	if (!thinking && m->n_tool_calls == 0)
	{
		put_str(b, m->text);
		put(b, "}");
		return;
	}
	put(b, "[");
	if (thinking)
	{
		block(b, &nblocks);
		put(b, "{\"type\":\"thinking\",\"thinking\":");
		put_str(b, m->reasoning);
		put(b, ",\"signature\":");
		put_str(b, m->reasoning_signature);
		put(b, "}");
	}
	if (nonempty(m->text))
	{
		block(b, &nblocks);
		put(b, "{\"type\":\"text\",\"text\":");
		put_str(b, m->text);
		put(b, "}");
	}
	for (size_t k = 0; k < m->n_tool_calls; k++)
	{
		const mn_req_tool_call *c = &m->tool_calls[k];
		struct json_object *input = NULL;
		mn_span		span;

		block(b, &nblocks);
		put(b, "{\"type\":\"tool_use\",\"id\":");
		put_str(b, c->id);
		put(b, ",\"name\":");
		put_str(b, c->name);
		put(b, ",\"input\":");
		/* input must be an object: what the model got wrong goes as {} */
		if (c->input != NULL)
			input = parse_strict(c->input, &span);
		if (input != NULL && json_object_is_type(input, json_type_object))
			put_span(b, span);
		else
			put(b, "{}");
		json_object_put(input);
		put(b, "}");
	}
	put(b, "]}");
}

static bool
anthropic_body(builder *b, const mn_request *req)
{
	bool		first = true;
	bool		first_msg = true;
	size_t		i = 0;

	if (req->max_output_tokens <= 0)
		return complain(b, "max_output_tokens must be positive (Anthropic requires max_tokens)");
	put(b, "{");
	key(b, &first, "model");
	put_str(b, req->model);
	key(b, &first, "max_tokens");
	mn_buf_put_i64(&b->out, req->max_output_tokens);
	if (nonempty(req->system))
	{
		key(b, &first, "system");
		put_str(b, req->system);
	}
	key(b, &first, "messages");
	put(b, "[");
	while (i < req->n_messages)
	{
		if (user_side(&req->messages[i]))
		{
			size_t		end = i;

			while (end < req->n_messages && user_side(&req->messages[end]))
				end++;
			anthropic_user(b, req, i, end, &first_msg);
			i = end;
		}
		else
			anthropic_assistant(b, &req->messages[i++], &first_msg);
	}
	put(b, "]");
	if (req->tools != NULL)
	{
		key(b, &first, "tools");
		if (!put_tools(b, MN_PROVIDER_ANTHROPIC, req->tools))
			return false;
	}
	if (req->has_temperature)
	{
		key(b, &first, "temperature");
		mn_buf_put_double(&b->out, req->temperature);
	}
	if (req->thinking_budget > 0)
	{
		key(b, &first, "thinking");
		put(b, "{\"type\":\"enabled\",\"budget_tokens\":");
		mn_buf_put_i64(&b->out, req->thinking_budget);
		put(b, "}");
	}
	key(b, &first, "stream");
	put(b, "true");
	put(b, "}");
	return true;
}

/* The builder's outcome: MNEMO_OK, or its complaint (or NOMEM) returned
 * with the output freed. */
static int
builder_result(builder *b, bool ok, char **errmsg)
{
	if (ok && b->out.oom)
		b->nomem = true;
	if (ok && !b->nomem)
		return MNEMO_OK;
	mn_buf_free(&b->out);
	if (b->nomem)
	{
		free(b->err);
		return MNEMO_ERR_NOMEM;
	}
	if (errmsg != NULL)
		*errmsg = b->err;
	else
		free(b->err);
	return MNEMO_ERR_INVALID_ARGUMENT;
}

int
mn_request_check_options(const char *model, const char *tools, char **errmsg)
{
	builder		b;
	bool		ok;
	int			rc;

	memset(&b, 0, sizeof(b));
	if (errmsg != NULL)
		*errmsg = NULL;
	ok = check_text(&b, model, "model", 0) &&
		(tools == NULL || put_tools(&b, MN_PROVIDER_OPENAI, tools));
	rc = builder_result(&b, ok, errmsg);
	mn_buf_free(&b.out);
	return rc;
}

int
mn_request_body(mn_provider provider, const mn_request *req, char **body, size_t *len,
				char **errmsg)
{
	builder		b;
	bool		ok;
	int			rc;

	memset(&b, 0, sizeof(b));
	*body = NULL;
	if (len != NULL)
		*len = 0;
	if (errmsg != NULL)
		*errmsg = NULL;

	if (req == NULL || !nonempty(req->model))
		ok = complain(&b, "a model is required");
	else if (provider != MN_PROVIDER_OPENAI && provider != MN_PROVIDER_ANTHROPIC)
		ok = complain(&b, "unknown provider %d", (int) provider);
	else if (req->has_temperature && (!isfinite(req->temperature) || req->temperature < 0))
		ok = complain(&b, "temperature must be a finite number >= 0");
	else if (!check_text(&b, req->system, "system prompt", 0) ||
			 !check_text(&b, req->model, "model", 0) || !check_messages(&b, req))
		ok = false;
	else if (provider == MN_PROVIDER_OPENAI)
		ok = openai_body(&b, req);
	else
		ok = anthropic_body(&b, req);

	if ((rc = builder_result(&b, ok, errmsg)) != MNEMO_OK)
		return rc;
	*body = b.out.data;
	if (len != NULL)
		*len = b.out.len;
	return MNEMO_OK;
}
