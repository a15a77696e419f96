/*
 * state.c
 *		A session's state: merge a patch, read it.  The state travels as
 *		JSON text, as the server prints it.
 */
#include <stdlib.h>

#include "store/store.h"

static const mn_stmt update_stmt = {
	"mnemo_state_update",
	"SELECT mnemo.update_state($1::text, $2::jsonb) AS state",
	2
};

static const mn_stmt get_stmt = {
	"mnemo_state_get",
	"SELECT mnemo.get_state($1::text) AS state",
	1
};

MNEMO_API void
mnemo_state_free(char *state)
{
	free(state);
}

/* The state column of the single row of res into *out unless out is NULL;
 * res is cleared. */
static int
state_result(mnemo_store *st, PGresult *res, char **out)
{
	char	   *state = NULL;
	int			rc = MNEMO_OK;

	if (res == NULL)
		return st->errcode;
	if (PQntuples(res) != 1 || PQgetisnull(res, 0, mn_col(res, "state")))
		rc = mn_fail(st, MNEMO_ERR_PROTOCOL, "no state returned");
	else if (out != NULL && (state = mn_get_str(res, 0, mn_col(res, "state"))) == NULL)
		rc = mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
	PQclear(res);
	if (rc == MNEMO_OK && out != NULL)
		*out = state;
	return rc;
}

MNEMO_API int
mnemo_state_update(mnemo_store *st, const char *session_id, const char *patch, char **merged)
{
	const char *params[2];
	int			rc;

	if ((rc = mn_begin(st, session_id != NULL && patch != NULL,
					   "session id and patch are required")) != MNEMO_OK)
		return rc;
	params[0] = session_id;
	params[1] = patch;
	return state_result(st, mn_exec(st, &update_stmt, params), merged);
}

MNEMO_API int
mnemo_state_get(mnemo_store *st, const char *session_id, char **state)
{
	const char *params[1];
	int			rc;

	if ((rc = mn_begin(st, session_id != NULL && state != NULL,
					   "session id and state are required")) != MNEMO_OK)
		return rc;
	params[0] = session_id;
	return state_result(st, mn_exec(st, &get_stmt, params), state);
}
