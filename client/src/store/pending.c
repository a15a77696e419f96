/*
 * pending.c
 *		The pending human-in-the-loop request: set, clear, load, each one
 *		statement, the request and its run id always together.
 */
#include <stdlib.h>
#include <string.h>

#include "store/store.h"

static const mn_stmt set_stmt = {
	"mnemo_pending_set",
	"SELECT mnemo.set_pending_request($1::text, $2::jsonb, $3::text)",
	3
};

static const mn_stmt clear_stmt = {
	"mnemo_pending_clear",
	"SELECT mnemo.clear_pending_request($1::text) AS cleared",
	1
};

static const mn_stmt load_stmt = {
	"mnemo_pending_load",
	"SELECT request, run_id, created_at FROM mnemo.load_pending_request($1::text)",
	1
};

static void
pending_clear(mnemo_pending *p)
{
	free(p->request);
	free(p->run_id);
	memset(p, 0, sizeof(*p));
}

MNEMO_API void
mnemo_pending_free(mnemo_pending *p)
{
	if (p == NULL)
		return;
	pending_clear(p);
	free(p);
}

static int
pending_from_row(mnemo_store *st, const PGresult *res, int row, void *item)
{
	mnemo_pending *p = item;

	if (!mn_str_into(res, row, mn_col(res, "request"), &p->request) ||
		!mn_str_into(res, row, mn_col(res, "run_id"), &p->run_id))
	{
		pending_clear(p);
		return mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
	}
	p->created_at = mn_get_i64(res, row, mn_col(res, "created_at"));
	return MNEMO_OK;
}

MNEMO_API int
mnemo_pending_set(mnemo_store *st, const char *session_id, const char *request,
				  const char *run_id)
{
	const char *params[3];
	PGresult   *res;
	int			rc;

	if ((rc = mn_begin(st, session_id != NULL && request != NULL,
					   "session id and request are required")) != MNEMO_OK)
		return rc;
	params[0] = session_id;
	params[1] = request;
	params[2] = run_id;
	if ((res = mn_exec(st, &set_stmt, params)) == NULL)
		return st->errcode;
	PQclear(res);
	return MNEMO_OK;
}

MNEMO_API int
mnemo_pending_clear(mnemo_store *st, const char *session_id, bool *cleared)
{
	const char *params[1];
	PGresult   *res;
	int			rc;

	if ((rc = mn_begin(st, session_id != NULL, "session id is required")) != MNEMO_OK)
		return rc;
	params[0] = session_id;
	if ((res = mn_exec(st, &clear_stmt, params)) == NULL)
		return st->errcode;
	if (PQntuples(res) != 1)
	{
		PQclear(res);
		return mn_fail(st, MNEMO_ERR_PROTOCOL, "clear_pending_request returned no row");
	}
	if (cleared != NULL)
		*cleared = mn_get_bool(res, 0, mn_col(res, "cleared"));
	PQclear(res);
	return MNEMO_OK;
}

MNEMO_API int
mnemo_pending_load(mnemo_store *st, const char *session_id, mnemo_pending **out)
{
	const char *params[1];
	void	   *p = NULL;
	int			rc;

	if ((rc = mn_begin(st, session_id != NULL && out != NULL,
					   "session id and out are required")) != MNEMO_OK)
		return rc;
	params[0] = session_id;
	/* a NULL request: none pending, *out = NULL */
	rc = mn_row_new(st, mn_exec(st, &load_stmt, params), "pending request", "request",
					sizeof(mnemo_pending), pending_from_row, &p);
	if (rc == MNEMO_OK)
		*out = p;
	return rc;
}
