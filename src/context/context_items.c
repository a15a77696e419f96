/*
 * context_items.c
 *		get_context_items: the items of a session's live context view, in
 *		position order, as MNEMO_CONTEXT_VIEW defines it (a fork's included:
 *		its view is its own rows).
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "utils/builtins.h"

#include "mnemo.h"
#include "context/context.h"
#include "reads/reads.h"

static SPIPlanPtr context_plan;

PG_FUNCTION_INFO_V1(mnemo_get_context_items);
Datum
mnemo_get_context_items(PG_FUNCTION_ARGS)
{
	Oid			types[2] = {TEXTOID, TEXTOID};
	Datum		values[2];
	MnemoCall	call;
	MnemoLine	line;

	values[0] = CStringGetTextDatum(MnemoConnectRead(fcinfo, &call, &line));
	values[1] = CStringGetTextDatum(line.tenant);
	MnemoPrepare(&context_plan,
				 "SELECT c.item_type, c.item_id, c.position FROM " MNEMO_CONTEXT_VIEW("$2") " c "
				 "ORDER BY c.position",
				 2, types);
	MnemoExecuteResult(fcinfo, context_plan, values, NULL, true);
	MnemoFinish(&call);
	return (Datum) 0;
}
