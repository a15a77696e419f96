/*
 * checkpoints.c
 *		Named points in a session's log: add_checkpoint, list_checkpoints.
 *
 * A checkpoint is a label on the session's end as it stood when it was
 * added: seq is the session's last seq then (0 for an empty session), so
 * the checkpoint covers seqs 1 .. seq.  add_checkpoint takes the session
 * lock every append takes, so that end is the end in commit order: an
 * append in flight commits before the checkpoint sees the session, or
 * after it and past it.  A transcript import restores a checkpoint at its
 * own seq (not past the end) and time instead.  Labels are unique within
 * their session (MN004), and none is all digits or starts "run:", which
 * fork_session's "at" reads as a seq and a run;
 * the client labels the one it adds after each completed assistant turn
 * "turn-<seq of the assistant message>" with auto = true.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "utils/builtins.h"

#include "mnemo.h"
#include "tenancy/tenancy.h"

static SPIPlanPtr insert_plan;
static SPIPlanPtr list_plan;

PG_FUNCTION_INFO_V1(mnemo_add_checkpoint);
Datum
mnemo_add_checkpoint(PG_FUNCTION_ARGS)
{
	MemoryContext callcxt = CurrentMemoryContext;
	char	   *session_id = MnemoRequireTextArg(fcinfo, 0, "session_id");
	char	   *label = MnemoRequireTextArg(fcinfo, 1, "label");
	bool		is_auto = DatumGetBool(MnemoRequireArg(fcinfo, 2, "auto"));
	Oid			types[6] = {TEXTOID, TEXTOID, INT8OID, INT8OID, BOOLOID, TEXTOID};
	Datum		values[6];
	MnemoSessionLock lock;
	MnemoCall	call;
	Datum		result;
	int64		seq = PG_NARGS() > 3 && !PG_ARGISNULL(3) ? PG_GETARG_INT64(3) : -1;
	int64		created_at = PG_NARGS() > 4 && !PG_ARGISNULL(4) ? PG_GETARG_INT64(4) : -1;

	MnemoCheckId(label, "label");
	/* fork_session reads such an "at" as a seq or a run, never as a label */
	if (strspn(label, "0123456789") == strlen(label) || strncmp(label, "run:", 4) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("checkpoint label \"%s\" reads as a fork point", label),
				 errdetail("fork_session reads a label of digits as a seq and one starting \"run:\" as a run.")));
	if ((PG_NARGS() > 3 && !PG_ARGISNULL(3) && seq < 0) ||
		(PG_NARGS() > 4 && !PG_ARGISNULL(4) && created_at < 0))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a checkpoint's seq and created_at must not be negative")));
	MnemoConnect(&call);
	MnemoLockSession(session_id, 0, true, &lock);
	if (seq > lock.last_seq)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("checkpoint \"%s\" at seq " INT64_FORMAT " is past the end of session \"%s\" (seq " INT64_FORMAT ")",
						label, seq, session_id, lock.last_seq)));
	values[0] = CStringGetTextDatum(session_id);
	values[1] = CStringGetTextDatum(label);
	values[2] = Int64GetDatum(seq >= 0 ? seq : lock.last_seq);
	values[3] = Int64GetDatum(created_at >= 0 ? created_at : MnemoNowMs());
	values[4] = BoolGetDatum(is_auto);
	values[5] = CStringGetTextDatum(lock.tenant);
	MnemoPrepare(&insert_plan,
				 "INSERT INTO mnemo.checkpoints (session_id, label, seq, created_at, auto, tenant) "
				 "VALUES ($1, $2, $3, $4, $5, $6) RETURNING *",
				 6, types);
	MnemoInsert(insert_plan, values, NULL, "checkpoint", label);
	result = MnemoResultRow(fcinfo, callcxt, 0);
	MnemoFinish(&call);
	PG_RETURN_DATUM(result);
}

/* In log order; checkpoints at one seq in the order they were added (ms, then label). */
PG_FUNCTION_INFO_V1(mnemo_list_checkpoints);
Datum
mnemo_list_checkpoints(PG_FUNCTION_ARGS)
{
	char	   *session_id = MnemoRequireTextArg(fcinfo, 0, "session_id");
	Datum		values[2];
	char	   *tenant;
	MnemoCall	call;

	MnemoConnect(&call);
	MnemoCheckSession(session_id, false, &tenant, NULL);
	values[0] = CStringGetTextDatum(session_id);
	values[1] = CStringGetTextDatum(tenant);
	MnemoPrepare(&list_plan,
				 "SELECT * FROM mnemo.checkpoints WHERE session_id = $1 AND tenant = $2 "
				 "ORDER BY seq, created_at, label",
				 2, (Oid[]) {TEXTOID, TEXTOID});
	MnemoExecuteResult(fcinfo, list_plan, values, NULL, true);
	MnemoFinish(&call);
	return (Datum) 0;
}
