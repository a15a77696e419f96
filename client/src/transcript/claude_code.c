/*
 * claude_code.c
 *		The import reader of Claude Code session logs.
 *
 * A log is one record a line, linked by uuid.  Records of type "user" and
 * "assistant" carry an Anthropic Messages API message; the others (progress,
 * system, file-history-snapshot, queue-operation, pr-link, ...) are editor
 * bookkeeping and are left out, each reported through options.skipped, as
 * are sidechain records (a sub-agent's conversation, not this one).
 *
 * The mapping:
 *	- Claude Code writes one line per content block of an API response,
 *	  repeating message.id, with the user lines carrying the tool results in
 *	  between.  All lines with the same message.id form one assistant
 *	  message: text -> text part, thinking -> reasoning part (with its
 *	  signature), redacted_thinking -> reasoning part with "text": "" and the
 *	  "data", tool_use -> tool part (tool_name, tool_call_id, input).  The
 *	  last usage seen gives the tokens (input, output, cache_read =
 *	  cache_read_input_tokens, cache_write = cache_creation_input_tokens),
 *	  the last stop_reason the finish_reason, model the model_id.
 *	- A tool_result block completes the tool part of the call it answers,
 *	  so one mnemo tool part holds a call's input and output: "output" is
 *	  the result's content (a string, or the list of blocks as JSON) and the
 *	  state "completed"; with is_error the state is "error" and a string
 *	  content goes to "error_message" instead.  The assistant message is
 *	  held back until the next response or user turn begins, so its results
 *	  are in it before it is appended; a result that arrives after its
 *	  message was sent is merged by update_part_status (a list content then
 *	  as its JSON text), and a result for a call never seen becomes a "tool"
 *	  message of its own (tool_name "unknown").
 *	- A user string content is one text part; a list gives a text part per
 *	  text block and, for an image, a text part "[image: MEDIA_TYPE]" that
 *	  keeps the block's "source" (the base64 data) beside the text.
 *	- A "summary" record gives the session's title.
 * Message and part ids are the server's: importing a log twice gives two
 * sessions.  The session takes the log's sessionId when no session has it,
 * agent "claude-code", provider "anthropic", the first model, and metadata
 * {"source", "session_id", "cwd", "git_branch", "version", "slug"}.
 * Block text and tool inputs are copied from the line as written.
 */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <json.h>

#include "transcript/transcript.h"

/* A tool call waiting for its result. */
typedef struct pending_call
{
	char	   *call_id;
	mn_import_msg *msg;			/* the message with the part, not yet sent */
	size_t		part;
	char	   *message_id;		/* once msg was sent */
} pending_call;

typedef struct cc_state
{
	mn_import_msg *held;		/* the assistant message being assembled */
	char	   *held_api_id;	/* its message.id */
	pending_call *calls;
	size_t		n_calls;
	size_t		cap_calls;
	bool		described;		/* the session's metadata is set */
} cc_state;

static int
oom(mn_import *imp)
{
	return mn_fail(imp->st, MNEMO_ERR_NOMEM, "out of memory");
}

static bool
put_json_string(mn_import_part *p, const char *key, struct json_object *v)
{
	mn_part_put_string(p, key, json_object_get_string(v), (size_t) json_object_get_string_len(v));
	return !p->members.oom;
}

static bool
cc_detect(struct json_object *obj)
{
	return mn_js_str(obj, "type", NULL) != NULL;
}

static void *
cc_create(void)
{
	return calloc(1, sizeof(cc_state));
}

static void
drop_call(cc_state *cc, size_t i)
{
	free(cc->calls[i].call_id);
	free(cc->calls[i].message_id);
	cc->calls[i] = cc->calls[--cc->n_calls];
}

static void
cc_destroy(void *state)
{
	cc_state   *cc = state;

	if (cc == NULL)
		return;
	while (cc->n_calls > 0)
		drop_call(cc, cc->n_calls - 1);
	free(cc->calls);
	mn_import_msg_free(cc->held);
	free(cc->held_api_id);
	free(cc);
}

static int
cc_sent(mn_import *imp, void *state, const mn_import_msg *m)
{
	cc_state   *cc = state;

	for (size_t i = 0; i < cc->n_calls; i++)
	{
		if (cc->calls[i].msg != m)
			continue;
		cc->calls[i].msg = NULL;
		if (!mn_import_strdup(m->ref_id, &cc->calls[i].message_id))
			return oom(imp);
	}
	return MNEMO_OK;
}

/* Push the held assistant message, if any. */
static int
release(mn_import *imp, cc_state *cc)
{
	mn_import_msg *m = cc->held;

	if (m == NULL)
		return MNEMO_OK;
	cc->held = NULL;
	free(cc->held_api_id);
	cc->held_api_id = NULL;
	return mn_import_push(imp, m);
}

/* The session's description, from the first record that has one. */
static int
describe(mn_import *imp, cc_state *cc, struct json_object *rec)
{
	static const char *const keys[][2] = {
		{"sessionId", "session_id"}, {"cwd", "cwd"}, {"gitBranch", "git_branch"},
		{"version", "version"}, {"slug", "slug"}
	};
	mn_import_session *s = &imp->session;
	const char *sid = mn_js_str(rec, "sessionId", NULL);
	mn_buf		meta = {0};

	if (cc->described || sid == NULL)
		return MNEMO_OK;
	cc->described = true;
	mn_buf_puts(&meta, "{\"source\":\"claude-code\"");
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
	{
		struct json_object *v;

		if (!json_object_object_get_ex(rec, keys[i][0], &v) ||
			!json_object_is_type(v, json_type_string))
			continue;
		mn_buf_puts(&meta, ",");
		mn_buf_put_jstr(&meta, keys[i][1], strlen(keys[i][1]));
		mn_buf_puts(&meta, ":");
		mn_buf_put_jstr(&meta, json_object_get_string(v), (size_t) json_object_get_string_len(v));
	}
	mn_buf_puts(&meta, "}");
	if (meta.oom)
	{
		mn_buf_free(&meta);
		return oom(imp);
	}
	free(s->metadata);
	s->metadata = meta.data;
	/* an id mnemo cannot take is no error: the session gets a new one */
	if ((!imp->opts->session_id && strlen(sid) <= MNEMO_ID_MAX &&
		 !mn_import_strdup(sid, &s->want_id)) ||
		!mn_import_strdup("claude-code", &s->agent) ||
		!mn_import_strdup("anthropic", &s->provider_id))
		return oom(imp);
	return MNEMO_OK;
}

/* ------------------------------------------------------------------------
 * Tool results
 * ------------------------------------------------------------------------ */

/* Result content into a part being built; false when out of memory. */
static bool
put_result(mn_import_part *p, bool is_error, struct json_object *content, mn_span content_text)
{
	if (content != NULL && json_object_is_type(content, json_type_string))
		return put_json_string(p, is_error ? "error_message" : "output", content);
	if (content != NULL && !json_object_is_type(content, json_type_null))
		mn_part_put_raw(p, "output", content_text);
	return !p->members.oom;
}

/* A result for a call whose message was sent: merged into the stored part. */
static int
complete_sent(mn_import *imp, const char *message_id, const char *call_id, bool is_error,
			  struct json_object *content, mn_span content_text)
{
	mnemo_parts *parts = NULL;
	mnemo_part_status status = {0};
	char	   *text = NULL;
	int			rc;

	if ((rc = mnemo_parts_get(imp->st, imp->session_id, message_id, &parts)) != MNEMO_OK)
		return rc;
	for (size_t i = 0; i < parts->count; i++)
	{
		const mnemo_part *p = &parts->items[i];

		if (p->tool_call_id == NULL || strcmp(p->tool_call_id, call_id) != 0)
			continue;
		status.tool_state = is_error ? "error" : "completed";
		if (content != NULL && json_object_is_type(content, json_type_string))
			*(is_error ? &status.error_message : &status.output) = json_object_get_string(content);
		else if (content != NULL && !json_object_is_type(content, json_type_null))
		{
			if ((text = strndup(content_text.p, content_text.len)) == NULL)
			{
				mnemo_parts_free(parts);
				return oom(imp);
			}
			status.output = text;
		}
		rc = mnemo_part_update_status(imp->st, imp->session_id, p->id, &status);
		break;
	}
	free(text);
	mnemo_parts_free(parts);
	return rc;
}

static int
tool_result(mn_import *imp, cc_state *cc, int64_t line, struct json_object *block, mn_span text)
{
	const char *call_id = mn_js_str(block, "tool_use_id", NULL);
	struct json_object *content = NULL;
	struct json_object *flag;
	mn_span		content_text = {NULL, 0};
	bool		is_error;
	mn_import_msg *m;
	mn_import_part *p;
	int			rc;

	if (call_id == NULL)
		return mn_fail(imp->st, MNEMO_ERR_FORMAT,
					   "line %" PRId64 ": a tool_result without a \"tool_use_id\" string", line);
	is_error = json_object_object_get_ex(block, "is_error", &flag) && json_object_get_boolean(flag);
	if (json_object_object_get_ex(block, "content", &content))
		(void) mn_json_member(text, "content", &content_text);

	for (size_t i = 0; i < cc->n_calls; i++)
	{
		pending_call *c = &cc->calls[i];

		if (strcmp(c->call_id, call_id) != 0)
			continue;
		if (c->msg != NULL)
		{
			p = &c->msg->parts[c->part];
			p->tool_state = is_error ? "error" : "completed";
			rc = put_result(p, is_error, content, content_text) ? MNEMO_OK : oom(imp);
		}
		else
			rc = complete_sent(imp, c->message_id, call_id, is_error, content, content_text);
		drop_call(cc, i);
		return rc;
	}

	/* a result for no call we know of: a tool message of its own, in order */
	if ((rc = release(imp, cc)) != MNEMO_OK)
		return rc;
	if ((m = mn_import_msg_new(imp, line, "tool")) == NULL)
		return imp->st->errcode;
	if ((p = mn_import_part_new(imp, m, "tool")) == NULL)
	{
		mn_import_msg_free(m);
		return imp->st->errcode;
	}
	mn_part_put_string(p, "tool_name", "unknown", 7);
	mn_part_put_string(p, "tool_call_id", call_id, strlen(call_id));
	p->tool_state = is_error ? "error" : "completed";
	if (!put_result(p, is_error, content, content_text))
	{
		mn_import_msg_free(m);
		return oom(imp);
	}
	return mn_import_push(imp, m);
}

/* ------------------------------------------------------------------------
 * Records
 * ------------------------------------------------------------------------ */

/* The "message" object of a record and its text. */
static int
message_of(mn_import *imp, int64_t line, struct json_object *rec, mn_span text,
		   struct json_object **msg, mn_span *msg_text)
{
	if (!json_object_object_get_ex(rec, "message", msg) ||
		!json_object_is_type(*msg, json_type_object) ||
		!mn_json_member(text, "message", msg_text))
		return mn_fail(imp->st, MNEMO_ERR_FORMAT,
					   "line %" PRId64 ": a %s record without a \"message\" object", line,
					   mn_js_str(rec, "type", NULL));
	return MNEMO_OK;
}

static int
user_record(mn_import *imp, cc_state *cc, int64_t line, struct json_object *rec, mn_span text)
{
	struct json_object *msg;
	struct json_object *content;
	mn_span		msg_text;
	mn_span		list_text;
	mn_import_msg *m = NULL;
	size_t		pos = 0;
	int			rc;

	if ((rc = message_of(imp, line, rec, text, &msg, &msg_text)) != MNEMO_OK)
		return rc;
	if (!json_object_object_get_ex(msg, "content", &content))
		content = NULL;

	if (content != NULL && json_object_is_type(content, json_type_string))
	{
		mn_import_part *p;

		if ((rc = release(imp, cc)) != MNEMO_OK)
			return rc;
		if ((m = mn_import_msg_new(imp, line, "user")) == NULL)
			return imp->st->errcode;
		if ((p = mn_import_part_new(imp, m, "text")) == NULL || !put_json_string(p, "text", content))
		{
			mn_import_msg_free(m);
			return oom(imp);
		}
		return mn_import_push(imp, m);
	}
	if (content == NULL || !json_object_is_type(content, json_type_array) ||
		!mn_json_member(msg_text, "content", &list_text))
		return mn_fail(imp->st, MNEMO_ERR_FORMAT,
					   "line %" PRId64 ": a user message's content must be a string or a list",
					   line);

	for (size_t i = 0; i < json_object_array_length(content); i++)
	{
		struct json_object *block = json_object_array_get_idx(content, i);
		const char *type = json_object_is_type(block, json_type_object) ? mn_js_str(block, "type", NULL) : NULL;
		mn_span		block_text = {NULL, 0};
		mn_import_part *p;
		struct json_object *v;

		(void) mn_json_next_element(list_text, &pos, &block_text);
		if (type == NULL)
		{
			rc = mn_fail(imp->st, MNEMO_ERR_FORMAT,
						 "line %" PRId64 ": content[%zu] is not a block with a \"type\"", line, i);
			break;
		}
		if (strcmp(type, "tool_result") == 0)
		{
			if ((rc = tool_result(imp, cc, line, block, block_text)) != MNEMO_OK)
				break;
			continue;
		}
		if (strcmp(type, "text") != 0 && strcmp(type, "image") != 0)
		{
			mn_import_skipped(imp, line, type);
			continue;
		}
		if (m == NULL && (m = mn_import_msg_new(imp, line, "user")) == NULL)
			return imp->st->errcode;
		if ((p = mn_import_part_new(imp, m, "text")) == NULL)
		{
			rc = imp->st->errcode;
			break;
		}
		if (strcmp(type, "text") == 0)
		{
			if (!json_object_object_get_ex(block, "text", &v) || !json_object_is_type(v, json_type_string))
			{
				rc = mn_fail(imp->st, MNEMO_ERR_FORMAT,
							 "line %" PRId64 ": content[%zu] is a text block without text", line, i);
				break;
			}
			put_json_string(p, "text", v);
		}
		else
		{
			const char *media = NULL;
			mn_span		source;
			mn_buf		label = {0};

			if (json_object_object_get_ex(block, "source", &v))
				media = mn_js_str(v, "media_type", NULL);
			mn_buf_puts(&label, "[image: ");
			mn_buf_puts(&label, media ? media : "unknown");
			mn_buf_puts(&label, "]");
			mn_part_put_string(p, "text", label.data ? label.data : "", label.len);
			mn_buf_free(&label);
			if (mn_json_member(block_text, "source", &source))
				mn_part_put_raw(p, "source", source);
		}
		if (p->members.oom)
		{
			rc = oom(imp);
			break;
		}
	}
	if (rc != MNEMO_OK || m == NULL)
	{
		mn_import_msg_free(m);
		return rc;
	}
	/* the results above belong to the held message, which comes first */
	if ((rc = release(imp, cc)) != MNEMO_OK)
	{
		mn_import_msg_free(m);
		return rc;
	}
	return mn_import_push(imp, m);
}

static int
remember_call(mn_import *imp, cc_state *cc, const char *call_id, mn_import_msg *m, size_t part)
{
	pending_call *c;

	if (cc->n_calls == cc->cap_calls)
	{
		size_t		cap = cc->cap_calls ? cc->cap_calls * 2 : 16;
		pending_call *grown = realloc(cc->calls, cap * sizeof(*grown));

		if (grown == NULL)
			return oom(imp);
		cc->calls = grown;
		cc->cap_calls = cap;
	}
	c = &cc->calls[cc->n_calls];
	memset(c, 0, sizeof(*c));
	if ((c->call_id = strdup(call_id)) == NULL)
		return oom(imp);
	c->msg = m;
	c->part = part;
	cc->n_calls++;
	return MNEMO_OK;
}

/* One block of an assistant line into the held message. */
static int
assistant_block(mn_import *imp, cc_state *cc, int64_t line, size_t i,
				struct json_object *block, mn_span block_text)
{
	mn_import_msg *m = cc->held;
	const char *type = json_object_is_type(block, json_type_object) ? mn_js_str(block, "type", NULL) : NULL;
	struct json_object *v = NULL;
	mn_import_part *p;
	mn_span		raw;

	if (type == NULL)
		return mn_fail(imp->st, MNEMO_ERR_FORMAT,
					   "line %" PRId64 ": content[%zu] is not a block with a \"type\"", line, i);
	if (strcmp(type, "text") == 0 || strcmp(type, "thinking") == 0)
	{
		bool		thinking = strcmp(type, "thinking") == 0;

		if (!json_object_object_get_ex(block, type, &v) || !json_object_is_type(v, json_type_string))
			return mn_fail(imp->st, MNEMO_ERR_FORMAT,
						   "line %" PRId64 ": content[%zu] is a %s block without \"%s\"",
						   line, i, type, type);
		if ((p = mn_import_part_new(imp, m, thinking ? "reasoning" : "text")) == NULL)
			return imp->st->errcode;
		put_json_string(p, "text", v);
		if (thinking && json_object_object_get_ex(block, "signature", &v) &&
			json_object_is_type(v, json_type_string))
			put_json_string(p, "signature", v);
	}
	else if (strcmp(type, "redacted_thinking") == 0)
	{
		if ((p = mn_import_part_new(imp, m, "reasoning")) == NULL)
			return imp->st->errcode;
		mn_part_put_string(p, "text", "", 0);
		if (mn_json_member(block_text, "data", &raw))
			mn_part_put_raw(p, "data", raw);
	}
	else if (strcmp(type, "tool_use") == 0)
	{
		const char *name = mn_js_str(block, "name", NULL);
		const char *call_id = mn_js_str(block, "id", NULL);
		int			rc;

		if (name == NULL || call_id == NULL)
			return mn_fail(imp->st, MNEMO_ERR_FORMAT,
						   "line %" PRId64 ": content[%zu] is a tool_use without \"name\" and \"id\"",
						   line, i);
		if (!json_object_object_get_ex(block, "input", &v))
			v = NULL;
		if (v != NULL && !json_object_is_type(v, json_type_null) &&
			!json_object_is_type(v, json_type_object))
			return mn_fail(imp->st, MNEMO_ERR_FORMAT,
						   "line %" PRId64 ": content[%zu] is a tool_use whose input is not an object",
						   line, i);
		if ((p = mn_import_part_new(imp, m, "tool")) == NULL)
			return imp->st->errcode;
		mn_part_put_string(p, "tool_name", name, strlen(name));
		mn_part_put_string(p, "tool_call_id", call_id, strlen(call_id));
		if (v != NULL && !json_object_is_type(v, json_type_null) &&
			mn_json_member(block_text, "input", &raw))
			mn_part_put_raw(p, "input", raw);
		if ((rc = remember_call(imp, cc, call_id, m, m->n_parts - 1)) != MNEMO_OK)
			return rc;
	}
	else
	{
		mn_import_skipped(imp, line, type);
		return MNEMO_OK;
	}
	return p->members.oom ? oom(imp) : MNEMO_OK;
}

static int
assistant_record(mn_import *imp, cc_state *cc, int64_t line, struct json_object *rec,
				 mn_span text)
{
	struct json_object *msg;
	struct json_object *content;
	struct json_object *usage;
	mn_span		msg_text;
	mn_span		list_text;
	const char *api_id;
	const char *model;
	const char *stop;
	size_t		pos = 0;
	int			rc;

	if ((rc = message_of(imp, line, rec, text, &msg, &msg_text)) != MNEMO_OK)
		return rc;
	api_id = mn_js_str(msg, "id", NULL);
	model = mn_js_str(msg, "model", NULL);

	/* a new response: the one held is complete */
	if (cc->held == NULL || api_id == NULL || cc->held_api_id == NULL ||
		strcmp(api_id, cc->held_api_id) != 0)
	{
		if ((rc = release(imp, cc)) != MNEMO_OK)
			return rc;
		if ((cc->held = mn_import_msg_new(imp, line, "assistant")) == NULL)
			return imp->st->errcode;
		if (!mn_import_strdup(api_id, &cc->held_api_id) ||
			!mn_import_strdup(model, &cc->held->model_id) ||
			!mn_import_strdup("anthropic", &cc->held->provider_id))
			return oom(imp);
		if (model != NULL && imp->session.model_id == NULL && !imp->created &&
			!mn_import_strdup(model, &imp->session.model_id))
			return oom(imp);
	}

	if (!json_object_object_get_ex(msg, "content", &content))
		content = NULL;
	if (content != NULL && json_object_is_type(content, json_type_string))
	{
		mn_import_part *p = mn_import_part_new(imp, cc->held, "text");

		if (p == NULL || !put_json_string(p, "text", content))
			return oom(imp);
	}
	else if (content != NULL && json_object_is_type(content, json_type_array) &&
			 mn_json_member(msg_text, "content", &list_text))
	{
		for (size_t i = 0; i < json_object_array_length(content); i++)
		{
			mn_span		block_text = {NULL, 0};

			(void) mn_json_next_element(list_text, &pos, &block_text);
			rc = assistant_block(imp, cc, line, i, json_object_array_get_idx(content, i), block_text);
			if (rc != MNEMO_OK)
				return rc;
		}
	}
	else if (content != NULL && !json_object_is_type(content, json_type_null))
		return mn_fail(imp->st, MNEMO_ERR_FORMAT,
					   "line %" PRId64 ": an assistant message's content must be a list", line);

	/* each line repeats the usage so far; the last one is the response's */
	if (json_object_object_get_ex(msg, "usage", &usage) &&
		json_object_is_type(usage, json_type_object))
	{
		static const char *const keys[] = {
			"input_tokens", "output_tokens", "cache_read_input_tokens",
			"cache_creation_input_tokens"
		};
		int64_t    *dst[] = {
			&cc->held->tokens.input, &cc->held->tokens.output,
			&cc->held->tokens.cache_read, &cc->held->tokens.cache_write
		};

		for (int k = 0; k < 4; k++)
		{
			struct json_object *v;

			if (json_object_object_get_ex(usage, keys[k], &v) &&
				json_object_is_type(v, json_type_int) && json_object_get_int64(v) >= 0)
			{
				*dst[k] = json_object_get_int64(v);
				cc->held->has_tokens = true;
			}
		}
	}
	if ((stop = mn_js_str(msg, "stop_reason", NULL)) != NULL)
	{
		free(cc->held->finish_reason);
		if (!mn_import_strdup(stop, &cc->held->finish_reason))
			return oom(imp);
	}
	return MNEMO_OK;
}

static int
cc_line(mn_import *imp, void *state, int64_t line, const char *text, size_t len,
		struct json_object *rec)
{
	cc_state   *cc = state;
	mn_span		whole = {text, len};
	const char *type;
	struct json_object *v;
	int			rc;

	if (!json_object_is_type(rec, json_type_object) || (type = mn_js_str(rec, "type", NULL)) == NULL)
		return mn_fail(imp->st, MNEMO_ERR_FORMAT,
					   "line %" PRId64 ": a Claude Code record must be a JSON object with a \"type\"",
					   line);
	if ((rc = describe(imp, cc, rec)) != MNEMO_OK)
		return rc;
	if (json_object_object_get_ex(rec, "isSidechain", &v) && json_object_get_boolean(v))
	{
		mn_import_skipped(imp, line, "sidechain");
		return MNEMO_OK;
	}
	if (strcmp(type, "user") == 0)
		return user_record(imp, cc, line, rec, whole);
	if (strcmp(type, "assistant") == 0)
		return assistant_record(imp, cc, line, rec, whole);
	if (strcmp(type, "summary") == 0 && imp->session.title == NULL && !imp->created &&
		mn_js_str(rec, "summary", NULL) != NULL &&
		!mn_import_strdup(mn_js_str(rec, "summary", NULL), &imp->session.title))
		return oom(imp);
	mn_import_skipped(imp, line, type);
	return MNEMO_OK;
}

static int
cc_finish(mn_import *imp, void *state)
{
	return release(imp, state);
}

const mn_reader mn_claude_code_reader = {
	"claude-code", cc_detect, cc_create, cc_line, cc_finish, cc_sent, cc_destroy
};
