/*
 * swap.c
 *		mnemo.swap_context_items(): the atomic context swap.
 *
 * Within one call, under the session lock: every named item leaves the
 * session's context view and one 'summary' item takes the smallest position
 * they held; the other items keep their positions, so nothing shifts.  The
 * same call serves leaf summaries (it removes messages) and condensation (it
 * removes summaries).
 *
 * The view is the explicit rows of the live generation of context_items,
 * then the implicit tail: the session's non-summary messages after
 * sessions.context_tail_seq, each at position = its seq (mnemo.h
 * MNEMO_CONTEXT_VIEW); an append writes no context row.  A swap whose span
 * reaches into the tail moves context_tail_seq past the span and writes the
 * tail items it keeps before that point as rows at their seqs, beside the
 * summary's row at the span's smallest position; the items after the span
 * stay implicit.  Positions never shift: an item has the same position as
 * a tail item and as a row.
 *
 * Every read of the explicit rows is an index range scan over (session_id,
 * generation) of its live generation (sessions.context_generation).  A swap
 * deletes the removed rows in place (a removed tail item has none), unless
 * the rows so deleted in the generation (sessions.context_dead) would then
 * outnumber the live ones: then it writes the survivors and the summary as
 * the next generation and deletes the old one, whose dead rows lie outside
 * every range a read visits.  So a read never steps over more dead rows
 * than the view has live ones, vacuumed or not, whatever snapshot is open:
 * assembly right after a swap of 49,800 items of 50,000 costs what it costs
 * on a session that never had them (doc/benchmarks.md).  The rewrites
 * cost O(1) rows per removed item over time; every swap reads the view
 * once.
 *
 * Invariant 3: the swap happens entirely or not at all.  Every check runs
 * before the first row changes, and any failure is MN006 with nothing
 * changed: an empty or duplicated list, an id not in the context view now
 * (another compactor won the race), or a summary id that is not a summary
 * message of this session, is already in its context, is a summary node
 * (those enter the view through commit_summary alone), or was discarded by
 * a resume (off the line, it may not re-enter the view).  The checks run
 * after the lock is taken, with a fresh snapshot, so two compactors racing
 * on one span cannot both pass them.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"

#include "mnemo.h"

static SPIPlanPtr summary_plan;
static SPIPlanPtr missing_plan;
static SPIPlanPtr generation_plan;
static SPIPlanPtr view_plan;
static SPIPlanPtr drop_plan;
static SPIPlanPtr remove_plan;
static SPIPlanPtr insert_plan;

/*
 * qsort comparators of lists as long as a caller's array: a sort of
 * millions of ids takes seconds, which a cancel must be able to stop
 * (pg_qsort is PostgreSQL's own, left safely by an error).
 */
static int
CompareStrings(const void *a, const void *b)
{
	CHECK_FOR_INTERRUPTS();
	return strcmp(*(char *const *) a, *(char *const *) b);
}

/*
 * MN006 for an empty list or an id named twice.  ids is a list as
 * MnemoTextListArg checked it.
 */
void
MnemoCheckRemoveList(ArrayType *ids, const char *session_id)
{
	Datum	   *elems;
	int			n;
	char	  **sorted;
	int			i;

	deconstruct_array(ids, TEXTOID, -1, false, TYPALIGN_INT, &elems, NULL, &n);
	if (n == 0)
		ereport(ERROR,
				(errcode(ERRCODE_MNEMO_INVALID_SWAP),
				 errmsg("invalid context swap in session \"%s\": no items to remove", session_id)));
	sorted = palloc(sizeof(char *) * n);
	for (i = 0; i < n; i++)
	{
		CHECK_FOR_INTERRUPTS();
		sorted[i] = TextDatumGetCString(elems[i]);
	}
	qsort(sorted, n, sizeof(char *), CompareStrings);
	for (i = 1; i < n; i++)
		if (strcmp(sorted[i - 1], sorted[i]) == 0)
			ereport(ERROR,
					(errcode(ERRCODE_MNEMO_INVALID_SWAP),
					 errmsg("invalid context swap in session \"%s\": item \"%s\" is named twice",
							session_id, sorted[i])));
}

/*
 * The swap itself, for swap_context_items and commit_summary.  The caller is
 * inside SPI and holds the session lock; items_checked says it has already
 * run MnemoCheckRemoveList and MnemoFindInContext under that lock.  Moves
 * lock->context_generation to the new generation.  Returns the summary's
 * position.
 */
int64
MnemoSwap(const char *session_id, MnemoSessionLock *lock, ArrayType *ids, const char *summary_id,
		  bool items_checked)
{
	Oid			types[3] = {TEXTOID, TEXTARRAYOID, TEXTOID};
	Datum		values[3];
	int64		position;
	int64		removed;
	int64		summary_seq;
	int64		generation;
	int			nids;
	Datum	   *elems;
	char	  **sorted;
	Datum	   *cols;
	Datum	   *gone;
	int64		dead;
	int64		tail_seq;
	bool	   *fresh;
	bool		rewrite;
	int			ngone;
	int			n;
	uint64		nrows;
	uint64		row;
	int			kept;
	int			i;

	if (!items_checked)
		MnemoCheckRemoveList(ids, session_id);
	nids = ArrayGetNItems(ARR_NDIM(ids), ARR_DIMS(ids));
	values[0] = CStringGetTextDatum(session_id);
	values[1] = PointerGetDatum(ids);
	values[2] = CStringGetTextDatum(summary_id);

	/* the statements below run read-write: they must see what committed while we waited */
	MnemoPrepare(&summary_plan,
				 "SELECT m.is_summary, "
				 "EXISTS (SELECT 1 FROM " MNEMO_CONTEXT_VIEW " c "
				 "        WHERE c.item_id = $3), m.seq, "
				 "EXISTS (SELECT 1 FROM mnemo.summary_nodes n "
				 "        WHERE n.session_id = $1 AND n.id = $3), "
				 "EXISTS (SELECT 1 FROM mnemo.discarded d WHERE d.session_id = $1 "
				 "        AND m.seq BETWEEN d.seq_from AND d.seq_to) "
				 "FROM mnemo.messages m WHERE m.session_id = $1 AND m.id = $3",
				 3, types);
	if (MnemoExecute(summary_plan, values, NULL, false, 1) != 1 || !MnemoGetBool(0, 1))
		ereport(ERROR,
				(errcode(ERRCODE_MNEMO_INVALID_SWAP),
				 errmsg("invalid context swap in session \"%s\": \"%s\" is not a summary message of the session",
						session_id, summary_id)));
	if (MnemoGetBool(0, 2))
		ereport(ERROR,
				(errcode(ERRCODE_MNEMO_INVALID_SWAP),
				 errmsg("invalid context swap in session \"%s\": summary \"%s\" is already in context",
						session_id, summary_id)));
	summary_seq = MnemoGetInt64(0, 3, NULL);

	/* a resume took it off the line: readable by id, but no longer history */
	if (MnemoGetBool(0, 5))
		ereport(ERROR,
				(errcode(ERRCODE_MNEMO_INVALID_SWAP),
				 errmsg("invalid context swap in session \"%s\": summary \"%s\" was discarded by a resume",
						session_id, summary_id)));

	/*
	 * A node's message enters the view only through commit_summary, the one
	 * caller that passes items_checked: a bare swap could reinstate a node a
	 * condensation superseded, which summary_nodes() no longer lists and a
	 * later condensation would give a second parent.
	 */
	if (!items_checked && MnemoGetBool(0, 4))
		ereport(ERROR,
				(errcode(ERRCODE_MNEMO_INVALID_SWAP),
				 errmsg("invalid context swap in session \"%s\": \"%s\" is a summary node",
						session_id, summary_id),
				 errhint("Only commit_summary puts a summary node in context.")));

	if (!items_checked)
		MnemoFindInContext(session_id, ids, NULL, NULL);

	/*
	 * The view as it is, explicit rows and tail: which rows go, which stay.
	 * The removed items are told from the others in C, by binary search in
	 * the sorted list: in SQL, a plan made while the session was small
	 * compared every row of the view with every id (minutes for a view of
	 * 50,000).
	 */
	deconstruct_array(ids, TEXTOID, -1, false, TYPALIGN_INT, &elems, NULL, &nids);
	sorted = palloc(sizeof(char *) * nids);
	for (i = 0; i < nids; i++)
		sorted[i] = TextDatumGetCString(elems[i]);
	qsort(sorted, nids, sizeof(char *), CompareStrings);
	MnemoPrepare(&view_plan,
				 "SELECT c.row_id, c.position, c.item_type, c.item_id, c.seq, c.created_at "
				 "FROM " MNEMO_CONTEXT_VIEW " c ORDER BY c.position",
				 1, (Oid[]) {TEXTOID});
	nrows = MnemoExecute(view_plan, values, NULL, false, 0);

	/* the new tail start: past every tail item the span takes */
	tail_seq = lock->context_tail_seq;
	for (row = 0; row < nrows; row++)
	{
		char	   *item_id;
		bool		tail;

		/* a tail item has no row id */
		SPI_getbinval(SPI_tuptable->vals[row], SPI_tuptable->tupdesc, 1, &tail);
		if (!tail)
			continue;
		item_id = MnemoGetText(row, 4, NULL);
		if (bsearch(&item_id, sorted, nids, sizeof(char *), CompareStrings))
			tail_seq = Max(tail_seq, MnemoGetInt64(row, 5, NULL));
	}

	gone = palloc(sizeof(Datum) * Max(nids, 1));
	cols = palloc(sizeof(Datum) * 5 * (nrows + 1));
	fresh = palloc(sizeof(bool) * (nrows + 1));
	kept = 0;
	removed = 0;
	ngone = 0;
	position = PG_INT64_MAX;
	for (row = 0; row < nrows; row++)
	{
		char	   *item_id = MnemoGetText(row, 4, NULL);
		int64		pos = MnemoGetInt64(row, 2, NULL);
		int64		seq = MnemoGetInt64(row, 5, NULL);
		bool		tail;
		Datum		row_id = SPI_getbinval(SPI_tuptable->vals[row], SPI_tuptable->tupdesc, 1, &tail);

		if (bsearch(&item_id, sorted, nids, sizeof(char *), CompareStrings))
		{
			if (!tail && ngone < nids)
				gone[ngone++] = row_id;
			removed++;
			position = Min(position, pos);
			continue;
		}
		/* tail items after the span stay implicit; those before it become rows */
		if (tail && seq > tail_seq)
			continue;
		cols[kept] = Int64GetDatum(pos);
		cols[(nrows + 1) + kept] = CStringGetTextDatum(MnemoGetText(row, 3, NULL));
		cols[2 * (nrows + 1) + kept] = CStringGetTextDatum(item_id);
		cols[3 * (nrows + 1) + kept] = Int64GetDatum(seq);
		cols[4 * (nrows + 1) + kept] = Int64GetDatum(MnemoGetInt64(row, 6, NULL));
		fresh[kept] = tail;
		kept++;
	}
	if (removed != nids)
		elog(ERROR, "context swap removed " INT64_FORMAT " items of %d", removed, nids);
	cols[kept] = Int64GetDatum(position);
	cols[(nrows + 1) + kept] = CStringGetTextDatum("summary");
	cols[2 * (nrows + 1) + kept] = values[2];
	cols[3 * (nrows + 1) + kept] = Int64GetDatum(summary_seq);
	cols[4 * (nrows + 1) + kept] = Int64GetDatum(MnemoNowMs());
	fresh[kept] = true;
	kept++;

	/*
	 * Rows deleted in place stay in the live generation's index range, dead,
	 * until VACUUM (longer while an older snapshot is open), and a read
	 * steps over them.  So once the dead rows would outnumber the live ones,
	 * the view is written anew as the next generation instead: a read then
	 * never steps over more dead rows than the view has live ones, and the
	 * rewrites cost O(1) rows per removed item over time (a swap of most of
	 * the view rewrites at once; a run of small swaps rewrites once in a
	 * while).  Removed tail items leave no dead row.
	 */
	dead = lock->context_dead + ngone;
	rewrite = dead > kept;
	if (rewrite)
	{
		generation = lock->context_generation + 1;
		dead = 0;
		MnemoPrepare(&drop_plan,
					 "DELETE FROM mnemo.context_items WHERE session_id = $1 AND generation = $2",
					 2, (Oid[]) {TEXTOID, INT8OID});
		MnemoExecute(drop_plan, (Datum[]) {values[0], Int64GetDatum(lock->context_generation)},
					 NULL, false, 0);
	}
	else
	{
		generation = lock->context_generation;
		if (ngone > 0)
		{
			MnemoPrepare(&remove_plan,
						 "DELETE FROM mnemo.context_items WHERE session_id = $1 AND ctid = ANY ($2)",
						 2, (Oid[]) {TEXTOID, TIDARRAYOID});
			MnemoExecute(remove_plan,
						 (Datum[]) {values[0],
						 PointerGetDatum(construct_array(gone, ngone, TIDOID, sizeof(ItemPointerData), false, TYPALIGN_SHORT))},
						 NULL, false, 0);
		}
		/* only the new rows: the summary and the tail items before it */
		n = 0;
		for (i = 0; i < kept; i++)
		{
			int			c;

			if (!fresh[i])
				continue;
			for (c = 0; c < 5; c++)
				cols[c * (nrows + 1) + n] = cols[c * (nrows + 1) + i];
			n++;
		}
		kept = n;
	}

	/* the survivors, when rewritten, the new rows, in position order */
	MnemoPrepare(&insert_plan,
				 "INSERT INTO mnemo.context_items (session_id, position, item_type, item_id, "
				 "seq, created_at, tenant, generation) "
				 "SELECT $1, v.p, v.t, v.i, v.s, v.c, $7, $8 "
				 "FROM unnest($2, $3, $4, $5, $6) AS v(p, t, i, s, c) ORDER BY v.p",
				 8, (Oid[]) {TEXTOID, INT8ARRAYOID, TEXTARRAYOID, TEXTARRAYOID, INT8ARRAYOID,
				 INT8ARRAYOID, TEXTOID, INT8OID});
	MnemoExecute(insert_plan,
				 (Datum[]) {values[0],
					 PointerGetDatum(construct_array(cols, kept, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE)),
					 PointerGetDatum(construct_array(cols + (nrows + 1), kept, TEXTOID, -1, false, TYPALIGN_INT)),
					 PointerGetDatum(construct_array(cols + 2 * (nrows + 1), kept, TEXTOID, -1, false, TYPALIGN_INT)),
					 PointerGetDatum(construct_array(cols + 3 * (nrows + 1), kept, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE)),
					 PointerGetDatum(construct_array(cols + 4 * (nrows + 1), kept, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE)),
					 CStringGetTextDatum(lock->tenant),
				 Int64GetDatum(generation)},
				 NULL, false, 0);
	MnemoPrepare(&generation_plan,
				 "UPDATE mnemo.sessions SET context_generation = $2, context_dead = $3, "
				 "context_tail_seq = $4 WHERE id = $1",
				 4, (Oid[]) {TEXTOID, INT8OID, INT8OID, INT8OID});
	MnemoExecute(generation_plan,
				 (Datum[]) {values[0], Int64GetDatum(generation), Int64GetDatum(dead),
				 Int64GetDatum(tail_seq)},
				 NULL, false, 0);
	lock->context_generation = generation;
	lock->context_dead = dead;
	lock->context_tail_seq = tail_seq;
	return position;
}

/* an item of a view, for look-ups by id (MnemoFindInContext) */
typedef struct ViewItem
{
	char	   *id;
	Datum		type;			/* text */
	int64		seq;
} ViewItem;

static int
CompareViewItems(const void *a, const void *b)
{
	CHECK_FOR_INTERRUPTS();
	return strcmp(((const ViewItem *) a)->id, ((const ViewItem *) b)->id);
}

/*
 * For each of ids, in the order given, its item type and seq in session_id's
 * live view (explicit rows and tail) into types[i] and
 * seqs[i] (unless NULL); MN006 naming the first one that is not in the view
 * now.  Inside SPI, under the session lock.
 *
 * The view is read once, by its key's range, and the ids are found in it by
 * binary search in C.  Look-ups by id in SQL would need an index on the
 * view's item ids, one more btree entry for every message appended, to save
 * a compaction (which reads the whole view anyway) a scan; and a join of
 * the list against the view, planned while the session was small, compared
 * every id with every item (20 s for 20,000 items).
 */
void
MnemoFindInContext(const char *session_id, ArrayType *ids, Datum *types, Datum *seqs)
{
	ViewItem   *view;
	ViewItem	key;
	ViewItem   *found;
	Datum	   *elems;
	int			nids;
	uint64		n;
	uint64		row;
	int			i;

	MnemoPrepare(&missing_plan,
				 "SELECT c.item_id, c.item_type, c.seq FROM " MNEMO_CONTEXT_VIEW " c",
				 1, (Oid[]) {TEXTOID});
	n = MnemoExecute(missing_plan, (Datum[]) {CStringGetTextDatum(session_id)}, NULL, false, 0);
	view = palloc(sizeof(ViewItem) * Max(n, 1));
	for (row = 0; row < n; row++)
	{
		view[row].id = MnemoGetText(row, 1, NULL);
		view[row].type = CStringGetTextDatum(MnemoGetText(row, 2, NULL));
		view[row].seq = MnemoGetInt64(row, 3, NULL);
	}
	qsort(view, n, sizeof(ViewItem), CompareViewItems);

	deconstruct_array(ids, TEXTOID, -1, false, TYPALIGN_INT, &elems, NULL, &nids);
	for (i = 0; i < nids; i++)
	{
		key.id = TextDatumGetCString(elems[i]);
		found = n > 0 ? bsearch(&key, view, n, sizeof(ViewItem), CompareViewItems) : NULL;
		if (found == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_MNEMO_INVALID_SWAP),
					 errmsg("invalid context swap in session \"%s\": item \"%s\" is not in context",
							session_id, key.id),
					 errhint("Another compaction may have replaced it; rebuild the span and retry.")));
		if (types)
			types[i] = found->type;
		if (seqs)
			seqs[i] = Int64GetDatum(found->seq);
	}
}

PG_FUNCTION_INFO_V1(mnemo_swap_context_items);
Datum
mnemo_swap_context_items(PG_FUNCTION_ARGS)
{
	char	   *session_id = MnemoRequireTextArg(fcinfo, 0, "session_id");
	ArrayType  *ids = MnemoTextListArg(fcinfo, 1, "remove_item_ids");
	char	   *summary_id = MnemoRequireTextArg(fcinfo, 2, "summary_id");
	MnemoSessionLock lock;
	MnemoCall	call;
	int64		position;

	MnemoConnect(&call);
	MnemoLockSession(session_id, 0, 0, true, &lock);
	position = MnemoSwap(session_id, &lock, ids, summary_id, false);
	MnemoNotify(lock.watched, lock.tenant, "context_swapped", session_id, summary_id, -1);
	MnemoFinish(&call);
	PG_RETURN_INT64(position);
}
