/*
 * sessions.c
 *		Session lifecycle: create_session, get_session, get_or_create_session,
 *		list_sessions, soft_delete_session, watch, unwatch.
 *
 * An append writes no version of the session row (tenancy/session_lock.c),
 * so the functions here read last_seq and updated_at from the messages
 * (MNEMO_SESSION_COLUMNS).  A session of a tenant the caller may not see is
 * reported exactly as a missing one (MN001).  A session id is unique within
 * its tenant: a new session is its caller's tenant's (mnemo.tenant, or the
 * calling role), MN004 only if that tenant has the id, whoever else does.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"

#include "mnemo.h"
#include "tenancy/tenancy.h"
#include "lifecycle/lifecycle.h"

#define SESSION_INSERT \
	"INSERT INTO mnemo.sessions (id, model_id, provider_id, agent, parent_id, title, " \
	"metadata, system_prompt, created_at, updated_at, tenant) " \
	"VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $11, $10) " \
	"ON CONFLICT (id, tenant) DO NOTHING"

static SPIPlanPtr insert_plan;
static SPIPlanPtr select_plans[2];
static SPIPlanPtr list_plan;
static SPIPlanPtr list_parent_plan;
static SPIPlanPtr parent_tenant_plan;
static SPIPlanPtr soft_delete_plan;
static SPIPlanPtr watch_plan;

/* list_sessions' tenant filter (a dropped tenant's sessions are listed to superusers only) */
#define LIST_VISIBLE MNEMO_TENANT_VISIBLE_SQL("$5", "$6")

/* the column of mnemo.session that holds the tenant */
#define SESSION_TENANT_COL 15

#define SESSION_SELECT \
	"SELECT " MNEMO_SESSION_COLUMNS("s", "$1") " FROM mnemo.sessions s WHERE s.id = $1"

/*
 * Load the row of the session the caller means by session_id into
 * SPI_tuptable and return its row number there (MnemoReadSession: MN001,
 * MN013).  read_only = false takes a fresh snapshot, to see a row another
 * transaction committed while this one waited.
 */
static uint64
SelectSession(const char *session_id, bool read_only)
{
	return MnemoReadSession(select_plans, SESSION_SELECT, session_id, read_only,
							SESSION_TENANT_COL, 0, false);
}

/* Load tenant's session session_id into SPI_tuptable; whether it exists. */
static bool
SelectOwnSession(const char *session_id, const char *tenant, bool read_only)
{
	return MnemoSessionRows(select_plans, SESSION_SELECT, session_id, tenant, read_only) == 1;
}

/*
 * Insert a session from arguments 0..7 of a create_session-shaped call (id,
 * model_id, provider_id, agent, parent_id, title, metadata, system_prompt)
 * and create_session's created_at (argument 8).
 * It is tenant's (MnemoCallerTenant()'s), and so must be its parent: MN001
 * if tenant has no session of parent_id.  Leaves the new row in
 * SPI_tuptable and returns true, or returns false if the tenant has a
 * session with this id already.
 */
static bool
InsertSession(FunctionCallInfo fcinfo, const char *id, const char *tenant)
{
	Oid			types[11] = {TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID,
	JSONBOID, TEXTOID, INT8OID, TEXTOID, INT8OID};
	Datum		values[11];
	char		nulls[11];
	int64		now = MnemoNowMs();
	int			i;

	MnemoCheckId(id, "session id");
	if (!PG_ARGISNULL(4) &&
		!SelectOwnSession(text_to_cstring(PG_GETARG_TEXT_PP(4)), tenant, true))
		ereport(ERROR,
				(errcode(ERRCODE_MNEMO_SESSION_NOT_FOUND),
				 errmsg("session \"%s\" does not exist", text_to_cstring(PG_GETARG_TEXT_PP(4)))));
	if (!PG_ARGISNULL(6) && !JB_ROOT_IS_OBJECT(PG_GETARG_JSONB_P(6)))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("session metadata must be a JSON object")));
	if (!PG_ARGISNULL(6))
		MnemoCheckJsonDepth(PG_GETARG_JSONB_P(6), "session metadata");

	values[0] = CStringGetTextDatum(id);
	nulls[0] = ' ';
	for (i = 1; i < 8; i++)
	{
		nulls[i] = PG_ARGISNULL(i) ? 'n' : ' ';
		values[i] = PG_ARGISNULL(i) ? (Datum) 0 : PG_GETARG_DATUM(i);
	}
	/* NOT NULL columns: a NULL argument means the column's default */
	if (PG_ARGISNULL(1))
		values[1] = CStringGetTextDatum(""), nulls[1] = ' ';
	if (PG_ARGISNULL(2))
		values[2] = CStringGetTextDatum(""), nulls[2] = ' ';
	if (PG_ARGISNULL(3))
		values[3] = CStringGetTextDatum("default"), nulls[3] = ' ';
	if (PG_ARGISNULL(7))
		values[7] = CStringGetTextDatum(""), nulls[7] = ' ';
	/* create_session's created_at (an import restoring a session); get_or_create_session has none */
	if (PG_NARGS() > 8 && !PG_ARGISNULL(8))
	{
		if (PG_GETARG_INT64(8) < 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("created_at must not be negative")));
		values[8] = PG_GETARG_DATUM(8);
	}
	else
		values[8] = Int64GetDatum(now);
	nulls[8] = ' ';
	values[9] = CStringGetTextDatum(tenant);
	nulls[9] = ' ';
	/* the write's own time, also for a restored session: "last written" sorts an import first */
	values[10] = Int64GetDatum(now);
	nulls[10] = ' ';

	/*
	 * The tenant's channel exists before its first session, so that watch
	 * and the notifying writes only read mnemo.tenants.  Under Citus that is
	 * a reference table, and a write to it leaves the session's shard, which
	 * a function delegated with force_delegation may not (doc/scale-out.md);
	 * create_session itself is not delegated.
	 */
	(void) MnemoTenantChannel(TextDatumGetCString(values[9]));
	MnemoPrepare(&insert_plan, SESSION_INSERT, 11, types);
	if (MnemoExecute(insert_plan, values, nulls, false, 0) != 1)
		return false;
	/* read back as the functions return it: no subquery in the RETURNING (Citus) */
	return SelectOwnSession(id, tenant, false);
}

PG_FUNCTION_INFO_V1(mnemo_create_session);
Datum
mnemo_create_session(PG_FUNCTION_ARGS)
{
	MemoryContext callcxt = CurrentMemoryContext;
	char	   *id = PG_ARGISNULL(0) ? MnemoNewId("sess") : text_to_cstring(PG_GETARG_TEXT_PP(0));
	Datum		result;
	MnemoCall	call;

	MnemoConnect(&call);
	if (!InsertSession(fcinfo, id, MnemoCallerTenant()))
		ereport(ERROR,
				(errcode(ERRCODE_MNEMO_DUPLICATE_ID),
				 errmsg("session \"%s\" already exists", id)));
	result = MnemoResultRow(fcinfo, callcxt, 0);
	MnemoFinish(&call);
	PG_RETURN_DATUM(result);
}

PG_FUNCTION_INFO_V1(mnemo_get_session);
Datum
mnemo_get_session(PG_FUNCTION_ARGS)
{
	MemoryContext callcxt = CurrentMemoryContext;
	char	   *id = MnemoRequireTextArg(fcinfo, 0, "session id");
	Datum		result;
	MnemoCall	call;

	MnemoConnect(&call);
	result = MnemoResultRow(fcinfo, callcxt, SelectSession(id, true));
	MnemoFinish(&call);
	PG_RETURN_DATUM(result);
}

/*
 * The caller's tenant's session (mnemo.tenant's, or the calling role's), or
 * a new one of that tenant: the tenant create_session would write it as,
 * whatever sessions of that id other tenants have.  Two callers racing on a
 * new id both get the one row: ON CONFLICT waits for the winner, and the
 * loser's next statement sees it.
 */
PG_FUNCTION_INFO_V1(mnemo_get_or_create_session);
Datum
mnemo_get_or_create_session(PG_FUNCTION_ARGS)
{
	MemoryContext callcxt = CurrentMemoryContext;
	char	   *id = MnemoRequireTextArg(fcinfo, 0, "session id");
	Datum		result;
	char	   *tenant;
	MnemoCall	call;

	MnemoConnect(&call);
	tenant = MnemoCallerTenant();
	if (!SelectOwnSession(id, tenant, false) && !InsertSession(fcinfo, id, tenant) &&
		!SelectOwnSession(id, tenant, false))
		elog(ERROR, "session \"%s\" vanished during get_or_create_session", id);
	result = MnemoResultRow(fcinfo, callcxt, 0);
	MnemoFinish(&call);
	PG_RETURN_DATUM(result);
}

/*
 * Newest first: created_at, then id (ids are time-ordered, so sessions made
 * in one ms keep their creation order when mnemo made their ids); the parent
 * filter and active_only both apply when given.  Only the sessions of tenants
 * the caller may see: the statement runs as the owner, so it is given the
 * caller ($5) and whether the caller sees every tenant ($6).  A parent id
 * names the parent the caller means, as every by-id call does
 * (MnemoCheckSessionRow: MN013 when it sees several and none is its
 * tenant's), and the children are of that parent's tenant ($7); a parent
 * it sees none of (never created, or purged) lists the children of that
 * parent id it may see.
 */
PG_FUNCTION_INFO_V1(mnemo_list_sessions);
Datum
mnemo_list_sessions(PG_FUNCTION_ARGS)
{
	Oid			types[7] = {BOOLOID, INT4OID, INT4OID, TEXTOID, OIDOID, BOOLOID, TEXTOID};
	Datum		values[7];
	char		nulls[7] = {' ', ' ', ' ', ' ', ' ', ' ', 'n'};
	Oid			caller = GetUserId();
	MnemoCall	call;
	bool		active_only = DatumGetBool(MnemoRequireArg(fcinfo, 1, "active_only"));
	int32		limit = DatumGetInt32(MnemoRequireArg(fcinfo, 2, "limit"));
	int32		offset = DatumGetInt32(MnemoRequireArg(fcinfo, 3, "offset"));

	if (limit < 0 || offset < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("limit and offset must not be negative")));
	values[0] = BoolGetDatum(active_only);
	values[1] = Int32GetDatum(limit);
	values[2] = Int32GetDatum(offset);
	values[3] = PG_ARGISNULL(0) ? (Datum) 0 : PG_GETARG_DATUM(0);
	values[4] = ObjectIdGetDatum(caller);
	values[5] = BoolGetDatum(superuser_arg(caller) || has_bypassrls_privilege(caller));

	MnemoConnect(&call);
	if (PG_ARGISNULL(0))
	{
		MnemoPrepare(&list_plan,
					 "SELECT " MNEMO_SESSION_COLUMNS("s", "s.id") " FROM mnemo.sessions s "
					 "WHERE (s.is_active OR NOT $1) AND " LIST_VISIBLE
					 " ORDER BY s.created_at DESC, s.id DESC LIMIT $2 OFFSET $3",
					 6, types);
		MnemoExecuteResult(fcinfo, list_plan, values, "   n  ", true);
	}
	else
	{
		uint64		n;

		MnemoPrepare(&parent_tenant_plan,
					 "SELECT tenant, is_active FROM mnemo.sessions "
					 "WHERE id = $4 AND " LIST_VISIBLE,
					 6, types);
		n = MnemoExecute(parent_tenant_plan, values, NULL, true, 0);
		if (n > 0)
		{
			uint64		row = MnemoCheckSessionRow(text_to_cstring(PG_GETARG_TEXT_PP(0)),
												   n, 1, 2, false);

			values[6] = CStringGetTextDatum(MnemoGetText(row, 1, NULL));
			nulls[6] = ' ';
		}
		MnemoPrepare(&list_parent_plan,
					 "SELECT " MNEMO_SESSION_COLUMNS("s", "s.id") " FROM mnemo.sessions s "
					 "WHERE s.parent_id = $4 AND ($7::text IS NULL OR s.tenant = $7) "
					 "AND (s.is_active OR NOT $1) AND " LIST_VISIBLE
					 " ORDER BY s.created_at DESC, s.id DESC LIMIT $2 OFFSET $3",
					 7, types);
		MnemoExecuteResult(fcinfo, list_parent_plan, values, nulls, true);
	}
	MnemoFinish(&call);
	return (Datum) 0;
}

PG_FUNCTION_INFO_V1(mnemo_soft_delete_session);
Datum
mnemo_soft_delete_session(PG_FUNCTION_ARGS)
{
	Oid			types[3] = {TEXTOID, INT8OID, TEXTOID};
	Datum		values[3];
	char	   *id = MnemoRequireTextArg(fcinfo, 0, "session id");
	char	   *tenant;
	MnemoCall	call;

	values[0] = CStringGetTextDatum(id);
	values[1] = Int64GetDatum(MnemoNowMs());
	MnemoConnect(&call);
	MnemoCheckSession(id, true, &tenant, NULL);
	values[2] = CStringGetTextDatum(tenant);
	MnemoPrepare(&soft_delete_plan,
				 "UPDATE mnemo.sessions SET is_active = false, updated_at = $2 "
				 "WHERE id = $1 AND tenant = $3",
				 3, types);
	if (MnemoExecute(soft_delete_plan, values, NULL, false, 0) != 1)
		ereport(ERROR,
				(errcode(ERRCODE_MNEMO_SESSION_NOT_FOUND),
				 errmsg("session \"%s\" does not exist", id)));
	MnemoFinish(&call);
	PG_RETURN_VOID();
}

/* Set the watched flag; returns the session's tenant. */
static char *
SetWatched(FunctionCallInfo fcinfo, bool watched)
{
	Oid			types[3] = {TEXTOID, BOOLOID, TEXTOID};
	Datum		values[3];
	char	   *id = MnemoRequireTextArg(fcinfo, 0, "session_id");
	char	   *tenant;

	MnemoCheckSession(id, true, &tenant, NULL);
	values[0] = CStringGetTextDatum(id);
	values[1] = BoolGetDatum(watched);
	values[2] = CStringGetTextDatum(tenant);
	MnemoPrepare(&watch_plan,
				 "UPDATE mnemo.sessions SET watched = $2 WHERE id = $1 AND tenant = $3",
				 3, types);
	if (MnemoExecute(watch_plan, values, NULL, false, 0) != 1)
		ereport(ERROR,
				(errcode(ERRCODE_MNEMO_SESSION_NOT_FOUND),
				 errmsg("session \"%s\" does not exist", id)));
	return tenant;
}

/* Returns the channel to LISTEN on: its tenant's (see notify.c). */
PG_FUNCTION_INFO_V1(mnemo_watch);
Datum
mnemo_watch(PG_FUNCTION_ARGS)
{
	MemoryContext callcxt = CurrentMemoryContext;
	MnemoCall	call;
	char	   *channel;
	MemoryContext oldcxt;

	MnemoConnect(&call);
	channel = MnemoTenantChannel(SetWatched(fcinfo, true));
	oldcxt = MemoryContextSwitchTo(callcxt);
	channel = pstrdup(channel);
	MemoryContextSwitchTo(oldcxt);
	MnemoFinish(&call);
	PG_RETURN_TEXT_P(cstring_to_text(channel));
}

PG_FUNCTION_INFO_V1(mnemo_unwatch);
Datum
mnemo_unwatch(PG_FUNCTION_ARGS)
{
	MnemoCall	call;

	MnemoConnect(&call);
	(void) SetWatched(fcinfo, false);
	MnemoFinish(&call);
	PG_RETURN_VOID();
}
