/*
 * runs.c
 *		Runs, with cubepi's checkpointer semantics: claim_run, complete_run
 *		and snapshot.
 *
 * A run is one agent invocation on a session, named by the caller.  It is
 * claimed once (a second claim is MN007 while it is in flight, MN008 once
 * it completed), completed once (complete_run is idempotent and returns the
 * run as it completed; MN009 if it was never claimed), and its messages
 * carry its id (append_message's run_id, append_messages' "run_id").
 * Completing a run gives it the session's next completion_seq: 1, 2, ...
 * in the order runs completed, whatever order they were claimed or wrote
 * in.  snapshot(session, run) is what a fork after that run takes: the
 * messages without a run and those of the runs completed at or before it,
 * in seq order; a run still in flight, interleaved or not, is left out.
 *
 * Locking: claim and complete take the session lock every append takes
 * (MnemoLockSession), then decide on the run's row as committed: of two
 * processes claiming one run id, one waits for the other's commit and then
 * sees its row, so exactly one wins; completion_seq is max + 1 under the
 * same lock, so it is dense and in commit order.  The claim commits with
 * the caller's transaction: call it alone (autocommit) so it does not hold
 * the session's appends back.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "funcapi.h"
#include "utils/builtins.h"

#include "mnemo.h"
#include "tenancy/tenancy.h"
#include "reads/reads.h"
#include "lifecycle/lifecycle.h"

static SPIPlanPtr find_plan;
static SPIPlanPtr claim_plan;
static SPIPlanPtr complete_plan;
static SPIPlanPtr snapshot_plan;

/*
 * The run of tenant's session into SPI_tuptable (0 or 1 row), with a fresh snapshot when
 * fresh (after waiting for the session lock).  Returns whether it exists;
 * *completion_seq is its completion_seq, 0 while it is in flight.
 */
bool
MnemoFindRun(const char *session_id, const char *tenant, const char *run_id, bool fresh,
			 int64 *completion_seq)
{
	Datum		values[3];

	values[0] = CStringGetTextDatum(session_id);
	values[1] = CStringGetTextDatum(run_id);
	values[2] = CStringGetTextDatum(tenant);
	MnemoPrepare(&find_plan,
				 "SELECT * FROM mnemo.runs WHERE session_id = $1 AND tenant = $3 AND run_id = $2",
				 3, (Oid[]) {TEXTOID, TEXTOID, TEXTOID});
	*completion_seq = 0;
	if (MnemoExecute(find_plan, values, NULL, !fresh, 1) != 1)
		return false;
	*completion_seq = MnemoGetInt64(0, SPI_fnumber(SPI_tuptable->tupdesc, "completion_seq"), NULL);
	return true;
}

PG_FUNCTION_INFO_V1(mnemo_claim_run);
Datum
mnemo_claim_run(PG_FUNCTION_ARGS)
{
	MemoryContext callcxt = CurrentMemoryContext;
	char	   *session_id = MnemoRequireTextArg(fcinfo, 0, "session_id");
	char	   *run_id = MnemoRequireTextArg(fcinfo, 1, "run_id");
	Oid			types[4] = {TEXTOID, TEXTOID, INT8OID, TEXTOID};
	Datum		values[4];
	MnemoSessionLock lock;
	MnemoCall	call;
	Datum		result;
	int64		completion_seq;

	MnemoCheckId(run_id, "run_id");
	MnemoConnect(&call);
	MnemoLockSession(session_id, 0, true, &lock);
	if (MnemoFindRun(session_id, lock.tenant, run_id, true, &completion_seq))
	{
		if (completion_seq > 0)
			ereport(ERROR,
					(errcode(ERRCODE_MNEMO_RUN_ALREADY_COMPLETED),
					 errmsg("run \"%s\" of session \"%s\" is already completed",
							run_id, session_id),
					 errhint("A run id is used once; start a new run with a new id.")));
		ereport(ERROR,
				(errcode(ERRCODE_MNEMO_RUN_ALREADY_CLAIMED),
				 errmsg("run \"%s\" of session \"%s\" is already claimed",
						run_id, session_id),
				 errdetail("Another process claimed it and has not completed it.")));
	}
	values[0] = CStringGetTextDatum(session_id);
	values[1] = CStringGetTextDatum(run_id);
	values[2] = Int64GetDatum(MnemoNowMs());
	values[3] = CStringGetTextDatum(lock.tenant);
	MnemoPrepare(&claim_plan,
				 "INSERT INTO mnemo.runs (session_id, run_id, claimed_at, tenant) "
				 "VALUES ($1, $2, $3, $4) RETURNING *",
				 4, types);
	MnemoInsert(claim_plan, values, NULL, "run", run_id);
	result = MnemoResultRow(fcinfo, callcxt, 0);
	MnemoFinish(&call);
	PG_RETURN_DATUM(result);
}

PG_FUNCTION_INFO_V1(mnemo_complete_run);
Datum
mnemo_complete_run(PG_FUNCTION_ARGS)
{
	MemoryContext callcxt = CurrentMemoryContext;
	char	   *session_id = MnemoRequireTextArg(fcinfo, 0, "session_id");
	char	   *run_id = MnemoRequireTextArg(fcinfo, 1, "run_id");
	Oid			types[4] = {TEXTOID, TEXTOID, INT8OID, TEXTOID};
	Datum		values[4];
	MnemoSessionLock lock;
	MnemoCall	call;
	Datum		result;
	int64		completion_seq;

	MnemoConnect(&call);
	MnemoLockSession(session_id, 0, true, &lock);
	values[0] = CStringGetTextDatum(session_id);
	values[1] = CStringGetTextDatum(run_id);
	values[2] = Int64GetDatum(MnemoNowMs());
	values[3] = CStringGetTextDatum(lock.tenant);
	MnemoPrepare(&complete_plan,
				 "UPDATE mnemo.runs SET completed_at = $3, completion_seq = "
				 "(SELECT coalesce(max(r.completion_seq), 0) + 1 FROM mnemo.runs r "
				 "WHERE r.session_id = $1 AND r.tenant = $4) "
				 "WHERE session_id = $1 AND tenant = $4 AND run_id = $2 AND completed_at IS NULL "
				 "RETURNING *",
				 4, types);
	/* completed already: the row as it completed, unchanged */
	if (MnemoExecute(complete_plan, values, NULL, false, 0) != 1 &&
		!MnemoFindRun(session_id, lock.tenant, run_id, true, &completion_seq))
		ereport(ERROR,
				(errcode(ERRCODE_MNEMO_RUN_NOT_CLAIMED),
				 errmsg("run \"%s\" of session \"%s\" was never claimed", run_id, session_id),
				 errhint("Claim it with claim_run before it writes.")));
	result = MnemoResultRow(fcinfo, callcxt, 0);
	MnemoFinish(&call);
	PG_RETURN_DATUM(result);
}

/*
 * Summary messages are left out: they are derived, carry no run, and may
 * cover messages of runs outside the snapshot.
 */
PG_FUNCTION_INFO_V1(mnemo_snapshot);
Datum
mnemo_snapshot(PG_FUNCTION_ARGS)
{
	char	   *session_id = MnemoRequireTextArg(fcinfo, 0, "session_id");
	char	   *run_id = MnemoRequireTextArg(fcinfo, 1, "after_run_id");
	MnemoCall	call;
	MnemoLine	line;
	int64		cutoff;
	bool		claimed;
	int			i;

	MnemoConnect(&call);
	MnemoReadLine(session_id, PG_INT64_MAX, false, false, &line);
	claimed = MnemoFindRun(session_id, line.tenant, run_id, false, &cutoff);
	if (cutoff == 0)
		ereport(ERROR,
				(errcode(ERRCODE_MNEMO_RUN_NOT_COMPLETED),
				 errmsg("run \"%s\" of session \"%s\" is not completed", run_id, session_id),
				 claimed ? errdetail("It is still in flight; a snapshot is taken after a completed run.")
				 : errdetail("It was never claimed; a snapshot is taken after a completed run.")));
	/*
	 * Along the live line (lineage.c): a fork's inherited messages are all
	 * in (the runs are its own), its own ones by their run.  Every segment
	 * is of the line's tenant ($6).
	 */
	MnemoPrepare(&snapshot_plan,
				 "SELECT " MNEMO_MESSAGE_FIELDS " FROM mnemo.messages m "
				 "WHERE m.session_id = $1 AND m.tenant = $6 AND m.seq >= $3 AND m.seq <= $4 "
				 "AND NOT m.is_summary "
				 "AND (NOT $5 OR m.run_id IS NULL OR "
				 "EXISTS (SELECT FROM mnemo.runs r WHERE r.session_id = $1 AND r.tenant = $6 "
				 "AND r.run_id = m.run_id AND r.completion_seq <= $2)) "
				 "ORDER BY m.seq",
				 6, (Oid[]) {TEXTOID, INT8OID, INT8OID, INT8OID, BOOLOID, TEXTOID});
	InitMaterializedSRF(fcinfo, 0);
	for (i = 0; i < line.nsegs; i++)
	{
		MnemoSegment *seg = &line.segs[i];
		int64		end = Min(seg->to, line.last_seq);	/* the own segment's is open */
		int64		from;

		for (from = seg->from; from <= end; from += MNEMO_READ_CHUNK)
		{
			int64		to = end - from < MNEMO_READ_CHUNK ? end : from + MNEMO_READ_CHUNK - 1;
			uint64		n;

			n = MnemoExecute(snapshot_plan,
							 (Datum[]) {CStringGetTextDatum(seg->owner), Int64GetDatum(cutoff),
							 Int64GetDatum(from), Int64GetDatum(to),
							 BoolGetDatum(i >= line.ninherited), CStringGetTextDatum(line.tenant)},
							 NULL, true, 0);
			MnemoPutMessagesWithParts(fcinfo, SPI_tuptable, n, seg->owner, line.tenant);
		}
	}
	MnemoFinish(&call);
	return (Datum) 0;
}
