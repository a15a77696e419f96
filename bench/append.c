/*
 * bench/append.c
 *		mnemo's write and load paths against the table a team would write by
 *		hand instead, measured side by side in one run on one cluster; it
 *		ends with issue 34's table, each of its rows with its goal.
 *
 * The plain side is what a user writes with libpq without mnemo:
 *
 *   messages(id bigserial primary key, session_id text, seq int, role text,
 *            content text, created_at timestamptz default now(),
 *            unique (session_id, seq))
 *
 * one transaction per turn (BEGIN, one prepared INSERT per message, COMMIT:
 * four round trips for a user + assistant turn), COPY for bulk loads, and a
 * plain SELECT ... ORDER BY seq for the history.  For the bytes with search
 * indexed it is the same table in schema plain_gin with the GIN expression
 * index a user would add, nothing else.  The mnemo side stores the same
 * turn with one mnemo.append_messages() call (one round trip, libmnemo's
 * statement, which returns the new ids) and loads with
 * mnemo.get_messages_flat() (one row per part, what libmnemo and the
 * README's getting-started read) and mnemo.get_messages_with_parts() (the
 * parts assembled as JSON).  Both get the same content from the
 * same generator with the same seeds: a user text of about 200 bytes and an
 * assistant text of about 800; in the "tools" mix every third turn also has
 * a tool call and a result of about 4 KB (plain: the call's JSON appended to
 * the assistant row, the result as a third row; mnemo: a completed tool part
 * holding input and output).
 *
 * Rounds: the timed measures run --rounds times, interleaved: each round
 * runs every one of them, both sides back to back, a few runs a side
 * (REPS_*, so that a side's share lasts about a second) in the order ABBA...
 * (which side goes first alternates by round, so drift hits both alike),
 * each run on a connection of its own (warmed by one untimed message a
 * side: warm_up) and a fresh session (mnemo: create_session; plain: a new
 * session_id, fresh rows).  A round's ratio is its turns/s (or load time)
 * mnemo / plain.  A round:
 *   turns/s       one turn per call (--turns turns a run), synchronous_commit
 *                 on, then off, then the tools mix; 100 messages per call
 *                 against COPY of 100 rows (--turns turns a run); W3 = --w3
 *                 connections at once, each its own session.
 *   load          the full history of the session the round's sync-on turns
 *                 wrote (2 x --turns messages), every value read: --loads
 *                 reads of each statement, taking turns, their median.
 * Measured once, before the rounds (append_storage.c):
 *   bytes/turn    heap, TOAST and each index of every table a side writes,
 *                 grown over --turns turns; then with search indexed.
 *   WAL/turn      pg_current_wal_lsn() around the same load.
 *   image         ten messages carrying the same --image-kb image.
 * And after them: per-turn latency p50/p99/p99.9/max over --latency-turns.
 * The measured-once ones, the tools mix and latency are printed as mnemo,
 * plain and mnemo/plain (and written as JSON lines to --json FILE), each
 * round's ratios as it ends; issue 34's table comes last (append_table.c).
 *
 * Both sides run as an application role, APP_ROLE (SET ROLE after
 * connecting; granted what doc/security.md grants an application role, the
 * plain tables, and pg_checkpoint), not as the superuser the environment
 * names: mnemo's calls then pay for its tenancy as an application does (a
 * superuser's tenant check is a shortcut, and row-level security does not
 * apply to it).
 *
 * Usage: bench/append [--turns N] [--rounds R] [--w3 CLIENTS:TURNS]
 *                     [--latency-turns N] [--loads N] [--image-kb N]
 *                     [--json FILE]
 * Connects with the PG* environment as a superuser; the database must have
 * mnemo.  Drops and recreates schemas plain and plain_gin, and creates
 * APP_ROLE if need be.
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

#include "append.h"
#include "common.h"

const char *bench_name = "bench/append";

static int	rounds = 10;
static int	w3_clients = 4;
static int	w3_turns = 200;
static int	latency_turns = 10000;
static int	loads = 20;
static int	image_kb = 300;

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

/* Seconds w3_clients connections take to run load's turns each at once. */
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
	return elapsed;
}

/* ---- reporting --------------------------------------------------------- */

/* Value at quantile q of sorted v (nearest rank). */
static double
quantile(const double *v, int n, double q)
{
	int			k = (int) (q * n + 0.999999) - 1;

	return v[k < 0 ? 0 : (k >= n ? n - 1 : k)];
}

/* What the loads read, kept so that reading every value is not optimised out. */
static volatile size_t value_bytes;

/* Full history of session by statement stmt, every value read; seconds. */
static double
load_history(Conn *c, const char *stmt, const char *session, int *rows)
{
	const char *values[1] = {session};
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

/* ---- a round ------------------------------------------------------------ */

/* The tools mix, reported beside the table (it is not one of its rows). */
static double tools_rate[2][MAX_ROUNDS];

/*
 * Repeats a round of each timed measure, a side: enough runs that a side's
 * share of a round lasts about a second on the 2-core host of
 * doc/benchmarks.md (a tenth of a second measures the host's hiccups, not
 * the sides).
 */
#define REPS_SYNC_ON 3
#define REPS_SYNC_OFF 6
#define REPS_TOOLS 2
#define REPS_BATCH 20
#define REPS_W3 5

typedef enum Work
{
	WORK_TURNS,					/* a Load, one turn per call */
	WORK_BATCHES,				/* Batches, 100 messages per call */
	WORK_W3						/* a Load on w3_clients connections at once */
} Work;

/*
 * One run of work on side, on connections opened for it and a fresh
 * session; seconds taken.  The session written is left in session, if
 * asked.
 */
static double
run_once(Work kind, const void *work, enum side side, bool sync_on, char *session)
{
	Conn		c;
	double		secs;

	if (kind == WORK_W3)
		return run_w3(side, work);
	open_conn(&c, sync_on);
	if (kind == WORK_TURNS)
		secs = run_turns(&c, side, work, NULL);
	else
		secs = run_batches(&c, side, work);
	if (session)
		memcpy(session, c.session, sizeof(c.session));
	PQfinish(c.conn);
	return secs;
}

/*
 * Both sides' turns/s over reps runs of work each (turns a run), in the
 * order first, other, other, first, ...; the session of each side's first
 * run is left in written, if asked.
 */
static void
run_pairs(Work kind, const void *work, int turns_a_run, bool sync_on, int reps, int first,
		  double rate[2], char written[2][64])
{
	double		secs[2] = {0, 0};
	int			k;

	for (k = 0; k < 2 * reps; k++)
	{
		enum side	side = (k % 4 == 0 || k % 4 == 3) ? first : !first;

		secs[side] += run_once(kind, work, side, sync_on,
							   written && k < 2 ? written[side] : NULL);
	}
	rate[PLAIN] = (double) reps * turns_a_run / secs[PLAIN];
	rate[MNEMO] = (double) reps * turns_a_run / secs[MNEMO];
}

/*
 * Rows 8 and 9: the histories in written, on a connection opened for them;
 * --loads reads of each of the plain SELECT, get_messages_flat and
 * get_messages_with_parts, taking turns (the order rotating), and each
 * one's median in ms.
 */
static void
loads_round(char written[2][64], double ms[3])
{
	static const char *const stmt[3] = {"plain_load", "mnemo_load", "mnemo_load_json"};
	const char *session[3] = {written[PLAIN], written[MNEMO], written[MNEMO]};
	double	   *t[3];
	int			rows[3] = {0, 0, 0},
				i,
				k;
	Conn		c;

	open_conn(&c, true);
	for (k = 0; k < 3; k++)
		if (!(t[k] = malloc(sizeof(double) * loads)))
			die("out of memory");
	for (i = 0; i < loads; i++)
		for (k = 0; k < 3; k++)
		{
			int			which = (i + k) % 3;

			t[which][i] = load_history(&c, stmt[which], session[which], &rows[which]) * 1000;
		}
	if (rows[0] != rows[1] || rows[2] != rows[1])
		die("history load: plain read %d rows, get_messages_flat %d, get_messages_with_parts %d",
			rows[0], rows[1], rows[2]);
	for (k = 0; k < 3; k++)
	{
		ms[k] = median(t[k], loads);
		free(t[k]);
	}
	PQfinish(c.conn);
}

/*
 * Round r of the timed measures, each with both sides back to back, the
 * side that goes first alternating by round.
 */
static void
run_round(int r)
{
	int			first = r % 2 ? MNEMO : PLAIN;
	int			nbatches = turns / BATCH_TURNS > 0 ? turns / BATCH_TURNS : 1;
	Load	   *l = make_load(turns, (uint64_t) r + 100, false);
	Load	   *tools = make_load(turns, (uint64_t) r + 100, true);
	Load	   *w3 = make_load(w3_turns, (uint64_t) r + 300, false);
	Batches    *b = make_batches(nbatches, (uint64_t) r + 200);
	char		written[2][64];
	double		rate[2],
				ms[3];

	run_pairs(WORK_TURNS, l, l->n, true, REPS_SYNC_ON, first, rate, written);
	goal_add(ROW_TURN_SYNC_ON, rate[MNEMO], rate[PLAIN]);
	run_pairs(WORK_TURNS, l, l->n, false, REPS_SYNC_OFF, first, rate, NULL);
	goal_add(ROW_TURN_SYNC_OFF, rate[MNEMO], rate[PLAIN]);
	run_pairs(WORK_TURNS, tools, tools->n, true, REPS_TOOLS, first, rate, NULL);
	tools_rate[MNEMO][r] = rate[MNEMO];
	tools_rate[PLAIN][r] = rate[PLAIN];
	run_pairs(WORK_BATCHES, b, b->n * BATCH_TURNS, true, REPS_BATCH, first, rate, NULL);
	goal_add(ROW_BATCH, rate[MNEMO], rate[PLAIN]);
	run_pairs(WORK_W3, w3, w3_clients * w3->n, true, REPS_W3, first, rate, NULL);
	goal_add(ROW_W3, rate[MNEMO], rate[PLAIN]);
	loads_round(written, ms);
	goal_add(ROW_LOAD_FLAT, ms[1], ms[0]);
	goal_add(ROW_LOAD_PARTS, ms[2], ms[0]);

	printf("round %2d/%d (%s first): sync on %.2f, off %.2f, tools %.2f, 100/call %.2f, "
		   "W3 %.2f, load flat %.2f, with_parts %.2f\n", r + 1, rounds,
		   first == MNEMO ? "mnemo" : "plain", goal_last_ratio(ROW_TURN_SYNC_ON),
		   goal_last_ratio(ROW_TURN_SYNC_OFF), tools_rate[MNEMO][r] / tools_rate[PLAIN][r],
		   goal_last_ratio(ROW_BATCH), goal_last_ratio(ROW_W3),
		   goal_last_ratio(ROW_LOAD_FLAT), goal_last_ratio(ROW_LOAD_PARTS));
	fflush(stdout);
	free_load(l);
	free_load(tools);
	free_load(w3);
	free_batches(b);
}

/* ---- latency ------------------------------------------------------------- */

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
		else if (strcmp(argv[i], "--image-kb") == 0)
			image_kb = int_arg(argv[i], v), i++;
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
				"[--latency-turns N] [--loads N] [--image-kb N] [--json FILE]");
	}
	if (rounds > MAX_ROUNDS)
		die("--rounds takes at most %d", MAX_ROUNDS);
	if (image_kb > 8192)
		die("--image-kb takes at most 8192");

	conn = connect_db();
	exec_cmd(conn, "SET client_min_messages = warning");
	exec_cmd(conn, "DO $$ BEGIN CREATE ROLE " APP_ROLE " NOLOGIN; "
			 "EXCEPTION WHEN duplicate_object THEN NULL; END $$");
	exec_cmd(conn, "GRANT USAGE ON SCHEMA mnemo TO " APP_ROLE);
	exec_cmd(conn, "GRANT pg_checkpoint TO " APP_ROLE);
	for (i = 0; i < 2; i++)
	{
		const char *schema = i == 0 ? "plain" : "plain_gin";
		char		sql[512];

		snprintf(sql, sizeof(sql), "DROP SCHEMA IF EXISTS %s CASCADE", schema);
		exec_cmd(conn, sql);
		snprintf(sql, sizeof(sql), "CREATE SCHEMA %s", schema);
		exec_cmd(conn, sql);
		snprintf(sql, sizeof(sql),
				 "CREATE TABLE %s.messages (id bigserial PRIMARY KEY, session_id text, "
				 "seq int, role text, content text, created_at timestamptz DEFAULT now(), "
				 "UNIQUE (session_id, seq))", schema);
		exec_cmd(conn, sql);
		snprintf(sql, sizeof(sql),
				 "GRANT USAGE ON SCHEMA %s TO " APP_ROLE "; "
				 "GRANT SELECT, INSERT ON %s.messages TO " APP_ROLE "; "
				 "GRANT USAGE ON SEQUENCE %s.messages_id_seq TO " APP_ROLE, schema, schema, schema);
		exec_cmd(conn, sql);
	}
	/* what a user writes for full-text search, in mnemo's configuration */
	exec_cmd(conn, "CREATE INDEX ON plain_gin.messages USING gin (to_tsvector('simple', content))");
	print_server(conn, settings);
	printf("\nrole:     " APP_ROLE " on both sides (SET ROLE: no superuser, mnemo's tenancy checks apply)");
	printf("\nbench/append: mnemo against a hand-written plain table (see bench/append.c), "
		   "%d turns a run, %d interleaved rounds, same content both sides\n", turns, rounds);
	if (rounds < 7)
		printf("(fewer than the 7 rounds issue 34 asks for: a smoke run, not figures)\n");
	printf("%-46s %12s %12s %8s\n", "measure", "mnemo", "plain", "ratio");

	measure_storage();
	measure_image(image_kb * 1024);
	for (i = 0; i < rounds; i++)
		run_round(i);
	report("one turn per call with tools, sync on", "turns/s", median(tools_rate[MNEMO], rounds),
		   median(tools_rate[PLAIN], rounds));
	measure_latency();
	if (w3_clients != 4)
	{
		static char w3_name[64];

		snprintf(w3_name, sizeof(w3_name), "W3 (%d connections, one session each)", w3_clients);
		goal_rename(ROW_W3, w3_name);
	}
	goal_print_table(rounds);

	PQfinish(conn);
	if (json_out)
		fclose(json_out);
	return 0;
}
