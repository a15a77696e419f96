/*
 * export.c
 *		mnemo export SESSION...: the sessions as JSON Lines on stdout.
 */
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"

static int	run(const char *db, int argc, char **argv);

const cli_command cli_export = {
	"export",
	"write sessions to stdout as JSON Lines (one message a line)",
	"Usage: mnemo export SESSION... [--discarded] > FILE.jsonl\n"
	"\n"
	"Write each whole session to stdout in mnemo's JSONL format (see mnemo(1)):\n"
	"a header line (its fields, state and created time), then every message\n"
	"with its parts and their status, one a line, and a line for each\n"
	"checkpoint, which 'mnemo import' reads back, a session for each header.\n"
	"The ids of the sessions, their messages and parts are kept.\n"
	"\n"
	"Options:\n"
	"  --discarded  write the messages resume discarded from the session's\n"
	"               live line instead (mnemo resume; the same format)\n"
	"\n"
	"Exit status 3 when a session does not exist (the sessions before it are\n"
	"written), 1 when stdout cannot be written.\n",
	run
};

static int
run(const char *db, int argc, char **argv)
{
	const char **pos;
	size_t		n = 0;
	bool		discarded = false;
	cli_option	opts[] = {{"discarded", NULL, &discarded}};
	mnemo_store *st;
	int			rc;

	if ((pos = calloc((size_t) argc, sizeof(*pos))) == NULL)
	{
		fputs("mnemo: out of memory\n", stderr);
		return CLI_ERROR;
	}
	rc = cli_parse(&cli_export, argc, argv, opts, 1, pos, 1, (size_t) argc, &n);
	if (rc != CLI_OK)
	{
		free(pos);
		return rc == CLI_HELP_SHOWN ? CLI_OK : rc;
	}
	if ((st = cli_open(db, &rc)) == NULL)
	{
		free(pos);
		return rc;
	}
	for (size_t i = 0; rc == CLI_OK && i < n; i++)
		rc = (discarded ? mnemo_export_discarded_jsonl(st, pos[i], stdout)
			  : mnemo_export_jsonl(st, pos[i], stdout)) == MNEMO_OK ? CLI_OK : cli_fail(st);
	mnemo_store_close(st);
	free(pos);
	return rc;
}
