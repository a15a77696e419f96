/* mnemo 0.1.0 -> 0.2.0: ALTER EXTENSION mnemo UPDATE TO '0.2.0' */

\echo Use "ALTER EXTENSION mnemo UPDATE TO '0.2.0'" to load this file. \quit

/*
 * Every change made to mnemo--0.2.0.sql is made here too, so that an
 * upgraded database and a fresh 0.2.0 install have the same schema (the
 * upgrade test compares them).
 */

/* turn_context: a turn's context, parts of its assistant messages and budget in one call */
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
