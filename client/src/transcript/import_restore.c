/*
 * import_restore.c
 *		What append_messages does not take, written after the append: the
 *		usage of the messages (update_message_tokens) and their parts' times
 *		(update_part_status), one statement each for a batch.
 *
 * A batch is restored when its result is read (import_batch.c), a summary
 * once committed (import_summary.c), and the last message of a session
 * read again when it has grown (import_update.c).
 */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transcript/transcript.h"

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

int
mn_import_restore(mn_import *imp, mn_import_msg *const *ms, size_t n)
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
			mn_import_put_field(&tokens, "finish_reason", m->finish_reason);
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
