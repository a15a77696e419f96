/*
 * status.c
 *		The only changes a stored message or part may undergo:
 *		update_part_status (a tool's lifecycle, its output, the tombstone) and
 *		update_message_tokens (usage, cost and finish reason after streaming).
 *
 * Each is one UPDATE of one row, so concurrent callers serialise on that row
 * and a merge into content never loses the other caller's key.  Neither
 * takes the session lock: they allocate nothing.  A part's content keeps the
 * object it was appended with; the status columns beside it are the truth,
 * and readers overlay them (see reads.c).  compacted_at, once set, is never
 * changed: a tombstone is permanent.
 *
 * A tool part is write-once (doc/sql.md, "Part states"): its state moves
 * forward only, pending -> running -> completed or error, and once it is
 * completed, errored or tombstoned its state, output and error are fixed;
 * only the tombstone and the times may still be set.  The rule is the
 * UPDATE's own condition, PART_MAY_CHANGE, so that two callers racing to
 * finish a part cannot both write: the loser's UPDATE re-reads the winner's
 * row, matches nothing, and fails with MN005.
 */
#include "postgres.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "utils/builtins.h"
#include "utils/json.h"
#include "utils/jsonb.h"

#include "mnemo.h"
#include "tenancy/tenancy.h"
#include "log/log.h"
#include "reads/reads.h"
#include "reads/search.h"

/*
 * $3 the new tool_state, $7 the content patch; a tool part appended without
 * a state is pending.  A repeat of the stored state is no change.
 */
#define PART_MAY_CHANGE \
	"($3 IS NULL OR $3 = coalesce(tool_state, 'pending') " \
	" OR coalesce(tool_state, 'pending') = 'pending' " \
	" OR (tool_state = 'running' AND $3 <> 'pending')) " \
	"AND ((($3 IS NULL OR $3 = coalesce(tool_state, 'pending')) AND $7 IS NULL) " \
	" OR (compacted_at IS NULL AND coalesce(tool_state, 'pending') IN ('pending', 'running')))"

static SPIPlanPtr find_part_plan;
static SPIPlanPtr part_status_plan;
static SPIPlanPtr message_tokens_plan;

static const char *const token_keys[] = {
	"input", "output", "cache_read", "cache_write", "reasoning", NULL
};

static int64
OptionalTime(FunctionCallInfo fcinfo, int argno, const char *name, bool *isnull)
{
	int64		ms;

	*isnull = PG_ARGISNULL(argno);
	if (*isnull)
		return 0;
	ms = PG_GETARG_INT64(argno);
	if (ms < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be a unix time in milliseconds, not " INT64_FORMAT, name, ms)));
	return ms;
}

/*
 * {"output": O, "error_message": E} with the keys given, or NULL when
 * neither is.  Made here, so that the UPDATE's CASE holds only IMMUTABLE
 * operators (a rule of Citus for distributed writes).
 */
static Jsonb *
ContentPatch(FunctionCallInfo fcinfo, int output_arg, int error_arg)
{
	StringInfoData json;

	if (PG_ARGISNULL(output_arg) && PG_ARGISNULL(error_arg))
		return NULL;
	initStringInfo(&json);
	appendStringInfoChar(&json, '{');
	if (!PG_ARGISNULL(output_arg))
	{
		appendStringInfoString(&json, "\"output\": ");
		escape_json(&json, text_to_cstring(PG_GETARG_TEXT_PP(output_arg)));
	}
	if (!PG_ARGISNULL(error_arg))
	{
		appendStringInfoString(&json, PG_ARGISNULL(output_arg) ? "" : ", ");
		appendStringInfoString(&json, "\"error_message\": ");
		escape_json(&json, text_to_cstring(PG_GETARG_TEXT_PP(error_arg)));
	}
	appendStringInfoChar(&json, '}');
	return DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(json.data)));
}

PG_FUNCTION_INFO_V1(mnemo_update_part_status);
Datum
mnemo_update_part_status(PG_FUNCTION_ARGS)
{
	char	   *session_id = MnemoRequireTextArg(fcinfo, 0, "session_id");
	char	   *part_id = MnemoRequireTextArg(fcinfo, 1, "part_id");
	char	   *tool_state = MnemoTextArgOrNull(fcinfo, 2);
	Jsonb	   *patch = ContentPatch(fcinfo, 6, 7);
	Oid			types[9] = {TEXTOID, INT8OID, TEXTOID, INT8OID, INT8OID, INT8OID, JSONBOID,
	TEXTOID, INT4OID};
	Datum		values[9];
	char		nulls[9];
	bool		isnull;
	bool		watched;
	bool		tombstoned;
	char	   *tenant;
	char	   *stored_state;
	MnemoCall	call;
	int64		seq;
	int32		part_index;

	memset(nulls, ' ', sizeof(nulls));
	values[0] = CStringGetTextDatum(session_id);
	if (tool_state)
	{
		MnemoCheckToolState(tool_state, "update_part_status");
		values[2] = CStringGetTextDatum(tool_state);
	}
	else
		nulls[2] = 'n';
	values[3] = Int64GetDatum(OptionalTime(fcinfo, 3, "compacted_at", &isnull));
	nulls[3] = isnull ? 'n' : ' ';
	values[4] = Int64GetDatum(OptionalTime(fcinfo, 4, "started_at", &isnull));
	nulls[4] = isnull ? 'n' : ' ';
	values[5] = Int64GetDatum(OptionalTime(fcinfo, 5, "completed_at", &isnull));
	nulls[5] = isnull ? 'n' : ' ';
	values[6] = patch ? JsonbPGetDatum(patch) : (Datum) 0;
	nulls[6] = patch ? ' ' : 'n';

	MnemoConnect(&call);
	MnemoCheckSessionActive(session_id, &tenant, &watched);
	values[7] = CStringGetTextDatum(tenant);
	if (!MnemoFindPart(session_id, tenant, part_id, &seq, &part_index))
		ereport(ERROR,
				(errcode(ERRCODE_MNEMO_PART_NOT_FOUND),
				 errmsg("part \"%s\" does not exist in session \"%s\"", part_id, session_id)));
	values[1] = Int64GetDatum(seq);
	values[8] = Int32GetDatum(part_index);

	/*
	 * The merged content's size, as append measures a part's (its jsonb
	 * container, without the varlena header): an output or error merged in
	 * is held to mnemo.max_part_bytes too.
	 */
	MnemoPrepare(&find_part_plan,
				 "SELECT p.part_type, "
				 "CASE WHEN $3 IS NULL THEN 0 ELSE pg_column_size(p.content || $3) - 4 END, "
				 "coalesce(p.tool_state, 'pending'), p.compacted_at IS NOT NULL "
				 "FROM mnemo.log p "
				 "WHERE p.session_id = $1 AND p.tenant = $4 AND p.seq = $2 AND p.part_index = $5",
				 5, (Oid[]) {TEXTOID, INT8OID, JSONBOID, TEXTOID, INT4OID});
	if (MnemoExecute(find_part_plan,
					 (Datum[]) {values[0], values[1], values[6], values[7], values[8]},
					 (char[]) {' ', ' ', nulls[6], ' ', ' '}, false, 1) != 1)
		elog(ERROR, "part \"%s\" of session \"%s\" was found and then not", part_id,
			 session_id);
	if (strcmp(MnemoGetText(0, 1, NULL), "tool") != 0 && (tool_state || patch))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("part \"%s\" is not a tool part", part_id),
				 errdetail("Only tool parts have a tool_state, an output and an error message.")));
	if (MnemoGetInt64(0, 2, NULL) > mnemo_max_part_bytes)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("part \"%s\" would be " INT64_FORMAT " bytes with this output and error message, more than mnemo.max_part_bytes (%d)",
						part_id, MnemoGetInt64(0, 2, NULL), mnemo_max_part_bytes)));

	MnemoPrepare(&part_status_plan,
				 "UPDATE mnemo.log SET "
				 "tool_state = coalesce($3, tool_state), "
				 "compacted_at = coalesce(compacted_at, $4), "
				 "started_at = coalesce($5, started_at), "
				 "completed_at = coalesce($6, completed_at), "
				 "content = CASE WHEN $7 IS NULL THEN content ELSE content || $7 END "
				 "WHERE session_id = $1 AND tenant = $8 AND seq = $2 AND part_index = $9 AND "
				 PART_MAY_CHANGE,
				 9, types);
	if (MnemoExecute(part_status_plan, values, nulls, false, 0) != 1)
	{
		/* refused: say what the part is now (a racing caller may have finished it) */
		MnemoExecute(find_part_plan,
					 (Datum[]) {values[0], values[1], values[6], values[7], values[8]},
					 (char[]) {' ', ' ', nulls[6], ' ', ' '}, false, 1);
		stored_state = MnemoGetText(0, 3, NULL);
		tombstoned = MnemoGetBool(0, 4);
		ereport(ERROR,
				(errcode(ERRCODE_MNEMO_IMMUTABLE_FIELD),
				 errmsg("part \"%s\" is %s%s: it cannot take this %s", part_id, stored_state,
						tombstoned ? " and tombstoned" : "",
						patch ? "output or error" : "state"),
				 errdetail("A tool part moves from pending to running to completed or error; once completed, errored or tombstoned only compacted_at, started_at and completed_at may be set.")));
	}
	/* an output or an error merged into the content changes what search finds */
	if (patch)
		MnemoQueueSearch(session_id, tenant, seq);
	MnemoNotify(watched, tenant, "part_updated", session_id, part_id, -1);
	MnemoFinish(&call);
	PG_RETURN_VOID();
}

/*
 * tokens: {"input", "output", "cache_read", "cache_write", "reasoning"}, each
 * a non-negative integer; a key left out keeps its stored value, and "total"
 * (which providers send) is checked and not stored, being their sum.  A NULL
 * cost or finish_reason also keeps the stored value.
 */
PG_FUNCTION_INFO_V1(mnemo_update_message_tokens);
Datum
mnemo_update_message_tokens(PG_FUNCTION_ARGS)
{
	char	   *session_id = MnemoRequireTextArg(fcinfo, 0, "session_id");
	char	   *message_id = MnemoRequireTextArg(fcinfo, 1, "message_id");
	Jsonb	   *tokens = DatumGetJsonbP(MnemoRequireArg(fcinfo, 2, "tokens"));
	Oid			types[10] = {TEXTOID, INT8OID, INT8OID, INT8OID, INT8OID, INT8OID,
	FLOAT8OID, TEXTOID, TEXTOID, TEXTOID};
	Datum		values[10];
	char		nulls[10];
	bool		watched;
	char	   *tenant;
	MnemoCall	call;
	JsonbIterator *it;
	int64		total;
	JsonbValue	v;
	JsonbIteratorToken tok;
	int			i;

	if (!JB_ROOT_IS_OBJECT(tokens))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("tokens must be a JSON object")));
	it = JsonbIteratorInit(&tokens->root);
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		const char *const *k;
		char	   *key;

		if (tok != WJB_KEY)
			continue;
		key = pnstrdup(v.val.string.val, v.val.string.len);
		for (k = token_keys; *k && strcmp(*k, key) != 0; k++)
			;
		if (*k == NULL && strcmp(key, "total") != 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("tokens: unknown key \"%s\"", key),
					 errhint("The keys are input, output, cache_read, cache_write and reasoning.")));
	}

	/* "total" is checked like the others, then dropped */
	total = MnemoJsonbCount(&tokens->root, "total", "tokens", PG_INT64_MAX);
	(void) total;

	memset(nulls, ' ', sizeof(nulls));
	values[0] = CStringGetTextDatum(message_id);
	for (i = 0; token_keys[i]; i++)
	{
		int64		n = MnemoJsonbCount(&tokens->root, token_keys[i], "tokens", PG_INT64_MAX);

		values[i + 1] = Int64GetDatum(n);
		nulls[i + 1] = n < 0 ? 'n' : ' ';
	}
	if (PG_ARGISNULL(3))
		nulls[6] = 'n';
	else
	{
		float8		cost = PG_GETARG_FLOAT8(3);

		if (isnan(cost) || isinf(cost) || cost < 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("cost must be a finite number not below 0")));
		values[6] = Float8GetDatum(cost);
	}
	values[7] = PG_ARGISNULL(4) ? (Datum) 0 : PG_GETARG_DATUM(4);
	nulls[7] = PG_ARGISNULL(4) ? 'n' : ' ';
	values[8] = CStringGetTextDatum(session_id);
	nulls[8] = ' ';

	MnemoConnect(&call);
	MnemoCheckSessionActive(session_id, &tenant, &watched);
	values[9] = CStringGetTextDatum(tenant);
	nulls[9] = ' ';
	MnemoPrepare(&message_tokens_plan,
				 "UPDATE mnemo.log SET "
				 "tokens_input = coalesce($2, tokens_input), "
				 "tokens_output = coalesce($3, tokens_output), "
				 "tokens_cache_read = coalesce($4, tokens_cache_read), "
				 "tokens_cache_write = coalesce($5, tokens_cache_write), "
				 "tokens_reasoning = coalesce($6, tokens_reasoning), "
				 "cost = coalesce($7, cost), "
				 "finish_reason = coalesce($8, finish_reason) "
				 "WHERE session_id = $9 AND tenant = $10 AND id = $1 RETURNING seq",
				 10, types);
	if (MnemoExecute(message_tokens_plan, values, nulls, false, 0) != 1)
		ereport(ERROR,
				(errcode(ERRCODE_MNEMO_MESSAGE_NOT_FOUND),
				 errmsg("message \"%s\" does not exist in session \"%s\"",
						message_id, session_id)));
	MnemoNotify(watched, tenant, "message_updated", session_id, message_id,
				MnemoGetInt64(0, 1, NULL));
	MnemoFinish(&call);
	PG_RETURN_VOID();
}
