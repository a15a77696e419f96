/* mnemo 0.3.0 -> 0.4.0: ALTER EXTENSION mnemo UPDATE TO '0.4.0' */

\echo Use "ALTER EXTENSION mnemo UPDATE TO '0.4.0'" to load this file. \quit

/*
 * Every change made to mnemo--0.4.0.sql is made here too, so that a
 * database updated step by step from 0.1.0 and a fresh 0.4.0 install have
 * the same schema (the upgrade test, test/upgrade.sh, compares them).
 */

/* recall: the model's search of what compaction took out of its context (recall.c) */

CREATE TYPE mnemo.recall_hit AS (
    message_id  text,
    seq         bigint,
    role        text,
    snippet     text,
    covered_by  text
);
COMMENT ON TYPE mnemo.recall_hit IS 'one message found by recall_grep: where it is, a snippet, and the summary of the context view that covers it (NULL when it is in context itself)';

CREATE FUNCTION mnemo.recall_grep(session_id text, pattern text, summary_id text DEFAULT NULL,
                                  regex boolean DEFAULT false, "limit" integer DEFAULT 20,
                                  "offset" integer DEFAULT 0)
    RETURNS SETOF mnemo.recall_hit
    LANGUAGE c VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'mnemo_recall_grep';
COMMENT ON FUNCTION mnemo.recall_grep(text, text, text, boolean, integer, integer) IS 'the model''s lcm_grep: words (search_history''s full-text search) or a regular expression (over the newest 5,000 messages of the scope) in the session''s whole line or under one summary, each hit with the summary of the context view that now covers it; paginated';

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
