/*
 * search_index.c
 *		The full-text index of the log, built off the append path:
 *		mnemo.index_search() and mnemo.search_pending().
 *
 * An append does not index what it stores.  It adds one row to
 * mnemo.search_queue, the range of seqs it wrote (one row per call, however
 * many messages), and so does every later change to what a message's parts
 * say (append_part, and update_part_status merging an output or an error).
 * Draining a session's queue -- index_search(), which search_history() runs
 * first unless the transaction is read-only -- turns the parts of the queued
 * messages into mnemo.search_documents rows (one tsvector per part) under
 * the GIN index that search reads.  So an append pays for one small btree
 * insert instead of the GIN's, and never for a flush of the GIN's pending
 * list: that work happens on the drain, in the searcher's or a scheduled
 * job's time (doc/benchmarks.md, "Search without the tax").
 *
 * Correctness of the drain: a queue row is visible to the drain's snapshot
 * only if the change that queued it committed before, so the parts the drain
 * reads include that change; a change that commits later queues a row the
 * next drain takes.  Two drains of one session do not both take a row: the
 * DELETE waits for the other's lock and then skips the rows it took.  A
 * document is replaced only when its words changed.
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
static SPIPlanPtr requeue_plan;
static SPIPlanPtr drain_plan;
static SPIPlanPtr pending_plan;

/*
 * Queue seqs seq_from..seq_to of session_id for indexing.  Inside SPI, under
 * the session lock (or, for a part update, after the session check).  again:
 * the range may be queued already (a message appended earlier, changed
 * now); an append's range is new by construction and skips the conflict
 * check.
 */
void
MnemoQueueSearch(const char *session_id, const char *tenant, int64 seq_from, int64 seq_to,
				 bool again)
{
	Datum		values[4];

	values[0] = CStringGetTextDatum(session_id);
	values[1] = Int64GetDatum(seq_from);
	values[2] = Int64GetDatum(seq_to);
	values[3] = CStringGetTextDatum(tenant);
	if (again)
	{
		MnemoPrepare(&requeue_plan,
					 "INSERT INTO mnemo.search_queue (session_id, seq_from, seq_to, tenant) "
					 "VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING",
					 4, (Oid[]) {TEXTOID, INT8OID, INT8OID, TEXTOID});
		MnemoExecute(requeue_plan, values, NULL, false, 0);
	}
	else
	{
		MnemoPrepare(&queue_plan,
					 "INSERT INTO mnemo.search_queue (session_id, seq_from, seq_to, tenant) "
					 "VALUES ($1, $2, $3, $4)",
					 4, (Oid[]) {TEXTOID, INT8OID, INT8OID, TEXTOID});
		MnemoExecute(queue_plan, values, NULL, false, 0);
	}
}

/*
 * Drain session_id's queue: index the parts of every queued message.
 * Returns the number of documents written.  Inside SPI; the caller has
 * checked the session.
 */
int64
MnemoDrainSearch(const char *session_id)
{
	Datum		values[1];

	values[0] = CStringGetTextDatum(session_id);
	MnemoPrepare(&drain_plan,
				 "WITH q AS (DELETE FROM mnemo.search_queue WHERE session_id = $1 "
				 "           RETURNING seq_from, seq_to), "
				 "r AS (SELECT min(seq_from) AS lo, max(seq_to) AS hi FROM q) "
				 "INSERT INTO mnemo.search_documents AS d "
				 "(session_id, message_id, part_index, tsv, tenant) "
				 "SELECT $1, p.message_id, p.part_index, " SEARCH_TSV ", p.tenant "
				 "FROM mnemo.messages m JOIN mnemo.message_parts p "
				 "ON p.session_id = $1 AND p.message_id = m.id "
				 "WHERE m.session_id = $1 "
				 "AND m.seq BETWEEN (SELECT lo FROM r) AND (SELECT hi FROM r) "
				 "AND EXISTS (SELECT 1 FROM q WHERE m.seq BETWEEN q.seq_from AND q.seq_to) "
				 "ON CONFLICT (session_id, message_id, part_index) DO UPDATE SET tsv = excluded.tsv "
				 "WHERE d.tsv IS DISTINCT FROM excluded.tsv",
				 1, (Oid[]) {TEXTOID});
	MnemoExecute(drain_plan, values, NULL, false, 0);
	return (int64) SPI_processed;
}

/*
 * How many of session_id's messages wait to be indexed (a message queued
 * twice, appended and then changed, counts twice).  Inside SPI.
 */
int64
MnemoSearchPending(const char *session_id)
{
	Datum		values[1];

	values[0] = CStringGetTextDatum(session_id);
	MnemoPrepare(&pending_plan,
				 "SELECT coalesce(sum(seq_to - seq_from + 1), 0)::bigint "
				 "FROM mnemo.search_queue WHERE session_id = $1",
				 1, (Oid[]) {TEXTOID});
	MnemoExecute(pending_plan, values, NULL, true, 1);
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
	pending = MnemoSearchPending(session_id);
	MnemoFinish(&call);
	PG_RETURN_INT64(pending);
}
