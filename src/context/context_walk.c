/*
 * context_walk.c
 *		The context view of a session, read a batch at a time from either
 *		end (issue 36): a reader that stops when it has what it needs costs
 *		what it read, not the view.  Newest first, a fork's too, whose
 *		explicit rows are looked up by the sessions of its line that hold
 *		them (ContextFeedHeld); oldest first, sessions that are not forks.
 *
 * The view is the explicit rows of the live generation of context_items,
 * then the implicit tail, the messages after sessions.context_tail_seq
 * (context.h, MNEMO_CONTEXT_VIEW).  Newest first (ViewWalkNewer): the tail
 * seq by seq down from last_seq, then the explicit message rows backwards
 * by position (the readers newest first, assembly and the fresh tail of
 * compaction_block, skip summaries, which assembly reads apart).  Oldest
 * first (ViewWalkOlder): every explicit row forwards by position, then the
 * tail seq by seq up.  Batches start at CONTEXT_BATCH_MIN items and double
 * up to CONTEXT_BATCH_MAX, so a walk that stops after a few items reads a
 * few, and one that goes far makes few statements.  Each statement looks
 * its items up as the whole view's does (CONTEXT_LOOKUPS), by index keys
 * that lead with the session and its tenant: every statement names the
 * tenant the session id resolved to (ViewWalkBegin), since a session id is
 * unique within its tenant only.
 *
 * The user messages of the view, which compaction_block's rules need
 * however far back they are (an agent's loop: one prompt, then a million
 * tool steps), are found by index (ViewWalkUsers): in the tail through the
 * partial index of user messages, messages_user_idx; among the explicit
 * rows by position, reading no part.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/guc.h"

#include "mnemo.h"
#include "tenancy/tenancy.h"
#include "context/context.h"

static SPIPlanPtr session_plans[2];
static SPIPlanPtr tail_plan;
static SPIPlanPtr rows_plan;
static SPIPlanPtr tail_asc_plan;
static SPIPlanPtr rows_asc_plan;
static SPIPlanPtr tail_users_plan;
static SPIPlanPtr rows_users_plan;
static SPIPlanPtr tail_first_user_plan;
static SPIPlanPtr rows_first_user_plan;
static SPIPlanPtr rows_first_message_plan;
static SPIPlanPtr tail_first_message_plan;

/*
 * A batch of the tail: the messages among seqs $3 to $4 (bounds: newest
 * first $3 >= $4, oldest first $3 <= $4), as one range of the log's key,
 * every part of each in part_index order: newest first, a backward walk of
 * the range under a sort of the batch's rows (at most CONTEXT_BATCH_MAX
 * messages'), which puts each message's parts back in order.  Summaries
 * are in the range and not in the tail: the last column says which
 * (is_summary, on a message's first row), and the receiver leaves them
 * out.  A batch at a time: the reader decides how far
 * the walk goes, and an open range "seq > the tail start" would be planned
 * as a third of the session's messages.  Until 0.13.0's one table it was a
 * probe of the messages by seq over generate_series, then one of each
 * message's parts.
 */
#define CONTEXT_TAIL_SQL(bounds, order) \
	"SELECT p.seq, 'message'::text, p.id, p.role, NULL::integer, " \
	"p.part_type, p.content, p.compacted_at, $5, NULL::integer, p.is_summary " \
	"FROM mnemo.log p WHERE p.session_id = $1 AND p.tenant = $5 AND " bounds " " \
	"ORDER BY p.seq " order ", p.part_index"
#define TAIL_NEWEST_FIRST CONTEXT_TAIL_SQL("p.seq <= $3 AND p.seq >= $4", "DESC")
#define TAIL_OLDEST_FIRST CONTEXT_TAIL_SQL("p.seq >= $3 AND p.seq <= $4", "")

/*
 * A batch of the explicit rows: newest first, at most $4 message rows
 * before position $3; oldest first, at most $4 rows of any kind after it;
 * by the generation's (session_id, tenant, generation, position) range.
 */
#define CONTEXT_ROWS_SQL \
	CONTEXT_COLUMNS("$5") \
	"FROM (SELECT c.position, c.item_type, c.item_id, c.seq " \
	"      FROM mnemo.context_items c WHERE c.session_id = $1 AND c.tenant = $5 " \
	"      AND c.generation = $2 AND c.position < $3 AND c.item_type = 'message' " \
	"      ORDER BY c.position DESC LIMIT $4) c " \
	CONTEXT_LOOKUPS("LEFT JOIN", "$5") CONTEXT_ORDER_DESC
#define CONTEXT_ROWS_ASC_SQL \
	CONTEXT_COLUMNS("$5") \
	"FROM (SELECT c.position, c.item_type, c.item_id, c.seq " \
	"      FROM mnemo.context_items c WHERE c.session_id = $1 AND c.tenant = $5 " \
	"      AND c.generation = $2 AND c.position > $3 ORDER BY c.position LIMIT $4) c " \
	CONTEXT_LOOKUPS("LEFT JOIN", "$5") CONTEXT_ORDER

/* the explicit message rows that are user messages, by position */
#define CONTEXT_ROWS_USERS(order) \
	"SELECT c.position FROM mnemo.context_items c, " \
	"LATERAL (SELECT m.role FROM mnemo.messages m " \
	"         WHERE m.session_id = $1 AND m.tenant = $5 AND m.seq = c.seq OFFSET 0) m " \
	"WHERE c.session_id = $1 AND c.tenant = $5 AND c.generation = $2 " \
	"AND c.item_type = 'message' AND m.role = 'user' ORDER BY c.position " order
/* the tail's user messages (seqs after $3 up to $4), by messages_user_idx */
#define CONTEXT_TAIL_USERS(order) \
	"SELECT m.seq FROM mnemo.messages m " \
	"WHERE m.session_id = $1 AND m.tenant = $5 AND m.seq > $3 AND m.seq <= $4 " \
	"AND m.role = 'user' AND NOT m.is_summary ORDER BY m.seq " order

/*
 * A fork's explicit rows as they are stored, without look-ups (the items
 * its ancestors hold are looked up by owner, ContextFeedHeld): newest
 * first, at most $4 message rows before position $3; or its summaries.
 */
#define FORK_ROWS_SQL(where) \
	"SELECT c.position, c.item_type, c.item_id, c.seq FROM mnemo.context_items c " \
	"WHERE c.session_id = $1 AND c.tenant = $5 AND c.generation = $2 AND " where
#define FORK_ROWS_NEWER FORK_ROWS_SQL("c.position < $3 AND c.item_type = 'message' " \
									  "ORDER BY c.position DESC LIMIT $4")
#define FORK_SUMMARIES FORK_ROWS_SQL("c.item_type = 'summary' ORDER BY c.position")

static SPIPlanPtr fork_rows_plan;
static SPIPlanPtr fork_summaries_plan;

/*
 * The head of session_id's view.  A fork's view is walked too when forks is
 * set (its explicit rows looked up by owner); else false, with nothing set
 * up, for a fork (whose view is then read whole: context_view.c); MN001 if the session does not
 * exist or is not visible, MN013 if the id names several sessions the
 * caller sees (MnemoCheckSessionRow: the session row is read once per
 * tenant that has the id, and the walk reads the one it chose).  Within an
 * SPI connection (MnemoConnect), whose memory holds w's strings.
 */
bool
ViewWalkBegin(const char *session_id, bool forks, ViewWalk *w)
{
	uint64		row;
	int			nestlevel;

	/*
	 * Planned without sequential scans, as MnemoReadContext's statement
	 * (context_view.c says why), the session's row too (on the partitioned
	 * layout a small partition of sessions was read whole), and without
	 * JIT: a batch is planned as ~1,000 rows.  Nor bitmap scans: the
	 * look-ups of the latest user messages (LIMIT 2) were planned, on
	 * statistics of a small table, as a bitmap scan of every user message
	 * of the session and a sort, which a backward scan of messages_user_idx
	 * reads two of.  ViewWalkEnd, or an error with the transaction, undoes
	 * all three.
	 */
	nestlevel = NewGUCNestLevel();
	(void) set_config_option("enable_seqscan", "off", PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);
	(void) set_config_option("jit", "off", PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);
	(void) set_config_option("enable_bitmapscan", "off", PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);
	row = MnemoReadSession(session_plans,
						   "SELECT s.tenant, s.context_generation, s.context_tail_seq, "
						   MNEMO_LAST_SEQ("s", "$1") ", s.fork_seq IS NOT NULL "
						   "FROM mnemo.sessions s WHERE s.id = $1",
						   session_id, true, 1, 0, false);
	if (MnemoGetBool(row, 5) && !forks)
	{
		AtEOXact_GUC(true, nestlevel);
		return false;
	}
	memset(w, 0, sizeof(*w));
	w->session_id = session_id;
	w->tenant = MnemoGetText(row, 1, NULL);
	w->fork = MnemoGetBool(row, 5);
	w->generation = MnemoGetInt64(row, 2, NULL);
	w->tail_seq = MnemoGetInt64(row, 3, NULL);
	w->last_seq = MnemoGetInt64(row, 4, NULL);
	w->new_hi = w->last_seq;
	w->new_before = PG_INT64_MAX;
	w->new_batch = CONTEXT_BATCH_MIN;
	w->old_after = PG_INT64_MIN;
	w->old_lo = w->tail_seq + 1;
	w->old_batch = CONTEXT_BATCH_MIN;
	w->old_limit = CONTEXT_END_POSITION;
	w->nestlevel = nestlevel;
	if (w->fork)
		MnemoReadLine(session_id, PG_INT64_MAX, false, false, &w->line);
	return true;
}

/*
 * The n rows a fork's statement gave (position, item_type, item_id, seq),
 * rendered into r by owner; n.  *last_position: the last row's.
 */
static uint64
FeedForkRows(ViewWalk *w, ContextReceiver *r, uint64 n, bool descending, int64 *last_position)
{
	bool		isnull;

	if (n == 0)
		return 0;
	*last_position = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[n - 1], SPI_tuptable->tupdesc,
												 1, &isnull));
	ContextFeedHeld(&w->line, w->session_id, SPI_tuptable, n, descending, r);
	ContextFinishEntry(r);
	return n;
}

/* A fork's summaries, in position order, into r (as assembly reads them first). */
void
ViewWalkForkSummaries(ViewWalk *w, ContextReceiver *r)
{
	Datum		values[VIEW_WALK_NARGS];
	int64		last;

	Assert(w->fork);
	MnemoPrepare(&fork_summaries_plan, FORK_SUMMARIES, VIEW_WALK_NARGS, VIEW_WALK_TYPES);
	FeedForkRows(w, r, MnemoExecute(fork_summaries_plan, ViewWalkValues(w, values, 0, 0), NULL, true, 0),
				 false, &last);
}

void
ViewWalkEnd(ViewWalk *w)
{
	AtEOXact_GUC(true, w->nestlevel);
}

/* The parameters of a walk's statement (VIEW_WALK_TYPES) into values. */
Datum *
ViewWalkValues(ViewWalk *w, Datum *values, int64 a, int64 b)
{
	values[0] = CStringGetTextDatum(w->session_id);
	values[1] = Int64GetDatum(w->generation);
	values[2] = Int64GetDatum(a);
	values[3] = Int64GetDatum(b);
	values[4] = CStringGetTextDatum(w->tenant);
	return values;
}

/*
 * One more batch of the view's messages, newest first, into r (the
 * receiver stops it early by returning false from a row).  False when the
 * walk had nothing left to read.
 */
bool
ViewWalkNewer(ViewWalk *w, ContextReceiver *r)
{
	Datum		values[VIEW_WALK_NARGS];

	CHECK_FOR_INTERRUPTS();
	if (w->new_done)
		return false;
	if (!w->new_rows && w->new_hi > w->tail_seq)
	{
		int64		lo = Max(w->new_hi - w->new_batch + 1, w->tail_seq + 1);

		MnemoPrepare(&tail_plan, TAIL_NEWEST_FIRST, VIEW_WALK_NARGS,
					 VIEW_WALK_TYPES);
		MnemoExecuteTo(tail_plan, ViewWalkValues(w, values, w->new_hi, lo), NULL, true, &r->pub);
		ContextFinishEntry(r);
		w->new_hi = lo - 1;
	}
	else if (w->fork)
	{
		int64		oldest;

		w->new_rows = true;
		MnemoPrepare(&fork_rows_plan, FORK_ROWS_NEWER, VIEW_WALK_NARGS, VIEW_WALK_TYPES);
		if (FeedForkRows(w, r, MnemoExecute(fork_rows_plan,
											ViewWalkValues(w, values, w->new_before, w->new_batch),
											NULL, true, 0),
						 true, &oldest) == 0)
		{
			w->new_done = true;
			return false;
		}
		/* the next batch starts before the oldest row this one read */
		w->new_before = oldest;
	}
	else
	{
		w->new_rows = true;
		MnemoPrepare(&rows_plan, CONTEXT_ROWS_SQL, VIEW_WALK_NARGS,
					 VIEW_WALK_TYPES);
		if (MnemoExecuteTo(rows_plan, ViewWalkValues(w, values, w->new_before, w->new_batch), NULL,
						   true, &r->pub) == 0)
		{
			w->new_done = true;
			return false;
		}
		ContextFinishEntry(r);
		/* the next batch starts before the oldest message this one gave */
		w->new_before = r->last_position;
	}
	w->new_batch = Min(w->new_batch * 2, CONTEXT_BATCH_MAX);
	return true;
}

/*
 * One more batch of the view's items, oldest first, into r.  False when the
 * walk had nothing left to read.
 */
bool
ViewWalkOlder(ViewWalk *w, ContextReceiver *r)
{
	Datum		values[VIEW_WALK_NARGS];

	CHECK_FOR_INTERRUPTS();
	if (w->old_done)
		return false;
	if (!w->old_tail)
	{
		MnemoPrepare(&rows_asc_plan, CONTEXT_ROWS_ASC_SQL, VIEW_WALK_NARGS,
					 VIEW_WALK_TYPES);
		if (MnemoExecuteTo(rows_asc_plan, ViewWalkValues(w, values, w->old_after, w->old_batch), NULL,
						   true, &r->pub) == 0)
		{
			w->old_tail = true;
			w->old_batch = CONTEXT_BATCH_MIN;
			return w->old_lo <= w->last_seq;
		}
		ContextFinishEntry(r);
		w->old_after = r->last_position;
	}
	else
	{
		int64		hi = Min(w->old_lo + w->old_batch - 1, w->last_seq);

		if (w->old_lo > w->last_seq)
		{
			w->old_done = true;
			return false;
		}
		/* a reader that needs nothing from old_limit on: a later call may */
		if (w->old_lo >= w->old_limit)
			return false;
		hi = Min(hi, w->old_limit - 1);
		MnemoPrepare(&tail_asc_plan, TAIL_OLDEST_FIRST, VIEW_WALK_NARGS,
					 VIEW_WALK_TYPES);
		MnemoExecuteTo(tail_asc_plan, ViewWalkValues(w, values, w->old_lo, hi), NULL, true, &r->pub);
		ContextFinishEntry(r);
		w->old_lo = hi + 1;
	}
	w->old_batch = Min(w->old_batch * 2, CONTEXT_BATCH_MAX);
	return true;
}

/* The positions a statement gave, up to two, into out; how many. */
static int
Positions(SPIPlanPtr plan, Datum *values, int64 *out)
{
	uint64		n = MnemoExecute(plan, values, NULL, true, 2);
	uint64		i;

	for (i = 0; i < n; i++)
		out[i] = MnemoGetInt64(i, 1, NULL);
	return (int) n;
}

/*
 * The positions of the view's newest user message, of the one before it,
 * and of its first (the session's task); CONTEXT_NO_POSITION for those it
 * does not have.  Two index look-ups in the tail; the explicit rows only
 * when the tail has fewer, and then only their message rows, by position.
 */
void
ViewWalkUsers(ViewWalk *w, int64 *latest, int64 *second, int64 *first)
{
	Datum		values[VIEW_WALK_NARGS];
	int64		found[2];
	int			n;

	*latest = *second = *first = CONTEXT_NO_POSITION;
	ViewWalkValues(w, values, w->tail_seq, w->last_seq);
	MnemoPrepare(&tail_users_plan, CONTEXT_TAIL_USERS("DESC LIMIT 2"), VIEW_WALK_NARGS,
				 VIEW_WALK_TYPES);
	n = Positions(tail_users_plan, values, found);
	if (n > 0)
		*latest = found[0];
	if (n > 1)
		*second = found[1];

	if (n < 2)
	{
		int64		rows[2];
		int			m;
		int			i;

		MnemoPrepare(&rows_users_plan, CONTEXT_ROWS_USERS("DESC LIMIT 2"), VIEW_WALK_NARGS,
					 VIEW_WALK_TYPES);
		m = Positions(rows_users_plan, values, rows);
		for (i = 0; i < m && n < 2; i++, n++)
		{
			if (n == 0)
				*latest = rows[i];
			else
				*second = rows[i];
		}
	}
	MnemoPrepare(&rows_first_user_plan, CONTEXT_ROWS_USERS("LIMIT 1"), VIEW_WALK_NARGS,
				 VIEW_WALK_TYPES);
	if (Positions(rows_first_user_plan, values, found) == 1)
	{
		*first = found[0];
		return;
	}
	MnemoPrepare(&tail_first_user_plan, CONTEXT_TAIL_USERS("LIMIT 1"), VIEW_WALK_NARGS,
				 VIEW_WALK_TYPES);
	if (Positions(tail_first_user_plan, values, found) == 1)
		*first = found[0];
}

/*
 * The position of the view's oldest message (CONTEXT_END_POSITION when it
 * has none): its first explicit message row, else the tail's first.
 */
int64
ViewWalkOldestMessage(ViewWalk *w)
{
	Datum		values[VIEW_WALK_NARGS];
	int64		found[2];

	ViewWalkValues(w, values, w->tail_seq, w->last_seq);
	MnemoPrepare(&rows_first_message_plan,
				 "SELECT c.position FROM mnemo.context_items c "
				 "WHERE c.session_id = $1 AND c.tenant = $5 AND c.generation = $2 "
				 "AND c.item_type = 'message' ORDER BY c.position LIMIT 1",
				 VIEW_WALK_NARGS, VIEW_WALK_TYPES);
	if (Positions(rows_first_message_plan, values, found) == 1)
		return found[0];
	MnemoPrepare(&tail_first_message_plan,
				 "SELECT m.seq FROM mnemo.messages m "
				 "WHERE m.session_id = $1 AND m.tenant = $5 AND m.seq > $3 AND m.seq <= $4 "
				 "AND NOT m.is_summary ORDER BY m.seq LIMIT 1",
				 VIEW_WALK_NARGS, VIEW_WALK_TYPES);
	if (Positions(tail_first_message_plan, values, found) == 1)
		return found[0];
	return CONTEXT_END_POSITION;
}
