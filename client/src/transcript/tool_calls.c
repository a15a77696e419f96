/*
 * tool_calls.c
 *		Tool calls paired with their results, and images, for every reader.
 *
 * mnemo keeps a call and its result in one tool part (input, output,
 * state), where the formats write them apart: a call in an assistant turn,
 * its result in a later user turn (Anthropic), tool message (OpenAI,
 * SWE-agent), toolResult message (pi) or observation (OpenHands).  A call
 * is remembered with the message that holds it; its result completes the
 * part while the message waits in the unsent batch, and after the message
 * was sent it is merged by update_part_status.  A result for no known call
 * becomes a "tool" message of its own, so nothing is dropped.
 */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <json.h>

#include "transcript/transcript.h"

struct mn_pending_call
{
	char	   *call_id;
	char	   *alias;			/* another key its result may name, or NULL */
	mn_import_msg *msg;			/* the message with the part, not yet sent */
	size_t		part;
	char	   *message_id;		/* once msg was sent */
};

int
mn_calls_remember(mn_import *imp, mn_calls *calls, const char *call_id, mn_import_msg *m,
				  size_t part)
{
	mn_pending_call *c;

	if (calls->n == calls->cap)
	{
		size_t		cap = calls->cap ? calls->cap * 2 : 16;
		mn_pending_call *grown = realloc(calls->items, cap * sizeof(*grown));

		if (grown == NULL)
			return mn_import_oom(imp);
		calls->items = grown;
		calls->cap = cap;
	}
	c = &calls->items[calls->n];
	memset(c, 0, sizeof(*c));
	if ((c->call_id = strdup(call_id)) == NULL)
		return mn_import_oom(imp);
	c->msg = m;
	c->part = part;
	calls->n++;
	return MNEMO_OK;
}

/* Forget call i, keeping the others in order (the oldest is answered
 * first when a format names no call). */
static void
drop(mn_calls *calls, size_t i)
{
	free(calls->items[i].call_id);
	free(calls->items[i].alias);
	free(calls->items[i].message_id);
	memmove(&calls->items[i], &calls->items[i + 1], (calls->n - i - 1) * sizeof(*calls->items));
	calls->n--;
}

void
mn_calls_free(mn_calls *calls)
{
	while (calls->n > 0)
		drop(calls, calls->n - 1);
	free(calls->items);
	memset(calls, 0, sizeof(*calls));
}

int
mn_calls_alias(mn_import *imp, mn_calls *calls, const char *alias)
{
	mn_pending_call *c = &calls->items[calls->n - 1];

	free(c->alias);
	if ((c->alias = strdup(alias)) == NULL)
		return mn_import_oom(imp);
	return MNEMO_OK;
}

bool
mn_calls_waiting(const mn_calls *calls, const char *call_id)
{
	for (size_t i = 0; i < calls->n; i++)
		if (strcmp(calls->items[i].call_id, call_id) == 0 ||
			(calls->items[i].alias != NULL && strcmp(calls->items[i].alias, call_id) == 0))
			return true;
	return false;
}

int
mn_calls_sent(mn_import *imp, mn_calls *calls, const mn_import_msg *m)
{
	for (size_t i = 0; i < calls->n; i++)
	{
		if (calls->items[i].msg != m)
			continue;
		calls->items[i].msg = NULL;
		if (!mn_import_strdup(m->ref_id, &calls->items[i].message_id))
			return mn_import_oom(imp);
	}
	return MNEMO_OK;
}

static bool
is_string(mn_span v)
{
	return v.len > 0 && v.p[0] == '"';
}

/* The result's members in a part being built. */
static void
put_result(mn_import_part *p, bool is_error, int64_t at, mn_span output, mn_span meta)
{
	p->tool_state = is_error ? "error" : "completed";
	p->completed_at = at;
	if (output.len > 0)
		mn_part_put_raw(p, is_error && is_string(output) ? "error_message" : "output", output);
	if (meta.len > 0)
		mn_part_put_raw(p, "metadata", meta);
}

/* A result for a call whose message was sent: merged into the stored part. */
static int
complete_sent(mn_import *imp, const char *message_id, const char *call_id, bool is_error,
			  int64_t at, mn_span output)
{
	mnemo_parts *parts = NULL;
	mnemo_part_status status = {0};
	char	   *text = NULL;
	bool		malformed = false;
	int			rc;

	if (output.len > 0)
	{
		text = is_string(output) ? mn_json_unescape(output, &malformed) : strndup(output.p, output.len);
		if (text == NULL)
			return malformed ? mn_fail(imp->st, MNEMO_ERR_FORMAT, "a tool result holds \\u0000 or "
									   "a lone surrogate, which PostgreSQL's text cannot hold")
				: mn_import_oom(imp);
	}
	if ((rc = mnemo_parts_get(imp->st, imp->session_id, message_id, &parts)) != MNEMO_OK)
	{
		free(text);
		return rc;
	}
	for (size_t i = 0; i < parts->count; i++)
	{
		const mnemo_part *p = &parts->items[i];

		if (p->tool_call_id == NULL || strcmp(p->tool_call_id, call_id) != 0)
			continue;
		status.tool_state = is_error ? "error" : "completed";
		status.completed_at = at;
		if (text != NULL)
			*(is_error && is_string(output) ? &status.error_message : &status.output) = text;
		rc = mnemo_part_update_status(imp->st, imp->session_id, p->id, &status);
		break;
	}
	free(text);
	mnemo_parts_free(parts);
	return rc;
}

int
mn_calls_result(mn_import *imp, mn_calls *calls, int64_t line, const char *call_id,
				const char *name, bool is_error, int64_t at, mn_span output, mn_span meta)
{
	mn_import_msg *m;
	mn_import_part *p;
	char		made[32];
	int			rc;

	for (size_t i = 0; i < calls->n; i++)
	{
		mn_pending_call *c = &calls->items[i];

		if (call_id != NULL && strcmp(c->call_id, call_id) != 0 &&
			(c->alias == NULL || strcmp(c->alias, call_id) != 0))
			continue;
		/* a message already sent is changed by statements, after its batch */
		if ((c->msg == NULL || c->msg->in_flight) && (rc = mn_import_drain(imp)) != MNEMO_OK)
			return rc;
		if (c->msg != NULL)
		{
			put_result(&c->msg->parts[c->part], is_error, at, output, meta);
			rc = c->msg->parts[c->part].members.oom ? mn_import_oom(imp) : MNEMO_OK;
		}
		else
			rc = complete_sent(imp, c->message_id, c->call_id, is_error, at, output);
		drop(calls, i);
		return rc;
	}

	/* a result for no call we know of: a tool message of its own, in order */
	if (call_id == NULL)
	{
		snprintf(made, sizeof(made), "line-%" PRId64, line);
		call_id = made;
	}
	if ((m = mn_import_msg_new(imp, line, "tool")) == NULL)
		return imp->st->errcode;
	m->created_at = at;
	if ((p = mn_import_part_new(imp, m, "tool")) == NULL)
	{
		mn_import_msg_free(m);
		return imp->st->errcode;
	}
	name = name != NULL ? name : "unknown";
	mn_part_put_string(p, "tool_name", name, strlen(name));
	mn_part_put_string(p, "tool_call_id", call_id, strlen(call_id));
	put_result(p, is_error, at, output, meta);
	if (p->members.oom)
	{
		mn_import_msg_free(m);
		return mn_import_oom(imp);
	}
	return mn_import_push(imp, m);
}

mn_import_part *
mn_import_tool_call(mn_import *imp, mn_calls *calls, mn_import_msg *m, const char *name,
					const char *call_id, mn_span input)
{
	mn_import_part *p;

	if ((p = mn_import_part_new(imp, m, "tool")) == NULL)
		return NULL;
	mn_part_put_string(p, "tool_name", name, strlen(name));
	mn_part_put_string(p, "tool_call_id", call_id, strlen(call_id));
	if (input.len > 0)
		mn_part_put_raw(p, "input", input);
	/* jsonb sorts the keys of "input": the text keeps the order written */
	if (input.len > 0 && !mn_json_jsonb_order(input))
		mn_part_put_string(p, "input_text", input.p, input.len);
	if (p->members.oom)
	{
		mn_import_oom(imp);
		return NULL;
	}
	if (mn_calls_remember(imp, calls, call_id, m, m->n_parts - 1) != MNEMO_OK)
		return NULL;
	return &m->parts[m->n_parts - 1];
}

int
mn_import_image(mn_import *imp, mn_import_msg *m, const char *media_type, const char *data,
				size_t data_len, const char *url)
{
	mn_import_part *p;

	if ((p = mn_import_part_new(imp, m, "image")) == NULL)
		return imp->st->errcode;
	if (media_type != NULL)
		mn_part_put_string(p, "media_type", media_type, strlen(media_type));
	if (data != NULL)
		mn_part_put_string(p, "data", data, data_len);
	else
		mn_part_put_string(p, "url", url != NULL ? url : "", url != NULL ? strlen(url) : 0);
	return p->members.oom ? mn_import_oom(imp) : MNEMO_OK;
}
