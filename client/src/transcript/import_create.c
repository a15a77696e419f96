/*
 * import_create.c
 *		The session an import stores into: created when its first batch is
 *		ready (or at the end, for an empty transcript), in the transaction
 *		the import begins then; or, for an agent's log read again
 *		(options.update), the session it made before.
 *
 * By the first batch the reader knows what the session is made of, and
 * whether the transcript's own session id is still free is checked just
 * before it is created.
 */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "transcript/transcript.h"

/* *field becomes a copy of value */
static int
take_default(mnemo_store *st, char **field, const char *value)
{
	char	   *copy = strdup(value);

	if (copy == NULL)
		return mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
	free(*field);
	*field = copy;
	return MNEMO_OK;
}

/*
 * The session the import goes on with: its id, and from now on what it
 * was made of, which its messages default to (put_message leaves those
 * out).  row is freed.
 */
static int
take_session(mn_import *imp, mnemo_session *row)
{
	mnemo_store *st = imp->st;
	mn_import_session *s = &imp->session;
	int			rc;

	if (strlen(row->id) > MNEMO_ID_MAX)
		rc = mn_fail(st, MNEMO_ERR_PROTOCOL, "session id of %zu bytes", strlen(row->id));
	else
	{
		memcpy(imp->session_id, row->id, strlen(row->id) + 1);
		rc = take_default(st, &s->agent, row->agent);
		if (rc == MNEMO_OK)
			rc = take_default(st, &s->model_id, row->model_id);
		if (rc == MNEMO_OK)
			rc = take_default(st, &s->provider_id, row->provider_id);
	}
	mnemo_session_free(row);
	imp->created = rc == MNEMO_OK;
	return rc;
}

/*
 * The session of the transcript's id is there and options.update asks for
 * what is new (import_update.c): it is the session, as it was made (the
 * defaults of its messages), its messages matched first.  row is freed.
 */
static int
resume(mn_import *imp, mnemo_session *row)
{
	int			rc = mn_exec_command(imp->st, "RELEASE SAVEPOINT mnemo_import_id");

	if (rc != MNEMO_OK)
	{
		mnemo_session_free(row);
		return rc;
	}
	rc = take_session(imp, row);
	return rc == MNEMO_OK ? mn_import_update_open(imp) : rc;
}

/*
 * Start the transaction and create the session.  The transcript's own id is
 * taken when no session has it; when one has, the transcript was imported
 * before, and a second import fails (MN004) rather than make a second
 * session; new_ids asks for a copy, under a new id.  get_session fails for
 * a free id, and a failed statement would end the transaction that the
 * sessions before this one in the file are in: the check runs in a
 * savepoint.
 */
int
mn_import_begin(mn_import *imp)
{
	mnemo_store *st = imp->st;
	mn_import_session *s = &imp->session;
	mnemo_new_session spec = {0};
	mnemo_session *row = NULL;
	int			rc;

	/* the second session of a file is made in the transaction of the first */
	if (!imp->began && (rc = mn_exec_command(st, "BEGIN")) != MNEMO_OK)
		return rc;
	imp->began = true;
	spec.id = s->derived_id ? NULL : imp->opts->session_id;
	if (spec.id == NULL && s->want_id != NULL && (!imp->new_ids || s->derived_id))
	{
		if ((rc = mn_exec_command(st, "SAVEPOINT mnemo_import_id")) != MNEMO_OK)
			return rc;
		rc = mnemo_session_get(st, s->want_id, &row);
		/* an agent's log read again: its session takes what is new */
		if (rc == MNEMO_OK && imp->opts->update && !imp->new_ids &&
			strcmp(imp->reader->name, "mnemo") != 0)
			return resume(imp, row);
		mnemo_session_free(row);
		row = NULL;
		if (rc == MNEMO_OK)
		{
			const mn_import_done *twice = NULL;
			int64_t		line = imp->session_line > 0 ? imp->session_line : 1;

			/* a session of this file before (an export concatenated with
			 * itself): the store had not seen it when the import began */
			for (size_t i = 0; i < imp->n_finished && twice == NULL; i++)
				if (strcmp(imp->finished[i].id, s->want_id) == 0)
					twice = &imp->finished[i];
			if (twice != NULL)
				rc = mn_fail(st, MNEMO_ERR_DUPLICATE_ID,
							 "line %" PRId64 ": session \"%s\" is in this file twice (first on line "
							 "%" PRId64 "; --new-ids imports each as a copy)", line, s->want_id,
							 twice->line);
			else
				rc = mn_fail(st, MNEMO_ERR_DUPLICATE_ID,
							 "line %" PRId64 ": session \"%s\" of this transcript already exists: "
							 "it was imported before (--new-ids imports a copy under a new id)",
							 line, s->want_id);
			memcpy(st->sqlstate, "MN004", 6);
			return rc;
		}
		if (rc != MNEMO_ERR_SESSION_NOT_FOUND)
			return rc;
		if ((rc = mn_exec_command(st, "ROLLBACK TO SAVEPOINT mnemo_import_id")) != MNEMO_OK)
			return rc;
		spec.id = s->want_id;
	}
	/* a child (a sub-agent, an exported child) whose parent is not in this
	 * database is a session of its own */
	if (s->parent_id != NULL)
	{
		if ((rc = mn_exec_command(st, "SAVEPOINT mnemo_import_parent")) != MNEMO_OK)
			return rc;
		rc = mnemo_session_get(st, s->parent_id, &row);
		mnemo_session_free(row);
		row = NULL;
		if (rc == MNEMO_OK)
			spec.parent_id = s->parent_id;
		else if (rc != MNEMO_ERR_SESSION_NOT_FOUND ||
				 (rc = mn_exec_command(st, "ROLLBACK TO SAVEPOINT mnemo_import_parent")) != MNEMO_OK)
			return rc;
	}
	spec.model_id = s->model_id;
	spec.provider_id = s->provider_id;
	spec.agent = s->agent;
	spec.title = s->title;
	spec.metadata = s->metadata;
	spec.system_prompt = s->system_prompt;
	/* a format without a session time began with its first message */
	spec.created_at = s->created_at > 0 ? s->created_at :
		imp->n_batch > 0 ? imp->batch[0]->created_at : 0;
	if ((rc = mnemo_session_create(st, &spec, &row)) != MNEMO_OK)
		return rc;
	rc = take_session(imp, row);
	if (rc == MNEMO_OK && s->state != NULL)
		rc = mnemo_state_update(st, imp->session_id, s->state, NULL);
	return rc;
}
