/*
 * recall.c
 *		The recall calls: recall_search, recall_expand, and a description of a
 *		summary or a file reference, each one statement.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "store/store.h"

static const mn_stmt grep_stmt = {
	"mnemo_recall_grep",
	"SELECT message_id, seq, role, snippet, in_context, covered_by "
	"FROM mnemo.recall_search($1::text, $2::text, $4::boolean, $3::text, $5::integer, $6::bigint)",
	6
};

static const mn_stmt expand_stmt = {
	"mnemo_recall_expand",
	"SELECT ordinal, item_type, item_id, seq, role, content, tokens, items "
	"FROM mnemo.recall_expand($1::text, $2::text, $3::integer, $4::integer)",
	4
};

/*
 * A summary of the session (its node and its text parts) or, failing that,
 * a file reference: one row, kind 'summary' or 'file', none for neither.
 */
static const mn_stmt describe_stmt = {
	"mnemo_recall_describe",
	"SELECT 'summary' AS kind, n.kind AS node_kind, n.depth, n.level, n.seq_start, n.seq_end, "
	"       n.token_count, n.superseded_by, "
	"       (SELECT string_agg(p->>'text', E'\\n' ORDER BY k) "
	"          FROM mnemo.get_messages_with_parts_by_ids($1::text, ARRAY[$2::text]) m, "
	"               jsonb_array_elements(m.parts) WITH ORDINALITY AS e(p, k) "
	"         WHERE p->>'type' = 'text') AS body, "
	"       NULL AS path, NULL AS file_type "
	"  FROM mnemo.summary_nodes($1::text, true) n WHERE n.id = $2::text "
	"UNION ALL "
	"SELECT 'file', NULL, NULL, NULL, NULL, NULL, f.token_count, NULL, "
	"       f.exploration_summary, f.path, f.file_type "
	"  FROM mnemo.get_file_reference($2::text) f "
	" WHERE f.content_id IS NOT NULL AND NOT EXISTS "
	"       (SELECT FROM mnemo.summary_nodes($1::text, true) n WHERE n.id = $2::text) "
	"LIMIT 1",
	2
};

MNEMO_API void
mnemo_recall_hits_free(mnemo_recall_hits *hits)
{
	size_t		i;

	if (hits == NULL)
		return;
	for (i = 0; i < hits->count; i++)
	{
		free(hits->items[i].message_id);
		free(hits->items[i].role);
		free(hits->items[i].snippet);
		free(hits->items[i].covered_by);
	}
	free(hits->items);
	free(hits);
}

static int
hit_from_row(mnemo_store *st, const PGresult *res, int row, void *item)
{
	mnemo_recall_hit *h = item;

	if (!mn_str_into(res, row, mn_col(res, "message_id"), &h->message_id) ||
		!mn_str_into(res, row, mn_col(res, "role"), &h->role) ||
		!mn_str_into(res, row, mn_col(res, "snippet"), &h->snippet) ||
		!mn_str_into(res, row, mn_col(res, "covered_by"), &h->covered_by))
		return mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
	h->seq = mn_get_i64(res, row, mn_col(res, "seq"));
	h->in_context = mn_get_bool(res, row, mn_col(res, "in_context"));
	return MNEMO_OK;
}

MN_LIST_RESULT(hits_result, mnemo_recall_hits, hit_from_row, mnemo_recall_hits_free)

MNEMO_API int
mnemo_recall_grep(mnemo_store *st, const char *session_id, const char *pattern,
				  const char *summary_id, bool regex, int limit, int64_t before_seq,
				  mnemo_recall_hits **out)
{
	char		limit_text[24];
	char		before_text[24];
	const char *params[6];
	int			rc;

	if ((rc = mn_begin(st, session_id != NULL && pattern != NULL && out != NULL,
					   "session id, pattern and out are required")) != MNEMO_OK)
		return rc;
	params[0] = session_id;
	params[1] = pattern;
	params[2] = summary_id;
	params[3] = regex ? "true" : "false";
	params[4] = mn_i64_param(limit_text, limit <= 0 ? 20 : limit);
	params[5] = before_seq > 0 ? mn_i64_param(before_text, before_seq) : NULL;
	return hits_result(st, mn_exec(st, &grep_stmt, params), out);
}

MNEMO_API void
mnemo_recall_page_free(mnemo_recall_page *page)
{
	size_t		i;

	if (page == NULL)
		return;
	for (i = 0; i < page->count; i++)
	{
		free(page->items[i].item_type);
		free(page->items[i].item_id);
		free(page->items[i].role);
		free(page->items[i].content);
	}
	free(page->items);
	free(page);
}

static int
item_from_row(mnemo_store *st, const PGresult *res, int row, void *out)
{
	mnemo_recall_item *it = out;

	if (!mn_str_into(res, row, mn_col(res, "item_type"), &it->item_type) ||
		!mn_str_into(res, row, mn_col(res, "item_id"), &it->item_id) ||
		!mn_str_into(res, row, mn_col(res, "role"), &it->role) ||
		!mn_str_into(res, row, mn_col(res, "content"), &it->content))
		return mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
	it->ordinal = (int) mn_get_i64(res, row, mn_col(res, "ordinal"));
	it->seq = mn_get_i64(res, row, mn_col(res, "seq"));
	it->tokens = (int) mn_get_i64(res, row, mn_col(res, "tokens"));
	return MNEMO_OK;
}

MN_LIST_RESULT(page_result, mnemo_recall_page, item_from_row, mnemo_recall_page_free)

MNEMO_API int
mnemo_recall_expand(mnemo_store *st, const char *session_id, const char *summary_id,
					int offset, int max_tokens, mnemo_recall_page **out)
{
	char		offset_text[24];
	char		max_text[24];
	const char *params[4];
	PGresult   *res;
	int			total = 0;
	int			rc;

	if ((rc = mn_begin(st, session_id != NULL && summary_id != NULL && out != NULL,
					   "session id, summary id and out are required")) != MNEMO_OK)
		return rc;
	params[0] = session_id;
	params[1] = summary_id;
	params[2] = mn_i64_param(offset_text, offset);
	params[3] = mn_i64_param(max_text, max_tokens <= 0 ? 4000 : max_tokens);
	res = mn_exec(st, &expand_stmt, params);
	if (res != NULL && PQntuples(res) > 0)
		total = (int) mn_get_i64(res, 0, mn_col(res, "items"));
	if ((rc = page_result(st, res, out)) != MNEMO_OK)
		return rc;
	(*out)->total = total;
	(*out)->next_offset = (*out)->count > 0 && (*out)->items[(*out)->count - 1].ordinal < total
		? (*out)->items[(*out)->count - 1].ordinal : -1;
	return MNEMO_OK;
}

MNEMO_API int
mnemo_recall_describe(mnemo_store *st, const char *session_id, const char *id, char **out)
{
	const char *params[2];
	PGresult   *res;
	mn_buf		b = {0};
	int			rc;

	if ((rc = mn_begin(st, session_id != NULL && id != NULL && out != NULL,
					   "session id, id and out are required")) != MNEMO_OK)
		return rc;
	*out = NULL;
	params[0] = session_id;
	params[1] = id;
	if ((res = mn_exec(st, &describe_stmt, params)) == NULL)
		return st->errcode;
	if (PQntuples(res) != 1)
	{
		PQclear(res);
		return mn_fail(st, MNEMO_ERR_MESSAGE_NOT_FOUND,
					   "\"%s\" is neither a summary of session \"%s\" nor a file reference",
					   id, session_id);
	}
	if (strcmp(PQgetvalue(res, 0, mn_col(res, "kind")), "summary") == 0)
	{
		mn_buf_puts(&b, "summary ");
		mn_buf_puts(&b, id);
		mn_buf_puts(&b, ": ");
		mn_buf_puts(&b, PQgetvalue(res, 0, mn_col(res, "node_kind")));
		mn_buf_puts(&b, ", depth ");
		mn_buf_puts(&b, PQgetvalue(res, 0, mn_col(res, "depth")));
		mn_buf_puts(&b, ", level ");
		mn_buf_puts(&b, PQgetvalue(res, 0, mn_col(res, "level")));
		mn_buf_puts(&b, ", covers messages #");
		mn_buf_puts(&b, PQgetvalue(res, 0, mn_col(res, "seq_start")));
		mn_buf_puts(&b, " to #");
		mn_buf_puts(&b, PQgetvalue(res, 0, mn_col(res, "seq_end")));
		mn_buf_puts(&b, ", ");
		mn_buf_puts(&b, PQgetvalue(res, 0, mn_col(res, "token_count")));
		mn_buf_puts(&b, " tokens");
		if (!PQgetisnull(res, 0, mn_col(res, "superseded_by")))
		{
			mn_buf_puts(&b, ", condensed into ");
			mn_buf_puts(&b, PQgetvalue(res, 0, mn_col(res, "superseded_by")));
		}
		mn_buf_puts(&b, "\n");
	}
	else
	{
		mn_buf_puts(&b, "file ");
		mn_buf_puts(&b, id);
		mn_buf_puts(&b, ": ");
		mn_buf_puts(&b, PQgetvalue(res, 0, mn_col(res, "path")));
		mn_buf_puts(&b, ", type ");
		mn_buf_puts(&b, PQgetvalue(res, 0, mn_col(res, "file_type")));
		mn_buf_puts(&b, ", ");
		mn_buf_puts(&b, PQgetvalue(res, 0, mn_col(res, "token_count")));
		mn_buf_puts(&b, " tokens\n");
	}
	mn_buf_puts(&b, PQgetvalue(res, 0, mn_col(res, "body")));
	PQclear(res);
	if (b.oom)
	{
		mn_buf_free(&b);
		return mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
	}
	*out = b.data != NULL ? b.data : strdup("");
	return *out != NULL ? MNEMO_OK : mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
}
