/*
 * thresholds.c
 *		When a turn's context calls for compaction, and when its tool calls
 *		go round in a loop.
 *
 * The hard threshold is the budget itself (context_limit less the output,
 * the compaction's output, the system prompt and the tools): over it, a
 * blocking compaction runs before the provider is called (send.c).  The
 * soft one, a share of the budget checked after the turn, starts
 * compaction in the background.  Both read the assembled context's size
 * from the server's report, so they hold across restarts.  The compaction
 * is the options' hook, else the engine (mn_compact_turn).
 */
#define _POSIX_C_SOURCE 200809L

#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "chat/chat.h"
#include "events/events.h"

bool
mn_turn_over_hard(const turn_cfg *c, int64_t size)
{
	return size > c->available;
}

void
mn_turn_check_soft(mnemo_store *st, const char *sid, const mnemo_turn_options *o,
				   const turn_cfg *c, turn_state *ts, int64_t size)
{
	if ((double) size <= c->soft * c->available)
		return;
	ts->turn->compaction_triggered = true;
	mn_emit(st, MNEMO_EVENT_COMPACTION_TRIGGERED, sid, NULL, 0, NULL, false);
	if ((o->compact != NULL ? o->compact(st, sid, false, o->compact_arg)
		 : mn_compact_turn(st, sid, o, c, false)) != 0)
		mn_emit(st, MNEMO_EVENT_COMPACTION_FAILED, sid, NULL, 0, NULL, false);
	mn_clear_error(st);
}

/*
 * The same tool call (name and input) doom_loop_threshold times in a row,
 * looking back across the session's stored tool parts, ending with this
 * turn's last call.
 */
int
mn_turn_check_doom_loop(mnemo_store *st, const char *sid, const turn_cfg *c, turn_state *ts)
{
	mnemo_messages *h = NULL;
	const mnemo_tool_call *last;
	int			count = 0;
	size_t		i,
				j;
	const char *input = NULL;
	int			rc;
	bool		broke = false;

	if (ts->turn->n_tool_calls == 0)
		return MNEMO_OK;
	last = &ts->turn->tool_calls[ts->turn->n_tool_calls - 1];
	if ((rc = mnemo_history(st, sid, c->doom * 4 + 4, &h)) != MNEMO_OK)
		return rc;
	for (i = h->count; i-- > 0 && !broke;)
	{
		const mnemo_message *m = &h->items[i];

		for (j = m->n_parts; j-- > 0;)
		{
			const mnemo_part *p = &m->parts[j];

			if (strcmp(p->type, "tool") != 0)
				continue;
			/* the stored input, as the server prints it, for all of them */
			if (input == NULL)
				input = p->tool_input ? p->tool_input : "";
			if (p->tool_name == NULL || strcmp(p->tool_name, last->name) != 0 ||
				strcmp(p->tool_input ? p->tool_input : "", input) != 0)
			{
				broke = true;
				break;
			}
			count++;
		}
	}
	if (count >= c->doom)
	{
		json_object *o = json_object_new_object();

		ts->turn->doom_loop = true;
		if (o != NULL)
		{
			json_object_object_add(o, "tool", json_object_new_string(last->name));
			json_object_object_add(o, "input", json_object_new_string(last->input));
			json_object_object_add(o, "count", json_object_new_int(count));
		}
		mn_emit(st, MNEMO_EVENT_DOOM_LOOP_DETECTED, sid, ts->turn->message_id, ts->row_seq,
				o ? json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN) : NULL, false);
		json_object_put(o);
	}
	mnemo_messages_free(h);
	return MNEMO_OK;
}
