/*
 * runs.c
 *		Runs: claim, complete, and the snapshot after a completed run.
 */
#include <stdlib.h>
#include <string.h>

#include "store/store.h"

#define RUN_COLUMNS "session_id, run_id, claimed_at, completed_at, completion_seq"

static const mn_stmt claim_stmt = {
	"mnemo_run_claim",
	"SELECT " RUN_COLUMNS " FROM mnemo.claim_run($1::text, $2::text)",
	2
};

static const mn_stmt complete_stmt = {
	"mnemo_run_complete",
	"SELECT " RUN_COLUMNS " FROM mnemo.complete_run($1::text, $2::text)",
	2
};

/* message_with_parts rows: mn_message_from_row reads the columns by name */
static const mn_stmt snapshot_stmt = {
	"mnemo_run_snapshot",
	"SELECT * FROM mnemo.snapshot($1::text, $2::text)",
	2
};

static void
run_clear(mnemo_run *r)
{
	free(r->session_id);
	free(r->run_id);
	memset(r, 0, sizeof(*r));
}

MNEMO_API void
mnemo_run_free(mnemo_run *r)
{
	if (r == NULL)
		return;
	run_clear(r);
	free(r);
}

static int
run_from_row(mnemo_store *st, const PGresult *res, int row, void *item)
{
	mnemo_run  *r = item;

	if (!mn_str_into(res, row, mn_col(res, "session_id"), &r->session_id) ||
		!mn_str_into(res, row, mn_col(res, "run_id"), &r->run_id))
	{
		run_clear(r);
		return mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
	}
	r->claimed_at = mn_get_i64(res, row, mn_col(res, "claimed_at"));
	r->completed_at = mn_get_i64(res, row, mn_col(res, "completed_at"));
	r->completion_seq = mn_get_i64(res, row, mn_col(res, "completion_seq"));
	return MNEMO_OK;
}

static int
run_call(mnemo_store *st, const mn_stmt *stmt, const char *session_id, const char *run_id,
		 mnemo_run **out)
{
	const char *params[2];
	PGresult   *res;
	void	   *r = NULL;
	int			rc;

	if ((rc = mn_begin(st, session_id != NULL && run_id != NULL,
					   "session id and run id are required")) != MNEMO_OK)
		return rc;
	params[0] = session_id;
	params[1] = run_id;
	if ((res = mn_exec(st, stmt, params)) == NULL)
		return st->errcode;
	if (out == NULL)
	{
		PQclear(res);
		return MNEMO_OK;
	}
	rc = mn_row_new(st, res, "run", "run_id", sizeof(mnemo_run), run_from_row, &r);
	if (rc == MNEMO_OK && r == NULL)
		rc = mn_fail(st, MNEMO_ERR_PROTOCOL, "the run row has no id");
	if (rc == MNEMO_OK)
		*out = r;
	return rc;
}

MNEMO_API int
mnemo_run_claim(mnemo_store *st, const char *session_id, const char *run_id, mnemo_run **out)
{
	return run_call(st, &claim_stmt, session_id, run_id, out);
}

MNEMO_API int
mnemo_run_complete(mnemo_store *st, const char *session_id, const char *run_id, mnemo_run **out)
{
	return run_call(st, &complete_stmt, session_id, run_id, out);
}

static int
message_from_row(mnemo_store *st, const PGresult *res, int row, void *item)
{
	return mn_message_from_row(st, res, row, item);
}

MN_LIST_RESULT(messages_result, mnemo_messages, message_from_row, mnemo_messages_free)

MNEMO_API int
mnemo_run_snapshot(mnemo_store *st, const char *session_id, const char *after_run_id,
				   mnemo_messages **out)
{
	const char *params[2];
	int			rc;

	if ((rc = mn_begin(st, session_id != NULL && after_run_id != NULL && out != NULL,
					   "session id, run id and out are required")) != MNEMO_OK)
		return rc;
	params[0] = session_id;
	params[1] = after_run_id;
	return messages_result(st, mn_exec(st, &snapshot_stmt, params), out);
}
