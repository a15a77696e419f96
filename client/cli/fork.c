/*
 * fork.c
 *		mnemo fork SOURCE AT [NEW_ID]: a new session continuing SOURCE from a
 *		point; mnemo resume SESSION CHECKPOINT: a session back to a
 *		checkpoint, its later messages discarded (kept, listed apart).
 */
#include <inttypes.h>
#include <stdio.h>

#include "cli.h"

static int	run_fork(const char *db, int argc, char **argv);
static int	run_resume(const char *db, int argc, char **argv);

const cli_command cli_fork = {
	"fork",
	"a new session continuing a session from a checkpoint, a seq or a run",
	"Usage: mnemo fork SOURCE AT [NEW_ID]\n"
	"\n"
	"Create a session that continues SOURCE's live line from AT\n"
	"(mnemo.fork_session) and print its id.  AT is a checkpoint label (see\n"
	"mnemo checkpoints), a seq (an integer; 0 inherits nothing), or\n"
	"run:RUN_ID for what a completed run left (the runs in flight are left\n"
	"out).  The new session reads SOURCE's messages up to AT in place, with\n"
	"no copy; its context is SOURCE's as it was at AT; its own messages\n"
	"continue the seqs.  NEW_ID defaults to a generated id.\n"
	"\n"
	"Exit status 3 when SOURCE or the checkpoint does not exist; 1 when\n"
	"NEW_ID is taken, the run is not completed, or the seq is past the end.\n",
	run_fork
};

const cli_command cli_resume = {
	"resume",
	"a session back to a checkpoint, its later messages discarded",
	"Usage: mnemo resume SESSION CHECKPOINT\n"
	"\n"
	"Return the session's live line and context to the checkpoint\n"
	"(mnemo.resume_session) and print how many messages were discarded.\n"
	"Nothing is deleted: the discarded messages stay readable, with\n"
	"'mnemo export SESSION --discarded'; new messages take fresh seqs.  A\n"
	"fork cannot resume to a point before its fork point.\n"
	"\n"
	"Exit status 3 when the session or the checkpoint does not exist; 1 when\n"
	"the checkpoint cannot be resumed to.\n",
	run_resume
};

static int
run_fork(const char *db, int argc, char **argv)
{
	const char *pos[3] = {NULL, NULL, NULL};
	mnemo_session *s = NULL;
	mnemo_store *st;
	int			rc;

	if ((rc = cli_parse(&cli_fork, argc, argv, NULL, 0, pos, 2, 3, NULL)) != CLI_OK)
		return rc == CLI_HELP_SHOWN ? CLI_OK : rc;
	if ((st = cli_open(db, &rc)) == NULL)
		return rc;
	if (mnemo_session_fork(st, pos[0], pos[1], pos[2], &s) != MNEMO_OK)
	{
		rc = cli_fail(st);
		mnemo_store_close(st);
		return rc;
	}
	cli_put_line(stdout, s->id);
	printf("\n");
	mnemo_session_free(s);
	mnemo_store_close(st);
	return cli_flush_output("the new session's id");
}

static int
run_resume(const char *db, int argc, char **argv)
{
	const char *pos[2];
	int64_t		discarded = 0;
	mnemo_store *st;
	int			rc;

	if ((rc = cli_parse(&cli_resume, argc, argv, NULL, 0, pos, 2, 2, NULL)) != CLI_OK)
		return rc == CLI_HELP_SHOWN ? CLI_OK : rc;
	if ((st = cli_open(db, &rc)) == NULL)
		return rc;
	if (mnemo_session_resume(st, pos[0], pos[1], &discarded) != MNEMO_OK)
	{
		rc = cli_fail(st);
		mnemo_store_close(st);
		return rc;
	}
	printf("%" PRId64 " discarded\n", discarded);
	mnemo_store_close(st);
	return cli_flush_output("the count");
}
