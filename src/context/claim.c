/*
 * claim.c
 *		One compactor per session across processes: claim_compaction and
 *		release_compaction, the lease that commit_summary checks when given
 *		a holder.
 *
 * A compaction calls a model for seconds or minutes; an advisory lock or a
 * row lock held across that call would pin a backend and a transaction open
 * the whole time, and a compactor that dies with its connection still open
 * would hold it until the connection times out.  The claim is a row instead,
 * written and committed at once, with an expiry: a holder that crashes loses
 * it when it expires, and a live one renews it by claiming again.  Taking it
 * never waits on appends and appends never wait on it: it holds the session
 * row only FOR KEY SHARE (so that a purge waits for it, and removes it),
 * which an append's update of the row does not conflict with.
 *
 * commit_summary with a holder first locks the claim row FOR SHARE and
 * checks the holder, before it takes the session lock: a claimant that
 * would take the row over waits for that commit, and both orders take the
 * claim row before the session row, so they cannot deadlock.  A holder whose
 * lease expired but that nobody took over still commits.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "mb/pg_wchar.h"
#include "utils/builtins.h"
#include "utils/json.h"

#include "mnemo.h"
#include "tenancy/tenancy.h"
#include "context/context.h"

static SPIPlanPtr holder_before_plan;
static SPIPlanPtr claim_plan;
static SPIPlanPtr release_plan;
static SPIPlanPtr holder_plan;
static SPIPlanPtr current_holder_plan;

PG_FUNCTION_INFO_V1(mnemo_claim_compaction);
Datum
mnemo_claim_compaction(PG_FUNCTION_ARGS)
{
	char	   *session_id = MnemoRequireTextArg(fcinfo, 0, "session_id");
	char	   *holder = MnemoRequireTextArg(fcinfo, 1, "holder");
	int32		ttl_ms = DatumGetInt32(MnemoRequireArg(fcinfo, 2, "ttl_ms"));
	Oid			types[5] = {TEXTOID, TEXTOID, INT8OID, INT8OID, TEXTOID};
	Datum		values[5];
	char	   *tenant;
	bool		watched;
	MnemoCall	call;
	bool		taken;
	bool		fresh;
	char	   *before = NULL;

	MnemoCheckId(holder, "holder");
	if (ttl_ms < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("ttl_ms must be at least 1")));
	MnemoConnect(&call);
	MnemoCheckSessionActive(session_id, &tenant, &watched);
	values[0] = CStringGetTextDatum(session_id);
	values[1] = CStringGetTextDatum(holder);
	values[2] = Int64GetDatum(MnemoNowMs());
	values[3] = Int64GetDatum(ttl_ms);
	values[4] = CStringGetTextDatum(tenant);

	/*
	 * The holder before this claim, read apart from the upsert: Citus routes
	 * neither a CTE nor a subquery in an INSERT's RETURNING (doc/scale-out.md).
	 * FOR UPDATE makes a concurrent claimant of an existing row wait for this
	 * one's commit, then read the holder it committed; over a missing row the
	 * upsert's conflict does the same.
	 */
	MnemoPrepare(&holder_before_plan,
				 "SELECT holder FROM mnemo.compaction_claims "
				 "WHERE session_id = $1 AND tenant = $5 FOR UPDATE",
				 5, types);
	if (MnemoExecute(holder_before_plan, values, NULL, false, 1) == 1)
		before = MnemoGetText(0, 1, NULL);
	MnemoPrepare(&claim_plan,
				 "INSERT INTO mnemo.compaction_claims AS c "
				 "(session_id, holder, claimed_at, expires_at, tenant) "
				 "VALUES ($1, $2, $3, $3 + $4, $5) "
				 "ON CONFLICT (session_id, tenant) DO UPDATE SET holder = excluded.holder, "
				 "claimed_at = CASE WHEN c.holder = excluded.holder "
				 "THEN c.claimed_at ELSE excluded.claimed_at END, "
				 "expires_at = excluded.expires_at "
				 "WHERE c.holder = excluded.holder OR c.expires_at <= excluded.claimed_at",
				 5, types);
	taken = MnemoExecute(claim_plan, values, NULL, false, 0) == 1;
	fresh = taken && (before == NULL || strcmp(before, holder) != 0);

	/* a new holder (not a renewal): a compaction starts */
	if (fresh)
		MnemoNotify(watched, tenant, "compaction_started", session_id, NULL, -1);
	MnemoFinish(&call);
	PG_RETURN_BOOL(taken);
}

/*
 * The compaction's end, for followers in other processes: optional
 * arguments 2..7 (outcome, tokens_before, tokens_after, level, summary_id,
 * error) become a compaction_completed or compaction_failed notification,
 * whose id is the last summary's (as in process).
 * It is sent whether or not the holder still held the claim: the
 * compaction ended either way.
 */
static char *
OutcomeMembers(FunctionCallInfo fcinfo, const char **event)
{
	StringInfoData m;
	char	   *outcome;
	static const char *const ints[] = {"tokens_before", "tokens_after", "level"};

	if (PG_NARGS() < 3 || PG_ARGISNULL(2))
		return NULL;
	outcome = TextDatumGetCString(PG_GETARG_DATUM(2));
	if (strcmp(outcome, "completed") == 0)
		*event = "compaction_completed";
	else if (strcmp(outcome, "failed") == 0)
		*event = "compaction_failed";
	else
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("outcome must be 'completed' or 'failed', not \"%s\"", outcome)));
	initStringInfo(&m);
	for (int i = 0; i < 3; i++)
	{
		int64		v;

		if (PG_NARGS() <= 3 + i || PG_ARGISNULL(3 + i))
			continue;
		v = i < 2 ? PG_GETARG_INT64(3 + i) : PG_GETARG_INT32(3 + i);
		appendStringInfo(&m, ", \"%s\": " INT64_FORMAT, ints[i], v);
	}
	if (PG_NARGS() > 6 && !PG_ARGISNULL(6))
	{
		appendStringInfoString(&m, ", \"summary_id\": ");
		escape_json(&m, TextDatumGetCString(PG_GETARG_DATUM(6)));
	}
	if (PG_NARGS() > 7 && !PG_ARGISNULL(7))
	{
		char	   *error = TextDatumGetCString(PG_GETARG_DATUM(7));

		/* a NOTIFY payload must stay under 8000 bytes */
		error[pg_mbcliplen(error, strlen(error), 1000)] = '\0';
		appendStringInfoString(&m, ", \"error\": ");
		escape_json(&m, error);
	}
	return m.data;
}

PG_FUNCTION_INFO_V1(mnemo_release_compaction);
Datum
mnemo_release_compaction(PG_FUNCTION_ARGS)
{
	char	   *session_id = MnemoRequireTextArg(fcinfo, 0, "session_id");
	char	   *holder = MnemoRequireTextArg(fcinfo, 1, "holder");
	const char *event = NULL;
	char	   *members = OutcomeMembers(fcinfo, &event);
	Oid			types[3] = {TEXTOID, TEXTOID, TEXTOID};
	Datum		values[3];
	char	   *tenant;
	bool		watched;
	MnemoCall	call;
	bool		released;

	MnemoConnect(&call);
	MnemoCheckSession(session_id, false, &tenant, &watched);
	values[0] = CStringGetTextDatum(session_id);
	values[1] = CStringGetTextDatum(holder);
	values[2] = CStringGetTextDatum(tenant);
	MnemoPrepare(&release_plan,
				 "DELETE FROM mnemo.compaction_claims "
				 "WHERE session_id = $1 AND tenant = $3 AND holder = $2 RETURNING 1",
				 3, types);
	released = MnemoExecute(release_plan, values, NULL, false, 0) == 1;
	if (event)
		MnemoNotifyWith(watched, tenant, event, session_id,
						PG_ARGISNULL(6) ? NULL : TextDatumGetCString(PG_GETARG_DATUM(6)), -1,
						members);
	MnemoFinish(&call);
	PG_RETURN_BOOL(released);
}

/*
 * MN006 unless holder holds the claim of tenant's session session_id (the
 * tenant a check of the session resolved), which stays locked FOR SHARE
 * until the caller's transaction ends.  Inside a function's frame.
 */
void
MnemoCheckClaim(const char *session_id, const char *tenant, const char *holder)
{
	Oid			types[3] = {TEXTOID, TEXTOID, TEXTOID};
	Datum		values[3];

	values[0] = CStringGetTextDatum(session_id);
	values[1] = CStringGetTextDatum(holder);
	values[2] = CStringGetTextDatum(tenant);
	MnemoPrepare(&holder_plan,
				 "SELECT 1 FROM mnemo.compaction_claims "
				 "WHERE session_id = $1 AND tenant = $3 AND holder = $2 FOR SHARE",
				 3, types);
	if (MnemoExecute(holder_plan, values, NULL, false, 1) != 1)
		ereport(ERROR,
				(errcode(ERRCODE_MNEMO_INVALID_SWAP),
				 errmsg("invalid context swap in session \"%s\": \"%s\" does not hold its compaction claim",
						session_id, holder),
				 errdetail("Another compactor took the claim over after it expired, or it was never taken.")));
}

/*
 * compaction_holder(session_id): who holds the session's claim now (NULL:
 * nobody), expired or not, so that an operator can end a dead compactor's
 * claim (release_compaction with that holder; `mnemo compact --release`)
 * without reading the table, which application roles cannot.
 */
PG_FUNCTION_INFO_V1(mnemo_compaction_holder);
Datum
mnemo_compaction_holder(PG_FUNCTION_ARGS)
{
	char	   *session_id = MnemoRequireTextArg(fcinfo, 0, "session_id");
	MemoryContext callcxt = CurrentMemoryContext;
	Datum		values[2];
	char	   *holder = NULL;
	char	   *tenant;
	bool		isnull = true;
	MnemoCall	call;

	MnemoConnect(&call);
	MnemoCheckSession(session_id, false, &tenant, NULL);
	MnemoPrepare(&current_holder_plan,
				 "SELECT holder FROM mnemo.compaction_claims WHERE session_id = $1 AND tenant = $2",
				 2, (Oid[]) {TEXTOID, TEXTOID});
	values[0] = CStringGetTextDatum(session_id);
	values[1] = CStringGetTextDatum(tenant);
	if (MnemoExecute(current_holder_plan, values, NULL, true, 1) == 1)
		holder = MnemoGetText(0, 1, &isnull);
	if (!isnull)
		holder = MemoryContextStrdup(callcxt, holder);
	MnemoFinish(&call);
	if (isnull)
		PG_RETURN_NULL();
	PG_RETURN_TEXT_P(cstring_to_text(holder));
}
