/*
 * purge.c
 *		mnemo purge SESSION: erase a session and every row it owns, after
 *		asking (unless --yes).
 */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static int	run(const char *db, int argc, char **argv);

const cli_command cli_purge = {
	"purge",
	"erase a session and everything it holds, for good (asks first)",
	"Usage: mnemo purge SESSION [--yes]\n"
	"\n"
	"Erase the session, its messages, parts, context and summaries\n"
	"(mnemo.purge_session, which needs a grant PUBLIC lacks).  Asks on the\n"
	"terminal first; without a terminal, or to skip the question, pass --yes.\n"
	"\n"
	"Options:\n"
	"  --yes  do not ask\n"
	"\n"
	"Exit status 3 when the session does not exist, 1 when the answer is not\n"
	"yes or there is no terminal to ask on.\n",
	run
};

/* "y" or "yes" read from the terminal after the question. */
static bool
confirmed(const char *session_id, int64_t messages)
{
	FILE	   *tty = fopen("/dev/tty", "r+");
	char		answer[16] = "";
	bool		yes;

	if (tty == NULL)
	{
		fputs("mnemo: no terminal to ask on: pass --yes to purge\n", stderr);
		return false;
	}
	fputs("Erase session ", tty);
	cli_put_line(tty, session_id);
	fprintf(tty, " and its %" PRId64 " message%s for good? [y/N] ", messages, cli_s(messages));
	fflush(tty);
	yes = fgets(answer, sizeof(answer), tty) != NULL &&
		(strcmp(answer, "y\n") == 0 || strcmp(answer, "yes\n") == 0);
	fclose(tty);
	if (!yes)
		fputs("mnemo: not purged\n", stderr);
	return yes;
}

static int
run(const char *db, int argc, char **argv)
{
	bool		yes = false;
	cli_option	opts[] = {{"yes", NULL, &yes}};
	const char *pos[1];
	mnemo_session *s = NULL;
	mnemo_store *st;
	int64_t		deleted = 0;
	int			rc;

	if ((rc = cli_parse(&cli_purge, argc, argv, opts, 1, pos, 1, 1, NULL)) != CLI_OK)
		return rc == CLI_HELP_SHOWN ? CLI_OK : rc;
	if ((st = cli_open(db, &rc)) == NULL)
		return rc;
	if (mnemo_session_get(st, pos[0], &s) != MNEMO_OK)
	{
		rc = cli_fail(st);
		mnemo_store_close(st);
		return rc;
	}
	if (!yes && !confirmed(pos[0], s->last_seq))
		rc = CLI_ERROR;
	else if (mnemo_session_purge(st, pos[0], &deleted) != MNEMO_OK)
		rc = cli_fail(st);
	else
	{
		fputs("mnemo: session ", stderr);
		cli_put_line(stderr, pos[0]);
		fprintf(stderr, " purged: %" PRId64 " message%s erased\n", deleted, cli_s(deleted));
	}
	mnemo_session_free(s);
	mnemo_store_close(st);
	return rc;
}
