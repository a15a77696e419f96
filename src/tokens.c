/*
 * tokens.c
 *		mnemo.estimate_tokens(): the one token estimator of mnemo.
 *
 * The server uses it for every part it stores and for context assembly; the
 * client calls the same SQL function, so both sides always agree.  It is the
 * seed's model-free heuristic: 0 for empty text, otherwise one token per four
 * characters, at least one.  Characters, not bytes, so that non-ASCII text is
 * not over-counted.
 */
#include "postgres.h"

#include "fmgr.h"
#include "mb/pg_wchar.h"

#include "mnemo.h"

int32
MnemoEstimateTokens(const char *text, int len)
{
	int			chars;

	if (len <= 0)
		return 0;
	chars = pg_mbstrlen_with_len(text, len);
	return Max(1, chars / 4);
}

PG_FUNCTION_INFO_V1(mnemo_estimate_tokens);
Datum
mnemo_estimate_tokens(PG_FUNCTION_ARGS)
{
	text	   *t = PG_GETARG_TEXT_PP(0);

	PG_RETURN_INT32(MnemoEstimateTokens(VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t)));
}
