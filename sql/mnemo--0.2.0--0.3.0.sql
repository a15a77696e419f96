/* mnemo 0.2.0 -> 0.3.0: ALTER EXTENSION mnemo UPDATE TO '0.3.0' */

\echo Use "ALTER EXTENSION mnemo UPDATE TO '0.3.0'" to load this file. \quit

/*
 * Every change made to mnemo--0.3.0.sql is made here too, so that a
 * database updated step by step from 0.1.0 and a fresh 0.3.0 install have
 * the same schema (the upgrade test, test/upgrade.sh, compares them).
 */

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

-- An install made with mnemo.partitions > 0 has its session tables
-- hash-partitioned; the new ones join that layout, with as many partitions.
DO $$
DECLARE
    modulus integer := (SELECT count(*) FROM pg_catalog.pg_inherits
                         WHERE inhparent = 'mnemo.sessions'::regclass);
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['checkpoints', 'runs', 'pending_requests'] LOOP
        IF modulus > 0 THEN
            PERFORM mnemo._partition_by_session(format('mnemo.%I', t)::regclass, modulus);
        END IF;
        EXECUTE format('ALTER TABLE mnemo.%I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('CREATE POLICY tenant_rows ON mnemo.%I '
                       'USING (mnemo.tenant_visible(tenant)) WITH CHECK (mnemo.tenant_visible(tenant))', t);
        EXECUTE format('REVOKE ALL ON mnemo.%I FROM PUBLIC', t);
    END LOOP;
END
$$;

SELECT pg_catalog.pg_extension_config_dump('mnemo.checkpoints', '');
SELECT pg_catalog.pg_extension_config_dump('mnemo.runs', '');
SELECT pg_catalog.pg_extension_config_dump('mnemo.pending_requests', '');


CREATE FUNCTION mnemo.add_checkpoint(session_id text, label text, auto boolean DEFAULT false)
    RETURNS mnemo.checkpoints
    LANGUAGE c VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_add_checkpoint';
COMMENT ON FUNCTION mnemo.add_checkpoint(text, text, boolean) IS 'labels the session''s current end (its last seq, in commit order); MN004 if the label is taken in the session, MN012 if the session is inactive';

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
