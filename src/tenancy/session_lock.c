/*
 * session_lock.c
 *		The session check and the session lock: whether a session exists
 *		for the caller, and the lock every write to a session takes first.
 *
 * A session of a tenant the caller may not see is reported exactly as a
 * missing one (MN001), so that its existence does not leak (tenant.c has
 * the rule), and every call checks the tenant before it locks or writes
 * anything of a session.  Writes to one session serialise on its lock, held
 * to commit, so seqs are dense and in commit order; writes to different
 * sessions never wait on each other.  The lock writes nothing: an append
 * writes its message and part rows and no version of the session row.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "common/sha2.h"
#include "miscadmin.h"
#include "storage/itemptr.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/snapmgr.h"

#include "mnemo.h"
#include "tenancy/tenancy.h"

static SPIPlanPtr exists_plans[2];
static SPIPlanPtr share_plan;
static SPIPlanPtr lock_plan;
static SPIPlanPtr lock_row_plan;

/*
 * After a statement that read the nrows session rows of session_id (one per
 * tenant that has a session of that id), with the tenant in column
 * tenant_col and is_active in active_col of the SPI result: the row of the
 * session the caller means, which the rest of the call reads and writes
 * under that tenant.  That is the one row of a tenant the caller may see,
 * or, when it sees several, the row of mnemo.tenant's tenant (or of its own
 * role's): a session id is unique within its tenant only.  MN001 when the
 * caller sees none (another tenant's session is a missing one), MN013 when
 * it sees several and none of them is that tenant's, MN012 if the session
 * is inactive and require_active.  tenant_col 0: the statement matched a
 * tenant already chosen (the locking ones below), so only found counts.
 */
uint64
MnemoCheckSessionRow(const char *session_id, uint64 nrows, int tenant_col, int active_col,
					 bool require_active)
{
	uint64		row = nrows;
	int			seen = 0;

	if (tenant_col == 0)
		row = nrows == 1 ? 0 : nrows;
	else
	{
		char	   *preferred = nrows > 1 ? MnemoTenantPreferred() : NULL;

		for (uint64 i = 0; i < nrows; i++)
		{
			char	   *tenant = MnemoGetText(i, tenant_col, NULL);

			if (!MnemoTenantVisible(tenant))
				continue;
			row = i;
			if (preferred != NULL && strcmp(tenant, preferred) == 0)
			{
				seen = 1;
				break;
			}
			seen++;
		}
		if (seen > 1)
			ereport(ERROR,
					(errcode(ERRCODE_MNEMO_SESSION_AMBIGUOUS),
					 errmsg("session id \"%s\" names sessions of %d tenants", session_id, seen),
					 errhint("Set mnemo.tenant to the tenant whose session is meant.")));
	}
	if (row == nrows)
		ereport(ERROR,
				(errcode(ERRCODE_MNEMO_SESSION_NOT_FOUND),
				 errmsg("session \"%s\" does not exist", session_id)));
	if (require_active && !MnemoGetBool(row, active_col))
		MnemoSessionInactive(session_id);
	return row;
}

/* MN012: the session was soft-deleted */
void
MnemoSessionInactive(const char *session_id)
{
	ereport(ERROR,
			(errcode(ERRCODE_MNEMO_SESSION_INACTIVE),
			 errmsg("session \"%s\" is inactive", session_id),
			 errhint("It was soft-deleted; its messages stay readable.")));
}

/*
 * Run sql, a statement over the session rows of one id (FROM mnemo.sessions
 * s ... WHERE s.id = $1, the id being session_id), for tenant's session
 * only (sql AND s.tenant = $2) or, with tenant NULL, for every tenant's;
 * plans[0] and plans[1] keep the two plans.  Returns the number of rows, in
 * SPI_tuptable.
 */
uint64
MnemoSessionRows(SPIPlanPtr *plans, const char *sql, const char *session_id, const char *tenant,
				 bool read_only)
{
	Datum		values[2];

	values[0] = CStringGetTextDatum(session_id);
	if (tenant == NULL)
	{
		MnemoPrepare(&plans[0], sql, 1, (Oid[]) {TEXTOID});
		return MnemoExecute(plans[0], values, NULL, read_only, 0);
	}
	if (plans[1] == NULL)
		MnemoPrepare(&plans[1], psprintf("%s AND s.tenant = $2", sql), 2, (Oid[]) {TEXTOID, TEXTOID});
	values[1] = CStringGetTextDatum(tenant);
	return MnemoExecute(plans[1], values, NULL, read_only, 0);
}

/*
 * The session row of session_id the caller means, read by sql (as
 * MnemoSessionRows, with the tenant in column tenant_col): its row number
 * in SPI_tuptable, after MnemoCheckSessionRow's checks.  A caller that sees
 * one tenant only (MnemoTenantOnly) reads that tenant's session of the id
 * and no other row, so another tenant's id takes the path, and the time, of
 * a missing one.
 */
uint64
MnemoReadSession(SPIPlanPtr *plans, const char *sql, const char *session_id, bool read_only,
				 int tenant_col, int active_col, bool require_active)
{
	char	   *only = MnemoTenantOnly();

	return MnemoCheckSessionRow(session_id,
								MnemoSessionRows(plans, sql, session_id, only, read_only),
								only != NULL ? 0 : tenant_col, active_col, require_active);
}

/*
 * MN001 unless session_id exists and the caller may see it (MN013 if it
 * names several such sessions: MnemoCheckSessionRow).  Its tenant, which
 * the rest of the call names the session's rows by, and its watched flag
 * into *tenant and *watched unless NULL.  Inside SPI.
 * Locks nothing: every lock on or
 * write to a session row comes after this check, so a call on another
 * tenant's session never waits on, locks or writes a version of its row
 * (nor learns from a lock wait that it exists).
 *
 * fresh: read with a new snapshot, as the locking statement that follows
 * will (to see a session committed while this transaction waited); else in
 * the caller's snapshot, for reads.
 */
void
MnemoCheckSession(const char *session_id, bool fresh, char **tenant, bool *watched)
{
	uint64		row = MnemoReadSession(exists_plans,
									   "SELECT s.tenant, s.watched, s.is_active FROM mnemo.sessions s "
									   "WHERE s.id = $1",
									   session_id, !fresh, 1, 3, false);

	if (tenant)
		*tenant = MnemoGetText(row, 1, NULL);
	if (watched)
		*watched = MnemoGetBool(row, 2);
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
	/* the NUL ends the tenant: ("ab", "c") and ("a", "bc") differ */
	const void *parts[2] = {tenant, session_id};
	size_t		lens[2] = {strlen(tenant) + 1, strlen(session_id)};
	uint8		digest[PG_SHA256_DIGEST_LENGTH];
	LOCKTAG		tag;

	if (MnemoTablesDistributed())
		return;
	MnemoSha256(2, parts, lens, digest);
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
 * read (SESSION_READ, or its two index probes on a plain layout:
 * session_row.c); when the session is not that tenant's, or there is no such
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

/*
 * Read the session's row of tenant and its newest seq in snapshot
 * (InvalidSnapshot: the statement's own, as MnemoExecute): *lock's fields
 * but last_seq the newest seq, *is_active and the row's *ctid.  Whether
 * found.  By two index probes on a plain layout (session_row.c), else by
 * SESSION_READ, plan.
 */
static bool
ReadRow(SPIPlanPtr plan, Datum *values, const char *session_id, const char *tenant,
		Snapshot snapshot, MnemoSessionLock *lock, bool *is_active, ItemPointer ctid)
{
	bool		isnull;
	int			rc;

	if (plan != lock_row_plan && MnemoSessionRowDirect())
		return MnemoReadSessionRow(session_id, tenant, snapshot, lock, is_active, ctid);
	rc = SPI_execute_snapshot(plan, values, NULL, snapshot, InvalidSnapshot, false, false, 0);
	if (rc < 0)
		elog(ERROR, "SPI_execute_snapshot failed: %s", SPI_result_code_string(rc));
	if (SPI_processed != 1)
		return false;
	*is_active = MnemoGetBool(0, 1);
	lock->watched = MnemoGetBool(0, 2);
	lock->agent = MnemoGetText(0, 3, NULL);
	lock->model_id = MnemoGetText(0, 4, NULL);
	lock->provider_id = MnemoGetText(0, 5, NULL);
	lock->tenant = MnemoGetText(0, 6, NULL);
	lock->context_generation = MnemoGetInt64(0, 7, NULL);
	lock->context_dead = MnemoGetInt64(0, 8, NULL);
	lock->context_tail_seq = MnemoGetInt64(0, 9, NULL);
	lock->is_fork = MnemoGetBool(0, 10);
	lock->last_seq = MnemoGetInt64(0, 11, NULL);
	*ctid = *(ItemPointer) DatumGetPointer(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc,
											   12, &isnull));
	return true;
}

/* The session's write lock under tenant, then its row into *lock; whether found. */
static bool
ReadLocked(const char *session_id, const char *tenant, MnemoSessionLock *lock, bool *is_active)
{
	Datum		values[2];
	MnemoSessionLock latest_lock;
	bool		latest_active;
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
		return ReadRow(lock_row_plan, values, session_id, tenant, InvalidSnapshot, lock,
					   is_active, &ctid);
	}
	MnemoLockSessionKey(tenant, session_id, ExclusiveLock);
	MnemoPrepare(&lock_plan, SESSION_READ, 2, (Oid[]) {TEXTOID, TEXTOID});
	if (!IsolationUsesXactSnapshot())
		return ReadRow(lock_plan, values, session_id, tenant, InvalidSnapshot, lock, is_active,
					   &ctid);

	/*
	 * The row and newest seq as committed now, against what the
	 * transaction's snapshot sees: a difference is a write this transaction
	 * cannot serialise after.
	 */
	ItemPointerSetInvalid(&latest_ctid);
	latest_lock.last_seq = 0;
	latest = ReadRow(lock_plan, values, session_id, tenant, GetLatestSnapshot(), &latest_lock,
					 &latest_active, &latest_ctid);
	found = ReadRow(lock_plan, values, session_id, tenant, InvalidSnapshot, lock, is_active,
					&ctid);
	if (found != latest ||
		(found && (lock->last_seq != latest_lock.last_seq || !ItemPointerEquals(&ctid, &latest_ctid))))
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
	bool		is_active = false;

	if (tenant != NULL)
		found = ReadLocked(session_id, tenant, lock, &is_active);
	if (!found)
	{
		char	   *checked;

		MnemoCheckSession(session_id, true, &checked, NULL);
		if (tenant == NULL || strcmp(checked, tenant) != 0)
			found = ReadLocked(session_id, checked, lock, &is_active);
	}
	(void) MnemoCheckSessionRow(session_id, found ? 1 : 0, 0, 0, false);
	if (require_active && !is_active)
		MnemoSessionInactive(session_id);
	lock->last_seq += add_seq;
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

	MnemoCheckSession(session_id, true, &checked, NULL);
	MnemoLockSessionKey(checked, session_id, AccessShareLock);
	MnemoPrepare(&share_plan,
				 "SELECT tenant, watched, is_active FROM mnemo.sessions "
				 "WHERE id = $1 AND tenant = $2 FOR KEY SHARE",
				 2, (Oid[]) {TEXTOID, TEXTOID});
	(void) MnemoCheckSessionRow(session_id,
						 MnemoExecute(share_plan,
									  (Datum[]) {CStringGetTextDatum(session_id),
									  CStringGetTextDatum(checked)},
									  NULL, false, 1),
						 0, 3, true);
	if (tenant)
		*tenant = MnemoGetText(0, 1, NULL);
	if (watched)
		*watched = MnemoGetBool(0, 2);
}
