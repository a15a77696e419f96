/*
 * util.c
 *		The token estimate and server-made ids.
 *
 * mnemo_estimate_tokens must give exactly what the server's
 * mnemo.estimate_tokens() gives (src/core/tokens.c), so that a client budgeting a
 * context agrees with build_context: it walks the text the way PostgreSQL's
 * pg_mbstrlen_with_len does for UTF-8, a character's length read from its
 * first byte, so even malformed input is counted the same way.
 */
#include <string.h>

#include "store/store.h"

static const mn_stmt new_id_stmt = {
	"mnemo_new_id",
	"SELECT mnemo.new_id($1::text) AS id",
	1
};

/* pg_utf_mblen: the length of the character starting with byte c. */
static int
utf8_len(unsigned char c)
{
	if ((c & 0x80) == 0)
		return 1;
	if ((c & 0xE0) == 0xC0)
		return 2;
	if ((c & 0xF0) == 0xE0)
		return 3;
	if ((c & 0xF8) == 0xF0)
		return 4;
	return 1;
}

MNEMO_API int
mnemo_estimate_tokens(const char *text)
{
	const unsigned char *p = (const unsigned char *) text;
	long		chars = 0;

	if (text == NULL)
		return 0;
	while (*p)
	{
		int			len = utf8_len(*p);

		/* a sequence cut short by the end of the string still counts once */
		while (len-- > 0 && *p)
			p++;
		chars++;
	}
	if (chars == 0)
		return 0;
	return chars / 4 > 1 ? (int) (chars / 4 > 0x7FFFFFFF ? 0x7FFFFFFF : chars / 4) : 1;
}

MNEMO_API int
mnemo_new_id(mnemo_store *st, const char *prefix, char id[MNEMO_ID_MAX + 1])
{
	const char *params[1] = {prefix};
	PGresult   *res;
	const char *value;
	int			rc;

	if ((rc = mn_begin(st, id != NULL, "mnemo_new_id: id is NULL")) != MNEMO_OK)
		return rc;
	if ((res = mn_exec(st, &new_id_stmt, params)) == NULL)
		return st->errcode;
	if (PQntuples(res) != 1 || PQgetisnull(res, 0, 0) ||
		strlen(value = PQgetvalue(res, 0, 0)) > MNEMO_ID_MAX)
	{
		PQclear(res);
		return mn_fail(st, MNEMO_ERR_PROTOCOL, "mnemo.new_id() returned no usable id");
	}
	memcpy(id, value, strlen(value) + 1);
	PQclear(res);
	return MNEMO_OK;
}
