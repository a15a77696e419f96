/*
 * bench/scale_search.c
 *		search_history at 10k, 100k (and 1M) messages: does a search cost
 *		its page, or the session (issue 36)?  And recall_search (issue 35).
 *
 * For each size N, one session of N messages appended with append_messages
 * and never indexed (an import, a follower of a live log), and a plain
 * table of the same texts with its own GIN index, filled in the same run:
 *
 *   first      the first search_history after the appends: the whole
 *              session is a backlog
 *   backlog    the median of the next 10 searches, each still facing a
 *              backlog (every search indexes at most 500 of it)
 *   index      mnemo.index_search until search_pending is 0: the messages
 *              still waiting after those searches, per second
 *   page       the median search once all is indexed, newest first
 *   ranked     the same, ranked => true (the newest 1,000 matches ranked)
 *   recall     recall_search of the word, 20 hits with their covering
 *              summaries (issue 35)
 *   regex      recall_search of a regular expression, 20 hits
 *   plain      the median of the plain table's page: the newest 50 rows
 *              matching, with a ts_headline snippet each
 *
 * The query's word is in one message of ten, so its matches grow with the
 * session (100,000 at 1M).  Printed: the medians in ms, each against plain,
 * then for each operation its largest / smallest median across the sizes
 * (the goal: at most 1.5).
 *
 *   bench/scale_search [--sizes 10000,100000] [--calls 20]
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "common.h"

const char *bench_name = "scale_search";

#define MAX_SIZES 8
#define BATCH 5000
#define LIMIT "50"
#define QUERY "lookahead"

enum
{
	OP_FIRST, OP_BACKLOG, OP_PAGE, OP_RANKED, OP_RECALL, OP_REGEX, OP_PLAIN, NOPS
};
static const char *const op_names[NOPS] = {"first", "backlog", "page", "ranked", "recall", "regex", "plain"};

/* the text of message i, the query's word in one of ten (in a printf format) */
#define MESSAGE_TEXT(i) \
	"'message ' || " i " || ' the parser keeps the last token of the previous line when a " \
	"comment ends the buffer, so the next statement starts one token late' " \
	"|| CASE WHEN " i " %% 10 = 0 THEN ' and the lookahead is stale' ELSE '' END"

/* a ranked search says that it ranked the newest 1,000: known, not printed */
static void
quiet(void *arg, const char *message)
{
	(void) arg;
	(void) message;
}

static double
timed(PGconn *conn, const char *name, int nparams, const char *const *params, int *rows)
{
	double		t0 = now_s();
	PGresult   *res = PQexecPrepared(conn, name, nparams, params, NULL, NULL, 0);
	double		ms = (now_s() - t0) * 1000;

	if (PQresultStatus(res) != PGRES_TUPLES_OK)
		die("%s: %s", name, PQerrorMessage(conn));
	if (rows)
		*rows = PQntuples(res);
	PQclear(res);
	return ms;
}

static long long
value(PGconn *conn, const char *sql)
{
	PGresult   *res = exec_ok(conn, sql);
	long long	v = atoll(PQgetvalue(res, 0, 0));

	PQclear(res);
	return v;
}

static void
load(PGconn *conn, const char *session, const char *plain, long n)
{
	char		sql[1024];
	long		from;

	snprintf(sql, sizeof(sql), "SELECT mnemo.create_session('%s')", session);
	exec_cmd(conn, sql);
	for (from = 1; from <= n; from += BATCH)
	{
		long		to = from + BATCH - 1 < n ? from + BATCH - 1 : n;

		snprintf(sql, sizeof(sql),
				 "SELECT count(*) FROM mnemo.append_messages('%s', "
				 "(SELECT jsonb_agg(jsonb_build_object('role', 'user', 'parts', "
				 "jsonb_build_array(jsonb_build_object('type', 'text', 'text', " MESSAGE_TEXT("i") "))) "
				 "ORDER BY i) FROM generate_series(%ld, %ld) i))",
				 session, from, to);
		exec_cmd(conn, sql);
	}
	snprintf(sql, sizeof(sql),
			 "CREATE TABLE %s (seq bigint PRIMARY KEY, body text NOT NULL, tsv tsvector NOT NULL)",
			 plain);
	exec_cmd(conn, sql);
	snprintf(sql, sizeof(sql), "CREATE INDEX ON %s USING gin (tsv)", plain);
	exec_cmd(conn, sql);
	snprintf(sql, sizeof(sql),
			 "INSERT INTO %s SELECT i, b, to_tsvector('simple', b) "
			 "FROM generate_series(1, %ld) i, LATERAL (SELECT " MESSAGE_TEXT("i") " AS b) t",
			 plain, n);
	exec_cmd(conn, sql);
	snprintf(sql, sizeof(sql), "VACUUM ANALYZE %s", plain);
	exec_cmd(conn, sql);
}

int
main(int argc, char **argv)
{
	long		sizes[MAX_SIZES];
	int			nsizes = 0;
	int			calls = 20;
	double		med[MAX_SIZES][NOPS];
	double		index_rate[MAX_SIZES];
	long long	pending[MAX_SIZES];
	char		session[MAX_SIZES][64];
	char		plain[MAX_SIZES][64];
	double	   *v[MAX_SIZES];
	int			backlog_calls;
	const char *list = "10000,100000";
	PGconn	   *conn;
	int			s;
	int			op;

	for (int i = 1; i < argc; i++)
	{
		if (strcmp(argv[i], "--sizes") == 0 && i + 1 < argc)
			list = argv[++i];
		else if (strcmp(argv[i], "--calls") == 0 && i + 1 < argc)
			calls = atoi(argv[++i]);
		else
			die("usage: bench/scale_search [--sizes N,N,...] [--calls N]");
	}
	for (const char *p = list; *p && nsizes < MAX_SIZES;)
	{
		char	   *end;

		sizes[nsizes++] = strtol(p, &end, 10);
		p = *end == ',' ? end + 1 : end;
		if (sizes[nsizes - 1] <= 0)
			die("bad size in %s", list);
	}
	if (calls < 1)
		die("--calls must be at least 1");
	for (s = 0; s < nsizes; s++)
		v[s] = malloc(sizeof(double) * calls);

	conn = connect_db();
	PQsetNoticeProcessor(conn, quiet, NULL);
	print_server(conn, (const char *const[]) {"shared_buffers", "jit", NULL});
	printf("\nquery: '" QUERY "' (in one message of ten), limit " LIMIT ", %d calls a median\n\n", calls);
	prepare(conn, "search", "SELECT * FROM mnemo.search_history($1, '" QUERY "', " LIMIT ")");
	prepare(conn, "ranked", "SELECT * FROM mnemo.search_history($1, '" QUERY "', " LIMIT ", ranked => true)");
	prepare(conn, "recall", "SELECT * FROM mnemo.recall_search($1, '" QUERY "', \"limit\" => 20)");
	prepare(conn, "regex", "SELECT * FROM mnemo.recall_search($1, '" QUERY " is [a-z]+', regex => true, \"limit\" => 20)");

	/*
	 * Every size is loaded first, and then each figure is taken at every
	 * size in turn, call by call: the host's load drifts (other work on a
	 * shared machine), and interleaving puts the same drift in each size's
	 * median, so the ratios across sizes hold.
	 */
	for (s = 0; s < nsizes; s++)
	{
		snprintf(session[s], sizeof(session[s]), "scale_search_%ld", sizes[s]);
		snprintf(plain[s], sizeof(plain[s]), "plain_search_%ld", sizes[s]);
		load(conn, session[s], plain[s], sizes[s]);
		printf("loaded %ld messages\n", sizes[s]);
		fflush(stdout);
	}
	exec_cmd(conn, "ANALYZE mnemo.log");
	for (s = 0; s < nsizes; s++)
	{
		const char *params[1] = {session[s]};
		int			rows;

		med[s][OP_FIRST] = timed(conn, "search", 1, params, &rows);
		if (rows != 50 && sizes[s] >= 500)
			die("the first search of %s found %d rows", session[s], rows);
	}
	/* at most 10: each indexes 500, and a backlog must be left at 10,000 */
	backlog_calls = calls < 10 ? calls : 10;
	for (int c = 0; c < backlog_calls; c++)
		for (s = 0; s < nsizes; s++)
			v[s][c] = timed(conn, "search", 1, (const char *const[]) {session[s]}, NULL);
	for (s = 0; s < nsizes; s++)
		med[s][OP_BACKLOG] = median(v[s], backlog_calls);

	for (s = 0; s < nsizes; s++)
	{
		char		sql[256];
		char		index_sql[256];
		double		t0;

		snprintf(sql, sizeof(sql), "SELECT mnemo.search_pending('%s')", session[s]);
		snprintf(index_sql, sizeof(index_sql), "SELECT mnemo.index_search('%s', 100000)", session[s]);
		pending[s] = value(conn, sql);
		t0 = now_s();
		while (value(conn, sql) > 0)
			(void) value(conn, index_sql);
		index_rate[s] = pending[s] > 0 ? (double) pending[s] / (now_s() - t0) : 0;
	}
	exec_cmd(conn, "VACUUM ANALYZE mnemo.search_documents");

	for (s = 0; s < nsizes; s++)
	{
		char		sql[1024];
		char		name[32];

		snprintf(name, sizeof(name), "plain_%d", s);
		snprintf(sql, sizeof(sql),
				 "SELECT seq, ts_headline('simple', body, q, 'MaxWords=20, MinWords=5, MaxFragments=2') "
				 "FROM %s, websearch_to_tsquery('simple', '" QUERY "') q "
				 "WHERE tsv @@ q ORDER BY seq DESC LIMIT " LIMIT, plain[s]);
		prepare(conn, name, sql);
	}
	for (op = OP_PAGE; op < NOPS; op++)
	{
		static const char *const stmt[NOPS] = {
			[OP_PAGE] = "search", [OP_RANKED] = "ranked", [OP_RECALL] = "recall", [OP_REGEX] = "regex"
		};

		for (int c = 0; c < calls; c++)
			for (s = 0; s < nsizes; s++)
			{
				char		name[32];

				if (op == OP_PLAIN)
				{
					snprintf(name, sizeof(name), "plain_%d", s);
					v[s][c] = timed(conn, name, 0, NULL, NULL);
				}
				else
					v[s][c] = timed(conn, stmt[op], 1, (const char *const[]) {session[s]}, NULL);
			}
		for (s = 0; s < nsizes; s++)
			med[s][op] = median(v[s], calls);
	}
	for (s = 0; s < nsizes; s++)
		printf("%9ld messages: first %.2f ms, backlog %.2f ms, index %.0f msgs/s (of %lld left), "
			   "page %.2f ms, ranked %.2f ms, recall %.2f ms, regex %.2f ms, plain %.2f ms\n",
			   sizes[s], med[s][OP_FIRST], med[s][OP_BACKLOG], index_rate[s], pending[s],
			   med[s][OP_PAGE], med[s][OP_RANKED], med[s][OP_RECALL], med[s][OP_REGEX],
			   med[s][OP_PLAIN]);

	printf("\n| messages |");
	for (op = 0; op < NOPS; op++)
		printf(" %s ms |", op_names[op]);
	printf(" page / plain |\n|---|");
	for (op = 0; op <= NOPS; op++)
		printf("---|");
	printf("\n");
	for (s = 0; s < nsizes; s++)
	{
		printf("| %ld |", sizes[s]);
		for (op = 0; op < NOPS; op++)
			printf(" %.2f |", med[s][op]);
		printf(" %.2f |\n", med[s][OP_PAGE] / med[s][OP_PLAIN]);
	}
	printf("\nlargest / smallest median across sizes (goal <= 1.5):");
	for (op = 0; op < NOPS; op++)
	{
		double		lo = med[0][op];
		double		hi = med[0][op];

		for (s = 1; s < nsizes; s++)
		{
			lo = med[s][op] < lo ? med[s][op] : lo;
			hi = med[s][op] > hi ? med[s][op] : hi;
		}
		printf(" %s %.2f%s", op_names[op], hi / lo, op + 1 < NOPS ? "," : "\n");
	}
	printf("largest size / smallest size (1M/10k with the 1M knob):");
	for (op = 0; op < NOPS; op++)
		printf(" %s %.2f%s", op_names[op], med[nsizes - 1][op] / med[0][op], op + 1 < NOPS ? "," : "\n");
	for (s = 0; s < nsizes; s++)
		free(v[s]);
	PQfinish(conn);
	return 0;
}
