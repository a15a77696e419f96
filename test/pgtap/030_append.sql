-- 030_append: appends, their errors with exact SQLSTATEs, and invariant 2
-- (total order): within a session seqs are dense and strictly increasing,
-- whatever mix of single appends, batches, part appends and failed calls.
BEGIN;
SELECT plan(55);

SELECT lives_ok($$ SELECT mnemo.create_session('tap_o') $$, 'session tap_o');
SELECT lives_ok($$ SELECT mnemo.create_session('tap_x') $$, 'session tap_x');

--
-- errors, each with its exact SQLSTATE
--
SELECT lives_ok($$ SELECT mnemo.append_message('tap_x', 'user', '[{"type": "text", "id": "tap_x_p1", "text": "a"}]', id => 'tap_x_m1') $$,
                'an append to collide with');
SELECT throws_ok($$ SELECT mnemo.append_message('tap_missing', 'user', '[]') $$, 'MN001',
                 'session "tap_missing" does not exist', 'unknown session: MN001');
SELECT throws_ok($$ SELECT mnemo.append_message('tap_x', 'user', '[]', id => 'tap_x_m1') $$, 'MN004',
                 'message "tap_x_m1" already exists', 'duplicate message id: MN004');
SELECT throws_ok($$ SELECT mnemo.append_message('tap_x', 'user', '[{"type": "text", "id": "tap_x_p1", "text": "b"}]', id => 'tap_x_m2') $$,
                 'MN004', 'part "tap_x_p1" already exists', 'duplicate part id: MN004');
SELECT is((SELECT count(*) FROM mnemo.messages WHERE id = 'tap_x_m2'), 0::bigint,
          'the message of a call that failed on its part is not left behind');
SELECT throws_ok($$ SELECT mnemo.append_message('tap_x', 'robot', '[]') $$, '22023', NULL, 'unknown role: 22023');
SELECT throws_ok($$ SELECT mnemo.append_message('tap_x', 'user', '{}') $$, '22023', NULL, 'parts not an array: 22023');
SELECT throws_ok($$ SELECT mnemo.append_message('tap_x', 'user', '[1]') $$, '22023', NULL, 'a part that is not an object: 22023');
SELECT throws_ok($$ SELECT mnemo.append_message('tap_x', 'user', '[{"type": "image"}]') $$, '22023', NULL, 'unknown part type: 22023');
SELECT throws_ok($$ SELECT mnemo.append_message('tap_x', 'user', '[{"type": "tool", "tool_call_id": "c"}]') $$, '22023', NULL,
                 'tool part without tool_name: 22023');
SELECT throws_ok($$ SELECT mnemo.append_message('tap_x', 'user', '[{"type": "file_ref", "content_id": "c"}]') $$, '22023', NULL,
                 'file_ref part without path: 22023');
SELECT throws_ok($$ SELECT mnemo.append_message('tap_x', 'user', '[{"type": "tool", "tool_name": "t", "tool_call_id": "c", "tool_state": "done"}]') $$,
                 '22023', NULL, 'bad tool_state: 22023');
SELECT throws_ok($$ SELECT mnemo.append_message('tap_x', 'user', '[{"type": "text", "text": "x", "token_estimate": -1}]') $$,
                 '22023', NULL, 'negative token_estimate: 22023');
SELECT throws_ok($$ SELECT mnemo.append_message('tap_x', 'user', '[{"type": "text", "text": "x", "token_estimate": 1.5}]') $$,
                 '22023', NULL, 'fractional token_estimate: 22023');
SELECT throws_ok($$ SELECT mnemo.append_message('tap_x', 'user', '[{"type": "text", "text": "x", "token_estimate": "5"}]') $$,
                 '22023', NULL, 'string token_estimate: 22023');
SELECT throws_ok($$ SELECT mnemo.append_message(NULL, 'user', '[]') $$, '22004', 'session_id must not be null', 'NULL session_id: 22004');
SELECT throws_ok($$ SELECT mnemo.append_message('tap_x', NULL, '[]') $$, '22004', NULL, 'NULL role: 22004');
SELECT throws_ok($$ SELECT mnemo.append_message('tap_x', 'user', NULL) $$, '22004', NULL, 'NULL parts: 22004');
SELECT throws_ok($$ SELECT mnemo.append_message('tap_x', 'user', '[{"type":') $$, '22P02', NULL, 'text that is not JSON: 22P02');
SELECT throws_ok($$ SELECT mnemo.append_messages('tap_x', '{}') $$, '22023', NULL, 'append_messages of a non-array: 22023');
SELECT throws_ok($$ SELECT mnemo.append_messages('tap_x', NULL) $$, '22004', NULL, 'append_messages(NULL): 22004');
SELECT throws_ok($$ SELECT mnemo.append_part('tap_o', 'tap_missing_msg', '{"type": "text", "text": "x"}') $$, 'MN002',
                 'message "tap_missing_msg" does not exist in session "tap_o"', 'append_part to an unknown message: MN002');
SELECT throws_ok($$ SELECT mnemo.append_part('tap_x', 'tap_x_m1', '{"type": "text", "id": "tap_x_p1", "text": "x"}') $$, 'MN004', NULL,
                 'append_part with a taken part id: MN004');
-- a batch writes each table with one statement: the ids it names are checked
-- first, and the clash reported is the first a row-by-row write would meet
SELECT throws_ok($$ SELECT mnemo.append_messages('tap_x', '[
                       {"id": "tap_x_b1", "role": "user", "parts": []},
                       {"id": "tap_x_b1", "role": "user", "parts": []}]') $$,
                 'MN004', 'message "tap_x_b1" already exists', 'a batch naming one message id twice: MN004');
SELECT throws_ok($$ SELECT mnemo.append_messages('tap_x', '[
                       {"id": "tap_x_b2", "role": "user", "parts": [{"type": "text", "id": "tap_x_bp", "text": "a"}]},
                       {"id": "tap_x_b3", "role": "user", "parts": [{"type": "text", "id": "tap_x_bp", "text": "b"}]}]') $$,
                 'MN004', 'part "tap_x_bp" already exists', 'a batch naming one part id in two messages: MN004');
SELECT throws_ok($$ SELECT mnemo.append_messages('tap_x', '[
                       {"id": "tap_x_b4", "role": "user", "parts": [{"type": "text", "id": "tap_x_p1", "text": "a"}]},
                       {"id": "tap_x_m1", "role": "user", "parts": []}]') $$,
                 'MN004', 'part "tap_x_p1" already exists', 'a batch with a taken part before a taken message id names the part');
SELECT throws_ok($$ SELECT mnemo.append_messages('tap_x', '[
                       {"id": "tap_x_b5", "role": "user", "parts": []},
                       {"id": "tap_x_m1", "role": "user", "parts": [{"type": "text", "id": "tap_x_p1", "text": "a"}]}]') $$,
                 'MN004', 'message "tap_x_m1" already exists', 'a batch with a taken message id before a taken part names the message');
SELECT is((SELECT count(*) FROM mnemo.messages WHERE id LIKE 'tap\_x\_b%'), 0::bigint,
          'no row of a batch that failed on an id is stored');
SELECT lives_ok($$ SELECT mnemo.create_session('tap_c'); SELECT mnemo.append_messages('tap_c', '[
                       {"id": "tap_x_c1", "role": "user", "parts": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
                       {"id": "tap_x_c2", "role": "assistant", "is_summary": true, "parts": [{"type": "text", "text": "s"}]},
                       {"id": "tap_x_c3", "role": "assistant", "parts": [{"type": "text", "text": "c"}]}]') $$,
                'a batch of messages with several parts and a summary');
SELECT results_eq($$ SELECT m.id || ':' || p.part_index || ':' || (p.content->>'text')
                       FROM mnemo.messages m JOIN mnemo.message_parts p ON p.session_id = m.session_id AND p.seq = m.seq
                      WHERE m.session_id = 'tap_c' ORDER BY m.seq, p.part_index $$,
                  ARRAY['tap_x_c1:0:a', 'tap_x_c1:1:b', 'tap_x_c2:0:s', 'tap_x_c3:0:c'],
                  'each part of a batch is stored with its message and its index');
SELECT results_eq($$ SELECT item_id || '@' || position FROM mnemo.get_context_items('tap_c') $$,
                  ARRAY['tap_x_c1@1', 'tap_x_c3@3'],
                  'a batch puts its messages but not its summary in context, each at position = its seq');
SELECT is((SELECT count(*) FROM mnemo.context_items c
            WHERE c.session_id = 'tap_c'), 0::bigint,
          'the batch wrote no context row: its messages are the view''s implicit tail');
SELECT is((SELECT last_seq FROM mnemo.get_session('tap_x')), 1::bigint, 'none of the failed calls used a seq');

--
-- invariant 2: total order
--
SELECT is((mnemo.append_message('tap_o', 'user', '[{"type": "text", "text": "1"}]', id => 'tap_o1')).seq, 1::bigint,
          'the first message gets seq 1');
SELECT results_eq($$ SELECT seq FROM mnemo.append_messages('tap_o', '[
                       {"id": "tap_o2", "role": "assistant", "parts": [{"type": "text", "id": "tap_o2_p", "text": "2"}]},
                       {"id": "tap_o3", "role": "user", "parts": []},
                       {"id": "tap_o4", "role": "assistant", "parts": []}]') $$,
                  ARRAY[2, 3, 4]::bigint[], 'a batch takes the next consecutive seqs');
SELECT throws_ok($$ SELECT mnemo.append_message('tap_o', 'user', '[{"type": "text", "id": "tap_o2_p", "text": "dup"}]', id => 'tap_bad1') $$,
                 'MN004', NULL, 'a failed single append');
SELECT throws_ok($$ SELECT mnemo.append_messages('tap_o', '[
                       {"id": "tap_bad2", "role": "user", "parts": []},
                       {"id": "tap_bad3", "role": "user", "parts": []},
                       {"id": "tap_o1", "role": "user", "parts": []}]') $$,
                 'MN004', NULL, 'a batch that fails on its third message');
SELECT throws_ok($$ SELECT mnemo.append_messages('tap_o', '[
                       {"id": "tap_bad4", "role": "user", "parts": []},
                       {"id": "tap_bad5", "role": "nobody", "parts": []}]') $$,
                 '22023', NULL, 'a batch that fails validation');
SELECT is((SELECT count(*) FROM mnemo.messages WHERE id LIKE 'tap\_bad%'), 0::bigint,
          'no message of a failed call or batch is stored');
SELECT is(mnemo.append_part('tap_o', 'tap_o2', '{"type": "text", "text": "streamed"}'), 1, 'append_part takes the next part_index');
SELECT is((mnemo.append_message('tap_o', 'assistant', '[]', id => 'tap_o5', is_summary => true)).seq, 5::bigint,
          'after the failures and a part append, the next seq is 5: no gap');
SELECT is((mnemo.append_message('tap_o', 'user', '[]', id => 'tap_o6')).seq, 6::bigint, 'seq 6');
SELECT throws_ok($$ SELECT mnemo.append_message('tap_o', 'user', '[{"type": "text"}]', id => 'tap_bad6') $$,
                 '22023', NULL, 'another failed append');
SELECT results_eq($$ SELECT seq FROM mnemo.append_messages('tap_o', '[
                       {"id": "tap_o7", "role": "user", "parts": []},
                       {"id": "tap_o8", "role": "assistant", "parts": []}]') $$,
                  ARRAY[7, 8]::bigint[], 'another batch: 7, 8');
SELECT results_eq($$ SELECT seq FROM mnemo.append_messages('tap_o', '[]') $$, ARRAY[]::bigint[],
                  'an empty batch takes no seq');
SELECT is((mnemo.append_message('tap_o', 'user', '[]', id => 'tap_o9')).seq, 9::bigint, 'seq 9');

SELECT results_eq($$ SELECT seq FROM mnemo.get_messages('tap_o') $$,
                  $$ SELECT generate_series(1, 9)::bigint $$, 'seqs are exactly 1..9');
SELECT results_eq($$ SELECT id FROM mnemo.get_messages('tap_o') $$,
                  $$ SELECT 'tap_o' || g FROM generate_series(1, 9) AS g $$, 'in the order of the appends');
SELECT is((SELECT last_seq FROM mnemo.get_session('tap_o')), 9::bigint, 'the session counter agrees');
SELECT is_empty($$ SELECT 1 FROM (SELECT created_at < lag(created_at) OVER (ORDER BY seq) AS back
                                    FROM mnemo.messages WHERE session_id = 'tap_o') AS t WHERE back $$,
                'created_at never goes back as seq goes up');
-- the context view: one item per non-summary message, at position = its seq
SELECT results_eq($$ SELECT item_id, position FROM mnemo.get_context_items('tap_o') $$,
                  $$ SELECT id, seq FROM mnemo.messages
                      WHERE session_id = 'tap_o' AND NOT is_summary ORDER BY seq $$,
                  'one context item per non-summary message, at position = its seq, in seq order');
SELECT results_eq($$ SELECT part_index FROM mnemo.get_parts('tap_o', 'tap_o2') $$, ARRAY[0, 1],
                  'part indexes are dense');
SELECT is((SELECT max(position) FROM mnemo.get_context_items('tap_o')), 9::bigint, 'the view ends at the last non-summary message''s seq');

SELECT * FROM finish();
ROLLBACK;
