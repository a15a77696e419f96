/* mnemo 0.4.0 -> 0.5.0: ALTER EXTENSION mnemo UPDATE TO '0.5.0' */

\echo Use "ALTER EXTENSION mnemo UPDATE TO '0.5.0'" to load this file. \quit

/*
 * Every change made to mnemo--0.5.0.sql is made here too, so that a
 * database updated step by step from 0.1.0 and a fresh 0.5.0 install have
 * the same schema (the upgrade test, test/upgrade.sh, compares them).
 */

/* ---- Recall: each summary tells the model what it can ask for (issue 35) ---- */

/*
 * commit_summary(..., annotate_tokens => N) stores the summary's text after
 * a header and an "Expand for details about" line of at most N tokens
 * (src/annotate.c); a new trailing argument, so every call of the old arity
 * is the same call.
 */
DROP FUNCTION mnemo.commit_summary(text, text, text, integer, text[], text, integer, text, text, text, bigint, text[], jsonb);
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

-- Issue 36, compaction_block costs its block (src/context_walk.c): the
-- user messages of a view found by index, however far back.
CREATE INDEX messages_user_idx ON mnemo.messages (session_id, seq) WHERE role = 'user' AND NOT is_summary;

-- mnemo feed's page (client/src/events/feed.c): a read that costs its rows
CREATE FUNCTION mnemo.get_messages_after(session_id text, after_seq bigint, "limit" integer DEFAULT NULL)
    RETURNS SETOF mnemo.messages
    LANGUAGE c STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_get_messages_after';
COMMENT ON FUNCTION mnemo.get_messages_after(text, bigint, integer) IS 'a session''s messages past after_seq in seq order, at most "limit" (all when NULL): a follower''s page, costing its rows';
