/*
 * notify.c
 *		NOTIFY on committed writes to followed sessions, on a channel per
 *		tenant.
 *
 * PostgreSQL serialises every notifying commit cluster-wide (they all queue
 * on one lock at commit), so a NOTIFY per append would cap every writer.
 * Hence only sessions marked with mnemo.watch() notify, unless the setting
 * mnemo.notify says all or off.  The payload is small JSON:
 *		{"event": E, "session_id": S, "id": I, "seq": N}
 * and, for some events, a few members more (summary_committed: the
 * summary's kind, level, tokens and items).
 * and is delivered at commit only, so a follower never hears of a write it
 * cannot read.  A follower that missed some catches up by seq.
 *
 * LISTEN needs no privilege, so a channel's name is the capability to hear
 * it: each tenant's channel is "mnemo_" and 32 hex digits from
 * pg_strong_random, made on first use and kept in mnemo.tenants, a table
 * each tenant reads only its own row of.  mnemo.watch() returns it.  No
 * notification goes to a channel anyone could guess.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "commands/async.h"
#include "lib/stringinfo.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/json.h"

#include "mnemo.h"
#include "tenancy/tenancy.h"

static SPIPlanPtr channel_plan;
static SPIPlanPtr new_channel_plan;

/* Whether any notification can be sent for a session whose flag is watched. */
static bool
Wanted(bool watched)
{
	return mnemo_notify_mode == MNEMO_NOTIFY_ALL ||
		(mnemo_notify_mode == MNEMO_NOTIFY_WATCHED && watched);
}

/*
 * The tenant's channel, made on first use.  Inside SPI (as the owner).  Two
 * first uses racing both get the winner's name: ON CONFLICT waits for it.
 * The first use also registers the tenant's role by OID (see tenant.c).
 */
char *
MnemoTenantChannel(const char *tenant)
{
	Oid			types[3] = {TEXTOID, TEXTOID, OIDOID};
	Datum		values[3];
	char		nulls[3] = {' ', ' ', ' '};
	Oid			role = get_role_oid(tenant, true);
	uint8		random[16];
	char		name[6 + 32 + 1];
	int			i;

	values[0] = CStringGetTextDatum(tenant);
	MnemoPrepare(&channel_plan, "SELECT channel FROM mnemo.tenants WHERE tenant = $1",
				 1, types);
	if (MnemoExecute(channel_plan, values, NULL, false, 1) == 1)
		return MnemoGetText(0, 1, NULL);

	if (!pg_strong_random(random, sizeof(random)))
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("could not generate a random channel name")));
	memcpy(name, "mnemo_", 6);
	for (i = 0; i < 16; i++)
		snprintf(name + 6 + 2 * i, 3, "%02x", random[i]);
	values[1] = CStringGetTextDatum(name);
	values[2] = ObjectIdGetDatum(role);
	nulls[2] = OidIsValid(role) ? ' ' : 'n';
	MnemoPrepare(&new_channel_plan,
				 "INSERT INTO mnemo.tenants (tenant, channel, role_id) VALUES ($1, $2, $3) "
				 "ON CONFLICT (tenant) DO NOTHING",
				 3, types);
	MnemoExecute(new_channel_plan, values, nulls, false, 0);
	if (MnemoExecute(channel_plan, values, NULL, false, 1) != 1)
		elog(ERROR, "channel of tenant \"%s\" vanished", tenant);
	return MnemoGetText(0, 1, NULL);
}

/*
 * Queue a notification on the tenant's channel (sent at commit); seq < 0
 * leaves it out.  Inside SPI.
 */
void
MnemoNotify(bool watched, const char *tenant, const char *event, const char *session_id,
			const char *id, int64 seq)
{
	MnemoNotifyWith(watched, tenant, event, session_id, id, seq, NULL);
}

/*
 * The same, with more members: extra is JSON object members (", \"k\": v"
 * ...) the caller built with escape_json where they hold text.
 */
void
MnemoNotifyWith(bool watched, const char *tenant, const char *event, const char *session_id,
				const char *id, int64 seq, const char *extra)
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
	if (extra)
		appendStringInfoString(&payload, extra);
	appendStringInfoChar(&payload, '}');
	Async_Notify(MnemoTenantChannel(tenant), payload.data);
	pfree(payload.data);
}
