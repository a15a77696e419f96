/* mnemo 0.1.0 -> 0.2.0: ALTER EXTENSION mnemo UPDATE TO '0.2.0' */

\echo Use "ALTER EXTENSION mnemo UPDATE TO '0.2.0'" to load this file. \quit

/*
 * Every change made to mnemo--0.2.0.sql is made here too, so that an
 * upgraded database and a fresh 0.2.0 install have the same schema (the
 * upgrade test compares them).
 */

/* ------------------------------------------------------------------------
 * Scale-out with Citus (doc/scale-out.md).  The hash-partitioned layout
 * (mnemo.partitions) is for new installs only: an upgrade keeps its tables.
 * ------------------------------------------------------------------------ */

-- The column that names a row's session: session_id, and for the sessions
-- table itself its key, id.  NULL for tables that are not per session.  The
-- partitioned layout partitions by it and mnemo.distribute() distributes by it.
CREATE FUNCTION mnemo._session_column(tab regclass) RETURNS name
    LANGUAGE sql STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    AS $$
    SELECT a.attname
      FROM pg_attribute a
     WHERE a.attrelid = tab AND NOT a.attisdropped
       AND (a.attname = 'session_id' OR (tab = 'mnemo.sessions'::regclass AND a.attname = 'id'))
     ORDER BY a.attname = 'session_id' DESC
     LIMIT 1
$$;
COMMENT ON FUNCTION mnemo._session_column(regclass) IS 'the column a table is partitioned and distributed by: session_id, or id for mnemo.sessions; NULL for tables that are not per session';
CREATE FUNCTION mnemo.distribute() RETURNS void
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
    -- every function that acts on one session: called on the coordinator,
    -- it runs on the node holding that session's shards, also inside a
    -- transaction block (force_delegation: Citus then refuses a statement
    -- that leaves the session's shards, which test/partitioned proves none does)
    FOR f IN
        SELECT p.oid::regprocedure AS fn
          FROM pg_proc p
          JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid
                          AND d.refclassid = 'pg_extension'::regclass AND d.refobjid = ext
                          AND d.deptype = 'e'
         WHERE p.proargnames[1] = 'session_id'
         ORDER BY p.proname
    LOOP
        PERFORM pg_catalog.create_distributed_function(f.fn, 'session_id',
                                                       colocate_with => 'mnemo.sessions',
                                                       force_delegation => true);
    END LOOP;
END
$$;
COMMENT ON FUNCTION mnemo.distribute() IS 'with Citus: distributes every session table by session, colocated with mnemo.sessions, makes file_references a reference table and delegates every function whose first argument is session_id to the node of that session; 55000 without the citus extension';
REVOKE ALL ON FUNCTION mnemo.distribute() FROM PUBLIC;
