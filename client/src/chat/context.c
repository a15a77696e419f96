/*
 * context.c
 *		The one place a turn reads its context from the server.
 *
 * A turn needs the context's size (the hard threshold before the provider
 * is called, the soft one after), the context itself and, to send tool calls
 * in their structured form, its assistant messages with their parts.  Before
 * the call all three come from one turn_context statement, which assembles
 * the context once on the server; after it, only the size, from
 * context_report.
 */
#include <string.h>

#include "chat/chat.h"

int
mn_turn_context_calls(mnemo_store *st, const char *sid, int budget, unsigned what,
					  mn_call *calls, size_t *n, turn_context *tc)
{
	int			rc;

	/* *n counts each call before it is filled, so the caller clears it */
	tc->what = what;
	tc->calls = &calls[*n];
	if (what & TURN_CONTEXT)
		rc = mn_turn_context_call(st, sid, budget, &calls[(*n)++]);
	else
		rc = mn_context_report_call(st, sid, budget, &calls[(*n)++]);
	return rc;
}

int
mn_turn_context_read(mnemo_store *st, turn_context *tc)
{
	if (!(tc->what & TURN_CONTEXT))
		return mn_context_report_of(st, tc->calls, &tc->report);
	mnemo_context_free(tc->ctx);
	mnemo_messages_free(tc->msgs);
	tc->ctx = NULL;
	tc->msgs = NULL;
	return mn_turn_context_of(st, tc->calls, &tc->ctx, &tc->msgs, &tc->report);
}

int64_t
mn_turn_context_size(const turn_context *tc)
{
	const mnemo_context_budget *r = &tc->report;

	/* every summary is among the included items: summary_tokens is a part
	 * of included_tokens, not more */
	return r->included_tokens + r->omitted_tokens;
}

void
mn_turn_context_free(turn_context *tc)
{
	mnemo_context_free(tc->ctx);
	mnemo_messages_free(tc->msgs);
	memset(tc, 0, sizeof(*tc));
}
