/*
 * context.c
 *		Context assembly: build_context and context_report, the seed's
 *		ContextBuilder as one server call.
 *
 * Invariant 5: assembly reads the context view and only the items in it, so
 * its cost grows with the context, not with the session's history, nor with
 * the other sessions sharing the tables.  And of the view it reads what the
 * budget holds (issue 36: a session never compacted is all tail, and
 * rendering all of it before the budget cut cost 17 s at 900,000 messages):
 * the summaries, then the messages newest first, a batch of items at a time,
 * up to the first that does not fit (AssembleNewestFirst).  Each statement
 * reads items of the view and, for each, its message row (by primary key,
 * through the seq the item carries), its parts and a summary's DAG node,
 * every access by an index whose key leads with the session; its rows are
 * rendered as the executor produces them, and selection is done here in C.
 * A fork's view, whose items its ancestors hold, is read whole, owner by
 * owner (ReadForkContext), and chosen from after; so is the view
 * compaction_block reads (MnemoReadContext).  The raw parts
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
#include "lib/stringinfo.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/jsonb.h"
#include "utils/tuplestore.h"

#include "mnemo.h"
#include "context.h"

/* see the header comment: one item's rendering, all renderings held */
#define CONTEXT_ITEM_MAX (16 * 1024 * 1024)
#define CONTEXT_HELD_MAX (256 * 1024 * 1024)

/* see AssembleNewestFirst: the fewest messages left out to count, and batches */
#define CONTEXT_COUNT_MIN 64
#define CONTEXT_BATCH_MIN 16
#define CONTEXT_BATCH_MAX 1024

/*
 * Receives the statement's rows one at a time and folds them into entries:
 * the SPI tuple table would copy every row, part contents included, only
 * for the loop here to read it once.  The rendered contents of all entries
 * share one buffer, each followed by a NUL (so a view renders to at most
 * 1 GB); a buffer per entry allocated several times the memory the contents
 * need, and the page faults of fresh memory on every call cost more than the
 * rendering.
 */
typedef struct ContextReceiver
{
	DestReceiver pub;
	MemoryContext callcxt;		/* entries, their strings, contents */
	MemoryContext rowcxt;		/* reset after every part */
	MnemoContextEntry *entries;
	int			nentries;
	int			maxentries;
	StringInfoData contents;
	int			content_start;	/* of the last entry, in contents */
	int32		budget;
	int			first_held;		/* the oldest message whose content is held */
	int64		held_tokens;	/* of the messages from first_held on */
	int64		dropped_bytes;	/* in contents, of entries let go */
	const char *session_id;
	bool		inherited;		/* saw an item of a fork's ancestor */
	bool		feeding_inherited;	/* ReadForkContext: the rows are an ancestor's */

	/*
	 * The newest-first walk (AssembleNewestFirst): messages come newest
	 * first and each is taken or left out as it is finished.
	 */
	bool		open;			/* the last entry is not finished yet */
	bool		newest_first;
	bool		cut;			/* a message did not fit: the rest are left out */
	bool		stop;			/* the walk has seen all it needs */
	bool		count_omitted;	/* keep rendering after the cut, to count */
	int64		remaining;		/* of the budget, after the summaries and those taken */
	int64		last_position;	/* of the last message finished */
	int64		omitted_items;	/* messages rendered and left out */
	int64		omitted_tokens;
} ContextReceiver;

static SPIPlanPtr context_plan;
static SPIPlanPtr items_plan;
static SPIPlanPtr held_plan;
static SPIPlanPtr session_plan;
static SPIPlanPtr summaries_plan;
static SPIPlanPtr tail_plan;
static SPIPlanPtr rows_plan;
static SPIPlanPtr count_plan;

/*
 * The one statement of assembly: the items of the view in position order,
 * each with its message's role, a summary's node token count, and its parts
 * in part_index order, one row per part (one row with NULL part columns for
 * an item without parts).
 *
 * Each item is looked up by an index key that leads with the session: the
 * message by (session_id, seq), the parts by (session_id, message_id), a
 * summary's node by (session_id, id) in a subquery that runs for summary
 * items only.  Written as a join, it let the planner hash the session's
 * whole summary_nodes -- every node the session ever had, about one per 180
 * messages of history -- on every call, so that assembly grew with the
 * length of the session.  The message and the parts are LATERAL
 * subqueries kept apart by OFFSET 0 for the same reason: as plain joins, a
 * plan made while the session was small (the plan cache keeps one per
 * backend) hashed all of the session's messages and parts on every call,
 * 24 ms at 30,000 messages against 1.5 ms (bench/context, right after a
 * swap).  The view itself is read in position order, the live generation's
 * range only.
 */
#define CONTEXT_COLUMNS(tenant) \
	"SELECT c.position, c.item_type, c.item_id, m.role, " \
	"CASE WHEN c.item_type = 'summary' THEN " \
	"(SELECT n.token_count FROM mnemo.summary_nodes n " \
	"WHERE n.session_id = $1 AND n.id = c.item_id) END, " \
	"p.part_type, p.content, p.compacted_at, " tenant ", " \
	"CASE WHEN c.item_type = 'summary' THEN " \
	"(SELECT n.depth FROM mnemo.summary_nodes n " \
	"WHERE n.session_id = $1 AND n.id = c.item_id) END "
#define CONTEXT_LOOKUPS(join) \
	join " LATERAL (SELECT m.role FROM mnemo.messages m " \
	"         WHERE m.session_id = $1 AND m.seq = c.seq OFFSET 0) m ON true " \
	"LEFT JOIN LATERAL (SELECT p.part_index, p.part_type, p.content, p.compacted_at " \
	"         FROM mnemo.message_parts p " \
	"         WHERE p.session_id = $1 AND p.message_id = c.item_id OFFSET 0) p ON true "
#define CONTEXT_ORDER "ORDER BY c.position, p.part_index"
/* the newest-first walk: items newest first, each one's parts in order */
#define CONTEXT_ORDER_DESC "ORDER BY c.position DESC, p.part_index"

/*
 * The items of a fork's view that session $1 holds (its own, or those it
 * inherited from that ancestor), given as arrays, looked up as above.
 */
#define CONTEXT_HELD_SQL \
	CONTEXT_COLUMNS("$6") \
	"FROM unnest($2::bigint[], $3::text[], $4::text[], $5::bigint[]) " \
	"AS c(position, item_type, item_id, seq) " \
	CONTEXT_LOOKUPS("JOIN") CONTEXT_ORDER

/*
 * An item of a fork's view inherited from an ancestor is not in the fork's
 * messages: its row comes with no role (the LEFT JOIN), and the fork's view
 * is then read owner by owner (ReadForkContext).  Inherited items have
 * seqs up to the fork point, the fork's own messages seqs after it, so no
 * inherited item meets a message of the fork here.
 */
#define CONTEXT_SQL \
	CONTEXT_COLUMNS("c.tenant") \
	"FROM (SELECT c.position, c.item_type, c.item_id, c.seq, c.tenant " \
	"      FROM " MNEMO_CONTEXT_VIEW " c ORDER BY c.position OFFSET 0) c " \
	CONTEXT_LOOKUPS("LEFT JOIN") CONTEXT_ORDER

/*
 * The newest-first walk's statements (AssembleNewestFirst), each looked up
 * as above.  $1 the session, $2 the live generation.  The summaries of the
 * view: explicit rows (the tail holds no summary), in position order.
 */
#define CONTEXT_SUMMARIES_SQL \
	CONTEXT_COLUMNS("c.tenant") \
	"FROM (SELECT c.position, c.item_type, c.item_id, c.seq, c.tenant " \
	"      FROM mnemo.context_items c WHERE c.session_id = $1 AND c.generation = $2 " \
	"      AND c.item_type = 'summary' ORDER BY c.position OFFSET 0) c " \
	CONTEXT_LOOKUPS("JOIN") CONTEXT_ORDER

/*
 * A batch of the tail, newest first: the messages that are not summaries
 * among seqs $3 down to $4, each looked up by (session_id, seq).  Seq by seq
 * over generate_series, as MNEMO_CONTEXT_VIEW reads the tail and for the
 * same reason, and a batch at a time: the budget decides how far back the
 * walk goes, and a range "seq > the tail start" would be planned as a third
 * of the session's messages.
 */
#define CONTEXT_TAIL_SQL \
	CONTEXT_COLUMNS("c.tenant") \
	"FROM (SELECT t.seq AS position, 'message'::text AS item_type, t.id AS item_id, " \
	"             t.seq, t.tenant " \
	"      FROM generate_series($3::bigint, $4::bigint, -1) g(seq), " \
	"      LATERAL (SELECT t.seq, t.id, t.tenant FROM mnemo.messages t " \
	"               WHERE t.session_id = $1 AND t.seq = g.seq AND NOT t.is_summary " \
	"               OFFSET 0) t) c " \
	CONTEXT_LOOKUPS("JOIN") CONTEXT_ORDER_DESC

/*
 * A batch of the explicit message rows, newest first: at most $4 of them
 * before position $3, by the generation's (session_id, generation,
 * position) range read backwards.
 */
#define CONTEXT_ROWS_SQL \
	CONTEXT_COLUMNS("c.tenant") \
	"FROM (SELECT c.position, c.item_type, c.item_id, c.seq, c.tenant " \
	"      FROM mnemo.context_items c WHERE c.session_id = $1 AND c.generation = $2 " \
	"      AND c.position < $3 AND c.item_type = 'message' " \
	"      ORDER BY c.position DESC LIMIT $4) c " \
	CONTEXT_LOOKUPS("LEFT JOIN") CONTEXT_ORDER_DESC

/*
 * Move the contents still held to the front of the buffer, once the ones let
 * go fill half of a large one.
 */
static void
CompactContents(ContextReceiver *r)
{
	int			to = 0;
	int			i;

	if (r->dropped_bytes < r->contents.len / 2 || r->contents.len < 1024 * 1024)
		return;
	for (i = 0; i < r->nentries; i++)
	{
		MnemoContextEntry *e = &r->entries[i];

		if (e->let_go || e->oversize)
			continue;
		memmove(r->contents.data + to, r->contents.data + e->content_off, e->content_len + 1);
		e->content_off = to;
		to += e->content_len + 1;
	}
	r->contents.len = to;
	r->dropped_bytes = 0;
}

/*
 * Close the last entry: its content is complete, so its tokens are known.
 * Its content pointer is set once all are in (the buffer may still move).
 * Then let go the oldest messages that can no longer be kept.
 */
static void
FinishEntry(ContextReceiver *r)
{
	MnemoContextEntry *e;

	if (r->nentries == 0 || !r->open)
		return;
	r->open = false;
	e = &r->entries[r->nentries - 1];
	e->content_len = r->contents.len - r->content_start;
	if (e->tokens < 0)
		e->tokens = e->oversize ? (int32) Min(Max(1, e->chars / 4), PG_INT32_MAX) :
			MnemoEstimateTokens(r->contents.data + r->content_start, e->content_len);
	appendStringInfoChar(&r->contents, '\0');
	if (e->is_summary)
		return;

	if (r->newest_first)
	{
		r->last_position = e->position;
		/*
		 * The newest messages that fit, up to the first that does not; as
		 * the other path lets go of renderings past CONTEXT_HELD_MAX, a
		 * budget that would hold more stops there.
		 */
		if (!r->cut && !e->oversize && e->tokens <= r->remaining &&
			r->contents.len <= CONTEXT_HELD_MAX)
		{
			e->included = true;
			r->remaining -= e->tokens;
			return;
		}
		r->cut = true;
		r->omitted_items++;
		r->omitted_tokens += e->tokens;
		r->contents.len = e->content_off;
		r->contents.data[r->contents.len] = '\0';
		r->nentries--;
		if (!r->count_omitted ||
			(r->omitted_tokens > r->budget && r->omitted_items >= CONTEXT_COUNT_MIN))
			r->stop = true;
		return;
	}

	r->held_tokens += e->tokens;
	while (r->first_held < r->nentries &&
		   (r->held_tokens > r->budget || r->contents.len - r->dropped_bytes > CONTEXT_HELD_MAX))
	{
		MnemoContextEntry *old = &r->entries[r->first_held++];

		if (old->is_summary)
			continue;
		r->held_tokens -= old->tokens;
		old->let_go = true;
		r->dropped_bytes += old->content_len + 1;
	}
	CompactContents(r);
}

/*
 * Add one part's rendering to the open entry, or only count its characters
 * once the entry's rendering is over CONTEXT_ITEM_MAX.
 */
static void
AddRendering(ContextReceiver *r, const char *rendered)
{
	MnemoContextEntry *e = &r->entries[r->nentries - 1];
	int			len = strlen(rendered);
	bool		first = r->contents.len == r->content_start && e->chars == 0;

	if (!e->oversize && (int64) r->contents.len - r->content_start + len + 1 > CONTEXT_ITEM_MAX)
	{
		e->oversize = true;
		e->chars = pg_mbstrlen_with_len(r->contents.data + r->content_start,
										r->contents.len - r->content_start);
		r->contents.len = r->content_start;
		r->contents.data[r->contents.len] = '\0';
	}
	if (e->oversize)
	{
		e->chars += (first ? 0 : 1) + pg_mbstrlen_with_len(rendered, len);
		return;
	}
	if (!first)
		appendStringInfoChar(&r->contents, '\n');
	appendBinaryStringInfo(&r->contents, rendered, len);
}

/*
 * One row: the first row of an item opens its entry (a new position), and
 * every row with a part appends that part's rendering to the entry.
 */
static bool
ContextReceiveSlot(TupleTableSlot *slot, DestReceiver *self)
{
	ContextReceiver *r = (ContextReceiver *) self;
	MemoryContext oldcxt;
	bool		isnull;
	int64		position = DatumGetInt64(slot_getattr(slot, 1, &isnull));
	Datum		type;
	bool		no_part;

	(void) slot_getattr(slot, 4, &isnull);
	if (isnull)
	{
		r->inherited = true;
		return true;
	}
	oldcxt = MemoryContextSwitchTo(r->callcxt);

	if (r->stop)
		return false;
	if (r->nentries == 0 || r->entries[r->nentries - 1].position != position)
	{
		MnemoContextEntry *e;
		Datum		node_tokens;
		bool		no_node;

		FinishEntry(r);
		if (r->stop)
		{
			MemoryContextSwitchTo(oldcxt);
			return false;
		}
		if (r->nentries == r->maxentries)
		{
			r->maxentries *= 2;
			r->entries = repalloc(r->entries, sizeof(MnemoContextEntry) * r->maxentries);
		}
		e = &r->entries[r->nentries++];
		memset(e, 0, sizeof(*e));
		r->open = true;
		e->position = position;
		e->inherited = r->feeding_inherited;
		e->content_off = r->contents.len;
		e->item_type = TextDatumGetCString(slot_getattr(slot, 2, &isnull));
		e->item_id = TextDatumGetCString(slot_getattr(slot, 3, &isnull));
		e->role = TextDatumGetCString(slot_getattr(slot, 4, &isnull));
		e->is_summary = strcmp(e->item_type, "summary") == 0;
		node_tokens = slot_getattr(slot, 5, &no_node);

		/* a summary is an assistant message; its node knows its tokens */
		if (e->is_summary)
			e->role = pstrdup("assistant");
		e->tokens = e->is_summary && !no_node ? DatumGetInt32(node_tokens) : -1;
		e->depth = e->is_summary && !no_node ? DatumGetInt32(slot_getattr(slot, 10, &isnull)) : -1;
		r->content_start = r->contents.len;
		/*
		 * Items carry their session's tenant: a session the caller may not
		 * see is a missing one, before anything of it is rendered.
		 */
		if (r->nentries == 1 &&
			!MnemoTenantVisible(TextDatumGetCString(slot_getattr(slot, 9, &isnull))))
			ereport(ERROR,
					(errcode(ERRCODE_MNEMO_SESSION_NOT_FOUND),
					 errmsg("session \"%s\" does not exist", r->session_id)));
	}

	type = slot_getattr(slot, 6, &no_part);
	if (!no_part)
	{
		bool		no_tombstone;
		Datum		compacted_at = slot_getattr(slot, 8, &no_tombstone);
		char	   *rendered;

		/* detoasted values and the rendering itself are garbage after this */
		MemoryContextSwitchTo(r->rowcxt);
		rendered = MnemoRenderPart(TextDatumGetCString(type),
								   DatumGetJsonbP(slot_getattr(slot, 7, &isnull)),
								   no_tombstone ? 0 : DatumGetInt64(compacted_at),
								   !no_tombstone);
		if (rendered[0] != '\0')
			AddRendering(r, rendered);
		MemoryContextReset(r->rowcxt);
	}
	MemoryContextSwitchTo(oldcxt);
	return true;
}

/* The receiver lives on AssembleContext's stack: nothing to set up or free. */
static void
ContextStartup(DestReceiver *self, int operation, TupleDesc typeinfo)
{
}

static void
ContextShutdown(DestReceiver *self)
{
}

static void
ContextDestroy(DestReceiver *self)
{
}

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
				 "SELECT c.position, c.item_type, c.item_id, c.seq FROM " MNEMO_CONTEXT_VIEW " c "
				 "ORDER BY c.position",
				 1, (Oid[]) {TEXTOID});
	nitems = MnemoExecute(items_plan, (Datum[]) {CStringGetTextDatum(session_id)}, NULL, true, 0);
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
			ContextReceiveSlot(slots[best], &r->pub);
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
 * included yet.  MN001 if the session does not exist (or is not visible).
 */
MnemoContextEntry *
MnemoReadContext(const char *session_id, int32 budget, MemoryContext callcxt, int *nentries)
{
	Oid			types[1] = {TEXTOID};
	ContextReceiver receiver;
	MnemoContextEntry *entries;
	int			nestlevel;
	int			n;
	int			i;
	MnemoCall	call;

	memset(&receiver, 0, sizeof(receiver));
	receiver.pub.receiveSlot = ContextReceiveSlot;
	receiver.pub.rStartup = ContextStartup;
	receiver.pub.rShutdown = ContextShutdown;
	receiver.pub.rDestroy = ContextDestroy;
	receiver.pub.mydest = DestNone;
	receiver.callcxt = callcxt;
	receiver.session_id = session_id;
	receiver.rowcxt = AllocSetContextCreate(callcxt, "mnemo context part",
											ALLOCSET_DEFAULT_SIZES);
	receiver.budget = budget;
	receiver.maxentries = 256;
	/*
	 * The entries and their contents are returned, so they go in callcxt
	 * (and stay there as they grow: repalloc keeps a chunk's context), not
	 * in whatever context the caller is in, which may be SPI's.
	 */
	{
		MemoryContext oldcxt = MemoryContextSwitchTo(callcxt);

		receiver.entries = palloc(sizeof(MnemoContextEntry) * receiver.maxentries);
		initStringInfo(&receiver.contents);
		MemoryContextSwitchTo(oldcxt);
	}

	MnemoConnect(&call);
	MnemoPrepare(&context_plan, CONTEXT_SQL, 1, types);

	/*
	 * Planned without sequential scans.  context_items holds the views of
	 * all sessions, and compactions leave its heap and indexes mostly empty
	 * pages (in the benchmark, 13 MB of heap and 79 MB of index for 600 live
	 * rows).  The planner costs an index scan by the size of the index and
	 * chose to read the whole table instead, on every call: a cost that grows
	 * with every session's history.  One view is a few heap pages found
	 * through (session_id, position).  An error undoes the setting with the
	 * transaction, as it does a function's SET clause.
	 */
	nestlevel = NewGUCNestLevel();
	(void) set_config_option("enable_seqscan", "off", PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);
	MnemoExecuteTo(context_plan, (Datum[]) {CStringGetTextDatum(session_id)}, NULL, true,
				   &receiver.pub);
	AtEOXact_GUC(true, nestlevel);
	if (receiver.inherited)
	{
		receiver.nentries = 0;
		resetStringInfo(&receiver.contents);
		receiver.first_held = 0;
		receiver.held_tokens = 0;
		receiver.dropped_bytes = 0;
		ReadForkContext(session_id, &receiver);
	}
	FinishEntry(&receiver);

	/*
	 * Items exist only for a session that exists (they are written under its
	 * lock and purged with it), so only an empty view needs the look-up that
	 * tells an empty session from a missing one.
	 */
	if (receiver.nentries == 0)
		MnemoCheckSessionExists(session_id, NULL, NULL);
	MnemoFinish(&call);
	MemoryContextDelete(receiver.rowcxt);

	entries = receiver.entries;
	n = receiver.nentries;
	for (i = 0; i < n; i++)
		entries[i].content = receiver.contents.data + entries[i].content_off;
	*nentries = n;
	return entries;
}

/* Run one statement of the walk into the receiver, finishing its last entry. */
static void
WalkStatement(ContextReceiver *r, SPIPlanPtr plan, Datum *values)
{
	MnemoExecuteTo(plan, values, NULL, true, &r->pub);
	FinishEntry(r);
}

static int
ComparePositions(const void *a, const void *b)
{
	int64		pa = ((const MnemoContextEntry *) a)->position;
	int64		pb = ((const MnemoContextEntry *) b)->position;

	return pa < pb ? -1 : pa > pb ? 1 : 0;
}

/*
 * Assembly that costs what the budget holds (issue 36), for a session that
 * is not a fork: the summaries of the view are read and reserved first,
 * then the messages newest first, the implicit tail through (session_id,
 * seq) and then the explicit rows backwards by position, a batch at a time,
 * each message taken as it is rendered while it fits; the walk stops at the
 * first that does not.  Only the items taken are returned (in position
 * order), each included.  *found: whether the session is not a fork (else
 * nothing is done: ReadForkContext's path assembles it).
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
 */
static MnemoContextEntry *
AssembleNewestFirst(const char *session_id, int32 budget, bool count_omitted,
					MemoryContext callcxt, int *nentries, ContextTotals *totals, bool *found)
{
	ContextReceiver r;
	MnemoContextEntry *entries;
	Datum		values[4];
	int64		generation;
	int64		tail_seq;
	int64		last_seq;
	int64		hi;
	int64		before;
	int64		batch;
	int64		summaries_omitted = 0;
	int			nestlevel;
	int			n;
	int			i;
	MnemoCall	call;

	MnemoConnect(&call);
	MnemoPrepare(&session_plan,
				 "SELECT tenant, context_generation, context_tail_seq, last_seq, "
				 "fork_seq IS NOT NULL FROM mnemo.sessions WHERE id = $1",
				 1, (Oid[]) {TEXTOID});
	values[0] = CStringGetTextDatum(session_id);
	MnemoCheckSessionRow(session_id, MnemoExecute(session_plan, values, NULL, true, 1) == 1,
						 1, 0, false);
	if (MnemoGetBool(0, 5))
	{
		MnemoFinish(&call);
		*found = false;
		return NULL;
	}
	*found = true;
	generation = MnemoGetInt64(0, 2, NULL);
	tail_seq = MnemoGetInt64(0, 3, NULL);
	last_seq = MnemoGetInt64(0, 4, NULL);

	memset(&r, 0, sizeof(r));
	r.pub.receiveSlot = ContextReceiveSlot;
	r.pub.rStartup = ContextStartup;
	r.pub.rShutdown = ContextShutdown;
	r.pub.rDestroy = ContextDestroy;
	r.pub.mydest = DestNone;
	r.callcxt = callcxt;
	r.session_id = session_id;
	r.rowcxt = AllocSetContextCreate(callcxt, "mnemo context part", ALLOCSET_DEFAULT_SIZES);
	r.budget = budget;
	r.count_omitted = count_omitted;
	r.maxentries = 64;
	{
		MemoryContext oldcxt = MemoryContextSwitchTo(callcxt);

		r.entries = palloc(sizeof(MnemoContextEntry) * r.maxentries);
		initStringInfo(&r.contents);
		MemoryContextSwitchTo(oldcxt);
	}

	/* as MnemoReadContext, and no JIT: a batch is planned as ~1,000 rows */
	nestlevel = NewGUCNestLevel();
	(void) set_config_option("enable_seqscan", "off", PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);
	(void) set_config_option("jit", "off", PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);

	/* the summaries, all kept unless oversize, reserved first */
	values[1] = Int64GetDatum(generation);
	MnemoPrepare(&summaries_plan, CONTEXT_SUMMARIES_SQL, 2, (Oid[]) {TEXTOID, INT8OID});
	WalkStatement(&r, summaries_plan, values);
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
	MnemoPrepare(&tail_plan, CONTEXT_TAIL_SQL, 4, (Oid[]) {TEXTOID, INT8OID, INT8OID, INT8OID});
	batch = CONTEXT_BATCH_MIN;
	for (hi = last_seq; hi > tail_seq && !r.stop; hi -= batch, batch = Min(batch * 2, CONTEXT_BATCH_MAX))
	{
		CHECK_FOR_INTERRUPTS();
		values[2] = Int64GetDatum(hi);
		values[3] = Int64GetDatum(Max(hi - batch + 1, tail_seq + 1));
		WalkStatement(&r, tail_plan, values);
	}
	MnemoPrepare(&rows_plan, CONTEXT_ROWS_SQL, 4, (Oid[]) {TEXTOID, INT8OID, INT8OID, INT8OID});
	before = PG_INT64_MAX;
	batch = CONTEXT_BATCH_MIN;
	while (!r.stop)
	{
		CHECK_FOR_INTERRUPTS();
		values[2] = Int64GetDatum(before);
		values[3] = Int64GetDatum(batch);
		if (MnemoExecuteTo(rows_plan, values, NULL, true, &r.pub) == 0)
			break;
		FinishEntry(&r);
		/* the next batch starts before the oldest message this one gave */
		before = r.last_position;
		batch = Min(batch * 2, CONTEXT_BATCH_MAX);
	}

	if (count_omitted && r.stop)
	{
		int64		total;
		int64		rest;

		MnemoPrepare(&count_plan,
					 "SELECT (SELECT count(*) FROM mnemo.context_items c "
					 "        WHERE c.session_id = $1 AND c.generation = $2) "
					 "     + ($4 - $3) "
					 "     - (SELECT count(*) FROM mnemo.messages m "
					 "        WHERE m.session_id = $1 AND m.seq > $3 AND m.is_summary)",
					 4, (Oid[]) {TEXTOID, INT8OID, INT8OID, INT8OID});
		values[2] = Int64GetDatum(tail_seq);
		values[3] = Int64GetDatum(last_seq);
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
	AtEOXact_GUC(true, nestlevel);
	MnemoFinish(&call);
	MemoryContextDelete(r.rowcxt);

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
 * budget.  Entries and totals are allocated in callcxt.  22004/22023 for a
 * NULL or negative budget.  count_omitted: the totals of what is left out
 * are wanted (see AssembleNewestFirst).
 */
ContextEntry *
AssembleContext(FunctionCallInfo fcinfo, MemoryContext callcxt, bool count_omitted,
				int *nentries, ContextTotals *totals)
{
	char	   *session_id = MnemoRequireTextArg(fcinfo, 0, "session_id");
	int32		budget = DatumGetInt32(MnemoRequireArg(fcinfo, 1, "budget_tokens"));
	MnemoContextEntry *entries;
	int64		remaining;
	bool		found;
	int			n;
	int			i;

	if (budget < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("budget_tokens must not be negative")));
	entries = AssembleNewestFirst(session_id, budget, count_omitted, callcxt, nentries, totals,
								  &found);
	if (found)
		return entries;

	/* a fork: its view read whole, owner by owner, and chosen from */
	memset(totals, 0, sizeof(*totals));
	entries = MnemoReadContext(session_id, budget, callcxt, &n);
	for (i = 0; i < n; i++)
	{
		if (entries[i].is_summary && !entries[i].oversize)
		{
			entries[i].included = true;
			totals->summary_tokens += entries[i].tokens;
		}
	}

	/* messages newest to oldest while they fit in what the summaries left */
	remaining = (int64) budget - totals->summary_tokens;
	for (i = n; i-- > 0;)
	{
		MnemoContextEntry *e = &entries[i];

		if (e->is_summary)
			continue;
		if (e->tokens > remaining || e->oversize || e->let_go)
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
	*nentries = n;
	return entries;
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
	int			n;
	int			i;

	entries = AssembleContext(fcinfo, CurrentMemoryContext, false, &n, &totals);
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
	int			n;

	(void) AssembleContext(fcinfo, CurrentMemoryContext, true, &n, &totals);
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
