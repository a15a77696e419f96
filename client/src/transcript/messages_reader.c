/*
 * messages_reader.c
 *		The import readers of message lists as the provider APIs take them:
 *		OpenAI Chat Completions and Anthropic Messages.
 *
 * The input is a JSON array of messages, the same as JSON Lines (one
 * message a line), or a request body {"model", "system", "messages": [...]};
 * or tau-bench's results, an array of trajectories {"task_id", "trial",
 * "reward", "info", "traj": [...]}.  Request bodies one a line, or
 * trajectories, are a file of several sessions, one each.
 * One reader reads both APIs' messages, so a list that mixes them (an
 * OpenAI list whose first message has no block to tell) still imports; the
 * two table entries differ in what they detect and the provider they name.
 *
 * The mapping:
 *	- role system or developer -> a "system" message; user; assistant; tool
 *	  (and function) -> the result of its call (tool_calls.c): tool_call_id
 *	  (SWE-agent: the first of tool_call_ids), name, content as output.
 *	- content: a string -> text part; null -> none; a list of blocks:
 *	  text -> text, image_url -> image part (a data: URL becomes media type
 *	  and base64 data), and Anthropic's blocks (anthropic.c).
 *	- assistant reasoning_content / reasoning (a string) -> reasoning part;
 *	  tool_calls -> tool parts, "arguments" (a JSON string) as the input
 *	  when it holds an object, else kept in the part as "arguments".
 *	- any other member (name, refusal, SWE-agent's thought, action, agent,
 *	  message_type, ...) is kept in the message's metadata.
 */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <json.h>

#include "transcript/transcript.h"

static bool
anthropic_blocks(struct json_object *msg)
{
	struct json_object *content = mn_js_arr(msg, "content");

	for (size_t i = 0; content != NULL && i < json_object_array_length(content); i++)
	{
		struct json_object *b = json_object_array_get_idx(content, i);
		const char *type = mn_js_str(b, "type", NULL);

		if (type != NULL && (strcmp(type, "tool_use") == 0 || strcmp(type, "tool_result") == 0 ||
							 strcmp(type, "thinking") == 0 || strcmp(type, "redacted_thinking") == 0 ||
							 (strcmp(type, "image") == 0 && mn_js_obj(b, "source") != NULL)))
			return true;
	}
	return false;
}

/* The member holding a document's messages: a request body's, or a
 * tau-bench trajectory's; NULL when obj is a message itself. */
static const char *
messages_key(struct json_object *obj)
{
	if (mn_js_arr(obj, "messages") != NULL)
		return "messages";
	if (mn_js_arr(obj, "traj") != NULL)
		return "traj";
	return NULL;
}

static struct json_object *
first_message(struct json_object *obj)
{
	const char *key = messages_key(obj);
	struct json_object *list = key != NULL ? mn_js_arr(obj, key) : NULL;

	if (list != NULL)
		return json_object_array_length(list) > 0 ? json_object_array_get_idx(list, 0) : NULL;
	return obj;
}

static bool
openai_detect(struct json_object *obj)
{
	struct json_object *m = first_message(obj);

	return m != NULL && mn_js_str(m, "role", NULL) != NULL;
}

/* What only an OpenAI message list has: a system, developer, tool or
 * function role, tool_calls, a tool_call_id, image_url blocks. */
static bool
openai_distinct(struct json_object *obj)
{
	const char *key = messages_key(obj);
	struct json_object *list = key != NULL ? mn_js_arr(obj, key) : NULL;
	size_t		n = list != NULL ? json_object_array_length(list) : 1;

	for (size_t i = 0; i < n; i++)
	{
		struct json_object *m = list != NULL ? json_object_array_get_idx(list, i) : obj;
		const char *role = mn_js_str(m, "role", NULL);
		struct json_object *content = mn_js_arr(m, "content");

		if (role == NULL)
			continue;
		if (strcmp(role, "system") == 0 || strcmp(role, "developer") == 0 ||
			strcmp(role, "tool") == 0 || strcmp(role, "function") == 0 ||
			mn_js_arr(m, "tool_calls") != NULL || mn_js_str(m, "tool_call_id", NULL) != NULL)
			return true;
		for (size_t k = 0; content != NULL && k < json_object_array_length(content); k++)
		{
			const char *type = mn_js_str(json_object_array_get_idx(content, k), "type", NULL);

			if (type != NULL && strcmp(type, "image_url") == 0)
				return true;
		}
	}
	return false;
}

static bool
anthropic_detect(struct json_object *obj)
{
	struct json_object *m = first_message(obj);

	if (m == NULL || mn_js_str(m, "role", NULL) == NULL)
		return false;
	return anthropic_blocks(m) ||
		(mn_js_arr(obj, "messages") != NULL && json_object_object_get_ex(obj, "system", NULL));
}

void *
mn_chat_create(void)
{
	return calloc(1, sizeof(mn_calls));
}

void
mn_chat_destroy(void *state)
{
	if (state == NULL)
		return;
	mn_calls_free(state);
	free(state);
}

int
mn_chat_sent(mn_import *imp, void *state, const mn_import_msg *m)
{
	return mn_calls_sent(imp, state, m);
}

/* A tau-bench trajectory: its other members (task_id, trial, reward, info)
 * are the session's metadata, with {"source": "tau-bench"}. */
static int
open_trajectory(mn_import *imp, struct json_object *obj, mn_span text)
{
	static const char *const not_meta[] = {"traj", NULL};

	if (!mn_import_strdup("openai", &imp->session.provider_id))
		return mn_import_oom(imp);
	return mn_import_session_meta(imp, obj, text, "tau-bench", not_meta);
}

/*
 * A request body: its model and system prompt describe the session.  A
 * system given as a list of blocks (Anthropic's prompt-caching form) is the
 * system prompt its texts make, joined by a blank line, the blocks kept as
 * they are in the session's metadata ("system"); the rest of the body
 * (tools, max_tokens, temperature, top_p, stream, ...), which a replay
 * needs, is kept there too ("request"), and export writes both back.
 */
static int
open_request(mn_import *imp, struct json_object *obj, mn_span text, const char *provider)
{
	static const char *const not_request[] = {"model", "messages", "system", NULL};
	mn_import_session *s = &imp->session;
	struct json_object *system;
	mn_buf		prompt = {0};
	mn_buf		rest = {0};
	mn_buf		meta = {0};
	mn_span		raw = {NULL, 0};

	/* a document after records that already made the session describes
	 * nothing any more */
	if (imp->created)
		return MNEMO_OK;
	if (strcmp(messages_key(obj), "traj") == 0)
		return open_trajectory(imp, obj, text);
	if (s->provider_id == NULL && !mn_import_strdup(provider, &s->provider_id))
		return mn_import_oom(imp);
	if (s->model_id == NULL && !mn_import_strdup(mn_js_str(obj, "model", NULL), &s->model_id))
		return mn_import_oom(imp);
	if (json_object_object_get_ex(obj, "system", &system) &&
		json_object_is_type(system, json_type_string))
	{
		if (!mn_import_strdup(json_object_get_string(system), &s->system_prompt))
			return mn_import_oom(imp);
	}
	else if (json_object_is_type(system, json_type_array))
	{
		for (size_t i = 0; i < json_object_array_length(system); i++)
		{
			size_t		len;
			const char *t = mn_js_str(json_object_array_get_idx(system, i), "text", &len);

			if (t == NULL)
				continue;
			if (prompt.len > 0)
				mn_buf_puts(&prompt, "\n\n");
			mn_buf_put(&prompt, t, len);
		}
		if (prompt.oom || (prompt.len > 0 && !mn_import_strdup(prompt.data, &s->system_prompt)))
		{
			mn_buf_free(&prompt);
			return mn_import_oom(imp);
		}
		mn_buf_free(&prompt);
		(void) mn_json_member(text, "system", &raw);
	}
	if (s->metadata != NULL)
		return MNEMO_OK;
	mn_import_others(obj, text, not_request, &rest);
	mn_buf_puts(&meta, "{");
	if (raw.len > 0)
	{
		mn_buf_puts(&meta, "\"system\":");
		mn_buf_put(&meta, raw.p, raw.len);
	}
	if (rest.len > 0)
	{
		mn_buf_puts(&meta, raw.len > 0 ? ",\"request\":" : "\"request\":");
		mn_buf_put(&meta, rest.data, rest.len);
	}
	mn_buf_puts(&meta, "}");
	if (meta.oom || rest.oom)
	{
		mn_buf_free(&rest);
		mn_buf_free(&meta);
		return mn_import_oom(imp);
	}
	mn_buf_free(&rest);
	if (meta.len > 2)
		s->metadata = meta.data;
	else
		mn_buf_free(&meta);
	return MNEMO_OK;
}

static int
openai_open(mn_import *imp, void *state, int64_t lineno, struct json_object *obj, mn_span text)
{
	(void) state;
	(void) lineno;
	return open_request(imp, obj, text, "openai");
}

static int
anthropic_open(mn_import *imp, void *state, int64_t lineno, struct json_object *obj,
			   mn_span text)
{
	(void) state;
	(void) lineno;
	return open_request(imp, obj, text, "anthropic");
}

/* "data:image/png;base64,AAAA" as media type and data; false if not one. */
static bool
data_url(const char *url, char *media, size_t media_size, const char **data)
{
	const char *semi;

	if (strncmp(url, "data:", 5) != 0 || (semi = strstr(url, ";base64,")) == NULL ||
		(size_t) (semi - url - 5) >= media_size)
		return false;
	memcpy(media, url + 5, (size_t) (semi - url - 5));
	media[semi - url - 5] = '\0';
	*data = semi + 8;
	return true;
}

static int
openai_block(mn_import *imp, mn_calls *calls, int64_t line, size_t i, struct json_object *b,
			 mn_span text, mn_import_msg **m, bool assistant)
{
	const char *type = mn_js_str(b, "type", NULL);
	mn_import_part *p;
	mn_span		v;
	char		key[32];

	if (type != NULL && (strcmp(type, "text") == 0 || strcmp(type, "input_text") == 0 ||
						 strcmp(type, "output_text") == 0) && mn_js_str(b, "text", NULL) != NULL)
	{
		if ((p = mn_import_part_new(imp, *m, "text")) == NULL)
			return imp->st->errcode;
		if (mn_json_member(text, "text", &v))
			mn_part_put_raw(p, "text", v);
		return p->members.oom ? mn_import_oom(imp) : MNEMO_OK;
	}
	if (type != NULL && strcmp(type, "image_url") == 0)
	{
		struct json_object *img = mn_js_obj(b, "image_url");
		const char *url = img ? mn_js_str(img, "url", NULL) : mn_js_str(b, "image_url", NULL);
		char		media[128];
		const char *data;

		if (url != NULL && data_url(url, media, sizeof(media), &data))
			return mn_import_image(imp, *m, media, data, strlen(data), NULL);
		return mn_import_image(imp, *m, NULL, NULL, 0, url != NULL ? url : "");
	}
	if (type != NULL &&
		(strcmp(type, "tool_use") == 0 || strcmp(type, "tool_result") == 0 ||
		 strcmp(type, "thinking") == 0 || strcmp(type, "redacted_thinking") == 0 ||
		 strcmp(type, "image") == 0))
		return assistant ? mn_anthropic_assistant_block(imp, calls, line, i, b, text, *m)
			: mn_anthropic_user_block(imp, calls, line, i, b, text, (mn_span) {NULL, 0}, m);
	snprintf(key, sizeof(key), "content[%zu]", i);
	mn_import_keep(imp, *m, key, text, type != NULL ? type : "content block");
	return (*m)->meta.oom ? mn_import_oom(imp) : MNEMO_OK;
}

static int
tool_calls(mn_import *imp, mn_calls *calls, int64_t line, struct json_object *list,
		   mn_span list_text, mn_import_msg *m)
{
	size_t		pos = 0;

	for (size_t i = 0; i < json_object_array_length(list); i++)
	{
		struct json_object *call = json_object_array_get_idx(list, i);
		struct json_object *fn = mn_js_obj(call, "function");
		const char *id = mn_js_str(call, "id", NULL);
		const char *name = fn ? mn_js_str(fn, "name", NULL) : NULL;
		size_t		alen = 0;
		const char *args = fn ? mn_js_str(fn, "arguments", &alen) : NULL;
		struct json_object *parsed = args ? json_tokener_parse(args) : NULL;
		bool		object = json_object_is_type(parsed, json_type_object);
		mn_span		call_text,
					fn_text,
					raw;
		mn_import_part *p;

		json_object_put(parsed);
		(void) mn_json_next_element(list_text, &pos, &call_text);
		if (id == NULL || name == NULL)
			return mn_fail(imp->st, MNEMO_ERR_FORMAT,
						   "line %" PRId64 ": tool_calls[%zu] without an \"id\" and a function "
						   "\"name\"", line, i);
		p = mn_import_tool_call(imp, calls, m, name, id,
								object ? (mn_span) {args, alen} : (mn_span) {NULL, 0});
		if (p == NULL)
			return imp->st->errcode;
		if (!object && args != NULL && mn_json_member(call_text, "function", &fn_text) &&
			mn_json_member(fn_text, "arguments", &raw))
			mn_part_put_raw(p, "arguments", raw);
		if (p->members.oom)
			return mn_import_oom(imp);
	}
	return MNEMO_OK;
}

/* Whether a tool message's content list holds an image. */
static bool
has_image(struct json_object *content)
{
	for (size_t i = 0; json_object_is_type(content, json_type_array) &&
		 i < json_object_array_length(content); i++)
	{
		const char *type = mn_js_str(json_object_array_get_idx(content, i), "type", NULL);

		if (type != NULL && strcmp(type, "image_url") == 0)
			return true;
	}
	return false;
}

/*
 * A tool result with images (a screenshot tool's, say): its text blocks,
 * joined by a line break, are the call's output, and its images image
 * parts of a tool message right after it, which names the call in its
 * metadata.
 */
static int
tool_images(mn_import *imp, mn_calls *calls, int64_t line, const char *call_id, const char *name,
			struct json_object *content, mn_span content_text, mn_span meta)
{
	mn_buf		joined = {0};
	mn_buf		out = {0};
	mn_import_msg *m = NULL;
	size_t		pos = 0;
	int			rc = MNEMO_OK;

	for (size_t i = 0; i < json_object_array_length(content); i++)
	{
		size_t		len;
		const char *t = mn_js_str(json_object_array_get_idx(content, i), "text", &len);

		if (t == NULL)
			continue;
		if (joined.len > 0)
			mn_buf_puts(&joined, "\n");
		mn_buf_put(&joined, t, len);
	}
	mn_buf_put_jstr(&out, joined.len > 0 ? joined.data : "", joined.len);
	if (joined.oom || out.oom)
		rc = mn_import_oom(imp);
	if (rc == MNEMO_OK)
		rc = mn_calls_result(imp, calls, line, call_id, name, false, 0,
							 (mn_span) {out.data, out.len}, meta);
	mn_buf_free(&joined);
	mn_buf_free(&out);
	if (rc == MNEMO_OK && (m = mn_import_msg_new(imp, line, "tool")) == NULL)
		return imp->st->errcode;
	for (size_t i = 0; rc == MNEMO_OK && i < json_object_array_length(content); i++)
	{
		struct json_object *b = json_object_array_get_idx(content, i);
		const char *type = mn_js_str(b, "type", NULL);
		mn_span		b_text;

		(void) mn_json_next_element(content_text, &pos, &b_text);
		if (type != NULL && strcmp(type, "image_url") == 0)
			rc = openai_block(imp, calls, line, i, b, b_text, &m, false);
	}
	if (rc == MNEMO_OK && call_id != NULL)
	{
		mn_buf		id = {0};

		mn_buf_put_jstr(&id, call_id, strlen(call_id));
		mn_import_keep(imp, m, "tool_call_id", (mn_span) {id.data, id.len}, NULL);
		rc = id.oom || m->meta.oom ? mn_import_oom(imp) : MNEMO_OK;
		mn_buf_free(&id);
	}
	if (rc != MNEMO_OK)
	{
		mn_import_msg_free(m);
		return rc;
	}
	return mn_import_push(imp, m);
}

static int
tool_message(mn_import *imp, mn_calls *calls, int64_t line, struct json_object *obj, mn_span text)
{
	static const char *const known[] = {"role", "content", "tool_call_id", "tool_call_ids", "name",
	NULL};
	const char *call_id = mn_js_str(obj, "tool_call_id", NULL);
	struct json_object *ids = mn_js_arr(obj, "tool_call_ids");
	mn_span		output = {NULL, 0};
	mn_buf		meta = {0};
	struct json_object *c = NULL;
	int			rc;

	if (call_id == NULL && ids != NULL && json_object_array_length(ids) > 0)
		call_id = json_object_get_string(json_object_array_get_idx(ids, 0));
	if (json_object_object_get_ex(obj, "content", &c) && !json_object_is_type(c, json_type_null))
		(void) mn_json_member(text, "content", &output);
	mn_import_others(obj, text, known, &meta);
	if (meta.oom)
		rc = mn_import_oom(imp);
	else if (has_image(c) && output.len > 0)
		rc = tool_images(imp, calls, line, call_id, mn_js_str(obj, "name", NULL), c, output,
						 (mn_span) {meta.data, meta.len});
	else
		rc = mn_calls_result(imp, calls, line, call_id, mn_js_str(obj, "name", NULL), false,
							 0, output, (mn_span) {meta.data, meta.len});
	mn_buf_free(&meta);
	return rc;
}

int
mn_chat_line(mn_import *imp, void *state, int64_t line, const char *text, size_t len,
			 struct json_object *obj)
{
	static const char *const known[] = {"role", "content", "tool_calls", "reasoning_content",
	"reasoning", NULL};
	mn_calls   *calls = state;
	mn_span		whole = {text, len};
	const char *role = json_object_is_type(obj, json_type_object) ? mn_js_str(obj, "role", NULL) : NULL;
	struct json_object *content = NULL;
	struct json_object *list;
	mn_import_msg *m;
	mn_span		raw;
	bool		assistant;
	int			rc = MNEMO_OK;

	if (role == NULL)
		return mn_fail(imp->st, MNEMO_ERR_FORMAT,
					   "line %" PRId64 ": a message must be a JSON object with a \"role\"", line);
	if (strcmp(role, "tool") == 0 || strcmp(role, "function") == 0)
		return tool_message(imp, calls, line, obj, whole);
	if (strcmp(role, "developer") == 0)
		role = "system";
	if (strcmp(role, "system") != 0 && strcmp(role, "user") != 0 && strcmp(role, "assistant") != 0)
		return mn_fail(imp->st, MNEMO_ERR_FORMAT, "line %" PRId64 ": unknown role \"%s\"", line, role);
	assistant = strcmp(role, "assistant") == 0;
	if ((m = mn_import_msg_new(imp, line, role)) == NULL)
		return imp->st->errcode;

	if (assistant)
		for (const char *const *k = &known[3]; *k != NULL; k++)
			if (mn_js_str(obj, *k, NULL) != NULL && mn_json_member(whole, *k, &raw))
			{
				mn_import_part *p = mn_import_part_new(imp, m, "reasoning");

				if (p == NULL)
				{
					mn_import_msg_free(m);
					return imp->st->errcode;
				}
				mn_part_put_raw(p, "text", raw);
				break;
			}
	json_object_object_get_ex(obj, "content", &content);
	if (json_object_is_type(content, json_type_string))
	{
		mn_import_part *p = mn_import_part_new(imp, m, "text");

		if (p == NULL || !mn_json_member(whole, "content", &raw) ||
			(mn_part_put_raw(p, "text", raw), p->members.oom))
			rc = mn_import_oom(imp);
	}
	else if (json_object_is_type(content, json_type_array) && mn_json_member(whole, "content", &raw))
	{
		size_t		pos = 0;

		for (size_t i = 0; rc == MNEMO_OK && i < json_object_array_length(content); i++)
		{
			mn_span		b;

			(void) mn_json_next_element(raw, &pos, &b);
			rc = openai_block(imp, calls, line, i, json_object_array_get_idx(content, i), b, &m,
							  assistant);
		}
	}
	else if (content != NULL && !json_object_is_type(content, json_type_null))
		rc = mn_fail(imp->st, MNEMO_ERR_FORMAT,
					 "line %" PRId64 ": \"content\" must be a string, a list or null", line);
	if (rc == MNEMO_OK && assistant && (list = mn_js_arr(obj, "tool_calls")) != NULL &&
		mn_json_member(whole, "tool_calls", &raw))
		rc = tool_calls(imp, calls, line, list, raw, m);
	if (rc == MNEMO_OK)
	{
		json_object_object_foreach(obj, key, v)
		{
			const char *const *k;

			(void) v;
			for (k = known; *k != NULL && strcmp(*k, key) != 0; k++)
				;
			if (*k == NULL && mn_json_member(whole, key, &raw))
				mn_import_keep(imp, m, key, raw, NULL);
		}
		if (m->meta.oom)
			rc = mn_import_oom(imp);
	}
	if (rc != MNEMO_OK)
	{
		mn_import_msg_free(m);
		return rc;
	}
	return mn_import_push(imp, m);
}

const mn_reader mn_openai_reader = {
	"openai", openai_detect, messages_key, openai_open, mn_chat_create, mn_chat_line, NULL,
	mn_chat_sent, mn_chat_destroy, NULL, openai_distinct
};

const mn_reader mn_anthropic_reader = {
	"anthropic", anthropic_detect, messages_key, anthropic_open, mn_chat_create, mn_chat_line, NULL,
	mn_chat_sent, mn_chat_destroy, NULL, NULL
};
