/*
 * context.c
 *		Context assembly: build_context and context_report, the seed's
 *		ContextBuilder as one server call.
 *
 * Invariant 5: assembly reads the context view and only the items in it, so
 * its cost grows with the context, not with the session's history.  One
 * statement fetches the items of the view with their message rows (by
 * primary key, through the seq the item carries), a second their parts in
 * the same order; rendering and selection are done here in C.  The raw parts
 * are not returned: a client that wants structured tool calls passes the
 * item ids to get_messages_with_parts_by_ids.
 *
 * Selection, as the seed's builder: every summary is kept and its tokens are
 * reserved first; then messages are taken newest to oldest while they fit in
 * what is left, stopping at the first that does not, so the kept messages
 * are the most recent contiguous ones.  A budget smaller than the summaries
 * alone keeps the summaries and no message.  Nothing is dropped silently:
 * context_report gives the counts and tokens left out.
 *
 * Rendering is render.c's, part by part, joined by newlines; a summary is an
 * assistant message holding its text.  tokens is estimate_tokens of the
 * rendered content, or a summary node's token_count where there is one.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/tuplestore.h"

#include "mnemo.h"

typedef struct ContextEntry
{
	int64		position;
	char	   *item_type;
	char	   *item_id;
	char	   *role;
	char	   *content;
	int32		tokens;
	bool		included;
} ContextEntry;

typedef struct ContextTotals
{
	int64		summary_tokens;
	int32		included_items;
	int64		included_tokens;
	int32		omitted_items;
	int64		omitted_tokens;
} ContextTotals;

static SPIPlanPtr items_plan;
static SPIPlanPtr parts_plan;

/*
 * Read and render the context view of session_id and choose what fits in
 * budget.  Entries and totals are allocated in callcxt.  MN001 if the session
 * does not exist; 22004/22023 for a NULL or negative budget.
 */
static ContextEntry *
AssembleContext(FunctionCallInfo fcinfo, MemoryContext callcxt, int *nentries,
				ContextTotals *totals)
{
	char	   *session_id = MnemoRequireTextArg(fcinfo, 0, "session_id");
	int32		budget = DatumGetInt32(MnemoRequireArg(fcinfo, 1, "budget_tokens"));
	Oid			types[1] = {TEXTOID};
	Datum		values[1];
	ContextEntry *entries;
	MemoryContext spicxt;
	int64	   *node_tokens;
	int64		remaining;
	uint64		n;
	uint64		nparts;
	uint64		i;
	uint64		j;

	if (budget < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("budget_tokens must not be negative")));
	values[0] = CStringGetTextDatum(session_id);
	memset(totals, 0, sizeof(*totals));

	SPI_connect();
	MnemoCheckSessionExists(session_id);
	MnemoPrepare(&items_plan,
				 "SELECT c.position, c.item_type, c.item_id, m.role, n.token_count "
				 "FROM mnemo.context_items c "
				 "JOIN mnemo.messages m ON m.session_id = c.session_id AND m.seq = c.seq "
				 "LEFT JOIN mnemo.summary_nodes n ON n.session_id = c.session_id AND n.id = c.item_id "
				 "WHERE c.session_id = $1 ORDER BY c.position",
				 1, types);
	n = MnemoExecute(items_plan, values, NULL, true, 0);

	spicxt = MemoryContextSwitchTo(callcxt);
	entries = palloc0(sizeof(ContextEntry) * Max(n, 1));
	node_tokens = palloc(sizeof(int64) * Max(n, 1));
	for (i = 0; i < n; i++)
	{
		ContextEntry *e = &entries[i];
		bool		no_node;

		e->position = MnemoGetInt64(i, 1, NULL);
		e->item_type = MnemoGetText(i, 2, NULL);
		e->item_id = MnemoGetText(i, 3, NULL);
		e->role = MnemoGetText(i, 4, NULL);
		node_tokens[i] = MnemoGetInt64(i, 5, &no_node);
		if (no_node)
			node_tokens[i] = -1;
	}
	MemoryContextSwitchTo(spicxt);

	/* the parts of every item, in the same order: render each message */
	MnemoPrepare(&parts_plan,
				 "SELECT c.position, p.part_type, p.content, p.compacted_at "
				 "FROM mnemo.context_items c JOIN mnemo.message_parts p "
				 "ON p.session_id = c.session_id AND p.message_id = c.item_id "
				 "WHERE c.session_id = $1 ORDER BY c.position, p.part_index",
				 1, types);
	nparts = MnemoExecute(parts_plan, values, NULL, true, 0);
	MemoryContextSwitchTo(callcxt);
	for (i = 0, j = 0; i < n; i++)
	{
		ContextEntry *e = &entries[i];
		StringInfoData out;

		initStringInfo(&out);
		for (; j < nparts && MnemoGetInt64(j, 1, NULL) == e->position; j++)
		{
			bool		isnull;
			bool		no_tombstone;
			char	   *type = MnemoGetText(j, 2, NULL);
			Jsonb	   *content = DatumGetJsonbP(SPI_getbinval(SPI_tuptable->vals[j],
															   SPI_tuptable->tupdesc, 3, &isnull));
			int64		compacted_at = MnemoGetInt64(j, 4, &no_tombstone);
			char	   *text = MnemoRenderPart(type, content, compacted_at, !no_tombstone);

			if (text[0] == '\0')
				continue;
			if (out.len > 0)
				appendStringInfoChar(&out, '\n');
			appendStringInfoString(&out, text);
		}
		e->content = out.data;
		if (strcmp(e->item_type, "summary") == 0)
		{
			e->role = pstrdup("assistant");
			e->tokens = node_tokens[i] < 0 ? MnemoEstimateTokens(e->content, strlen(e->content))
				: (int32) node_tokens[i];
			e->included = true;
			totals->summary_tokens += e->tokens;
		}
		else
			e->tokens = MnemoEstimateTokens(e->content, strlen(e->content));
	}
	MemoryContextSwitchTo(spicxt);
	SPI_finish();

	/* messages newest to oldest while they fit in what the summaries left */
	remaining = (int64) budget - totals->summary_tokens;
	for (i = n; i-- > 0;)
	{
		ContextEntry *e = &entries[i];

		if (strcmp(e->item_type, "summary") == 0)
			continue;
		if (e->tokens > remaining)
			break;
		e->included = true;
		remaining -= e->tokens;
	}
	for (i = 0; i < n; i++)
	{
		if (entries[i].included)
		{
			totals->included_items++;
			totals->included_tokens += entries[i].tokens;
		}
		else
		{
			totals->omitted_items++;
			totals->omitted_tokens += entries[i].tokens;
		}
	}
	*nentries = (int) n;
	return entries;
}

PG_FUNCTION_INFO_V1(mnemo_build_context);
Datum
mnemo_build_context(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	ContextTotals totals;
	ContextEntry *entries;
	int			n;
	int			i;

	entries = AssembleContext(fcinfo, CurrentMemoryContext, &n, &totals);
	InitMaterializedSRF(fcinfo, 0);
	for (i = 0; i < n; i++)
	{
		ContextEntry *e = &entries[i];
		Datum		values[6];
		bool		nulls[6] = {false, false, false, false, false, false};

		if (!e->included)
			continue;
		values[0] = Int64GetDatum(e->position);
		values[1] = CStringGetTextDatum(e->item_type);
		values[2] = CStringGetTextDatum(e->item_id);
		values[3] = CStringGetTextDatum(e->role);
		values[4] = CStringGetTextDatum(e->content);
		values[5] = Int32GetDatum(e->tokens);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

PG_FUNCTION_INFO_V1(mnemo_context_report);
Datum
mnemo_context_report(PG_FUNCTION_ARGS)
{
	ContextTotals totals;
	TupleDesc	desc;
	Datum		values[6];
	bool		nulls[6] = {false, false, false, false, false, false};
	int			n;

	(void) AssembleContext(fcinfo, CurrentMemoryContext, &n, &totals);
	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "function returning a row called in a context that cannot accept one");
	desc = BlessTupleDesc(desc);
	values[0] = Int32GetDatum(PG_GETARG_INT32(1));
	values[1] = Int64GetDatum(totals.summary_tokens);
	values[2] = Int32GetDatum(totals.included_items);
	values[3] = Int64GetDatum(totals.included_tokens);
	values[4] = Int32GetDatum(totals.omitted_items);
	values[5] = Int64GetDatum(totals.omitted_tokens);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(desc, values, nulls)));
}
