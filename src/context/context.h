/*
 * context.h
 *		What the model sees and how it shrinks: the live view as SQL
 *		(MNEMO_CONTEXT_VIEW), the swap (swap.c), a summary's annotation
 *		(annotate.c), the compaction claim (claim.c), the file ids a text
 *		names (file_ids.c); and reading the context view, shared by its
 *		readers: the receiver that renders a statement's rows into entries
 *		(context_rows.c), the whole view (context_view.c), the walks from
 *		either end of a view that cost what they read (context_walk.c),
 *		assembly for build_context and context_report (build_context.c) and
 *		turn_context (turn_context.c), and the block picker (block.c).
 */
#ifndef MNEMO_CONTEXT_H
#define MNEMO_CONTEXT_H

#include "fmgr.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "nodes/pg_list.h"
#include "storage/itemptr.h"
#include "tcop/dest.h"
#include "utils/array.h"

#include "mnemo.h"
#include "tenancy/tenancy.h"
#include "reads/reads.h"

/*
 * The session's live context view (the session $1 of the tenant in the
 * parameter tenant names), as a subquery to
 * read FROM with an alias: the explicit rows of the live generation of
 * context_items, then the implicit tail, the session's non-summary messages
 * with seq > sessions.context_tail_seq, each at position = its seq.  An
 * append writes no context row: its message is in the tail until a swap
 * reaches it (swap.c).  Explicit positions are all below the tail's seqs
 * (appends and swaps give an item its seq as position; rebuilt views are at
 * 1 .. n, n <= the tail start), so ORDER BY position orders the whole view.
 * Both branches are index scans, (session_id, generation, position) and
 * (session_id, seq), so no read visits rows of earlier generations nor
 * messages before the tail (invariant 5).  The tail is read seq by seq
 * over generate_series(tail start, last seq), not as a range "seq > the
 * tail start": a range over a parameter is estimated at a third of the
 * session's messages, which at a million messages turned nested loops
 * into hash joins and pushed every reader's cost past jit_above_cost
 * (build_context 1.5 ms -> 277 ms, JIT compiling on each call); the
 * function is estimated at 1,000 rows, each a look-up by (session_id, seq)
 * in a LATERAL subquery kept apart (OFFSET 0), never a hash of the
 * session's messages.  row_id is the explicit row's
 * ctid, NULL for a tail item.  A read of the whole view goes through this;
 * the reads that must cost less than the view read its two parts by key
 * themselves, in the same way: context assembly newest first, a batch of
 * seqs at a time, up to what the budget holds, and compaction_block from
 * either end, up to where its rules are decided (context_walk.c), and a
 * swap, the items it names and their span (swap.c).
 */
#define MNEMO_CONTEXT_VIEW(tenant) \
	"(SELECT c.session_id, c.position, c.item_type, c.item_id, c.seq, c.created_at, c.tenant, " \
	"        c.ctid AS row_id FROM mnemo.context_items c " \
	"  WHERE c.session_id = $1 AND c.tenant = " tenant \
	"  AND c.generation = (SELECT s.context_generation FROM mnemo.sessions s " \
	"                       WHERE s.id = $1 AND s.tenant = " tenant ") " \
	" UNION ALL " \
	" SELECT t.session_id, t.seq, 'message'::text, t.id, t.seq, t.created_at, t.tenant, NULL::tid " \
	"  FROM mnemo.sessions s, generate_series(s.context_tail_seq + 1, " MNEMO_LAST_SEQ("s", "$1") ") g(seq), " \
	"  LATERAL (SELECT t.* FROM mnemo.messages t " \
	"           WHERE t.session_id = $1 AND t.tenant = s.tenant AND t.seq = g.seq " \
	"           AND NOT t.is_summary OFFSET 0) t " \
	"  WHERE s.id = $1 AND s.tenant = " tenant ")"

/* swap.c: an item a swap names, as found in the live view */
typedef struct MnemoSwapItem
{
	char	   *id;
	Datum		type;			/* text: message or summary */
	int64		seq;
	int64		position;
	bool		tail;			/* in the implicit tail: no row */
	ItemPointerData row;		/* else its context_items row */
} MnemoSwapItem;

extern MnemoSwapItem *MnemoFindInContext(const char *session_id, MnemoSessionLock *lock,
										 ArrayType *ids, int *nitems);
extern int64 MnemoSwap(const char *session_id, MnemoSessionLock *lock, ArrayType *ids,
					   MnemoSwapItem *items, int nitems, const char *summary_id, bool node);
extern void MnemoCheckRemoveList(ArrayType *ids, const char *session_id);

/*
 * context_view.c: the context view read and rendered whole, one entry per
 * item in position order (the one rendering build_context and compaction
 * share; context_rows.c renders, context_walk.c reads it a batch at a time)
 */
typedef struct MnemoContextEntry
{
	int64		position;
	char	   *item_type;
	char	   *item_id;
	char	   *role;			/* a summary's is "assistant" */
	char	   *content;		/* rendered, NUL-terminated */
	int			content_off;	/* in the reader's buffer */
	int			content_len;
	int64		chars;			/* of an oversize rendering, not kept */
	int32		tokens;
	int32		depth;			/* a summary node's; -1 for anything else */
	bool		is_summary;
	bool		included;		/* chosen by build_context */
	bool		oversize;		/* rendering over CONTEXT_ITEM_MAX: not kept */
	bool		let_go;			/* content dropped: cannot be included */
	bool		inherited;		/* a fork's, held by an ancestor: not compacted */
} MnemoContextEntry;

extern MnemoContextEntry *MnemoReadContext(const char *session_id, int32 budget,
										   MemoryContext callcxt, int *nentries, char **tenant);

/*
 * annotate.c: a summary's annotation (its header and "Expand for details
 * about" line, before its text) and the text after it
 */
extern char *MnemoAnnotateSummary(const char *session_id, MnemoSessionLock *lock,
								  const char *summary_id, bool condensed, int32 depth,
								  MnemoSwapItem *items, int nitems, int64 seq_start,
								  int64 seq_end, const char *content, int32 max_tokens,
								  StringInfo marker);
extern int	MnemoSummaryBody(const char *summary_id, const char *text, int len);

/* claim.c */
extern void MnemoCheckClaim(const char *session_id, const char *tenant, const char *holder);

/* file_ids.c: the file ids a text names, and the footer that lists them */
typedef struct MnemoFileIds
{
	List	   *list;			/* C strings, each once, in first-seen order */
	struct HTAB *seen;			/* the same ids */
} MnemoFileIds;
extern void MnemoFileIdsInit(MnemoFileIds *ids);
extern void MnemoFileIdsIn(const char *text, int len, MnemoFileIds *ids);
extern void MnemoFileIdsAdd(MnemoFileIds *ids, const char *id, int len);
extern char *MnemoFileIdFooter(const char *content, List *extra, int *body_len);
extern void MnemoCheckFileId(const char *id, const char *what);

/* an item of the context view, as context_view.c's reader returns it */
typedef MnemoContextEntry ContextEntry;

typedef struct ContextTotals
{
	int64		summary_tokens;
	int32		included_items;
	int64		included_tokens;
	int32		omitted_items;
	int64		omitted_tokens;
} ContextTotals;

/*
 * Read and render the context view of the session named by argument 0 and
 * choose what fits in the budget of argument 1; see build_context.c.  The tenant
 * the session id resolved to goes in *tenant (callcxt).
 */
extern ContextEntry *AssembleContext(FunctionCallInfo fcinfo, MemoryContext callcxt,
									 bool count_omitted, int *nentries, ContextTotals *totals,
									 char **tenant);

/* see build_context.c's header comment: one item's rendering, all renderings held */
#define CONTEXT_ITEM_MAX (16 * 1024 * 1024)
#define CONTEXT_HELD_MAX (256 * 1024 * 1024)

/* see AssembleNewestFirst: the fewest messages left out to count; batches */
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
	bool		skipping;		/* the rows of skip_position are left out */
	int64		skip_position;	/* a summary the tail's statement gave */
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

/*
 * context_rows.c: a receiver rendering into entries allocated in callcxt
 * (budget: see FinishEntry; PG_INT32_MAX keeps all but oversize ones), the
 * last entry of a statement closed, the content pointers set once all are
 * in, and the receiver's own memory freed.
 */
extern void ContextReceiverInit(ContextReceiver *r, const char *session_id, int32 budget,
								MemoryContext callcxt, int maxentries);
extern void ContextFinishEntry(ContextReceiver *r);
extern void ContextReceiverDone(ContextReceiver *r);

/*
 * The one statement of assembly: the items of the view in position order,
 * each with its message's role, a summary's node token count, and its parts
 * in part_index order, one row per part (one row with NULL part columns for
 * an item without parts); its last column is false (the tail's statement,
 * context_walk.c, says there which of its messages are summaries, for the
 * receiver to leave out).
 *
 * Each item is looked up by an index key that leads with the session and
 * its tenant (tenant: the SQL text of the statement's tenant parameter,
 * which is also the column the receiver checks the caller may see): the
 * message's rows of the log by one range of (session_id, tenant, seq,
 * part_index), its role on the first (part 0; NULL on the others, and on
 * the one row of an item a LEFT JOIN finds no message for), one row without
 * a part for a message without parts; a summary's node by (session_id,
 * tenant, id) in a subquery that runs for summary items only.  Written as a join, it let the planner
 * hash the session's whole summary_nodes -- every node the session ever
 * had, about one per 180 messages of history -- on every call, so that
 * assembly grew with the length of the session.  The message and the parts
 * are LATERAL subqueries kept apart by OFFSET 0 for the same reason: as
 * plain joins, a plan made while the session was small (the plan cache
 * keeps one per backend) hashed all of the session's messages and parts on
 * every call, 24 ms at 30,000 messages against 1.5 ms (bench/context, right
 * after a swap).  The view itself is read in position order, the live
 * generation's range only.
 */
#define CONTEXT_COLUMNS(tenant) \
	"SELECT c.position, c.item_type, c.item_id, p.role, " \
	"CASE WHEN c.item_type = 'summary' THEN " \
	"(SELECT n.token_count FROM mnemo.summary_nodes n " \
	"WHERE n.session_id = $1 AND n.tenant = " tenant " AND n.id = c.item_id) END, " \
	"p.part_type, p.content, p.compacted_at, " tenant ", " \
	"CASE WHEN c.item_type = 'summary' THEN " \
	"(SELECT n.depth FROM mnemo.summary_nodes n " \
	"WHERE n.session_id = $1 AND n.tenant = " tenant " AND n.id = c.item_id) END, false "
#define CONTEXT_LOOKUPS(join, tenant) \
	join " LATERAL (SELECT p.part_index, p.role, p.part_type, p.content, p.compacted_at " \
	"         FROM mnemo.log p " \
	"         WHERE p.session_id = $1 AND p.tenant = " tenant " AND p.seq = c.seq " \
	"         OFFSET 0) p ON true "
#define CONTEXT_ORDER "ORDER BY c.position, p.part_index"
/* the newest-first walk: items newest first, each one's parts in order */
#define CONTEXT_ORDER_DESC "ORDER BY c.position DESC, p.part_index"

/*
 * context_view.c: items of a fork's view (rows of position, item_type,
 * item_id, seq) rendered into r by the sessions of its line that hold them,
 * in position order (descending: newest first).
 */
extern void ContextFeedHeld(MnemoLine *line, const char *session_id, SPITupleTable *items,
							uint64 n, bool descending, ContextReceiver *r);

/*
 * context_walk.c: the view of a session (newest first, a fork's too), read
 * a batch at a time from either end, each batch by the index keys of what it reads, so
 * that a reader that stops early costs what it read, not the view.  The
 * walk runs inside the caller's SPI connection; ViewWalkBegin sets the
 * planner settings the walk's statements need and ViewWalkEnd restores them.
 */
typedef struct ViewWalk
{
	const char *session_id;
	const char *tenant;			/* the session's, as ViewWalkBegin resolved it */
	bool		fork;			/* its explicit rows are looked up by owner ... */
	MnemoLine	line;			/* ... on its line (a fork's only) */
	int64		generation;		/* the live one of the explicit rows */
	int64		tail_seq;		/* the implicit tail: seqs after it ... */
	int64		last_seq;		/* ... up to this one */
	int			nestlevel;
	/* newest first: the tail's seqs down from new_hi, then rows before new_before */
	int64		new_hi;
	int64		new_before;
	int64		new_batch;
	bool		new_rows;
	bool		new_done;
	/* oldest first: rows after old_after, then the tail's seqs up from old_lo */
	int64		old_after;
	int64		old_lo;
	int64		old_batch;
	int64		old_limit;		/* no position at or past it is read */
	bool		old_tail;
	bool		old_done;
} ViewWalk;

/*
 * Every statement of a walk takes the same parameters (ViewWalkValues): $1
 * the session, $2 its live generation, $3 and $4 the statement's bounds, $5
 * the session's tenant.
 */
#define VIEW_WALK_NARGS 5
#define VIEW_WALK_TYPES ((Oid[]) {TEXTOID, INT8OID, INT8OID, INT8OID, TEXTOID})

extern bool ViewWalkBegin(const char *session_id, bool forks, ViewWalk *w);
extern Datum *ViewWalkValues(ViewWalk *w, Datum *values, int64 a, int64 b);
extern void ViewWalkEnd(ViewWalk *w);
extern bool ViewWalkNewer(ViewWalk *w, ContextReceiver *r);
extern void ViewWalkForkSummaries(ViewWalk *w, ContextReceiver *r);
extern bool ViewWalkOlder(ViewWalk *w, ContextReceiver *r);
extern void ViewWalkUsers(ViewWalk *w, int64 *latest, int64 *second, int64 *first);
extern int64 ViewWalkOldestMessage(ViewWalk *w);

/* the position of no item: before every one of the view */
#define CONTEXT_NO_POSITION PG_INT64_MIN
/* one past the newest item of any view */
#define CONTEXT_END_POSITION PG_INT64_MAX

#endif
