/*
 * session_row.c
 *		What the session lock reads once it holds the lock, by two index
 *		probes: the session's row by its key (id, tenant), and its newest
 *		seq by a backward probe of the log's key (session_id, tenant, seq,
 *		part_index).  session_lock.c's SESSION_READ asks the same of SQL.
 *
 * Every append pays this read.  As a statement its plan, executor start-up
 * and init plan cost more than the two probes themselves: after the rows
 * themselves were written without SQL (core/insert_direct.c) the statement
 * was the larger part of the lock's 15% of an append's backend
 * (bench/profiles/append_lock.txt).  The probes are what its plan ran, with
 * the snapshot SPI would have given it, so what they see, and the
 * predicate locks SERIALIZABLE takes, are the statement's.
 *
 * On a plain layout only: where the tables are partitioned or Citus
 * tables the statement reads them (MnemoSessionRowDirect says which).  The
 * keys are found by their columns, not their names, and kept per backend
 * until a relcache invalidation of either table.
 *
 * The newest-seq probe is bounded below by the newest seq this backend last
 * found for the same session (newest below).  A backward btree scan reads
 * every item of its leaf page that passes its keys before it returns the
 * first: with only the session's key, that was the session's whole page,
 * a hundred key checks an append (5% of a turn's backend,
 * bench/profiles/turn.txt); with the bound, only the rows written since.
 * The bound is a hint: the newest seq only grows while the session lives,
 * so a probe that finds nothing at or above it (the session was purged and
 * made anew, or the rows it saw were rolled back) probes again without it.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/relscan.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_am.h"
#include "catalog/pg_index.h"
#include "executor/tuptable.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "mnemo.h"
#include "tenancy/tenancy.h"

/* the session row's columns the lock reads, in this order */
enum
{
	COL_IS_ACTIVE,
	COL_WATCHED,
	COL_AGENT,
	COL_MODEL_ID,
	COL_PROVIDER_ID,
	COL_TENANT,
	COL_CONTEXT_GENERATION,
	COL_CONTEXT_DEAD,
	COL_CONTEXT_TAIL_SEQ,
	COL_FORK_SEQ,
	NCOLS
};

static const char *const col_names[NCOLS] = {
	"is_active", "watched", "agent", "model_id", "provider_id", "tenant",
	"context_generation", "context_dead", "context_tail_seq", "fork_seq"
};

static const char *const session_key[] = {"id", "tenant"};
static const char *const seq_key[] = {"session_id", "tenant", "seq", "part_index"};

static struct
{
	bool		valid;			/* false: look at the tables again */
	bool		stale;			/* an invalidation came while they were looked at */
	Oid			sessions;
	Oid			sessions_key;
	Oid			log;
	Oid			log_key;
	AttrNumber	atts[NCOLS];
	AttrNumber	seq_att;
} tables;

/* the newest seq last found, of one session of one tenant; 0: none */
static struct
{
	char		session_id[NAMEDATALEN * 2];
	char		tenant[NAMEDATALEN * 2];
	int64		seq;
} newest;

static void
ForgetTables(Datum arg, Oid relid)
{
	if (relid == InvalidOid || relid == tables.sessions || relid == tables.log)
	{
		tables.valid = false;
		tables.stale = true;
		newest.seq = 0;
	}
}

/* the unique btree index of rel over exactly cols, without predicate; InvalidOid if none */
static Oid
KeyIndex(Relation rel, const char *const *cols, int ncols)
{
	List	   *indexes = RelationGetIndexList(rel);
	ListCell   *lc;
	Oid			found = InvalidOid;

	foreach(lc, indexes)
	{
		Relation	index = index_open(lfirst_oid(lc), AccessShareLock);
		Form_pg_index form = index->rd_index;
		bool		match = form->indisunique && form->indisvalid && form->indnkeyatts == ncols &&
			index->rd_rel->relam == BTREE_AM_OID &&
			heap_attisnull(index->rd_indextuple, Anum_pg_index_indpred, NULL) &&
			heap_attisnull(index->rd_indextuple, Anum_pg_index_indexprs, NULL);
		int			i;

		for (i = 0; match && i < ncols; i++)
			match = form->indkey.values[i] == get_attnum(RelationGetRelid(rel), cols[i]);
		index_close(index, AccessShareLock);
		if (match)
		{
			found = lfirst_oid(lc);
			break;
		}
	}
	list_free(indexes);
	return found;
}

/*
 * Whether the session row may be read here: a plain layout whose sessions
 * and log tables have their keys.
 */
bool
MnemoSessionRowDirect(void)
{
	static bool callback_registered = false;
	Oid			nsp;
	Relation	rel;
	int			c;

	if (MnemoTablesSpread())
		return false;

	/*
	 * The probes' locks, taken first: taking them reads the invalidations
	 * before them (a REINDEX CONCURRENTLY that replaced a key, a reinstall),
	 * so what is kept is checked against the tables as they are now.
	 */
	if (tables.valid)
	{
		LockRelationOid(tables.sessions, AccessShareLock);
		LockRelationOid(tables.log, AccessShareLock);
	}
	if (tables.valid)
		return OidIsValid(tables.sessions_key) && OidIsValid(tables.log_key);
	if (!callback_registered)
	{
		CacheRegisterRelcacheCallback(ForgetTables, (Datum) 0);
		callback_registered = true;
	}
	/* valid at the end, unless an error or an invalidation came meanwhile */
	tables.stale = false;
	nsp = get_namespace_oid("mnemo", false);
	tables.sessions = get_relname_relid("sessions", nsp);
	tables.log = get_relname_relid("log", nsp);

	rel = table_open(tables.sessions, AccessShareLock);
	tables.sessions_key = KeyIndex(rel, session_key, lengthof(session_key));
	for (c = 0; c < NCOLS; c++)
		if ((tables.atts[c] = get_attnum(tables.sessions, col_names[c])) == InvalidAttrNumber)
			elog(ERROR, "mnemo.sessions has no column \"%s\"", col_names[c]);
	table_close(rel, AccessShareLock);
	rel = table_open(tables.log, AccessShareLock);
	tables.log_key = KeyIndex(rel, seq_key, lengthof(seq_key));
	tables.seq_att = get_attnum(tables.log, "seq");
	table_close(rel, AccessShareLock);
	tables.valid = !tables.stale;
	return OidIsValid(tables.sessions_key) && OidIsValid(tables.log_key);
}

/*
 * The first row in dir of heap's index whose leading text columns equal
 * keys[0 .. nkeys-1] and, when min_seq > 0, whose next column (a bigint) is
 * at least min_seq, that snapshot sees, into slot; whether there is one.
 * The keys compare in the index's collation, as the statement's would.
 */
static bool
Probe(Relation heap, Oid indexoid, Datum *keys, int nkeys, int64 min_seq, ScanDirection dir,
	  Snapshot snapshot, TupleTableSlot *slot)
{
	Relation	index = index_open(indexoid, AccessShareLock);
	ScanKeyData scankeys[3];
	IndexScanDesc scan;
	bool		found;
	int			n = nkeys;
	int			i;

	Assert(nkeys < lengthof(scankeys));
	for (i = 0; i < nkeys; i++)
		ScanKeyEntryInitialize(&scankeys[i], 0, i + 1, BTEqualStrategyNumber, InvalidOid,
							   index->rd_indcollation[i], F_TEXTEQ, keys[i]);
	if (min_seq > 0)
		ScanKeyEntryInitialize(&scankeys[n++], 0, nkeys + 1, BTGreaterEqualStrategyNumber,
							   InvalidOid, InvalidOid, F_INT8GE, Int64GetDatum(min_seq));
	scan = index_beginscan(heap, index, snapshot, n, 0);
	index_rescan(scan, scankeys, n, NULL, 0);
	found = index_getnext_slot(scan, dir, slot);
	index_endscan(scan);
	/* the lock is held to the end of the transaction, as the executor's */
	index_close(index, NoLock);
	return found;
}

/*
 * Read session_id's row of tenant and its newest seq, as SESSION_READ in
 * snapshot (InvalidSnapshot: the transaction's, as SPI gives a statement)
 * after the call's earlier writes: *lock's fields but last_seq the newest
 * seq (no reservation), *is_active and the row's *ctid.  Whether found.
 * Only where MnemoSessionRowDirect(), asked just before in the same call.
 */
bool
MnemoReadSessionRow(const char *session_id, const char *tenant, Snapshot snapshot,
					MnemoSessionLock *lock, bool *is_active, ItemPointer ctid)
{
	Datum		keys[2] = {CStringGetTextDatum(session_id), CStringGetTextDatum(tenant)};
	Relation	sessions;
	Relation	log;
	TupleTableSlot *slot;
	bool		found;
	bool		isnull;
	Datum		fork_seq;
	bool		no_fork;

	CommandCounterIncrement();
	PushCopiedSnapshot(snapshot != InvalidSnapshot ? snapshot : GetTransactionSnapshot());
	UpdateActiveSnapshotCommandId();

	sessions = table_open(tables.sessions, AccessShareLock);
	slot = table_slot_create(sessions, NULL);
	found = Probe(sessions, tables.sessions_key, keys, 2, 0, ForwardScanDirection,
				  GetActiveSnapshot(), slot);
	if (found)
	{
		*is_active = DatumGetBool(slot_getattr(slot, tables.atts[COL_IS_ACTIVE], &isnull));
		lock->watched = DatumGetBool(slot_getattr(slot, tables.atts[COL_WATCHED], &isnull));
		lock->agent = TextDatumGetCString(slot_getattr(slot, tables.atts[COL_AGENT], &isnull));
		lock->model_id = TextDatumGetCString(slot_getattr(slot, tables.atts[COL_MODEL_ID], &isnull));
		lock->provider_id =
			TextDatumGetCString(slot_getattr(slot, tables.atts[COL_PROVIDER_ID], &isnull));
		lock->tenant = TextDatumGetCString(slot_getattr(slot, tables.atts[COL_TENANT], &isnull));
		lock->context_generation =
			DatumGetInt64(slot_getattr(slot, tables.atts[COL_CONTEXT_GENERATION], &isnull));
		lock->context_dead = DatumGetInt64(slot_getattr(slot, tables.atts[COL_CONTEXT_DEAD], &isnull));
		lock->context_tail_seq =
			DatumGetInt64(slot_getattr(slot, tables.atts[COL_CONTEXT_TAIL_SEQ], &isnull));
		fork_seq = slot_getattr(slot, tables.atts[COL_FORK_SEQ], &no_fork);
		lock->is_fork = !no_fork;
		lock->last_seq = no_fork ? 0 : DatumGetInt64(fork_seq);
		*ctid = slot->tts_tid;
	}
	ExecDropSingleTupleTableSlot(slot);
	table_close(sessions, NoLock);

	if (found)
	{
		/* the newest message's last row: its seq is the newest */
		int64		hint = 0;
		bool		newer;

		if (strcmp(newest.session_id, session_id) == 0 && strcmp(newest.tenant, tenant) == 0)
			hint = newest.seq;
		log = table_open(tables.log, AccessShareLock);
		slot = table_slot_create(log, NULL);
		newer = Probe(log, tables.log_key, keys, 2, hint, BackwardScanDirection,
					  GetActiveSnapshot(), slot);
		if (!newer && hint > 0)
			newer = Probe(log, tables.log_key, keys, 2, 0, BackwardScanDirection,
						  GetActiveSnapshot(), slot);
		if (newer)
			lock->last_seq = DatumGetInt64(slot_getattr(slot, tables.seq_att, &isnull));
		ExecDropSingleTupleTableSlot(slot);
		table_close(log, NoLock);
		newest.seq = 0;
		if (newer && strlen(session_id) < sizeof(newest.session_id) &&
			strlen(tenant) < sizeof(newest.tenant))
		{
			strcpy(newest.session_id, session_id);
			strcpy(newest.tenant, tenant);
			newest.seq = lock->last_seq;
		}
	}
	PopActiveSnapshot();
	return found;
}
