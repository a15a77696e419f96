/*
 * bench/append.c
 *		mnemo's write and load paths against the table a team would write by
 *		hand instead, measured side by side in one run on one cluster.
 *
 * The plain side is what a user writes with libpq without mnemo:
 *
 *   messages(id bigserial primary key, session_id text, seq int, role text,
 *            content text, created_at timestamptz default now(),
 *            unique (session_id, seq))
 *
 * one transaction per turn (BEGIN, one prepared INSERT per message, COMMIT:
 * four round trips for a user + assistant turn), COPY for bulk loads, and a
 * plain SELECT ... ORDER BY seq for the history.  The mnemo side stores the
 * same turn with one mnemo.append_messages() call (one round trip), loads
 * with mnemo.get_messages_flat() (one row per part, what libmnemo reads; the
 * parts assembled as JSON by get_messages_with_parts() are reported beside
 * it).  Both get the same content from the
 * same generator with the same seeds: a user text of about 200 bytes and an
 * assistant text of about 800; in the "tools" mix every third turn also has
 * a tool call and a result of about 4 KB (plain: the call's JSON appended to
 * the assistant row, the result as a third row; mnemo: a completed tool part
 * holding input and output).
 *
 * Measures (each printed as mnemo, plain and mnemo/plain, and written as one
 * JSON line to --json FILE):
 *   turns/s       one turn per call, synchronous_commit on and off; the tools
 *                 mix; 100 messages per call against COPY of 100 rows; W3 =
 *                 4 connections at once, each its own session.  Medians over
 *                 --rounds runs, the two sides alternating (ABBA) so drift
 *                 hits both alike.
 *   bytes/turn    heap, TOAST and each index of every table a side writes,
 *                 grown over --turns turns into fresh tables.
 *   WAL/turn      pg_current_wal_lsn() around the same load, each side alone,
 *                 each after a CHECKPOINT.
 *   load          the full history of a session of 2 x --turns messages, every
 *                 value read; median of --loads calls.
 *   latency       per-turn p50/p99/p99.9/max over --latency-turns turns.
 *
 * Both sides run as an application role, APP_ROLE (SET ROLE after
 * connecting; granted what doc/security.md grants an application role, the
 * plain table, and pg_checkpoint), not as the superuser the environment
 * names: mnemo's calls then pay for its tenancy as an application does (a
 * superuser's tenant check is a shortcut, and row-level security does not
 * apply to it).
 *
 * Usage: bench/append [--turns N] [--rounds R] [--w3 CLIENTS:TURNS]
 *                     [--latency-turns N] [--loads N] [--json FILE]
 * Connects with the PG* environment as a superuser; the database must have
 * mnemo.  Drops and recreates schema plain, and creates APP_ROLE if need be.
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libpq-fe.h>

#include "append_load.h"
#include "common.h"

const char *bench_name = "bench/append";

#define APP_ROLE "mnemo_bench_app"

enum side
{
	PLAIN,
	MNEMO
};

static int	turns = 1000;
static int	rounds = 10;
static int	w3_clients = 4;
static int	w3_turns = 200;
static int	latency_turns = 10000;
static int	loads = 50;
static FILE *json_out;
static int	session_counter;

/* ---- the two sides --------------------------------------------------- */

typedef struct Conn
{
	PGconn	   *conn;
	char		session[64];
	int			seq;			/* plain: the last seq written */
	uint64_t	seed;
} Conn;

static PGresult *
run_prepared(PGconn *conn, const char *name, int n, const char *const *values)
{
	PGresult   *res = PQexecPrepared(conn, name, n, values, NULL, NULL, 0);
	ExecStatusType st = PQresultStatus(res);

	if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK)
		die("%s: %s", name, PQerrorMessage(conn));
	return res;
}

static void
open_conn(Conn *c, bool sync_on)
{
	c->conn = connect_db();
	exec_cmd(c->conn, "SET ROLE " APP_ROLE);
	exec_cmd(c->conn, sync_on ? "SET synchronous_commit = on" : "SET synchronous_commit = off");
	prepare(c->conn, "plain_insert",
			"INSERT INTO plain.messages (session_id, seq, role, content) VALUES ($1, $2, $3, $4)");
	prepare(c->conn, "mnemo_append",
			"SELECT count(*) FROM mnemo.append_messages($1, $2::jsonb)");
	prepare(c->conn, "plain_load",
			"SELECT id, seq, role, content, created_at FROM plain.messages "
			"WHERE session_id = $1 ORDER BY seq");
	prepare(c->conn, "mnemo_load", "SELECT * FROM mnemo.get_messages_flat($1)");
	prepare(c->conn, "mnemo_load_json", "SELECT * FROM mnemo.get_messages_with_parts($1)");
}


static PGresult *
run_params(PGconn *conn, const char *sql, int n, const char *const *values)
{
	PGresult   *res = PQexecParams(conn, sql, n, NULL, values, NULL, NULL, 0);
	ExecStatusType st = PQresultStatus(res);

	if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK)
		die("%s: %s", sql, PQerrorMessage(conn));
	return res;
}

/* A fresh session on c for side (mnemo's are created through the API). */
static void
new_session(Conn *c, enum side side)
{
	snprintf(c->session, sizeof(c->session), "bench_%d_%d_%s", (int) getpid(),
			 ++session_counter, side == MNEMO ? "m" : "p");
	c->seq = 0;
	if (side == MNEMO)
	{
		const char *values[1] = {c->session};

		PQclear(run_params(c->conn, "SELECT mnemo.create_session($1)", 1, values));
	}
}

static void
plain_row(Conn *c, const char *role, const char *content)
{
	char		seq[16];
	const char *values[4] = {c->session, seq, role, content};

	snprintf(seq, sizeof(seq), "%d", ++c->seq);
	PQclear(run_prepared(c->conn, "plain_insert", 4, values));
}

/* Turn i of l on side: plain in one transaction of prepared INSERTs. */
static void
do_turn(Conn *c, enum side side, const Load *l, int i)
{
	if (side == PLAIN)
	{
		exec_cmd(c->conn, "BEGIN");
		plain_row(c, "user", l->user[i]);
		plain_row(c, "assistant", l->assistant[i]);
		if (l->tool[i])
			plain_row(c, "tool", l->tool[i]);
		exec_cmd(c->conn, "COMMIT");
	}
	else
	{
		const char *values[2] = {c->session, l->json[i]};

		PQclear(run_prepared(c->conn, "mnemo_append", 2, values));
	}
}

/* All of l's turns on a fresh session; seconds taken; latencies if asked. */
static double
run_turns(Conn *c, enum side side, const Load *l, double *latency)
{
	double		start;
	int			i;

	new_session(c, side);
	start = now_s();
	for (i = 0; i < l->n; i++)
	{
		double		t0 = latency ? now_s() : 0;

		do_turn(c, side, l, i);
		if (latency)
			latency[i] = now_s() - t0;
	}
	return now_s() - start;
}

/* ---- batches: 100 messages per append_messages call vs COPY ---------- */

/* COPY ... FROM STDIN: the statement, then (after the data) its result. */
static PGresult *
exec_ok_copy(PGconn *conn, const char *sql)
{
	PGresult   *res = PQexec(conn, sql);

	if (PQresultStatus(res) != PGRES_COPY_IN)
		die("%s: %s", sql, PQerrorMessage(conn));
	return res;
}

static PGresult *
copy_result(PGconn *conn)
{
	PGresult   *res = PQgetResult(conn);
	PGresult   *extra;

	if (PQresultStatus(res) != PGRES_COMMAND_OK)
		die("COPY: %s", PQerrorMessage(conn));
	while ((extra = PQgetResult(conn)) != NULL)
		PQclear(extra);
	return res;
}

static double
run_batches(Conn *c, enum side side, const Batches *b)
{
	char	  **data = calloc(b->n, sizeof(char *));
	double		start,
				elapsed;
	int			i;

	if (!data)
		die("out of memory");
	new_session(c, side);
	for (i = 0; side == PLAIN && i < b->n; i++)
		data[i] = copy_for_session(b->copy[i], c->session);
	start = now_s();
	for (i = 0; i < b->n; i++)
	{
		if (side == MNEMO)
		{
			const char *values[2] = {c->session, b->json[i]};

			PQclear(run_prepared(c->conn, "mnemo_append", 2, values));
			continue;
		}
		exec_cmd(c->conn, "BEGIN");
		PQclear(exec_ok_copy(c->conn, "COPY plain.messages (session_id, seq, role, content) FROM STDIN"));
		if (PQputCopyData(c->conn, data[i], (int) strlen(data[i])) != 1 ||
			PQputCopyEnd(c->conn, NULL) != 1)
			die("COPY: %s", PQerrorMessage(c->conn));
		PQclear(copy_result(c->conn));
		exec_cmd(c->conn, "COMMIT");
	}
	elapsed = now_s() - start;
	for (i = 0; i < b->n; i++)
		free(data[i]);
	free(data);
	return elapsed;
}

/* ---- W3: several connections at once, each its own session ----------- */

typedef struct Worker
{
	Conn		c;
	enum side	side;
	const Load *load;
	pthread_barrier_t *barrier;
	pthread_t	thread;
} Worker;

static void *
worker_main(void *arg)
{
	Worker	   *w = arg;
	int			i;

	new_session(&w->c, w->side);
	pthread_barrier_wait(w->barrier);
	for (i = 0; i < w->load->n; i++)
		do_turn(&w->c, w->side, w->load, i);
	return NULL;
}

/* Total turns/s of w3_clients connections running w3_turns turns each. */
static double
run_w3(enum side side, const Load *load)
{
	Worker	   *w = calloc(w3_clients, sizeof(Worker));
	pthread_barrier_t barrier;
	double		start,
				elapsed;
	int			i;

	if (!w)
		die("out of memory");
	pthread_barrier_init(&barrier, NULL, w3_clients + 1);
	for (i = 0; i < w3_clients; i++)
	{
		open_conn(&w[i].c, true);
		w[i].side = side;
		w[i].load = load;
		w[i].barrier = &barrier;
		if (pthread_create(&w[i].thread, NULL, worker_main, &w[i]) != 0)
			die("pthread_create failed");
	}
	pthread_barrier_wait(&barrier);
	start = now_s();
	for (i = 0; i < w3_clients; i++)
		pthread_join(w[i].thread, NULL);
	elapsed = now_s() - start;
	for (i = 0; i < w3_clients; i++)
		PQfinish(w[i].c.conn);
	pthread_barrier_destroy(&barrier);
	free(w);
	return (double) w3_clients * load->n / elapsed;
}

/* ---- reporting --------------------------------------------------------- */

/* Value at quantile q of sorted v (nearest rank). */
static double
quantile(const double *v, int n, double q)
{
	int			k = (int) (q * n + 0.999999) - 1;

	return v[k < 0 ? 0 : (k >= n ? n - 1 : k)];
}

static void
report(const char *measure, const char *unit, double mnemo, double plain)
{
	double		ratio = plain > 0 ? mnemo / plain : 0;

	int			prec = strncmp(unit, "ms", 2) == 0 ? 3 : 1;

	printf("%-46s %12.*f %12.*f %8.2f  %s\n", measure, prec, mnemo, prec, plain, ratio, unit);
	if (json_out)
		fprintf(json_out,
				"{\"measure\": \"%s\", \"unit\": \"%s\", \"mnemo\": %.3f, \"plain\": %.3f, \"ratio\": %.4f}\n",
				measure, unit, mnemo, plain, ratio);
	fflush(stdout);
}

/* ---- bytes and WAL ------------------------------------------------------ */

#define MAX_RELS 64
#define NAMEDATALEN_BENCH 96		/* a relation name and its kind */

typedef struct Sizes
{
	int			n;
	char		name[MAX_RELS][NAMEDATALEN_BENCH];
	long long	bytes[MAX_RELS];
} Sizes;

/* Heap, TOAST (with its index) and each index of every table in schema. */
static void
rel_sizes(PGconn *conn, const char *schema, Sizes *s)
{
	const char *values[1] = {schema};
	PGresult   *res = run_params(conn,
								 "SELECT c.relname || CASE c.relkind WHEN 'i' THEN ' (index)' ELSE ' (heap)' END, "
								 "       pg_relation_size(c.oid) "
								 "  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
								 " WHERE n.nspname = $1 AND c.relkind IN ('r', 'i') "
								 "UNION ALL "
								 "SELECT c.relname || ' (TOAST)', pg_total_relation_size(c.reltoastrelid) "
								 "  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
								 " WHERE n.nspname = $1 AND c.relkind = 'r' AND c.reltoastrelid <> 0 "
								 "ORDER BY 1", 1, values);
	int			i;

	s->n = PQntuples(res) < MAX_RELS ? PQntuples(res) : MAX_RELS;
	for (i = 0; i < s->n; i++)
	{
		snprintf(s->name[i], sizeof(s->name[i]), "%s", PQgetvalue(res, i, 0));
		s->bytes[i] = atoll(PQgetvalue(res, i, 1));
	}
	PQclear(res);
}

/* Print each relation's growth per turn; return the total per turn. */
static double
size_growth(const char *schema, const Sizes *before, const Sizes *after, int nturns)
{
	long long	total = 0;
	int			i,
				j;

	for (i = 0; i < after->n; i++)
	{
		long long	grown = after->bytes[i];

		for (j = 0; j < before->n; j++)
			if (strcmp(before->name[j], after->name[i]) == 0)
				grown -= before->bytes[j];
		total += grown;
		if (grown != 0)
			printf("  %-6s %-52s %10.1f B/turn\n", schema, after->name[i], (double) grown / nturns);
	}
	return (double) total / nturns;
}

static long long
wal_lsn(PGconn *conn)
{
	PGresult   *res = exec_ok(conn, "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint");
	long long	v = atoll(PQgetvalue(res, 0, 0));

	PQclear(res);
	return v;
}

/* What the loads read, kept so that reading every value is not optimised out. */
static volatile size_t value_bytes;

/* Full history of c's session by statement stmt, every value read; seconds. */
static double
load_history(Conn *c, const char *stmt, int *rows)
{
	const char *values[1] = {c->session};
	double		start = now_s();
	PGresult   *res = run_prepared(c->conn, stmt, 1, values);
	int			i,
				j;

	for (i = 0; i < PQntuples(res); i++)
		for (j = 0; j < PQnfields(res); j++)
			value_bytes += strlen(PQgetvalue(res, i, j));
	*rows = PQntuples(res);
	PQclear(res);
	return now_s() - start;
}

/* ---- the measures ------------------------------------------------------- */

/* Bytes and WAL per turn over `turns` turns into fresh tables; then load. */
static void
measure_storage(void)
{
	Conn		c[2];
	Sizes		before[2],
				after[2],
				indexed;
	const char *schema[2] = {"plain", "mnemo"};
	double		per_turn[2],
				wal[2],
				indexed_per_turn,
				indexed_wal,
				load[2][1024],
				load_json[1024];
	Load	   *l = make_load(turns, 1, false);
	int			side,
				i,
				rows[2] = {0, 0},
				rows_json = 0;

	for (side = PLAIN; side <= MNEMO; side++)
	{
		long long	lsn;

		open_conn(&c[side], true);
		rel_sizes(c[side].conn, schema[side], &before[side]);
		exec_cmd(c[side].conn, "CHECKPOINT");
		lsn = wal_lsn(c[side].conn);
		run_turns(&c[side], side, l, NULL);
		wal[side] = (double) (wal_lsn(c[side].conn) - lsn) / turns;
		rel_sizes(c[side].conn, schema[side], &after[side]);
	}

	/*
	 * Search on: the same session's queue drained by index_search, as a
	 * scheduled job or the next search would; its bytes and WAL added.
	 */
	{
		const char *values[1] = {c[MNEMO].session};
		long long	lsn = wal_lsn(c[MNEMO].conn);

		PQclear(run_params(c[MNEMO].conn, "SELECT mnemo.index_search($1)", 1, values));
		indexed_wal = wal[MNEMO] + (double) (wal_lsn(c[MNEMO].conn) - lsn) / turns;
		rel_sizes(c[MNEMO].conn, "mnemo", &indexed);
	}
	printf("storage: %d turns of user ~200 B + assistant ~800 B into each side's tables\n", turns);
	for (side = PLAIN; side <= MNEMO; side++)
		per_turn[side] = size_growth(schema[side], &before[side], &after[side], turns);
	report("table bytes/turn (heap+TOAST+indexes)", "B", per_turn[MNEMO], per_turn[PLAIN]);
	report("WAL bytes/turn", "B", wal[MNEMO], wal[PLAIN]);
	printf("then mnemo.index_search() over the session (search on):\n");
	indexed_per_turn = size_growth("mnemo", &before[MNEMO], &indexed, turns);
	report("table bytes/turn, search indexed", "B", indexed_per_turn, per_turn[PLAIN]);
	report("WAL bytes/turn, search indexed", "B", indexed_wal, wal[PLAIN]);

	/*
	 * The sessions just written hold 2 x turns messages of one part each.
	 * mnemo's load is what libmnemo's mnemo_messages_get runs for a history
	 * with its parts, get_messages_flat (one row per part); the parts
	 * assembled as JSON per message, get_messages_with_parts, follow.  The
	 * three reads take turns, so drift hits them alike.
	 */
	for (i = 0; i < loads && i < 1024; i++)
	{
		const char *stmt[2] = {"plain_load", "mnemo_load"};
		int			first = i % 2 ? MNEMO : PLAIN;
		int			second = !first;

		load[first][i] = load_history(&c[first], stmt[first], &rows[first]) * 1000;
		load_json[i] = load_history(&c[MNEMO], "mnemo_load_json", &rows_json) * 1000;
		load[second][i] = load_history(&c[second], stmt[second], &rows[second]) * 1000;
	}
	if (rows[PLAIN] != rows[MNEMO] || rows_json != rows[MNEMO])
		die("history load: plain read %d rows, mnemo %d, as JSON %d", rows[PLAIN], rows[MNEMO],
			rows_json);
	{
		char		name[64];

		snprintf(name, sizeof(name), "full history load, %d messages", rows[MNEMO]);
		report(name, "ms, lower is better", median(load[MNEMO], i), median(load[PLAIN], i));
		report("  the same, parts as JSON (with_parts)", "ms, lower is better",
			   median(load_json, i), median(load[PLAIN], i));
	}
	PQfinish(c[PLAIN].conn);
	PQfinish(c[MNEMO].conn);
	free_load(l);
}

/* Turns/s, one turn per call, median over the rounds (ABBA). */
static void
measure_turns(const char *name, bool sync_on, bool tools)
{
	Conn		c;
	double		rate[2][256];
	int			r;

	open_conn(&c, sync_on);
	for (r = 0; r < rounds && r < 256; r++)
	{
		Load	   *l = make_load(turns, (uint64_t) r + 100, tools);
		int			first = r % 2 ? MNEMO : PLAIN;

		rate[first][r] = turns / run_turns(&c, first, l, NULL);
		rate[!first][r] = turns / run_turns(&c, !first, l, NULL);
		free_load(l);
	}
	report(name, "turns/s", median(rate[MNEMO], r), median(rate[PLAIN], r));
	PQfinish(c.conn);
}

static void
measure_batches(void)
{
	Conn		c;
	double		rate[2][256];
	int			nbatches = turns / BATCH_TURNS > 0 ? turns / BATCH_TURNS : 1;
	int			r;

	open_conn(&c, true);
	for (r = 0; r < rounds && r < 256; r++)
	{
		Batches    *b = make_batches(nbatches, (uint64_t) r + 200);
		int			first = r % 2 ? MNEMO : PLAIN;

		rate[first][r] = nbatches * BATCH_TURNS / run_batches(&c, first, b);
		rate[!first][r] = nbatches * BATCH_TURNS / run_batches(&c, !first, b);
		free_batches(b);
	}
	report("100 messages/call vs COPY of 100 rows", "turns/s", median(rate[MNEMO], r),
		   median(rate[PLAIN], r));
	PQfinish(c.conn);
}

static void
measure_w3(void)
{
	double		rate[2][256];
	char		name[64];
	int			r;

	for (r = 0; r < rounds && r < 256; r++)
	{
		Load	   *l = make_load(w3_turns, (uint64_t) r + 300, false);
		int			first = r % 2 ? MNEMO : PLAIN;

		rate[first][r] = run_w3(first, l);
		rate[!first][r] = run_w3(!first, l);
		free_load(l);
	}
	snprintf(name, sizeof(name), "W3: %d connections x %d turns, total", w3_clients, w3_turns);
	report(name, "turns/s", median(rate[MNEMO], r), median(rate[PLAIN], r));
}

static void
measure_latency(void)
{
	Conn		c;
	Load	   *l = make_load(latency_turns, 400, false);
	double	   *lat[2];
	static const struct
	{
		const char *name;
		double		q;
	}			qs[] = {{"p50", 0.5}, {"p99", 0.99}, {"p99.9", 0.999}, {"max", 1.0}};
	int			side;
	size_t		k;

	open_conn(&c, true);
	for (side = PLAIN; side <= MNEMO; side++)
	{
		lat[side] = malloc(sizeof(double) * latency_turns);
		if (!lat[side])
			die("out of memory");
		run_turns(&c, side, l, lat[side]);
		qsort(lat[side], latency_turns, sizeof(double), cmp_double);
	}
	for (k = 0; k < sizeof(qs) / sizeof(qs[0]); k++)
	{
		char		name[64];

		snprintf(name, sizeof(name), "append latency %s over %d turns", qs[k].name, latency_turns);
		report(name, "ms, lower is better", quantile(lat[MNEMO], latency_turns, qs[k].q) * 1000,
			   quantile(lat[PLAIN], latency_turns, qs[k].q) * 1000);
	}
	free(lat[PLAIN]);
	free(lat[MNEMO]);
	free_load(l);
	PQfinish(c.conn);
}

static int
int_arg(const char *flag, const char *value)
{
	char	   *end;
	long		v = value ? strtol(value, &end, 10) : 0;

	if (!value || *end != '\0' || v < 1 || v > 10000000)
		die("%s takes a whole number from 1 to 10000000", flag);
	return (int) v;
}

int
main(int argc, char **argv)
{
	static const char *const settings[] = {"shared_buffers", "synchronous_commit", "fsync",
	"wal_level", NULL};
	PGconn	   *conn;
	int			i;

	for (i = 1; i < argc; i++)
	{
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (strcmp(argv[i], "--turns") == 0)
			turns = int_arg(argv[i], v), i++;
		else if (strcmp(argv[i], "--rounds") == 0)
			rounds = int_arg(argv[i], v), i++;
		else if (strcmp(argv[i], "--latency-turns") == 0)
			latency_turns = int_arg(argv[i], v), i++;
		else if (strcmp(argv[i], "--loads") == 0)
			loads = int_arg(argv[i], v), i++;
		else if (strcmp(argv[i], "--w3") == 0 && v && sscanf(v, "%d:%d", &w3_clients, &w3_turns) == 2 &&
				 w3_clients > 0 && w3_clients <= 64 && w3_turns > 0)
			i++;
		else if (strcmp(argv[i], "--json") == 0 && v)
		{
			if (!(json_out = fopen(v, "w")))
				die("cannot write %s", v);
			i++;
		}
		else
			die("usage: bench/append [--turns N] [--rounds R] [--w3 CLIENTS:TURNS] "
				"[--latency-turns N] [--loads N] [--json FILE]");
	}

	conn = connect_db();
	exec_cmd(conn, "SET client_min_messages = warning");
	exec_cmd(conn, "DROP SCHEMA IF EXISTS plain CASCADE");
	exec_cmd(conn, "CREATE SCHEMA plain");
	exec_cmd(conn, "CREATE TABLE plain.messages (id bigserial PRIMARY KEY, session_id text, "
			 "seq int, role text, content text, created_at timestamptz DEFAULT now(), "
			 "UNIQUE (session_id, seq))");
	exec_cmd(conn, "DO $$ BEGIN CREATE ROLE " APP_ROLE " NOLOGIN; "
			 "EXCEPTION WHEN duplicate_object THEN NULL; END $$");
	exec_cmd(conn, "GRANT USAGE ON SCHEMA mnemo, plain TO " APP_ROLE);
	exec_cmd(conn, "GRANT SELECT, INSERT ON plain.messages TO " APP_ROLE);
	exec_cmd(conn, "GRANT USAGE ON SEQUENCE plain.messages_id_seq TO " APP_ROLE);
	exec_cmd(conn, "GRANT pg_checkpoint TO " APP_ROLE);
	print_server(conn, settings);
	printf("\nrole:     " APP_ROLE " on both sides (SET ROLE: no superuser, mnemo's tenancy checks apply)");
	printf("\nbench/append: mnemo against a hand-written plain table (see bench/append.c), "
		   "%d turns a run, %d rounds (median), same content both sides\n", turns, rounds);
	printf("%-46s %12s %12s %8s\n", "measure", "mnemo", "plain", "ratio");

	measure_storage();
	measure_turns("one turn per call, synchronous_commit=on", true, false);
	measure_turns("one turn per call, synchronous_commit=off", false, false);
	measure_turns("one turn per call with tools, sync on", true, true);
	measure_batches();
	measure_w3();
	measure_latency();

	PQfinish(conn);
	if (json_out)
		fclose(json_out);
	return 0;
}
