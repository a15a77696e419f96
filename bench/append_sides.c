/*
 * append_sides.c
 *		bench/append's two sides and their connections: a connection as the
 *		application role with each side's statements prepared, a fresh
 *		session, a turn on each side, and the one line a measure reports.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <libpq-fe.h>

#include "append.h"
#include "common.h"

int			turns = 1000;		/* a run's turns, --turns */
FILE	   *json_out;
static int	session_counter;

PGresult *
run_prepared(PGconn *conn, const char *name, int n, const char *const *values)
{
	PGresult   *res = PQexecPrepared(conn, name, n, values, NULL, NULL, 0);
	ExecStatusType st = PQresultStatus(res);

	if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK)
		die("%s: %s", name, PQerrorMessage(conn));
	return res;
}

PGresult *
run_params(PGconn *conn, const char *sql, int n, const char *const *values)
{
	PGresult   *res = PQexecParams(conn, sql, n, NULL, values, NULL, NULL, 0);
	ExecStatusType st = PQresultStatus(res);

	if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK)
		die("%s: %s", sql, PQerrorMessage(conn));
	return res;
}

/* A fresh session on c for side (mnemo's are created through the API). */
void
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
	PQclear(run_prepared(c->conn, c->insert, 4, values));
}

/*
 * One message on each side, in sessions of their own, before anything is
 * timed on c: a backend's first append pays for loading mnemo's library and
 * preparing its statements (3 ms, ten appends' worth), its first INSERT for
 * opening the table; neither is the cost of a turn.
 */
static void
warm_up(Conn *c)
{
	const char *values[2] = {c->session, "[{\"role\": \"user\", \"parts\": "
	"[{\"type\": \"text\", \"text\": \"warm-up\"}]}]"};

	new_session(c, MNEMO);
	PQclear(run_prepared(c->conn, "mnemo_append", 2, values));
	new_session(c, PLAIN);
	plain_row(c, "user", "warm-up");
}

void
open_conn(Conn *c, bool sync_on)
{
	c->conn = connect_db();
	c->insert = "plain_insert";
	exec_cmd(c->conn, "SET ROLE " APP_ROLE);
	exec_cmd(c->conn, sync_on ? "SET synchronous_commit = on" : "SET synchronous_commit = off");
	prepare(c->conn, "plain_insert",
			"INSERT INTO plain.messages (session_id, seq, role, content) VALUES ($1, $2, $3, $4)");
	prepare(c->conn, "plain_gin_insert",
			"INSERT INTO plain_gin.messages (session_id, seq, role, content) VALUES ($1, $2, $3, $4)");
	/* libmnemo's statement (client/src/store/messages.c): the ids it returns */
	prepare(c->conn, "mnemo_append",
			"SELECT id, seq FROM mnemo.append_messages($1::text, $2::jsonb)");
	prepare(c->conn, "plain_load",
			"SELECT id, seq, role, content, created_at FROM plain.messages "
			"WHERE session_id = $1 ORDER BY seq");
	prepare(c->conn, "mnemo_load", "SELECT * FROM mnemo.get_messages_flat($1)");
	prepare(c->conn, "mnemo_load_json", "SELECT * FROM mnemo.get_messages_with_parts($1)");
	warm_up(c);
}

/* Turn i of l on side: plain in one transaction of prepared INSERTs. */
void
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
double
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

/* ---- reporting --------------------------------------------------------- */

void
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
