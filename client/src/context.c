/*
 * context.c
 *		The context view: its items, the context assembled for a budget,
 *		the report of what that budget leaves out, and the swap.
 *
 * Assembly happens on the server (build_context, context_report); the
 * client only converts rows.  A swap is one call, so it either replaces the
 * whole span or, when another compactor got there first, changes nothing
 * and fails with INVALID_SWAP.
 */
#include <stdlib.h>

#include "internal.h"

static const mn_stmt items_stmt = {
	"mnemo_context_items_get",
	"SELECT item_type, item_id, \"position\" FROM mnemo.get_context_items($1::text)",
	1
};

static const mn_stmt build_stmt = {
	"mnemo_context_build",
	"SELECT \"position\", item_type, item_id, role, content, tokens "
	"FROM mnemo.build_context($1::text, $2::integer)",
	2
};

static const mn_stmt report_stmt = {
	"mnemo_context_report",
	"SELECT budget_tokens, summary_tokens, included_items, included_tokens, "
	"omitted_items, omitted_tokens FROM mnemo.context_report($1::text, $2::integer)",
	2
};

static const mn_stmt swap_stmt = {
	"mnemo_context_swap",
	"SELECT mnemo.swap_context_items($1::text, $2::text[], $3::text) AS \"position\"",
	3
};

MNEMO_API void
mnemo_context_items_free(mnemo_context_items *list)
{
	size_t		i;

	if (list == NULL)
		return;
	for (i = 0; i < list->count; i++)
	{
		free(list->items[i].item_type);
		free(list->items[i].item_id);
	}
	free(list->items);
	free(list);
}

MNEMO_API void
mnemo_context_free(mnemo_context *ctx)
{
	size_t		i;

	if (ctx == NULL)
		return;
	for (i = 0; i < ctx->count; i++)
	{
		free(ctx->items[i].item_type);
		free(ctx->items[i].item_id);
		free(ctx->items[i].role);
		free(ctx->items[i].content);
	}
	free(ctx->items);
	free(ctx);
}

MNEMO_API int
mnemo_context_items_get(mnemo_store *st, const char *session_id, mnemo_context_items **out)
{
	const char *params[1];
	PGresult   *res;
	mnemo_context_items *list;
	int			n;
	int			i;
	int			c_type,
				c_id,
				c_pos;

	if (st == NULL)
		return MNEMO_ERR_INVALID_ARGUMENT;
	mn_clear_error(st);
	if (session_id == NULL || out == NULL)
		return mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT, "session id and out are required");
	params[0] = session_id;
	res = mn_exec(st, &items_stmt, params);
	if (res == NULL)
		return st->errcode;

	n = PQntuples(res);
	c_type = mn_col(res, "item_type");
	c_id = mn_col(res, "item_id");
	c_pos = mn_col(res, "position");
	list = calloc(1, sizeof(*list));
	if (list != NULL && n > 0)
	{
		list->items = calloc((size_t) n, sizeof(*list->items));
		if (list->items == NULL)
		{
			free(list);
			list = NULL;
		}
	}
	if (list == NULL)
	{
		PQclear(res);
		return mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
	}
	for (i = 0; i < n; i++)
	{
		mnemo_context_item *it = &list->items[i];

		/* counted first: a half-filled item is freed with the others */
		list->count++;
		if (!mn_str_into(res, i, c_type, &it->item_type) ||
			!mn_str_into(res, i, c_id, &it->item_id))
		{
			PQclear(res);
			mnemo_context_items_free(list);
			return mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
		}
		it->position = mn_get_i64(res, i, c_pos);
	}
	PQclear(res);
	*out = list;
	return MNEMO_OK;
}

MNEMO_API int
mnemo_context_build(mnemo_store *st, const char *session_id, int budget_tokens,
					mnemo_context **out)
{
	char		budget[24];
	const char *params[2];
	PGresult   *res;
	mnemo_context *ctx;
	int			n;
	int			i;
	int			c_pos,
				c_type,
				c_id,
				c_role,
				c_content,
				c_tokens;

	if (st == NULL)
		return MNEMO_ERR_INVALID_ARGUMENT;
	mn_clear_error(st);
	if (session_id == NULL || out == NULL)
		return mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT, "session id and out are required");
	params[0] = session_id;
	/* a negative budget is sent: the server's 22023 names it */
	params[1] = mn_i64_param(budget, budget_tokens);
	res = mn_exec(st, &build_stmt, params);
	if (res == NULL)
		return st->errcode;

	n = PQntuples(res);
	c_pos = mn_col(res, "position");
	c_type = mn_col(res, "item_type");
	c_id = mn_col(res, "item_id");
	c_role = mn_col(res, "role");
	c_content = mn_col(res, "content");
	c_tokens = mn_col(res, "tokens");
	ctx = calloc(1, sizeof(*ctx));
	if (ctx != NULL && n > 0)
	{
		ctx->items = calloc((size_t) n, sizeof(*ctx->items));
		if (ctx->items == NULL)
		{
			free(ctx);
			ctx = NULL;
		}
	}
	if (ctx == NULL)
	{
		PQclear(res);
		return mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
	}
	for (i = 0; i < n; i++)
	{
		mnemo_context_entry *e = &ctx->items[i];

		ctx->count++;
		if (!mn_str_into(res, i, c_type, &e->item_type) ||
			!mn_str_into(res, i, c_id, &e->item_id) ||
			!mn_str_into(res, i, c_role, &e->role) ||
			!mn_str_into(res, i, c_content, &e->content))
		{
			PQclear(res);
			mnemo_context_free(ctx);
			return mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
		}
		e->position = mn_get_i64(res, i, c_pos);
		e->tokens = (int) mn_get_i64(res, i, c_tokens);
	}
	PQclear(res);
	*out = ctx;
	return MNEMO_OK;
}

MNEMO_API int
mnemo_context_report(mnemo_store *st, const char *session_id, int budget_tokens,
					 mnemo_context_budget *out)
{
	char		budget[24];
	const char *params[2];
	PGresult   *res;

	if (st == NULL)
		return MNEMO_ERR_INVALID_ARGUMENT;
	mn_clear_error(st);
	if (session_id == NULL || out == NULL)
		return mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT, "session id and out are required");
	params[0] = session_id;
	params[1] = mn_i64_param(budget, budget_tokens);
	res = mn_exec(st, &report_stmt, params);
	if (res == NULL)
		return st->errcode;
	if (PQntuples(res) != 1)
	{
		PQclear(res);
		return mn_fail(st, MNEMO_ERR_PROTOCOL, "context_report returned %d rows",
					   PQntuples(res));
	}
	out->budget_tokens = (int) mn_get_i64(res, 0, mn_col(res, "budget_tokens"));
	out->summary_tokens = mn_get_i64(res, 0, mn_col(res, "summary_tokens"));
	out->included_items = (int) mn_get_i64(res, 0, mn_col(res, "included_items"));
	out->included_tokens = mn_get_i64(res, 0, mn_col(res, "included_tokens"));
	out->omitted_items = (int) mn_get_i64(res, 0, mn_col(res, "omitted_items"));
	out->omitted_tokens = mn_get_i64(res, 0, mn_col(res, "omitted_tokens"));
	PQclear(res);
	return MNEMO_OK;
}

MNEMO_API int
mnemo_context_swap(mnemo_store *st, const char *session_id, const char *const *remove_item_ids,
				   size_t n, const char *summary_id, int64_t *position)
{
	const char *params[3];
	char	   *array;
	PGresult   *res;
	int64_t		pos;
	size_t		i;

	if (st == NULL)
		return MNEMO_ERR_INVALID_ARGUMENT;
	mn_clear_error(st);
	if (session_id == NULL || summary_id == NULL || (n > 0 && remove_item_ids == NULL))
		return mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT,
					   "session id, item ids and summary id are required");
	for (i = 0; i < n; i++)
		if (remove_item_ids[i] == NULL)
			return mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT, "remove_item_ids[%zu] is NULL", i);
	array = mn_text_array(st, remove_item_ids, n);
	if (array == NULL)
		return st->errcode;
	params[0] = session_id;
	params[1] = array;
	params[2] = summary_id;
	res = mn_exec(st, &swap_stmt, params);
	free(array);
	if (res == NULL)
		return st->errcode;
	if (PQntuples(res) != 1 || PQgetisnull(res, 0, mn_col(res, "position")))
	{
		PQclear(res);
		return mn_fail(st, MNEMO_ERR_PROTOCOL, "swap_context_items returned no position");
	}
	pos = mn_get_i64(res, 0, mn_col(res, "position"));
	PQclear(res);
	if (position != NULL)
		*position = pos;
	return MNEMO_OK;
}
