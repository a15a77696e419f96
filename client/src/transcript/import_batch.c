/*
 * import_batch.c
 *		The import a reader pushes its messages to (import_message.c builds
 *		them): sent in batches inside the import's one transaction.
 *
 * Pushed messages are sent in batches, each one append_messages statement,
 * then their usage and part times are restored (import_restore.c).
 * A full batch is sent without waiting for the server: the reader parses
 * the next one meanwhile, and its result is read before the next is sent
 * or any other statement runs (mn_import_drain).
 * The session is created, and the transaction begun, when the first batch
 * is ready (import_create.c); a transcript read again matches its first
 * pushes to the session's stored messages (import_update.c).
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

static const mn_stmt append_stmt = {
	"mnemo_import_append",
	"SELECT id, seq FROM mnemo.append_messages($1::text, $2::jsonb)",
	2
};

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
	mn_import_put_field(b, "id", m->id);
	mn_import_put_field(b, "agent", unless_same(m->agent, s->agent));
	mn_import_put_field(b, "model_id", unless_same(m->model_id, s->model_id));
	mn_import_put_field(b, "provider_id", unless_same(m->provider_id, s->provider_id));
	mn_import_put_field(b, "run_id", m->run_id);
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
		rc = mn_import_restore(imp, imp->flight, n);
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
	if (!imp->created && (rc = mn_import_begin(imp)) != MNEMO_OK)
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
