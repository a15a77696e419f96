/*
 * search.c
 *		mnemo search SESSION QUERY: full-text search over a session's log.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* the newest messages not yet indexed that a search reads (mnemo.search_history) */
#define SEARCH_DIRECT 2000

static int	run(const char *db, int argc, char **argv);

const cli_command cli_search = {
	"search",
	"full-text search over a session's whole log, newest first",
	"Usage: mnemo search SESSION QUERY [--limit N] [--json]\n"
	"\n"
	"Search every message of the session, compacted or not (mnemo.search):\n"
	"one line a hit, newest first,\n"
	"  #SEQ ROLE MESSAGE_ID [in context | compacted]  SNIPPET\n"
	"The words of the snippet that matched are bold on a terminal (not when\n"
	"NO_COLOR is set), plain otherwise.  Of messages not yet indexed (an\n"
	"import), a search reads the newest 2,000; a line on stderr says when\n"
	"there are more.\n"
	"QUERY is plain words (websearch syntax: \"a phrase\", -not, or).\n"
	"\n"
	"Options:\n"
	"  --limit N  at most N hits (default 50)\n"
	"  --json     a JSON array instead, one object a hit: seq, role,\n"
	"             message_id, in_context, rank, snippet (as the server\n"
	"             wrote it, the matched words between <b> and </b>)\n"
	"\n"
	"Exit status 3 when the session does not exist.\n",
	run
};

static int
run(const char *db, int argc, char **argv)
{
	const char *limit_text = NULL;
	bool		json = false;
	bool		bold;
	cli_option	opts[] = {{"limit", &limit_text, NULL}, {"json", NULL, &json}};
	const char *pos[2];
	mnemo_search_hits *hits = NULL;
	mnemo_session *s = NULL;
	mnemo_store *st;
	int64_t		limit = 50;
	int64_t		pending;
	int			rc;

	if ((rc = cli_parse(&cli_search, argc, argv, opts, 2, pos, 2, 2, NULL)) != CLI_OK)
		return rc == CLI_HELP_SHOWN ? CLI_OK : rc;
	if (limit_text != NULL && !cli_parse_count(&cli_search, "--limit", limit_text, 1, INT32_MAX, &limit))
		return CLI_USAGE;
	if ((st = cli_open(db, &rc)) == NULL)
		return rc;
	/* the session first: a search of no session finds nothing, not an error */
	if (mnemo_session_get(st, pos[0], &s) != MNEMO_OK ||
		mnemo_search(st, pos[0], pos[1], (int) limit, &hits) != MNEMO_OK)
	{
		rc = cli_fail(st);
		mnemo_session_free(s);
		mnemo_store_close(st);
		return rc;
	}
	mnemo_session_free(s);
	bold = !json && cli_color(stdout);
	if (json)
		putchar('[');
	for (size_t i = 0; i < hits->count; i++)
	{
		const mnemo_search_hit *h = &hits->items[i];

		if (json)
		{
			printf("%s\n {\"seq\": %" PRId64 ", \"role\": ", i ? "," : "", h->seq);
			cli_json_string(stdout, h->role);
			fputs(", \"message_id\": ", stdout);
			cli_json_string(stdout, h->message_id);
			printf(", \"in_context\": %s, \"rank\": %g, \"snippet\": ",
				   h->in_context ? "true" : "false", (double) h->rank);
			cli_json_string(stdout, h->snippet);
			putchar('}');
			continue;
		}
		printf("#%" PRId64 " %s ", h->seq, h->role);
		cli_put_line(stdout, h->message_id);
		printf(" %s  ", h->in_context ? "in context" : "compacted");
		cli_put_snippet(h->snippet ? h->snippet : "", bold);
		putchar('\n');
	}
	if (json)
		puts(hits->count ? "\n]" : "]");
	else
		fprintf(stderr, "mnemo: %zu hit%s\n", hits->count, cli_s((int64_t) hits->count));
	mnemo_search_hits_free(hits);

	/*
	 * The server says with a NOTICE what a search could not read of a
	 * backlog; the library drops notices, so ask how large it is.
	 */
	if (mnemo_search_pending(st, pos[0], &pending) == MNEMO_OK && pending > SEARCH_DIRECT)
		fprintf(stderr, "mnemo: %" PRId64 " messages are not yet indexed: a search reads the newest %d "
				"of them directly and the others once indexed "
				"(SELECT mnemo.index_search(session) until mnemo.search_pending(session) is 0)\n",
				pending, SEARCH_DIRECT);
	mnemo_store_close(st);
	return cli_flush_output("the hits");
}
