/*
 * mnemo.h
 *		Declarations shared by the mnemo extension's source files.
 *
 * Every SQL function's C body is named mnemo_<sqlname> and lives in the file
 * named for its concept, in the room of src/ for its concern (log/append.c,
 * lifecycle/sessions.c, context/swap.c, ...; each room's README.md says what
 * it owns and what it may call).  The helpers below are the one way each of
 * those files talks to SPI, allocates ids, locks a session and sends
 * notifications.
 */
#ifndef MNEMO_H
#define MNEMO_H

#include "postgres.h"

#include "executor/spi.h"
#include "fmgr.h"
#include "storage/lockdefs.h"
#include "utils/array.h"
#include "utils/jsonb.h"

#include "errcodes.h"

/* Settings (mnemo.c) */
typedef enum MnemoNotifyMode
{
	MNEMO_NOTIFY_OFF,
	MNEMO_NOTIFY_WATCHED,
	MNEMO_NOTIFY_ALL
} MnemoNotifyMode;

extern int	mnemo_notify_mode;
extern int	mnemo_max_parts_per_message;
extern int	mnemo_max_part_bytes;
extern int	mnemo_max_messages_per_batch;

/* tenant.c: the call frame of every SQL function, and tenancy */
typedef struct MnemoCall
{
	Oid			user;			/* to restore on exit */
	int			sec_context;
	Oid			prev_caller;
} MnemoCall;

extern char *mnemo_tenant_setting;
extern void MnemoConnect(MnemoCall *call);
extern void MnemoFinish(MnemoCall *call);
extern bool MnemoTenantVisible(const char *tenant);
extern char *MnemoCallerTenant(void);
extern char *MnemoTenantGuess(bool *all);
extern char *MnemoTenantPreferred(void);
extern char *MnemoTenantOnly(void);

/*
 * The rule of MnemoTenantVisible as a condition on a table's tenant column,
 * for the statements that list rows of many sessions: role is the
 * parameter holding the caller's OID, all the one saying whether it sees
 * every tenant (a superuser or BYPASSRLS).  pg_has_role USAGE is
 * has_privs_of_role, of the role the tenant was registered with, which
 * still has its name.
 */
#define MNEMO_TENANT_VISIBLE_SQL(role, all) \
	"(" all " OR tenant IN (SELECT t.tenant FROM mnemo.tenants t " \
	"JOIN pg_catalog.pg_roles r ON r.oid = t.role_id AND r.rolname = t.tenant " \
	"WHERE pg_catalog.pg_has_role(" role ", r.oid, 'USAGE')))"

/* query.c: SPI with plans prepared once per backend */
extern void MnemoPrepare(SPIPlanPtr *slot, const char *sql, int nargs, Oid *argtypes);
extern void MnemoPrepareStream(SPIPlanPtr *slot, const char *sql, int nargs, Oid *argtypes);
extern uint64 MnemoExecute(SPIPlanPtr plan, Datum *values, const char *nulls,
						   bool read_only, long tcount);
extern bool MnemoCitusTable(Oid relid);
extern bool MnemoTablesDistributed(void);
extern void MnemoInsert(SPIPlanPtr plan, Datum *values, const char *nulls,
						const char *what, const char *id);

/* a set-based INSERT ... VALUES of a session's rows (MnemoInsertRows) */
#define MNEMO_ROWS_WIDTHS 8		/* statements of 1, 2, 4, ..., 128 rows */
typedef struct MnemoRowsInsert
{
	const char *head;			/* INSERT INTO t (session_id, tenant, the columns) */
	int			ncols;			/* the columns after session_id and tenant */
	const Oid  *types;			/* their types */
	const char *what;			/* a row, for MN004 */
	SPIPlanPtr	plans[MNEMO_ROWS_WIDTHS];	/* by log2 of the width */
	SPIPlanPtr	arrays_plan;	/* the one statement of a plain layout */
} MnemoRowsInsert;
typedef void (*MnemoRowFill) (void *arg, int row, Datum *values, bool *nulls);
extern void MnemoInsertRows(MnemoRowsInsert *ins, const char *session_id, const char *tenant,
							int n, MnemoRowFill fill, void *arg);
extern Datum MnemoArray(Oid type, Datum *values, bool *nulls, int n);
extern Datum MnemoResultRow(FunctionCallInfo fcinfo, MemoryContext callcxt, uint64 row);
extern uint64 MnemoExecuteTo(SPIPlanPtr plan, Datum *values, const char *nulls, bool read_only,
							 DestReceiver *dest);
extern uint64 MnemoExecuteResult(FunctionCallInfo fcinfo, SPIPlanPtr plan, Datum *values,
								 const char *nulls, bool read_only);
extern void MnemoResultAppend(FunctionCallInfo fcinfo, SPITupleTable *table, uint64 first,
							  uint64 nrows);
extern char *MnemoGetText(uint64 row, int col, bool *isnull);
extern int64 MnemoGetInt64(uint64 row, int col, bool *isnull);
extern bool MnemoGetBool(uint64 row, int col);
extern Datum MnemoRequireArg(FunctionCallInfo fcinfo, int argno, const char *name);
extern char *MnemoRequireTextArg(FunctionCallInfo fcinfo, int argno, const char *name);
extern char *MnemoTextArgOrNull(FunctionCallInfo fcinfo, int argno);
extern ArrayType *MnemoTextListArg(FunctionCallInfo fcinfo, int argno, const char *name);
extern int64 MnemoNowMs(void);

/*
 * blobs.c: the content of part p (an alias of mnemo.message_parts) as it was
 * appended.  An image whose base64 "data" is stored as a blob has, in its
 * place, an object naming the blob; this puts the base64 back
 * (mnemo._base64: pg_b64_encode's text, without encode()'s line breaks,
 * which the append checked gives the appended string exactly).  Every read
 * that returns a part's content selects it through this, and only this.
 */
#define MNEMO_PART_CONTENT \
	"CASE WHEN p.part_type = 'image' AND jsonb_typeof(p.content -> 'data') = 'object' " \
	"THEN p.content || jsonb_build_object('data', " \
	"(SELECT mnemo._base64(b.bytes) FROM mnemo.blobs b " \
	"WHERE b.tenant = p.tenant AND b.sha256 = decode(p.content -> 'data' ->> 'sha256', 'hex'))) " \
	"ELSE p.content END"

/*
 * reads.c, summary.c: the parts of message m as a jsonb array in part_index
 * order, each part its content with the live status columns laid over it.
 * $1 of the statement is the session id; the tenant is m's.
 */
#define MNEMO_PARTS_JSON \
	"coalesce((SELECT jsonb_agg((" MNEMO_PART_CONTENT ") || jsonb_strip_nulls(jsonb_build_object(" \
	"'id', p.id, 'part_index', p.part_index, 'tool_state', p.tool_state, " \
	"'compacted_at', p.compacted_at, 'started_at', p.started_at, " \
	"'completed_at', p.completed_at, 'token_estimate', p.token_estimate)) " \
	"ORDER BY p.part_index) FROM mnemo.message_parts p " \
	"WHERE p.session_id = $1 AND p.tenant = m.tenant AND p.message_id = m.id), '[]')"

/* reads.c, runs.c: the columns of mnemo.message_with_parts, over messages m of session $1 */
#define MNEMO_MESSAGE_WITH_PARTS \
	"m.id, m.session_id, m.seq, m.role, m.created_at, m.agent, m.model_id, " \
	"m.provider_id, m.run_id, m.is_summary, m.tokens_input, m.tokens_output, " \
	"m.tokens_cache_read, m.tokens_cache_write, m.tokens_reasoning, m.cost, " \
	"m.finish_reason, " MNEMO_PARTS_JSON

/* jsonb_text.c: jsonb_out's text of jb, appended to out */
extern void MnemoJsonbAppendText(StringInfo out, Jsonb *jb);

/* ids.c: every id (session, message, part, label, ...) is 1 to MNEMO_ID_MAX bytes */
#define MNEMO_ID_MAX 256
extern char *MnemoNewId(const char *prefix);
extern void MnemoCheckId(const char *id, const char *what);

/* sha256.c: the sha256 of parts, one after the other (PG_SHA256_DIGEST_LENGTH bytes) */
extern void MnemoSha256(int n, const void *const *parts, const size_t *lens, uint8 *digest);

/* tokens.c */
extern int32 MnemoEstimateTokens(const char *text, int len);

/*
 * A session's last seq, as SQL over its row s and an expression id naming
 * it: its newest own message's seq (a backward probe of the (session_id,
 * seq) key), else where a fork's inheritance ends, else 0.  Appends take
 * their seqs from it under the session lock (tenancy/session_lock.c) and
 * write nothing to the session row.
 */
#define MNEMO_LAST_SEQ(s, id) \
	"coalesce((SELECT max(l_.seq) FROM mnemo.messages l_ " \
	"WHERE l_.session_id = " id " AND l_.tenant = " s ".tenant), " s ".fork_seq, 0)"

/*
 * The columns of mnemo.session, what the session functions return, from
 * the session row s named by the expression id (its parameter, so that
 * the messages' look-ups are pruned to the session's partition): its
 * columns, last_seq, and updated_at as the later of the row's last change
 * and its newest message's created_at.
 */
#define MNEMO_SESSION_COLUMNS(s, id) \
	s ".id, " s ".parent_id, " s ".created_at, " \
	"greatest(" s ".updated_at, (SELECT l_.created_at FROM mnemo.messages l_ " \
	"WHERE l_.session_id = " id " AND l_.tenant = " s ".tenant ORDER BY l_.seq DESC LIMIT 1)), " \
	s ".model_id, " s ".provider_id, " s ".agent, " s ".title, " s ".is_active, " \
	s ".metadata, " s ".system_prompt, " s ".state, " s ".watched, " \
	MNEMO_LAST_SEQ(s, id) ", " s ".tenant, " s ".context_generation, " \
	s ".context_dead, " s ".fork_seq, " s ".fork_run, " s ".forks, " s ".discards, " \
	s ".context_tail_seq"

/* tenancy/session_lock.c: the session check, and the lock that orders every write */
typedef struct MnemoSessionLock
{
	int64		last_seq;		/* after reserving */
	bool		watched;
	char	   *agent;			/* the session's, the default for its messages */
	char	   *model_id;
	char	   *provider_id;
	char	   *tenant;
	int64		context_generation; /* the live generation of the context view */
	int64		context_dead;	/* rows deleted from it in place (see swap.c) */
	int64		context_tail_seq;	/* messages after it are the implicit tail of the view */
	bool		is_fork;		/* its line begins with what it inherited */
} MnemoSessionLock;

extern void MnemoLockSession(const char *session_id, int64 add_seq, bool require_active,
							 MnemoSessionLock *lock);
extern void MnemoLockSessionKey(const char *tenant, const char *session_id, LOCKMODE mode);
extern void MnemoCheckSession(const char *session_id, bool fresh, char **tenant, bool *watched);
extern uint64 MnemoSessionRows(SPIPlanPtr *plans, const char *sql, const char *session_id,
							   const char *tenant, bool read_only);
extern uint64 MnemoReadSession(SPIPlanPtr *plans, const char *sql, const char *session_id,
							   bool read_only, int tenant_col, int active_col, bool require_active);
extern uint64 MnemoCheckSessionRow(const char *session_id, uint64 nrows, int tenant_col,
								   int active_col, bool require_active);
extern void MnemoCheckSessionActive(const char *session_id, char **tenant, bool *watched);

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

/*
 * lineage.c: a session's live line, the segments of messages its reads
 * see in seq order, each the range from .. to of owner's messages (the
 * session's own, or an ancestor's for a fork).
 */
typedef struct MnemoSegment
{
	char	   *owner;
	int64		from;
	int64		to;
} MnemoSegment;

typedef struct MnemoLine
{
	char	   *session_id;
	char	   *tenant;
	char	   *parent_id;
	bool		is_fork;
	bool		not_fork;
	int64		fork_seq;		/* a fork's: its inheritance ends here */
	int64		last_seq;
	int64		discards;
	int64		forks;
	MnemoSegment *segs;			/* inherited ones first, then the own */
	int			nsegs;
	int			ninherited;
	int			maxsegs;
} MnemoLine;

extern void MnemoReadLine(const char *session_id, int64 upto, bool fresh, bool require_active,
						  MnemoLine *line);
extern MnemoSegment *MnemoLineSegment(MnemoLine *line, int64 seq);
extern bool MnemoLineFindMessage(MnemoLine *line, const char *message_id, char **owner,
								 int64 *seq);

/* open_read.c: the start of a read of a session's line (MN001, MN002) */
extern char *MnemoConnectRead(FunctionCallInfo fcinfo, MnemoCall *call, MnemoLine *line);
extern int64 MnemoOpenRead(FunctionCallInfo fcinfo, MnemoCall *call, MnemoLine *line);
extern void MnemoMessageNotFound(const char *message_id, const char *session_id);

/*
 * flat.c: the line's messages with their parts into a materialized SRF's
 * result, segment i after seq after[i]; as message_flat rows, or as_json as
 * message_with_parts rows
 */
extern void MnemoResultMessages(FunctionCallInfo fcinfo, MnemoLine *line, const int64 *after,
								bool as_json);

/*
 * rebuild.c, fork.c: a context view as of a point of the line, and the
 * points fork_session and resume_session are given
 */
typedef struct MnemoViewItem
{
	char	   *item_type;
	char	   *item_id;
	int64		seq;
} MnemoViewItem;

extern MnemoViewItem *MnemoViewAsOf(MnemoLine *source, MnemoLine *keep, int *nitems);
extern void MnemoWriteView(const char *session_id, const char *tenant, int64 generation,
						   MnemoViewItem *items, int n);
extern int64 MnemoFindCheckpoint(MnemoLine *line, const char *label);
extern void MnemoClipLine(MnemoLine *line, int64 upto, int64 *excluded, int nexcluded,
						  MnemoLine *out);

/* runs.c */
extern bool MnemoFindRun(const char *session_id, const char *tenant, const char *run_id,
						 bool fresh, int64 *completion_seq);

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

/* append.c */
extern void MnemoAppendSummaryMessage(const char *session_id, const char *summary_id,
									  const char *model_id, const char *provider_id,
									  Jsonb *parts, MnemoSessionLock *lock, int64 seq,
									  int64 created_at);

/* notify.c */
extern void MnemoNotify(bool watched, const char *tenant, const char *event,
						const char *session_id, const char *id, int64 seq);
extern void MnemoNotifyWith(bool watched, const char *tenant, const char *event,
							const char *session_id, const char *id, int64 seq,
							const char *extra);
extern char *MnemoTenantChannel(const char *tenant);

/* parts.c: validation and storage of one part object */
typedef struct MnemoPart
{
	Jsonb	   *content;		/* the part object exactly as given */
	char	   *id;
	char	   *part_type;
	char	   *tool_name;
	char	   *tool_call_id;
	char	   *tool_state;
	int32		token_estimate;
} MnemoPart;

extern void MnemoParsePart(JsonbValue *part, const char *where, MnemoPart *out);
extern void MnemoInsertParts(const char *session_id, const char *tenant, int n,
							 char **message_ids, const int32 *part_indexes,
							 const MnemoPart *parts);
extern char *MnemoJsonbString(JsonbContainer *obj, const char *key, const char *where,
							  bool required);
extern int64 MnemoJsonbCount(JsonbContainer *obj, const char *key, const char *where,
							 int64 max);
extern void MnemoCheckToolState(const char *state, const char *where);

/* blobs.c: an image's base64 data stored once per tenant (MNEMO_PART_CONTENT reads it) */
extern Jsonb **MnemoStoreBlobs(const char *tenant, int n, const MnemoPart *parts);
extern void MnemoReleaseBlobs(const char *session_id, const char *tenant);

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

/*
 * How deep a part (or session metadata) may nest: the part object is level
 * 1, a scalar in it level 2 (json-c's count); the client checks the same
 * limit (MNEMO_MAX_JSON_DEPTH in client/include/mnemo.h).  doc/limits.md.
 */
#define MNEMO_MAX_JSON_DEPTH 512
extern void MnemoCheckJsonDepth(Jsonb *jb, const char *where);

/*
 * render.c: the one textual rendering of a part, for estimates and context.
 * A tool's input, output or error renders at most MNEMO_RENDER_VALUE_MAX
 * bytes of itself, then a marker of what was cut.
 */
#define MNEMO_RENDER_VALUE_MAX 65536

/* The token estimate of an image part (parts.c), shown in its placeholder
 * (render.c): about what OpenAI and Anthropic charge for a 1-megapixel image. */
#define MNEMO_IMAGE_TOKENS 1600
extern char *MnemoRenderPart(const char *part_type, Jsonb *content, int64 compacted_at,
							 bool has_compacted_at);

/* maps.c */
extern void MnemoCheckMapExists(const char *session_id, const char *tenant, const char *map_id);

#endif							/* MNEMO_H */
