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
 * A tenant is the role it was registered with, not whatever role has its
 * name today: mnemo.tenants keeps the OID of the role (role_id) from the
 * tenant's first session or file reference.  DROP ROLE cannot be refused
 * for a role that owns rows (roles are shared objects: no event trigger
 * fires), so a role created later under the same name finds the name
 * registered to another OID: it sees none of the old rows and may not
 * write as that tenant (42501) until a superuser hands the tenant over
 * (mnemo.reassign_tenant) or purges it (doc/security.md).
 *
 * Except on Citus (mnemo.distribute() made the registry a reference table):
 * a role has a different OID on every node, and Citus keeps roles in step
 * by name, so there a tenant is bound by its name (doc/scale-out.md says
 * what the operator does instead before dropping a tenant's role).
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
#include "access/xact.h"
#include "catalog/indexing.h"
#include "catalog/namespace.h"
#include "catalog/pg_extension.h"
#include "commands/extension.h"
#include "miscadmin.h"
#include "storage/proc.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/catcache.h"
#include "utils/fmgroids.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"
#include "utils/rel.h"
#include "utils/relcache.h"
#include "utils/snapmgr.h"
#include "catalog/pg_type.h"

#include "mnemo.h"
#include "tenancy/tenancy.h"


/* The role that called the running mnemo function (valid inside a frame). */
static Oid	caller = InvalidOid;

/* pg_extension.extowner, cached per backend until a relcache invalidation */
static Oid	owner = InvalidOid;
static bool owner_callback_registered = false;

/* mnemo.tenants, looked up once per backend until a relcache invalidation */
static Oid	tenants_relid = InvalidOid;

/* whether the registry is a Citus table: -1 not known yet (as tenants_relid) */
static int	tenants_distributed = -1;

/*
 * The last registry lookup that found its tenant.  A row another
 * transaction committed is good until a relcache invalidation (ForgetOwner):
 * the one function that changes a registered tenant's row,
 * reassign_tenant, sends one for mnemo.tenants, and a turn's call no longer
 * reads the registry each time (3.4% of a turn, bench/profiles/part_ids.txt).
 * A row of the transaction's own, which a rollback would take away, is
 * good for the rest of its command only: a call and the row-level security
 * of one statement ask for the same tenant over and over, and nothing else
 * can change the registry within one command.
 */
static struct
{
	LocalTransactionId lxid;
	CommandId	cid;
	bool		committed;		/* good across transactions */
	char		tenant[NAMEDATALEN];
	bool		found;
	Oid			role;
}			registered;

static void
ForgetOwner(Datum arg, Oid relid)
{
	owner = InvalidOid;
	tenants_relid = InvalidOid;
	tenants_distributed = -1;
	registered.lxid = InvalidLocalTransactionId;
	registered.committed = false;
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

static Oid
TenantsRelid(void)
{
	if (!OidIsValid(tenants_relid))
	{
		(void) ExtensionOwner();	/* registers the invalidation callback */
		tenants_relid = get_relname_relid("tenants", get_namespace_oid("mnemo", false));
		if (!OidIsValid(tenants_relid))
			elog(ERROR, "table mnemo.tenants does not exist");
	}
	return tenants_relid;
}

/*
 * The OID of the role tenant was registered with, from mnemo.tenants; sets
 * *found to whether it is registered (a row whose role_id is NULL, a tenant
 * whose role was gone before 0.4.0, is found with InvalidOid).  Reads the
 * row directly, by the primary key, in the statement's snapshot (a parallel
 * worker may take no other): this runs inside row-level security checks,
 * where SPI is not to be used.
 */
static Oid
RegisteredRole(const char *tenant, bool *found)
{
	Relation	rel;
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tuple;
	bool		isnull;

	if (strlen(tenant) >= NAMEDATALEN)
	{
		*found = false;			/* no role has such a name */
		return InvalidOid;
	}
	if ((registered.committed ||
		 (registered.lxid == MyProc->lxid && registered.cid == GetCurrentCommandId(false))) &&
		strcmp(registered.tenant, tenant) == 0)
	{
		*found = registered.found;
		return registered.role;
	}
	rel = table_open(TenantsRelid(), AccessShareLock);
	ScanKeyInit(&key, 1, BTEqualStrategyNumber, F_TEXTEQ, CStringGetTextDatum(tenant));
	scan = systable_beginscan(rel, RelationGetPrimaryKeyIndex(rel), true,
							  ActiveSnapshotSet() ? GetActiveSnapshot() : GetLatestSnapshot(),
							  1, &key);
	tuple = systable_getnext(scan);
	registered.found = HeapTupleIsValid(tuple);
	registered.role = InvalidOid;
	registered.committed = registered.found &&
		!TransactionIdIsCurrentTransactionId(HeapTupleHeaderGetXmin(tuple->t_data));
	if (registered.found)
	{
		Datum		role = heap_getattr(tuple, 3, RelationGetDescr(rel), &isnull);

		if (!isnull)
			registered.role = DatumGetObjectId(role);
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	/*
	 * A miss is not kept: the snapshot read may be older than the command
	 * (a function's check after its own SPI registered the tenant), and the
	 * command id does not move past a command that wrote nothing, so a kept
	 * miss would outlive the registration into the next statement.
	 */
	registered.lxid = registered.found ? MyProc->lxid : InvalidLocalTransactionId;
	registered.cid = GetCurrentCommandId(false);
	strlcpy(registered.tenant, tenant, NAMEDATALEN);
	*found = registered.found;
	return registered.role;
}

/*
 * Whether mnemo.tenants is a Citus table, so that tenants are bound by name
 * (see the top).  RegisteredRole's direct read cannot serve there anyway: a
 * node's mnemo.tenants is the shell of a reference table, and its rows are
 * in a shard placement.
 */
static bool
TenantsDistributed(void)
{
	if (tenants_distributed < 0)
		tenants_distributed = MnemoCitusTable(TenantsRelid()) ? 1 : 0;
	return tenants_distributed;
}

/*
 * Whether the registry binds tenant to role: it names role's OID, or mnemo
 * is on Citus (see the top).
 */
static bool
BoundTo(const char *tenant, Oid role)
{
	bool		found;

	if (TenantsDistributed())
		return true;
	return RegisteredRole(tenant, &found) == role && found;
}

/*
 * Whether role may see the rows of tenant: the one rule (see the top).  The
 * tenant's role is the one it was registered with, and still exists.
 */
static bool
Visible(Oid role, const char *tenant)
{
	Oid			tenant_role;

	if (superuser_arg(role) || has_bypassrls_privilege(role))
		return true;
	tenant_role = get_role_oid(tenant, true);
	return OidIsValid(tenant_role) && has_privs_of_role(role, tenant_role) &&
		BoundTo(tenant, tenant_role);
}

/*
 * 42501 if the name tenant is registered to a role other than the one that
 * has it now: that role was dropped, and the name's rows are not this one's.
 */
static void
CheckTenantRole(const char *tenant, Oid role)
{
	bool		found;

	(void) RegisteredRole(tenant, &found);
	if (found && !BoundTo(tenant, role))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("tenant \"%s\" belongs to a role of that name that was dropped", tenant),
				 errdetail("A role created later under the same name does not inherit its sessions."),
				 errhint("A superuser hands them over with mnemo.reassign_tenant, or purges them (see doc/security.md).")));
}

/* Whether the caller of the running function may see the rows of tenant. */
bool
MnemoTenantVisible(const char *tenant)
{
	Assert(OidIsValid(caller));
	return Visible(caller, tenant);
}

/*
 * The tenant a caller's session most likely belongs to, for a statement that
 * filters the session row by it (MnemoLockSession): the setting
 * mnemo.tenant, or the caller's role, when the caller may see that tenant;
 * NULL when it sees no such tenant, and NULL with *all set for a caller that
 * sees every tenant.  Never errors: the caller's write checks its tenant
 * where it matters.
 */
char *
MnemoTenantGuess(bool *all)
{
	char	   *name;

	Assert(OidIsValid(caller));
	*all = superuser_arg(caller) || has_bypassrls_privilege(caller);
	if (*all)
		return NULL;
	if (mnemo_tenant_setting != NULL && mnemo_tenant_setting[0] != '\0')
		name = pstrdup(mnemo_tenant_setting);
	else
		name = GetUserNameFromId(caller, false);
	return Visible(caller, name) ? name : NULL;
}

/*
 * The one tenant whose sessions the caller may see, when it cannot see any
 * other: a role that is neither a superuser nor BYPASSRLS, nor a member of
 * any role, sees only the rows of the tenant of its own name.  NULL for a
 * caller that may see several (a pooled role, a superuser), or none.  A
 * by-id look-up of a session is then a probe of (id, that tenant), which
 * takes the same path for another tenant's id as for a missing one: no row
 * of another tenant is read, so no timing tells that it exists.
 */
char *
MnemoTenantOnly(void)
{
	CatCList   *memberships;
	bool		member;
	bool		all;
	char	   *tenant = MnemoTenantGuess(&all);

	if (tenant == NULL)
		return NULL;
	memberships = SearchSysCacheList1(AUTHMEMMEMROLE, ObjectIdGetDatum(caller));
	member = memberships->n_members > 0;
	ReleaseSysCacheList(memberships);
	return member ? NULL : tenant;
}

/*
 * The tenant whose session a session id names first, when the caller sees
 * sessions of that id in several tenants (session_lock.c): the setting
 * mnemo.tenant, or the caller's own role.  Unchecked: a name, not a right.
 */
char *
MnemoTenantPreferred(void)
{
	Assert(OidIsValid(caller));
	if (mnemo_tenant_setting != NULL && mnemo_tenant_setting[0] != '\0')
		return pstrdup(mnemo_tenant_setting);
	return GetUserNameFromId(caller, false);
}

/*
 * The tenant the caller writes new sessions and file references as: the
 * setting mnemo.tenant, or the caller's own role.  42501 if the caller does
 * not have the privileges of the role the setting names, or if the name is
 * registered to a dropped role.
 */
char *
MnemoCallerTenant(void)
{
	Oid			role;

	Assert(OidIsValid(caller));
	if (mnemo_tenant_setting == NULL || mnemo_tenant_setting[0] == '\0')
	{
		char	   *name = GetUserNameFromId(caller, false);

		CheckTenantRole(name, caller);
		return name;
	}
	role = get_role_oid(mnemo_tenant_setting, true);
	if (!OidIsValid(role) || !has_privs_of_role(caller, role))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to act as tenant \"%s\"", mnemo_tenant_setting),
				 errdetail("mnemo.tenant names a role whose privileges role \"%s\" does not have.",
						   GetUserNameFromId(caller, false)),
				 errhint("GRANT the tenant role to the calling role, or reset mnemo.tenant.")));
	CheckTenantRole(mnemo_tenant_setting, role);
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

/*
 * mnemo.reassign_tenant(from_tenant, to_role): every row of from_tenant
 * becomes to_role's, and the registry names to_role's OID; with from_tenant
 * = to_role it rebinds a name to the role that has it now.  A superuser's
 * (revoked from PUBLIC too): it runs as the owner, like every function, and
 * would otherwise hand anyone's sessions to anyone.  The tables are the
 * extension's with a tenant column, from the catalog, so none is missed.
 * A session id is unique within its tenant only, so the two tenants may
 * hold sessions of one id, which one tenant cannot: that is refused first,
 * with 23505 naming the id, as the unique keys refuse a file reference
 * both hold; the error leaves everything as it was.
 */
PG_FUNCTION_INFO_V1(mnemo_reassign_tenant);
Datum
mnemo_reassign_tenant(PG_FUNCTION_ARGS)
{
	char	   *from = MnemoRequireTextArg(fcinfo, 0, "from_tenant");
	char	   *to = NameStr(*DatumGetName(MnemoRequireArg(fcinfo, 1, "to_role")));
	Oid			role = get_role_oid(to, true);
	Datum		args[2];
	bool		found;
	Oid			registered_to;
	int64		moved;
	MnemoCall	call;
	uint64		i;

	MnemoConnect(&call);
	if (!superuser_arg(caller))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("only a superuser may reassign a tenant")));
	if (!OidIsValid(role))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("role \"%s\" does not exist", to)));
	/* on Citus, where tenants are bound by name, the rows alone say */
	if (!TenantsDistributed())
	{
		(void) RegisteredRole(from, &found);
		if (!found)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_OBJECT),
					 errmsg("tenant \"%s\" is not registered", from)));
		registered_to = RegisteredRole(to, &found);
		if (strcmp(from, to) != 0 && found && registered_to != role)
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg("tenant \"%s\" belongs to another role of that name", to),
					 errhint("Reassign that tenant first: mnemo.reassign_tenant('%s', '%s').", to, to)));
	}

	args[0] = CStringGetTextDatum(from);
	args[1] = CStringGetTextDatum(to);
	if (SPI_execute_with_args("SELECT count(*) FROM mnemo.sessions WHERE tenant = $1", 1,
							  (Oid[]) {TEXTOID}, args, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not count the sessions of tenant \"%s\"", from);
	moved = MnemoGetInt64(0, 1, NULL);
	if (strcmp(from, to) != 0)
	{
		SPITupleTable *tables;

		/* one statement on the sessions' key, (id, tenant): colocated on Citus */
		if (SPI_execute_with_args("SELECT f.id FROM mnemo.sessions f WHERE f.tenant = $1 "
								  "AND EXISTS (SELECT FROM mnemo.sessions t "
								  "WHERE t.id = f.id AND t.tenant = $2) "
								  "ORDER BY f.id LIMIT 1",
								  2, (Oid[]) {TEXTOID, TEXTOID}, args, NULL, true, 1) != SPI_OK_SELECT)
			elog(ERROR, "could not compare the sessions of tenants \"%s\" and \"%s\"", from, to);
		if (SPI_processed > 0)
			ereport(ERROR,
					(errcode(ERRCODE_UNIQUE_VIOLATION),
					 errmsg("tenants \"%s\" and \"%s\" both have a session \"%s\"",
							from, to, MnemoGetText(0, 1, NULL)),
					 errdetail("A session id is unique within its tenant: one tenant cannot hold both."),
					 errhint("Purge one of the two sessions, or reassign to another role.")));

		/*
		 * An image both tenants stored is one blob of to's, with both
		 * tenants' references (blobs.c); the rest move below with the rows.
		 */
		if (SPI_execute_with_args("WITH f AS (DELETE FROM mnemo.blobs f WHERE f.tenant = $1 "
								  "AND EXISTS (SELECT FROM mnemo.blobs t WHERE t.tenant = $2 "
								  "AND t.sha256 = f.sha256) RETURNING f.sha256, f.refs) "
								  "UPDATE mnemo.blobs t SET refs = t.refs + f.refs FROM f "
								  "WHERE t.tenant = $2 AND t.sha256 = f.sha256",
								  2, (Oid[]) {TEXTOID, TEXTOID}, args, NULL, false, 0) != SPI_OK_UPDATE)
			elog(ERROR, "could not merge the blobs of tenant \"%s\"", from);

		if (SPI_execute("SELECT format('UPDATE %s SET tenant = $2 WHERE tenant = $1', c.oid::regclass) "
						"FROM pg_catalog.pg_class c "
						"JOIN pg_catalog.pg_depend d ON d.classid = 'pg_catalog.pg_class'::regclass "
						"AND d.objid = c.oid AND d.refclassid = 'pg_catalog.pg_extension'::regclass "
						"AND d.deptype = 'e' "
						"JOIN pg_catalog.pg_extension e ON e.oid = d.refobjid AND e.extname = 'mnemo' "
						"JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attname = 'tenant' "
						"AND NOT a.attisdropped "
						"WHERE c.relkind IN ('r', 'p') AND NOT c.relispartition "
						"AND c.oid <> 'mnemo.tenants'::regclass ORDER BY c.relname",
						true, 0) != SPI_OK_SELECT)
			elog(ERROR, "could not list mnemo's tables");
		tables = SPI_tuptable;
		for (i = 0; i < tables->numvals; i++)
		{
			char	   *update = SPI_getvalue(tables->vals[i], tables->tupdesc, 1);

			if (SPI_execute_with_args(update, 2, (Oid[]) {TEXTOID, TEXTOID}, args, NULL,
									  false, 0) != SPI_OK_UPDATE)
				elog(ERROR, "could not reassign: %s", update);
		}
	}
	/* the name's registry row anew: to_role's OID and a channel nobody knew */
	if (SPI_execute_with_args("DELETE FROM mnemo.tenants WHERE tenant = $1", 1,
							  (Oid[]) {TEXTOID}, args, NULL, false, 0) != SPI_OK_DELETE)
		elog(ERROR, "could not unregister tenant \"%s\"", from);
	/* every backend's registry look-up (RegisteredRole) forgets it at commit */
	CacheInvalidateRelcacheByRelid(TenantsRelid());
	(void) MnemoTenantChannel(to);
	MnemoFinish(&call);
	PG_RETURN_INT64(moved);
}
