/*
 * ids.c
 *		mnemo.new_id(): time-ordered unique ids, made natively.
 *
 * An id is "<prefix>_" followed by a ULID: 48 bits of unix milliseconds and 80
 * random bits, in Crockford base32 (26 characters), so ids sort by creation
 * time as text.  Within one backend ids are strictly increasing: an id made in
 * the same millisecond as the previous one (or after the clock stepped back)
 * reuses its time and increments its random part.
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/builtins.h"

#include "mnemo.h"

#define MNEMO_ID_PREFIX_MAX 32

static const char crockford[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

static int64 last_ms = -1;
static uint8 last_random[10];

static void
CheckPrefix(const char *prefix)
{
	size_t		len = strlen(prefix);
	const char *p;

	if (len == 0 || len > MNEMO_ID_PREFIX_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("id prefix must be 1 to %d characters", MNEMO_ID_PREFIX_MAX)));
	for (p = prefix; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			  (*p >= '0' && *p <= '9') || *p == '_' || *p == '-'))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("id prefix \"%s\" may hold only letters, digits, '_' and '-'", prefix)));
}

/* A new id in the current memory context. */
char *
MnemoNewId(const char *prefix)
{
	int64		now = MnemoNowMs();
	size_t		plen;
	char	   *id;
	char	   *out;
	int			i;

	CheckPrefix(prefix);
	if (now <= last_ms)
	{
		/* same millisecond: count up from the previous id's random bits */
		for (i = 9; i >= 0; i--)
			if (++last_random[i] != 0)
				break;
		if (i < 0)
			last_ms++;			/* 2^80 ids in one ms: borrow the next one */
		now = last_ms;
	}
	else
	{
		if (!pg_strong_random(last_random, sizeof(last_random)))
			ereport(ERROR,
					(errcode(ERRCODE_INTERNAL_ERROR),
					 errmsg("could not generate random bits for an id")));
		last_ms = now;
	}

	plen = strlen(prefix);
	id = palloc(plen + 1 + 26 + 1);
	memcpy(id, prefix, plen);
	id[plen] = '_';
	out = id + plen + 1;

	/* 10 characters of time, most significant first */
	for (i = 9; i >= 0; i--)
	{
		out[i] = crockford[now & 31];
		now >>= 5;
	}
	/* 16 characters of randomness: 80 bits, 5 at a time */
	for (i = 0; i < 16; i++)
	{
		int			bit = i * 5;
		int			byte = bit / 8;
		int			shift = bit % 8;
		unsigned	v = last_random[byte] << 8;

		if (byte + 1 < 10)
			v |= last_random[byte + 1];
		out[10 + i] = crockford[(v >> (11 - shift)) & 31];
	}
	out[26] = '\0';
	return id;
}

PG_FUNCTION_INFO_V1(mnemo_new_id);
Datum
mnemo_new_id(PG_FUNCTION_ARGS)
{
	char	   *prefix = MnemoRequireTextArg(fcinfo, 0, "prefix");

	PG_RETURN_TEXT_P(cstring_to_text(MnemoNewId(prefix)));
}

/*
 * Ids become index keys: refuse empty ones and ones too long for a btree
 * entry, with a clear error rather than the index's.  They are also what
 * people and scripts name things by, one a line (mnemo sessions, an
 * import's output): an id of spaces only, or one holding a control
 * character (a newline, a tab, an escape), could not be told apart or
 * typed back, so it is refused too.
 */
void
MnemoCheckId(const char *id, const char *what)
{
	size_t		len = strlen(id);
	bool		blank = true;
	const unsigned char *c;

	if (len == 0 || len > MNEMO_ID_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be 1 to %d bytes long", what, MNEMO_ID_MAX)));
	for (c = (const unsigned char *) id; *c; c++)
	{
		if (*c < 0x20 || *c == 0x7f)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("%s must not contain control characters", what),
					 errdetail("Byte %d is 0x%02x.",
							   (int) (c - (const unsigned char *) id) + 1, *c)));
		if (*c != ' ')
			blank = false;
	}
	if (blank)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must not be blank", what)));
}
