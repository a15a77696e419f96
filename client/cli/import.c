/*
 * import.c
 *		mnemo import FILE: a transcript into a new session.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

/* Files from this size on get a progress bar, when stderr is a terminal. */
#define BAR_MIN_BYTES (1024 * 1024)
#define BAR_WIDTH 30

static int	run(const char *db, int argc, char **argv);

const cli_command cli_import = {
	"import",
	"load a transcript (mnemo, Claude Code, pi, OpenAI, Anthropic, SWE-agent, OpenHands, Codex)",
	"Usage: mnemo import FILE [--format NAME] [--session ID] [--new-ids] [--lenient] [--quiet]\n"
	"       mnemo import --follow PATH [--interval MS] [--format NAME]\n"
	"\n"
	"Read a transcript from FILE ('-' for stdin) into a new session, in one\n"
	"transaction: if anything is wrong, nothing is stored.  The format is\n"
	"detected from the first record, or named by --format:\n"
	"  mnemo        mnemo export: a session header line, then one message a line;\n"
	"               the ids of the session, messages and parts are kept\n"
	"  claude-code  a Claude Code session log (~/.claude/projects/.../ID.jsonl)\n"
	"  pi           a pi session log (JSON Lines, first record type \"session\")\n"
	"  openai       OpenAI Chat Completions messages: a JSON array, JSON Lines,\n"
	"               a request body {\"model\", \"messages\"}, or tau-bench results\n"
	"  anthropic    Anthropic Messages messages, the same ways ({\"system\", ...})\n"
	"  swe-agent    a SWE-agent trajectory (.traj, one JSON document)\n"
	"  openhands    an OpenHands event stream, or a resolver run's history\n"
	"  codex        a Codex CLI rollout (~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl)\n"
	"Tool results complete the tool parts of their calls; what mnemo has no\n"
	"field for is kept in the message's metadata and counted; bookkeeping\n"
	"records (Claude Code's progress lines, ...) are left out and counted; a\n"
	"compaction's summary that cannot be restored as the compaction (the\n"
	"context does not hold what it covered) is kept as a message and counted.\n"
	"A transcript with no message, or one that leaves out more than half of\n"
	"its records, fails.  An agent's log that names its own session id, read\n"
	"again (grown since), adds only what is new to that session and says\n"
	"'N new'; a mnemo export imports once (MN004) unless --new-ids asks for a\n"
	"copy.  A Claude Code log's sub-agents (SESSION/subagents/agent-*.jsonl)\n"
	"are child sessions of it; a pi log's branches forks of it.\n"
	"A file of several sessions (an OpenHands resolver output, one run a\n"
	"line; tau-bench results; request bodies one a line) makes one session\n"
	"each, all in the same transaction.\n"
	"Prints each new session's id on stdout, and a summary on stderr.  Large\n"
	"files get a progress bar on stderr when it is a terminal.\n"
	"\n"
	"Options:\n"
	"  --format NAME  the format, instead of detecting it\n"
	"  --session ID   the new session's id (default: the transcript's own id\n"
	"                 when it has one, else a new one)\n"
	"  --new-ids      new ids for the session, messages and parts (to copy a\n"
	"                 transcript into the database it came from)\n"
	"  --lenient      skip a last line cut short (a log still being written)\n"
	"                 and report it, instead of failing\n"
	"  --quiet        no summary on stderr\n"
	"  --follow       follow PATH, a log or a folder of logs (walked for *.jsonl):\n"
	"                 import what the agents append as they write it, until\n"
	"                 SIGTERM or ^C; restarted, it adds only what is new\n"
	"  --interval MS  how often --follow looks for changes (default 1000)\n"
	"\n"
	"Exit status 1 for a malformed file (the message names the line), an id\n"
	"that is taken, or a file that cannot be read.\n",
	run
};

typedef struct skip_count
{
	char	   *kind;
	int64_t		count;
} skip_count;

/* Kinds and how often each was seen, for the summary line. */
typedef struct tally
{
	skip_count *items;
	size_t		n;
} tally;

typedef struct import_state
{
	bool		bar;
	bool		bar_drawn;
	tally		skipped;
	tally		kept;
	tally		replaced;
	int64_t		unrestored;		/* summaries stored as messages */
	bool		oom;
	int64_t		sessions;		/* made, each printed */
	int64_t		updated;		/* of them, read again (update) */
} import_state;

static void
progress(uint64_t done, uint64_t total, void *arg)
{
	import_state *is = arg;
	int			filled;
	char		bar[BAR_WIDTH + 1];

	if (!is->bar || total == 0)
		return;
	if (done > total)
		done = total;
	filled = (int) (done * BAR_WIDTH / total);
	memset(bar, '#', (size_t) filled);
	memset(bar + filled, '-', (size_t) (BAR_WIDTH - filled));
	bar[BAR_WIDTH] = '\0';
	fprintf(stderr, "\rimporting [%s] %3d%%  %.1f of %.1f MB", bar, (int) (done * 100 / total),
			done / 1048576.0, total / 1048576.0);
	fflush(stderr);
	is->bar_drawn = true;
}

static void
count(import_state *is, tally *t, const char *kind)
{
	skip_count *grown;

	for (size_t i = 0; i < t->n; i++)
	{
		if (strcmp(t->items[i].kind, kind) == 0)
		{
			t->items[i].count++;
			return;
		}
	}
	if ((grown = realloc(t->items, (t->n + 1) * sizeof(*grown))) == NULL)
	{
		is->oom = true;
		return;
	}
	t->items = grown;
	if ((grown[t->n].kind = strdup(kind)) == NULL)
	{
		is->oom = true;
		return;
	}
	grown[t->n++].count = 1;
}

static void
skipped(int64_t line, const char *kind, void *arg)
{
	import_state *is = arg;

	(void) line;
	count(is, &is->skipped, kind);
}

static void
kept(int64_t line, const char *kind, void *arg)
{
	import_state *is = arg;

	(void) line;
	count(is, &is->kept, kind);
}

static void
replaced(int64_t line, const char *kind, void *arg)
{
	import_state *is = arg;

	(void) line;
	count(is, &is->replaced, kind);
}

/* A summary stored as a message: kept, so not among the records left out. */
static void
unrestored(int64_t line, const char *kind, void *arg)
{
	import_state *is = arg;

	(void) line;
	(void) kind;
	is->unrestored++;
}

/* What looks wrong and is read anyway (a --format the content disagrees
 * with): said at once, --quiet or not. */
static void
warning(int64_t line, const char *message, void *arg)
{
	(void) arg;
	fprintf(stderr, "mnemo: warning: line %lld: %s\n", (long long) line, message);
}

/* A session read again (an agent's grown log): its count is what is new. */
static void
updated(const char *session_id, int64_t added, void *arg)
{
	import_state *is = arg;

	(void) session_id;
	(void) added;
	is->updated++;
}

/* Each session made, after the commit: its id on stdout. */
static void
session_made(const char *session_id, int64_t messages, void *arg)
{
	import_state *is = arg;

	(void) messages;
	is->sessions++;
	printf("%s\n", session_id);	/* a failure shows in cli_flush_output */
}

static void
tally_free(tally *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->items[i].kind);
	free(t->items);
}

static int
by_count(const void *a, const void *b)
{
	const skip_count *x = a,
			   *y = b;

	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return strcmp(x->kind, y->kind);
}

/* "; WHAT N thing(s): 3 progress, 1 system" */
static void
put_tally(tally *t, const char *what, const char *thing)
{
	int64_t		total = 0;

	for (size_t i = 0; i < t->n; i++)
		total += t->items[i].count;
	if (total == 0)
		return;
	qsort(t->items, t->n, sizeof(*t->items), by_count);
	fprintf(stderr, "; %s %" PRId64 " %s%s:", what, total, thing, total == 1 ? "" : "s");
	for (size_t i = 0; i < t->n; i++)
		fprintf(stderr, "%s %" PRId64 " %s", i ? "," : "", t->items[i].count, t->items[i].kind);
}

static void
summary(import_state *is, const char *session_id, int64_t imported)
{
	/* a log read again: what it added */
	if (is->updated > 0 && is->updated == is->sessions && is->sessions == 1)
		fprintf(stderr, "mnemo: %s: %" PRId64 " new", session_id, imported);
	else if (is->updated > 0 && is->updated == is->sessions)
		fprintf(stderr, "mnemo: %" PRId64 " new in %" PRId64 " sessions", imported, is->sessions);
	else
	{
		fprintf(stderr, "mnemo: imported %" PRId64 " message%s into ", imported,
				imported == 1 ? "" : "s");
		if (is->sessions == 1)
			fprintf(stderr, "%s", session_id);
		else
			fprintf(stderr, "%" PRId64 " sessions", is->sessions);
	}
	put_tally(&is->skipped, "left out", "record");
	put_tally(&is->kept, "kept in metadata", "field");
	if (is->unrestored == 1)
		fprintf(stderr, "; kept 1 summary as a message, not a compaction");
	else if (is->unrestored > 1)
		fprintf(stderr, "; kept %" PRId64 " summaries as messages, not compactions",
				is->unrestored);
	put_tally(&is->replaced, "replaced", "character");
	fprintf(stderr, "\n");
}

static int
run(const char *db, int argc, char **argv)
{
	const char *session_id = NULL;
	const char *format = NULL;
	bool		new_ids = false;
	bool		lenient = false;
	bool		quiet = false;
	bool		follow = false;
	const char *interval = NULL;
	int			interval_ms = 1000;
	cli_option	opts[] = {
		{"session", &session_id, NULL}, {"new-ids", NULL, &new_ids}, {"quiet", NULL, &quiet},
		{"format", &format, NULL}, {"lenient", NULL, &lenient}, {"follow", NULL, &follow},
		{"interval", &interval, NULL}
	};
	const char *pos[1];
	mnemo_import_options io = MNEMO_IMPORT_OPTIONS_INIT;
	import_state is = {0};
	char		sid[MNEMO_ID_MAX + 1];
	int64_t		imported = 0;
	mnemo_store *st;
	FILE	   *in;
	struct stat sb;
	int			rc;

	if ((rc = cli_parse(&cli_import, argc, argv, opts, 7, pos, 1, 1, NULL)) != CLI_OK)
		return rc == CLI_HELP_SHOWN ? CLI_OK : rc;
	if (interval != NULL)
	{
		char	   *end;
		long		v = strtol(interval, &end, 10);

		if (*interval == '\0' || *end != '\0' || v < 10 || v > 3600000)
			return cli_usage_error(&cli_import, "--interval takes milliseconds, 10 to 3600000");
		interval_ms = (int) v;
	}
	if (follow && (session_id != NULL || new_ids || strcmp(pos[0], "-") == 0))
		return cli_usage_error(&cli_import, "--follow reads logs under their own ids, from a "
							   "path: not with --session, --new-ids or -");
	if (follow)
	{
		if (format != NULL && !mnemo_import_format_known(format))
			return cli_usage_error(&cli_import, "unknown --format '%s' (one of %s)", format,
								   mnemo_import_formats());
		if ((st = cli_open(db, &rc)) == NULL)
			return rc;
		io.format = format;
		io.skipped = NULL;
		io.warning = warning;
		rc = cli_import_follow(st, pos[0], &io, interval_ms);
		mnemo_store_close(st);
		return rc;
	}
	if (session_id != NULL && session_id[0] == '\0')
		return cli_usage_error(&cli_import, "--session needs a non-empty id");
	/* a usage error, found before the file is opened or the server asked */
	if (format != NULL && !mnemo_import_format_known(format))
		return cli_usage_error(&cli_import, "unknown --format '%s' (one of %s)", format,
							   mnemo_import_formats());

	if (strcmp(pos[0], "-") == 0)
		in = stdin;
	else if ((in = fopen(pos[0], "r")) == NULL)
	{
		fprintf(stderr, "mnemo: %s: %s\n", pos[0], strerror(errno));
		return CLI_ERROR;
	}
	/* fopen opens a directory, and only the first read fails (EISDIR,
	 * "after line 0"): named here as a missing file is */
	else if (fstat(fileno(in), &sb) == 0 && S_ISDIR(sb.st_mode))
	{
		fprintf(stderr, "mnemo: %s: %s\n", pos[0], strerror(EISDIR));
		fclose(in);
		return CLI_ERROR;
	}
	if ((st = cli_open(db, &rc)) == NULL)
	{
		if (in != stdin)
			fclose(in);
		return rc;
	}

	if (isatty(STDERR_FILENO) && in != stdin)
	{
		long		size;

		/* the size, to decide on the bar; the library measures it again */
		if (fseek(in, 0, SEEK_END) == 0 && (size = ftell(in)) >= BAR_MIN_BYTES)
			is.bar = !quiet;
		rewind(in);
	}
	io.session_id = session_id;
	io.new_ids = new_ids;
	io.progress = progress;
	io.skipped = skipped;
	io.kept = kept;
	io.replaced = replaced;
	io.unrestored = unrestored;
	io.format = format;
	io.lenient = lenient;
	io.session = session_made;
	io.path = in != stdin ? pos[0] : NULL;
	io.warning = warning;
	io.update = true;
	io.updated = updated;
	io.progress_arg = &is;
	rc = mnemo_import_jsonl(st, in, &io, sid, &imported);
	if (is.bar_drawn)
		fprintf(stderr, "\n");
	if (rc != MNEMO_OK)
		rc = cli_fail(st);
	else
	{
		if (!quiet)
			summary(&is, sid, imported);
		rc = cli_flush_output("the session id");
	}
	tally_free(&is.skipped);
	tally_free(&is.kept);
	tally_free(&is.replaced);
	if (in != stdin)
		fclose(in);
	mnemo_store_close(st);
	return rc;
}
