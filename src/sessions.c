/*
 * sessions.c
 *		Session lifecycle: create_session, get_session, get_or_create_session,
 *		list_sessions, soft_delete_session, watch, unwatch; and the session
 *		row lock every write takes.
 *
 * Locking: every write to a session's log starts with MnemoLockSession(),
 * one UPDATE of the session row that also reserves the seqs and positions
 * the write will use.  The row lock is held to commit, so writes to one
 * session serialise and seqs are dense and in commit order; writes to
 * different sessions touch different rows and never wait on each other.
 * updated_at is not indexed, so the update is HOT.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"

#include "mnemo.h"

#define SESSION_INSERT \
	"INSERT INTO mnemo.sessions (id, model_id, provider_id, agent, parent_id, title, " \
	"metadata, system_prompt, created_at, updated_at) " \
	"VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9) " \
	"ON CONFLICT (id) DO NOTHING RETURNING *"

static SPIPlanPtr lock_plan;
static SPIPlanPtr insert_plan;
static SPIPlanPtr select_plan;
static SPIPlanPtr exists_plan;
static SPIPlanPtr active_plan;
static SPIPlanPtr list_plan;
static SPIPlanPtr list_parent_plan;
static SPIPlanPtr soft_delete_plan;
static SPIPlanPtr watch_plan;

/*
 * Lock session_id's row and reserve add_seq message seqs and add_positions
 * context positions.  Fills *lock with the counters after the reservation:
 * the reserved seqs are last_seq - add_seq + 1 .. last_seq.  Must be called
 * inside SPI.  MN001 if the session does not exist; MN012 if it is inactive
 * and require_active.
 */
void
MnemoLockSession(const char *session_id, int64 add_seq, int64 add_positions,
				 bool require_active, MnemoSessionLock *lock)
{
	Oid			types[4] = {TEXTOID, INT8OID, INT8OID, INT8OID};
	Datum		values[4];

	MnemoPrepare(&lock_plan,
				 "UPDATE mnemo.sessions SET last_seq = last_seq + $2, "
				 "last_position = last_position + $3, updated_at = $4 "
				 "WHERE id = $1 RETURNING last_seq, last_position, is_active, watched, "
				 "agent, model_id, provider_id",
				 4, types);
	values[0] = CStringGetTextDatum(session_id);
	values[1] = Int64GetDatum(add_seq);
	values[2] = Int64GetDatum(add_positions);
	values[3] = Int64GetDatum(MnemoNowMs());
	if (MnemoExecute(lock_plan, values, NULL, false, 0) != 1)
		ereport(ERROR,
				(errcode(ERRCODE_MNEMO_SESSION_NOT_FOUND),
				 errmsg("session \"%s\" does not exist", session_id)));
	if (require_active && !MnemoGetBool(0, 3))
		ereport(ERROR,
				(errcode(ERRCODE_MNEMO_SESSION_INACTIVE),
				 errmsg("session \"%s\" is inactive", session_id),
				 errhint("It was soft-deleted; its messages stay readable.")));
	lock->last_seq = MnemoGetInt64(0, 1, NULL);
	lock->last_position = MnemoGetInt64(0, 2, NULL);
	lock->watched = MnemoGetBool(0, 4);
	lock->agent = MnemoGetText(0, 5, NULL);
	lock->model_id = MnemoGetText(0, 6, NULL);
	lock->provider_id = MnemoGetText(0, 7, NULL);
}

/* MN001 unless session_id exists.  Must be called inside SPI. */
void
MnemoCheckSessionExists(const char *session_id)
{
	Oid			types[1] = {TEXTOID};
	Datum		values[1];

	MnemoPrepare(&exists_plan, "SELECT 1 FROM mnemo.sessions WHERE id = $1", 1, types);
	values[0] = CStringGetTextDatum(session_id);
	if (MnemoExecute(exists_plan, values, NULL, true, 1) != 1)
		ereport(ERROR,
				(errcode(ERRCODE_MNEMO_SESSION_NOT_FOUND),
				 errmsg("session \"%s\" does not exist", session_id)));
}

/*
 * MN001 unless session_id exists, MN012 if it is inactive: for the writes
 * that do not take the session lock (status, tokens, tombstones).  Reads
 * with a fresh snapshot, to see a soft delete that committed while the
 * caller waited for its row.  Must be called inside SPI.
 */
void
MnemoCheckSessionActive(const char *session_id)
{
	Oid			types[1] = {TEXTOID};
	Datum		values[1];

	MnemoPrepare(&active_plan, "SELECT is_active FROM mnemo.sessions WHERE id = $1", 1, types);
	values[0] = CStringGetTextDatum(session_id);
	if (MnemoExecute(active_plan, values, NULL, false, 1) != 1)
		ereport(ERROR,
				(errcode(ERRCODE_MNEMO_SESSION_NOT_FOUND),
				 errmsg("session \"%s\" does not exist", session_id)));
	if (!MnemoGetBool(0, 1))
		ereport(ERROR,
				(errcode(ERRCODE_MNEMO_SESSION_INACTIVE),
				 errmsg("session \"%s\" is inactive", session_id),
				 errhint("It was soft-deleted; its messages stay readable.")));
}

/*
 * Load the row of session_id into SPI_tuptable; returns whether it exists.
 * read_only = false takes a fresh snapshot, to see a row another transaction
 * committed while this one waited.
 */
static bool
SelectSession(const char *session_id, bool read_only)
{
	Oid			types[1] = {TEXTOID};
	Datum		values[1];

	MnemoPrepare(&select_plan, "SELECT * FROM mnemo.sessions WHERE id = $1", 1, types);
	values[0] = CStringGetTextDatum(session_id);
	return MnemoExecute(select_plan, values, NULL, read_only, 1) == 1;
}

/*
 * Insert a session from arguments 0..7 of a create_session-shaped call (id,
 * model_id, provider_id, agent, parent_id, title, metadata, system_prompt).
 * Leaves the new row in SPI_tuptable and returns true, or returns false if
 * a session with this id already exists.
 */
static bool
InsertSession(FunctionCallInfo fcinfo, const char *id)
{
	Oid			types[9] = {TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID,
	JSONBOID, TEXTOID, INT8OID};
	Datum		values[9];
	char		nulls[9];
	int			i;

	MnemoCheckId(id, "session id");
	if (!PG_ARGISNULL(4))
		MnemoCheckSessionExists(text_to_cstring(PG_GETARG_TEXT_PP(4)));
	if (!PG_ARGISNULL(6) && !JB_ROOT_IS_OBJECT(PG_GETARG_JSONB_P(6)))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("session metadata must be a JSON object")));
	if (!PG_ARGISNULL(6))
		MnemoCheckJsonDepth(PG_GETARG_JSONB_P(6), "session metadata");

	values[0] = CStringGetTextDatum(id);
	nulls[0] = ' ';
	for (i = 1; i < 8; i++)
	{
		nulls[i] = PG_ARGISNULL(i) ? 'n' : ' ';
		values[i] = PG_ARGISNULL(i) ? (Datum) 0 : PG_GETARG_DATUM(i);
	}
	/* NOT NULL columns: a NULL argument means the column's default */
	if (PG_ARGISNULL(1))
		values[1] = CStringGetTextDatum(""), nulls[1] = ' ';
	if (PG_ARGISNULL(2))
		values[2] = CStringGetTextDatum(""), nulls[2] = ' ';
	if (PG_ARGISNULL(3))
		values[3] = CStringGetTextDatum("default"), nulls[3] = ' ';
	if (PG_ARGISNULL(7))
		values[7] = CStringGetTextDatum(""), nulls[7] = ' ';
	values[8] = Int64GetDatum(MnemoNowMs());
	nulls[8] = ' ';

	MnemoPrepare(&insert_plan, SESSION_INSERT, 9, types);
	return MnemoExecute(insert_plan, values, nulls, false, 0) == 1;
}

PG_FUNCTION_INFO_V1(mnemo_create_session);
Datum
mnemo_create_session(PG_FUNCTION_ARGS)
{
	MemoryContext callcxt = CurrentMemoryContext;
	char	   *id = PG_ARGISNULL(0) ? MnemoNewId("sess") : text_to_cstring(PG_GETARG_TEXT_PP(0));
	Datum		result;

	SPI_connect();
	if (!InsertSession(fcinfo, id))
		ereport(ERROR,
				(errcode(ERRCODE_MNEMO_DUPLICATE_ID),
				 errmsg("session \"%s\" already exists", id)));
	result = MnemoResultRow(fcinfo, callcxt, 0);
	SPI_finish();
	PG_RETURN_DATUM(result);
}

PG_FUNCTION_INFO_V1(mnemo_get_session);
Datum
mnemo_get_session(PG_FUNCTION_ARGS)
{
	MemoryContext callcxt = CurrentMemoryContext;
	char	   *id = MnemoRequireTextArg(fcinfo, 0, "session id");
	Datum		result;

	SPI_connect();
	if (!SelectSession(id, true))
		ereport(ERROR,
				(errcode(ERRCODE_MNEMO_SESSION_NOT_FOUND),
				 errmsg("session \"%s\" does not exist", id)));
	result = MnemoResultRow(fcinfo, callcxt, 0);
	SPI_finish();
	PG_RETURN_DATUM(result);
}

/*
 * The existing session, or a new one.  Two callers racing on a new id both
 * get the one row: ON CONFLICT waits for the winner, and the loser's next
 * statement sees it.
 */
PG_FUNCTION_INFO_V1(mnemo_get_or_create_session);
Datum
mnemo_get_or_create_session(PG_FUNCTION_ARGS)
{
	MemoryContext callcxt = CurrentMemoryContext;
	char	   *id = MnemoRequireTextArg(fcinfo, 0, "session id");
	Datum		result;

	SPI_connect();
	if (!SelectSession(id, false) && !InsertSession(fcinfo, id) && !SelectSession(id, false))
		elog(ERROR, "session \"%s\" vanished during get_or_create_session", id);
	result = MnemoResultRow(fcinfo, callcxt, 0);
	SPI_finish();
	PG_RETURN_DATUM(result);
}

/*
 * Newest first, by creation order (created_at is in ms and ties are common);
 * the parent filter and active_only both apply when given.
 */
PG_FUNCTION_INFO_V1(mnemo_list_sessions);
Datum
mnemo_list_sessions(PG_FUNCTION_ARGS)
{
	Oid			types[4] = {BOOLOID, INT4OID, INT4OID, TEXTOID};
	Datum		values[4];
	bool		active_only = DatumGetBool(MnemoRequireArg(fcinfo, 1, "active_only"));
	int32		limit = DatumGetInt32(MnemoRequireArg(fcinfo, 2, "limit"));
	int32		offset = DatumGetInt32(MnemoRequireArg(fcinfo, 3, "offset"));

	if (limit < 0 || offset < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("limit and offset must not be negative")));
	values[0] = BoolGetDatum(active_only);
	values[1] = Int32GetDatum(limit);
	values[2] = Int32GetDatum(offset);

	SPI_connect();
	if (PG_ARGISNULL(0))
	{
		MnemoPrepare(&list_plan,
					 "SELECT * FROM mnemo.sessions WHERE is_active OR NOT $1 "
					 "ORDER BY ordinal DESC LIMIT $2 OFFSET $3",
					 3, types);
		MnemoExecute(list_plan, values, NULL, true, 0);
	}
	else
	{
		values[3] = PG_GETARG_DATUM(0);
		MnemoPrepare(&list_parent_plan,
					 "SELECT * FROM mnemo.sessions WHERE parent_id = $4 AND (is_active OR NOT $1) "
					 "ORDER BY ordinal DESC LIMIT $2 OFFSET $3",
					 4, types);
		MnemoExecute(list_parent_plan, values, NULL, true, 0);
	}
	MnemoResultSet(fcinfo);
	SPI_finish();
	return (Datum) 0;
}

PG_FUNCTION_INFO_V1(mnemo_soft_delete_session);
Datum
mnemo_soft_delete_session(PG_FUNCTION_ARGS)
{
	Oid			types[2] = {TEXTOID, INT8OID};
	Datum		values[2];
	char	   *id = MnemoRequireTextArg(fcinfo, 0, "session id");

	values[0] = CStringGetTextDatum(id);
	values[1] = Int64GetDatum(MnemoNowMs());
	SPI_connect();
	MnemoPrepare(&soft_delete_plan,
				 "UPDATE mnemo.sessions SET is_active = false, updated_at = $2 WHERE id = $1",
				 2, types);
	if (MnemoExecute(soft_delete_plan, values, NULL, false, 0) != 1)
		ereport(ERROR,
				(errcode(ERRCODE_MNEMO_SESSION_NOT_FOUND),
				 errmsg("session \"%s\" does not exist", id)));
	SPI_finish();
	PG_RETURN_VOID();
}

static void
SetWatched(FunctionCallInfo fcinfo, bool watched)
{
	Oid			types[2] = {TEXTOID, BOOLOID};
	Datum		values[2];
	char	   *id = MnemoRequireTextArg(fcinfo, 0, "session_id");

	values[0] = CStringGetTextDatum(id);
	values[1] = BoolGetDatum(watched);
	SPI_connect();
	MnemoPrepare(&watch_plan, "UPDATE mnemo.sessions SET watched = $2 WHERE id = $1",
				 2, types);
	if (MnemoExecute(watch_plan, values, NULL, false, 0) != 1)
		ereport(ERROR,
				(errcode(ERRCODE_MNEMO_SESSION_NOT_FOUND),
				 errmsg("session \"%s\" does not exist", id)));
	SPI_finish();
}

PG_FUNCTION_INFO_V1(mnemo_watch);
Datum
mnemo_watch(PG_FUNCTION_ARGS)
{
	SetWatched(fcinfo, true);
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(mnemo_unwatch);
Datum
mnemo_unwatch(PG_FUNCTION_ARGS)
{
	SetWatched(fcinfo, false);
	PG_RETURN_VOID();
}
