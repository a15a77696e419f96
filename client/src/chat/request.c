/*
 * request.c
 *		The provider request of a turn: the context made into the
 *		provider's messages, the body, the POST, and the stream's outcome.
 *
 * Summaries go as assistant text (the seed's ContextBuilder), user-side
 * messages as their rendered content, assistant messages as their text
 * and, when they made tool calls, in their structured form: the calls and
 * one result per call, in the provider's shape.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "chat/chat.h"
#include "stream/http.h"

typedef struct req_build
{
	mn_req_message *msgs;
	size_t		n;
	size_t		cap;
	mn_req_tool_call **calls;	/* each assistant message's array */
	size_t		n_calls;
	char	  **strs;			/* strings made here */
	size_t		n_strs;
	size_t		cap_strs;
	mn_buf		system;			/* the session's system prompt and the text
								 * of its system-role messages */
	mn_req_image **images;		/* each user message's array */
	size_t		n_images;
} req_build;

static mn_req_message *
req_add(req_build *b)
{
	if (b->n == b->cap)
	{
		size_t		cap = b->cap ? b->cap * 2 : 16;
		mn_req_message *m = realloc(b->msgs, cap * sizeof(*m));

		if (m == NULL)
			return NULL;
		b->msgs = m;
		b->cap = cap;
	}
	memset(&b->msgs[b->n], 0, sizeof(b->msgs[0]));
	return &b->msgs[b->n++];
}

/* Keep s to free with the request; NULL (and s freed) when out of memory. */
static char *
req_keep(req_build *b, char *s)
{
	if (s == NULL)
		return NULL;
	if (b->n_strs == b->cap_strs)
	{
		size_t		cap = b->cap_strs ? b->cap_strs * 2 : 16;
		char	  **p = realloc(b->strs, cap * sizeof(*p));

		if (p == NULL)
		{
			free(s);
			return NULL;
		}
		b->strs = p;
		b->cap_strs = cap;
	}
	b->strs[b->n_strs++] = s;
	return s;
}

static void
req_free(req_build *b)
{
	size_t		i;

	for (i = 0; i < b->n_strs; i++)
		free(b->strs[i]);
	for (i = 0; i < b->n_calls; i++)
		free(b->calls[i]);
	for (i = 0; i < b->n_images; i++)
		free(b->images[i]);
	free(b->images);
	free(b->strs);
	free(b->calls);
	free(b->msgs);
	mn_buf_free(&b->system);
}

/* A stored reasoning part's signature (kept in its content), or NULL. */
static char *
part_signature(const mnemo_part *p)
{
	json_object *o = json_tokener_parse(p->content);
	json_object *v;
	char	   *sig = NULL;

	if (o != NULL && json_object_object_get_ex(o, "signature", &v) &&
		json_object_is_type(v, json_type_string))
		sig = strdup(json_object_get_string(v));
	json_object_put(o);
	return sig;
}

/*
 * An assistant message with tool calls, structured: its text, the calls,
 * then one result per call in the provider's shape.  A call that never got
 * a result (the tool did not run, or the turn died) is answered with an
 * error result, since both APIs refuse a call left unanswered.
 */
static bool
add_tool_turn(req_build *b, const mnemo_message *m, bool with_reasoning)
{
	mn_buf		text = {0};
	mn_req_tool_call *calls;
	mn_req_message *rm;
	size_t		i,
				k = 0;
	const char *reasoning = NULL;
	char	   *signature = NULL;
	mn_req_tool_call **grown;

	if ((calls = calloc(m->n_parts, sizeof(*calls))) == NULL)
		return false;
	if ((grown = realloc(b->calls, (b->n_calls + 1) * sizeof(*grown))) == NULL)
	{
		free(calls);
		return false;
	}
	b->calls = grown;
	b->calls[b->n_calls++] = calls;
	for (i = 0; i < m->n_parts; i++)
	{
		const mnemo_part *p = &m->parts[i];

		if (strcmp(p->type, "text") == 0 && p->text != NULL)
		{
			if ((text.len > 0 && !mn_buf_put(&text, "\n", 1)) ||
				!mn_buf_put(&text, p->text, strlen(p->text)))
			{
				free(text.data);
				return false;
			}
		}
		else if (strcmp(p->type, "reasoning") == 0 && with_reasoning && reasoning == NULL)
		{
			reasoning = p->text;
			if ((signature = req_keep(b, part_signature(p))) == NULL)
				reasoning = NULL;
		}
		else if (strcmp(p->type, "tool") == 0)
		{
			calls[k].id = p->tool_call_id;
			calls[k].name = p->tool_name;
			calls[k].input = p->tool_input;
			k++;
		}
	}
	if ((rm = req_add(b)) == NULL || (text.data != NULL && req_keep(b, text.data) == NULL))
	{
		if (rm == NULL)
			free(text.data);
		return false;
	}
	rm->role = MN_REQ_ASSISTANT;
	rm->text = text.data;
	rm->reasoning = reasoning;
	rm->reasoning_signature = signature;
	rm->tool_calls = calls;
	rm->n_tool_calls = k;

	for (i = 0; i < m->n_parts; i++)
	{
		const mnemo_part *p = &m->parts[i];
		char	   *out = NULL;

		if (strcmp(p->type, "tool") != 0)
			continue;
		if ((rm = req_add(b)) == NULL)
			return false;
		rm->role = MN_REQ_TOOL_RESULT;
		rm->tool_call_id = p->tool_call_id;
		if (p->compacted_at != 0)
		{
			size_t		len = strlen(p->tool_name) + 64;

			if ((out = req_keep(b, malloc(len))) == NULL)
				return false;
			snprintf(out, len, "[Tool '%s' output compacted at %lld]", p->tool_name,
					 (long long) p->compacted_at);
			rm->text = out;
		}
		else if (p->tool_state != NULL && strcmp(p->tool_state, "completed") == 0)
			rm->text = p->tool_output ? p->tool_output : "";
		else if (p->tool_state != NULL && strcmp(p->tool_state, "error") == 0)
		{
			rm->text = p->error_message ? p->error_message : p->tool_output ? p->tool_output : "error";
			rm->is_error = true;
		}
		else
		{
			rm->text = "[no result: the tool call did not complete]";
			rm->is_error = true;
		}
	}
	return true;
}

static bool
has_tool_calls(const mnemo_message *m)
{
	size_t		i;
	bool		any = false;

	for (i = 0; i < m->n_parts; i++)
		if (strcmp(m->parts[i].type, "tool") == 0)
		{
			if (m->parts[i].tool_call_id == NULL || m->parts[i].tool_name == NULL)
				return false;	/* imported without ids: sent as text */
			any = true;
		}
	return any;
}

/* The text parts of an assistant message, without the reasoning the
 * rendered content also holds; NULL when it has none. */
static char *
assistant_text(const mnemo_message *m)
{
	mn_buf		b = {0};
	size_t		i;

	for (i = 0; i < m->n_parts; i++)
		if (strcmp(m->parts[i].type, "text") == 0 && m->parts[i].text != NULL &&
			*m->parts[i].text != '\0')
		{
			if ((b.len > 0 && !mn_buf_put(&b, "\n", 1)) ||
				!mn_buf_put(&b, m->parts[i].text, strlen(m->parts[i].text)))
			{
				free(b.data);
				return NULL;
			}
		}
	return b.data;
}

/*
 * The assistant message of context entry e among msgs (the context's
 * assistant messages, in context order, *next the one expected), or NULL
 * when msgs lacks it: a compaction that swapped between the two reads.
 */
static const mnemo_message *
find_message(const mnemo_messages *msgs, const mnemo_context_entry *e, size_t *next)
{
	size_t		i;

	if (msgs == NULL)
		return NULL;
	if (*next < msgs->count && strcmp(msgs->items[*next].id, e->item_id) == 0)
		return &msgs->items[(*next)++];
	for (i = 0; i < msgs->count; i++)
		if (strcmp(msgs->items[i].id, e->item_id) == 0)
			return &msgs->items[i];
	return NULL;
}

/* A string member of a part's content, kept with the request; NULL when
 * absent. */
static const char *
content_string(req_build *b, struct json_object *o, const char *key, bool *nomem)
{
	struct json_object *v;
	char	   *copy;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	if ((copy = req_keep(b, strdup(json_object_get_string(v)))) == NULL)
		*nomem = true;
	return copy;
}

/*
 * The image parts of a user-side message, sent as images after its text.
 * The turn's context carries the parts of assistant messages only, so they
 * are read here, and only for a message whose rendering shows an image.
 * When its other parts are all text, the text sent is theirs alone (a text
 * part renders as its text, and the parts of a message are joined by line
 * breaks): the image goes once, as an image, not also as the placeholder
 * `[Image: ...]` that stands for it in the context's text.  Any other part
 * keeps the rendering whole.
 */
static int
user_images(mnemo_store *st, const char *session_id, const mnemo_context_entry *e,
			req_build *b, mn_req_message *rm)
{
	mnemo_parts *parts = NULL;
	mn_req_image *imgs;
	mn_req_image **grown;
	mn_buf		text = {0};
	bool		text_only = true;
	bool		nomem = false;
	int			rc;

	if (strstr(e->content, "[Image: ") == NULL)
		return MNEMO_OK;
	if ((rc = mnemo_parts_get(st, session_id, e->item_id, &parts)) != MNEMO_OK)
		return rc;
	imgs = calloc(parts->count + 1, sizeof(*imgs));
	grown = imgs ? realloc(b->images, (b->n_images + 1) * sizeof(*grown)) : NULL;
	if (grown == NULL)
	{
		free(imgs);
		mnemo_parts_free(parts);
		return mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
	}
	b->images = grown;
	b->images[b->n_images++] = imgs;
	for (size_t i = 0; i < parts->count && !nomem; i++)
	{
		struct json_object *o;
		struct json_object *t;
		mn_req_image *img = &imgs[rm->n_images];

		if (strcmp(parts->items[i].type, "text") == 0 &&
			(o = json_tokener_parse(parts->items[i].content)) != NULL)
		{
			if (json_object_object_get_ex(o, "text", &t) && json_object_is_type(t, json_type_string))
			{
				if (text.len > 0)
					mn_buf_puts(&text, "\n");
				mn_buf_puts(&text, json_object_get_string(t));
			}
			else
				text_only = false;
			json_object_put(o);
			continue;
		}
		if (strcmp(parts->items[i].type, "image") != 0 ||
			(o = json_tokener_parse(parts->items[i].content)) == NULL)
		{
			text_only = false;
			continue;
		}
		img->media_type = content_string(b, o, "media_type", &nomem);
		img->data = content_string(b, o, "data", &nomem);
		img->url = content_string(b, o, "url", &nomem);
		json_object_put(o);
		if (img->data != NULL || img->url != NULL)
			rm->n_images++;
	}
	rm->images = imgs;
	mnemo_parts_free(parts);
	nomem = nomem || text.oom;
	if (!nomem && text_only && rm->n_images > 0)
	{
		char	   *kept = text.data;	/* NULL while empty: an image alone has no text */

		text.data = NULL;
		if (kept != NULL && req_keep(b, kept) == NULL)
			nomem = true;
		else
			rm->text = kept;
	}
	mn_buf_free(&text);
	return nomem ? mn_fail(st, MNEMO_ERR_NOMEM, "out of memory") : MNEMO_OK;
}

/*
 * The provider's messages for the assembled context: summaries as
 * assistant text (the seed's ContextBuilder), user-side messages as their
 * rendered content, assistant messages as their text and, with tool calls,
 * the calls and their results.  Empty messages (a turn that died before
 * its first word, or whose request was refused) are left out: both APIs
 * refuse them.
 */
static int
build_messages(mnemo_store *st, const char *session_id, const mnemo_context *ctx,
			   const mnemo_messages *msgs, mn_provider provider, req_build *b)
{
	size_t		i,
				next = 0;

	for (i = 0; i < ctx->count; i++)
	{
		const mnemo_context_entry *e = &ctx->items[i];
		const mnemo_message *m = NULL;
		mn_req_message *rm;

		if (strcmp(e->item_type, "message") == 0 && e->role != NULL &&
			strcmp(e->role, "assistant") == 0)
			m = find_message(msgs, e, &next);
		if (m != NULL && !m->is_summary)
		{
			char	   *text;

			if (has_tool_calls(m))
			{
				if (!add_tool_turn(b, m, provider == MN_PROVIDER_ANTHROPIC))
					return mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
				continue;
			}
			if ((text = assistant_text(m)) == NULL)
				continue;
			if (req_keep(b, text) == NULL || (rm = req_add(b)) == NULL)
				return mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
			rm->role = MN_REQ_ASSISTANT;
			rm->text = text;
			continue;
		}
		if (e->content == NULL || *e->content == '\0')
			continue;
		/* a system message (an imported transcript's) is system text: the
		 * provider's system field, never a user turn */
		if (e->role != NULL && strcmp(e->role, "system") == 0 &&
			strcmp(e->item_type, "message") == 0)
		{
			if (b->system.len > 0)
				mn_buf_puts(&b->system, "\n\n");
			mn_buf_puts(&b->system, e->content);
			if (b->system.oom)
				return mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
			continue;
		}
		if ((rm = req_add(b)) == NULL)
			return mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
		rm->role = e->role != NULL && strcmp(e->role, "assistant") == 0 ? MN_REQ_ASSISTANT : MN_REQ_USER;
		rm->text = e->content;
		if (rm->role == MN_REQ_USER && strcmp(e->item_type, "message") == 0)
		{
			int			rc = user_images(st, session_id, e, b, rm);

			if (rc != MNEMO_OK)
				return rc;
		}
	}
	return MNEMO_OK;
}

int
mn_turn_request(mnemo_store *st, const turn_cfg *c,
				const mnemo_session *s, const turn_context *tc, turn_state *ts, mn_stream *stream)
{
	req_build	b = {0};
	mn_request	req = {0};
	mn_http_post post = {0};
	char	   *body = NULL;
	char	   *why = NULL;
	size_t		body_len = 0;
	int			rc;

	if (s->system_prompt != NULL)
		mn_buf_puts(&b.system, s->system_prompt);
	if ((rc = build_messages(st, s->id, tc->ctx, tc->msgs, c->provider, &b)) != MNEMO_OK)
		goto done;
	req.model = c->model;
	if (b.system.oom)
	{
		rc = mn_fail(st, MNEMO_ERR_NOMEM, "out of memory");
		goto done;
	}
	req.system = b.system.len > 0 ? b.system.data : NULL;
	req.messages = b.msgs;
	req.n_messages = b.n;
	req.tools = ts->tools;
	req.max_output_tokens = c->max_output;
	rc = mn_request_body(c->provider, &req, &body, &body_len, &why);
	if (rc != MNEMO_OK)
	{
		rc = rc == MNEMO_ERR_NOMEM ? mn_fail(st, rc, "out of memory")
			: mn_fail(st, rc, "%s", why ? why : "bad request");
		goto done;
	}

	post.provider = c->provider;
	post.url = c->url;
	post.api_key = c->api_key;
	post.body = body;
	post.body_len = body_len;
	post.connect_timeout_ms = c->connect_ms;
	post.idle_timeout_ms = c->idle_ms;
	post.max_retries = c->retries;
	post.stream = stream;
	rc = mn_http_send(st, &post, &ts->accepted);
	if (rc == MNEMO_OK)
	{
		mn_stream_state state = mn_stream_end(stream);
		const mn_stream_error *err = mn_stream_error_of(stream);

		if (state == MN_STREAM_FAILED && err != NULL && err->kind == MN_STREAM_ERR_PROVIDER)
		{
			char	   *m = *c->api_key && strstr(err->message, c->api_key) ? NULL : strdup(err->message);

			rc = mn_fail(st, MNEMO_ERR_STREAM, "the provider sent an error mid-stream (%s): %s",
						 mn_errclass_name(err->errclass), m ? m : "(message withheld)");
			free(m);
		}
		else if (state == MN_STREAM_FAILED)
			rc = mn_fail(st, err && err->kind == MN_STREAM_ERR_NOMEM ? MNEMO_ERR_NOMEM : MNEMO_ERR_STREAM,
						 "the provider's stream could not be read: %s", err ? err->message : "?");
		else if (state == MN_STREAM_INTERRUPTED)
			rc = mn_fail(st, MNEMO_ERR_STREAM, "the stream ended before its last event");
	}

done:
	free(body);
	free(why);
	req_free(&b);
	return rc;
}
