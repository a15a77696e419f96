/*
 * summary.c
 *		The summary DAG: committing a compaction, listing the nodes, and
 *		expanding a node back to what it covers.
 *
 * mnemo_summary_commit is one statement.  When the caller gives no summary
 * id, the same statement draws one from mnemo.new_id('sum') and returns it
 * beside the position, so the caller learns the id without a second round
 * trip and without a window between choosing the id and committing.
 */
#include <stdlib.h>
#include <string.h>

#include "store/store.h"

/*
 * new_id is volatile, so the subquery is evaluated once and not pulled up:
 * the id commit_summary stores is the id returned.
 */
static const mn_stmt commit_stmt = {
	"mnemo_summary_commit",
	"SELECT s.id AS summary_id, mnemo.commit_summary($1::text, s.id, $3::text, $4::integer, "
	"$5::text[], kind => $6::text, level => $7::integer, model_id => $8::text, "
	"provider_id => $9::text, holder => $10::text, created_at => $11::bigint, "
	"part_ids => $12::text[], metadata => $13::jsonb, annotate_tokens => $14::integer) AS \"position\" "
	"FROM (SELECT coalesce($2::text, mnemo.new_id('sum')) AS id) AS s",
	14
};

static const mn_stmt nodes_stmt = {
	"mnemo_summary_nodes_get",
	"SELECT session_id, id, kind, level, token_count, seq_start, seq_end, created_at, "
	"superseded_by FROM mnemo.summary_nodes($1::text, $2::boolean)",
	2
};

static const mn_stmt expand_stmt = {
	"mnemo_summary_expand",
	"SELECT depth, summary_id, item_type, item_id, seq, role, parts "
	"FROM mnemo.expand_summary($1::text, $2::text, $3::boolean)",
	3
};

MNEMO_API int
mnemo_summary_commit(mnemo_store *st, const char *session_id, const mnemo_new_summary *summary,
					 int64_t *position, char summary_id_out[MNEMO_ID_MAX + 1])
{
	char		token_count[24];
	char		level[24];
	char		created_at[24];
	char		annotate[24];
	const char *params[14];
	char	   *array;
	char	   *part_ids = NULL;
	PGresult   *res;
	char		id[MNEMO_ID_MAX + 1];
	int64_t		pos;
	int			rc;

	if ((rc = mn_begin(st, session_id != NULL && summary != NULL && summary->content != NULL &&
					   (summary->n_remove == 0 || summary->remove_item_ids != NULL),
					   "session id, summary, its content and its item ids are required")) != MNEMO_OK)
		return rc;
	array = mn_id_array(st, summary->remove_item_ids, summary->n_remove, "remove_item_ids");
	if (array == NULL)
		return st->errcode;
	params[0] = session_id;
	params[1] = summary->summary_id;
	params[2] = summary->content;
	params[3] = mn_i64_param(token_count, summary->token_count);
	params[4] = array;
	params[5] = summary->kind != NULL ? summary->kind : "leaf";
	params[6] = mn_i64_param(level, summary->level == 0 ? 1 : summary->level);
	params[7] = summary->model_id;
	params[8] = summary->provider_id;
	params[9] = summary->holder;
	params[10] = summary->created_at > 0 ? mn_i64_param(created_at, summary->created_at) : NULL;
	if (summary->part_ids != NULL &&
		(part_ids = mn_id_array(st, summary->part_ids, 2, "part_ids")) == NULL)
	{
		free(array);
		return st->errcode;
	}
	params[11] = part_ids;
	params[12] = summary->metadata;
	params[13] = summary->annotate_tokens > 0 ? mn_i64_param(annotate, summary->annotate_tokens)
		: NULL;
	res = mn_exec(st, &commit_stmt, params);
	free(array);
	free(part_ids);
	if (res == NULL)
		return st->errcode;
	if (PQntuples(res) != 1 || PQgetisnull(res, 0, mn_col(res, "summary_id")) ||
		PQgetisnull(res, 0, mn_col(res, "position")))
	{
		PQclear(res);
		return mn_fail(st, MNEMO_ERR_PROTOCOL, "commit_summary returned no position");
	}
	rc = mn_id_copy(st, PQgetvalue(res, 0, mn_col(res, "summary_id")), "summary", id);
	pos = mn_get_i64(res, 0, mn_col(res, "position"));
	PQclear(res);
	if (rc != MNEMO_OK)
		return rc;
	if (summary_id_out != NULL)
		memcpy(summary_id_out, id, strlen(id) + 1);
	if (position != NULL)
		*position = pos;
	return MNEMO_OK;
}

MNEMO_API void
mnemo_summary_nodes_free(mnemo_summary_nodes *list)
{
	size_t		i;

	if (list == NULL)
		return;
	for (i = 0; i < list->count; i++)
	{
		free(list->items[i].session_id);
		free(list->items[i].id);
		free(list->items[i].kind);
		free(list->items[i].superseded_by);
	}
	free(list->items);
	free(list);
}

MNEMO_API void
mnemo_expansion_free(mnemo_expansion *e)
{
	size_t		i;
	size_t		j;

	if (e == NULL)
		return;
	for (i = 0; i < e->count; i++)
	{
		mnemo_expansion_row *row = &e->items[i];

		free(row->summary_id);
		free(row->item_type);
		free(row->item_id);
		free(row->role);
		for (j = 0; j < row->n_parts; j++)
			mn_part_clear(&row->parts[j]);
		free(row->parts);
	}
	free(e->items);
	free(e);
}

static int
node_from_row(mnemo_store *st, const PGresult *res, int row, void *item)
{
	mnemo_summary_node *node = item;

	if (!mn_str_into(res, row, mn_col(res, "session_id"), &node->session_id) ||
		!mn_str_into(res, row, mn_col(res, "id"), &node->id) ||
		!mn_str_into(res, row, mn_col(res, "kind"), &node->kind) ||
		!mn_str_into(res, row, mn_col(res, "superseded_by"), &node->superseded_by))
		return mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
	node->level = (int) mn_get_i64(res, row, mn_col(res, "level"));
	node->token_count = (int) mn_get_i64(res, row, mn_col(res, "token_count"));
	node->seq_start = mn_get_i64(res, row, mn_col(res, "seq_start"));
	node->seq_end = mn_get_i64(res, row, mn_col(res, "seq_end"));
	node->created_at = mn_get_i64(res, row, mn_col(res, "created_at"));
	return MNEMO_OK;
}

MN_LIST_RESULT(nodes_result, mnemo_summary_nodes, node_from_row, mnemo_summary_nodes_free)

static int
expansion_from_row(mnemo_store *st, const PGresult *res, int row, void *item)
{
	mnemo_expansion_row *e = item;
	int			c_parts = mn_col(res, "parts");
	int			rc;

	if (!mn_str_into(res, row, mn_col(res, "summary_id"), &e->summary_id) ||
		!mn_str_into(res, row, mn_col(res, "item_type"), &e->item_type) ||
		!mn_str_into(res, row, mn_col(res, "item_id"), &e->item_id) ||
		!mn_str_into(res, row, mn_col(res, "role"), &e->role))
		return mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
	e->depth = (int) mn_get_i64(res, row, mn_col(res, "depth"));
	e->seq = mn_get_i64(res, row, mn_col(res, "seq"));
	if (PQgetisnull(res, row, c_parts))
		return MNEMO_OK;
	rc = mn_parts_from_json(st, PQgetvalue(res, row, c_parts), &e->n_parts, &e->parts);
	/* the parts array does not carry it: the item is the message */
	if (rc == MNEMO_OK && e->item_id != NULL)
		rc = mn_parts_set_message_id(st, e->parts, e->n_parts, e->item_id);
	return rc;
}

MN_LIST_RESULT(expansion_result, mnemo_expansion, expansion_from_row, mnemo_expansion_free)

MNEMO_API int
mnemo_summary_nodes_get(mnemo_store *st, const char *session_id, bool include_superseded,
						mnemo_summary_nodes **out)
{
	const char *params[2];
	int			rc;

	if ((rc = mn_begin(st, session_id != NULL && out != NULL,
					   "session id and out are required")) != MNEMO_OK)
		return rc;
	params[0] = session_id;
	params[1] = include_superseded ? "true" : "false";
	return nodes_result(st, mn_exec(st, &nodes_stmt, params), out);
}

MNEMO_API int
mnemo_summary_expand(mnemo_store *st, const char *session_id, const char *summary_id,
					 bool recursive, mnemo_expansion **out)
{
	const char *params[3];
	int			rc;

	if ((rc = mn_begin(st, session_id != NULL && summary_id != NULL && out != NULL,
					   "session id, summary id and out are required")) != MNEMO_OK)
		return rc;
	params[0] = session_id;
	params[1] = summary_id;
	params[2] = recursive ? "true" : "false";
	return expansion_result(st, mn_exec(st, &expand_stmt, params), out);
}
