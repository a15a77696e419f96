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
 *	  messages in context before it (compact_summary); a
 *	  microcompact_boundary record tombstones the tool parts of the calls
 *	  it cleared (microcompact).
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
 */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json.h>

#include "transcript/transcript.h"

/* The uuids of the user and assistant records read: open addressing. */
typedef struct uuid_set
{
	char	  **slots;
	size_t		cap;			/* a power of two, or 0 */
	size_t		n;
} uuid_set;

typedef struct cc_state
{
	mn_import_msg *held;		/* the assistant message being assembled */
	char	   *held_api_id;	/* its message.id */
	mn_calls	calls;
	uuid_set	seen;
	bool		described;		/* the session's metadata is set */
	bool		sub;			/* a sub-agent's log: its sidechain records
								 * are its conversation */
	mn_tree		side;			/* the sidechain records of a main log (older
								 * logs write sub-agents inline) */
	mn_buf		link;			/* a Task result's metadata: its sub-agent */
} cc_state;

/* Record types Claude Code writes for itself, not for the conversation. */
static const char *const bookkeeping[] = {
	"progress", "system", "file-history-snapshot", "queue-operation", "pr-link",
	"summary", "custom-title", "attachment", NULL
};

static int
oom(mn_import *imp)
{
	return mn_fail(imp->st, MNEMO_ERR_NOMEM, "out of memory");
}

/* FNV-1a */
static size_t
uuid_hash(const char *s)
{
	uint64_t	h = 14695981039346656037u;

	for (; *s; s++)
		h = (h ^ (unsigned char) *s) * 1099511628211u;
	return (size_t) h;
}

/*
 * Add uuid to the set: *added false when it was there already.  Kept at
 * most half full, so a probe ends at an empty slot.
 */
static int
uuid_add(mn_import *imp, uuid_set *set, const char *uuid, bool *added)
{
	size_t		i;

	if (2 * (set->n + 1) > set->cap)
	{
		size_t		cap = set->cap ? set->cap * 2 : 256;
		char	  **slots = calloc(cap, sizeof(*slots));

		if (slots == NULL)
			return oom(imp);
		for (size_t j = 0; j < set->cap; j++)
			if (set->slots[j] != NULL)
			{
				for (i = uuid_hash(set->slots[j]) & (cap - 1); slots[i] != NULL; i = (i + 1) & (cap - 1))
					;
				slots[i] = set->slots[j];
			}
		free(set->slots);
		set->slots = slots;
		set->cap = cap;
	}
	for (i = uuid_hash(uuid) & (set->cap - 1); set->slots[i] != NULL; i = (i + 1) & (set->cap - 1))
		if (strcmp(set->slots[i], uuid) == 0)
		{
			*added = false;
			return MNEMO_OK;
		}
	if ((set->slots[i] = strdup(uuid)) == NULL)
		return oom(imp);
	set->n++;
	*added = true;
	return MNEMO_OK;
}

static void
uuid_set_free(uuid_set *set)
{
	for (size_t i = 0; i < set->cap; i++)
		free(set->slots[i]);
	free(set->slots);
}

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
	uuid_set_free(&cc->seen);
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

/* ------------------------------------------------------------------------
 * Compaction
 * ------------------------------------------------------------------------ */

/* The tool parts of the calls a microcompaction cleared, tombstoned at its
 * time: their ids read through get_messages_flat (application roles read no
 * table), then update_part_status over them.
 * One statement calling the function for each row of the table would be
 * routed whole to a Citus shard, where the function's own statements are
 * refused ("cannot execute a distributed query from a query on a shard"). */
static const mn_stmt microcompact_parts_stmt = {
	"mnemo_import_microcompact_parts",
	"SELECT array_agg(p.part_id)::text FROM mnemo.get_messages_flat($1::text) p "
	"WHERE p.content->>'tool_call_id' = ANY ($2::text[]) AND p.compacted_at IS NULL",
	2
};

static const mn_stmt microcompact_stmt = {
	"mnemo_import_microcompact",
	"SELECT mnemo.update_part_status($1::text, u.id, compacted_at => "
	"coalesce($3::bigint, (extract(epoch FROM clock_timestamp()) * 1000)::bigint)) "
	"FROM unnest($2::text[]) AS u(id)",
	3
};

/*
 * A microcompact_boundary system record: Claude Code cleared the results of
 * the calls in microcompactMetadata.compactedToolIds from its context, so
 * their tool parts are tombstoned (build_context shows them pruned).
 */
static int
microcompact(mn_import *imp, cc_state *cc, struct json_object *rec)
{
	struct json_object *meta = mn_js_obj(rec, "microcompactMetadata");
	struct json_object *list = meta ? mn_js_arr(meta, "compactedToolIds") : NULL;
	size_t		n = list ? json_object_array_length(list) : 0;
	const char **ids;
	const char *params[3];
	char	   *array;
	char		when[24];
	PGresult   *res;
	int			rc;

	if (n == 0)
		return MNEMO_OK;
	if ((rc = release(imp, cc)) != MNEMO_OK || (rc = mn_import_flush(imp)) != MNEMO_OK)
		return rc;
	if ((ids = calloc(n, sizeof(*ids))) == NULL)
		return oom(imp);
	for (size_t i = 0; i < n; i++)
		if ((ids[i] = json_object_get_string(json_object_array_get_idx(list, i))) == NULL)
			ids[i] = "";
	array = mn_id_array(imp->st, ids, n, "compactedToolIds");
	free(ids);
	if (array == NULL)
		return imp->st->errcode;
	snprintf(when, sizeof(when), "%" PRId64,
			 mn_import_iso_time(mn_js_str(rec, "timestamp", NULL)));
	params[0] = imp->session_id;
	params[1] = array;
	res = mn_exec(imp->st, &microcompact_parts_stmt, params);
	free(array);
	if (res == NULL)
		return imp->st->errcode;
	if (PQgetisnull(res, 0, 0))
	{
		PQclear(res);
		return MNEMO_OK;
	}
	if ((array = strdup(PQgetvalue(res, 0, 0))) == NULL)
	{
		PQclear(res);
		return oom(imp);
	}
	PQclear(res);
	params[1] = array;
	params[2] = strcmp(when, "0") != 0 ? when : NULL;
	res = mn_exec(imp->st, &microcompact_stmt, params);
	free(array);
	if (res == NULL)
		return imp->st->errcode;
	PQclear(res);
	return MNEMO_OK;
}

/*
 * A user record with isCompactSummary: after /compact (or an automatic
 * compaction, after its compact_boundary record) the conversation goes on
 * from this summary alone.  Committed as a leaf summary over every message
 * in context before it, so the context is the summary and what follows, as
 * Claude Code's is; false in *done when there is nothing before it to
 * summarise (the record is then an ordinary user message).
 */
static int
compact_summary(mn_import *imp, cc_state *cc, int64_t line, struct json_object *rec,
				mn_span msg_text, const char *summary, bool *done)
{
	mn_span		raw;
	int			rc;

	*done = false;
	if ((rc = release(imp, cc)) != MNEMO_OK || (rc = mn_import_flush(imp)) != MNEMO_OK)
		return rc;
	if (imp->imported == 0 || !mn_json_member(msg_text, "content", &raw))
		return MNEMO_OK;
	*done = true;
	return mn_import_compaction(imp, line, mn_import_iso_time(mn_js_str(rec, "timestamp", NULL)),
								raw, summary, imp->imported, NULL, (mn_span) {NULL, 0}, NULL);
}

/* The session's description, from the first record that has one. */
/* The id of the session of sub-agent agent_id of session parent (NULL when
 * agent_id is NULL or out of memory): malloc'd. */
static char *
subagent_id(const char *parent, const char *agent_id)
{
	size_t		len;
	char	   *id;

	if (agent_id == NULL)
		return NULL;
	len = strlen(parent) + strlen("-agent-") + strlen(agent_id) + 1;
	if ((id = malloc(len)) != NULL)
		snprintf(id, len, "%s-agent-%s", parent, agent_id);
	return id;
}

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
		return oom(imp);
	}
	free(s->metadata);
	s->metadata = meta.data;
	/* a sub-agent's session is its parent's id and its agent's */
	if (cc->sub && (s->parent_id != NULL || !imp->opts->session_id))
	{
		char	   *id = subagent_id(s->parent_id != NULL ? s->parent_id : sid, agent_id);

		if (id == NULL && agent_id != NULL)
			return oom(imp);
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
		return oom(imp);
	if (!mn_import_strdup("claude-code", &s->agent) ||
		!mn_import_strdup("anthropic", &s->provider_id))
		return oom(imp);
	return MNEMO_OK;
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

/*
 * The result of a Task call names the sub-agent that ran it
 * (toolUseResult.agentId): the call's part keeps it, and the id of the
 * sub-agent's session, {"agent_id", "subagent_session"}, in its metadata
 * (cc->link; empty for other records).
 */
static int
task_link(mn_import *imp, cc_state *cc, struct json_object *rec)
{
	struct json_object *result = mn_js_obj(rec, "toolUseResult");
	const char *agent_id = result != NULL ? mn_js_str(result, "agentId", NULL) : NULL;
	char	   *id;
	int			rc;

	cc->link.len = 0;
	if (agent_id == NULL)
		return MNEMO_OK;
	/* the session's id, which the sub-agent's is made of, is known once it
	 * is created */
	if (!imp->created && (rc = mn_import_flush(imp)) != MNEMO_OK)
		return rc;
	if ((id = subagent_id(imp->session_id, agent_id)) == NULL)
		return oom(imp);
	mn_buf_puts(&cc->link, "{\"agent_id\":");
	mn_buf_put_jstr(&cc->link, agent_id, strlen(agent_id));
	mn_buf_puts(&cc->link, ",\"subagent_session\":");
	mn_buf_put_jstr(&cc->link, id, strlen(id));
	mn_buf_puts(&cc->link, "}");
	free(id);
	return cc->link.oom ? oom(imp) : MNEMO_OK;
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
		mn_span		raw;
		struct json_object *flag;
		bool		done = false;

		if (json_object_object_get_ex(rec, "isCompactSummary", &flag) &&
			json_object_get_boolean(flag) &&
			((rc = compact_summary(imp, cc, line, rec, msg_text, json_object_get_string(content),
								   &done)) != MNEMO_OK || done))
			return rc;
		if ((rc = release(imp, cc)) != MNEMO_OK)
			return rc;
		if ((m = mn_import_msg_new(imp, line, "user")) == NULL)
			return imp->st->errcode;
		m->created_at = mn_import_iso_time(mn_js_str(rec, "timestamp", NULL));
		if ((p = mn_import_part_new(imp, m, "text")) == NULL ||
			!mn_json_member(msg_text, "content", &raw) ||
			(mn_part_put_raw(p, "text", raw), p->members.oom))
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

	if ((rc = task_link(imp, cc, rec)) != MNEMO_OK)
		return rc;
	for (size_t i = 0; rc == MNEMO_OK && i < json_object_array_length(content); i++)
	{
		mn_span		block_text = {NULL, 0};

		(void) mn_json_next_element(list_text, &pos, &block_text);
		rc = mn_anthropic_user_block(imp, &cc->calls, line, i, json_object_array_get_idx(content, i),
									 block_text, (mn_span) {cc->link.data, cc->link.len}, &m);
	}
	if (rc != MNEMO_OK || m == NULL)
	{
		mn_import_msg_free(m);
		return rc;
	}
	m->created_at = mn_import_iso_time(mn_js_str(rec, "timestamp", NULL));
	/* the results above belong to the held message, which comes first */
	if ((rc = release(imp, cc)) != MNEMO_OK)
	{
		mn_import_msg_free(m);
		return rc;
	}
	return mn_import_push(imp, m);
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
		cc->held->created_at = mn_import_iso_time(mn_js_str(rec, "timestamp", NULL));
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
		mn_span		raw;

		if (p == NULL || !mn_json_member(msg_text, "content", &raw) ||
			(mn_part_put_raw(p, "text", raw), p->members.oom))
			return oom(imp);
	}
	else if (content != NULL && json_object_is_type(content, json_type_array) &&
			 mn_json_member(msg_text, "content", &list_text))
	{
		for (size_t i = 0; i < json_object_array_length(content); i++)
		{
			mn_span		block_text = {NULL, 0};

			(void) mn_json_next_element(list_text, &pos, &block_text);
			rc = mn_anthropic_assistant_block(imp, &cc->calls, line, i,
											  json_object_array_get_idx(content, i), block_text,
											  cc->held);
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

		if ((rc = uuid_add(imp, &cc->seen, mn_js_str(rec, "uuid", NULL), &added)) != MNEMO_OK)
			return rc;
		if (!added)
		{
			mn_import_bookkeeping(imp, line, "duplicate record");
			return MNEMO_OK;
		}
	}
	if (strcmp(type, "user") == 0)
		return user_record(imp, cc, line, rec, whole);
	if (strcmp(type, "assistant") == 0)
		return assistant_record(imp, cc, line, rec, whole);
	if (strcmp(type, "summary") == 0 && imp->session.title == NULL && !imp->created &&
		mn_js_str(rec, "summary", NULL) != NULL &&
		!mn_import_strdup(mn_js_str(rec, "summary", NULL), &imp->session.title))
		return oom(imp);
	if (strcmp(type, "system") == 0 && mn_js_str(rec, "subtype", NULL) != NULL &&
		strcmp(mn_js_str(rec, "subtype", NULL), "microcompact_boundary") == 0 &&
		(rc = microcompact(imp, cc, rec)) != MNEMO_OK)
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
	return release(imp, state);
}

/* The sidechains of an older log, one a sub-agent: a record whose parent
 * is in a sidechain before it continues that one, else it begins one. */
static int
sidechains(mn_import *imp, cc_state *cc, const char *parent)
{
	mn_tree    *t = &cc->side;
	size_t	   *chain = t->n > 0 ? malloc(t->n * sizeof(*chain)) : NULL;
	ssize_t    *group = t->n > 0 ? malloc(t->n * sizeof(*group)) : NULL;
	int			rc = MNEMO_OK;

	if (t->n > 0 && (chain == NULL || group == NULL))
		rc = oom(imp);
	for (size_t i = 0; rc == MNEMO_OK && i < t->n; i++)
	{
		const char *up = mn_js_str(t->recs[i].obj, "parentUuid", NULL);

		group[i] = (ssize_t) i;
		for (size_t j = i; up != NULL && j-- > 0;)
		{
			const char *uuid = mn_js_str(t->recs[j].obj, "uuid", NULL);

			if (uuid != NULL && strcmp(uuid, up) == 0)
			{
				group[i] = group[j];
				break;
			}
		}
	}
	for (size_t g = 0; rc == MNEMO_OK && g < t->n; g++)
	{
		size_t		n = 0;

		if (group[g] != (ssize_t) g)
			continue;
		for (size_t i = g; i < t->n; i++)
			if (group[i] == (ssize_t) g)
				chain[n++] = i;
		rc = mn_import_child(imp, parent, NULL, t, chain, n);
	}
	free(chain);
	free(group);
	return rc;
}

static int
by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *) a, *(char *const *) b);
}

/* The logs of SESSION.jsonl's sub-agents, SESSION/subagents/agent-*.jsonl,
 * in name order. */
static int
subagent_files(mn_import *imp, const char *parent)
{
	const char *path = imp->opts->path;
	size_t		len = path != NULL ? strlen(path) : 0;
	mn_buf		dir = {0};
	char	  **names = NULL;
	size_t		n = 0;
	DIR		   *d;
	struct dirent *e;
	int			rc = MNEMO_OK;

	if (len <= 6 || strcmp(path + len - 6, ".jsonl") != 0)
		return MNEMO_OK;
	mn_buf_put(&dir, path, len - 6);
	mn_buf_puts(&dir, "/subagents");
	if (dir.oom)
	{
		mn_buf_free(&dir);
		return oom(imp);
	}
	if ((d = opendir(dir.data)) == NULL)
	{
		mn_buf_free(&dir);
		return MNEMO_OK;
	}
	while (rc == MNEMO_OK && (e = readdir(d)) != NULL)
	{
		size_t		nl = strlen(e->d_name);
		char	  **grown;

		if (strncmp(e->d_name, "agent-", 6) != 0 || nl <= 6 ||
			strcmp(e->d_name + nl - 6, ".jsonl") != 0)
			continue;
		if ((grown = realloc(names, (n + 1) * sizeof(*names))) == NULL)
			rc = oom(imp);
		else if ((names = grown, names[n] = malloc(dir.len + 1 + nl + 1)) == NULL)
			rc = oom(imp);
		else
			snprintf(names[n++], dir.len + 1 + nl + 1, "%s/%s", dir.data, e->d_name);
	}
	closedir(d);
	mn_buf_free(&dir);
	if (n > 1)
		qsort(names, n, sizeof(*names), by_name);
	for (size_t i = 0; rc == MNEMO_OK && i < n; i++)
		rc = mn_import_child(imp, parent, names[i], NULL, NULL, 0);
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return rc;
}

/*
 * After the log's session is stored: each of its sub-agents a child session
 * of it (parent_id), from its sidechain records (older logs) and from the
 * logs in SESSION/subagents/ (options.path).  An import that takes one
 * session (no options.session) leaves them out.
 */
static int
cc_children(mn_import *imp, void *state)
{
	cc_state   *cc = state;
	char		parent[MNEMO_ID_MAX + 1];
	int			rc;

	if (cc->sub)
		return MNEMO_OK;
	if (imp->opts->session == NULL)
	{
		for (size_t i = 0; i < cc->side.n; i++)
			mn_import_bookkeeping(imp, cc->side.recs[i].line, "sidechain");
		return MNEMO_OK;
	}
	memcpy(parent, imp->session_id, sizeof(parent));
	if ((rc = sidechains(imp, cc, parent)) != MNEMO_OK)
		return rc;
	return subagent_files(imp, parent);
}

const mn_reader mn_claude_code_reader = {
	"claude-code", cc_detect, NULL, NULL, cc_create, cc_line, cc_finish, cc_sent, cc_destroy,
	cc_children, NULL
};
