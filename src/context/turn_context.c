/*
 * turn_context.c
 *		turn_context: everything a chat turn reads of its session, in one call.
 *
 * A turn needs the assembled context (the provider's messages), the parts of
 * the assistant messages in it (tool calls go back to the provider in their
 * structured form, not as rendered text) and the budget report (the
 * thresholds).  Asked as build_context, context_report and
 * get_messages_with_parts_by_ids over build_context's ids, the server
 * assembled the same context three times.  Here it is assembled once, as
 * build_context does it (AssembleContext), and the parts of the included
 * assistant messages are read by key in one more statement, their arrays
 * built in C (MnemoPartsByIds, flat.c).
 *
 * Rows: the entries build_context returns, in position order, each with its
 * parts (assistant messages only, else NULL), then one last row whose
 * item_type is 'budget' and whose budget column holds what context_report
 * returns.  The budget row comes even when nothing fits, so a caller always
 * learns the context's size.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "funcapi.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/typcache.h"

#include "mnemo.h"
#include "tenancy/tenancy.h"
#include "reads/reads.h"
#include "context/context.h"

#define TURN_CONTEXT_COLUMNS 8

/*
 * The parts (jsonb) of each included assistant message among entries, in
 * parts[i] for entry i, copied into the caller's memory context; NULL where
 * the entry is anything else.  tenant: the session's, as assembly resolved
 * it (a fork's ancestors are of its tenant).
 */
static Datum *
AssistantParts(const char *session_id, const char *tenant, ContextEntry *entries, int n)
{
	MemoryContext callcxt = CurrentMemoryContext;
	Datum	   *parts = palloc0(sizeof(Datum) * n);
	Datum	   *ids = palloc(sizeof(Datum) * n);
	int		   *index = palloc(sizeof(int) * n);
	Datum	   *found_parts;
	Datum		id_array;
	MnemoCall	call;
	int			found;
	int			nids = 0;
	int			i;

	for (i = 0; i < n; i++)
		if (entries[i].included && !entries[i].is_summary &&
			strcmp(entries[i].role, "assistant") == 0)
		{
			index[nids] = i;
			ids[nids++] = CStringGetTextDatum(entries[i].item_id);
		}
	if (nids == 0)
		return parts;

	found_parts = palloc0(sizeof(Datum) * nids);
	id_array = PointerGetDatum(construct_array(ids, nids, TEXTOID, -1, false, TYPALIGN_INT));
	MnemoConnect(&call);
	found = MnemoPartsByIds(session_id, tenant, id_array, nids, found_parts, callcxt);

	/*
	 * A fork's inherited messages are in its ancestors' rows: when some
	 * were not found, the same lookup runs on each session it inherits
	 * from.
	 */
	if (found < nids)
	{
		MnemoLine	line;

		MnemoReadLine(session_id, PG_INT64_MAX, false, false, &line);
		for (i = 0; i < line.ninherited && found < nids; i++)
		{
			if (i > 0 && strcmp(line.segs[i].owner, line.segs[i - 1].owner) == 0)
				continue;
			found += MnemoPartsByIds(line.segs[i].owner, tenant, id_array, nids, found_parts,
									 callcxt);
		}
	}
	MnemoFinish(&call);
	for (i = 0; i < nids; i++)
		parts[index[i]] = found_parts[i];
	return parts;
}

/* The budget column: a mnemo.context_budget, as context_report returns it. */
static Datum
BudgetDatum(Oid typid, int32 budget, const ContextTotals *totals)
{
	TupleDesc	desc = lookup_rowtype_tupdesc(typid, -1);
	Datum		values[6];
	bool		nulls[6] = {false, false, false, false, false, false};
	HeapTuple	tuple;

	values[0] = Int32GetDatum(budget);
	values[1] = Int64GetDatum(totals->summary_tokens);
	values[2] = Int32GetDatum(totals->included_items);
	values[3] = Int64GetDatum(totals->included_tokens);
	values[4] = Int32GetDatum(totals->omitted_items);
	values[5] = Int64GetDatum(totals->omitted_tokens);
	tuple = heap_form_tuple(desc, values, nulls);
	ReleaseTupleDesc(desc);
	return HeapTupleGetDatum(tuple);
}

PG_FUNCTION_INFO_V1(mnemo_turn_context);
Datum
mnemo_turn_context(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	ContextTotals totals;
	ContextEntry *entries;
	Datum	   *parts;
	char	   *tenant;
	Datum		values[TURN_CONTEXT_COLUMNS];
	bool		nulls[TURN_CONTEXT_COLUMNS];
	MemoryContext rowcxt;
	MemoryContext oldcxt;
	int			n;
	int			i;

	entries = AssembleContext(fcinfo, CurrentMemoryContext, true, &n, &totals, &tenant);
	parts = AssistantParts(text_to_cstring(PG_GETARG_TEXT_PP(0)), tenant, entries, n);
	InitMaterializedSRF(fcinfo, 0);
	if (rsinfo->setDesc->natts != TURN_CONTEXT_COLUMNS)
		elog(ERROR, "turn_context returns %d columns, not %d", rsinfo->setDesc->natts,
			 TURN_CONTEXT_COLUMNS);

	/* the tuplestore copies each row: its text values are garbage after */
	rowcxt = AllocSetContextCreate(CurrentMemoryContext, "mnemo turn context row",
								   ALLOCSET_DEFAULT_SIZES);
	oldcxt = MemoryContextSwitchTo(rowcxt);
	for (i = 0; i < n; i++)
	{
		ContextEntry *e = &entries[i];

		if (!e->included)
			continue;
		memset(nulls, false, sizeof(nulls));
		values[0] = Int64GetDatum(e->position);
		values[1] = CStringGetTextDatum(e->item_type);
		values[2] = CStringGetTextDatum(e->item_id);
		values[3] = CStringGetTextDatum(e->role);
		values[4] = PointerGetDatum(cstring_to_text_with_len(e->content, e->content_len));
		values[5] = Int32GetDatum(e->tokens);
		values[6] = parts[i];
		nulls[6] = parts[i] == (Datum) 0;
		nulls[7] = true;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		MemoryContextReset(rowcxt);
	}

	memset(nulls, true, sizeof(nulls));
	values[1] = CStringGetTextDatum("budget");
	nulls[1] = false;
	values[7] = BudgetDatum(TupleDescAttr(rsinfo->setDesc, 7)->atttypid, PG_GETARG_INT32(1),
							&totals);
	nulls[7] = false;
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);

	MemoryContextSwitchTo(oldcxt);
	MemoryContextDelete(rowcxt);
	return (Datum) 0;
}
