/* mnemo 0.3.0 -> 0.4.0: ALTER EXTENSION mnemo UPDATE TO '0.4.0' */

\echo Use "ALTER EXTENSION mnemo UPDATE TO '0.4.0'" to load this file. \quit

/*
 * Every change made to mnemo--0.4.0.sql is made here too, so that a
 * database updated step by step from 0.1.0 and a fresh 0.4.0 install have
 * the same schema (the upgrade test, test/upgrade.sh, compares them).
 */

/*
 * Search at any size (issue 36): a search reads its page newest first down
 * (session_id, seq, part_index) of search_documents, and indexes a bounded
 * slice per call (src/search.c, src/search_index.c).
 */
ALTER TABLE mnemo.search_documents ADD COLUMN seq bigint;
UPDATE mnemo.search_documents d SET seq = m.seq
  FROM mnemo.messages m WHERE m.session_id = d.session_id AND m.id = d.message_id;
ALTER TABLE mnemo.search_documents ALTER COLUMN seq SET NOT NULL;
ALTER TABLE mnemo.search_documents DROP CONSTRAINT search_documents_pkey,
    ADD PRIMARY KEY (session_id, seq, part_index);
COMMENT ON TABLE mnemo.search_documents IS 'the searched words of each indexed part (configuration simple, the first 100,000 characters of its text fields), keyed by the message''s seq';

DROP FUNCTION mnemo.search_history(text, text, integer);
CREATE FUNCTION mnemo.search_history(session_id text, query text, "limit" integer DEFAULT 50,
                                     ranked boolean DEFAULT false)
    RETURNS SETOF mnemo.search_hit
    LANGUAGE c VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_search_history';
COMMENT ON FUNCTION mnemo.search_history(text, text, integer, boolean) IS 'full-text search (config simple, websearch syntax) over the whole log of a session, compacted parts included: one row per message, newest first, or with ranked by rank among the newest 1,000 matching messages (a NOTICE says when there were more); indexes at most 500 waiting messages first (none in a read-only transaction), searches the newest 2,000 not yet indexed directly, and says with a NOTICE how many it could not search';

DROP FUNCTION mnemo.index_search(text);
CREATE FUNCTION mnemo.index_search(session_id text, max_messages integer DEFAULT 10000)
    RETURNS bigint
    LANGUAGE c VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_index_search';
COMMENT ON FUNCTION mnemo.index_search(text, integer) IS 'indexes for search_history the parts of at most max_messages of the session''s messages appended or changed since it was last indexed, the changed ones and then the oldest first; returns the number of part documents written; for a scheduled job (pg_cron) or the client, called until search_pending is 0';

/* Recall (issue 35): recall_search (src/recall.c). */
CREATE FUNCTION mnemo.recall_search(session_id text, pattern text, regex boolean DEFAULT false,
                                    summary_id text DEFAULT NULL, "limit" integer DEFAULT 20,
                                    before_seq bigint DEFAULT NULL)
    RETURNS TABLE (message_id text, seq bigint, role text, snippet text, in_context boolean,
                   covered_by text)
    LANGUAGE c VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_recall_search';
COMMENT ON FUNCTION mnemo.recall_search(text, text, boolean, text, integer, bigint) IS 'recall: search the session''s whole line, newest first, for full-text words or (regex) a regular expression over the newest 5,000 messages, optionally under one summary node''s span and before a seq (the next page); each hit with its message, seq, role, a snippet, whether it is in context, and covered_by, the summary of the context view that covers it';

/* recall: what a summary covers, rendered for a model (recall_expand.c) */

CREATE TYPE mnemo.recall_item AS (
    ordinal     integer,
    item_type   text,
    item_id     text,
    seq         bigint,
    role        text,
    content     text,
    tokens      integer,
    items       integer
);
COMMENT ON TYPE mnemo.recall_item IS 'one item a summary covers, rendered for a model by recall_expand: its place among the summary''s items (ordinal of items), the text and its token estimate';

CREATE FUNCTION mnemo.recall_expand(session_id text, summary_id text, "offset" integer DEFAULT 0,
                                    max_tokens integer DEFAULT 4000)
    RETURNS SETOF mnemo.recall_item
    LANGUAGE c STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_recall_expand';
COMMENT ON FUNCTION mnemo.recall_expand(text, text, integer, integer) IS 'the model''s lcm_expand: the items a summary covers (messages, or the summaries it condensed), after offset, rendered as build_context renders them but with tombstoned outputs whole, while their tokens stay within max_tokens (the first item cut to it)';

-- Flat context and swaps (issue 36): a swap finds the items it names by id,
-- so that it costs its block, not the view (src/swap.c).
CREATE INDEX context_items_item_idx ON mnemo.context_items (session_id, generation, item_id);

/* ---- Compaction that reaches its budget (issue 30) ---- */

/*
 * compaction_block protects by a share of the budget when given
 * protect_tokens, and lone_tokens lets a short run over it through.
 */
DROP FUNCTION mnemo.compaction_block(text, text, integer, integer, integer, integer);
CREATE FUNCTION mnemo.compaction_block(
    session_id text,
    kind text DEFAULT 'leaf',
    tail_messages integer DEFAULT 8,
    max_tokens integer DEFAULT 20000,
    min_items integer DEFAULT 3,
    item_chars integer DEFAULT NULL,
    protect_tokens integer DEFAULT NULL,
    lone_tokens integer DEFAULT NULL)
    RETURNS SETOF mnemo.compaction_block
    LANGUAGE c STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_compaction_block';
COMMENT ON FUNCTION mnemo.compaction_block(text, text, integer, integer, integer, integer, integer, integer) IS 'the oldest contiguous block of the context view outside the fresh tail (the two latest user turns and the last tail_messages messages; or, with protect_tokens, the newest messages within protect_tokens, the latest user message and the task while it fits): messages for kind leaf, summary nodes of one depth (of any, with protect_tokens, when none is left) for kind condensed; at least min_items, or fewer over lone_tokens, no more than max_tokens beyond them; no row when there is none; item_chars cuts each item in the transcript';


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

/* compaction_holder: a dead compactor's claim ended without reading the table (claim.c) */
CREATE FUNCTION mnemo.compaction_holder(session_id text) RETURNS text
    LANGUAGE c STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_compaction_holder';
COMMENT ON FUNCTION mnemo.compaction_holder(text) IS 'who holds the session''s compaction claim now, expired or not (NULL: nobody): to end a dead compactor''s claim with release_compaction';
