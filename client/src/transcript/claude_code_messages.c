/*
 * claude_code_messages.c
 *		Claude Code's user and assistant records as messages: a response,
 *		written one content block a line, assembled into one assistant
 *		message (held until a line of another response comes), and the
 *		tool results of a user record completing its calls.
 */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <json.h>

#include "transcript/claude_code.h"

int
mn_cc_release(mn_import *imp, cc_state *cc)
{
	mn_import_msg *m = cc->held;

	if (m == NULL)
		return MNEMO_OK;
	cc->held = NULL;
	free(cc->held_api_id);
	cc->held_api_id = NULL;
	return mn_import_push(imp, m);
}

int
mn_cc_message_of(mn_import *imp, int64_t line, struct json_object *rec, mn_span text,
				 struct json_object **msg, mn_span *msg_text)
{
	if (!json_object_object_get_ex(rec, "message", msg) ||
		!json_object_is_type(*msg, json_type_object) ||
		!mn_json_member(text, "message", msg_text))
		return mn_fail(imp->st, MNEMO_ERR_FORMAT,
					   "line %" PRId64 ": a %s record without a \"message\" object", line,
					   mn_js_str(rec, "type", NULL));
	return MNEMO_OK;
}

/*
 * The result of a Task call names the sub-agent that ran it
 * (toolUseResult.agentId): the call's part keeps it, and the id of the
 * sub-agent's session, {"agent_id", "subagent_session"}, in its metadata
 * (cc->link; empty for other records).
 */
static int
task_link(mn_import *imp, cc_state *cc, struct json_object *rec)
{
	struct json_object *result = mn_js_obj(rec, "toolUseResult");
	const char *agent_id = result != NULL ? mn_js_str(result, "agentId", NULL) : NULL;
	char	   *id;
	int			rc;

	cc->link.len = 0;
	if (agent_id == NULL)
		return MNEMO_OK;
	/* the session's id, which the sub-agent's is made of, is known once it
	 * is created */
	if (!imp->created && (rc = mn_import_flush(imp)) != MNEMO_OK)
		return rc;
	if ((id = mn_cc_subagent_id(imp->session_id, agent_id)) == NULL)
		return mn_import_oom(imp);
	mn_buf_puts(&cc->link, "{\"agent_id\":");
	mn_buf_put_jstr(&cc->link, agent_id, strlen(agent_id));
	mn_buf_puts(&cc->link, ",\"subagent_session\":");
	mn_buf_put_jstr(&cc->link, id, strlen(id));
	mn_buf_puts(&cc->link, "}");
	free(id);
	return cc->link.oom ? mn_import_oom(imp) : MNEMO_OK;
}

int
mn_cc_user_record(mn_import *imp, cc_state *cc, int64_t line, struct json_object *rec,
				  mn_span text)
{
	struct json_object *msg;
	struct json_object *content;
	mn_span		msg_text;
	mn_span		list_text;
	mn_import_msg *m = NULL;
	size_t		pos = 0;
	int			rc;

	if ((rc = mn_cc_message_of(imp, line, rec, text, &msg, &msg_text)) != MNEMO_OK)
		return rc;
	if (!json_object_object_get_ex(msg, "content", &content))
		content = NULL;

	if (content != NULL && json_object_is_type(content, json_type_string))
	{
		mn_import_part *p;
		mn_span		raw;

		if ((rc = mn_cc_release(imp, cc)) != MNEMO_OK)
			return rc;
		if ((m = mn_import_msg_new(imp, line, "user")) == NULL)
			return imp->st->errcode;
		m->created_at = mn_import_iso_time(mn_js_str(rec, "timestamp", NULL));
		if ((p = mn_import_part_new(imp, m, "text")) == NULL ||
			!mn_json_member(msg_text, "content", &raw) ||
			(mn_part_put_raw(p, "text", raw), p->members.oom))
		{
			mn_import_msg_free(m);
			return mn_import_oom(imp);
		}
		return mn_import_push(imp, m);
	}
	if (content == NULL || !json_object_is_type(content, json_type_array) ||
		!mn_json_member(msg_text, "content", &list_text))
		return mn_fail(imp->st, MNEMO_ERR_FORMAT,
					   "line %" PRId64 ": a user message's content must be a string or a list",
					   line);

	if ((rc = task_link(imp, cc, rec)) != MNEMO_OK)
		return rc;
	for (size_t i = 0; rc == MNEMO_OK && i < json_object_array_length(content); i++)
	{
		mn_span		block_text = {NULL, 0};

		(void) mn_json_next_element(list_text, &pos, &block_text);
		rc = mn_anthropic_user_block(imp, &cc->calls, line, i, json_object_array_get_idx(content, i),
									 block_text, (mn_span) {cc->link.data, cc->link.len}, &m);
	}
	if (rc != MNEMO_OK || m == NULL)
	{
		mn_import_msg_free(m);
		return rc;
	}
	m->created_at = mn_import_iso_time(mn_js_str(rec, "timestamp", NULL));
	/* the results above belong to the held message, which comes first */
	if ((rc = mn_cc_release(imp, cc)) != MNEMO_OK)
	{
		mn_import_msg_free(m);
		return rc;
	}
	return mn_import_push(imp, m);
}

int
mn_cc_assistant_record(mn_import *imp, cc_state *cc, int64_t line, struct json_object *rec,
					   mn_span text)
{
	struct json_object *msg;
	struct json_object *content;
	struct json_object *usage;
	mn_span		msg_text;
	mn_span		list_text;
	const char *api_id;
	const char *model;
	const char *stop;
	size_t		pos = 0;
	int			rc;

	if ((rc = mn_cc_message_of(imp, line, rec, text, &msg, &msg_text)) != MNEMO_OK)
		return rc;
	api_id = mn_js_str(msg, "id", NULL);
	model = mn_js_str(msg, "model", NULL);

	/* a new response: the one held is complete */
	if (cc->held == NULL || api_id == NULL || cc->held_api_id == NULL ||
		strcmp(api_id, cc->held_api_id) != 0)
	{
		if ((rc = mn_cc_release(imp, cc)) != MNEMO_OK)
			return rc;
		if ((cc->held = mn_import_msg_new(imp, line, "assistant")) == NULL)
			return imp->st->errcode;
		cc->held->created_at = mn_import_iso_time(mn_js_str(rec, "timestamp", NULL));
		if (!mn_import_strdup(api_id, &cc->held_api_id) ||
			!mn_import_strdup(model, &cc->held->model_id) ||
			!mn_import_strdup("anthropic", &cc->held->provider_id))
			return mn_import_oom(imp);
		if (model != NULL && imp->session.model_id == NULL && !imp->created &&
			!mn_import_strdup(model, &imp->session.model_id))
			return mn_import_oom(imp);
	}

	if (!json_object_object_get_ex(msg, "content", &content))
		content = NULL;
	if (content != NULL && json_object_is_type(content, json_type_string))
	{
		mn_import_part *p = mn_import_part_new(imp, cc->held, "text");
		mn_span		raw;

		if (p == NULL || !mn_json_member(msg_text, "content", &raw) ||
			(mn_part_put_raw(p, "text", raw), p->members.oom))
			return mn_import_oom(imp);
	}
	else if (content != NULL && json_object_is_type(content, json_type_array) &&
			 mn_json_member(msg_text, "content", &list_text))
	{
		for (size_t i = 0; i < json_object_array_length(content); i++)
		{
			mn_span		block_text = {NULL, 0};

			(void) mn_json_next_element(list_text, &pos, &block_text);
			rc = mn_anthropic_assistant_block(imp, &cc->calls, line, i,
											  json_object_array_get_idx(content, i), block_text,
											  cc->held);
			if (rc != MNEMO_OK)
				return rc;
		}
	}
	else if (content != NULL && !json_object_is_type(content, json_type_null))
		return mn_fail(imp->st, MNEMO_ERR_FORMAT,
					   "line %" PRId64 ": an assistant message's content must be a list", line);

	/* each line repeats the usage so far; the last one is the response's */
	if (json_object_object_get_ex(msg, "usage", &usage) &&
		json_object_is_type(usage, json_type_object))
	{
		static const char *const keys[] = {
			"input_tokens", "output_tokens", "cache_read_input_tokens",
			"cache_creation_input_tokens"
		};
		int64_t    *dst[] = {
			&cc->held->tokens.input, &cc->held->tokens.output,
			&cc->held->tokens.cache_read, &cc->held->tokens.cache_write
		};

		for (int k = 0; k < 4; k++)
		{
			struct json_object *v;

			if (json_object_object_get_ex(usage, keys[k], &v) &&
				json_object_is_type(v, json_type_int) && json_object_get_int64(v) >= 0)
			{
				*dst[k] = json_object_get_int64(v);
				cc->held->has_tokens = true;
			}
		}
	}
	if ((stop = mn_js_str(msg, "stop_reason", NULL)) != NULL)
	{
		free(cc->held->finish_reason);
		if (!mn_import_strdup(stop, &cc->held->finish_reason))
			return mn_import_oom(imp);
	}
	return MNEMO_OK;
}

