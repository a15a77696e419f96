/*
 * context.c
 *		The one place a turn reads its context from the server.
 *
 * A turn needs the context's size (context_report: the hard threshold
 * before the provider is called, the soft one after), the context itself
 * (build_context) and, to send tool calls in their structured form, its
 * assistant messages with their parts (get_messages_with_parts_by_ids over
 * the same assembly).  Today these are three statements, each assembling
 * the context on the server; they are chosen here and nowhere else, so that
 * one server function returning all three in one pass replaces them here
 * alone.
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
	if ((what & TURN_REPORT) &&
		(rc = mn_context_report_call(st, sid, budget, &calls[(*n)++])) != MNEMO_OK)
		return rc;
	if ((what & TURN_CONTEXT) &&
		((rc = mn_context_build_call(st, sid, budget, &calls[(*n)++])) != MNEMO_OK ||
		 (rc = mn_context_messages_call(st, sid, budget, &calls[(*n)++])) != MNEMO_OK))
		return rc;
	return MNEMO_OK;
}

int
mn_turn_context_read(mnemo_store *st, turn_context *tc)
{
	mn_call    *call = tc->calls;
	int			rc;

	if ((tc->what & TURN_REPORT) &&
		(rc = mn_context_report_of(st, call++, &tc->report)) != MNEMO_OK)
		return rc;
	if (tc->what & TURN_CONTEXT)
	{
		mnemo_context_free(tc->ctx);
		mnemo_messages_free(tc->msgs);
		tc->ctx = NULL;
		tc->msgs = NULL;
		if ((rc = mn_context_of(st, call++, &tc->ctx)) != MNEMO_OK ||
			(rc = mn_messages_of(st, call++, &tc->msgs)) != MNEMO_OK)
			return rc;
	}
	return MNEMO_OK;
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
