/*
 * by_ids.c
 *		get_messages_with_parts_by_ids: the named messages of a session with
 *		their parts, in the order given.
 *
 * A chat turn reads its tool calls this way, so a call must cost its ids,
 * not the session: each id is one probe of the id index (MNEMO_MESSAGE_OF_ID,
 * reads.h) and each message's parts one range of the log's key, their arrays
 * built where every parts array is (flat.c).  On a fork the ids are looked
 * for in each session of its line, the own one first, as get_message finds
 * a message.  MN002 names the first id found nowhere.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"

#include "mnemo.h"
#include "tenancy/tenancy.h"
#include "reads/reads.h"

static SPIPlanPtr by_ids_line_plan;
static SPIPlanPtr by_ids_plan;
static SPIPlanPtr missing_plan;

/* a row ByIdsOnLine found, by message id */
typedef struct FoundRow
{
	char		id[MNEMO_ID_MAX + 1];
	int			table;
	uint64		row;
} FoundRow;

/*
 * A fork's named messages: the rows of each session of its line that hold
 * some of them (an ancestor's within what was inherited), then put in the
 * order given through a hash of the rows by id, the first session's row
 * winning (the own one, as get_message finds it).  MN002 naming the first
 * id found nowhere.
 */
static void
ByIdsOnLine(FunctionCallInfo fcinfo, MnemoLine *line, ArrayType *ids)
{
	Datum	   *elems;
	int			nids;
	SPITupleTable **tables = palloc0(sizeof(SPITupleTable *) * (line->nsegs + 1));
	uint64	   *counts = palloc0(sizeof(uint64) * (line->nsegs + 1));
	Datum	  **parts = palloc0(sizeof(Datum *) * (line->nsegs + 1));
	int			ntables = 0;
	HASHCTL		ctl;
	HTAB	   *found;
	int			i;
	int			k;

	deconstruct_array(ids, TEXTOID, -1, false, TYPALIGN_INT, &elems, NULL, &nids);
	MnemoPrepare(&by_ids_line_plan,
				 "SELECT " MNEMO_MESSAGE_FIELDS " FROM unnest($2) AS u(id) "
				 MNEMO_MESSAGE_OF_ID("u.id", "$5", " AND m_.seq >= $3 AND m_.seq <= $4"),
				 5, (Oid[]) {TEXTOID, TEXTARRAYOID, INT8OID, INT8OID, TEXTOID});
	for (i = 0; i < line->nsegs; i++)
	{
		MnemoSegment *seg = &line->segs[i];
		bool		own = strcmp(seg->owner, line->session_id) == 0;

		/* the own messages by id, discarded ones too, as get_message finds them */
		if (own && i > line->ninherited)
			continue;
		counts[ntables] = MnemoExecute(by_ids_line_plan,
									   (Datum[]) {CStringGetTextDatum(seg->owner), PointerGetDatum(ids),
									   Int64GetDatum(own ? 1 : seg->from),
									   Int64GetDatum(own ? PG_INT64_MAX : seg->to),
									   CStringGetTextDatum(line->tenant)},
									   NULL, true, 0);
		tables[ntables] = SPI_tuptable;
		parts[ntables] = MnemoPartsOfRows(tables[ntables], counts[ntables], seg->owner,
										  line->tenant);
		ntables++;
	}

	ctl.keysize = MNEMO_ID_MAX + 1;
	ctl.entrysize = sizeof(FoundRow);
	ctl.hcxt = CurrentMemoryContext;
	found = hash_create("mnemo messages by id", 256, &ctl, HASH_ELEM | HASH_STRINGS | HASH_CONTEXT);
	for (i = 0; i < ntables; i++)
	{
		uint64		row;

		for (row = 0; row < counts[i]; row++)
		{
			char	   *id = TextDatumGetCString(SPI_getbinval(tables[i]->vals[row],
															   tables[i]->tupdesc, 1, &(bool) {false}));
			bool		seen;
			FoundRow   *f = hash_search(found, id, HASH_ENTER, &seen);

			if (!seen)
			{
				f->table = i;
				f->row = row;
			}
			pfree(id);
		}
	}
	for (k = 0; k < nids; k++)
	{
		char	   *id = TextDatumGetCString(elems[k]);
		FoundRow   *f = strlen(id) <= MNEMO_ID_MAX ? hash_search(found, id, HASH_FIND, NULL) : NULL;

		CHECK_FOR_INTERRUPTS();
		if (f == NULL)
			MnemoMessageNotFound(id, line->session_id);
		MnemoPutWithParts(fcinfo, tables[f->table], f->row, parts[f->table][f->row]);
		pfree(id);
	}
	hash_destroy(found);
}

/*
 * The named messages of the session in the order given (an id named twice
 * comes twice); MN002 naming the first id that is not in the session.  Cost
 * is in the number of ids, whatever the session's length.
 */
PG_FUNCTION_INFO_V1(mnemo_get_messages_with_parts_by_ids);
Datum
mnemo_get_messages_with_parts_by_ids(PG_FUNCTION_ARGS)
{
	ArrayType  *ids = MnemoTextListArg(fcinfo, 1, "ids");
	Oid			types[3] = {TEXTOID, TEXTARRAYOID, TEXTOID};
	Datum		values[3];
	int			nids = ArrayGetNItems(ARR_NDIM(ids), ARR_DIMS(ids));
	MnemoCall	call;
	MnemoLine	line;
	char	   *session_id;
	uint64		n;

	session_id = MnemoConnectRead(fcinfo, &call, &line);
	InitMaterializedSRF(fcinfo, 0);
	if (line.is_fork)
	{
		ByIdsOnLine(fcinfo, &line, ids);
		MnemoFinish(&call);
		return (Datum) 0;
	}
	values[0] = CStringGetTextDatum(session_id);
	values[1] = PointerGetDatum(ids);
	values[2] = CStringGetTextDatum(line.tenant);
	MnemoPrepare(&by_ids_plan,
				 "SELECT " MNEMO_MESSAGE_FIELDS " FROM unnest($2) WITH ORDINALITY AS u(id, ord) "
				 MNEMO_MESSAGE_OF_ID("u.id", "$3", "")
				 "ORDER BY u.ord",
				 3, types);
	n = MnemoExecute(by_ids_plan, values, NULL, true, 0);
	if (n != (uint64) nids)
	{
		MnemoPrepare(&missing_plan,
					 "SELECT u.id FROM unnest($2) WITH ORDINALITY AS u(id, ord) "
					 "WHERE NOT EXISTS (SELECT 1 FROM mnemo.messages m "
					 "WHERE m.session_id = $1 AND m.tenant = $3 AND m.id = u.id) "
					 "ORDER BY u.ord LIMIT 1",
					 3, types);
		MnemoExecute(missing_plan, values, NULL, true, 1);
		MnemoMessageNotFound(MnemoGetText(0, 1, NULL), session_id);
	}
	MnemoPutMessagesWithParts(fcinfo, SPI_tuptable, n, session_id, line.tenant);
	MnemoFinish(&call);
	return (Datum) 0;
}
