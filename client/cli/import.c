/*
 * import.c
 *		mnemo import FILE: a transcript into a new session.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

/* Files from this size on get a progress bar, when stderr is a terminal. */
#define BAR_MIN_BYTES (1024 * 1024)
#define BAR_WIDTH 30

static int	run(const char *db, int argc, char **argv);

const cli_command cli_import = {
	"import",
	"load a transcript (a mnemo export or a Claude Code log) into a new session",
	"Usage: mnemo import FILE [--session ID] [--new-ids] [--quiet]\n"
	"\n"
	"Read a transcript from FILE ('-' for stdin) into a new session, in one\n"
	"transaction: if anything is wrong, nothing is stored.  The format is\n"
	"detected from the first record:\n"
	"  - mnemo's export format (mnemo export), one message a line; the ids of\n"
	"    messages and parts are kept, so importing a file twice into one\n"
	"    database fails unless --new-ids is given;\n"
	"  - a Claude Code session log (~/.claude/projects/.../SESSION.jsonl): user\n"
	"    and assistant records become messages, tool results complete the tool\n"
	"    parts of their calls, and bookkeeping records (progress, system,\n"
	"    file-history-snapshot, ...) are left out and counted.\n"
	"Prints the new session's id on stdout, and a summary on stderr.  Large\n"
	"files get a progress bar on stderr when it is a terminal.\n"
	"\n"
	"Options:\n"
	"  --session ID  the new session's id (default: the log's own session id\n"
	"                when no session has it, else a new one)\n"
	"  --new-ids     give messages and parts new ids (to copy an export into\n"
	"                the database it came from)\n"
	"  --quiet       no summary on stderr\n"
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

typedef struct import_state
{
	bool		bar;
	bool		bar_drawn;
	skip_count *skips;
	size_t		n_skips;
	bool		oom;
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
skipped(int64_t line, const char *kind, void *arg)
{
	import_state *is = arg;
	skip_count *grown;

	(void) line;
	for (size_t i = 0; i < is->n_skips; i++)
	{
		if (strcmp(is->skips[i].kind, kind) == 0)
		{
			is->skips[i].count++;
			return;
		}
	}
	if ((grown = realloc(is->skips, (is->n_skips + 1) * sizeof(*grown))) == NULL)
	{
		is->oom = true;
		return;
	}
	is->skips = grown;
	if ((grown[is->n_skips].kind = strdup(kind)) == NULL)
	{
		is->oom = true;
		return;
	}
	grown[is->n_skips++].count = 1;
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

static void
summary(const import_state *is, const char *session_id, int64_t imported)
{
	int64_t		total = 0;

	fprintf(stderr, "mnemo: imported %" PRId64 " message%s into %s", imported,
			imported == 1 ? "" : "s", session_id);
	for (size_t i = 0; i < is->n_skips; i++)
		total += is->skips[i].count;
	if (total > 0)
	{
		qsort(is->skips, is->n_skips, sizeof(*is->skips), by_count);
		fprintf(stderr, "; left out %" PRId64 " record%s:", total, total == 1 ? "" : "s");
		for (size_t i = 0; i < is->n_skips; i++)
			fprintf(stderr, "%s %" PRId64 " %s", i ? "," : "", is->skips[i].count,
					is->skips[i].kind);
	}
	fprintf(stderr, "\n");
}

static int
run(const char *db, int argc, char **argv)
{
	const char *session_id = NULL;
	bool		new_ids = false;
	bool		quiet = false;
	cli_option	opts[] = {
		{"session", &session_id, NULL}, {"new-ids", NULL, &new_ids}, {"quiet", NULL, &quiet}
	};
	const char *pos[1];
	mnemo_import_options io = MNEMO_IMPORT_OPTIONS_INIT;
	import_state is = {0};
	char		sid[MNEMO_ID_MAX + 1];
	int64_t		imported = 0;
	mnemo_store *st;
	FILE	   *in;
	int			rc;

	if ((rc = cli_parse(&cli_import, argc, argv, opts, 3, pos, 1, 1, NULL)) != CLI_OK)
		return rc == CLI_HELP_SHOWN ? CLI_OK : rc;
	if (session_id != NULL && session_id[0] == '\0')
		return cli_usage_error(&cli_import, "--session needs a non-empty id");

	if (strcmp(pos[0], "-") == 0)
		in = stdin;
	else if ((in = fopen(pos[0], "r")) == NULL)
	{
		fprintf(stderr, "mnemo: %s: %s\n", pos[0], strerror(errno));
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
	io.progress_arg = &is;
	rc = mnemo_import_jsonl(st, in, &io, sid, &imported);
	if (is.bar_drawn)
		fprintf(stderr, "\n");
	if (rc != MNEMO_OK)
		rc = cli_fail(st);
	else
	{
		printf("%s\n", sid);
		if (!quiet)
			summary(&is, sid, imported);
		if (fflush(stdout) != 0)
		{
			perror("mnemo: writing the session id");
			rc = CLI_ERROR;
		}
	}
	for (size_t i = 0; i < is.n_skips; i++)
		free(is.skips[i].kind);
	free(is.skips);
	if (in != stdin)
		fclose(in);
	mnemo_store_close(st);
	return rc;
}
