/*
 * map_items.c
 *		The items of a durable map, worked by many processes:
 *		claim_map_items, complete_map_item and fail_map_item.
 *
 * A worker claims items under a lease (holder, expiry), calls a model for
 * each, and records the outcome.  Claims skip the rows another claimant has
 * locked (FOR UPDATE SKIP LOCKED), so concurrent workers never wait on each
 * other nor get the same item; a worker that dies loses its items when
 * their lease expires, and the next claim takes them again.
 *
 * Exactly once: an item's outcome is recorded only by the holder of its
 * lease while it is running.  A worker whose lease expired and was taken
 * over gets false back and its result is dropped; one whose lease expired
 * but that nobody took over still records it (the work is done, and
 * nobody else is doing it).  Recording also bumps the map's finished count
 * under its row lock, which numbers the items in completion order and lets
 * exactly one recorder see the map complete and say so (map_completed).
 * Every statement names the session's tenant beside its id (ids are unique
 * only within a tenant), as the session check resolved it.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"

#include "mnemo.h"
#include "tenancy/tenancy.h"
#include "maps/maps.h"

static SPIPlanPtr claim_plan;
static SPIPlanPtr finish_plan;

static const char *const error_kinds[] = {
	"timeout", "validation", "llm_error", "schema_error", "max_turns", "doom_loop", NULL
};

PG_FUNCTION_INFO_V1(mnemo_claim_map_items);
Datum
mnemo_claim_map_items(PG_FUNCTION_ARGS)
{
	char	   *session_id = MnemoRequireTextArg(fcinfo, 0, "session_id");
	char	   *map_id = MnemoRequireTextArg(fcinfo, 1, "map_id");
	char	   *holder = MnemoRequireTextArg(fcinfo, 2, "holder");
	int32		n = DatumGetInt32(MnemoRequireArg(fcinfo, 3, "n"));
	int32		lease_ms = DatumGetInt32(MnemoRequireArg(fcinfo, 4, "lease_ms"));
	Datum		values[7];
	char	   *tenant;
	MnemoCall	call;
	int64		now;

	MnemoCheckId(holder, "holder");
	if (n < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("n must be at least 1")));
	if (lease_ms < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("lease_ms must be at least 1")));
	MnemoConnect(&call);
	MnemoCheckSession(session_id, false, &tenant, NULL);
	now = MnemoNowMs();
	values[0] = CStringGetTextDatum(session_id);
	values[1] = CStringGetTextDatum(map_id);
	values[2] = CStringGetTextDatum(holder);
	values[3] = Int32GetDatum(n);
	values[4] = Int64GetDatum(now);
	values[5] = Int64GetDatum(now + lease_ms);
	values[6] = CStringGetTextDatum(tenant);

	/*
	 * The row lock is taken below the LIMIT, so rows skipped as locked do not
	 * count against n; a row finished or taken since this statement's
	 * snapshot is re-checked on its newest version and left out.  The CTE
	 * runs once: as a subquery a nested loop would rescan it, and the rescan
	 * would skip the rows this statement already updated and lock more.
	 */
	MnemoPrepare(&claim_plan,
				 "WITH c AS MATERIALIZED (SELECT ordinal FROM mnemo.map_items "
				 "WHERE session_id = $1 AND tenant = $7 AND map_id = $2 "
				 "AND (state = 'pending' OR (state = 'running' AND lease_expires <= $5)) "
				 "ORDER BY ordinal LIMIT $4 FOR UPDATE SKIP LOCKED) "
				 "UPDATE mnemo.map_items i SET state = 'running', lease_holder = $3, "
				 "lease_expires = $6, claims = i.claims + 1 "
				 "FROM c WHERE i.session_id = $1 AND i.tenant = $7 AND i.map_id = $2 "
				 "AND i.ordinal = c.ordinal "
				 "RETURNING i.*",
				 7, (Oid[]) {TEXTOID, TEXTOID, TEXTOID, INT4OID, INT8OID, INT8OID, TEXTOID});
	if (MnemoExecuteResult(fcinfo, claim_plan, values, NULL, false) == 0)
		MnemoCheckMapExists(session_id, tenant, map_id);
	MnemoFinish(&call);
	return (Datum) 0;
}

/*
 * Record item ordinal's outcome as state ("done" with result, or "failed"
 * with error_kind and error) if holder holds it: its completion_seq, or
 * NULL (*recorded false) if not.  Arguments 0..3 are
 * session_id, map_id, ordinal, holder; the rest are the caller's.
 */
static Datum
FinishItem(FunctionCallInfo fcinfo, const char *state, Jsonb *result, const char *error_kind,
		   const char *error, int attempts_arg, int sub_session_arg, bool *recorded)
{
	char	   *session_id = MnemoRequireTextArg(fcinfo, 0, "session_id");
	char	   *map_id = MnemoRequireTextArg(fcinfo, 1, "map_id");
	int32		ordinal = DatumGetInt32(MnemoRequireArg(fcinfo, 2, "ordinal"));
	char	   *holder = MnemoRequireTextArg(fcinfo, 3, "holder");
	int32		attempts = DatumGetInt32(MnemoRequireArg(fcinfo, attempts_arg, "attempts"));
	char	   *sub_session_id = MnemoTextArgOrNull(fcinfo, sub_session_arg);
	Datum		values[12];
	char		nulls[12] = "            ";
	char	   *tenant;
	bool		watched;
	MnemoCall	call;
	int64		finished = 0;
	StringInfoData members;

	if (attempts < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("attempts must be 0 or more")));
	if (sub_session_id)
		MnemoCheckId(sub_session_id, "sub_session_id");
	MnemoConnect(&call);
	MnemoCheckSession(session_id, false, &tenant, &watched);
	values[0] = CStringGetTextDatum(session_id);
	values[1] = CStringGetTextDatum(map_id);
	values[2] = Int32GetDatum(ordinal);
	values[3] = CStringGetTextDatum(holder);
	values[4] = CStringGetTextDatum(state);
	values[5] = result ? JsonbPGetDatum(result) : (Datum) 0;
	nulls[5] = result ? ' ' : 'n';
	values[6] = error_kind ? CStringGetTextDatum(error_kind) : (Datum) 0;
	nulls[6] = error_kind ? ' ' : 'n';
	values[7] = error ? CStringGetTextDatum(error) : (Datum) 0;
	nulls[7] = error ? ' ' : 'n';
	values[8] = Int32GetDatum(attempts);
	values[9] = sub_session_id ? CStringGetTextDatum(sub_session_id) : (Datum) 0;
	nulls[9] = sub_session_id ? ' ' : 'n';
	values[10] = Int64GetDatum(MnemoNowMs());
	values[11] = CStringGetTextDatum(tenant);

	/*
	 * The item's row lock first, then the map's: every recorder takes them
	 * in that order, and claims never wait on the map row.
	 */
	MnemoPrepare(&finish_plan,
				 "WITH it AS (SELECT ordinal FROM mnemo.map_items "
				 "WHERE session_id = $1 AND tenant = $12 AND map_id = $2 AND ordinal = $3 "
				 "AND state = 'running' AND lease_holder = $4 FOR UPDATE), "
				 "m AS (UPDATE mnemo.maps SET finished = finished + 1, "
				 "completed_at = CASE WHEN finished + 1 = item_count THEN $11 END "
				 "WHERE session_id = $1 AND tenant = $12 AND map_id = $2 AND EXISTS (SELECT FROM it) "
				 "RETURNING finished, item_count) "
				 "UPDATE mnemo.map_items i SET state = $5, result = $6, error_kind = $7, "
				 "error = $8, attempts = $9, sub_session_id = $10, completed_at = $11, "
				 "lease_holder = NULL, lease_expires = NULL, completion_seq = m.finished "
				 "FROM m WHERE i.session_id = $1 AND i.tenant = $12 AND i.map_id = $2 "
				 "AND i.ordinal = $3 "
				 "RETURNING m.finished, m.item_count",
				 12, (Oid[]) {TEXTOID, TEXTOID, INT4OID, TEXTOID, TEXTOID, JSONBOID, TEXTOID,
				 TEXTOID, INT4OID, TEXTOID, INT8OID, TEXTOID});
	*recorded = MnemoExecute(finish_plan, values, nulls, false, 0) == 1;
	if (!*recorded)
		MnemoCheckMapExists(session_id, tenant, map_id);
	else
	{
		int64		item_count = MnemoGetInt64(0, 2, NULL);

		finished = MnemoGetInt64(0, 1, NULL);

		initStringInfo(&members);
		appendStringInfo(&members, ", \"ordinal\": %d, \"state\": \"%s\", "
						 "\"completion_seq\": " INT64_FORMAT, ordinal, state, finished);
		if (error_kind)
			appendStringInfo(&members, ", \"error_kind\": \"%s\"", error_kind);
		MnemoNotifyWith(watched, tenant, "map_item_completed", session_id, map_id, -1,
						members.data);
		if (finished == item_count)
		{
			resetStringInfo(&members);
			appendStringInfo(&members, ", \"items\": " INT64_FORMAT, item_count);
			MnemoNotifyWith(watched, tenant, "map_completed", session_id, map_id, -1,
							members.data);
		}
	}
	MnemoFinish(&call);
	return Int32GetDatum((int32) finished);
}

PG_FUNCTION_INFO_V1(mnemo_complete_map_item);
Datum
mnemo_complete_map_item(PG_FUNCTION_ARGS)
{
	Jsonb	   *result = DatumGetJsonbP(MnemoRequireArg(fcinfo, 4, "result"));
	bool		recorded;
	Datum		seq;

	MnemoCheckJsonDepth(result, "result");
	seq = FinishItem(fcinfo, "done", result, NULL, NULL, 5, 6, &recorded);
	if (!recorded)
		PG_RETURN_NULL();
	PG_RETURN_DATUM(seq);
}

PG_FUNCTION_INFO_V1(mnemo_fail_map_item);
Datum
mnemo_fail_map_item(PG_FUNCTION_ARGS)
{
	char	   *error_kind = MnemoRequireTextArg(fcinfo, 4, "error_kind");
	char	   *error = MnemoRequireTextArg(fcinfo, 5, "error");
	int			i;
	bool		recorded;
	Datum		seq;

	for (i = 0; error_kinds[i] != NULL; i++)
		if (strcmp(error_kind, error_kinds[i]) == 0)
			break;
	if (error_kinds[i] == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("error_kind must be one of timeout, validation, llm_error, schema_error, "
						"max_turns, doom_loop, not \"%s\"", error_kind)));
	seq = FinishItem(fcinfo, "failed", NULL, error_kind, error, 6, 7, &recorded);
	if (!recorded)
		PG_RETURN_NULL();
	PG_RETURN_DATUM(seq);
}
