/*
 * recall.c
 *		mnemo.recall_search(): what compaction took out of the context,
 *		found again, with the summary that now stands for it (issue 35).
 *
 * A search of the session's whole line, newest first, as search_history's
 * (search.c: forks follow their ancestors, the backlog is bounded, the
 * tenant's sessions only), that answers the question a model asks once a
 * detail was summarised away: where is it, and which summary in my context
 * covers it?  Each hit has its message id, seq, role, a snippet, whether it
 * is in the context view, and if not, covered_by: the summary item of the
 * view whose span (summary_nodes.seq_start .. seq_end) holds its seq.
 *
 * The pattern is full-text words (websearch syntax, through the index), or
 * with regex a POSIX regular expression (case-sensitive; "(?i)" at its
 * start ignores case) matched against the searched text of each part.  A
 * regular expression has no index: it reads the newest MNEMO_REGEX_SCAN
 * messages of what it searches, and says with a NOTICE how many older ones
 * it did not.  What it may cost is bounded before it runs: at most
 * MNEMO_MAX_RECALL_REGEX bytes and no back-references (\1 .. \9, the one
 * construct that makes PostgreSQL's regular expressions backtrack); a
 * pattern PostgreSQL finds too complex is refused by PostgreSQL (2201B).
 *
 * summary_id restricts the search to the span of one summary node (the
 * searching session's, or for a fork the ancestor's that committed it);
 * before_seq pages: the next page is the one before the last seq returned.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "funcapi.h"
#include "utils/array.h"
#include "utils/builtins.h"

#include "mnemo.h"
#include "tenancy/tenancy.h"
#include "reads/reads.h"
#include "reads/search.h"

static SPIPlanPtr span_plan;
static SPIPlanPtr compile_plan;
static SPIPlanPtr view_summaries_plan;
static SPIPlanPtr words_plan;
static SPIPlanPtr regex_plan;

/*
 * a hit's covering summary, given the view's summaries $10 (ids), $11 .. $12
 * (spans): the extra parameters after SEARCH_HIT_NARGS
 */
#define RECALL_COVERED_BY \
	"CASE WHEN " SEARCH_IN_CONTEXT " THEN NULL " \
	"ELSE (SELECT v.id FROM unnest($10::text[], $11::bigint[], $12::bigint[]) v(id, lo, hi) " \
	"      WHERE m.seq BETWEEN v.lo AND v.hi ORDER BY v.hi - v.lo, v.id LIMIT 1) END"
#define RECALL_TYPES SEARCH_HIT_TYPES, TEXTARRAYOID, INT8ARRAYOID, INT8ARRAYOID

/*
 * Refuse a regular expression that could cost more than its bounded scan
 * says, and one that does not compile (2201B, before anything is read).
 */
static void
CheckRegex(const char *pattern)
{
	const char *p;

	if (strlen(pattern) > MNEMO_MAX_RECALL_REGEX)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("regular expression is %zu bytes, more than %d",
						strlen(pattern), MNEMO_MAX_RECALL_REGEX)));
	for (p = pattern; *p; p++)
	{
		if (*p != '\\')
			continue;
		if (p[1] >= '1' && p[1] <= '9')
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("regular expression uses a back-reference (\\%c)", p[1]),
					 errdetail("A back-reference makes the match backtrack, at a cost that can grow exponentially with the text."),
					 errhint("Search for the text the back-reference would repeat.")));
		if (p[1] != '\0')
			p++;
	}
	MnemoPrepare(&compile_plan, "SELECT '' ~ $1", 1, (Oid[]) {TEXTOID});
	MnemoExecute(compile_plan, (Datum[]) {CStringGetTextDatum(pattern)}, NULL, true, 1);
}

/*
 * The span of summary node summary_id on line into SPI_tuptable (seq_start,
 * seq_end): the searching session's node, or for a fork the node of the
 * ancestor whose message the summary is.  Whether found.
 */
static bool
NodeSpan(MnemoLine *line, const char *summary_id)
{
	char	   *owner = line->session_id;
	int64		seq;
	Datum		values[3];

	MnemoPrepare(&span_plan,
				 "SELECT seq_start, seq_end FROM mnemo.summary_nodes "
				 "WHERE session_id = $1 AND tenant = $3 AND id = $2",
				 3, (Oid[]) {TEXTOID, TEXTOID, TEXTOID});
	values[0] = CStringGetTextDatum(owner);
	values[1] = CStringGetTextDatum(summary_id);
	values[2] = CStringGetTextDatum(line->tenant);
	if (MnemoExecute(span_plan, values, NULL, true, 1) == 1)
		return true;
	if (!line->is_fork || !MnemoLineFindMessage(line, summary_id, &owner, &seq))
		return false;
	values[0] = CStringGetTextDatum(owner);
	return MnemoExecute(span_plan, values, NULL, true, 1) == 1;
}

/* The span of summary node summary_id on line (NodeSpan); MN002 if none. */
static void
SummarySpan(MnemoLine *line, const char *summary_id, int64 *lo, int64 *hi)
{
	if (!NodeSpan(line, summary_id))
		ereport(ERROR,
				(errcode(ERRCODE_MNEMO_MESSAGE_NOT_FOUND),
				 errmsg("summary node \"%s\" does not exist in session \"%s\"",
						summary_id, line->session_id)));
	*lo = MnemoGetInt64(0, 1, NULL);
	*hi = MnemoGetInt64(0, 2, NULL);
}

/*
 * The summaries of the searching session's context view and their spans
 * (values[0] ids, values[1] starts, values[2] ends: RECALL_COVERED_BY's
 * parameters).  The view's explicit rows are an index range of its live
 * generation, bounded by what the context holds; a summary a fork
 * inherited has its node in the ancestor that committed it.
 */
static void
ViewSummaries(MnemoLine *line, Datum *values)
{
	Datum	   *ids;
	Datum	   *starts;
	Datum	   *ends;
	int			n;
	int			found = 0;
	int			i;

	MnemoPrepare(&view_summaries_plan,
				 "SELECT c.item_id FROM mnemo.sessions s JOIN mnemo.context_items c "
				 "ON c.session_id = $1 AND c.tenant = $2 AND c.generation = s.context_generation "
				 "WHERE s.id = $1 AND s.tenant = $2 AND c.item_type = 'summary'",
				 2, (Oid[]) {TEXTOID, TEXTOID});
	n = (int) MnemoExecute(view_summaries_plan,
						   (Datum[]) {CStringGetTextDatum(line->session_id),
						   CStringGetTextDatum(line->tenant)},
						   NULL, false, 0);
	ids = palloc(sizeof(Datum) * Max(n, 1));
	starts = palloc(sizeof(Datum) * Max(n, 1));
	ends = palloc(sizeof(Datum) * Max(n, 1));
	{
		char	  **names = palloc(sizeof(char *) * Max(n, 1));

		for (i = 0; i < n; i++)
			names[i] = MnemoGetText(i, 1, NULL);
		for (i = 0; i < n; i++)
		{
			if (!NodeSpan(line, names[i]))
				continue;
			ids[found] = CStringGetTextDatum(names[i]);
			starts[found] = Int64GetDatum(MnemoGetInt64(0, 1, NULL));
			ends[found] = Int64GetDatum(MnemoGetInt64(0, 2, NULL));
			found++;
		}
	}
	values[0] = PointerGetDatum(construct_array(ids, found, TEXTOID, -1, false, TYPALIGN_INT));
	values[1] = PointerGetDatum(construct_array(starts, found, INT8OID, sizeof(int64),
												FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
	values[2] = PointerGetDatum(construct_array(ends, found, INT8OID, sizeof(int64),
												FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}

PG_FUNCTION_INFO_V1(mnemo_recall_search);
Datum
mnemo_recall_search(PG_FUNCTION_ARGS)
{
	char	   *session_id = MnemoRequireTextArg(fcinfo, 0, "session_id");
	char	   *pattern = MnemoRequireTextArg(fcinfo, 1, "pattern");
	bool		regex = DatumGetBool(MnemoRequireArg(fcinfo, 2, "regex"));
	char	   *summary_id = PG_ARGISNULL(3) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(3));
	int32		limit = DatumGetInt32(MnemoRequireArg(fcinfo, 4, "limit"));
	MnemoCall	call;
	MnemoLine	line;
	MnemoSearchRun run = {0};
	Datum		summaries[3] = {0};
	bool		search;

	if (limit < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("limit must not be negative")));
	run.session_id = session_id;
	run.query = CStringGetTextDatum(pattern);
	run.regex = regex;
	run.lo = 0;
	run.hi = PG_ARGISNULL(5) ? PG_INT64_MAX : PG_GETARG_INT64(5) - 1;
	run.want = limit;

	MnemoConnect(&call);
	MnemoReadLine(session_id, PG_INT64_MAX, false, false, &line);
	run.tenant = line.tenant;
	if (summary_id != NULL)
	{
		int64		lo;
		int64		hi;

		SummarySpan(&line, summary_id, &lo, &hi);
		run.lo = Max(run.lo, lo);
		run.hi = Min(run.hi, hi);
	}
	if (regex)
	{
		CheckRegex(pattern);
		search = pattern[0] != '\0';
	}
	else
		search = MnemoSearchWords(&run, pattern) > 0;
	if (search && limit > 0 && run.lo <= run.hi)
		MnemoSearchLine(&run, &line, "recall_search");

	if (run.nhits > 0)
		ViewSummaries(&line, summaries);
	if (regex)
		MnemoPrepare(&regex_plan,
					 "SELECT m.id, m.seq, m.role, "
					 "(SELECT btrim(substr(x.d, greatest(1, regexp_instr(x.d, $2) - 80), 240)) "
					 " FROM (SELECT left(" SEARCH_DOC ", " CppAsString2(MNEMO_SNIPPET_CHARS) ") AS d) x), "
					 SEARCH_IN_CONTEXT ", " RECALL_COVERED_BY " "
					 SEARCH_HIT_ROWS,
					 SEARCH_HIT_NARGS + 3, (Oid[]) {RECALL_TYPES});
	else
		MnemoPrepare(&words_plan,
					 "SELECT m.id, m.seq, m.role, "
					 "ts_headline('simple'::regconfig, left(" SEARCH_DOC ", "
					 CppAsString2(MNEMO_SNIPPET_CHARS) "), " SEARCH_QUERY ", "
					 "'MaxWords=20, MinWords=5, MaxFragments=2'), "
					 SEARCH_IN_CONTEXT ", " RECALL_COVERED_BY " "
					 SEARCH_HIT_ROWS,
					 SEARCH_HIT_NARGS + 3, (Oid[]) {RECALL_TYPES});
	MnemoReturnHits(fcinfo, &run, limit, regex ? regex_plan : words_plan, summaries, 3);
	MnemoFinish(&call);
	return (Datum) 0;
}
