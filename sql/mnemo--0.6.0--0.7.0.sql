/* mnemo 0.6.0 -> 0.7.0: ALTER EXTENSION mnemo UPDATE TO '0.7.0' */

\echo Use "ALTER EXTENSION mnemo UPDATE TO '0.7.0'" to load this file. \quit

/*
 * Every change made to mnemo--0.7.0.sql is made here too, so that a
 * database updated step by step from 0.1.0 and a fresh 0.7.0 install have
 * the same schema (the upgrade test, test/upgrade.sh, compares them).
 */

/*
 * A session id is unique within its tenant, not across tenants: the same id
 * is free to every tenant, and every call resolves an id within the
 * tenants the caller sees (src/tenancy/session_lock.c).  Every key and
 * index that leads with a session's id gets the tenant as its second
 * column, which keeps the session column in every key (hash partitions and
 * Citus require it).  Each is rebuilt under its own name.
 *
 * The change runs where the tables are: everywhere on one node; on Citus,
 * on the coordinator alone, one statement at a time by EXECUTE, as 0.9.0's
 * does (doc/scale-out.md, "Upgrades on Citus"), and one subcommand a
 * statement (Citus runs no ADD CONSTRAINT beside another).
 */
DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_catalog.pg_extension WHERE extname = 'citus') THEN
        IF NOT pg_catalog.citus_is_coordinator() THEN
            RETURN;
        END IF;
    END IF;
    EXECUTE 'ALTER TABLE mnemo.sessions DROP CONSTRAINT sessions_pkey';
    EXECUTE 'ALTER TABLE mnemo.sessions ADD PRIMARY KEY (id, tenant)';
    EXECUTE 'ALTER TABLE mnemo.messages DROP CONSTRAINT messages_pkey';
    EXECUTE 'ALTER TABLE mnemo.messages DROP CONSTRAINT messages_session_id_seq_key';
    EXECUTE 'ALTER TABLE mnemo.messages ADD PRIMARY KEY (session_id, tenant, id)';
    EXECUTE 'ALTER TABLE mnemo.messages ADD UNIQUE (session_id, tenant, seq)';
    EXECUTE 'DROP INDEX mnemo.messages_summary_idx';
    EXECUTE 'CREATE INDEX messages_summary_idx ON mnemo.messages (session_id, tenant, seq) WHERE is_summary';
    EXECUTE 'DROP INDEX mnemo.messages_user_idx';
    EXECUTE 'CREATE INDEX messages_user_idx ON mnemo.messages (session_id, tenant, seq) WHERE role = ''user'' AND NOT is_summary';
    EXECUTE 'ALTER TABLE mnemo.message_parts DROP CONSTRAINT message_parts_pkey';
    EXECUTE 'ALTER TABLE mnemo.message_parts DROP CONSTRAINT message_parts_session_id_message_id_part_index_key';
    EXECUTE 'ALTER TABLE mnemo.message_parts ADD PRIMARY KEY (session_id, tenant, id)';
    EXECUTE 'ALTER TABLE mnemo.message_parts ADD UNIQUE (session_id, tenant, message_id, part_index)';
    EXECUTE 'ALTER TABLE mnemo.context_items DROP CONSTRAINT context_items_pkey';
    EXECUTE 'ALTER TABLE mnemo.context_items ADD PRIMARY KEY (session_id, tenant, generation, position)';
    EXECUTE 'DROP INDEX mnemo.context_items_item_idx';
    EXECUTE 'CREATE INDEX context_items_item_idx ON mnemo.context_items (session_id, tenant, generation, item_id)';
    EXECUTE 'ALTER TABLE mnemo.summary_nodes DROP CONSTRAINT summary_nodes_pkey';
    EXECUTE 'ALTER TABLE mnemo.summary_nodes ADD PRIMARY KEY (session_id, tenant, id)';
    EXECUTE 'ALTER TABLE mnemo.summary_edges DROP CONSTRAINT summary_edges_pkey';
    EXECUTE 'ALTER TABLE mnemo.summary_edges ADD PRIMARY KEY (session_id, tenant, summary_id, ordinal)';
    EXECUTE 'DROP INDEX mnemo.summary_edges_item_idx';
    EXECUTE 'CREATE INDEX summary_edges_item_idx ON mnemo.summary_edges (session_id, tenant, item_id)';
    EXECUTE 'ALTER TABLE mnemo.compaction_claims DROP CONSTRAINT compaction_claims_pkey';
    EXECUTE 'ALTER TABLE mnemo.compaction_claims ADD PRIMARY KEY (session_id, tenant)';
    EXECUTE 'ALTER TABLE mnemo.checkpoints DROP CONSTRAINT checkpoints_pkey';
    EXECUTE 'ALTER TABLE mnemo.checkpoints ADD PRIMARY KEY (session_id, tenant, label)';
    EXECUTE 'ALTER TABLE mnemo.runs DROP CONSTRAINT runs_pkey';
    EXECUTE 'ALTER TABLE mnemo.runs DROP CONSTRAINT runs_session_id_completion_seq_key';
    EXECUTE 'ALTER TABLE mnemo.runs ADD PRIMARY KEY (session_id, tenant, run_id)';
    EXECUTE 'ALTER TABLE mnemo.runs ADD UNIQUE (session_id, tenant, completion_seq)';
    EXECUTE 'ALTER TABLE mnemo.pending_requests DROP CONSTRAINT pending_requests_pkey';
    EXECUTE 'ALTER TABLE mnemo.pending_requests ADD PRIMARY KEY (session_id, tenant)';
    EXECUTE 'ALTER TABLE mnemo.lineage DROP CONSTRAINT lineage_pkey';
    EXECUTE 'ALTER TABLE mnemo.lineage ADD PRIMARY KEY (session_id, tenant, seq_from)';
    EXECUTE 'ALTER TABLE mnemo.discarded DROP CONSTRAINT discarded_pkey';
    EXECUTE 'ALTER TABLE mnemo.discarded ADD PRIMARY KEY (session_id, tenant, seq_from)';
    EXECUTE 'ALTER TABLE mnemo.maps DROP CONSTRAINT maps_pkey';
    EXECUTE 'ALTER TABLE mnemo.maps ADD PRIMARY KEY (session_id, tenant, map_id)';
    EXECUTE 'ALTER TABLE mnemo.map_items DROP CONSTRAINT map_items_pkey';
    EXECUTE 'ALTER TABLE mnemo.map_items DROP CONSTRAINT map_items_session_id_map_id_completion_seq_key';
    EXECUTE 'ALTER TABLE mnemo.map_items ADD PRIMARY KEY (session_id, tenant, map_id, ordinal)';
    EXECUTE 'ALTER TABLE mnemo.map_items ADD UNIQUE (session_id, tenant, map_id, completion_seq)';
    EXECUTE 'ALTER TABLE mnemo.search_progress DROP CONSTRAINT search_progress_pkey';
    EXECUTE 'ALTER TABLE mnemo.search_progress ADD PRIMARY KEY (session_id, tenant)';
    EXECUTE 'ALTER TABLE mnemo.search_queue DROP CONSTRAINT search_queue_pkey';
    EXECUTE 'ALTER TABLE mnemo.search_queue ADD PRIMARY KEY (session_id, tenant, seq_from, seq_to)';
    EXECUTE 'ALTER TABLE mnemo.search_documents DROP CONSTRAINT search_documents_pkey';
    EXECUTE 'ALTER TABLE mnemo.search_documents ADD PRIMARY KEY (session_id, tenant, seq, part_index)';
    EXECUTE 'DROP INDEX mnemo.map_items_open_idx';
    EXECUTE 'CREATE INDEX map_items_open_idx ON mnemo.map_items (session_id, tenant, map_id, ordinal) WHERE state IN (''pending'', ''running'')';
END
$$;

/*
 * A hash-partitioned install (mnemo.partitions) names each partition's index
 * after its parent's, as mnemo._partition_by_session does: the rebuilt
 * keys' partition indexes were named by ADD CONSTRAINT and CREATE INDEX.
 */
DO $$
DECLARE
    r record;
BEGIN
    FOR r IN
        SELECT child.relname AS child, parent.relname || '_p' || substring(part.relname FROM '[0-9]+$') AS name
          FROM pg_catalog.pg_inherits inh
          JOIN pg_catalog.pg_class child ON child.oid = inh.inhrelid
          JOIN pg_catalog.pg_class parent ON parent.oid = inh.inhparent AND parent.relkind = 'I'
          JOIN pg_catalog.pg_namespace n ON n.oid = parent.relnamespace AND n.nspname = 'mnemo'
          JOIN pg_catalog.pg_index x ON x.indexrelid = child.oid
          JOIN pg_catalog.pg_class part ON part.oid = x.indrelid
         WHERE child.relname <> parent.relname || '_p' || substring(part.relname FROM '[0-9]+$')
    LOOP
        EXECUTE format('ALTER INDEX mnemo.%I RENAME TO %I', r.child, r.name);
    END LOOP;
END
$$;

/*
 * reassign_tenant refuses to move a tenant's sessions to a tenant that has
 * a session of one of their ids (23505), now that ids are per tenant.
 */
COMMENT ON FUNCTION mnemo.reassign_tenant(text, name) IS 'hands every row of tenant from_tenant (a dropped role''s, say) to the role to_role with a new channel, or rebinds a name to the role that has it now; returns the number of sessions moved; 23505, changing nothing, when both tenants have a session of one id or a file reference to the same content; a superuser''s';
