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

-- The functions that act on one session, and the argument that names it:
-- session_id, or the id of a *_session function.  One with a parent_id
-- reads a second session (the parent) and is left out.  mnemo.distribute()
-- delegates these to the session's node; test/partitioned/pruning.sh proves
-- each stays in its session's partitions.
CREATE FUNCTION mnemo._session_functions() RETURNS TABLE (fn regprocedure, session_arg name)
    LANGUAGE sql STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    AS $$
    SELECT p.oid::regprocedure, p.proargnames[1]
      FROM pg_proc p
      JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid
                      AND d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
      JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'mnemo'
     WHERE p.proargnames[1] = 'session_id'
        OR (p.proargnames[1] = 'id' AND p.proname LIKE '%\_session'
            AND NOT 'parent_id' = ANY (p.proargnames))
$$;
COMMENT ON FUNCTION mnemo._session_functions() IS 'the functions that act on one session and the argument naming it: what mnemo.distribute() delegates';

-- Rebuild table tab, empty and with nothing depending on its row type, as a
-- table hash-partitioned by its session column into tab_p0 .. tab_p<N-1>,
-- with what it had: columns, defaults, CHECK constraints and comments (LIKE
-- ... INCLUDING ALL), then owner, keys and indexes, triggers, row-level
-- security and its policies, grants and serial sequences, all read from the
-- catalog.  A partition's index is named for its parent's, <index>_p<i>, as a
-- Citus shard's is <index>_<shard id>: an error naming it names the key it
-- violated.  Partitions have row-level security without a
-- policy, whatever the table has or is given later: a role granted SELECT on
-- every table of the schema still reads rows only through the table, under
-- its policies.
CREATE FUNCTION mnemo._partition_by_session(tab regclass, modulus integer) RETURNS void
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS $$
DECLARE
    t record;
    r record;
    key name := mnemo._session_column(tab);
    tmp text;
    i integer;
    rebuild text[];
    stmt text;
BEGIN
    IF key IS NULL THEN
        RAISE EXCEPTION 'table % has no session column', tab
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF modulus IS NULL OR modulus < 1 THEN
        RAISE EXCEPTION 'a table is partitioned into 1 or more partitions, not %', modulus
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    SELECT c.oid, c.relname, n.nspname, c.relrowsecurity, c.relforcerowsecurity, c.relacl, c.relowner
      INTO t
      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE c.oid = tab;
    tmp := t.relname || '_partitioned';
    -- what LIKE does not carry over, read before the table goes
    SELECT array_agg(s.sql ORDER BY s.ord) INTO rebuild FROM (
        SELECT 1 AS ord, format('ALTER TABLE %I.%I ADD CONSTRAINT %I %s',
                                t.nspname, t.relname, c.conname, pg_get_constraintdef(c.oid)) AS sql
          FROM pg_constraint c
         WHERE c.conrelid = t.oid AND c.contype IN ('p', 'u', 'x')
        UNION ALL
        SELECT 2, pg_get_indexdef(i.indexrelid)
          FROM pg_index i
         WHERE i.indrelid = t.oid
           AND NOT EXISTS (SELECT FROM pg_constraint c WHERE c.conindid = i.indexrelid
                                                          AND c.conrelid = t.oid)
        UNION ALL
        SELECT 3, format('COMMENT ON INDEX %I.%I IS %L', t.nspname, ic.relname,
                         obj_description(ic.oid, 'pg_class'))
          FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid
         WHERE i.indrelid = t.oid AND obj_description(ic.oid, 'pg_class') IS NOT NULL
        UNION ALL
        SELECT 3, format('COMMENT ON TABLE %I.%I IS %L', t.nspname, t.relname,
                         obj_description(t.oid, 'pg_class'))
         WHERE obj_description(t.oid, 'pg_class') IS NOT NULL
        UNION ALL
        SELECT 4, pg_get_triggerdef(tg.oid)
          FROM pg_trigger tg
         WHERE tg.tgrelid = t.oid AND NOT tg.tgisinternal
        UNION ALL
        SELECT 5, format('CREATE POLICY %I ON %I.%I AS %s FOR %s TO %s%s%s',
                         p.polname, t.nspname, t.relname,
                         CASE WHEN p.polpermissive THEN 'PERMISSIVE' ELSE 'RESTRICTIVE' END,
                         CASE p.polcmd WHEN 'r' THEN 'SELECT' WHEN 'a' THEN 'INSERT'
                                       WHEN 'w' THEN 'UPDATE' WHEN 'd' THEN 'DELETE' ELSE 'ALL' END,
                         (SELECT string_agg(CASE WHEN rid = 0 THEN 'PUBLIC'
                                                 ELSE quote_ident(rid::regrole::text) END, ', ')
                            FROM unnest(p.polroles) AS rid),
                         ' USING (' || pg_get_expr(p.polqual, p.polrelid) || ')',
                         ' WITH CHECK (' || pg_get_expr(p.polwithcheck, p.polrelid) || ')')
          FROM pg_policy p
         WHERE p.polrelid = t.oid
        UNION ALL
        SELECT 6, format('ALTER TABLE %I.%I ENABLE ROW LEVEL SECURITY', t.nspname, t.relname)
         WHERE t.relrowsecurity
        UNION ALL
        SELECT 6, format('ALTER TABLE %I.%I FORCE ROW LEVEL SECURITY', t.nspname, t.relname)
         WHERE t.relforcerowsecurity
        UNION ALL
        SELECT 7, format('GRANT %s ON %I.%I TO %s%s', a.privilege_type, t.nspname, t.relname,
                         CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(a.grantee::regrole::text) END,
                         CASE WHEN a.is_grantable THEN ' WITH GRANT OPTION' ELSE '' END)
          FROM aclexplode(t.relacl) a
         WHERE a.grantee <> t.relowner
        UNION ALL
        SELECT 7, format('GRANT %s (%I) ON %I.%I TO %s%s', a.privilege_type, att.attname,
                         t.nspname, t.relname,
                         CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(a.grantee::regrole::text) END,
                         CASE WHEN a.is_grantable THEN ' WITH GRANT OPTION' ELSE '' END)
          FROM pg_attribute att, aclexplode(att.attacl) a
         WHERE att.attrelid = t.oid AND att.attacl IS NOT NULL AND a.grantee <> t.relowner
    ) AS s;

    EXECUTE format('CREATE TABLE %I.%I (LIKE %I.%I INCLUDING ALL EXCLUDING INDEXES) PARTITION BY HASH (%I)',
                   t.nspname, tmp, t.nspname, t.relname, key);
    EXECUTE format('ALTER TABLE %I.%I OWNER TO %s', t.nspname, tmp, t.relowner::regrole);
    -- serial columns: their sequences move to the new table
    FOR r IN
        SELECT d.objid::regclass AS seq, a.attname
          FROM pg_depend d
          JOIN pg_class s ON s.oid = d.objid AND s.relkind = 'S'
          JOIN pg_attribute a ON a.attrelid = d.refobjid AND a.attnum = d.refobjsubid
         WHERE d.classid = 'pg_class'::regclass AND d.refclassid = 'pg_class'::regclass
           AND d.refobjid = t.oid AND d.deptype = 'a'
    LOOP
        EXECUTE format('ALTER SEQUENCE %s OWNED BY %I.%I.%I', r.seq, t.nspname, tmp, r.attname);
    END LOOP;
    EXECUTE format('DROP TABLE %I.%I', t.nspname, t.relname);
    EXECUTE format('ALTER TABLE %I.%I RENAME TO %I', t.nspname, tmp, t.relname);
    FOR i IN 0 .. modulus - 1 LOOP
        EXECUTE format('CREATE TABLE %I.%I PARTITION OF %I.%I FOR VALUES WITH (MODULUS %s, REMAINDER %s)',
                       t.nspname, t.relname || '_p' || i, t.nspname, t.relname, modulus, i);
        EXECUTE format('ALTER TABLE %I.%I OWNER TO %s', t.nspname, t.relname || '_p' || i, t.relowner::regrole);
        EXECUTE format('COMMENT ON TABLE %I.%I IS %L', t.nspname, t.relname || '_p' || i,
                       format('the rows of %s whose %s hashes to %s of %s', t.relname, key, i, modulus));
        EXECUTE format('ALTER TABLE %I.%I ENABLE ROW LEVEL SECURITY', t.nspname, t.relname || '_p' || i);
    END LOOP;
    FOREACH stmt IN ARRAY coalesce(rebuild, '{}') LOOP
        EXECUTE stmt;
    END LOOP;
    FOR r IN
        SELECT child.relname AS child, parent.relname || '_p' || substring(part.relname FROM '[0-9]+$') AS name
          FROM pg_inherits inh
          JOIN pg_class child ON child.oid = inh.inhrelid
          JOIN pg_class parent ON parent.oid = inh.inhparent AND parent.relkind = 'I'
          JOIN pg_index x ON x.indexrelid = child.oid
          JOIN pg_class part ON part.oid = x.indrelid
          JOIN pg_inherits pinh ON pinh.inhrelid = part.oid
         WHERE pinh.inhparent = format('%I.%I', t.nspname, t.relname)::regclass
    LOOP
        EXECUTE format('ALTER INDEX %I.%I RENAME TO %I', t.nspname, r.child, r.name);
    END LOOP;
END
$$;
COMMENT ON FUNCTION mnemo._partition_by_session(regclass, integer) IS 'rebuilds an empty table, on which nothing depends, as a table hash-partitioned by its session column, with its keys, indexes, triggers, policies and grants; run by CREATE EXTENSION with mnemo.partitions > 0';
REVOKE ALL ON FUNCTION mnemo._partition_by_session(regclass, integer) FROM PUBLIC;

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
    FOR f IN SELECT * FROM mnemo._session_functions() ORDER BY fn::text LOOP
        PERFORM pg_catalog.create_distributed_function(f.fn, f.session_arg,
                                                       colocate_with => 'mnemo.sessions',
                                                       force_delegation => true);
    END LOOP;
END
$$;
COMMENT ON FUNCTION mnemo.distribute() IS 'with Citus: distributes every session table by session, colocated with mnemo.sessions, makes the tables without a session column reference tables and delegates every function of mnemo._session_functions() to the node of its session; 55000 without the citus extension';
REVOKE ALL ON FUNCTION mnemo.distribute() FROM PUBLIC;
