/*
 * agentic.c
 *		One AgenticMap item: a sub-session of the map's session, worked
 *		turn by turn with mnemo_session_send until it finishes.
 *
 * The sub-session is a session like any other (its parent_id the map's
 * session), so it has its own log, its own compaction on the turn's
 * thresholds and its own doom-loop check.  Its id names the map, the item
 * and the claim ("<map>_<hash>_<ordinal>_<claim>", the hash of the map's
 * session and id, as map ids are unique within a session only): a worker that takes over an
 * item from a dead one starts a fresh sub-session rather than continue one
 * whose last turn may be half-written.  Read-only by default: the turns
 * offer no tools, and a call the model makes anyway gets an error result,
 * so that the next turn can go on; with the caller's run_tool the turns
 * offer turn.tools and run_tool answers each call.  Only the last turn's
 * text is recorded.
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "map/map.h"

static const char read_only_result[] =
	"This map is read-only: no tools are available. Answer with what you know.";

/* Whether a finish reason ends the item's conversation. */
static bool
finished(const char *reason)
{
	static const char *const reasons[] = {"stop", "length", "content_filter", "refusal", NULL};

	for (int i = 0; reason && reasons[i]; i++)
		if (strcmp(reason, reasons[i]) == 0)
			return true;
	return false;
}

static void
succeed(mn_map_item *it, const char *text)
{
	mn_buf		js = {0};

	mn_buf_put_jstr(&js, text, strlen(text));
	free(it->error);
	it->error = NULL;
	it->error_kind = NULL;
	it->output = js.data;
	it->success = !js.oom;
}

/* A tool call's result: run_tool's, or the read-only refusal. */
static void
answer(mn_map_worker *w, const mnemo_map_options *o, const char *sub, const mnemo_tool_call *call)
{
	char	   *output = NULL;
	bool		failed = true;

	if (o->run_tool != NULL)
		failed = o->run_tool(sub, call->name, call->input, &output, o->tool_arg) != 0;
	(void) mnemo_session_tool_result(w->st, sub, call->part_id,
									 output ? output : o->run_tool ? "the tool failed" : read_only_result,
									 failed);
	free(output);
}

/*
 * FNV-1a over the map's session and id: map ids are unique within their
 * session only (and a long one is cut short in the sub-session's id),
 * while session ids are global.
 */
static uint64_t
map_hash(const mn_map *m)
{
	uint64_t	h = UINT64_C(14695981039346656037);
	const char *parts[2] = {m->session_id, m->map_id};

	for (int i = 0; i < 2; i++)
		for (const char *p = parts[i];; p++)
		{
			h = (h ^ (unsigned char) *p) * UINT64_C(1099511628211);
			if (*p == '\0')
				break;
		}
	return h;
}

void
mn_map_agentic_item(mn_map_worker *w, const mn_map *m, const mnemo_map_options *o,
					mn_map_item *it)
{
	struct json_object *item = json_tokener_parse(it->item);
	mnemo_new_session spec = MNEMO_NEW_SESSION_INIT;
	mnemo_turn_options t = o->turn;
	char	   *prompt = NULL;
	mnemo_session *sub = NULL;
	const char *text;

	it->attempts = 0;
	if (mn_map_render(w->st, m->template_text, item, &prompt) != MNEMO_OK)
	{
		mn_map_item_fail(it, "validation", "%s", mnemo_errmsg(w->st));
		goto done;
	}
	snprintf(it->sub_session_id, sizeof(it->sub_session_id), "%.*s_%016" PRIx64 "_%d_%d",
			 MNEMO_ID_MAX - 48, m->map_id, map_hash(m), it->ordinal, it->claims);
	spec.id = it->sub_session_id;
	spec.parent_id = m->session_id;
	spec.model_id = w->parent ? w->parent->model_id : NULL;
	spec.provider_id = w->parent ? w->parent->provider_id : NULL;
	spec.agent = "agentic_map";
	if (mnemo_session_create(w->st, &spec, &sub) != MNEMO_OK)
	{
		mn_map_item_fail(it, "llm_error", "the sub-session: %s", mnemo_errmsg(w->st));
		it->sub_session_id[0] = '\0';
		goto done;
	}
	if (o->run_tool == NULL)
		t.tools = NULL;
	t.idle_timeout_ms = m->timeout_ms;
	text = prompt;
	for (int turn_no = 1;; turn_no++)
	{
		mnemo_turn *turn = NULL;
		int			rc;

		it->attempts++;
		rc = mnemo_session_send(w->st, it->sub_session_id, &t, text, NULL, 0, NULL, NULL, &turn);
		if (rc != MNEMO_OK)
		{
			mn_map_item_fail(it, rc == MNEMO_ERR_TIMEOUT ? "timeout" : "llm_error",
							 "turn %d: %s", turn_no, mnemo_errmsg(w->st));
			mnemo_turn_free(turn);
			break;
		}
		/* every call is answered, also on the last turn: no call stays open */
		for (size_t i = 0; i < turn->n_tool_calls; i++)
			answer(w, o, it->sub_session_id, &turn->tool_calls[i]);
		if (turn->doom_loop)
		{
			mn_map_item_fail(it, "doom_loop", "turn %d repeated the same tool call", turn_no);
			mnemo_turn_free(turn);
			break;
		}
		if (finished(turn->finish_reason) ||
			(turn->n_tool_calls == 0 && (m->continuation == NULL || *m->continuation == '\0')))
		{
			succeed(it, turn->text ? turn->text : "");
			mnemo_turn_free(turn);
			break;
		}
		if (turn_no >= m->max_turns)
		{
			mn_map_item_fail(it, "max_turns", "no answer after %d turns", turn_no);
			mnemo_turn_free(turn);
			break;
		}
		/* after tool results the model goes on by itself; else it is told to */
		text = turn->n_tool_calls > 0 ? NULL : m->continuation;
		mnemo_turn_free(turn);
	}
done:
	mnemo_session_free(sub);
	free(prompt);
	json_object_put(item);
}
