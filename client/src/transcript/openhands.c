/*
 * openhands.c
 *		The import reader of OpenHands event streams.
 *
 * A stream is a list of events (a JSON array, or one event a line), or the
 * "history" of a resolver run (one run a line: issue, instruction,
 * git_patch, metrics, ..., history).  An action event has "action" and its
 * fields (flat in older streams, under "args" in newer ones, with "id",
 * "source", "timestamp"); the observation answering it has "observation",
 * "content" and, in newer streams, "cause" (the action's id).
 *
 * The mapping:
 *	- action "message" -> a user message (source "user", or the first
 *	  message of a stream without sources) or an assistant one: content ->
 *	  text, images_urls -> image parts.
 *	- action "system" -> a system message.
 *	- any other action (run, run_ipython, edit, browse, finish, ...) -> an
 *	  assistant message: thought -> text, and a tool part named for the
 *	  action, its input the action's arguments, its call id the
 *	  tool_call_metadata's tool_call_id (else the event's id); an
 *	  observation completes it, at the observation's time: by its cause
 *	  (the action's event id), else its tool_call_metadata's id, else (old
 *	  streams with neither) the oldest action waiting; content as output,
 *	  its other fields kept in the part's metadata.
 *	- "null" observations (which only move OpenHands' loop on after a
 *	  message), agent_state_changed, and observations of streams without
 *	  causes that answer no waiting action are bookkeeping; an event of
 *	  neither kind is left out.
 * The resolver's run fields go to the session's metadata with {"source":
 * "openhands"}; a resolver output of several runs (one a line) is a file of
 * several sessions, one a run.
 */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json.h>

#include "transcript/transcript.h"

typedef struct oh_state
{
	mn_calls	calls;
	bool		spoke;			/* the agent has spoken (for streams without
								 * sources) */
} oh_state;

/* Members of an action that are not its arguments. */
static const char *const not_args[] = {
	"action", "thought", "source", "id", "timestamp", "message", "cause", "args",
	"tool_call_metadata", "llm_metrics", "timeout", "hidden", "security_risk", NULL
};

static bool
event(struct json_object *obj)
{
	return mn_js_str(obj, "action", NULL) != NULL || mn_js_str(obj, "observation", NULL) != NULL;
}

static bool
oh_detect(struct json_object *obj)
{
	struct json_object *history = mn_js_arr(obj, "history");

	if (history != NULL)
		return json_object_array_length(history) > 0 &&
			event(json_object_array_get_idx(history, 0));
	return event(obj);
}

static void *
oh_create(void)
{
	return calloc(1, sizeof(oh_state));
}

static void
oh_destroy(void *state)
{
	oh_state   *oh = state;

	if (oh == NULL)
		return;
	mn_calls_free(&oh->calls);
	free(oh);
}

static int
oh_sent(mn_import *imp, void *state, const mn_import_msg *m)
{
	return mn_calls_sent(imp, &((oh_state *) state)->calls, m);
}

static int
oh_open(mn_import *imp, void *state, int64_t lineno, struct json_object *obj, mn_span text)
{
	static const char *const not_meta[] = {"history", NULL};

	(void) state;
	(void) lineno;
	if (imp->created)
		return MNEMO_OK;		/* made by the events before it */
	if (!mn_import_strdup("openhands", &imp->session.agent))
		return mn_import_oom(imp);
	return mn_import_session_meta(imp, obj, text, "openhands", not_meta);
}

/* The action's field key: under "args" in newer streams, else flat. */
static struct json_object *
field(struct json_object *ev, mn_span text, const char *key, mn_span *raw)
{
	struct json_object *args = mn_js_obj(ev, "args");
	struct json_object *v = NULL;
	mn_span		args_text;

	raw->p = NULL;
	raw->len = 0;
	if (args != NULL && json_object_object_get_ex(args, key, &v) &&
		mn_json_member(text, "args", &args_text))
		(void) mn_json_member(args_text, key, raw);
	else if (json_object_object_get_ex(ev, key, &v))
		(void) mn_json_member(text, key, raw);
	return v;
}

static int
message_action(mn_import *imp, oh_state *oh, int64_t line, struct json_object *ev, mn_span text,
			   const char *role)
{
	struct json_object *urls;
	mn_import_msg *m;
	mn_import_part *p;
	mn_span		raw;
	int			rc = MNEMO_OK;

	if (strcmp(role, "assistant") == 0)
		oh->spoke = true;
	if ((m = mn_import_msg_new(imp, line, role)) == NULL)
		return imp->st->errcode;
	m->created_at = mn_import_iso_time(mn_js_str(ev, "timestamp", NULL));
	if (json_object_is_type(field(ev, text, "content", &raw), json_type_string))
	{
		if ((p = mn_import_part_new(imp, m, "text")) == NULL)
			rc = imp->st->errcode;
		else if ((mn_part_put_raw(p, "text", raw), p->members.oom))
			rc = mn_import_oom(imp);
	}
	urls = field(ev, text, "images_urls", &raw);
	for (size_t i = 0; rc == MNEMO_OK && json_object_is_type(urls, json_type_array) &&
		 i < json_object_array_length(urls); i++)
	{
		const char *url = json_object_get_string(json_object_array_get_idx(urls, i));

		rc = mn_import_image(imp, m, NULL, NULL, 0, url != NULL ? url : "");
	}
	if (rc != MNEMO_OK)
	{
		mn_import_msg_free(m);
		return rc;
	}
	return mn_import_push(imp, m);
}

static int
tool_action(mn_import *imp, oh_state *oh, int64_t line, struct json_object *ev, mn_span text,
			const char *action)
{
	struct json_object *meta = mn_js_obj(ev, "tool_call_metadata");
	const char *call_id = meta ? mn_js_str(meta, "tool_call_id", NULL) : NULL;
	struct json_object *id;
	struct json_object *thought;
	mn_import_msg *m;
	mn_import_part *p;
	mn_span		raw;
	mn_buf		input = {0};
	char		made[40];
	int			rc = MNEMO_OK;

	oh->spoke = true;
	made[0] = '\0';
	if (json_object_object_get_ex(ev, "id", &id) && json_object_is_type(id, json_type_int))
	{
		snprintf(made, sizeof(made), "%" PRId64, json_object_get_int64(id));
		if (call_id == NULL)
			call_id = made;
	}
	if (call_id == NULL)
	{
		snprintf(made, sizeof(made), "line-%" PRId64, line);
		call_id = made;
	}
	if ((m = mn_import_msg_new(imp, line, "assistant")) == NULL)
		return imp->st->errcode;
	m->created_at = mn_import_iso_time(mn_js_str(ev, "timestamp", NULL));
	thought = field(ev, text, "thought", &raw);
	if (json_object_is_type(thought, json_type_string) && json_object_get_string_len(thought) > 0 &&
		raw.len > 0)
	{
		if ((p = mn_import_part_new(imp, m, "text")) == NULL)
			rc = imp->st->errcode;
		else
			mn_part_put_raw(p, "text", raw);
	}
	if (mn_js_obj(ev, "args") != NULL)
		(void) mn_json_member(text, "args", &raw);
	else
	{
		mn_import_others(ev, text, not_args, &input);
		raw.p = input.data;
		raw.len = input.len;
	}
	if (rc == MNEMO_OK && mn_import_tool_call(imp, &oh->calls, m, action, call_id, raw) == NULL)
		rc = imp->st->errcode;
	/* the observation names the action by its event id (cause) */
	if (rc == MNEMO_OK && call_id != made && made[0] != '\0')
		rc = mn_calls_alias(imp, &oh->calls, made);
	mn_buf_free(&input);
	if (rc != MNEMO_OK)
	{
		mn_import_msg_free(m);
		return rc;
	}
	return mn_import_push(imp, m);
}

static int
observation(mn_import *imp, oh_state *oh, int64_t line, struct json_object *ev, mn_span text)
{
	static const char *const not_meta[] = {"content", "cause", NULL};
	const char *kind = mn_js_str(ev, "observation", NULL);
	struct json_object *cause;
	struct json_object *tcm = mn_js_obj(ev, "tool_call_metadata");
	char		cause_id[40];
	const char *call_id = NULL;
	mn_span		output = {NULL, 0};
	mn_buf		meta = {0};
	int			rc;

	/* OpenHands' own bookkeeping: a NullObservation answers a message (it
	 * only moves the loop on), a state change answers nothing */
	if (strcmp(kind, "null") == 0 || strcmp(kind, "agent_state_changed") == 0)
	{
		mn_import_bookkeeping(imp, line, kind);
		return MNEMO_OK;
	}
	if (json_object_object_get_ex(ev, "cause", &cause) && json_object_is_type(cause, json_type_int))
	{
		snprintf(cause_id, sizeof(cause_id), "%" PRId64, json_object_get_int64(cause));
		call_id = cause_id;
	}
	else if (tcm != NULL && mn_js_str(tcm, "tool_call_id", NULL) != NULL)
		call_id = mn_js_str(tcm, "tool_call_id", NULL);
	else if (oh->calls.n == 0)
	{
		mn_import_bookkeeping(imp, line, kind);
		return MNEMO_OK;
	}
	if (mn_js_str(ev, "content", NULL) != NULL)
		(void) mn_json_member(text, "content", &output);
	mn_import_others(ev, text, not_meta, &meta);
	if (meta.oom)
		rc = mn_import_oom(imp);
	else
		rc = mn_calls_result(imp, &oh->calls, line, call_id, kind, false,
							 mn_import_iso_time(mn_js_str(ev, "timestamp", NULL)), output,
							 (mn_span) {meta.data, meta.len});
	mn_buf_free(&meta);
	return rc;
}

static int
oh_line(mn_import *imp, void *state, int64_t line, const char *text, size_t len,
		struct json_object *ev)
{
	oh_state   *oh = state;
	mn_span		whole = {text, len};
	const char *action = json_object_is_type(ev, json_type_object) ? mn_js_str(ev, "action", NULL) : NULL;
	const char *source;

	if (!json_object_is_type(ev, json_type_object))
		return mn_fail(imp->st, MNEMO_ERR_FORMAT,
					   "line %" PRId64 ": an OpenHands event must be a JSON object", line);
	if (action == NULL)
	{
		if (mn_js_str(ev, "observation", NULL) != NULL)
			return observation(imp, oh, line, ev, whole);
		mn_import_skipped(imp, line, "event");
		return MNEMO_OK;
	}
	if (strcmp(action, "system") == 0)
		return message_action(imp, oh, line, ev, whole, "system");
	if (strcmp(action, "message") == 0)
	{
		source = mn_js_str(ev, "source", NULL);
		return message_action(imp, oh, line, ev, whole,
							  (source != NULL ? strcmp(source, "user") == 0 : !oh->spoke)
							  ? "user" : "assistant");
	}
	return tool_action(imp, oh, line, ev, whole, action);
}

const mn_reader mn_openhands_reader = {
	"openhands", oh_detect, mn_history_document, oh_open, oh_create, oh_line, NULL, oh_sent,
	oh_destroy, NULL, NULL
};
