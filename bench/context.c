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
 *   baseline       prepared SELECT * FROM mnemo.log WHERE session_id = $1
 *                  AND seq = ANY($2) ORDER BY seq, part_index: the messages
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

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "common.h"
#include "context.h"

const char *bench_name = "bench/context";

int			calls = 200;
int			warmup = 20;
char		run_tag[32];

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
	printf("baseline: prepared SELECT * FROM mnemo.log WHERE session_id = $1 AND seq = ANY($2) "
		   "(the view's seqs, collected untimed)\n");
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
			"SELECT * FROM mnemo.log "
			"WHERE session_id = $1 AND seq = ANY($2::bigint[]) "
			"ORDER BY seq, part_index");
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
	exec_cmd(conn, "VACUUM ANALYZE mnemo.log, mnemo.context_items, "
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
