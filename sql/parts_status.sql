--
-- parts_status: update_part_status, update_message_tokens, tombstone_part
--
\set VERBOSITY sqlstate
-- the parts with their message's id (a part row names its message by seq)
CREATE TEMP VIEW parts AS
  SELECT p.*, m.id AS message_id FROM mnemo.message_parts p
    JOIN mnemo.messages m ON m.session_id = p.session_id AND m.tenant = p.tenant AND m.seq = p.seq;

SELECT id FROM mnemo.create_session('ps');
SELECT seq FROM mnemo.append_message('ps', 'assistant', '[
  {"type": "tool", "id": "ps_t1", "tool_name": "ls", "tool_call_id": "c1", "input": {"path": "/tmp"}},
  {"type": "tool", "id": "ps_t2", "tool_name": "cat", "tool_call_id": "c2", "tool_state": "running"},
  {"type": "text", "id": "ps_x", "text": "hello"}
]', id => 'ps_m1');

--
-- update_part_status: a tool's lifecycle
--
SELECT mnemo.update_part_status('ps', 'ps_t1', tool_state => 'running', started_at => 1736000000000);
SELECT tool_state, started_at, completed_at, compacted_at, content
  FROM mnemo.message_parts WHERE id = 'ps_t1';
-- output is merged into content; fields left NULL keep their values
SELECT mnemo.update_part_status('ps', 'ps_t1', tool_state => 'completed', completed_at => 1736000001500,
                                output => 'a.txt b.txt');
SELECT tool_state, started_at, completed_at, compacted_at, content
  FROM mnemo.message_parts WHERE id = 'ps_t1';
-- a call with nothing to change changes nothing
SELECT mnemo.update_part_status('ps', 'ps_t1');
SELECT tool_state, started_at, completed_at, compacted_at, content
  FROM mnemo.message_parts WHERE id = 'ps_t1';
-- while a part runs, a later output replaces the earlier one; error_message
-- is merged too
SELECT mnemo.update_part_status('ps', 'ps_t2', output => 'first');
SELECT mnemo.update_part_status('ps', 'ps_t2', output => 'second');
SELECT mnemo.update_part_status('ps', 'ps_t2', tool_state => 'error', error_message => 'no such file');
SELECT tool_state, content FROM mnemo.message_parts WHERE id = 'ps_t2';
-- write-once: an errored (or completed) part keeps its state, output and
-- error: MN005, and nothing is written
SELECT mnemo.update_part_status('ps', 'ps_t2', output => 'REWRITTEN');
SELECT mnemo.update_part_status('ps', 'ps_t2', error_message => 'REWRITTEN');
SELECT mnemo.update_part_status('ps', 'ps_t2', tool_state => 'pending');
SELECT mnemo.update_part_status('ps', 'ps_t2', tool_state => 'completed');
SELECT mnemo.update_part_status('ps', 'ps_t1', tool_state => 'pending', output => 'REWRITTEN');
SELECT mnemo.update_part_status('ps', 'ps_t1', tool_state => 'completed', output => 'REWRITTEN');
SELECT tool_state, content FROM mnemo.message_parts WHERE id IN ('ps_t1', 'ps_t2') ORDER BY id;
-- repeating the stored state changes nothing and is allowed
SELECT mnemo.update_part_status('ps', 'ps_t2', tool_state => 'error');
-- times can be moved; 0 is a valid time
SELECT mnemo.update_part_status('ps', 'ps_t2', started_at => 0, completed_at => 5);
SELECT started_at, completed_at FROM mnemo.message_parts WHERE id = 'ps_t2';

-- compacted_at is kept once set: a tombstone is permanent
SELECT mnemo.update_part_status('ps', 'ps_t1', compacted_at => 1736000002000);
SELECT mnemo.update_part_status('ps', 'ps_t1', compacted_at => 1736000009999);
SELECT compacted_at FROM mnemo.message_parts WHERE id = 'ps_t1';
-- ... and a tombstoned part's state and output are fixed too
SELECT mnemo.update_part_status('ps', 'ps_t1', tool_state => 'error', error_message => 'late');
SELECT tool_state, compacted_at, content FROM mnemo.message_parts WHERE id = 'ps_t1';

-- a non-tool part takes times and a tombstone, not tool fields
SELECT mnemo.update_part_status('ps', 'ps_x', compacted_at => 1736000003000, started_at => 1, completed_at => 2);
SELECT tool_state, started_at, completed_at, compacted_at, content
  FROM mnemo.message_parts WHERE id = 'ps_x';
SELECT mnemo.update_part_status('ps', 'ps_x', tool_state => 'completed');
SELECT mnemo.update_part_status('ps', 'ps_x', output => 'x');
SELECT mnemo.update_part_status('ps', 'ps_x', error_message => 'x');
-- other errors: unknown part MN003, bad tool_state or negative time 22023, NULL 22004
SELECT mnemo.update_part_status('ps', 'no_such_part', tool_state => 'completed');
SELECT mnemo.update_part_status('ps', 'no_such_part');
SELECT mnemo.update_part_status('ps', 'ps_t2', tool_state => 'done');
SELECT mnemo.update_part_status('ps', 'ps_t2', tool_state => '');
SELECT mnemo.update_part_status('ps', 'ps_t2', tool_state => 'COMPLETED');
SELECT mnemo.update_part_status('ps', 'ps_t2', started_at => -1);
SELECT mnemo.update_part_status('ps', 'ps_t2', completed_at => -1);
SELECT mnemo.update_part_status('ps', 'ps_t2', compacted_at => -1);
SELECT mnemo.update_part_status(NULL, NULL, tool_state => 'completed');
-- the failed calls changed nothing
SELECT id, tool_state, started_at, completed_at, compacted_at, content
  FROM parts WHERE message_id = 'ps_m1' ORDER BY part_index;
-- status changes are not appends: no seq, no part, no context item
SELECT last_seq FROM mnemo.get_session('ps');
SELECT count(*) FROM parts WHERE message_id = 'ps_m1';

-- the allowed moves: pending -> running -> completed or error, pending ->
-- completed or error; never back; a tombstoned pending part is fixed too
SELECT seq FROM mnemo.append_message('ps', 'assistant', '[
  {"type": "tool", "id": "ps_w1", "tool_name": "ls", "tool_call_id": "w1"},
  {"type": "tool", "id": "ps_w2", "tool_name": "ls", "tool_call_id": "w2"},
  {"type": "tool", "id": "ps_w3", "tool_name": "ls", "tool_call_id": "w3", "tool_state": "running"}
]', id => 'ps_mw');
SELECT mnemo.update_part_status('ps', 'ps_w1', tool_state => 'completed', output => 'one');
SELECT mnemo.update_part_status('ps', 'ps_w3', tool_state => 'pending');
SELECT mnemo.update_part_status('ps', 'ps_w3', tool_state => 'running', output => 'partial');
SELECT mnemo.tombstone_part('ps', 'ps_w2') IS NOT NULL AS tombstoned;
SELECT mnemo.update_part_status('ps', 'ps_w2', tool_state => 'running');
SELECT mnemo.update_part_status('ps', 'ps_w2', output => 'late');
SELECT mnemo.update_part_status('ps', 'ps_w2', started_at => 7, completed_at => 8);
SELECT mnemo.update_part_status('ps', 'ps_w3', tool_state => 'completed', output => 'done');
SELECT id, tool_state, started_at, completed_at, compacted_at IS NOT NULL AS tombstoned, content
  FROM parts WHERE message_id = 'ps_mw' ORDER BY part_index;

--
-- update_message_tokens
--
SELECT mnemo.update_message_tokens('ps', 'ps_m1',
  '{"input": 120, "output": 18, "cache_read": 5, "cache_write": 3, "reasoning": 7}', 0.0004, 'tool_calls');
SELECT tokens_input, tokens_output, tokens_cache_read, tokens_cache_write, tokens_reasoning,
       cost, finish_reason
  FROM mnemo.get_message('ps', 'ps_m1');
-- a key left out keeps its value; "total" is accepted and not stored;
-- a NULL finish_reason keeps the stored one
SELECT mnemo.update_message_tokens('ps', 'ps_m1', '{"output": 20, "total": 140}', 0.0005);
SELECT tokens_input, tokens_output, tokens_cache_read, tokens_cache_write, tokens_reasoning,
       cost, finish_reason
  FROM mnemo.get_message('ps', 'ps_m1');
-- a NULL cost keeps the stored one; JSON null for a count keeps it too
SELECT mnemo.update_message_tokens('ps', 'ps_m1', '{"input": null, "reasoning": 0}', NULL, 'stop');
SELECT tokens_input, tokens_output, tokens_cache_read, tokens_cache_write, tokens_reasoning,
       cost, finish_reason
  FROM mnemo.get_message('ps', 'ps_m1');
-- the other columns are untouched
SELECT seq, id, role, is_summary FROM mnemo.get_message('ps', 'ps_m1');
-- errors: unknown key, negative / fractional / string counts, tokens not an
-- object, negative or non-finite cost 22023; unknown message MN002; NULL 22004
SELECT mnemo.update_message_tokens('ps', 'ps_m1', '{"inputs": 1}', 0, 'stop');
SELECT mnemo.update_message_tokens('ps', 'ps_m1', '{"input": 1, "prompt": 2}', 0, 'stop');
SELECT mnemo.update_message_tokens('ps', 'ps_m1', '{"input": -1}', 0, 'stop');
SELECT mnemo.update_message_tokens('ps', 'ps_m1', '{"output": 1.5}', 0, 'stop');
SELECT mnemo.update_message_tokens('ps', 'ps_m1', '{"output": "5"}', 0, 'stop');
SELECT mnemo.update_message_tokens('ps', 'ps_m1', '[]', 0, 'stop');
SELECT mnemo.update_message_tokens('ps', 'ps_m1', '5', 0, 'stop');
SELECT mnemo.update_message_tokens('ps', 'ps_m1', '{}', -0.01, 'stop');
SELECT mnemo.update_message_tokens('ps', 'ps_m1', '{}', 'NaN', 'stop');
SELECT mnemo.update_message_tokens('ps', 'ps_m1', '{}', 'Infinity', 'stop');
SELECT mnemo.update_message_tokens('ps', 'no_such_message', '{"input": 1}', 0, 'stop');
SELECT mnemo.update_message_tokens(NULL, NULL, '{"input": 1}', 0, 'stop');
SELECT mnemo.update_message_tokens('ps', 'ps_m1', NULL, 0, 'stop');
SELECT mnemo.update_message_tokens('ps', 'ps_m1', '{"input": 1', 0, 'stop');
-- the failed calls changed nothing
SELECT tokens_input, tokens_output, tokens_cache_read, tokens_cache_write, tokens_reasoning,
       cost, finish_reason
  FROM mnemo.get_message('ps', 'ps_m1');

--
-- tombstone_part: sets compacted_at to now and returns it; idempotent
--
SELECT seq FROM mnemo.append_message('ps', 'tool', '[
  {"type": "tool", "id": "ps_t3", "tool_name": "grep", "tool_call_id": "c3", "tool_state": "completed",
   "output": "line 1\nline 2"},
  {"type": "text", "id": "ps_y", "text": "plain"}
]', id => 'ps_m2');
SELECT mnemo.tombstone_part('ps', 'ps_t3') AS first_tombstone \gset
SELECT abs(:first_tombstone - extract(epoch FROM clock_timestamp()) * 1000) < 60000 AS is_now;
SELECT pg_sleep(0.002);
-- a second call returns the first value and changes nothing
SELECT mnemo.tombstone_part('ps', 'ps_t3') = :first_tombstone AS same_value;
SELECT compacted_at = :first_tombstone AS kept FROM mnemo.message_parts WHERE id = 'ps_t3';
-- update_part_status cannot move it either
SELECT mnemo.update_part_status('ps', 'ps_t3', compacted_at => 1);
SELECT compacted_at = :first_tombstone AS kept FROM mnemo.message_parts WHERE id = 'ps_t3';
-- the content (the tool's output) stays intact
SELECT part_type, tool_state, content FROM mnemo.message_parts WHERE id = 'ps_t3';
-- a part tombstoned through update_part_status: tombstone_part returns that time
SELECT mnemo.tombstone_part('ps', 'ps_t1');
-- any part can be tombstoned
SELECT mnemo.tombstone_part('ps', 'ps_y') >= :first_tombstone AS tombstoned;
SELECT id, compacted_at IS NOT NULL AS tombstoned FROM parts
 WHERE message_id = 'ps_m2' ORDER BY part_index;
-- errors: unknown part MN003, NULL 22004
SELECT mnemo.tombstone_part('ps', 'no_such_part');
SELECT mnemo.tombstone_part(NULL, NULL);
-- tombstones are not appends
SELECT last_seq FROM mnemo.get_session('ps');

-- token counts are bigint; "total" is checked and dropped; NULL cost and
-- finish_reason keep their stored values
SELECT mnemo.update_message_tokens('ps', 'ps_m2', '{"input": 5000000000, "total": 5000000001}', 0.5, 'stop');
SELECT mnemo.update_message_tokens('ps', 'ps_m2', '{"output": 7}');
SELECT tokens_input, tokens_output, cost, finish_reason FROM mnemo.get_message('ps', 'ps_m2');
SELECT mnemo.update_message_tokens('ps', 'ps_m2', '{"total": "junk"}');
SELECT mnemo.update_message_tokens('ps', 'ps_m2', '{"input": 1.5}');
