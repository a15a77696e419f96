/*
 * t_compact_edges.c
 *		The compaction engine (mnemo_compact, Level 3: no model) on the edge
 *		cases of an application's sessions: a single message far bigger than
 *		the block budget after a few short ones; an agent's loop of tool
 *		steps after one prompt; a block of three one-word messages.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libpq-fe.h>

#include "mnemo.h"
#include "tap.h"
#include "helpers.h"

/*
 * A few short messages, then one far over the block budget (a pasted log),
 * then short turns.  The first block is the short messages: its Level 3
 * summary, marker included, is no smaller than they were, so that round
 * cannot shrink the context; the next block starts with the big message.
 * The engine must go on to it rather than stop with the context still over
 * its budget (a turn's blocking compaction would then fail the turn).
 */
static void
test_big_after_short(mnemo_store *st)
{
	mnemo_compact_options o = MNEMO_COMPACT_OPTIONS_INIT;
	mnemo_compact_result r;
	char	   *big;
	char	   *covered;
	int			i;

	new_session(st, "ca_edge_big");
	big = malloc(400001);
	if (big == NULL)
		bail_out("out of memory");
	for (i = 0; i < 400000; i++)
		big[i] = "abcd "[i % 5];
	big[400000] = '\0';
	for (i = 1; i <= 20; i++)
	{
		mnemo_new_message m = MNEMO_NEW_MESSAGE_INIT;
		char		text[32];

		m.role = i % 2 == 0 ? "user" : "assistant";
		snprintf(text, sizeof(text), "msg %d", i);
		append_text_message(st, "ca_edge_big", &m, i == 5 ? big : text);
	}
	free(big);

	o.first_level = 3;
	o.budget_tokens = 2000;
	is_int(mnemo_compact(st, "ca_edge_big", &o, &r), MNEMO_OK, "compacts (%s)", mnemo_errmsg(st));
	ok(r.tokens_before > 100000, "the context was over 100,000 tokens (%lld)",
	   (long long) r.tokens_before);
	ok(r.tokens_after <= o.budget_tokens, "the context is under its budget after (%lld -> %lld, %d summaries)",
	   (long long) r.tokens_before, (long long) r.tokens_after, r.summaries);
	covered = sql_value("SELECT count(*) FROM mnemo.summary_nodes('ca_edge_big') n, "
						"mnemo.expand_summary('ca_edge_big', n.id, true) e "
						"WHERE e.item_type = 'message' AND e.seq = 5", NULL);
	is_str(covered, "1", "the big message is summarised, and expands back");
	free(covered);
}

/*
 * An agent's loop after one prompt: the library's own loop sends on after
 * tool results with no user message, so the session has one user message
 * and then only steps.  The user-turn rule protected all of it: nothing was
 * ever compacted, and build_context cut the oldest messages, the prompt
 * first, out of the context instead.  Now the steps are summarised and the
 * prompt stays.
 */
static void
test_agent_loop(mnemo_store *st)
{
	mnemo_compact_options o = MNEMO_COMPACT_OPTIONS_INIT;
	mnemo_compact_result r;
	mnemo_new_message m = MNEMO_NEW_MESSAGE_INIT;
	char		text[4200];
	char	   *covered;
	int			i;

	new_session(st, "ca_edge_loop");
	m.role = "user";
	append_text_message(st, "ca_edge_loop", &m, "Fix the failing test in the parser");
	for (i = 1; i <= 80; i++)
	{
		mnemo_new_message step = MNEMO_NEW_MESSAGE_INIT;

		step.role = i % 2 == 0 ? "tool" : "assistant";
		snprintf(text, sizeof(text), "step %d %04000d", i, i);
		append_text_message(st, "ca_edge_loop", &step, text);
	}
	o.first_level = 3;
	o.budget_tokens = 40000;
	is_int(mnemo_compact(st, "ca_edge_loop", &o, &r), MNEMO_OK, "compacts (%s)", mnemo_errmsg(st));
	ok(r.summaries > 0 && r.tokens_after <= o.budget_tokens,
	   "the loop's older steps are summarised, under the budget (%lld -> %lld, %d summaries)",
	   (long long) r.tokens_before, (long long) r.tokens_after, r.summaries);
	/* the task (and latest user message) is protected while it fits in a
	 * quarter of the budget: verbatim in context, not summarised */
	covered = sql_value("SELECT count(*) FROM mnemo.get_context_items('ca_edge_loop') c "
						"JOIN mnemo.messages m ON m.session_id = 'ca_edge_loop' AND m.id = c.item_id "
						"WHERE m.seq = 1", NULL);
	is_str(covered, "1", "the prompt stays verbatim in context");
	free(covered);
}

/*
 * Three one-word messages before a big one: the block is the three, whose
 * Level 3 cap (half their 10 tokens, plus one) left no room for the marker,
 * and truncate_summary gave an empty text: an empty assistant message in
 * every later context (which Anthropic's API refuses).
 */
static void
test_tiny_block(mnemo_store *st)
{
	mnemo_compact_options o = MNEMO_COMPACT_OPTIONS_INIT;
	mnemo_compact_result r;
	char	   *big;
	char	   *empty;
	int			i;

	new_session(st, "ca_edge_tiny");
	big = malloc(100001);
	if (big == NULL)
		bail_out("out of memory");
	for (i = 0; i < 100000; i++)
		big[i] = "w "[i % 2];
	big[100000] = '\0';
	for (i = 1; i <= 16; i++)
	{
		mnemo_new_message m = MNEMO_NEW_MESSAGE_INIT;

		m.role = i % 2 == 0 ? "assistant" : "user";
		append_text_message(st, "ca_edge_tiny", &m, i <= 3 ? "ok" : i == 4 ? big : "fine");
	}
	free(big);
	o.first_level = 3;
	o.max_rounds = 1;
	is_int(mnemo_compact(st, "ca_edge_tiny", &o, &r), MNEMO_OK, "compacts (%s)", mnemo_errmsg(st));
	is_int(r.summaries, 1, "one summary, of the three short messages");
	empty = sql_value("SELECT count(*) FROM mnemo.build_context('ca_edge_tiny', 100000) "
					  "WHERE item_type = 'summary' AND btrim(content) = ''", NULL);
	is_str(empty, "0", "its text is not empty");
	free(empty);
}

int
main(void)
{
	mnemo_store *st;

	if (mnemo_global_init() != MNEMO_OK)
		bail_out("mnemo_global_init");
	st = open_store(NULL);
	test_big_after_short(st);
	test_agent_loop(st);
	test_tiny_block(st);
	mnemo_store_close(st);
	mnemo_global_cleanup();
	return tap_done();
}
