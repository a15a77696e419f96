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
 */
#include "postgres.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"

#include "mnemo.h"

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

PG_FUNCTION_INFO_V1(mnemo_update_part_status);
Datum
mnemo_update_part_status(PG_FUNCTION_ARGS)
{
	char	   *part_id = MnemoRequireTextArg(fcinfo, 0, "part_id");
	char	   *tool_state = MnemoTextArgOrNull(fcinfo, 1);
	Oid			types[7] = {TEXTOID, TEXTOID, INT8OID, INT8OID, INT8OID, TEXTOID, TEXTOID};
	Datum		values[7];
	char		nulls[7];
	bool		isnull;
	char	   *session_id;
	int			i;

	memset(nulls, ' ', sizeof(nulls));
	values[0] = CStringGetTextDatum(part_id);
	if (tool_state)
	{
		MnemoCheckToolState(tool_state, "update_part_status");
		values[1] = CStringGetTextDatum(tool_state);
	}
	else
		nulls[1] = 'n';
	values[2] = Int64GetDatum(OptionalTime(fcinfo, 2, "compacted_at", &isnull));
	nulls[2] = isnull ? 'n' : ' ';
	values[3] = Int64GetDatum(OptionalTime(fcinfo, 3, "started_at", &isnull));
	nulls[3] = isnull ? 'n' : ' ';
	values[4] = Int64GetDatum(OptionalTime(fcinfo, 4, "completed_at", &isnull));
	nulls[4] = isnull ? 'n' : ' ';
	for (i = 5; i < 7; i++)
	{
		values[i] = PG_ARGISNULL(i) ? (Datum) 0 : PG_GETARG_DATUM(i);
		nulls[i] = PG_ARGISNULL(i) ? 'n' : ' ';
	}

	SPI_connect();
	MnemoPrepare(&find_part_plan,
				 "SELECT part_type FROM mnemo.message_parts WHERE id = $1", 1, types);
	if (MnemoExecute(find_part_plan, values, NULL, true, 1) != 1)
		ereport(ERROR,
				(errcode(ERRCODE_MNEMO_PART_NOT_FOUND),
				 errmsg("part \"%s\" does not exist", part_id)));
	if (strcmp(MnemoGetText(0, 1, NULL), "tool") != 0 &&
		(tool_state || !PG_ARGISNULL(5) || !PG_ARGISNULL(6)))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("part \"%s\" is not a tool part", part_id),
				 errdetail("Only tool parts have a tool_state, an output and an error message.")));

	MnemoPrepare(&part_status_plan,
				 "UPDATE mnemo.message_parts SET "
				 "tool_state = coalesce($2, tool_state), "
				 "compacted_at = coalesce(compacted_at, $3), "
				 "started_at = coalesce($4, started_at), "
				 "completed_at = coalesce($5, completed_at), "
				 "content = CASE WHEN $6 IS NULL AND $7 IS NULL THEN content "
				 "ELSE content || jsonb_strip_nulls(jsonb_build_object("
				 "'output', $6::text, 'error_message', $7::text)) END "
				 "WHERE id = $1 RETURNING session_id",
				 7, types);
	if (MnemoExecute(part_status_plan, values, nulls, false, 0) != 1)
		ereport(ERROR,
				(errcode(ERRCODE_MNEMO_PART_NOT_FOUND),
				 errmsg("part \"%s\" does not exist", part_id)));
	session_id = MnemoGetText(0, 1, NULL);
	/* the error undoes the update: nothing is written to an inactive session */
	MnemoCheckSessionActive(session_id);
	MnemoNotify(MnemoSessionWatched(session_id), "part_updated", session_id, part_id, -1);
	SPI_finish();
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
	char	   *message_id = MnemoRequireTextArg(fcinfo, 0, "message_id");
	Jsonb	   *tokens = DatumGetJsonbP(MnemoRequireArg(fcinfo, 1, "tokens"));
	Oid			types[8] = {TEXTOID, INT8OID, INT8OID, INT8OID, INT8OID, INT8OID,
	FLOAT8OID, TEXTOID};
	Datum		values[8];
	char		nulls[8];
	JsonbIterator *it;
	int64		total;
	JsonbValue	v;
	JsonbIteratorToken tok;
	char	   *session_id;
	int64		seq;
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
	if (PG_ARGISNULL(2))
		nulls[6] = 'n';
	else
	{
		float8		cost = PG_GETARG_FLOAT8(2);

		if (isnan(cost) || isinf(cost) || cost < 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("cost must be a finite number not below 0")));
		values[6] = Float8GetDatum(cost);
	}
	values[7] = PG_ARGISNULL(3) ? (Datum) 0 : PG_GETARG_DATUM(3);
	nulls[7] = PG_ARGISNULL(3) ? 'n' : ' ';

	SPI_connect();
	MnemoPrepare(&message_tokens_plan,
				 "UPDATE mnemo.messages SET "
				 "tokens_input = coalesce($2, tokens_input), "
				 "tokens_output = coalesce($3, tokens_output), "
				 "tokens_cache_read = coalesce($4, tokens_cache_read), "
				 "tokens_cache_write = coalesce($5, tokens_cache_write), "
				 "tokens_reasoning = coalesce($6, tokens_reasoning), "
				 "cost = coalesce($7, cost), "
				 "finish_reason = coalesce($8, finish_reason) "
				 "WHERE id = $1 RETURNING session_id, seq",
				 8, types);
	if (MnemoExecute(message_tokens_plan, values, nulls, false, 0) != 1)
		ereport(ERROR,
				(errcode(ERRCODE_MNEMO_MESSAGE_NOT_FOUND),
				 errmsg("message \"%s\" does not exist", message_id)));
	session_id = MnemoGetText(0, 1, NULL);
	seq = MnemoGetInt64(0, 2, NULL);
	/* the error undoes the update: nothing is written to an inactive session */
	MnemoCheckSessionActive(session_id);
	MnemoNotify(MnemoSessionWatched(session_id), "message_updated", session_id, message_id, seq);
	SPI_finish();
	PG_RETURN_VOID();
}
