/*
 * bench/context_measure.c
 *		bench/context's timings of one loaded session: build_context against
 *		the baseline, a turn's reads, prune_tool_outputs and commit_summary.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "common.h"
#include "context.h"

/*
 * The three statements a turn read its context with before turn_context,
 * sent in one pipeline as the client batched them; rows of all three.
 */
static int
run_three_reads(PGconn *conn, const char *const *params)
{
	static const char *const names[3] = {"report", "build", "assistants"};
	PGresult   *res;
	int			rows = 0;
	int			i;

	if (!PQenterPipelineMode(conn))
		die("pipeline mode: %s", PQerrorMessage(conn));
	for (i = 0; i < 3; i++)
		if (!PQsendQueryPrepared(conn, names[i], 2, params, NULL, NULL, 0))
			die("%s: %s", names[i], PQerrorMessage(conn));
	if (!PQpipelineSync(conn))
		die("pipeline sync: %s", PQerrorMessage(conn));
	for (i = 0; i < 3; i++)
	{
		res = PQgetResult(conn);
		if (PQresultStatus(res) != PGRES_TUPLES_OK)
			die("%s: %s", names[i], PQerrorMessage(conn));
		rows += PQntuples(res);
		PQclear(res);
		if ((res = PQgetResult(conn)) != NULL)
			die("%s: more than one result", names[i]);
	}
	res = PQgetResult(conn);
	if (PQresultStatus(res) != PGRES_PIPELINE_SYNC)
		die("pipeline: no sync at the end");
	PQclear(res);
	if (!PQexitPipelineMode(conn))
		die("pipeline mode: %s", PQerrorMessage(conn));
	return rows;
}

void
measure(PGconn *conn, SizeResult *r)
{
	const char *bparams[2] = {r->session, BUDGET};
	const char *qparams[2];
	double	   *tb = malloc(sizeof(double) * calls);
	double	   *tq = malloc(sizeof(double) * calls);
	double	   *t3 = malloc(sizeof(double) * calls);
	double	   *tt = malloc(sizeof(double) * calls);
	View		view = {0};
	char	   *seqs;
	size_t		cap;
	size_t		len = 0;
	char		sid[96];
	PGresult   *res;
	double		t0;
	int			i;

	if (!tb || !tq || !t3 || !tt)
		die("out of memory");
	read_view(conn, r->session, &view);
	r->view_items = view.n;
	r->view_summaries = 0;
	cap = (size_t) view.n * 24 + 3;
	seqs = malloc(cap);
	if (!seqs)
		die("out of memory");
	seqs[len++] = '{';
	for (i = 0; i < view.n; i++)
	{
		r->view_summaries += view.items[i].is_summary;
		len += snprintf(seqs + len, cap - len, "%s%lld", i ? "," : "", view.items[i].seq);
	}
	seqs[len++] = '}';
	seqs[len] = '\0';
	qparams[0] = r->session;
	qparams[1] = seqs;

	for (i = -warmup; i < calls; i++)
	{
		/* alternate the order too, so neither always runs right after the other */
		int			k;

		for (k = 0; k < 2; k++)
		{
			int			build = (k == 0) == (i % 2 == 0);

			t0 = now_s();
			res = run_prepared(conn, build ? "build" : "base", 2, build ? bparams : qparams);
			if (i >= 0)
				(build ? tb : tq)[i] = (now_s() - t0) * 1000;
			if (build)
				r->rows_build = PQntuples(res);
			else
				r->rows_base = PQntuples(res);
			PQclear(res);
		}
	}
	r->build_ms = median(tb, calls);
	r->base_ms = median(tq, calls);

	for (i = -warmup; i < calls; i++)
	{
		int			k;

		for (k = 0; k < 2; k++)
		{
			int			three = (k == 0) == (i % 2 == 0);

			t0 = now_s();
			if (three)
				run_three_reads(conn, bparams);
			else
				PQclear(run_prepared(conn, "turn", 2, bparams));
			if (i >= 0)
				(three ? t3 : tt)[i] = (now_s() - t0) * 1000;
		}
	}
	r->three_ms = median(t3, calls);
	r->turn_ms = median(tt, calls);
	if (r->rows_build != view.n)
		die("%s: build_context returned %d rows for a view of %d items", r->session,
			r->rows_build, view.n);

	/*
	 * one prune_tool_outputs: it leaves everything at or before the newest
	 * summary alone, so first TAIL messages arrive after the last compaction
	 * (untimed), as in a live session
	 */
	append_batch(conn, r->session, r->size, TAIL);
	t0 = now_s();
	res = run_prepared(conn, "prune", 1, bparams);
	r->prune_ms = (now_s() - t0) * 1000;
	r->pruned = atoi(PQgetvalue(res, 0, 0));
	PQclear(res);

	/* one commit_summary: a leaf over the oldest 20 messages of the view */
	for (i = 0; i < view.n && view.items[i].is_summary; i++)
		;
	if (view.n - i < 20)
		die("%s: too few messages in view", r->session);
	snprintf(sid, sizeof(sid), "%s_timed", r->session);
	r->commit_ms = summarise(conn, r->session, sid, &view, i, 20, 0);
	free(seqs);
	free(tb);
	free(tq);
	free(t3);
	free(tt);
	free(view.items);
}
