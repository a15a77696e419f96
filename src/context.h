/*
 * context.h
 *		Context assembly shared by build_context and context_report
 *		(context.c) and turn_context (turn_context.c).
 */
#ifndef MNEMO_CONTEXT_H
#define MNEMO_CONTEXT_H

#include "fmgr.h"

#include "mnemo.h"

/* an item of the context view, as mnemo.h's reader returns it */
typedef MnemoContextEntry ContextEntry;

typedef struct ContextTotals
{
	int64		summary_tokens;
	int32		included_items;
	int64		included_tokens;
	int32		omitted_items;
	int64		omitted_tokens;
} ContextTotals;

/*
 * Read and render the context view of the session named by argument 0 and
 * choose what fits in the budget of argument 1; see context.c.
 */
extern ContextEntry *AssembleContext(FunctionCallInfo fcinfo, MemoryContext callcxt,
									 bool count_omitted, int *nentries, ContextTotals *totals);

#endif
