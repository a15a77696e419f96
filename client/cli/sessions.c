/*
 * sessions.c
 *		mnemo sessions: the sessions, newest first.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static int	run(const char *db, int argc, char **argv);

const cli_command cli_sessions = {
	"sessions",
	"list sessions, newest first",
	"Usage: mnemo sessions [--all] [--limit N] [--sort created|updated] [--json]\n"
	"\n"
	"List sessions, newest first: one line each with the id, the creation\n"
	"time (UTC), the number of messages (the last seq) and the title, under\n"
	"a header line.  Columns are separated by two or more spaces; the title,\n"
	"which may contain spaces, comes last.\n"
	"\n"
	"Options:\n"
	"  --all       also soft-deleted sessions (marked \"(inactive)\")\n"
	"  --limit N   at most N sessions (default 100); when there are more, a\n"
	"              line on stderr says so (not with --json)\n"
	"  --sort updated  by the last write instead, newest first (an imported\n"
	"              log's is its import, its creation the log's own time), the\n"
	"              time column UPDATED; --sort created is the default\n"
	"  --json      a JSON array instead, one object a session: id, created_at\n"
	"              (ms), title, messages, active, agent, model_id, provider_id\n",
	run
};

static void
print_json(const mnemo_sessions *list, size_t n)
{
	putchar('[');
	for (size_t i = 0; i < n; i++)
	{
		const mnemo_session *s = &list->items[i];

		printf("%s\n {\"id\": ", i ? "," : "");
		cli_json_string(stdout, s->id);
		printf(", \"created_at\": %" PRId64 ", \"title\": ", s->created_at);
		cli_json_string(stdout, s->title);
		printf(", \"messages\": %" PRId64 ", \"active\": %s, \"agent\": ", s->last_seq,
			   s->is_active ? "true" : "false");
		cli_json_string(stdout, s->agent);
		fputs(", \"model_id\": ", stdout);
		cli_json_string(stdout, s->model_id);
		fputs(", \"provider_id\": ", stdout);
		cli_json_string(stdout, s->provider_id);
		putchar('}');
	}
	puts(n ? "\n]" : "]");
}

static void
print_table(const mnemo_sessions *list, size_t n, bool updated)
{
	size_t		width = strlen("ID");

	for (size_t i = 0; i < n; i++)
		if (strlen(list->items[i].id) > width)
			width = strlen(list->items[i].id);
	printf("%-*s  %-24s  %8s  %s\n", (int) width, "ID", updated ? "UPDATED" : "CREATED",
		   "MESSAGES", "TITLE");
	for (size_t i = 0; i < n; i++)
	{
		const mnemo_session *s = &list->items[i];
		char		when[64];

		cli_put_line(stdout, s->id);
		printf("%*s  %-24s  %8" PRId64 "  ", (int) (width - strlen(s->id)), "",
			   cli_time(when, updated ? s->updated_at : s->created_at), s->last_seq);
		cli_put_line(stdout, s->title ? s->title : "");
		printf("%s\n", s->is_active ? "" : (s->title ? " (inactive)" : "(inactive)"));
	}
}

/* Newest write first; ties by id, newest first as the ids are. */
static int
by_updated(const void *a, const void *b)
{
	const mnemo_session *x = a,
			   *y = b;

	if (x->updated_at != y->updated_at)
		return x->updated_at < y->updated_at ? 1 : -1;
	return -strcmp(x->id, y->id);
}

static int
run(const char *db, int argc, char **argv)
{
	bool		all = false;
	const char *limit_text = NULL;
	bool		json = false;
	const char *sort = NULL;
	bool		updated;
	cli_option	opts[] = {{"all", NULL, &all}, {"limit", &limit_text, NULL}, {"json", NULL, &json},
	{"sort", &sort, NULL}};
	mnemo_session_filter filter = MNEMO_SESSION_FILTER_INIT;
	mnemo_sessions *list = NULL;
	mnemo_store *st;
	int64_t		limit = 100;
	size_t		shown;
	int			rc;

	if ((rc = cli_parse(&cli_sessions, argc, argv, opts, 4, NULL, 0, 0, NULL)) != CLI_OK)
		return rc == CLI_HELP_SHOWN ? CLI_OK : rc;
	if (sort != NULL && strcmp(sort, "created") != 0 && strcmp(sort, "updated") != 0)
		return cli_usage_error(&cli_sessions, "--sort takes created or updated, not '%s'", sort);
	updated = sort != NULL && strcmp(sort, "updated") == 0;
	if (limit_text != NULL && !cli_parse_count(&cli_sessions, "--limit", limit_text, 1, INT32_MAX, &limit))
		return CLI_USAGE;
	if ((st = cli_open(db, &rc)) == NULL)
		return rc;

	filter.include_inactive = all;
	/* one more than shown: whether the limit cut the list, at no extra query */
	filter.limit = (int) (limit < INT32_MAX ? limit + 1 : limit);
	/* the server lists by creation: by the last write, all of them, sorted here */
	if (updated)
		filter.limit = INT32_MAX;
	if (mnemo_session_list(st, &filter, &list) != MNEMO_OK)
	{
		rc = cli_fail(st);
		mnemo_store_close(st);
		return rc;
	}
	if (updated && list->count > 1)
		qsort(list->items, list->count, sizeof(*list->items), by_updated);
	shown = list->count > (size_t) limit ? (size_t) limit : list->count;
	if (json)
		print_json(list, shown);
	else
	{
		print_table(list, shown, updated);
		/* a list that silently stops looks like all there is */
		if (shown < list->count)
			fprintf(stderr, "mnemo: %zu session%s shown, and there are more: --limit N for more\n",
					shown, cli_s((int64_t) shown));
	}
	mnemo_sessions_free(list);
	mnemo_store_close(st);
	return cli_flush_output("the list");
}
