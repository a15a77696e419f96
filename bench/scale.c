/*
 * bench/scale.c
 *		Flat at any size (issue 36): the session operations on uncompacted
 *		sessions of growing size, each against a hand-written plain
 *		table read in the same run.
 *
 *   bench/scale [--sizes 10000,100000] [--calls N]
 *
 * One session per size is filled by append_messages, BATCH messages a
 * call, and never compacted; then every operation is timed CALLS times on
 * each, the sizes taken in turn call by call (so that the host's load, which
 * drifts over minutes, weighs on every size alike), and the median printed,
 * with its ratio to the plain table's "newest rows to 100,000 tokens" on
 * the same size.  The last column is the operation's median at the largest
 * size over its median at the smallest: the goal is at most 1.5 for
 * each.
 *
 * commit_summary summarises the first leaf (the oldest LEAF messages) in a
 * transaction that is rolled back, so that every call meets the same
 * uncompacted session.  The plain table holds the same messages, keyed
 * (session_id, seq) and nothing else; its read is a PL/pgSQL loop over
 * them newest first that stops at the budget, one round trip as
 * build_context is, planned as the index read backwards it is meant to be
 * (a plan made for one session's size read another's whole and sorted it).
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "common.h"

const char *bench_name = "bench/scale";

#define BATCH 1000
#define LEAF 20
#define MAX_SIZES 8

/* about 40 and 60 tokens, as a chat's turns (bench/context_load.c's) */
static const char user_text[] =
	"The parser test still fails on a trailing comment at end of input; can you "
	"look at next_line() and check whether the lookahead is reset before it returns?";
static const char assistant_text[] =
	"I looked at the failing test: the parser keeps the last token of the previous "
	"line when a comment ends the buffer, so the next statement starts one token "
	"late. I will read the function and the callers that depend on it.";

enum
{
	OP_BUILD_100K,
	OP_BUILD_1K,
	OP_TURN,
	OP_REPORT,
	OP_COMMIT,
	OP_HISTORY,
	OP_PLAIN,
	NOPS
};

static const char *const op_names[NOPS] = {
	"build_context(s, 100000)",
	"build_context(s, 1000)",
	"turn_context(s, 100000)",
	"context_report(s, 100000)",
	"commit_summary, first leaf",
	"history(s, 50)",
	"plain table, newest to 100k tokens",
};

static const char *const op_sql[NOPS] = {
	"SELECT count(*) FROM mnemo.build_context($1, 100000)",
	"SELECT count(*) FROM mnemo.build_context($1, 1000)",
	"SELECT count(*) FROM mnemo.turn_context($1, 100000)",
	"SELECT omitted_items FROM mnemo.context_report($1, 100000)",
	NULL,						/* see time_commit */
	"SELECT count(*) FROM mnemo.history($1, 50)",
	"SELECT count(*) FROM pg_temp.plain_newest($1, 100000)",
};

static void
load(PGconn *conn, const char *session, long from, long to)
{
	char	   *buf = malloc((size_t) BATCH * 512);
	char		range[64];
	long		seq;

	if (!buf)
		die("out of memory");
	for (seq = from; seq <= to;)
	{
		size_t		len = 0;
		long		end = seq + BATCH - 1 < to ? seq + BATCH - 1 : to;
		const char *params[2] = {session, buf};
		PGresult   *res;

		buf[len++] = '[';
		for (; seq <= end; seq++)
			len += sprintf(buf + len, "%s{\"id\":\"m%ld\",\"role\":\"%s\",\"parts\":[{\"type\":\"text\",\"text\":\"%s\"}]}",
						   buf[len - 1] == '[' ? "" : ",", seq, seq % 2 ? "user" : "assistant",
						   seq % 2 ? user_text : assistant_text);
		buf[len++] = ']';
		buf[len] = '\0';
		res = PQexecParams(conn, "SELECT count(*) FROM mnemo.append_messages($1, $2::jsonb)",
						   2, NULL, params, NULL, NULL, 0);
		if (PQresultStatus(res) != PGRES_TUPLES_OK)
			die("append_messages: %s", PQerrorMessage(conn));
		PQclear(res);
	}
	snprintf(range, sizeof(range), "%ld, %ld", from, to);
	{
		const char *params[3] = {session, NULL, NULL};
		char		f[32],
					t[32];
		PGresult   *res;

		snprintf(f, sizeof(f), "%ld", from);
		snprintf(t, sizeof(t), "%ld", to);
		params[1] = f;
		params[2] = t;
		res = PQexecParams(conn,
						   "INSERT INTO plain_messages SELECT $1, g, "
						   "CASE WHEN g % 2 = 1 THEN 'user' ELSE 'assistant' END, "
						   "CASE WHEN g % 2 = 1 THEN $4 ELSE $5 END, "
						   "mnemo.estimate_tokens(CASE WHEN g % 2 = 1 THEN $4 ELSE $5 END) "
						   "FROM generate_series($2::bigint, $3::bigint) g",
						   5, NULL, (const char *[]) {params[0], params[1], params[2], user_text, assistant_text},
						   NULL, NULL, 0);
		if (PQresultStatus(res) != PGRES_COMMAND_OK)
			die("plain table (%s): %s", range, PQerrorMessage(conn));
		PQclear(res);
	}
	free(buf);
}

/* One call of op on session, in ms. */
static double
time_op(PGconn *conn, int op, const char *session)
{
	double		start = now_s();
	const char *params[1] = {session};
	PGresult   *res;

	{

		if (op == OP_COMMIT)
		{
			exec_cmd(conn, "BEGIN");
			res = PQexecPrepared(conn, "commit", 1, params, NULL, NULL, 0);
			if (PQresultStatus(res) != PGRES_TUPLES_OK)
				die("commit_summary: %s", PQerrorMessage(conn));
			PQclear(res);
			exec_cmd(conn, "ROLLBACK");
		}
		else
		{
			res = PQexecPrepared(conn, op_names[op], 1, params, NULL, NULL, 0);
			if (PQresultStatus(res) != PGRES_TUPLES_OK)
				die("%s: %s", op_names[op], PQerrorMessage(conn));
			PQclear(res);
		}
	}
	return (now_s() - start) * 1000;
}

int
main(int argc, char **argv)
{
	long		sizes[MAX_SIZES];
	int			nsizes = 0;
	int			calls = 20;
	double		ms[MAX_SIZES][NOPS];
	double	   *t;
	char		sessions[MAX_SIZES][32];
	char		commit_sql[1024];
	size_t		len;
	PGconn	   *conn;
	int			i;
	int			c;
	int			op;

	{
		char	   *spec = "10000,100000";
		char	   *tok;

		for (i = 1; i < argc; i++)
		{
			if (strcmp(argv[i], "--sizes") == 0 && i + 1 < argc)
				spec = argv[++i];
			else if (strcmp(argv[i], "--calls") == 0 && i + 1 < argc)
				calls = atoi(argv[++i]);
			else
				die("usage: bench/scale [--sizes N,N,...] [--calls N]");
		}
		for (tok = strtok(spec, ","); tok && nsizes < MAX_SIZES; tok = strtok(NULL, ","))
			sizes[nsizes++] = atol(tok);
		if (nsizes == 0 || calls < 1)
			die("usage: bench/scale [--sizes N,N,...] [--calls N]");
		for (i = 1; i < nsizes; i++)
			if (sizes[i] <= sizes[i - 1])
				die("--sizes must be ascending");
	}

	conn = connect_db();
	exec_cmd(conn, "SET client_min_messages = warning");
	exec_cmd(conn, "DROP TABLE IF EXISTS plain_messages CASCADE");
	exec_cmd(conn, "CREATE TABLE plain_messages (session_id text, seq bigint, role text, "
			 "content text, tokens integer, PRIMARY KEY (session_id, seq))");
	exec_cmd(conn, "CREATE FUNCTION pg_temp.plain_newest(s text, budget integer) "
			 "RETURNS SETOF plain_messages LANGUAGE plpgsql "
			 "SET enable_seqscan = off SET enable_bitmapscan = off SET enable_sort = off AS $$ "
			 "DECLARE r plain_messages; left_ integer := budget; BEGIN "
			 "FOR r IN SELECT * FROM plain_messages p WHERE p.session_id = s ORDER BY p.seq DESC LOOP "
			 "  EXIT WHEN r.tokens > left_; left_ := left_ - r.tokens; RETURN NEXT r; "
			 "END LOOP; END $$");
	for (i = 0; i < nsizes; i++)
	{
		PGresult   *res;
		const char *params[1] = {sessions[i]};

		snprintf(sessions[i], sizeof(sessions[i]), "scale_%ld", sizes[i]);
		res = PQexecParams(conn, "SELECT mnemo.purge_session($1) FROM mnemo.sessions WHERE id = $1",
						   1, NULL, params, NULL, NULL, 0);
		PQclear(res);
		res = PQexecParams(conn, "SELECT id FROM mnemo.create_session($1)", 1, NULL, params, NULL, NULL, 0);
		if (PQresultStatus(res) != PGRES_TUPLES_OK)
			die("create_session: %s", PQerrorMessage(conn));
		PQclear(res);
	}
	for (op = 0; op < NOPS; op++)
		if (op_sql[op])
			prepare(conn, op_names[op], op_sql[op]);
	len = (size_t) snprintf(commit_sql, sizeof(commit_sql),
							"SELECT mnemo.commit_summary($1, 'scale_leaf', 'the first leaf', 50, ARRAY[");
	for (i = 1; i <= LEAF; i++)
		len += (size_t) snprintf(commit_sql + len, sizeof(commit_sql) - len, "%s'm%d'", i > 1 ? "," : "", i);
	snprintf(commit_sql + len, sizeof(commit_sql) - len, "])");
	prepare(conn, "commit", commit_sql);

	printf("bench/scale: uncompacted sessions, medians of %d calls, ms (x the plain table's read)\n",
		   calls);
	for (i = 0; i < nsizes; i++)
	{
		double		start = now_s();

		load(conn, sessions[i], 1, sizes[i]);
		fprintf(stderr, "bench/scale: %ld messages loaded in %.1f s\n", sizes[i], now_s() - start);
	}
	exec_cmd(conn, "VACUUM ANALYZE plain_messages");
	exec_cmd(conn, "VACUUM ANALYZE mnemo.log");
	t = malloc(sizeof(double) * MAX_SIZES * calls);
	if (!t)
		die("out of memory");
	for (op = 0; op < NOPS; op++)
	{
		for (i = 0; i < nsizes; i++)
			(void) time_op(conn, op, sessions[i]);	/* warm */
		for (c = 0; c < calls; c++)
			for (i = 0; i < nsizes; i++)
				t[i * calls + c] = time_op(conn, op, sessions[i]);
		for (i = 0; i < nsizes; i++)
			ms[i][op] = median(t + i * calls, calls);
	}
	free(t);

	printf("%-36s", "operation");
	for (i = 0; i < nsizes; i++)
		printf(" %20ld", sizes[i]);
	printf("  %9s\n", "last/first");
	for (op = 0; op < NOPS; op++)
	{
		printf("%-36s", op_names[op]);
		for (i = 0; i < nsizes; i++)
		{
			char		cell[64];

			if (op == OP_PLAIN)
				snprintf(cell, sizeof(cell), "%.2f", ms[i][op]);
			else
				snprintf(cell, sizeof(cell), "%.2f (%.1fx)", ms[i][op], ms[i][op] / ms[i][OP_PLAIN]);
			printf(" %20s", cell);
		}
		printf("  %9.2f\n", ms[nsizes - 1][op] / ms[0][op]);
	}
	for (i = 0; i < nsizes; i++)
	{
		PGresult   *res;
		const char *params[1] = {sessions[i]};

		res = PQexecParams(conn, "SELECT mnemo.purge_session($1)", 1, NULL, params, NULL, NULL, 0);
		PQclear(res);
	}
	exec_cmd(conn, "DROP TABLE plain_messages CASCADE");
	PQfinish(conn);
	return 0;
}
