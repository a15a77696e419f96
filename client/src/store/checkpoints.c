/*
 * checkpoints.c
 *		Checkpoints: add one at the session's end, list them.
 *
 * mn_checkpoint_add_call is the builder chat/ batches after a completed
 * assistant turn (the auto checkpoint); mnemo_checkpoint_add runs the same
 * statement alone.
 */
#include <stdlib.h>
#include <string.h>

#include "store/store.h"

#define CHECKPOINT_COLUMNS "session_id, label, seq, created_at, auto"

static const mn_stmt add_stmt = {
	"mnemo_checkpoint_add",
	"SELECT " CHECKPOINT_COLUMNS " FROM mnemo.add_checkpoint($1::text, $2::text, $3::boolean)",
	3
};

static const mn_stmt list_stmt = {
	"mnemo_checkpoints_list",
	"SELECT " CHECKPOINT_COLUMNS " FROM mnemo.list_checkpoints($1::text)",
	1
};

static void
checkpoint_clear(mnemo_checkpoint *c)
{
	free(c->session_id);
	free(c->label);
	memset(c, 0, sizeof(*c));
}

MNEMO_API void
mnemo_checkpoint_free(mnemo_checkpoint *c)
{
	if (c == NULL)
		return;
	checkpoint_clear(c);
	free(c);
}

MNEMO_API void
mnemo_checkpoints_free(mnemo_checkpoints *list)
{
	size_t		i;

	if (list == NULL)
		return;
	for (i = 0; i < list->count; i++)
		checkpoint_clear(&list->items[i]);
	free(list->items);
	free(list);
}

static int
checkpoint_from_row(mnemo_store *st, const PGresult *res, int row, void *item)
{
	mnemo_checkpoint *c = item;

	if (!mn_str_into(res, row, mn_col(res, "session_id"), &c->session_id) ||
		!mn_str_into(res, row, mn_col(res, "label"), &c->label))
	{
		checkpoint_clear(c);
		return mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
	}
	c->seq = mn_get_i64(res, row, mn_col(res, "seq"));
	c->created_at = mn_get_i64(res, row, mn_col(res, "created_at"));
	c->is_auto = mn_get_bool(res, row, mn_col(res, "auto"));
	return MNEMO_OK;
}

MN_LIST_RESULT(checkpoints_result, mnemo_checkpoints, checkpoint_from_row, mnemo_checkpoints_free)

int
mn_checkpoint_add_call(mnemo_store *st, const char *session_id, const char *label, bool is_auto,
					   mn_call *call)
{
	if (session_id == NULL || label == NULL)
		return mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT, "session id and label are required");
	call->stmt = &add_stmt;
	call->params[0] = session_id;
	call->params[1] = label;
	call->params[2] = is_auto ? "true" : "false";
	return MNEMO_OK;
}

MNEMO_API int
mnemo_checkpoint_add(mnemo_store *st, const char *session_id, const char *label, bool is_auto,
					 mnemo_checkpoint **out)
{
	mn_call		call = {0};
	void	   *c = NULL;
	int			rc;

	if ((rc = mn_begin(st, true, NULL)) != MNEMO_OK ||
		(rc = mn_checkpoint_add_call(st, session_id, label, is_auto, &call)) != MNEMO_OK ||
		(rc = mn_call_run(st, &call)) != MNEMO_OK)
	{
		mn_call_clear(&call);
		return rc;
	}
	if (out != NULL)
	{
		rc = mn_row_new(st, call.res, "checkpoint", "label", sizeof(mnemo_checkpoint),
						checkpoint_from_row, &c);
		call.res = NULL;
		if (rc == MNEMO_OK && c == NULL)
			rc = mn_fail(st, MNEMO_ERR_PROTOCOL, "add_checkpoint returned no row");
		if (rc == MNEMO_OK)
			*out = c;
	}
	mn_call_clear(&call);
	return rc;
}

MNEMO_API int
mnemo_checkpoints_list(mnemo_store *st, const char *session_id, mnemo_checkpoints **out)
{
	const char *params[1];
	int			rc;

	if ((rc = mn_begin(st, session_id != NULL && out != NULL,
					   "session id and out are required")) != MNEMO_OK)
		return rc;
	params[0] = session_id;
	return checkpoints_result(st, mn_exec(st, &list_stmt, params), out);
}
