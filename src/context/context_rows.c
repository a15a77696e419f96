/*
 * context_rows.c
 *		The receiver of the context view's statements: their rows, one per
 *		part of an item, folded into rendered entries as the executor
 *		produces them (context.h).
 *
 * Rendering is render.c's, part by part, joined by newlines; a summary is
 * an assistant message holding its text.  tokens is estimate_tokens of the
 * rendered content, or a summary node's token_count where there is one.
 * An item whose rendering passes CONTEXT_ITEM_MAX bytes keeps none of it
 * (its tokens are still counted: oversize); the renderings of the oldest
 * messages are let go once those held pass the budget or CONTEXT_HELD_MAX
 * bytes (let_go), and, newest first (AssembleNewestFirst), each message is
 * taken or left out as it is finished (see build_context.c).
 */
#include "postgres.h"

#include "executor/tuptable.h"
#include "mb/pg_wchar.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"

#include "mnemo.h"
#include "tenancy/tenancy.h"
#include "reads/reads.h"
#include "context/context.h"

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
void
ContextFinishEntry(ContextReceiver *r)
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
	r->last_position = e->position;
	if (e->is_summary)
		return;

	if (r->newest_first)
	{
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
	bool		continues = r->nentries > 0 && r->entries[r->nentries - 1].position == position;
	Datum		type;
	bool		no_part;
	Datum		summary;

	/*
	 * The tail's statement gives summaries, which are not in the tail: the
	 * rows of one are left out, up to the next position.
	 */
	if (r->skipping)
	{
		if (position == r->skip_position)
			return true;
		r->skipping = false;
	}
	summary = slot_getattr(slot, 11, &isnull);
	if (!isnull && DatumGetBool(summary))
	{
		r->skipping = true;
		r->skip_position = position;
		return true;
	}

	/* no role: a later part of the item before, or an item of no message here */
	(void) slot_getattr(slot, 4, &isnull);
	if (isnull && !continues)
	{
		r->inherited = true;
		return true;
	}
	if (r->stop)
		return false;
	oldcxt = MemoryContextSwitchTo(r->callcxt);
	if (!continues)
	{
		MnemoContextEntry *e;
		Datum		node_tokens;
		bool		no_node;

		ContextFinishEntry(r);
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
		 * Items carry the tenant whose session they were read from (the
		 * statement's tenant parameter, CONTEXT_COLUMNS): a session the
		 * caller may not see is a missing one, before anything of it is
		 * rendered.
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

void
ContextReceiverInit(ContextReceiver *r, const char *session_id, int32 budget,
					MemoryContext callcxt, int maxentries)
{
	MemoryContext oldcxt;

	memset(r, 0, sizeof(*r));
	r->pub.receiveSlot = ContextReceiveSlot;
	r->pub.rStartup = ContextStartup;
	r->pub.rShutdown = ContextShutdown;
	r->pub.rDestroy = ContextDestroy;
	r->pub.mydest = DestNone;
	r->callcxt = callcxt;
	r->session_id = session_id;
	r->rowcxt = AllocSetContextCreate(callcxt, "mnemo context part", ALLOCSET_DEFAULT_SIZES);
	r->budget = budget;
	r->maxentries = maxentries;

	/*
	 * The entries and their contents are returned, so they go in callcxt
	 * (and stay there as they grow: repalloc keeps a chunk's context), not
	 * in whatever context the caller is in, which may be SPI's.
	 */
	oldcxt = MemoryContextSwitchTo(callcxt);
	r->entries = palloc(sizeof(MnemoContextEntry) * r->maxentries);
	initStringInfo(&r->contents);
	MemoryContextSwitchTo(oldcxt);
}

void
ContextReceiverDone(ContextReceiver *r)
{
	int			i;

	ContextFinishEntry(r);
	for (i = 0; i < r->nentries; i++)
		r->entries[i].content = r->contents.data + r->entries[i].content_off;
	MemoryContextDelete(r->rowcxt);
	r->rowcxt = NULL;
}
