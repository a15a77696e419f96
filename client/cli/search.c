/*
 * search.c
 *		mnemo search SESSION QUERY: full-text search over a session's log.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static int	run(const char *db, int argc, char **argv);

const cli_command cli_search = {
	"search",
	"full-text search over a session's whole log, best first",
	"Usage: mnemo search SESSION QUERY [--limit N] [--json]\n"
	"\n"
	"Search every message of the session, compacted or not (mnemo.search):\n"
	"one line a hit, best first,\n"
	"  #SEQ ROLE MESSAGE_ID [in context | compacted]  SNIPPET\n"
	"The words of the snippet that matched are bold on a terminal (not when\n"
	"NO_COLOR is set), plain otherwise.\n"
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

/*
 * The length of the mark at p that ts_headline puts around each matched
 * word (its defaults, <b> and </b>: mnemo.search asks for no others), or 0.
 */
static size_t
mark_length(const char *p)
{
	if (strncmp(p, "<b>", 3) == 0)
		return 3;
	if (strncmp(p, "</b>", 4) == 0)
		return 4;
	return 0;
}

/*
 * A snippet made of a tool's input or output reads as text, not as the JSON
 * it is stored as: {"thought": "I'll count", "n": 2} shows as
 * thought: I'll count, n: 2, escapes (\n, \", ...) as what they stand
 * for, a line break as a space.  Malloc'd; NULL when out of memory.
 */
static char *
tidy(const char *s)
{
	static const struct
	{
		const char *json;
		const char *text;
	}			seq[] = {
		{"\": \"", ": "}, {"\", \"", ", "}, {"\":", ":"}, {", \"", ", "}, {"{\"", ""},
		{"\"}", ""}, {"[\"", ""}, {"\"]", ""}, {"\\n", " "}, {"\\t", " "}, {"\\r", " "},
		{"\\\"", "\""}, {"\\\\", "\\"}, {"\\/", "/"}
	};
	char	   *out = malloc(strlen(s) + 1);
	char	   *o = out;

	if (out == NULL)
		return NULL;
	while (*s != '\0')
	{
		size_t		i;

		for (i = 0; i < sizeof(seq) / sizeof(seq[0]); i++)
			if (strncmp(s, seq[i].json, strlen(seq[i].json)) == 0)
				break;
		if (i == sizeof(seq) / sizeof(seq[0]))
		{
			*o++ = *s == '\n' || *s == '\t' ? ' ' : *s;
			s++;
			continue;
		}
		memcpy(o, seq[i].text, strlen(seq[i].text));
		o += strlen(seq[i].text);
		s += strlen(seq[i].json);
	}
	*o = '\0';
	return out;
}

/*
 * The snippet on one line without its marks, which read as part of the
 * message: the matched words bold instead when bold is set.  The text
 * between the marks goes through cli_put_text, so a stored escape sequence
 * stays visible and only ours reach the terminal.
 */
static void
put_snippet(const char *s, bool bold)
{
	const char *run = s;
	bool		in_mark = false;
	size_t		n;

	for (const char *p = s; *p != '\0'; p += n ? n : 1)
	{
		if ((n = mark_length(p)) == 0)
			continue;
		cli_put_text(stdout, run, (size_t) (p - run), true);
		in_mark = p[1] != '/';
		if (bold)
			fputs(in_mark ? "\033[1m" : "\033[0m", stdout);
		run = p + n;
	}
	cli_put_line(stdout, run);
	/* a snippet cut inside a mark must not leave the terminal bold */
	if (bold && in_mark)
		fputs("\033[0m", stdout);
}

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
		{
			char	   *text = tidy(h->snippet ? h->snippet : "");

			put_snippet(text != NULL ? text : (h->snippet ? h->snippet : ""), bold);
			free(text);
		}
		putchar('\n');
	}
	if (json)
		puts(hits->count ? "\n]" : "]");
	else
		fprintf(stderr, "mnemo: %zu hit%s\n", hits->count, cli_s((int64_t) hits->count));
	mnemo_search_hits_free(hits);
	mnemo_store_close(st);
	return cli_flush_output("the hits");
}
