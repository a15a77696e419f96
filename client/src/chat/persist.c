/*
 * persist.c
 *		The stream of a turn into the log: text and reasoning deltas into
 *		parts, appended as each completes, tool calls into pending tool
 *		parts, every delta to the caller's on_part as it arrives.
 *
 * The assistant row exists before the provider is called (send.c), so what
 * streamed is kept whatever ends the stream.  The last part is not
 * appended alone: it goes into the turn's last batch with the usage.
 */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "chat/chat.h"


int
mn_turn_flush_part(turn_state *ts, mn_call *into)
{
	mnemo_new_part p = MNEMO_NEW_PART_INIT;
	mn_call		now = {0};
	mn_call    *call = into != NULL ? into : &now;
	json_object *o = NULL;
	int			rc;

	if (!ts->open)
		return MNEMO_OK;
	ts->open = false;
	if (ts->part.len == 0)
		return MNEMO_OK;
	if (ts->open_kind == MN_DELTA_REASONING && ts->signature != NULL)
	{
		/* the signature goes back to Anthropic with the thinking block */
		o = json_object_new_object();
		if (o == NULL ||
			json_object_object_add(o, "type", json_object_new_string("reasoning")) != 0 ||
			json_object_object_add(o, "text", json_object_new_string_len(ts->part.data, (int) ts->part.len)) != 0 ||
			json_object_object_add(o, "signature", json_object_new_string(ts->signature)) != 0)
		{
			json_object_put(o);
			return mn_fail(ts->st, MNEMO_ERR_NOMEM, "out of memory");
		}
		p.content = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	}
	p.type = ts->open_kind == MN_DELTA_REASONING ? "reasoning" : "text";
	p.text = ts->part.data;
	rc = mn_part_append_call(ts->st, ts->session_id, ts->turn->message_id, &p, call);
	json_object_put(o);
	if (rc == MNEMO_OK && into == NULL)
		rc = mn_call_run(ts->st, call);
	mn_call_clear(&now);
	mn_buf_reset(&ts->part);
	free(ts->signature);
	ts->signature = NULL;
	return rc;
}

/*
 * Tell the caller's on_part of sp.  The handle is the turn's meanwhile: a
 * call on it from the callback is refused (mn_begin), and that refusal,
 * the callback's to read, is not the turn's error.  A non-zero return
 * stops the turn.
 */
static int
hear(turn_state *ts, const mnemo_stream_part *sp)
{
	int			stop;

	if (ts->on_part == NULL)
		return MNEMO_OK;
	ts->st->in_callback = true;
	stop = ts->on_part(ts->st, sp, ts->arg);
	ts->st->in_callback = false;
	mn_clear_error(ts->st);
	return stop != 0 ? mn_fail(ts->st, MNEMO_ERR_CANCELLED, "the part callback stopped the turn")
		: MNEMO_OK;
}

/*
 * The stored part of a call whose input is not a JSON object (invalid JSON,
 * an array): the server takes only an object as "input", so the part has
 * none, and "input_text" keeps the model's text as written, which a read
 * gives back as the input.  The next request then sends OpenAI the
 * arguments string as the model wrote it and Anthropic {} (an object, which
 * it requires), and the call is answered like any other.
 */
static char *
malformed_call_content(const char *id, const mn_delta *d, const char *input)
{
	json_object *o = json_object_new_object();
	char	   *text = NULL;

	if (o != NULL &&
		json_object_object_add(o, "type", json_object_new_string("tool")) == 0 &&
		(id[0] == '\0' || json_object_object_add(o, "id", json_object_new_string(id)) == 0) &&
		json_object_object_add(o, "tool_name", json_object_new_string(d->name)) == 0 &&
		json_object_object_add(o, "tool_call_id", json_object_new_string(d->id)) == 0 &&
		json_object_object_add(o, "tool_state", json_object_new_string("pending")) == 0 &&
		json_object_object_add(o, "input_text", json_object_new_string(input)) == 0)
		text = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
													 JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
	return text;
}

/*
 * A complete call, stored as a pending tool part; input is its JSON object
 * when valid, else the model's text as written.  Its id is the one the
 * server derives, "MESSAGE_ID:PART_INDEX" (src/reads/part_ids.c), known once
 * the append returns the index: no id to draw first, and none stored.  Only
 * a message id too long for that (the server's own rule: a colon and ten
 * digits more must fit in MNEMO_ID_MAX) has the part take a drawn id.
 */
static int
add_tool_call(turn_state *ts, const mn_delta *d, const char *input, bool valid)
{
	mnemo_turn *t = ts->turn;
	mnemo_tool_call *c;
	mnemo_new_part p = MNEMO_NEW_PART_INIT;
	char		id[MNEMO_ID_MAX + 1] = "";
	char	   *content = NULL;
	int			index;
	int			rc;

	if (strlen(t->message_id) + 1 + 10 > MNEMO_ID_MAX &&
		(rc = mnemo_new_id(ts->st, "part", id)) != MNEMO_OK)
		return rc;
	p.type = "tool";
	p.id = id[0] != '\0' ? id : NULL;
	p.tool_name = d->name;
	p.tool_call_id = d->id;
	p.tool_state = "pending";
	p.tool_input = input;
	if (!valid && (p.content = content = malformed_call_content(id, d, input)) == NULL)
		return mn_fail(ts->st, MNEMO_ERR_NOMEM, "out of memory");
	rc = mnemo_part_append(ts->st, ts->session_id, t->message_id, &p, &index);
	free(content);
	if (rc != MNEMO_OK)
		return rc;
	if (id[0] == '\0')
		snprintf(id, sizeof(id), "%s:%d", t->message_id, index);
	if (t->n_tool_calls == ts->cap_calls)
	{
		size_t		cap = ts->cap_calls ? ts->cap_calls * 2 : 4;
		mnemo_tool_call *g = realloc(t->tool_calls, cap * sizeof(*g));

		if (g == NULL)
			return mn_fail(ts->st, MNEMO_ERR_NOMEM, "out of memory");
		t->tool_calls = g;
		ts->cap_calls = cap;
	}
	c = &t->tool_calls[t->n_tool_calls];
	memset(c, 0, sizeof(*c));
	t->n_tool_calls++;
	if ((c->part_id = strdup(id)) == NULL || (c->call_id = strdup(d->id)) == NULL ||
		(c->name = strdup(d->name)) == NULL || (c->input = strdup(input)) == NULL)
		return mn_fail(ts->st, MNEMO_ERR_NOMEM, "out of memory");
	{
		mnemo_stream_part sp = {0};

		sp.type = "tool";
		sp.tool_call_id = d->id;
		sp.tool_name = d->name;
		sp.tool_input = input;
		sp.part_id = id;
		return hear(ts, &sp);
	}
}

/*
 * Append a text delta, each NUL byte as U+FFFD: PostgreSQL's text and jsonb
 * cannot hold U+0000, and a C string would end at it with the rest of the
 * reply lost.  on_part still gets the bytes as they came.
 */
static bool
put_text(mn_buf *b, const char *s, size_t n)
{
	const char *nul;

	while ((nul = memchr(s, '\0', n)) != NULL)
	{
		size_t		k = (size_t) (nul - s);

		if (!mn_buf_put(b, s, k) || !mn_buf_put(b, "\xEF\xBF\xBD", 3))
			return false;
		s += k + 1;
		n -= k + 1;
	}
	return mn_buf_put(b, s, n);
}

int
mn_turn_on_delta(void *arg, const mn_delta *d)
{
	turn_state *ts = arg;
	mn_delta_kind kind = d->kind == MN_DELTA_REFUSAL ? MN_DELTA_TEXT : d->kind;
	int			rc;

	switch (d->kind)
	{
		case MN_DELTA_TEXT:
		case MN_DELTA_REFUSAL:
		case MN_DELTA_REASONING:
			if (ts->open && (ts->open_kind != kind || ts->open_block != d->block) &&
				(rc = mn_turn_flush_part(ts, NULL)) != MNEMO_OK)
				return rc;
			if (!ts->open)
			{
				ts->open = true;
				ts->open_kind = kind;
				ts->open_block = d->block;
			}
			if (!put_text(&ts->part, d->text, d->len) ||
				(kind == MN_DELTA_TEXT && !put_text(&ts->text, d->text, d->len)))
				return mn_fail(ts->st, MNEMO_ERR_NOMEM, "out of memory");
			{
				mnemo_stream_part sp = {0};

				sp.type = kind == MN_DELTA_TEXT ? "text" : "reasoning";
				sp.delta = d->text;
				sp.len = d->len;
				return hear(ts, &sp);
			}
		case MN_DELTA_REASONING_SIGNATURE:
			free(ts->signature);
			if ((ts->signature = strndup(d->text, d->len)) == NULL)
				return mn_fail(ts->st, MNEMO_ERR_NOMEM, "out of memory");
			return MNEMO_OK;
		case MN_DELTA_TOOL_START:
			return mn_turn_flush_part(ts, NULL);
		case MN_DELTA_TOOL_END:
			if ((rc = mn_turn_flush_part(ts, NULL)) != MNEMO_OK)
				return rc;
			if (d->input_valid)
			{
				/*
				 * Valid JSON that jsonb cannot hold (a \u0000 or a lone
				 * surrogate escape): each such escape becomes \ufffd, as a
				 * NUL in a text delta becomes U+FFFD, rather than the part
				 * refused and the call lost (mn_json_scrub, the one policy)
				 */
				char	   *input = mn_strndup(d->text, d->len);

				if (input == NULL)
					return mn_fail(ts->st, MNEMO_ERR_NOMEM, "out of memory");
				(void) mn_json_scrub(input, d->len);
				rc = add_tool_call(ts, d, input, true);
				free(input);
				return rc;
			}
			else
			{
				/* what the model wrote is kept, a NUL as U+FFFD as in text,
				 * for the caller to answer with an error result */
				mn_buf		raw = {0};

				rc = put_text(&raw, d->text, d->len) && mn_buf_put(&raw, "", 0)
					? add_tool_call(ts, d, raw.data ? raw.data : "", false)
					: mn_fail(ts->st, MNEMO_ERR_NOMEM, "out of memory");
				mn_buf_free(&raw);
				return rc;
			}
		default:
			return MNEMO_OK;
	}
}

/*
 * The auto checkpoint after a completed assistant turn: labelled
 * "turn-<seq of the assistant message>", unique per turn of the session
 * (mantis adds one after each assistant turn; doc/c-api.md).  The label
 * lives in call->num.
 */
int
mn_turn_checkpoint_call(turn_state *ts, mn_call *call)
{
	snprintf(call->num, sizeof(call->num), "turn-%" PRId64, ts->row_seq);
	return mn_checkpoint_add_call(ts->st, ts->session_id, call->num, true, call);
}

double
mn_turn_cost(const mnemo_turn_options *o, const char *model, const mnemo_tokens *t)
{
	size_t		i;

	for (i = 0; o->prices != NULL && i < o->n_prices; i++)
		if (o->prices[i].model != NULL && strcmp(o->prices[i].model, model) == 0)
			return ((double) t->input * o->prices[i].input +
					(double) t->output * o->prices[i].output +
					(double) t->cache_read * o->prices[i].cache_read +
					(double) t->cache_write * o->prices[i].cache_write) / 1e6;
	return 0;
}

void
mn_turn_state_clear(turn_state *ts)
{
	mn_buf_free(&ts->part);
	mn_buf_free(&ts->text);
	free(ts->signature);
	ts->signature = NULL;
}
