/* mnemo 0.4.0 -> 0.5.0: ALTER EXTENSION mnemo UPDATE TO '0.5.0' */

\echo Use "ALTER EXTENSION mnemo UPDATE TO '0.5.0'" to load this file. \quit

/*
 * Every change made to mnemo--0.5.0.sql is made here too, so that a
 * database updated step by step from 0.1.0 and a fresh 0.5.0 install have
 * the same schema (the upgrade test, test/upgrade.sh, compares them).
 */

-- Issue 36, compaction_block costs its block (src/context_walk.c): the
-- user messages of a view found by index, however far back.
CREATE INDEX messages_user_idx ON mnemo.messages (session_id, seq) WHERE role = 'user' AND NOT is_summary;
