/*
 * truncate.c
 *		mnemo.truncate_summary(): compaction's Level 3, deterministic.
 *
 * The level that cannot fail (seed 002, invariant 3), so the compaction loop
 * always converges when no model answers or none compresses.  mnemo follows
 * LCM, not Mnesis: the result is at most max_tokens (512 by default) by the
 * one estimator, where Mnesis keeps up to 85% of the usable budget.
 *
 * The start of the input is kept (a block's first messages state its goal),
 * cut at a character boundary, after the marker "[Truncated for context
 * management]"; an input that fits is returned whole, unmarked.  The file-id
 * footer lists every id of the whole input, the prose cut away included, and
 * is kept whole even when it leaves no room for prose.
 */
#include "postgres.h"

#include "lib/stringinfo.h"
#include "mb/pg_wchar.h"
#include "utils/builtins.h"

#include "mnemo.h"
#include "context/context.h"

#define TRUNCATION_MARKER "[Truncated for context management]\n"

PG_FUNCTION_INFO_V1(mnemo_truncate_summary);
Datum
mnemo_truncate_summary(PG_FUNCTION_ARGS)
{
	char	   *content = MnemoRequireTextArg(fcinfo, 0, "content");
	int32		max_tokens = DatumGetInt32(MnemoRequireArg(fcinfo, 1, "max_tokens"));
	char	   *footed;
	int			body_len;
	int			footer_chars;
	int64		room;
	StringInfoData out;

	if (max_tokens < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("max_tokens must be at least 1")));

	/* the footer of every id of the whole input, before any cut */
	footed = MnemoFileIdFooter(content, NIL, &body_len);
	footer_chars = pg_mbstrlen(footed + body_len);

	/* estimate_tokens is characters / 4: max_tokens * 4 characters fit */
	room = (int64) max_tokens * 4 - footer_chars;
	if (pg_mbstrlen_with_len(footed, body_len) <= room)
		PG_RETURN_TEXT_P(cstring_to_text(footed));

	room -= pg_mbstrlen(TRUNCATION_MARKER);
	initStringInfo(&out);
	if (room > 0)
	{
		appendStringInfoString(&out, TRUNCATION_MARKER);
		appendBinaryStringInfo(&out, footed, pg_mbcharcliplen(footed, body_len, (int) room));
	}
	appendStringInfoString(&out, footed + body_len);
	PG_RETURN_TEXT_P(cstring_to_text(out.data));
}
