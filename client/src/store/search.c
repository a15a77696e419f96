/*
 * search.c
 *		Pruning stale tool outputs and searching the whole log.
 *
 * Both run on the server in one statement.  The defaults of the options
 * (-1, NULL) are the SQL function's defaults, spelled out here because the
 * statement always passes every argument.
 */
#include <stdlib.h>

#include "store/store.h"

static const mn_stmt prune_stmt = {
	"mnemo_prune_tool_outputs",
	"SELECT mnemo.prune_tool_outputs($1::text, $2::integer, $3::integer, $4::text[]) AS pruned",
	4
};

static const mn_stmt search_stmt = {
	"mnemo_search",
	"SELECT message_id, seq, role, in_context, snippet, rank "
	"FROM mnemo.search_history($1::text, $2::text, $3::integer)",
	3
};

static const mn_stmt pending_stmt = {
	"mnemo_search_pending",
	"SELECT mnemo.search_pending($1::text) AS pending",
	1
};

MNEMO_API int
mnemo_prune_tool_outputs(mnemo_store *st, const char *session_id,
						 const mnemo_prune_options *opts, int *pruned)
{
	static const char *const default_tools[] = {"skill"};
	const char *const *tools = default_tools;
	size_t		n_tools = 1;
	char		protect[24];
	char		minimum[24];
	const char *params[4];
	char	   *array;
	PGresult   *res;
	int64_t		count;
	int			rc;

	if ((rc = mn_begin(st, session_id != NULL, "session id is required")) != MNEMO_OK)
		return rc;
	if (opts != NULL && opts->protected_tools != NULL)
	{
		tools = opts->protected_tools;
		n_tools = opts->n_protected_tools;
	}
	array = mn_id_array(st, tools, n_tools, "protected_tools");
	if (array == NULL)
		return st->errcode;
	params[0] = session_id;
	params[1] = mn_i64_param(protect, opts != NULL && opts->protect_tokens >= 0
							 ? opts->protect_tokens : 40000);
	params[2] = mn_i64_param(minimum, opts != NULL && opts->minimum_tokens >= 0
							 ? opts->minimum_tokens : 20000);
	params[3] = array;
	res = mn_exec(st, &prune_stmt, params);
	free(array);
	rc = mn_i64_result(st, res, "pruned", "prune_tool_outputs returned no count", &count);
	if (rc == MNEMO_OK && pruned != NULL)
		*pruned = (int) count;
	return rc;
}

MNEMO_API void
mnemo_search_hits_free(mnemo_search_hits *hits)
{
	size_t		i;

	if (hits == NULL)
		return;
	for (i = 0; i < hits->count; i++)
	{
		free(hits->items[i].message_id);
		free(hits->items[i].role);
		free(hits->items[i].snippet);
	}
	free(hits->items);
	free(hits);
}

static int
hit_from_row(mnemo_store *st, const PGresult *res, int row, void *item)
{
	mnemo_search_hit *h = item;

	if (!mn_str_into(res, row, mn_col(res, "message_id"), &h->message_id) ||
		!mn_str_into(res, row, mn_col(res, "role"), &h->role) ||
		!mn_str_into(res, row, mn_col(res, "snippet"), &h->snippet))
		return mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
	h->seq = mn_get_i64(res, row, mn_col(res, "seq"));
	h->in_context = mn_get_bool(res, row, mn_col(res, "in_context"));
	h->rank = (float) mn_get_f64(res, row, mn_col(res, "rank"));
	return MNEMO_OK;
}

MN_LIST_RESULT(hits_result, mnemo_search_hits, hit_from_row, mnemo_search_hits_free)

MNEMO_API int
mnemo_search(mnemo_store *st, const char *session_id, const char *query, int limit,
			 mnemo_search_hits **out)
{
	char		limit_text[24];
	const char *params[3];
	int			rc;

	if ((rc = mn_begin(st, session_id != NULL && query != NULL && out != NULL,
					   "session id, query and out are required")) != MNEMO_OK)
		return rc;
	params[0] = session_id;
	params[1] = query;
	params[2] = mn_i64_param(limit_text, limit < 0 ? 50 : limit);
	return hits_result(st, mn_exec(st, &search_stmt, params), out);
}

MNEMO_API int
mnemo_search_pending(mnemo_store *st, const char *session_id, int64_t *pending)
{
	const char *params[1];
	int			rc;

	if ((rc = mn_begin(st, session_id != NULL && pending != NULL,
					   "session id and pending are required")) != MNEMO_OK)
		return rc;
	params[0] = session_id;
	return mn_i64_result(st, mn_exec(st, &pending_stmt, params), "pending",
						 "search_pending returned no count", pending);
}
