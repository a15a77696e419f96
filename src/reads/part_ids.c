/*
 * part_ids.c
 *		A part's id: the one its caller gave, or "<message id>:<part index>",
 *		derived from where the part is and stored as NULL.
 *
 * A part has an id by which update_part_status and tombstone_part name it.
 * When the caller gives none, mnemo used to make one ("part_" and a ULID)
 * and store it, with a unique index over it: 32 bytes a row, 172 bytes of
 * key a turn, and two of a turn's nine btree entries, for a name that adds
 * nothing to where the part is (doc/benchmarks.md).  Now such a part's id is
 * its message's id and its index, "msg_01J...:2", which the reads put back
 * (MNEMO_PART_ID) and a look-up parses (MnemoFindPart); the unique index
 * holds only the ids callers gave.
 *
 * The two kinds must not meet.  A given id that has the derived form is
 * refused unless it is the part's own, which is stored as NULL like any
 * derived one; since message ids are unique along a session's line, so are
 * derived part ids.  A message id so long that its derived part id would
 * pass MNEMO_ID_MAX gets made part ids, "part_" and a ULID, as before.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "utils/builtins.h"

#include "mnemo.h"
#include "reads/reads.h"

static SPIPlanPtr find_part_plan = NULL;

/* the digits of a non-negative int32 as printed, no sign, no leading zero */
#define INDEX_DIGITS_MAX 10

/*
 * The derived id of part part_index of the message whose id is the len
 * bytes at message_id, as text, built in one allocation (a history read
 * makes one a part); NULL when it would pass MNEMO_ID_MAX (the part then
 * gets a made id).
 */
text *
MnemoDerivedPartIdText(const char *message_id, int len, int32 part_index)
{
	char		digits[INDEX_DIGITS_MAX + 2];
	int			n = pg_ltoa(part_index, digits);
	text	   *id;

	Assert(part_index >= 0);
	if (len + 1 + n > MNEMO_ID_MAX)
		return NULL;
	id = palloc(VARHDRSZ + len + 1 + n);
	SET_VARSIZE(id, VARHDRSZ + len + 1 + n);
	memcpy(VARDATA(id), message_id, len);
	VARDATA(id)[len] = ':';
	memcpy(VARDATA(id) + len + 1, digits, n);
	return id;
}

/* MnemoDerivedPartIdText's id as a C string, or NULL */
char *
MnemoDerivedPartId(const char *message_id, int32 part_index)
{
	text	   *id = MnemoDerivedPartIdText(message_id, strlen(message_id), part_index);

	return id ? text_to_cstring(id) : NULL;
}

/*
 * Whether part_id has the derived form: something, a ':', and a part index
 * as MnemoDerivedPartId prints it.  *message_id (palloc'd) and *part_index
 * are set when it has.
 */
bool
MnemoParsePartId(const char *part_id, char **message_id, int32 *part_index)
{
	const char *colon = strrchr(part_id, ':');
	const char *d;
	int64		index = 0;

	if (colon == NULL || colon == part_id || colon[1] == '\0')
		return false;
	if (colon[1] == '0' && colon[2] != '\0')
		return false;
	for (d = colon + 1; *d; d++)
	{
		if (*d < '0' || *d > '9' || d - colon > INDEX_DIGITS_MAX)
			return false;
		index = index * 10 + (*d - '0');
	}
	if (index > PG_INT32_MAX)
		return false;
	*message_id = pnstrdup(part_id, colon - part_id);
	*part_index = (int32) index;
	return true;
}

/*
 * The id to store for part part_index of message message_id, given the id
 * given by its caller or NULL: NULL when the part's id is its derived one
 * (no id given, or its own derived id given), else the given id or, for a
 * message id too long to derive from, a made one.  A derived id of any
 * other part is refused (22023): it would name two parts.
 */
char *
MnemoPartIdToStore(char *given, const char *message_id, int32 part_index)
{
	char	   *named_message;
	int32		named_index;

	if (given == NULL)
		return strlen(message_id) + 1 + INDEX_DIGITS_MAX <= MNEMO_ID_MAX ? NULL :
			MnemoNewId("part");
	if (!MnemoParsePartId(given, &named_message, &named_index))
		return given;
	if (named_index == part_index && strcmp(named_message, message_id) == 0)
		return NULL;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("part id \"%s\" names part %d of message \"%s\", not this part",
					given, named_index, named_message),
			 errdetail("This part is part %d of message \"%s\".", part_index, message_id),
			 errhint("An id of the form <message id>:<part index> is the id of that part; give another id, or none.")));
	return NULL;				/* keep the compiler quiet */
}

/*
 * The part of session_id (tenant) named part_id, in the caller's SPI
 * connection: its message's seq and its index, and true; false if the
 * session has no such part.  A given id is found in the unique index of
 * given ids; a derived one by its message's id, among the parts stored
 * without an id.
 */
bool
MnemoFindPart(const char *session_id, const char *tenant, const char *part_id,
			  int64 *seq, int32 *part_index)
{
	char	   *message_id = NULL;
	int32		index = 0;
	bool		derived = MnemoParsePartId(part_id, &message_id, &index);

	MnemoPrepare(&find_part_plan,
				 "SELECT p.seq, p.part_index FROM mnemo.message_parts p "
				 "WHERE p.session_id = $1 AND p.tenant = $2 AND p.id = $3 "
				 "UNION ALL "
				 "SELECT p.seq, p.part_index FROM mnemo.messages m "
				 "JOIN mnemo.message_parts p ON p.session_id = m.session_id "
				 "AND p.tenant = m.tenant AND p.seq = m.seq "
				 "WHERE m.session_id = $1 AND m.tenant = $2 AND m.id = $4 "
				 "AND p.part_index = $5 AND p.id IS NULL "
				 "LIMIT 1",
				 5, (Oid[]) {TEXTOID, TEXTOID, TEXTOID, TEXTOID, INT4OID});
	if (MnemoExecute(find_part_plan,
					 (Datum[]) {CStringGetTextDatum(session_id), CStringGetTextDatum(tenant),
					 CStringGetTextDatum(part_id),
					 derived ? CStringGetTextDatum(message_id) : (Datum) 0,
					 Int32GetDatum(index)},
					 (char[]) {' ', ' ', ' ', derived ? ' ' : 'n', derived ? ' ' : 'n'},
					 false, 1) != 1)
		return false;
	*seq = MnemoGetInt64(0, 1, NULL);
	*part_index = (int32) MnemoGetInt64(0, 2, NULL);
	return true;
}
