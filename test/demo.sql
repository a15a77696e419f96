-- The SQL API under the demo agent: every write of the store, a compaction
-- race lost cleanly, the append-only log refused to an application role, then
-- the proof that nothing was lost.  Run by test/demo.sh after the agent session, in the same database
-- (the extension is already created there).
\set ON_ERROR_STOP on
\pset footer off
SET client_min_messages = warning;

\echo '== a session'
SELECT id, agent, system_prompt FROM mnemo.create_session('demo', model_id => 'gpt-4o',
    provider_id => 'openai', system_prompt => 'You are a careful coding agent.');

\echo '== turn 1: the user asks, the assistant calls a tool'
SELECT seq FROM mnemo.append_message('demo', 'user',
    '[{"type":"text","text":"How many lines does src/log/append.c have?"}]', id => 'u1');
SELECT seq FROM mnemo.append_message('demo', 'assistant',
    '[{"type":"text","text":"Let me count them."},
      {"type":"tool","id":"call1","tool_name":"bash","tool_call_id":"toolu_01","input":{"cmd":"wc -l src/log/append.c"}}]',
    id => 'a1');
SELECT mnemo.update_part_status('demo', 'call1', tool_state => 'running', started_at => 1700000000000);
SELECT mnemo.update_part_status('demo', 'call1', tool_state => 'completed', completed_at => 1700000000250,
    output => '262 src/log/append.c');
SELECT mnemo.update_message_tokens('demo', 'a1', '{"input":812,"output":41}', 0.0021, 'tool_calls');
SELECT mnemo.append_part('demo', 'a1', '{"type":"text","text":"It has 262 lines."}') AS part_index;

\echo '== turn 2, as one batch'
SELECT seq FROM mnemo.append_messages('demo', '[
    {"role":"user","id":"u2","parts":[{"type":"text","text":"And what does it hold?"}]},
    {"role":"assistant","id":"a2","parts":[{"type":"text","text":"The hot path: append_message, append_messages, append_part."}]}]');

\echo '== the log'
SELECT seq, role, parts::text AS parts FROM mnemo.get_messages_with_parts('demo');

\echo '== the tool output goes stale: tombstone it (the content stays)'
SELECT mnemo.tombstone_part('demo', 'call1') > 0 AS tombstoned;

\echo '== compaction: a summary replaces turn 1 in the context view, in one atomic commit'
SELECT mnemo.commit_summary('demo', 'sum1',
    'Summary: the user asked for the size of src/log/append.c (262 lines).', 16, ARRAY['u1', 'a1']) AS summary_position;
SELECT * FROM mnemo.get_context_items('demo');

\echo '== a second compactor racing on the same span loses cleanly (MN006), writing nothing'
\set ON_ERROR_STOP off
\set VERBOSITY terse
SELECT mnemo.commit_summary('demo', 'sum2', 'Summary written by a slower compactor.', 8, ARRAY['u1', 'a1']);
\set ON_ERROR_STOP on

\echo '== the context the model would get, for a 60-token budget, and what it leaves out'
SELECT "position", item_type, role, tokens, content FROM mnemo.build_context('demo', 60);
SELECT * FROM mnemo.context_report('demo', 60);

\echo '== the summary expands back to the original messages'
SELECT depth, item_id, seq, role FROM mnemo.expand_summary('demo', 'sum1', recursive => true);

\echo '== the log is append-only: an application role reads and calls, it cannot write a table (42501)'
DO $$ BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'demo_app') THEN CREATE ROLE demo_app; END IF;
END $$;
GRANT USAGE ON SCHEMA mnemo TO demo_app;
GRANT SELECT ON ALL TABLES IN SCHEMA mnemo TO demo_app;
SET ROLE demo_app;
\set ON_ERROR_STOP off
UPDATE mnemo.log SET content = '{}' WHERE part_id = 'call1';
DELETE FROM mnemo.log WHERE session_id = 'demo';
\set ON_ERROR_STOP on
RESET ROLE;

\echo '== nothing is lost: every message and the pruned tool output read back'
SELECT count(*) AS messages, count(*) FILTER (WHERE is_summary) AS summaries,
       max(seq) = count(*) AS seqs_dense
  FROM mnemo.get_messages('demo');
SELECT content->>'output' AS tool_output_still_stored, compacted_at IS NOT NULL AS tombstoned
  FROM mnemo.message_parts WHERE id = 'call1';
SELECT CASE WHEN (SELECT count(*) FROM mnemo.get_messages('demo')) = 5
             AND (SELECT content->>'output' FROM mnemo.message_parts WHERE id = 'call1') = '262 src/log/append.c'
            THEN 'OK: every message of the SQL session is in the log'
            ELSE 'FAILED: messages missing' END AS check;
