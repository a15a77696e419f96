/*
 * resume.c
 *		Resume a session at a checkpoint, and read what resumes discarded.
 */
#include <stdlib.h>

#include "store/store.h"

static const mn_stmt resume_stmt = {
	"mnemo_session_resume",
	"SELECT mnemo.resume_session($1::text, $2::text) AS discarded",
	2
};

/* message_with_parts rows: mn_message_from_row reads the columns by name */
static const mn_stmt discarded_stmt = {
	"mnemo_discarded_list",
	"SELECT * FROM mnemo.list_discarded($1::text)",
	1
};

MNEMO_API int
mnemo_session_resume(mnemo_store *st, const char *session_id, const char *checkpoint,
					 int64_t *discarded)
{
	const char *params[2];
	PGresult   *res;
	int			rc = MNEMO_OK;

	if ((rc = mn_begin(st, session_id != NULL && checkpoint != NULL,
					   "session id and checkpoint are required")) != MNEMO_OK)
		return rc;
	params[0] = session_id;
	params[1] = checkpoint;
	if ((res = mn_exec(st, &resume_stmt, params)) == NULL)
		return st->errcode;
	if (PQntuples(res) != 1)
		rc = mn_fail(st, MNEMO_ERR_PROTOCOL, "resume_session returned no row");
	else if (discarded != NULL)
		*discarded = mn_get_i64(res, 0, mn_col(res, "discarded"));
	PQclear(res);
	return rc;
}

static int
message_from_row(mnemo_store *st, const PGresult *res, int row, void *item)
{
	return mn_message_from_row(st, res, row, item);
}

MN_LIST_RESULT(messages_result, mnemo_messages, message_from_row, mnemo_messages_free)

MNEMO_API int
mnemo_discarded_list(mnemo_store *st, const char *session_id, mnemo_messages **out)
{
	const char *params[1];
	int			rc;

	if ((rc = mn_begin(st, session_id != NULL && out != NULL,
					   "session id and out are required")) != MNEMO_OK)
		return rc;
	params[0] = session_id;
	return messages_result(st, mn_exec(st, &discarded_stmt, params), out);
}
