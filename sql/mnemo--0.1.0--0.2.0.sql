/* mnemo 0.1.0 -> 0.2.0: ALTER EXTENSION mnemo UPDATE TO '0.2.0' */

\echo Use "ALTER EXTENSION mnemo UPDATE TO '0.2.0'" to load this file. \quit

/*
 * Every change made to mnemo--0.2.0.sql is made here too, so that an
 * upgraded database and a fresh 0.2.0 install have the same schema (the
 * upgrade test, test/upgrade.sh, compares them).
 *
 * Existing rows get the tenant of the extension's owner: they were written
 * by whoever could write before tenancy existed, and the owner's role is the
 * one tenant every such caller could act for; doc/security.md says how to
 * hand a session to another tenant role.
 */

/*
 * Issue 14: a summary node's depth in the DAG (0 for a leaf, one more than
 * the deepest node it consumed for a condensed one), added before the tenant
 * column so that the tenant stays each table's last column, as in a fresh
 * install.
 */
ALTER TABLE mnemo.summary_nodes ADD COLUMN depth integer NOT NULL DEFAULT 0 CHECK (depth >= 0);

/* the append-only guard gives way to privileges (doc/security.md) */
DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['sessions', 'messages', 'message_parts',
                             'context_items', 'summary_nodes', 'summary_edges',
                             'file_references']
    LOOP
        EXECUTE format('DROP TRIGGER guard ON mnemo.%I', t);
        EXECUTE format('DROP TRIGGER guard_truncate ON mnemo.%I', t);
    END LOOP;
END
$$;
DROP FUNCTION mnemo._guard();

/* every row carries its tenant, the owner's for the rows already there */
DO $$
DECLARE
    t text;
    owner text := (SELECT r.rolname FROM pg_catalog.pg_extension e
                     JOIN pg_catalog.pg_roles r ON r.oid = e.extowner
                    WHERE e.extname = 'mnemo');
BEGIN
    FOREACH t IN ARRAY ARRAY['sessions', 'messages', 'message_parts',
                             'context_items', 'summary_nodes', 'summary_edges',
                             'file_references']
    LOOP
        EXECUTE format('ALTER TABLE mnemo.%I ADD COLUMN tenant text NOT NULL DEFAULT %L', t, owner);
        EXECUTE format('ALTER TABLE mnemo.%I ALTER COLUMN tenant DROP DEFAULT', t);
    END LOOP;
END
$$;

/* sessions: no per-node sequence; newest first by (created_at, id) */
ALTER EXTENSION mnemo DROP SEQUENCE mnemo.sessions_ordinal_seq;
ALTER TABLE mnemo.sessions DROP COLUMN ordinal;
CREATE INDEX sessions_created_idx ON mnemo.sessions (created_at, id);
CREATE INDEX sessions_parent_id_idx ON mnemo.sessions (parent_id, created_at, id) WHERE parent_id IS NOT NULL;

/* keys: unique within the session, never on id alone */
ALTER TABLE mnemo.messages DROP CONSTRAINT messages_pkey;
DROP INDEX mnemo.messages_id_key;
ALTER TABLE mnemo.messages ADD PRIMARY KEY (session_id, id);
ALTER TABLE mnemo.messages ADD UNIQUE (session_id, seq);
COMMENT ON TABLE mnemo.messages IS 'the append-only message log; seq is dense per session, in commit order; ids are unique within their session';

ALTER TABLE mnemo.message_parts DROP CONSTRAINT message_parts_pkey;
DROP INDEX mnemo.message_parts_id_key;
ALTER TABLE mnemo.message_parts ADD PRIMARY KEY (session_id, id);
ALTER TABLE mnemo.message_parts ADD UNIQUE (session_id, message_id, part_index);

ALTER TABLE mnemo.file_references DROP CONSTRAINT file_references_pkey;
ALTER TABLE mnemo.file_references ADD PRIMARY KEY (tenant, content_id);
COMMENT ON TABLE mnemo.file_references IS 'content-addressed cache of large files: one row per tenant and sha256 content id';

CREATE TABLE mnemo.tenants (
    tenant      text PRIMARY KEY,
    channel     text NOT NULL UNIQUE
);
COMMENT ON TABLE mnemo.tenants IS 'each tenant''s NOTIFY channel: "mnemo_" and 128 random bits, made on first use; a tenant reads only its own row';

SELECT pg_catalog.pg_extension_config_dump('mnemo.tenants', '');

/* functions that act on one session take its id first */
DROP FUNCTION mnemo.append_part(text, jsonb);
DROP FUNCTION mnemo.update_part_status(text, text, bigint, bigint, bigint, text, text);
DROP FUNCTION mnemo.update_message_tokens(text, jsonb, double precision, text);
DROP FUNCTION mnemo.tombstone_part(text);
DROP FUNCTION mnemo.expand_summary(text, boolean);
DROP FUNCTION mnemo.get_message(text);
DROP FUNCTION mnemo.get_parts(text);
DROP FUNCTION mnemo.get_messages_with_parts_by_ids(text[]);
DROP FUNCTION mnemo.watch(text);

CREATE FUNCTION mnemo.tenant_visible(tenant text) RETURNS boolean
    LANGUAGE c STABLE PARALLEL SAFE STRICT
    AS 'MODULE_PATHNAME', 'mnemo_tenant_visible';
COMMENT ON FUNCTION mnemo.tenant_visible(text) IS 'whether the current role may see the rows of tenant: it has the privileges of that role (superusers and BYPASSRLS roles see all); the row-level security policy of every mnemo table';

CREATE FUNCTION mnemo.watch(session_id text) RETURNS text
    LANGUAGE c VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_watch';
COMMENT ON FUNCTION mnemo.watch(text) IS 'committed writes on this session send a NOTIFY (with mnemo.notify = watched) on its tenant''s channel, whose name it returns';

CREATE FUNCTION mnemo.append_part(session_id text, message_id text, part jsonb) RETURNS integer
    LANGUAGE c VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_append_part';
COMMENT ON FUNCTION mnemo.append_part(text, text, jsonb) IS 'adds one part to a message (streaming) and returns its part_index';

CREATE FUNCTION mnemo.update_part_status(
    session_id text,
    part_id text,
    tool_state text DEFAULT NULL,
    compacted_at bigint DEFAULT NULL,
    started_at bigint DEFAULT NULL,
    completed_at bigint DEFAULT NULL,
    output text DEFAULT NULL,
    error_message text DEFAULT NULL)
    RETURNS void
    LANGUAGE c VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_update_part_status';
COMMENT ON FUNCTION mnemo.update_part_status(text, text, text, bigint, bigint, bigint, text, text) IS 'changes a part''s status fields (NULL leaves a field as it is); output and error_message are merged into its content';

CREATE FUNCTION mnemo.update_message_tokens(
    session_id text,
    message_id text,
    tokens jsonb,
    cost double precision DEFAULT NULL,
    finish_reason text DEFAULT NULL)
    RETURNS void
    LANGUAGE c VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_update_message_tokens';
COMMENT ON FUNCTION mnemo.update_message_tokens(text, text, jsonb, double precision, text) IS 'records token usage ({"input","output","cache_read","cache_write","reasoning"}), cost and finish reason on a message';

CREATE FUNCTION mnemo.tombstone_part(session_id text, part_id text) RETURNS bigint
    LANGUAGE c VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_tombstone_part';
COMMENT ON FUNCTION mnemo.tombstone_part(text, text) IS 'sets compacted_at on a part and returns it; a second call returns the first value';

CREATE FUNCTION mnemo.expand_summary(session_id text, summary_id text, recursive boolean DEFAULT false)
    RETURNS SETOF mnemo.expansion
    LANGUAGE c STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_expand_summary';
COMMENT ON FUNCTION mnemo.expand_summary(text, text, boolean) IS 'what a summary node covers, in order; with recursive, down through the DAG to the original messages, depth first';

CREATE FUNCTION mnemo.get_message(session_id text, message_id text) RETURNS mnemo.messages
    LANGUAGE c STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_get_message';
COMMENT ON FUNCTION mnemo.get_message(text, text) IS 'one message row of a session; MN002 if it does not exist';

CREATE FUNCTION mnemo.get_parts(session_id text, message_id text) RETURNS SETOF mnemo.message_parts
    LANGUAGE c STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_get_parts';
COMMENT ON FUNCTION mnemo.get_parts(text, text) IS 'a message''s parts in part_index order; MN002 if the message does not exist';

CREATE FUNCTION mnemo.get_messages_with_parts_by_ids(session_id text, ids text[])
    RETURNS SETOF mnemo.message_with_parts
    LANGUAGE c STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_get_messages_with_parts_by_ids';
COMMENT ON FUNCTION mnemo.get_messages_with_parts_by_ids(text, text[]) IS 'the named messages of a session with their parts, in the order given; MN002 if one does not exist';

/* ------------------------------------------------------------------------
 * Tenancy and privileges (doc/security.md)
 *
 * Row-level security on every table: a role sees the rows of the tenants
 * whose privileges it has (mnemo.tenant_visible).  The functions write with
 * the extension owner's rights, which RLS does not restrict, and filter by
 * tenant themselves.  Nobody but the owner may write a table directly: an
 * application role is granted USAGE on the schema, SELECT on the tables and
 * EXECUTE on the functions (PUBLIC has EXECUTE on all but purge_session).
 * ------------------------------------------------------------------------ */

DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['sessions', 'messages', 'message_parts', 'context_items',
                             'summary_nodes', 'summary_edges', 'file_references', 'tenants']
    LOOP
        EXECUTE format('ALTER TABLE mnemo.%I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('CREATE POLICY tenant_rows ON mnemo.%I '
                       'USING (mnemo.tenant_visible(tenant)) WITH CHECK (mnemo.tenant_visible(tenant))', t);
        EXECUTE format('REVOKE ALL ON mnemo.%I FROM PUBLIC', t);
    END LOOP;
END
$$;
REVOKE ALL ON SEQUENCE mnemo.file_references_ordinal_seq FROM PUBLIC;

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

/*
 * Rows written before 0.2.0 that the CHECKs below would refuse are brought
 * within them first (only cost, the token counts, metadata and state could
 * hold such values, and they are all columns 0.1.0's guard lets change).
 */
UPDATE mnemo.messages SET cost = 0 WHERE NOT (cost >= 0 AND cost < 'Infinity'::double precision);
UPDATE mnemo.messages SET tokens_input = greatest(tokens_input, 0),
       tokens_output = greatest(tokens_output, 0), tokens_cache_read = greatest(tokens_cache_read, 0),
       tokens_cache_write = greatest(tokens_cache_write, 0), tokens_reasoning = greatest(tokens_reasoning, 0)
 WHERE least(tokens_input, tokens_output, tokens_cache_read, tokens_cache_write, tokens_reasoning) < 0;
UPDATE mnemo.sessions SET metadata = jsonb_build_object('value', metadata)
 WHERE jsonb_typeof(metadata) <> 'object';
UPDATE mnemo.sessions SET state = jsonb_build_object('value', state) WHERE jsonb_typeof(state) <> 'object';

/*
 * Integrity the functions check and the table keeps for every other writer
 * (a restore, a superuser): finite non-negative cost, non-negative counts and
 * times, metadata and state objects.  The functions refuse such values first
 * with 22023; these CHECKs (23514) are the backstop.  See doc/limits.md.
 */
ALTER TABLE mnemo.sessions
    ADD CONSTRAINT sessions_times_check CHECK (created_at >= 0 AND updated_at >= 0),
    ADD CONSTRAINT sessions_metadata_check CHECK (metadata IS NULL OR jsonb_typeof(metadata) = 'object'),
    ADD CONSTRAINT sessions_state_check CHECK (jsonb_typeof(state) = 'object'),
    ADD CONSTRAINT sessions_counters_check CHECK (last_seq >= 0 AND last_position >= 0);
ALTER TABLE mnemo.messages
    ADD CONSTRAINT messages_cost_check CHECK (cost >= 0 AND cost < 'Infinity'::double precision),
    ADD CONSTRAINT messages_tokens_check CHECK (tokens_input >= 0 AND tokens_output >= 0
        AND tokens_cache_read >= 0 AND tokens_cache_write >= 0 AND tokens_reasoning >= 0),
    ADD CONSTRAINT messages_created_at_check CHECK (created_at >= 0);
ALTER TABLE mnemo.message_parts
    ADD CONSTRAINT message_parts_times_check CHECK (compacted_at >= 0 AND started_at >= 0
        AND completed_at >= 0),
    ADD CONSTRAINT message_parts_token_estimate_check CHECK (token_estimate >= 0);
ALTER TABLE mnemo.context_items
    ADD CONSTRAINT context_items_created_at_check CHECK (created_at >= 0);
ALTER TABLE mnemo.summary_nodes
    ADD CONSTRAINT summary_nodes_counts_check CHECK (token_count >= 0 AND created_at >= 0
        AND seq_start <= seq_end);
ALTER TABLE mnemo.file_references
    ADD CONSTRAINT file_references_counts_check CHECK (token_count >= 0 AND created_at >= 0);

/* turn_context: a turn's context, parts of its assistant messages and budget in one call */
CREATE TYPE mnemo.turn_context_row AS (
    "position"  bigint,
    item_type   text,
    item_id     text,
    role        text,
    content     text,
    tokens      integer,
    parts       jsonb,
    budget      mnemo.context_budget
);
COMMENT ON TYPE mnemo.turn_context_row IS 'a row of turn_context: a context entry with its parts (assistant messages), or the last row, item_type budget, with the budget report';

CREATE FUNCTION mnemo.turn_context(session_id text, budget_tokens integer)
    RETURNS SETOF mnemo.turn_context_row
    LANGUAGE c STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_turn_context';
COMMENT ON FUNCTION mnemo.turn_context(text, integer) IS 'what a chat turn reads in one call, the context assembled once: build_context''s rows with the parts of assistant messages, then a budget row holding context_report';

/* ------------------------------------------------------------------------
 * Compaction (issue 14): the compaction claim, commit_summary's holder, the
 * block picker, Level 3 and the file-id footer (node depth is at the top).
 * ------------------------------------------------------------------------ */

CREATE TABLE mnemo.compaction_claims (
    session_id  text PRIMARY KEY,
    holder      text NOT NULL,
    claimed_at  bigint NOT NULL,
    expires_at  bigint NOT NULL,
    tenant      text NOT NULL
);
COMMENT ON TABLE mnemo.compaction_claims IS 'one compactor per session: the holder of each session''s compaction lease, until expires_at (ms); not dumped, a lease does not outlive its compactor';

ALTER TABLE mnemo.compaction_claims ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_rows ON mnemo.compaction_claims
    USING (mnemo.tenant_visible(tenant)) WITH CHECK (mnemo.tenant_visible(tenant));
REVOKE ALL ON mnemo.compaction_claims FROM PUBLIC;

DROP FUNCTION mnemo.commit_summary(text, text, text, integer, text[], text, integer, text, text);
CREATE FUNCTION mnemo.commit_summary(
    session_id text,
    summary_id text,
    content text,
    token_count integer,
    remove_item_ids text[],
    kind text DEFAULT 'leaf',
    level integer DEFAULT 1,
    model_id text DEFAULT NULL,
    provider_id text DEFAULT NULL,
    holder text DEFAULT NULL)
    RETURNS bigint
    LANGUAGE c VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_commit_summary';
COMMENT ON FUNCTION mnemo.commit_summary(text, text, text, integer, text[], text, integer, text, text, text) IS 'in one atomic call: the summary message, its DAG node and provenance, the supersession of consumed nodes and the context swap; returns the summary''s position; MN006 and no change if an item is no longer in context, or if holder is given and does not hold the session''s compaction claim';

/* ------------------------------------------------------------------------
 * Compaction: the deterministic half (doc/compaction.md)
 * ------------------------------------------------------------------------ */

CREATE TYPE mnemo.compaction_block AS (
    kind        text,
    depth       integer,
    item_ids    text[],
    content     text,
    tokens      integer,
    file_ids    text[]
);
COMMENT ON TYPE mnemo.compaction_block IS 'what to summarise next: the items (messages for a leaf, summary nodes of one depth for a condensation), their rendered transcript, its token estimate and the file ids found in it';

CREATE FUNCTION mnemo.compaction_block(
    session_id text,
    kind text DEFAULT 'leaf',
    tail_messages integer DEFAULT 8,
    max_tokens integer DEFAULT 20000,
    min_items integer DEFAULT 3,
    item_chars integer DEFAULT NULL)
    RETURNS SETOF mnemo.compaction_block
    LANGUAGE c STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_compaction_block';
COMMENT ON FUNCTION mnemo.compaction_block(text, text, integer, integer, integer, integer) IS 'the oldest contiguous block of the context view outside the fresh tail (the two latest user turns and the last tail_messages messages): messages for kind leaf, summary nodes of one depth for kind condensed; at least min_items, no more than max_tokens beyond them; no row when there is none; item_chars cuts each item in the transcript';

CREATE FUNCTION mnemo.file_id_footer(content text, file_ids text[] DEFAULT '{}')
    RETURNS text
    LANGUAGE c IMMUTABLE PARALLEL SAFE
    AS 'MODULE_PATHNAME', 'mnemo_file_id_footer';
COMMENT ON FUNCTION mnemo.file_id_footer(text, text[]) IS 'content with its file-id footer "[LCM File IDs: ...]" replaced by one naming the ids found in it, then file_ids, each once in first-seen order; no footer when there are none';

CREATE FUNCTION mnemo.truncate_summary(content text, max_tokens integer DEFAULT 512)
    RETURNS text
    LANGUAGE c IMMUTABLE PARALLEL SAFE
    AS 'MODULE_PATHNAME', 'mnemo_truncate_summary';
COMMENT ON FUNCTION mnemo.truncate_summary(text, integer) IS 'Level 3, deterministic: the start of content cut to fit max_tokens with a truncation marker, and the footer of every file id in the whole content; never fails';

CREATE FUNCTION mnemo.claim_compaction(session_id text, holder text, ttl_ms integer DEFAULT 60000)
    RETURNS boolean
    LANGUAGE c VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_claim_compaction';
COMMENT ON FUNCTION mnemo.claim_compaction(text, text, integer) IS 'takes or renews the session''s compaction lease for ttl_ms; false while another holder''s lease has not expired';

CREATE FUNCTION mnemo.release_compaction(session_id text, holder text)
    RETURNS boolean
    LANGUAGE c VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_release_compaction';
COMMENT ON FUNCTION mnemo.release_compaction(text, text) IS 'ends holder''s compaction lease on the session; false if holder did not hold it';
