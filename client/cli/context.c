/*
 * context.c
 *		mnemo context SESSION --budget N: the context build_context assembles,
 *		and what it leaves out.
 */
#include <inttypes.h>
#include <stdio.h>

#include "cli.h"

static int	run(const char *db, int argc, char **argv);

const cli_command cli_context = {
	"context",
	"the context assembled for a token budget, and what it leaves out",
	"Usage: mnemo context SESSION --budget N [--json]\n"
	"\n"
	"Print the context mnemo.build_context assembles for a budget of N tokens,\n"
	"in position order: for each entry a line\n"
	"  --- @POSITION ITEM_TYPE ITEM_ID ROLE (TOKENS tokens)\n"
	"then its content as rendered for the model.  The last line says what was\n"
	"kept and what was left out (mnemo.context_report):\n"
	"  context: budget N, I items (T tokens, S of summaries) included, O items (U tokens) left out\n"
	"\n"
	"Options:\n"
	"  --budget N  the token budget (required)\n"
	"  --json      a JSON array instead, one object an entry: position,\n"
	"              item_type, item_id, role, tokens, content\n"
	"\n"
	"Exit status 3 when the session does not exist.\n",
	run
};

static int
run(const char *db, int argc, char **argv)
{
	const char *budget_text = NULL;
	bool		json = false;
	cli_option	opts[] = {{"budget", &budget_text, NULL}, {"json", NULL, &json}};
	const char *pos[1];
	mnemo_context *ctx = NULL;
	mnemo_context_budget report;
	mnemo_store *st;
	int64_t		budget;
	int			rc;

	if ((rc = cli_parse(&cli_context, argc, argv, opts, 2, pos, 1, 1, NULL)) != CLI_OK)
		return rc == CLI_HELP_SHOWN ? CLI_OK : rc;
	if (budget_text == NULL)
		return cli_usage_error(&cli_context, "--budget N is required");
	if (!cli_parse_count(&cli_context, "--budget", budget_text, 0, INT32_MAX, &budget))
		return CLI_USAGE;
	if ((st = cli_open(db, &rc)) == NULL)
		return rc;
	if (mnemo_context_build(st, pos[0], (int) budget, &ctx) != MNEMO_OK ||
		mnemo_context_report(st, pos[0], (int) budget, &report) != MNEMO_OK)
	{
		rc = cli_fail(st);
		mnemo_context_free(ctx);
		mnemo_store_close(st);
		return rc;
	}
	if (json)
	{
		putchar('[');
		for (size_t i = 0; i < ctx->count; i++)
		{
			const mnemo_context_entry *e = &ctx->items[i];

			printf("%s\n {\"position\": %" PRId64 ", \"item_type\": ", i ? "," : "", e->position);
			cli_json_string(stdout, e->item_type);
			fputs(", \"item_id\": ", stdout);
			cli_json_string(stdout, e->item_id);
			fputs(", \"role\": ", stdout);
			cli_json_string(stdout, e->role);
			printf(", \"tokens\": %d, \"content\": ", e->tokens);
			cli_json_string(stdout, e->content);
			putchar('}');
		}
		puts(ctx->count ? "\n]" : "]");
	}
	else
	{
		for (size_t i = 0; i < ctx->count; i++)
		{
			const mnemo_context_entry *e = &ctx->items[i];

			printf("--- @%" PRId64 " %s ", e->position, e->item_type);
			cli_put_line(stdout, e->item_id);
			printf(" %s (%d token%s)\n", e->role, e->tokens, cli_s(e->tokens));
			cli_put(stdout, e->content);
			putchar('\n');
		}
		printf("context: budget %d, %d item%s (%" PRId64 " token%s, %" PRId64
			   " of summaries) included, %d item%s (%" PRId64 " token%s) left out\n",
			   report.budget_tokens, report.included_items, cli_s(report.included_items),
			   report.included_tokens, cli_s(report.included_tokens), report.summary_tokens,
			   report.omitted_items, cli_s(report.omitted_items), report.omitted_tokens,
			   cli_s(report.omitted_tokens));
	}
	mnemo_context_free(ctx);
	mnemo_store_close(st);
	return cli_flush_output("the context");
}
