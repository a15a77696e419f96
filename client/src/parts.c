/*
 * parts.c
 *		Parts after their message: streaming appends, status changes,
 *		tombstones, and reading a message's parts.
 *
 * A part's content is immutable on the server; what changes is its status
 * columns (tool_state, the three times) and the "output" / "error_message"
 * the server merges into the content.  A zero time or a NULL string in a
 * mnemo_part_status is sent as SQL NULL, which leaves the field as it is.
 */
#include <stdlib.h>

#include <json.h>

#include "internal.h"

static const mn_stmt append_stmt = {
	"mnemo_part_append",
	"SELECT mnemo.append_part($1::text, $2::jsonb) AS part_index",
	2
};

static const mn_stmt update_status_stmt = {
	"mnemo_part_update_status",
	"SELECT mnemo.update_part_status($1::text, tool_state => $2::text, "
	"compacted_at => $3::bigint, started_at => $4::bigint, completed_at => $5::bigint, "
	"output => $6::text, error_message => $7::text)",
	7
};

static const mn_stmt tombstone_stmt = {
	"mnemo_part_tombstone",
	"SELECT mnemo.tombstone_part($1::text) AS compacted_at",
	1
};

static const mn_stmt get_stmt = {
	"mnemo_parts_get",
	"SELECT session_id, message_id, part_index, id, part_type, content, tool_name, "
	"tool_call_id, tool_state, compacted_at, started_at, completed_at, token_estimate "
	"FROM mnemo.get_parts($1::text)",
	1
};

MNEMO_API int
mnemo_part_append(mnemo_store *st, const char *message_id, const mnemo_new_part *part,
				  int *part_index)
{
	struct json_object *obj;
	const char *params[2];
	PGresult   *res;
	int			index;

	if (st == NULL)
		return MNEMO_ERR_INVALID_ARGUMENT;
	mn_clear_error(st);
	if (message_id == NULL || part == NULL)
		return mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT, "message id and part are required");
	obj = mn_part_to_json(st, part);
	if (obj == NULL)
		return st->errcode;
	params[0] = message_id;
	params[1] = mn_json_text(st, obj);
	if (params[1] == NULL)
	{
		json_object_put(obj);
		return st->errcode;
	}
	res = mn_exec(st, &append_stmt, params);
	json_object_put(obj);
	if (res == NULL)
		return st->errcode;
	if (PQntuples(res) != 1 || PQgetisnull(res, 0, mn_col(res, "part_index")))
	{
		PQclear(res);
		return mn_fail(st, MNEMO_ERR_PROTOCOL, "append_part returned no part index");
	}
	index = (int) mn_get_i64(res, 0, mn_col(res, "part_index"));
	PQclear(res);
	if (part_index != NULL)
		*part_index = index;
	return MNEMO_OK;
}

MNEMO_API int
mnemo_part_update_status(mnemo_store *st, const char *part_id,
						 const mnemo_part_status *status)
{
	char		compacted_at[24];
	char		started_at[24];
	char		completed_at[24];
	const char *params[7];
	PGresult   *res;

	if (st == NULL)
		return MNEMO_ERR_INVALID_ARGUMENT;
	mn_clear_error(st);
	if (part_id == NULL || status == NULL)
		return mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT, "part id and status are required");
	params[0] = part_id;
	params[1] = status->tool_state;
	/* a negative time is sent: the server refuses it with 22023 */
	params[2] = status->compacted_at != 0 ? mn_i64_param(compacted_at, status->compacted_at) : NULL;
	params[3] = status->started_at != 0 ? mn_i64_param(started_at, status->started_at) : NULL;
	params[4] = status->completed_at != 0 ? mn_i64_param(completed_at, status->completed_at) : NULL;
	params[5] = status->output;
	params[6] = status->error_message;
	res = mn_exec(st, &update_status_stmt, params);
	if (res == NULL)
		return st->errcode;
	PQclear(res);
	return MNEMO_OK;
}

MNEMO_API int
mnemo_part_tombstone(mnemo_store *st, const char *part_id, int64_t *compacted_at)
{
	const char *params[1];
	PGresult   *res;
	int64_t		at;

	if (st == NULL)
		return MNEMO_ERR_INVALID_ARGUMENT;
	mn_clear_error(st);
	if (part_id == NULL)
		return mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT, "part id is required");
	params[0] = part_id;
	res = mn_exec(st, &tombstone_stmt, params);
	if (res == NULL)
		return st->errcode;
	if (PQntuples(res) != 1 || PQgetisnull(res, 0, mn_col(res, "compacted_at")))
	{
		PQclear(res);
		return mn_fail(st, MNEMO_ERR_PROTOCOL, "tombstone_part returned no time");
	}
	at = mn_get_i64(res, 0, mn_col(res, "compacted_at"));
	PQclear(res);
	if (compacted_at != NULL)
		*compacted_at = at;
	return MNEMO_OK;
}

MNEMO_API int
mnemo_parts_get(mnemo_store *st, const char *message_id, mnemo_parts **out)
{
	const char *params[1];
	PGresult   *res;
	mnemo_parts *list;
	int			n;
	int			i;

	if (st == NULL)
		return MNEMO_ERR_INVALID_ARGUMENT;
	mn_clear_error(st);
	if (message_id == NULL || out == NULL)
		return mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT, "message id and out are required");
	params[0] = message_id;
	res = mn_exec(st, &get_stmt, params);
	if (res == NULL)
		return st->errcode;

	n = PQntuples(res);
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
		int			rc = mn_part_from_row(st, res, i, &list->items[i]);

		if (rc != MNEMO_OK)
		{
			PQclear(res);
			mnemo_parts_free(list);
			return rc;
		}
		list->count++;
	}
	PQclear(res);
	*out = list;
	return MNEMO_OK;
}
