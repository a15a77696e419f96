/* mnemo 0.8.0 -> 0.9.0: ALTER EXTENSION mnemo UPDATE TO '0.9.0' */

\echo Use "ALTER EXTENSION mnemo UPDATE TO '0.9.0'" to load this file. \quit

/*
 * Every change made to mnemo--0.9.0.sql is made here too, so that a
 * database updated step by step from 0.1.0 and a fresh 0.9.0 install have
 * the same schema (the upgrade test, test/upgrade.sh, compares them).
 */

/*
 * A part names its message by the message's seq, not its id, and the parts
 * are keyed by (session_id, tenant, seq, part_index): a message's parts are
 * a range of the key a history read walks beside the messages' own
 * (src/reads/flat.c), the key holds a bigint where it held the message's
 * text id, and a part row no longer stores that id.  The UPDATE writes a
 * new version of every part row (its content's TOAST is not rewritten),
 * with the seq and without the id, so that the dropped column takes no
 * bytes in any row; on a partitioned install the partitions follow their
 * parent.  get_parts keeps its columns, the message's id among them, as
 * the type mnemo.message_part.
 */
DROP FUNCTION mnemo.get_parts(text, text);
/*
 * The table's change runs where the table is: everywhere on one node; on
 * Citus, on the coordinator alone, which hands each statement to the
 * workers' tables and shards.  A worker runs this script too (Citus passes
 * the ALTER EXTENSION on), and must not change them a second time.  Each
 * statement goes by EXECUTE, alone: Citus hands a command to the workers as
 * its query string, which here would be the whole script.
 */
DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_catalog.pg_extension WHERE extname = 'citus') THEN
        IF NOT pg_catalog.citus_is_coordinator() THEN
            RETURN;
        END IF;
    END IF;
    EXECUTE 'ALTER TABLE mnemo.message_parts ADD COLUMN seq bigint';
    EXECUTE 'ALTER TABLE mnemo.message_parts ALTER COLUMN message_id DROP NOT NULL';
    EXECUTE 'UPDATE mnemo.message_parts p SET seq = m.seq, message_id = NULL
               FROM mnemo.messages m
              WHERE m.session_id = p.session_id AND m.tenant = p.tenant AND m.id = p.message_id';
    EXECUTE 'ALTER TABLE mnemo.message_parts ALTER COLUMN seq SET NOT NULL';
    EXECUTE 'ALTER TABLE mnemo.message_parts ADD CONSTRAINT message_parts_session_id_tenant_seq_part_index_key
               UNIQUE (session_id, tenant, seq, part_index)';
    EXECUTE 'ALTER TABLE mnemo.message_parts
               DROP CONSTRAINT message_parts_session_id_tenant_message_id_part_index_key';
    EXECUTE 'ALTER TABLE mnemo.message_parts DROP COLUMN message_id';
END
$$;

CREATE TYPE mnemo.message_part AS (
    session_id      text,
    message_id      text,
    part_index      integer,
    id              text,
    part_type       text,
    content         jsonb,
    tool_name       text,
    tool_call_id    text,
    tool_state      text,
    compacted_at    bigint,
    started_at      bigint,
    completed_at    bigint,
    token_estimate  integer,
    tenant          text
);
COMMENT ON TYPE mnemo.message_part IS 'a row of get_parts: a part with the id of its message (a mnemo.message_parts row names its message by seq)';

CREATE FUNCTION mnemo.get_parts(session_id text, message_id text) RETURNS SETOF mnemo.message_part
    LANGUAGE c STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_get_parts';
COMMENT ON FUNCTION mnemo.get_parts(text, text) IS 'a message''s parts in part_index order; MN002 if the message does not exist';

-- mnemo.distribute() may run again after an update (doc/scale-out.md): it
-- distributes only what is not, and delegates every function again, get_parts
-- anew among them, which an extension script cannot make the workers know
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
                  HINT = 'On the Citus coordinator: CREATE EXTENSION citus, add the worker nodes, then call mnemo.distribute() once, before the tables fill up, and again after each ALTER EXTENSION mnemo UPDATE (see doc/scale-out.md).';
    END IF;
    -- the tables, sessions first: the others join its colocation group, so
    -- one session's rows of every table live in one shard group; a table
    -- distributed already (a second call, after an update) is left as it is
    FOR t IN
        SELECT c.oid::regclass AS rel, mnemo._session_column(c.oid) AS key
          FROM pg_class c
          JOIN pg_depend d ON d.classid = 'pg_class'::regclass AND d.objid = c.oid
                          AND d.refclassid = 'pg_extension'::regclass AND d.refobjid = ext
                          AND d.deptype = 'e'
         WHERE c.relkind IN ('r', 'p') AND NOT c.relispartition
           AND NOT EXISTS (SELECT FROM pg_dist_partition p WHERE p.logicalrelid = c.oid)
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
    -- _session_functions).  Again on a second call: a function an update
    -- made anew is delegated, and every worker learns it (an extension
    -- script cannot tell them)
    FOR f IN SELECT * FROM mnemo._session_functions() ORDER BY fn::text LOOP
        PERFORM pg_catalog.create_distributed_function(f.fn, f.session_arg,
                                                       colocate_with => 'mnemo.sessions',
                                                       force_delegation => f.force_delegation);
    END LOOP;
END
$$;
COMMENT ON FUNCTION mnemo.distribute() IS 'with Citus: distributes every session table not distributed yet by session, colocated with mnemo.sessions, makes the tables without a session column reference tables and delegates every function of mnemo._session_functions() to the node of its session; run again after each update; 55000 without the citus extension';
