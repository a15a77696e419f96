/*
 * build_context.c
 *		Context assembly: build_context and context_report, the seed's
 *		ContextBuilder as one server call.
 *
 * Invariant 5: assembly reads the context view and only the items in it, so
 * its cost grows with the context, not with the session's history, nor with
 * the other sessions sharing the tables.  And of the view it reads what the
 * budget holds (issue 36: a session never compacted is all tail, and
 * rendering all of it before the budget cut cost 17 s at 900,000 messages):
 * the summaries, then the messages newest first, a batch of items at a time
 * (context_walk.c), up to the first that does not fit (AssembleNewestFirst).
 * Each statement reads items of the view and, for each, its message row (by
 * primary key, through the seq the item carries), its parts and a summary's
 * DAG node, every access by an index whose key leads with the session and
 * its tenant; its rows are rendered as the executor produces them
 * (context_rows.c), and selection is done here in C.  A fork's view, whose items its ancestors
 * hold, is read whole, owner by owner, and chosen from after
 * (context_view.c).  The raw parts are not returned: a client that wants
 * structured tool calls passes the item ids to
 * get_messages_with_parts_by_ids.
 *
 * Selection, as the seed's builder: every summary is kept and its tokens are
 * reserved first; then messages are taken newest to oldest while they fit in
 * what is left, stopping at the first that does not, so the kept messages
 * are the most recent contiguous ones.  A budget smaller than the summaries
 * alone keeps the summaries and no message.  Nothing is dropped silently:
 * context_report gives the counts and tokens left out.
 *
 * Rendering and tokens are context_rows.c's.
 *
 * No item can make assembly fail for the whole session.  An item whose
 * rendering passes CONTEXT_ITEM_MAX bytes keeps none of it (its tokens are
 * still counted) and is left out as an item that does not fit; so is a
 * summary.  And the rendering of a message is let go as soon as the
 * messages from it to the newest seen so far hold more tokens than the
 * budget (it cannot be kept then), or the renderings held pass
 * CONTEXT_HELD_MAX bytes: memory stays near the budget's worth of text, not
 * the view's.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/tuplestore.h"

#include "mnemo.h"
#include "tenancy/tenancy.h"
#include "context/context.h"

static SPIPlanPtr summaries_plan;
static SPIPlanPtr count_plan;

/*
 * The summaries of the view, for AssembleNewestFirst: explicit rows (the
 * tail holds no summary), in position order, looked up as every statement
 * of the view is (context.h).  A walk's parameters (VIEW_WALK_TYPES): $1
 * the session, $2 the live generation, $5 the tenant.
 */
#define CONTEXT_SUMMARIES_SQL \
	CONTEXT_COLUMNS("$5") \
	"FROM (SELECT c.position, c.item_type, c.item_id, c.seq " \
	"      FROM mnemo.context_items c WHERE c.session_id = $1 AND c.tenant = $5 " \
	"      AND c.generation = $2 AND c.item_type = 'summary' ORDER BY c.position OFFSET 0) c " \
	CONTEXT_LOOKUPS("JOIN", "$5") CONTEXT_ORDER

/* Run one statement of the walk into the receiver, finishing its last entry. */
static void
WalkStatement(ContextReceiver *r, SPIPlanPtr plan, Datum *values)
{
	MnemoExecuteTo(plan, values, NULL, true, &r->pub);
	ContextFinishEntry(r);
}

static int
ComparePositions(const void *a, const void *b)
{
	int64		pa = ((const MnemoContextEntry *) a)->position;
	int64		pb = ((const MnemoContextEntry *) b)->position;

	return pa < pb ? -1 : pa > pb ? 1 : 0;
}

/*
 * Assembly that costs what the budget holds (issue 36): the summaries of
 * the view are read and reserved first, then the messages newest first,
 * the implicit tail through (session_id, tenant, seq) and then the
 * explicit rows backwards by position, a batch at a time, each message
 * taken as it is rendered while it fits; the walk stops at the first that
 * does not.  Only the items taken are returned (in position order), each
 * included.  A fork's explicit rows, most of which its ancestors hold, are
 * looked up a batch at a time by the session that holds each
 * (ContextFeedHeld); until 0.13.0's library its whole view was read and
 * rendered on every call, so that a fork of a long uncompacted session
 * paid its history on every turn.
 *
 * count_omitted (context_report and turn_context's budget row): the walk
 * goes on past the cut, rendering messages only to count them, until it has
 * counted CONTEXT_COUNT_MIN of them and more tokens than the budget; the
 * items it did not reach are counted exactly (the explicit rows by their
 * key range, the tail as its seqs less the summaries among them, by the
 * partial index of summary messages) and their tokens estimated at the mean
 * of the messages counted.  So the size a caller compares with its
 * thresholds is exact up to more than the budget, and past that an
 * estimate that stays over it, without rendering the session.
 *
 * The tenant the session id resolved to goes in *tenant (callcxt).
 */
static MnemoContextEntry *
AssembleNewestFirst(const char *session_id, int32 budget, bool count_omitted,
					MemoryContext callcxt, int *nentries, ContextTotals *totals, char **tenant)
{
	ContextReceiver r;
	ViewWalk	w;
	MnemoContextEntry *entries;
	Datum		values[VIEW_WALK_NARGS];
	int64		summaries_omitted = 0;
	int			n;
	int			i;
	MnemoCall	call;

	MnemoConnect(&call);
	(void) ViewWalkBegin(session_id, true, &w);
	*tenant = MemoryContextStrdup(callcxt, w.tenant);
	ContextReceiverInit(&r, session_id, budget, callcxt, 64);
	r.count_omitted = count_omitted;

	/* the summaries, all kept unless oversize, reserved first */
	ViewWalkValues(&w, values, w.tail_seq, w.last_seq);
	if (w.fork)
		ViewWalkForkSummaries(&w, &r);
	else
	{
		MnemoPrepare(&summaries_plan, CONTEXT_SUMMARIES_SQL, VIEW_WALK_NARGS, VIEW_WALK_TYPES);
		WalkStatement(&r, summaries_plan, values);
	}
	memset(totals, 0, sizeof(*totals));
	for (i = 0; i < r.nentries; i++)
	{
		if (r.entries[i].oversize)
		{
			summaries_omitted++;
			totals->omitted_tokens += r.entries[i].tokens;
			continue;
		}
		r.entries[i].included = true;
		totals->summary_tokens += r.entries[i].tokens;
	}
	r.remaining = (int64) budget - totals->summary_tokens;
	r.newest_first = true;

	/* the tail, newest first, then the explicit rows before it */
	while (!r.stop && ViewWalkNewer(&w, &r))
		;

	if (count_omitted && r.stop)
	{
		int64		total;
		int64		rest;

		MnemoPrepare(&count_plan,
					 "SELECT (SELECT count(*) FROM mnemo.context_items c "
					 "        WHERE c.session_id = $1 AND c.tenant = $5 AND c.generation = $2) "
					 "     + ($4 - $3) "
					 "     - (SELECT count(*) FROM mnemo.messages m "
					 "        WHERE m.session_id = $1 AND m.tenant = $5 AND m.seq > $3 "
					 "        AND m.is_summary)",
					 VIEW_WALK_NARGS, VIEW_WALK_TYPES);
		MnemoExecute(count_plan, values, NULL, true, 1);
		total = MnemoGetInt64(0, 1, NULL);
		/* entries: the summaries (oversize ones too) and the messages taken */
		rest = total - r.nentries - r.omitted_items;
		if (rest > 0)
		{
			r.omitted_tokens += (int64) ((double) r.omitted_tokens / r.omitted_items * rest + 0.5);
			r.omitted_items += rest;
		}
	}
	ViewWalkEnd(&w);
	MnemoFinish(&call);
	ContextReceiverDone(&r);

	entries = r.entries;
	n = r.nentries;
	qsort(entries, n, sizeof(MnemoContextEntry), ComparePositions);
	for (i = 0; i < n; i++)
	{
		entries[i].content = r.contents.data + entries[i].content_off;
		if (entries[i].included)
		{
			totals->included_items++;
			totals->included_tokens += entries[i].tokens;
		}
	}
	totals->omitted_items = summaries_omitted + r.omitted_items;
	totals->omitted_tokens += r.omitted_tokens;
	*nentries = n;
	return entries;
}

/*
 * The context view of the function's session and what of it fits in the
 * budget.  Entries, totals and *tenant (the tenant the session id resolved
 * to) are allocated in callcxt.  22004/22023 for a
 * NULL or negative budget.  count_omitted: the totals of what is left out
 * are wanted (see AssembleNewestFirst).
 */
ContextEntry *
AssembleContext(FunctionCallInfo fcinfo, MemoryContext callcxt, bool count_omitted,
				int *nentries, ContextTotals *totals, char **tenant)
{
	char	   *session_id = MnemoRequireTextArg(fcinfo, 0, "session_id");
	int32		budget = DatumGetInt32(MnemoRequireArg(fcinfo, 1, "budget_tokens"));

	if (budget < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("budget_tokens must not be negative")));
	return AssembleNewestFirst(session_id, budget, count_omitted, callcxt, nentries, totals,
							   tenant);
}

PG_FUNCTION_INFO_V1(mnemo_build_context);
Datum
mnemo_build_context(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	ContextTotals totals;
	MnemoContextEntry *entries;
	MemoryContext rowcxt;
	MemoryContext oldcxt;
	char	   *tenant;
	int			n;
	int			i;

	entries = AssembleContext(fcinfo, CurrentMemoryContext, false, &n, &totals, &tenant);
	InitMaterializedSRF(fcinfo, 0);

	/* the tuplestore copies each row: its text values are garbage after */
	rowcxt = AllocSetContextCreate(CurrentMemoryContext, "mnemo context row",
								   ALLOCSET_DEFAULT_SIZES);
	oldcxt = MemoryContextSwitchTo(rowcxt);
	for (i = 0; i < n; i++)
	{
		MnemoContextEntry *e = &entries[i];
		Datum		values[6];
		bool		nulls[6] = {false, false, false, false, false, false};

		if (!e->included)
			continue;
		values[0] = Int64GetDatum(e->position);
		values[1] = CStringGetTextDatum(e->item_type);
		values[2] = CStringGetTextDatum(e->item_id);
		values[3] = CStringGetTextDatum(e->role);
		values[4] = PointerGetDatum(cstring_to_text_with_len(e->content, e->content_len));
		values[5] = Int32GetDatum(e->tokens);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		MemoryContextReset(rowcxt);
	}
	MemoryContextSwitchTo(oldcxt);
	MemoryContextDelete(rowcxt);
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
	char	   *tenant;
	int			n;

	(void) AssembleContext(fcinfo, CurrentMemoryContext, true, &n, &totals, &tenant);
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
