/*
 * row_checks.c
 *		The CHECK constraints of the tables every append writes: sessions,
 *		messages, message_parts and context_items, one function each.
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
 * messages: role, cost, created_at and the five token counts; a cost is
 * finite and >= 0 (NaN fails both comparisons)
 */
PG_FUNCTION_INFO_V1(mnemo_check_message);
Datum
mnemo_check_message(PG_FUNCTION_ARGS)
{
	static const char *const roles[] = {"user", "assistant", "system", "tool", NULL};
	float8		cost;
	int			i;

	if (!OneOf(fcinfo, 0, roles))
		PG_RETURN_BOOL(false);
	if (!PG_ARGISNULL(1))
	{
		cost = PG_GETARG_FLOAT8(1);
		if (!(cost >= 0 && !isinf(cost)))
			PG_RETURN_BOOL(false);
	}
	for (i = 2; i < PG_NARGS(); i++)
		if (!NonNegative(fcinfo, i))
			PG_RETURN_BOOL(false);
	PG_RETURN_BOOL(true);
}

/* message_parts: tool_state, token_estimate (int4), compacted_at, started_at, completed_at */
PG_FUNCTION_INFO_V1(mnemo_check_part);
Datum
mnemo_check_part(PG_FUNCTION_ARGS)
{
	static const char *const states[] = {"pending", "running", "completed", "error", NULL};
	int			i;

	if (!OneOf(fcinfo, 0, states))
		PG_RETURN_BOOL(false);
	if (!PG_ARGISNULL(1) && PG_GETARG_INT32(1) < 0)
		PG_RETURN_BOOL(false);
	for (i = 2; i < PG_NARGS(); i++)
		if (!NonNegative(fcinfo, i))
			PG_RETURN_BOOL(false);
	PG_RETURN_BOOL(true);
}

/* context_items: item_type, created_at */
PG_FUNCTION_INFO_V1(mnemo_check_context_item);
Datum
mnemo_check_context_item(PG_FUNCTION_ARGS)
{
	static const char *const types[] = {"message", "summary", NULL};

	PG_RETURN_BOOL(OneOf(fcinfo, 0, types) && NonNegative(fcinfo, 1));
}
