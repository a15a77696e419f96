/* mnemo 0.1.0 -> 0.2.0: ALTER EXTENSION mnemo UPDATE TO '0.2.0' */

\echo Use "ALTER EXTENSION mnemo UPDATE TO '0.2.0'" to load this file. \quit

/*
 * Every change made to mnemo--0.2.0.sql is made here too, so that an
 * upgraded database and a fresh 0.2.0 install have the same schema (the
 * upgrade test compares them).
 */

-- Issue 14: a summary node's depth in the DAG (0 for a leaf, one more than
-- the deepest node it consumed for a condensed one).  First in the script,
-- so that the tenant column added below stays the table's last, as in a
-- fresh install.
ALTER TABLE mnemo.summary_nodes ADD COLUMN depth integer NOT NULL DEFAULT 0 CHECK (depth >= 0);

/* ------------------------------------------------------------------------
 * Compaction (issue 14): the compaction claim, commit_summary's holder, the
 * block picker, Level 3 and the file-id footer (node depth is at the top).
 * Written for the tenancy changes above it (the tenant column,
 * mnemo.tenant_visible).
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

