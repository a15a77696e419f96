/*
 * tenant.c
 *		Who calls, whose data it is, and the rights mnemo's statements run
 *		with: the call frame every SQL function opens (MnemoConnect), the
 *		caller's tenant, and mnemo.tenant_visible().
 *
 * A tenant is a role.  A new session belongs to the setting mnemo.tenant when
 * it is set and not empty, else to the calling role; the caller must have the
 * privileges of that role (42501 otherwise), so the setting lets a pooled
 * role that is a member of several tenant roles choose one per request and
 * gives nobody else anything.  A row is visible to a role that has the
 * privileges of the row's tenant; superusers and BYPASSRLS roles see all, as
 * row-level security lets them.  The RLS policies on every table and every
 * function's session check apply this one rule (MnemoTenantVisible).
 *
 * The functions are not SECURITY DEFINER: a definer function could not see
 * its caller, so it could not stamp the tenant.  As pg_cron does, each one
 * records its caller at entry, then runs its statements as the extension's
 * owner, with SECURITY_RESTRICTED_OPERATION, and switches back on exit; an
 * error unwinds the switch with the (sub)transaction.  Application roles thus
 * need no write privilege on any table.  The functions pin search_path to
 * pg_catalog, pg_temp and name every table with its schema, so no object of
 * the caller's can stand in for one of ours.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/indexing.h"
#include "catalog/pg_extension.h"
#include "commands/extension.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/inval.h"

#include "mnemo.h"

char	   *mnemo_tenant_setting = NULL;

/* The role that called the running mnemo function (valid inside a frame). */
static Oid	caller = InvalidOid;

/* pg_extension.extowner, cached per backend until a relcache invalidation */
static Oid	owner = InvalidOid;
static bool owner_callback_registered = false;

static void
ForgetOwner(Datum arg, Oid relid)
{
	owner = InvalidOid;
}

static Oid
ExtensionOwner(void)
{
	Relation	rel;
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tuple;

	if (OidIsValid(owner))
		return owner;
	if (!owner_callback_registered)
	{
		/* DROP and CREATE EXTENSION invalidate our tables' relcache entries */
		CacheRegisterRelcacheCallback(ForgetOwner, (Datum) 0);
		owner_callback_registered = true;
	}
	rel = table_open(ExtensionRelationId, AccessShareLock);
	ScanKeyInit(&key, Anum_pg_extension_extname, BTEqualStrategyNumber, F_NAMEEQ,
				CStringGetDatum("mnemo"));
	scan = systable_beginscan(rel, ExtensionNameIndexId, true, NULL, 1, &key);
	tuple = systable_getnext(scan);
	if (!HeapTupleIsValid(tuple))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("extension \"mnemo\" is not installed in this database")));
	owner = ((Form_pg_extension) GETSTRUCT(tuple))->extowner;
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return owner;
}

/*
 * Open a function's frame: note the caller, switch to the extension owner,
 * SPI_connect.  MnemoFinish closes it.
 */
void
MnemoConnect(MnemoCall *call)
{
	Oid			ext_owner = ExtensionOwner();

	call->prev_caller = caller;
	caller = GetUserId();
	GetUserIdAndSecContext(&call->user, &call->sec_context);
	SetUserIdAndSecContext(ext_owner, call->sec_context | SECURITY_LOCAL_USERID_CHANGE |
						   SECURITY_RESTRICTED_OPERATION);
	SPI_connect();
}

void
MnemoFinish(MnemoCall *call)
{
	SPI_finish();
	SetUserIdAndSecContext(call->user, call->sec_context);
	caller = call->prev_caller;
}

/* Whether role may see the rows of tenant: the one rule (see the top). */
static bool
Visible(Oid role, const char *tenant)
{
	Oid			tenant_role;

	if (superuser_arg(role) || has_bypassrls_privilege(role))
		return true;
	tenant_role = get_role_oid(tenant, true);
	return OidIsValid(tenant_role) && has_privs_of_role(role, tenant_role);
}

/* Whether the caller of the running function may see the rows of tenant. */
bool
MnemoTenantVisible(const char *tenant)
{
	Assert(OidIsValid(caller));
	return Visible(caller, tenant);
}

/*
 * The tenant the caller writes new sessions and file references as: the
 * setting mnemo.tenant, or the caller's own role.  42501 if the caller does
 * not have the privileges of the role the setting names.
 */
char *
MnemoCallerTenant(void)
{
	Oid			role;

	Assert(OidIsValid(caller));
	if (mnemo_tenant_setting == NULL || mnemo_tenant_setting[0] == '\0')
		return GetUserNameFromId(caller, false);
	role = get_role_oid(mnemo_tenant_setting, true);
	if (!OidIsValid(role) || !has_privs_of_role(caller, role))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to act as tenant \"%s\"", mnemo_tenant_setting),
				 errdetail("mnemo.tenant names a role whose privileges role \"%s\" does not have.",
						   GetUserNameFromId(caller, false)),
				 errhint("GRANT the tenant role to the calling role, or reset mnemo.tenant.")));
	return pstrdup(mnemo_tenant_setting);
}

/*
 * mnemo.tenant_visible(tenant): the row-level security policy of every
 * table.  Never errors, a dropped tenant role included (then only
 * superusers and BYPASSRLS roles see its rows).
 */
PG_FUNCTION_INFO_V1(mnemo_tenant_visible);
Datum
mnemo_tenant_visible(PG_FUNCTION_ARGS)
{
	char	   *tenant = text_to_cstring(PG_GETARG_TEXT_PP(0));

	PG_RETURN_BOOL(Visible(GetUserId(), tenant));
}
