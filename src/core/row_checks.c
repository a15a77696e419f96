/*
 * row_checks.c
 *		The CHECK constraints of the tables every append writes: sessions,
 *		log and context_items, one function each (and those of messages and
 *		message_parts, the tables of the log until 0.13.0).
 *
 * The functions refuse bad values first, with 22023; these constraints are
 * the backstop for every other writer (a restore, a superuser's UPDATE),
 * which meets them as 23514.  Each table has one constraint, a call of its
 * function over the columns it checks, rather than a CHECK per rule: the
 * executor reads, plans and compiles every CHECK of a table again for each
 * statement that writes it (ExecRelCheck), and the 16 expressions these
 * tables had cost an append call more than its index inserts (see
 * bench/profiles/).  One function call over plain columns is the smallest
 * expression the executor can prepare; the rules themselves are the same.
 *
 * The functions are not strict: a NULL where the column allows one passes,
 * as it did in a CHECK.  The sessions' jsonb columns are read only as far
 * as their root header: an update of the session row carries the state
 * along, and its type is in the first bytes, however large it is.
 */
#include "postgres.h"

#include <math.h>

#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"

#include "mnemo.h"

/* the non-null argument argno, an int8, is >= 0 */
static bool
NonNegative(FunctionCallInfo fcinfo, int argno)
{
	return PG_ARGISNULL(argno) || PG_GETARG_INT64(argno) >= 0;
}

/* argno is NULL or one of list */
static bool
OneOf(FunctionCallInfo fcinfo, int argno, const char *const *list)
{
	text	   *t;
	int			len;

	if (PG_ARGISNULL(argno))
		return true;
	t = PG_GETARG_TEXT_PP(argno);
	len = VARSIZE_ANY_EXHDR(t);
	for (; *list; list++)
		if ((int) strlen(*list) == len && memcmp(VARDATA_ANY(t), *list, len) == 0)
			return true;
	return false;
}

/* argno, a jsonb, is a JSON object (NULL: null_ok) */
static bool
JsonbObject(FunctionCallInfo fcinfo, int argno, bool null_ok)
{
	Jsonb	   *jb;

	if (PG_ARGISNULL(argno))
		return null_ok;
	/* the root header only: a large state is neither detoasted nor decompressed whole */
	jb = (Jsonb *) PG_DETOAST_DATUM_SLICE(PG_GETARG_DATUM(argno), 0, sizeof(uint32));
	return JB_ROOT_IS_OBJECT(jb);
}

/*
 * sessions: created_at, updated_at, metadata, state,
 * fork_seq, forks, discards
 */
PG_FUNCTION_INFO_V1(mnemo_check_session);
Datum
mnemo_check_session(PG_FUNCTION_ARGS)
{
	int			i;

	for (i = 0; i < PG_NARGS(); i++)
		if (i != 2 && i != 3 && !NonNegative(fcinfo, i))
			PG_RETURN_BOOL(false);
	PG_RETURN_BOOL(JsonbObject(fcinfo, 2, true) && JsonbObject(fcinfo, 3, false));
}

/*
 * A message's role, cost (argument first) and the arguments after it
 * through last, int8 counts and times: role one of the four, cost finite
 * and >= 0 (NaN fails both comparisons), the counts >= 0.
 */
static bool
MessageOk(FunctionCallInfo fcinfo, int role, int first, int last)
{
	static const char *const roles[] = {"user", "assistant", "system", "tool", NULL};
	float8		cost;
	int			i;

	if (!OneOf(fcinfo, role, roles))
		return false;
	if (!PG_ARGISNULL(first))
	{
		cost = PG_GETARG_FLOAT8(first);
		if (!(cost >= 0 && !isinf(cost)))
			return false;
	}
	for (i = first + 1; i <= last; i++)
		if (!NonNegative(fcinfo, i))
			return false;
	return true;
}

/*
 * A part's tool_state (argument first), token_estimate (int4) and the times
 * after it through last.
 */
static bool
PartOk(FunctionCallInfo fcinfo, int first, int last)
{
	static const char *const states[] = {"pending", "running", "completed", "error", NULL};
	int			i;

	if (!OneOf(fcinfo, first, states))
		return false;
	if (!PG_ARGISNULL(first + 1) && PG_GETARG_INT32(first + 1) < 0)
		return false;
	for (i = first + 2; i <= last; i++)
		if (!NonNegative(fcinfo, i))
			return false;
	return true;
}

/* 0.12.0's messages: role, cost, created_at and the five token counts */
PG_FUNCTION_INFO_V1(mnemo_check_message);
Datum
mnemo_check_message(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(MessageOk(fcinfo, 0, 1, PG_NARGS() - 1));
}

/* 0.12.0's message_parts: tool_state, token_estimate, compacted_at, started_at, completed_at */
PG_FUNCTION_INFO_V1(mnemo_check_part);
Datum
mnemo_check_part(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(PartOk(fcinfo, 0, PG_NARGS() - 1));
}

/*
 * log: part_index, the message's id, role, created_at, agent, model_id,
 * provider_id, is_summary, cost and five token counts (arguments 1-13), then
 * part_type, content, tool_state, token_estimate and three times (14-20).
 * The message's columns are set on part 0 (the token counts and cost may be
 * NULL) and NULL on every other part; a row holds a part (part_type and
 * content) unless it is the part 0 row of a message without parts, whose
 * part columns are all NULL.
 */
#define LOG_ID 1
#define LOG_ROLE 2
#define LOG_CREATED_AT 3
#define LOG_IS_SUMMARY 7
#define LOG_COST 8
#define LOG_MESSAGE_LAST 13
#define LOG_PART_TYPE 14
#define LOG_CONTENT 15
#define LOG_TOOL_STATE 16
#define LOG_TOKEN_ESTIMATE 17
#define LOG_PART_LAST 20

PG_FUNCTION_INFO_V1(mnemo_check_log_row);
Datum
mnemo_check_log_row(PG_FUNCTION_ARGS)
{
	int			i;

	if (PG_ARGISNULL(0) || PG_GETARG_INT32(0) < 0)
		PG_RETURN_BOOL(false);
	if (PG_GETARG_INT32(0) == 0)
	{
		for (i = LOG_ID; i <= LOG_IS_SUMMARY; i++)
			if (PG_ARGISNULL(i))
				PG_RETURN_BOOL(false);
		if (!MessageOk(fcinfo, LOG_ROLE, LOG_COST, LOG_MESSAGE_LAST) ||
			!NonNegative(fcinfo, LOG_CREATED_AT))
			PG_RETURN_BOOL(false);
	}
	else
		for (i = LOG_ID; i <= LOG_MESSAGE_LAST; i++)
			if (!PG_ARGISNULL(i))
				PG_RETURN_BOOL(false);
	if (PG_ARGISNULL(LOG_PART_TYPE) != PG_ARGISNULL(LOG_CONTENT))
		PG_RETURN_BOOL(false);
	if (PG_ARGISNULL(LOG_PART_TYPE))
	{
		if (PG_GETARG_INT32(0) != 0)
			PG_RETURN_BOOL(false);
		for (i = LOG_TOOL_STATE; i <= LOG_PART_LAST; i++)
			if (!PG_ARGISNULL(i))
				PG_RETURN_BOOL(false);
	}
	else if (PG_ARGISNULL(LOG_TOKEN_ESTIMATE))
		PG_RETURN_BOOL(false);
	PG_RETURN_BOOL(PartOk(fcinfo, LOG_TOOL_STATE, LOG_PART_LAST));
}

/* context_items: item_type, created_at */
PG_FUNCTION_INFO_V1(mnemo_check_context_item);
Datum
mnemo_check_context_item(PG_FUNCTION_ARGS)
{
	static const char *const types[] = {"message", "summary", NULL};

	PG_RETURN_BOOL(OneOf(fcinfo, 0, types) && NonNegative(fcinfo, 1));
}
