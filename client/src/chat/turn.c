/*
 * turn.c
 *		What a chat turn leaves to the caller: the turn result, and the
 *		tool calls it carries, whose results are recorded on their parts.
 *
 * A tool part is appended by mnemo_session_send() in state "pending"; the
 * caller runs the tool and reports it here (running, then completed or
 * error), through update_part_status, the one mutation parts allow.  The
 * next send reads the part back and gives the provider the result in its
 * own shape (OpenAI's role "tool" message, Anthropic's tool_result block).
 */
#define _POSIX_C_SOURCE 200809L

#include <stdlib.h>
#include <time.h>

#include "store/store.h"

MNEMO_API void
mnemo_turn_free(mnemo_turn *turn)
{
	size_t		i;

	if (turn == NULL)
		return;
	for (i = 0; i < turn->n_tool_calls; i++)
	{
		free(turn->tool_calls[i].part_id);
		free(turn->tool_calls[i].call_id);
		free(turn->tool_calls[i].name);
		free(turn->tool_calls[i].input);
	}
	free(turn->tool_calls);
	free(turn->text);
	free(turn->finish_reason);
	free(turn);
}

MNEMO_API int
mnemo_session_tool_start(mnemo_store *st, const char *session_id, const char *part_id)
{
	mnemo_part_status s = {0};
	int			rc;

	if ((rc = mn_begin(st, session_id != NULL && part_id != NULL,
					   "mnemo_session_tool_start: session_id and part_id are required")) != MNEMO_OK)
		return rc;
	s.tool_state = "running";
	s.started_at = mn_unix_ms();
	return mnemo_part_update_status(st, session_id, part_id, &s);
}

MNEMO_API int
mnemo_session_tool_result(mnemo_store *st, const char *session_id, const char *part_id,
						  const char *output, bool is_error)
{
	mnemo_part_status s = {0};
	int			rc;

	if ((rc = mn_begin(st, session_id != NULL && part_id != NULL && output != NULL,
					   "mnemo_session_tool_result: session_id, part_id and output are required")) != MNEMO_OK)
		return rc;
	s.tool_state = is_error ? "error" : "completed";
	s.completed_at = mn_unix_ms();
	if (is_error)
		s.error_message = output;
	else
		s.output = output;
	return mnemo_part_update_status(st, session_id, part_id, &s);
}
