/*
 * search_index.c
 *		The full-text index of the log, built off the append path:
 *		mnemo.index_search() and mnemo.search_pending().
 *
 * An append writes nothing for search.  What waits to be indexed is, per
 * session, the seqs past mnemo.search_progress.indexed_seq up to the
 * session's last_seq (which the append moves under the session lock
 * anyway), plus the seq ranges in mnemo.search_queue: messages indexed
 * already whose parts changed since (append_part, and update_part_status
 * merging an output or an error).  Draining a session -- index_search(),
 * which search_history() runs first unless the transaction is read-only --
 * turns the parts of those messages into mnemo.search_documents rows (one
 * tsvector per part) under the GIN index that search reads, and moves
 * indexed_seq.  So an append pays nothing for search, not even a queue row,
 * and never for a flush of the GIN's pending list: that work happens on the
 * drain, in the searcher's or a scheduled job's time (doc/benchmarks.md,
 * "Search without the tax").
 *
 * Correctness of the drain: it first locks the session's progress row, so
 * drains of one session take turns, and the session row FOR KEY SHARE,
 * which an append's update of the row does not wait for but a purge's
 * delete does (so a purge removes what a drain wrote, and a drain after a
 * purge finds no session); then, with a snapshot taken after that lock, it
 * reads the session's last_seq.  An append moves last_seq and inserts its messages in
 * one transaction, so every message up to the last_seq the drain sees is
 * visible to it; one that commits later is past the new indexed_seq and
 * waits for the next drain.  A queue row is visible only if the change that
 * queued it committed before, so the parts the drain reads include that
 * change.  A fork's own messages start after its fork_seq: its indexed_seq
 * starts there.  A document is replaced only when its words changed.
 *
 * The searched text of a part is that of src/search.c (SEARCH_TSV).
 */
#include "postgres.h"

#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_type.h"
#include "utils/builtins.h"

#include "mnemo.h"
#include "search.h"

static SPIPlanPtr queue_plan;
static SPIPlanPtr progress_plan;
static SPIPlanPtr drain_plan;
static SPIPlanPtr pending_plan;

/*
 * Queue seq, a message of session_id whose parts changed, to be indexed
 * again.  Inside SPI, after the session check.  A message not indexed yet
 * is past indexed_seq and would be indexed anyway; it is queued all the
 * same rather than looked up (search_pending counts it twice until the next
 * drain, as documented).
 */
void
MnemoQueueSearch(const char *session_id, const char *tenant, int64 seq)
{
	MnemoPrepare(&queue_plan,
				 "INSERT INTO mnemo.search_queue (session_id, seq_from, seq_to, tenant) "
				 "VALUES ($1, $2, $2, $3) ON CONFLICT DO NOTHING",
				 3, (Oid[]) {TEXTOID, INT8OID, TEXTOID});
	MnemoExecute(queue_plan,
				 (Datum[]) {CStringGetTextDatum(session_id), Int64GetDatum(seq),
				 CStringGetTextDatum(tenant)},
				 NULL, false, 0);
}

/*
 * Drain session_id: index the parts of every message past its indexed_seq
 * and of every queued one.  Returns the number of documents written.
 * Inside SPI; the caller has checked the session.
 */
int64
MnemoDrainSearch(const char *session_id)
{
	Datum		values[2];

	values[0] = CStringGetTextDatum(session_id);
	if (MnemoSearchPending(session_id, true) == 0)
		return 0;

	/*
	 * The progress row, made on the first drain and locked: a concurrent
	 * drain of the session waits here, then reads what this one wrote.
	 */
	MnemoPrepare(&progress_plan,
				 "INSERT INTO mnemo.search_progress AS g (session_id, indexed_seq, tenant) "
				 "SELECT s.id, coalesce(s.fork_seq, 0), s.tenant FROM mnemo.sessions s "
				 "WHERE s.id = $1 FOR KEY SHARE "
				 "ON CONFLICT (session_id) DO UPDATE SET indexed_seq = g.indexed_seq "
				 "RETURNING g.indexed_seq",
				 1, (Oid[]) {TEXTOID});
	if (MnemoExecute(progress_plan, values, NULL, false, 0) != 1)
		ereport(ERROR,
				(errcode(ERRCODE_MNEMO_SESSION_NOT_FOUND),
				 errmsg("session \"%s\" does not exist", session_id)));
	values[1] = Int64GetDatum(MnemoGetInt64(0, 1, NULL));

	/* a fresh snapshot, taken after the lock: last_seq and its messages */
	MnemoPrepare(&drain_plan,
				 "WITH top AS (SELECT s.last_seq FROM mnemo.sessions s WHERE s.id = $1), "
				 "q AS (DELETE FROM mnemo.search_queue WHERE session_id = $1 "
				 "      RETURNING seq_from, seq_to), "
				 "ranges AS (SELECT $2 + 1 AS lo, (SELECT last_seq FROM top) AS hi "
				 "           UNION ALL SELECT seq_from, seq_to FROM q), "
				 "r AS (SELECT min(lo) AS lo, max(hi) AS hi FROM ranges WHERE lo <= hi), "
				 "moved AS (UPDATE mnemo.search_progress SET indexed_seq = (SELECT last_seq FROM top) "
				 "          WHERE session_id = $1 AND indexed_seq < (SELECT last_seq FROM top)) "
				 "INSERT INTO mnemo.search_documents AS d "
				 "(session_id, message_id, part_index, tsv, tenant) "
				 "SELECT $1, p.message_id, p.part_index, " SEARCH_TSV ", p.tenant "
				 "FROM mnemo.messages m JOIN mnemo.message_parts p "
				 "ON p.session_id = $1 AND p.message_id = m.id "
				 "WHERE m.session_id = $1 "
				 "AND m.seq BETWEEN (SELECT lo FROM r) AND (SELECT hi FROM r) "
				 "AND EXISTS (SELECT 1 FROM ranges WHERE m.seq BETWEEN ranges.lo AND ranges.hi) "
				 "ON CONFLICT (session_id, message_id, part_index) DO UPDATE SET tsv = excluded.tsv "
				 "WHERE d.tsv IS DISTINCT FROM excluded.tsv",
				 2, (Oid[]) {TEXTOID, INT8OID});
	MnemoExecute(drain_plan, values, NULL, false, 0);
	return (int64) SPI_processed;
}

/*
 * How many of session_id's messages wait to be indexed: its seqs past
 * indexed_seq, and the queued ones (a message queued while it waited
 * anyway counts twice).  Inside SPI.  fresh: with a new snapshot, to see
 * what committed while the caller waited (a drain); otherwise read-only,
 * which a parallel query allows (search_pending is PARALLEL SAFE).
 */
int64
MnemoSearchPending(const char *session_id, bool fresh)
{
	Datum		values[1];

	values[0] = CStringGetTextDatum(session_id);
	MnemoPrepare(&pending_plan,
				 "SELECT greatest(s.last_seq - coalesce(g.indexed_seq, s.fork_seq, 0), 0) "
				 "+ coalesce((SELECT sum(q.seq_to - q.seq_from + 1) FROM mnemo.search_queue q "
				 "            WHERE q.session_id = $1), 0)::bigint "
				 "FROM mnemo.sessions s LEFT JOIN mnemo.search_progress g ON g.session_id = $1 "
				 "WHERE s.id = $1",
				 1, (Oid[]) {TEXTOID});
	if (MnemoExecute(pending_plan, values, NULL, !fresh, 1) != 1)
		return 0;
	return MnemoGetInt64(0, 1, NULL);
}

/*
 * Whether this transaction may drain: not on a standby, not in a read-only
 * transaction.  Searches there read what is indexed and say what is not.
 */
bool
MnemoCanDrainSearch(void)
{
	return !RecoveryInProgress() && !XactReadOnly;
}

PG_FUNCTION_INFO_V1(mnemo_index_search);
Datum
mnemo_index_search(PG_FUNCTION_ARGS)
{
	char	   *session_id = MnemoRequireTextArg(fcinfo, 0, "session_id");
	MnemoCall	call;
	int64		indexed;

	MnemoConnect(&call);
	MnemoCheckSessionExists(session_id, NULL, NULL);
	indexed = MnemoDrainSearch(session_id);
	MnemoFinish(&call);
	PG_RETURN_INT64(indexed);
}

PG_FUNCTION_INFO_V1(mnemo_search_pending);
Datum
mnemo_search_pending(PG_FUNCTION_ARGS)
{
	char	   *session_id = MnemoRequireTextArg(fcinfo, 0, "session_id");
	MnemoCall	call;
	int64		pending;

	MnemoConnect(&call);
	MnemoCheckSessionExists(session_id, NULL, NULL);
	pending = MnemoSearchPending(session_id, false);
	MnemoFinish(&call);
	PG_RETURN_INT64(pending);
}
