/*
 * context_view.c
 *		The whole context view of a session, read and rendered in position
 *		order (MnemoReadContext): the path of a fork, whose items its
 *		ancestors hold, read owner by owner (ReadForkContext), for
 *		build_context, context_report and compaction_block alike.  A session
 *		that is not a fork is read from either end a batch at a time instead
 *		(context_walk.c), for what the caller needs.
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

static void ReadView(const char *session_id, const char *tenant, ContextReceiver *r);

/*
 * The items of a fork's view that session $1 of tenant $6 holds (its own,
 * or those it inherited from that ancestor, of the fork's tenant), given as
 * arrays, looked up as below.
 */
#define CONTEXT_HELD_SQL \
	CONTEXT_COLUMNS("$6") \
	"FROM unnest($2::bigint[], $3::text[], $4::text[], $5::bigint[]) " \
	"AS c(position, item_type, item_id, seq) " \
	CONTEXT_LOOKUPS("JOIN", "$6") CONTEXT_ORDER

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
 * The view of a fork, rendered owner by owner: its items (one statement on
 * the fork), grouped by the session that holds each (lineage.c), looked up
 * with one statement per such session, and fed to the receiver in position
 * order, merging the per-session results.
 */
static void
ReadForkContext(const char *session_id, ContextReceiver *r)
{
	MnemoLine	line;
	SPITupleTable *items;
	uint64		nitems;
	uint64		row;
	int		   *owner_of;
	SPITupleTable **tables;
	uint64	   *counts;
	uint64	   *next;
	TupleTableSlot **slots;
	Datum	   *positions;
	Datum	   *types;
	Datum	   *ids;
	Datum	   *seqs;
	int			i;

	MnemoReadLine(session_id, PG_INT64_MAX, false, false, &line);
	MnemoPrepare(&items_plan,
				 "SELECT c.position, c.item_type, c.item_id, c.seq FROM " MNEMO_CONTEXT_VIEW("$2") " c "
				 "ORDER BY c.position",
				 2, (Oid[]) {TEXTOID, TEXTOID});
	nitems = MnemoExecute(items_plan,
						  (Datum[]) {CStringGetTextDatum(session_id), CStringGetTextDatum(line.tenant)},
						  NULL, true, 0);
	items = SPI_tuptable;

	/* owners are the line's segments, one slot each: few */
	owner_of = palloc(sizeof(int) * Max(nitems, 1));
	for (row = 0; row < nitems; row++)
	{
		MnemoSegment *seg = MnemoLineSegment(&line, MnemoGetInt64(row, 4, NULL));

		if (seg == NULL)
			elog(ERROR, "context item \"%s\" of session \"%s\" is not on its line",
				 MnemoGetText(row, 3, NULL), session_id);
		owner_of[row] = seg - line.segs;
	}
	tables = palloc0(sizeof(SPITupleTable *) * line.nsegs);
	counts = palloc0(sizeof(uint64) * line.nsegs);
	next = palloc0(sizeof(uint64) * line.nsegs);
	slots = palloc0(sizeof(TupleTableSlot *) * line.nsegs);
	positions = palloc(sizeof(Datum) * Max(nitems, 1));
	types = palloc(sizeof(Datum) * Max(nitems, 1));
	ids = palloc(sizeof(Datum) * Max(nitems, 1));
	seqs = palloc(sizeof(Datum) * Max(nitems, 1));
	MnemoPrepare(&held_plan, CONTEXT_HELD_SQL, 6,
				 (Oid[]) {TEXTOID, INT8ARRAYOID, TEXTARRAYOID, TEXTARRAYOID, INT8ARRAYOID, TEXTOID});
	{
		for (i = 0; i < line.nsegs; i++)
		{
			int			n = 0;

			CHECK_FOR_INTERRUPTS();
			for (row = 0; row < nitems; row++)
			{
				bool		isnull;

				/* segments of one session are looked up together, at its first */
				if (strcmp(line.segs[owner_of[row]].owner, line.segs[i].owner) != 0)
					continue;
				positions[n] = SPI_getbinval(items->vals[row], items->tupdesc, 1, &isnull);
				types[n] = SPI_getbinval(items->vals[row], items->tupdesc, 2, &isnull);
				ids[n] = SPI_getbinval(items->vals[row], items->tupdesc, 3, &isnull);
				seqs[n] = SPI_getbinval(items->vals[row], items->tupdesc, 4, &isnull);
				n++;
			}
			if (n == 0 || (i > 0 && strcmp(line.segs[i - 1].owner, line.segs[i].owner) == 0))
				continue;
			counts[i] = MnemoExecute(held_plan,
									 (Datum[]) {CStringGetTextDatum(line.segs[i].owner),
										 PointerGetDatum(construct_array(positions, n, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE)),
										 PointerGetDatum(construct_array(types, n, TEXTOID, -1, false, TYPALIGN_INT)),
										 PointerGetDatum(construct_array(ids, n, TEXTOID, -1, false, TYPALIGN_INT)),
										 PointerGetDatum(construct_array(seqs, n, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE)),
									 CStringGetTextDatum(line.tenant)},
									 NULL, true, 0);
			tables[i] = SPI_tuptable;
			slots[i] = MakeSingleTupleTableSlot(SPI_tuptable->tupdesc, &TTSOpsHeapTuple);
		}
	}

	/* merge by position; each result is in position order */
	for (;;)
	{
		int			best = -1;
		int64		best_pos = 0;
		int64		pos;
		bool		isnull;

		for (i = 0; i < line.nsegs; i++)
		{
			if (tables[i] == NULL || next[i] >= counts[i])
				continue;
			pos = DatumGetInt64(SPI_getbinval(tables[i]->vals[next[i]], tables[i]->tupdesc, 1, &isnull));
			if (best < 0 || pos < best_pos)
			{
				best = i;
				best_pos = pos;
			}
		}
		if (best < 0)
			break;
		r->feeding_inherited = strcmp(line.segs[best].owner, session_id) != 0;
		do
		{
			ExecStoreHeapTuple(tables[best]->vals[next[best]], slots[best], false);
			r->pub.receiveSlot(slots[best], &r->pub);
			next[best]++;
		} while (next[best] < counts[best] &&
				 DatumGetInt64(SPI_getbinval(tables[best]->vals[next[best]], tables[best]->tupdesc,
											 1, &isnull)) == best_pos);
	}
	for (i = 0; i < line.nsegs; i++)
		if (slots[i] != NULL)
			ExecDropSingleTupleTableSlot(slots[i]);
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
