--
-- errors: a tour of mnemo's SQLSTATEs and messages
--
-- Each error names what it is about.  The other tests check which calls
-- raise which code; this one shows each code once with its message (and
-- with its hint where it has one).
--
\set VERBOSITY terse

SELECT id FROM mnemo.create_session('er');
SELECT seq FROM mnemo.append_message('er', 'user', '[{"type": "text", "id": "er_p1", "text": "hi"}]', id => 'er_m1');
SELECT seq FROM mnemo.append_message('er', 'assistant', '[]', id => 'er_s1', is_summary => true);

-- MN001 session not found
SELECT mnemo.get_session('er_missing');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.append_message('er_missing', 'user', '[]');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.create_session('er_child', parent_id => 'er_missing_parent');
\echo :LAST_ERROR_SQLSTATE

-- MN002 message not found
SELECT mnemo.get_message('er', 'er_missing_msg');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.append_part('er', 'er_missing_msg', '{"type": "text", "text": "x"}');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mnemo.get_messages('er', since_message_id => 'er_missing_msg');
\echo :LAST_ERROR_SQLSTATE

-- MN003 part not found
SELECT mnemo.tombstone_part('er', 'er_missing_part');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.update_part_status('er', 'er_missing_part', tool_state => 'completed');
\echo :LAST_ERROR_SQLSTATE

-- MN004 duplicate id: of a session, a message, a part
SELECT mnemo.create_session('er');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.append_message('er', 'user', '[]', id => 'er_m1');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.append_message('er', 'user', '[{"type": "text", "id": "er_p1", "text": "again"}]', id => 'er_m2');
\echo :LAST_ERROR_SQLSTATE

-- ids are unique within their session: another session may reuse them
SELECT id FROM mnemo.create_session('er_twin');
SELECT id, seq FROM mnemo.append_message('er_twin', 'user', '[{"type": "text", "id": "er_p1", "text": "twin"}]', id => 'er_m1');

-- direct writes to the log: refused by privileges (42501) since 0.2.0, for
-- every table and statement in guard.sql; MN005 stays reserved

-- MN006 invalid context swap, and why
SELECT mnemo.swap_context_items('er', ARRAY[]::text[], 'er_s1');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.swap_context_items('er', ARRAY['er_m1', 'er_m1'], 'er_s1');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.swap_context_items('er', ARRAY['er_m1'], 'er_m1');
\echo :LAST_ERROR_SQLSTATE
\set VERBOSITY default
SELECT mnemo.swap_context_items('er', ARRAY['er_gone'], 'er_s1');
\echo :LAST_ERROR_SQLSTATE
\set VERBOSITY terse
SELECT mnemo.swap_context_items('er', ARRAY['er_m1'], 'er_s1');
SELECT mnemo.swap_context_items('er', ARRAY['er_m1'], 'er_s1');
\echo :LAST_ERROR_SQLSTATE

-- MN007 run already claimed, MN008 run already completed, MN009 run not
-- claimed, MN010 run not completed (with what it is instead)
SELECT run_id FROM mnemo.claim_run('er', 'er_r1');
\set VERBOSITY default
SELECT mnemo.claim_run('er', 'er_r1');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mnemo.snapshot('er', 'er_r1');
\echo :LAST_ERROR_SQLSTATE
SELECT run_id FROM mnemo.complete_run('er', 'er_r1');
SELECT mnemo.claim_run('er', 'er_r1');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.complete_run('er', 'er_r_missing');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mnemo.snapshot('er', 'er_r_missing');
\echo :LAST_ERROR_SQLSTATE
\set VERBOSITY terse

-- MN012 session inactive
SELECT id FROM mnemo.create_session('er_closed');
SELECT mnemo.soft_delete_session('er_closed');
\set VERBOSITY default
SELECT mnemo.append_message('er_closed', 'user', '[]');
\echo :LAST_ERROR_SQLSTATE
\set VERBOSITY terse

-- 22004 a required argument is NULL: the message names the argument
SELECT mnemo.append_message(NULL, 'user', '[]');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.append_message('er', 'user', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.tombstone_part(NULL, NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mnemo.get_messages_with_parts_by_ids('er', ARRAY['er_m1', NULL]);
\echo :LAST_ERROR_SQLSTATE

-- 22023 a wrong value or shape: the message says which and where
SELECT mnemo.append_message('er', 'robot', '[]');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.append_message('er', 'user', '{"type": "text"}');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.append_message('er', 'user', '[{"type": "text", "text": "ok"}, {"type": "video"}]');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.append_message('er', 'user', '[{"type": "text", "text": "ok"}, {"type": "image"}]');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.append_message('er', 'user', '[{"type": "tool", "tool_call_id": "c"}]');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.append_message('er', 'user', '[{"type": "text", "text": "x", "token_estimate": 1.5}]');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mnemo.append_messages('er', '[{"role": "user", "parts": []}, {"role": "user", "parts": [7]}]');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.update_part_status('er', 'er_p1', tool_state => 'completed');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.update_message_tokens('er', 'er_m1', '{"prompt_tokens": 1}', 0, 'stop');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.new_id('bad prefix');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mnemo.list_sessions("limit" => -1);
\echo :LAST_ERROR_SQLSTATE

-- 22P02 text that is not JSON (raised by the jsonb input, before mnemo runs)
SELECT mnemo.append_message('er', 'user', '[{"type": "text"');
\echo :LAST_ERROR_SQLSTATE

-- invalid UTF-8 and unrepresentable text never reach mnemo: the server's
-- input functions refuse them (22021 bad byte sequence, 22P05 \u0000 in
-- jsonb, 22P02 a lone surrogate), and nothing is stored
SELECT mnemo.append_message('er', 'user', E'[{"type":"text","text":"\xff"}]');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.append_message('er', E'us\xc3er', '[]');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.append_message('er', 'user', convert_from('\x5b7b2274797065223a2274657874222c2274657874223a22ff227d5d'::bytea, 'UTF8')::jsonb);
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.append_message('er', 'user', '[{"type":"text","text":"nul \u0000"}]');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.append_message('er', 'user', '[{"type":"text","text":"\ud800"}]');
\echo :LAST_ERROR_SQLSTATE
-- valid multibyte text is stored and read back unchanged
SELECT seq FROM mnemo.append_message('er', 'user', '[{"type":"text","text":"héllo ☃ 🎉"}]', id => 'er_utf8');
SELECT parts->0->>'text' AS text FROM mnemo.get_messages_with_parts_by_ids('er', ARRAY['er_utf8']);

-- after all of these, the session holds exactly what was appended
SELECT seq, id FROM mnemo.get_messages('er');
