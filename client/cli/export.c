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
	"Usage: mnemo export SESSION... [--with-children] [--discarded] > FILE.jsonl\n"
	"\n"
	"Write each whole session to stdout in mnemo's JSONL format (see mnemo(1)):\n"
	"a header line (its fields, state and created time), then every message\n"
	"with its parts and their status, one a line, and a line for each\n"
	"checkpoint, which 'mnemo import' reads back, a session for each header.\n"
	"The ids of the sessions, their messages and parts are kept.\n"
	"\n"
	"Options:\n"
	"  --with-children  after each session, its children (sessions whose\n"
	"               parent it is: sub-agents, forks), oldest first, each\n"
	"               followed by its own\n"
	"  --discarded  write the messages resume discarded from the session's\n"
	"               live line instead (mnemo resume; the same format)\n"
	"\n"
	"Exit status 3 when a session does not exist (the sessions before it are\n"
	"written), 1 when stdout cannot be written.\n",
	run
};

/* Session id, then (with_children) its children, depth first, oldest
 * first. */
static int
export_one(mnemo_store *st, const char *id, bool discarded, bool with_children, int depth)
{
	mnemo_session_filter f = MNEMO_SESSION_FILTER_INIT;
	mnemo_sessions *kids = NULL;
	int			rc;

	rc = (discarded ? mnemo_export_discarded_jsonl(st, id, stdout)
		  : mnemo_export_jsonl(st, id, stdout)) == MNEMO_OK ? CLI_OK : cli_fail(st);
	/* a session cannot be its own ancestor; the depth only bounds a loop */
	if (rc != CLI_OK || !with_children || depth > 64)
		return rc;
	f.parent_id = id;
	f.limit = 1000;
	for (f.offset = 0; rc == CLI_OK; f.offset += f.limit)
	{
		if (mnemo_session_list(st, &f, &kids) != MNEMO_OK)
			return cli_fail(st);
		/* newest first: the oldest is last */
		for (size_t i = kids->count; rc == CLI_OK && i > 0; i--)
			rc = export_one(st, kids->items[i - 1].id, discarded, true, depth + 1);
		if (kids->count < (size_t) f.limit)
		{
			mnemo_sessions_free(kids);
			break;
		}
		mnemo_sessions_free(kids);
	}
	return rc;
}

static int
run(const char *db, int argc, char **argv)
{
	const char **pos;
	size_t		n = 0;
	bool		discarded = false;
	bool		with_children = false;
	cli_option	opts[] = {{"discarded", NULL, &discarded}, {"with-children", NULL, &with_children}};
	mnemo_store *st;
	int			rc;

	if ((pos = calloc((size_t) argc, sizeof(*pos))) == NULL)
	{
		fputs("mnemo: out of memory\n", stderr);
		return CLI_ERROR;
	}
	rc = cli_parse(&cli_export, argc, argv, opts, 2, pos, 1, (size_t) argc, &n);
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
		rc = export_one(st, pos[i], discarded, with_children, 0);
	mnemo_store_close(st);
	free(pos);
	return rc;
}
