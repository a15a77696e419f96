/* mnemo 0.3.0 -> 0.4.0: ALTER EXTENSION mnemo UPDATE TO '0.4.0' */

\echo Use "ALTER EXTENSION mnemo UPDATE TO '0.4.0'" to load this file. \quit

/*
 * Every change made to mnemo--0.4.0.sql is made here too, so that a
 * database updated step by step from 0.1.0 and a fresh 0.4.0 install have
 * the same schema (the upgrade test, test/upgrade.sh, compares them).
 */

-- Flat context and swaps (issue 36): a swap finds the items it names by id,
-- so that it costs its block, not the view (src/swap.c).
CREATE INDEX context_items_item_idx ON mnemo.context_items (session_id, generation, item_id);
