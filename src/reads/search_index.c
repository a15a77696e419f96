/*
 * search_index.c
 *		The full-text index of the log, built off the append path:
 *		mnemo.index_search() and mnemo.search_pending().
 *
 * An append writes nothing for search.  What waits to be indexed is, per
 * session (its id and tenant: ids are unique only within a tenant, and
 * every statement here names both), the seqs past
 * mnemo.search_progress.indexed_seq up to the session's newest message,
 * plus the seq ranges in mnemo.search_queue: messages indexed already
 * whose parts changed since (append_part, and update_part_status
 * merging an output or an error).  Draining a session -- index_search(),
 * and a slice of MNEMO_SEARCH_SLICE messages before each search_history()
 * unless the transaction is read-only -- turns the parts of at most a given
 * number of those messages, the queued ones first and then the oldest, into
 * mnemo.search_documents rows (one tsvector per part, keyed by the
 * message's seq; a short part's words without their positions) under the
 * GIN index that search reads, and moves indexed_seq over them.  No call
 * indexes an unbounded backlog (issue 36: the first search after 900,000
 * appends took 115 s); what a search sees
 * of the rest is src/reads/search.c's.  So an append pays nothing for search, not
 * even a queue row, and never for a flush of the GIN's pending list: that
 * work happens on the drain, in the searcher's or a scheduled job's time
 * (doc/benchmarks.md, "Search without the tax").
 *
 * Correctness of the drain: it first takes the session lock shared and
 * the session row FOR KEY SHARE, which an append does not wait for but a
 * purge does (so a purge removes what a drain wrote, and a drain after a
 * purge finds no session), then the session's progress row, so drains of
 * one session take turns; then, with a snapshot taken after that lock, it
 * reads the session's newest seq.  Every message up to that seq is
 * committed and visible to it (seqs are given in commit order); one that commits later is past the new indexed_seq and
 * waits for the next drain.  A queue row is visible only if the change that
 * queued it committed before, so the parts the drain reads include that
 * change.  A fork's own messages start after its fork_seq: its indexed_seq
 * starts there.  A document is replaced only when its words changed.
 *
 * The searched text of a part is that of src/reads/search.c (SEARCH_TSV).
 * Positions are left out (strip) of the documents of searched texts
 * shorter than MNEMO_SEARCH_POSITIONS_FROM characters (86% of the parts of
 * the real transcripts, 16% of their documents' bytes; all of a chat
 * turn's texts of bench/append, 43% of theirs): only a phrase and a rank
 * need them, and search.c computes such a part's words again where it
 * needs them (SEARCH_WORDS_OF).  A longer text keeps them: computing its
 * words again would cost each search that ranks it more than they take.
 */
#include "postgres.h"

#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_type.h"
#include "utils/array.h"
#include "utils/builtins.h"

#include "mnemo.h"
#include "tenancy/tenancy.h"
#include "reads/search.h"

static SPIPlanPtr queue_plan;
static SPIPlanPtr progress_plan;
static SPIPlanPtr session_plan;
static SPIPlanPtr top_plan;
static SPIPlanPtr queue_head_plan;
static SPIPlanPtr dequeue_plan;
static SPIPlanPtr drain_plan;
static SPIPlanPtr moved_plan;
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
				 "VALUES ($1, $2, $2, $3) ON CONFLICT (session_id, tenant, seq_from, seq_to) DO NOTHING",
				 3, (Oid[]) {TEXTOID, INT8OID, TEXTOID});
	MnemoExecute(queue_plan,
				 (Datum[]) {CStringGetTextDatum(session_id), Int64GetDatum(seq),
				 CStringGetTextDatum(tenant)},
				 NULL, false, 0);
}

/*
 * Drain session_id of tenant: index the parts of at most max_messages of its
 * waiting messages, the queued ones (changed since they were indexed) first,
 * then the oldest past indexed_seq, and move indexed_seq over those.  Returns
 * the number of documents written.  Inside SPI; the caller has checked the
 * session and resolved its tenant (MN001 if it is gone by the time the
 * drain locks it).
 *
 * Each statement names the one session and none is an INSERT ... SELECT
 * with a row lock, a CTE or a subquery in its RETURNING, so that Citus
 * routes each to the session's shard (doc/scale-out.md).
 */
int64
MnemoDrainSearch(const char *session_id, const char *tenant, int32 max_messages)
{
	Datum		values[5];
	int64		indexed_seq;
	int64		last_seq;
	int64		hi;
	int64		queued_to = 0;
	int64		budget = max_messages;
	ArrayType  *queued;
	Datum	   *seqs = NULL;
	int			nseqs = 0;
	int			maxseqs = 0;
	uint64		n;
	uint64		row;

	values[0] = CStringGetTextDatum(session_id);
	values[1] = CStringGetTextDatum(tenant);
	if (max_messages <= 0 || MnemoSearchPending(session_id, tenant, true) == 0)
		return 0;

	/*
	 * The session lock shared and the session row FOR KEY SHARE, in the
	 * order a purge takes them (a purge waits for the drain, and a drain
	 * after a purge finds no session), then the progress row, made on
	 * the first drain and locked by its DO UPDATE: a concurrent drain of the
	 * session waits there, then reads what this one wrote.
	 */
	MnemoLockSessionKey(tenant, session_id, AccessShareLock);
	MnemoPrepare(&session_plan,
				 "SELECT coalesce(s.fork_seq, 0) FROM mnemo.sessions s "
				 "WHERE s.id = $1 AND s.tenant = $2 FOR KEY SHARE",
				 2, (Oid[]) {TEXTOID, TEXTOID});
	if (MnemoExecute(session_plan, values, NULL, false, 0) != 1)
		ereport(ERROR,
				(errcode(ERRCODE_MNEMO_SESSION_NOT_FOUND),
				 errmsg("session \"%s\" does not exist", session_id)));
	values[2] = Int64GetDatum(MnemoGetInt64(0, 1, NULL));
	MnemoPrepare(&progress_plan,
				 "INSERT INTO mnemo.search_progress AS g (session_id, tenant, indexed_seq) "
				 "VALUES ($1, $2, $3) "
				 "ON CONFLICT (session_id, tenant) DO UPDATE SET indexed_seq = g.indexed_seq "
				 "RETURNING g.indexed_seq",
				 3, (Oid[]) {TEXTOID, TEXTOID, INT8OID});
	MnemoExecute(progress_plan, values, NULL, false, 0);
	indexed_seq = MnemoGetInt64(0, 1, NULL);

	/* fresh snapshots, taken after the lock: the last seq and its messages */
	MnemoPrepare(&top_plan,
				 "SELECT " MNEMO_LAST_SEQ("s", "$1") " FROM mnemo.sessions s "
				 "WHERE s.id = $1 AND s.tenant = $2",
				 2, (Oid[]) {TEXTOID, TEXTOID});
	MnemoExecute(top_plan, values, NULL, false, 1);
	last_seq = MnemoGetInt64(0, 1, NULL);

	/*
	 * The queued messages first, up to the budget: the first ranges by
	 * seq_from (an append queues one seq per row, and a range is never cut:
	 * it counts whole).
	 */
	values[2] = Int64GetDatum(budget);
	MnemoPrepare(&queue_head_plan,
				 "SELECT q.seq_from, q.seq_to FROM mnemo.search_queue q "
				 "WHERE q.session_id = $1 AND q.tenant = $2 "
				 "ORDER BY q.seq_from, q.seq_to LIMIT $3",
				 3, (Oid[]) {TEXTOID, TEXTOID, INT8OID});
	n = MnemoExecute(queue_head_plan, values, NULL, false, 0);
	for (row = 0; row < n && budget > 0; row++)
	{
		int64		from = MnemoGetInt64(row, 1, NULL);
		int64		to = MnemoGetInt64(row, 2, NULL);
		int64		seq;

		for (seq = from; seq <= to; seq++)
		{
			if (nseqs == maxseqs)
			{
				maxseqs = Max(64, maxseqs * 2);
				seqs = seqs ? repalloc(seqs, sizeof(Datum) * maxseqs)
					: palloc(sizeof(Datum) * maxseqs);
			}
			seqs[nseqs++] = Int64GetDatum(seq);
		}
		budget -= to - from + 1;
		queued_to = from;
	}
	if (nseqs > 0)
	{
		values[2] = Int64GetDatum(queued_to);
		MnemoPrepare(&dequeue_plan,
					 "DELETE FROM mnemo.search_queue "
					 "WHERE session_id = $1 AND tenant = $2 AND seq_from <= $3",
					 3, (Oid[]) {TEXTOID, TEXTOID, INT8OID});
		MnemoExecute(dequeue_plan, values, NULL, false, 0);
	}
	queued = construct_array(seqs, nseqs, INT8OID, sizeof(int64), FLOAT8PASSBYVAL, TYPALIGN_DOUBLE);

	/* then the oldest messages past indexed_seq, with what is left */
	hi = Min(last_seq, indexed_seq + Max(budget, 0));
	values[2] = Int64GetDatum(indexed_seq + 1);
	values[3] = Int64GetDatum(hi);
	values[4] = PointerGetDatum(queued);
	MnemoPrepare(&drain_plan,
				 "INSERT INTO mnemo.search_documents AS d "
				 "(session_id, part_index, tsv, tenant, seq) "
				 "SELECT $1, p.part_index, "
				 "CASE WHEN length(x.doc) < " CppAsString2(MNEMO_SEARCH_POSITIONS_FROM) " "
				 "THEN strip(to_tsvector('simple'::regconfig, x.doc)) "
				 "ELSE to_tsvector('simple'::regconfig, x.doc) END, p.tenant, p.seq "
				 "FROM mnemo.message_parts p, LATERAL (SELECT " SEARCH_DOC " AS doc OFFSET 0) x "
				 "WHERE p.session_id = $1 AND p.tenant = $2 "
				 "AND (p.seq BETWEEN $3 AND $4 OR p.seq = ANY ($5)) "
				 "ON CONFLICT (session_id, tenant, seq, part_index) DO UPDATE SET tsv = excluded.tsv "
				 "WHERE d.tsv IS DISTINCT FROM excluded.tsv",
				 5, (Oid[]) {TEXTOID, TEXTOID, INT8OID, INT8OID, INT8ARRAYOID});
	MnemoExecute(drain_plan, values, NULL, false, 0);
	n = SPI_processed;
	if (hi > indexed_seq)
	{
		values[2] = Int64GetDatum(hi);
		MnemoPrepare(&moved_plan,
					 "UPDATE mnemo.search_progress SET indexed_seq = $3 "
					 "WHERE session_id = $1 AND tenant = $2 AND indexed_seq < $3",
					 3, (Oid[]) {TEXTOID, TEXTOID, INT8OID});
		MnemoExecute(moved_plan, values, NULL, false, 0);
	}
	return (int64) n;
}

/*
 * How many of the messages of session_id of tenant wait to be indexed: its seqs past
 * indexed_seq, and the queued ones (a message queued while it waited
 * anyway counts twice).  Inside SPI.  fresh: with a new snapshot, to see
 * what committed while the caller waited (a drain); otherwise read-only,
 * which a parallel query allows (search_pending is PARALLEL SAFE).
 */
int64
MnemoSearchPending(const char *session_id, const char *tenant, bool fresh)
{
	Datum		values[2];

	values[0] = CStringGetTextDatum(session_id);
	values[1] = CStringGetTextDatum(tenant);
	MnemoPrepare(&pending_plan,
				 "SELECT greatest(" MNEMO_LAST_SEQ("s", "$1") " - coalesce(g.indexed_seq, s.fork_seq, 0), 0) "
				 "+ coalesce((SELECT sum(q.seq_to - q.seq_from + 1) FROM mnemo.search_queue q "
				 "            WHERE q.session_id = $1 AND q.tenant = $2), 0)::bigint "
				 "FROM mnemo.sessions s LEFT JOIN mnemo.search_progress g "
				 "ON g.session_id = $1 AND g.tenant = $2 "
				 "WHERE s.id = $1 AND s.tenant = $2",
				 2, (Oid[]) {TEXTOID, TEXTOID});
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
	int32		max_messages = DatumGetInt32(MnemoRequireArg(fcinfo, 1, "max_messages"));
	MnemoCall	call;
	char	   *tenant;
	int64		indexed;

	if (max_messages < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("max_messages must not be negative")));
	MnemoConnect(&call);
	MnemoCheckSession(session_id, false, &tenant, NULL);
	indexed = MnemoDrainSearch(session_id, tenant, max_messages);
	MnemoFinish(&call);
	PG_RETURN_INT64(indexed);
}

PG_FUNCTION_INFO_V1(mnemo_search_pending);
Datum
mnemo_search_pending(PG_FUNCTION_ARGS)
{
	char	   *session_id = MnemoRequireTextArg(fcinfo, 0, "session_id");
	MnemoCall	call;
	char	   *tenant;
	int64		pending;

	MnemoConnect(&call);
	MnemoCheckSession(session_id, false, &tenant, NULL);
	pending = MnemoSearchPending(session_id, tenant, false);
	MnemoFinish(&call);
	PG_RETURN_INT64(pending);
}
