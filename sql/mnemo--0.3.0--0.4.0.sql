/* mnemo 0.3.0 -> 0.4.0: ALTER EXTENSION mnemo UPDATE TO '0.4.0' */

\echo Use "ALTER EXTENSION mnemo UPDATE TO '0.4.0'" to load this file. \quit

/*
 * Every change made to mnemo--0.4.0.sql is made here too, so that a
 * database updated step by step from 0.1.0 and a fresh 0.4.0 install have
 * the same schema (the upgrade test, test/upgrade.sh, compares them).
 */

/* ------------------------------------------------------------------------
 * Citus (issue 31): _session_functions says whether a call is confined to
 * its session's shards (force_delegation), which distribute() now passes:
 * false, since a fork's reads leave them (doc/scale-out.md, "Forks").
 * ------------------------------------------------------------------------ */

DROP FUNCTION mnemo._session_functions();
-- The functions that act on one session, and the argument that names it:
-- session_id, or the id of a *_session function.  One with a parent_id
-- reads a second session (the parent) and is left out.  mnemo.distribute()
-- delegates these to the session's node; test/partitioned/pruning.sh proves
-- each stays in its session's partitions, its ancestors' too on a fork.
-- force_delegation (delegated inside transaction blocks too, and then
-- confined to the session's own shards) is false for all of them: any of
-- them may read a fork's inherited messages in its ancestors' sessions,
-- which Citus then refuses (doc/scale-out.md, "Forks").
CREATE FUNCTION mnemo._session_functions()
    RETURNS TABLE (fn regprocedure, session_arg name, force_delegation boolean)
    LANGUAGE sql STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    AS $$
    SELECT p.oid::regprocedure, p.proargnames[1], false
      FROM pg_proc p
      JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid
                      AND d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
      JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'mnemo'
     WHERE p.proargnames[1] = 'session_id'
        OR (p.proargnames[1] = 'id' AND p.proname LIKE '%\_session'
            AND NOT 'parent_id' = ANY (p.proargnames))
$$;
COMMENT ON FUNCTION mnemo._session_functions() IS 'the functions that act on one session, the argument naming it and whether Citus confines the call to that session''s shards (force_delegation): what mnemo.distribute() delegates';

CREATE OR REPLACE FUNCTION mnemo.distribute() RETURNS void
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS $$
DECLARE
    ext oid := (SELECT oid FROM pg_extension WHERE extname = 'mnemo');
    t record;
    f record;
BEGIN
    IF NOT EXISTS (SELECT FROM pg_extension WHERE extname = 'citus') THEN
        RAISE EXCEPTION 'mnemo.distribute() needs the citus extension in this database'
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'On the Citus coordinator: CREATE EXTENSION citus, add the worker nodes, then call mnemo.distribute() once, before the tables fill up (see doc/scale-out.md).';
    END IF;
    -- the tables, sessions first: the others join its colocation group, so
    -- one session's rows of every table live in one shard group
    FOR t IN
        SELECT c.oid::regclass AS rel, mnemo._session_column(c.oid) AS key
          FROM pg_class c
          JOIN pg_depend d ON d.classid = 'pg_class'::regclass AND d.objid = c.oid
                          AND d.refclassid = 'pg_extension'::regclass AND d.refobjid = ext
                          AND d.deptype = 'e'
         WHERE c.relkind IN ('r', 'p') AND NOT c.relispartition
         ORDER BY c.oid <> 'mnemo.sessions'::regclass, c.relname
    LOOP
        IF t.key IS NULL THEN
            PERFORM pg_catalog.create_reference_table(t.rel);
        ELSIF t.rel = 'mnemo.sessions'::regclass THEN
            PERFORM pg_catalog.create_distributed_table(t.rel, t.key, colocate_with => 'none');
        ELSE
            PERFORM pg_catalog.create_distributed_table(t.rel, t.key, colocate_with => 'mnemo.sessions');
        END IF;
    END LOOP;
    -- every function that acts on one session: called on the coordinator
    -- outside a transaction block, it runs on the node holding that
    -- session's shards (inside one, or with force_delegation, see
    -- _session_functions)
    FOR f IN SELECT * FROM mnemo._session_functions() ORDER BY fn::text LOOP
        PERFORM pg_catalog.create_distributed_function(f.fn, f.session_arg,
                                                       colocate_with => 'mnemo.sessions',
                                                       force_delegation => f.force_delegation);
    END LOOP;
END
$$;
