/*
 * rebuild.c
 *		A context view as of a point of the log, for fork_session and
 *		resume_session.
 *
 * The view a session had when its line was a given set of seqs (the fork's
 * inheritance, or the line up to the checkpoint resumed to) is its view now
 * with everything written since taken back out: an item whose seq is on
 * that line stays; a message past it goes; a summary past it -- committed
 * after the point, or covering a message that is not on the line (a run in
 * flight, for a fork after a run) -- is replaced by what it covers, its
 * edges in the DAG, which are looked at the same way, down to the messages.
 * So a summary that spans the point is expanded, and one committed before
 * it stays: the result covers exactly the line, each message once, in
 * order.  The cost is in the size of the view plus what the expanded
 * summaries cover, not in the length of the history -- but for a view that
 * leaves out a summary of a bare swap, which records nothing to expand: the
 * messages it had replaced are found by reading the line (RestoreUncovered).
 *
 * The view is read with one statement on the session; the edges of the
 * summaries to expand with one statement per session that holds them (a
 * fork's view holds its ancestors' items: a summary's edges are in the
 * session that committed it, with the messages it covers).
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"

#include "mnemo.h"
#include "reads/reads.h"
#include "lifecycle/lifecycle.h"
#include "context/context.h"

static SPIPlanPtr view_plan;
static SPIPlanPtr edges_plan;
static SPIPlanPtr line_messages_plan;
static SPIPlanPtr write_plan;

static void
AddItem(MnemoViewItem **items, int *n, int *max, const char *type, const char *id, int64 seq)
{
	if (*n == *max)
	{
		*max = Max(16, *max * 2);
		*items = *items ? repalloc(*items, sizeof(MnemoViewItem) * *max)
			: palloc(sizeof(MnemoViewItem) * *max);
	}
	(*items)[*n].item_type = pstrdup(type);
	(*items)[*n].item_id = pstrdup(id);
	(*items)[*n].seq = seq;
	(*n)++;
}

/* Whether seq is on the line keep. */
static bool
OnLine(MnemoLine *keep, int64 seq)
{
	return MnemoLineSegment(keep, seq) != NULL;
}

/*
 * The items summary it covers, in order, from the session that committed it
 * (a fork's view holds its ancestors' summaries: the edges are in that
 * session, beside the messages they cover), into *edges.  Returns their
 * number: 0 for a summary that records none (one a bare swap_context_items
 * put in the view), -1 for one off source's line (discarded by a resume).
 */
static int
SummaryEdges(MnemoLine *source, MnemoViewItem *it, MnemoViewItem **edges)
{
	MnemoSegment *owner = MnemoLineSegment(source, it->seq);
	uint64		rows;
	uint64		row;
	bool	   *unknown;

	if (owner == NULL)
		return -1;
	MnemoPrepare(&edges_plan,
				 "SELECT e.summary_id, e.item_type, e.item_id, m.seq "
				 "FROM mnemo.summary_edges e "
				 "LEFT JOIN LATERAL (SELECT m.seq FROM mnemo.messages m "
				 "         WHERE m.session_id = $1 AND m.tenant = $3 AND m.id = e.item_id "
				 "         OFFSET 0) m ON true "
				 "WHERE e.session_id = $1 AND e.tenant = $3 AND e.summary_id = ANY ($2) "
				 "ORDER BY e.summary_id COLLATE \"C\", e.ordinal",
				 3, (Oid[]) {TEXTOID, TEXTARRAYOID, TEXTOID});
	rows = MnemoExecute(edges_plan,
						(Datum[]) {CStringGetTextDatum(owner->owner),
						PointerGetDatum(construct_array((Datum[]) {CStringGetTextDatum(it->item_id)},
														1, TEXTOID, -1, false, TYPALIGN_INT)),
						CStringGetTextDatum(source->tenant)},
						NULL, false, 0);

	/* copied out first: a look-up below replaces SPI_tuptable */
	*edges = palloc(sizeof(MnemoViewItem) * Max(rows, 1));
	unknown = palloc(sizeof(bool) * Max(rows, 1));
	for (row = 0; row < rows; row++)
	{
		(*edges)[row].item_type = MnemoGetText(row, 2, NULL);
		(*edges)[row].item_id = MnemoGetText(row, 3, NULL);
		(*edges)[row].seq = MnemoGetInt64(row, 4, &unknown[row]);
	}
	for (row = 0; row < rows; row++)
	{
		char	   *holder;

		/* a fork's leaf may cover messages it inherited: found on the line */
		if (unknown[row] &&
			!MnemoLineFindMessage(source, (*edges)[row].item_id, &holder, &(*edges)[row].seq))
			ereport(ERROR,
					(errcode(ERRCODE_MNEMO_MESSAGE_NOT_FOUND),
					 errmsg("summary \"%s\" of session \"%s\" covers \"%s\", which is not on its line",
							it->item_id, owner->owner, (*edges)[row].item_id)));
	}
	return (int) rows;
}

/*
 * Put back into items the messages of keep's line that no item covers.
 *
 * A summary a bare swap_context_items put in the view records no edges, so
 * when the rebuilt view leaves it out (it was swapped in after the point)
 * nothing says which messages it had replaced: they are the line's messages
 * that no item covers, every summary item expanded down to its messages.
 * Each goes back as a message item before the first item that starts after
 * it.  When the view keeps a bare summary too, what that one covers is as
 * unknown, so a message left over may be its or the dropped one's: the view
 * cannot be rebuilt without losing or repeating messages, and the fork or
 * resume is refused (55000), before anything is written.
 */
static MnemoViewItem *
RestoreUncovered(MnemoLine *source, MnemoLine *keep, MnemoViewItem *items, int *n,
				 const char *dropped)
{
	HASHCTL		ctl;
	HTAB	   *covered;
	int64	   *starts = palloc(sizeof(int64) * Max(*n, 1));
	const char *kept_bare = NULL;
	MnemoViewItem *out = NULL;
	int			nout = 0;
	int			maxout = 0;
	int			next = 0;
	int			i;

	ctl.keysize = sizeof(int64);
	ctl.entrysize = sizeof(int64);
	ctl.hcxt = CurrentMemoryContext;
	covered = hash_create("mnemo covered seqs", 256, &ctl, HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);

	/* what each item covers, and the first seq of it */
	for (i = 0; i < *n; i++)
	{
		MnemoViewItem *stack = palloc(sizeof(MnemoViewItem));
		int			depth = 1;
		int			maxdepth = 1;

		starts[i] = PG_INT64_MAX;
		stack[0] = items[i];
		while (depth > 0)
		{
			MnemoViewItem it = stack[--depth];
			MnemoViewItem *edges;
			int			nedges;
			int			e;

			CHECK_FOR_INTERRUPTS();
			if (strcmp(it.item_type, "summary") != 0)
			{
				(void) hash_search(covered, &it.seq, HASH_ENTER, NULL);
				starts[i] = Min(starts[i], it.seq);
				continue;
			}
			nedges = SummaryEdges(source, &it, &edges);
			if (nedges == 0)
				kept_bare = it.item_id;
			if (depth + Max(nedges, 0) > maxdepth)
			{
				maxdepth = depth + Max(nedges, 0);
				stack = repalloc(stack, sizeof(MnemoViewItem) * maxdepth);
			}
			for (e = 0; e < nedges; e++)
				stack[depth++] = edges[e];
		}
		pfree(stack);
	}

	/* the line's messages no item covers, in seq order, merged in */
	MnemoPrepare(&line_messages_plan,
				 "SELECT seq, id FROM mnemo.messages WHERE session_id = $1 AND tenant = $4 "
				 "AND seq BETWEEN $2 AND $3 AND NOT is_summary ORDER BY seq",
				 4, (Oid[]) {TEXTOID, INT8OID, INT8OID, TEXTOID});
	for (int s = 0; s < keep->nsegs; s++)
	{
		MnemoSegment *seg = &keep->segs[s];
		uint64		rows = MnemoExecute(line_messages_plan,
										(Datum[]) {CStringGetTextDatum(seg->owner),
										Int64GetDatum(seg->from), Int64GetDatum(seg->to),
										CStringGetTextDatum(keep->tenant)},
										NULL, false, 0);

		for (uint64 row = 0; row < rows; row++)
		{
			int64		seq = MnemoGetInt64(row, 1, NULL);

			if (hash_search(covered, &seq, HASH_FIND, NULL) != NULL)
				continue;
			if (kept_bare != NULL)
				ereport(ERROR,
						(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
						 errmsg("the context view of session \"%s\" cannot be rebuilt at this point",
								source->session_id),
						 errdetail("Summaries \"%s\" and \"%s\" were put in context by swap_context_items, which records no edges: which of them covers message \"%s\" is unknown.",
								   kept_bare, dropped, MnemoGetText(row, 2, NULL)),
						 errhint("Fork or resume at a point after summary \"%s\", or compact with commit_summary, whose summaries record what they cover.",
								 dropped)));
			while (next < *n && starts[next] < seq)
			{
				AddItem(&out, &nout, &maxout, items[next].item_type, items[next].item_id,
						items[next].seq);
				next++;
			}
			AddItem(&out, &nout, &maxout, "message", MnemoGetText(row, 2, NULL), seq);
		}
	}
	for (; next < *n; next++)
		AddItem(&out, &nout, &maxout, items[next].item_type, items[next].item_id, items[next].seq);
	hash_destroy(covered);
	*n = nout;
	return out;
}

/*
 * The live view of source as of the line keep (a subset of source's line),
 * in order.  source is read under its lock: the statements see what
 * committed before.  Allocated in the current memory context.
 */
MnemoViewItem *
MnemoViewAsOf(MnemoLine *source, MnemoLine *keep, int *nitems)
{
	MnemoViewItem *items = NULL;
	int			n = 0;
	int			max = 0;
	uint64		rows;
	uint64		row;
	bool		expanded = true;
	const char *dropped_bare = NULL;

	MnemoPrepare(&view_plan,
				 "SELECT c.item_type, c.item_id, c.seq FROM " MNEMO_CONTEXT_VIEW("$2") " c "
				 "ORDER BY c.position",
				 2, (Oid[]) {TEXTOID, TEXTOID});
	rows = MnemoExecute(view_plan,
						(Datum[]) {CStringGetTextDatum(source->session_id),
						CStringGetTextDatum(source->tenant)},
						NULL, false, 0);
	for (row = 0; row < rows; row++)
		AddItem(&items, &n, &max, MnemoGetText(row, 1, NULL), MnemoGetText(row, 2, NULL),
				MnemoGetInt64(row, 3, NULL));

	/* one pass per level of the DAG: expand what is past the line */
	while (expanded)
	{
		MnemoViewItem *next = NULL;
		int			nnext = 0;
		int			maxnext = 0;
		int			i;

		expanded = false;
		for (i = 0; i < n; i++)
		{
			MnemoViewItem *it = &items[i];
			MnemoViewItem *edges;
			int			nedges;
			int			e;

			if (OnLine(keep, it->seq))
			{
				AddItem(&next, &nnext, &maxnext, it->item_type, it->item_id, it->seq);
				continue;
			}
			if (strcmp(it->item_type, "summary") != 0)
				continue;		/* a message past the point goes */
			nedges = SummaryEdges(source, it, &edges);
			if (nedges == 0)
				dropped_bare = it->item_id;
			for (e = 0; e < nedges; e++)
				AddItem(&next, &nnext, &maxnext, edges[e].item_type, edges[e].item_id,
						edges[e].seq);
			expanded = true;
		}
		items = next;
		n = nnext;
		max = maxnext;
	}
	if (dropped_bare != NULL)
		items = RestoreUncovered(source, keep, items, &n, dropped_bare);
	*nitems = n;
	return items;
}

/*
 * Write items as generation of session_id's view, at positions 1 .. n.
 * Inside SPI, under the session's lock.  The caller starts the session's
 * implicit tail at or after seq n (a fork at its fork point, a resume at its
 * last seq), so these positions stay below the tail's.
 */
void
MnemoWriteView(const char *session_id, const char *tenant, int64 generation,
			   MnemoViewItem *items, int n)
{
	Datum	   *positions = palloc(sizeof(Datum) * Max(n, 1));
	Datum	   *types = palloc(sizeof(Datum) * Max(n, 1));
	Datum	   *ids = palloc(sizeof(Datum) * Max(n, 1));
	Datum	   *seqs = palloc(sizeof(Datum) * Max(n, 1));
	int			i;

	if (n == 0)
		return;
	for (i = 0; i < n; i++)
	{
		positions[i] = Int64GetDatum(i + 1);
		types[i] = CStringGetTextDatum(items[i].item_type);
		ids[i] = CStringGetTextDatum(items[i].item_id);
		seqs[i] = Int64GetDatum(items[i].seq);
	}
	MnemoPrepare(&write_plan,
				 "INSERT INTO mnemo.context_items (session_id, position, item_type, item_id, "
				 "seq, created_at, tenant, generation) "
				 "SELECT $1, v.p, v.t, v.i, v.s, $6, $7, $8 "
				 "FROM unnest($2, $3, $4, $5) AS v(p, t, i, s) ORDER BY v.p",
				 8, (Oid[]) {TEXTOID, INT8ARRAYOID, TEXTARRAYOID, TEXTARRAYOID, INT8ARRAYOID,
				 INT8OID, TEXTOID, INT8OID});
	MnemoExecute(write_plan,
				 (Datum[]) {CStringGetTextDatum(session_id),
					 PointerGetDatum(construct_array(positions, n, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE)),
					 PointerGetDatum(construct_array(types, n, TEXTOID, -1, false, TYPALIGN_INT)),
					 PointerGetDatum(construct_array(ids, n, TEXTOID, -1, false, TYPALIGN_INT)),
					 PointerGetDatum(construct_array(seqs, n, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE)),
					 Int64GetDatum(MnemoNowMs()), CStringGetTextDatum(tenant),
				 Int64GetDatum(generation)},
				 NULL, false, 0);
}
