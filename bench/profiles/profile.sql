-- The profiles behind doc/benchmarks.md's remaining gaps: the plan, timing
-- and buffers of every statement mnemo runs for one turn, one history load
-- and one context read right after a large swap, next to the plain
-- table's.  Run against a database with mnemo (a private cluster):
--   psql -X -q -f bench/profiles/profile.sql > bench/profiles/profile.txt 2>&1
-- auto_explain prints each statement inside the C functions (NOTICE).
\set ON_ERROR_STOP 1
LOAD 'auto_explain';
SET client_min_messages = notice;
SET synchronous_commit = off;
DROP SCHEMA IF EXISTS plain CASCADE;
CREATE SCHEMA plain;
CREATE TABLE plain.messages (id bigserial PRIMARY KEY, session_id text, seq int, role text,
    content text, created_at timestamptz DEFAULT now(), UNIQUE (session_id, seq));
SELECT mnemo.create_session('prof_a') IS NOT NULL AS created;
-- 1,000 turns on each side, user ~200 B + assistant ~800 B
SELECT count(*) FROM generate_series(1, 1000) t,
  LATERAL mnemo.append_messages('prof_a', jsonb_build_array(
    jsonb_build_object('role', 'user', 'parts', jsonb_build_array(jsonb_build_object('type', 'text', 'text', t || repeat(' word', 40)))),
    jsonb_build_object('role', 'assistant', 'parts', jsonb_build_array(jsonb_build_object('type', 'text', 'text', repeat('reply ', 133))))));
INSERT INTO plain.messages (session_id, seq, role, content)
SELECT 'prof_a', 2 * t - 1 + r, CASE r WHEN 0 THEN 'user' ELSE 'assistant' END,
       CASE r WHEN 0 THEN t || repeat(' word', 40) ELSE repeat('reply ', 133) END
  FROM generate_series(1, 1000) t, generate_series(0, 1) r;
VACUUM ANALYZE plain.messages, mnemo.log, mnemo.context_items, mnemo.sessions;

SET auto_explain.log_min_duration = 0;
SET auto_explain.log_analyze = on;
SET auto_explain.log_buffers = on;
SET auto_explain.log_timing = on;
SET auto_explain.log_nested_statements = on;
SET auto_explain.log_level = notice;

\echo '==== one turn: mnemo.append_messages (user + assistant), every statement inside'
SELECT count(*) FROM mnemo.append_messages('prof_a', '[{"role":"user","parts":[{"type":"text","text":"one more question"}]},{"role":"assistant","parts":[{"type":"text","text":"one more answer"}]}]');
\echo '==== one turn: the plain table (one INSERT per message)'
INSERT INTO plain.messages (session_id, seq, role, content) VALUES ('prof_a', 2001, 'user', 'one more question');
INSERT INTO plain.messages (session_id, seq, role, content) VALUES ('prof_a', 2002, 'assistant', 'one more answer');

\echo '==== full history load: mnemo.get_messages_with_parts (2,002 messages)'
SELECT count(*), sum(length(parts::text)) FROM mnemo.get_messages_with_parts('prof_a');
\echo '==== full history load: the plain SELECT'
SELECT count(*), sum(length(content)) FROM (SELECT * FROM plain.messages WHERE session_id = 'prof_a' ORDER BY seq) h;

\echo '==== right after a swap of all but 200 items: commit_summary, then build_context'
SELECT mnemo.commit_summary('prof_a', 'prof_a_sum', 'summary of the first turns', 6,
  ARRAY(SELECT item_id FROM mnemo.get_context_items('prof_a') ORDER BY position
        LIMIT (SELECT count(*) - 199 FROM mnemo.get_context_items('prof_a')))) > 0 AS committed;
SELECT count(*) FROM mnemo.build_context('prof_a', 100000000);
