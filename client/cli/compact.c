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
	"compact a session under a budget: summarise its oldest context, level 1, 2 or 3",
	"Usage: mnemo compact SESSION [--budget N] [--level N] [--provider P] [--model M]\n"
	"                     [--ttl MS] [--dry-run]\n"
	"       mnemo compact SESSION --release\n"
	"\n"
	"Run the compaction engine on the session (see doc/compaction.md): take\n"
	"its compaction claim, prune tool outputs, then, round after round while\n"
	"the context is over the budget, summarise the oldest block of its context\n"
	"outside what the budget protects (messages, else summaries) by Level 1,\n"
	"else 2, else 3, and commit it.  Without --budget the budget is half the\n"
	"context's size now: \"compact this session\" halves it.  At a budget B,\n"
	"the newest messages within B/4 and the task (the first user message,\n"
	"while it is at most B/4) stay verbatim, then only the latest user\n"
	"message, as far as B needs.  The compaction model is the session's\n"
	"provider and model (or --provider and --model), with the key and base\n"
	"URL the environment names (OPENAI_API_KEY, ANTHROPIC_API_KEY,\n"
	"*_BASE_URL); without one, Level 3.\n"
	"Prints a line as the compaction starts, one per summary committed\n"
	"  ID: KIND summary of I items at level L; context now T tokens\n"
	"and last\n"
	"  compact: S summaries (L1 a, L2 b, L3 c), T1 -> T2 tokens, P tool outputs pruned\n"
	"or, when another process holds the session's claim,\n"
	"  compact: another compactor holds the claim; nothing done\n"
	"When the budget is below the session's floor (the latest user message,\n"
	"summaries at their least, what cannot be summarised), it compacts as far\n"
	"as it can, says the floor on stderr and exits 5.\n"
	"\n"
	"Options:\n"
	"  --budget N  compact until the context is at most N tokens\n"
	"              (default: half its size now)\n"
	"  --level N   the level to start at: 1 (default), 2, or 3 (no model)\n"
	"  --provider P  the compaction model's provider, openai or anthropic\n"
	"              (default: the session's, else the environment's)\n"
	"  --model M   the compaction model (default: the session's); an imported\n"
	"              session often names none\n"

	"  --ttl MS    the claim's lease, renewed every round (default 300000): a\n"
	"              compaction killed mid-way blocks others for at most MS\n"
	"  --release   end the session's claim, whoever holds it (a compactor that\n"
	"              was killed), and print its holder; nothing else\n"
	"  --dry-run   only print the block the first round would summarise:\n"
	"                would summarise: KIND, I items, T tokens (context T0 tokens)\n"
	"\n"
	"Exit status 3 when the session does not exist, 4 when the connection is\n"
	"lost (its backend killed), 5 when the budget is below the floor.\n",
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

/* mnemo compact SESSION --release */
static int
release(mnemo_store *st, const char *sid)
{
	char		holder[MNEMO_ID_MAX + 1];

	if (mnemo_compact_release(st, sid, holder) != MNEMO_OK)
		return cli_fail(st);
	if (holder[0] == '\0')
		printf("compact: no claim on %s\n", sid);
	else
		printf("compact: released the claim of %s\n", holder);
	return cli_flush_output("the release");
}

static int
run(const char *db, int argc, char **argv)
{
	const char *level_text = NULL;
	const char *budget_text = NULL;
	const char *ttl_text = NULL;
	const char *provider = NULL;
	const char *model = NULL;
	bool		dry = false;
	bool		drop = false;
	cli_option	opts[] = {
		{"level", &level_text, NULL},
		{"budget", &budget_text, NULL},
		{"ttl", &ttl_text, NULL},
		{"provider", &provider, NULL},
		{"model", &model, NULL},
		{"release", NULL, &drop},
		{"dry-run", NULL, &dry}
	};
	const char *pos[1];
	mnemo_compact_options o = MNEMO_COMPACT_OPTIONS_INIT;
	mnemo_compact_result r;
	mnemo_store *st;
	int64_t		n;
	int			rc;
	int			err;

	if ((rc = cli_parse(&cli_compact, argc, argv, opts, 7, pos, 1, 1, NULL)) != CLI_OK)
		return rc == CLI_HELP_SHOWN ? CLI_OK : rc;
	if (drop && (level_text || budget_text || ttl_text || provider || model || dry))
		return cli_usage_error(&cli_compact, "--release takes no other option");
	if (level_text != NULL)
	{
		if (!cli_parse_count(&cli_compact, "--level", level_text, 1, 3, &n))
			return CLI_USAGE;
		o.first_level = (int) n;
	}
	o.provider = provider;
	o.model = model;
	if (budget_text != NULL)
	{
		if (!cli_parse_count(&cli_compact, "--budget", budget_text, 1, INT32_MAX, &n))
			return CLI_USAGE;
		o.budget_tokens = (int) n;
	}
	if (ttl_text != NULL)
	{
		if (!cli_parse_count(&cli_compact, "--ttl", ttl_text, 1, INT32_MAX, &n))
			return CLI_USAGE;
		o.claim_ttl_ms = (int) n;
	}
	o.dry_run = dry;
	if ((st = cli_open(db, &rc)) == NULL)
		return rc;
	if (drop)
	{
		rc = release(st, pos[0]);
		mnemo_store_close(st);
		return rc;
	}
	if (mnemo_global_init() != MNEMO_OK)
	{
		fputs("mnemo: libcurl could not initialise\n", stderr);
		mnemo_store_close(st);
		return CLI_ERROR;
	}
	mnemo_event_subscribe(st, MNEMO_EVENT_COMPACTION_STARTED, started, NULL);
	o.progress = progress;
	err = MNEMO_OK;
	if (o.budget_tokens == 0)
	{
		/* no budget: half the context's size now */
		mnemo_compact_options d = MNEMO_COMPACT_OPTIONS_INIT;

		d.dry_run = true;
		if ((err = mnemo_compact(st, pos[0], &d, &r)) == MNEMO_OK)
			o.budget_tokens = r.tokens_before / 2 > 0 ? (int) (r.tokens_before / 2) : 1;
	}
	if (err == MNEMO_OK)
		err = mnemo_compact(st, pos[0], &o, &r);
	if (err != MNEMO_OK && err != MNEMO_ERR_OVER_BUDGET)
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
	if (err == MNEMO_ERR_OVER_BUDGET)
	{
		fflush(stdout);
		rc = cli_fail(st);
	}
	mnemo_store_close(st);
	mnemo_global_cleanup();
	return rc;
}
