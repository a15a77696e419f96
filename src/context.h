/*
 * context.h
 *		Context assembly shared by build_context and context_report
 *		(context.c) and turn_context (turn_context.c).
 */
#ifndef MNEMO_CONTEXT_H
#define MNEMO_CONTEXT_H

#include "fmgr.h"

typedef struct ContextEntry
{
	int64		position;
	char	   *item_type;
	char	   *item_id;
	char	   *role;
	char	   *content;
	int			content_off;	/* in the receiver's contents */
	int			content_len;
	int64		chars;			/* of an oversize rendering, not kept */
	int32		tokens;
	bool		is_summary;
	bool		included;
	bool		oversize;		/* over CONTEXT_ITEM_MAX: never included */
	bool		let_go;			/* content dropped: cannot be included */
} ContextEntry;

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
									 int *nentries, ContextTotals *totals);

#endif
