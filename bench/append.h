/*
 * append.h
 *		What bench/append's files share: the two sides and their
 *		connections (append_sides.c), the storage and image measures
 *		(append_storage.c) and issue 34's table of goals (append_table.c).
 */
#ifndef MNEMO_BENCH_APPEND_H
#define MNEMO_BENCH_APPEND_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <libpq-fe.h>

#include "append_load.h"

#define APP_ROLE "mnemo_bench_app"
#define MAX_ROUNDS 256

enum side
{
	PLAIN,
	MNEMO
};

/*
 * One connection of one side, as the application role.  insert names the
 * prepared INSERT of the plain side's table: plain.messages, or
 * plain_gin.messages (the same table with its own GIN expression index).
 */
typedef struct Conn
{
	PGconn	   *conn;
	char		session[64];
	int			seq;			/* plain: the last seq written */
	const char *insert;
} Conn;

extern int	turns;
extern FILE *json_out;

void		open_conn(Conn *c, bool sync_on);
void		new_session(Conn *c, enum side side);
void		do_turn(Conn *c, enum side side, const Load *l, int i);
double		run_turns(Conn *c, enum side side, const Load *l, double *latency);
PGresult   *run_params(PGconn *conn, const char *sql, int n, const char *const *values);
PGresult   *run_prepared(PGconn *conn, const char *name, int n, const char *const *values);
void		report(const char *measure, const char *unit, double mnemo, double plain);

/* append_storage.c: rows 5 to 7 and 10 of the table, measured once. */
void		measure_storage(void);
void		measure_image(int image_bytes);

/*
 * append_table.c: issue 34's table.  Each row collects one mnemo and one
 * plain figure per round (or one in all, for bytes), and is printed with the
 * median of the per-round ratios mnemo / plain, their spread and the goal.
 */
typedef enum GoalRowId
{
	ROW_TURN_SYNC_ON,
	ROW_TURN_SYNC_OFF,
	ROW_BATCH,
	ROW_W3,
	ROW_BYTES,
	ROW_WAL,
	ROW_BYTES_INDEXED,
	ROW_LOAD_FLAT,
	ROW_LOAD_PARTS,
	ROW_IMAGE,
	NUM_GOAL_ROWS
} GoalRowId;

void		goal_add(GoalRowId row, double mnemo, double plain);
void		goal_rename(GoalRowId row, const char *name);	/* name: kept */
double		goal_last_ratio(GoalRowId row);
void		goal_print_table(int rounds);

#endif
