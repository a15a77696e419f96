/*
 * block.c
 *		mnemo.compaction_block(): what a compactor summarises next, picked by
 *		the server so that every client compacts by the same rules.
 *
 * Mnesis re-summarises the whole raw log each time; mnemo, like LCM and
 * lossless-claw, takes the oldest contiguous block of the context view
 * outside a protected fresh tail, so each message is covered once per depth
 * of the DAG.
 *
 * Two ways to protect the fresh tail:
 *	- by turns (protect_tokens NULL): it starts at the earlier of the second
 *	  most recent user message (the current turn and the one before, as the
 *	  seed protects; when nothing else can be compacted, no more than
 *	  max_tokens of the newest messages) and the tail_messages-th most
 *	  recent message;
 *	- by budget (protect_tokens given, the engine's share of its budget):
 *	  the newest messages that fit in protect_tokens, plus two pinned user
 *	  messages that break runs wherever they are: the latest one, always,
 *	  and the session's task (the first user message of the view: the
 *	  session's first until it is summarised; a system prompt summarised
 *	  before it does not unpin it) while it fits in protect_tokens.  Fixed counts protected
 *	  more than a small budget holds (an agent's loop after one prompt, a
 *	  16,000-token tool output), and nothing could be compacted.  Here a
 *	  condensation may also mix depths when no run of one depth is left.
 * Before it:
 *	- a leaf block is a run of message items not broken by a summary;
 *	- a condensed block is a run of summary nodes of one depth, broken by a
 *	  message, a node of another depth or a summary without a node (one a
 *	  bare swap put there: it has no provenance to condense), or, in a fork,
 *	  by a node it inherited (its ancestor's);
 * the first run, oldest first, with at least min_items items (or fewer whose
 * tokens are over lone_tokens, when given: a giant tool output alone
 * between summaries) gives the block: its first min_items items, then more
 * while the items' tokens stay within max_tokens.  No row when there is no
 * such run.
 *
 * The transcript is the items as build_context renders them (one renderer,
 * one estimator): "[ROLE]: content" for messages, "[Summary ID]:" blocks
 * separated by "---" for nodes (without their annotations: annotate.c),
 * each item cut to item_chars characters when given (Level 2 does that).
 * File ids are gathered from the whole items, footers of the summaries
 * being condensed included.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "mb/pg_wchar.h"
#include "utils/builtins.h"
#include "utils/tuplestore.h"

#include "mnemo.h"

/*
 * The index in entries where the fresh tail starts.  Too few user messages
 * or messages for a rule protects every message, not the summaries before
 * them.  With max_tokens >= 0, the user-turn rule protects at most
 * max_tokens of the newest messages (see FirstRun's caller); -1: no cap.
 */
static int
TailStart(MnemoContextEntry *entries, int n, int32 tail_messages, int32 max_tokens)
{
	int			users = 0;
	int			messages = 0;
	int64		tokens = 0;
	int			oldest = n;		/* the oldest message seen */
	int			within = n;		/* the oldest of the newest max_tokens */
	int			by_users = -1;
	int			by_count = tail_messages == 0 ? n : -1;
	int			i;

	for (i = n; i-- > 0;)
	{
		if (entries[i].is_summary)
			continue;
		oldest = i;
		tokens += entries[i].tokens;
		if (max_tokens < 0 || tokens <= max_tokens)
			within = i;
		if (strcmp(entries[i].role, "user") == 0 && ++users == 2)
			by_users = i;
		if (++messages == tail_messages)
			by_count = i;
		if (by_users >= 0 && by_count >= 0)
			break;
	}
	if (by_users < 0)
		by_users = oldest;
	if (by_count < 0)
		by_count = oldest;
	return Min(Max(by_users, within), by_count);
}

/*
 * By budget: the index where the newest messages within protect_tokens
 * start, and the two pinned user messages (-1: none).
 */
static int
BudgetTail(MnemoContextEntry *entries, int n, int32 protect_tokens, int *latest, int *task)
{
	int64		tokens = 0;
	int			tail = n;
	bool		full = false;
	int			i;

	*latest = -1;
	*task = -1;
	for (i = n; i-- > 0;)
	{
		MnemoContextEntry *e = &entries[i];

		if (e->is_summary)
			continue;
		if (*latest < 0 && strcmp(e->role, "user") == 0)
			*latest = i;
		if (!full && tokens + e->tokens <= protect_tokens)
		{
			tokens += e->tokens;
			tail = i;
		}
		else
			full = true;
		if (full && *latest >= 0)
			break;
	}
	for (i = 0; i < n; i++)
	{
		if (!entries[i].is_summary && strcmp(entries[i].role, "user") == 0)
		{
			if (i != *latest && entries[i].tokens <= protect_tokens)
				*task = i;
			break;
		}
	}
	return tail;
}

/* How runs are cut: the kind, pinned items, and whether depths may mix. */
typedef struct RunRules
{
	bool		condensed;
	bool		mixed;			/* a condensation of any depths */
	int			pins[2];		/* items never picked (-1: none) */
	int32		min_items;
	int64		lone_tokens;	/* a shorter run over this qualifies; -1: none */
} RunRules;

/* Whether entry i can join a block of the rules' kind at depth. */
static bool
Fits(MnemoContextEntry *entries, int i, const RunRules *r, int32 depth)
{
	MnemoContextEntry *e = &entries[i];

	/*
	 * An item whose rendering was not kept cannot be summarised; nor, in a
	 * condensation, can a fork's inherited summary node, which is its
	 * ancestor's (a fork's leaf may cover the messages it inherited).
	 */
	if (e->oversize || e->let_go || (r->condensed && e->inherited) ||
		i == r->pins[0] || i == r->pins[1])
		return false;
	if (!r->condensed)
		return !e->is_summary;
	return e->is_summary && e->depth >= 0 && (r->mixed || e->depth == depth);
}

/*
 * The first run, oldest first, of at least min_items items (or of fewer
 * over lone_tokens) before tail: its start, and its end into *end (when
 * not NULL); tail when there is none.
 */
static int
FirstRun(MnemoContextEntry *entries, int tail, const RunRules *r, int *end)
{
	int			start;
	int			stop = 0;

	for (start = 0; start < tail; start = stop)
	{
		int64		tokens;

		stop = start + 1;
		if (!Fits(entries, start, r, entries[start].depth))
			continue;
		tokens = entries[start].tokens;
		while (stop < tail && Fits(entries, stop, r, entries[start].depth))
			tokens += entries[stop++].tokens;
		if (stop - start >= r->min_items || (r->lone_tokens >= 0 && tokens > r->lone_tokens))
			break;
	}
	if (end != NULL)
		*end = stop;
	return Min(start, tail);
}

static Datum
TextArray(List *strings)
{
	ArrayBuildState *state = initArrayResult(TEXTOID, CurrentMemoryContext, false);
	ListCell   *lc;

	foreach(lc, strings)
		accumArrayResult(state, CStringGetTextDatum(lfirst(lc)), false, TEXTOID,
						 CurrentMemoryContext);
	return makeArrayResult(state, CurrentMemoryContext);
}

static void
AppendItem(StringInfo out, MnemoContextEntry *e, bool condensed, int32 item_chars)
{
	/* a node's annotation is left out: the condensation's own unions it */
	int			skip = condensed ? MnemoSummaryBody(e->item_id, e->content, e->content_len) : 0;
	int			len = e->content_len - skip;
	char	   *role;
	char	   *p;

	if (item_chars > 0)
		len = pg_mbcharcliplen(e->content + skip, len, item_chars);
	if (out->len > 0)
		appendStringInfoString(out, condensed ? "\n\n---\n\n" : "\n\n");
	if (condensed)
		appendStringInfo(out, "[Summary %s]:\n", e->item_id);
	else
	{
		role = pstrdup(e->role);
		for (p = role; *p; p++)
			*p = pg_ascii_toupper((unsigned char) *p);
		appendStringInfo(out, "[%s]: ", role);
	}
	appendBinaryStringInfo(out, e->content + skip, len);
}

PG_FUNCTION_INFO_V1(mnemo_compaction_block);
Datum
mnemo_compaction_block(PG_FUNCTION_ARGS)
{
	char	   *session_id = MnemoRequireTextArg(fcinfo, 0, "session_id");
	char	   *kind = MnemoRequireTextArg(fcinfo, 1, "kind");
	int32		tail_messages = DatumGetInt32(MnemoRequireArg(fcinfo, 2, "tail_messages"));
	int32		max_tokens = DatumGetInt32(MnemoRequireArg(fcinfo, 3, "max_tokens"));
	int32		min_items = DatumGetInt32(MnemoRequireArg(fcinfo, 4, "min_items"));
	int32		item_chars = PG_ARGISNULL(5) ? 0 : PG_GETARG_INT32(5);
	bool		by_budget = PG_NARGS() > 6 && !PG_ARGISNULL(6);
	int32		protect_tokens = by_budget ? PG_GETARG_INT32(6) : 0;
	bool		lone = PG_NARGS() > 7 && !PG_ARGISNULL(7);
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	MnemoContextEntry *entries;
	RunRules	rules;
	bool		condensed = strcmp(kind, "condensed") == 0;
	int			n;
	int			tail;
	int			start;
	int			end = 0;

	if (!condensed && strcmp(kind, "leaf") != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("kind must be \"leaf\" or \"condensed\", not \"%s\"", kind)));
	if (tail_messages < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("tail_messages must not be negative")));
	if (max_tokens < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("max_tokens must be at least 1")));
	if (min_items < 2)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("min_items must be at least 2")));
	if (!PG_ARGISNULL(5) && item_chars < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("item_chars must be at least 1")));
	if (protect_tokens < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("protect_tokens must not be negative")));
	if (lone && PG_GETARG_INT32(7) < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("lone_tokens must not be negative")));

	memset(&rules, 0, sizeof(rules));
	rules.condensed = condensed;
	rules.min_items = min_items;
	rules.lone_tokens = lone ? PG_GETARG_INT32(7) : -1;
	rules.pins[0] = rules.pins[1] = -1;

	entries = MnemoReadContext(session_id, PG_INT32_MAX, CurrentMemoryContext, &n);
	InitMaterializedSRF(fcinfo, 0);
	if (by_budget)
	{
		tail = BudgetTail(entries, n, protect_tokens, &rules.pins[0], &rules.pins[1]);
		start = FirstRun(entries, tail, &rules, &end);
		if (condensed && start >= tail)
		{
			rules.mixed = true;
			start = FirstRun(entries, tail, &rules, &end);
		}
	}
	else
	{
		RunRules	pairs = rules;

		pairs.condensed = true;
		pairs.min_items = 2;
		pairs.lone_tokens = -1;
		tail = TailStart(entries, n, tail_messages, -1);
		start = FirstRun(entries, tail, &rules, &end);

		/*
		 * The current turn of an agent's loop (tool steps after one prompt,
		 * no user message since) grows without end, and the user-turn rule
		 * protected all of it: nothing was left to compact however far over
		 * its budget the context was.  When nothing else can be compacted
		 * (no run of messages, and no two summary nodes of one depth, before
		 * the tail), the rule protects at most max_tokens of the newest
		 * messages instead; tail_messages still protects its count.
		 */
		if (!condensed && start >= tail && FirstRun(entries, tail, &pairs, NULL) >= tail)
		{
			tail = TailStart(entries, n, tail_messages, max_tokens);
			start = FirstRun(entries, tail, &rules, &end);
		}
	}

	if (start < tail)
	{
		List	   *ids = NIL;
		MnemoFileIds file_ids;
		StringInfoData text;
		int64		tokens = 0;
		int32		depth = -1;
		Datum		values[6];
		bool		nulls[6] = {false, false, false, false, false, false};
		int			i;

		initStringInfo(&text);
		MnemoFileIdsInit(&file_ids);
		for (i = start; i < end; i++)
		{
			MnemoContextEntry *e = &entries[i];

			if (i - start >= min_items && tokens + e->tokens > max_tokens)
				break;
			tokens += e->tokens;
			depth = Max(depth, e->depth);
			ids = lappend(ids, e->item_id);
			MnemoFileIdsIn(e->content, e->content_len, &file_ids);
			AppendItem(&text, e, condensed, item_chars);
		}
		values[0] = CStringGetTextDatum(kind);
		/* a mixed condensation's is its deepest node's */
		values[1] = Int32GetDatum(depth);
		nulls[1] = !condensed;
		values[2] = TextArray(ids);
		values[3] = PointerGetDatum(cstring_to_text_with_len(text.data, text.len));
		values[4] = Int32GetDatum(MnemoEstimateTokens(text.data, text.len));
		values[5] = TextArray(file_ids.list);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}
