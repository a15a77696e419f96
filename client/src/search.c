/*
 * search.c
 *		Pruning stale tool outputs and searching the whole log.
 *
 * Both run on the server in one statement.  The defaults of the options
 * (-1, NULL) are the SQL function's defaults, spelled out here because the
 * statement always passes every argument.
 */
#include <stdlib.h>

#include "internal.h"

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
	int			count;
	size_t		i;

	if (st == NULL)
		return MNEMO_ERR_INVALID_ARGUMENT;
	mn_clear_error(st);
	if (session_id == NULL)
		return mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT, "session id is required");
	if (opts != NULL && opts->protected_tools != NULL)
	{
		tools = opts->protected_tools;
		n_tools = opts->n_protected_tools;
		for (i = 0; i < n_tools; i++)
			if (tools[i] == NULL)
				return mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT, "protected_tools[%zu] is NULL", i);
	}
	array = mn_text_array(st, tools, n_tools);
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
	if (res == NULL)
		return st->errcode;
	if (PQntuples(res) != 1 || PQgetisnull(res, 0, mn_col(res, "pruned")))
	{
		PQclear(res);
		return mn_fail(st, MNEMO_ERR_PROTOCOL, "prune_tool_outputs returned no count");
	}
	count = (int) mn_get_i64(res, 0, mn_col(res, "pruned"));
	PQclear(res);
	if (pruned != NULL)
		*pruned = count;
	return MNEMO_OK;
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

MNEMO_API int
mnemo_search(mnemo_store *st, const char *session_id, const char *query, int limit,
			 mnemo_search_hits **out)
{
	char		limit_text[24];
	const char *params[3];
	PGresult   *res;
	mnemo_search_hits *hits;
	int			n;
	int			i;

	if (st == NULL)
		return MNEMO_ERR_INVALID_ARGUMENT;
	mn_clear_error(st);
	if (session_id == NULL || query == NULL || out == NULL)
		return mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT, "session id, query and out are required");
	params[0] = session_id;
	params[1] = query;
	params[2] = mn_i64_param(limit_text, limit < 0 ? 50 : limit);
	res = mn_exec(st, &search_stmt, params);
	if (res == NULL)
		return st->errcode;

	n = PQntuples(res);
	hits = calloc(1, sizeof(*hits));
	if (hits != NULL && n > 0)
	{
		hits->items = calloc((size_t) n, sizeof(*hits->items));
		if (hits->items == NULL)
		{
			free(hits);
			hits = NULL;
		}
	}
	if (hits == NULL)
	{
		PQclear(res);
		return mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
	}
	for (i = 0; i < n; i++)
	{
		mnemo_search_hit *h = &hits->items[i];

		hits->count++;
		if (!mn_str_into(res, i, mn_col(res, "message_id"), &h->message_id) ||
			!mn_str_into(res, i, mn_col(res, "role"), &h->role) ||
			!mn_str_into(res, i, mn_col(res, "snippet"), &h->snippet))
		{
			PQclear(res);
			mnemo_search_hits_free(hits);
			return mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
		}
		h->seq = mn_get_i64(res, i, mn_col(res, "seq"));
		h->in_context = mn_get_bool(res, i, mn_col(res, "in_context"));
		h->rank = (float) mn_get_f64(res, i, mn_col(res, "rank"));
	}
	PQclear(res);
	*out = hits;
	return MNEMO_OK;
}
