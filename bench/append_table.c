/*
 * append_table.c
 *		Issue 34's table of measures, mnemo / plain table, with its goals:
 *		bench/append collects each row's figures as it runs and prints the
 *		table last (and writes it as one JSON line to --json FILE).
 *
 * A timed row gets one mnemo and one plain figure per round, both sides run
 * back to back in the round (alternating which goes first); its ratio is the
 * median of the rounds' ratios mnemo / plain, printed with their spread
 * (lowest and highest), and the goal holds when that median does.  The
 * mnemo and plain columns are each side's median over the rounds.  A byte
 * row is measured once: its figures are deterministic.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <string.h>

#include "append.h"
#include "common.h"

typedef struct GoalRow
{
	const char *name;			/* the row */
	const char *unit;			/* of the mnemo and plain columns */
	bool		at_least;		/* goal: ratio >= goal, else ratio <= goal */
	double		goal;
	int			n;
	double		mnemo[MAX_ROUNDS];
	double		plain[MAX_ROUNDS];
} GoalRow;

/* In GoalRowId's order; the goals are issue 34's. */
static GoalRow goal_rows[NUM_GOAL_ROWS] = {
	{.name = "one turn per call (sync on)", .unit = "turns/s", .at_least = true, .goal = 1.2},
	{.name = "one turn per call (sync off)", .unit = "turns/s", .at_least = true, .goal = 1.5},
	{.name = "100 messages per call vs COPY", .unit = "turns/s", .at_least = true, .goal = 0.5},
	{.name = "W3 (4 connections, one session each)", .unit = "turns/s", .at_least = true, .goal = 1.0},
	{.name = "bytes per turn, search not indexed", .unit = "B/turn", .at_least = false, .goal = 1.5},
	{.name = "WAL per turn, search not indexed", .unit = "B/turn", .at_least = false, .goal = 1.5},
	{.name = "bytes per turn, search indexed (plain: own GIN)", .unit = "B/turn", .at_least = false, .goal = 1.5},
	{.name = "full history load (get_messages_flat)", .unit = "ms", .at_least = false, .goal = 1.3},
	{.name = "full history load (get_messages_with_parts)", .unit = "ms", .at_least = false, .goal = 2.0},

	/*
	 * The goal for images is "stored once, as bytes": ten copies of
	 * one image then cost about one raw copy, 0.075 of ten base64 copies in
	 * the plain table; 0.1 leaves room for the ten messages' rows.
	 */
	{.name = "image: bytes for 10 copies of one image", .unit = "B", .at_least = false, .goal = 0.1},
};

void
goal_add(GoalRowId row, double mnemo, double plain)
{
	GoalRow    *g = &goal_rows[row];

	if (g->n < MAX_ROUNDS)
	{
		g->mnemo[g->n] = mnemo;
		g->plain[g->n] = plain;
		g->n++;
	}
}

void
goal_rename(GoalRowId row, const char *name)
{
	goal_rows[row].name = name;
}

static double
ratio(double mnemo, double plain)
{
	return plain > 0 ? mnemo / plain : 0;
}

double
goal_last_ratio(GoalRowId row)
{
	GoalRow    *g = &goal_rows[row];

	return g->n ? ratio(g->mnemo[g->n - 1], g->plain[g->n - 1]) : 0;
}

typedef struct Summary
{
	double		mnemo,
				plain,
				ratio,
				min,
				max;
	bool		met;
} Summary;

static Summary
summarise(GoalRow *g)
{
	double		mnemo[MAX_ROUNDS],
				plain[MAX_ROUNDS],
				ratios[MAX_ROUNDS];
	Summary		s;
	int			i;

	for (i = 0; i < g->n; i++)
	{
		mnemo[i] = g->mnemo[i];
		plain[i] = g->plain[i];
		ratios[i] = ratio(g->mnemo[i], g->plain[i]);
	}
	s.mnemo = median(mnemo, g->n);
	s.plain = median(plain, g->n);
	s.ratio = median(ratios, g->n);		/* sorts ratios */
	s.min = ratios[0];
	s.max = ratios[g->n - 1];
	s.met = g->at_least ? s.ratio >= g->goal : s.ratio <= g->goal;
	return s;
}

static void
json_array(const char *key, const double *v, int n)
{
	int			i;

	fprintf(json_out, ", \"%s\": [", key);
	for (i = 0; i < n; i++)
		fprintf(json_out, "%s%.3f", i ? ", " : "", v[i]);
	fputc(']', json_out);
}

/* The table, rows not measured (a measure that failed) left out. */
void
goal_print_table(int rounds)
{
	int			i,
				met = 0,
				measured = 0;

	printf("\nissue 34's table: mnemo / plain table, the median of %d interleaved rounds "
		   "(spread: the lowest and highest round), bytes measured once\n", rounds);
	printf("%-48s %12s %12s %-8s %6s %13s %7s %4s\n", "measure", "mnemo", "plain", "unit",
		   "ratio", "spread", "goal", "met");
	if (json_out)
		fprintf(json_out, "{\"table\": \"issue 34\", \"rounds\": %d, \"rows\": [", rounds);
	for (i = 0; i < NUM_GOAL_ROWS; i++)
	{
		GoalRow    *g = &goal_rows[i];
		Summary		s;
		char		spread[32],
					goal[16];
		int			prec = strcmp(g->unit, "ms") == 0 ? 3 : 1;

		if (g->n == 0)
			continue;
		s = summarise(g);
		measured++;
		met += s.met;
		if (g->n > 1)
			snprintf(spread, sizeof(spread), "%.2f-%.2f", s.min, s.max);
		else
			snprintf(spread, sizeof(spread), "once");
		snprintf(goal, sizeof(goal), "%s %.1f", g->at_least ? ">=" : "<=", g->goal);
		printf("%-48s %12.*f %12.*f %-8s %6.2f %13s %7s %4s\n", g->name, prec, s.mnemo, prec,
			   s.plain, g->unit, s.ratio, spread, goal, s.met ? "yes" : "no");
		if (json_out)
		{
			fprintf(json_out,
					"%s{\"measure\": \"%s\", \"unit\": \"%s\", \"mnemo\": %.3f, \"plain\": %.3f, "
					"\"ratio\": %.4f, \"ratio_min\": %.4f, \"ratio_max\": %.4f, \"goal\": \"%s\", "
					"\"met\": %s",
					measured > 1 ? ", " : "", g->name, g->unit, s.mnemo, s.plain, s.ratio, s.min,
					s.max, goal, s.met ? "true" : "false");
			json_array("mnemo_rounds", g->mnemo, g->n);
			json_array("plain_rounds", g->plain, g->n);
			fputc('}', json_out);
		}
	}
	printf("goals met: %d of %d\n", met, measured);
	if (json_out)
		fprintf(json_out, "], \"met\": %d, \"measured\": %d}\n", met, measured);
	fflush(stdout);
}
