-- 040_guard: invariant 1 (append-only), by privileges.  An application role
-- holds the documented grants (USAGE on the schema, SELECT on the tables,
-- EXECUTE on the functions); its every attempt at a direct change fails with
-- 42501 and the log is unchanged, byte for byte, while its writes through
-- the functions work; tombstones and status changes leave the content intact.
BEGIN;
SELECT plan(64);

CREATE ROLE tap_guard_app NOLOGIN;
GRANT USAGE ON SCHEMA mnemo TO tap_guard_app;
GRANT SELECT ON ALL TABLES IN SCHEMA mnemo TO tap_guard_app;
GRANT ALL ON __tcache__ TO tap_guard_app;
GRANT ALL ON SEQUENCE __tcache___id_seq, __tresults___numb_seq TO tap_guard_app;
SET ROLE tap_guard_app;

SELECT lives_ok($$ SELECT mnemo.create_session('tap_g') $$, 'session');
SELECT lives_ok($$ SELECT mnemo.append_messages('tap_g', '[
    {"id": "tap_g1", "role": "user", "parts": [{"type": "text", "id": "tap_g1_p", "text": "hello"}]},
    {"id": "tap_g2", "role": "assistant", "parts": [
        {"type": "reasoning", "id": "tap_g2_r", "text": "think"},
        {"type": "tool", "id": "tap_g2_t", "tool_name": "ls", "tool_call_id": "c1", "input": {"path": "/"}}]},
    {"id": "tap_g3", "role": "assistant", "is_summary": true, "parts": [{"type": "text", "text": "summary"}]}]') $$,
                'appends');
SELECT lives_ok($$ SELECT mnemo.store_file_reference('sha256:tap_g', '/tap_g.txt') $$, 'a file reference');

-- fingerprints: whole rows, and the immutable columns only
CREATE FUNCTION pg_temp.log_rows() RETURNS text LANGUAGE sql AS $$
    SELECT md5(concat_ws('#',
        (SELECT string_agg(m::text, '|' ORDER BY seq) FROM mnemo.messages m WHERE session_id = 'tap_g'),
        (SELECT string_agg(p::text, '|' ORDER BY seq, part_index) FROM mnemo.message_parts p WHERE session_id = 'tap_g')))
$$;
CREATE FUNCTION pg_temp.log_content() RETURNS text LANGUAGE sql AS $$
    SELECT md5(concat_ws('#',
        (SELECT string_agg(concat_ws(',', session_id, seq, id, role, created_at, agent, model_id, provider_id,
                                     run_id, is_summary), '|' ORDER BY seq)
           FROM mnemo.messages WHERE session_id = 'tap_g'),
        (SELECT string_agg(concat_ws(',', session_id, seq, part_index, id, part_type, content,
                                     tool_name, tool_call_id, token_estimate), '|' ORDER BY seq, part_index)
           FROM mnemo.message_parts WHERE session_id = 'tap_g')))
$$;
CREATE FUNCTION pg_temp.other_rows() RETURNS text LANGUAGE sql AS $$
    SELECT md5(concat_ws('#',
        (SELECT string_agg(s::text, '|') FROM mnemo.sessions s WHERE id = 'tap_g'),
        (SELECT string_agg(c::text, '|' ORDER BY position) FROM mnemo.context_items c WHERE session_id = 'tap_g'),
        (SELECT count(*)::text FROM mnemo.summary_nodes),
        (SELECT string_agg(f::text, '|') FROM mnemo.file_references f WHERE content_id = 'sha256:tap_g')))
$$;
CREATE TEMP TABLE before AS SELECT pg_temp.log_rows() AS log_rows, pg_temp.log_content() AS log_content,
                                   pg_temp.other_rows() AS other_rows;

--
-- every attempt at a direct change fails with 42501
--
SELECT throws_ok($$ INSERT INTO mnemo.messages (session_id, seq, id, role, created_at) VALUES ('tap_g', 4, 'tap_gx', 'user', 0) $$,
                 '42501', NULL, 'INSERT into messages');
SELECT throws_ok($$ INSERT INTO mnemo.message_parts (session_id, seq, part_index, id, part_type, content)
                    VALUES ('tap_g', 1, 1, 'tap_gx', 'text', '{}') $$,
                 '42501', NULL, 'INSERT into message_parts');
SELECT throws_ok($$ UPDATE mnemo.message_parts SET content = '{}' WHERE session_id = 'tap_g' $$,
                 '42501', NULL, 'UPDATE of part content');
SELECT throws_ok($$ UPDATE mnemo.message_parts SET content = content || '{"text": "forged"}' WHERE id = 'tap_g1_p' $$,
                 '42501', NULL, 'UPDATE merging into part content');
SELECT throws_ok($$ UPDATE mnemo.message_parts SET part_index = part_index + 10 WHERE session_id = 'tap_g' $$,
                 '42501', NULL, 'UPDATE of part_index');
SELECT throws_ok($$ UPDATE mnemo.message_parts SET seq = 2 WHERE id = 'tap_g1_p' $$,
                 '42501', NULL, 'moving a part to another message');
SELECT throws_ok($$ UPDATE mnemo.messages SET role = 'user' WHERE id = 'tap_g2' $$,
                 '42501', NULL, 'UPDATE of a role');
SELECT throws_ok($$ UPDATE mnemo.messages SET seq = seq + 100 WHERE session_id = 'tap_g' $$,
                 '42501', NULL, 'UPDATE of seq');
SELECT throws_ok($$ UPDATE mnemo.messages SET is_summary = NOT is_summary WHERE session_id = 'tap_g' $$,
                 '42501', NULL, 'UPDATE of is_summary');
SELECT throws_ok($$ DELETE FROM mnemo.messages WHERE session_id = 'tap_g' $$,
                 '42501', NULL, 'DELETE from messages');
SELECT throws_ok($$ DELETE FROM mnemo.message_parts WHERE session_id = 'tap_g' $$, '42501', NULL, 'DELETE from message_parts');
SELECT throws_ok($$ TRUNCATE mnemo.log $$, '42501',
                 'permission denied for table log', 'TRUNCATE log, the table of messages and parts');
SELECT throws_ok($$ UPDATE mnemo.log SET content = '{}' WHERE session_id = 'tap_g' $$, '42501', NULL,
                 'UPDATE of log, under the views');
SELECT throws_ok($$ DO 'BEGIN DELETE FROM mnemo.messages; END' $$, '42501', NULL, 'DELETE from a DO block');
-- the other tables
SELECT throws_ok($$ INSERT INTO mnemo.sessions (id, created_at, updated_at) VALUES ('tap_gx', 0, 0) $$, '42501', NULL, 'INSERT into sessions');
SELECT throws_ok($$ UPDATE mnemo.sessions SET context_tail_seq = 0 WHERE id = 'tap_g' $$,
                 '42501', NULL, 'UPDATE of a session counter');
SELECT throws_ok($$ DELETE FROM mnemo.sessions WHERE id = 'tap_g' $$, '42501', NULL, 'DELETE from sessions');
SELECT throws_ok($$ TRUNCATE mnemo.sessions $$, '42501', NULL, 'TRUNCATE sessions');
SELECT throws_ok($$ INSERT INTO mnemo.context_items (session_id, position, item_type, item_id, created_at)
                    VALUES ('tap_g', 10, 'summary', 'tap_g3', 0) $$, '42501', NULL, 'INSERT into context_items');
SELECT throws_ok($$ UPDATE mnemo.context_items SET position = position + 10 WHERE session_id = 'tap_g' $$,
                 '42501', NULL, 'UPDATE of a context position');
SELECT throws_ok($$ DELETE FROM mnemo.context_items WHERE session_id = 'tap_g' $$, '42501', NULL, 'DELETE from context_items');
SELECT throws_ok($$ TRUNCATE mnemo.context_items $$, '42501', NULL, 'TRUNCATE context_items');
SELECT throws_ok($$ INSERT INTO mnemo.summary_nodes (session_id, id, kind, level, seq_start, seq_end, created_at)
                    VALUES ('tap_g', 'tap_g3', 'leaf', 1, 1, 1, 0) $$, '42501', NULL, 'INSERT into summary_nodes');
SELECT throws_ok($$ TRUNCATE mnemo.summary_nodes $$, '42501', NULL, 'TRUNCATE summary_nodes');
SELECT throws_ok($$ INSERT INTO mnemo.file_references (content_id, path, created_at) VALUES ('sha256:x', '/x', 0) $$,
                 '42501', NULL, 'INSERT into file_references');
SELECT throws_ok($$ UPDATE mnemo.file_references SET path = '/y' WHERE content_id = 'sha256:tap_g' $$,
                 '42501', NULL, 'UPDATE of a file reference path');
SELECT throws_ok($$ DELETE FROM mnemo.file_references $$, '42501', NULL, 'DELETE from file_references');
SELECT throws_ok($$ TRUNCATE mnemo.file_references $$, '42501', NULL, 'TRUNCATE file_references');

SELECT throws_ok($$ LOCK TABLE mnemo.messages IN ACCESS EXCLUSIVE MODE $$, '42501', NULL, 'LOCK messages ACCESS EXCLUSIVE');
SELECT throws_ok($$ LOCK TABLE mnemo.sessions IN SHARE ROW EXCLUSIVE MODE $$, '42501', NULL, 'LOCK sessions SHARE ROW EXCLUSIVE');
SELECT lives_ok($$ LOCK TABLE mnemo.messages IN ACCESS SHARE MODE $$, 'LOCK ... ACCESS SHARE, what SELECT takes, is allowed');
SELECT is(pg_temp.log_rows(), (SELECT log_rows FROM before), 'messages and parts are unchanged, byte for byte');
SELECT is(pg_temp.other_rows(), (SELECT other_rows FROM before), 'sessions, context items, nodes and files are unchanged');

--
-- status changes and tombstones leave the content intact
--
SELECT lives_ok($$ SELECT mnemo.update_part_status('tap_g', 'tap_g2_t', tool_state => 'completed', output => 'etc usr') $$,
                'a tool completes');
SELECT lives_ok($$ SELECT mnemo.update_message_tokens('tap_g', 'tap_g2', '{"input": 5, "output": 7}', 0.1, 'tool_calls') $$,
                'token usage recorded');
SELECT is((SELECT content - 'output' FROM mnemo.message_parts WHERE id = 'tap_g2_t'),
          '{"id": "tap_g2_t", "type": "tool", "input": {"path": "/"}, "tool_name": "ls", "tool_call_id": "c1"}'::jsonb,
          'the output is merged into the content and nothing else of it changes');
CREATE TEMP TABLE after_status AS SELECT pg_temp.log_rows() AS log_rows, pg_temp.log_content() AS log_content;
SELECT ok(mnemo.tombstone_part('tap_g', 'tap_g2_t') > 0, 'tombstone a tool part');
SELECT ok(mnemo.tombstone_part('tap_g', 'tap_g1_p') > 0, 'tombstone a text part');
SELECT is(pg_temp.log_content(), (SELECT log_content FROM after_status), 'tombstones leave every immutable column as it was');
SELECT is((SELECT content FROM mnemo.message_parts WHERE id = 'tap_g1_p'),
          '{"id": "tap_g1_p", "text": "hello", "type": "text"}'::jsonb, 'the tombstoned text is still there');
SELECT is((SELECT content->>'output' FROM mnemo.message_parts WHERE id = 'tap_g2_t'), 'etc usr',
          'the tombstoned tool output is still there');
SELECT is((SELECT count(*) FROM mnemo.message_parts WHERE session_id = 'tap_g' AND compacted_at IS NOT NULL), 2::bigint,
          'exactly the two parts carry a tombstone');
SELECT isnt(pg_temp.log_rows(), (SELECT log_rows FROM after_status), '(the tombstones are in the rows)');

--
-- the same role's writes through the functions work
--
CREATE TEMP TABLE before_role AS SELECT pg_temp.log_rows() AS log_rows, pg_temp.other_rows() AS other_rows;
SELECT ok(NOT (SELECT rolsuper FROM pg_roles WHERE rolname = current_user), 'running as a non-superuser');
-- its writes through the functions work
SELECT lives_ok($$ SELECT mnemo.create_session('tap_ga') $$, 'create_session');
SELECT is((mnemo.append_message('tap_ga', 'user', '[{"type": "text", "id": "tap_ga1_p", "text": "hi"}]', id => 'tap_ga1')).seq,
          1::bigint, 'append_message');
SELECT results_eq($$ SELECT seq FROM mnemo.append_messages('tap_ga', '[
                       {"id": "tap_ga2", "role": "assistant", "parts": [{"type": "tool", "id": "tap_ga2_t", "tool_name": "ls", "tool_call_id": "c"}]},
                       {"id": "tap_ga3", "role": "assistant", "is_summary": true, "parts": []}]') $$,
                  ARRAY[2, 3]::bigint[], 'append_messages');
SELECT is(mnemo.append_part('tap_ga', 'tap_ga2', '{"type": "text", "text": "more"}'), 1, 'append_part');
SELECT lives_ok($$ SELECT mnemo.update_part_status('tap_ga', 'tap_ga2_t', tool_state => 'completed', output => 'x');
                   SELECT mnemo.tombstone_part('tap_ga', 'tap_ga2_t');
                   SELECT mnemo.update_message_tokens('tap_ga', 'tap_ga2', '{"input": 1}', 0, 'stop') $$,
                'status changes and a tombstone');
SELECT is(mnemo.swap_context_items('tap_ga', ARRAY['tap_ga1', 'tap_ga2'], 'tap_ga3'), 1::bigint, 'a swap');
SELECT lives_ok($$ SELECT mnemo.store_file_reference('sha256:tap_ga', '/tap_ga'); SELECT mnemo.soft_delete_session('tap_ga') $$,
                'a file reference and a soft delete');
SELECT is((SELECT count(*) FROM mnemo.get_messages_with_parts('tap_ga')), 3::bigint, 'reads');
-- its direct writes do not, right after the functions wrote for it
SELECT throws_ok($$ INSERT INTO mnemo.messages (session_id, seq, id, role, created_at) VALUES ('tap_ga', 9, 'tap_gax', 'user', 0) $$,
                 '42501', NULL, 'INSERT into messages: 42501');
SELECT throws_ok($$ UPDATE mnemo.message_parts SET content = '{}' WHERE session_id = 'tap_g' $$,
                 '42501', NULL, 'UPDATE of part content: 42501');
SELECT throws_ok($$ UPDATE mnemo.messages SET role = 'system' WHERE id = 'tap_ga1' $$,
                 '42501', NULL, 'UPDATE of a role: 42501');
SELECT throws_ok($$ UPDATE mnemo.sessions SET context_tail_seq = 0 WHERE id = 'tap_ga' $$, '42501', NULL, 'UPDATE of a session counter: 42501');
SELECT throws_ok($$ DELETE FROM mnemo.context_items WHERE session_id = 'tap_g' $$, '42501', NULL, 'DELETE from context_items: 42501');
SELECT throws_ok($$ DELETE FROM mnemo.messages WHERE session_id = 'tap_g' $$, '42501', NULL, 'DELETE from messages: 42501');
SELECT throws_ok($$ TRUNCATE mnemo.log $$, '42501', NULL, 'TRUNCATE: 42501');
SELECT is(pg_temp.log_rows(), (SELECT log_rows FROM before_role), 'the log of tap_g is unchanged');
RESET ROLE;
SELECT is(pg_temp.other_rows(), (SELECT other_rows FROM before_role) , 'and the rest of tap_g too');

SELECT * FROM finish();
ROLLBACK;
