/*
 * reads.h
 *		Reading the log: the parts and messages as SQL (MNEMO_PART_CONTENT,
 *		MNEMO_PART_ID, MNEMO_MESSAGE_FIELDS), the parts arrays of
 *		mnemo.message_with_parts (flat.c), part ids (part_ids.c), a session's
 *		line (lineage.c), the start of a read (open_read.c), and the one
 *		rendering of a part (render.c).  search.h declares search.
 */
#ifndef MNEMO_READS_H
#define MNEMO_READS_H

#include "fmgr.h"

#include "mnemo.h"
#include "tenancy/tenancy.h"

/*
 * The content of part p (an alias of mnemo.message_parts) as it was
 * appended.  An image whose base64 "data" is stored as a blob
 * (log/blobs.c) has, in its place, an object naming the blob; this puts the
 * base64 back
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
 * The id of part p (an alias of mnemo.message_parts) whose message's id is
 * the SQL expression message_id: the id its caller gave, or the one derived
 * from its place, "<message id>:<part index>", when it is stored as NULL
 * (part_ids.c).  Every read that returns a part's id selects it through
 * this.
 */
#define MNEMO_PART_ID(p, message_id) \
	"coalesce(" p ".id, " message_id " || ':' || " p ".part_index)"

/* part_ids.c: derived part ids, the check of given ones, a look-up by id */
extern text *MnemoDerivedPartIdText(const char *message_id, int len, int32 part_index);
extern char *MnemoDerivedPartId(const char *message_id, int32 part_index);
extern bool MnemoParsePartId(const char *part_id, char **message_id, int32 *part_index);
extern char *MnemoPartIdToStore(char *given, const char *message_id, int32 part_index);
/*
 * flat.c: the parts arrays of mnemo.message_with_parts, built in C, and only
 * there: a message's parts in part_index order, each its stored object
 * (MNEMO_PART_CONTENT) with the live columns laid over it (id, part_index,
 * and tool_state, compacted_at, started_at, completed_at, token_estimate
 * where set), as content || jsonb_strip_nulls(jsonb_build_object(...))
 * would make it; [] for a message without parts.  By message id, or for the
 * rows of a statement of MNEMO_MESSAGE_FIELDS, and such a row beside its
 * array into a result of mnemo.message_with_parts.
 */
extern int	MnemoPartsByIds(const char *owner, const char *tenant, Datum ids, int nids,
							Datum *parts, MemoryContext cxt);
extern Datum *MnemoPartsOfRows(SPITupleTable *t, uint64 n, const char *owner, const char *tenant);
extern void MnemoPutWithParts(FunctionCallInfo fcinfo, SPITupleTable *t, uint64 row, Datum parts);
extern void MnemoPutMessagesWithParts(FunctionCallInfo fcinfo, SPITupleTable *t, uint64 n,
									  const char *owner, const char *tenant);
#define MNEMO_READ_CHUNK 1024	/* seqs a statement of a chunked read covers */
extern bool MnemoFindPart(const char *session_id, const char *tenant, const char *part_id,
						  int64 *seq, int32 *part_index);

/*
 * A message's token counts and cost, columns of messages (m: "m." or ""):
 * NULL until update_message_tokens sets them, and 0 as every function
 * returns them.
 */
#define MNEMO_COUNTS(m) \
	"coalesce(" m "tokens_input, 0), coalesce(" m "tokens_output, 0), " \
	"coalesce(" m "tokens_cache_read, 0), coalesce(" m "tokens_cache_write, 0), " \
	"coalesce(" m "tokens_reasoning, 0), coalesce(" m "cost, 0)"

/*
 * The message whose id is the SQL expression id, of session $1 and tenant
 * (an SQL expression), as the lateral subquery m (a mnemo.messages row), on
 * the rows an "extra" condition (on m_) leaves, after a FROM item that gives
 * the ids: one probe of log_id_key an id.  LIMIT 1 keeps the subquery from
 * being flattened into a join: the planner would hash the ids against the
 * session's every message when it underestimates the session's rows (one
 * grown since the last ANALYZE, a small one beside large ones), so that a
 * read of a few ids cost the whole session (pgTAP 066_by_id_cost).
 */
#define MNEMO_MESSAGE_OF_ID(id, tenant, extra) \
	"CROSS JOIN LATERAL (SELECT * FROM mnemo.messages m_ WHERE m_.session_id = $1 " \
	"AND m_.tenant = " tenant " AND m_.id = " id extra " LIMIT 1) m "

/* the columns of a mnemo.messages row as the functions return it */
#define MNEMO_MESSAGE_ROW(m) \
	m "session_id, " m "seq, " m "id, " m "role, " m "created_at, " m "agent, " \
	m "model_id, " m "provider_id, " m "run_id, " m "is_summary, " MNEMO_COUNTS(m) ", " \
	m "finish_reason, " m "tenant"

/*
 * The message's columns of mnemo.message_with_parts and mnemo.message_flat
 * (id first), over messages m, or over the part 0 row m of mnemo.log
 * (MNEMO_MESSAGE_FIELDS_OF(m), m "p." or "m.")
 */
#define MNEMO_MESSAGE_FIELDS_OF(m) \
	m "id, " m "session_id, " m "seq, " m "role, " m "created_at, " m "agent, " m "model_id, " \
	m "provider_id, " m "run_id, " m "is_summary, " MNEMO_COUNTS(m) ", " m "finish_reason"
#define MNEMO_MESSAGE_FIELDS MNEMO_MESSAGE_FIELDS_OF("m.")
#define MNEMO_MESSAGE_SEQ_COLUMN 3	/* of MNEMO_MESSAGE_FIELDS, 1-based */


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
 * render.c: the one textual rendering of a part, for estimates and context.
 * A tool's input, output or error renders at most MNEMO_RENDER_VALUE_MAX
 * bytes of itself, then a marker of what was cut.
 */
#define MNEMO_RENDER_VALUE_MAX 65536
extern char *MnemoRenderPart(const char *part_type, Jsonb *content, int64 compacted_at,
							 bool has_compacted_at);

#endif							/* MNEMO_READS_H */
