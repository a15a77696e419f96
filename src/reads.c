/*
 * reads.c
 *		Reading the log: get_message, get_messages, get_parts,
 *		get_messages_with_parts, get_messages_with_parts_by_ids, history,
 *		get_context_items, last_summary.
 *
 * Every read names what is missing: a session that does not exist is MN001
 * (not an empty result), a message MN002.  Messages come in seq order,
 * parts in part_index order.  A part read as JSON is its stored content with
 * the live status columns laid over it, so tool_state and the tombstone are
 * always current.  Every read takes the session id first and every
 * statement filters every table by it, so a read touches one session's rows
 * (one partition, one shard) through an index that leads with session_id.
 * A session of a tenant the caller may not see is MN001, as a missing one.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "utils/array.h"
#include "utils/builtins.h"

#include "mnemo.h"

static SPIPlanPtr message_plan;
static SPIPlanPtr since_plan;
static SPIPlanPtr messages_plan;
static SPIPlanPtr parts_plan;
static SPIPlanPtr with_parts_plan;
static SPIPlanPtr by_ids_plan;
static SPIPlanPtr missing_plan;
static SPIPlanPtr history_plan;
static SPIPlanPtr context_plan;
static SPIPlanPtr last_summary_plan;

/*
 * The seq after which to read: 0, or the seq of since_message_id (argument
 * argno) in session_id, MN002 if that message is not in the session.
 */
static int64
SinceSeq(FunctionCallInfo fcinfo, int argno, const char *session_id)
{
	Oid			types[2] = {TEXTOID, TEXTOID};
	Datum		values[2];
	char	   *since = MnemoTextArgOrNull(fcinfo, argno);

	if (since == NULL)
		return 0;
	MnemoPrepare(&since_plan,
				 "SELECT seq FROM mnemo.messages WHERE id = $2 AND session_id = $1", 2, types);
	values[0] = CStringGetTextDatum(session_id);
	values[1] = CStringGetTextDatum(since);
	if (MnemoExecute(since_plan, values, NULL, true, 1) != 1)
		ereport(ERROR,
				(errcode(ERRCODE_MNEMO_MESSAGE_NOT_FOUND),
				 errmsg("message \"%s\" does not exist in session \"%s\"", since, session_id)));
	return MnemoGetInt64(0, 1, NULL);
}

/*
 * Open the frame of a read of one session: argument 0 is the session id,
 * checked to exist and be visible (MN001).  Returns it.
 */
static char *
ConnectToSession(FunctionCallInfo fcinfo, MnemoCall *call)
{
	char	   *session_id = MnemoRequireTextArg(fcinfo, 0, "session_id");

	MnemoConnect(call);
	MnemoCheckSessionExists(session_id, NULL, NULL);
	return session_id;
}

/* Message argument 1 of session_id into SPI_tuptable, MN002 if not there. */
static void
SelectMessage(FunctionCallInfo fcinfo, const char *session_id)
{
	Datum		values[2];

	values[0] = CStringGetTextDatum(session_id);
	values[1] = PointerGetDatum(cstring_to_text(MnemoRequireTextArg(fcinfo, 1, "message_id")));
	MnemoPrepare(&message_plan, "SELECT * FROM mnemo.messages WHERE session_id = $1 AND id = $2",
				 2, (Oid[]) {TEXTOID, TEXTOID});
	if (MnemoExecute(message_plan, values, NULL, true, 1) != 1)
		ereport(ERROR,
				(errcode(ERRCODE_MNEMO_MESSAGE_NOT_FOUND),
				 errmsg("message \"%s\" does not exist in session \"%s\"",
						TextDatumGetCString(values[1]), session_id)));
}

PG_FUNCTION_INFO_V1(mnemo_get_message);
Datum
mnemo_get_message(PG_FUNCTION_ARGS)
{
	MemoryContext callcxt = CurrentMemoryContext;
	MnemoCall	call;
	Datum		result;

	SelectMessage(fcinfo, ConnectToSession(fcinfo, &call));
	result = MnemoResultRow(fcinfo, callcxt, 0);
	MnemoFinish(&call);
	PG_RETURN_DATUM(result);
}

/* get_messages and get_messages_with_parts: one shape, two select lists. */
static Datum
ReadSession(FunctionCallInfo fcinfo, SPIPlanPtr *plan, const char *sql)
{
	Oid			types[2] = {TEXTOID, INT8OID};
	Datum		values[2];
	MnemoCall	call;
	char	   *session_id = ConnectToSession(fcinfo, &call);

	values[0] = CStringGetTextDatum(session_id);
	values[1] = Int64GetDatum(SinceSeq(fcinfo, 1, session_id));
	MnemoPrepare(plan, sql, 2, types);
	MnemoExecute(*plan, values, NULL, true, 0);
	MnemoResultSet(fcinfo);
	MnemoFinish(&call);
	return (Datum) 0;
}

PG_FUNCTION_INFO_V1(mnemo_get_messages);
Datum
mnemo_get_messages(PG_FUNCTION_ARGS)
{
	return ReadSession(fcinfo, &messages_plan,
					   "SELECT * FROM mnemo.messages WHERE session_id = $1 AND seq > $2 "
					   "ORDER BY seq");
}

PG_FUNCTION_INFO_V1(mnemo_get_messages_with_parts);
Datum
mnemo_get_messages_with_parts(PG_FUNCTION_ARGS)
{
	return ReadSession(fcinfo, &with_parts_plan,
					   "SELECT " MNEMO_MESSAGE_WITH_PARTS " FROM mnemo.messages m "
					   "WHERE m.session_id = $1 AND m.seq > $2 ORDER BY m.seq");
}

PG_FUNCTION_INFO_V1(mnemo_get_parts);
Datum
mnemo_get_parts(PG_FUNCTION_ARGS)
{
	MnemoCall	call;
	char	   *session_id = ConnectToSession(fcinfo, &call);
	Datum		values[2];

	SelectMessage(fcinfo, session_id);
	values[0] = CStringGetTextDatum(session_id);
	values[1] = PG_GETARG_DATUM(1);
	MnemoPrepare(&parts_plan,
				 "SELECT * FROM mnemo.message_parts WHERE session_id = $1 AND message_id = $2 "
				 "ORDER BY part_index",
				 2, (Oid[]) {TEXTOID, TEXTOID});
	MnemoExecute(parts_plan, values, NULL, true, 0);
	MnemoResultSet(fcinfo);
	MnemoFinish(&call);
	return (Datum) 0;
}

/*
 * The named messages of the session in the order given (an id named twice
 * comes twice); MN002 naming the first id that is not in the session.  Cost
 * is in the number of ids, whatever the session's length.
 */
PG_FUNCTION_INFO_V1(mnemo_get_messages_with_parts_by_ids);
Datum
mnemo_get_messages_with_parts_by_ids(PG_FUNCTION_ARGS)
{
	ArrayType  *ids = DatumGetArrayTypeP(MnemoRequireArg(fcinfo, 1, "ids"));
	Oid			types[2] = {TEXTOID, TEXTARRAYOID};
	Datum		values[2];
	int			nids = ArrayGetNItems(ARR_NDIM(ids), ARR_DIMS(ids));
	MnemoCall	call;
	char	   *session_id;

	if (array_contains_nulls(ids))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("ids must not contain nulls")));
	session_id = ConnectToSession(fcinfo, &call);
	values[0] = CStringGetTextDatum(session_id);
	values[1] = PointerGetDatum(ids);
	MnemoPrepare(&by_ids_plan,
				 "SELECT " MNEMO_MESSAGE_WITH_PARTS " FROM unnest($2) WITH ORDINALITY AS u(id, ord) "
				 "JOIN mnemo.messages m ON m.session_id = $1 AND m.id = u.id ORDER BY u.ord",
				 2, types);
	if (MnemoExecute(by_ids_plan, values, NULL, true, 0) != (uint64) nids)
	{
		MnemoPrepare(&missing_plan,
					 "SELECT u.id FROM unnest($2) WITH ORDINALITY AS u(id, ord) "
					 "WHERE NOT EXISTS (SELECT 1 FROM mnemo.messages m "
					 "WHERE m.session_id = $1 AND m.id = u.id) "
					 "ORDER BY u.ord LIMIT 1",
					 2, types);
		MnemoExecute(missing_plan, values, NULL, true, 1);
		ereport(ERROR,
				(errcode(ERRCODE_MNEMO_MESSAGE_NOT_FOUND),
				 errmsg("message \"%s\" does not exist in session \"%s\"",
						MnemoGetText(0, 1, NULL), session_id)));
	}
	MnemoResultSet(fcinfo);
	MnemoFinish(&call);
	return (Datum) 0;
}

/* The last "limit" messages (all when NULL), oldest first. */
PG_FUNCTION_INFO_V1(mnemo_history);
Datum
mnemo_history(PG_FUNCTION_ARGS)
{
	char	   *session_id = MnemoRequireTextArg(fcinfo, 0, "session_id");
	Oid			types[2] = {TEXTOID, INT4OID};
	Datum		values[2];
	char		nulls[2] = {' ', ' '};
	MnemoCall	call;

	if (PG_ARGISNULL(1))
		nulls[1] = 'n';
	else if (PG_GETARG_INT32(1) < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("limit must not be negative")));
	values[0] = CStringGetTextDatum(session_id);
	values[1] = PG_ARGISNULL(1) ? (Datum) 0 : PG_GETARG_DATUM(1);

	(void) ConnectToSession(fcinfo, &call);
	MnemoPrepare(&history_plan,
				 "SELECT * FROM (SELECT " MNEMO_MESSAGE_WITH_PARTS " FROM mnemo.messages m "
				 "WHERE m.session_id = $1 ORDER BY m.seq DESC LIMIT $2) h ORDER BY h.seq",
				 2, types);
	MnemoExecute(history_plan, values, nulls, true, 0);
	MnemoResultSet(fcinfo);
	MnemoFinish(&call);
	return (Datum) 0;
}

PG_FUNCTION_INFO_V1(mnemo_get_context_items);
Datum
mnemo_get_context_items(PG_FUNCTION_ARGS)
{
	Oid			types[1] = {TEXTOID};
	Datum		values[1];
	MnemoCall	call;

	values[0] = CStringGetTextDatum(ConnectToSession(fcinfo, &call));
	MnemoPrepare(&context_plan,
				 "SELECT c.item_type, c.item_id, c.position FROM mnemo.context_items c "
				 "WHERE c.session_id = $1 AND " MNEMO_LIVE_VIEW " ORDER BY c.position",
				 1, types);
	MnemoExecute(context_plan, values, NULL, true, 0);
	MnemoResultSet(fcinfo);
	MnemoFinish(&call);
	return (Datum) 0;
}

/* The newest summary message, or NULL; uses the partial summary index. */
PG_FUNCTION_INFO_V1(mnemo_last_summary);
Datum
mnemo_last_summary(PG_FUNCTION_ARGS)
{
	MemoryContext callcxt = CurrentMemoryContext;
	Oid			types[1] = {TEXTOID};
	Datum		values[1];
	Datum		result;
	MnemoCall	call;

	values[0] = CStringGetTextDatum(ConnectToSession(fcinfo, &call));
	MnemoPrepare(&last_summary_plan,
				 "SELECT * FROM mnemo.messages WHERE session_id = $1 AND is_summary "
				 "ORDER BY seq DESC LIMIT 1",
				 1, types);
	if (MnemoExecute(last_summary_plan, values, NULL, true, 1) != 1)
	{
		MnemoFinish(&call);
		PG_RETURN_NULL();
	}
	result = MnemoResultRow(fcinfo, callcxt, 0);
	MnemoFinish(&call);
	PG_RETURN_DATUM(result);
}
