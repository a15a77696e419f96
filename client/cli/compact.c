/*
 * compact.c
 *		mnemo compact SESSION: run the compaction engine (mnemo_compact)
 *		on a session, with its progress.
 */
#include <inttypes.h>
#include <stdio.h>

#include "cli.h"

static int	run(const char *db, int argc, char **argv);

const cli_command cli_compact = {
	"compact",
	"compact a session: summarise its oldest context, level 1, 2 or 3",
	"Usage: mnemo compact SESSION [--level N] [--budget N] [--dry-run]\n"
	"\n"
	"Run the compaction engine on the session (see doc/compaction.md): take\n"
	"its compaction claim, prune tool outputs, then summarise the oldest block\n"
	"of its context outside the fresh tail (messages, else summaries of one\n"
	"depth) by Level 1, else 2, else 3, and commit it; with --budget, round\n"
	"after round while the context is over N tokens.  The compaction model is\n"
	"the session's provider and model, or what the environment names\n"
	"(OPENAI_API_KEY, ANTHROPIC_API_KEY, *_BASE_URL); without one, Level 3.\n"
	"Prints a line as the compaction starts, one per summary committed\n"
	"  ID: KIND summary of I items at level L; context now T tokens\n"
	"and last\n"
	"  compact: S summaries (L1 a, L2 b, L3 c), T1 -> T2 tokens, P tool outputs pruned\n"
	"or, when another process holds the session's claim,\n"
	"  compact: another compactor holds the claim; nothing done\n"
	"\n"
	"Options:\n"
	"  --level N   the level to start at: 1 (default), 2, or 3 (no model)\n"
	"  --budget N  compact until the context is at most N tokens (default: one round)\n"
	"  --dry-run   only print the block the first round would summarise:\n"
	"                would summarise: KIND, I items, T tokens (context T0 tokens)\n"
	"\n"
	"Exit status 3 when the session does not exist.\n",
	run
};

static int
started(mnemo_store *st, const mnemo_event *ev, void *arg)
{
	(void) st;
	(void) arg;
	printf("compacting %s\n", ev->session_id);
	fflush(stdout);
	return 0;
}

static void
progress(const char *summary_id, const char *kind, int level, int items, int64_t tokens_after,
		 void *arg)
{
	(void) arg;
	printf("  %s: %s summary of %d items at level %d; context now %" PRId64 " tokens\n",
		   summary_id, kind, items, level, tokens_after);
	fflush(stdout);
}

static int
run(const char *db, int argc, char **argv)
{
	const char *level_text = NULL;
	const char *budget_text = NULL;
	bool		dry = false;
	cli_option	opts[] = {
		{"level", &level_text, NULL},
		{"budget", &budget_text, NULL},
		{"dry-run", NULL, &dry}
	};
	const char *pos[1];
	mnemo_compact_options o = MNEMO_COMPACT_OPTIONS_INIT;
	mnemo_compact_result r;
	mnemo_store *st;
	int64_t		n;
	int			rc;

	if ((rc = cli_parse(&cli_compact, argc, argv, opts, 3, pos, 1, 1, NULL)) != CLI_OK)
		return rc == CLI_HELP_SHOWN ? CLI_OK : rc;
	if (level_text != NULL)
	{
		if (!cli_parse_count(&cli_compact, "--level", level_text, 1, 3, &n))
			return CLI_USAGE;
		o.first_level = (int) n;
	}
	if (budget_text != NULL)
	{
		if (!cli_parse_count(&cli_compact, "--budget", budget_text, 1, INT32_MAX, &n))
			return CLI_USAGE;
		o.budget_tokens = (int) n;
	}
	o.dry_run = dry;
	if ((st = cli_open(db, &rc)) == NULL)
		return rc;
	if (mnemo_global_init() != MNEMO_OK)
	{
		fputs("mnemo: libcurl could not initialise\n", stderr);
		mnemo_store_close(st);
		return CLI_ERROR;
	}
	mnemo_event_subscribe(st, MNEMO_EVENT_COMPACTION_TRIGGERED, started, NULL);
	o.progress = progress;
	if (mnemo_compact(st, pos[0], &o, &r) != MNEMO_OK)
		rc = cli_fail(st);
	else if (dry && r.block_items == 0)
		printf("would summarise: nothing (context %" PRId64 " tokens)\n", r.tokens_before);
	else if (dry)
		printf("would summarise: %s, %d item%s, %d token%s (context %" PRId64 " token%s)\n",
			   r.block_kind, r.block_items, cli_s(r.block_items), r.block_tokens,
			   cli_s(r.block_tokens), r.tokens_before, cli_s(r.tokens_before));
	else if (r.lost && r.summaries == 0)
		printf("compact: another compactor holds the claim; nothing done\n");
	else
		printf("compact: %d %s (L1 %d, L2 %d, L3 %d), %" PRId64 " -> %" PRId64
			   " token%s, %d tool output%s pruned\n", r.summaries,
			   r.summaries == 1 ? "summary" : "summaries", r.levels[1], r.levels[2],
			   r.levels[3], r.tokens_before, r.tokens_after, cli_s(r.tokens_after), r.pruned,
			   cli_s(r.pruned));
	mnemo_store_close(st);
	mnemo_global_cleanup();
	return rc;
}
