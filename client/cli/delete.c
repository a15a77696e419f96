/*
 * delete.c
 *		mnemo delete SESSION: a soft delete (the session is marked inactive;
 *		every row stays).
 */
#include <stdio.h>

#include "cli.h"

static int	run(const char *db, int argc, char **argv);

const cli_command cli_delete = {
	"delete",
	"mark a session inactive (a soft delete: nothing is erased)",
	"Usage: mnemo delete SESSION\n"
	"\n"
	"Mark the session inactive (mnemo.soft_delete_session): it leaves the\n"
	"'mnemo sessions' list (--all shows it), appends to it fail, and every\n"
	"message stays readable.  'mnemo purge' erases a session for good.\n"
	"\n"
	"Exit status 3 when the session does not exist.\n",
	run
};

static int
run(const char *db, int argc, char **argv)
{
	const char *pos[1];
	mnemo_store *st;
	int			rc;

	if ((rc = cli_parse(&cli_delete, argc, argv, NULL, 0, pos, 1, 1, NULL)) != CLI_OK)
		return rc == CLI_HELP_SHOWN ? CLI_OK : rc;
	if ((st = cli_open(db, &rc)) == NULL)
		return rc;
	if (mnemo_session_soft_delete(st, pos[0]) != MNEMO_OK)
		rc = cli_fail(st);
	else
	{
		fputs("mnemo: session ", stderr);
		cli_put_line(stderr, pos[0]);
		fputs(" marked inactive\n", stderr);
	}
	mnemo_store_close(st);
	return rc;
}
