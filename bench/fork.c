/*
 * bench/fork.c
 *		The cost of mnemo.fork_session() as history grows (issue 16): a fork
 *		refers to its source's messages instead of copying them, so its time
 *		should follow the size of the context view, not of the history.
 *
 * Load, per size (default 1,000 and 100,000 messages): one session filled by
 * mnemo.append_messages() in batches of BATCH messages (user / assistant
 * turns of a text part each), and after every batch compacted the way a
 * compaction engine would: leaf summaries (mnemo.commit_summary) over the
 * oldest messages of the view until it is back to VIEW (200) items, and a
 * condensation of the summaries when more than MAX_SUMMARIES pile up; then
 * turns up to VIEW items exactly.  Then VACUUM ANALYZE and CHECKPOINT.
 *
 * Timed, per size, alternating one of each, CALLS times after WARMUP:
 *   fork   SELECT mnemo.fork_session(session, '<last seq>', NULL): a fork at
 *          the session's end, so the whole history is inherited and the
 *          view (200 items) is written for the child;
 *   copy   the physical copy of that prefix, cubepi's approach: in one
 *          transaction, INSERT INTO a plain table SELECT the session's
 *          messages with seq <= the fork point, and INSERT ... SELECT their
 *          parts (the copy tables are truncated, untimed, after each).
 * Medians are reported, with the ratios fork(largest) / fork(smallest)
 * (target <= 1.5: flat in history) and copy / fork at each size, and the
 * bytes written per fork and per copy: WAL bytes (pg_current_wal_lsn before
 * and after the timed calls of one kind, over their count).
 *
 * Usage: bench/fork [--sizes N,N,...] [--calls N] [--warmup N]
 * Connects with the PG* environment variables; the database must have the
 * mnemo extension.  Creates sessions named fork_<ms>_<size> and their forks.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

const char *bench_name = "bench/fork";

#define BATCH 500
#define VIEW 200
#define MAX_SUMMARIES 20

static int	calls = 50;
static int	warmup = 5;

/* One session of size messages, its view kept near VIEW items (see above). */
static const char *load_sql =
"DO $$\n"
"DECLARE\n"
"  s text := %s; total bigint := %ld; i bigint := 0; k int := 0; n int; ns int; ids text[];\n"
"BEGIN\n"
"  PERFORM mnemo.create_session(s);\n"
"  WHILE i < total LOOP\n"
"    PERFORM mnemo.append_messages(s, (SELECT jsonb_agg(jsonb_build_object(\n"
"        'role', CASE WHEN j %% 2 = 0 THEN 'user' ELSE 'assistant' END,\n"
"        'parts', jsonb_build_array(jsonb_build_object('type', 'text',\n"
"            'text', 'message ' || j || ': ' || repeat('words of a turn ', 12)))) ORDER BY j)\n"
"        FROM generate_series(i, least(i + %d, total) - 1) j));\n"
"    i := least(i + %d, total);\n"
"    LOOP\n"
"      SELECT count(*), count(*) FILTER (WHERE item_type = 'summary') INTO n, ns\n"
"        FROM mnemo.get_context_items(s);\n"
"      EXIT WHEN n <= %d AND ns <= %d;\n"
"      k := k + 1;\n"
"      IF ns > %d THEN\n"
"        SELECT array_agg(item_id ORDER BY position) INTO ids\n"
"          FROM mnemo.get_context_items(s) WHERE item_type = 'summary';\n"
"        PERFORM mnemo.commit_summary(s, s || '_c' || k, 'the summaries so far', 50, ids, 'condensed', 2);\n"
"      ELSE\n"
"        SELECT array_agg(item_id ORDER BY position) INTO ids FROM (\n"
"          SELECT item_id, position FROM mnemo.get_context_items(s) WHERE item_type = 'message'\n"
"           ORDER BY position LIMIT greatest(2, least(100, n - %d + 1))) t;\n"
"        PERFORM mnemo.commit_summary(s, s || '_l' || k, 'a span of turns', 50, ids);\n"
"      END IF;\n"
"    END LOOP;\n"
"  END LOOP;\n"
"  -- the view at VIEW items exactly: turns past the last compaction\n"
"  SELECT count(*) INTO n FROM mnemo.get_context_items(s);\n"
"  IF n < %d THEN\n"
"    PERFORM mnemo.append_messages(s, (SELECT jsonb_agg(jsonb_build_object('role', 'user',\n"
"        'parts', jsonb_build_array(jsonb_build_object('type', 'text', 'text', 'tail ' || j))) ORDER BY j)\n"
"        FROM generate_series(1, %d - n) j));\n"
"  END IF;\n"
"END\n"
"$$";

typedef struct SizeResult
{
	long		size;
	char		session[64];
	char		upto[32];
	int			view;
	double		fork_ms;
	double		copy_ms;
	double		fork_bytes;
	double		copy_bytes;
} SizeResult;

static long long
wal_lsn(PGconn *conn)
{
	PGresult   *res = exec_ok(conn, "SELECT pg_current_wal_insert_lsn() - '0/0'::pg_lsn");
	long long	lsn = atoll(PQgetvalue(res, 0, 0));

	PQclear(res);
	return lsn;
}

static void
load(PGconn *conn, SizeResult *r)
{
	char	   *sql;
	char		quoted[80];
	size_t		cap = strlen(load_sql) + 256;
	PGresult   *res;
	double		t0 = now_s();
	const char *params[1] = {r->session};

	snprintf(quoted, sizeof(quoted), "'%s'", r->session);
	if ((sql = malloc(cap)) == NULL)
		die("out of memory");
	snprintf(sql, cap, load_sql, quoted, r->size, BATCH, BATCH, VIEW, MAX_SUMMARIES, MAX_SUMMARIES,
			 VIEW, VIEW, VIEW);
	exec_cmd(conn, "SET synchronous_commit = off");
	exec_cmd(conn, sql);
	exec_cmd(conn, "RESET synchronous_commit");
	free(sql);
	res = PQexecParams(conn, "SELECT last_seq, (SELECT count(*) FROM mnemo.get_context_items($1)) "
					   "FROM mnemo.get_session($1)", 1, NULL, params, NULL, NULL, 0);
	if (PQresultStatus(res) != PGRES_TUPLES_OK)
		die("get_session: %s", PQerrorMessage(conn));
	snprintf(r->upto, sizeof(r->upto), "%s", PQgetvalue(res, 0, 0));
	r->view = atoi(PQgetvalue(res, 0, 1));
	PQclear(res);
	printf("loaded %s: %ld messages, a view of %d items (%.1f s)\n", r->session, r->size, r->view,
		   now_s() - t0);
	fflush(stdout);
}

static void
call(PGconn *conn, const char *name, int n, const char *const *params)
{
	PGresult   *res = PQexecPrepared(conn, name, n, params, NULL, NULL, 0);

	if (PQresultStatus(res) != PGRES_TUPLES_OK && PQresultStatus(res) != PGRES_COMMAND_OK)
		die("%s: %s", name, PQerrorMessage(conn));
	PQclear(res);
}

static double
timed_fork(PGconn *conn, SizeResult *r)
{
	const char *params[2] = {r->session, r->upto};
	double		t0 = now_s();

	call(conn, "fork", 2, params);
	return (now_s() - t0) * 1000;
}

/* The prefix copied into the hand-written table, as a new session's rows. */
static void
copy_prefix(PGconn *conn, SizeResult *r)
{
	static long copies;
	char		copy_id[64];
	const char *params[3] = {r->session, r->upto, copy_id};

	snprintf(copy_id, sizeof(copy_id), "copy_%ld", ++copies);
	call(conn, "copy", 3, params);
}

static double
timed_copy(PGconn *conn, SizeResult *r)
{
	double		t0 = now_s();
	double		ms;

	copy_prefix(conn, r);
	ms = (now_s() - t0) * 1000;
	exec_cmd(conn, "TRUNCATE bench_fork_copy");
	return ms;
}

static void
measure(PGconn *conn, SizeResult *r)
{
	double	   *forks = malloc(sizeof(double) * calls);
	double	   *copies = malloc(sizeof(double) * calls);
	long long	lsn;
	int			i;

	if (!forks || !copies)
		die("out of memory");
	for (i = 0; i < warmup; i++)
	{
		(void) timed_fork(conn, r);
		(void) timed_copy(conn, r);
	}
	/* timed alternately, so drift hits both; bytes from separate runs */
	for (i = 0; i < calls; i++)
	{
		forks[i] = timed_fork(conn, r);
		copies[i] = timed_copy(conn, r);
	}
	r->fork_ms = median(forks, calls);
	r->copy_ms = median(copies, calls);
	lsn = wal_lsn(conn);
	for (i = 0; i < calls; i++)
		(void) timed_fork(conn, r);
	r->fork_bytes = (double) (wal_lsn(conn) - lsn) / calls;
	lsn = wal_lsn(conn);
	for (i = 0; i < calls; i++)
		copy_prefix(conn, r);
	r->copy_bytes = (double) (wal_lsn(conn) - lsn) / calls;
	exec_cmd(conn, "TRUNCATE bench_fork_copy");
	free(forks);
	free(copies);
}

int
main(int argc, char **argv)
{
	const char *sizes_arg = "1000,100000";
	SizeResult	results[16];
	int			nsizes = 0;
	PGconn	   *conn;
	char	   *sizes;
	char	   *tok;
	long long	ms = unix_ms();
	int			i;

	for (i = 1; i < argc; i++)
	{
		if (strcmp(argv[i], "--sizes") == 0 && i + 1 < argc)
			sizes_arg = argv[++i];
		else if (strcmp(argv[i], "--calls") == 0 && i + 1 < argc)
			calls = atoi(argv[++i]);
		else if (strcmp(argv[i], "--warmup") == 0 && i + 1 < argc)
			warmup = atoi(argv[++i]);
		else
			die("usage: bench/fork [--sizes N,N,...] [--calls N] [--warmup N]");
	}
	if (calls < 1 || warmup < 0)
		die("--calls must be at least 1, --warmup not negative");
	if ((sizes = strdup(sizes_arg)) == NULL)
		die("out of memory");
	for (tok = strtok(sizes, ","); tok && nsizes < 16; tok = strtok(NULL, ","))
	{
		memset(&results[nsizes], 0, sizeof(SizeResult));
		results[nsizes].size = atol(tok);
		if (results[nsizes].size < 2)
			die("a size must be at least 2 messages");
		snprintf(results[nsizes].session, sizeof(results[nsizes].session), "fork_%lld_%ld", ms,
				 results[nsizes].size);
		nsizes++;
	}
	free(sizes);
	if (nsizes == 0)
		die("no sizes");

	conn = connect_db();
	print_server(conn, (const char *const[]) {"shared_buffers", "synchronous_commit", NULL});
	printf("\n");
	/*
	 * The physical copy a user would write by hand (cubepi's fork): the
	 * prefix's messages, their parts as one jsonb array each, into a plain
	 * table with only its own key.
	 */
	exec_cmd(conn, "DROP TABLE IF EXISTS bench_fork_copy");
	exec_cmd(conn, "CREATE TABLE bench_fork_copy (id bigserial PRIMARY KEY, session_id text, "
			 "seq bigint, role text, content jsonb, created_at bigint)");
	prepare(conn, "fork", "SELECT id FROM mnemo.fork_session($1, $2, NULL)");
	prepare(conn, "copy",
			"INSERT INTO bench_fork_copy (session_id, seq, role, content, created_at) "
			"SELECT $3, m.seq, m.role, (SELECT jsonb_agg(p.content ORDER BY p.part_index) "
			"FROM mnemo.message_parts p WHERE p.session_id = $1 AND p.seq = m.seq), "
			"m.created_at FROM mnemo.messages m WHERE m.session_id = $1 AND m.seq <= $2::bigint");
	for (i = 0; i < nsizes; i++)
		load(conn, &results[i]);
	exec_cmd(conn, "VACUUM ANALYZE");
	exec_cmd(conn, "CHECKPOINT");
	for (i = 0; i < nsizes; i++)
		measure(conn, &results[i]);

	printf("\nfork_session at the end of the session (view of ~%d items) against a physical copy\n"
		   "of the prefix (INSERT ... SELECT of its messages, parts as jsonb, into a plain table), medians of %d:\n", VIEW, calls);
	printf("%10s %6s %10s %10s %10s %14s %14s\n", "messages", "view", "fork ms", "copy ms",
		   "copy/fork", "fork bytes", "copy bytes");
	for (i = 0; i < nsizes; i++)
		printf("%10ld %6d %10.3f %10.3f %10.1f %14.0f %14.0f\n", results[i].size, results[i].view,
			   results[i].fork_ms, results[i].copy_ms, results[i].copy_ms / results[i].fork_ms,
			   results[i].fork_bytes, results[i].copy_bytes);
	printf("fork time, largest / smallest history: %.2f (target <= 1.5)\n",
		   results[nsizes - 1].fork_ms / results[0].fork_ms);
	PQfinish(conn);
	return 0;
}
