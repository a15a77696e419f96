/*
 * state.c
 *		A session's state, Agentium's updateState / getState: update_state
 *		and get_state.
 *
 * The state is a JSON object on the session row.  update_state merges a
 * patch into it as jsonb || does: each top-level key of the patch replaces
 * the state's (a JSON null included), the others stay.  The merge is one
 * UPDATE of the row, whose lock orders concurrent patches: each is applied
 * to the state the one before it committed (READ COMMITTED rechecks the
 * newest row version), so none is lost.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"

#include "mnemo.h"
#include "tenancy/tenancy.h"

static SPIPlanPtr update_plan;
static SPIPlanPtr get_plan;

/* The merged state. */
PG_FUNCTION_INFO_V1(mnemo_update_state);
Datum
mnemo_update_state(PG_FUNCTION_ARGS)
{
	char	   *session_id = MnemoRequireTextArg(fcinfo, 0, "session_id");
	Jsonb	   *patch = DatumGetJsonbP(MnemoRequireArg(fcinfo, 1, "patch"));
	Oid			types[4] = {TEXTOID, JSONBOID, INT8OID, TEXTOID};
	Datum		values[4];
	Datum		state;
	bool		isnull;
	char	   *tenant;
	MnemoCall	call;

	if (!JB_ROOT_IS_OBJECT(patch) || JB_ROOT_IS_SCALAR(patch))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("patch must be a JSON object")));
	MnemoCheckJsonDepth(patch, "patch");
	MnemoConnect(&call);
	MnemoCheckSessionActive(session_id, &tenant, NULL);
	values[0] = CStringGetTextDatum(session_id);
	values[1] = JsonbPGetDatum(patch);
	values[2] = Int64GetDatum(MnemoNowMs());
	values[3] = CStringGetTextDatum(tenant);
	MnemoPrepare(&update_plan,
				 "UPDATE mnemo.sessions SET state = state || $2, "
				 "updated_at = $3 WHERE id = $1 AND tenant = $4 RETURNING state",
				 4, types);
	/* purged since the check */
	if (MnemoExecute(update_plan, values, NULL, false, 0) != 1)
		ereport(ERROR,
				(errcode(ERRCODE_MNEMO_SESSION_NOT_FOUND),
				 errmsg("session \"%s\" does not exist", session_id)));
	state = SPI_datumTransfer(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1,
											&isnull),
							  false, -1);
	MnemoFinish(&call);
	PG_RETURN_DATUM(state);
}

PG_FUNCTION_INFO_V1(mnemo_get_state);
Datum
mnemo_get_state(PG_FUNCTION_ARGS)
{
	char	   *session_id = MnemoRequireTextArg(fcinfo, 0, "session_id");
	Datum		values[2];
	Datum		state;
	bool		isnull;
	char	   *tenant;
	MnemoCall	call;

	MnemoConnect(&call);
	MnemoCheckSession(session_id, false, &tenant, NULL);
	values[0] = CStringGetTextDatum(session_id);
	values[1] = CStringGetTextDatum(tenant);
	MnemoPrepare(&get_plan, "SELECT state FROM mnemo.sessions WHERE id = $1 AND tenant = $2",
				 2, (Oid[]) {TEXTOID, TEXTOID});
	MnemoExecute(get_plan, values, NULL, true, 1);
	state = SPI_datumTransfer(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1,
											&isnull),
							  false, -1);
	MnemoFinish(&call);
	PG_RETURN_DATUM(state);
}
