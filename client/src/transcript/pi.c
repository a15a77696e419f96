/*
 * pi.c
 *		The import reader of pi's session logs (pi-mono's coding agent).
 *
 * A log is one record a line: first {"type": "session", id, timestamp, cwd,
 * provider, modelId, thinkingLevel}, then "message" records, whose
 * "message" has a role (user, assistant, toolResult) and a list of content
 * blocks, and session events (model_change, thinking_level_change).
 *
 * The mapping:
 *	- user: text -> text part, image {data, mimeType} -> image part.
 *	- assistant: text -> text, thinking -> reasoning (thinkingSignature as
 *	  its signature), toolCall {id, name, arguments} -> tool part; model,
 *	  provider, usage {input, output, cacheRead, cacheWrite, cost.total},
 *	  stopReason -> finish_reason; api and errorMessage are kept in the
 *	  message's metadata.
 *	- toolResult: completes the tool part of toolCallId (tool_calls.c):
 *	  one text block is the output string, other content the list as
 *	  written; isError -> state "error"; details kept in the part's metadata.
 *	- the record's timestamp is the message's time; the session record gives
 *	  the session's id (when free), time, model, provider, agent "pi" and
 *	  metadata {"source", "session_id", "cwd", "thinking_level"}.
 *	- compaction {summary, firstKeptEntryId (v2 and later; v1:
 *	  firstKeptEntryIndex), tokensBefore}: a summary committed over the
 *	  messages before the first kept entry (compaction_record), its other
 *	  members (tokensBefore, details) kept in the summary's metadata.
 *	- an extension's message (a custom_message record, or a message of
 *	  role custom, version 3), which pi sends to the model as a user turn:
 *	  a user message, its content mapped as a user's, its customType,
 *	  display and details kept in the message's metadata.
 *	- a user's !command (a message of role bashExecution), which pi sends
 *	  to the model as a user turn: a user message of the text pi makes of
 *	  it ("Ran `cmd`", its output fenced, the exit code when not 0), the
 *	  record's fields kept in its metadata; a !!command, kept out of the
 *	  model's context (excludeFromContext), is bookkeeping.
 *	- model_change, thinking_level_change, and what pi keeps out of the
 *	  model's context (custom: an extension's state; label: a bookmark;
 *	  session_info: the session's display name) are bookkeeping; a record
 *	  of another type is left out and reported.
 */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json.h>

#include "transcript/transcript.h"

/* Where an entry of the log is: its line, by id (v2 and later) or by its
 * index among the records (v1, the session record being 0). */
typedef struct pi_entry
{
	char	   *id;				/* NULL: v1, found by index */
	int64_t		line;
} pi_entry;

/* A message sent: the line it came from and its seq. */
typedef struct pi_sent_msg
{
	int64_t		line;
	int64_t		seq;
} pi_sent_msg;

typedef struct pi_state
{
	mn_calls	calls;
	mn_tree		tree;			/* the records after the session record */
	pi_entry   *entries;
	size_t		n_entries;
	size_t		cap_entries;
	pi_sent_msg *sent;
	size_t		n_sent;
	size_t		cap_sent;
} pi_state;

/* Grow *items (of size bytes each) to hold one more; false when out of memory. */
static bool
grow(void **items, size_t size, size_t n, size_t *cap)
{
	void	   *grown;

	if (n < *cap)
		return true;
	grown = realloc(*items, (*cap ? *cap * 2 : 64) * size);
	if (grown == NULL)
		return false;
	*items = grown;
	*cap = *cap ? *cap * 2 : 64;
	return true;
}

static bool
pi_detect(struct json_object *obj)
{
	const char *type = mn_js_str(obj, "type", NULL);

	if (type == NULL || json_object_object_get_ex(obj, "uuid", NULL) ||
		json_object_object_get_ex(obj, "sessionId", NULL))
		return false;
	if (strcmp(type, "session") == 0)
		return json_object_object_get_ex(obj, "cwd", NULL) ||
			json_object_object_get_ex(obj, "modelId", NULL);
	return strcmp(type, "message") == 0 && mn_js_obj(obj, "message") != NULL &&
		mn_js_str(mn_js_obj(obj, "message"), "role", NULL) != NULL;
}

static void *
pi_create(void)
{
	return calloc(1, sizeof(pi_state));
}

static void
pi_destroy(void *state)
{
	pi_state   *pi = state;

	if (pi == NULL)
		return;
	mn_calls_free(&pi->calls);
	mn_tree_free(&pi->tree);
	for (size_t i = 0; i < pi->n_entries; i++)
		free(pi->entries[i].id);
	free(pi->entries);
	free(pi->sent);
	free(pi);
}

static int
pi_sent(mn_import *imp, void *state, const mn_import_msg *m)
{
	pi_state   *pi = state;

	if (!grow((void **) &pi->sent, sizeof(*pi->sent), pi->n_sent, &pi->cap_sent))
		return mn_import_oom(imp);
	pi->sent[pi->n_sent++] = (pi_sent_msg) {m->line, m->seq};
	return mn_calls_sent(imp, &pi->calls, m);
}

static int
session_record(mn_import *imp, struct json_object *rec)
{
	static const char *const keys[][2] = {
		{"id", "session_id"}, {"cwd", "cwd"}, {"thinkingLevel", "thinking_level"}
	};
	mn_import_session *s = &imp->session;
	const char *id = mn_js_str(rec, "id", NULL);
	mn_buf		meta = {0};

	if (imp->created || s->metadata != NULL)
		return MNEMO_OK;
	mn_buf_puts(&meta, "{\"source\":\"pi\"");
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
	{
		const char *v = mn_js_str(rec, keys[i][0], NULL);

		if (v == NULL)
			continue;
		mn_buf_puts(&meta, ",");
		mn_buf_put_jstr(&meta, keys[i][1], strlen(keys[i][1]));
		mn_buf_puts(&meta, ":");
		mn_buf_put_jstr(&meta, v, strlen(v));
	}
	mn_buf_puts(&meta, "}");
	if (meta.oom)
	{
		mn_buf_free(&meta);
		return mn_import_oom(imp);
	}
	s->metadata = meta.data;
	s->created_at = mn_import_iso_time(mn_js_str(rec, "timestamp", NULL));
	if ((id != NULL && !imp->opts->session_id && strlen(id) <= MNEMO_ID_MAX &&
		 !mn_import_strdup(id, &s->want_id)) ||
		!mn_import_strdup("pi", &s->agent) ||
		!mn_import_strdup(mn_js_str(rec, "modelId", NULL), &s->model_id) ||
		!mn_import_strdup(mn_js_str(rec, "provider", NULL), &s->provider_id))
		return mn_import_oom(imp);
	return MNEMO_OK;
}

/* One block of a user or assistant message into m. */
static int
block(mn_import *imp, pi_state *pi, int64_t line, size_t i, struct json_object *b,
	  mn_span text, mn_import_msg *m)
{
	const char *type = json_object_is_type(b, json_type_object) ? mn_js_str(b, "type", NULL) : NULL;
	mn_import_part *p;
	mn_span		v;
	char		key[32];

	if (type == NULL)
		return mn_fail(imp->st, MNEMO_ERR_FORMAT,
					   "line %" PRId64 ": content[%zu] is not a block with a \"type\"", line, i);
	if (strcmp(type, "text") == 0 || strcmp(type, "thinking") == 0)
	{
		bool		thinking = type[1] == 'h';

		if (mn_js_str(b, type, NULL) == NULL || !mn_json_member(text, type, &v))
			return mn_fail(imp->st, MNEMO_ERR_FORMAT,
						   "line %" PRId64 ": content[%zu] is a %s block without \"%s\"", line, i,
						   type, type);
		if ((p = mn_import_part_new(imp, m, thinking ? "reasoning" : "text")) == NULL)
			return imp->st->errcode;
		mn_part_put_raw(p, "text", v);
		if (thinking && mn_js_str(b, "thinkingSignature", NULL) != NULL &&
			mn_json_member(text, "thinkingSignature", &v))
			mn_part_put_raw(p, "signature", v);
		return p->members.oom ? mn_import_oom(imp) : MNEMO_OK;
	}
	if (strcmp(type, "toolCall") == 0)
	{
		const char *name = mn_js_str(b, "name", NULL);
		const char *id = mn_js_str(b, "id", NULL);
		mn_span		input = {NULL, 0};

		if (name == NULL || id == NULL)
			return mn_fail(imp->st, MNEMO_ERR_FORMAT,
						   "line %" PRId64 ": content[%zu] is a toolCall without \"name\" and \"id\"",
						   line, i);
		if (mn_js_obj(b, "arguments") != NULL)
			(void) mn_json_member(text, "arguments", &input);
		return mn_import_tool_call(imp, &pi->calls, m, name, id, input) ? MNEMO_OK : imp->st->errcode;
	}
	if (strcmp(type, "image") == 0 && mn_js_str(b, "data", NULL) != NULL)
	{
		size_t		len;
		const char *data = mn_js_str(b, "data", &len);

		return mn_import_image(imp, m, mn_js_str(b, "mimeType", NULL), data, len, NULL);
	}
	snprintf(key, sizeof(key), "content[%zu]", i);
	mn_import_keep(imp, m, key, text, type);
	return m->meta.oom ? mn_import_oom(imp) : MNEMO_OK;
}

static int
usage(mn_import_msg *m, struct json_object *u)
{
	static const char *const keys[] = {"input", "output", "cacheRead", "cacheWrite"};
	int64_t    *dst[] = {&m->tokens.input, &m->tokens.output, &m->tokens.cache_read,
	&m->tokens.cache_write};
	struct json_object *cost;
	struct json_object *v;

	for (int k = 0; k < 4; k++)
		if (json_object_object_get_ex(u, keys[k], &v) && json_object_is_type(v, json_type_int) &&
			json_object_get_int64(v) >= 0)
		{
			*dst[k] = json_object_get_int64(v);
			m->has_tokens = true;
		}
	if ((cost = mn_js_obj(u, "cost")) != NULL && json_object_object_get_ex(cost, "total", &v) &&
		(json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int)) &&
		json_object_get_double(v) > 0)
		m->cost = json_object_get_double(v);
	return MNEMO_OK;
}

static int
tool_result(mn_import *imp, pi_state *pi, int64_t line, struct json_object *msg, mn_span text)
{
	struct json_object *content = mn_js_arr(msg, "content");
	struct json_object *flag;
	mn_span		output = {NULL, 0};
	mn_span		details = {NULL, 0};

	if (content != NULL && json_object_array_length(content) == 1 &&
		mn_js_str(json_object_array_get_idx(content, 0), "text", NULL) != NULL)
	{
		mn_span		list;

		if (mn_json_member(text, "content", &list) && mn_json_element(list, 0, &output))
			(void) mn_json_member(output, "text", &output);
	}
	else
		(void) mn_json_member(text, "content", &output);
	if (json_object_object_get_ex(msg, "details", NULL))
		(void) mn_json_member(text, "details", &details);
	return mn_calls_result(imp, &pi->calls, line, mn_js_str(msg, "toolCallId", NULL),
						   mn_js_str(msg, "toolName", NULL),
						   json_object_object_get_ex(msg, "isError", &flag) &&
						   json_object_get_boolean(flag),
						   0, output, details);
}

/* The "content" of obj (whose text is text): a string is a text part, a
 * list its blocks (block). */
static int
content_parts(mn_import *imp, pi_state *pi, int64_t line, struct json_object *obj, mn_span text,
			  mn_import_msg *m)
{
	struct json_object *content;
	mn_span		list;
	size_t		pos = 0;
	int			rc = MNEMO_OK;

	content = json_object_object_get_ex(obj, "content", &content) ? content : NULL;
	if (json_object_is_type(content, json_type_string))
	{
		mn_import_part *p = mn_import_part_new(imp, m, "text");

		if (p == NULL || !mn_json_member(text, "content", &list) ||
			(mn_part_put_raw(p, "text", list), p->members.oom))
			rc = mn_import_oom(imp);
	}
	else if (json_object_is_type(content, json_type_array) && mn_json_member(text, "content", &list))
	{
		for (size_t i = 0; rc == MNEMO_OK && i < json_object_array_length(content); i++)
		{
			mn_span		b;

			(void) mn_json_next_element(list, &pos, &b);
			rc = block(imp, pi, line, i, json_object_array_get_idx(content, i), b, m);
		}
	}
	return rc;
}

/*
 * An extension's message: obj (text) holds its content, customType,
 * display and details; rec is the record, with its time.  pi sends it to
 * the model as a user turn, so it is a user message; the fields mnemo has
 * none for are kept in its metadata.
 */
static int
custom_message(mn_import *imp, pi_state *pi, int64_t line, struct json_object *obj, mn_span text,
			   struct json_object *rec)
{
	static const char *const kept[] = {"customType", "display", "details"};
	mn_import_msg *m;
	int			rc;

	if ((m = mn_import_msg_new(imp, line, "user")) == NULL)
		return imp->st->errcode;
	m->created_at = mn_import_iso_time(mn_js_str(rec, "timestamp", NULL));
	rc = content_parts(imp, pi, line, obj, text, m);
	for (size_t k = 0; rc == MNEMO_OK && k < mn_lengthof(kept); k++)
	{
		mn_span		v;

		if (json_object_object_get_ex(obj, kept[k], NULL) && mn_json_member(text, kept[k], &v))
			mn_import_keep(imp, m, kept[k], v, NULL);
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

/*
 * A user's !command (role bashExecution): pi sends it to the model as a
 * user turn whose text is bashExecutionToText's, which is what the user
 * message holds; command, output, exitCode, cancelled, truncated and
 * fullOutputPath are kept in its metadata.  A !!command, which pi keeps out
 * of the model's context (excludeFromContext), is bookkeeping.
 */
static int
bash_execution(mn_import *imp, int64_t line, struct json_object *msg, mn_span msg_text,
			   struct json_object *rec)
{
	static const char *const known[] = {"role", "timestamp", NULL};
	struct json_object *v;
	const char *command = mn_js_str(msg, "command", NULL);
	size_t		out_len = 0;
	const char *output = mn_js_str(msg, "output", &out_len);
	const char *path = mn_js_str(msg, "fullOutputPath", NULL);
	mn_import_msg *m;
	mn_import_part *p;
	mn_buf		text = {0};

	if (json_object_object_get_ex(msg, "excludeFromContext", &v) && json_object_get_boolean(v))
	{
		mn_import_bookkeeping(imp, line, "bashExecution excluded from context");
		return MNEMO_OK;
	}
	if (command == NULL)
		return mn_fail(imp->st, MNEMO_ERR_FORMAT,
					   "line %" PRId64 ": a bashExecution without a \"command\"", line);
	mn_buf_puts(&text, "Ran `");
	mn_buf_puts(&text, command);
	mn_buf_puts(&text, "`\n");
	if (output != NULL && out_len > 0)
	{
		mn_buf_puts(&text, "```\n");
		mn_buf_put(&text, output, out_len);
		mn_buf_puts(&text, "\n```");
	}
	else
		mn_buf_puts(&text, "(no output)");
	if (json_object_object_get_ex(msg, "cancelled", &v) && json_object_get_boolean(v))
		mn_buf_puts(&text, "\n\n(command cancelled)");
	else if (json_object_object_get_ex(msg, "exitCode", &v) &&
			 json_object_is_type(v, json_type_int) && json_object_get_int64(v) != 0)
	{
		char		code[48];

		snprintf(code, sizeof(code), "\n\nCommand exited with code %" PRId64,
				 json_object_get_int64(v));
		mn_buf_puts(&text, code);
	}
	if (json_object_object_get_ex(msg, "truncated", &v) && json_object_get_boolean(v) &&
		path != NULL)
	{
		mn_buf_puts(&text, "\n\n[Output truncated. Full output: ");
		mn_buf_puts(&text, path);
		mn_buf_puts(&text, "]");
	}
	if (text.oom)
	{
		mn_buf_free(&text);
		return mn_import_oom(imp);
	}
	if ((m = mn_import_msg_new(imp, line, "user")) == NULL)
	{
		mn_buf_free(&text);
		return imp->st->errcode;
	}
	m->created_at = mn_import_iso_time(mn_js_str(rec, "timestamp", NULL));
	if ((p = mn_import_part_new(imp, m, "text")) != NULL)
		mn_part_put_string(p, "text", text.data, text.len);
	mn_buf_free(&text);
	if (p == NULL || p->members.oom)
	{
		mn_import_msg_free(m);
		return p == NULL ? imp->st->errcode : mn_import_oom(imp);
	}
	mn_import_keep_others(imp, m, msg, msg_text, known);
	if (m->meta.oom)
	{
		mn_import_msg_free(m);
		return mn_import_oom(imp);
	}
	return mn_import_push(imp, m);
}

static int
message_record(mn_import *imp, pi_state *pi, int64_t line, struct json_object *rec, mn_span text)
{
	struct json_object *msg = mn_js_obj(rec, "message");
	const char *role = msg ? mn_js_str(msg, "role", NULL) : NULL;
	mn_span		msg_text;
	mn_import_msg *m;
	int			rc = MNEMO_OK;
	struct json_object *u;

	if (role == NULL || !mn_json_member(text, "message", &msg_text))
		return mn_fail(imp->st, MNEMO_ERR_FORMAT,
					   "line %" PRId64 ": a message record without a \"message\" that has a \"role\"",
					   line);
	if (strcmp(role, "toolResult") == 0)
		return tool_result(imp, pi, line, msg, msg_text);
	if (strcmp(role, "custom") == 0)
		return custom_message(imp, pi, line, msg, msg_text, rec);
	if (strcmp(role, "bashExecution") == 0)
		return bash_execution(imp, line, msg, msg_text, rec);
	if (strcmp(role, "user") != 0 && strcmp(role, "assistant") != 0)
	{
		mn_import_skipped(imp, line, role);
		return MNEMO_OK;
	}
	if ((m = mn_import_msg_new(imp, line, role)) == NULL)
		return imp->st->errcode;
	m->created_at = mn_import_iso_time(mn_js_str(rec, "timestamp", NULL));
	rc = content_parts(imp, pi, line, msg, msg_text, m);
	if (rc == MNEMO_OK && strcmp(role, "assistant") == 0)
	{
		static const char *const kept[] = {"api", "errorMessage"};

		if (!mn_import_strdup(mn_js_str(msg, "model", NULL), &m->model_id) ||
			!mn_import_strdup(mn_js_str(msg, "provider", NULL), &m->provider_id) ||
			!mn_import_strdup(mn_js_str(msg, "stopReason", NULL), &m->finish_reason))
			rc = mn_import_oom(imp);
		if ((u = mn_js_obj(msg, "usage")) != NULL)
			usage(m, u);
		for (size_t k = 0; rc == MNEMO_OK && k < 2; k++)
		{
			mn_span		v;

			if (json_object_object_get_ex(msg, kept[k], NULL) && mn_json_member(msg_text, kept[k], &v))
				mn_import_keep(imp, m, kept[k], v, NULL);
		}
	}
	if (rc != MNEMO_OK)
	{
		mn_import_msg_free(m);
		return rc;
	}
	return mn_import_push(imp, m);
}

/* The line of the entry a compaction keeps first; 0 when not in the log. */
static int64_t
first_kept_line(const pi_state *pi, struct json_object *rec)
{
	const char *id = mn_js_str(rec, "firstKeptEntryId", NULL);
	struct json_object *v;

	if (id != NULL)
	{
		for (size_t i = pi->n_entries; i > 0; i--)
			if (pi->entries[i - 1].id != NULL && strcmp(pi->entries[i - 1].id, id) == 0)
				return pi->entries[i - 1].line;
		return 0;
	}
	if (json_object_object_get_ex(rec, "firstKeptEntryIndex", &v) &&
		json_object_is_type(v, json_type_int) && json_object_get_int64(v) >= 0 &&
		(uint64_t) json_object_get_int64(v) < pi->n_entries)
		return pi->entries[json_object_get_int64(v)].line;
	return 0;
}

/*
 * A compaction: pi's context from then on is its summary followed by the
 * entries from the first kept one.  Committed as a leaf summary over the
 * messages before that entry still in context, so the summary is back in
 * context and what it covers out of it (a summary of an earlier compaction
 * stays: a leaf covers messages only).
 */
static int
compaction_record(mn_import *imp, pi_state *pi, int64_t line, struct json_object *rec,
				  mn_span text)
{
	/* the rest (tokensBefore, details, ...) is kept in the summary's metadata */
	static const char *const mapped[] = {"type", "id", "parentId", "timestamp", "summary",
	"firstKeptEntryId", "firstKeptEntryIndex", NULL};
	const char *summary = mn_js_str(rec, "summary", NULL);
	mn_span		v;
	int64_t		kept = first_kept_line(pi, rec);
	int64_t		seq_end = 0;
	int			rc;

	if (summary == NULL || !mn_json_member(text, "summary", &v))
		return mn_fail(imp->st, MNEMO_ERR_FORMAT,
					   "line %" PRId64 ": a compaction without a \"summary\" string", line);
	if (kept == 0)
	{
		mn_import_skipped(imp, line, "compaction whose first kept entry is not in the log");
		return MNEMO_OK;
	}
	/* what came before is sent, so its seqs are known */
	if ((rc = mn_import_flush(imp)) != MNEMO_OK)
		return rc;
	for (size_t i = pi->n_sent; i > 0; i--)
		if (pi->sent[i - 1].line < kept)
		{
			seq_end = pi->sent[i - 1].seq;
			break;
		}
	if (seq_end == 0)
	{
		mn_import_bookkeeping(imp, line, "compaction of nothing");
		return MNEMO_OK;
	}
	return mn_import_compaction(imp, line, mn_import_iso_time(mn_js_str(rec, "timestamp", NULL)),
								v, summary, seq_end, rec, text, mapped);
}

/* Remember where the record is, for the compactions that name it. */
static int
remember_entry(mn_import *imp, pi_state *pi, int64_t line, struct json_object *rec,
			   const char *type)
{
	const char *id = mn_js_str(rec, "id", NULL);
	pi_entry   *e;

	if (!grow((void **) &pi->entries, sizeof(*pi->entries), pi->n_entries, &pi->cap_entries))
		return mn_import_oom(imp);
	e = &pi->entries[pi->n_entries];
	e->line = line;
	e->id = NULL;
	/* the session record's id is the session's, not an entry's */
	if (id != NULL && strcmp(type, "session") != 0 &&
		(e->id = strdup(id)) == NULL)
		return mn_import_oom(imp);
	pi->n_entries++;
	return MNEMO_OK;
}

/*
 * A branch summary: what pi writes when /tree goes back to an earlier entry
 * and the user asks for the branch left behind to be summarised; pi sends
 * it to the model as a user turn, in its BRANCH_SUMMARY wording, which is
 * the user message's text (fromId kept in its metadata).
 */
static int
branch_summary(mn_import *imp, int64_t line, struct json_object *rec, mn_span text)
{
	static const char *const known[] = {"type", "id", "parentId", "timestamp", "summary", NULL};
	size_t		len;
	const char *summary = mn_js_str(rec, "summary", &len);
	mn_import_msg *m;
	mn_import_part *p;
	mn_buf		t = {0};

	if (summary == NULL)
		return mn_fail(imp->st, MNEMO_ERR_FORMAT,
					   "line %" PRId64 ": a branch_summary without a \"summary\" string", line);
	mn_buf_puts(&t, "The following is a summary of a branch that this conversation came back "
				"from:\n\n<summary>\n");
	mn_buf_put(&t, summary, len);
	mn_buf_puts(&t, "</summary>");
	if (t.oom || (m = mn_import_msg_new(imp, line, "user")) == NULL)
	{
		bool		was_oom = t.oom;

		mn_buf_free(&t);
		return was_oom ? mn_import_oom(imp) : imp->st->errcode;
	}
	m->created_at = mn_import_iso_time(mn_js_str(rec, "timestamp", NULL));
	if ((p = mn_import_part_new(imp, m, "text")) != NULL)
		mn_part_put_string(p, "text", t.data, t.len);
	mn_buf_free(&t);
	if (p == NULL || p->members.oom)
	{
		mn_import_msg_free(m);
		return p == NULL ? imp->st->errcode : mn_import_oom(imp);
	}
	mn_import_keep_others(imp, m, rec, text, known);
	if (m->meta.oom)
	{
		mn_import_msg_free(m);
		return mn_import_oom(imp);
	}
	return mn_import_push(imp, m);
}

/* One record of the log, in the order of its branch. */
static int
record(mn_import *imp, pi_state *pi, int64_t line, const char *text, size_t len,
	   struct json_object *rec)
{
	const char *type = mn_js_str(rec, "type", NULL);
	int			rc;

	if ((rc = remember_entry(imp, pi, line, rec, type)) != MNEMO_OK)
		return rc;
	if (strcmp(type, "session") == 0)
		return session_record(imp, rec);
	if (strcmp(type, "message") == 0)
		return message_record(imp, pi, line, rec, (mn_span) {text, len});
	if (strcmp(type, "compaction") == 0)
		return compaction_record(imp, pi, line, rec, (mn_span) {text, len});
	if (strcmp(type, "custom_message") == 0)
		return custom_message(imp, pi, line, rec, (mn_span) {text, len}, rec);
	if (strcmp(type, "branch_summary") == 0)
		return branch_summary(imp, line, rec, (mn_span) {text, len});
	if (strcmp(type, "model_change") == 0 || strcmp(type, "thinking_level_change") == 0 ||
		strcmp(type, "custom") == 0 || strcmp(type, "label") == 0 ||
		strcmp(type, "session_info") == 0)
		mn_import_bookkeeping(imp, line, type);
	else
		mn_import_skipped(imp, line, type);
	return MNEMO_OK;
}

/* The session record is read at once; the others are held until the end,
 * when the tree they make is known (pi_finish). */
static int
pi_line(mn_import *imp, void *state, int64_t line, const char *text, size_t len,
		struct json_object *rec)
{
	pi_state   *pi = state;
	const char *type = json_object_is_type(rec, json_type_object) ? mn_js_str(rec, "type", NULL) : NULL;

	if (type == NULL)
		return mn_fail(imp->st, MNEMO_ERR_FORMAT,
					   "line %" PRId64 ": a pi record must be a JSON object with a \"type\"", line);
	if (strcmp(type, "session") == 0)
		return record(imp, pi, line, text, len, rec);
	return mn_tree_hold(imp, &pi->tree, line, text, len, rec);
}

/* The seq, in the session read so far, of the last message of the active
 * branch up to record from (0: none). */
static int64_t
fork_point(const pi_state *pi, ssize_t from)
{
	int64_t		upto = from >= 0 ? pi->tree.recs[from].line : 0;
	int64_t		seq = 0;

	/* the messages of the active branch were sent first, in file order */
	for (size_t i = 0; i < pi->n_sent && pi->sent[i].line <= upto; i++)
		seq = pi->sent[i].seq;
	return seq;
}

/*
 * The end of the log: the active branch is the session; each branch left
 * behind becomes a fork of it at the last message they share
 * (mn_import_fork), holding that branch's own records (a branch off a
 * branch holds what it shares with that one too).  A caller that takes one
 * session (no options.session) gets the active branch, the others reported
 * as bookkeeping.
 */
static int
pi_finish(mn_import *imp, void *state)
{
	pi_state   *pi = state;
	mn_tree    *t = &pi->tree;
	size_t	   *branch = NULL;
	size_t		main_sent;
	char		main_id[MNEMO_ID_MAX + 1];
	int			rc = MNEMO_OK;

	mn_tree_mark(t);
	for (size_t i = 0; rc == MNEMO_OK && i < t->n; i++)
		if (t->recs[i].active)
			rc = record(imp, pi, t->recs[i].line, t->recs[i].text, t->recs[i].len, t->recs[i].obj);
	/* what came before is sent, so the fork points' seqs are known */
	if (rc == MNEMO_OK)
		rc = mn_import_flush(imp);
	main_sent = pi->n_sent;
	memcpy(main_id, imp->session_id, sizeof(main_id));
	if (rc == MNEMO_OK && t->n > 0 && (branch = malloc(t->n * sizeof(*branch))) == NULL)
		rc = mn_import_oom(imp);
	for (size_t leaf = 0; rc == MNEMO_OK && leaf < t->n; leaf++)
	{
		ssize_t		from;
		size_t		n;
		int64_t		at;

		if (t->recs[leaf].active || t->recs[leaf].children > 0)
			continue;
		n = mn_tree_branch(t, leaf, branch, &from);
		/* read again (options.update), the branches were made before */
		if (imp->opts->session == NULL || imp->resumed)
		{
			for (size_t k = 0; k < n; k++)
				mn_import_bookkeeping(imp, t->recs[branch[k]].line, "record of another branch");
			continue;
		}
		/* only the active branch's sends count towards a fork point */
		pi->n_sent = main_sent;
		at = fork_point(pi, from);
		mn_calls_free(&pi->calls);
		rc = mn_import_fork(imp, t->recs[branch[0]].line, main_id, at);
		for (size_t k = 0; rc == MNEMO_OK && k < n; k++)
			rc = record(imp, pi, t->recs[branch[k]].line, t->recs[branch[k]].text,
						t->recs[branch[k]].len, t->recs[branch[k]].obj);
		if (rc == MNEMO_OK)
			rc = mn_import_flush(imp);
	}
	free(branch);
	mn_tree_free(t);
	return rc;
}

const mn_reader mn_pi_reader = {
	"pi", pi_detect, NULL, NULL, pi_create, pi_line, pi_finish, pi_sent, pi_destroy,
	NULL, NULL
};
