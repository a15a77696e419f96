/*
 * tombstone.c
 *		mnemo.tombstone_part(): mark a part's output as pruned from context.
 *
 * A tombstone is compacted_at set on the part row; the row and its content
 * stay, so the output remains readable and searchable.  Context assembly
 * renders a tombstoned tool part as "[Tool 'NAME' output compacted at MS]".
 * Idempotent: the first time set is kept and returned by every later call.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "utils/builtins.h"

#include "mnemo.h"

static SPIPlanPtr tombstone_plan;

PG_FUNCTION_INFO_V1(mnemo_tombstone_part);
Datum
mnemo_tombstone_part(PG_FUNCTION_ARGS)
{
	char	   *part_id = MnemoRequireTextArg(fcinfo, 0, "part_id");
	Oid			types[2] = {TEXTOID, INT8OID};
	Datum		values[2];
	int64		compacted_at;
	char	   *session_id;

	values[0] = CStringGetTextDatum(part_id);
	values[1] = Int64GetDatum(MnemoNowMs());
	SPI_connect();
	MnemoPrepare(&tombstone_plan,
				 "UPDATE mnemo.message_parts SET compacted_at = coalesce(compacted_at, $2) "
				 "WHERE id = $1 RETURNING compacted_at, session_id",
				 2, types);
	if (MnemoExecute(tombstone_plan, values, NULL, false, 0) != 1)
		ereport(ERROR,
				(errcode(ERRCODE_MNEMO_PART_NOT_FOUND),
				 errmsg("part \"%s\" does not exist", part_id)));
	compacted_at = MnemoGetInt64(0, 1, NULL);
	session_id = MnemoGetText(0, 2, NULL);
	/* the error undoes the update: nothing is written to an inactive session */
	MnemoCheckSessionActive(session_id);
	MnemoNotify(MnemoSessionWatched(session_id), "part_updated", session_id, part_id, -1);
	SPI_finish();
	PG_RETURN_INT64(compacted_at);
}
