/* mnemo 0.13.0: append-only storage engine for LLM agent sessions */

\echo Use "CREATE EXTENSION mnemo" to load this file. \quit

/*
 * A schema named mnemo that the installing role does not own would let its
 * owner drop the extension's objects and data with DROP SCHEMA ... CASCADE.
 * CREATE EXTENSION uses an existing schema as it finds it, so refuse one
 * that somebody else owns; it is left untouched.
 */
DO $$
BEGIN
    IF (SELECT n.nspowner FROM pg_catalog.pg_namespace n WHERE n.nspname = 'mnemo')
       IS DISTINCT FROM (SELECT r.oid FROM pg_catalog.pg_roles r WHERE r.rolname = current_user) THEN
        RAISE EXCEPTION 'schema "mnemo" already exists and is owned by role "%", not by "%"',
            (SELECT n.nspowner::regrole FROM pg_catalog.pg_namespace n WHERE n.nspname = 'mnemo'),
            current_user
            USING ERRCODE = 'insufficient_privilege',
                  HINT = 'Drop that schema, or install mnemo as its owner.';
    END IF;
END
$$;

/* ------------------------------------------------------------------------
 * Tables
 *
 * Every key leads with (session_id, tenant) (file_references and blobs
 * aside: their keys lead with the tenant), so the data set can be
 * distributed by session: a session id is unique within its tenant, and
 * other ids within their session, never alone.  Every row carries its tenant, the role
 * whose data it is (see doc/security.md); a child row copies its session's.
 * Times are unix milliseconds.  Rows are written only through the functions
 * below, which run their statements with the extension owner's rights;
 * application roles hold SELECT and EXECUTE only.  There are no foreign keys:
 * the functions check existence under the session lock they already
 * hold, and an RI trigger per append would double the work on the hot path.
 * The tenant follows a table's 0.1.0 columns, as an upgrade from 0.1.0 adds
 * it; columns added since follow the tenant, as their upgrades add them.
 * ------------------------------------------------------------------------ */

CREATE TABLE mnemo.sessions (
    id              text NOT NULL,
    parent_id       text,
    created_at      bigint NOT NULL,
    updated_at      bigint NOT NULL,
    model_id        text NOT NULL DEFAULT '',
    provider_id     text NOT NULL DEFAULT '',
    agent           text NOT NULL DEFAULT 'default',
    title           text,
    is_active       boolean NOT NULL DEFAULT true,
    metadata        jsonb,
    system_prompt   text NOT NULL DEFAULT '',
    state           jsonb NOT NULL DEFAULT '{}',
    watched         boolean NOT NULL DEFAULT false,
    tenant          text NOT NULL,
    -- the generation of context_items that is the session's view now, and
    -- how many of its rows swaps deleted in place (src/context/swap.c)
    context_generation bigint NOT NULL DEFAULT 0,
    context_dead    bigint NOT NULL DEFAULT 0,
    -- a fork: the seq its inheritance ends at (its own seqs follow), and
    -- the run it was forked after; NULL for a session that is not a fork
    fork_seq        bigint,
    fork_run        text,
    -- how many forks refer to this session's messages (purge refuses while
    -- any does), and how many resumes discarded a suffix of it
    forks           bigint NOT NULL DEFAULT 0,
    discards        bigint NOT NULL DEFAULT 0,
    -- the session's messages after this seq that are not summaries are the
    -- implicit tail of its context view, at position = seq: an append
    -- writes no context_items row (src/context/swap.c, src/core/mnemo.h)
    context_tail_seq bigint NOT NULL DEFAULT 0,
    -- a session id is unique within its tenant
    PRIMARY KEY (id, tenant)
);
COMMENT ON TABLE mnemo.sessions IS 'one row per session, which an append does not write (its seqs follow the session''s newest message, under the session''s write lock); context_generation names the live generation of its context view, whose messages after context_tail_seq are its implicit tail';
-- list_sessions: newest first, (created_at, id) descending (ids are time-ordered),
-- optionally among one parent's children.
CREATE INDEX sessions_created_idx ON mnemo.sessions (created_at, id);
CREATE INDEX sessions_parent_id_idx ON mnemo.sessions (parent_id, created_at, id) WHERE parent_id IS NOT NULL;

-- The log: one row per part of each message, the message's own columns on
-- its part 0 row and NULL on the others (a message without parts has a part
-- 0 row without a part: part_type NULL).  A turn of two one-part messages
-- writes two rows and their key entries, where a table of messages beside
-- one of parts wrote four (bench/profiles/one_table.txt).  The views
-- mnemo.messages and mnemo.message_parts below read it as those two tables.
CREATE TABLE mnemo.log (
    session_id          text NOT NULL,
    tenant              text NOT NULL,
    seq                 bigint NOT NULL,
    part_index          integer NOT NULL,
    -- the message, on part 0 only
    id                  text,
    role                text,
    created_at          bigint,
    agent               text,
    model_id            text,
    provider_id         text,
    run_id              text,
    is_summary          boolean,
    -- the counts and the cost of a reply, NULL until update_message_tokens
    -- sets them (most messages never get any: 48 bytes a row not stored);
    -- every function reads a NULL as 0 (MNEMO_MESSAGE_COLUMNS, reads.h)
    tokens_input        bigint,
    tokens_output       bigint,
    tokens_cache_read   bigint,
    tokens_cache_write  bigint,
    tokens_reasoning    bigint,
    cost                double precision,
    finish_reason       text,
    -- the part; part_id is the id its caller gave, NULL (since 0.10.0) when
    -- the part's id is derived from its place, "<message id>:<part_index>"
    -- (src/reads/part_ids.c)
    part_id             text,
    part_type           text,
    content             jsonb,
    tool_name           text,
    tool_call_id        text,
    tool_state          text,
    compacted_at        bigint,
    started_at          bigint,
    completed_at        bigint,
    token_estimate      integer,
    -- a message's rows are the key's range (session_id, tenant, seq); a
    -- history read walks it once
    PRIMARY KEY (session_id, tenant, seq, part_index)
);
COMMENT ON TABLE mnemo.log IS 'the append-only message log, one row per part: a message''s columns on its part 0 row, NULL on its others (a message without parts: one row, part_type NULL); seq is dense per session, in commit order; content is immutable, status columns change through update_part_status and tombstone_part; read as the views mnemo.messages and mnemo.message_parts';
-- message ids are unique within their session; only part 0 rows hold one
CREATE UNIQUE INDEX log_id_key ON mnemo.log (session_id, tenant, id) WHERE id IS NOT NULL;
-- only the part ids callers gave are unique here: a derived one is unique
-- because its message's id is
CREATE UNIQUE INDEX log_part_id_key ON mnemo.log (session_id, tenant, part_id)
    WHERE part_id IS NOT NULL;
COMMENT ON INDEX mnemo.log_part_id_key IS 'the part ids callers gave, unique within a session; a part stored without one has the id <message id>:<part_index>';
-- last_summary: only summary rows enter this index.
CREATE INDEX log_summary_idx ON mnemo.log (session_id, tenant, seq) WHERE is_summary;
-- compaction_block: the latest user messages of a view and its first (the
-- task), however far back, in O(log n) (src/context/context_walk.c).  Only user
-- messages enter it: an agent's tool steps and replies pay nothing.
CREATE INDEX log_user_idx ON mnemo.log (session_id, tenant, seq) WHERE role = 'user' AND NOT is_summary;

CREATE TABLE mnemo.context_items (
    session_id  text NOT NULL,
    position    bigint NOT NULL,
    item_type   text NOT NULL,
    item_id     text NOT NULL,
    -- the item's message seq: assembly reads the messages by primary key
    seq         bigint NOT NULL,
    created_at  bigint NOT NULL,
    tenant      text NOT NULL,
    -- sessions.context_generation when written: a swap writes the surviving
    -- view as the next generation, so that a read, an index range scan over
    -- (session_id, generation), never steps over swapped-out rows
    generation  bigint NOT NULL,
    -- reads scan a generation's range in position order; the functions
    -- keep an item in a view at most once
    PRIMARY KEY (session_id, tenant, generation, position)
);
COMMENT ON TABLE mnemo.context_items IS 'the explicit rows of the ordered view of what is in context now, as of its session''s context_generation; the view continues with the session''s messages after its context_tail_seq; a swap replaces a span with one summary row at its smallest position';
-- A swap finds the items it names by id (src/context/swap.c), so that it costs its
-- block, not the view.  Appends write no context row (the implicit tail),
-- so this index costs a btree entry per row a swap writes, not per message.
CREATE INDEX context_items_item_idx ON mnemo.context_items (session_id, tenant, generation, item_id);

CREATE TABLE mnemo.summary_nodes (
    session_id      text NOT NULL,
    id              text NOT NULL,
    kind            text NOT NULL CHECK (kind IN ('leaf', 'condensed')),
    level           integer NOT NULL CHECK (level BETWEEN 1 AND 3),
    token_count     integer NOT NULL DEFAULT 0,
    seq_start       bigint NOT NULL,
    seq_end         bigint NOT NULL,
    created_at      bigint NOT NULL,
    superseded_by   text,
    -- 0 for a leaf, one more than the deepest node it consumed for a condensed one
    depth           integer NOT NULL DEFAULT 0 CHECK (depth >= 0),
    tenant          text NOT NULL,
    PRIMARY KEY (session_id, tenant, id)
);
COMMENT ON TABLE mnemo.summary_nodes IS 'the compaction DAG: one node per summary message, over messages (leaf) or nodes (condensed); seq_start..seq_end is the span of original messages it covers';

CREATE TABLE mnemo.summary_edges (
    session_id  text NOT NULL,
    summary_id  text NOT NULL,
    ordinal     integer NOT NULL,
    item_type   text NOT NULL CHECK (item_type IN ('message', 'summary')),
    item_id     text NOT NULL,
    tenant      text NOT NULL,
    PRIMARY KEY (session_id, tenant, summary_id, ordinal)
);
COMMENT ON TABLE mnemo.summary_edges IS 'provenance: which message or node each summary node covers, in order';
-- "which summary covers this item": an index lookup
CREATE INDEX summary_edges_item_idx ON mnemo.summary_edges (session_id, tenant, item_id);

CREATE TABLE mnemo.file_references (
    content_id          text NOT NULL,
    path                text NOT NULL,
    file_type           text NOT NULL DEFAULT 'unknown',
    token_count         integer NOT NULL DEFAULT 0,
    exploration_summary text NOT NULL DEFAULT '',
    created_at          bigint NOT NULL,
    -- store order, renewed by every store: "most recent" within one ms
    ordinal             bigserial NOT NULL,
    tenant              text NOT NULL,
    PRIMARY KEY (tenant, content_id)
);
COMMENT ON TABLE mnemo.file_references IS 'content-addressed cache of large files: one row per tenant and sha256 content id';
-- get_file_reference_by_path.  A hash index: paths may be longer than a
-- btree entry allows, and the few rows of one path are sorted after the fetch.
CREATE INDEX file_references_path_idx ON mnemo.file_references USING hash (path);

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

CREATE TABLE mnemo.compaction_claims (
    session_id  text NOT NULL,
    holder      text NOT NULL,
    claimed_at  bigint NOT NULL,
    expires_at  bigint NOT NULL,
    tenant      text NOT NULL,
    PRIMARY KEY (session_id, tenant)
);
COMMENT ON TABLE mnemo.compaction_claims IS 'one compactor per session: the holder of each session''s compaction lease, until expires_at (ms); not dumped, a lease does not outlive its compactor';

CREATE TABLE mnemo.checkpoints (
    session_id  text NOT NULL,
    label       text NOT NULL,
    -- the session's last seq when it was added: it covers seqs 1 .. seq
    seq         bigint NOT NULL CHECK (seq >= 0),
    created_at  bigint NOT NULL CHECK (created_at >= 0),
    auto        boolean NOT NULL DEFAULT false,
    tenant      text NOT NULL,
    PRIMARY KEY (session_id, tenant, label)
);
COMMENT ON TABLE mnemo.checkpoints IS 'named points in a session''s log: label (unique per session), the session''s last seq when added, and whether the runtime added it (auto)';

CREATE TABLE mnemo.runs (
    session_id      text NOT NULL,
    run_id          text NOT NULL,
    claimed_at      bigint NOT NULL CHECK (claimed_at >= 0),
    completed_at    bigint CHECK (completed_at >= 0),
    -- 1, 2, ... in the order the session's runs completed; NULL in flight
    completion_seq  bigint CHECK (completion_seq >= 1),
    tenant          text NOT NULL,
    PRIMARY KEY (session_id, tenant, run_id),
    UNIQUE (session_id, tenant, completion_seq),
    CHECK ((completed_at IS NULL) = (completion_seq IS NULL))
);
COMMENT ON TABLE mnemo.runs IS 'claimed runs of a session: in flight until completed_at, then ordered by completion_seq; messages name their run in messages.run_id';

CREATE TABLE mnemo.pending_requests (
    session_id  text NOT NULL,
    request     jsonb NOT NULL CHECK (jsonb_typeof(request) = 'object'),
    run_id      text,
    created_at  bigint NOT NULL CHECK (created_at >= 0),
    tenant      text NOT NULL,
    PRIMARY KEY (session_id, tenant)
);
COMMENT ON TABLE mnemo.pending_requests IS 'the human-in-the-loop request a session waits on, at most one, with the run that asked it';

CREATE TABLE mnemo.lineage (
    session_id  text NOT NULL,
    -- the seqs seq_from .. seq_to of ancestor_id's messages are the fork's
    seq_from    bigint NOT NULL CHECK (seq_from >= 1),
    seq_to      bigint NOT NULL,
    ancestor_id text NOT NULL,
    tenant      text NOT NULL,
    PRIMARY KEY (session_id, tenant, seq_from),
    CHECK (seq_to >= seq_from)
);
COMMENT ON TABLE mnemo.lineage IS 'what a fork inherits: ranges of seqs of its ancestors'' messages, read in place (src/lineage.c); written once, by fork_session';

CREATE TABLE mnemo.discarded (
    session_id  text NOT NULL,
    seq_from    bigint NOT NULL CHECK (seq_from >= 1),
    seq_to      bigint NOT NULL,
    -- the checkpoint resumed to, and when
    label       text NOT NULL,
    discarded_at bigint NOT NULL CHECK (discarded_at >= 0),
    tenant      text NOT NULL,
    PRIMARY KEY (session_id, tenant, seq_from),
    CHECK (seq_to >= seq_from)
);
COMMENT ON TABLE mnemo.discarded IS 'the seq ranges of a session''s own messages that resume_session took off its live line: still stored, listed by list_discarded';

CREATE TABLE mnemo.maps (
    -- the parent session that owns the map
    session_id    text NOT NULL,
    map_id        text NOT NULL,
    kind          text NOT NULL CHECK (kind IN ('llm', 'agentic')),
    template      text NOT NULL,
    -- the output JSON schema items are validated against, if any
    schema        jsonb,
    options       jsonb NOT NULL CHECK (jsonb_typeof(options) = 'object'),
    item_count    integer NOT NULL CHECK (item_count >= 1),
    -- items done or failed, which numbers their completion order
    finished      integer NOT NULL DEFAULT 0,
    created_at    bigint NOT NULL CHECK (created_at >= 0),
    completed_at  bigint CHECK (completed_at >= 0),
    tenant        text NOT NULL,
    PRIMARY KEY (session_id, tenant, map_id),
    CHECK (finished BETWEEN 0 AND item_count),
    CHECK ((completed_at IS NOT NULL) = (finished = item_count))
);
COMMENT ON TABLE mnemo.maps IS 'durable maps (LLMMap, AgenticMap) owned by a session: the prompt template, output schema and options; completed_at once every item is done or failed';

CREATE TABLE mnemo.map_items (
    session_id      text NOT NULL,
    map_id          text NOT NULL,
    ordinal         integer NOT NULL CHECK (ordinal >= 0),
    item            jsonb NOT NULL,
    state           text NOT NULL DEFAULT 'pending'
                    CHECK (state IN ('pending', 'running', 'done', 'failed')),
    -- how many times a worker claimed it
    claims          integer NOT NULL DEFAULT 0 CHECK (claims >= 0),
    lease_holder    text,
    lease_expires   bigint,
    result          jsonb,
    error_kind      text CHECK (error_kind IN ('timeout', 'validation', 'llm_error', 'schema_error',
                                               'max_turns', 'doom_loop')),
    error           text,
    -- model calls the finishing worker made for it
    attempts        integer CHECK (attempts >= 0),
    -- AgenticMap: the item's sub-session
    sub_session_id  text,
    -- 1, 2, ... in the order the map's items finished; NULL until then
    completion_seq  integer CHECK (completion_seq >= 1),
    completed_at    bigint CHECK (completed_at >= 0),
    tenant          text NOT NULL,
    PRIMARY KEY (session_id, tenant, map_id, ordinal),
    UNIQUE (session_id, tenant, map_id, completion_seq),
    CHECK ((state IN ('done', 'failed')) = (completion_seq IS NOT NULL)),
    CHECK ((state = 'running') = (lease_holder IS NOT NULL)),
    CHECK ((state = 'failed') = (error_kind IS NOT NULL))
);
COMMENT ON TABLE mnemo.map_items IS 'the items of a map, one row each: pending, running under a worker''s lease, then done (result) or failed (error_kind, error) exactly once, numbered by completion_seq';
-- claims scan only the items not yet finished, however many are
CREATE INDEX map_items_open_idx ON mnemo.map_items (session_id, tenant, map_id, ordinal)
    WHERE state IN ('pending', 'running');

CREATE TABLE mnemo.tenants (
    tenant      text PRIMARY KEY,
    channel     text NOT NULL UNIQUE,
    role_id     oid
);
COMMENT ON TABLE mnemo.tenants IS 'the registry of tenants, made on first use: each tenant''s NOTIFY channel ("mnemo_" and 128 random bits) and the OID of the role it belongs to (a role created later under a dropped role''s name is not that tenant)';

/*
 * Integrity the functions check and the table keeps for every other writer
 * (a restore, a superuser): roles, part and item types and tool states from
 * their lists, finite non-negative cost, non-negative counts and times,
 * metadata and state objects.  The functions refuse such values first with
 * 22023; these CHECKs (23514) are the backstop.  See doc/limits.md.  The
 * tables an append writes have one CHECK each, a call of a C function over
 * the columns (src/core/row_checks.c): the executor prepares every CHECK of a
 * table anew for each statement, and one call over plain columns is the
 * cheapest expression to prepare.  Not strict: NULL passes where the column
 * allows it, as in a CHECK.
 */
CREATE FUNCTION mnemo._check_session(created_at bigint, updated_at bigint, metadata jsonb,
                                     state jsonb, fork_seq bigint, forks bigint, discards bigint)
    RETURNS boolean LANGUAGE c IMMUTABLE PARALLEL SAFE
    AS 'MODULE_PATHNAME', 'mnemo_check_session';
COMMENT ON FUNCTION mnemo._check_session(bigint, bigint, jsonb, jsonb, bigint, bigint, bigint) IS 'the CHECK of mnemo.sessions: times, counters, fork_seq, forks and discards >= 0; metadata NULL or an object; state an object';
CREATE FUNCTION mnemo._check_log_row(part_index integer, id text, role text, created_at bigint,
                                     agent text, model_id text, provider_id text,
                                     is_summary boolean, cost double precision,
                                     tokens_input bigint, tokens_output bigint,
                                     tokens_cache_read bigint, tokens_cache_write bigint,
                                     tokens_reasoning bigint, part_type text, content jsonb,
                                     tool_state text, token_estimate integer,
                                     compacted_at bigint, started_at bigint,
                                     completed_at bigint)
    RETURNS boolean LANGUAGE c IMMUTABLE PARALLEL SAFE
    AS 'MODULE_PATHNAME', 'mnemo_check_log_row';
COMMENT ON FUNCTION mnemo._check_log_row(integer, text, text, bigint, text, text, text, boolean, double precision, bigint, bigint, bigint, bigint, bigint, text, jsonb, text, integer, bigint, bigint, bigint) IS 'the CHECK of mnemo.log: part_index >= 0; on part 0 the message''s id, role (user, assistant, system or tool), created_at, agent, model_id, provider_id and is_summary set, on the others none of the message''s columns; cost finite and >= 0; created_at and the token counts >= 0; part_type and content both set or, on a part 0 row of a message without parts, neither with every part column NULL; tool_state NULL or pending, running, completed, error; token_estimate and the times >= 0';
CREATE FUNCTION mnemo._check_context_item(item_type text, created_at bigint)
    RETURNS boolean LANGUAGE c IMMUTABLE PARALLEL SAFE
    AS 'MODULE_PATHNAME', 'mnemo_check_context_item';
COMMENT ON FUNCTION mnemo._check_context_item(text, bigint) IS 'the CHECK of mnemo.context_items: item_type message or summary; created_at >= 0';
CREATE FUNCTION mnemo._base64(bytes bytea) RETURNS text
    LANGUAGE c IMMUTABLE STRICT PARALLEL SAFE
    AS 'MODULE_PATHNAME', 'mnemo_base64';
COMMENT ON FUNCTION mnemo._base64(bytea) IS 'the base64 of bytes without line breaks: a stored image''s data as it was appended (reads of parts)';

ALTER TABLE mnemo.sessions ADD CONSTRAINT sessions_row_check
    CHECK (mnemo._check_session(created_at, updated_at, metadata, state, fork_seq, forks, discards));
ALTER TABLE mnemo.log ADD CONSTRAINT log_row_check
    CHECK (mnemo._check_log_row(part_index, id, role, created_at, agent, model_id, provider_id,
                                is_summary, cost, tokens_input, tokens_output, tokens_cache_read,
                                tokens_cache_write, tokens_reasoning, part_type, content,
                                tool_state, token_estimate, compacted_at, started_at,
                                completed_at));
ALTER TABLE mnemo.context_items ADD CONSTRAINT context_items_row_check
    CHECK (mnemo._check_context_item(item_type, created_at));
ALTER TABLE mnemo.summary_nodes
    ADD CONSTRAINT summary_nodes_counts_check CHECK (token_count >= 0 AND created_at >= 0
        AND seq_start <= seq_end);
ALTER TABLE mnemo.file_references
    ADD CONSTRAINT file_references_counts_check CHECK (token_count >= 0 AND created_at >= 0);

-- search_history: full-text search over every part ever appended, indexed
-- off the append path (src/reads/search_index.c).  An append writes nothing for
-- search: a session's messages past its search_progress.indexed_seq (up to
-- its newest message) wait to be indexed, and
-- a later change of what an indexed message's parts say queues its seq.
-- index_search (which search_history runs first) turns the parts of those
-- messages into documents, one tsvector per part, the expression SEARCH_TSV
-- of src/reads/search.h, a short part's without its positions (strip;
-- src/reads/search_words.c says how a phrase is still matched).
CREATE TABLE mnemo.search_progress (
    session_id  text NOT NULL,
    -- the session's own messages up to this seq are indexed
    indexed_seq bigint NOT NULL,
    tenant      text NOT NULL,
    PRIMARY KEY (session_id, tenant)
);
COMMENT ON TABLE mnemo.search_progress IS 'how far index_search has indexed each session''s messages: seqs past indexed_seq, up to the session''s newest message, wait to be indexed; no row: none of the session''s own messages is indexed yet';
CREATE TABLE mnemo.search_queue (
    session_id  text NOT NULL,
    seq_from    bigint NOT NULL,
    seq_to      bigint NOT NULL,
    tenant      text NOT NULL,
    PRIMARY KEY (session_id, tenant, seq_from, seq_to)
);
COMMENT ON TABLE mnemo.search_queue IS 'messages indexed already whose parts changed since (append_part, an output merged by update_part_status), as seq ranges, to index again; index_search (run by search_history) drains a session''s';

CREATE TABLE mnemo.search_documents (
    session_id  text NOT NULL,
    part_index  integer NOT NULL,
    tsv         tsvector NOT NULL,
    tenant      text NOT NULL,
    -- the message's seq (last: added in 0.4.0).  search_history reads a
    -- session's documents newest first down this key and stops at its page
    -- (src/reads/search.c)
    seq         bigint NOT NULL,
    PRIMARY KEY (session_id, tenant, seq, part_index)
);
COMMENT ON TABLE mnemo.search_documents IS 'the searched words of each indexed part, a part shorter than 1,024 characters'' without their positions (configuration simple, the first 100,000 characters of its text fields), keyed by the message''s seq';
-- Written by drains only, so the pending list's flush stalls a drain, never
-- an append.
CREATE INDEX search_documents_tsv_idx ON mnemo.search_documents USING gin (tsv);

/* ------------------------------------------------------------------------
 * The hash-partitioned layout (doc/scale-out.md)
 *
 * With mnemo.partitions = N (> 0) in the session that runs CREATE EXTENSION,
 * every table that has a session column is rebuilt here as a table
 * hash-partitioned by it into N partitions, <table>_p0 .. <table>_p<N-1>.
 * PostgreSQL then holds the schema to Citus's rules: every unique key must
 * include the session column, and each statement that filters by one session
 * is pruned to one partition (test/partitioned/). Tables without a session
 * column (file_references, blobs) stay as they are: under Citus they are reference
 * tables.
 *
 * The rebuild (mnemo._partition_by_session) is derived from the catalog,
 * not from a copy of the definitions above.  It runs here, after the tables
 * and their indexes and before anything depends on a table (a function
 * returning its row type would be dropped with it, so the DROP refuses
 * instead): after install a table cannot become partitioned in place.
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

DO $$
DECLARE
    modulus integer := coalesce(nullif(current_setting('mnemo.partitions', true), ''), '0')::integer;
    t regclass;
BEGIN
    IF modulus < 0 THEN
        RAISE EXCEPTION 'mnemo.partitions must be 0 or more, not %', modulus
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    FOR t IN
        SELECT c.oid
          FROM pg_class c
          JOIN pg_depend d ON d.classid = 'pg_class'::regclass AND d.objid = c.oid
                          AND d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
          JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'mnemo'
         WHERE modulus > 0 AND c.relkind = 'r' AND mnemo._session_column(c.oid) IS NOT NULL
         ORDER BY c.relname
    LOOP
        PERFORM mnemo._partition_by_session(t, modulus);
    END LOOP;
END
$$;

/*
 * The log read as a table of messages and one of parts, as they were stored
 * until 0.13.0: the functions' reads, and a superuser's, go through them
 * (an index of the log answers each).  security_invoker: a role reads
 * through them what its own rights on mnemo.log allow, which is nothing
 * unless granted.
 */
CREATE VIEW mnemo.messages WITH (security_invoker = true) AS
SELECT session_id, seq, id, role, created_at, agent, model_id, provider_id, run_id, is_summary,
       tokens_input, tokens_output, tokens_cache_read, tokens_cache_write, tokens_reasoning,
       cost, finish_reason, tenant
  FROM mnemo.log
 WHERE part_index = 0;
COMMENT ON VIEW mnemo.messages IS 'the messages: the part 0 rows of mnemo.log, with the message''s columns; seq is dense per session, in commit order; ids are unique within their session';
CREATE VIEW mnemo.message_parts WITH (security_invoker = true) AS
SELECT session_id, part_index, part_id AS id, part_type, content, tool_name, tool_call_id,
       tool_state, compacted_at, started_at, completed_at, token_estimate, tenant, seq
  FROM mnemo.log
 WHERE part_type IS NOT NULL;
COMMENT ON VIEW mnemo.message_parts IS 'the parts of each message: the rows of mnemo.log that hold one; id is the id its caller gave, NULL when derived (<message id>:<part_index>)';

/* pg_dump includes the rows of these tables; see README "Backups". */
SELECT pg_catalog.pg_extension_config_dump('mnemo.sessions', '');
SELECT pg_catalog.pg_extension_config_dump('mnemo.log', '');
SELECT pg_catalog.pg_extension_config_dump('mnemo.context_items', '');
SELECT pg_catalog.pg_extension_config_dump('mnemo.summary_nodes', '');
SELECT pg_catalog.pg_extension_config_dump('mnemo.summary_edges', '');
SELECT pg_catalog.pg_extension_config_dump('mnemo.file_references', '');
SELECT pg_catalog.pg_extension_config_dump('mnemo.blobs', '');
SELECT pg_catalog.pg_extension_config_dump('mnemo.tenants', '');
SELECT pg_catalog.pg_extension_config_dump('mnemo.search_progress', '');
SELECT pg_catalog.pg_extension_config_dump('mnemo.search_queue', '');
SELECT pg_catalog.pg_extension_config_dump('mnemo.search_documents', '');
SELECT pg_catalog.pg_extension_config_dump('mnemo.file_references_ordinal_seq', '');
SELECT pg_catalog.pg_extension_config_dump('mnemo.checkpoints', '');
SELECT pg_catalog.pg_extension_config_dump('mnemo.runs', '');
SELECT pg_catalog.pg_extension_config_dump('mnemo.pending_requests', '');
SELECT pg_catalog.pg_extension_config_dump('mnemo.lineage', '');
SELECT pg_catalog.pg_extension_config_dump('mnemo.discarded', '');
SELECT pg_catalog.pg_extension_config_dump('mnemo.maps', '');
SELECT pg_catalog.pg_extension_config_dump('mnemo.map_items', '');
-- In the hash-partitioned layout the rows are in the partitions, and pg_dump
-- writes the rows of an extension's member tables only when they are
-- registered: so each partition of a table registered above is too (one
-- statement a partition: each registration updates the extension's row).
DO $$
DECLARE
    part regclass;
BEGIN
    FOR part IN
        SELECT i.inhrelid::regclass
          FROM pg_catalog.pg_inherits i
          JOIN pg_catalog.pg_class c ON c.oid = i.inhrelid AND c.relkind = 'r'
          JOIN pg_catalog.pg_extension e ON e.extname = 'mnemo' AND i.inhparent = ANY (e.extconfig)
    LOOP
        PERFORM pg_catalog.pg_extension_config_dump(part, '');
    END LOOP;
END
$$;

/* ------------------------------------------------------------------------
 * Result types
 * ------------------------------------------------------------------------ */

CREATE TYPE mnemo.message_ref AS (id text, seq bigint);
COMMENT ON TYPE mnemo.message_ref IS 'what an append returns: the message id and its seq in the session';

CREATE TYPE mnemo.message_with_parts AS (
    id                  text,
    session_id          text,
    seq                 bigint,
    role                text,
    created_at          bigint,
    agent               text,
    model_id            text,
    provider_id         text,
    run_id              text,
    is_summary          boolean,
    tokens_input        bigint,
    tokens_output       bigint,
    tokens_cache_read   bigint,
    tokens_cache_write  bigint,
    tokens_reasoning    bigint,
    cost                double precision,
    finish_reason       text,
    parts               jsonb
);
COMMENT ON TYPE mnemo.message_with_parts IS 'a message row with its parts as a jsonb array in part_index order';

CREATE TYPE mnemo.message_flat AS (
    id                  text,
    session_id          text,
    seq                 bigint,
    role                text,
    created_at          bigint,
    agent               text,
    model_id            text,
    provider_id         text,
    run_id              text,
    is_summary          boolean,
    tokens_input        bigint,
    tokens_output       bigint,
    tokens_cache_read   bigint,
    tokens_cache_write  bigint,
    tokens_reasoning    bigint,
    cost                double precision,
    finish_reason       text,
    part_id             text,
    part_index          integer,
    content             json,
    tool_state          text,
    compacted_at        bigint,
    started_at          bigint,
    completed_at        bigint,
    token_estimate      integer
);
COMMENT ON TYPE mnemo.message_flat IS 'a row of get_messages_flat: a message''s columns beside one of its parts'' (part_id is the part''s id; content its stored object, which holds its type, tool_name and tool_call_id); NULL part columns for a message without parts';

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

CREATE TYPE mnemo.context_item AS (item_type text, item_id text, "position" bigint);

CREATE TYPE mnemo.expansion AS (
    depth       integer,
    summary_id  text,
    item_type   text,
    item_id     text,
    seq         bigint,
    role        text,
    parts       jsonb
);
COMMENT ON TYPE mnemo.expansion IS 'one item a summary node covers: the node (summary_id), the item, and the item''s message with its parts';

CREATE TYPE mnemo.context_entry AS (
    "position"  bigint,
    item_type   text,
    item_id     text,
    role        text,
    content     text,
    tokens      integer
);
COMMENT ON TYPE mnemo.context_entry IS 'one message of an assembled context: its rendered content and token estimate';

CREATE TYPE mnemo.context_budget AS (
    budget_tokens   integer,
    summary_tokens  bigint,
    included_items  integer,
    included_tokens bigint,
    omitted_items   integer,
    omitted_tokens  bigint
);
COMMENT ON TYPE mnemo.context_budget IS 'what build_context keeps and leaves out of a session''s context view for a budget';

/* ------------------------------------------------------------------------
 * Utilities
 * ------------------------------------------------------------------------ */

CREATE FUNCTION mnemo.version() RETURNS text
    LANGUAGE c IMMUTABLE PARALLEL SAFE STRICT
    AS 'MODULE_PATHNAME', 'mnemo_version';
COMMENT ON FUNCTION mnemo.version() IS 'version of the loaded mnemo library';

CREATE FUNCTION mnemo.new_id(prefix text) RETURNS text
    LANGUAGE c VOLATILE PARALLEL RESTRICTED
    AS 'MODULE_PATHNAME', 'mnemo_new_id';
COMMENT ON FUNCTION mnemo.new_id(text) IS 'a time-ordered unique id: prefix, underscore, 26 Crockford base32 characters (48-bit ms time, 80 random bits)';

CREATE FUNCTION mnemo.tenant_visible(tenant text) RETURNS boolean
    LANGUAGE c STABLE PARALLEL SAFE STRICT
    AS 'MODULE_PATHNAME', 'mnemo_tenant_visible';
COMMENT ON FUNCTION mnemo.tenant_visible(text) IS 'whether the current role may see the rows of tenant: it has the privileges of that role (superusers and BYPASSRLS roles see all); the row-level security policy of every mnemo table';

CREATE FUNCTION mnemo.estimate_tokens(text text) RETURNS integer
    LANGUAGE c IMMUTABLE PARALLEL SAFE STRICT
    AS 'MODULE_PATHNAME', 'mnemo_estimate_tokens';
COMMENT ON FUNCTION mnemo.estimate_tokens(text) IS 'the one token estimator: 0 for empty text, otherwise max(1, characters / 4)';

/* ------------------------------------------------------------------------
 * Sessions
 * ------------------------------------------------------------------------ */

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

CREATE FUNCTION mnemo.soft_delete_session(id text) RETURNS void
    LANGUAGE c VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_soft_delete_session';
COMMENT ON FUNCTION mnemo.soft_delete_session(text) IS 'marks a session inactive; its rows stay readable and further appends fail with MN012';

CREATE FUNCTION mnemo.purge_session(id text) RETURNS bigint
    LANGUAGE c VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_purge_session';
COMMENT ON FUNCTION mnemo.purge_session(text) IS 'deletes a session and every row it owns (right to erasure); returns the number of messages deleted';
REVOKE ALL ON FUNCTION mnemo.purge_session(text) FROM PUBLIC;

-- A tenant is the role it was registered with (mnemo.tenants.role_id); after
-- DROP ROLE its rows belong to nobody until a superuser hands them over here
-- (or purges them: doc/security.md).  from_tenant = to_role rebinds the name
-- to the role that has it now.
CREATE FUNCTION mnemo.reassign_tenant(from_tenant text, to_role name) RETURNS bigint
    LANGUAGE c VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_reassign_tenant';
COMMENT ON FUNCTION mnemo.reassign_tenant(text, name) IS 'hands every row of tenant from_tenant (a dropped role''s, say) to the role to_role with a new channel, or rebinds a name to the role that has it now; returns the number of sessions moved; 23505, changing nothing, when both tenants have a session of one id or a file reference to the same content; a superuser''s';
REVOKE ALL ON FUNCTION mnemo.reassign_tenant(text, name) FROM PUBLIC;

CREATE FUNCTION mnemo.watch(session_id text) RETURNS text
    LANGUAGE c VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_watch';
COMMENT ON FUNCTION mnemo.watch(text) IS 'committed writes on this session send a NOTIFY (with mnemo.notify = watched) on its tenant''s channel, whose name it returns';

CREATE FUNCTION mnemo.unwatch(session_id text) RETURNS void
    LANGUAGE c VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_unwatch';
COMMENT ON FUNCTION mnemo.unwatch(text) IS 'stops the notifications that watch started';

/* ------------------------------------------------------------------------
 * Appends
 * ------------------------------------------------------------------------ */

CREATE FUNCTION mnemo.append_message(
    session_id text,
    role text,
    parts jsonb,
    id text DEFAULT NULL,
    agent text DEFAULT NULL,
    model_id text DEFAULT NULL,
    provider_id text DEFAULT NULL,
    run_id text DEFAULT NULL,
    is_summary boolean DEFAULT false)
    RETURNS mnemo.message_ref
    LANGUAGE c VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_append_message';
COMMENT ON FUNCTION mnemo.append_message(text, text, jsonb, text, text, text, text, text, boolean) IS 'stores a message, its parts and (unless is_summary) its context item in one call; returns its id and seq';

CREATE FUNCTION mnemo.append_messages(session_id text, messages jsonb)
    RETURNS SETOF mnemo.message_ref
    LANGUAGE c VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_append_messages';
COMMENT ON FUNCTION mnemo.append_messages(text, jsonb) IS 'appends a JSON array of messages ({"role", "parts", optional "id", "agent", "model_id", "provider_id", "run_id"}) atomically';

CREATE FUNCTION mnemo.append_part(session_id text, message_id text, part jsonb) RETURNS integer
    LANGUAGE c VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_append_part';
COMMENT ON FUNCTION mnemo.append_part(text, text, jsonb) IS 'adds one part to a message (streaming) and returns its part_index';

/* ------------------------------------------------------------------------
 * Status changes and tombstones
 * ------------------------------------------------------------------------ */

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

/* ------------------------------------------------------------------------
 * Context view
 * ------------------------------------------------------------------------ */

CREATE FUNCTION mnemo.swap_context_items(session_id text, remove_item_ids text[], summary_id text)
    RETURNS bigint
    LANGUAGE c VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_swap_context_items';
COMMENT ON FUNCTION mnemo.swap_context_items(text, text[], text) IS 'atomically replaces the named context items with one summary item at their smallest position, which it returns; MN006 and no change if any id is not in context';

CREATE FUNCTION mnemo.build_context(session_id text, budget_tokens integer)
    RETURNS SETOF mnemo.context_entry
    LANGUAGE c STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_build_context';
COMMENT ON FUNCTION mnemo.build_context(text, integer) IS 'the assembled context in position order: every summary, then the newest messages that fit the budget, rendered as the seed''s ContextBuilder renders them';

CREATE FUNCTION mnemo.context_report(session_id text, budget_tokens integer)
    RETURNS mnemo.context_budget
    LANGUAGE c STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_context_report';
COMMENT ON FUNCTION mnemo.context_report(text, integer) IS 'what build_context keeps and leaves out for this budget: counts and tokens';

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
 * The summary DAG
 * ------------------------------------------------------------------------ */

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
    holder text DEFAULT NULL,
    created_at bigint DEFAULT NULL,
    part_ids text[] DEFAULT NULL,
    metadata jsonb DEFAULT NULL,
    annotate_tokens integer DEFAULT NULL)
    RETURNS bigint
    LANGUAGE c VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_commit_summary';
COMMENT ON FUNCTION mnemo.commit_summary(text, text, text, integer, text[], text, integer, text, text, text, bigint, text[], jsonb, integer) IS 'in one atomic call: the summary message, its DAG node and provenance, the supersession of consumed nodes and the context swap; returns the summary''s position; MN006 and no change if an item is no longer in context, or if holder is given and does not hold the session''s compaction claim; created_at (unix ms, now when NULL) and part_ids (of its text and marker parts) restore a summary''s time and ids, metadata (an object) is kept in its text part; with annotate_tokens, the text is stored after a header (id, kind, depth, span) and an "Expand for details about" line (file ids, paths, tools it covers) of at most that many tokens, and token_count grows by what they add';

CREATE FUNCTION mnemo.expand_summary(session_id text, summary_id text, recursive boolean DEFAULT false)
    RETURNS SETOF mnemo.expansion
    LANGUAGE c STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_expand_summary';
COMMENT ON FUNCTION mnemo.expand_summary(text, text, boolean) IS 'what a summary node covers, in order; with recursive, down through the DAG to the original messages, depth first';

CREATE FUNCTION mnemo.summary_nodes(session_id text, include_superseded boolean DEFAULT false)
    RETURNS SETOF mnemo.summary_nodes
    LANGUAGE c STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_summary_nodes';
COMMENT ON FUNCTION mnemo.summary_nodes(text, boolean) IS 'the session''s summary DAG nodes in span order, without superseded ones unless asked';

/* ------------------------------------------------------------------------
 * Reads
 * ------------------------------------------------------------------------ */

CREATE FUNCTION mnemo.get_message(session_id text, message_id text) RETURNS mnemo.messages
    LANGUAGE c STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_get_message';
COMMENT ON FUNCTION mnemo.get_message(text, text) IS 'one message row of a session; MN002 if it does not exist';

CREATE FUNCTION mnemo.get_messages(session_id text, since_message_id text DEFAULT NULL)
    RETURNS SETOF mnemo.messages
    LANGUAGE c STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_get_messages';
COMMENT ON FUNCTION mnemo.get_messages(text, text) IS 'a session''s messages in seq order, optionally only those after since_message_id';

CREATE FUNCTION mnemo.get_messages_after(session_id text, after_seq bigint, "limit" integer DEFAULT NULL)
    RETURNS SETOF mnemo.messages
    LANGUAGE c STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_get_messages_after';
COMMENT ON FUNCTION mnemo.get_messages_after(text, bigint, integer) IS 'a session''s messages past after_seq in seq order, at most "limit" (all when NULL): a follower''s page, costing its rows';

CREATE FUNCTION mnemo.get_parts(session_id text, message_id text) RETURNS SETOF mnemo.message_part
    LANGUAGE c STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_get_parts';
COMMENT ON FUNCTION mnemo.get_parts(text, text) IS 'a message''s parts in part_index order; MN002 if the message does not exist';

CREATE FUNCTION mnemo.get_messages_with_parts(session_id text, since_message_id text DEFAULT NULL)
    RETURNS SETOF mnemo.message_with_parts
    LANGUAGE c STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_get_messages_with_parts';
COMMENT ON FUNCTION mnemo.get_messages_with_parts(text, text) IS 'a session''s messages with their parts, in seq order, in one call';

CREATE FUNCTION mnemo.get_messages_flat(session_id text, since_message_id text DEFAULT NULL)
    RETURNS SETOF mnemo.message_flat
    LANGUAGE c STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_get_messages_flat';
COMMENT ON FUNCTION mnemo.get_messages_flat(text, text) IS 'a session''s messages with their parts as rows, one per part beside its message''s columns, in (seq, part_index) order, nothing assembled: what get_messages_with_parts returns, in less time (doc/benchmarks.md, history loads)';

CREATE FUNCTION mnemo.get_messages_with_parts_by_ids(session_id text, ids text[])
    RETURNS SETOF mnemo.message_with_parts
    LANGUAGE c STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_get_messages_with_parts_by_ids';
COMMENT ON FUNCTION mnemo.get_messages_with_parts_by_ids(text, text[]) IS 'the named messages of a session with their parts, in the order given; MN002 if one does not exist';

CREATE FUNCTION mnemo.history(session_id text, "limit" integer DEFAULT NULL)
    RETURNS SETOF mnemo.message_with_parts
    LANGUAGE c STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_history';
COMMENT ON FUNCTION mnemo.history(text, integer) IS 'the last "limit" messages of a session (all when NULL) with their parts, oldest first';

CREATE FUNCTION mnemo.get_context_items(session_id text)
    RETURNS SETOF mnemo.context_item
    LANGUAGE c STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_get_context_items';
COMMENT ON FUNCTION mnemo.get_context_items(text) IS 'the session''s context view in position order';

CREATE FUNCTION mnemo.last_summary(session_id text) RETURNS mnemo.messages
    LANGUAGE c STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_last_summary';
COMMENT ON FUNCTION mnemo.last_summary(text) IS 'the session''s most recent summary message, or NULL';

/* ------------------------------------------------------------------------
 * File references
 * ------------------------------------------------------------------------ */

CREATE FUNCTION mnemo.store_file_reference(
    content_id text,
    path text,
    file_type text DEFAULT 'unknown',
    token_count integer DEFAULT 0,
    exploration_summary text DEFAULT '')
    RETURNS mnemo.file_references
    LANGUAGE c VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_store_file_reference';
COMMENT ON FUNCTION mnemo.store_file_reference(text, text, text, integer, text) IS 'inserts or replaces the file reference with this content id';

CREATE FUNCTION mnemo.get_file_reference(content_id text) RETURNS mnemo.file_references
    LANGUAGE c STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_get_file_reference';
COMMENT ON FUNCTION mnemo.get_file_reference(text) IS 'the file reference with this content id, or NULL';

CREATE FUNCTION mnemo.get_file_reference_by_path(path text) RETURNS mnemo.file_references
    LANGUAGE c STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_get_file_reference_by_path';
COMMENT ON FUNCTION mnemo.get_file_reference_by_path(text) IS 'the most recently stored file reference for a path, or NULL';

/* ------------------------------------------------------------------------
 * Pruning and search
 * ------------------------------------------------------------------------ */

CREATE TYPE mnemo.search_hit AS (
    message_id  text,
    seq         bigint,
    role        text,
    in_context  boolean,
    snippet     text,
    rank        real
);
COMMENT ON TYPE mnemo.search_hit IS 'one message found by search_history: where it is, whether it is still in context, a snippet and its rank';

CREATE FUNCTION mnemo.prune_tool_outputs(
    session_id text,
    protect_tokens integer DEFAULT 40000,
    minimum_tokens integer DEFAULT 20000,
    protected_tools text[] DEFAULT '{skill}')
    RETURNS integer
    LANGUAGE c VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_prune_tool_outputs';
COMMENT ON FUNCTION mnemo.prune_tool_outputs(text, integer, integer, text[]) IS 'tombstones completed tool outputs in the context view older than the two latest user turns and newer than the last summary, beyond the newest protect_tokens, if more than minimum_tokens would go; returns the number of parts tombstoned';

CREATE FUNCTION mnemo.search_history(session_id text, query text, "limit" integer DEFAULT 50,
                                     ranked boolean DEFAULT false)
    RETURNS SETOF mnemo.search_hit
    LANGUAGE c VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_search_history';
COMMENT ON FUNCTION mnemo.search_history(text, text, integer, boolean) IS 'full-text search (config simple, websearch syntax) over the whole log of a session, compacted parts included: one row per message, newest first, or with ranked by rank among the newest 1,000 matching messages (a NOTICE says when there were more); indexes at most 500 waiting messages first (none in a read-only transaction), searches the newest 2,000 not yet indexed directly, and says with a NOTICE how many it could not search';

CREATE FUNCTION mnemo.index_search(session_id text, max_messages integer DEFAULT 10000)
    RETURNS bigint
    LANGUAGE c VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_index_search';
COMMENT ON FUNCTION mnemo.index_search(text, integer) IS 'indexes for search_history the parts of at most max_messages of the session''s messages appended or changed since it was last indexed, the changed ones and then the oldest first; returns the number of part documents written; for a scheduled job (pg_cron) or the client, called until search_pending is 0';

CREATE FUNCTION mnemo.recall_search(session_id text, pattern text, regex boolean DEFAULT false,
                                    summary_id text DEFAULT NULL, "limit" integer DEFAULT 20,
                                    before_seq bigint DEFAULT NULL)
    RETURNS TABLE (message_id text, seq bigint, role text, snippet text, in_context boolean,
                   covered_by text)
    LANGUAGE c VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_recall_search';
COMMENT ON FUNCTION mnemo.recall_search(text, text, boolean, text, integer, bigint) IS 'recall: search the session''s whole line, newest first, for full-text words or (regex) a regular expression over the newest 5,000 messages, optionally under one summary node''s span and before a seq (the next page); each hit with its message, seq, role, a snippet, whether it is in context, and covered_by, the summary of the context view that covers it';

CREATE FUNCTION mnemo.search_pending(session_id text)
    RETURNS bigint
    LANGUAGE c STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_search_pending';
COMMENT ON FUNCTION mnemo.search_pending(text) IS 'how many of the session''s messages wait to be indexed for search_history (a message changed after its append counts again)';

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
    item_chars integer DEFAULT NULL,
    protect_tokens integer DEFAULT NULL,
    lone_tokens integer DEFAULT NULL)
    RETURNS SETOF mnemo.compaction_block
    LANGUAGE c STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_compaction_block';
COMMENT ON FUNCTION mnemo.compaction_block(text, text, integer, integer, integer, integer, integer, integer) IS 'the oldest contiguous block of the context view outside the fresh tail (the two latest user turns and the last tail_messages messages; or, with protect_tokens, the newest messages within protect_tokens, the latest user message and the task while it fits): messages for kind leaf, summary nodes of one depth (of any, with protect_tokens, when none is left) for kind condensed; at least min_items, or fewer over lone_tokens, no more than max_tokens beyond them; no row when there is none; item_chars cuts each item in the transcript';

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

CREATE FUNCTION mnemo.release_compaction(session_id text, holder text, outcome text DEFAULT NULL,
                                         tokens_before bigint DEFAULT NULL, tokens_after bigint DEFAULT NULL,
                                         level integer DEFAULT NULL, summary_id text DEFAULT NULL,
                                         error text DEFAULT NULL)
    RETURNS boolean
    LANGUAGE c VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_release_compaction';
COMMENT ON FUNCTION mnemo.release_compaction(text, text, text, bigint, bigint, integer, text, text) IS 'ends holder''s compaction lease on the session; false if holder did not hold it; with outcome (''completed'' or ''failed'') notifies followers of the compaction''s end';

CREATE FUNCTION mnemo.compaction_holder(session_id text) RETURNS text
    LANGUAGE c STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_compaction_holder';
COMMENT ON FUNCTION mnemo.compaction_holder(text) IS 'who holds the session''s compaction claim now, expired or not (NULL: nobody): to end a dead compactor''s claim with release_compaction';

/* ------------------------------------------------------------------------
 * Checkpoints, runs, the pending request and state (issue 16)
 * ------------------------------------------------------------------------ */

CREATE FUNCTION mnemo.add_checkpoint(session_id text, label text, auto boolean DEFAULT false,
                                     seq bigint DEFAULT NULL, created_at bigint DEFAULT NULL)
    RETURNS mnemo.checkpoints
    LANGUAGE c VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_add_checkpoint';
COMMENT ON FUNCTION mnemo.add_checkpoint(text, text, boolean, bigint, bigint) IS 'labels the session''s current end (its last seq, in commit order), or an earlier seq and time when restoring a transcript; MN004 if the label is taken in the session, MN012 if the session is inactive';

CREATE FUNCTION mnemo.list_checkpoints(session_id text)
    RETURNS SETOF mnemo.checkpoints
    LANGUAGE c STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_list_checkpoints';
COMMENT ON FUNCTION mnemo.list_checkpoints(text) IS 'the session''s checkpoints in log order (seq, then the order they were added)';

CREATE FUNCTION mnemo.claim_run(session_id text, run_id text)
    RETURNS mnemo.runs
    LANGUAGE c VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_claim_run';
COMMENT ON FUNCTION mnemo.claim_run(text, text) IS 'claims a run id on the session, once: MN007 while a claim of it is in flight, MN008 once it completed; of concurrent claimants exactly one wins';

CREATE FUNCTION mnemo.complete_run(session_id text, run_id text)
    RETURNS mnemo.runs
    LANGUAGE c VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_complete_run';
COMMENT ON FUNCTION mnemo.complete_run(text, text) IS 'completes a claimed run, giving it the session''s next completion_seq; idempotent (a completed run is returned unchanged); MN009 if it was never claimed';

CREATE FUNCTION mnemo.snapshot(session_id text, after_run_id text)
    RETURNS SETOF mnemo.message_with_parts
    LANGUAGE c STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_snapshot';
COMMENT ON FUNCTION mnemo.snapshot(text, text) IS 'the messages without a run and those of the runs completed at or before after_run_id completed, in seq order, summaries left out; MN010 if after_run_id is not completed';

CREATE FUNCTION mnemo.set_pending_request(session_id text, request jsonb, run_id text DEFAULT NULL)
    RETURNS void
    LANGUAGE c VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_set_pending_request';
COMMENT ON FUNCTION mnemo.set_pending_request(text, jsonb, text) IS 'sets the session''s pending human-in-the-loop request (a JSON object) and the run that asked it, replacing any, in one statement';

CREATE FUNCTION mnemo.clear_pending_request(session_id text)
    RETURNS boolean
    LANGUAGE c VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_clear_pending_request';
COMMENT ON FUNCTION mnemo.clear_pending_request(text) IS 'clears the session''s pending request and its run id; whether one was pending';

CREATE FUNCTION mnemo.load_pending_request(session_id text)
    RETURNS mnemo.pending_requests
    LANGUAGE c STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_load_pending_request';
COMMENT ON FUNCTION mnemo.load_pending_request(text) IS 'the session''s pending request with its run id, read together; NULL when none is pending';

CREATE FUNCTION mnemo.update_state(session_id text, patch jsonb)
    RETURNS jsonb
    LANGUAGE c VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_update_state';
COMMENT ON FUNCTION mnemo.update_state(text, jsonb) IS 'merges a JSON object into the session''s state (state || patch: top-level keys replaced) in one atomic update, and returns the merged state; concurrent patches are all kept';

CREATE FUNCTION mnemo.get_state(session_id text)
    RETURNS jsonb
    LANGUAGE c STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_get_state';
COMMENT ON FUNCTION mnemo.get_state(text) IS 'the session''s state object ({} until update_state)';

CREATE FUNCTION mnemo.fork_session(source_id text, "at" text, new_id text DEFAULT NULL)
    RETURNS mnemo.session
    LANGUAGE c VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_fork_session';
COMMENT ON FUNCTION mnemo.fork_session(text, text, text) IS 'a new session that inherits source_id''s live line up to "at" (a checkpoint label, a seq written as an integer, or ''run:<run id>'' for what snapshot() gives after that completed run) by reference, with the source''s context view as of that point as its own; MN004 if new_id exists, MN011 for an unknown checkpoint, MN010 for a run not completed, 22023 for a seq past the end or discarded, MN012 if the source is inactive';

CREATE FUNCTION mnemo.resume_session(session_id text, checkpoint text)
    RETURNS bigint
    LANGUAGE c VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_resume_session';
COMMENT ON FUNCTION mnemo.resume_session(text, text) IS 'returns the session''s live line and context view to the checkpoint: its messages after it are discarded (kept, listed by list_discarded), new appends take fresh seqs; returns the number of messages discarded; MN011 for an unknown checkpoint, 22023 for one before a fork''s fork point or in a discarded suffix';

CREATE FUNCTION mnemo.list_discarded(session_id text)
    RETURNS SETOF mnemo.message_with_parts
    LANGUAGE c STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_list_discarded';
COMMENT ON FUNCTION mnemo.list_discarded(text) IS 'the session''s messages that resumes discarded, in seq order, with their parts';

/* ------------------------------------------------------------------------
 * Durable maps: LLMMap and AgenticMap items shared by workers (issue 18)
 * ------------------------------------------------------------------------ */

CREATE FUNCTION mnemo.create_map(session_id text, map_id text, items jsonb, template text,
                                 schema jsonb DEFAULT NULL, options jsonb DEFAULT '{}',
                                 kind text DEFAULT 'llm')
    RETURNS mnemo.maps
    LANGUAGE c VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_create_map';
COMMENT ON FUNCTION mnemo.create_map(text, text, jsonb, text, jsonb, jsonb, text) IS 'creates a durable map owned by the session, one pending row per element of the items array (in one statement), and sends map_started; MN004 if the map id is taken in the session';

CREATE FUNCTION mnemo.claim_map_items(session_id text, map_id text, holder text,
                                      n integer DEFAULT 1, lease_ms integer DEFAULT 60000)
    RETURNS SETOF mnemo.map_items
    LANGUAGE c VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_claim_map_items';
COMMENT ON FUNCTION mnemo.claim_map_items(text, text, text, integer, integer) IS 'leases up to n of the map''s pending items, or running items whose lease expired, to holder for lease_ms, skipping rows another claimant has locked; concurrent claimants never get the same item';

CREATE FUNCTION mnemo.complete_map_item(session_id text, map_id text, ordinal integer, holder text,
                                        result jsonb, attempts integer DEFAULT 1,
                                        sub_session_id text DEFAULT NULL)
    RETURNS integer
    LANGUAGE c VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_complete_map_item';
COMMENT ON FUNCTION mnemo.complete_map_item(text, text, integer, text, jsonb, integer, text) IS 'records the item''s result if holder holds its lease, gives it the map''s next completion_seq (returned; NULL if holder does not hold it: another worker took it over, or it finished) and sends map_item_completed, and map_completed with the last item';

CREATE FUNCTION mnemo.fail_map_item(session_id text, map_id text, ordinal integer, holder text,
                                    error_kind text, error text, attempts integer DEFAULT 1,
                                    sub_session_id text DEFAULT NULL)
    RETURNS integer
    LANGUAGE c VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_fail_map_item';
COMMENT ON FUNCTION mnemo.fail_map_item(text, text, integer, text, text, text, integer, text) IS 'records the item as failed with an error kind (timeout, validation, llm_error, schema_error, max_turns, doom_loop) if holder holds its lease, as complete_map_item does';

CREATE FUNCTION mnemo.map_status(session_id text, map_id text,
                                 OUT kind text, OUT items integer, OUT done integer,
                                 OUT failed integer, OUT in_flight integer, OUT pending integer,
                                 OUT created_at bigint, OUT completed_at bigint)
    RETURNS record
    LANGUAGE c STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_map_status';
COMMENT ON FUNCTION mnemo.map_status(text, text) IS 'the map''s progress: items done, failed, in flight (under a live lease) and pending (never claimed, or their lease expired)';

CREATE FUNCTION mnemo.map_results(session_id text, map_id text)
    RETURNS SETOF mnemo.map_items
    LANGUAGE c STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_map_results';
COMMENT ON FUNCTION mnemo.map_results(text, text) IS 'the map''s finished items (done and failed) in completion order';

CREATE FUNCTION mnemo.list_maps(session_id text)
    RETURNS SETOF mnemo.maps
    LANGUAGE c STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_list_maps';
COMMENT ON FUNCTION mnemo.list_maps(text) IS 'the maps the session owns, oldest first';

CREATE FUNCTION mnemo.find_map(map_id text)
    RETURNS SETOF mnemo.maps
    LANGUAGE c STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_find_map';
COMMENT ON FUNCTION mnemo.find_map(text) IS 'the maps named map_id in the sessions the caller may see, by session id';

/* ------------------------------------------------------------------------
 * Tenancy and privileges (doc/security.md)
 *
 * Row-level security on every table: a role sees the rows of the tenants
 * whose privileges it has (mnemo.tenant_visible).  The functions write with
 * the extension owner's rights, which RLS does not restrict, and filter by
 * tenant themselves.  Nobody but the owner may read or write a table
 * directly: an application role is granted USAGE on the schema and EXECUTE
 * on the functions (PUBLIC has EXECUTE on all but purge_session and
 * reassign_tenant); a plan over a table would count other tenants' rows.
 * ------------------------------------------------------------------------ */

DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['sessions', 'log', 'context_items',
                             'summary_nodes', 'summary_edges', 'file_references', 'blobs', 'tenants',
                             'compaction_claims', 'search_progress', 'search_queue', 'search_documents',
                             'checkpoints', 'runs', 'pending_requests', 'lineage', 'discarded',
                             'maps', 'map_items']
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
 * Scale-out with Citus (doc/scale-out.md)
 * ------------------------------------------------------------------------ */

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
REVOKE ALL ON FUNCTION mnemo.distribute() FROM PUBLIC;
