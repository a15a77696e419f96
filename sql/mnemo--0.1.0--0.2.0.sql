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
