/*
 * sessions.c
 *		Session lifecycle: create_session, get_session, get_or_create_session,
 *		list_sessions, soft_delete_session, watch, unwatch; and the session
 *		row lock every write takes.
 *
 * Locking: every write to a session's log starts with MnemoLockSession(),
 * which takes the session's write lock, held to commit, and reads the
 * session's row and its newest seq after it: writes to one session
 * serialise, so seqs are dense and in commit order; writes to different
 * sessions never wait on each other.  The lock writes nothing: an append
 * writes its message and part rows and no version of the session row, whose
 * last_seq and updated_at the session functions read from the messages
 * (MNEMO_SESSION_COLUMNS).
 *
 * Tenancy: a session of a tenant the caller may not see is reported exactly
 * as a missing one (MN001), so that its existence does not leak; see
 * tenant.c.  Session ids are the one key that is global, so a caller-chosen id
 * taken by any tenant is MN004.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "common/cryptohash.h"
#include "common/sha2.h"
#include "miscadmin.h"
#include "storage/itemptr.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/snapmgr.h"

#include "mnemo.h"

#define SESSION_INSERT \
	"INSERT INTO mnemo.sessions (id, model_id, provider_id, agent, parent_id, title, " \
	"metadata, system_prompt, created_at, updated_at, tenant) " \
	"VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $11, $10) " \
	"ON CONFLICT (id) DO NOTHING"

static SPIPlanPtr lock_plan;
static SPIPlanPtr insert_plan;
static SPIPlanPtr select_plan;
static SPIPlanPtr exists_plan;
static SPIPlanPtr share_plan;
static SPIPlanPtr list_plan;
static SPIPlanPtr list_parent_plan;
static SPIPlanPtr soft_delete_plan;
static SPIPlanPtr watch_plan;

/* list_sessions' tenant filter (a dropped tenant's sessions are listed to superusers only) */
#define LIST_VISIBLE MNEMO_TENANT_VISIBLE_SQL("$5", "$6")

/*
 * After a statement that read session_id's row (found: it returned one),
 * with its tenant in column tenant_col and is_active in active_col of the
 * SPI result: MN001 unless it was found and the caller may see it, MN012
 * if it is inactive and require_active.  tenant_col 0: the statement
 * matched a tenant already checked (the locking ones below), so only found
 * counts.
 */
void
MnemoCheckSessionRow(const char *session_id, bool found, int tenant_col, int active_col,
					 bool require_active)
{
	if (!found || (tenant_col > 0 && !MnemoTenantVisible(MnemoGetText(0, tenant_col, NULL))))
		ereport(ERROR,
				(errcode(ERRCODE_MNEMO_SESSION_NOT_FOUND),
				 errmsg("session \"%s\" does not exist", session_id)));
	if (require_active && !MnemoGetBool(0, active_col))
		ereport(ERROR,
				(errcode(ERRCODE_MNEMO_SESSION_INACTIVE),
				 errmsg("session \"%s\" is inactive", session_id),
				 errhint("It was soft-deleted; its messages stay readable.")));
}

/*
 * MN001 unless session_id exists and the caller may see it; MN012 if it is
 * inactive and require_active.  Its tenant and watched flag into *tenant
 * and *watched unless NULL.  Inside SPI.  Locks nothing: every lock on or
 * write to a session row comes after this check, so a call on another
 * tenant's session never waits on, locks or writes a version of its row
 * (nor learns from a lock wait that it exists).
 *
 * fresh: read with a new snapshot, as the locking statement that follows
 * will (to see a session committed while this transaction waited); else in
 * the caller's snapshot, for reads.
 */
static void
CheckSession(const char *session_id, bool require_active, bool fresh, char **tenant,
			 bool *watched)
{
	Oid			types[1] = {TEXTOID};
	Datum		values[1];
	uint64		found;

	values[0] = CStringGetTextDatum(session_id);
	MnemoPrepare(&exists_plan,
				 "SELECT tenant, watched, is_active FROM mnemo.sessions WHERE id = $1",
				 1, types);
	found = MnemoExecute(exists_plan, values, NULL, !fresh, 1);
	MnemoCheckSessionRow(session_id, found == 1, 1, 3, require_active);
	if (tenant)
		*tenant = MnemoGetText(0, 1, NULL);
	if (watched)
		*watched = MnemoGetBool(0, 2);
}

/*
 * The session lock on a single node: an advisory lock of this database, in
 * a class of its own (pg_locks shows it as locktype advisory, objsubid
 * MNEMO_SESSION_LOCK_CLASS), so that it never meets an application's
 * pg_advisory_lock keys.  Its key is the first 8 bytes of the sha256 of the
 * tenant and the session id: two tenants' locks never meet, and no tenant
 * can choose an id whose key is another's (a second preimage of 64 bits of
 * sha256), so no write waits on another tenant's session.  An in-memory
 * lock: no row version, no WAL, no buffer dirtied; lock_timeout,
 * statement_timeout and the deadlock detector apply to its waits as to a
 * row lock's.  Its modes mirror the row locks Citus uses instead (where it
 * is a no-op): AccessShareLock for the writes that take no write lock (FOR
 * KEY SHARE), ExclusiveLock for the log's writes (FOR NO KEY UPDATE),
 * AccessExclusiveLock for a purge (FOR UPDATE).  Every caller takes it
 * before any row lock on the session row, so the two never wait on each
 * other in opposite orders.
 */
#define MNEMO_SESSION_LOCK_CLASS 28014	/* 'm' << 8 | 'n' */

void
MnemoLockSessionKey(const char *tenant, const char *session_id, LOCKMODE mode)
{
	pg_cryptohash_ctx *ctx;
	uint8		digest[PG_SHA256_DIGEST_LENGTH];
	LOCKTAG		tag;

	if (MnemoTablesDistributed())
		return;
	ctx = pg_cryptohash_create(PG_SHA256);
	/* the NUL ends the tenant: ("ab", "c") and ("a", "bc") differ */
	if (ctx == NULL || pg_cryptohash_init(ctx) < 0 ||
		pg_cryptohash_update(ctx, (const uint8 *) tenant, strlen(tenant) + 1) < 0 ||
		pg_cryptohash_update(ctx, (const uint8 *) session_id, strlen(session_id)) < 0 ||
		pg_cryptohash_final(ctx, digest, sizeof(digest)) < 0)
		elog(ERROR, "could not compute the session lock key: %s",
			 pg_cryptohash_error(ctx));
	pg_cryptohash_free(ctx);
	SET_LOCKTAG_ADVISORY(tag, MyDatabaseId,
						 (uint32) digest[0] << 24 | (uint32) digest[1] << 16 |
						 (uint32) digest[2] << 8 | digest[3],
						 (uint32) digest[4] << 24 | (uint32) digest[5] << 16 |
						 (uint32) digest[6] << 8 | digest[7],
						 MNEMO_SESSION_LOCK_CLASS);
	(void) LockAcquire(&tag, mode, false, false);
}

/*
 * Take session_id's write lock and reserve add_seq message seqs: fills
 * *lock with the session's row and last_seq after the reservation (the
 * reserved seqs are last_seq - add_seq + 1 .. last_seq).  Must be called
 * inside SPI.  MN001 if the session does not exist or is another tenant's
 * (checked before anything of it is locked); MN012 if it is inactive and
 * require_active.
 *
 * The lock is keyed by the tenant the caller most likely writes as (its
 * role, or mnemo.tenant), so that an ordinary call is the lock and one
 * statement; when the session is not that tenant's, or there is no such
 * guess (a superuser), its tenant is read and checked first and the lock
 * taken under it.  Either way the row and the newest seq are read after the
 * lock, with a fresh snapshot, so they include what the lock's previous
 * holder committed.
 *
 * Under Citus the sessions of one database are written through any node,
 * which an advisory lock does not span: there the lock is the session row's
 * (FOR NO KEY UPDATE, on the session's shard), which does not conflict with
 * the FOR KEY SHARE of the writes that do not take this lock.
 *
 * REPEATABLE READ and SERIALIZABLE read in the transaction's snapshot: a
 * write that waited for the lock, or finds that another transaction wrote
 * the session since its snapshot, would reserve seqs already taken; it
 * fails with 40001 instead, as a row update at those levels does.
 */
#define SESSION_READ \
	"SELECT s.is_active, s.watched, s.agent, s.model_id, s.provider_id, s.tenant, " \
	"s.context_generation, s.context_dead, s.context_tail_seq, s.fork_seq IS NOT NULL, " \
	MNEMO_LAST_SEQ("s", "$1") ", s.ctid " \
	"FROM mnemo.sessions s WHERE s.id = $1 AND s.tenant = $2"

static SPIPlanPtr lock_row_plan;

/*
 * Run the SESSION_READ plan in snapshot (InvalidSnapshot: the statement's own,
 * as MnemoExecute); whether it found the row, and its newest seq and ctid.
 */
static bool
ReadRow(SPIPlanPtr plan, Datum *values, Snapshot snapshot, int64 *seq, ItemPointerData *ctid)
{
	bool		isnull;
	int			rc = SPI_execute_snapshot(plan, values, NULL, snapshot, InvalidSnapshot,
										  false, false, 0);

	if (rc < 0)
		elog(ERROR, "SPI_execute_snapshot failed: %s", SPI_result_code_string(rc));
	if (SPI_processed != 1)
		return false;
	*seq = MnemoGetInt64(0, 11, NULL);
	*ctid = *(ItemPointer) DatumGetPointer(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc,
											   12, &isnull));
	return true;
}

/* The session's write lock under tenant, then its row into SPI_tuptable; whether found. */
static bool
ReadLocked(const char *session_id, const char *tenant)
{
	Datum		values[2];
	int64		seq,
				latest_seq = 0;
	ItemPointerData ctid,
				latest_ctid;
	bool		latest;
	bool		found;

	values[0] = CStringGetTextDatum(session_id);
	values[1] = CStringGetTextDatum(tenant);
	if (MnemoTablesDistributed())
	{
		MnemoPrepare(&lock_row_plan, SESSION_READ " FOR NO KEY UPDATE OF s", 2,
					 (Oid[]) {TEXTOID, TEXTOID});
		return MnemoExecute(lock_row_plan, values, NULL, false, 0) == 1;
	}
	MnemoLockSessionKey(tenant, session_id, ExclusiveLock);
	MnemoPrepare(&lock_plan, SESSION_READ, 2, (Oid[]) {TEXTOID, TEXTOID});
	if (!IsolationUsesXactSnapshot())
		return ReadRow(lock_plan, values, InvalidSnapshot, &seq, &ctid);

	/*
	 * The row and newest seq as committed now, against what the
	 * transaction's snapshot sees (read last, to stay in SPI_tuptable): a
	 * difference is a write this transaction cannot serialise after.
	 */
	ItemPointerSetInvalid(&latest_ctid);
	latest = ReadRow(lock_plan, values, GetLatestSnapshot(), &latest_seq, &latest_ctid);
	found = ReadRow(lock_plan, values, InvalidSnapshot, &seq, &ctid);
	if (found != latest || (found && (seq != latest_seq || !ItemPointerEquals(&ctid, &latest_ctid))))
		ereport(ERROR,
				(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
				 errmsg("could not serialize access due to concurrent write to session \"%s\"",
						session_id)));
	return found;
}

void
MnemoLockSession(const char *session_id, int64 add_seq, bool require_active,
				 MnemoSessionLock *lock)
{
	bool		all;
	char	   *tenant = MnemoTenantGuess(&all);
	bool		found = false;

	if (tenant != NULL)
		found = ReadLocked(session_id, tenant);
	if (!found)
	{
		char	   *checked;

		CheckSession(session_id, false, true, &checked, NULL);
		if (tenant == NULL || strcmp(checked, tenant) != 0)
			found = ReadLocked(session_id, checked);
	}
	MnemoCheckSessionRow(session_id, found, 0, 1, require_active);
	lock->watched = MnemoGetBool(0, 2);
	lock->agent = MnemoGetText(0, 3, NULL);
	lock->model_id = MnemoGetText(0, 4, NULL);
	lock->provider_id = MnemoGetText(0, 5, NULL);
	lock->tenant = MnemoGetText(0, 6, NULL);
	lock->context_generation = MnemoGetInt64(0, 7, NULL);
	lock->context_dead = MnemoGetInt64(0, 8, NULL);
	lock->context_tail_seq = MnemoGetInt64(0, 9, NULL);
	lock->is_fork = MnemoGetBool(0, 10);
	lock->last_seq = MnemoGetInt64(0, 11, NULL) + add_seq;
}

/* For reads, and writes under the session lock. */
void
MnemoCheckSessionExists(const char *session_id, char **tenant, bool *watched)
{
	CheckSession(session_id, false, false, tenant, watched);
}

/*
 * For the writes that do not take the session's write lock: status,
 * tokens, tombstones, state, a compaction claim, ...  After the check the
 * session lock is taken in its shared mode and the row locked FOR KEY SHARE
 * and re-read with a fresh snapshot (to see a soft delete or a purge that
 * committed while the caller waited): appends never wait on either, but a
 * purge waits for the write to commit and then deletes what it wrote, and a
 * write that comes after a purge finds no session.
 */
void
MnemoCheckSessionActive(const char *session_id, char **tenant, bool *watched)
{
	char	   *checked;

	CheckSession(session_id, false, true, &checked, NULL);
	MnemoLockSessionKey(checked, session_id, AccessShareLock);
	MnemoPrepare(&share_plan,
				 "SELECT tenant, watched, is_active FROM mnemo.sessions "
				 "WHERE id = $1 AND tenant = $2 FOR KEY SHARE",
				 2, (Oid[]) {TEXTOID, TEXTOID});
	MnemoCheckSessionRow(session_id,
						 MnemoExecute(share_plan,
									  (Datum[]) {CStringGetTextDatum(session_id),
									  CStringGetTextDatum(checked)},
									  NULL, false, 1) == 1,
						 0, 3, true);
	if (tenant)
		*tenant = MnemoGetText(0, 1, NULL);
	if (watched)
		*watched = MnemoGetBool(0, 2);
}

/* Whether the session row in SPI_tuptable belongs to a tenant the caller may see. */
static bool
RowVisible(void)
{
	bool		isnull;
	Datum		tenant = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc,
									   SPI_fnumber(SPI_tuptable->tupdesc, "tenant"), &isnull);

	return !isnull && MnemoTenantVisible(TextDatumGetCString(tenant));
}

/*
 * Load the row of session_id into SPI_tuptable; returns whether it exists
 * (*visible: whether the caller may see it).  read_only = false takes a
 * fresh snapshot, to see a row another transaction committed while this one
 * waited.
 */
static bool
SelectSession(const char *session_id, bool read_only, bool *visible)
{
	Oid			types[1] = {TEXTOID};
	Datum		values[1];

	MnemoPrepare(&select_plan,
				 "SELECT " MNEMO_SESSION_COLUMNS("s", "$1") " FROM mnemo.sessions s WHERE s.id = $1",
				 1, types);
	values[0] = CStringGetTextDatum(session_id);
	if (MnemoExecute(select_plan, values, NULL, read_only, 1) != 1)
		return false;
	*visible = RowVisible();
	return true;
}

/*
 * Insert a session from arguments 0..7 of a create_session-shaped call (id,
 * model_id, provider_id, agent, parent_id, title, metadata, system_prompt)
 * and create_session's created_at (argument 8).
 * Leaves the new row in SPI_tuptable and returns true, or returns false if
 * a session with this id already exists.
 */
static bool
InsertSession(FunctionCallInfo fcinfo, const char *id)
{
	Oid			types[11] = {TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID,
	JSONBOID, TEXTOID, INT8OID, TEXTOID, INT8OID};
	Datum		values[11];
	char		nulls[11];
	int64		now = MnemoNowMs();
	bool		visible;
	int			i;

	MnemoCheckId(id, "session id");
	if (!PG_ARGISNULL(4))
		MnemoCheckSessionExists(text_to_cstring(PG_GETARG_TEXT_PP(4)), NULL, NULL);
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
	/* create_session's created_at (an import restoring a session); get_or_create_session has none */
	if (PG_NARGS() > 8 && !PG_ARGISNULL(8))
	{
		if (PG_GETARG_INT64(8) < 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("created_at must not be negative")));
		values[8] = PG_GETARG_DATUM(8);
	}
	else
		values[8] = Int64GetDatum(now);
	nulls[8] = ' ';
	values[9] = CStringGetTextDatum(MnemoCallerTenant());
	nulls[9] = ' ';
	/* the write's own time, also for a restored session: "last written" sorts an import first */
	values[10] = Int64GetDatum(now);
	nulls[10] = ' ';

	/*
	 * The tenant's channel exists before its first session, so that watch
	 * and the notifying writes only read mnemo.tenants.  Under Citus that is
	 * a reference table, and a write to it leaves the session's shard, which
	 * a function delegated with force_delegation may not (doc/scale-out.md);
	 * create_session itself is not delegated.
	 */
	(void) MnemoTenantChannel(TextDatumGetCString(values[9]));
	MnemoPrepare(&insert_plan, SESSION_INSERT, 11, types);
	if (MnemoExecute(insert_plan, values, nulls, false, 0) != 1)
		return false;
	/* read back as the functions return it: no subquery in the RETURNING (Citus) */
	return SelectSession(id, false, &visible);
}

PG_FUNCTION_INFO_V1(mnemo_create_session);
Datum
mnemo_create_session(PG_FUNCTION_ARGS)
{
	MemoryContext callcxt = CurrentMemoryContext;
	char	   *id = PG_ARGISNULL(0) ? MnemoNewId("sess") : text_to_cstring(PG_GETARG_TEXT_PP(0));
	Datum		result;
	MnemoCall	call;

	MnemoConnect(&call);
	if (!InsertSession(fcinfo, id))
		ereport(ERROR,
				(errcode(ERRCODE_MNEMO_DUPLICATE_ID),
				 errmsg("session \"%s\" already exists", id)));
	result = MnemoResultRow(fcinfo, callcxt, 0);
	MnemoFinish(&call);
	PG_RETURN_DATUM(result);
}

PG_FUNCTION_INFO_V1(mnemo_get_session);
Datum
mnemo_get_session(PG_FUNCTION_ARGS)
{
	MemoryContext callcxt = CurrentMemoryContext;
	char	   *id = MnemoRequireTextArg(fcinfo, 0, "session id");
	Datum		result;
	bool		visible;
	MnemoCall	call;

	MnemoConnect(&call);
	if (!SelectSession(id, true, &visible) || !visible)
		ereport(ERROR,
				(errcode(ERRCODE_MNEMO_SESSION_NOT_FOUND),
				 errmsg("session \"%s\" does not exist", id)));
	result = MnemoResultRow(fcinfo, callcxt, 0);
	MnemoFinish(&call);
	PG_RETURN_DATUM(result);
}

/*
 * The existing session, or a new one.  Two callers racing on a new id both
 * get the one row: ON CONFLICT waits for the winner, and the loser's next
 * statement sees it.  An id taken by a tenant the caller may not see is
 * MN004, as create_session would say.
 */
PG_FUNCTION_INFO_V1(mnemo_get_or_create_session);
Datum
mnemo_get_or_create_session(PG_FUNCTION_ARGS)
{
	MemoryContext callcxt = CurrentMemoryContext;
	char	   *id = MnemoRequireTextArg(fcinfo, 0, "session id");
	Datum		result;
	bool		visible = true;
	MnemoCall	call;

	MnemoConnect(&call);
	if (!SelectSession(id, false, &visible) && !InsertSession(fcinfo, id) &&
		!SelectSession(id, false, &visible))
		elog(ERROR, "session \"%s\" vanished during get_or_create_session", id);
	if (!visible)
		ereport(ERROR,
				(errcode(ERRCODE_MNEMO_DUPLICATE_ID),
				 errmsg("session \"%s\" already exists", id)));
	result = MnemoResultRow(fcinfo, callcxt, 0);
	MnemoFinish(&call);
	PG_RETURN_DATUM(result);
}

/*
 * Newest first: created_at, then id (ids are time-ordered, so sessions made
 * in one ms keep their creation order when mnemo made their ids); the parent
 * filter and active_only both apply when given.  Only the sessions of tenants
 * the caller may see: the statement runs as the owner, so it is given the
 * caller ($5) and whether the caller sees every tenant ($6).
 */
PG_FUNCTION_INFO_V1(mnemo_list_sessions);
Datum
mnemo_list_sessions(PG_FUNCTION_ARGS)
{
	Oid			types[6] = {BOOLOID, INT4OID, INT4OID, TEXTOID, OIDOID, BOOLOID};
	Datum		values[6];
	Oid			caller = GetUserId();
	MnemoCall	call;
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
	values[3] = PG_ARGISNULL(0) ? (Datum) 0 : PG_GETARG_DATUM(0);
	values[4] = ObjectIdGetDatum(caller);
	values[5] = BoolGetDatum(superuser_arg(caller) || has_bypassrls_privilege(caller));

	MnemoConnect(&call);
	if (PG_ARGISNULL(0))
	{
		MnemoPrepare(&list_plan,
					 "SELECT " MNEMO_SESSION_COLUMNS("s", "s.id") " FROM mnemo.sessions s "
					 "WHERE (s.is_active OR NOT $1) AND " LIST_VISIBLE
					 " ORDER BY s.created_at DESC, s.id DESC LIMIT $2 OFFSET $3",
					 6, types);
		MnemoExecuteResult(fcinfo, list_plan, values, "   n  ", true);
	}
	else
	{
		MnemoPrepare(&list_parent_plan,
					 "SELECT " MNEMO_SESSION_COLUMNS("s", "s.id") " FROM mnemo.sessions s "
					 "WHERE s.parent_id = $4 AND (s.is_active OR NOT $1) "
					 "AND " LIST_VISIBLE " ORDER BY s.created_at DESC, s.id DESC LIMIT $2 OFFSET $3",
					 6, types);
		MnemoExecuteResult(fcinfo, list_parent_plan, values, NULL, true);
	}
	MnemoFinish(&call);
	return (Datum) 0;
}

PG_FUNCTION_INFO_V1(mnemo_soft_delete_session);
Datum
mnemo_soft_delete_session(PG_FUNCTION_ARGS)
{
	Oid			types[3] = {TEXTOID, INT8OID, TEXTOID};
	Datum		values[3];
	char	   *id = MnemoRequireTextArg(fcinfo, 0, "session id");
	char	   *tenant;
	MnemoCall	call;

	values[0] = CStringGetTextDatum(id);
	values[1] = Int64GetDatum(MnemoNowMs());
	MnemoConnect(&call);
	CheckSession(id, false, true, &tenant, NULL);
	values[2] = CStringGetTextDatum(tenant);
	MnemoPrepare(&soft_delete_plan,
				 "UPDATE mnemo.sessions SET is_active = false, updated_at = $2 "
				 "WHERE id = $1 AND tenant = $3",
				 3, types);
	if (MnemoExecute(soft_delete_plan, values, NULL, false, 0) != 1)
		ereport(ERROR,
				(errcode(ERRCODE_MNEMO_SESSION_NOT_FOUND),
				 errmsg("session \"%s\" does not exist", id)));
	MnemoFinish(&call);
	PG_RETURN_VOID();
}

/* Set the watched flag; returns the session's tenant. */
static char *
SetWatched(FunctionCallInfo fcinfo, bool watched)
{
	Oid			types[3] = {TEXTOID, BOOLOID, TEXTOID};
	Datum		values[3];
	char	   *id = MnemoRequireTextArg(fcinfo, 0, "session_id");
	char	   *tenant;

	CheckSession(id, false, true, &tenant, NULL);
	values[0] = CStringGetTextDatum(id);
	values[1] = BoolGetDatum(watched);
	values[2] = CStringGetTextDatum(tenant);
	MnemoPrepare(&watch_plan,
				 "UPDATE mnemo.sessions SET watched = $2 WHERE id = $1 AND tenant = $3",
				 3, types);
	if (MnemoExecute(watch_plan, values, NULL, false, 0) != 1)
		ereport(ERROR,
				(errcode(ERRCODE_MNEMO_SESSION_NOT_FOUND),
				 errmsg("session \"%s\" does not exist", id)));
	return tenant;
}

/* Returns the channel to LISTEN on: its tenant's (see notify.c). */
PG_FUNCTION_INFO_V1(mnemo_watch);
Datum
mnemo_watch(PG_FUNCTION_ARGS)
{
	MemoryContext callcxt = CurrentMemoryContext;
	MnemoCall	call;
	char	   *channel;
	MemoryContext oldcxt;

	MnemoConnect(&call);
	channel = MnemoTenantChannel(SetWatched(fcinfo, true));
	oldcxt = MemoryContextSwitchTo(callcxt);
	channel = pstrdup(channel);
	MemoryContextSwitchTo(oldcxt);
	MnemoFinish(&call);
	PG_RETURN_TEXT_P(cstring_to_text(channel));
}

PG_FUNCTION_INFO_V1(mnemo_unwatch);
Datum
mnemo_unwatch(PG_FUNCTION_ARGS)
{
	MnemoCall	call;

	MnemoConnect(&call);
	(void) SetWatched(fcinfo, false);
	MnemoFinish(&call);
	PG_RETURN_VOID();
}
