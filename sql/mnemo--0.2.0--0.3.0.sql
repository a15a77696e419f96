/* mnemo 0.2.0 -> 0.3.0: ALTER EXTENSION mnemo UPDATE TO '0.3.0' */

\echo Use "ALTER EXTENSION mnemo UPDATE TO '0.3.0'" to load this file. \quit

/*
 * Every change made to mnemo--0.3.0.sql is made here too, so that a
 * database updated step by step from 0.1.0 and a fresh 0.3.0 install have
 * the same schema (the upgrade test, test/upgrade.sh, compares them).
 */

/*
 * The session tables this update adds join the install's layout: hash-
 * partitioned as mnemo.sessions is when the install was made with
 * mnemo.partitions > 0 (with as many partitions), rows visible by tenant,
 * no PUBLIC access, their rows dumped.  Dropped at the end of this script.
 */
CREATE FUNCTION mnemo._adopt_session_tables(VARIADIC tabs text[]) RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
    AS $$
DECLARE
    modulus integer := (SELECT count(*) FROM pg_catalog.pg_inherits
                         WHERE inhparent = 'mnemo.sessions'::regclass);
    t text;
BEGIN
    FOREACH t IN ARRAY tabs LOOP
        IF modulus > 0 THEN
            PERFORM mnemo._partition_by_session(format('mnemo.%I', t)::regclass, modulus);
        END IF;
        EXECUTE format('ALTER TABLE mnemo.%I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('CREATE POLICY tenant_rows ON mnemo.%I '
                       'USING (mnemo.tenant_visible(tenant)) WITH CHECK (mnemo.tenant_visible(tenant))', t);
        EXECUTE format('REVOKE ALL ON mnemo.%I FROM PUBLIC', t);
        PERFORM pg_catalog.pg_extension_config_dump(format('mnemo.%I', t)::regclass, '');
    END LOOP;
END
$$;

/* ------------------------------------------------------------------------
 * Issue 16: checkpoints, runs, the pending request and state
 * ------------------------------------------------------------------------ */

CREATE TABLE mnemo.checkpoints (
    session_id  text NOT NULL,
    label       text NOT NULL,
    -- the session's last seq when it was added: it covers seqs 1 .. seq
    seq         bigint NOT NULL CHECK (seq >= 0),
    created_at  bigint NOT NULL CHECK (created_at >= 0),
    auto        boolean NOT NULL DEFAULT false,
    tenant      text NOT NULL,
    PRIMARY KEY (session_id, label)
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
    PRIMARY KEY (session_id, run_id),
    UNIQUE (session_id, completion_seq),
    CHECK ((completed_at IS NULL) = (completion_seq IS NULL))
);
COMMENT ON TABLE mnemo.runs IS 'claimed runs of a session: in flight until completed_at, then ordered by completion_seq; messages name their run in messages.run_id';

CREATE TABLE mnemo.pending_requests (
    session_id  text PRIMARY KEY,
    request     jsonb NOT NULL CHECK (jsonb_typeof(request) = 'object'),
    run_id      text,
    created_at  bigint NOT NULL CHECK (created_at >= 0),
    tenant      text NOT NULL
);
COMMENT ON TABLE mnemo.pending_requests IS 'the human-in-the-loop request a session waits on, at most one, with the run that asked it';

SELECT mnemo._adopt_session_tables('checkpoints', 'runs', 'pending_requests');


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

/*
 * Issue 15: the context view by generation.  Reads scan the live
 * generation's range of (session_id, generation) keys; once the rows a swap
 * deleted in place would outnumber the live ones, it writes the view as the
 * next generation (src/swap.c), so no read wades through swapped-out rows,
 * whatever autovacuum has done.  Existing views are generation 0.
 */
ALTER TABLE mnemo.sessions ADD COLUMN context_generation bigint NOT NULL DEFAULT 0;
ALTER TABLE mnemo.sessions ADD COLUMN context_dead bigint NOT NULL DEFAULT 0;
COMMENT ON TABLE mnemo.sessions IS 'one row per session; last_seq and last_position allocate message seqs and context positions under the row lock; context_generation names the live generation of its context view';
ALTER TABLE mnemo.context_items ADD COLUMN generation bigint NOT NULL DEFAULT 0;
ALTER TABLE mnemo.context_items ALTER COLUMN generation DROP DEFAULT;
ALTER TABLE mnemo.context_items DROP CONSTRAINT context_items_pkey,
    ADD CONSTRAINT context_items_pkey PRIMARY KEY (session_id, generation, position),
    DROP CONSTRAINT context_items_session_id_item_id_key,
    ADD CONSTRAINT context_items_session_id_generation_item_id_key UNIQUE (session_id, generation, item_id);
COMMENT ON TABLE mnemo.context_items IS 'the ordered view of what is in context now, as of its session''s context_generation; a swap replaces a span with one summary row at its smallest position';

/*
 * Issue 15: search without the tax.  Appends no longer index: they queue the
 * seqs they wrote in mnemo.search_queue, and index_search (which
 * search_history runs first) writes one mnemo.search_documents row per part
 * under the GIN index.  The GIN index on message_parts goes; every message
 * already stored waits (no search_progress row, below), so the first search
 * of a session indexes it.
 */
DROP INDEX mnemo.message_parts_search_idx;
CREATE TABLE mnemo.search_queue (
    session_id  text NOT NULL,
    seq_from    bigint NOT NULL,
    seq_to      bigint NOT NULL,
    tenant      text NOT NULL,
    PRIMARY KEY (session_id, seq_from, seq_to)
);
COMMENT ON TABLE mnemo.search_queue IS 'the messages not yet indexed for search_history, as seq ranges: appends and part changes add one, index_search (run by search_history) drains a session''s';
CREATE TABLE mnemo.search_documents (
    session_id  text NOT NULL,
    message_id  text NOT NULL,
    part_index  integer NOT NULL,
    tsv         tsvector NOT NULL,
    tenant      text NOT NULL,
    PRIMARY KEY (session_id, message_id, part_index)
);
COMMENT ON TABLE mnemo.search_documents IS 'the searched words of each indexed part (configuration simple, the first 100,000 characters of its text fields)';
CREATE INDEX search_documents_tsv_idx ON mnemo.search_documents USING gin (tsv);
-- a partitioned install gets them partitioned as mnemo.sessions is (as the
-- issue 16 tables above)
SELECT mnemo._adopt_session_tables('search_queue', 'search_documents');

ALTER FUNCTION mnemo.search_history(text, text, integer) VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION mnemo.search_history(text, text, integer) IS 'full-text search (config simple, websearch syntax) over the whole log of a session, compacted parts included: one row per message, best rank first; indexes the session''s queued messages first, except in a read-only transaction, where it searches what is indexed and says with a NOTICE how much is not';

CREATE FUNCTION mnemo.index_search(session_id text)
    RETURNS bigint
    LANGUAGE c VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_index_search';
COMMENT ON FUNCTION mnemo.index_search(text) IS 'indexes for search_history the parts of the session''s messages appended or changed since it was last indexed; returns the number of part documents written; for a scheduled job (pg_cron) or the client, so that searches find the work done';

CREATE FUNCTION mnemo.search_pending(session_id text)
    RETURNS bigint
    LANGUAGE c STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_search_pending';
COMMENT ON FUNCTION mnemo.search_pending(text) IS 'how many of the session''s messages wait to be indexed for search_history (a message changed after its append counts again)';

/* ------------------------------------------------------------------------
 * Issue 14: compaction_completed / compaction_failed across processes.
 * release_compaction takes the compaction's outcome.
 * ------------------------------------------------------------------------ */

DROP FUNCTION mnemo.release_compaction(text, text);
CREATE FUNCTION mnemo.release_compaction(session_id text, holder text, outcome text DEFAULT NULL,
                                         tokens_before bigint DEFAULT NULL, tokens_after bigint DEFAULT NULL,
                                         level integer DEFAULT NULL, summary_id text DEFAULT NULL,
                                         error text DEFAULT NULL)
    RETURNS boolean
    LANGUAGE c VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_release_compaction';
COMMENT ON FUNCTION mnemo.release_compaction(text, text, text, bigint, bigint, integer, text, text) IS 'ends holder''s compaction lease on the session; false if holder did not hold it; with outcome (''completed'' or ''failed'') notifies followers of the compaction''s end';

/* ------------------------------------------------------------------------
 * Issue 16: fork and resume.  A fork inherits its ancestors' messages by
 * reference (mnemo.lineage); a resume takes a suffix off the live line
 * (mnemo.discarded).
 * ------------------------------------------------------------------------ */

ALTER TABLE mnemo.sessions ADD COLUMN fork_seq bigint CHECK (fork_seq >= 0);
ALTER TABLE mnemo.sessions ADD COLUMN fork_run text;
ALTER TABLE mnemo.sessions ADD COLUMN forks bigint NOT NULL DEFAULT 0 CHECK (forks >= 0);
ALTER TABLE mnemo.sessions ADD COLUMN discards bigint NOT NULL DEFAULT 0 CHECK (discards >= 0);

CREATE TABLE mnemo.lineage (
    session_id  text NOT NULL,
    -- the seqs seq_from .. seq_to of ancestor_id's messages are the fork's
    seq_from    bigint NOT NULL CHECK (seq_from >= 1),
    seq_to      bigint NOT NULL,
    ancestor_id text NOT NULL,
    tenant      text NOT NULL,
    PRIMARY KEY (session_id, seq_from),
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
    PRIMARY KEY (session_id, seq_from),
    CHECK (seq_to >= seq_from)
);
COMMENT ON TABLE mnemo.discarded IS 'the seq ranges of a session''s own messages that resume_session took off its live line: still stored, listed by list_discarded';

SELECT mnemo._adopt_session_tables('lineage', 'discarded');

CREATE FUNCTION mnemo.fork_session(source_id text, "at" text, new_id text DEFAULT NULL)
    RETURNS mnemo.sessions
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
 * Issue 16/17: a transcript import restores the session's created time
 * (create_session takes created_at).
 * ------------------------------------------------------------------------ */

DROP FUNCTION mnemo.create_session(text, text, text, text, text, text, jsonb, text);
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
    RETURNS mnemo.sessions
    LANGUAGE c VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_create_session';
COMMENT ON FUNCTION mnemo.create_session(text, text, text, text, text, text, jsonb, text, bigint) IS 'creates a session (id generated when NULL; created_at in unix ms, now when NULL); MN004 if the id exists, MN001 if parent_id does not';

-- and commit_summary takes the summary's created_at, part ids and metadata,
-- so that a re-imported compaction keeps them
DROP FUNCTION mnemo.commit_summary(text, text, text, integer, text[], text, integer, text, text, text);
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
    metadata jsonb DEFAULT NULL)
    RETURNS bigint
    LANGUAGE c VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_commit_summary';
COMMENT ON FUNCTION mnemo.commit_summary(text, text, text, integer, text[], text, integer, text, text, text, bigint, text[], jsonb) IS 'in one atomic call: the summary message, its DAG node and provenance, the supersession of consumed nodes and the context swap; returns the summary''s position; MN006 and no change if an item is no longer in context, or if holder is given and does not hold the session''s compaction claim; created_at (unix ms, now when NULL) and part_ids (of its text and marker parts) restore a summary''s time and ids, metadata (an object) is kept in its text part';

/* ------------------------------------------------------------------------
 * Issue 18: durable maps (LLMMap, AgenticMap): maps, map_items and their
 * functions.
 * ------------------------------------------------------------------------ */

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
    PRIMARY KEY (session_id, map_id),
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
    PRIMARY KEY (session_id, map_id, ordinal),
    UNIQUE (session_id, map_id, completion_seq),
    CHECK ((state IN ('done', 'failed')) = (completion_seq IS NOT NULL)),
    CHECK ((state = 'running') = (lease_holder IS NOT NULL)),
    CHECK ((state = 'failed') = (error_kind IS NOT NULL))
);
COMMENT ON TABLE mnemo.map_items IS 'the items of a map, one row each: pending, running under a worker''s lease, then done (result) or failed (error_kind, error) exactly once, numbered by completion_seq';
-- claims scan only the items not yet finished, however many are
CREATE INDEX map_items_open_idx ON mnemo.map_items (session_id, map_id, ordinal)
    WHERE state IN ('pending', 'running');

SELECT mnemo._adopt_session_tables('maps', 'map_items');

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

/* ------------------------------------------------------------------------
 * Issue 15 item 2: the write-path diet.  An append writes no search_queue
 * row: what waits to be indexed is a session's seqs past its
 * search_progress.indexed_seq, which only index_search writes; the queue
 * keeps the part changes of messages indexed already.
 * ------------------------------------------------------------------------ */

CREATE TABLE mnemo.search_progress (
    session_id  text PRIMARY KEY,
    -- the session's own messages up to this seq are indexed
    indexed_seq bigint NOT NULL,
    tenant      text NOT NULL
);
COMMENT ON TABLE mnemo.search_progress IS 'how far index_search has indexed each session''s messages: seqs past indexed_seq, up to the session''s last_seq, wait to be indexed; no row: none of the session''s own messages is indexed yet';
COMMENT ON TABLE mnemo.search_queue IS 'messages indexed already whose parts changed since (append_part, an output merged by update_part_status), as seq ranges, to index again; index_search (run by search_history) drains a session''s';
SELECT mnemo._adopt_session_tables('search_progress');

/*
 * One CHECK per table an append writes, a C function over its columns
 * (src/row_checks.c), for the CHECKs of each rule: the executor prepares
 * every CHECK of a table for each statement that writes it.  The rules stay
 * the same, so the rows meet them already.
 */
CREATE FUNCTION mnemo._check_session(created_at bigint, updated_at bigint, metadata jsonb,
                                     state jsonb, last_seq bigint, last_position bigint,
                                     fork_seq bigint, forks bigint, discards bigint)
    RETURNS boolean LANGUAGE c IMMUTABLE PARALLEL SAFE
    AS 'MODULE_PATHNAME', 'mnemo_check_session';
COMMENT ON FUNCTION mnemo._check_session(bigint, bigint, jsonb, jsonb, bigint, bigint, bigint, bigint, bigint) IS 'the CHECK of mnemo.sessions: times, counters, fork_seq, forks and discards >= 0; metadata NULL or an object; state an object';
CREATE FUNCTION mnemo._check_message(role text, cost double precision, created_at bigint,
                                     tokens_input bigint, tokens_output bigint,
                                     tokens_cache_read bigint, tokens_cache_write bigint,
                                     tokens_reasoning bigint)
    RETURNS boolean LANGUAGE c IMMUTABLE PARALLEL SAFE
    AS 'MODULE_PATHNAME', 'mnemo_check_message';
COMMENT ON FUNCTION mnemo._check_message(text, double precision, bigint, bigint, bigint, bigint, bigint, bigint) IS 'the CHECK of mnemo.messages: role user, assistant, system or tool; cost finite and >= 0; created_at and the token counts >= 0';
CREATE FUNCTION mnemo._check_part(tool_state text, token_estimate integer, compacted_at bigint,
                                  started_at bigint, completed_at bigint)
    RETURNS boolean LANGUAGE c IMMUTABLE PARALLEL SAFE
    AS 'MODULE_PATHNAME', 'mnemo_check_part';
COMMENT ON FUNCTION mnemo._check_part(text, integer, bigint, bigint, bigint) IS 'the CHECK of mnemo.message_parts: tool_state NULL or pending, running, completed, error; token_estimate and the times >= 0';
CREATE FUNCTION mnemo._check_context_item(item_type text, created_at bigint)
    RETURNS boolean LANGUAGE c IMMUTABLE PARALLEL SAFE
    AS 'MODULE_PATHNAME', 'mnemo_check_context_item';
COMMENT ON FUNCTION mnemo._check_context_item(text, bigint) IS 'the CHECK of mnemo.context_items: item_type message or summary; created_at >= 0';

DO $$
DECLARE
    c record;
BEGIN
    FOR c IN
        SELECT k.conrelid::regclass AS tab, k.conname
          FROM pg_catalog.pg_constraint k
         WHERE k.contype = 'c' AND k.conislocal
           AND k.conrelid IN ('mnemo.sessions'::regclass, 'mnemo.messages'::regclass,
                              'mnemo.message_parts'::regclass, 'mnemo.context_items'::regclass)
    LOOP
        EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', c.tab, c.conname);
    END LOOP;
END
$$;
ALTER TABLE mnemo.sessions ADD CONSTRAINT sessions_row_check
    CHECK (mnemo._check_session(created_at, updated_at, metadata, state, last_seq, last_position,
                                fork_seq, forks, discards));
ALTER TABLE mnemo.messages ADD CONSTRAINT messages_row_check
    CHECK (mnemo._check_message(role, cost, created_at, tokens_input, tokens_output,
                                tokens_cache_read, tokens_cache_write, tokens_reasoning));
ALTER TABLE mnemo.message_parts ADD CONSTRAINT message_parts_row_check
    CHECK (mnemo._check_part(tool_state, token_estimate, compacted_at, started_at, completed_at));
ALTER TABLE mnemo.context_items ADD CONSTRAINT context_items_row_check
    CHECK (mnemo._check_context_item(item_type, created_at));

-- The context view's index by item id goes: swap and commit_summary find
-- the items they name in one range scan of the view (src/swap.c), so an
-- append writes one btree entry fewer per message.
ALTER TABLE mnemo.context_items DROP CONSTRAINT context_items_session_id_generation_item_id_key;

DROP FUNCTION mnemo._adopt_session_tables(text[]);

-- In the hash-partitioned layout the rows are in the partitions, and pg_dump
-- writes the rows of an extension's member tables only when they are
-- registered: so each partition of a table registered above is too (one
-- statement a partition: each registration updates the extension's row).
-- 0.2.0 registered none, so pg_dump left out every row of that layout.
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
 * Issue 15 item 4: the history read as rows, nothing assembled
 * ------------------------------------------------------------------------ */

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

CREATE FUNCTION mnemo.get_messages_flat(session_id text, since_message_id text DEFAULT NULL)
    RETURNS SETOF mnemo.message_flat
    LANGUAGE c STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_get_messages_flat';
COMMENT ON FUNCTION mnemo.get_messages_flat(text, text) IS 'a session''s messages with their parts as rows, one per part beside its message''s columns, in (seq, part_index) order, nothing assembled: what get_messages_with_parts returns, at the cost of a plain SELECT';

-- issue 15 item 2 (ctx-tail): an append writes no context_items row; a
-- session's messages after context_tail_seq (not summaries) are the implicit
-- tail of its context view.  An upgraded session's existing messages all
-- have their rows already, so its tail starts after its last seq.
ALTER TABLE mnemo.sessions ADD COLUMN context_tail_seq bigint NOT NULL DEFAULT 0;
UPDATE mnemo.sessions SET context_tail_seq = last_seq;
COMMENT ON TABLE mnemo.sessions IS 'one row per session; last_seq allocates message seqs under the row lock; context_generation names the live generation of its context view, whose messages after context_tail_seq are its implicit tail';
COMMENT ON TABLE mnemo.context_items IS 'the explicit rows of the ordered view of what is in context now, as of its session''s context_generation; the view continues with the session''s messages after its context_tail_seq; a swap replaces a span with one summary row at its smallest position';
