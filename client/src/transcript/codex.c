/*
 * codex.c
 *		The import reader of Codex CLI rollouts
 *		(~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl).
 *
 * Each line is {"timestamp", "type", "payload"}.  The mapping:
 *	- session_meta: the session (its id, created_at, model_provider as the
 *	  provider; base_instructions.text, or the older instructions, as the
 *	  system prompt; the rest, cwd, git, cli_version, ..., in its metadata
 *	  with {"source": "codex"}, Codex's own source as "codex_source").
 *	- turn_context: the model of the messages that follow (the session's
 *	  too, when it has none yet); bookkeeping.
 *	- response_item: a message of role user -> a user message, developer or
 *	  system -> a system message (input_text/output_text -> text,
 *	  input_image -> image); the items one model response writes (reasoning,
 *	  an assistant message, function_call, custom_tool_call,
 *	  web_search_call) -> one assistant message, until a result, a user
 *	  turn or a compaction comes between: reasoning -> a reasoning part, its
 *	  summary texts joined by a blank line, encrypted_content kept;
 *	  function_call -> a tool part (arguments as its input when they hold
 *	  an object, else kept as "arguments"), custom_tool_call -> a tool part
 *	  whose input is {"input": its text}, both completed by their
 *	  *_output of the same call_id; web_search_call -> a tool part
 *	  web_search, its action as input, completed at once.
 *	- event_msg: token_count -> the usage of the assistant message it
 *	  follows (last_token_usage; the cached input counted apart); the rest
 *	  (user_message, agent_message, agent_reasoning: copies of response
 *	  items; exec and patch ends, task starts and ends) is bookkeeping.
 *	- compacted: Codex's summary replaced the history: committed as a leaf
 *	  summary over every message before it (mn_import_compaction), its
 *	  replacement_history kept in the summary's metadata.
 */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json.h>

#include "transcript/transcript.h"

typedef struct cx_state
{
	mn_calls	calls;
	mn_import_msg *cur;			/* the assistant message of the response
								 * being read, not pushed yet */
	bool		answered;		/* a result came after cur's items: the next
								 * item is a new response's */
	char	   *model;			/* the last turn_context's */
	int64_t		last_seq;		/* of the last message appended */
} cx_state;

static bool
cx_detect(struct json_object *obj)
{
	static const char *const types[] = {"session_meta", "response_item", "turn_context",
	"event_msg", "compacted", NULL};
	const char *type = mn_js_str(obj, "type", NULL);

	if (type == NULL || mn_js_obj(obj, "payload") == NULL)
		return false;
	for (size_t i = 0; types[i] != NULL; i++)
		if (strcmp(type, types[i]) == 0)
			return true;
	return false;
}

static void *
cx_create(void)
{
	return calloc(1, sizeof(cx_state));
}

static void
cx_destroy(void *state)
{
	cx_state   *cx = state;

	if (cx == NULL)
		return;
	mn_calls_free(&cx->calls);
	mn_import_msg_free(cx->cur);
	free(cx->model);
	free(cx);
}

static int
cx_sent(mn_import *imp, void *state, const mn_import_msg *m)
{
	cx_state   *cx = state;

	cx->last_seq = m->seq;
	return mn_calls_sent(imp, &cx->calls, m);
}

/* The response read so far goes to the import. */
static int
push_cur(mn_import *imp, cx_state *cx)
{
	mn_import_msg *m = cx->cur;

	cx->cur = NULL;
	cx->answered = false;
	return m != NULL ? mn_import_push(imp, m) : MNEMO_OK;
}

/* The assistant message an item of a model response goes into. */
static mn_import_msg *
response_msg(mn_import *imp, cx_state *cx, int64_t line, int64_t at)
{
	if (cx->answered && push_cur(imp, cx) != MNEMO_OK)
		return NULL;
	if (cx->cur != NULL)
		return cx->cur;
	if ((cx->cur = mn_import_msg_new(imp, line, "assistant")) == NULL)
		return NULL;
	cx->cur->created_at = at;
	if (!mn_import_strdup(cx->model, &cx->cur->model_id))
	{
		mn_import_oom(imp);
		return NULL;
	}
	return cx->cur;
}

static int
session_meta(mn_import *imp, struct json_object *p, mn_span text)
{
	static const char *const known[] = {"id", "timestamp", "base_instructions", "instructions",
	"model_provider", "source", NULL};
	mn_import_session *s = &imp->session;
	struct json_object *base = mn_js_obj(p, "base_instructions");
	const char *prompt = base != NULL ? mn_js_str(base, "text", NULL) : mn_js_str(p, "instructions", NULL);
	const char *id = mn_js_str(p, "id", NULL);
	mn_span		raw;
	int			rc;

	if (imp->created || s->metadata != NULL)
		return MNEMO_OK;
	if ((rc = mn_import_session_meta(imp, p, text, "codex", known)) != MNEMO_OK)
		return rc;
	/* Codex's own "source" (cli, exec, vscode) would hide mnemo's */
	if (mn_js_str(p, "source", NULL) != NULL && mn_json_member(text, "source", &raw))
	{
		mn_buf		meta = {0};

		mn_buf_put(&meta, s->metadata, strlen(s->metadata) - 1);
		mn_buf_puts(&meta, ",\"codex_source\":");
		mn_buf_put(&meta, raw.p, raw.len);
		mn_buf_puts(&meta, "}");
		if (meta.oom)
		{
			mn_buf_free(&meta);
			return mn_import_oom(imp);
		}
		free(s->metadata);
		s->metadata = meta.data;
	}
	s->created_at = mn_import_iso_time(mn_js_str(p, "timestamp", NULL));
	if ((id != NULL && !imp->opts->session_id && strlen(id) <= MNEMO_ID_MAX &&
		 !mn_import_strdup(id, &s->want_id)) ||
		!mn_import_strdup("codex", &s->agent) ||
		!mn_import_strdup(prompt, &s->system_prompt) ||
		!mn_import_strdup(mn_js_str(p, "model_provider", NULL), &s->provider_id))
		return mn_import_oom(imp);
	return MNEMO_OK;
}

static int
turn_context(mn_import *imp, cx_state *cx, int64_t line, struct json_object *p)
{
	const char *model = mn_js_str(p, "model", NULL);

	if (model != NULL)
	{
		free(cx->model);
		cx->model = NULL;
		if (!mn_import_strdup(model, &cx->model) ||
			(!imp->created && imp->session.model_id == NULL &&
			 !mn_import_strdup(model, &imp->session.model_id)))
			return mn_import_oom(imp);
	}
	mn_import_bookkeeping(imp, line, "turn_context");
	return MNEMO_OK;
}

/* An input_image's image_url: a data URL as media type and data, else a URL. */
static int
image(mn_import *imp, mn_import_msg *m, const char *url)
{
	const char *comma;
	const char *semi;
	char		media[128];

	if (url != NULL && strncmp(url, "data:", 5) == 0 && (comma = strchr(url, ',')) != NULL &&
		(semi = strchr(url, ';')) != NULL && semi < comma &&
		strncmp(semi, ";base64,", 8) == 0 && (size_t) (semi - url - 5) < sizeof(media))
	{
		memcpy(media, url + 5, semi - url - 5);
		media[semi - url - 5] = '\0';
		return mn_import_image(imp, m, media, comma + 1, strlen(comma + 1), NULL);
	}
	return mn_import_image(imp, m, NULL, NULL, 0, url != NULL ? url : "");
}

/* A message item's content blocks into m. */
static int
content(mn_import *imp, mn_import_msg *m, struct json_object *p, mn_span text)
{
	struct json_object *list = mn_js_arr(p, "content");
	mn_span		list_text,
				block_text,
				raw;
	size_t		pos = 0;
	char		key[40];
	int			rc;

	if (list == NULL || !mn_json_member(text, "content", &list_text))
		return MNEMO_OK;
	for (size_t i = 0; i < json_object_array_length(list); i++)
	{
		struct json_object *b = json_object_array_get_idx(list, i);
		const char *type = mn_js_str(b, "type", NULL);
		mn_import_part *part;

		(void) mn_json_next_element(list_text, &pos, &block_text);
		if (type != NULL && (strcmp(type, "input_text") == 0 || strcmp(type, "output_text") == 0) &&
			mn_js_str(b, "text", NULL) != NULL && mn_json_member(block_text, "text", &raw))
		{
			if ((part = mn_import_part_new(imp, m, "text")) == NULL)
				return imp->st->errcode;
			mn_part_put_raw(part, "text", raw);
			if (part->members.oom)
				return mn_import_oom(imp);
			continue;
		}
		if (type != NULL && strcmp(type, "input_image") == 0)
		{
			if ((rc = image(imp, m, mn_js_str(b, "image_url", NULL))) != MNEMO_OK)
				return rc;
			continue;
		}
		snprintf(key, sizeof(key), "content[%zu]", i);
		mn_import_keep(imp, m, key, block_text, type != NULL ? type : "content block");
		if (m->meta.oom)
			return mn_import_oom(imp);
	}
	return MNEMO_OK;
}

static int
message_item(mn_import *imp, cx_state *cx, int64_t line, int64_t at, struct json_object *p,
			 mn_span text)
{
	const char *role = mn_js_str(p, "role", NULL);
	mn_import_msg *m;
	mn_span		raw;
	int			rc;

	if (role == NULL)
		return mn_fail(imp->st, MNEMO_ERR_FORMAT,
					   "line %" PRId64 ": a Codex message without a \"role\"", line);
	if (strcmp(role, "assistant") == 0)
	{
		if ((m = response_msg(imp, cx, line, at)) == NULL)
			return imp->st->errcode;
		return content(imp, m, p, text);
	}
	if ((rc = push_cur(imp, cx)) != MNEMO_OK)
		return rc;
	/* the developer's instructions are the system's in mnemo's roles */
	if ((m = mn_import_msg_new(imp, line, strcmp(role, "user") == 0 ? "user" : "system")) == NULL)
		return imp->st->errcode;
	m->created_at = at;
	if (strcmp(role, "user") != 0 && strcmp(role, "system") != 0 &&
		mn_json_member(text, "role", &raw))
		mn_import_keep(imp, m, "role", raw, NULL);
	if ((rc = content(imp, m, p, text)) != MNEMO_OK || (m->meta.oom && (rc = mn_import_oom(imp))))
	{
		mn_import_msg_free(m);
		return rc;
	}
	return mn_import_push(imp, m);
}

static int
reasoning_item(mn_import *imp, cx_state *cx, int64_t line, int64_t at, struct json_object *p,
			   mn_span text)
{
	struct json_object *summary = mn_js_arr(p, "summary");
	struct json_object *c;
	mn_import_msg *m;
	mn_import_part *part;
	mn_buf		joined = {0};
	mn_span		raw;

	if ((m = response_msg(imp, cx, line, at)) == NULL)
		return imp->st->errcode;
	for (size_t i = 0; summary != NULL && i < json_object_array_length(summary); i++)
	{
		size_t		len;
		const char *s = mn_js_str(json_object_array_get_idx(summary, i), "text", &len);

		if (s == NULL)
			continue;
		if (joined.len > 0)
			mn_buf_puts(&joined, "\n\n");
		mn_buf_put(&joined, s, len);
	}
	if ((part = mn_import_part_new(imp, m, "reasoning")) == NULL)
	{
		mn_buf_free(&joined);
		return imp->st->errcode;
	}
	mn_part_put_string(part, "text", joined.len > 0 ? joined.data : "", joined.len);
	if (joined.oom)
		part->members.oom = true;
	mn_buf_free(&joined);
	if (mn_js_str(p, "encrypted_content", NULL) != NULL &&
		mn_json_member(text, "encrypted_content", &raw))
		mn_part_put_raw(part, "encrypted_content", raw);
	/* the raw reasoning text some models write */
	if (json_object_object_get_ex(p, "content", &c) && !json_object_is_type(c, json_type_null) &&
		mn_json_member(text, "content", &raw))
		mn_part_put_raw(part, "reasoning_content", raw);
	return part->members.oom ? mn_import_oom(imp) : MNEMO_OK;
}

static int
call_item(mn_import *imp, cx_state *cx, int64_t line, int64_t at, struct json_object *p,
		  mn_span text, bool custom)
{
	const char *name = mn_js_str(p, "name", NULL);
	const char *call_id = mn_js_str(p, "call_id", NULL);
	size_t		len = 0;
	const char *args = mn_js_str(p, custom ? "input" : "arguments", &len);
	struct json_object *parsed = (!custom && args != NULL) ? json_tokener_parse(args) : NULL;
	bool		object = json_object_is_type(parsed, json_type_object);
	mn_import_msg *m;
	mn_import_part *part;
	mn_buf		input = {0};
	mn_span		raw = {NULL, 0};

	json_object_put(parsed);
	if (name == NULL || call_id == NULL)
		return mn_fail(imp->st, MNEMO_ERR_FORMAT,
					   "line %" PRId64 ": a Codex %s without a \"name\" and a \"call_id\"", line,
					   custom ? "custom_tool_call" : "function_call");
	if ((m = response_msg(imp, cx, line, at)) == NULL)
		return imp->st->errcode;
	if (object)
		raw = (mn_span) {args, len};
	else if (custom && args != NULL && mn_json_member(text, "input", &raw))
	{
		/* a custom tool's input is free text (apply_patch's patch) */
		mn_buf_puts(&input, "{\"input\":");
		mn_buf_put(&input, raw.p, raw.len);
		mn_buf_puts(&input, "}");
		if (input.oom)
			return mn_import_oom(imp);
		raw = (mn_span) {input.data, input.len};
	}
	else
		raw = (mn_span) {NULL, 0};
	part = mn_import_tool_call(imp, &cx->calls, m, name, call_id, raw);
	mn_buf_free(&input);
	if (part == NULL)
		return imp->st->errcode;
	if (!custom && !object && args != NULL && mn_json_member(text, "arguments", &raw))
		mn_part_put_raw(part, "arguments", raw);
	if (custom)
		mn_part_put_raw(part, "custom", (mn_span) {"true", 4});
	return part->members.oom ? mn_import_oom(imp) : MNEMO_OK;
}

static int
output_item(mn_import *imp, cx_state *cx, int64_t line, int64_t at, struct json_object *p,
			mn_span text)
{
	const char *call_id = mn_js_str(p, "call_id", NULL);
	mn_span		output = {NULL, 0};
	int			rc;

	if (call_id == NULL)
		return mn_fail(imp->st, MNEMO_ERR_FORMAT,
					   "line %" PRId64 ": a Codex tool output without a \"call_id\"", line);
	(void) mn_json_member(text, "output", &output);
	/* a result for no call of this log is a message of its own, in order */
	if (!mn_calls_waiting(&cx->calls, call_id) && (rc = push_cur(imp, cx)) != MNEMO_OK)
		return rc;
	cx->answered = cx->cur != NULL;
	return mn_calls_result(imp, &cx->calls, line, call_id, NULL, false, at, output,
						   (mn_span) {NULL, 0});
}

static int
web_search_item(mn_import *imp, cx_state *cx, int64_t line, int64_t at, struct json_object *p,
				mn_span text)
{
	static const char *const known[] = {"type", "id", "action", NULL};
	const char *id = mn_js_str(p, "id", NULL);
	const char *status = mn_js_str(p, "status", NULL);
	char		made[40];
	mn_import_msg *m;
	mn_span		action = {NULL, 0};
	mn_buf		meta = {0};
	int			rc;

	if (id == NULL)
	{
		snprintf(made, sizeof(made), "line-%" PRId64, line);
		id = made;
	}
	if ((m = response_msg(imp, cx, line, at)) == NULL)
		return imp->st->errcode;
	if (mn_js_obj(p, "action") != NULL)
		(void) mn_json_member(text, "action", &action);
	if (mn_import_tool_call(imp, &cx->calls, m, "web_search", id, action) == NULL)
		return imp->st->errcode;
	/* the search ran at the provider: its call is its result */
	mn_import_others(p, text, known, &meta);
	if (meta.oom)
		rc = mn_import_oom(imp);
	else
		rc = mn_calls_result(imp, &cx->calls, line, id, "web_search",
							 status != NULL && strcmp(status, "failed") == 0, at,
							 (mn_span) {NULL, 0}, (mn_span) {meta.data, meta.len});
	mn_buf_free(&meta);
	return rc;
}

/* event_msg token_count: the usage of the response it follows. */
static int
token_count(mn_import *imp, cx_state *cx, int64_t line, struct json_object *p)
{
	struct json_object *info = mn_js_obj(p, "info");
	struct json_object *last = info != NULL ? mn_js_obj(info, "last_token_usage") : NULL;
	int64_t		input,
				cached;
	mnemo_tokens *t;

	if (last == NULL || cx->cur == NULL || cx->cur->has_tokens)
	{
		mn_import_bookkeeping(imp, line, "token_count");
		return MNEMO_OK;
	}
	t = &cx->cur->tokens;
	input = mn_js_count(last, "input_tokens");
	cached = mn_js_count(last, "cached_input_tokens");
	/* input_tokens includes the cached ones; mnemo counts them apart */
	cached = cached < 0 ? 0 : cached;
	input = input < 0 ? 0 : input;
	if (cached > input)
		cached = input;
	t->input = input - cached;
	t->cache_read = cached;
	t->output = mn_js_count(last, "output_tokens");
	t->output = t->output < 0 ? 0 : t->output;
	t->reasoning = mn_js_count(last, "reasoning_output_tokens");
	t->reasoning = t->reasoning < 0 ? 0 : t->reasoning;
	t->cache_write = 0;
	cx->cur->has_tokens = true;
	return MNEMO_OK;
}

static int
compacted(mn_import *imp, cx_state *cx, int64_t line, int64_t at, struct json_object *rec,
		  mn_span text)
{
	static const char *const mapped[] = {"message", NULL};
	struct json_object *p = mn_js_obj(rec, "payload");
	const char *summary = mn_js_str(p, "message", NULL);
	mn_span		payload,
				v;
	int			rc;

	if (summary == NULL || !mn_json_member(text, "payload", &payload) ||
		!mn_json_member(payload, "message", &v))
		return mn_fail(imp->st, MNEMO_ERR_FORMAT,
					   "line %" PRId64 ": a Codex compaction without a \"message\" string", line);
	/* what came before is sent, so its seqs are known */
	if ((rc = push_cur(imp, cx)) != MNEMO_OK || (rc = mn_import_flush(imp)) != MNEMO_OK)
		return rc;
	if (cx->last_seq == 0)
	{
		mn_import_bookkeeping(imp, line, "compaction of nothing");
		return MNEMO_OK;
	}
	return mn_import_compaction(imp, line, at, v, summary, cx->last_seq, p, payload, mapped);
}

static int
response_item(mn_import *imp, cx_state *cx, int64_t line, int64_t at, struct json_object *p,
			  mn_span text)
{
	const char *type = mn_js_str(p, "type", NULL);

	if (type == NULL)
		return mn_fail(imp->st, MNEMO_ERR_FORMAT,
					   "line %" PRId64 ": a Codex response_item without a \"type\"", line);
	if (strcmp(type, "message") == 0)
		return message_item(imp, cx, line, at, p, text);
	if (strcmp(type, "reasoning") == 0)
		return reasoning_item(imp, cx, line, at, p, text);
	if (strcmp(type, "function_call") == 0 || strcmp(type, "custom_tool_call") == 0)
		return call_item(imp, cx, line, at, p, text, strcmp(type, "custom_tool_call") == 0);
	if (strcmp(type, "function_call_output") == 0 || strcmp(type, "custom_tool_call_output") == 0)
		return output_item(imp, cx, line, at, p, text);
	if (strcmp(type, "web_search_call") == 0)
		return web_search_item(imp, cx, line, at, p, text);
	mn_import_skipped(imp, line, type);
	return MNEMO_OK;
}

static int
cx_line(mn_import *imp, void *state, int64_t line, const char *text, size_t len,
		struct json_object *rec)
{
	cx_state   *cx = state;
	const char *type = json_object_is_type(rec, json_type_object) ? mn_js_str(rec, "type", NULL) : NULL;
	struct json_object *p = type != NULL ? mn_js_obj(rec, "payload") : NULL;
	int64_t		at = mn_import_iso_time(mn_js_str(rec, "timestamp", NULL));
	mn_span		payload;

	if (p == NULL || !mn_json_member((mn_span) {text, len}, "payload", &payload))
		return mn_fail(imp->st, MNEMO_ERR_FORMAT,
					   "line %" PRId64 ": a Codex record must be a JSON object with a \"type\" "
					   "and a \"payload\" object", line);
	if (strcmp(type, "session_meta") == 0)
		return session_meta(imp, p, payload);
	if (strcmp(type, "turn_context") == 0)
		return turn_context(imp, cx, line, p);
	if (strcmp(type, "response_item") == 0)
		return response_item(imp, cx, line, at, p, payload);
	if (strcmp(type, "compacted") == 0)
		return compacted(imp, cx, line, at, rec, (mn_span) {text, len});
	if (strcmp(type, "event_msg") == 0)
	{
		const char *kind = mn_js_str(p, "type", NULL);

		if (kind != NULL && strcmp(kind, "token_count") == 0)
			return token_count(imp, cx, line, p);
		mn_import_bookkeeping(imp, line, kind != NULL ? kind : "event_msg");
		return MNEMO_OK;
	}
	mn_import_skipped(imp, line, type);
	return MNEMO_OK;
}

static int
cx_finish(mn_import *imp, void *state)
{
	return push_cur(imp, state);
}

const mn_reader mn_codex_reader = {
	"codex", cx_detect, NULL, NULL, cx_create, cx_line, cx_finish, cx_sent, cx_destroy,
	NULL, NULL
};
