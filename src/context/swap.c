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
 * sessions.context_tail_seq, each at position = its seq (context.h
 * MNEMO_CONTEXT_VIEW); an append writes no context row.  A swap whose span
 * reaches into the tail moves context_tail_seq past the span and writes the
 * tail items it keeps before that point as rows at their seqs, beside the
 * summary's row at the span's smallest position; the items after the span
 * stay implicit.  Positions never shift: an item has the same position as
 * a tail item and as a row.
 *
 * Every read of the explicit rows is an index range scan over (session_id,
 * tenant, generation) of its live generation (sessions.context_generation);
 * every statement names the session by its id and the tenant the lock
 * resolved, a session id being unique within its tenant only.  A swap
 * deletes the removed rows in place (a removed tail item has none), unless
 * the rows so deleted in the generation (sessions.context_dead) would then
 * outnumber the live ones: then it writes the survivors and the summary as
 * the next generation and deletes the old one, whose dead rows lie outside
 * every range a read visits.  So a read never steps over more dead rows
 * than the view has live ones, vacuumed or not, whatever snapshot is open:
 * assembly right after a swap of 49,800 items of 50,000 costs what it costs
 * on a session that never had them (doc/benchmarks.md).  The rewrites
 * cost O(1) rows per removed item over time.  Otherwise a swap costs its
 * block: it finds the items it names by key and checks them against their
 * neighbours in the view (MnemoFindInContext), and reads no other item of
 * the view, explicit or tail (issue 36).
 *
 * Invariant 3: the swap happens entirely or not at all.  Every check runs
 * before the first row changes, and any failure is MN006 with nothing
 * changed: an empty or duplicated list, an id not in the context view now
 * (another compactor won the race), items that are not one contiguous run
 * of the view (invariant 9), or a summary id that is not a summary
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
#include "tenancy/tenancy.h"
#include "context/context.h"

static SPIPlanPtr summary_plan;
static SPIPlanPtr find_plan;
static SPIPlanPtr span_plan;
static SPIPlanPtr before_plan;
static SPIPlanPtr count_plan;
static SPIPlanPtr rows_plan;
static SPIPlanPtr generation_plan;
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

static int
CompareItemPositions(const void *a, const void *b)
{
	int64		pa = (*(MnemoSwapItem *const *) a)->position;
	int64		pb = (*(MnemoSwapItem *const *) b)->position;

	return pa < pb ? -1 : pa > pb ? 1 : 0;
}

static int
CompareInt64(const void *a, const void *b)
{
	int64		pa = *(const int64 *) a;
	int64		pb = *(const int64 *) b;

	return pa < pb ? -1 : pa > pb ? 1 : 0;
}

/*
 * For each of ids, in the order given, the item of session_id's live view
 * (explicit rows and tail) it names: its type, seq, position and, for an
 * explicit row, that row; *nitems gets their number.  MN006 naming the
 * first one that is not in the view now, and MN006 unless they are one
 * contiguous run of the view (invariant 9): a summary takes the smallest
 * position of its span, so an item left between named ones would sit after
 * a summary that claims it.  Inside SPI, under the session lock (lock holds
 * the live generation and tail start).
 *
 * Each id is looked up by key: an explicit row by (session_id, tenant,
 * generation, item_id), a tail item as the session's message by
 * (session_id, tenant, id) with a seq past the tail start; then the view's
 * items from the span's first position to its last are read by position,
 * no more of them than were named plus one.  So a swap costs its block,
 * not the view (issue 36; it read the whole view twice, 17 s at 900,000
 * uncompacted messages).  A tail item's look-up is ordered by id (one row:
 * ids are unique in a session) so that only the primary key (session_id,
 * tenant, id) serves it without a sort: on a session filled since the last
 * ANALYZE, the planner counted the session as one row, found (session_id,
 * tenant, seq) as cheap, and scanned the whole session for each id, 38
 * million index fetches for a 379-item leaf of a fresh 100,000-message
 * import (10 s; 28 ms once analysed).
 */
MnemoSwapItem *
MnemoFindInContext(const char *session_id, MnemoSessionLock *lock, ArrayType *ids, int *nitems)
{
	MnemoSwapItem *items;
	MnemoSwapItem **sorted;
	Datum		values[7];
	Datum	   *elems;
	int			nids;
	uint64		n;
	uint64		row;
	int			i;

	deconstruct_array(ids, TEXTOID, -1, false, TYPALIGN_INT, &elems, NULL, &nids);
	values[0] = CStringGetTextDatum(session_id);
	values[1] = PointerGetDatum(ids);
	values[2] = Int64GetDatum(lock->context_generation);
	values[3] = Int64GetDatum(lock->context_tail_seq);
	values[4] = CStringGetTextDatum(lock->tenant);
	MnemoPrepare(&find_plan,
				 "SELECT u.ord, c.item_type, coalesce(c.seq, t.seq), coalesce(c.position, t.seq), "
				 "c.ctid FROM unnest($2::text[]) WITH ORDINALITY AS u(id, ord) "
				 "LEFT JOIN LATERAL (SELECT c.item_type, c.seq, c.position, c.ctid "
				 "         FROM mnemo.context_items c WHERE c.session_id = $1 AND c.tenant = $5 "
				 "         AND c.generation = $3 AND c.item_id = u.id OFFSET 0) c ON true "
				 "LEFT JOIN LATERAL (SELECT t.seq FROM mnemo.messages t "
				 "         WHERE t.session_id = $1 AND t.tenant = $5 AND t.id = u.id AND t.seq > $4 "
				 "         AND NOT t.is_summary ORDER BY t.id LIMIT 1) t ON true "
				 "ORDER BY u.ord",
				 5, (Oid[]) {TEXTOID, TEXTARRAYOID, INT8OID, INT8OID, TEXTOID});
	n = MnemoExecute(find_plan, values, NULL, false, 0);
	if (n != (uint64) nids)
		elog(ERROR, "context swap found " UINT64_FORMAT " rows for %d items", n, nids);
	items = palloc0(sizeof(MnemoSwapItem) * Max(nids, 1));
	sorted = palloc(sizeof(MnemoSwapItem *) * Max(nids, 1));
	for (row = 0; row < n; row++)
	{
		MnemoSwapItem *item = &items[row];
		bool		isnull;
		Datum		ctid;

		CHECK_FOR_INTERRUPTS();
		item->id = TextDatumGetCString(elems[row]);
		item->seq = MnemoGetInt64(row, 3, &isnull);
		if (isnull)
			ereport(ERROR,
					(errcode(ERRCODE_MNEMO_INVALID_SWAP),
					 errmsg("invalid context swap in session \"%s\": item \"%s\" is not in context",
							session_id, item->id),
					 errhint("Another compaction may have replaced it; rebuild the span and retry.")));
		item->position = MnemoGetInt64(row, 4, NULL);
		ctid = SPI_getbinval(SPI_tuptable->vals[row], SPI_tuptable->tupdesc, 5, &item->tail);
		if (!item->tail)
			ItemPointerCopy((ItemPointer) DatumGetPointer(ctid), &item->row);
		item->type = CStringGetTextDatum(item->tail ? "message" : MnemoGetText(row, 2, NULL));
		sorted[row] = item;
	}
	qsort(sorted, nids, sizeof(MnemoSwapItem *), CompareItemPositions);

	/*
	 * The view from the first named position on, explicit rows then tail
	 * (all explicit positions are below the tail's), as many items as were
	 * named and one more: the named ones are contiguous if and only if these
	 * are them.  Both branches come in position order, an index range and
	 * seq by seq; the LIMIT stops the read at the first item that is not
	 * one of them.
	 */
	values[1] = Int64GetDatum(sorted[0]->position);
	values[5] = Int64GetDatum(sorted[nids - 1]->position);
	values[6] = Int64GetDatum(nids);
	MnemoPrepare(&span_plan,
				 "SELECT v.position, v.item_id FROM ("
				 " (SELECT c.position, c.item_id FROM mnemo.context_items c "
				 "  WHERE c.session_id = $1 AND c.tenant = $5 AND c.generation = $3 "
				 "  AND c.position BETWEEN $2 AND $6 ORDER BY c.position) "
				 " UNION ALL "
				 " SELECT t.seq, t.id FROM generate_series(greatest($2, $4 + 1), $6) g(seq), "
				 " LATERAL (SELECT t.seq, t.id FROM mnemo.messages t WHERE t.session_id = $1 "
				 "          AND t.tenant = $5 AND t.seq = g.seq AND NOT t.is_summary OFFSET 0) t"
				 ") v LIMIT $7",
				 7, (Oid[]) {TEXTOID, INT8OID, INT8OID, INT8OID, TEXTOID, INT8OID, INT8OID});
	n = MnemoExecute(span_plan, values, NULL, false, 0);
	for (i = 0; i < nids; i++)
	{
		int64		pos;

		if ((uint64) i >= n)
			elog(ERROR, "context swap read %d of the %d items it names", i, nids);
		pos = MnemoGetInt64(i, 1, NULL);
		if (i > 0 && pos <= MnemoGetInt64(i - 1, 1, NULL))
			elog(ERROR, "context swap read its span out of position order");
		if (pos != sorted[i]->position)
			ereport(ERROR,
					(errcode(ERRCODE_MNEMO_INVALID_SWAP),
					 errmsg("invalid context swap in session \"%s\": the items are not a contiguous run of the context view: \"%s\" lies between \"%s\" and \"%s\"",
							session_id, MnemoGetText(i, 2, NULL), sorted[i - 1]->id,
							sorted[i]->id),
					 errhint("A summary replaces one contiguous run of items.")));
	}
	*nitems = nids;
	return items;
}

/*
 * The swap itself, for swap_context_items and commit_summary.  The caller is
 * inside SPI and holds the session lock; items are the nitems ids as
 * MnemoFindInContext found them under that lock, or NULL to find them here,
 * after the summary's checks.  node: the caller is commit_summary,
 * which stored summary_id as a summary node.  Moves lock->context_generation
 * to the new generation.  Returns the summary's position.
 */
int64
MnemoSwap(const char *session_id, MnemoSessionLock *lock, ArrayType *ids, MnemoSwapItem *items,
		  int nitems, const char *summary_id, bool node)
{
	Oid			types[5] = {TEXTOID, INT8OID, TEXTOID, INT8OID, TEXTOID};
	Datum		values[5];
	int64		position;
	int64		summary_seq;
	int64		generation;
	int64		dead;
	int64		tail_seq;
	int64		first_tail = PG_INT64_MAX;
	int64		live;
	int64	   *gone_positions;
	Datum	   *gone;
	Datum	   *cols;
	int			ngone;
	int			ncols;
	int			kept;
	uint64		nrows;
	uint64		row;
	bool		rewrite;
	int			i;

	values[0] = CStringGetTextDatum(session_id);
	values[1] = Int64GetDatum(lock->context_generation);
	values[2] = CStringGetTextDatum(summary_id);
	values[3] = Int64GetDatum(lock->context_tail_seq);
	values[4] = CStringGetTextDatum(lock->tenant);

	/*
	 * The statements below run read-write: they must see what committed while
	 * we waited.  A summary message is never in the tail (it holds messages
	 * that are not summaries), so it is in context if it has a row.
	 */
	MnemoPrepare(&summary_plan,
				 "SELECT m.is_summary, "
				 "EXISTS (SELECT 1 FROM mnemo.context_items c WHERE c.session_id = $1 "
				 "        AND c.tenant = $5 AND c.generation = $2 AND c.item_id = $3), m.seq, "
				 "EXISTS (SELECT 1 FROM mnemo.summary_nodes n "
				 "        WHERE n.session_id = $1 AND n.tenant = $5 AND n.id = $3), "
				 "EXISTS (SELECT 1 FROM mnemo.discarded d WHERE d.session_id = $1 "
				 "        AND d.tenant = $5 AND m.seq BETWEEN d.seq_from AND d.seq_to) "
				 "FROM mnemo.messages m WHERE m.session_id = $1 AND m.tenant = $5 AND m.id = $3",
				 5, types);
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
	 * A node's message enters the view only through commit_summary: a bare
	 * swap could reinstate a node a condensation superseded, which
	 * summary_nodes() no longer lists and a later condensation would give a
	 * second parent.
	 */
	if (!node && MnemoGetBool(0, 4))
		ereport(ERROR,
				(errcode(ERRCODE_MNEMO_INVALID_SWAP),
				 errmsg("invalid context swap in session \"%s\": \"%s\" is a summary node",
						session_id, summary_id),
				 errhint("Only commit_summary puts a summary node in context.")));

	if (items == NULL)
		items = MnemoFindInContext(session_id, lock, ids, &nitems);

	/*
	 * The removed rows, the summary's position (the span's smallest) and the
	 * new tail start: past every tail item the span takes.
	 */
	gone = palloc(sizeof(Datum) * nitems);
	gone_positions = palloc(sizeof(int64) * nitems);
	ngone = 0;
	position = PG_INT64_MAX;
	tail_seq = lock->context_tail_seq;
	for (i = 0; i < nitems; i++)
	{
		position = Min(position, items[i].position);
		if (items[i].tail)
		{
			tail_seq = Max(tail_seq, items[i].seq);
			first_tail = Min(first_tail, items[i].seq);
			continue;
		}
		gone[ngone] = PointerGetDatum(&items[i].row);
		gone_positions[ngone++] = items[i].position;
	}
	qsort(gone_positions, ngone, sizeof(int64), CompareInt64);

	/*
	 * Rows deleted in place stay in the live generation's index range, dead,
	 * until VACUUM (longer while an older snapshot is open), and a read
	 * steps over them.  So once the dead rows would outnumber the live ones,
	 * the view is written anew as the next generation instead: a read then
	 * never steps over more dead rows than the view has live ones, and the
	 * rewrites cost O(1) rows per removed item over time (a swap of most of
	 * the view rewrites at once; a run of small swaps rewrites once in a
	 * while).  Removed tail items leave no dead row.  The live rows are
	 * counted by the generation's key range: the explicit view, which
	 * compaction keeps near its budget, never the tail.
	 */
	MnemoPrepare(&count_plan,
				 "SELECT count(*) FROM mnemo.context_items "
				 "WHERE session_id = $1 AND tenant = $5 AND generation = $2",
				 5, types);
	MnemoExecute(count_plan, values, NULL, false, 0);
	live = MnemoGetInt64(0, 1, NULL);

	/*
	 * The new rows: the tail items between the tail start and the span,
	 * which the tail no longer holds (the span is contiguous, so these are
	 * all the tail items it passes over), then the summary.  A compaction
	 * takes the oldest block, so there are none; a span late in a long tail
	 * writes the items before it as rows, once.
	 */
	MnemoPrepare(&before_plan,
				 "SELECT t.seq, t.id, t.created_at "
				 "FROM generate_series($2 + 1, $3 - 1) g(seq), "
				 "LATERAL (SELECT t.seq, t.id, t.created_at FROM mnemo.messages t "
				 "         WHERE t.session_id = $1 AND t.tenant = $4 AND t.seq = g.seq "
				 "         AND NOT t.is_summary OFFSET 0) t",
				 4, (Oid[]) {TEXTOID, INT8OID, INT8OID, TEXTOID});
	nrows = first_tail == PG_INT64_MAX ? 0 :
		MnemoExecute(before_plan,
					 (Datum[]) {values[0], Int64GetDatum(lock->context_tail_seq),
					 Int64GetDatum(first_tail), values[4]},
					 NULL, false, 0);

	kept = live - ngone + nrows + 1;
	dead = lock->context_dead + ngone;
	rewrite = dead > kept;

	ncols = kept;
	cols = palloc(sizeof(Datum) * 5 * ncols);
	kept = 0;
#define COL(c, k) cols[(c) * ncols + (k)]
	for (row = 0; row < nrows; row++)
	{
		COL(0, kept) = Int64GetDatum(MnemoGetInt64(row, 1, NULL));
		COL(1, kept) = CStringGetTextDatum("message");
		COL(2, kept) = CStringGetTextDatum(MnemoGetText(row, 2, NULL));
		COL(3, kept) = COL(0, kept);
		COL(4, kept) = Int64GetDatum(MnemoGetInt64(row, 3, NULL));
		kept++;
	}
	COL(0, kept) = Int64GetDatum(position);
	COL(1, kept) = CStringGetTextDatum("summary");
	COL(2, kept) = values[2];
	COL(3, kept) = Int64GetDatum(summary_seq);
	COL(4, kept) = Int64GetDatum(MnemoNowMs());
	kept++;

	if (rewrite)
	{
		/* the survivors of the explicit rows join the new rows */
		generation = lock->context_generation + 1;
		dead = 0;
		MnemoPrepare(&rows_plan,
					 "SELECT c.position, c.item_type, c.item_id, c.seq, c.created_at "
					 "FROM mnemo.context_items c "
					 "WHERE c.session_id = $1 AND c.tenant = $5 AND c.generation = $2",
					 5, types);
		nrows = MnemoExecute(rows_plan, values, NULL, false, 0);
		for (row = 0; row < nrows; row++)
		{
			int64		pos = MnemoGetInt64(row, 1, NULL);

			if (bsearch(&pos, gone_positions, ngone, sizeof(int64), CompareInt64))
				continue;
			if (kept >= ncols)
				elog(ERROR, "context swap counted fewer rows than it read");
			COL(0, kept) = Int64GetDatum(pos);
			COL(1, kept) = CStringGetTextDatum(MnemoGetText(row, 2, NULL));
			COL(2, kept) = CStringGetTextDatum(MnemoGetText(row, 3, NULL));
			COL(3, kept) = Int64GetDatum(MnemoGetInt64(row, 4, NULL));
			COL(4, kept) = Int64GetDatum(MnemoGetInt64(row, 5, NULL));
			kept++;
		}
		MnemoPrepare(&drop_plan,
					 "DELETE FROM mnemo.context_items "
					 "WHERE session_id = $1 AND tenant = $5 AND generation = $2",
					 5, types);
		MnemoExecute(drop_plan, values, NULL, false, 0);
	}
	else
	{
		generation = lock->context_generation;
		if (ngone > 0)
		{
			MnemoPrepare(&remove_plan,
						 "DELETE FROM mnemo.context_items "
						 "WHERE session_id = $1 AND tenant = $3 AND ctid = ANY ($2)",
						 3, (Oid[]) {TEXTOID, TIDARRAYOID, TEXTOID});
			MnemoExecute(remove_plan,
						 (Datum[]) {values[0],
							 PointerGetDatum(construct_array(gone, ngone, TIDOID, sizeof(ItemPointerData), false, TYPALIGN_SHORT)),
						 values[4]},
						 NULL, false, 0);
		}
	}

	/* the survivors, when rewritten, and the new rows, in position order */
	MnemoPrepare(&insert_plan,
				 "INSERT INTO mnemo.context_items (session_id, position, item_type, item_id, "
				 "seq, created_at, tenant, generation) "
				 "SELECT $1, v.p, v.t, v.i, v.s, v.c, $7, $8 "
				 "FROM unnest($2, $3, $4, $5, $6) AS v(p, t, i, s, c) ORDER BY v.p",
				 8, (Oid[]) {TEXTOID, INT8ARRAYOID, TEXTARRAYOID, TEXTARRAYOID, INT8ARRAYOID,
				 INT8ARRAYOID, TEXTOID, INT8OID});
	MnemoExecute(insert_plan,
				 (Datum[]) {values[0],
					 PointerGetDatum(construct_array(&COL(0, 0), kept, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE)),
					 PointerGetDatum(construct_array(&COL(1, 0), kept, TEXTOID, -1, false, TYPALIGN_INT)),
					 PointerGetDatum(construct_array(&COL(2, 0), kept, TEXTOID, -1, false, TYPALIGN_INT)),
					 PointerGetDatum(construct_array(&COL(3, 0), kept, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE)),
					 PointerGetDatum(construct_array(&COL(4, 0), kept, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE)),
					 values[4],
				 Int64GetDatum(generation)},
				 NULL, false, 0);
#undef COL
	MnemoPrepare(&generation_plan,
				 "UPDATE mnemo.sessions SET context_generation = $2, context_dead = $3, "
				 "context_tail_seq = $4 WHERE id = $1 AND tenant = $5",
				 5, (Oid[]) {TEXTOID, INT8OID, INT8OID, INT8OID, TEXTOID});
	MnemoExecute(generation_plan,
				 (Datum[]) {values[0], Int64GetDatum(generation), Int64GetDatum(dead),
				 Int64GetDatum(tail_seq), values[4]},
				 NULL, false, 0);
	lock->context_generation = generation;
	lock->context_dead = dead;
	lock->context_tail_seq = tail_seq;
	return position;
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

	MnemoCheckRemoveList(ids, session_id);
	MnemoConnect(&call);
	MnemoLockSession(session_id, 0, true, &lock);
	position = MnemoSwap(session_id, &lock, ids, NULL, 0, summary_id, false);
	MnemoNotify(lock.watched, lock.tenant, "context_swapped", session_id, summary_id, -1);
	MnemoFinish(&call);
	PG_RETURN_INT64(position);
}
