/*
 * maps.c
 *		Durable maps owned by a session: create_map, map_status, map_results,
 *		list_maps and find_map.
 *
 * A map (the client's LLMMap or AgenticMap) is a prompt template, an
 * optional output schema and options, and one row per item in
 * mnemo.map_items.  Workers in any number of processes claim items under a
 * lease and record each result once (map_items.c), so a map outlives the
 * processes working it: status and results are read here, by anyone, at
 * any time.  The template and schema are the client's to interpret; the
 * server keeps them so that a map can be resumed with nothing but its id.
 *
 * A map is keyed by its session's id and tenant (a session id is unique
 * only within its tenant): every statement on one session's maps names
 * the tenant the session check resolved.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"

#include "mnemo.h"
#include "tenancy/tenancy.h"
#include "maps/maps.h"

/* more items than this is a batch job for several maps */
#define MAX_MAP_ITEMS 1000000

static SPIPlanPtr create_plan;
static SPIPlanPtr items_plan;
static SPIPlanPtr exists_plan;
static SPIPlanPtr status_plan;
static SPIPlanPtr results_plan;
static SPIPlanPtr list_plan;
static SPIPlanPtr find_plan;

/* 42704 unless the session (of tenant) has a map map_id.  Inside SPI. */
void
MnemoCheckMapExists(const char *session_id, const char *tenant, const char *map_id)
{
	Datum		values[3];

	values[0] = CStringGetTextDatum(session_id);
	values[1] = CStringGetTextDatum(map_id);
	values[2] = CStringGetTextDatum(tenant);
	MnemoPrepare(&exists_plan,
				 "SELECT 1 FROM mnemo.maps WHERE session_id = $1 AND tenant = $3 AND map_id = $2",
				 3, (Oid[]) {TEXTOID, TEXTOID, TEXTOID});
	if (MnemoExecute(exists_plan, values, NULL, true, 1) != 1)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("map \"%s\" of session \"%s\" does not exist", map_id, session_id)));
}

static Jsonb *
ObjectArg(FunctionCallInfo fcinfo, int argno, const char *name)
{
	Jsonb	   *jb = PG_GETARG_JSONB_P(argno);

	if (!JB_ROOT_IS_OBJECT(jb))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be a JSON object", name)));
	MnemoCheckJsonDepth(jb, name);
	return jb;
}

PG_FUNCTION_INFO_V1(mnemo_create_map);
Datum
mnemo_create_map(PG_FUNCTION_ARGS)
{
	MemoryContext callcxt = CurrentMemoryContext;
	char	   *session_id = MnemoRequireTextArg(fcinfo, 0, "session_id");
	char	   *map_id = MnemoRequireTextArg(fcinfo, 1, "map_id");
	Jsonb	   *items = DatumGetJsonbP(MnemoRequireArg(fcinfo, 2, "items"));
	char	   *template = MnemoRequireTextArg(fcinfo, 3, "template");
	Jsonb	   *schema = PG_ARGISNULL(4) ? NULL : ObjectArg(fcinfo, 4, "schema");
	Jsonb	   *options = DatumGetJsonbP(MnemoRequireArg(fcinfo, 5, "options"));
	char	   *kind = MnemoRequireTextArg(fcinfo, 6, "kind");
	Oid			types[9] = {TEXTOID, TEXTOID, TEXTOID, TEXTOID, JSONBOID, JSONBOID,
	INT4OID, INT8OID, TEXTOID};
	Datum		values[9];
	char		nulls[9] = "         ";
	char	   *tenant;
	bool		watched;
	MnemoCall	call;
	Datum		result;
	int			count;
	StringInfoData members;

	MnemoCheckId(map_id, "map_id");
	if (!JB_ROOT_IS_ARRAY(items) || JB_ROOT_IS_SCALAR(items) || JB_ROOT_COUNT(items) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("items must be a non-empty JSON array")));
	count = JB_ROOT_COUNT(items);
	if (count > MAX_MAP_ITEMS)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("a map has at most %d items, not %d", MAX_MAP_ITEMS, count)));
	MnemoCheckJsonDepth(items, "items");
	if (template[0] == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("template must not be empty")));
	(void) ObjectArg(fcinfo, 5, "options");
	if (strcmp(kind, "llm") != 0 && strcmp(kind, "agentic") != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("kind must be 'llm' or 'agentic', not \"%s\"", kind)));

	MnemoConnect(&call);
	MnemoCheckSessionActive(session_id, &tenant, &watched);
	values[0] = CStringGetTextDatum(session_id);
	values[1] = CStringGetTextDatum(map_id);
	values[2] = CStringGetTextDatum(kind);
	values[3] = CStringGetTextDatum(template);
	values[4] = schema ? JsonbPGetDatum(schema) : (Datum) 0;
	nulls[4] = schema ? ' ' : 'n';
	values[5] = JsonbPGetDatum(options);
	values[6] = Int32GetDatum(count);
	values[7] = Int64GetDatum(MnemoNowMs());
	values[8] = CStringGetTextDatum(tenant);
	MnemoPrepare(&create_plan,
				 "INSERT INTO mnemo.maps (session_id, map_id, kind, template, schema, options, "
				 "item_count, created_at, tenant) "
				 "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING *",
				 9, types);
	MnemoInsert(create_plan, values, nulls, "map", map_id);
	result = MnemoResultRow(fcinfo, callcxt, 0);

	/* every item in one statement: one round of index inserts, no loop */
	values[2] = JsonbPGetDatum(items);
	values[3] = values[8];
	MnemoPrepare(&items_plan,
				 "INSERT INTO mnemo.map_items (session_id, map_id, ordinal, item, tenant) "
				 "SELECT $1, $2, (x.o - 1)::integer, x.e, $4 "
				 "FROM jsonb_array_elements($3) WITH ORDINALITY AS x(e, o)",
				 4, (Oid[]) {TEXTOID, TEXTOID, JSONBOID, TEXTOID});
	MnemoExecute(items_plan, values, NULL, false, 0);

	initStringInfo(&members);
	appendStringInfo(&members, ", \"kind\": \"%s\", \"items\": %d", kind, count);
	MnemoNotifyWith(watched, tenant, "map_started", session_id, map_id, -1, members.data);
	MnemoFinish(&call);
	PG_RETURN_DATUM(result);
}

PG_FUNCTION_INFO_V1(mnemo_map_status);
Datum
mnemo_map_status(PG_FUNCTION_ARGS)
{
	MemoryContext callcxt = CurrentMemoryContext;
	char	   *session_id = MnemoRequireTextArg(fcinfo, 0, "session_id");
	char	   *map_id = MnemoRequireTextArg(fcinfo, 1, "map_id");
	Datum		values[4];
	char	   *tenant;
	MnemoCall	call;
	Datum		result;

	MnemoConnect(&call);
	MnemoCheckSession(session_id, false, &tenant, NULL);
	values[0] = CStringGetTextDatum(session_id);
	values[1] = CStringGetTextDatum(map_id);
	values[2] = Int64GetDatum(MnemoNowMs());
	values[3] = CStringGetTextDatum(tenant);
	/* a lease that expired is claimable again: pending, not in flight */
	MnemoPrepare(&status_plan,
				 "SELECT m.kind, m.item_count, c.done, c.failed, c.in_flight, "
				 "m.item_count - c.done - c.failed - c.in_flight, m.created_at, m.completed_at "
				 "FROM mnemo.maps m, LATERAL (SELECT "
				 "count(*) FILTER (WHERE i.state = 'done')::integer AS done, "
				 "count(*) FILTER (WHERE i.state = 'failed')::integer AS failed, "
				 "count(*) FILTER (WHERE i.state = 'running' AND i.lease_expires > $3)::integer "
				 "AS in_flight "
				 "FROM mnemo.map_items i "
				 "WHERE i.session_id = $1 AND i.tenant = $4 AND i.map_id = $2) c "
				 "WHERE m.session_id = $1 AND m.tenant = $4 AND m.map_id = $2",
				 4, (Oid[]) {TEXTOID, TEXTOID, INT8OID, TEXTOID});
	if (MnemoExecute(status_plan, values, NULL, true, 1) != 1)
		MnemoCheckMapExists(session_id, tenant, map_id);
	result = MnemoResultRow(fcinfo, callcxt, 0);
	MnemoFinish(&call);
	PG_RETURN_DATUM(result);
}

PG_FUNCTION_INFO_V1(mnemo_map_results);
Datum
mnemo_map_results(PG_FUNCTION_ARGS)
{
	char	   *session_id = MnemoRequireTextArg(fcinfo, 0, "session_id");
	char	   *map_id = MnemoRequireTextArg(fcinfo, 1, "map_id");
	Datum		values[3];
	char	   *tenant;
	MnemoCall	call;

	MnemoConnect(&call);
	MnemoCheckSession(session_id, false, &tenant, NULL);
	MnemoCheckMapExists(session_id, tenant, map_id);
	values[0] = CStringGetTextDatum(session_id);
	values[1] = CStringGetTextDatum(map_id);
	values[2] = CStringGetTextDatum(tenant);
	MnemoPrepare(&results_plan,
				 "SELECT * FROM mnemo.map_items WHERE session_id = $1 AND tenant = $3 "
				 "AND map_id = $2 AND completion_seq IS NOT NULL ORDER BY completion_seq",
				 3, (Oid[]) {TEXTOID, TEXTOID, TEXTOID});
	MnemoExecuteResult(fcinfo, results_plan, values, NULL, true);
	MnemoFinish(&call);
	return (Datum) 0;
}

PG_FUNCTION_INFO_V1(mnemo_list_maps);
Datum
mnemo_list_maps(PG_FUNCTION_ARGS)
{
	char	   *session_id = MnemoRequireTextArg(fcinfo, 0, "session_id");
	Datum		values[2];
	char	   *tenant;
	MnemoCall	call;

	MnemoConnect(&call);
	MnemoCheckSession(session_id, false, &tenant, NULL);
	values[0] = CStringGetTextDatum(session_id);
	values[1] = CStringGetTextDatum(tenant);
	MnemoPrepare(&list_plan,
				 "SELECT * FROM mnemo.maps WHERE session_id = $1 AND tenant = $2 "
				 "ORDER BY created_at, map_id",
				 2, (Oid[]) {TEXTOID, TEXTOID});
	MnemoExecuteResult(fcinfo, list_plan, values, NULL, true);
	MnemoFinish(&call);
	return (Datum) 0;
}

/*
 * The maps named map_id in the sessions the caller may see, by session id
 * (then tenant: a caller who sees several tenants may find two sessions of
 * one id, each row naming its tenant): a map's id is unique in its session
 * only, and the client finds a map's session by its id (application roles
 * read no table, doc/security.md).  The statement runs as the owner, so it
 * is given the caller ($2) and whether the caller sees every tenant ($3).
 */
PG_FUNCTION_INFO_V1(mnemo_find_map);
Datum
mnemo_find_map(PG_FUNCTION_ARGS)
{
	Oid			caller = GetUserId();
	Datum		values[3];
	MnemoCall	call;

	values[0] = MnemoRequireArg(fcinfo, 0, "map_id");
	values[1] = ObjectIdGetDatum(caller);
	values[2] = BoolGetDatum(superuser_arg(caller) || has_bypassrls_privilege(caller));
	MnemoConnect(&call);
	MnemoPrepare(&find_plan,
				 "SELECT * FROM mnemo.maps WHERE map_id = $1 AND "
				 MNEMO_TENANT_VISIBLE_SQL("$2", "$3") " ORDER BY session_id, tenant",
				 3, (Oid[]) {TEXTOID, OIDOID, BOOLOID});
	MnemoExecuteResult(fcinfo, find_plan, values, NULL, true);
	MnemoFinish(&call);
	return (Datum) 0;
}
