/*
 * import_summary.c
 *		The compactions of a transcript restored as compactions: a mnemo
 *		export's summaries (their compaction markers), and other agents'
 *		compaction records (pi's, Claude Code's), each committed as a
 *		summary over the context items of its span (commit_summary), once
 *		everything before it is stored.
 */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transcript/transcript.h"

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
		rc = mn_import_restore(imp, &m, 1);
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

