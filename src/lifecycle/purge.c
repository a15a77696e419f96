/*
 * purge.c
 *		mnemo.purge_session(): the one way rows leave the log.
 *
 * For erasure requests only.  It deletes the session and everything keyed by
 * it, of its tenant only (another tenant's session of the same id keeps
 * every row) -- context items, summary nodes and edges, parts, messages, checkpoints,
 * runs, the pending request, its maps -- in one call, under
 * the session lock, so no append can slip in between.  EXECUTE is revoked
 * from PUBLIC: an operator grants it to the role that handles erasure, which
 * must also have the privileges of the session's tenant (else MN001).
 * Child sessions keep their rows; their parent_id then names a session that
 * no longer exists.  But a session that forks still read from (sessions.forks,
 * fork.c) is refused with 2BP01 (dependent_objects_still_exist): purge the
 * forks first, or soft-delete it, which they read through.  Purging a fork
 * takes it off its parent's count.  The images of its parts stored as blobs
 * lose its references, and a blob left with none is deleted (blobs.c).
 *
 * The writes that do not take the session's write lock (a search drain, a
 * compaction claim, a part's status) hold its session lock in the shared
 * mode and the session row FOR KEY SHARE (sessions.c): the purge takes the
 * lock in its exclusive mode and the row FOR UPDATE, in that order, which
 * waits for them to commit, and the deletes then run with a snapshot that
 * sees their rows.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "utils/builtins.h"

#include "mnemo.h"
#include "tenancy/tenancy.h"
#include "log/log.h"

static SPIPlanPtr row_lock_plan;
static SPIPlanPtr purge_plan;
static SPIPlanPtr forks_plan;
static SPIPlanPtr parent_plan;

PG_FUNCTION_INFO_V1(mnemo_purge_session);
Datum
mnemo_purge_session(PG_FUNCTION_ARGS)
{
	char	   *session_id = MnemoRequireTextArg(fcinfo, 0, "session id");
	Oid			types[2] = {TEXTOID, TEXTOID};
	Datum		values[2];
	MnemoSessionLock lock;
	MnemoCall	call;
	char	   *tenant;
	int64		messages;

	values[0] = CStringGetTextDatum(session_id);
	MnemoConnect(&call);
	/* the tenant first: another tenant's session is neither locked nor waited for */
	MnemoCheckSession(session_id, false, &tenant, NULL);
	values[1] = CStringGetTextDatum(tenant);

	/*
	 * The session lock's exclusive mode, then FOR UPDATE, before the write
	 * lock: they wait for the writes that hold the lock shared and the row
	 * FOR KEY SHARE, and one of those may go on to append (and wait for the
	 * write lock) before it commits.
	 */
	MnemoLockSessionKey(tenant, session_id, AccessExclusiveLock);
	MnemoPrepare(&row_lock_plan,
				 "SELECT 1 FROM mnemo.sessions WHERE id = $1 AND tenant = $2 FOR UPDATE",
				 2, types);
	MnemoExecute(row_lock_plan, values, NULL, false, 0);
	MnemoLockSession(session_id, 0, false, &lock);
	MnemoPrepare(&forks_plan,
				 "SELECT forks, parent_id, fork_seq IS NOT NULL FROM mnemo.sessions "
				 "WHERE id = $1 AND tenant = $2",
				 2, types);
	MnemoExecute(forks_plan, values, NULL, false, 1);
	if (MnemoGetInt64(0, 1, NULL) > 0)
		ereport(ERROR,
				(errcode(ERRCODE_DEPENDENT_OBJECTS_STILL_EXIST),
				 errmsg("session \"%s\" has " INT64_FORMAT " forks that read its messages",
						session_id, MnemoGetInt64(0, 1, NULL)),
				 errhint("Purge its forks first, or soft-delete it: forks read through a soft delete.")));
	/* a fork's parent is of its own tenant (fork.c) */
	if (MnemoGetBool(0, 3))
	{
		MnemoPrepare(&parent_plan,
					 "UPDATE mnemo.sessions SET forks = forks - 1 "
					 "WHERE id = $1 AND tenant = $2 AND forks > 0",
					 2, types);
		MnemoExecute(parent_plan,
					 (Datum[]) {CStringGetTextDatum(MnemoGetText(0, 2, NULL)), values[1]},
					 NULL, false, 0);
	}
	MnemoReleaseBlobs(session_id, lock.tenant);
	MnemoPrepare(&purge_plan,
				 "WITH c AS (DELETE FROM mnemo.context_items WHERE session_id = $1 AND tenant = $2), "
				 "n AS (DELETE FROM mnemo.summary_nodes WHERE session_id = $1 AND tenant = $2), "
				 "e AS (DELETE FROM mnemo.summary_edges WHERE session_id = $1 AND tenant = $2), "
				 "m AS (DELETE FROM mnemo.log WHERE session_id = $1 AND tenant = $2 RETURNING part_index), "
				 "k AS (DELETE FROM mnemo.compaction_claims WHERE session_id = $1 AND tenant = $2), "
				 "q AS (DELETE FROM mnemo.search_queue WHERE session_id = $1 AND tenant = $2), "
				 "sp AS (DELETE FROM mnemo.search_progress WHERE session_id = $1 AND tenant = $2), "
				 "d AS (DELETE FROM mnemo.search_documents WHERE session_id = $1 AND tenant = $2), "
				 "cp AS (DELETE FROM mnemo.checkpoints WHERE session_id = $1 AND tenant = $2), "
				 "r AS (DELETE FROM mnemo.runs WHERE session_id = $1 AND tenant = $2), "
				 "hr AS (DELETE FROM mnemo.pending_requests WHERE session_id = $1 AND tenant = $2), "
				 "l AS (DELETE FROM mnemo.lineage WHERE session_id = $1 AND tenant = $2), "
				 "dc AS (DELETE FROM mnemo.discarded WHERE session_id = $1 AND tenant = $2), "
				 "mp AS (DELETE FROM mnemo.maps WHERE session_id = $1 AND tenant = $2), "
				 "mi AS (DELETE FROM mnemo.map_items WHERE session_id = $1 AND tenant = $2), "
				 "s AS (DELETE FROM mnemo.sessions WHERE id = $1 AND tenant = $2) "
				 "SELECT count(*) FROM m WHERE part_index = 0",
				 2, types);
	MnemoExecute(purge_plan, values, NULL, false, 0);
	messages = MnemoGetInt64(0, 1, NULL);
	MnemoFinish(&call);
	PG_RETURN_INT64(messages);
}
