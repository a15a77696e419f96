/* mnemo 0.3.0 -> 0.4.0: ALTER EXTENSION mnemo UPDATE TO '0.4.0' */

\echo Use "ALTER EXTENSION mnemo UPDATE TO '0.4.0'" to load this file. \quit

/*
 * Every change made to mnemo--0.4.0.sql is made here too, so that a
 * database updated step by step from 0.1.0 and a fresh 0.4.0 install have
 * the same schema (the upgrade test, test/upgrade.sh, compares them).
 */

/* ------------------------------------------------------------------------
 * Tenancy (issue 32): a tenant is the role it was registered with
 * ------------------------------------------------------------------------ */

ALTER TABLE mnemo.tenants ADD COLUMN role_id oid;
COMMENT ON TABLE mnemo.tenants IS 'the registry of tenants, made on first use: each tenant''s NOTIFY channel ("mnemo_" and 128 random bits) and the OID of the role it belongs to (a role created later under a dropped role''s name is not that tenant)';
-- every tenant with rows is registered to the role that has its name now
-- (none: NULL, visible to superusers only until reassign_tenant)
INSERT INTO mnemo.tenants (tenant, channel)
SELECT u.tenant, 'mnemo_' || replace(gen_random_uuid()::text, '-', '')
  FROM (SELECT tenant FROM mnemo.sessions UNION SELECT tenant FROM mnemo.file_references) u
 WHERE NOT EXISTS (SELECT FROM mnemo.tenants t WHERE t.tenant = u.tenant);
UPDATE mnemo.tenants t SET role_id = r.oid FROM pg_catalog.pg_roles r WHERE r.rolname = t.tenant;

-- A tenant is the role it was registered with (mnemo.tenants.role_id); after
-- DROP ROLE its rows belong to nobody until a superuser hands them over here
-- (or purges them: doc/security.md).  from_tenant = to_role rebinds the name
-- to the role that has it now.
CREATE FUNCTION mnemo.reassign_tenant(from_tenant text, to_role name) RETURNS bigint
    LANGUAGE c VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_reassign_tenant';
COMMENT ON FUNCTION mnemo.reassign_tenant(text, name) IS 'hands every row of tenant from_tenant (a dropped role''s, say) to the role to_role with a new channel, or rebinds a name to the role that has it now; returns the number of sessions moved; a superuser''s';
REVOKE ALL ON FUNCTION mnemo.reassign_tenant(text, name) FROM PUBLIC;

-- a map's session by the map's id, for roles that read no table
CREATE FUNCTION mnemo.find_map(map_id text)
    RETURNS SETOF mnemo.maps
    LANGUAGE c STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_find_map';
COMMENT ON FUNCTION mnemo.find_map(text) IS 'the maps named map_id in the sessions the caller may see, by session id';
