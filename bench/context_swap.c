/*
 * bench/context_swap.c
 *		bench/context's build_context right after a swap, with and without
 *		another snapshot open across it.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "common.h"
#include "context.h"

/*
 * One session of size messages, loaded uncompacted, then one leaf over all
 * but its newest VIEW - 1 messages, then build_context timed at once.  With
 * held, a second connection holds a snapshot from before the swap until the
 * timing is done.
 */
void
swap_case(PGconn *conn, SwapResult *r)
{
	const char *params[2];
	char		session[64];
	char		sid[96];
	View		view = {0};
	PGconn	   *holder = NULL;
	double	   *t = malloc(sizeof(double) * calls);
	long		done = 0;
	double		t0;
	PGresult   *res;
	int			i;

	if (!t)
		die("out of memory");
	snprintf(session, sizeof(session), "swap_%s_%ld_%d", run_tag, r->size, r->held);
	create_session(conn, session);
	for (; done < r->size; done += BATCH)
		append_batch(conn, session, done, r->size - done < BATCH ? (int) (r->size - done) : BATCH);
	read_view(conn, session, &view);
	if (view.n != r->size)
		die("%s: a view of %d items for %ld messages", session, view.n, r->size);
	exec_cmd(conn, "CHECKPOINT");

	if (r->held)
	{
		holder = connect_db();
		exec_cmd(holder, "BEGIN ISOLATION LEVEL REPEATABLE READ");
		PQclear(exec_ok(holder, "SELECT count(*) FROM mnemo.sessions"));
	}
	snprintf(sid, sizeof(sid), "%s_leaf", session);
	r->swap_ms = summarise(conn, session, sid, &view, 0, view.n - (VIEW - 1), 0);

	params[0] = session;
	params[1] = BUDGET;
	for (i = -1; i < calls; i++)
	{
		t0 = now_s();
		res = run_prepared(conn, "build", 2, params);
		if (i < 0)
			r->first_ms = (now_s() - t0) * 1000;
		else
			t[i] = (now_s() - t0) * 1000;
		r->rows = PQntuples(res);
		PQclear(res);
	}
	r->median_ms = median(t, calls);
	if (r->rows != VIEW)
		die("%s: build_context returned %d rows after the swap, not %d", session, r->rows, VIEW);
	if (holder)
	{
		exec_cmd(holder, "COMMIT");
		PQfinish(holder);
	}
	free(view.items);
	free(t);
}

void
print_swaps(const SwapResult *s, int n)
{
	int			held;
	int			i;

	printf("\nright after one swap (commit_summary leaf over all but the newest %d messages, "
		   "no VACUUM), build_context over the %d items left:\n", VIEW - 1, VIEW);
	printf("%-9s %-22s %-16s %-12s %-14s\n", "messages", "other snapshot open", "swap ms",
		   "first ms", "median ms");
	for (i = 0; i < n; i++)
		printf("%-9ld %-22s %-16.1f %-12.3f %-14.3f\n", s[i].size, s[i].held ? "yes" : "no",
			   s[i].swap_ms, s[i].first_ms, s[i].median_ms);
	for (held = 0; held <= 1; held++)
	{
		const SwapResult *small = NULL;
		const SwapResult *large = NULL;

		for (i = 0; i < n; i++)
		{
			if (s[i].held != held)
				continue;
			if (!small || s[i].size < small->size)
				small = &s[i];
			if (!large || s[i].size > large->size)
				large = &s[i];
		}
		if (!small || small == large)
			continue;
		printf("after a swap, %s: build_context %ld / %ld messages: first %.2f, median %.2f  "
			   "(target <= 1.5: %s)\n", held ? "snapshot held" : "no other snapshot",
			   large->size, small->size, large->first_ms / small->first_ms,
			   large->median_ms / small->median_ms,
			   large->median_ms / small->median_ms <= 1.5 &&
			   large->first_ms / small->first_ms <= 1.5 ? "met" : "NOT MET");
	}
}
