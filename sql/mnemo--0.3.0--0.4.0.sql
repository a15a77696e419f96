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

