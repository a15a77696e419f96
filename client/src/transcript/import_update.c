/*
 * import_update.c
 *		A transcript read again into the session it made before
 *		(options.update): what was stored is matched, what is new appended.
 *
 * An agent's log only grows, and a reader makes the same messages, in the
 * same order, from the same records: so the first messages of a second
 * read are the session's stored ones, one for one, and only those after
 * them are new.  The import pushes them as always; the pushes the session
 * holds already are matched to its messages in order (their ids and seqs
 * taken, so the results that come later complete the stored parts) and not
 * sent, and a result the stored part was still waiting for is written to it
 * (update_part_status).  Restarting a follower, or importing a grown log
 * again, so adds what is new and nothing twice.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdlib.h>
#include <string.h>

#include <json.h>

#include "transcript/transcript.h"

int
mn_import_update_open(mn_import *imp)
{
	mnemo_messages *list = NULL;
	int			rc;

	if ((rc = mnemo_messages_get(imp->st, imp->session_id, NULL, true, &list)) != MNEMO_OK)
		return rc;
	imp->stored = list;
	imp->n_matched = 0;
	imp->resumed = true;
	return MNEMO_OK;
}

void
mn_import_update_close(mn_import *imp)
{
	mnemo_messages_free(imp->stored);
	imp->stored = NULL;
	imp->n_matched = 0;
}

bool
mn_import_update_pending(const mn_import *imp)
{
	return imp->stored != NULL && imp->n_matched < imp->stored->count;
}

/* A result the stored part waits for, which the read gave part p. */
static int
complete_stored(mn_import *imp, const mnemo_part *sp, const mn_import_part *p)
{
	mnemo_part_status status = {0};
	struct json_object *members = NULL;
	struct json_object *v = NULL;
	mn_buf		obj = {0};
	char	   *output = NULL;
	int			rc = MNEMO_OK;

	if (p->tool_state == NULL || sp->tool_state == NULL ||
		(strcmp(sp->tool_state, "pending") != 0 && strcmp(sp->tool_state, "running") != 0))
		return MNEMO_OK;
	mn_buf_puts(&obj, "{");
	mn_buf_put(&obj, p->members.data, p->members.len);
	mn_buf_puts(&obj, "}");
	if (obj.oom || (members = json_tokener_parse(obj.data)) == NULL)
	{
		mn_buf_free(&obj);
		return mn_fail(imp->st, MNEMO_ERR_NOMEM, "out of memory");
	}
	status.tool_state = p->tool_state;
	status.completed_at = p->completed_at;
	if (json_object_object_get_ex(members, "output", &v))
	{
		output = strdup(json_object_is_type(v, json_type_string) ? json_object_get_string(v)
						: json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));
		if (output == NULL)
			rc = mn_fail(imp->st, MNEMO_ERR_NOMEM, "out of memory");
		status.output = output;
	}
	else
		status.error_message = mn_js_str(members, "error_message", NULL);
	if (rc == MNEMO_OK)
		rc = mnemo_part_update_status(imp->st, imp->session_id, sp->id, &status);
	free(output);
	json_object_put(members);
	mn_buf_free(&obj);
	return rc;
}

static int
append_part(mn_import *imp, const mn_import_msg *m, const mn_import_part *p)
{
	mnemo_new_part np = MNEMO_NEW_PART_INIT;
	mn_buf		obj = {0};
	int			rc;

	mn_buf_puts(&obj, "{");
	mn_buf_put(&obj, p->members.data, p->members.len);
	if (p->tool_state != NULL)
	{
		mn_buf_puts(&obj, ",\"tool_state\":");
		mn_buf_put_jstr(&obj, p->tool_state, strlen(p->tool_state));
	}
	mn_buf_puts(&obj, "}");
	if (obj.oom || p->members.oom)
	{
		mn_buf_free(&obj);
		return mn_fail(imp->st, MNEMO_ERR_NOMEM, "out of memory");
	}
	np.content = obj.data;
	rc = mnemo_part_append(imp->st, imp->session_id, m->ref_id, &np, NULL);
	mn_buf_free(&obj);
	return rc;
}

int
mn_import_update_match(mn_import *imp, mn_import_msg *m)
{
	const mnemo_message *sm = &imp->stored->items[imp->n_matched++];
	int			rc = MNEMO_OK;

	memcpy(m->ref_id, sm->id, strlen(sm->id) + 1);
	m->seq = sm->seq;
	for (size_t i = 0; rc == MNEMO_OK && i < m->n_parts && i < sm->n_parts; i++)
		rc = complete_stored(imp, &sm->parts[i], &m->parts[i]);
	/* the last message stored may have been stored while its record was
	 * still being written (Claude Code writes a response a block a line):
	 * it gets the blocks written since, and its usage and stop reason,
	 * which come with the last; an earlier one is whole (a copy of the log
	 * cut shorter changes nothing) */
	if (imp->n_matched < imp->stored->count)
	{
		if (rc == MNEMO_OK && imp->reader != NULL && imp->reader->sent != NULL)
			rc = imp->reader->sent(imp, imp->rstate, m);
		mn_import_msg_free(m);
		return rc;
	}
	for (size_t i = sm->n_parts; rc == MNEMO_OK && i < m->n_parts; i++)
		rc = append_part(imp, m, &m->parts[i]);
	if (rc == MNEMO_OK && (m->n_parts > sm->n_parts ||
						   (m->has_tokens && memcmp(&m->tokens, &sm->tokens, sizeof(m->tokens)) != 0) ||
						   (m->finish_reason != NULL &&
							(sm->finish_reason == NULL || strcmp(m->finish_reason, sm->finish_reason) != 0))))
		rc = mn_import_restore(imp, &m, 1);
	if (rc == MNEMO_OK && imp->reader != NULL && imp->reader->sent != NULL)
		rc = imp->reader->sent(imp, imp->rstate, m);
	mn_import_msg_free(m);
	return rc;
}
