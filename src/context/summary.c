/*
 * summary.c
 *		The summary DAG: commit_summary, expand_summary, summary_nodes.
 *
 * A compaction commit is one call and one transaction (Mnesis commits the
 * node, the swap and the supersession separately): under the session lock,
 * the items to replace are checked to be in the context view now -- MN006
 * and nothing written if another compactor got there first -- then the
 * summary message is appended (a text part and a compaction_marker part),
 * its node row and one provenance row per covered item are written, the
 * nodes a condensation consumed are marked superseded, and the context swap
 * puts the summary in place of the items.
 *
 * Provenance is rows in summary_edges, so "which summary covers item X" and
 * expansion are index lookups, and expansion recurses through condensed
 * nodes down to the original messages, which are never changed.
 *
 * A leaf node covers messages, a condensed node covers summaries; seq_start
 * and seq_end are the span of original messages underneath.  Edges are
 * numbered in the order of what they cover (seq, or a node's span), whatever
 * the order the caller listed the items in.
 *
 * With annotate_tokens, the text is stored after an annotation naming the
 * summary, its span and what it covers (annotate.c), which the marker part
 * keeps the lists of.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/json.h"
#include "utils/jsonb.h"
#include "utils/tuplestore.h"

#include "mnemo.h"
#include "tenancy/tenancy.h"
#include "log/log.h"
#include "reads/reads.h"
#include "context/context.h"

static SPIPlanPtr items_plan;
static SPIPlanPtr node_plan;
static SPIPlanPtr edges_plan;
static SPIPlanPtr supersede_plan;
static SPIPlanPtr find_plan;
static SPIPlanPtr edges_below_plan;
static SPIPlanPtr expand_plan;
static SPIPlanPtr nodes_plan;

/*
 * The ids of the summary message's two parts (its text, its compaction
 * marker), given when a transcript import commits a summary again.
 */
static void
SummaryPartIds(ArrayType *arr, char *ids[2])
{
	Datum	   *elems;
	int			n;

	deconstruct_array(arr, TEXTOID, -1, false, TYPALIGN_INT, &elems, NULL, &n);
	if (n != 2)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("part_ids must name the summary's two parts: its text and its compaction marker")));
	for (int i = 0; i < 2; i++)
	{
		ids[i] = TextDatumGetCString(elems[i]);
		MnemoCheckId(ids[i], "part id");
	}
}

/* ", "id": "ID"" into buf when id is set */
static void
PutPartId(StringInfo buf, const char *id)
{
	if (id == NULL)
		return;
	appendStringInfoString(buf, "\"id\": ");
	escape_json(buf, id);
	appendStringInfoString(buf, ", ");
}

PG_FUNCTION_INFO_V1(mnemo_commit_summary);
Datum
mnemo_commit_summary(PG_FUNCTION_ARGS)
{
	char	   *session_id = MnemoRequireTextArg(fcinfo, 0, "session_id");
	char	   *summary_id = MnemoRequireTextArg(fcinfo, 1, "summary_id");
	char	   *content = MnemoRequireTextArg(fcinfo, 2, "content");
	int32		token_count = DatumGetInt32(MnemoRequireArg(fcinfo, 3, "token_count"));
	ArrayType  *ids = MnemoTextListArg(fcinfo, 4, "remove_item_ids");
	char	   *kind = MnemoRequireTextArg(fcinfo, 5, "kind");
	int32		level = DatumGetInt32(MnemoRequireArg(fcinfo, 6, "level"));
	char	   *model_id = MnemoTextArgOrNull(fcinfo, 7);
	char	   *provider_id = MnemoTextArgOrNull(fcinfo, 8);
	char	   *holder = PG_NARGS() > 9 ? MnemoTextArgOrNull(fcinfo, 9) : NULL;
	int64		created_at = PG_NARGS() > 10 && !PG_ARGISNULL(10) ? PG_GETARG_INT64(10) : -1;
	char	   *part_ids[2] = {NULL, NULL};
	Jsonb	   *metadata = PG_NARGS() > 12 && !PG_ARGISNULL(12) ? PG_GETARG_JSONB_P(12) : NULL;
	bool		annotate = PG_NARGS() > 13 && !PG_ARGISNULL(13);
	int32		annotate_tokens = annotate ? PG_GETARG_INT32(13) : 0;
	StringInfoData annotation;
	bool		condensed;
	int			nids = ArrayGetNItems(ARR_NDIM(ids), ARR_DIMS(ids));
	Oid			types[10] = {TEXTOID, TEXTOID, TEXTARRAYOID, TEXTOID, INT4OID, INT4OID, INT8OID,
	TEXTARRAYOID, INT8ARRAYOID, TEXTOID};
	Datum		values[10];
	Datum	   *item_types;
	Datum	   *item_seqs;
	MnemoSwapItem *items;
	int			i;
	MnemoSessionLock lock;
	MnemoCall	call;
	StringInfoData parts;
	int64		seq_start;
	int64		seq_end;
	int64		position;
	int32		depth;

	condensed = strcmp(kind, "condensed") == 0;
	if (!condensed && strcmp(kind, "leaf") != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("kind must be \"leaf\" or \"condensed\", not \"%s\"", kind)));
	if (level < 1 || level > 3)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("level must be 1, 2 or 3")));
	if (token_count < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("token_count must not be negative")));
	if (PG_NARGS() > 10 && !PG_ARGISNULL(10) && created_at < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("created_at must not be negative")));
	if (PG_NARGS() > 11 && !PG_ARGISNULL(11))
		SummaryPartIds(MnemoTextListArg(fcinfo, 11, "part_ids"), part_ids);
	if (annotate_tokens < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("annotate_tokens must not be negative")));
	if (metadata != NULL && !JB_ROOT_IS_OBJECT(metadata))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("metadata must be a JSON object")));
	MnemoCheckRemoveList(ids, session_id);
	MnemoCheckId(summary_id, "summary id");

	values[0] = CStringGetTextDatum(session_id);
	values[1] = CStringGetTextDatum(summary_id);
	values[2] = PointerGetDatum(ids);
	values[3] = CStringGetTextDatum(kind);
	values[4] = Int32GetDatum(level);
	values[5] = Int32GetDatum(token_count);
	/*
	 * A transcript import restores the summary's time; else the message and
	 * its node are stamped with one now.
	 */
	if (created_at < 0)
		created_at = MnemoNowMs();
	values[6] = Int64GetDatum(created_at);

	MnemoConnect(&call);
	if (holder != NULL)
	{
		char	   *tenant;

		/* another tenant's session is a missing one, claim or not */
		MnemoCheckSession(session_id, false, &tenant, NULL);
		MnemoCheckClaim(session_id, tenant, holder);
	}
	MnemoLockSession(session_id, 1, true, &lock);
	values[9] = CStringGetTextDatum(lock.tenant);
	items = MnemoFindInContext(session_id, &lock, ids, &nids);
	item_types = palloc(sizeof(Datum) * Max(nids, 1));
	item_seqs = palloc(sizeof(Datum) * Max(nids, 1));
	for (i = 0; i < nids; i++)
	{
		item_types[i] = items[i].type;
		item_seqs[i] = Int64GetDatum(items[i].seq);
	}
	values[7] = PointerGetDatum(construct_array(item_types, nids, TEXTOID, -1, false, TYPALIGN_INT));
	values[8] = PointerGetDatum(construct_array(item_seqs, nids, INT8OID, 8, FLOAT8PASSBYVAL,
												TYPALIGN_DOUBLE));

	/*
	 * Each named item comes with its type and seq in the view, as found by
	 * MnemoFindInContext; here and in the edges below its node is looked up
	 * by its key in a LATERAL subquery kept apart by OFFSET 0: as a plain
	 * join, a plan made while the session was small joined the list against
	 * all of the session's rows, comparing every id with every row.  An
	 * item's seq is its context row's (the seq of its message), so a fork's
	 * leaf may cover the messages it inherited, which are its ancestors'
	 * rows.
	 *
	 * The covered items: all messages for a leaf, all summary nodes for a
	 * condensation, and the span of original seqs underneath them.  A summary
	 * put in context by a bare swap_context_items has no node, hence no span
	 * nor edges to expand through: condensing it would lose provenance.
	 */
	MnemoPrepare(&items_plan,
				 "SELECT count(*) FILTER (WHERE CASE WHEN $4 = 'leaf' "
				 "       THEN c.item_type = 'message' "
				 "       ELSE c.item_type = 'summary' AND n.id IS NOT NULL END), "
				 "       min(coalesce(n.seq_start, c.seq)), max(coalesce(n.seq_end, c.seq)), "
				 "       coalesce(max(n.depth), -1) "
				 "FROM unnest($3, $8, $9) AS c(id, item_type, seq) "
				 "LEFT JOIN LATERAL (SELECT n.id, n.seq_start, n.seq_end, n.depth "
				 "         FROM mnemo.summary_nodes n "
				 "         WHERE n.session_id = $1 AND n.tenant = $10 AND n.id = c.id "
				 "         OFFSET 0) n ON true",
				 10, types);
	MnemoExecute(items_plan, values, NULL, false, 1);
	if (MnemoGetInt64(0, 1, NULL) != nids)
		ereport(ERROR,
				(errcode(ERRCODE_MNEMO_INVALID_SWAP),
				 errmsg("invalid context swap in session \"%s\": a %s summary covers only %s",
						session_id, kind,
						condensed ? "summary nodes (summaries committed with commit_summary)" :
						"message items")));
	seq_start = MnemoGetInt64(0, 2, NULL);
	seq_end = MnemoGetInt64(0, 3, NULL);
	depth = condensed ? MnemoGetInt64(0, 4, NULL) + 1 : 0;

	/*
	 * The annotation, of at most annotate_tokens, goes before the text
	 * (annotate.c); the node counts the caller's tokens plus what the
	 * annotation adds by the one estimator, so that a text the caller
	 * estimated is counted as it is stored.
	 */
	initStringInfo(&annotation);
	if (annotate)
	{
		char	   *annotated = MnemoAnnotateSummary(session_id, &lock, summary_id, condensed,
													 depth, items, nids, seq_start, seq_end,
													 content, annotate_tokens, &annotation);
		int64		tokens = (int64) token_count +
			MnemoEstimateTokens(annotated, strlen(annotated)) -
			MnemoEstimateTokens(content, strlen(content));

		token_count = (int32) Min(tokens, PG_INT32_MAX);
		values[5] = Int32GetDatum(token_count);
		content = annotated;
	}

	/* the summary message: its text and a compaction marker */
	initStringInfo(&parts);
	appendStringInfoString(&parts, "[{");
	PutPartId(&parts, part_ids[0]);
	appendStringInfoString(&parts, "\"type\": \"text\", \"text\": ");
	escape_json(&parts, content);
	appendStringInfo(&parts, ", \"token_estimate\": %d", token_count);
	/* what the compaction's source had beyond its text (an import's) */
	if (metadata != NULL)
	{
		appendStringInfoString(&parts, ", \"metadata\": ");
		(void) JsonbToCString(&parts, &metadata->root, VARSIZE(metadata));
	}
	appendStringInfoString(&parts, "}, {");
	PutPartId(&parts, part_ids[1]);
	appendStringInfoString(&parts, "\"type\": \"compaction_marker\", \"summary_node_id\": ");
	escape_json(&parts, summary_id);
	appendStringInfo(&parts, ", \"kind\": \"%s\", \"level\": %d, \"compacted_item_count\": %d, "
					 "\"seq_start\": " INT64_FORMAT ", \"seq_end\": " INT64_FORMAT
					 ", \"token_estimate\": 0%s}]",
					 kind, level, nids, seq_start, seq_end, annotation.data);
	MnemoAppendSummaryMessage(session_id, summary_id, model_id, provider_id,
							  DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(parts.data))),
							  &lock, lock.last_seq, DatumGetInt64(values[6]));

	/* the node, its provenance, and the nodes it consumed */
	MnemoPrepare(&node_plan,
				 "INSERT INTO mnemo.summary_nodes (session_id, id, kind, level, token_count, "
				 "seq_start, seq_end, created_at, tenant, depth) "
				 "VALUES ($1, $2, $4, $5, $6, $8, $9, $7, $10, $11)",
				 11, (Oid[]) {TEXTOID, TEXTOID, TEXTARRAYOID, TEXTOID, INT4OID, INT4OID, INT8OID,
				 INT8OID, INT8OID, TEXTOID, INT4OID});
	MnemoExecute(node_plan,
				 (Datum[]) {values[0], values[1], values[2], values[3], values[4], values[5],
				 values[6], Int64GetDatum(seq_start), Int64GetDatum(seq_end),
				 CStringGetTextDatum(lock.tenant), Int32GetDatum(depth)},
				 NULL, false, 0);
	MnemoPrepare(&edges_plan,
				 "INSERT INTO mnemo.summary_edges (session_id, summary_id, ordinal, item_type, "
				 "item_id, tenant) "
				 "SELECT $1, $2, row_number() OVER (ORDER BY coalesce(n.seq_start, u.seq), u.seq), "
				 "CASE WHEN $4 = 'leaf' THEN 'message' ELSE 'summary' END, u.id, $8 "
				 "FROM unnest($3, $9) AS u(id, seq) "
				 "LEFT JOIN LATERAL (SELECT n.seq_start FROM mnemo.summary_nodes n "
				 "         WHERE n.session_id = $1 AND n.tenant = $8 AND n.id = u.id "
				 "         OFFSET 0) n ON true",
				 9, (Oid[]) {TEXTOID, TEXTOID, TEXTARRAYOID, TEXTOID, INT4OID, INT4OID, INT8OID,
				 TEXTOID, INT8ARRAYOID});
	MnemoExecute(edges_plan,
				 (Datum[]) {values[0], values[1], values[2], values[3], values[4], values[5],
				 values[6], CStringGetTextDatum(lock.tenant), values[8]},
				 NULL, false, 0);
	if (condensed)
	{
		MnemoPrepare(&supersede_plan,
					 "UPDATE mnemo.summary_nodes SET superseded_by = $2 "
					 "WHERE session_id = $1 AND tenant = $10 AND id = ANY ($3) "
					 "AND superseded_by IS NULL",
					 10, types);
		MnemoExecute(supersede_plan, values, NULL, false, 0);
	}

	position = MnemoSwap(session_id, &lock, ids, items, nids, summary_id, true);
	/* what a follower in another process reports of the compaction */
	resetStringInfo(&parts);
	appendStringInfo(&parts, ", \"kind\": \"%s\", \"level\": %d, \"tokens\": %d, \"items\": %d",
					 kind, level, token_count, nids);
	MnemoNotifyWith(lock.watched, lock.tenant, "summary_committed", session_id, summary_id,
					lock.last_seq, parts.data);
	MnemoFinish(&call);
	PG_RETURN_INT64(position);
}

/* One node's edges: a run of the edge rows, which come sorted by node. */
typedef struct EdgeRun
{
	char	   *summary_id;
	uint64		first;
	uint64		count;
} EdgeRun;

static int
CompareRuns(const void *a, const void *b)
{
	return strcmp(((const EdgeRun *) a)->summary_id, ((const EdgeRun *) b)->summary_id);
}

/*
 * What a node covers, in order; recursively, depth first down to the
 * original messages.  MN002 if summary_id is not a summary node of the
 * session or of what it inherited (a fork's, lineage.c).
 *
 * The edges under the node are read in one statement and put in depth-first
 * order here; a second statement joins the ordered items to their messages.
 * A recursive CTE that carried each row's path and sorted by it cost the
 * square of the depth (a chain of 10,000 condensations took 7.8 s).
 */
PG_FUNCTION_INFO_V1(mnemo_expand_summary);
Datum
mnemo_expand_summary(PG_FUNCTION_ARGS)
{
	char	   *session_id = MnemoRequireTextArg(fcinfo, 0, "session_id");
	char	   *summary_id = MnemoRequireTextArg(fcinfo, 1, "summary_id");
	bool		recursive = DatumGetBool(MnemoRequireArg(fcinfo, 2, "recursive"));
	Oid			types[4] = {TEXTOID, TEXTOID, BOOLOID, TEXTOID};
	Datum		values[4];
	uint64		nedges;
	MnemoLine	line;
	char	   *owner;
	int64		seq;
	EdgeRun    *runs;
	int			nruns = 0;
	EdgeRun		key;
	EdgeRun    *run;
	struct
	{
		EdgeRun    *run;
		uint64		next;
	}		   *stack;
	int			depth;
	Datum	   *depths;
	Datum	   *parents;
	Datum	   *item_types;
	Datum	   *item_ids;
	int			nout = 0;
	uint64		i;
	MnemoCall	call;

	values[0] = CStringGetTextDatum(session_id);
	values[1] = CStringGetTextDatum(summary_id);
	values[2] = BoolGetDatum(recursive);
	MnemoConnect(&call);
	MnemoReadLine(session_id, PG_INT64_MAX, false, false, &line);
	values[3] = CStringGetTextDatum(line.tenant);
	MnemoPrepare(&find_plan,
				 "SELECT 1 FROM mnemo.summary_nodes WHERE session_id = $1 AND tenant = $4 AND id = $2",
				 4, types);

	/*
	 * A fork expands a summary it inherited where it lives: in the ancestor
	 * that committed it, with the messages it covers.
	 */
	if (MnemoExecute(find_plan, values, NULL, true, 1) != 1 && line.is_fork &&
		MnemoLineFindMessage(&line, summary_id, &owner, &seq))
		values[0] = CStringGetTextDatum(owner);
	if (MnemoExecute(find_plan, values, NULL, true, 1) != 1)
		ereport(ERROR,
				(errcode(ERRCODE_MNEMO_MESSAGE_NOT_FOUND),
				 errmsg("summary node \"%s\" does not exist in session \"%s\"",
						summary_id, session_id)));

	/* every edge under the node, grouped by node (bytewise, for strcmp) */
	MnemoPrepare(&edges_below_plan,
				 "WITH RECURSIVE t AS ("
				 "  SELECT e.summary_id, e.ordinal, e.item_type, e.item_id "
				 "  FROM mnemo.summary_edges e "
				 "  WHERE e.session_id = $1 AND e.tenant = $4 AND e.summary_id = $2 "
				 "  UNION ALL "
				 "  SELECT e.summary_id, e.ordinal, e.item_type, e.item_id "
				 "  FROM t JOIN mnemo.summary_edges e "
				 "    ON e.session_id = $1 AND e.tenant = $4 AND e.summary_id = t.item_id "
				 "  WHERE $3 AND t.item_type = 'summary') "
				 "SELECT summary_id, item_type, item_id FROM t "
				 "ORDER BY summary_id COLLATE \"C\", ordinal",
				 4, types);
	nedges = MnemoExecute(edges_below_plan, values, NULL, true, 0);
	runs = palloc(sizeof(EdgeRun) * Max(nedges, 1));
	for (i = 0; i < nedges; i++)
	{
		char	   *node = MnemoGetText(i, 1, NULL);

		if (nruns == 0 || strcmp(runs[nruns - 1].summary_id, node) != 0)
		{
			runs[nruns].summary_id = node;
			runs[nruns].first = i;
			runs[nruns].count = 0;
			nruns++;
		}
		runs[nruns - 1].count++;
	}

	/* depth first: each item, then (a node) what it covers */
	depths = palloc(sizeof(Datum) * Max(nedges, 1));
	parents = palloc(sizeof(Datum) * Max(nedges, 1));
	item_types = palloc(sizeof(Datum) * Max(nedges, 1));
	item_ids = palloc(sizeof(Datum) * Max(nedges, 1));
	stack = palloc(sizeof(*stack) * (nedges + 1));
	key.summary_id = summary_id;
	run = nruns > 0 ? bsearch(&key, runs, nruns, sizeof(EdgeRun), CompareRuns) : NULL;
	depth = 0;
	if (run != NULL)
	{
		stack[0].run = run;
		stack[0].next = 0;
		depth = 1;
	}
	while (depth > 0 && nout < nedges)
	{
		EdgeRun    *top = stack[depth - 1].run;
		uint64		row;
		char	   *item_id;

		if (stack[depth - 1].next == top->count)
		{
			depth--;
			continue;
		}
		row = top->first + stack[depth - 1].next++;
		item_id = MnemoGetText(row, 3, NULL);
		depths[nout] = Int32GetDatum(depth);
		parents[nout] = CStringGetTextDatum(top->summary_id);
		item_types[nout] = CStringGetTextDatum(MnemoGetText(row, 2, NULL));
		item_ids[nout] = CStringGetTextDatum(item_id);
		nout++;
		key.summary_id = item_id;
		if (recursive &&
			(run = bsearch(&key, runs, nruns, sizeof(EdgeRun), CompareRuns)) != NULL)
		{
			stack[depth].run = run;
			stack[depth].next = 0;
			depth++;
		}
	}

	/*
	 * The items with their messages.  A fork's leaf may cover messages it
	 * inherited: those are read in the ancestors that hold them, one
	 * statement per session of the line, and put back in order.
	 */
	MnemoPrepare(&expand_plan,
				 "SELECT d.ord, d.depth, d.summary_id, d.item_type, d.item_id, m.seq, m.role "
				 "FROM unnest($2, $3, $4, $5) WITH ORDINALITY "
				 "  AS d(depth, summary_id, item_type, item_id, ord) "
				 MNEMO_MESSAGE_OF_ID("d.item_id", "$6", "")
				 "ORDER BY d.ord",
				 6, (Oid[]) {TEXTOID, INT4ARRAYOID, TEXTARRAYOID, TEXTARRAYOID, TEXTARRAYOID,
				 TEXTOID});
	{
		Datum		arrays[6];
		SPITupleTable **at = palloc0(sizeof(SPITupleTable *) * Max(nout, 1));
		uint64	   *arow = palloc0(sizeof(uint64) * Max(nout, 1));
		Datum	   *parts = palloc0(sizeof(Datum) * Max(nout, 1));
		ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
		int			found = 0;
		int			s;
		int			k;

		arrays[0] = values[0];
		arrays[1] = PointerGetDatum(construct_array(depths, nout, INT4OID, 4, true, TYPALIGN_INT));
		arrays[2] = PointerGetDatum(construct_array(parents, nout, TEXTOID, -1, false, TYPALIGN_INT));
		arrays[3] = PointerGetDatum(construct_array(item_types, nout, TEXTOID, -1, false, TYPALIGN_INT));
		arrays[4] = PointerGetDatum(construct_array(item_ids, nout, TEXTOID, -1, false, TYPALIGN_INT));
		arrays[5] = values[3];
		for (s = -1; s < line.ninherited && found < nout; s++)
		{
			uint64		rows;
			uint64		r;
			int			before = found;

			if (s >= 0)
			{
				if (s > 0 && strcmp(line.segs[s].owner, line.segs[s - 1].owner) == 0)
					continue;
				arrays[0] = CStringGetTextDatum(line.segs[s].owner);
			}
			rows = MnemoExecute(expand_plan, arrays, NULL, true, 0);
			for (r = 0; r < rows; r++)
			{
				int64		ord = MnemoGetInt64(r, 1, NULL);

				if (ord < 1 || ord > nout || at[ord - 1] != NULL)
					continue;
				at[ord - 1] = SPI_tuptable;
				arow[ord - 1] = r;
				found++;
			}
			/* their parts, from the session that holds them, as the first found wins */
			if (found > before)
				MnemoPartsByIds(TextDatumGetCString(arrays[0]), line.tenant, arrays[4], nout, parts,
								CurrentMemoryContext);
		}
		InitMaterializedSRF(fcinfo, 0);
		for (k = 0; k < nout; k++)
		{
			Datum		cols[8];
			bool		nulls[8];

			if (at[k] == NULL)
				continue;		/* a message purged under its summary: as a join leaves it */
			heap_deform_tuple(at[k]->vals[arow[k]], at[k]->tupdesc, cols, nulls);
			cols[7] = parts[k];
			nulls[7] = parts[k] == (Datum) 0;
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, cols + 1, nulls + 1);
		}
	}
	MnemoFinish(&call);
	return (Datum) 0;
}

PG_FUNCTION_INFO_V1(mnemo_summary_nodes);
Datum
mnemo_summary_nodes(PG_FUNCTION_ARGS)
{
	char	   *session_id = MnemoRequireTextArg(fcinfo, 0, "session_id");
	bool		all = DatumGetBool(MnemoRequireArg(fcinfo, 1, "include_superseded"));
	Oid			types[3] = {TEXTOID, BOOLOID, TEXTOID};
	Datum		values[3];
	char	   *tenant;
	MnemoCall	call;

	values[0] = CStringGetTextDatum(session_id);
	values[1] = BoolGetDatum(all);
	MnemoConnect(&call);
	MnemoCheckSession(session_id, false, &tenant, NULL);
	values[2] = CStringGetTextDatum(tenant);
	/* a node whose summary message a resume discarded is off the live line */
	MnemoPrepare(&nodes_plan,
				 "SELECT n.* FROM mnemo.summary_nodes n "
				 "JOIN mnemo.messages m ON m.session_id = $1 AND m.tenant = $3 AND m.id = n.id "
				 "WHERE n.session_id = $1 AND n.tenant = $3 AND ($2 OR n.superseded_by IS NULL) "
				 "AND NOT EXISTS (SELECT FROM mnemo.discarded d WHERE d.session_id = $1 "
				 "                AND d.tenant = $3 AND m.seq BETWEEN d.seq_from AND d.seq_to) "
				 "ORDER BY n.seq_start, n.seq_end, n.created_at, n.id",
				 3, types);
	MnemoExecuteResult(fcinfo, nodes_plan, values, NULL, true);
	MnemoFinish(&call);
	return (Datum) 0;
}
