/* mnemo 0.3.0 -> 0.4.0: ALTER EXTENSION mnemo UPDATE TO '0.4.0' */

\echo Use "ALTER EXTENSION mnemo UPDATE TO '0.4.0'" to load this file. \quit

/*
 * Every change made to mnemo--0.4.0.sql is made here too, so that a
 * database updated step by step from 0.1.0 and a fresh 0.4.0 install have
 * the same schema (the upgrade test, test/upgrade.sh, compares them).
 */

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

