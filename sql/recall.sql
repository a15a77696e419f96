-- recall_search: what compaction took out of the context, found again with
-- the summary of the context view that now covers it (issue 35).
\set VERBOSITY terse
SELECT id FROM mnemo.create_session('rc');
SELECT count(*) FROM mnemo.append_messages('rc', '[
  {"role": "user", "id": "rc_u1", "parts": [{"type": "text", "text": "Start the replica on port 5433 please"}]},
  {"role": "assistant", "id": "rc_a1", "parts": [{"type": "tool", "id": "rc_t1", "tool_name": "bash", "tool_call_id": "c1", "tool_state": "completed", "input": {"command": "pg_ctl -D /srv/replica start"}, "output": "server started, port 5433"}]},
  {"role": "user", "id": "rc_u2", "parts": [{"type": "text", "text": "Now check /etc/hosts for the replica name"}]},
  {"role": "assistant", "id": "rc_a2", "parts": [{"type": "text", "text": "The replica answers as replica-1 on port 5433."}]},
  {"role": "user", "id": "rc_u3", "parts": [{"type": "text", "text": "Good. What was the replica port again?"}]}]');
-- the first four messages compacted into one summary, the last in context
SELECT mnemo.commit_summary('rc', 'rc_sum1', 'The replica was started and named.', 8,
                            ARRAY['rc_u1', 'rc_a1', 'rc_u2', 'rc_a2']) > 0 AS committed;
SELECT item_type, item_id FROM mnemo.get_context_items('rc');

-- words: every hit, newest first, with the summary that covers it
SELECT message_id, seq, role, in_context, covered_by, snippet
  FROM mnemo.recall_search('rc', 'replica');
SELECT message_id, covered_by, snippet FROM mnemo.recall_search('rc', '5433');
SELECT message_id, covered_by FROM mnemo.recall_search('rc', '/srv/replica');
-- the summary itself is searched, and is in context
SELECT message_id, in_context, covered_by FROM mnemo.recall_search('rc', 'named');
-- pages: the next one is before the last seq returned
SELECT message_id, seq FROM mnemo.recall_search('rc', 'replica', "limit" => 2);
SELECT message_id, seq FROM mnemo.recall_search('rc', 'replica', "limit" => 2, before_seq => 4);
SELECT message_id, seq FROM mnemo.recall_search('rc', 'replica', "limit" => 2, before_seq => 2);
SELECT count(*) FROM mnemo.recall_search('rc', 'replica', "limit" => 0);
-- under one summary: its span only (rc_u3 also says replica)
SELECT message_id FROM mnemo.recall_search('rc', 'replica', summary_id => 'rc_sum1');
SELECT message_id FROM mnemo.recall_search('rc', 'again', summary_id => 'rc_sum1');

-- a regular expression: case-sensitive, (?i) ignores case; the snippet is
-- the text around the first match
SELECT message_id, covered_by, snippet FROM mnemo.recall_search('rc', 'port [0-9]{4}', regex => true);
SELECT message_id FROM mnemo.recall_search('rc', 'Replica', regex => true);
SELECT message_id FROM mnemo.recall_search('rc', '(?i)REPLICA-1', regex => true);
SELECT message_id, seq FROM mnemo.recall_search('rc', 'replica-[0-9]', regex => true, summary_id => 'rc_sum1');
-- refused before anything is read: a back-reference (exponential
-- backtracking), more than 256 bytes, a pattern that does not compile
\set VERBOSITY default
SELECT * FROM mnemo.recall_search('rc', '(a+)+\1', regex => true);
\set VERBOSITY terse
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mnemo.recall_search('rc', repeat('a', 257), regex => true);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mnemo.recall_search('rc', '(', regex => true);
\echo :LAST_ERROR_SQLSTATE
-- an escaped backslash is not a back-reference
SELECT count(*) FROM mnemo.recall_search('rc', '\\1', regex => true);

-- a fork follows its ancestor: the inherited messages are found, covered
-- by the inherited summary
SELECT fork_seq FROM mnemo.fork_session('rc', '6', 'rc_f');
SELECT seq FROM mnemo.append_message('rc_f', 'user', '[{"type":"text","text":"and the replica on the fork"}]', id => 'rc_f1');
SELECT item_type, item_id FROM mnemo.get_context_items('rc_f');
SELECT message_id, in_context, covered_by FROM mnemo.recall_search('rc_f', 'replica');
SELECT message_id, covered_by FROM mnemo.recall_search('rc_f', '5433', regex => true);
SELECT message_id FROM mnemo.recall_search('rc_f', 'replica', summary_id => 'rc_sum1', "limit" => 1);

-- a regular expression reads the newest 5,000 messages, and says so
SELECT id FROM mnemo.create_session('rc_big');
SELECT count(*) FROM mnemo.append_messages('rc_big',
  (SELECT jsonb_agg(jsonb_build_object('role', 'user', 'id', 'rc_big_' || i, 'parts',
     jsonb_build_array(jsonb_build_object('type', 'text', 'text', 'line ' || i ||
       CASE WHEN i = 10 THEN ' port 6543' ELSE '' END))))
     FROM generate_series(1, 5200) i));
\set VERBOSITY default
SELECT message_id FROM mnemo.recall_search('rc_big', 'port [0-9]+', regex => true);
\set VERBOSITY terse
SELECT message_id FROM mnemo.recall_search('rc_big', 'port [0-9]+', regex => true, before_seq => 201);
-- words go through the index: the search indexes a slice and reads the
-- newest 2,000 directly, like search_history
SELECT mnemo.index_search('rc_big') > 0 AS indexed;
SELECT message_id FROM mnemo.recall_search('rc_big', '6543');

-- another tenant's session is not found
CREATE ROLE rc_a;
CREATE ROLE rc_b;
GRANT USAGE ON SCHEMA mnemo TO rc_a, rc_b;
SET ROLE rc_a;
SELECT id FROM mnemo.create_session('rc_tenant_a');
SELECT seq FROM mnemo.append_message('rc_tenant_a', 'user', '[{"type":"text","text":"the secret port is 7777"}]');
SELECT count(*) FROM mnemo.recall_search('rc_tenant_a', '7777');
RESET ROLE;
SET ROLE rc_b;
SELECT count(*) FROM mnemo.recall_search('rc_tenant_a', '7777');
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) FROM mnemo.recall_search('rc_tenant_a', '7777', regex => true);
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
SELECT mnemo.purge_session('rc_tenant_a') > 0 AS purged;
DROP OWNED BY rc_a, rc_b;
DROP ROLE rc_a;
DROP ROLE rc_b;

-- errors
SELECT * FROM mnemo.recall_search('rc_nope', 'replica');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mnemo.recall_search('rc', 'replica', summary_id => 'rc_nope');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mnemo.recall_search(NULL, 'replica');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mnemo.recall_search('rc', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mnemo.recall_search('rc', 'replica', regex => NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mnemo.recall_search('rc', 'replica', "limit" => NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mnemo.recall_search('rc', 'replica', "limit" => -1);
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) FROM mnemo.recall_search('rc', '');
SELECT count(*) FROM mnemo.recall_search('rc', '', regex => true);
