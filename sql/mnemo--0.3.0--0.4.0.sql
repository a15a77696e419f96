/* mnemo 0.3.0 -> 0.4.0: ALTER EXTENSION mnemo UPDATE TO '0.4.0' */

\echo Use "ALTER EXTENSION mnemo UPDATE TO '0.4.0'" to load this file. \quit

/*
 * Every change made to mnemo--0.4.0.sql is made here too, so that a
 * database updated step by step from 0.1.0 and a fresh 0.4.0 install have
 * the same schema (the upgrade test, test/upgrade.sh, compares them).
 */

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
