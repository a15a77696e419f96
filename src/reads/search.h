/*
 * search.h
 *		The full-text search of the log: what is searched (search.c) and
 *		the index built off the append path (search_index.c).
 */
#ifndef MNEMO_SEARCH_H
#define MNEMO_SEARCH_H

#include "executor/spi.h"
#include "fmgr.h"
#include "tsearch/ts_type.h"

#include "mnemo.h"
#include "reads/reads.h"

/*
 * The searched text of a part (alias p of mnemo.message_parts) and its
 * tsvector, as search_index.c stores it in mnemo.search_documents: the
 * first 100,000 characters of the part's text fields, without runs of 255
 * or more non-blank characters (a tsvector holds 1 MB, a word 2 KB: indexing
 * must never fail or warn).
 */
#define SEARCH_DOC \
	"regexp_replace(left(" \
	"coalesce(p.content->>'text', '') || ' ' || coalesce(p.content->>'tool_name', '') " \
	"|| ' ' || coalesce(p.content->>'input', '') || ' ' || coalesce(p.content->>'output', '') " \
	"|| ' ' || coalesce(p.content->>'error_message', '') || ' ' || coalesce(p.content->>'path', '') " \
	"|| ' ' || coalesce(p.content->>'summary', ''), 100000), '[^[:space:]]{255,}', ' ', 'g')"
#define SEARCH_TSV "to_tsvector('simple'::regconfig, " SEARCH_DOC ")"

/*
 * A document of a searched text shorter than this many characters keeps
 * its words without their positions (search_index.c): such a part's words
 * are computed again, cheaply, where a search needs their positions
 * (SEARCH_WORDS_OF).  A longer one keeps them, since computing its words
 * costs about 0.1 microsecond a character.
 */
#define MNEMO_SEARCH_POSITIONS_FROM 1024
/* the query gets the same cleaning, so a long run in it is ignored, not warned about */
#define SEARCH_CLEAN(x) "regexp_replace(left(" x ", 100000), '[^[:space:]]{255,}', ' ', 'g')"
#define SEARCH_QUERY "websearch_to_tsquery('simple'::regconfig, " SEARCH_CLEAN("$2") ")"

/* search_history's limits on a query and its snippets (search.c says why) */
#define MNEMO_MAX_SEARCH_QUERY 10000	/* bytes */
#define MNEMO_MAX_SEARCH_NODES 63	/* terms and operators: 32 words */
#define MNEMO_SNIPPET_CHARS 20000

/* what one search costs at most, whatever the session's size (search.c) */
#define MNEMO_SEARCH_SLICE 500		/* waiting messages indexed first, per session */
#define MNEMO_SEARCH_DIRECT 2000	/* newest messages not yet indexed, read directly */
#define MNEMO_RANK_CANDIDATES 1000	/* newest matching messages a ranked search ranks */

#define MNEMO_REGEX_SCAN 5000		/* newest messages a regular expression reads */
#define MNEMO_MAX_RECALL_REGEX 256	/* bytes of a regular expression (recall.c) */

/*
 * A search of a line, newest first (search.c): what it looks for (query,
 * words or with regex a regular expression) within seqs lo .. hi, how many
 * hits it wants, and what it found: each a message of owner, its best part
 * and that part's rank (0 for a regular expression).  Every owner is of
 * the searching session's tenant (a fork's ancestors are of its tenant),
 * which every statement names beside the owner's id.
 */
typedef struct MnemoSearchHit
{
	const char *owner;
	int64		seq;
	int32		part_index;
	float4		rank;
} MnemoSearchHit;

typedef struct MnemoSearchRun
{
	const char *session_id;		/* the searching session */
	const char *tenant;			/* its tenant (the line's) */
	Datum		query;			/* text */
	Datum		words;			/* text: the query a document must match, or 0 */
	bool		exact;			/* what words finds needs no check (no phrase) */
	bool		regex;
	int64		lo;
	int64		hi;
	int32		want;
	int64		direct_left;	/* messages it may still read without the index */
	int64		unsearched;		/* messages skipped: not indexed (or not read) */
	int64		queued;			/* changed messages searched as indexed */
	MnemoSearchHit *hits;
	int			nhits;
	int			maxhits;
} MnemoSearchRun;

/*
 * The rows of MnemoReturnHits' statement, alias h (seq, part_index, rank)
 * for the hit, m its message, p its part (of owner $1 of tenant $9), with
 * its parameters' types and whether the message is in the searching
 * session's context view.  Each hit is two probes of the log's key, as
 * LATERAL subqueries with LIMIT 1 (as MNEMO_MESSAGE_OF_ID, reads.h): as
 * joins, the planner read the whole session once a hit when its statistics
 * gave the session few rows (pgTAP 066_by_id_cost).
 */
#define SEARCH_HIT_ROWS \
	"FROM unnest($3::bigint[], $4::integer[], $5::real[]) WITH ORDINALITY " \
	"     h(seq, part_index, rank, ord) " \
	"CROSS JOIN LATERAL (SELECT * FROM mnemo.messages m_ " \
	"WHERE m_.session_id = $1 AND m_.tenant = $9 AND m_.seq = h.seq LIMIT 1) m " \
	"CROSS JOIN LATERAL (SELECT * FROM mnemo.message_parts p_ " \
	"WHERE p_.session_id = $1 AND p_.tenant = $9 AND p_.seq = h.seq " \
	"AND p_.part_index = h.part_index LIMIT 1) p " \
	"ORDER BY h.ord"
#define SEARCH_HIT_TYPES \
	TEXTOID, TEXTOID, INT8ARRAYOID, INT4ARRAYOID, FLOAT4ARRAYOID, BOOLOID, INT8OID, TEXTARRAYOID, \
	TEXTOID
#define SEARCH_HIT_NARGS 9
#define SEARCH_IN_CONTEXT "(($6 AND m.seq > $7 AND NOT m.is_summary) OR m.id = ANY ($8))"

extern int64 MnemoSearchWords(MnemoSearchRun *run, const char *query);
extern void MnemoSearchLoosen(MnemoSearchRun *run, TSQuery query);
extern void MnemoSearchLine(MnemoSearchRun *run, MnemoLine *line, const char *fn);
extern void MnemoReturnHits(FunctionCallInfo fcinfo, MnemoSearchRun *run, int32 limit,
							SPIPlanPtr plan, Datum *extra, int nextra);
extern void MnemoQueueSearch(const char *session_id, const char *tenant, int64 seq);
extern int64 MnemoDrainSearch(const char *session_id, const char *tenant, int32 max_messages);
extern int64 MnemoSearchPending(const char *session_id, const char *tenant, bool fresh);
extern bool MnemoCanDrainSearch(void);

#endif							/* MNEMO_SEARCH_H */
