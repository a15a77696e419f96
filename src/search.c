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
 * Appends do not index (search_index.c): a search first drains its session's
 * queue, so it finds everything appended before it, unless it runs where it
 * may not write (a standby, a read-only transaction).  There it searches what
 * is indexed and says with a NOTICE how many messages are not yet
 * (mnemo.search_pending() tells the same).
 *
 * One row per message: its best-ranked part gives the rank (ts_rank) and the
 * snippet (ts_headline, computed only for the rows returned), plus whether
 * the message is still in the live context view.  Rows come by rank, then
 * newest first.  A query with no words (empty, punctuation only) finds
 * nothing, without notices.
 *
 * A fork, or a session after a resume, searches its live line (lineage.c):
 * each segment with its own statement on the session holding it (every
 * session of the line drained first, in id order: DrainLine), "in context"
 * meaning in the searching session's view; the hits are then merged by
 * rank.  Discarded messages are not searched.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "funcapi.h"
#include "utils/builtins.h"

#include "mnemo.h"
#include "search.h"

static SPIPlanPtr words_plan;
static SPIPlanPtr search_plan;
static SPIPlanPtr view_plan;
static SPIPlanPtr segment_plan;

/* the hits of one message, best part first; $1 the session holding the rows */
#define SEARCH_HITS(in_context, range) \
	"SELECT t.message_id, t.seq, t.role, " in_context ", " \
	"ts_headline('simple'::regconfig, " \
	"            (SELECT left(" SEARCH_DOC ", " CppAsString2(MNEMO_SNIPPET_CHARS) ") " \
	"             FROM mnemo.message_parts p " \
	"             WHERE p.session_id = $1 AND p.message_id = t.message_id " \
	"             AND p.part_index = t.part_index), " SEARCH_QUERY ", " \
	"'MaxWords=20, MinWords=5, MaxFragments=2'), t.rank " \
	"FROM (SELECT h.message_id, h.part_index, m.seq, m.role, h.rank " \
	"      FROM (SELECT DISTINCT ON (d.message_id) d.message_id, d.part_index, " \
	"            ts_rank(d.tsv, " SEARCH_QUERY ") AS rank " \
	"            FROM mnemo.search_documents d " \
	"            WHERE d.session_id = $1 AND d.tsv @@ " SEARCH_QUERY \
	"            ORDER BY d.message_id, rank DESC, d.part_index) h " \
	"      JOIN mnemo.messages m ON m.session_id = $1 AND m.id = h.message_id " range \
	"      ORDER BY h.rank DESC, m.seq DESC LIMIT $3) t " \
	"ORDER BY t.rank DESC, t.seq DESC"

typedef struct SearchHit
{
	SPITupleTable *table;
	uint64		row;
	float4		rank;
	int64		seq;
} SearchHit;

static int
CompareHits(const void *a, const void *b)
{
	const SearchHit *x = a;
	const SearchHit *y = b;

	if (x->rank != y->rank)
		return x->rank > y->rank ? -1 : 1;
	return x->seq > y->seq ? -1 : x->seq < y->seq ? 1 : 0;
}

/*
 * The item ids of the searching session's view (values[0]), a text[] that
 * says in_context of each hit: one range scan of the view, as the view has
 * no index by item id (an append would pay for it).
 */
static Datum
ViewIds(Datum *values)
{
	bool		isnull;

	MnemoPrepare(&view_plan,
				 "SELECT coalesce(array_agg(c.item_id), '{}') FROM " MNEMO_CONTEXT_VIEW " c",
				 1, (Oid[]) {TEXTOID});
	MnemoExecute(view_plan, values, NULL, true, 1);
	return SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
}

/*
 * The search of a line of several segments (see the header comment): the
 * searching session's view first (one statement), then each segment.
 */
static void
SearchLine(FunctionCallInfo fcinfo, MnemoLine *line, Datum *values)
{
	SearchHit  *hits = NULL;
	int			nhits = 0;
	int			maxhits = 0;
	Datum		in_view;
	bool		isnull;
	uint64		n;
	uint64		row;
	int			i;
	int32		limit = DatumGetInt32(values[2]);

	in_view = ViewIds(values);
	MnemoPrepare(&segment_plan,
				 SEARCH_HITS("t.message_id = ANY ($6)", "AND m.seq >= $4 AND m.seq <= $5"),
				 6, (Oid[]) {TEXTOID, TEXTOID, INT4OID, INT8OID, INT8OID, TEXTARRAYOID});
	for (i = 0; i < line->nsegs; i++)
	{
		MnemoSegment *seg = &line->segs[i];

		n = MnemoExecute(segment_plan,
						 (Datum[]) {CStringGetTextDatum(seg->owner), values[1], values[2],
						 Int64GetDatum(seg->from), Int64GetDatum(seg->to), in_view},
						 NULL, false, 0);
		for (row = 0; row < n; row++)
		{
			if (nhits == maxhits)
			{
				maxhits = Max(16, maxhits * 2);
				hits = hits ? repalloc(hits, sizeof(SearchHit) * maxhits)
					: palloc(sizeof(SearchHit) * maxhits);
			}
			hits[nhits].table = SPI_tuptable;
			hits[nhits].row = row;
			hits[nhits].seq = MnemoGetInt64(row, 2, NULL);
			hits[nhits].rank = DatumGetFloat4(SPI_getbinval(SPI_tuptable->vals[row],
															SPI_tuptable->tupdesc, 6, &isnull));
			nhits++;
		}
	}
	if (nhits > 0)
		qsort(hits, nhits, sizeof(SearchHit), CompareHits);
	InitMaterializedSRF(fcinfo, 0);
	for (i = 0; i < nhits && i < limit; i++)
		MnemoResultAppend(fcinfo, hits[i].table, hits[i].row, 1);
}

static int
CompareOwners(const void *a, const void *b)
{
	return strcmp(*(char *const *) a, *(char *const *) b);
}

/*
 * Drain every session of the line -- its own, then what it inherited -- in
 * the order of their ids.  A drain locks its session's progress row to
 * commit, and two searches of related forks drain the same sessions: in
 * line order they would take those rows in opposite orders (a fork of a
 * fork: itself, the root, its parent; its parent: itself, the root) and
 * deadlock.
 */
static void
DrainLine(MnemoLine *line)
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
	for (i = 0; i < n; i++)
		(void) MnemoDrainSearch(owners[i]);
}

PG_FUNCTION_INFO_V1(mnemo_search_history);
Datum
mnemo_search_history(PG_FUNCTION_ARGS)
{
	char	   *session_id = MnemoRequireTextArg(fcinfo, 0, "session_id");
	char	   *query = MnemoRequireTextArg(fcinfo, 1, "query");
	int32		limit = DatumGetInt32(MnemoRequireArg(fcinfo, 2, "limit"));
	Oid			types[3] = {TEXTOID, TEXTOID, INT4OID};
	Datum		values[4];
	MnemoCall	call;
	MnemoLine	line;
	int64		nodes;

	if (limit < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("limit must not be negative")));

	/*
	 * Checked before the query is parsed: PostgreSQL's text search parses
	 * and evaluates it by recursion, and twenty thousand words exhaust the
	 * stack (54001) deep inside it.
	 */
	if (strlen(query) > MNEMO_MAX_SEARCH_QUERY)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("query is %zu bytes, more than %d", strlen(query), MNEMO_MAX_SEARCH_QUERY)));
	values[0] = CStringGetTextDatum(session_id);
	values[1] = CStringGetTextDatum(query);
	values[2] = Int32GetDatum(limit);

	MnemoConnect(&call);
	MnemoReadLine(session_id, PG_INT64_MAX, false, false, &line);

	/*
	 * A query without a single word (0 here) finds nothing; asking the
	 * server would only add notices about an empty tsquery.  A snippet costs
	 * ts_headline
	 * time that grows with the query's terms times the matches in the part
	 * (sixteen phrases of a word repeated through a 100 kB part: a minute),
	 * so a query has at most MNEMO_MAX_SEARCH_NODES terms and operators and
	 * a snippet is taken from a part's first MNEMO_SNIPPET_CHARS characters.
	 */
	MnemoPrepare(&words_plan,
				 "SELECT CASE WHEN to_tsvector('simple'::regconfig, " SEARCH_CLEAN("$1") ") = ''::tsvector "
				 "THEN 0 ELSE numnode(websearch_to_tsquery('simple'::regconfig, " SEARCH_CLEAN("$1") ")) END",
				 1, &types[1]);
	MnemoExecute(words_plan, &values[1], NULL, true, 1);
	nodes = MnemoGetInt64(0, 1, NULL);
	if (nodes == 0)
	{
		InitMaterializedSRF(fcinfo, 0);
		MnemoFinish(&call);
		return (Datum) 0;
	}
	if (nodes > MNEMO_MAX_SEARCH_NODES)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("query has " INT64_FORMAT " terms and operators, more than %d",
						nodes, MNEMO_MAX_SEARCH_NODES),
				 errhint("A query of %d words is within the limit.", (MNEMO_MAX_SEARCH_NODES + 1) / 2)));

	if (MnemoCanDrainSearch())
		DrainLine(&line);
	else
	{
		int64		pending = MnemoSearchPending(session_id, false);

		if (pending > 0)
			ereport(NOTICE,
					(errmsg("search_history: " INT64_FORMAT " messages of session \"%s\" are not yet indexed",
							pending, session_id),
					 errdetail("A read-only transaction or a standby does not index; the search covers what is indexed."),
					 errhint("Call mnemo.index_search() on the primary.")));
	}

	if (line.nsegs > 1 || line.is_fork)
	{
		SearchLine(fcinfo, &line, values);
		MnemoFinish(&call);
		return (Datum) 0;
	}
	values[3] = ViewIds(values);
	MnemoPrepare(&search_plan, SEARCH_HITS("t.message_id = ANY ($4)", ""),
				 4, (Oid[]) {TEXTOID, TEXTOID, INT4OID, TEXTARRAYOID});
	MnemoExecuteResult(fcinfo, search_plan, values, NULL, false);
	MnemoFinish(&call);
	return (Datum) 0;
}
