/*
 * bench/context.c
 *		Context assembly at growing history sizes (issue 3, item 6): the
 *		latency of mnemo.build_context() on sessions of 1,000, 100,000 and
 *		1,000,000 messages whose context view is kept near 200 items by
 *		compaction commits, against a raw-libpq baseline that reads the same
 *		context by primary key, measured in one process on one cluster.
 *
 * Load: each session is filled with mnemo.append_messages(), BATCH messages
 * per call, synchronous_commit off.  Messages alternate user / assistant; a
 * user message has one text part, an assistant message a text part and, every
 * other time, a completed tool part with a few hundred characters of output.
 * After every batch the context view is compacted the way a compaction
 * engine would: mnemo.commit_summary() leaf summaries over the oldest
 * messages of the view (up to LEAF messages each) until the view is back to
 * VIEW items, and, when more than MAX_SUMMARIES summaries pile up at the
 * front of the view, one condensation of all of them into one node.  All
 * sessions live in the same tables; after the load the mnemo tables are
 * VACUUM ANALYZEd (the steady state autovacuum would reach) and CHECKPOINTed.
 *
 * Timed, per size, in this order:
 *   build_context  prepared SELECT * FROM mnemo.build_context($1, $2) with a
 *                  budget that keeps every item of the view, all rows fetched;
 *   baseline       prepared SELECT m.*, p.* FROM mnemo.messages m JOIN
 *                  mnemo.message_parts p ... WHERE m.session_id = $1 AND
 *                  m.seq = ANY($2) ORDER BY m.seq, p.part_index: the messages
 *                  of the context view (summaries included) and their parts,
 *                  by primary key, the seqs collected beforehand, untimed;
 *                  the physical floor for reading that context.
 *   turn reads     what a chat turn reads of its context before the provider
 *                  call: the three statements it sent before 0.2.0 in one
 *                  pipeline (context_report, build_context, and
 *                  get_messages_with_parts_by_ids over build_context's
 *                  assistant messages: three assemblies), against one
 *                  mnemo.turn_context() (one assembly); all rows fetched.
 *   Each runs CALLS times after WARMUP untimed calls, alternating one call of
 *   each so drift hits all alike; the median of each is reported.
 *   prune          TAIL more messages are appended (untimed: the pruner stops
 *                  at the newest summary, so it needs messages after the last
 *                  compaction), then one mnemo.prune_tool_outputs(session,
 *                  PROTECT, MINIMUM), thresholds low enough that it prunes;
 *   commit         one mnemo.commit_summary() leaf over the oldest 20
 *                  messages of the view.
 *
 * Right after a swap (issue 15, item 5), per --swap-sizes (default 2,000 and
 * 50,000 messages): a session is loaded uncompacted, so that its whole
 * history is in its view, then one commit_summary leaf swaps all but the
 * newest VIEW - 1 messages out, and at once, with no VACUUM, build_context
 * is timed over the remaining VIEW items: the first call alone, then the
 * median of CALLS.  All of it twice: with no other transaction open, and
 * with another connection holding a REPEATABLE READ snapshot taken before
 * the swap (a long report, a replica's feedback, pg_dump: then neither
 * VACUUM nor the index's dead-tuple hints can clear the swapped-out rows).
 * Target: the largest session's time <= 1.5 x the smallest's.
 *
 * Usage: bench/context [--sizes N,N,...] [--swap-sizes N,N,...] [--calls N] [--warmup N]
 * Connects with the PG* environment variables; the database must have the
 * mnemo extension.  Creates sessions named ctx_<ms>_<size>.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <libpq-fe.h>

#include "common.h"

const char *bench_name = "bench/context";

#define MAX_SIZES 8
#define BATCH 1000				/* messages per append_messages call */
#define VIEW 200				/* context items kept after compaction */
#define LEAF 200				/* messages per leaf summary, at most */
#define MAX_SUMMARIES 10		/* condense when more summaries are in view */
#define PROTECT 1000			/* prune_tool_outputs protect_tokens */
#define MINIMUM 500			/* prune_tool_outputs minimum_tokens */
#define TAIL 200				/* messages appended, uncompacted, before prune */
#define BUDGET "100000000"		/* keeps everything in the view */

static const char user_text[] =
	"The parser test still fails on a trailing comment at end of input; can you "
	"look at next_line() and check whether the lookahead is reset before it returns?";

static const char assistant_text[] =
	"I looked at the failing test: the parser keeps the last token of the previous "
	"line when a comment ends the buffer, so the next statement starts one token "
	"late. I will read the function and the callers that depend on it.";

static const char tool_output[] =
	"src/parser.c:212: static int next_line(Parser *p)\\n"
	"src/parser.c:213: {\\n"
	"src/parser.c:214:     if (p->pos >= p->len)\\n"
	"src/parser.c:215:         return 0;\\n"
	"src/parser.c:216:     p->line++;\\n"
	"src/parser.c:217:     p->col = 0;\\n"
	"src/parser.c:218:     skip_comment(p);\\n"
	"src/parser.c:219:     return 1;\\n"
	"src/parser.c:220: }\\n"
	"src/lexer.c:88: if (next_line(p)) continue;\\n";

static const char summary_text[] =
	"The user asked why the parser test fails on a trailing comment at end of input. "
	"The assistant found that next_line() keeps a stale lookahead token, read the "
	"function and its callers with grep and cat, and proposed resetting the lookahead "
	"before returning, plus a regression test with a trailing comment.";

static int	calls = 200;
static int	warmup = 20;
static char run_tag[32];

typedef struct Item
{
	char		id[64];
	int			is_summary;
	long long	seq;
} Item;

typedef struct View
{
	Item	   *items;
	int			n;
} View;

typedef struct SwapResult
{
	long		size;
	int			held;			/* another snapshot was open across the swap */
	double		swap_ms;		/* the commit_summary itself */
	double		first_ms;		/* the first build_context after it */
	double		median_ms;		/* the median of calls after it */
	int			rows;
} SwapResult;

typedef struct SizeResult
{
	long		size;
	char		session[64];
	int			view_items;
	int			view_summaries;
	long		leaves;
	long		condensations;
	int			rows_build;
	int			rows_base;
	double		build_ms;
	double		base_ms;
	double		three_ms;		/* a turn's reads as three statements */
	double		turn_ms;		/* the same as one turn_context */
	double		prune_ms;
	int			pruned;
	double		commit_ms;
	double		load_s;
} SizeResult;

static PGresult *
run_prepared(PGconn *conn, const char *name, int nparams, const char *const *params)
{
	PGresult   *res = PQexecPrepared(conn, name, nparams, params, NULL, NULL, 0);

	if (PQresultStatus(res) != PGRES_TUPLES_OK)
		die("%s: %s", name, PQerrorMessage(conn));
	return res;
}

/* The context view of a session, in position order. */
static void
read_view(PGconn *conn, const char *session, View *view)
{
	const char *params[1] = {session};
	PGresult   *res = run_prepared(conn, "view", 1, params);
	int			i;

	view->n = PQntuples(res);
	view->items = realloc(view->items, sizeof(Item) * (view->n + 1));
	if (!view->items)
		die("out of memory");
	for (i = 0; i < view->n; i++)
	{
		Item	   *it = &view->items[i];

		snprintf(it->id, sizeof(it->id), "%s", PQgetvalue(res, i, 0));
		it->is_summary = strcmp(PQgetvalue(res, i, 1), "summary") == 0;
		it->seq = atoll(PQgetvalue(res, i, 2));
	}
	PQclear(res);
}

/* '{a,b,c}' of items [from, from + n) of the view. */
static char *
id_array(const View *view, int from, int n)
{
	size_t		cap = (size_t) n * 66 + 3;
	char	   *buf = malloc(cap);
	size_t		len = 0;
	int			i;

	if (!buf)
		die("out of memory");
	buf[len++] = '{';
	for (i = 0; i < n; i++)
		len += snprintf(buf + len, cap - len, "%s%s", i ? "," : "", view->items[from + i].id);
	buf[len++] = '}';
	buf[len] = '\0';
	return buf;
}

/* One commit_summary over items [from, from + n) of the view. */
static void
commit(PGconn *conn, SizeResult *r, const View *view, int from, int n, int condensed)
{
	char		sid[96];
	char		tokens[16];
	char	   *ids = id_array(view, from, n);
	const char *params[6];
	PGresult   *res;

	snprintf(sid, sizeof(sid), "%s_s%ld", r->session, r->leaves + r->condensations + 1);
	snprintf(tokens, sizeof(tokens), "%d", (int) strlen(summary_text) / 4);
	params[0] = r->session;
	params[1] = sid;
	params[2] = summary_text;
	params[3] = tokens;
	params[4] = ids;
	params[5] = condensed ? "condensed" : "leaf";
	res = PQexecPrepared(conn, condensed ? "condense" : "leaf", 6, params, NULL, NULL, 0);
	if (PQresultStatus(res) != PGRES_TUPLES_OK)
		die("commit_summary (%s, %d items): %s", params[5], n, PQerrorMessage(conn));
	PQclear(res);
	free(ids);
	if (condensed)
		r->condensations++;
	else
		r->leaves++;
}

/*
 * Compact the view back to VIEW items: leaves over the oldest messages (the
 * summaries are all at the front, the messages after them), then one
 * condensation if too many summaries piled up.
 */
static void
compact(PGconn *conn, SizeResult *r, View *view)
{
	int			stale = 0;		/* view edited locally: leaf ids unknown */

	read_view(conn, r->session, view);
	for (;;)
	{
		int			nsum = 0;
		int			n;

		while (nsum < view->n && view->items[nsum].is_summary)
			nsum++;
		if (nsum > MAX_SUMMARIES)
		{
			if (stale)
			{
				read_view(conn, r->session, view);
				stale = 0;
				continue;
			}
			commit(conn, r, view, 0, nsum, 1);
			read_view(conn, r->session, view);
			continue;
		}
		if (view->n <= VIEW)
			return;
		n = view->n - VIEW + 1;	/* the leaf itself takes one item */
		if (n > LEAF)
			n = LEAF;
		if (n < 2)
			n = 2;
		commit(conn, r, view, nsum, n, 0);
		/* the view now has the leaf at nsum in place of those n messages */
		view->items[nsum].is_summary = 1;
		memmove(&view->items[nsum + 1], &view->items[nsum + n],
				sizeof(Item) * (view->n - nsum - n));
		view->n -= n - 1;
		stale = 1;
	}
}

/* The JSON array of one batch of messages, starting at message number first. */
static size_t
make_batch(char *buf, size_t cap, long first, int n)
{
	size_t		len = 0;
	int			i;

	buf[len++] = '[';
	for (i = 0; i < n; i++)
	{
		long		no = first + i;
		const char *sep = i ? "," : "";

		if (no % 2 == 0)
			len += snprintf(buf + len, cap - len,
							"%s{\"role\":\"user\",\"parts\":[{\"type\":\"text\",\"text\":\"%s\"}]}",
							sep, user_text);
		else if (no % 4 == 1)
			len += snprintf(buf + len, cap - len,
							"%s{\"role\":\"assistant\",\"parts\":[{\"type\":\"text\",\"text\":\"%s\"},"
							"{\"type\":\"tool\",\"tool_name\":\"grep\",\"tool_call_id\":\"call_%ld\","
							"\"tool_state\":\"completed\",\"input\":{\"pattern\":\"next_line\"},"
							"\"output\":\"%s\"}]}",
							sep, assistant_text, no, tool_output);
		else
			len += snprintf(buf + len, cap - len,
							"%s{\"role\":\"assistant\",\"parts\":[{\"type\":\"text\",\"text\":\"%s\"}]}",
							sep, assistant_text);
		if (len >= cap - 2)
			die("batch buffer too small");
	}
	buf[len++] = ']';
	buf[len] = '\0';
	return len;
}

static void
load(PGconn *conn, SizeResult *r)
{
	static char batch[BATCH * 1200];
	const char *params[2];
	View		view = {0};
	long		done = 0;
	double		t0 = now_s();
	double		last = t0;
	PGresult   *res;

	params[0] = r->session;
	res = PQexecParams(conn, "SELECT id FROM mnemo.create_session($1)", 1, NULL, params,
					   NULL, NULL, 0);
	if (PQresultStatus(res) != PGRES_TUPLES_OK)
		die("create_session: %s", PQerrorMessage(conn));
	PQclear(res);

	while (done < r->size)
	{
		int			n = r->size - done < BATCH ? (int) (r->size - done) : BATCH;

		make_batch(batch, sizeof(batch), done, n);
		params[1] = batch;
		res = PQexecPrepared(conn, "append", 2, params, NULL, NULL, 0);
		if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != n)
			die("append_messages: %s", PQresultStatus(res) == PGRES_TUPLES_OK ?
				"wrong row count" : PQerrorMessage(conn));
		PQclear(res);
		done += n;
		compact(conn, r, &view);
		if (now_s() - last >= 5 || done == r->size)
		{
			last = now_s();
			fprintf(stderr, "bench/context: %s: %ld/%ld messages, %ld leaves, %ld condensations, "
					"view %d items, %.0f msg/s\n", r->session, done, r->size, r->leaves,
					r->condensations, view.n, done / (last - t0));
		}
	}
	r->load_s = now_s() - t0;
	free(view.items);
}

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

static void
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
	char		tokens[16];
	const char *cparams[6];
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
	{
		static char batch[TAIL * 1200];
		const char *aparams[2] = {r->session, batch};

		make_batch(batch, sizeof(batch), r->size, TAIL);
		PQclear(run_prepared(conn, "append", 2, aparams));
	}
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
	{
		char	   *ids = id_array(&view, i, 20);

		snprintf(sid, sizeof(sid), "%s_timed", r->session);
		snprintf(tokens, sizeof(tokens), "%d", (int) strlen(summary_text) / 4);
		cparams[0] = r->session;
		cparams[1] = sid;
		cparams[2] = summary_text;
		cparams[3] = tokens;
		cparams[4] = ids;
		cparams[5] = "leaf";
		t0 = now_s();
		res = run_prepared(conn, "leaf", 6, cparams);
		r->commit_ms = (now_s() - t0) * 1000;
		PQclear(res);
		free(ids);
	}
	free(seqs);
	free(tb);
	free(tq);
	free(t3);
	free(tt);
	free(view.items);
}

/*
 * One session of size messages, loaded uncompacted, then one leaf over all
 * but its newest VIEW - 1 messages, then build_context timed at once.  With
 * held, a second connection holds a snapshot from before the swap until the
 * timing is done.
 */
static void
swap_case(PGconn *conn, SwapResult *r)
{
	static char batch[BATCH * 1200];
	const char *params[6];
	char		session[64];
	char		sid[96];
	char		tokens[16];
	View		view = {0};
	PGconn	   *holder = NULL;
	double	   *t = malloc(sizeof(double) * calls);
	char	   *ids;
	long		done = 0;
	double		t0;
	PGresult   *res;
	int			i;

	if (!t)
		die("out of memory");
	snprintf(session, sizeof(session), "swap_%s_%ld_%d", run_tag, r->size, r->held);
	params[0] = session;
	res = PQexecParams(conn, "SELECT id FROM mnemo.create_session($1)", 1, NULL, params,
					   NULL, NULL, 0);
	if (PQresultStatus(res) != PGRES_TUPLES_OK)
		die("create_session: %s", PQerrorMessage(conn));
	PQclear(res);
	while (done < r->size)
	{
		int			n = r->size - done < BATCH ? (int) (r->size - done) : BATCH;

		make_batch(batch, sizeof(batch), done, n);
		params[1] = batch;
		PQclear(run_prepared(conn, "append", 2, params));
		done += n;
	}
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
	ids = id_array(&view, 0, view.n - (VIEW - 1));
	snprintf(sid, sizeof(sid), "%s_leaf", session);
	snprintf(tokens, sizeof(tokens), "%d", (int) strlen(summary_text) / 4);
	params[1] = sid;
	params[2] = summary_text;
	params[3] = tokens;
	params[4] = ids;
	params[5] = "leaf";
	t0 = now_s();
	PQclear(run_prepared(conn, "leaf", 6, params));
	r->swap_ms = (now_s() - t0) * 1000;
	free(ids);

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

static void
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

static void
print_environment(PGconn *conn, int argc, char **argv)
{
	static const char *const settings[] = {
		"shared_buffers", "fsync", "synchronous_commit", "work_mem", "autovacuum", NULL
	};
	int			i;

	print_server(conn, settings);
	printf(" (synchronous_commit=off for this connection)\ncommand: ");
	for (i = 0; i < argc; i++)
		printf(" %s", argv[i]);
	printf("\nload:     append_messages, %d messages per call; user: 1 text part (%zu chars); "
		   "assistant: 1 text part (%zu chars), every other one also a completed tool part "
		   "(output %zu chars)\n", BATCH, strlen(user_text), strlen(assistant_text),
		   strlen(tool_output));
	printf("compact:  after each batch, commit_summary leaves over <= %d oldest messages until "
		   "the view has %d items; all summaries condensed into one when more than %d\n",
		   LEAF, VIEW, MAX_SUMMARIES);
	printf("timed:    median of %d calls each (after %d untimed), build_context and baseline "
		   "alternating; budget %s tokens\n", calls, warmup, BUDGET);
	printf("baseline: prepared SELECT m.*, p.* FROM mnemo.messages m JOIN mnemo.message_parts p "
		   "... WHERE m.session_id = $1 AND m.seq = ANY($2) (the view's seqs, collected "
		   "untimed)\n");
	printf("prune:    %d more messages appended (untimed), then one prune_tool_outputs(session, %d, %d); "
		   "commit: then one commit_summary leaf over the view's 20 oldest messages\n\n",
		   TAIL, PROTECT, MINIMUM);
	fflush(stdout);
}

int
main(int argc, char **argv)
{
	SizeResult	results[MAX_SIZES];
	int			nsizes = 0;
	const char *sizes = "1000,100000,1000000";
	const char *swap_sizes = "2000,50000";
	SwapResult	swaps[2 * MAX_SIZES];
	int			nswaps = 0;
	PGconn	   *conn;
	char		sql[256];
	char	   *list;
	char	   *tok;
	char	   *save;
	int			i;
	SizeResult *small;
	SizeResult *large;

	for (i = 1; i < argc; i++)
	{
		if (strcmp(argv[i], "--sizes") == 0 && i + 1 < argc)
			sizes = argv[++i];
		else if (strcmp(argv[i], "--swap-sizes") == 0 && i + 1 < argc)
			swap_sizes = argv[++i];
		else if (strcmp(argv[i], "--calls") == 0 && i + 1 < argc)
			calls = atoi(argv[++i]);
		else if (strcmp(argv[i], "--warmup") == 0 && i + 1 < argc)
			warmup = atoi(argv[++i]);
		else
			die("usage: bench/context [--sizes N,N,...] [--swap-sizes N,N,...] [--calls N] "
				"[--warmup N]");
	}
	if (calls < 1 || warmup < 0)
		die("--calls must be at least 1, --warmup at least 0");
	snprintf(run_tag, sizeof(run_tag), "%lld", unix_ms());

	memset(results, 0, sizeof(results));
	list = strdup(sizes);
	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
	{
		if (nsizes == MAX_SIZES)
			die("at most %d sizes", MAX_SIZES);
		results[nsizes].size = atol(tok);
		if (results[nsizes].size < VIEW)
			die("sizes must be at least %d", VIEW);
		snprintf(results[nsizes].session, sizeof(results[nsizes].session), "ctx_%s_%ld",
				 run_tag, results[nsizes].size);
		nsizes++;
	}
	free(list);
	if (nsizes == 0)
		die("no sizes");
	memset(swaps, 0, sizeof(swaps));
	list = strdup(swap_sizes);
	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
	{
		if (nswaps == 2 * MAX_SIZES)
			die("at most %d swap sizes", MAX_SIZES);
		swaps[nswaps].size = swaps[nswaps + 1].size = atol(tok);
		if (swaps[nswaps].size < VIEW)
			die("swap sizes must be at least %d", VIEW);
		swaps[nswaps + 1].held = 1;
		nswaps += 2;
	}
	free(list);

	conn = connect_db();
	exec_cmd(conn, "SET synchronous_commit = off");
	print_environment(conn, argc, argv);
	prepare(conn, "append", "SELECT seq FROM mnemo.append_messages($1, $2::jsonb)");
	prepare(conn, "view",
			"SELECT c.item_id, c.item_type, m.seq FROM mnemo.get_context_items($1) c "
			"JOIN mnemo.messages m ON m.session_id = $1 AND m.id = c.item_id "
			"ORDER BY c.position");
	prepare(conn, "leaf",
			"SELECT mnemo.commit_summary($1, $2, $3, $4::int, $5::text[], $6, 1)");
	prepare(conn, "condense",
			"SELECT mnemo.commit_summary($1, $2, $3, $4::int, $5::text[], $6, 2)");
	prepare(conn, "build", "SELECT * FROM mnemo.build_context($1, $2::int)");
	prepare(conn, "base",
			"SELECT m.*, p.* FROM mnemo.messages m JOIN mnemo.message_parts p "
			"ON p.session_id = m.session_id AND p.message_id = m.id "
			"WHERE m.session_id = $1 AND m.seq = ANY($2::bigint[]) "
			"ORDER BY m.seq, p.part_index");
	prepare(conn, "report", "SELECT * FROM mnemo.context_report($1, $2::int)");
	prepare(conn, "assistants",
			"SELECT * FROM mnemo.get_messages_with_parts_by_ids($1, ARRAY("
			"SELECT item_id FROM mnemo.build_context($1, $2::int) "
			"WHERE item_type = 'message' AND role = 'assistant'))");
	prepare(conn, "turn", "SELECT * FROM mnemo.turn_context($1, $2::int)");
	snprintf(sql, sizeof(sql),
			 "SELECT mnemo.prune_tool_outputs($1, %d, %d)", PROTECT, MINIMUM);
	prepare(conn, "prune", sql);

	for (i = 0; i < nsizes; i++)
		load(conn, &results[i]);
	fprintf(stderr, "bench/context: VACUUM ANALYZE, CHECKPOINT\n");
	exec_cmd(conn, "VACUUM ANALYZE mnemo.messages, mnemo.message_parts, mnemo.context_items, "
			 "mnemo.summary_nodes, mnemo.summary_edges, mnemo.sessions");
	exec_cmd(conn, "CHECKPOINT");
	for (i = 0; i < nsizes; i++)
	{
		fprintf(stderr, "bench/context: timing %s\n", results[i].session);
		measure(conn, &results[i]);
	}

	printf("%-9s %-7s %-8s %-12s %-13s %-11s %-6s %-16s %-9s\n", "messages", "load s",
		   "leaves", "condensed", "view (summ.)", "build ms", "rows", "baseline ms",
		   "build/base");
	for (i = 0; i < nsizes; i++)
	{
		SizeResult *r = &results[i];
		char		view[32];

		snprintf(view, sizeof(view), "%d (%d)", r->view_items, r->view_summaries);
		printf("%-9ld %-7.1f %-8ld %-12ld %-13s %-11.3f %-6d %-16.3f %-9.2f\n", r->size,
			   r->load_s, r->leaves, r->condensations, view, r->build_ms, r->rows_base,
			   r->base_ms, r->build_ms / r->base_ms);
	}
	printf("\n%-9s %-24s %-18s %-9s\n", "messages", "turn reads: 3 stmts ms", "turn_context ms",
		   "one/three");
	for (i = 0; i < nsizes; i++)
		printf("%-9ld %-24.3f %-18.3f %-9.2f\n", results[i].size, results[i].three_ms,
			   results[i].turn_ms, results[i].turn_ms / results[i].three_ms);
	printf("\n%-9s %-20s %-20s\n", "messages", "prune_tool_outputs", "commit_summary");
	for (i = 0; i < nsizes; i++)
	{
		SizeResult *r = &results[i];
		char		prune[48];

		snprintf(prune, sizeof(prune), "%.3f ms (%d parts)", r->prune_ms, r->pruned);
		printf("%-9ld %-20s %.3f ms\n", r->size, prune, r->commit_ms);
	}

	small = &results[0];
	large = &results[nsizes - 1];
	for (i = 1; i < nsizes; i++)
	{
		if (results[i].size < small->size)
			small = &results[i];
		if (results[i].size > large->size)
			large = &results[i];
	}
	printf("\nbuild_context %ld / %ld messages: %.2f  (target <= 1.3: %s)\n", large->size,
		   small->size, large->build_ms / small->build_ms,
		   large->build_ms / small->build_ms <= 1.3 ? "met" : "NOT MET");
	printf("build_context / baseline at %ld messages: %.2f  (target <= 2: %s)\n", large->size,
		   large->build_ms / large->base_ms,
		   large->build_ms / large->base_ms <= 2 ? "met" : "NOT MET");
	for (i = 0; i < nswaps; i++)
	{
		fprintf(stderr, "bench/context: after a swap, %ld messages%s\n", swaps[i].size,
				swaps[i].held ? ", another snapshot open" : "");
		swap_case(conn, &swaps[i]);
	}
	if (nswaps)
		print_swaps(swaps, nswaps);
	PQfinish(conn);
	return 0;
}
