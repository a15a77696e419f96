/*
 * pending.c
 *		The pending human-in-the-loop request of a session, cubepi's
 *		save_pending_request / load_pending: set_pending_request,
 *		clear_pending_request, load_pending_request.
 *
 * A session has at most one pending request, a JSON object, with the id of
 * the run that asked it.  Each call is one statement on one row
 * ((session_id, tenant) is its key), so a reader never sees the request of one set
 * with the run id of another: the two are written and read together.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"

#include "mnemo.h"
#include "tenancy/tenancy.h"

static SPIPlanPtr set_plan;
static SPIPlanPtr clear_plan;
static SPIPlanPtr load_plan;

PG_FUNCTION_INFO_V1(mnemo_set_pending_request);
Datum
mnemo_set_pending_request(PG_FUNCTION_ARGS)
{
	char	   *session_id = MnemoRequireTextArg(fcinfo, 0, "session_id");
	Jsonb	   *request = DatumGetJsonbP(MnemoRequireArg(fcinfo, 1, "request"));
	char	   *run_id = MnemoTextArgOrNull(fcinfo, 2);
	Oid			types[5] = {TEXTOID, JSONBOID, TEXTOID, INT8OID, TEXTOID};
	Datum		values[5];
	char		nulls[5] = "     ";
	char	   *tenant;
	MnemoCall	call;

	if (!JB_ROOT_IS_OBJECT(request) || JB_ROOT_IS_SCALAR(request))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("request must be a JSON object")));
	MnemoCheckJsonDepth(request, "request");
	if (run_id != NULL)
		MnemoCheckId(run_id, "run_id");
	MnemoConnect(&call);
	MnemoCheckSessionActive(session_id, &tenant, NULL);
	values[0] = CStringGetTextDatum(session_id);
	values[1] = JsonbPGetDatum(request);
	values[2] = run_id ? CStringGetTextDatum(run_id) : (Datum) 0;
	nulls[2] = run_id ? ' ' : 'n';
	values[3] = Int64GetDatum(MnemoNowMs());
	values[4] = CStringGetTextDatum(tenant);
	MnemoPrepare(&set_plan,
				 "INSERT INTO mnemo.pending_requests (session_id, request, run_id, created_at, tenant) "
				 "VALUES ($1, $2, $3, $4, $5) ON CONFLICT (session_id, tenant) DO UPDATE SET "
				 "request = excluded.request, run_id = excluded.run_id, "
				 "created_at = excluded.created_at",
				 5, types);
	MnemoExecute(set_plan, values, nulls, false, 0);
	MnemoFinish(&call);
	PG_RETURN_VOID();
}

/* Whether a request was pending. */
PG_FUNCTION_INFO_V1(mnemo_clear_pending_request);
Datum
mnemo_clear_pending_request(PG_FUNCTION_ARGS)
{
	char	   *session_id = MnemoRequireTextArg(fcinfo, 0, "session_id");
	Datum		values[2];
	char	   *tenant;
	MnemoCall	call;
	bool		cleared;

	MnemoConnect(&call);
	MnemoCheckSessionActive(session_id, &tenant, NULL);
	values[0] = CStringGetTextDatum(session_id);
	values[1] = CStringGetTextDatum(tenant);
	MnemoPrepare(&clear_plan,
				 "DELETE FROM mnemo.pending_requests WHERE session_id = $1 AND tenant = $2 "
				 "RETURNING 1",
				 2, (Oid[]) {TEXTOID, TEXTOID});
	cleared = MnemoExecute(clear_plan, values, NULL, false, 0) == 1;
	MnemoFinish(&call);
	PG_RETURN_BOOL(cleared);
}

/* The pending row, request and run id together; NULL when none is pending. */
PG_FUNCTION_INFO_V1(mnemo_load_pending_request);
Datum
mnemo_load_pending_request(PG_FUNCTION_ARGS)
{
	MemoryContext callcxt = CurrentMemoryContext;
	char	   *session_id = MnemoRequireTextArg(fcinfo, 0, "session_id");
	Datum		values[2];
	Datum		result = (Datum) 0;
	char	   *tenant;
	MnemoCall	call;
	bool		found;

	MnemoConnect(&call);
	MnemoCheckSession(session_id, false, &tenant, NULL);
	values[0] = CStringGetTextDatum(session_id);
	values[1] = CStringGetTextDatum(tenant);
	MnemoPrepare(&load_plan,
				 "SELECT * FROM mnemo.pending_requests WHERE session_id = $1 AND tenant = $2",
				 2, (Oid[]) {TEXTOID, TEXTOID});
	found = MnemoExecute(load_plan, values, NULL, true, 1) == 1;
	if (found)
		result = MnemoResultRow(fcinfo, callcxt, 0);
	MnemoFinish(&call);
	if (!found)
		PG_RETURN_NULL();
	PG_RETURN_DATUM(result);
}
