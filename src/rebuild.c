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
 * summaries cover, not in the length of the history.
 *
 * The view is read with one statement on the session; the edges of the
 * summaries to expand with one statement per session that holds them (a
 * fork's view holds its ancestors' items: a summary's edges are in the
 * session that committed it, with the messages it covers).
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "utils/builtins.h"

#include "mnemo.h"

static SPIPlanPtr view_plan;
static SPIPlanPtr edges_plan;
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

	MnemoPrepare(&view_plan,
				 "SELECT c.item_type, c.item_id, c.seq FROM " MNEMO_CONTEXT_VIEW " c "
				 "ORDER BY c.position",
				 1, (Oid[]) {TEXTOID});
	rows = MnemoExecute(view_plan, (Datum[]) {CStringGetTextDatum(source->session_id)},
						NULL, false, 0);
	for (row = 0; row < rows; row++)
		AddItem(&items, &n, &max, MnemoGetText(row, 1, NULL), MnemoGetText(row, 2, NULL),
				MnemoGetInt64(row, 3, NULL));

	MnemoPrepare(&edges_plan,
				 "SELECT e.summary_id, e.item_type, e.item_id, m.seq "
				 "FROM mnemo.summary_edges e "
				 "LEFT JOIN LATERAL (SELECT m.seq FROM mnemo.messages m "
				 "         WHERE m.session_id = $1 AND m.id = e.item_id OFFSET 0) m ON true "
				 "WHERE e.session_id = $1 AND e.summary_id = ANY ($2) "
				 "ORDER BY e.summary_id COLLATE \"C\", e.ordinal",
				 2, (Oid[]) {TEXTOID, TEXTARRAYOID});

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
			MnemoSegment *owner;

			if (OnLine(keep, it->seq))
			{
				AddItem(&next, &nnext, &maxnext, it->item_type, it->item_id, it->seq);
				continue;
			}
			if (strcmp(it->item_type, "summary") != 0)
				continue;		/* a message past the point goes */

			/* the summary's edges, from the session that committed it */
			owner = MnemoLineSegment(source, it->seq);
			if (owner == NULL)
				continue;		/* a summary discarded by a resume: not in a live view */
			rows = MnemoExecute(edges_plan,
								(Datum[]) {CStringGetTextDatum(owner->owner),
								PointerGetDatum(construct_array((Datum[]) {CStringGetTextDatum(it->item_id)},
																1, TEXTOID, -1, false, TYPALIGN_INT))},
								NULL, false, 0);
			{
				/* copied out first: a look-up below replaces SPI_tuptable */
				MnemoViewItem *edges = palloc(sizeof(MnemoViewItem) * Max(rows, 1));
				bool	   *unknown = palloc(sizeof(bool) * Max(rows, 1));

				for (row = 0; row < rows; row++)
				{
					edges[row].item_type = MnemoGetText(row, 2, NULL);
					edges[row].item_id = MnemoGetText(row, 3, NULL);
					edges[row].seq = MnemoGetInt64(row, 4, &unknown[row]);
				}
				for (row = 0; row < rows; row++)
				{
					char	   *holder;

					/*
					 * A fork's leaf may cover messages it inherited: found
					 * on the line, in the ancestor that holds them.
					 */
					if (unknown[row] &&
						!MnemoLineFindMessage(source, edges[row].item_id, &holder, &edges[row].seq))
						ereport(ERROR,
								(errcode(ERRCODE_MNEMO_MESSAGE_NOT_FOUND),
								 errmsg("summary \"%s\" of session \"%s\" covers \"%s\", which is not on its line",
										it->item_id, owner->owner, edges[row].item_id)));
					AddItem(&next, &nnext, &maxnext, edges[row].item_type, edges[row].item_id,
							edges[row].seq);
				}
			}
			expanded = true;
		}
		items = next;
		n = nnext;
		max = maxnext;
	}
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
