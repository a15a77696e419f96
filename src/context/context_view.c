/*
 * context_view.c
 *		The whole context view of a session, read and rendered in position
 *		order (MnemoReadContext): compaction_block's path for a fork, whose
 *		items its ancestors hold, read owner by owner (ReadForkContext).
 *		The items of a fork's view are looked up by the session that holds
 *		each here (ContextFeedHeld), whole or a batch at a time: assembly
 *		walks a fork's view newest first as any other (context_walk.c), and
 *		a session that is not a fork is read from either end a batch at a
 *		time by every reader.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"

#include "mnemo.h"
#include "tenancy/tenancy.h"
#include "reads/reads.h"
#include "context/context.h"

static SPIPlanPtr context_plan;
static SPIPlanPtr items_plan;
static SPIPlanPtr held_plan;
static SPIPlanPtr held_desc_plan;

static void ReadView(const char *session_id, const char *tenant, ContextReceiver *r);

/*
 * The items of a fork's view that session $1 of tenant $6 holds (its own,
 * or those it inherited from that ancestor, of the fork's tenant), given as
 * arrays, looked up as below.
 */
#define CONTEXT_HELD_SQL(order) \
	CONTEXT_COLUMNS("$6") \
	"FROM unnest($2::bigint[], $3::text[], $4::text[], $5::bigint[]) " \
	"AS c(position, item_type, item_id, seq) " \
	CONTEXT_LOOKUPS("JOIN", "$6") order

/*
 * An item of a fork's view inherited from an ancestor is not in the fork's
 * messages: its row comes with no role (the LEFT JOIN), and the fork's view
 * is then read owner by owner (ReadForkContext).  Inherited items have
 * seqs up to the fork point, the fork's own messages seqs after it, so no
 * inherited item meets a message of the fork here.
 */
#define CONTEXT_SQL \
	CONTEXT_COLUMNS("$2") \
	"FROM (SELECT c.position, c.item_type, c.item_id, c.seq " \
	"      FROM " MNEMO_CONTEXT_VIEW("$2") " c ORDER BY c.position OFFSET 0) c " \
	CONTEXT_LOOKUPS("LEFT JOIN", "$2") CONTEXT_ORDER


/*
 * Items of a fork's view (the n rows of items: position, item_type,
 * item_id, seq, as a statement gave them), rendered into r owner by owner: grouped by the session of the line that holds each
 * (lineage.c), looked up with one statement per such session, and fed in
 * position order, ascending or descending, merging the per-session
 * results.  The whole view (ReadForkContext) or one batch of the
 * newest-first walk (context_walk.c).
 */
void
ContextFeedHeld(MnemoLine *line, const char *session_id, SPITupleTable *items, uint64 n,
				bool descending, ContextReceiver *r)
{
	SPIPlanPtr *plan = descending ? &held_desc_plan : &held_plan;
	int		   *owner_of = palloc(sizeof(int) * Max(n, 1));
	SPITupleTable **tables = palloc0(sizeof(SPITupleTable *) * line->nsegs);
	uint64	   *counts = palloc0(sizeof(uint64) * line->nsegs);
	uint64	   *next = palloc0(sizeof(uint64) * line->nsegs);
	TupleTableSlot **slots = palloc0(sizeof(TupleTableSlot *) * line->nsegs);
	Datum	   *own_positions = palloc(sizeof(Datum) * Max(n, 1));
	Datum	   *own_types = palloc(sizeof(Datum) * Max(n, 1));
	Datum	   *own_ids = palloc(sizeof(Datum) * Max(n, 1));
	Datum	   *own_seqs = palloc(sizeof(Datum) * Max(n, 1));
	uint64		row;
	int			i;
	bool		isnull;

	/* owners are the line's segments, one slot each: few */
	for (row = 0; row < n; row++)
	{
		MnemoSegment *seg = MnemoLineSegment(line, DatumGetInt64(SPI_getbinval(items->vals[row],
																			 items->tupdesc, 4, &isnull)));

		if (seg == NULL)
			elog(ERROR, "context item \"%s\" of session \"%s\" is not on its line",
				 SPI_getvalue(items->vals[row], items->tupdesc, 3), session_id);
		owner_of[row] = seg - line->segs;
	}
	MnemoPrepare(plan, descending ? CONTEXT_HELD_SQL(CONTEXT_ORDER_DESC) : CONTEXT_HELD_SQL(CONTEXT_ORDER),
				 6, (Oid[]) {TEXTOID, INT8ARRAYOID, TEXTARRAYOID, TEXTARRAYOID, INT8ARRAYOID, TEXTOID});
	for (i = 0; i < line->nsegs; i++)
	{
		int			m = 0;

		CHECK_FOR_INTERRUPTS();
		/* segments of one session are looked up together, at its first */
		if (i > 0 && strcmp(line->segs[i - 1].owner, line->segs[i].owner) == 0)
			continue;
		for (row = 0; row < n; row++)
		{
			if (strcmp(line->segs[owner_of[row]].owner, line->segs[i].owner) != 0)
				continue;
			own_positions[m] = SPI_getbinval(items->vals[row], items->tupdesc, 1, &isnull);
			own_types[m] = SPI_getbinval(items->vals[row], items->tupdesc, 2, &isnull);
			own_ids[m] = SPI_getbinval(items->vals[row], items->tupdesc, 3, &isnull);
			own_seqs[m] = SPI_getbinval(items->vals[row], items->tupdesc, 4, &isnull);
			m++;
		}
		if (m == 0)
			continue;
		counts[i] = MnemoExecute(*plan,
								 (Datum[]) {CStringGetTextDatum(line->segs[i].owner),
									 PointerGetDatum(construct_array(own_positions, m, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE)),
									 PointerGetDatum(construct_array(own_types, m, TEXTOID, -1, false, TYPALIGN_INT)),
									 PointerGetDatum(construct_array(own_ids, m, TEXTOID, -1, false, TYPALIGN_INT)),
									 PointerGetDatum(construct_array(own_seqs, m, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE)),
								 CStringGetTextDatum(line->tenant)},
								 NULL, true, 0);
		tables[i] = SPI_tuptable;
		slots[i] = MakeSingleTupleTableSlot(SPI_tuptable->tupdesc, &TTSOpsHeapTuple);
	}

	/* merge by position; each result is in the order asked for */
	for (;;)
	{
		int			best = -1;
		int64		best_pos = 0;
		int64		pos;

		for (i = 0; i < line->nsegs; i++)
		{
			if (tables[i] == NULL || next[i] >= counts[i])
				continue;
			pos = DatumGetInt64(SPI_getbinval(tables[i]->vals[next[i]], tables[i]->tupdesc, 1, &isnull));
			if (best < 0 || (descending ? pos > best_pos : pos < best_pos))
			{
				best = i;
				best_pos = pos;
			}
		}
		if (best < 0)
			break;
		r->feeding_inherited = strcmp(line->segs[best].owner, session_id) != 0;
		do
		{
			ExecStoreHeapTuple(tables[best]->vals[next[best]], slots[best], false);
			if (!r->pub.receiveSlot(slots[best], &r->pub))
				goto done;
			next[best]++;
		} while (next[best] < counts[best] &&
				 DatumGetInt64(SPI_getbinval(tables[best]->vals[next[best]], tables[best]->tupdesc,
											 1, &isnull)) == best_pos);
	}
done:
	r->feeding_inherited = false;
	for (i = 0; i < line->nsegs; i++)
		if (slots[i] != NULL)
			ExecDropSingleTupleTableSlot(slots[i]);
}

/* The view of a fork, whole, in position order (ContextFeedHeld). */
static void
ReadForkContext(const char *session_id, ContextReceiver *r)
{
	MnemoLine	line;
	uint64		nitems;

	MnemoReadLine(session_id, PG_INT64_MAX, false, false, &line);
	MnemoPrepare(&items_plan,
				 "SELECT c.position, c.item_type, c.item_id, c.seq FROM " MNEMO_CONTEXT_VIEW("$2") " c "
				 "ORDER BY c.position",
				 2, (Oid[]) {TEXTOID, TEXTOID});
	nitems = MnemoExecute(items_plan,
						  (Datum[]) {CStringGetTextDatum(session_id), CStringGetTextDatum(line.tenant)},
						  NULL, true, 0);
	ContextFeedHeld(&line, session_id, SPI_tuptable, nitems, false, r);
}

/*
 * Read and render the context view of session_id, in position order: the
 * items build_context chooses from and compaction_block picks from, so both
 * see the same text and estimates.  budget lets go of the renderings of
 * messages that cannot fit in it (see the header comment); PG_INT32_MAX
 * keeps all but oversize ones.  Entries are allocated in callcxt, none
 * included yet, and so is *tenant, the tenant whose session was read,
 * unless tenant is NULL.  MN001 if the session does not exist (or is not
 * visible), MN013 if it names several the caller sees.
 */
MnemoContextEntry *
MnemoReadContext(const char *session_id, int32 budget, MemoryContext callcxt, int *nentries,
				 char **tenant_out)
{
	ContextReceiver receiver;
	MnemoCall	call;
	bool		all;
	char	   *tenant;
	char	   *checked;

	ContextReceiverInit(&receiver, session_id, budget, callcxt, 256);

	/*
	 * The view of the caller's own tenant's session of that id, when it has
	 * one (one statement, no look-up first); items exist only for a session
	 * that exists (they are written under its lock and purged with it), so
	 * only an empty view needs the look-up that tells an empty session from
	 * a missing one or from another tenant's, whose view is then read.
	 */
	MnemoConnect(&call);
	tenant = MnemoTenantGuess(&all);
	if (tenant == NULL)
		MnemoCheckSession(session_id, false, &tenant, NULL);
	ReadView(session_id, tenant, &receiver);
	if (receiver.nentries == 0)
	{
		MnemoCheckSession(session_id, false, &checked, NULL);
		if (strcmp(checked, tenant) != 0)
			ReadView(session_id, checked, &receiver);
		tenant = checked;
	}
	if (tenant_out)
		*tenant_out = MemoryContextStrdup(callcxt, tenant);
	ContextFinishEntry(&receiver);
	MnemoFinish(&call);
	ContextReceiverDone(&receiver);
	*nentries = receiver.nentries;
	return receiver.entries;
}

/* MnemoReadContext's read of tenant's session session_id into r */
static void
ReadView(const char *session_id, const char *tenant, ContextReceiver *r)
{
	int			nestlevel;

	MnemoPrepare(&context_plan, CONTEXT_SQL, 2, (Oid[]) {TEXTOID, TEXTOID});

	/*
	 * Planned without sequential scans.  context_items holds the views of
	 * all sessions, and compactions leave its heap and indexes mostly empty
	 * pages (in the benchmark, 13 MB of heap and 79 MB of index for 600 live
	 * rows).  The planner costs an index scan by the size of the index and
	 * chose to read the whole table instead, on every call: a cost that grows
	 * with every session's history.  One view is a few heap pages found
	 * through (session_id, tenant, generation, position).  An error undoes
	 * the setting with the transaction, as it does a function's SET clause.
	 */
	nestlevel = NewGUCNestLevel();
	(void) set_config_option("enable_seqscan", "off", PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);
	MnemoExecuteTo(context_plan,
				   (Datum[]) {CStringGetTextDatum(session_id), CStringGetTextDatum(tenant)},
				   NULL, true, &r->pub);
	AtEOXact_GUC(true, nestlevel);
	if (r->inherited)
	{
		r->nentries = 0;
		resetStringInfo(&r->contents);
		r->first_held = 0;
		r->held_tokens = 0;
		r->dropped_bytes = 0;
		ReadForkContext(session_id, r);
	}
}
