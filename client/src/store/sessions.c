/*
 * sessions.c
 *		Sessions: create, read, list, fork, resume, soft delete, purge, watch.
 *
 * Each call is one prepared statement over the SQL function of the same
 * name.  A NULL field of a mnemo_new_session is sent as SQL NULL, which the
 * server reads as the column's default, so the defaults live in one place.
 * The rows come back as mnemo.sessions and are converted by name
 * (mn_session_from_row).
 */
#include <stdlib.h>

#include "events/events.h"
#include "store/store.h"

#define SESSION_COLUMNS \
	"id, parent_id, created_at, updated_at, model_id, provider_id, agent, title, " \
	"is_active, metadata, system_prompt, state, watched, last_seq"

static const mn_stmt create_stmt = {
	"mnemo_session_create",
	"SELECT " SESSION_COLUMNS " FROM mnemo.create_session("
	"id => $1::text, model_id => $2::text, provider_id => $3::text, agent => $4::text, "
	"parent_id => $5::text, title => $6::text, metadata => $7::jsonb, "
	"system_prompt => $8::text, created_at => $9::bigint)",
	9
};

static const mn_stmt get_or_create_stmt = {
	"mnemo_session_get_or_create",
	"SELECT " SESSION_COLUMNS " FROM mnemo.get_or_create_session("
	"id => $1::text, model_id => $2::text, provider_id => $3::text, agent => $4::text, "
	"parent_id => $5::text, title => $6::text, metadata => $7::jsonb, "
	"system_prompt => $8::text)",
	8
};

static const mn_stmt get_stmt = {
	"mnemo_session_get",
	"SELECT " SESSION_COLUMNS " FROM mnemo.get_session($1::text)",
	1
};

static const mn_stmt list_stmt = {
	"mnemo_session_list",
	"SELECT " SESSION_COLUMNS " FROM mnemo.list_sessions(parent_id => $1::text, "
	"active_only => $2::boolean, \"limit\" => $3::integer, \"offset\" => $4::integer)",
	4
};

static const mn_stmt fork_stmt = {
	"mnemo_session_fork",
	"SELECT " SESSION_COLUMNS " FROM mnemo.fork_session($1::text, $2::text, $3::text)",
	3
};

static const mn_stmt resume_stmt = {
	"mnemo_session_resume",
	"SELECT mnemo.resume_session($1::text, $2::text) AS discarded",
	2
};

static const mn_stmt soft_delete_stmt = {
	"mnemo_session_soft_delete",
	"SELECT mnemo.soft_delete_session($1::text)",
	1
};

static const mn_stmt purge_stmt = {
	"mnemo_session_purge",
	"SELECT mnemo.purge_session($1::text) AS deleted",
	1
};

static const mn_stmt watch_stmt = {
	"mnemo_session_watch",
	"SELECT mnemo.watch($1::text)",
	1
};

static const mn_stmt unwatch_stmt = {
	"mnemo_session_unwatch",
	"SELECT mnemo.unwatch($1::text)",
	1
};

static int
session_from_row(mnemo_store *st, const PGresult *res, int row, void *item)
{
	return mn_session_from_row(st, res, row, item);
}

MN_LIST_RESULT(sessions_result, mnemo_sessions, session_from_row, mnemo_sessions_free)

/* The one session row of res as a new mnemo_session; res is cleared. */
static int
session_result(mnemo_store *st, PGresult *res, mnemo_session **out)
{
	void	   *s;
	int			rc;

	rc = mn_row_new(st, res, "session", NULL, sizeof(mnemo_session), session_from_row, &s);
	if (rc == MNEMO_OK)
		*out = s;
	return rc;
}

static int
create_with(mnemo_store *st, const mn_stmt *stmt, const mnemo_new_session *spec,
			mnemo_session **out)
{
	static const mnemo_new_session defaults;
	const char *params[9];
	char		created_at[24];

	if (spec == NULL)
		spec = &defaults;
	params[0] = spec->id;
	params[1] = spec->model_id;
	params[2] = spec->provider_id;
	params[3] = spec->agent;
	params[4] = spec->parent_id;
	params[5] = spec->title;
	params[6] = spec->metadata;
	params[7] = spec->system_prompt;
	/* create_session's alone: get_or_create_stmt sends the first 8 */
	params[8] = spec->created_at > 0 ? mn_i64_param(created_at, spec->created_at) : NULL;
	return session_result(st, mn_exec(st, stmt, params), out);
}

MNEMO_API int
mnemo_session_create(mnemo_store *st, const mnemo_new_session *spec, mnemo_session **out)
{
	mnemo_session *s = NULL;
	int			rc;

	if ((rc = mn_begin(st, out != NULL, "out is NULL")) != MNEMO_OK)
		return rc;
	rc = create_with(st, &create_stmt, spec, &s);
	if (rc != MNEMO_OK)
		return rc;
	*out = s;
	mn_emit(st, MNEMO_EVENT_SESSION_CREATED, s->id, NULL, 0, NULL, false);
	return MNEMO_OK;
}

MNEMO_API int
mnemo_session_fork(mnemo_store *st, const char *source_id, const char *at, const char *new_id,
				   mnemo_session **out)
{
	const char *params[3];
	mnemo_session *s = NULL;
	int			rc;

	if ((rc = mn_begin(st, source_id != NULL && at != NULL && out != NULL,
					   "source id, fork point and out are required")) != MNEMO_OK)
		return rc;
	params[0] = source_id;
	params[1] = at;
	params[2] = new_id;
	if ((rc = session_result(st, mn_exec(st, &fork_stmt, params), &s)) != MNEMO_OK)
		return rc;
	*out = s;
	mn_emit(st, MNEMO_EVENT_SESSION_CREATED, s->id, NULL, 0, NULL, false);
	return MNEMO_OK;
}

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

MNEMO_API int
mnemo_session_get_or_create(mnemo_store *st, const mnemo_new_session *spec,
							mnemo_session **out)
{
	int			rc;

	if ((rc = mn_begin(st, out != NULL, "out is NULL")) != MNEMO_OK)
		return rc;
	if (spec == NULL || spec->id == NULL)
		return mn_fail(st, MNEMO_ERR_INVALID_ARGUMENT,
					   "get_or_create needs the session id");
	return create_with(st, &get_or_create_stmt, spec, out);
}

MNEMO_API int
mnemo_session_get(mnemo_store *st, const char *id, mnemo_session **out)
{
	const char *params[1];
	int			rc;

	if ((rc = mn_begin(st, id != NULL && out != NULL,
					   "session id and out are required")) != MNEMO_OK)
		return rc;
	params[0] = id;
	return session_result(st, mn_exec(st, &get_stmt, params), out);
}

MNEMO_API int
mnemo_session_list(mnemo_store *st, const mnemo_session_filter *filter,
				   mnemo_sessions **out)
{
	static const mnemo_session_filter defaults;
	char		limit[24];
	char		offset[24];
	const char *params[4];
	int			rc;

	if ((rc = mn_begin(st, out != NULL, "out is NULL")) != MNEMO_OK)
		return rc;
	if (filter == NULL)
		filter = &defaults;
	params[0] = filter->parent_id;
	params[1] = filter->include_inactive ? "false" : "true";
	params[2] = mn_i64_param(limit, filter->limit == 0 ? 100 : filter->limit);
	params[3] = mn_i64_param(offset, filter->offset);
	return sessions_result(st, mn_exec(st, &list_stmt, params), out);
}

/* Run a one-argument statement that returns nothing the caller needs. */
static int
exec_void(mnemo_store *st, const mn_stmt *stmt, const char *id)
{
	const char *params[1];
	PGresult   *res;
	int			rc;

	if ((rc = mn_begin(st, id != NULL, "session id is required")) != MNEMO_OK)
		return rc;
	params[0] = id;
	res = mn_exec(st, stmt, params);
	if (res == NULL)
		return st->errcode;
	PQclear(res);
	return MNEMO_OK;
}

MNEMO_API int
mnemo_session_soft_delete(mnemo_store *st, const char *id)
{
	int			rc = exec_void(st, &soft_delete_stmt, id);

	if (rc == MNEMO_OK)
		mn_emit(st, MNEMO_EVENT_SESSION_CLOSED, id, NULL, 0, NULL, false);
	return rc;
}

MNEMO_API int
mnemo_session_purge(mnemo_store *st, const char *id, int64_t *deleted)
{
	const char *params[1];
	int			rc;

	if ((rc = mn_begin(st, id != NULL, "session id is required")) != MNEMO_OK)
		return rc;
	params[0] = id;
	/* purge_session returns a count, never NULL */
	return mn_i64_result(st, mn_exec(st, &purge_stmt, params), "deleted",
						 "purge_session returned no row", deleted);
}

MNEMO_API int
mnemo_session_watch(mnemo_store *st, const char *id)
{
	return exec_void(st, &watch_stmt, id);
}

MNEMO_API int
mnemo_session_unwatch(mnemo_store *st, const char *id)
{
	return exec_void(st, &unwatch_stmt, id);
}
