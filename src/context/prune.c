/*
 * prune.c
 *		mnemo.prune_tool_outputs(): the seed's ToolOutputPruner as one
 *		set-based call.
 *
 * The scan covers the messages in the session's live context view (context
 * items of type 'message'), newest first by seq; messages already compacted
 * out of the view are not looked at.  Within it:
 *	- the two most recent user messages and everything after them are
 *	  protected (the current turn and the one before);
 *	- the scan stops at the newest summary message of the log (is_summary):
 *	  nothing at or before its seq is touched;
 *	- only tool parts in state 'completed', not yet tombstoned and not of a
 *	  protected tool are eligible; the others neither count nor change;
 *	- of the eligible parts, newest first (seq, part_index descending), the
 *	  newest protect_tokens worth of token_estimate are kept: a part whose
 *	  running total exceeds protect_tokens is a candidate;
 *	- unless the candidates' tokens sum to more than minimum_tokens, nothing
 *	  is written at all.
 * Candidates are tombstoned (compacted_at) with one timestamp per call; the
 * rows and their content stay.  The whole decision and the update are one
 * statement, run under the session lock so it serialises with appends.
 * Returns the number of parts tombstoned.  One notification "parts_pruned"
 * per call that tombstoned anything.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "utils/array.h"
#include "utils/builtins.h"

#include "mnemo.h"
#include "tenancy/tenancy.h"
#include "context/context.h"

static SPIPlanPtr prune_plan;

#define PRUNE_SQL \
	"WITH boundary AS (" \
	"  SELECT coalesce(max(seq), 0) AS seq FROM mnemo.messages " \
	"  WHERE session_id = $1 AND tenant = $6 AND is_summary), " \
	"scan AS (" \
	"  SELECT c.item_id AS id, c.seq, m.role FROM " MNEMO_CONTEXT_VIEW("$6") " c, " \
	"  LATERAL (SELECT m.role FROM mnemo.messages m " \
	"           WHERE m.session_id = $1 AND m.tenant = $6 AND m.seq = c.seq OFFSET 0) m " \
	"  WHERE c.item_type = 'message' " \
	"  AND c.seq > (SELECT seq FROM boundary)), " \
	"turn AS (" \
	"  SELECT seq FROM scan WHERE role = 'user' ORDER BY seq DESC OFFSET 1 LIMIT 1), " \
	"eligible AS (" \
	"  SELECT p.seq, p.part_index, p.token_estimate, " \
	"  sum(p.token_estimate) OVER (ORDER BY s.seq DESC, p.part_index DESC) AS running " \
	"  FROM scan s JOIN mnemo.message_parts p " \
	"  ON p.session_id = $1 AND p.tenant = $6 AND p.seq = s.seq " \
	"  WHERE s.seq < (SELECT seq FROM turn) AND p.part_type = 'tool' " \
	"  AND p.tool_state = 'completed' AND p.compacted_at IS NULL " \
	"  AND coalesce(p.tool_name, '') <> ALL ($4)), " \
	"candidates AS (" \
	"  SELECT seq, part_index, token_estimate FROM eligible WHERE running > $2) " \
	"UPDATE mnemo.log p SET compacted_at = $5 FROM candidates c " \
	"WHERE p.session_id = $1 AND p.tenant = $6 AND p.seq = c.seq AND p.part_index = c.part_index " \
	"AND p.compacted_at IS NULL " \
	"AND (SELECT coalesce(sum(token_estimate), 0) FROM candidates) > $3 " \
	"RETURNING p.seq"

PG_FUNCTION_INFO_V1(mnemo_prune_tool_outputs);
Datum
mnemo_prune_tool_outputs(PG_FUNCTION_ARGS)
{
	char	   *session_id = MnemoRequireTextArg(fcinfo, 0, "session_id");
	int32		protect_tokens = DatumGetInt32(MnemoRequireArg(fcinfo, 1, "protect_tokens"));
	int32		minimum_tokens = DatumGetInt32(MnemoRequireArg(fcinfo, 2, "minimum_tokens"));
	ArrayType  *protected_tools = MnemoTextListArg(fcinfo, 3, "protected_tools");
	Oid			types[6] = {TEXTOID, INT4OID, INT4OID, TEXTARRAYOID, INT8OID, TEXTOID};
	Datum		values[6];
	MnemoSessionLock lock;
	MnemoCall	call;
	uint64		pruned;

	if (protect_tokens < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("protect_tokens must not be negative")));
	if (minimum_tokens < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("minimum_tokens must not be negative")));

	MnemoConnect(&call);
	MnemoLockSession(session_id, 0, true, &lock);
	values[0] = CStringGetTextDatum(session_id);
	values[1] = Int32GetDatum(protect_tokens);
	values[2] = Int32GetDatum(minimum_tokens);
	values[3] = PointerGetDatum(protected_tools);
	values[4] = Int64GetDatum(MnemoNowMs());
	values[5] = CStringGetTextDatum(lock.tenant);
	MnemoPrepare(&prune_plan, PRUNE_SQL, 6, types);
	pruned = MnemoExecute(prune_plan, values, NULL, false, 0);
	if (pruned > 0)
		MnemoNotify(lock.watched, lock.tenant, "parts_pruned", session_id, NULL, -1);
	MnemoFinish(&call);
	PG_RETURN_INT32((int32) pruned);
}
