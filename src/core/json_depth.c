/*
 * json_depth.c
 *		The one nesting limit of every jsonb a function stores: a part, a
 *		session's metadata and state, a pending request, a map's items.
 */
#include "postgres.h"

#include "utils/jsonb.h"

#include "mnemo.h"

/*
 * 22023 if jb nests deeper than MNEMO_MAX_JSON_DEPTH levels.  The depth of a
 * value is 1 for a scalar or an empty array or object, else 1 + the depth of
 * its deepest member: json-c's count, so that the client's parser refuses
 * exactly what the server does.  Every level takes at least a JEntry and a
 * container header, so a small value cannot be too deep and is not walked:
 * the hot path walks only large parts.
 */
void
MnemoCheckJsonDepth(Jsonb *jb, const char *where)
{
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken tok;
	int			depth = 0;

	if (VARSIZE(jb) - VARHDRSZ < 4 * MNEMO_MAX_JSON_DEPTH)
		return;
	it = JsonbIteratorInit(&jb->root);
	while ((tok = JsonbIteratorNext(&it, &v, false)) != WJB_DONE)
	{
		/* a scalar member is one level below its container */
		if (tok == WJB_BEGIN_ARRAY || tok == WJB_BEGIN_OBJECT || tok == WJB_ELEM ||
			tok == WJB_VALUE)
		{
			if (depth + 1 > MNEMO_MAX_JSON_DEPTH)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("%s nests deeper than %d levels", where, MNEMO_MAX_JSON_DEPTH),
						 errdetail("A value may nest %d levels deep, counting the outermost "
								   "and the innermost values.", MNEMO_MAX_JSON_DEPTH)));
			if (tok == WJB_BEGIN_ARRAY || tok == WJB_BEGIN_OBJECT)
				depth++;
		}
		else if (tok == WJB_END_ARRAY || tok == WJB_END_OBJECT)
			depth--;
	}
}
