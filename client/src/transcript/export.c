/*
 * export.c
 *		mnemo_export_jsonl: a session as JSON Lines, one message a line.
 *
 * The first line describes the session (its header):
 *	{"type": "mnemo.session", "version": 1 (2 with "parent_id"), "id",
 *	 "parent_id" (when set), "title" (when set),
 *	 "agent", "model_id", "provider_id", "system_prompt", "metadata" (when
 *	 set), "state" (when not {}), "created_at"}
 * "type" and "version" let it grow: a reader refuses a version newer than
 * it knows, and a later version is one whose new keys or lines an older
 * reader would otherwise drop without a word.
 * Checkpoints are lines of their own, each after the message it labels the
 * end at (before the first message for one at seq 0), in list order:
 *	{"type": "mnemo.checkpoint", "label", "auto", "created_at"}
 * Their place in the file, not a seq, says where they are, so a session
 * whose seqs have gaps (a resume) is restored with each checkpoint after
 * the same message.
 * The line of a message is a JSON object with its keys in a fixed order:
 *	"id", "role", "created_at", "agent", "model_id", "provider_id", "run_id" (when set),
 *	"is_summary" (when true), "tokens" {"input", "output", "cache_read",
 *	"cache_write", "reasoning"} (when one is not 0), "cost" (when not 0),
 *	"finish_reason" (when set), "parts".
 * Each part is {"id", the members of its stored content in the server's
 * order, "tool_state" (when set), "compacted_at", "started_at",
 * "completed_at" (when set), "token_estimate"}.  Times are ms since the
 * epoch.
 *
 * Nothing goes through json-c: the content members are pasted as the server
 * printed them (jsonb: keys sorted, one canonical text per value, integers
 * of any size kept), and the rest is written with the same separators and
 * escapes, so the text of a line is a function of what is stored.  That is
 * what makes export(import(export(s))) == export(s) hold byte for byte:
 * an import stores the same values, the server prints them the same way.
 * token_estimate is always written, because an import without it would
 * have the server estimate it, which need not give the stored value.
 *
 * The messages are read through a cursor in a read-only transaction, a page
 * at a time, so an export of any length runs in the memory of one page.
 * The live line is read as get_messages_flat's rows, one a part, which cost
 * the server no JSON assembly: get_messages_with_parts' arrays made an
 * export of 100,000 messages take four times as long on the server.  A
 * page may end inside a message, so the last message of a page is held
 * until the next page shows whether more of its parts follow.  What
 * resumes discarded (list_discarded) comes as message_with_parts rows.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "transcript/transcript.h"

/* Rows fetched at a time: the client holds one page, whatever the
 * session's length. */
#define EXPORT_PAGE 500
#define EXPORT_PAGE_TEXT "500"

/*
 * A cursor over get_messages_flat: one statement, so one snapshot of the
 * session (the server materialises it, spilling to disk past work_mem),
 * read a page at a time.
 */
static const mn_stmt declare_stmt = {
	"mnemo_export_declare",
	"DECLARE mnemo_export NO SCROLL CURSOR FOR SELECT * FROM mnemo.get_messages_flat($1::text)",
	1
};

/* what resumes discarded (mnemo export --discarded), as message_with_parts rows */
static const mn_stmt declare_discarded_stmt = {
	"mnemo_export_declare_discarded",
	"DECLARE mnemo_export NO SCROLL CURSOR FOR SELECT id, session_id, seq, role, "
	"created_at, agent, model_id, provider_id, run_id, is_summary, tokens_input, "
	"tokens_output, tokens_cache_read, tokens_cache_write, tokens_reasoning, cost, "
	"finish_reason, parts FROM mnemo.list_discarded($1::text)",
	1
};

static const mn_stmt fetch_stmt = {
	"mnemo_export_fetch",
	"FETCH " EXPORT_PAGE_TEXT " FROM mnemo_export",
	0
};

/* A string member: ", " (unless first) "key": "value". */
static void
put_key(mn_buf *b, const char *key, bool first)
{
	if (!first)
		mn_buf_put(b, ", ", 2);
	mn_buf_put_jstr(b, key, strlen(key));
	mn_buf_put(b, ": ", 2);
}

static void
put_string(mn_buf *b, const char *key, const char *value)
{
	put_key(b, key, false);
	mn_buf_put_jstr(b, value, strlen(value));
}

static void
put_i64(mn_buf *b, const char *key, int64_t value)
{
	put_key(b, key, false);
	mn_buf_put_i64(b, value);
}

/* The members of a content object's text, without braces or edge spaces. */
static void
content_members(const char *content, const char **start, size_t *len)
{
	const char *p = content;
	const char *end;

	while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
		p++;
	if (*p != '{')
	{
		*start = p;
		*len = 0;
		return;
	}
	p++;
	end = p + strlen(p);
	while (end > p && (end[-1] == ' ' || end[-1] == '\n' || end[-1] == '\t' || end[-1] == '\r'))
		end--;
	if (end > p && end[-1] == '}')
		end--;
	while (p < end && (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r'))
		p++;
	while (end > p && (end[-1] == ' ' || end[-1] == '\n' || end[-1] == '\t' || end[-1] == '\r'))
		end--;
	*start = p;
	*len = (size_t) (end - p);
}

static void
put_part(mn_buf *b, const mnemo_part *part)
{
	const char *members;
	size_t		len;

	mn_buf_put(b, "{", 1);
	put_key(b, "id", true);
	mn_buf_put_jstr(b, part->id, strlen(part->id));
	content_members(part->content != NULL ? part->content : "{}", &members, &len);
	if (len > 0)
	{
		mn_buf_put(b, ", ", 2);
		mn_buf_put(b, members, len);
	}
	if (part->tool_state != NULL)
		put_string(b, "tool_state", part->tool_state);
	if (part->compacted_at != 0)
		put_i64(b, "compacted_at", part->compacted_at);
	if (part->started_at != 0)
		put_i64(b, "started_at", part->started_at);
	if (part->completed_at != 0)
		put_i64(b, "completed_at", part->completed_at);
	put_i64(b, "token_estimate", part->token_estimate);
	mn_buf_put(b, "}", 1);
}

/* The line of one message, with its newline, in b. */
static void
put_message(mn_buf *b, const mnemo_message *m)
{
	const mnemo_tokens *t = &m->tokens;

	mn_buf_put(b, "{", 1);
	put_key(b, "id", true);
	mn_buf_put_jstr(b, m->id, strlen(m->id));
	put_string(b, "role", m->role);
	put_i64(b, "created_at", m->created_at);
	put_string(b, "agent", m->agent ? m->agent : "");
	put_string(b, "model_id", m->model_id ? m->model_id : "");
	put_string(b, "provider_id", m->provider_id ? m->provider_id : "");
	if (m->run_id != NULL)
		put_string(b, "run_id", m->run_id);
	if (m->is_summary)
	{
		put_key(b, "is_summary", false);
		mn_buf_puts(b, "true");
	}
	if (t->input || t->output || t->cache_read || t->cache_write || t->reasoning)
	{
		put_key(b, "tokens", false);
		mn_buf_put(b, "{", 1);
		put_key(b, "input", true);
		mn_buf_put_i64(b, t->input);
		put_i64(b, "output", t->output);
		put_i64(b, "cache_read", t->cache_read);
		put_i64(b, "cache_write", t->cache_write);
		put_i64(b, "reasoning", t->reasoning);
		mn_buf_put(b, "}", 1);
	}
	if (m->cost != 0 && isfinite(m->cost))
	{
		put_key(b, "cost", false);
		mn_buf_put_double(b, m->cost);
	}
	if (m->finish_reason != NULL)
		put_string(b, "finish_reason", m->finish_reason);
	put_key(b, "parts", false);
	mn_buf_put(b, "[", 1);
	for (size_t i = 0; i < m->n_parts; i++)
	{
		if (i > 0)
			mn_buf_put(b, ", ", 2);
		put_part(b, &m->parts[i]);
	}
	mn_buf_put(b, "]}\n", 3);
}

/* The header line of the session, with its newline, in b.  The metadata
 * is pasted as the server printed it (jsonb's one text). */
static void
put_header(mn_buf *b, const mnemo_session *s)
{
	mn_buf_puts(b, "{");
	put_key(b, "type", true);
	mn_buf_put_jstr(b, MNEMO_SESSION_HEADER, strlen(MNEMO_SESSION_HEADER));
	/* a reader of version 1 would drop the parent without a word */
	put_i64(b, "version", s->parent_id != NULL ? 2 : 1);
	put_string(b, "id", s->id);
	if (s->parent_id != NULL)
		put_string(b, "parent_id", s->parent_id);
	if (s->title != NULL)
		put_string(b, "title", s->title);
	put_string(b, "agent", s->agent ? s->agent : "");
	put_string(b, "model_id", s->model_id ? s->model_id : "");
	put_string(b, "provider_id", s->provider_id ? s->provider_id : "");
	put_string(b, "system_prompt", s->system_prompt ? s->system_prompt : "");
	if (s->metadata != NULL)
	{
		put_key(b, "metadata", false);
		mn_buf_puts(b, s->metadata);
	}
	if (s->state != NULL && strcmp(s->state, "{}") != 0)
	{
		put_key(b, "state", false);
		mn_buf_puts(b, s->state);
	}
	put_i64(b, "created_at", s->created_at);
	mn_buf_puts(b, "}\n");
}

/* The line of a checkpoint, with its newline, appended to b. */
static void
put_checkpoint(mn_buf *b, const mnemo_checkpoint *c)
{
	mn_buf_puts(b, "{");
	put_key(b, "type", true);
	mn_buf_put_jstr(b, MNEMO_CHECKPOINT_LINE, strlen(MNEMO_CHECKPOINT_LINE));
	put_string(b, "label", c->label);
	put_key(b, "auto", false);
	mn_buf_puts(b, c->is_auto ? "true" : "false");
	put_i64(b, "created_at", c->created_at);
	mn_buf_puts(b, "}\n");
}

/* The checkpoints from *next on (cps may be NULL) that label seqs before
 * seq, appended to b. */
static void
put_checkpoints_before(mn_buf *b, const mnemo_checkpoints *cps, size_t *next, int64_t seq)
{
	for (; cps != NULL && *next < cps->count && cps->items[*next].seq < seq; (*next)++)
		put_checkpoint(b, &cps->items[*next]);
}

/* Write one line; false with IO set on the handle. */
static bool
write_line(mnemo_store *st, const mn_buf *line, FILE *out)
{
	errno = 0;
	if (fwrite(line->data, 1, line->len, out) == line->len)
		return true;
	mn_fail(st, MNEMO_ERR_IO, "writing the export failed: %s",
			errno ? strerror(errno) : "short write");
	return false;
}

/* The messages of a fetched page, in seq order; res is cleared. */
static int
page_messages(mnemo_store *st, const mn_stmt *declare, PGresult *res, mnemo_messages **out)
{
	int			rc;

	if (declare != &declare_stmt)
		return mn_messages_from_rows(st, res, out);
	rc = mn_messages_from_flat(st, res, out);
	PQclear(res);
	return rc;
}

/* Move the parts of more, the rest of m on the next page, after m's. */
static int
take_parts(mnemo_store *st, mnemo_message *m, mnemo_message *more)
{
	mnemo_part *parts;

	if (more->n_parts == 0)
		return MNEMO_OK;
	parts = realloc(m->parts, (m->n_parts + more->n_parts) * sizeof(*parts));
	if (parts == NULL)
		return mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
	memcpy(parts + m->n_parts, more->parts, more->n_parts * sizeof(*parts));
	m->parts = parts;
	m->n_parts += more->n_parts;
	free(more->parts);
	more->parts = NULL;
	more->n_parts = 0;
	return MNEMO_OK;
}

/* Write the line of m, after the checkpoints before it. */
static int
write_message(mnemo_store *st, mn_buf *line, const mnemo_checkpoints *cps, size_t *next_cp,
			  const mnemo_message *m, FILE *out)
{
	mn_buf_reset(line);
	put_checkpoints_before(line, cps, next_cp, m->seq);
	put_message(line, m);
	if (line->oom)
		return mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
	return write_line(st, line, out) ? MNEMO_OK : MNEMO_ERR_IO;
}

static int export_with(mnemo_store *st, const char *session_id, FILE *out,
					   const mn_stmt *declare);

MNEMO_API int
mnemo_export_jsonl(mnemo_store *st, const char *session_id, FILE *out)
{
	return export_with(st, session_id, out, &declare_stmt);
}

MNEMO_API int
mnemo_export_discarded_jsonl(mnemo_store *st, const char *session_id, FILE *out)
{
	return export_with(st, session_id, out, &declare_discarded_stmt);
}

/* The header, then each message the statement declare's cursor reads. */
static int
export_with(mnemo_store *st, const char *session_id, FILE *out, const mn_stmt *declare)
{
	const char *params[1];
	mn_buf		line = {0};
	mnemo_session *session = NULL;
	mnemo_checkpoints *cps = NULL;
	size_t		next_cp = 0;
	mnemo_message held = {0};	/* the last message read: more of its parts
								 * may follow on the next page */
	PGresult   *res;
	int			rows;
	int			rc;

	if (st == NULL)
		return MNEMO_ERR_INVALID_ARGUMENT;
	mn_clear_error(st);
	if (session_id == NULL || out == NULL)
		return mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT, "session id and out are required");

	if ((rc = mn_exec_command(st, "BEGIN READ ONLY")) != MNEMO_OK)
		return rc;
	if ((rc = mnemo_session_get(st, session_id, &session)) != MNEMO_OK)
	{
		mn_rollback(st);
		return rc;
	}
	/* checkpoints label the live line: a discarded suffix's export has none */
	if (declare == &declare_stmt &&
		(rc = mnemo_checkpoints_list(st, session_id, &cps)) != MNEMO_OK)
	{
		mnemo_session_free(session);
		mn_rollback(st);
		return rc;
	}
	put_header(&line, session);
	mnemo_session_free(session);
	if (line.oom)
		rc = mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
	else if (!write_line(st, &line, out))
		rc = MNEMO_ERR_IO;
	if (rc != MNEMO_OK)
	{
		mn_buf_free(&line);
		mnemo_checkpoints_free(cps);
		return mn_rollback(st);
	}
	params[0] = session_id;
	if ((res = mn_exec(st, declare, params)) == NULL)
	{
		mn_buf_free(&line);
		mnemo_checkpoints_free(cps);
		return mn_rollback(st);
	}
	PQclear(res);
	do
	{
		mnemo_messages *page;

		if ((res = mn_exec(st, &fetch_stmt, params)) == NULL)
		{
			rc = st->errcode;
			break;
		}
		rows = PQntuples(res);
		if ((rc = page_messages(st, declare, res, &page)) != MNEMO_OK)
			break;
		for (size_t i = 0; rc == MNEMO_OK && i < page->count; i++)
		{
			mnemo_message *m = &page->items[i];

			if (held.id != NULL && m->seq == held.seq)
			{
				rc = take_parts(st, &held, m);
				continue;
			}
			if (held.id != NULL)
				rc = write_message(st, &line, cps, &next_cp, &held, out);
			mn_message_clear(&held);
			held = *m;
			memset(m, 0, sizeof(*m));
		}
		mnemo_messages_free(page);
	} while (rc == MNEMO_OK && rows == EXPORT_PAGE);
	if (rc == MNEMO_OK && held.id != NULL)
		rc = write_message(st, &line, cps, &next_cp, &held, out);
	mn_message_clear(&held);
	if (rc == MNEMO_OK)
	{
		mn_buf_reset(&line);
		put_checkpoints_before(&line, cps, &next_cp, INT64_MAX);
		if (line.oom)
			rc = mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
		else if (!write_line(st, &line, out))
			rc = MNEMO_ERR_IO;
	}
	mnemo_checkpoints_free(cps);
	mn_buf_free(&line);
	if (rc != MNEMO_OK)
		return mn_rollback(st);
	if ((rc = mn_exec_command(st, "COMMIT")) != MNEMO_OK)
		return rc;
	errno = 0;
	if (fflush(out) != 0 || ferror(out))
		return mn_fail(st, MNEMO_ERR_IO, "writing the export failed: %s",
					   errno ? strerror(errno) : "stream error");
	return MNEMO_OK;
}
