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
 *
 * A pick costs what its rules look at, not the session (issue 36: on a
 * never-compacted import of a million messages every round rendered all of
 * them).  On a session that is not a fork the view is walked from both ends
 * (context_walk.c), each walk a batch at a time and only as far as asked:
 * newest first, the messages up to where the fresh tail's rule is decided
 * (protect_tokens full, the tail_messages-th counted, max_tokens reached);
 * the latest user messages and the task, however far back, by index
 * (ViewWalkUsers); oldest first, the items up to where the first qualifying
 * run's block ends (a run is not read past its block), and for a
 * condensation the explicit rows only (the implicit tail holds messages
 * only).  A fork's view, whose items its ancestors hold, is read whole
 * (MnemoReadContext) as build_context reads it.  The rules are written once
 * over BlockView, which serves both; sql/block_walk.sql checks that a
 * session and a fork holding the same items get the same block.  The rules
 * address the fresh tail and the pins by position, items by their index in
 * position order.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "mb/pg_wchar.h"
#include "utils/builtins.h"
#include "utils/tuplestore.h"

#include "mnemo.h"
#include "tenancy/tenancy.h"
#include "context/context.h"

/*
 * The view as the rules read it: whole (a fork), or walked from both ends
 * as far as the rules need (context_walk.c).  Items are addressed by their
 * index in position order; the fresh tail and the pins by position.
 */
typedef struct BlockView
{
	/* a fork: the whole view, and the indexes of its messages newest first */
	MnemoContextEntry *all;
	int			nall;
	int		   *messages;
	int			nmessages;
	/* any other session */
	bool		walking;
	ViewWalk	w;
	ContextReceiver older;		/* the items, oldest first */
	ContextReceiver newer;		/* the messages, newest first */
	int64		implicit_from;	/* the first position of the implicit tail */
	/* the positions ViewWalkUsers gives, and the oldest message's */
	bool		have_users;
	int64		latest_user;
	int64		second_user;
	int64		first_user;
	bool		have_oldest;
	int64		oldest_message;
} BlockView;

/* Item k of the view in position order; NULL past its end or at below. */
static MnemoContextEntry *
ViewItem(BlockView *v, int k, int64 below)
{
	MnemoContextEntry *e = NULL;

	if (!v->walking)
		e = k < v->nall ? &v->all[k] : NULL;
	else
	{
		/* nothing at or past below is read: the walk stops before it */
		v->w.old_limit = below;
		while (k >= v->older.nentries && ViewWalkOlder(&v->w, &v->older))
			;
		e = k < v->older.nentries ? &v->older.entries[k] : NULL;
	}
	return e != NULL && e->position < below ? e : NULL;
}

/* The view's k-th newest message (0: the newest); NULL when it has fewer. */
static MnemoContextEntry *
NewestMessage(BlockView *v, int k)
{
	if (!v->walking)
		return k < v->nmessages ? &v->all[v->messages[k]] : NULL;
	while (k >= v->newer.nentries && ViewWalkNewer(&v->w, &v->newer))
		;
	return k < v->newer.nentries ? &v->newer.entries[k] : NULL;
}

static bool
IsUser(const MnemoContextEntry *e)
{
	return !e->is_summary && strcmp(e->role, "user") == 0;
}

/* The positions of the latest user message, the one before it and the first. */
static void
Users(BlockView *v)
{
	int			i;

	if (v->have_users)
		return;
	v->have_users = true;
	if (v->walking)
	{
		ViewWalkUsers(&v->w, &v->latest_user, &v->second_user, &v->first_user);
		return;
	}
	v->latest_user = v->second_user = v->first_user = CONTEXT_NO_POSITION;
	for (i = 0; i < v->nmessages; i++)
	{
		MnemoContextEntry *e = &v->all[v->messages[i]];

		if (!IsUser(e))
			continue;
		if (v->latest_user == CONTEXT_NO_POSITION)
			v->latest_user = e->position;
		else
		{
			v->second_user = e->position;
			break;
		}
	}
	for (i = v->nmessages; i-- > 0;)
	{
		if (IsUser(&v->all[v->messages[i]]))
		{
			v->first_user = v->all[v->messages[i]].position;
			break;
		}
	}
}

/* The position of the view's oldest message; CONTEXT_END_POSITION: none. */
static int64
OldestMessage(BlockView *v)
{
	if (!v->have_oldest)
	{
		v->have_oldest = true;
		if (v->walking)
			v->oldest_message = ViewWalkOldestMessage(&v->w);
		else
			v->oldest_message = v->nmessages > 0 ?
				v->all[v->messages[v->nmessages - 1]].position : CONTEXT_END_POSITION;
	}
	return v->oldest_message;
}

/*
 * The position where the fresh tail starts.  Too few user messages or
 * messages for a rule protects every message, not the summaries before
 * them.  With max_tokens >= 0, the user-turn rule protects at most
 * max_tokens of the newest messages (see FirstRun's caller); -1: no cap.
 * Reads the newest tail_messages messages, and with a cap the newest
 * max_tokens of them.
 */
static int64
TailStart(BlockView *v, int32 tail_messages, int32 max_tokens)
{
	int64		by_users;
	int64		by_count = CONTEXT_END_POSITION;
	int64		within = CONTEXT_END_POSITION;	/* the oldest of the newest max_tokens */
	MnemoContextEntry *e;

	Users(v);
	by_users = v->second_user != CONTEXT_NO_POSITION ? v->second_user : OldestMessage(v);
	if (tail_messages > 0)
	{
		e = NewestMessage(v, tail_messages - 1);
		by_count = e != NULL ? e->position : OldestMessage(v);
	}
	if (max_tokens < 0)
		return Min(by_users, by_count);

	/* older than by_users, within no longer matters */
	{
		int64		tokens = 0;
		int			k;

		for (k = 0; (e = NewestMessage(v, k)) != NULL && e->position > by_users; k++)
		{
			tokens += e->tokens;
			if (tokens > max_tokens)
				break;
			within = e->position;
		}
	}
	return Min(Max(by_users, within), by_count);
}

/* How runs are cut: the kind, pinned items, and whether depths may mix. */
typedef struct RunRules
{
	bool		condensed;
	bool		mixed;			/* a condensation of any depths */
	int64		latest;			/* the latest user message, never picked */
	int64		task;			/* the task, never picked while it fits in task_tokens */
	int64		task_tokens;
	int32		min_items;
	int64		lone_tokens;	/* a shorter run over this qualifies; -1: none */
	int32		max_tokens;		/* of a block past its first min_items items */
} RunRules;

/*
 * By budget: the position where the newest messages within protect_tokens
 * start, and the two pinned user messages into rules.  Reads the newest
 * protect_tokens of messages and one more.
 */
static int64
BudgetTail(BlockView *v, int32 protect_tokens, RunRules *rules)
{
	int64		tokens = 0;
	int64		tail = CONTEXT_END_POSITION;
	MnemoContextEntry *e;
	int			k;

	Users(v);
	rules->latest = v->latest_user;
	rules->task = v->first_user;
	rules->task_tokens = protect_tokens;
	for (k = 0; (e = NewestMessage(v, k)) != NULL; k++)
	{
		if (tokens + e->tokens > protect_tokens)
			break;
		tokens += e->tokens;
		tail = e->position;
	}
	return tail;
}

/* Whether e can join a block of the rules' kind at depth. */
static bool
Fits(const MnemoContextEntry *e, const RunRules *r, int32 depth)
{
	/*
	 * An item whose rendering was not kept cannot be summarised; nor, in a
	 * condensation, can a fork's inherited summary node, which is its
	 * ancestor's (a fork's leaf may cover the messages it inherited).
	 */
	if (e->oversize || e->let_go || (r->condensed && e->inherited) ||
		e->position == r->latest || (e->position == r->task && e->tokens <= r->task_tokens))
		return false;
	if (!r->condensed)
		return !e->is_summary;
	return e->is_summary && e->depth >= 0 && (r->mixed || e->depth == depth);
}

/*
 * The first run, oldest first, of at least min_items items (or of fewer
 * over lone_tokens) before position below, and the block it gives: its
 * first min_items items, then more while their tokens stay within
 * max_tokens; the indexes of the block's first item and one past its last
 * into *start and *end.  False when there is none.  A run is read up to
 * where its block ends, not to its end.
 */
static bool
FirstRun(BlockView *v, int64 below, const RunRules *r, int *start, int *end)
{
	MnemoContextEntry *e;
	int			first;
	int			stop;

	/* the implicit tail holds messages only: no condensation reaches it */
	if (r->condensed)
		below = Min(below, v->implicit_from);
	for (first = 0; (e = ViewItem(v, first, below)) != NULL; first = stop)
	{
		int32		depth = e->depth;
		int64		run_tokens = e->tokens;
		int64		block_tokens = e->tokens;
		bool		closed = false;

		stop = first + 1;
		*end = stop;
		if (!Fits(e, r, depth))
			continue;
		while (!closed && (e = ViewItem(v, stop, below)) != NULL && Fits(e, r, depth))
		{
			run_tokens += e->tokens;
			if (stop - first >= r->min_items && block_tokens + e->tokens > r->max_tokens)
				closed = true;
			else
			{
				block_tokens += e->tokens;
				*end = stop + 1;
			}
			stop++;
		}
		if (stop - first >= r->min_items || (r->lone_tokens >= 0 && run_tokens > r->lone_tokens))
		{
			*start = first;
			return true;
		}
	}
	return false;
}

/*
 * Open session_id's view for the rules: walked, within an SPI connection
 * that CloseView ends, or, for a fork, read whole (MN001 either way when it
 * does not exist).  Entries go in callcxt.
 */
static void
OpenView(const char *session_id, MemoryContext callcxt, BlockView *v, MnemoCall *call)
{
	int			i;

	memset(v, 0, sizeof(*v));
	v->implicit_from = CONTEXT_END_POSITION;
	MnemoConnect(call);
	if (ViewWalkBegin(session_id, false, &v->w))
	{
		v->walking = true;
		/* explicit positions are all below the tail's seqs (context.h) */
		v->implicit_from = v->w.tail_seq + 1;
		ContextReceiverInit(&v->older, session_id, PG_INT32_MAX, callcxt, 64);
		ContextReceiverInit(&v->newer, session_id, PG_INT32_MAX, callcxt, 64);
		return;
	}
	MnemoFinish(call);
	v->all = MnemoReadContext(session_id, PG_INT32_MAX, callcxt, &v->nall, NULL);
	v->messages = palloc(sizeof(int) * Max(v->nall, 1));
	for (i = v->nall; i-- > 0;)
		if (!v->all[i].is_summary)
			v->messages[v->nmessages++] = i;
}

/* The items read oldest first, each with its content. */
static MnemoContextEntry *
CloseView(BlockView *v, MnemoCall *call)
{
	if (!v->walking)
		return v->all;
	ViewWalkEnd(&v->w);
	MnemoFinish(call);
	ContextReceiverDone(&v->older);
	ContextReceiverDone(&v->newer);
	return v->older.entries;
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
	BlockView	v;
	RunRules	rules;
	MnemoCall	call;
	bool		condensed = strcmp(kind, "condensed") == 0;
	bool		found;
	int64		tail;
	int			start = 0;
	int			end = 0;
	int			pair_start;
	int			pair_end;

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
	rules.max_tokens = max_tokens;
	rules.latest = rules.task = CONTEXT_NO_POSITION;

	OpenView(session_id, CurrentMemoryContext, &v, &call);
	if (by_budget)
	{
		tail = BudgetTail(&v, protect_tokens, &rules);
		found = FirstRun(&v, tail, &rules, &start, &end);
		if (condensed && !found)
		{
			rules.mixed = true;
			found = FirstRun(&v, tail, &rules, &start, &end);
		}
	}
	else
	{
		RunRules	pairs = rules;

		pairs.condensed = true;
		pairs.min_items = 2;
		pairs.lone_tokens = -1;
		tail = TailStart(&v, tail_messages, -1);
		found = FirstRun(&v, tail, &rules, &start, &end);

		/*
		 * The current turn of an agent's loop (tool steps after one prompt,
		 * no user message since) grows without end, and the user-turn rule
		 * protected all of it: nothing was left to compact however far over
		 * its budget the context was.  When nothing else can be compacted
		 * (no run of messages, and no two summary nodes of one depth, before
		 * the tail), the rule protects at most max_tokens of the newest
		 * messages instead; tail_messages still protects its count.
		 */
		if (!condensed && !found && !FirstRun(&v, tail, &pairs, &pair_start, &pair_end))
		{
			tail = TailStart(&v, tail_messages, max_tokens);
			found = FirstRun(&v, tail, &rules, &start, &end);
		}
	}
	entries = CloseView(&v, &call);
	InitMaterializedSRF(fcinfo, 0);

	if (found)
	{
		List	   *ids = NIL;
		MnemoFileIds file_ids;
		StringInfoData text;
		int32		depth = -1;
		Datum		values[6];
		bool		nulls[6] = {false, false, false, false, false, false};
		int			i;

		initStringInfo(&text);
		MnemoFileIdsInit(&file_ids);
		for (i = start; i < end; i++)
		{
			MnemoContextEntry *e = &entries[i];

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
