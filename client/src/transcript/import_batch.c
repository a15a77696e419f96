/*
 * import_batch.c
 *		The import a reader pushes its messages to (import_message.c builds
 *		them): sent in batches inside the import's one transaction, with the
 *		compactions of the transcript (its checkpoints: import_checkpoints.c).
 *
 * Pushed messages are sent in batches, each one append_messages statement,
 * then their usage (update_message_tokens) and part times
 * (update_part_status) are restored, one statement each for the batch.
 * A full batch is sent without waiting for the server: the reader parses
 * the next one meanwhile, and its result is read before the next is sent
 * or any other statement runs (mn_import_drain).
 * The transaction starts only when the first batch is ready (or at the
 * end, for an empty transcript): by then the reader knows what the session
 * is made of, and whether the transcript's own session id is still free
 * was checked just before.
 *
 * Messages are appended by this file's own append_messages statement
 * rather than mnemo_messages_append: the part contents are JSON text cut
 * out of the input, sent as they are, where the public call would parse
 * them again with json-c and change integers beyond 64 bits.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "transcript/transcript.h"

/* A batch is sent when it holds this many messages or bytes. */
#define BATCH_MESSAGES 256
#define BATCH_BYTES (1024 * 1024)

/* The context items a summary of the span replaces: messages for a leaf,
 * summary nodes for a condensation, in position order, read through
 * get_context_items: the view is explicit rows and an implicit tail.  Only
 * functions: an application role reads no table (doc/security.md), and on
 * Citus a statement that calls a function and reads a table is refused
 * ("cannot execute a distributed query from a query on a shard"). */
static const mn_stmt covered_stmt = {
	"mnemo_import_covered",
	"SELECT c.item_id FROM mnemo.get_context_items($1::text) c "
	"JOIN mnemo.get_messages($1::text) m ON m.id = c.item_id "
	"LEFT JOIN mnemo.summary_nodes($1::text, true) n ON n.id = c.item_id "
	"WHERE c.item_type = $2::text "
	"AND coalesce(n.seq_start, m.seq) >= $3::bigint AND coalesce(n.seq_end, m.seq) <= $4::bigint "
	"ORDER BY c.position",
	4
};

static const mn_stmt append_stmt = {
	"mnemo_import_append",
	"SELECT id, seq FROM mnemo.append_messages($1::text, $2::jsonb)",
	2
};

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

/* value, unless the session's own (append_messages' default) */
static const char *
unless_same(const char *value, const char *session_value)
{
	return value != NULL && session_value != NULL && strcmp(value, session_value) == 0 ?
		NULL : value;
}

/*
 * The element of append_messages' array for m.  What the session gives by
 * default is left out: a mnemo export writes agent, model and provider on
 * every line, and parsing them again is a good part of the server's work
 * for a transcript of small messages.
 */
static void
put_message(mn_buf *b, const mn_import_msg *m, const mn_import_session *s)
{
	mn_buf_puts(b, "{\"role\":");
	mn_buf_put_jstr(b, m->role, strlen(m->role));
	put_field(b, "id", m->id);
	put_field(b, "agent", unless_same(m->agent, s->agent));
	put_field(b, "model_id", unless_same(m->model_id, s->model_id));
	put_field(b, "provider_id", unless_same(m->provider_id, s->provider_id));
	put_field(b, "run_id", m->run_id);
	if (m->is_summary)
		mn_buf_puts(b, ",\"is_summary\":true");
	if (m->created_at > 0)
	{
		mn_buf_puts(b, ",\"created_at\":");
		mn_buf_put_i64(b, m->created_at);
	}
	mn_buf_puts(b, ",\"parts\":[");
	if (m->meta.oom)
		b->oom = true;
	if (m->n_parts == 0 && m->meta.len > 0)
	{
		mn_buf_puts(b, "{\"type\":\"text\",\"text\":\"\",\"metadata\":{");
		mn_buf_put(b, m->meta.data, m->meta.len);
		mn_buf_puts(b, "}}");
	}
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
		if (i == 0 && m->meta.len > 0)
		{
			mn_buf_puts(b, ",\"metadata\":{");
			mn_buf_put(b, m->meta.data, m->meta.len);
			mn_buf_puts(b, "}");
		}
		if (p->tool_state != NULL)
		{
			mn_buf_puts(b, p->members.len > 0 ? ",\"tool_state\":" : "\"tool_state\":");
			mn_buf_put_jstr(b, p->tool_state, strlen(p->tool_state));
		}
		mn_buf_put(b, "}", 1);
	}
	mn_buf_puts(b, "]}");
}

int
mn_import_at_line(mnemo_store *st, int code, int64_t line, size_t skip)
{
	const char *msg = st->errmsg ? st->errmsg : "";
	char	   *copy = strdup(skip <= strlen(msg) ? msg + skip : "");
	char		sqlstate[6];

	memcpy(sqlstate, st->sqlstate, sizeof(sqlstate));
	mn_fail(st, code, "line %" PRId64 ": %s", line, copy ? copy : "");
	memcpy(st->sqlstate, sqlstate, sizeof(sqlstate));
	free(copy);
	return code;
}

/*
 * MN004 names the id taken (message "ID" / part "ID" already exists): the
 * line is that of the last message of the batch with it (an earlier one, or
 * a session in the database, had it first).
 */
static int
locate_duplicate(mn_import *imp, mn_import_msg *const *batch, size_t n)
{
	mnemo_store *st = imp->st;
	const char *msg = st->errmsg ? st->errmsg : "";
	const char *q = strchr(msg, '"');
	const char *q2 = q ? strchr(q + 1, '"') : NULL;
	int64_t		line = 0;

	if (q2 == NULL)
		return st->errcode;
	for (size_t i = 0; i < n; i++)
	{
		const mn_import_msg *m = batch[i];
		bool		has = m->id != NULL && strlen(m->id) == (size_t) (q2 - q - 1) &&
			strncmp(m->id, q + 1, (size_t) (q2 - q - 1)) == 0;

		for (size_t k = 0; !has && k < m->n_parts; k++)
			has = m->parts[k].id != NULL && strlen(m->parts[k].id) == (size_t) (q2 - q - 1) &&
				strncmp(m->parts[k].id, q + 1, (size_t) (q2 - q - 1)) == 0;
		if (has)
			line = m->line;
	}
	return line == 0 ? st->errcode : mn_import_at_line(st, MNEMO_ERR_DUPLICATE_ID, line, 0);
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
	char	   *end;
	unsigned long i;
	const char *rest;
	int			code = st->errcode;

	if (code == MNEMO_ERR_DUPLICATE_ID)
		return locate_duplicate(imp, batch, n);
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
	return mn_import_at_line(st, code, batch[i]->line, (size_t) (rest - msg));
}

/* Usage of the appended messages, which append_messages does not take:
 * one statement for the batch. */
static const mn_stmt tokens_stmt = {
	"mnemo_import_tokens",
	"SELECT mnemo.update_message_tokens($1::text, t.id, t.tokens, t.cost, t.finish_reason) "
	"FROM jsonb_to_recordset($2::jsonb) "
	"AS t(id text, tokens jsonb, cost double precision, finish_reason text)",
	2
};

/* And their parts' times, by message and part index (the ids may be the
 * server's): one statement for the batch. */
static const mn_stmt part_times_stmt = {
	"mnemo_import_part_times",
	"SELECT mnemo.update_part_status($1::text, p.id, compacted_at => s.compacted_at, "
	"started_at => s.started_at, completed_at => s.completed_at) "
	"FROM jsonb_to_recordset($2::jsonb) "
	"AS s(message_id text, part_index integer, compacted_at bigint, started_at bigint, "
	"completed_at bigint) "
	"CROSS JOIN LATERAL mnemo.get_parts($1::text, s.message_id) p "
	"WHERE p.part_index = s.part_index",
	2
};

/* ,"key":ms when ms is set */
static void
put_time(mn_buf *b, const char *key, int64_t ms)
{
	if (ms == 0)
		return;
	mn_buf_put(b, ",", 1);
	mn_buf_put_jstr(b, key, strlen(key));
	mn_buf_put(b, ":", 1);
	mn_buf_put_i64(b, ms);
}

/* Run stmt over the JSON array text in b, if it has an element. */
static int
restore_with(mn_import *imp, const mn_stmt *stmt, mn_buf *b)
{
	const char *params[2];
	PGresult   *res;

	if (b->len <= 1)
		return MNEMO_OK;
	mn_buf_put(b, "]", 1);
	if (b->oom)
		return mn_fail(imp->st, MNEMO_ERR_NOMEM, "out of memory");
	params[0] = imp->session_id;
	params[1] = b->data;
	if ((res = mn_exec(imp->st, stmt, params)) == NULL)
		return imp->st->errcode;
	PQclear(res);
	return MNEMO_OK;
}

/* What the append of the n messages left out: their usage (tokens, cost,
 * finish reason) and their parts' times, in two statements. */
static int
restore(mn_import *imp, mn_import_msg *const *ms, size_t n)
{
	mn_buf		tokens = {0};
	mn_buf		times = {0};
	int			rc;

	mn_buf_put(&tokens, "[", 1);
	mn_buf_put(&times, "[", 1);
	for (size_t i = 0; i < n; i++)
	{
		const mn_import_msg *m = ms[i];
		const mnemo_tokens *t = &m->tokens;

		if (m->has_tokens || m->cost >= 0 || m->finish_reason != NULL)
		{
			mn_buf_puts(&tokens, tokens.len > 1 ? ",{\"id\":" : "{\"id\":");
			mn_buf_put_jstr(&tokens, m->ref_id, strlen(m->ref_id));
			mn_buf_puts(&tokens, ",\"tokens\":{");
			if (m->has_tokens)
			{
				char		counts[160];

				snprintf(counts, sizeof(counts),
						 "\"input\":%" PRId64 ",\"output\":%" PRId64 ",\"cache_read\":%" PRId64
						 ",\"cache_write\":%" PRId64 ",\"reasoning\":%" PRId64,
						 t->input, t->output, t->cache_read, t->cache_write, t->reasoning);
				mn_buf_puts(&tokens, counts);
			}
			mn_buf_puts(&tokens, "}");
			if (m->cost >= 0)
			{
				mn_buf_puts(&tokens, ",\"cost\":");
				mn_buf_put_double(&tokens, m->cost);
			}
			put_field(&tokens, "finish_reason", m->finish_reason);
			mn_buf_puts(&tokens, "}");
		}
		for (size_t k = 0; k < m->n_parts; k++)
		{
			const mn_import_part *p = &m->parts[k];

			if (p->compacted_at == 0 && p->started_at == 0 && p->completed_at == 0)
				continue;
			mn_buf_puts(&times, times.len > 1 ? ",{\"message_id\":" : "{\"message_id\":");
			mn_buf_put_jstr(&times, m->ref_id, strlen(m->ref_id));
			mn_buf_puts(&times, ",\"part_index\":");
			mn_buf_put_i64(&times, (int64_t) k);
			put_time(&times, "compacted_at", p->compacted_at);
			put_time(&times, "started_at", p->started_at);
			put_time(&times, "completed_at", p->completed_at);
			mn_buf_puts(&times, "}");
		}
	}
	rc = restore_with(imp, &tokens_stmt, &tokens);
	if (rc == MNEMO_OK)
		rc = restore_with(imp, &part_times_stmt, &times);
	mn_buf_free(&tokens);
	mn_buf_free(&times);
	return rc;
}

/* *field becomes a copy of value */
static int
take_default(mnemo_store *st, char **field, const char *value)
{
	char	   *copy = strdup(value);

	if (copy == NULL)
		return mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
	free(*field);
	*field = copy;
	return MNEMO_OK;
}

/*
 * Start the transaction and create the session.  The transcript's own id is
 * taken when no session has it; when one has, the transcript was imported
 * before, and a second import fails (MN004) rather than make a second
 * session; new_ids asks for a copy, under a new id.  get_session fails for
 * a free id, and a failed statement would end the transaction that the
 * sessions before this one in the file are in: the check runs in a
 * savepoint.
 */
/*
 * The session of the transcript's id is there and options.update asks for
 * what is new (import_update.c): it is the session, as it was made (the
 * defaults of its messages), its messages matched first.  row is freed.
 */
static int
resume(mn_import *imp, mnemo_session *row)
{
	mnemo_store *st = imp->st;
	mn_import_session *s = &imp->session;
	int			rc;

	if (strlen(row->id) > MNEMO_ID_MAX)
		rc = mn_fail(st, MNEMO_ERR_PROTOCOL, "session id of %zu bytes", strlen(row->id));
	else
		rc = mn_exec_command(st, "RELEASE SAVEPOINT mnemo_import_id");
	if (rc == MNEMO_OK)
	{
		memcpy(imp->session_id, row->id, strlen(row->id) + 1);
		rc = take_default(st, &s->agent, row->agent);
	}
	if (rc == MNEMO_OK)
		rc = take_default(st, &s->model_id, row->model_id);
	if (rc == MNEMO_OK)
		rc = take_default(st, &s->provider_id, row->provider_id);
	mnemo_session_free(row);
	imp->created = rc == MNEMO_OK;
	return rc == MNEMO_OK ? mn_import_update_open(imp) : rc;
}

static int
begin(mn_import *imp)
{
	mnemo_store *st = imp->st;
	mn_import_session *s = &imp->session;
	mnemo_new_session spec = {0};
	mnemo_session *row = NULL;
	int			rc;

	/* the second session of a file is made in the transaction of the first */
	if (!imp->began && (rc = mn_exec_command(st, "BEGIN")) != MNEMO_OK)
		return rc;
	imp->began = true;
	spec.id = s->derived_id ? NULL : imp->opts->session_id;
	if (spec.id == NULL && s->want_id != NULL && (!imp->new_ids || s->derived_id))
	{
		if ((rc = mn_exec_command(st, "SAVEPOINT mnemo_import_id")) != MNEMO_OK)
			return rc;
		rc = mnemo_session_get(st, s->want_id, &row);
		/* an agent's log read again: its session takes what is new */
		if (rc == MNEMO_OK && imp->opts->update && !imp->new_ids &&
			strcmp(imp->reader->name, "mnemo") != 0)
			return resume(imp, row);
		mnemo_session_free(row);
		row = NULL;
		if (rc == MNEMO_OK)
		{
			const mn_import_done *twice = NULL;
			int64_t		line = imp->session_line > 0 ? imp->session_line : 1;

			/* a session of this file before (an export concatenated with
			 * itself): the store had not seen it when the import began */
			for (size_t i = 0; i < imp->n_finished && twice == NULL; i++)
				if (strcmp(imp->finished[i].id, s->want_id) == 0)
					twice = &imp->finished[i];
			if (twice != NULL)
				rc = mn_fail(st, MNEMO_ERR_DUPLICATE_ID,
							 "line %" PRId64 ": session \"%s\" is in this file twice (first on line "
							 "%" PRId64 "; --new-ids imports each as a copy)", line, s->want_id,
							 twice->line);
			else
				rc = mn_fail(st, MNEMO_ERR_DUPLICATE_ID,
							 "line %" PRId64 ": session \"%s\" of this transcript already exists: "
							 "it was imported before (--new-ids imports a copy under a new id)",
							 line, s->want_id);
			memcpy(st->sqlstate, "MN004", 6);
			return rc;
		}
		if (rc != MNEMO_ERR_SESSION_NOT_FOUND)
			return rc;
		if ((rc = mn_exec_command(st, "ROLLBACK TO SAVEPOINT mnemo_import_id")) != MNEMO_OK)
			return rc;
		spec.id = s->want_id;
	}
	/* a child (a sub-agent, an exported child) whose parent is not in this
	 * database is a session of its own */
	if (s->parent_id != NULL)
	{
		if ((rc = mn_exec_command(st, "SAVEPOINT mnemo_import_parent")) != MNEMO_OK)
			return rc;
		rc = mnemo_session_get(st, s->parent_id, &row);
		mnemo_session_free(row);
		row = NULL;
		if (rc == MNEMO_OK)
			spec.parent_id = s->parent_id;
		else if (rc != MNEMO_ERR_SESSION_NOT_FOUND ||
				 (rc = mn_exec_command(st, "ROLLBACK TO SAVEPOINT mnemo_import_parent")) != MNEMO_OK)
			return rc;
	}
	spec.model_id = s->model_id;
	spec.provider_id = s->provider_id;
	spec.agent = s->agent;
	spec.title = s->title;
	spec.metadata = s->metadata;
	spec.system_prompt = s->system_prompt;
	/* a format without a session time began with its first message */
	spec.created_at = s->created_at > 0 ? s->created_at :
		imp->n_batch > 0 ? imp->batch[0]->created_at : 0;
	if ((rc = mnemo_session_create(st, &spec, &row)) != MNEMO_OK)
		return rc;
	if (strlen(row->id) > MNEMO_ID_MAX)
		rc = mn_fail(st, MNEMO_ERR_PROTOCOL, "session id of %zu bytes", strlen(row->id));
	else
	{
		memcpy(imp->session_id, row->id, strlen(row->id) + 1);
		/* from now on, what the session was made of (put_message) */
		rc = take_default(st, &s->agent, row->agent);
		if (rc == MNEMO_OK)
			rc = take_default(st, &s->model_id, row->model_id);
		if (rc == MNEMO_OK)
			rc = take_default(st, &s->provider_id, row->provider_id);
	}
	mnemo_session_free(row);
	imp->created = rc == MNEMO_OK;
	if (rc == MNEMO_OK && s->state != NULL)
		rc = mnemo_state_update(st, imp->session_id, s->state, NULL);
	return rc;
}

/*
 * The batch in flight: its result read, the ids the server gave taken, its
 * usage and part times restored, the reader told, and the messages freed.
 */
int
mn_import_drain(mn_import *imp)
{
	mnemo_store *st = imp->st;
	size_t		n = imp->n_flight;
	PGresult   *res;
	int			rc = MNEMO_OK;

	if (n == 0 || !imp->flight_open)
		return MNEMO_OK;
	imp->flight_open = false;
	if ((res = mn_receive(st)) == NULL)
		return locate_error(imp, imp->flight, n);
	if ((size_t) PQntuples(res) != n)
		rc = mn_fail(st, MNEMO_ERR_PROTOCOL, "append_messages returned %d rows for %zu messages",
					 PQntuples(res), n);
	for (size_t i = 0; rc == MNEMO_OK && i < n; i++)
	{
		const char *id = PQgetvalue(res, (int) i, 0);

		if (PQgetisnull(res, (int) i, 0) || strlen(id) > MNEMO_ID_MAX)
			rc = mn_fail(st, MNEMO_ERR_PROTOCOL, "append_messages returned a bad id");
		else
		{
			memcpy(imp->flight[i]->ref_id, id, strlen(id) + 1);
			imp->flight[i]->seq = strtoll(PQgetvalue(res, (int) i, 1), NULL, 10);
		}
	}
	PQclear(res);
	if (rc == MNEMO_OK)
		rc = restore(imp, imp->flight, n);
	for (size_t i = 0; rc == MNEMO_OK && i < n; i++)
		if (imp->reader != NULL && imp->reader->sent != NULL)
			rc = imp->reader->sent(imp, imp->rstate, imp->flight[i]);
	if (rc != MNEMO_OK)
		return rc;
	for (size_t i = 0; i < n; i++)
	{
		mn_import_msg_free(imp->flight[i]);
		imp->flight[i] = NULL;
	}
	imp->n_flight = 0;
	imp->imported += (int64_t) n;
	if (imp->opts->progress != NULL)
		imp->opts->progress(imp->done, imp->total, imp->opts->progress_arg);
	return MNEMO_OK;
}

int
mn_import_restore_one(mn_import *imp, mn_import_msg *m)
{
	return restore(imp, &m, 1);
}

/* The batch's append_messages array, in imp->text. */
static int
batch_text(mn_import *imp)
{
	mn_buf_reset(&imp->text);
	mn_buf_put(&imp->text, "[", 1);
	for (size_t i = 0; i < imp->n_batch; i++)
	{
		if (i > 0)
			mn_buf_put(&imp->text, ",", 1);
		put_message(&imp->text, imp->batch[i], &imp->session);
	}
	mn_buf_put(&imp->text, "]", 1);
	if (imp->text.oom)
		return mn_fail(imp->st, MNEMO_ERR_NOMEM, "out of memory");
	for (size_t k = mn_json_scrub(imp->text.data, imp->text.len); k > 0; k--)
		mn_import_replaced(imp, imp->batch[0]->line);
	return MNEMO_OK;
}

/*
 * Send the pushed messages as one append_messages statement and return
 * without waiting for it: the reader parses the next batch while the server
 * stores this one.  The batch sent before is drained first, so at most one
 * is in flight; this one's text is made before that wait, not after it,
 * where the server would sit idle for it (libpq copies a statement's
 * parameters when it is sent, so the buffer is free again).
 */
static int
send_batch(mn_import *imp)
{
	mnemo_store *st = imp->st;
	const char *params[2];
	mn_import_msg **spare;
	size_t		n = imp->n_batch;
	size_t		cap;
	int			rc;

	/* nothing is in flight before the session exists, which the text needs */
	if (!imp->created && (rc = begin(imp)) != MNEMO_OK)
		return rc;
	/* read again: the first pushes are the stored messages */
	if (mn_import_update_pending(imp) && n > 0)
	{
		size_t		k = 0;

		if ((rc = mn_import_drain(imp)) != MNEMO_OK)
			return rc;
		while (k < n && mn_import_update_pending(imp) && rc == MNEMO_OK)
		{
			mn_import_msg *m = imp->batch[k];

			imp->batch[k++] = NULL;
			rc = mn_import_update_match(imp, m);
		}
		memmove(imp->batch, imp->batch + k, (n - k) * sizeof(*imp->batch));
		imp->n_batch = n -= k;
		if (n == 0)
			imp->batch_bytes = 0;
		if (rc != MNEMO_OK)
			return rc;
	}
	if (n > 0 && (rc = batch_text(imp)) != MNEMO_OK)
		return rc;
	if ((rc = mn_import_drain(imp)) != MNEMO_OK)
		return rc;
	if (n == 0)
		return MNEMO_OK;

	params[0] = imp->session_id;
	params[1] = imp->text.data;
	if ((rc = mn_send(st, &append_stmt, params)) != MNEMO_OK)
		return rc;
	/* the batch becomes the flight, and the empty flight array the batch */
	for (size_t i = 0; i < n; i++)
		imp->batch[i]->in_flight = true;
	spare = imp->flight;
	cap = imp->cap_flight;
	imp->flight = imp->batch;
	imp->cap_flight = imp->cap_batch;
	imp->n_flight = n;
	imp->flight_open = true;
	imp->batch = spare;
	imp->cap_batch = cap;
	imp->n_batch = 0;
	imp->batch_bytes = 0;
	return MNEMO_OK;
}

int
mn_import_flush(mn_import *imp)
{
	int			rc = send_batch(imp);

	if (rc == MNEMO_OK)
		rc = mn_import_drain(imp);
	return rc;
}

void
mn_import_abandon(mn_import *imp)
{
	if (imp->flight_open)
	{
		mn_saved_error e;

		mn_error_save(imp->st, imp->st->errcode, &e);
		PQclear(mn_receive(imp->st));
		mn_error_restore(imp->st, &e);
		imp->flight_open = false;
	}
	for (size_t i = 0; i < imp->n_flight; i++)
		mn_import_msg_free(imp->flight[i]);
	imp->n_flight = 0;
	free(imp->flight);
	imp->flight = NULL;
}

/*
 * The summary's metadata for commit_summary, malloc'd in *out (NULL when it
 * has none): its text part's as exported, else what the reader kept of the
 * source's compaction record, \u0000 made U+FFFD as in every batch.
 */
static int
summary_metadata(mn_import *imp, const mn_import_msg *m, const mn_import_summary *sum, char **out)
{
	mn_buf		b = {0};

	*out = NULL;
	if (sum->metadata.len > 0)
		mn_buf_put(&b, sum->metadata.p, sum->metadata.len);
	else if (m->meta.len > 0)
	{
		mn_buf_put(&b, "{", 1);
		mn_buf_put(&b, m->meta.data, m->meta.len);
		mn_buf_put(&b, "}", 1);
	}
	else
		return MNEMO_OK;
	mn_buf_put(&b, "", 1);
	if (b.oom || m->meta.oom)
	{
		mn_buf_free(&b);
		return mn_fail(imp->st, MNEMO_ERR_NOMEM, "out of memory");
	}
	for (size_t k = mn_json_scrub(b.data, b.len - 1); k > 0; k--)
		mn_import_replaced(imp, m->line);
	*out = b.data;
	return MNEMO_OK;
}

/* A summary stored as a message, not as the compaction it was
 * (options.unrestored): kept, so neither skipped nor bookkeeping. */
static void
unrestored(mn_import *imp, int64_t line, const char *why)
{
	if (imp->opts->unrestored != NULL)
		imp->opts->unrestored(line, why, imp->opts->progress_arg);
}

int
mn_import_summary_push(mn_import *imp, mn_import_msg *m, const mn_import_summary *sum)
{
	mnemo_store *st = imp->st;
	mnemo_new_summary ns = {0};
	const char *part_ids[2];
	const char *params[4];
	const char **ids = NULL;
	char	   *meta = NULL;
	char		from[24],
				to[24];
	PGresult   *res;
	int			n;
	int			rc;

	/* everything before it is stored: its span is in the context now */
	if ((rc = mn_import_flush(imp)) != MNEMO_OK)
	{
		mn_import_msg_free(m);
		return rc;
	}
	/* read again: a compaction stored before is done */
	if (mn_import_update_pending(imp))
	{
		imp->n_matched++;
		mn_import_msg_free(m);
		return MNEMO_OK;
	}
	snprintf(from, sizeof(from), "%" PRId64, sum->seq_start);
	snprintf(to, sizeof(to), "%" PRId64, sum->seq_end);
	params[0] = imp->session_id;
	params[1] = strcmp(sum->kind, "condensed") == 0 ? "summary" : "message";
	params[2] = from;
	params[3] = to;
	if ((res = mn_exec(st, &covered_stmt, params)) == NULL)
	{
		mn_import_msg_free(m);
		return st->errcode;
	}
	n = PQntuples(res);
	if (n == 0 || (sum->item_count >= 0 && n != sum->item_count))
	{
		PQclear(res);
		unrestored(imp, m->line, n == 0 ? "none of its span in context"
				   : "its span in context differs from its marker");
		return mn_import_push(imp, m);
	}
	if ((ids = calloc((size_t) n, sizeof(*ids))) == NULL)
	{
		PQclear(res);
		mn_import_msg_free(m);
		return mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
	}
	for (int i = 0; i < n; i++)
		ids[i] = PQgetvalue(res, i, 0);
	ns.summary_id = m->id;
	ns.content = sum->text;
	ns.token_count = sum->token_count;
	ns.remove_item_ids = ids;
	ns.n_remove = (size_t) n;
	ns.kind = sum->kind;
	ns.level = sum->level;
	ns.model_id = m->model_id;
	ns.provider_id = m->provider_id;
	ns.created_at = m->created_at;
	if (m->n_parts == 2 && m->parts[0].id != NULL && m->parts[1].id != NULL)
	{
		part_ids[0] = m->parts[0].id;
		part_ids[1] = m->parts[1].id;
		ns.part_ids = part_ids;
	}
	rc = summary_metadata(imp, m, sum, &meta);
	ns.metadata = meta;
	if (rc == MNEMO_OK)
		rc = mnemo_summary_commit(st, imp->session_id, &ns, NULL, m->ref_id);
	free(meta);
	free(ids);
	PQclear(res);
	if (rc == MNEMO_OK)
		rc = restore(imp, &m, 1);
	if (rc != MNEMO_OK && strncmp(st->errmsg ? st->errmsg : "", "line ", 5) != 0)
		rc = mn_import_at_line(st, rc, m->line, 0);
	if (rc == MNEMO_OK)
		imp->imported++;
	mn_import_msg_free(m);
	return rc;
}

int
mn_import_compaction(mn_import *imp, int64_t line, int64_t created_at, mn_span raw,
					 const char *summary, int64_t seq_end, struct json_object *rec,
					 mn_span rec_text, const char *const *known)
{
	mn_import_summary sum = {0};
	mn_import_msg *m;
	mn_import_part *p;

	if ((m = mn_import_msg_new(imp, line, "assistant")) == NULL)
		return imp->st->errcode;
	m->is_summary = true;
	m->created_at = created_at;
	if ((p = mn_import_part_new(imp, m, "text")) == NULL ||
		(mn_part_put_raw(p, "text", raw), p->members.oom))
	{
		mn_import_msg_free(m);
		return mn_fail(imp->st, MNEMO_ERR_NOMEM, "out of memory");
	}
	if (rec != NULL)
		mn_import_keep_others(imp, m, rec, rec_text, known);
	sum.text = summary;
	sum.token_count = mnemo_estimate_tokens(summary);
	sum.kind = "leaf";
	sum.level = 1;
	sum.seq_start = 1;
	sum.seq_end = seq_end;
	sum.item_count = -1;
	return mn_import_summary_push(imp, m, &sum);
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
		return send_batch(imp);
	return MNEMO_OK;
}

void
mn_import_skipped(mn_import *imp, int64_t line, const char *kind)
{
	imp->left_out++;
	if (imp->opts->skipped != NULL)
		imp->opts->skipped(line, kind, imp->opts->progress_arg);
}

void
mn_import_bookkeeping(mn_import *imp, int64_t line, const char *kind)
{
	if (imp->opts->skipped != NULL)
		imp->opts->skipped(line, kind, imp->opts->progress_arg);
}

void
mn_import_replaced(mn_import *imp, int64_t line)
{
	if (imp->opts->replaced != NULL)
		imp->opts->replaced(line, "\\u0000 or lone surrogate made U+FFFD", imp->opts->progress_arg);
}
