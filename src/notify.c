/*
 * notify.c
 *		NOTIFY mnemo on committed writes to followed sessions.
 *
 * PostgreSQL serialises every notifying commit cluster-wide (they all queue
 * on one lock at commit), so a NOTIFY per append would cap every writer.
 * Hence only sessions marked with mnemo.watch() notify, unless the setting
 * mnemo.notify says all or off.  The payload is small JSON:
 *		{"event": E, "session_id": S, "id": I, "seq": N}
 * and is delivered at commit only, so a follower never hears of a write it
 * cannot read.  A follower that missed some catches up by seq.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "commands/async.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"
#include "utils/json.h"

#include "mnemo.h"

static SPIPlanPtr watched_plan;

/* Whether any notification can be sent for a session whose flag is watched. */
static bool
Wanted(bool watched)
{
	return mnemo_notify_mode == MNEMO_NOTIFY_ALL ||
		(mnemo_notify_mode == MNEMO_NOTIFY_WATCHED && watched);
}

/* Queue a notification (sent at commit); seq < 0 leaves it out. */
void
MnemoNotify(bool watched, const char *event, const char *session_id,
			const char *id, int64 seq)
{
	StringInfoData payload;

	if (!Wanted(watched))
		return;
	initStringInfo(&payload);
	appendStringInfoString(&payload, "{\"event\": ");
	escape_json(&payload, event);
	appendStringInfoString(&payload, ", \"session_id\": ");
	escape_json(&payload, session_id);
	if (id)
	{
		appendStringInfoString(&payload, ", \"id\": ");
		escape_json(&payload, id);
	}
	if (seq >= 0)
		appendStringInfo(&payload, ", \"seq\": " INT64_FORMAT, seq);
	appendStringInfoChar(&payload, '}');
	Async_Notify("mnemo", payload.data);
	pfree(payload.data);
}

/*
 * The session's watched flag, for writes that do not take the session lock.
 * Skips the lookup when the setting decides alone.  Must be called inside SPI.
 */
bool
MnemoSessionWatched(const char *session_id)
{
	Oid			types[1] = {TEXTOID};
	Datum		values[1];

	if (mnemo_notify_mode != MNEMO_NOTIFY_WATCHED)
		return false;
	MnemoPrepare(&watched_plan, "SELECT watched FROM mnemo.sessions WHERE id = $1", 1, types);
	values[0] = CStringGetTextDatum(session_id);
	return MnemoExecute(watched_plan, values, NULL, true, 1) == 1 && MnemoGetBool(0, 1);
}
