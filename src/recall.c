/*
 * recall.c
 *		mnemo.recall_grep(): what a model asks for once compaction has taken a
 *		detail out of its context.  LCM's lcm_grep: a search of the session's
 *		whole line, each hit with the summary that now covers it in the
 *		context view, so that the model knows which summary to expand.
 *
 * Two kinds of pattern:
 *	- words (the default) go to search_history, the one full-text search
 *	  (search.c): the whole line, compacted parts included, best rank first;
 *	- a regular expression (regex => true) is matched against the searched
 *	  text of each message (search.h's SEARCH_DOC, its parts joined), newest
 *	  first, over a bounded candidate set: the newest RECALL_REGEX_MESSAGES
 *	  messages of the line, or of the span of summary_id when given.  A
 *	  pattern longer than RECALL_MAX_REGEX bytes or with a back-reference
 *	  (the one construct that makes PostgreSQL's regex engine backtrack) is
 *	  refused with 2201B before anything is read.
 *
 * summary_id narrows either kind to the messages that summary covers (its
 * node's seq span): the scope a model gets from a summary it sees.  Words
 * under a summary read the best RECALL_WORD_CANDIDATES hits of the line and
 * keep those in the span.
 *
 * covered_by is the summary in the live context view whose node's span holds
 * the hit (for a summary message, its own node's first seq): NULL when the
 * message is itself in context.  Only explicit view rows can be summaries,
 * so this reads the view's summary rows and their nodes, never the tail.
 *
 * search_history is called through SPI before this function opens its own
 * frame (tenant.c), so that it runs as, and checks the tenant of, the real
 * caller; the rest runs in the frame, after MnemoReadLine's tenant check.
 */
#include "postgres.h"

#include "catalog/pg_collation.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "regex/regex.h"
#include "utils/builtins.h"
#include "utils/tuplestore.h"

#include "mnemo.h"
#include "search.h"

#define RECALL_MAX_LIMIT 200
#define RECALL_WORD_CANDIDATES 1000
#define RECALL_REGEX_MESSAGES 5000
#define RECALL_MAX_REGEX 256
#define RECALL_SNIPPET_CHARS 240

static SPIPlanPtr words_plan;
static SPIPlanPtr regex_plan;
static SPIPlanPtr view_plan;
static SPIPlanPtr node_plan;

typedef struct RecallHit
{
	char	   *message_id;
	int64		seq;
	char	   *role;
	char	   *snippet;
	char	   *covered_by;
} RecallHit;

typedef struct ViewSummary
{
	char	   *id;
	int64		seq_start;
	int64		seq_end;
} ViewSummary;

/*
 * The node of summary_id: in the session, or (a fork's inherited summary)
 * in the ancestor that committed it.  False when there is none.
 */
static bool
FindNode(MnemoLine *line, const char *summary_id, int64 *seq_start, int64 *seq_end)
{
	Datum		values[2];
	int			s;

	MnemoPrepare(&node_plan,
				 "SELECT n.seq_start, n.seq_end FROM mnemo.summary_nodes n "
				 "WHERE n.session_id = $1 AND n.id = $2",
				 2, (Oid[]) {TEXTOID, TEXTOID});
	values[1] = CStringGetTextDatum(summary_id);
	for (s = -1; s < line->ninherited; s++)
	{
		if (s > 0 && strcmp(line->segs[s].owner, line->segs[s - 1].owner) == 0)
			continue;
		values[0] = CStringGetTextDatum(s < 0 ? line->session_id : line->segs[s].owner);
		if (MnemoExecute(node_plan, values, NULL, true, 1) == 1)
		{
			*seq_start = MnemoGetInt64(0, 1, NULL);
			*seq_end = MnemoGetInt64(0, 2, NULL);
			return true;
		}
	}
	return false;
}

/* The summaries of the live view, each with its node's span. */
static ViewSummary *
ReadViewSummaries(MnemoLine *line, int *n)
{
	Datum		values[1];
	uint64		rows;
	uint64		i;
	char	  **ids;
	ViewSummary *out;
	int			k = 0;

	MnemoPrepare(&view_plan,
				 "SELECT c.item_id FROM mnemo.context_items c "
				 "WHERE c.session_id = $1 AND c.item_type = 'summary' "
				 "AND c.generation = (SELECT s.context_generation FROM mnemo.sessions s "
				 "                    WHERE s.id = $1)",
				 1, (Oid[]) {TEXTOID});
	values[0] = CStringGetTextDatum(line->session_id);
	rows = MnemoExecute(view_plan, values, NULL, true, 0);
	ids = palloc(sizeof(char *) * Max(rows, 1));
	for (i = 0; i < rows; i++)
		ids[i] = MnemoGetText(i, 1, NULL);
	out = palloc(sizeof(ViewSummary) * Max(rows, 1));
	for (i = 0; i < rows; i++)
	{
		/* a bare swap's summary has no node: it covers nothing findable */
		if (FindNode(line, ids[i], &out[k].seq_start, &out[k].seq_end))
			out[k++].id = ids[i];
	}
	*n = k;
	return out;
}

/* The view summary whose span holds seq, or NULL. */
static char *
CoveredBy(ViewSummary *view, int n, int64 seq)
{
	int			i;

	for (i = 0; i < n; i++)
		if (seq >= view[i].seq_start && seq <= view[i].seq_end)
			return view[i].id;
	return NULL;
}

/*
 * What covers a hit.  A summary message is placed by its node's first seq
 * (its own seq comes after what it covers): NULL when it is itself a
 * summary of the view.
 */
static char *
CoverOf(MnemoLine *line, ViewSummary *view, int n, RecallHit *hit)
{
	int64		seq_start;
	int64		seq_end;
	int			i;

	if (strcmp(hit->role, "assistant") != 0 ||
		!FindNode(line, hit->message_id, &seq_start, &seq_end))
		return CoveredBy(view, n, hit->seq);
	for (i = 0; i < n; i++)
		if (strcmp(view[i].id, hit->message_id) == 0)
			return NULL;
	return CoveredBy(view, n, seq_start);
}

/*
 * Words: search_history's hits, called as the caller (see the top), copied
 * into cxt.
 */
static RecallHit *
WordHits(const char *session_id, const char *pattern, int32 want, MemoryContext cxt,
		 uint64 *n)
{
	Datum		values[3];
	RecallHit  *hits;
	uint64		rows;
	uint64		i;

	SPI_connect();
	MnemoPrepare(&words_plan,
				 "SELECT h.message_id, h.seq, h.role, h.snippet "
				 "FROM mnemo.search_history($1, $2, $3) h",
				 3, (Oid[]) {TEXTOID, TEXTOID, INT4OID});
	values[0] = CStringGetTextDatum(session_id);
	values[1] = CStringGetTextDatum(pattern);
	values[2] = Int32GetDatum(want);
	rows = MnemoExecute(words_plan, values, NULL, false, 0);
	hits = MemoryContextAllocZero(cxt, sizeof(RecallHit) * Max(rows, 1));
	for (i = 0; i < rows; i++)
	{
		hits[i].message_id = MemoryContextStrdup(cxt, MnemoGetText(i, 1, NULL));
		hits[i].seq = MnemoGetInt64(i, 2, NULL);
		hits[i].role = MemoryContextStrdup(cxt, MnemoGetText(i, 3, NULL));
		hits[i].snippet = MemoryContextStrdup(cxt, MnemoGetText(i, 4, NULL));
	}
	SPI_finish();
	*n = rows;
	return hits;
}

/*
 * A regular expression over the newest RECALL_REGEX_MESSAGES messages of
 * the line within from .. to, newest first, one statement per segment.
 */
static RecallHit *
RegexHits(MnemoLine *line, const char *pattern, int64 from, int64 to, uint64 *n)
{
	RecallHit  *hits = NULL;
	uint64		nhits = 0;
	int64		budget = RECALL_REGEX_MESSAGES;
	int			s;

	MnemoPrepare(&regex_plan,
				 "SELECT m.id, m.seq, m.role, "
				 "       substr(x.doc, greatest(1, regexp_instr(x.doc, $4) - 80), "
				 CppAsString2(RECALL_SNIPPET_CHARS) ") "
				 "FROM (SELECT m.id, m.seq, m.role "
				 "      FROM mnemo.messages m "
				 "      WHERE m.session_id = $1 AND m.seq BETWEEN $2 AND $3 "
				 "      ORDER BY m.seq DESC LIMIT $5) m "
				 "CROSS JOIN LATERAL (SELECT string_agg(" SEARCH_DOC ", ' ' ORDER BY p.part_index) AS doc "
				 "                    FROM mnemo.message_parts p "
				 "                    WHERE p.session_id = $1 AND p.message_id = m.id) x "
				 "WHERE x.doc ~ $4 "
				 "ORDER BY m.seq DESC",
				 5, (Oid[]) {TEXTOID, INT8OID, INT8OID, TEXTOID, INT8OID});
	for (s = line->nsegs - 1; s >= 0 && budget > 0; s--)
	{
		MnemoSegment *seg = &line->segs[s];
		Datum		values[5];
		int64		lo = Max(seg->from, from);
		int64		hi = Min(Min(seg->to, to), line->last_seq);
		int64		range;
		uint64		rows;
		uint64		i;

		if (lo > hi)
			continue;
		values[0] = CStringGetTextDatum(seg->owner);
		values[1] = Int64GetDatum(lo);
		values[2] = Int64GetDatum(hi);
		values[3] = CStringGetTextDatum(pattern);
		values[4] = Int64GetDatum(budget);
		rows = MnemoExecute(regex_plan, values, NULL, true, 0);
		hits = hits ? repalloc(hits, sizeof(RecallHit) * (nhits + rows + 1))
			: palloc(sizeof(RecallHit) * (rows + 1));
		for (i = 0; i < rows; i++)
		{
			RecallHit  *h = &hits[nhits++];

			h->message_id = MnemoGetText(i, 1, NULL);
			h->seq = MnemoGetInt64(i, 2, NULL);
			h->role = MnemoGetText(i, 3, NULL);
			h->snippet = MnemoGetText(i, 4, NULL);
			h->covered_by = NULL;
		}
		/* the messages read, matched or not (seqs are dense in a segment) */
		range = hi - lo + 1;
		budget -= Min(range, budget);
	}
	*n = nhits;
	return hits;
}

/* 2201B for a pattern that is too long or backtracks (see the top) */
static void
CheckRegex(const char *pattern)
{
	const char *p;

	if (strlen(pattern) > RECALL_MAX_REGEX)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_REGULAR_EXPRESSION),
				 errmsg("regular expression is too long (%zu bytes, at most %d)",
						strlen(pattern), RECALL_MAX_REGEX)));
	for (p = pattern; *p; p++)
	{
		if (*p != '\\' || p[1] == '\0')
			continue;
		if (p[1] >= '1' && p[1] <= '9')
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_REGULAR_EXPRESSION),
					 errmsg("back-references are not allowed in a recall pattern"),
					 errdetail("A back-reference makes the match backtrack, at a cost without bound.")));
		p++;
	}
}

PG_FUNCTION_INFO_V1(mnemo_recall_grep);
Datum
mnemo_recall_grep(PG_FUNCTION_ARGS)
{
	char	   *session_id = MnemoRequireTextArg(fcinfo, 0, "session_id");
	char	   *pattern = MnemoRequireTextArg(fcinfo, 1, "pattern");
	char	   *summary_id = MnemoTextArgOrNull(fcinfo, 2);
	bool		regex = DatumGetBool(MnemoRequireArg(fcinfo, 3, "regex"));
	int32		limit = DatumGetInt32(MnemoRequireArg(fcinfo, 4, "limit"));
	int32		offset = DatumGetInt32(MnemoRequireArg(fcinfo, 5, "offset"));
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	MemoryContext cxt = CurrentMemoryContext;
	RecallHit  *hits = NULL;
	ViewSummary *view;
	uint64		nhits = 0;
	uint64		i;
	int			nview;
	int64		from = 0;
	int64		to = PG_INT64_MAX;
	int64		skip = offset;
	int64		left = limit;
	MnemoLine	line;
	MnemoCall	call;

	if (limit < 1 || limit > RECALL_MAX_LIMIT)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("limit must be between 1 and %d, not %d", RECALL_MAX_LIMIT, limit)));
	if (offset < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("offset must not be negative, not %d", offset)));
	if (summary_id != NULL)
		MnemoCheckId(summary_id, "summary_id");
	if (regex)
		CheckRegex(pattern);
	else if (summary_id == NULL)
		hits = WordHits(session_id, pattern, Min((int64) offset + limit, RECALL_WORD_CANDIDATES),
						cxt, &nhits);
	else
		hits = WordHits(session_id, pattern, RECALL_WORD_CANDIDATES, cxt, &nhits);

	MnemoConnect(&call);
	MnemoReadLine(session_id, PG_INT64_MAX, false, false, &line);
	if (summary_id != NULL && !FindNode(&line, summary_id, &from, &to))
		ereport(ERROR,
				(errcode(ERRCODE_MNEMO_MESSAGE_NOT_FOUND),
				 errmsg("summary node \"%s\" does not exist in session \"%s\"",
						summary_id, session_id)));
	if (regex)
	{
		/* an invalid pattern fails here, as 2201B, before any row is read */
		(void) RE_compile_and_cache(cstring_to_text(pattern), REG_ADVANCED, C_COLLATION_OID);
		hits = RegexHits(&line, pattern, from, to, &nhits);
	}
	view = ReadViewSummaries(&line, &nview);

	InitMaterializedSRF(fcinfo, 0);
	for (i = 0; i < nhits && left > 0; i++)
	{
		Datum		cols[5];
		bool		nulls[5] = {false};
		char	   *cover;

		if (hits[i].seq < from || hits[i].seq > to)
			continue;
		if (skip > 0)
		{
			skip--;
			continue;
		}
		cover = CoverOf(&line, view, nview, &hits[i]);
		cols[0] = CStringGetTextDatum(hits[i].message_id);
		cols[1] = Int64GetDatum(hits[i].seq);
		cols[2] = CStringGetTextDatum(hits[i].role);
		cols[3] = CStringGetTextDatum(hits[i].snippet ? hits[i].snippet : "");
		if (cover != NULL)
			cols[4] = CStringGetTextDatum(cover);
		else
			nulls[4] = true;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, cols, nulls);
		left--;
	}
	MnemoFinish(&call);
	return (Datum) 0;
}
