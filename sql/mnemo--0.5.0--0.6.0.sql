/* mnemo 0.5.0 -> 0.6.0: ALTER EXTENSION mnemo UPDATE TO '0.6.0' */

\echo Use "ALTER EXTENSION mnemo UPDATE TO '0.6.0'" to load this file. \quit

/*
 * Every change made to mnemo--0.6.0.sql is made here too, so that a
 * database updated step by step from 0.1.0 and a fresh 0.6.0 install have
 * the same schema (the upgrade test, test/upgrade.sh, compares them).
 */

-- get_messages_flat costs more than a plain SELECT (doc/benchmarks.md): its comment no longer says it does
COMMENT ON FUNCTION mnemo.get_messages_flat(text, text) IS 'a session''s messages with their parts as rows, one per part beside its message''s columns, in (seq, part_index) order, nothing assembled: what get_messages_with_parts returns, in less time (doc/benchmarks.md, history loads)';
