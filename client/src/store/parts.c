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

#include "store/store.h"

static const mn_stmt append_stmt = {
	"mnemo_part_append",
	"SELECT mnemo.append_part($1::text, $2::text, $3::jsonb) AS part_index",
	3
};

static const mn_stmt update_status_stmt = {
	"mnemo_part_update_status",
	"SELECT mnemo.update_part_status($1::text, $2::text, tool_state => $3::text, "
	"compacted_at => $4::bigint, started_at => $5::bigint, completed_at => $6::bigint, "
	"output => $7::text, error_message => $8::text)",
	8
};

static const mn_stmt tombstone_stmt = {
	"mnemo_part_tombstone",
	"SELECT mnemo.tombstone_part($1::text, $2::text) AS compacted_at",
	2
};

static const mn_stmt get_stmt = {
	"mnemo_parts_get",
	"SELECT session_id, message_id, part_index, id, part_type, content, tool_name, "
	"tool_call_id, tool_state, compacted_at, started_at, completed_at, token_estimate "
	"FROM mnemo.get_parts($1::text, $2::text)",
	2
};

int
mn_part_append_call(mnemo_store *st, const char *session_id, const char *message_id,
					const mnemo_new_part *part, mn_call *call)
{
	if (session_id == NULL || message_id == NULL || part == NULL)
		return mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT,
					   "session id, message id and part are required");
	if ((call->json = mn_part_to_json(st, part)) == NULL)
		return st->errcode;
	call->stmt = &append_stmt;
	call->params[0] = session_id;
	call->params[1] = message_id;
	call->params[2] = mn_json_text(st, call->json);
	return call->params[2] != NULL ? MNEMO_OK : st->errcode;
}

MNEMO_API int
mnemo_part_append(mnemo_store *st, const char *session_id, const char *message_id,
				  const mnemo_new_part *part, int *part_index)
{
	mn_call		call = {0};
	int64_t		index;
	int			rc;

	if ((rc = mn_begin(st, true, NULL)) == MNEMO_OK &&
		(rc = mn_part_append_call(st, session_id, message_id, part, &call)) == MNEMO_OK &&
		(rc = mn_call_run(st, &call)) == MNEMO_OK)
	{
		rc = mn_i64_result(st, call.res, "part_index", "append_part returned no part index", &index);
		call.res = NULL;
		if (rc == MNEMO_OK && part_index != NULL)
			*part_index = (int) index;
	}
	mn_call_clear(&call);
	return rc;
}

MNEMO_API int
mnemo_part_update_status(mnemo_store *st, const char *session_id, const char *part_id,
						 const mnemo_part_status *status)
{
	char		compacted_at[24];
	char		started_at[24];
	char		completed_at[24];
	const char *params[8];
	PGresult   *res;
	int			rc;

	if ((rc = mn_begin(st, session_id != NULL && part_id != NULL && status != NULL,
					   "session id, part id and status are required")) != MNEMO_OK)
		return rc;
	params[0] = session_id;
	params[1] = part_id;
	params[2] = status->tool_state;
	/* a negative time is sent: the server refuses it with 22023 */
	params[3] = status->compacted_at != 0 ? mn_i64_param(compacted_at, status->compacted_at) : NULL;
	params[4] = status->started_at != 0 ? mn_i64_param(started_at, status->started_at) : NULL;
	params[5] = status->completed_at != 0 ? mn_i64_param(completed_at, status->completed_at) : NULL;
	params[6] = status->output;
	params[7] = status->error_message;
	res = mn_exec(st, &update_status_stmt, params);
	if (res == NULL)
		return st->errcode;
	PQclear(res);
	return MNEMO_OK;
}

MNEMO_API int
mnemo_part_tombstone(mnemo_store *st, const char *session_id, const char *part_id,
					 int64_t *compacted_at)
{
	const char *params[2];
	int			rc;

	if ((rc = mn_begin(st, session_id != NULL && part_id != NULL,
					   "session id and part id are required")) != MNEMO_OK)
		return rc;
	params[0] = session_id;
	params[1] = part_id;
	return mn_i64_result(st, mn_exec(st, &tombstone_stmt, params), "compacted_at",
						 "tombstone_part returned no time", compacted_at);
}

static int
part_from_row(mnemo_store *st, const PGresult *res, int row, void *item)
{
	return mn_part_from_row(st, res, row, item);
}

MN_LIST_RESULT(parts_result, mnemo_parts, part_from_row, mnemo_parts_free)

MNEMO_API int
mnemo_parts_get(mnemo_store *st, const char *session_id, const char *message_id,
				mnemo_parts **out)
{
	const char *params[2];
	int			rc;

	if ((rc = mn_begin(st, session_id != NULL && message_id != NULL && out != NULL,
					   "session id, message id and out are required")) != MNEMO_OK)
		return rc;
	params[0] = session_id;
	params[1] = message_id;
	return parts_result(st, mn_exec(st, &get_stmt, params), out);
}
