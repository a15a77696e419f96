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
 *	  message, its blocks mapped by anthropic.c.  The last usage seen gives
 *	  the tokens (input, output, cache_read = cache_read_input_tokens,
 *	  cache_write = cache_creation_input_tokens), the last stop_reason the
 *	  finish_reason, model the model_id, the first line's timestamp its time.
 *	- A tool_result block completes the tool part of the call it answers
 *	  (tool_calls.c), so one mnemo tool part holds a call's input and output.
 *	- A "summary" record gives the session's title.
 *	- Compaction: a user record with isCompactSummary (what /compact and
 *	  auto-compaction continue from) is committed as a summary over the
 *	  messages in context before it; a microcompact_boundary record
 *	  tombstones the tool parts of the calls it cleared (both in
 *	  claude_code_compaction.c).
 *	- Records of the types Claude Code writes for itself (progress, system,
 *	  file-history-snapshot, ...) are bookkeeping: left out and reported,
 *	  but not counted as lost; a record of an unknown type is.
 *	- A user or assistant record whose uuid came before is that record
 *	  written again (a resumed log repeats its history; hooks have written
 *	  one uuid many times): Claude Code keys its records by uuid and reads
 *	  it once, and so does the import, leaving the copy out as bookkeeping
 *	  ("duplicate record"), so no message or tool result is stored twice.
 * Message and part ids are the server's: importing a log twice gives two
 * sessions.  The session takes the log's sessionId when no session has it,
 * agent "claude-code", provider "anthropic", the first model, and metadata
 * {"source", "session_id", "cwd", "git_branch", "version", "slug"}.
 * Block text and tool inputs are copied from the line as written.
 *
 * This file reads the records and the session they describe; the reader's
 * other files (claude_code.h) assemble the messages, restore compactions
 * and import the sub-agents.
 */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json.h>

#include "transcript/claude_code.h"

/* Record types Claude Code writes for itself, not for the conversation. */
static const char *const bookkeeping[] = {
	"progress", "system", "file-history-snapshot", "queue-operation", "pr-link",
	"summary", "custom-title", "attachment", NULL
};

static bool
cc_detect(struct json_object *obj)
{
	const char *type = mn_js_str(obj, "type", NULL);

	if (type == NULL)
		return false;
	if (json_object_object_get_ex(obj, "uuid", NULL) ||
		json_object_object_get_ex(obj, "sessionId", NULL) ||
		json_object_object_get_ex(obj, "leafUuid", NULL))
		return true;
	/* a log may open with its own bookkeeping, which has none of those */
	for (size_t i = 0; bookkeeping[i] != NULL; i++)
		if (strcmp(type, bookkeeping[i]) == 0 && strcmp(type, "summary") != 0)
			return true;
	return false;
}

static void *
cc_create(void)
{
	return calloc(1, sizeof(cc_state));
}

static void
cc_destroy(void *state)
{
	cc_state   *cc = state;

	if (cc == NULL)
		return;
	mn_calls_free(&cc->calls);
	mn_cc_uuids_free(&cc->seen);
	mn_tree_free(&cc->side);
	mn_buf_free(&cc->link);
	mn_import_msg_free(cc->held);
	free(cc->held_api_id);
	free(cc);
}

static int
cc_sent(mn_import *imp, void *state, const mn_import_msg *m)
{
	return mn_calls_sent(imp, &((cc_state *) state)->calls, m);
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

	const char *agent_id = mn_js_str(rec, "agentId", NULL);
	struct json_object *side;

	if (cc->described || sid == NULL)
		return MNEMO_OK;
	cc->described = true;
	/* a sub-agent's own log (subagents/agent-ID.jsonl), alone or as the
	 * child of its parent's import */
	cc->sub = s->parent_id != NULL ||
		(agent_id != NULL && json_object_object_get_ex(rec, "isSidechain", &side) &&
		 json_object_get_boolean(side));
	mn_buf_puts(&meta, "{\"source\":\"claude-code\"");
	if (cc->sub && agent_id != NULL)
	{
		mn_buf_puts(&meta, ",\"agent_id\":");
		mn_buf_put_jstr(&meta, agent_id, strlen(agent_id));
	}
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
		return mn_import_oom(imp);
	}
	free(s->metadata);
	s->metadata = meta.data;
	/* a sub-agent's session is its parent's id and its agent's */
	if (cc->sub && (s->parent_id != NULL || !imp->opts->session_id))
	{
		char	   *id = mn_cc_subagent_id(s->parent_id != NULL ? s->parent_id : sid, agent_id);

		if (id == NULL && agent_id != NULL)
			return mn_import_oom(imp);
		if (id != NULL && strlen(id) <= MNEMO_ID_MAX)
		{
			s->want_id = id;
			s->derived_id = s->parent_id != NULL;
		}
		else
			free(id);
	}
	/* an id mnemo cannot take is no error: the session gets a new one */
	else if (!imp->opts->session_id && strlen(sid) <= MNEMO_ID_MAX &&
			 !mn_import_strdup(sid, &s->want_id))
		return mn_import_oom(imp);
	if (!mn_import_strdup("claude-code", &s->agent) ||
		!mn_import_strdup("anthropic", &s->provider_id))
		return mn_import_oom(imp);
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
	/* a sub-agent's records in its parent's log: its session, after */
	if (!cc->sub && json_object_object_get_ex(rec, "isSidechain", &v) &&
		json_object_get_boolean(v))
	{
		if (strcmp(type, "user") != 0 && strcmp(type, "assistant") != 0)
		{
			mn_import_bookkeeping(imp, line, "sidechain");
			return MNEMO_OK;
		}
		return mn_tree_hold(imp, &cc->side, line, text, len, rec);
	}
	if ((strcmp(type, "user") == 0 || strcmp(type, "assistant") == 0) &&
		mn_js_str(rec, "uuid", NULL) != NULL)
	{
		bool		added;

		if ((rc = mn_cc_uuid_add(imp, &cc->seen, mn_js_str(rec, "uuid", NULL), &added)) != MNEMO_OK)
			return rc;
		if (!added)
		{
			mn_import_bookkeeping(imp, line, "duplicate record");
			return MNEMO_OK;
		}
	}
	if (strcmp(type, "user") == 0)
	{
		bool		done;

		if ((rc = mn_cc_compact_summary(imp, cc, line, rec, whole, &done)) != MNEMO_OK || done)
			return rc;
		return mn_cc_user_record(imp, cc, line, rec, whole);
	}
	if (strcmp(type, "assistant") == 0)
		return mn_cc_assistant_record(imp, cc, line, rec, whole);
	if (strcmp(type, "summary") == 0 && imp->session.title == NULL && !imp->created &&
		mn_js_str(rec, "summary", NULL) != NULL &&
		!mn_import_strdup(mn_js_str(rec, "summary", NULL), &imp->session.title))
		return mn_import_oom(imp);
	if (strcmp(type, "system") == 0 && mn_js_str(rec, "subtype", NULL) != NULL &&
		strcmp(mn_js_str(rec, "subtype", NULL), "microcompact_boundary") == 0 &&
		(rc = mn_cc_microcompact(imp, cc, rec)) != MNEMO_OK)
		return rc;
	for (size_t i = 0; bookkeeping[i] != NULL; i++)
		if (strcmp(type, bookkeeping[i]) == 0)
		{
			mn_import_bookkeeping(imp, line, type);
			return MNEMO_OK;
		}
	mn_import_skipped(imp, line, type);
	return MNEMO_OK;
}

static int
cc_finish(mn_import *imp, void *state)
{
	return mn_cc_release(imp, state);
}

const mn_reader mn_claude_code_reader = {
	"claude-code", cc_detect, NULL, NULL, cc_create, cc_line, cc_finish, cc_sent, cc_destroy,
	mn_cc_children, NULL
};
