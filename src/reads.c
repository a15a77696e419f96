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
 * always current.  All reads use the indexes that lead with session_id or
 * the id indexes; none scans a table.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "utils/array.h"
#include "utils/builtins.h"

#include "mnemo.h"

/* The columns of mnemo.message_with_parts, over messages m of session SESSION. */
#define MESSAGE_WITH_PARTS(session) \
	"m.id, m.session_id, m.seq, m.role, m.created_at, m.agent, m.model_id, " \
	"m.provider_id, m.run_id, m.is_summary, m.tokens_input, m.tokens_output, " \
	"m.tokens_cache_read, m.tokens_cache_write, m.tokens_reasoning, m.cost, " \
	"m.finish_reason, " MNEMO_PARTS_JSON(session)

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

PG_FUNCTION_INFO_V1(mnemo_get_message);
Datum
mnemo_get_message(PG_FUNCTION_ARGS)
{
	MemoryContext callcxt = CurrentMemoryContext;
	char	   *id = MnemoRequireTextArg(fcinfo, 0, "message id");
	Oid			types[1] = {TEXTOID};
	Datum		values[1];
	Datum		result;

	values[0] = CStringGetTextDatum(id);
	SPI_connect();
	MnemoPrepare(&message_plan, "SELECT * FROM mnemo.messages WHERE id = $1", 1, types);
	if (MnemoExecute(message_plan, values, NULL, true, 1) != 1)
		ereport(ERROR,
				(errcode(ERRCODE_MNEMO_MESSAGE_NOT_FOUND),
				 errmsg("message \"%s\" does not exist", id)));
	result = MnemoResultRow(fcinfo, callcxt, 0);
	SPI_finish();
	PG_RETURN_DATUM(result);
}

/* get_messages and get_messages_with_parts: one shape, two select lists. */
static Datum
ReadSession(FunctionCallInfo fcinfo, SPIPlanPtr *plan, const char *sql)
{
	char	   *session_id = MnemoRequireTextArg(fcinfo, 0, "session_id");
	Oid			types[2] = {TEXTOID, INT8OID};
	Datum		values[2];

	SPI_connect();
	MnemoCheckSessionExists(session_id);
	values[0] = CStringGetTextDatum(session_id);
	values[1] = Int64GetDatum(SinceSeq(fcinfo, 1, session_id));
	MnemoPrepare(plan, sql, 2, types);
	MnemoExecute(*plan, values, NULL, true, 0);
	MnemoResultSet(fcinfo);
	SPI_finish();
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
					   "SELECT " MESSAGE_WITH_PARTS("$1") " FROM mnemo.messages m "
					   "WHERE m.session_id = $1 AND m.seq > $2 ORDER BY m.seq");
}

PG_FUNCTION_INFO_V1(mnemo_get_parts);
Datum
mnemo_get_parts(PG_FUNCTION_ARGS)
{
	char	   *id = MnemoRequireTextArg(fcinfo, 0, "message_id");
	Oid			types[1] = {TEXTOID};
	Datum		values[1];

	values[0] = CStringGetTextDatum(id);
	SPI_connect();
	MnemoPrepare(&message_plan, "SELECT * FROM mnemo.messages WHERE id = $1", 1, types);
	if (MnemoExecute(message_plan, values, NULL, true, 1) != 1)
		ereport(ERROR,
				(errcode(ERRCODE_MNEMO_MESSAGE_NOT_FOUND),
				 errmsg("message \"%s\" does not exist", id)));
	MnemoPrepare(&parts_plan,
				 "SELECT p.* FROM mnemo.messages m JOIN mnemo.message_parts p "
				 "ON p.session_id = m.session_id AND p.message_id = m.id "
				 "WHERE m.id = $1 ORDER BY p.part_index",
				 1, types);
	MnemoExecute(parts_plan, values, NULL, true, 0);
	MnemoResultSet(fcinfo);
	SPI_finish();
	return (Datum) 0;
}

/*
 * The named messages in the order given (an id named twice comes twice);
 * MN002 naming the first id that does not exist.  Cost is in the number of
 * ids, whatever the sessions' lengths.
 */
PG_FUNCTION_INFO_V1(mnemo_get_messages_with_parts_by_ids);
Datum
mnemo_get_messages_with_parts_by_ids(PG_FUNCTION_ARGS)
{
	ArrayType  *ids = DatumGetArrayTypeP(MnemoRequireArg(fcinfo, 0, "ids"));
	Oid			types[1] = {TEXTARRAYOID};
	Datum		values[1];
	int			nids = ArrayGetNItems(ARR_NDIM(ids), ARR_DIMS(ids));

	if (array_contains_nulls(ids))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("ids must not contain nulls")));
	values[0] = PointerGetDatum(ids);
	SPI_connect();
	MnemoPrepare(&by_ids_plan,
				 "SELECT " MESSAGE_WITH_PARTS("m.session_id") " FROM unnest($1) WITH ORDINALITY AS u(id, ord) "
				 "JOIN mnemo.messages m ON m.id = u.id ORDER BY u.ord",
				 1, types);
	if (MnemoExecute(by_ids_plan, values, NULL, true, 0) != (uint64) nids)
	{
		MnemoPrepare(&missing_plan,
					 "SELECT u.id FROM unnest($1) WITH ORDINALITY AS u(id, ord) "
					 "WHERE NOT EXISTS (SELECT 1 FROM mnemo.messages m WHERE m.id = u.id) "
					 "ORDER BY u.ord LIMIT 1",
					 1, types);
		MnemoExecute(missing_plan, values, NULL, true, 1);
		ereport(ERROR,
				(errcode(ERRCODE_MNEMO_MESSAGE_NOT_FOUND),
				 errmsg("message \"%s\" does not exist", MnemoGetText(0, 1, NULL))));
	}
	MnemoResultSet(fcinfo);
	SPI_finish();
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

	if (PG_ARGISNULL(1))
		nulls[1] = 'n';
	else if (PG_GETARG_INT32(1) < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("limit must not be negative")));
	values[0] = CStringGetTextDatum(session_id);
	values[1] = PG_ARGISNULL(1) ? (Datum) 0 : PG_GETARG_DATUM(1);

	SPI_connect();
	MnemoCheckSessionExists(session_id);
	MnemoPrepare(&history_plan,
				 "SELECT * FROM (SELECT " MESSAGE_WITH_PARTS("$1") " FROM mnemo.messages m "
				 "WHERE m.session_id = $1 ORDER BY m.seq DESC LIMIT $2) h ORDER BY h.seq",
				 2, types);
	MnemoExecute(history_plan, values, nulls, true, 0);
	MnemoResultSet(fcinfo);
	SPI_finish();
	return (Datum) 0;
}

PG_FUNCTION_INFO_V1(mnemo_get_context_items);
Datum
mnemo_get_context_items(PG_FUNCTION_ARGS)
{
	char	   *session_id = MnemoRequireTextArg(fcinfo, 0, "session_id");
	Oid			types[1] = {TEXTOID};
	Datum		values[1];

	values[0] = CStringGetTextDatum(session_id);
	SPI_connect();
	MnemoCheckSessionExists(session_id);
	MnemoPrepare(&context_plan,
				 "SELECT item_type, item_id, position FROM mnemo.context_items "
				 "WHERE session_id = $1 ORDER BY position",
				 1, types);
	MnemoExecute(context_plan, values, NULL, true, 0);
	MnemoResultSet(fcinfo);
	SPI_finish();
	return (Datum) 0;
}

/* The newest summary message, or NULL; uses the partial summary index. */
PG_FUNCTION_INFO_V1(mnemo_last_summary);
Datum
mnemo_last_summary(PG_FUNCTION_ARGS)
{
	MemoryContext callcxt = CurrentMemoryContext;
	char	   *session_id = MnemoRequireTextArg(fcinfo, 0, "session_id");
	Oid			types[1] = {TEXTOID};
	Datum		values[1];
	Datum		result;

	values[0] = CStringGetTextDatum(session_id);
	SPI_connect();
	MnemoCheckSessionExists(session_id);
	MnemoPrepare(&last_summary_plan,
				 "SELECT * FROM mnemo.messages WHERE session_id = $1 AND is_summary "
				 "ORDER BY seq DESC LIMIT 1",
				 1, types);
	if (MnemoExecute(last_summary_plan, values, NULL, true, 1) != 1)
	{
		SPI_finish();
		PG_RETURN_NULL();
	}
	result = MnemoResultRow(fcinfo, callcxt, 0);
	SPI_finish();
	PG_RETURN_DATUM(result);
}
