/*
 * file_references.c
 *		The content-addressed file cache: store_file_reference,
 *		get_file_reference, get_file_reference_by_path.
 *
 * A file reference is keyed by the sha256 of the file's content, so the same
 * bytes read under two paths are one row, and storing it again replaces the
 * row (the seed's "insert or replace"), path and time included.  This is the
 * one table not keyed by session: file contents are shared across the
 * sessions of a tenant, and the key leads with the tenant.  Each call reads
 * and writes the caller's tenant (mnemo.tenant or the calling role, see
 * tenant.c) only.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "utils/builtins.h"

#include "mnemo.h"
#include "tenancy/tenancy.h"
#include "context/context.h"

static SPIPlanPtr store_plan;
static SPIPlanPtr get_plan;
static SPIPlanPtr by_path_plan;

PG_FUNCTION_INFO_V1(mnemo_store_file_reference);
Datum
mnemo_store_file_reference(PG_FUNCTION_ARGS)
{
	MemoryContext callcxt = CurrentMemoryContext;
	char	   *content_id = MnemoRequireTextArg(fcinfo, 0, "content_id");
	char	   *path = MnemoRequireTextArg(fcinfo, 1, "path");
	int32		token_count = PG_ARGISNULL(3) ? 0 : PG_GETARG_INT32(3);
	Oid			types[7] = {TEXTOID, TEXTOID, TEXTOID, INT4OID, TEXTOID, INT8OID, TEXTOID};
	Datum		values[7];
	Datum		result;
	MnemoCall	call;

	MnemoCheckFileId(content_id, "content_id");
	if (path[0] == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("path must not be empty")));
	if (token_count < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("token_count must not be negative")));
	values[0] = CStringGetTextDatum(content_id);
	values[1] = CStringGetTextDatum(path);
	values[2] = PG_ARGISNULL(2) ? CStringGetTextDatum("unknown") : PG_GETARG_DATUM(2);
	values[3] = Int32GetDatum(token_count);
	values[4] = PG_ARGISNULL(4) ? CStringGetTextDatum("") : PG_GETARG_DATUM(4);
	values[5] = Int64GetDatum(MnemoNowMs());

	MnemoConnect(&call);
	values[6] = CStringGetTextDatum(MnemoCallerTenant());
	/* registered like a session's tenant (tenant.c): its name then stays its own */
	(void) MnemoTenantChannel(TextDatumGetCString(values[6]));
	MnemoPrepare(&store_plan,
				 "INSERT INTO mnemo.file_references AS f (content_id, path, file_type, "
				 "token_count, exploration_summary, created_at, tenant) "
				 "VALUES ($1, $2, $3, $4, $5, $6, $7) "
				 "ON CONFLICT (tenant, content_id) DO UPDATE SET path = excluded.path, "
				 "file_type = excluded.file_type, token_count = excluded.token_count, "
				 "exploration_summary = excluded.exploration_summary, "
				 "created_at = excluded.created_at, ordinal = excluded.ordinal RETURNING *",
				 7, types);
	MnemoExecute(store_plan, values, NULL, false, 0);
	result = MnemoResultRow(fcinfo, callcxt, 0);
	MnemoFinish(&call);
	PG_RETURN_DATUM(result);
}

/* Run a one-row lookup and return the row, or NULL when there is none. */
static Datum
LookupOne(FunctionCallInfo fcinfo, SPIPlanPtr *plan, const char *sql, const char *argname)
{
	MemoryContext callcxt = CurrentMemoryContext;
	Oid			types[2] = {TEXTOID, TEXTOID};
	Datum		values[2];
	Datum		result = (Datum) 0;
	bool		found;
	MnemoCall	call;

	values[0] = MnemoRequireArg(fcinfo, 0, argname);
	MnemoConnect(&call);
	values[1] = CStringGetTextDatum(MnemoCallerTenant());
	MnemoPrepare(plan, sql, 2, types);
	found = MnemoExecute(*plan, values, NULL, true, 1) == 1;
	if (found)
		result = MnemoResultRow(fcinfo, callcxt, 0);
	MnemoFinish(&call);
	if (!found)
		PG_RETURN_NULL();
	PG_RETURN_DATUM(result);
}

PG_FUNCTION_INFO_V1(mnemo_get_file_reference);
Datum
mnemo_get_file_reference(PG_FUNCTION_ARGS)
{
	return LookupOne(fcinfo, &get_plan,
					 "SELECT * FROM mnemo.file_references WHERE tenant = $2 AND content_id = $1",
					 "content_id");
}

PG_FUNCTION_INFO_V1(mnemo_get_file_reference_by_path);
Datum
mnemo_get_file_reference_by_path(PG_FUNCTION_ARGS)
{
	return LookupOne(fcinfo, &by_path_plan,
					 "SELECT * FROM mnemo.file_references WHERE path = $1 AND tenant = $2 "
					 "ORDER BY ordinal DESC LIMIT 1",
					 "path");
}
