/*
 * import.c
 *		mnemo_import_jsonl: a transcript into a new session, in one
 *		transaction; and the reader of mnemo's own export format.
 *
 * The driver reads lines of any length (getline), parses each with json-c,
 * detects the format from the first non-empty line (a line of mnemo's
 * export has "role" and "parts"; a Claude Code record has a "type" and
 * neither) and hands every line to that format's reader, which builds
 * messages and pushes them here.  Pushed messages are sent in batches, each
 * one append_messages statement, then their usage (update_message_tokens)
 * and part status (update_part_status) are restored.
 *
 * Atomicity: the session is created and every batch is appended between one
 * BEGIN and COMMIT, and any error rolls it all back, so a failed import
 * leaves no session and no message behind.  The transaction starts only
 * when the first batch is ready (or at the end, for an empty transcript):
 * by then the reader knows what the session is made of, and whether the
 * transcript's own session id is still free was checked just before.
 *
 * Events: the handle's subscribers are set aside for the transaction and
 * hear one session_created after the commit, never of rows that a rollback
 * took back.  Messages are appended by this file's own append_messages
 * statement rather than mnemo_messages_append: the part contents are JSON
 * text cut out of the input, sent as they are, where the public call would
 * parse them again with json-c and change integers beyond 64 bits.
 *
 * The mnemo format (see export.c): the ids in the file are kept, so an
 * import into another database restores the session exactly, and a second
 * import into the same database fails with MNEMO_ERR_DUPLICATE_ID and
 * leaves nothing; options.new_ids drops them to copy a session instead.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <json.h>

#include "jsonl.h"

/* A batch is sent when it holds this many messages or bytes. */
#define BATCH_MESSAGES 256
#define BATCH_BYTES (1024 * 1024)

/* A line holds its parts two levels down (the message, its parts array). */
#define JSON_DEPTH (MNEMO_MAX_JSON_DEPTH + 2)

static const mn_stmt append_stmt = {
	"mnemo_import_append",
	"SELECT id, seq FROM mnemo.append_messages($1::text, $2::jsonb)",
	2
};

int
mn_jsonl_rollback(mnemo_store *st)
{
	int			code = st->errcode;
	char	   *msg = st->errmsg;
	char		sqlstate[6];

	memcpy(sqlstate, st->sqlstate, sizeof(sqlstate));
	st->errmsg = NULL;
	(void) mn_exec_command(st, "ROLLBACK");
	mn_clear_error(st);
	st->errcode = code;
	st->errmsg = msg;
	memcpy(st->sqlstate, sqlstate, sizeof(sqlstate));
	return code;
}

/* ------------------------------------------------------------------------
 * Building messages
 * ------------------------------------------------------------------------ */

bool
mn_import_strdup(const char *s, char **dst)
{
	if (s == NULL)
	{
		*dst = NULL;
		return true;
	}
	*dst = strdup(s);
	return *dst != NULL;
}

mn_import_msg *
mn_import_msg_new(mn_import *imp, int64_t line, const char *role)
{
	mn_import_msg *m = calloc(1, sizeof(*m));

	if (m == NULL || !mn_import_strdup(role, &m->role))
	{
		free(m);
		mn_fail(imp->st, MNEMO_ERR_NOMEM, "out of memory");
		return NULL;
	}
	m->line = line;
	m->cost = -1;
	return m;
}

void
mn_import_msg_free(mn_import_msg *m)
{
	if (m == NULL)
		return;
	for (size_t i = 0; i < m->n_parts; i++)
	{
		mn_buf_free(&m->parts[i].members);
		free(m->parts[i].id);
	}
	free(m->parts);
	free(m->role);
	free(m->id);
	free(m->agent);
	free(m->model_id);
	free(m->provider_id);
	free(m->run_id);
	free(m->finish_reason);
	free(m);
}

mn_import_part *
mn_import_part_new(mn_import *imp, mn_import_msg *m, const char *type)
{
	mn_import_part *p;

	if (m->n_parts == m->cap_parts)
	{
		size_t		cap = m->cap_parts ? m->cap_parts * 2 : 4;
		mn_import_part *grown = realloc(m->parts, cap * sizeof(*grown));

		if (grown == NULL)
		{
			mn_fail(imp->st, MNEMO_ERR_NOMEM, "out of memory");
			return NULL;
		}
		m->parts = grown;
		m->cap_parts = cap;
	}
	p = &m->parts[m->n_parts++];
	memset(p, 0, sizeof(*p));
	if (type != NULL)
		mn_part_put_string(p, "type", type, strlen(type));
	return p;
}

static void
member_key(mn_import_part *p, const char *key)
{
	if (p->members.len > 0)
		mn_buf_put(&p->members, ",", 1);
	mn_buf_put_jstr(&p->members, key, strlen(key));
	mn_buf_put(&p->members, ":", 1);
}

void
mn_part_put_string(mn_import_part *p, const char *key, const char *s, size_t len)
{
	member_key(p, key);
	mn_buf_put_jstr(&p->members, s, len);
}

void
mn_part_put_raw(mn_import_part *p, const char *key, mn_span value)
{
	member_key(p, key);
	mn_buf_put(&p->members, value.p, value.len);
}

/* ------------------------------------------------------------------------
 * Sending
 * ------------------------------------------------------------------------ */

static void
put_field(mn_buf *b, const char *key, const char *value)
{
	if (value == NULL)
		return;
	mn_buf_put(b, ",", 1);
	mn_buf_put_jstr(b, key, strlen(key));
	mn_buf_put(b, ":", 1);
	mn_buf_put_jstr(b, value, strlen(value));
}

/* The element of append_messages' array for m. */
static void
put_message(mn_buf *b, const mn_import_msg *m)
{
	mn_buf_puts(b, "{\"role\":");
	mn_buf_put_jstr(b, m->role, strlen(m->role));
	put_field(b, "id", m->id);
	put_field(b, "agent", m->agent);
	put_field(b, "model_id", m->model_id);
	put_field(b, "provider_id", m->provider_id);
	put_field(b, "run_id", m->run_id);
	if (m->is_summary)
		mn_buf_puts(b, ",\"is_summary\":true");
	mn_buf_puts(b, ",\"parts\":[");
	for (size_t i = 0; i < m->n_parts; i++)
	{
		const mn_import_part *p = &m->parts[i];

		if (p->members.oom)
		{
			b->oom = true;
			return;
		}
		if (i > 0)
			mn_buf_put(b, ",", 1);
		mn_buf_put(b, "{", 1);
		mn_buf_put(b, p->members.data ? p->members.data : "", p->members.len);
		if (p->tool_state != NULL)
		{
			mn_buf_puts(b, p->members.len > 0 ? ",\"tool_state\":" : "\"tool_state\":");
			mn_buf_put_jstr(b, p->tool_state, strlen(p->tool_state));
		}
		mn_buf_put(b, "}", 1);
	}
	mn_buf_puts(b, "]}");
}

/*
 * An append error names the message as "messages[i]"; the user knows lines.
 * Input the server refuses is malformed input: FORMAT, with the line.
 */
static int
locate_error(mn_import *imp, mn_import_msg *const *batch, size_t n)
{
	mnemo_store *st = imp->st;
	const char *msg = st->errmsg ? st->errmsg : "";
	char		sqlstate[6];
	char	   *end;
	unsigned long i;
	const char *rest;
	int			code = st->errcode;

	if (strncmp(msg, "messages[", 9) != 0)
		return code;
	errno = 0;
	i = strtoul(msg + 9, &end, 10);
	if (errno != 0 || end == msg + 9 || *end != ']' || i >= n)
		return code;
	rest = end + 1;
	if (*rest == '.')
		rest++;
	else if (*rest == ':')
		rest += *(rest + 1) == ' ' ? 2 : 1;
	if (code == MNEMO_ERR_INVALID_ARGUMENT)
		code = MNEMO_ERR_FORMAT;
	memcpy(sqlstate, st->sqlstate, sizeof(sqlstate));
	{
		char	   *copy = strdup(rest);

		mn_fail(st, code, "line %" PRId64 ": %s", batch[i]->line, copy ? copy : rest);
		free(copy);
	}
	memcpy(st->sqlstate, sqlstate, sizeof(sqlstate));
	return code;
}

/* Usage and part status of an appended message, which the append left out. */
static int
restore(mn_import *imp, mn_import_msg *m)
{
	mnemo_store *st = imp->st;
	mnemo_parts *stored = NULL;
	int			rc = MNEMO_OK;

	if (m->has_tokens || m->cost >= 0 || m->finish_reason != NULL)
	{
		rc = mnemo_message_update_tokens(st, imp->session_id, m->ref_id, m->has_tokens ? &m->tokens : NULL,
										 m->cost, m->finish_reason);
		if (rc != MNEMO_OK)
			return rc;
	}
	for (size_t i = 0; i < m->n_parts && rc == MNEMO_OK; i++)
	{
		const mn_import_part *p = &m->parts[i];
		mnemo_part_status status = {0};
		const char *id = p->id;

		if (p->compacted_at == 0 && p->started_at == 0 && p->completed_at == 0)
			continue;
		if (id == NULL)
		{
			/* the server named the parts: read the names once */
			if (stored == NULL && (rc = mnemo_parts_get(st, imp->session_id, m->ref_id, &stored)) != MNEMO_OK)
				break;
			if (i >= stored->count)
			{
				rc = mn_fail(st, MNEMO_ERR_PROTOCOL, "message %s has %zu parts, not %zu",
							 m->ref_id, stored->count, m->n_parts);
				break;
			}
			id = stored->items[i].id;
		}
		status.compacted_at = p->compacted_at;
		status.started_at = p->started_at;
		status.completed_at = p->completed_at;
		rc = mnemo_part_update_status(st, imp->session_id, id, &status);
	}
	mnemo_parts_free(stored);
	return rc;
}

/*
 * Start the transaction and create the session.  The transcript's own id is
 * taken when no session has it; the check runs before BEGIN because a
 * failed statement would end the transaction.
 */
static int
begin(mn_import *imp)
{
	mnemo_store *st = imp->st;
	mn_import_session *s = &imp->session;
	mnemo_new_session spec = {0};
	mnemo_session *row = NULL;
	int			rc;

	spec.id = imp->opts->session_id;
	if (spec.id == NULL && s->want_id != NULL)
	{
		rc = mnemo_session_get(st, s->want_id, &row);
		if (rc == MNEMO_OK)
			mnemo_session_free(row);
		else if (rc != MNEMO_ERR_SESSION_NOT_FOUND)
			return rc;
		else
			spec.id = s->want_id;
		row = NULL;
	}
	spec.model_id = s->model_id;
	spec.provider_id = s->provider_id;
	spec.agent = s->agent;
	spec.title = s->title;
	spec.metadata = s->metadata;

	if ((rc = mn_exec_command(st, "BEGIN")) != MNEMO_OK)
		return rc;
	imp->began = true;
	if ((rc = mnemo_session_create(st, &spec, &row)) != MNEMO_OK)
		return rc;
	if (strlen(row->id) > MNEMO_ID_MAX)
		rc = mn_fail(st, MNEMO_ERR_PROTOCOL, "session id of %zu bytes", strlen(row->id));
	else
		memcpy(imp->session_id, row->id, strlen(row->id) + 1);
	mnemo_session_free(row);
	imp->created = rc == MNEMO_OK;
	return rc;
}

/* Send the batch (creating the session first if need be). */
static int
flush(mn_import *imp)
{
	mnemo_store *st = imp->st;
	const char *params[2];
	PGresult   *res;
	size_t		n = imp->n_batch;
	int			rc = MNEMO_OK;

	if (!imp->created && (rc = begin(imp)) != MNEMO_OK)
		return rc;
	if (n > 0)
	{
		mn_buf_reset(&imp->text);
		mn_buf_put(&imp->text, "[", 1);
		for (size_t i = 0; i < n; i++)
		{
			if (i > 0)
				mn_buf_put(&imp->text, ",", 1);
			put_message(&imp->text, imp->batch[i]);
		}
		mn_buf_put(&imp->text, "]", 1);
		if (imp->text.oom)
			return mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");

		params[0] = imp->session_id;
		params[1] = imp->text.data;
		res = mn_exec(st, &append_stmt, params);
		if (res == NULL)
			return locate_error(imp, imp->batch, n);
		if ((size_t) PQntuples(res) != n)
			rc = mn_fail(st, MNEMO_ERR_PROTOCOL, "append_messages returned %d rows for %zu messages",
						 PQntuples(res), n);
		for (size_t i = 0; rc == MNEMO_OK && i < n; i++)
		{
			const char *id = PQgetvalue(res, (int) i, 0);

			if (PQgetisnull(res, (int) i, 0) || strlen(id) > MNEMO_ID_MAX)
				rc = mn_fail(st, MNEMO_ERR_PROTOCOL, "append_messages returned a bad id");
			else
				memcpy(imp->batch[i]->ref_id, id, strlen(id) + 1);
		}
		PQclear(res);
		for (size_t i = 0; rc == MNEMO_OK && i < n; i++)
			rc = restore(imp, imp->batch[i]);
		if (rc != MNEMO_OK)
			return rc;
		for (size_t i = 0; rc == MNEMO_OK && i < n; i++)
			if (imp->reader != NULL && imp->reader->sent != NULL)
				rc = imp->reader->sent(imp, imp->rstate, imp->batch[i]);
		if (rc != MNEMO_OK)
			return rc;
		for (size_t i = 0; i < n; i++)
		{
			mn_import_msg_free(imp->batch[i]);
			imp->batch[i] = NULL;
		}
		imp->n_batch = 0;
		imp->batch_bytes = 0;
		imp->imported += (int64_t) n;
	}
	if (imp->opts->progress != NULL)
		imp->opts->progress(imp->done, imp->total, imp->opts->progress_arg);
	return MNEMO_OK;
}

int
mn_import_push(mn_import *imp, mn_import_msg *m)
{
	size_t		bytes = 64;

	if (imp->n_batch == imp->cap_batch)
	{
		size_t		cap = imp->cap_batch ? imp->cap_batch * 2 : 32;
		mn_import_msg **grown = realloc(imp->batch, cap * sizeof(*grown));

		if (grown == NULL)
		{
			mn_import_msg_free(m);
			return mn_fail(imp->st, MNEMO_ERR_NOMEM, "out of memory");
		}
		imp->batch = grown;
		imp->cap_batch = cap;
	}
	for (size_t i = 0; i < m->n_parts; i++)
		bytes += m->parts[i].members.len;
	imp->batch[imp->n_batch++] = m;
	imp->batch_bytes += bytes;
	if (imp->n_batch >= BATCH_MESSAGES || imp->batch_bytes >= BATCH_BYTES)
		return flush(imp);
	return MNEMO_OK;
}

void
mn_import_skipped(mn_import *imp, int64_t line, const char *kind)
{
	if (imp->opts->skipped != NULL)
		imp->opts->skipped(line, kind, imp->opts->progress_arg);
}

/* ------------------------------------------------------------------------
 * The mnemo export format
 * ------------------------------------------------------------------------ */

/* A string field, or JSON null for "not set"; FORMAT otherwise. */
static int
string_field(mn_import *imp, int64_t line, const char *key, struct json_object *v, char **dst)
{
	if (v == NULL)
		return MNEMO_OK;
	if (!json_object_is_type(v, json_type_string))
		return mn_fail(imp->st, MNEMO_ERR_FORMAT, "line %" PRId64 ": \"%s\" must be a string",
					   line, key);
	free(*dst);
	if (!mn_import_strdup(json_object_get_string(v), dst))
		return mn_fail(imp->st, MNEMO_ERR_NOMEM, "out of memory");
	return MNEMO_OK;
}

static int
count_field(mn_import *imp, int64_t line, const char *key, struct json_object *v, int64_t *dst)
{
	if (v == NULL)
		return MNEMO_OK;
	if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 0)
		return mn_fail(imp->st, MNEMO_ERR_FORMAT,
					   "line %" PRId64 ": \"%s\" must be a non-negative integer", line, key);
	*dst = json_object_get_int64(v);
	return MNEMO_OK;
}

static int
tokens_field(mn_import *imp, int64_t line, struct json_object *v, mn_import_msg *m)
{
	int			rc = MNEMO_OK;

	if (!json_object_is_type(v, json_type_object))
		return mn_fail(imp->st, MNEMO_ERR_FORMAT, "line %" PRId64 ": \"tokens\" must be an object",
					   line);
	json_object_object_foreach(v, key, count)
	{
		int64_t    *dst;

		if (strcmp(key, "input") == 0)
			dst = &m->tokens.input;
		else if (strcmp(key, "output") == 0)
			dst = &m->tokens.output;
		else if (strcmp(key, "cache_read") == 0)
			dst = &m->tokens.cache_read;
		else if (strcmp(key, "cache_write") == 0)
			dst = &m->tokens.cache_write;
		else if (strcmp(key, "reasoning") == 0)
			dst = &m->tokens.reasoning;
		else
			return mn_fail(imp->st, MNEMO_ERR_FORMAT,
						   "line %" PRId64 ": unknown key \"%s\" in \"tokens\"", line, key);
		if ((rc = count_field(imp, line, key, count, dst)) != MNEMO_OK)
			return rc;
	}
	m->has_tokens = true;
	return MNEMO_OK;
}

/*
 * One part of a line: the members are copied as written, except the status
 * fields (restored after the append) and, with new_ids, the id.
 */
static int
jsonl_part(mn_import *imp, int64_t line, size_t index, struct json_object *obj,
		   mn_span text, mn_import_msg *m)
{
	mn_import_part *p;
	struct json_object *type;
	size_t		pos = 0;
	mn_span		key,
				value;
	int			rc;

	if (!json_object_is_type(obj, json_type_object))
		return mn_fail(imp->st, MNEMO_ERR_FORMAT,
					   "line %" PRId64 ": parts[%zu] must be a JSON object", line, index);
	if (!json_object_object_get_ex(obj, "type", &type) ||
		!json_object_is_type(type, json_type_string))
		return mn_fail(imp->st, MNEMO_ERR_FORMAT,
					   "line %" PRId64 ": parts[%zu] has no \"type\" string", line, index);
	if ((p = mn_import_part_new(imp, m, NULL)) == NULL)
		return imp->st->errcode;

	while (mn_json_next_member(text, &pos, &key, &value))
	{
		static const char *const status[] = {"compacted_at", "started_at", "completed_at"};
		int64_t    *dst[] = {&p->compacted_at, &p->started_at, &p->completed_at};
		bool		is_status = false;

		for (int k = 0; k < 3; k++)
		{
			struct json_object *v;

			if (!mn_json_key_is(key, status[k]))
				continue;
			is_status = true;
			json_object_object_get_ex(obj, status[k], &v);
			if (v != NULL && (rc = count_field(imp, line, status[k], v, dst[k])) != MNEMO_OK)
				return rc;
		}
		if (is_status)
			continue;
		if (mn_json_key_is(key, "id"))
		{
			struct json_object *v;

			if (imp->new_ids)
				continue;
			json_object_object_get_ex(obj, "id", &v);
			if (v != NULL && !json_object_is_type(v, json_type_null) &&
				(rc = string_field(imp, line, "id", v, &p->id)) != MNEMO_OK)
				return rc;
		}
		if (p->members.len > 0)
			mn_buf_put(&p->members, ",", 1);
		mn_buf_put(&p->members, key.p, key.len);
		mn_buf_put(&p->members, ":", 1);
		mn_buf_put(&p->members, value.p, value.len);
	}
	if (p->members.oom)
		return mn_fail(imp->st, MNEMO_ERR_NOMEM, "out of memory");
	return MNEMO_OK;
}

static int
jsonl_line(mn_import *imp, void *state, int64_t line, const char *text, size_t len,
		   struct json_object *obj)
{
	mnemo_store *st = imp->st;
	mn_import_msg *m;
	struct json_object *parts = NULL;
	mn_span		whole = {text, len};
	mn_span		parts_text;
	size_t		pos = 0;
	int			rc = MNEMO_OK;

	(void) state;
	if (!json_object_is_type(obj, json_type_object))
		return mn_fail(st, MNEMO_ERR_FORMAT, "line %" PRId64 ": a message must be a JSON object",
					   line);
	if ((m = mn_import_msg_new(imp, line, NULL)) == NULL)
		return st->errcode;

	json_object_object_foreach(obj, key, v)
	{
		if (strcmp(key, "id") == 0)
			rc = imp->new_ids ? MNEMO_OK : string_field(imp, line, key, v, &m->id);
		else if (strcmp(key, "role") == 0)
			rc = string_field(imp, line, key, v, &m->role);
		else if (strcmp(key, "agent") == 0)
			rc = string_field(imp, line, key, v, &m->agent);
		else if (strcmp(key, "model_id") == 0)
			rc = string_field(imp, line, key, v, &m->model_id);
		else if (strcmp(key, "provider_id") == 0)
			rc = string_field(imp, line, key, v, &m->provider_id);
		else if (strcmp(key, "run_id") == 0)
			rc = string_field(imp, line, key, v, &m->run_id);
		else if (strcmp(key, "finish_reason") == 0)
			rc = string_field(imp, line, key, v, &m->finish_reason);
		else if (strcmp(key, "is_summary") == 0)
		{
			if (v != NULL && !json_object_is_type(v, json_type_boolean))
				rc = mn_fail(st, MNEMO_ERR_FORMAT,
							 "line %" PRId64 ": \"is_summary\" must be a boolean", line);
			else
				m->is_summary = v != NULL && json_object_get_boolean(v);
		}
		else if (strcmp(key, "tokens") == 0)
			rc = v == NULL ? MNEMO_OK : tokens_field(imp, line, v, m);
		else if (strcmp(key, "cost") == 0)
		{
			double		cost = v ? json_object_get_double(v) : 0;

			if (v != NULL && ((!json_object_is_type(v, json_type_double) &&
							   !json_object_is_type(v, json_type_int)) ||
							  !isfinite(cost) || cost < 0))
				rc = mn_fail(st, MNEMO_ERR_FORMAT,
							 "line %" PRId64 ": \"cost\" must be a non-negative number", line);
			else if (v != NULL)
				m->cost = cost;
		}
		else if (strcmp(key, "parts") == 0)
			parts = v;
		else
			rc = mn_fail(st, MNEMO_ERR_FORMAT, "line %" PRId64 ": unknown key \"%s\"", line, key);
		if (rc != MNEMO_OK)
			break;
	}
	if (rc == MNEMO_OK && m->role == NULL)
		rc = mn_fail(st, MNEMO_ERR_FORMAT, "line %" PRId64 ": \"role\" is required", line);
	/* the session takes the first message's agent and model */
	if (rc == MNEMO_OK && !imp->created && imp->n_batch == 0 &&
		(!mn_import_strdup(m->agent, &imp->session.agent) ||
		 !mn_import_strdup(m->model_id, &imp->session.model_id) ||
		 !mn_import_strdup(m->provider_id, &imp->session.provider_id)))
		rc = mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
	if (rc == MNEMO_OK && !json_object_is_type(parts, json_type_array))
		rc = mn_fail(st, MNEMO_ERR_FORMAT, "line %" PRId64 ": \"parts\" must be an array", line);
	if (rc == MNEMO_OK && !mn_json_member(whole, "parts", &parts_text))
		rc = mn_fail(st, MNEMO_ERR_FORMAT, "line %" PRId64 ": \"parts\" not found", line);
	for (size_t i = 0; rc == MNEMO_OK && i < json_object_array_length(parts); i++)
	{
		mn_span		part_text;

		if (!mn_json_next_element(parts_text, &pos, &part_text))
			rc = mn_fail(st, MNEMO_ERR_FORMAT, "line %" PRId64 ": parts[%zu] not found", line, i);
		else
			rc = jsonl_part(imp, line, i, json_object_array_get_idx(parts, i), part_text, m);
	}
	if (rc != MNEMO_OK)
	{
		mn_import_msg_free(m);
		return rc;
	}
	return mn_import_push(imp, m);
}

static const mn_reader jsonl_reader = {
	"mnemo", NULL, jsonl_line, NULL, NULL, NULL
};

/* ------------------------------------------------------------------------
 * The driver
 * ------------------------------------------------------------------------ */

static bool
blank(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r' && s[i] != '\n')
			return false;
	return true;
}

/* The line parsed strictly, nothing but white space after the value. */
static int
parse_line(mn_import *imp, struct json_tokener *tok, int64_t lineno, const char *text,
		   size_t len, struct json_object **out)
{
	struct json_object *obj;
	size_t		end;

	if (len > INT_MAX)
		return mn_fail(imp->st, MNEMO_ERR_FORMAT, "line %" PRId64 ": longer than %d bytes",
					   lineno, INT_MAX);
	if (!mn_utf8_valid(text, len))
		return mn_fail(imp->st, MNEMO_ERR_FORMAT, "line %" PRId64 ": not valid UTF-8", lineno);
	json_tokener_reset(tok);
	obj = json_tokener_parse_ex(tok, text, (int) len);
	if (obj == NULL)
	{
		enum json_tokener_error err = json_tokener_get_error(tok);

		return mn_fail(imp->st, MNEMO_ERR_FORMAT, "line %" PRId64 ": not valid JSON: %s", lineno,
					   err == json_tokener_continue ? "unexpected end of line"
					   : json_tokener_error_desc(err));
	}
	for (end = json_tokener_get_parse_end(tok); end < len; end++)
	{
		if (strchr(" \t\r\n", text[end]) == NULL)
		{
			json_object_put(obj);
			return mn_fail(imp->st, MNEMO_ERR_FORMAT,
						   "line %" PRId64 ": not valid JSON: text after the value", lineno);
		}
	}
	*out = obj;
	return MNEMO_OK;
}

static int
detect(mn_import *imp, int64_t lineno, struct json_object *obj)
{
	if (json_object_is_type(obj, json_type_object))
	{
		if (json_object_object_get_ex(obj, "role", NULL) ||
			json_object_object_get_ex(obj, "parts", NULL))
			imp->reader = &jsonl_reader;
		else if (mn_claude_code_detect(obj))
			imp->reader = &mn_claude_code_reader;
	}
	if (imp->reader == NULL)
		return mn_fail(imp->st, MNEMO_ERR_FORMAT,
					   "line %" PRId64 ": neither a mnemo export line (a JSON object with "
					   "\"role\" and \"parts\") nor a Claude Code record (with \"type\")",
					   lineno);
	if (imp->reader->create != NULL && (imp->rstate = imp->reader->create()) == NULL)
		return mn_fail(imp->st, MNEMO_ERR_NOMEM, "out of memory");
	return MNEMO_OK;
}

/* Read every line and send what the reader builds. */
static int
read_all(mn_import *imp, FILE *in)
{
	struct json_tokener *tok = json_tokener_new_ex(JSON_DEPTH);
	char	   *line = NULL;
	size_t		cap = 0;
	ssize_t		n;
	int64_t		lineno = 0;
	int			rc = MNEMO_OK;

	if (tok == NULL)
		return mn_fail(imp->st, MNEMO_ERR_NOMEM, "out of memory");
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	errno = 0;
	while ((n = getline(&line, &cap, in)) >= 0)
	{
		struct json_object *obj = NULL;

		lineno++;
		imp->done += (uint64_t) n;
		if (blank(line, (size_t) n))
			continue;
		if ((rc = parse_line(imp, tok, lineno, line, (size_t) n, &obj)) != MNEMO_OK)
			break;
		if (imp->reader == NULL)
			rc = detect(imp, lineno, obj);
		if (rc == MNEMO_OK)
			rc = imp->reader->line(imp, imp->rstate, lineno, line, (size_t) n, obj);
		json_object_put(obj);
		if (rc != MNEMO_OK)
			break;
		errno = 0;
	}
	if (rc == MNEMO_OK && ferror(in))
		rc = mn_fail(imp->st, errno == ENOMEM ? MNEMO_ERR_NOMEM : MNEMO_ERR_IO,
					 "reading the transcript failed after line %" PRId64 ": %s", lineno,
					 errno ? strerror(errno) : "read error");
	free(line);
	json_tokener_free(tok);
	if (rc == MNEMO_OK && imp->reader != NULL && imp->reader->finish != NULL)
		rc = imp->reader->finish(imp, imp->rstate);
	return rc;
}

static void
session_clear(mn_import_session *s)
{
	free(s->want_id);
	free(s->model_id);
	free(s->provider_id);
	free(s->agent);
	free(s->title);
	free(s->metadata);
	memset(s, 0, sizeof(*s));
}

MNEMO_API int
mnemo_import_jsonl(mnemo_store *st, FILE *in, const mnemo_import_options *opts,
				   char session_id_out[MNEMO_ID_MAX + 1], int64_t *imported)
{
	static const mnemo_import_options defaults = {0};
	mn_import	imp = {0};
	struct mn_events *events;
	struct stat sb;
	int			rc;

	if (st == NULL)
		return MNEMO_ERR_INVALID_ARGUMENT;
	mn_clear_error(st);
	if (in == NULL)
		return mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT, "the input stream is NULL");
	imp.st = st;
	imp.opts = opts != NULL ? opts : &defaults;
	imp.new_ids = imp.opts->new_ids;
	if (fstat(fileno(in), &sb) == 0 && S_ISREG(sb.st_mode))
	{
		off_t		at = ftello(in);

		imp.total = (uint64_t) sb.st_size - (at > 0 && at <= sb.st_size ? (uint64_t) at : 0);
	}

	/* subscribers hear of the session once it is committed */
	events = st->events;
	st->events = NULL;

	rc = read_all(&imp, in);
	if (rc == MNEMO_OK)
		rc = flush(&imp);
	if (rc == MNEMO_OK)
		rc = mn_exec_command(st, "COMMIT");
	if (rc != MNEMO_OK && imp.began)
		rc = mn_jsonl_rollback(st);

	/* a subscriber added from a progress callback would be lost here */
	if (st->events == NULL)
		st->events = events;
	if (rc == MNEMO_OK)
	{
		if (session_id_out != NULL)
			memcpy(session_id_out, imp.session_id, strlen(imp.session_id) + 1);
		if (imported != NULL)
			*imported = imp.imported;
		mn_emit(st, MNEMO_EVENT_SESSION_CREATED, imp.session_id, NULL, 0, NULL, false);
	}

	for (size_t i = 0; i < imp.n_batch; i++)
		mn_import_msg_free(imp.batch[i]);
	free(imp.batch);
	mn_buf_free(&imp.text);
	if (imp.reader != NULL && imp.reader->destroy != NULL)
		imp.reader->destroy(imp.rstate);
	session_clear(&imp.session);
	return rc;
}
