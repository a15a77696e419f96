-- 060_status_reads: status changes, tombstones, reads and utilities: their
-- results and exact SQLSTATEs; every appended part reads back unchanged.
BEGIN;
SELECT plan(43);

SELECT lives_ok($$ SELECT mnemo.create_session('tap_r') $$, 'session');
CREATE TEMP TABLE input_parts AS SELECT '[
  {"type": "text", "id": "tap_r1_a", "text": "héllo wörld ✓ 日本語 😀"},
  {"type": "reasoning", "id": "tap_r1_b", "text": "line 1\nline 2\ttab \"quoted\" \\ backslash"},
  {"type": "tool", "id": "tap_r1_c", "tool_name": "grep", "tool_call_id": "c1", "tool_state": "running",
   "input": {"pattern": "a.*b", "paths": ["/x", "/y"], "opts": {"i": true, "n": 3.5, "none": null}}},
  {"type": "file_ref", "id": "tap_r1_d", "content_id": "sha256:0f", "path": "/src/main.c", "file_type": "c",
   "summary": "int main(void);", "token_count": 120},
  {"type": "step_finish", "id": "tap_r1_e", "reason": "stop", "extra": [1, "two", {"three": 3}]}
]'::jsonb AS parts;
SELECT is((mnemo.append_message('tap_r', 'assistant', (SELECT parts FROM input_parts), id => 'tap_r1')).seq, 1::bigint,
          'a message with every kind of content');
SELECT results_eq($$ SELECT content FROM mnemo.get_parts('tap_r', 'tap_r1') $$,
                  $$ SELECT jsonb_array_elements(parts) FROM input_parts $$,
                  'every part reads back exactly as appended, in order');
SELECT results_eq($$ SELECT p - ARRAY['part_index', 'token_estimate', 'tool_state']
                       FROM mnemo.get_messages_with_parts('tap_r'), jsonb_array_elements(parts) AS p $$,
                  $$ SELECT p - 'tool_state' FROM input_parts, jsonb_array_elements(parts) AS p $$,
                  'get_messages_with_parts returns the same content with the overlay added');
SELECT is((SELECT parts->2->>'tool_state' FROM mnemo.get_messages_with_parts('tap_r')), 'running',
          'the overlay carries the live tool_state');

--
-- update_part_status
--
SELECT lives_ok($$ SELECT mnemo.update_part_status('tap_r', 'tap_r1_c', tool_state => 'completed', started_at => 10,
                                                   completed_at => 20, output => 'found') $$, 'a tool completes');
SELECT results_eq($$ SELECT tool_state, started_at, completed_at, content->>'output' FROM mnemo.get_parts('tap_r', 'tap_r1') WHERE id = 'tap_r1_c' $$,
                  $$ VALUES ('completed', 10::bigint, 20::bigint, 'found') $$, 'its status and output are stored');
SELECT is((SELECT parts->2->>'tool_state' FROM mnemo.get_messages_with_parts_by_ids('tap_r', ARRAY['tap_r1'])), 'completed',
          'the overlay follows the status');
SELECT throws_ok($$ SELECT mnemo.update_part_status('tap_r', 'tap_missing_part', tool_state => 'completed') $$, 'MN003',
                 'part "tap_missing_part" does not exist in session "tap_r"', 'unknown part: MN003');
SELECT throws_ok($$ SELECT mnemo.update_part_status('tap_r', 'tap_r1_a', tool_state => 'completed') $$, '22023',
                 'part "tap_r1_a" is not a tool part', 'tool_state on a text part: 22023');
SELECT throws_ok($$ SELECT mnemo.update_part_status('tap_r', 'tap_r1_a', output => 'x') $$, '22023', NULL, 'output on a text part: 22023');
SELECT throws_ok($$ SELECT mnemo.update_part_status('tap_r', 'tap_r1_c', tool_state => 'finished') $$, '22023', NULL, 'bad tool_state: 22023');
SELECT throws_ok($$ SELECT mnemo.update_part_status('tap_r', 'tap_r1_c', started_at => -5) $$, '22023', NULL, 'negative time: 22023');
SELECT throws_ok($$ SELECT mnemo.update_part_status(NULL, NULL) $$, '22004', NULL, 'NULL part id: 22004');

--
-- tombstone_part
--
SELECT ok(mnemo.tombstone_part('tap_r', 'tap_r1_c') > 0, 'tombstone');
SELECT is(mnemo.tombstone_part('tap_r', 'tap_r1_c'), (SELECT compacted_at FROM mnemo.message_parts WHERE id = 'tap_r1_c'),
          'a second tombstone returns the first value');
SELECT lives_ok($$ SELECT mnemo.update_part_status('tap_r', 'tap_r1_c', compacted_at => 1) $$, 'update_part_status(compacted_at) on a tombstone');
SELECT ok((SELECT compacted_at FROM mnemo.message_parts WHERE id = 'tap_r1_c') > 1, 'does not move it');
SELECT throws_ok($$ SELECT mnemo.tombstone_part('tap_r', 'tap_missing_part') $$, 'MN003', NULL, 'tombstone of an unknown part: MN003');

--
-- update_message_tokens
--
SELECT lives_ok($$ SELECT mnemo.update_message_tokens('tap_r', 'tap_r1', '{"input": 3, "output": 4, "cache_read": 5, "cache_write": 6, "reasoning": 7, "total": 25}', 0.5, 'stop') $$,
                'token usage');
SELECT results_eq($$ SELECT tokens_input, tokens_output, tokens_cache_read, tokens_cache_write, tokens_reasoning, cost, finish_reason
                       FROM mnemo.get_message('tap_r', 'tap_r1') $$,
                  $$ VALUES (3::bigint, 4::bigint, 5::bigint, 6::bigint, 7::bigint, 0.5::float8, 'stop') $$, 'is stored');
SELECT throws_ok($$ SELECT mnemo.update_message_tokens('tap_r', 'tap_missing_msg', '{}', 0, 'stop') $$, 'MN002', NULL, 'unknown message: MN002');
SELECT throws_ok($$ SELECT mnemo.update_message_tokens('tap_r', 'tap_r1', '{"completion": 1}', 0, 'stop') $$, '22023',
                 'tokens: unknown key "completion"', 'unknown key: 22023');
SELECT throws_ok($$ SELECT mnemo.update_message_tokens('tap_r', 'tap_r1', '{"input": -1}', 0, 'stop') $$, '22023', NULL, 'negative count: 22023');
SELECT throws_ok($$ SELECT mnemo.update_message_tokens('tap_r', 'tap_r1', '{}', 'NaN', 'stop') $$, '22023', NULL, 'NaN cost: 22023');

--
-- reads
--
SELECT lives_ok($$ SELECT mnemo.append_message('tap_r', 'user', '[]', id => 'tap_r' || g) FROM generate_series(2, 5) AS g $$,
                'four more messages');
SELECT throws_ok($$ SELECT mnemo.get_message('tap_r', 'tap_missing_msg') $$, 'MN002', 'message "tap_missing_msg" does not exist in session "tap_r"',
                 'get_message: MN002');
SELECT throws_ok($$ SELECT * FROM mnemo.get_parts('tap_r', 'tap_missing_msg') $$, 'MN002', NULL, 'get_parts: MN002');
SELECT throws_ok($$ SELECT * FROM mnemo.get_messages('tap_missing') $$, 'MN001', NULL, 'get_messages of an unknown session: MN001');
SELECT throws_ok($$ SELECT * FROM mnemo.get_messages('tap_r', 'tap_missing_msg') $$, 'MN002', NULL,
                 'get_messages since an unknown message: MN002');
SELECT results_eq($$ SELECT seq FROM mnemo.get_messages('tap_r', since_message_id => 'tap_r3') $$, ARRAY[4, 5]::bigint[],
                  'get_messages since a message');
SELECT results_eq($$ SELECT id FROM mnemo.get_messages_with_parts_by_ids('tap_r', ARRAY['tap_r4', 'tap_r1', 'tap_r4']) $$,
                  ARRAY['tap_r4', 'tap_r1', 'tap_r4'], 'by_ids: in the order given, repeats included');
SELECT throws_ok($$ SELECT * FROM mnemo.get_messages_with_parts_by_ids('tap_r', ARRAY['tap_r1', 'tap_gone1', 'tap_gone2']) $$, 'MN002',
                 'message "tap_gone1" does not exist in session "tap_r"', 'by_ids: MN002 naming the first missing id');
SELECT throws_ok($$ SELECT * FROM mnemo.get_messages_with_parts_by_ids('tap_r', ARRAY[NULL]::text[]) $$, '22004', NULL, 'by_ids: NULL element 22004');
SELECT results_eq($$ SELECT seq FROM mnemo.history('tap_r', 2) $$, ARRAY[4, 5]::bigint[], 'history: the last two, oldest first');
SELECT results_eq($$ SELECT seq FROM mnemo.history('tap_r') $$, ARRAY[1, 2, 3, 4, 5]::bigint[], 'history: NULL is all');
SELECT throws_ok($$ SELECT * FROM mnemo.history('tap_r', -1) $$, '22023', NULL, 'history: negative limit 22023');
SELECT throws_ok($$ SELECT * FROM mnemo.get_context_items('tap_missing') $$, 'MN001', NULL, 'get_context_items: MN001');
SELECT ok(mnemo.last_summary('tap_r') IS NULL, 'last_summary: NULL without summaries');
SELECT throws_ok($$ SELECT mnemo.last_summary('tap_missing') $$, 'MN001', NULL, 'last_summary: MN001');

--
-- utilities and files
--
SELECT throws_ok($$ SELECT mnemo.new_id('a b') $$, '22023', NULL, 'new_id with a bad prefix: 22023');
SELECT throws_ok($$ SELECT mnemo.new_id(NULL) $$, '22004', NULL, 'new_id(NULL): 22004');
SELECT throws_ok($$ SELECT mnemo.store_file_reference('sha256:x', '') $$, '22023', NULL, 'empty path: 22023');

SELECT * FROM finish();
ROLLBACK;
