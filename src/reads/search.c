/*
 * search.c
 *		mnemo.search_history(): full-text search over a session's whole log.
 *
 * Every part ever appended is searchable, compacted or tombstoned or not:
 * the search reads the documents of the session's parts, never the context
 * view, and tombstones keep the content in the row.  The searched text of a
 * part is its "text", "tool_name", "input" (as JSON), "output",
 * "error_message", "path" and "summary", with the fixed configuration
 * 'simple' (lower-cased words, no stemming, no stop words: identifiers and
 * paths match as written), cut to its first 100,000 characters and without
 * runs of 255 or more non-blank characters (such runs are not searchable);
 * see search.h.
 *
 * A search costs its page, not the session (issue 36).  Rows come newest
 * first: the documents are read down their key (session_id, tenant, seq,
 * part_index), and the read stops when the page is full, so a frequent
 * word costs the page and a rare one the GIN look-up of its few matches
 * (the planner picks, each search planned with its query: SearchCandidates).
 * With ranked, the newest MNEMO_RANK_CANDIDATES matching messages are read
 * that way and ranked (ts_rank), and a NOTICE says when there were more.
 *
 * Appends do not index (search_index.c).  A search first indexes at most
 * MNEMO_SEARCH_SLICE waiting messages of each session of its line (none
 * where it may not write: a standby, a read-only transaction), then reads
 * the newest MNEMO_SEARCH_DIRECT messages not yet indexed directly, each
 * part's words computed as the index would, and the indexed ones through
 * the index.  Messages between the two (a large backlog: an import) are not
 * searched, and a NOTICE says how many, unless the page was full before
 * them; mnemo.index_search() indexes them (doc/operations.md).
 *
 * One row per message: its best-ranked part gives the rank and the snippet
 * (ts_headline, computed only for the rows returned), plus whether the
 * message is still in the live context view.  A query with no words
 * (empty, punctuation only) finds nothing, without notices.
 *
 * A fork, or a session after a resume, searches its live line (lineage.c),
 * newest segment first, each with statements on the session holding it
 * (every session of the line drained first, in id order: DrainLine), "in
 * context" meaning in the searching session's view.  Discarded messages are
 * not searched.
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

static SPIPlanPtr words_plan;
static SPIPlanPtr state_plan;
static SPIPlanPtr view_plan;
static SPIPlanPtr hit_plan;
static SPIPlanPtr window_plan;

/*
 * A short part's document holds its words without their positions
 * (search_index.c), so documents are filtered by the query with its
 * phrases loosened, $8 (search_words.c), and unless that was the query
 * itself ($9), what matches is checked against the part's words with their
 * positions: the document's own where it kept them, else the part's
 * computed again (SEARCH_WORDS_OF).  The check costs the page's
 * candidates, not the session's documents.
 */
#define SEARCH_MATCH(d) "($8 IS NULL OR " d ".tsv @@ $8::tsquery) "
#define SEARCH_WORDS_OF(d) \
	"CASE WHEN " d ".tsv <> strip(" d ".tsv) THEN " d ".tsv " \
	"ELSE (SELECT " SEARCH_TSV " FROM mnemo.message_parts p " \
	"      WHERE p.session_id = $1 AND p.tenant = $7 AND p.seq = " d ".seq " \
	"      AND p.part_index = " d ".part_index) END"
#define SEARCH_RECHECK(d) "($9 OR (" SEARCH_WORDS_OF(d) ") @@ " SEARCH_QUERY ") "
/*
 * The best part of message c.seq and its rank, from the part's words with
 * their positions (ts_rank weighs how often and how close), whichever way
 * the message was found: of an indexed message, its matching documents'
 * (SEARCH_WORDS_OF); of one not yet indexed, every part's, computed.  The
 * words are computed once a part (OFFSET 0 keeps the planner from writing
 * the expression into both its uses).
 */
#define SEARCH_BEST_DOCUMENT \
	"(SELECT d.part_index, ts_rank(w.tsv, " SEARCH_QUERY ") AS rank " \
	"  FROM mnemo.search_documents d, LATERAL (SELECT " SEARCH_WORDS_OF("d") " AS tsv OFFSET 0) w " \
	"  WHERE d.session_id = $1 AND d.tenant = $7 AND d.seq = c.seq " \
	"  AND " SEARCH_MATCH("d") "AND w.tsv @@ " SEARCH_QUERY \
	"  ORDER BY 2 DESC, d.part_index LIMIT 1) b "
#define SEARCH_BEST_PART \
	"(SELECT p.part_index, ts_rank(w.tsv, " SEARCH_QUERY ") AS rank " \
	"  FROM mnemo.message_parts p, LATERAL (SELECT " SEARCH_TSV " AS tsv OFFSET 0) w " \
	"  WHERE p.session_id = $1 AND p.tenant = $7 AND p.seq = c.seq " \
	"  AND w.tsv @@ " SEARCH_QUERY \
	"  ORDER BY 2 DESC, p.part_index LIMIT 1) b "

/*
 * The newest $3 matching messages of session $1 of tenant $7 with seq in
 * $4 .. $5, each with its best part and that part's rank, newest first:
 * from the index (documents), or read directly with each part's words
 * computed as the drain would (not yet indexed).  The direct reads test a
 * message's parts in a subquery of their own (EXISTS, LATERAL ... LIMIT), so
 * the plan walks the messages newest first and stops at the page: joined
 * flat, the filter on the parts let the planner scan every part of the
 * session with it and hash-join the range (a regular expression at 100,000
 * messages: 1.8 s).
 */
#define SEARCH_INDEXED \
	"SELECT c.seq, b.part_index, b.rank " \
	"FROM (SELECT DISTINCT ON (d.seq) d.seq FROM mnemo.search_documents d " \
	"      WHERE d.session_id = $1 AND d.tenant = $7 AND d.seq BETWEEN $4 AND $5 " \
	"      AND " SEARCH_MATCH("d") "AND " SEARCH_RECHECK("d") \
	"      ORDER BY d.seq DESC LIMIT $3) c, " \
	"LATERAL " SEARCH_BEST_DOCUMENT \
	"ORDER BY c.seq DESC"
/*
 * SEARCH_INDEXED within the newest $6 documents of the range, read down the
 * key whatever the planner would estimate: the GIN index holds every
 * session's words, and a word frequent in other sessions made a plan that
 * combined it with the key cost all of their matches (ranked at 100,000
 * messages beside a 1,000,000: 470 ms instead of 60).
 */
#define SEARCH_WALK \
	"SELECT c.seq, b.part_index, b.rank " \
	"FROM (SELECT DISTINCT ON (w.seq) w.seq " \
	"      FROM (SELECT d.seq, d.part_index, d.tsv FROM mnemo.search_documents d " \
	"            WHERE d.session_id = $1 AND d.tenant = $7 AND d.seq BETWEEN $4 AND $5 " \
	"            ORDER BY d.seq DESC LIMIT $6) w " \
	"      WHERE " SEARCH_MATCH("w") "AND " SEARCH_RECHECK("w") \
	"      ORDER BY w.seq DESC LIMIT $3) c, " \
	"LATERAL " SEARCH_BEST_DOCUMENT \
	"ORDER BY c.seq DESC"
#define SEARCH_DIRECT \
	"SELECT c.seq, b.part_index, b.rank " \
	"FROM (SELECT m.seq FROM mnemo.messages m " \
	"      WHERE m.session_id = $1 AND m.tenant = $7 AND m.seq BETWEEN $4 AND $5 " \
	"      AND EXISTS (SELECT FROM mnemo.message_parts p " \
	"                  WHERE p.session_id = $1 AND p.tenant = $7 AND p.seq = m.seq " \
	"                  AND " SEARCH_TSV " @@ " SEARCH_QUERY " OFFSET 0) " \
	"      ORDER BY m.seq DESC LIMIT $3) c, " \
	"LATERAL " SEARCH_BEST_PART \
	"ORDER BY c.seq DESC"
/* the same, matching a regular expression against the searched text */
#define SEARCH_REGEX \
	"SELECT c.seq, c.part_index, 0::real " \
	"FROM (SELECT m.seq, p.part_index FROM mnemo.messages m, " \
	"      LATERAL (SELECT p.part_index FROM mnemo.message_parts p " \
	"               WHERE p.session_id = $1 AND p.tenant = $7 AND p.seq = m.seq " \
	"               AND " SEARCH_DOC " ~ $2 " \
	"               ORDER BY p.part_index LIMIT 1) p " \
	"      WHERE m.session_id = $1 AND m.tenant = $7 AND m.seq BETWEEN $4 AND $5 " \
	"      ORDER BY m.seq DESC LIMIT $3) c " \
	"ORDER BY c.seq DESC"

static int
CompareHits(const void *a, const void *b)
{
	const MnemoSearchHit *x = a;
	const MnemoSearchHit *y = b;

	if (x->rank != y->rank)
		return x->rank > y->rank ? -1 : 1;
	return x->seq > y->seq ? -1 : x->seq < y->seq ? 1 : 0;
}

/*
 * Add to run the newest matches of owner's messages lo .. hi, up to what it
 * still wants.  Planned for each call with the query's value (a one-shot
 * plan): the choice between reading down the key and the GIN look-up rests
 * on how frequent the query's words are.
 */
static void
SearchCandidates(MnemoSearchRun *run, const char *sql, const char *owner, int64 lo, int64 hi,
				 int64 window)
{
	int			rc;
	uint64		n;
	uint64		row;
	bool		isnull;

	if (lo > hi || run->nhits >= run->want)
		return;
	rc = SPI_execute_with_args(sql, 9,
							   (Oid[]) {TEXTOID, TEXTOID, INT4OID, INT8OID, INT8OID, INT8OID, TEXTOID,
							   TEXTOID, BOOLOID},
							   (Datum[]) {CStringGetTextDatum(owner), run->query,
							   Int32GetDatum(run->want - run->nhits), Int64GetDatum(lo),
							   Int64GetDatum(hi), Int64GetDatum(window),
							   CStringGetTextDatum(run->tenant), run->words, BoolGetDatum(run->exact)},
							   run->words ? "         " : "       n ", false, 0);
	if (rc < 0)
		elog(ERROR, "SPI_execute_with_args failed: %s", SPI_result_code_string(rc));
	n = SPI_processed;
	if (run->nhits + n > run->maxhits)
	{
		run->maxhits = run->nhits + n;
		run->hits = run->hits ? repalloc(run->hits, sizeof(MnemoSearchHit) * run->maxhits)
			: palloc(sizeof(MnemoSearchHit) * run->maxhits);
	}
	for (row = 0; row < n; row++)
	{
		MnemoSearchHit  *h = &run->hits[run->nhits++];

		h->owner = owner;
		h->seq = MnemoGetInt64(row, 1, NULL);
		h->part_index = DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[row],
													SPI_tuptable->tupdesc, 2, &isnull));
		h->rank = DatumGetFloat4(SPI_getbinval(SPI_tuptable->vals[row],
											   SPI_tuptable->tupdesc, 3, &isnull));
	}
}

/*
 * The indexed messages of owner lo .. hi, newest first: the newest
 * documents down the key (a window of twenty a wanted hit, at least
 * 2,000), where a frequent word fills the page, then, if the page is not
 * full, the rest of the range as the planner sees fit (for a rare word the
 * GIN look-up of its few matches).  The window's oldest message may have
 * parts on both sides of it: found twice, it is kept once.
 */
static void
SearchIndexed(MnemoSearchRun *run, const char *owner, int64 lo, int64 hi)
{
	int64		window = Max((int64) (run->want - run->nhits) * 20, 2000);
	int			before = run->nhits;
	int64		boundary;

	if (lo > hi || run->nhits >= run->want)
		return;
	SearchCandidates(run, SEARCH_WALK, owner, lo, hi, window);
	if (run->nhits >= run->want)
		return;
	MnemoPrepare(&window_plan,
				 "SELECT d.seq FROM mnemo.search_documents d "
				 "WHERE d.session_id = $1 AND d.tenant = $5 AND d.seq BETWEEN $2 AND $3 "
				 "ORDER BY d.seq DESC OFFSET $4 LIMIT 1",
				 5, (Oid[]) {TEXTOID, INT8OID, INT8OID, INT8OID, TEXTOID});
	if (MnemoExecute(window_plan,
					 (Datum[]) {CStringGetTextDatum(owner), Int64GetDatum(lo), Int64GetDatum(hi),
					 Int64GetDatum(window), CStringGetTextDatum(run->tenant)},
					 NULL, false, 1) != 1)
		return;					/* the window held the whole range */
	boundary = MnemoGetInt64(0, 1, NULL);
	before = run->nhits > before ? run->nhits : -1;
	if (before > 0)
		run->want++;			/* one more, for the one that may be found twice */
	SearchCandidates(run, SEARCH_INDEXED, owner, lo, boundary, 0);
	if (before > 0)
	{
		run->want--;
		if (run->nhits > before && run->hits[before].seq == run->hits[before - 1].seq)
		{
			memmove(&run->hits[before], &run->hits[before + 1],
					sizeof(MnemoSearchHit) * (run->nhits - before - 1));
			run->nhits--;
		}
		run->nhits = Min(run->nhits, run->want);
	}
}

/*
 * Search one segment of the line, newest first: the owner's messages not
 * yet indexed (the newest of them, up to what is left of the direct
 * budget), then the indexed ones.  What lies between is skipped and
 * counted, if the search gets that far.
 */
static void
SearchSegment(MnemoSearchRun *run, MnemoSegment *seg)
{
	int64		indexed;
	int64		from;
	int64		to;
	int64		waiting_from;
	int64		direct_from;

	MnemoPrepare(&state_plan,
				 "SELECT coalesce(g.indexed_seq, s.fork_seq, 0), " MNEMO_LAST_SEQ("s", "$1") " "
				 "FROM mnemo.sessions s LEFT JOIN mnemo.search_progress g "
				 "ON g.session_id = $1 AND g.tenant = $2 "
				 "WHERE s.id = $1 AND s.tenant = $2",
				 2, (Oid[]) {TEXTOID, TEXTOID});
	if (MnemoExecute(state_plan,
					 (Datum[]) {CStringGetTextDatum(seg->owner), CStringGetTextDatum(run->tenant)},
					 NULL, false, 1) != 1)
		return;
	indexed = MnemoGetInt64(0, 1, NULL);
	to = Min(Min(seg->to, MnemoGetInt64(0, 2, NULL)), run->hi);
	from = Max(seg->from, run->lo);
	if (from > to)
		return;

	/* a regular expression has no index: it reads the newest of the range */
	if (run->regex)
	{
		direct_from = Max(from, to - run->direct_left + 1);
		if (to >= direct_from)
		{
			run->direct_left -= to - direct_from + 1;
			SearchCandidates(run, SEARCH_REGEX, seg->owner, direct_from, to, 0);
		}
		if (run->nhits < run->want)
			run->unsearched += Min(direct_from, to + 1) - from;
		return;
	}

	waiting_from = Max(from, indexed + 1);
	direct_from = Max(waiting_from, to - run->direct_left + 1);
	if (to >= direct_from)
	{
		run->direct_left -= to - direct_from + 1;
		SearchCandidates(run, SEARCH_DIRECT, seg->owner, direct_from, to, 0);
	}
	if (run->nhits >= run->want)
		return;
	if (direct_from > waiting_from)
		run->unsearched += Min(direct_from, to + 1) - waiting_from;
	SearchIndexed(run, seg->owner, from, Min(to, indexed));
}

static int
CompareOwners(const void *a, const void *b)
{
	return strcmp(*(char *const *) a, *(char *const *) b);
}

/*
 * The sessions of the line -- its own, then what it inherited -- in the
 * order of their ids, the order in which a search drains them.  A drain
 * locks its session's progress row to commit, and two searches of related
 * forks drain the same sessions: in line order they would take those rows
 * in opposite orders (a fork of a fork: itself, the root, its parent; its
 * parent: itself, the root) and deadlock.
 */
static char **
LineOwners(MnemoLine *line, int *nowners)
{
	char	  **owners = palloc(sizeof(char *) * (line->nsegs + 1));
	int			n = 0;
	int			i;

	owners[n++] = line->session_id;
	for (i = 0; i < line->nsegs; i++)
	{
		int			k;

		for (k = 0; k < n && strcmp(owners[k], line->segs[i].owner) != 0; k++)
			;
		if (k == n)
			owners[n++] = line->segs[i].owner;
	}
	qsort(owners, n, sizeof(char *), CompareOwners);
	*nowners = n;
	return owners;
}

/*
 * The messages of owner (of tenant) whose parts changed after they were
 * indexed and that wait to be indexed again: searched by their words as
 * indexed.
 */
static int64
QueuedMessages(const char *owner, const char *tenant)
{
	static SPIPlanPtr queued_plan;

	MnemoPrepare(&queued_plan,
				 "SELECT coalesce(sum(q.seq_to - q.seq_from + 1), 0)::bigint "
				 "FROM mnemo.search_queue q WHERE q.session_id = $1 AND q.tenant = $2",
				 2, (Oid[]) {TEXTOID, TEXTOID});
	MnemoExecute(queued_plan, (Datum[]) {CStringGetTextDatum(owner), CStringGetTextDatum(tenant)},
				 NULL, false, 1);
	return MnemoGetInt64(0, 1, NULL);
}

/*
 * The searching session's view as a search hit's in_context needs it
 * (values[0] its context_tail_seq, values[1] the item ids of its explicit
 * rows), read as MNEMO_CONTEXT_VIEW defines the view but not through it
 * (that would read the whole implicit tail): the session's own non-summary
 * messages past its context_tail_seq are in it, and its explicit rows, an
 * index range of the view's live generation.
 */
static void
ViewForHits(const char *session_id, const char *tenant, Datum *values)
{
	bool		isnull;

	MnemoPrepare(&view_plan,
				 "SELECT s.context_tail_seq, "
				 "coalesce((SELECT array_agg(c.item_id) FROM mnemo.context_items c "
				 "          WHERE c.session_id = $1 AND c.tenant = $2 "
				 "          AND c.generation = s.context_generation), '{}') "
				 "FROM mnemo.sessions s WHERE s.id = $1 AND s.tenant = $2",
				 2, (Oid[]) {TEXTOID, TEXTOID});
	MnemoExecute(view_plan, (Datum[]) {CStringGetTextDatum(session_id), CStringGetTextDatum(tenant)},
				 NULL, false, 1);
	values[0] = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	values[1] = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull);
}

/*
 * Return the first limit of run's hits, in order, through plan: its
 * parameters are the owner ($1), the query ($2), the hits' seqs, part
 * indexes and ranks as arrays ($3 .. $5, rows of the result in their
 * order), whether the owner is the searching session ($6), the view's tail
 * and explicit ids ($7, $8: ViewForHits), the tenant ($9), then nextra
 * more (SEARCH_HIT_NARGS + nextra in all).  One statement for each run of
 * hits of one owner.
 */
void
MnemoReturnHits(FunctionCallInfo fcinfo, MnemoSearchRun *run, int32 limit, SPIPlanPtr plan,
				Datum *extra, int nextra)
{
	Datum		values[16];
	Datum	   *seqs;
	Datum	   *parts;
	Datum	   *ranks;
	int			n;
	int			first;
	int			i;

	Assert(SEARCH_HIT_NARGS + nextra <= lengthof(values));
	InitMaterializedSRF(fcinfo, 0);
	if (run->nhits == 0 || limit == 0)
		return;
	ViewForHits(run->session_id, run->tenant, &values[6]);
	values[8] = CStringGetTextDatum(run->tenant);
	for (i = 0; i < nextra; i++)
		values[SEARCH_HIT_NARGS + i] = extra[i];
	n = Min(run->nhits, limit);
	seqs = palloc(sizeof(Datum) * n);
	parts = palloc(sizeof(Datum) * n);
	ranks = palloc(sizeof(Datum) * n);
	for (first = 0; first < n; first = i)
	{
		const char *owner = run->hits[first].owner;

		for (i = first; i < n && strcmp(run->hits[i].owner, owner) == 0; i++)
		{
			seqs[i - first] = Int64GetDatum(run->hits[i].seq);
			parts[i - first] = Int32GetDatum(run->hits[i].part_index);
			ranks[i - first] = Float4GetDatum(run->hits[i].rank);
		}
		values[0] = CStringGetTextDatum(owner);
		values[1] = run->query;
		values[2] = PointerGetDatum(construct_array(seqs, i - first, INT8OID, sizeof(int64),
													FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
		values[3] = PointerGetDatum(construct_array(parts, i - first, INT4OID, sizeof(int32),
													true, TYPALIGN_INT));
		values[4] = PointerGetDatum(construct_array(ranks, i - first, FLOAT4OID, sizeof(float4),
													true, TYPALIGN_INT));
		values[5] = BoolGetDatum(strcmp(owner, run->session_id) == 0);
		MnemoExecuteResult(fcinfo, plan, values, NULL, false);
	}
}

/*
 * The number of terms and operators of query (0: no word at all, which
 * finds nothing; asking the server would only add notices about an empty
 * tsquery).  A snippet costs ts_headline time that grows with the query's
 * terms times the matches in the part (sixteen phrases of a word repeated
 * through a 100 kB part: a minute), so a query has at most
 * MNEMO_MAX_SEARCH_NODES terms and operators and a snippet is taken from a
 * part's first MNEMO_SNIPPET_CHARS characters.  The length is checked
 * before the query is parsed: PostgreSQL's text search parses and
 * evaluates it by recursion, and twenty thousand words exhaust the stack
 * (54001) deep inside it.  Fills run's words and exact (search_words.c).
 */
int64
MnemoSearchWords(MnemoSearchRun *run, const char *query)
{
	int64		nodes;
	bool		isnull;
	Datum		tsquery;

	if (strlen(query) > MNEMO_MAX_SEARCH_QUERY)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("query is %zu bytes, more than %d", strlen(query), MNEMO_MAX_SEARCH_QUERY)));
	MnemoPrepare(&words_plan,
				 "SELECT CASE WHEN to_tsvector('simple'::regconfig, " SEARCH_CLEAN("$1") ") = ''::tsvector "
				 "THEN NULL ELSE websearch_to_tsquery('simple'::regconfig, " SEARCH_CLEAN("$1") ") END",
				 1, (Oid[]) {TEXTOID});
	MnemoExecute(words_plan, (Datum[]) {CStringGetTextDatum(query)}, NULL, true, 1);
	tsquery = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	if (isnull)
		return 0;
	tsquery = PointerGetDatum(PG_DETOAST_DATUM(tsquery));
	nodes = DatumGetTSQuery(tsquery)->size;
	if (nodes > MNEMO_MAX_SEARCH_NODES)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("query has " INT64_FORMAT " terms and operators, more than %d",
						nodes, MNEMO_MAX_SEARCH_NODES),
				 errhint("A query of %d words is within the limit.", (MNEMO_MAX_SEARCH_NODES + 1) / 2)));
	MnemoSearchLoosen(run, DatumGetTSQuery(tsquery));
	return nodes;
}

/*
 * Find run->want hits on line, newest first (see the header comment): the
 * sessions of the line indexed a slice each first, where this transaction
 * may write, then each segment from the newest; a NOTICE, naming fn, says
 * what was not searched.  Inside SPI.
 */
void
MnemoSearchLine(MnemoSearchRun *run, MnemoLine *line, const char *fn)
{
	bool		drain = MnemoCanDrainSearch();
	char	  **owners;
	int			nowners;
	int			i;

	/* a regular expression reads the messages themselves: no index to feed */
	owners = LineOwners(line, &nowners);
	for (i = 0; i < nowners && !run->regex; i++)
	{
		if (drain)
			(void) MnemoDrainSearch(owners[i], line->tenant, MNEMO_SEARCH_SLICE);
		run->queued += QueuedMessages(owners[i], line->tenant);
	}
	run->direct_left = run->regex ? MNEMO_REGEX_SCAN : MNEMO_SEARCH_DIRECT;
	for (i = line->nsegs - 1; i >= 0 && run->nhits < run->want; i--)
		SearchSegment(run, &line->segs[i]);

	if (run->regex && run->unsearched > 0)
		ereport(NOTICE,
				(errmsg("%s: %d messages of session \"%s\" were matched against the regular expression, "
						INT64_FORMAT " older ones were not",
						fn, MNEMO_REGEX_SCAN, run->session_id, run->unsearched),
				 errdetail("A regular expression reads the newest %d messages of what it searches.",
						   MNEMO_REGEX_SCAN),
				 errhint("Search words, which the index finds in the whole log, or pass the page's last seq as before_seq.")));
	else if (run->unsearched > 0 || run->queued > 0)
		ereport(NOTICE,
				(errmsg("%s: " INT64_FORMAT " messages of session \"%s\" are not yet indexed "
						"and were not searched, " INT64_FORMAT " changed ones were searched as indexed",
						fn, run->unsearched, run->session_id, run->queued),
				 drain ? errdetail("A search indexes at most %d waiting messages of each session and reads the newest %d not yet indexed directly.",
								   MNEMO_SEARCH_SLICE, MNEMO_SEARCH_DIRECT)
				 : errdetail("A read-only transaction or a standby does not index; the search reads the newest %d messages not yet indexed directly.",
							 MNEMO_SEARCH_DIRECT),
				 errhint("mnemo.index_search() indexes them on the primary; call it until mnemo.search_pending() is 0.")));
}

PG_FUNCTION_INFO_V1(mnemo_search_history);
Datum
mnemo_search_history(PG_FUNCTION_ARGS)
{
	char	   *session_id = MnemoRequireTextArg(fcinfo, 0, "session_id");
	char	   *query = MnemoRequireTextArg(fcinfo, 1, "query");
	int32		limit = DatumGetInt32(MnemoRequireArg(fcinfo, 2, "limit"));
	bool		ranked = DatumGetBool(MnemoRequireArg(fcinfo, 3, "ranked"));
	MnemoCall	call;
	MnemoLine	line;
	MnemoSearchRun run = {0};

	if (limit < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("limit must not be negative")));
	run.session_id = session_id;
	run.query = CStringGetTextDatum(query);
	run.lo = 0;
	run.hi = PG_INT64_MAX;
	run.want = ranked ? Max(limit, MNEMO_RANK_CANDIDATES) : limit;

	MnemoConnect(&call);
	MnemoReadLine(session_id, PG_INT64_MAX, false, false, &line);
	run.tenant = line.tenant;
	if (MnemoSearchWords(&run, query) > 0 && limit > 0)
		MnemoSearchLine(&run, &line, "search_history");
	if (ranked && run.nhits > 0)
	{
		if (run.nhits == run.want)
			ereport(NOTICE,
					(errmsg("search_history: ranked the newest %d matching messages of session \"%s\"; older ones, if any, were not ranked",
							run.want, session_id)));
		qsort(run.hits, run.nhits, sizeof(MnemoSearchHit), CompareHits);
	}
	MnemoPrepare(&hit_plan,
				 "SELECT m.id, m.seq, m.role, " SEARCH_IN_CONTEXT ", "
				 "ts_headline('simple'::regconfig, left(" SEARCH_DOC ", "
				 CppAsString2(MNEMO_SNIPPET_CHARS) "), " SEARCH_QUERY ", "
				 "'MaxWords=20, MinWords=5, MaxFragments=2'), h.rank "
				 SEARCH_HIT_ROWS,
				 SEARCH_HIT_NARGS, (Oid[]) {SEARCH_HIT_TYPES});
	MnemoReturnHits(fcinfo, &run, limit, hit_plan, NULL, 0);
	MnemoFinish(&call);
	return (Datum) 0;
}
