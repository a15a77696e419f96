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
#include "tenancy/tenancy.h"
#include "reads/reads.h"

static SPIPlanPtr tombstone_plan;

PG_FUNCTION_INFO_V1(mnemo_tombstone_part);
Datum
mnemo_tombstone_part(PG_FUNCTION_ARGS)
{
	char	   *session_id = MnemoRequireTextArg(fcinfo, 0, "session_id");
	char	   *part_id = MnemoRequireTextArg(fcinfo, 1, "part_id");
	Oid			types[5] = {TEXTOID, INT8OID, INT8OID, TEXTOID, INT4OID};
	Datum		values[5];
	int64		compacted_at;
	int64		seq;
	int32		part_index;
	bool		watched;
	char	   *tenant;
	MnemoCall	call;

	MnemoConnect(&call);
	MnemoCheckSessionActive(session_id, &tenant, &watched);
	if (!MnemoFindPart(session_id, tenant, part_id, &seq, &part_index))
		ereport(ERROR,
				(errcode(ERRCODE_MNEMO_PART_NOT_FOUND),
				 errmsg("part \"%s\" does not exist in session \"%s\"", part_id, session_id)));
	values[0] = CStringGetTextDatum(session_id);
	values[1] = Int64GetDatum(seq);
	values[2] = Int64GetDatum(MnemoNowMs());
	values[3] = CStringGetTextDatum(tenant);
	values[4] = Int32GetDatum(part_index);
	MnemoPrepare(&tombstone_plan,
				 "UPDATE mnemo.log SET compacted_at = coalesce(compacted_at, $3) "
				 "WHERE session_id = $1 AND tenant = $4 AND seq = $2 AND part_index = $5 "
				 "RETURNING compacted_at",
				 5, types);
	if (MnemoExecute(tombstone_plan, values, NULL, false, 0) != 1)
		elog(ERROR, "part \"%s\" of session \"%s\" was found and then not", part_id,
			 session_id);
	compacted_at = MnemoGetInt64(0, 1, NULL);
	MnemoNotify(watched, tenant, "part_updated", session_id, part_id, -1);
	MnemoFinish(&call);
	PG_RETURN_INT64(compacted_at);
}
