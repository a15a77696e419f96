/* mnemo 0.9.0 -> 0.10.0: ALTER EXTENSION mnemo UPDATE TO '0.10.0' */

\echo Use "ALTER EXTENSION mnemo UPDATE TO '0.10.0'" to load this file. \quit

/*
 * Every change made to mnemo--0.10.0.sql is made here too, so that a
 * database updated step by step from 0.1.0 and a fresh 0.10.0 install have
 * the same schema (the upgrade test, test/upgrade.sh, compares them).
 */

/*
 * A part appended without an id has the id "<message id>:<part_index>",
 * derived from its place and stored as NULL (src/reads/part_ids.c), where
 * mnemo made one, "part_" and a ULID, and stored it under a unique index.
 * The parts' primary key is now their place, (session_id, tenant, seq,
 * part_index), the key they had as a second unique one; the unique index
 * of ids holds only the ids callers gave.  Every id stored so far stays as
 * it is and names its part as before.  The rows are not rewritten: the two
 * keys are built anew, which reads the table once each.  And the search
 * documents lose the message's id, which no search read.
 *
 * As in 0.9.0, the change runs where the table is: everywhere on one node;
 * on Citus, on the coordinator alone, one statement at a time by EXECUTE
 * (doc/scale-out.md, "Upgrades on Citus").
 */
DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_catalog.pg_extension WHERE extname = 'citus') THEN
        IF NOT pg_catalog.citus_is_coordinator() THEN
            RETURN;
        END IF;
    END IF;
    EXECUTE 'ALTER TABLE mnemo.message_parts DROP CONSTRAINT message_parts_pkey';
    EXECUTE 'ALTER TABLE mnemo.message_parts
               DROP CONSTRAINT message_parts_session_id_tenant_seq_part_index_key';
    EXECUTE 'ALTER TABLE mnemo.message_parts ADD PRIMARY KEY (session_id, tenant, seq, part_index)';
    EXECUTE 'ALTER TABLE mnemo.message_parts ALTER COLUMN id DROP NOT NULL';
    EXECUTE 'CREATE UNIQUE INDEX message_parts_id_key ON mnemo.message_parts (session_id, tenant, id)
               WHERE id IS NOT NULL';
    -- a search document names its message by seq, which is its key, and no
    -- search read the message's id beside it: a drop, in the catalog only
    -- (a row written after it stores nothing for the column)
    EXECUTE 'ALTER TABLE mnemo.search_documents DROP COLUMN message_id';
END
$$;
COMMENT ON INDEX mnemo.message_parts_id_key IS 'the part ids callers gave, unique within a session; a part stored without one has the id <message id>:<part_index>';
