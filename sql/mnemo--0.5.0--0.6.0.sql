/* mnemo 0.5.0 -> 0.6.0: ALTER EXTENSION mnemo UPDATE TO '0.6.0' */

\echo Use "ALTER EXTENSION mnemo UPDATE TO '0.6.0'" to load this file. \quit

/*
 * Every change made to mnemo--0.6.0.sql is made here too, so that a
 * database updated step by step from 0.1.0 and a fresh 0.6.0 install have
 * the same schema (the upgrade test, test/upgrade.sh, compares them).
 */

/*
 * An append no longer writes its session's row: its seqs follow the
 * session's newest message, read under a per-session write lock
 * (src/lifecycle/sessions.c), so last_seq and last_position leave the table, and the
 * functions that return a session compute last_seq (and updated_at's
 * newest message) from the messages.  Their result type becomes
 * mnemo.session, which keeps last_seq where it was.
 */
ALTER TABLE mnemo.sessions DROP CONSTRAINT sessions_row_check;
DROP FUNCTION mnemo._check_session(bigint, bigint, jsonb, jsonb, bigint, bigint, bigint, bigint, bigint);
ALTER TABLE mnemo.sessions DROP COLUMN last_seq, DROP COLUMN last_position;
CREATE FUNCTION mnemo._check_session(created_at bigint, updated_at bigint, metadata jsonb,
                                     state jsonb, fork_seq bigint, forks bigint, discards bigint)
    RETURNS boolean LANGUAGE c IMMUTABLE PARALLEL SAFE
    AS 'MODULE_PATHNAME', 'mnemo_check_session';
COMMENT ON FUNCTION mnemo._check_session(bigint, bigint, jsonb, jsonb, bigint, bigint, bigint) IS 'the CHECK of mnemo.sessions: times, counters, fork_seq, forks and discards >= 0; metadata NULL or an object; state an object';
ALTER TABLE mnemo.sessions ADD CONSTRAINT sessions_row_check
    CHECK (mnemo._check_session(created_at, updated_at, metadata, state, fork_seq, forks, discards));
COMMENT ON TABLE mnemo.sessions IS 'one row per session, which an append does not write (its seqs follow the session''s newest message, under the session''s write lock); context_generation names the live generation of its context view, whose messages after context_tail_seq are its implicit tail';
COMMENT ON TABLE mnemo.search_progress IS 'how far index_search has indexed each session''s messages: seqs past indexed_seq, up to the session''s newest message, wait to be indexed; no row: none of the session''s own messages is indexed yet';

DROP FUNCTION mnemo.create_session(text, text, text, text, text, text, jsonb, text, bigint);
DROP FUNCTION mnemo.get_session(text);
DROP FUNCTION mnemo.get_or_create_session(text, text, text, text, text, text, jsonb, text);
DROP FUNCTION mnemo.list_sessions(text, boolean, integer, integer);
DROP FUNCTION mnemo.fork_session(text, text, text);

-- What the session functions return: the session's row, with last_seq
-- (its newest message's seq, else a fork's fork point, else 0) and
-- updated_at (the later of the row's last change and its newest message's
-- created_at) read from its messages, which an append writes without
-- touching the session row.
CREATE TYPE mnemo.session AS (
    id              text,
    parent_id       text,
    created_at      bigint,
    updated_at      bigint,
    model_id        text,
    provider_id     text,
    agent           text,
    title           text,
    is_active       boolean,
    metadata        jsonb,
    system_prompt   text,
    state           jsonb,
    watched         boolean,
    last_seq        bigint,
    tenant          text,
    context_generation bigint,
    context_dead    bigint,
    fork_seq        bigint,
    fork_run        text,
    forks           bigint,
    discards        bigint,
    context_tail_seq bigint
);
COMMENT ON TYPE mnemo.session IS 'a session as the functions return it: its row, with last_seq and updated_at read from its messages';

CREATE FUNCTION mnemo.create_session(
    id text DEFAULT NULL,
    model_id text DEFAULT '',
    provider_id text DEFAULT '',
    agent text DEFAULT 'default',
    parent_id text DEFAULT NULL,
    title text DEFAULT NULL,
    metadata jsonb DEFAULT NULL,
    system_prompt text DEFAULT '',
    created_at bigint DEFAULT NULL)
    RETURNS mnemo.session
    LANGUAGE c VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_create_session';
COMMENT ON FUNCTION mnemo.create_session(text, text, text, text, text, text, jsonb, text, bigint) IS 'creates a session (id generated when NULL; created_at in unix ms, now when NULL); MN004 if the id exists, MN001 if parent_id does not';

CREATE FUNCTION mnemo.get_session(id text) RETURNS mnemo.session
    LANGUAGE c STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_get_session';
COMMENT ON FUNCTION mnemo.get_session(text) IS 'the session row; MN001 if it does not exist';

CREATE FUNCTION mnemo.get_or_create_session(
    id text,
    model_id text DEFAULT '',
    provider_id text DEFAULT '',
    agent text DEFAULT 'default',
    parent_id text DEFAULT NULL,
    title text DEFAULT NULL,
    metadata jsonb DEFAULT NULL,
    system_prompt text DEFAULT '')
    RETURNS mnemo.session
    LANGUAGE c VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_get_or_create_session';
COMMENT ON FUNCTION mnemo.get_or_create_session(text, text, text, text, text, text, jsonb, text) IS 'the existing session with this id, or a new one created with the other arguments; safe against concurrent callers';

CREATE FUNCTION mnemo.list_sessions(
    parent_id text DEFAULT NULL,
    active_only boolean DEFAULT true,
    "limit" integer DEFAULT 100,
    "offset" integer DEFAULT 0)
    RETURNS SETOF mnemo.session
    LANGUAGE c STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_list_sessions';
COMMENT ON FUNCTION mnemo.list_sessions(text, boolean, integer, integer) IS 'sessions newest first, optionally only the children of parent_id and only active ones';

CREATE FUNCTION mnemo.fork_session(source_id text, "at" text, new_id text DEFAULT NULL)
    RETURNS mnemo.session
    LANGUAGE c VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_fork_session';
COMMENT ON FUNCTION mnemo.fork_session(text, text, text) IS 'a new session that inherits source_id''s live line up to "at" (a checkpoint label, a seq written as an integer, or ''run:<run id>'' for what snapshot() gives after that completed run) by reference, with the source''s context view as of that point as its own; MN004 if new_id exists, MN011 for an unknown checkpoint, MN010 for a run not completed, 22023 for a seq past the end or discarded, MN012 if the source is inactive';

/* ------------------------------------------------------------------------
 * Images stored once per tenant, as bytes (src/log/blobs.c)
 * ------------------------------------------------------------------------ */

CREATE TABLE mnemo.blobs (
    sha256      bytea NOT NULL CHECK (octet_length(sha256) = 32),
    bytes       bytea NOT NULL,
    -- the image parts of the tenant's sessions that name it (src/log/blobs.c)
    refs        bigint NOT NULL CHECK (refs > 0),
    created_at  bigint NOT NULL CHECK (created_at >= 0),
    tenant      text NOT NULL,
    PRIMARY KEY (tenant, sha256)
);
COMMENT ON TABLE mnemo.blobs IS 'the bytes of image parts appended as base64, once per tenant and sha256; refs counts the parts that name one';
-- images are compressed already: store them as they are, without trying
ALTER TABLE mnemo.blobs ALTER COLUMN bytes SET STORAGE EXTERNAL;
ALTER TABLE mnemo.blobs ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_rows ON mnemo.blobs
    USING (mnemo.tenant_visible(tenant)) WITH CHECK (mnemo.tenant_visible(tenant));
REVOKE ALL ON mnemo.blobs FROM PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('mnemo.blobs', '');

-- a stored image's base64 back without encode()'s line breaks (src/log/blobs.c)
CREATE FUNCTION mnemo._base64(bytes bytea) RETURNS text
    LANGUAGE c IMMUTABLE STRICT PARALLEL SAFE
    AS 'MODULE_PATHNAME', 'mnemo_base64';
COMMENT ON FUNCTION mnemo._base64(bytea) IS 'the base64 of bytes without line breaks: a stored image''s data as it was appended (reads of parts)';

-- The image parts already stored: those whose data decodes and encodes back
-- to the same string (canonical base64 without line breaks, what an append
-- converts, src/log/blobs.c) now name a blob; any other data stays as it is.
-- The pattern lets only well-formed base64 reach decode(), which would
-- raise on the rest; mnemo._base64 is what every read will give back.
WITH candidates AS (
    SELECT p.session_id, p.id, p.tenant, p.content ->> 'data' AS data,
           pg_catalog.decode(p.content ->> 'data', 'base64') AS bytes
      FROM mnemo.message_parts p
     WHERE p.part_type = 'image' AND pg_catalog.jsonb_typeof(p.content -> 'data') = 'string'
       AND (p.content ->> 'data') ~ '^([A-Za-z0-9+/]{4})*([A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$'
), exact AS MATERIALIZED (
    SELECT c.session_id, c.id, c.tenant, c.bytes, pg_catalog.sha256(c.bytes) AS sha256
      FROM candidates c
     WHERE mnemo._base64(c.bytes) = c.data
), stored AS (
    INSERT INTO mnemo.blobs (sha256, bytes, refs, created_at, tenant)
    SELECT DISTINCT ON (e.tenant, e.sha256) e.sha256, e.bytes,
           pg_catalog.count(*) OVER (PARTITION BY e.tenant, e.sha256),
           (extract(epoch FROM pg_catalog.clock_timestamp()) * 1000)::bigint, e.tenant
      FROM exact e
     ORDER BY e.tenant, e.sha256
)
UPDATE mnemo.message_parts p
   SET content = p.content || pg_catalog.jsonb_build_object('data',
           pg_catalog.jsonb_build_object('sha256', pg_catalog.encode(e.sha256, 'hex'),
                                         'bytes', pg_catalog.octet_length(e.bytes)))
  FROM exact e
 WHERE p.session_id = e.session_id AND p.id = e.id;

-- get_messages_flat costs more than a plain SELECT (doc/benchmarks.md): its comment no longer says it does
COMMENT ON FUNCTION mnemo.get_messages_flat(text, text) IS 'a session''s messages with their parts as rows, one per part beside its message''s columns, in (seq, part_index) order, nothing assembled: what get_messages_with_parts returns, in less time (doc/benchmarks.md, history loads)';
