/*
 * import_sessions.c
 *		The sessions of one import: each one's end (what the reader holds
 *		back pushed, the session judged worth storing, stored and set aside
 *		to be reported after the commit), and the next one begun afresh in
 *		the same transaction: a second session document of the file, or a
 *		branch of it (a fork).
 */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transcript/transcript.h"

/*
 * An import that stores nothing, or leaves out most of what it read, is the
 * wrong format or not a transcript: it fails rather than leave an empty
 * session behind.
 */
static int
worth_storing(mn_import *imp, bool several)
{
	/* (a log read again counts what it matched of its session's) */
	int64_t		messages = imp->imported + (int64_t) imp->n_flight + (int64_t) imp->n_batch +
		(int64_t) imp->n_matched;
	char		which[64] = "the transcript";

	if (imp->reader == NULL)
		return mn_fail(imp->st, MNEMO_ERR_FORMAT, "the transcript is empty: nothing to import");
	if (imp->session.header)
		return MNEMO_OK;
	/* in a file of several, the session at fault is named by its line */
	if (several)
		snprintf(which, sizeof(which), "the session of line %" PRId64, imp->session_line);
	if (messages == 0)
		return mn_fail(imp->st, MNEMO_ERR_FORMAT,
					   "no message in %s (read as %s: %" PRId64 " record%s, %" PRId64
					   " left out); nothing imported", which, imp->reader->name, imp->records,
					   imp->records == 1 ? "" : "s", imp->left_out);
	if (imp->left_out * 2 > imp->records)
		return mn_fail(imp->st, MNEMO_ERR_FORMAT,
					   "%" PRId64 " of %" PRId64 " records of %s left out: not a %s transcript? "
					   "(--format names the format); nothing imported", imp->left_out,
					   imp->records, which, imp->reader->name);
	return MNEMO_OK;
}

static void
session_clear(mn_import_session *s)
{
	free(s->want_id);
	free(s->parent_id);
	free(s->model_id);
	free(s->provider_id);
	free(s->agent);
	free(s->title);
	free(s->system_prompt);
	free(s->metadata);
	free(s->state);
	memset(s, 0, sizeof(*s));
}

/* What the import counts of a session, its checkpoints and its stored
 * messages (options.update) forgotten: the records from now on are
 * another session's. */
static void
forget_counts(mn_import *imp)
{
	imp->imported = imp->records = imp->left_out = 0;
	imp->resumed = false;
	mn_import_update_close(imp);
	mn_import_checkpoints_reset(imp);
}

void
mn_import_session_reset(mn_import *imp)
{
	session_clear(&imp->session);
	imp->session_id[0] = '\0';
	imp->created = false;
	forget_counts(imp);
}

/*
 * The end of a session's records: what the reader holds back pushed
 * (mn_import_finish_session), the session judged (worth_storing; several:
 * the file holds more than this one), stored, its checkpoints restored,
 * and set aside in finished to be reported after the commit
 * (store_session).
 */
static int
store_session(mn_import *imp, bool several)
{
	mn_import_done *grown;
	int			rc;

	rc = worth_storing(imp, several);
	if (rc == MNEMO_OK)
		rc = mn_import_flush(imp);
	if (rc == MNEMO_OK)
		rc = mn_import_checkpoints_flush(imp);
	if (rc != MNEMO_OK)
		return rc;
	if ((grown = realloc(imp->finished, (imp->n_finished + 1) * sizeof(*grown))) == NULL)
		return mn_fail(imp->st, MNEMO_ERR_NOMEM, "out of memory");
	imp->finished = grown;
	memcpy(grown[imp->n_finished].id, imp->session_id, sizeof(imp->session_id));
	grown[imp->n_finished].line = imp->session_line > 0 ? imp->session_line : 1;
	grown[imp->n_finished].resumed = imp->resumed;
	grown[imp->n_finished++].messages = imp->imported;
	return MNEMO_OK;
}

int
mn_import_finish_session(mn_import *imp, bool several)
{
	int			rc = MNEMO_OK;

	if (imp->reader != NULL && imp->reader->finish != NULL)
		rc = imp->reader->finish(imp, imp->rstate);
	return rc == MNEMO_OK ? store_session(imp, several) : rc;
}

int
mn_import_fork(mn_import *imp, int64_t line, const char *source, int64_t at)
{
	mnemo_session *fork = NULL;
	char		seq[24];
	int			rc;

	if ((rc = store_session(imp, true)) != MNEMO_OK)
		return rc;
	snprintf(seq, sizeof(seq), "%" PRId64, at);
	if ((rc = mnemo_session_fork(imp->st, source, seq, NULL, &fork)) != MNEMO_OK)
		return mn_import_at_line(imp->st, rc, line, 0);
	if (strlen(fork->id) > MNEMO_ID_MAX)
		rc = mn_fail(imp->st, MNEMO_ERR_PROTOCOL, "session id of %zu bytes", strlen(fork->id));
	else
		memcpy(imp->session_id, fork->id, strlen(fork->id) + 1);
	mnemo_session_free(fork);
	imp->session_line = line;
	forget_counts(imp);
	/* a fork is stored even when it adds no message of its own */
	imp->session.header = true;
	return rc;
}

/*
 * The document at line starts a second session in the file (one run a line
 * of an OpenHands resolver output, an element of a tau-bench results file,
 * the header of a second mnemo export): the session before is finished, and
 * the import starts afresh, in the same transaction.  Callers that take one
 * session (no options.session) and --session, which names one, refuse it.
 */
int
mn_import_next_session(mn_import *imp, int64_t lineno)
{
	int			rc;

	if (imp->opts->session == NULL)
		return mn_fail(imp->st, MNEMO_ERR_FORMAT,
					   "line %" PRId64 ": a second session in the file (of %s); this import "
					   "takes one", lineno, imp->reader->name);
	if (imp->opts->session_id != NULL)
		return mn_fail(imp->st, MNEMO_ERR_FORMAT,
					   "line %" PRId64 ": a second session in the file, and --session names "
					   "one", lineno);
	if ((rc = mn_import_finish_session(imp, true)) != MNEMO_OK)
		return rc;
	imp->session_line = lineno;
	mn_import_session_reset(imp);
	if (imp->reader->destroy != NULL)
		imp->reader->destroy(imp->rstate);
	imp->rstate = NULL;
	if (imp->reader->create != NULL && (imp->rstate = imp->reader->create()) == NULL)
		return mn_fail(imp->st, MNEMO_ERR_NOMEM, "out of memory");
	return MNEMO_OK;
}
