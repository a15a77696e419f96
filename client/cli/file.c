/*
 * file.c
 *		mnemo file PATH [--session S] [--threshold N]: a file as libmnemo
 *		hands it to a model (mnemo_file_handle), optionally attached to a
 *		session as a user message.
 */
#include <inttypes.h>
#include <stdio.h>

#include "cli.h"

static int	run(const char *db, int argc, char **argv);

const cli_command cli_file = {
	"file",
	"store a large file's reference and summary; attach it to a session",
	"Usage: mnemo file PATH [--session SESSION] [--threshold N]\n"
	"\n"
	"Read the file (UTF-8 text) and estimate its tokens.  Below the inline\n"
	"threshold it stays text:\n"
	"  inline: T tokens (below the threshold of N)\n"
	"At or above it, the file is stored as a reference keyed by the sha256 of\n"
	"its content, with an exploration summary (structure, outline, or a\n"
	"preview; doc/c-api.md), or the reference stored before is reused; the\n"
	"content itself is never stored.  Prints\n"
	"  content_id: sha256:HEX\n"
	"  path: PATH\n"
	"  type: TYPE\n"
	"  tokens: T\n"
	"  cached: yes|no\n"
	"  summary:\n"
	"  SUMMARY\n"
	"With --session, appends a user message to the session holding the file\n"
	"(a file_ref part, or the text when inline) and prints\n"
	"  attached: MESSAGE_ID (seq N)\n"
	"\n"
	"Options:\n"
	"  --session SESSION  attach the file to this session\n"
	"  --threshold N      the inline threshold in tokens (default 10000)\n"
	"\n"
	"Exit status 1 when the file cannot be read or is binary (a NUL byte or\n"
	"not UTF-8), 3 when the session does not exist.\n",
	run
};

static void
print_result(const mnemo_file_result *r, int threshold)
{
	if (r->ref == NULL)
	{
		printf("inline: %d tokens (below the threshold of %d)\n", r->token_count, threshold);
		return;
	}
	fputs("content_id: ", stdout);
	cli_put_line(stdout, r->ref->content_id);
	fputs("\npath: ", stdout);
	cli_put_line(stdout, r->ref->path);
	fputs("\ntype: ", stdout);
	cli_put_line(stdout, r->ref->file_type);
	printf("\ntokens: %d\ncached: %s\nsummary:\n", r->ref->token_count,
		   r->cached ? "yes" : "no");
	cli_put(stdout, r->ref->exploration_summary);
	fputs("\n", stdout);
}

static int
run(const char *db, int argc, char **argv)
{
	const char *session = NULL;
	const char *threshold_text = NULL;
	cli_option	opts[] = {
		{"session", &session, NULL},
		{"threshold", &threshold_text, NULL}
	};
	const char *pos[1];
	mnemo_file_options o = MNEMO_FILE_OPTIONS_INIT;
	mnemo_file_result *r = NULL;
	mnemo_store *st;
	int64_t		n;
	int			rc;

	if ((rc = cli_parse(&cli_file, argc, argv, opts, 2, pos, 1, 1, NULL)) != CLI_OK)
		return rc == CLI_HELP_SHOWN ? CLI_OK : rc;
	o.inline_threshold = 10000;
	if (threshold_text != NULL)
	{
		if (!cli_parse_count(&cli_file, "--threshold", threshold_text, 1, INT32_MAX, &n))
			return CLI_USAGE;
		o.inline_threshold = (int) n;
	}
	if ((st = cli_open(db, &rc)) == NULL)
		return rc;
	if (mnemo_file_handle(st, pos[0], &o, &r) != MNEMO_OK)
		rc = cli_fail(st);
	else
	{
		print_result(r, o.inline_threshold);
		if (session != NULL)
		{
			mnemo_new_part part = MNEMO_NEW_PART_INIT;
			mnemo_new_message msg = MNEMO_NEW_MESSAGE_INIT;
			mnemo_message_ref ref;

			part.content = r->part;
			msg.role = "user";
			msg.parts = &part;
			msg.n_parts = 1;
			if (mnemo_message_append(st, session, &msg, &ref) != MNEMO_OK)
				rc = cli_fail(st);
			else
				printf("attached: %s (seq %" PRId64 ")\n", ref.id, ref.seq);
		}
	}
	mnemo_file_result_free(r);
	mnemo_store_close(st);
	return rc;
}
