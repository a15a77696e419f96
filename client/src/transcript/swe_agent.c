/*
 * swe_agent.c
 *		The import reader of SWE-agent trajectories (.traj).
 *
 * A trajectory is one pretty-printed JSON document: "history", the
 * OpenAI-style message list the model saw, and beside it "trajectory" (the
 * same steps again: action, observation, thought, state), "info" (model
 * stats, exit status, submission), "environment" and "replay_config".  The
 * history is imported, message by message, as an OpenAI list
 * (messages_reader.c), with SWE-agent's own members (thought, action, agent,
 * message_type) kept in each message's metadata; "info" and "environment"
 * go to the session's metadata with {"source": "swe-agent"}.  "trajectory"
 * and "replay_config" repeat what the history and metadata hold and are
 * not imported.
 */
#define _POSIX_C_SOURCE 200809L

#include <string.h>

#include <json.h>

#include "transcript/transcript.h"

static bool
swe_detect(struct json_object *obj)
{
	struct json_object *history = mn_js_arr(obj, "history");
	struct json_object *first;

	if (history == NULL)
		return false;
	if (json_object_object_get_ex(obj, "trajectory", NULL) ||
		json_object_object_get_ex(obj, "replay_config", NULL))
		return true;
	first = json_object_array_length(history) > 0 ? json_object_array_get_idx(history, 0) : NULL;
	return first != NULL && mn_js_str(first, "role", NULL) != NULL &&
		(json_object_object_get_ex(first, "message_type", NULL) ||
		 json_object_object_get_ex(first, "agent", NULL));
}

static int
swe_open(mn_import *imp, void *state, int64_t lineno, struct json_object *obj, mn_span text)
{
	static const char *const kept[] = {"info", "environment"};
	mn_import_session *s = &imp->session;
	mn_buf		meta = {0};

	(void) state;
	(void) lineno;
	if (imp->created || s->metadata != NULL)
		return MNEMO_OK;
	mn_buf_puts(&meta, "{\"source\":\"swe-agent\"");
	for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++)
	{
		mn_span		raw;

		if (!json_object_object_get_ex(obj, kept[i], NULL) || !mn_json_member(text, kept[i], &raw))
			continue;
		mn_buf_puts(&meta, ",");
		mn_buf_put_jstr(&meta, kept[i], strlen(kept[i]));
		mn_buf_puts(&meta, ":");
		mn_buf_put(&meta, raw.p, raw.len);
	}
	mn_buf_puts(&meta, "}");
	if (meta.oom || !mn_import_strdup("swe-agent", &s->agent))
	{
		mn_buf_free(&meta);
		return mn_fail(imp->st, MNEMO_ERR_NOMEM, "out of memory");
	}
	s->metadata = meta.data;
	return MNEMO_OK;
}

const mn_reader mn_swe_agent_reader = {
	"swe-agent", swe_detect, mn_history_document, swe_open, mn_chat_create, mn_chat_line, NULL,
	mn_chat_sent, mn_chat_destroy, NULL, NULL
};
