/*
 * context.c
 *		The context view: its items, the context assembled for a budget,
 *		the report of what that budget leaves out, and the swap.
 *
 * Assembly happens on the server (build_context, context_report, and
 * turn_context, which gives a chat turn both and the parts of the context's
 * assistant messages from one assembly); the client only converts rows.  A swap is one call, so it either replaces the
 * whole span or, when another compactor got there first, changes nothing
 * and fails with INVALID_SWAP.
 */
#include <stdlib.h>
#include <string.h>

#include "store/store.h"

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

static const mn_stmt turn_stmt = {
	"mnemo_turn_context",
	"SELECT \"position\", item_type, item_id, role, content, tokens, parts, "
	"(budget).budget_tokens, (budget).summary_tokens, (budget).included_items, "
	"(budget).included_tokens, (budget).omitted_items, (budget).omitted_tokens "
	"FROM mnemo.turn_context($1::text, $2::integer)",
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

static int
item_from_row(mnemo_store *st, const PGresult *res, int row, void *item)
{
	mnemo_context_item *it = item;

	if (!mn_str_into(res, row, mn_col(res, "item_type"), &it->item_type) ||
		!mn_str_into(res, row, mn_col(res, "item_id"), &it->item_id))
		return mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
	it->position = mn_get_i64(res, row, mn_col(res, "position"));
	return MNEMO_OK;
}

MN_LIST_RESULT(items_result, mnemo_context_items, item_from_row, mnemo_context_items_free)

static int
entry_from_row(mnemo_store *st, const PGresult *res, int row, void *item)
{
	mnemo_context_entry *e = item;

	if (!mn_str_into(res, row, mn_col(res, "item_type"), &e->item_type) ||
		!mn_str_into(res, row, mn_col(res, "item_id"), &e->item_id) ||
		!mn_str_into(res, row, mn_col(res, "role"), &e->role) ||
		!mn_str_into(res, row, mn_col(res, "content"), &e->content))
		return mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
	e->position = mn_get_i64(res, row, mn_col(res, "position"));
	e->tokens = (int) mn_get_i64(res, row, mn_col(res, "tokens"));
	return MNEMO_OK;
}

MN_LIST_RESULT(context_result, mnemo_context, entry_from_row, mnemo_context_free)

MNEMO_API int
mnemo_context_items_get(mnemo_store *st, const char *session_id, mnemo_context_items **out)
{
	const char *params[1];
	int			rc;

	if ((rc = mn_begin(st, session_id != NULL && out != NULL,
					   "session id and out are required")) != MNEMO_OK)
		return rc;
	params[0] = session_id;
	return items_result(st, mn_exec(st, &items_stmt, params), out);
}

int
mn_context_build_call(mnemo_store *st, const char *session_id, int budget_tokens, mn_call *call)
{
	if (session_id == NULL)
		return mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT, "session id is required");
	call->stmt = &build_stmt;
	call->params[0] = session_id;
	/* a negative budget is sent: the server's 22023 names it */
	call->params[1] = mn_i64_param(call->num, budget_tokens);
	return MNEMO_OK;
}

int
mn_context_of(mnemo_store *st, mn_call *call, mnemo_context **out)
{
	PGresult   *res = call->res;

	call->res = NULL;
	return context_result(st, res, out);
}

MNEMO_API int
mnemo_context_build(mnemo_store *st, const char *session_id, int budget_tokens,
					mnemo_context **out)
{
	mn_call		call = {0};
	int			rc;

	if ((rc = mn_begin(st, session_id != NULL && out != NULL,
					   "session id and out are required")) == MNEMO_OK &&
		(rc = mn_context_build_call(st, session_id, budget_tokens, &call)) == MNEMO_OK &&
		(rc = mn_call_run(st, &call)) == MNEMO_OK)
		rc = mn_context_of(st, &call, out);
	mn_call_clear(&call);
	return rc;
}

int
mn_context_report_call(mnemo_store *st, const char *session_id, int budget_tokens,
					   mn_call *call)
{
	if (session_id == NULL)
		return mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT, "session id is required");
	call->stmt = &report_stmt;
	call->params[0] = session_id;
	call->params[1] = mn_i64_param(call->num, budget_tokens);
	return MNEMO_OK;
}

/* Row row of res, which has context_budget's columns, into *out. */
static void
report_from_row(const PGresult *res, int row, mnemo_context_budget *out)
{
	out->budget_tokens = (int) mn_get_i64(res, row, mn_col(res, "budget_tokens"));
	out->summary_tokens = mn_get_i64(res, row, mn_col(res, "summary_tokens"));
	out->included_items = (int) mn_get_i64(res, row, mn_col(res, "included_items"));
	out->included_tokens = mn_get_i64(res, row, mn_col(res, "included_tokens"));
	out->omitted_items = (int) mn_get_i64(res, row, mn_col(res, "omitted_items"));
	out->omitted_tokens = mn_get_i64(res, row, mn_col(res, "omitted_tokens"));
}

int
mn_context_report_of(mnemo_store *st, mn_call *call, mnemo_context_budget *out)
{
	PGresult   *res = call->res;
	int			rc = MNEMO_OK;

	call->res = NULL;
	if (PQntuples(res) != 1)
		rc = mn_fail(st, MNEMO_ERR_PROTOCOL, "context_report returned %d rows", PQntuples(res));
	else
		report_from_row(res, 0, out);
	PQclear(res);
	return rc;
}

int
mn_turn_context_call(mnemo_store *st, const char *session_id, int budget_tokens, mn_call *call)
{
	if (session_id == NULL)
		return mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT, "session id is required");
	call->stmt = &turn_stmt;
	call->params[0] = session_id;
	call->params[1] = mn_i64_param(call->num, budget_tokens);
	return MNEMO_OK;
}

/* An assistant entry's message as the request builder needs it: id, role, parts. */
static int
assistant_from_row(mnemo_store *st, const PGresult *res, int row, mnemo_message *m)
{
	int			rc;

	if (!mn_str_into(res, row, mn_col(res, "item_id"), &m->id) ||
		!mn_str_into(res, row, mn_col(res, "role"), &m->role))
		return mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
	rc = mn_parts_from_json(st, PQgetvalue(res, row, mn_col(res, "parts")), &m->n_parts, &m->parts);
	if (rc == MNEMO_OK)
		rc = mn_parts_set_message_id(st, m->parts, m->n_parts, m->id);
	return rc;
}

/*
 * Split turn_context's rows: the entries (all but the last row) into *ctx,
 * those with parts (the assistant messages) into *msgs, the last row, whose
 * item_type is "budget", into *report.  On error nothing is returned.
 */
static int
turn_rows(mnemo_store *st, const PGresult *res, mnemo_context *ctx, mnemo_messages *msgs,
		  mnemo_context_budget *report)
{
	int			n = PQntuples(res) - 1;
	int			parts_col = mn_col(res, "parts");
	int			row;
	int			rc;

	if (n < 0 || parts_col < 0 ||
		strcmp(PQgetvalue(res, n, mn_col(res, "item_type")), "budget") != 0)
		return mn_fail(st, MNEMO_ERR_PROTOCOL, "turn_context did not end with its budget row");
	report_from_row(res, n, report);
	if (n == 0)
		return MNEMO_OK;
	if ((ctx->items = calloc(n, sizeof(*ctx->items))) == NULL ||
		(msgs->items = calloc(n, sizeof(*msgs->items))) == NULL)
		return mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
	for (row = 0; row < n; row++)
	{
		if ((rc = entry_from_row(st, res, row, &ctx->items[ctx->count++])) != MNEMO_OK)
			return rc;
		if (!PQgetisnull(res, row, parts_col) &&
			(rc = assistant_from_row(st, res, row, &msgs->items[msgs->count++])) != MNEMO_OK)
			return rc;
	}
	return MNEMO_OK;
}

int
mn_turn_context_of(mnemo_store *st, mn_call *call, mnemo_context **ctx, mnemo_messages **msgs,
				   mnemo_context_budget *report)
{
	PGresult   *res = call->res;
	mnemo_context *c = calloc(1, sizeof(*c));
	mnemo_messages *m = calloc(1, sizeof(*m));
	int			rc;

	call->res = NULL;
	if (c == NULL || m == NULL)
		rc = mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
	else
		rc = turn_rows(st, res, c, m, report);
	PQclear(res);
	if (rc != MNEMO_OK)
	{
		mnemo_context_free(c);
		mnemo_messages_free(m);
		return rc;
	}
	*ctx = c;
	*msgs = m;
	return MNEMO_OK;
}

MNEMO_API int
mnemo_context_report(mnemo_store *st, const char *session_id, int budget_tokens,
					 mnemo_context_budget *out)
{
	mn_call		call = {0};
	int			rc;

	if ((rc = mn_begin(st, session_id != NULL && out != NULL,
					   "session id and out are required")) == MNEMO_OK &&
		(rc = mn_context_report_call(st, session_id, budget_tokens, &call)) == MNEMO_OK &&
		(rc = mn_call_run(st, &call)) == MNEMO_OK)
		rc = mn_context_report_of(st, &call, out);
	mn_call_clear(&call);
	return rc;
}

MNEMO_API int
mnemo_context_swap(mnemo_store *st, const char *session_id, const char *const *remove_item_ids,
				   size_t n, const char *summary_id, int64_t *position)
{
	const char *params[3];
	char	   *array;
	PGresult   *res;
	int			rc;

	if ((rc = mn_begin(st, session_id != NULL && summary_id != NULL &&
					   (n == 0 || remove_item_ids != NULL),
					   "session id, item ids and summary id are required")) != MNEMO_OK)
		return rc;
	array = mn_id_array(st, remove_item_ids, n, "remove_item_ids");
	if (array == NULL)
		return st->errcode;
	params[0] = session_id;
	params[1] = array;
	params[2] = summary_id;
	res = mn_exec(st, &swap_stmt, params);
	free(array);
	return mn_i64_result(st, res, "position", "swap_context_items returned no position",
						 position);
}
