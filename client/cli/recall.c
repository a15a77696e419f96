/*
 * recall.c
 *		mnemo grep, describe and expand: the recall tools a chat turn gives
 *		its model (lcm_grep, lcm_describe, lcm_expand), for a person.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static int	run_grep(const char *db, int argc, char **argv);
static int	run_describe(const char *db, int argc, char **argv);
static int	run_expand(const char *db, int argc, char **argv);

const cli_command cli_grep = {
	"grep",
	"find what compaction took out of the context, by the summary that covers it",
	"Usage: mnemo grep SESSION PATTERN [--regex] [--under SUMMARY] [--limit N]\n"
	"                  [--before SEQ] [--json]\n"
	"\n"
	"Search the session's whole line, newest first (mnemo.recall_search), and\n"
	"group the hits by\n"
	"the summary of the context view that now covers each (\"in context\" when\n"
	"the message is itself in context): the summary to `mnemo expand`.\n"
	"PATTERN is plain words (as `mnemo search`), or with --regex a PostgreSQL\n"
	"regular expression matched against the newest 5,000 messages of the scope\n"
	"(at most 256 bytes, no back-references).\n"
	"\n"
	"Options:\n"
	"  --regex         PATTERN is a regular expression\n"
	"  --under SUMMARY search only what SUMMARY covers\n"
	"  --limit N       at most N hits (1 to 200, default 20)\n"
	"  --before SEQ    the hits before message SEQ (the next page: the last\n"
	"                  hit's seq)\n"
	"  --json          a JSON array, one object a hit: seq, role, message_id,\n"
	"                  in_context, covered_by (null in context), snippet\n"
	"\n"
	"Exit status 3 when the session or the summary does not exist.\n",
	run_grep
};

const cli_command cli_describe = {
	"describe",
	"what a summary or a file reference is: span, depth, text",
	"Usage: mnemo describe SESSION ID\n"
	"\n"
	"Describe ID (mnemo_recall_describe): a summary of the session (its kind,\n"
	"depth and level, the messages it covers, its tokens, the summary that\n"
	"condensed it, and its text) or a file reference (path, type, tokens and\n"
	"exploration summary).\n"
	"\n"
	"Exit status 3 when the session does not exist or ID is neither.\n",
	run_describe
};

const cli_command cli_expand = {
	"expand",
	"the messages a summary covers, as the model reads them, a page at a time",
	"Usage: mnemo expand SESSION SUMMARY [--offset N] [--max-tokens N]\n"
	"\n"
	"Print the items directly under SUMMARY (mnemo.recall_expand): its messages,\n"
	"or the summaries it condensed, each headed [ROLE #SEQ ID] and rendered as\n"
	"the context renders them, tombstoned tool outputs whole.  A page holds\n"
	"items while their tokens stay within --max-tokens; the last line says\n"
	"where the next page starts.  (`mnemo show` prints the raw messages.)\n"
	"\n"
	"Options:\n"
	"  --offset N      start after the first N items\n"
	"  --max-tokens N  a page's tokens (100 to 100000, default 4000)\n"
	"\n"
	"Exit status 3 when the session or the summary does not exist.\n",
	run_expand
};

static void
put_json_hit(const mnemo_recall_hit *h, bool first)
{
	printf("%s\n {\"seq\": %" PRId64 ", \"role\": ", first ? "" : ",", h->seq);
	cli_json_string(stdout, h->role);
	fputs(", \"message_id\": ", stdout);
	cli_json_string(stdout, h->message_id);
	printf(", \"in_context\": %s, \"covered_by\": ", h->in_context ? "true" : "false");
	if (h->covered_by != NULL)
		cli_json_string(stdout, h->covered_by);
	else
		fputs("null", stdout);
	fputs(", \"snippet\": ", stdout);
	cli_json_string(stdout, h->snippet);
	putchar('}');
}

static bool
same_cover(const char *a, const char *b)
{
	return a == NULL ? b == NULL : b != NULL && strcmp(a, b) == 0;
}

static int
run_grep(const char *db, int argc, char **argv)
{
	const char *limit_text = NULL;
	const char *before_text = NULL;
	const char *under = NULL;
	bool		regex = false;
	bool		json = false;
	bool		bold;
	cli_option	opts[] = {{"limit", &limit_text, NULL}, {"before", &before_text, NULL},
	{"under", &under, NULL}, {"regex", NULL, &regex}, {"json", NULL, &json}};
	const char *pos[2];
	mnemo_recall_hits *hits = NULL;
	mnemo_store *st;
	int64_t		limit = 20;
	int64_t		before = 0;
	int			rc;

	if ((rc = cli_parse(&cli_grep, argc, argv, opts, 5, pos, 2, 2, NULL)) != CLI_OK)
		return rc == CLI_HELP_SHOWN ? CLI_OK : rc;
	if ((limit_text != NULL && !cli_parse_count(&cli_grep, "--limit", limit_text, 1, 200, &limit)) ||
		(before_text != NULL && !cli_parse_count(&cli_grep, "--before", before_text, 1, INT64_MAX, &before)))
		return CLI_USAGE;
	if ((st = cli_open(db, &rc)) == NULL)
		return rc;
	if (mnemo_recall_grep(st, pos[0], pos[1], under, regex, (int) limit, before, &hits) != MNEMO_OK)
	{
		rc = cli_fail(st);
		mnemo_store_close(st);
		return rc;
	}
	bold = !json && cli_color(stdout);
	if (json)
	{
		putchar('[');
		for (size_t i = 0; i < hits->count; i++)
			put_json_hit(&hits->items[i], i == 0);
		puts(hits->count ? "\n]" : "]");
	}
	/* grouped by what covers them, each group where its first hit came */
	for (size_t g = 0; !json && g < hits->count; g++)
	{
		const char *cover = hits->items[g].covered_by;
		bool		seen = false;

		for (size_t i = 0; i < g && !seen; i++)
			seen = same_cover(cover, hits->items[i].covered_by);
		if (seen)
			continue;
		if (cover != NULL)
		{
			fputs("under summary ", stdout);
			cli_put_line(stdout, cover);
			putchar('\n');
		}
		else if (hits->items[g].in_context)
			puts("in context");
		else
			puts("out of context, under no summary");
		for (size_t i = g; i < hits->count; i++)
		{
			const mnemo_recall_hit *h = &hits->items[i];

			if (!same_cover(cover, h->covered_by))
				continue;
			printf("  #%" PRId64 " %s ", h->seq, h->role);
			cli_put_line(stdout, h->message_id);
			fputs("  ", stdout);
			cli_put_snippet(h->snippet ? h->snippet : "", bold);
			putchar('\n');
		}
	}
	if (!json && hits->count == (size_t) limit)
		fprintf(stderr, "mnemo: %zu hits (more with --before %" PRId64 ")\n", hits->count,
				hits->items[hits->count - 1].seq);
	else if (!json)
		fprintf(stderr, "mnemo: %zu hit%s\n", hits->count, cli_s((int64_t) hits->count));
	mnemo_recall_hits_free(hits);
	mnemo_store_close(st);
	return cli_flush_output("the hits");
}

static int
run_describe(const char *db, int argc, char **argv)
{
	const char *pos[2];
	mnemo_store *st;
	char	   *text = NULL;
	int			rc;

	if ((rc = cli_parse(&cli_describe, argc, argv, NULL, 0, pos, 2, 2, NULL)) != CLI_OK)
		return rc == CLI_HELP_SHOWN ? CLI_OK : rc;
	if ((st = cli_open(db, &rc)) == NULL)
		return rc;
	if (mnemo_recall_describe(st, pos[0], pos[1], &text) != MNEMO_OK)
	{
		rc = cli_fail(st);
		mnemo_store_close(st);
		return rc;
	}
	cli_put(stdout, text);
	putchar('\n');
	free(text);
	mnemo_store_close(st);
	return cli_flush_output("the description");
}

static int
run_expand(const char *db, int argc, char **argv)
{
	const char *offset_text = NULL;
	const char *max_text = NULL;
	cli_option	opts[] = {{"offset", &offset_text, NULL}, {"max-tokens", &max_text, NULL}};
	const char *pos[2];
	mnemo_recall_page *page = NULL;
	mnemo_store *st;
	int64_t		offset = 0;
	int64_t		max_tokens = 4000;
	int			rc;

	if ((rc = cli_parse(&cli_expand, argc, argv, opts, 2, pos, 2, 2, NULL)) != CLI_OK)
		return rc == CLI_HELP_SHOWN ? CLI_OK : rc;
	if ((offset_text != NULL && !cli_parse_count(&cli_expand, "--offset", offset_text, 0, INT32_MAX, &offset)) ||
		(max_text != NULL && !cli_parse_count(&cli_expand, "--max-tokens", max_text, 100, 100000, &max_tokens)))
		return CLI_USAGE;
	if ((st = cli_open(db, &rc)) == NULL)
		return rc;
	if (mnemo_recall_expand(st, pos[0], pos[1], (int) offset, (int) max_tokens, &page) != MNEMO_OK)
	{
		rc = cli_fail(st);
		mnemo_store_close(st);
		return rc;
	}
	for (size_t i = 0; i < page->count; i++)
	{
		cli_put(stdout, page->items[i].content);
		fputs("\n\n", stdout);
	}
	if (page->next_offset >= 0)
		fprintf(stderr, "mnemo: items %d-%d of %d; next page: --offset %d\n",
				page->count ? page->items[0].ordinal : 0,
				page->count ? page->items[page->count - 1].ordinal : 0, page->total, page->next_offset);
	else
		fprintf(stderr, "mnemo: %zu item%s of %d\n", page->count, cli_s((int64_t) page->count), page->total);
	mnemo_recall_page_free(page);
	mnemo_store_close(st);
	return cli_flush_output("the items");
}
