/*
 * export.c
 *		mnemo export SESSION: the session as JSON Lines on stdout.
 */
#include <stdio.h>

#include "cli.h"

static int	run(const char *db, int argc, char **argv);

const cli_command cli_export = {
	"export",
	"write a session to stdout as JSON Lines (one message a line)",
	"Usage: mnemo export SESSION [--discarded] > FILE.jsonl\n"
	"\n"
	"Write the whole session to stdout in mnemo's JSONL format (see mnemo(1)):\n"
	"a header line (its fields, state and created time), then every message\n"
	"with its parts and their status, one a line, and a line for each\n"
	"checkpoint, which 'mnemo import' reads back.  The ids of the session, its\n"
	"messages and parts are kept.\n"
	"\n"
	"Options:\n"
	"  --discarded  write the messages resume discarded from the session's\n"
	"               live line instead (mnemo resume; the same format)\n"
	"\n"
	"Exit status 3 when the session does not exist, 1 when stdout cannot be\n"
	"written.\n",
	run
};

static int
run(const char *db, int argc, char **argv)
{
	const char *pos[1];
	bool		discarded = false;
	cli_option	opts[] = {{"discarded", NULL, &discarded}};
	mnemo_store *st;
	int			rc;

	if ((rc = cli_parse(&cli_export, argc, argv, opts, 1, pos, 1, 1, NULL)) != CLI_OK)
		return rc == CLI_HELP_SHOWN ? CLI_OK : rc;
	if ((st = cli_open(db, &rc)) == NULL)
		return rc;
	rc = (discarded ? mnemo_export_discarded_jsonl(st, pos[0], stdout)
		  : mnemo_export_jsonl(st, pos[0], stdout)) == MNEMO_OK ? CLI_OK : cli_fail(st);
	mnemo_store_close(st);
	return rc;
}
