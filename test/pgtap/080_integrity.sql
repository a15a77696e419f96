-- 080_integrity: integrity kept by the database itself (issue 13).
--  * CHECK constraints: finite non-negative cost, non-negative counts and
--    times, metadata and state objects.  The functions refuse such values
--    first with 22023 and write nothing; any other write (here the
--    superuser's UPDATE) meets the CHECK: 23514.
--  * A bare swap_context_items may not put a summary node in context (a
--    superseded one least of all): MN006, nothing changed.
--  * Every write to a soft-deleted session fails with MN012 and writes
--    nothing.
BEGIN;
SELECT plan(60);

CREATE FUNCTION pg_temp.state(sid text) RETURNS text LANGUAGE sql AS $$
    SELECT md5(concat_ws('#',
        (SELECT string_agg(c::text, '|' ORDER BY position) FROM mnemo.context_items c WHERE session_id = sid),
        (SELECT string_agg(m::text, '|' ORDER BY seq) FROM mnemo.messages m WHERE session_id = sid),
        (SELECT string_agg(p::text, '|' ORDER BY session_id, seq, part_index) FROM mnemo.message_parts p
          WHERE session_id = sid),
        (SELECT string_agg(n::text, '|' ORDER BY id) FROM mnemo.summary_nodes n WHERE session_id = sid),
        (SELECT string_agg(e::text, '|' ORDER BY summary_id, ordinal) FROM mnemo.summary_edges e
          WHERE session_id = sid),
        (SELECT s::text FROM mnemo.sessions s WHERE id = sid)))
$$;

--
-- CHECK constraints
--
-- (one CHECK per table an append writes, over every column it rules on:
-- src/core/row_checks.c)
SELECT col_has_check('mnemo', 'log', ARRAY['part_index', 'id', 'role', 'created_at', 'agent', 'model_id',
                     'provider_id', 'is_summary', 'cost', 'tokens_input', 'tokens_output', 'tokens_cache_read',
                     'tokens_cache_write', 'tokens_reasoning', 'part_type', 'content', 'tool_state',
                     'token_estimate', 'compacted_at', 'started_at', 'completed_at'],
                     'log: one CHECK on the message''s columns (part 0) and the part''s');
SELECT col_has_check('mnemo', 'sessions', ARRAY['created_at', 'updated_at', 'metadata', 'state',
                     'fork_seq', 'forks', 'discards'],
                     'sessions: one CHECK on the times, metadata, state and the counters');
SELECT col_has_check('mnemo', 'context_items', ARRAY['item_type', 'created_at'],
                     'context_items: one CHECK on item_type and created_at');

SELECT lives_ok($$ SELECT mnemo.create_session('tap_i');
                   -- a context row (appends write none: a swapped-in summary)
                   SELECT mnemo.append_messages('tap_i', '[{"id": "tap_i_m0", "role": "user", "parts": []},
                     {"id": "tap_i_s0", "role": "assistant", "is_summary": true, "parts": []}]');
                   SELECT mnemo.swap_context_items('tap_i', ARRAY['tap_i_m0'], 'tap_i_s0');
                   SELECT mnemo.append_message('tap_i', 'assistant',
                     '[{"type": "tool", "id": "tap_i_t", "tool_name": "ls", "tool_call_id": "c1", "input": {}}]',
                     id => 'tap_i_m1');
                   SELECT mnemo.append_message('tap_i', 'assistant',
                     '[{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]', id => 'tap_i_m2') $$,
                'a session with a tool call and a message of two parts');
SELECT lives_ok($$ SELECT mnemo.update_message_tokens('tap_i', 'tap_i_m1', '{"input": 10, "output": 2}', 0.5, 'stop') $$,
                'usage recorded');
CREATE TEMP TABLE i0 AS SELECT pg_temp.state('tap_i') AS s;

SELECT throws_ok($$ SELECT mnemo.update_message_tokens('tap_i', 'tap_i_m1', '{}', 'NaN') $$, '22023', NULL,
                 'update_message_tokens: cost NaN is 22023');
SELECT throws_ok($$ SELECT mnemo.update_message_tokens('tap_i', 'tap_i_m1', '{}', 'Infinity') $$, '22023', NULL,
                 'update_message_tokens: cost Infinity is 22023');
SELECT throws_ok($$ SELECT mnemo.update_message_tokens('tap_i', 'tap_i_m1', '{}', '-Infinity') $$, '22023', NULL,
                 'update_message_tokens: cost -Infinity is 22023');
SELECT throws_ok($$ SELECT mnemo.update_message_tokens('tap_i', 'tap_i_m1', '{}', -0.01) $$, '22023', NULL,
                 'update_message_tokens: a negative cost is 22023');
SELECT throws_ok($$ SELECT mnemo.update_message_tokens('tap_i', 'tap_i_m1', '{"output": -1}') $$, '22023', NULL,
                 'update_message_tokens: a negative token count is 22023');
SELECT throws_ok($$ SELECT mnemo.update_message_tokens('tap_i', 'tap_i_m1', '{"input": 1.5}') $$, '22023', NULL,
                 'update_message_tokens: a fractional token count is 22023');
SELECT throws_ok($$ SELECT mnemo.update_part_status('tap_i', 'tap_i_t', started_at => -1) $$, '22023', NULL,
                 'update_part_status: a negative time is 22023');
SELECT throws_ok($$ SELECT mnemo.append_message('tap_i', 'user',
                     '[{"type": "text", "text": "x", "token_estimate": -3}]') $$, '22023', NULL,
                 'append_message: a negative token_estimate is 22023');
SELECT throws_ok($$ SELECT mnemo.store_file_reference('sha256:tap_i', 'x.c', 'c', -1) $$, '22023', NULL,
                 'store_file_reference: a negative token_count is 22023');
SELECT throws_ok($$ SELECT mnemo.create_session('tap_i_bad', metadata => '[1, 2]') $$, '22023', NULL,
                 'create_session: metadata that is not an object is 22023');
SELECT is((SELECT s FROM i0), pg_temp.state('tap_i'), 'the refused calls wrote nothing');

-- a direct write by a role allowed to make one still meets the CHECKs
SELECT throws_ok($$ UPDATE mnemo.messages SET cost = 'NaN' WHERE id = 'tap_i_m1' $$, '23514', NULL,
                 'a direct UPDATE of cost to NaN is refused by the CHECK (23514)');
SELECT throws_ok($$ UPDATE mnemo.messages SET cost = 'Infinity' WHERE id = 'tap_i_m1' $$, '23514', NULL,
                 'a direct UPDATE of cost to Infinity is refused by the CHECK (23514)');
SELECT throws_ok($$ UPDATE mnemo.messages SET tokens_reasoning = -1 WHERE id = 'tap_i_m1' $$, '23514', NULL,
                 'a direct UPDATE of a token count below 0 is refused by the CHECK (23514)');
SELECT throws_ok($$ UPDATE mnemo.message_parts SET completed_at = -1 WHERE id = 'tap_i_t' $$, '23514', NULL,
                 'a direct UPDATE of a part time below 0 is refused by the CHECK (23514)');
SELECT throws_ok($$ UPDATE mnemo.sessions SET metadata = '"text"' WHERE id = 'tap_i' $$, '23514', NULL,
                 'a direct UPDATE of metadata to a non-object is refused by the CHECK (23514)');
SELECT throws_ok($$ UPDATE mnemo.sessions SET state = '[]' WHERE id = 'tap_i' $$, '23514', NULL,
                 'a direct UPDATE of state to a non-object is refused by the CHECK (23514)');
SELECT throws_ok($$ UPDATE mnemo.sessions SET forks = -1 WHERE id = 'tap_i' $$, '23514', NULL,
                 'a direct UPDATE of a session counter below 0 is refused by the CHECK (23514)');
SELECT throws_ok($$ UPDATE mnemo.messages SET role = 'robot' WHERE id = 'tap_i_m1' $$, '23514', NULL,
                 'a direct UPDATE of a role to one not in the list is refused by the CHECK (23514)');
SELECT throws_ok($$ UPDATE mnemo.message_parts SET tool_state = 'paused' WHERE id = 'tap_i_t' $$, '23514', NULL,
                 'a direct UPDATE of a tool_state to one not in the list is refused by the CHECK (23514)');
-- the log's shape: a message's columns on its part 0 row only, a part's
-- type and content together, a row without a part only at part 0
SELECT throws_ok($$ UPDATE mnemo.log SET role = 'user' WHERE part_index > 0 AND session_id = 'tap_i' $$,
                 '23514', NULL, 'a message column on a part after the first is refused by the CHECK (23514)');
SELECT throws_ok($$ UPDATE mnemo.log SET agent = NULL WHERE id = 'tap_i_m1' $$, '23514', NULL,
                 'a part 0 row without its message''s agent is refused by the CHECK (23514)');
SELECT throws_ok($$ UPDATE mnemo.log SET part_type = NULL WHERE id = 'tap_i_m1' $$, '23514', NULL,
                 'a part type without content, or content without a type, is refused by the CHECK (23514)');
SELECT throws_ok($$ UPDATE mnemo.log SET part_type = NULL, content = NULL, token_estimate = NULL
                     WHERE session_id = 'tap_i' AND part_index > 0 $$, '23514', NULL,
                 'a row without a part after part 0 is refused by the CHECK (23514)');
SELECT throws_ok($$ UPDATE mnemo.context_items SET item_type = 'note' WHERE session_id = 'tap_i' $$, '23514', NULL,
                 'a direct UPDATE of an item_type to one not in the list is refused by the CHECK (23514)');
SELECT is((SELECT s FROM i0), pg_temp.state('tap_i'), 'the refused direct writes wrote nothing');
SELECT is((SELECT cost FROM mnemo.messages WHERE id = 'tap_i_m1'), 0.5::double precision, 'the cost is still 0.5');
-- NULL passes where the column allows it; a state is judged by its root
-- alone, compressed and out of line or not
SELECT lives_ok($$ UPDATE mnemo.sessions SET metadata = NULL, fork_seq = NULL WHERE id = 'tap_i' $$,
                'a NULL metadata and fork_seq pass the CHECK');
SELECT throws_ok($$ UPDATE mnemo.sessions SET state = to_jsonb(repeat('x', 300000)) WHERE id = 'tap_i' $$,
                 '23514', NULL, 'a large state that is a string is refused by the CHECK (23514)');
SELECT lives_ok($$ UPDATE mnemo.sessions SET state = jsonb_build_object('notes', repeat('x', 300000)) WHERE id = 'tap_i';
                   SELECT mnemo.append_message('tap_i', 'user', '[{"type": "text", "text": "after"}]') $$,
                'a large state object passes the CHECK, and so does the append that carries it along');

--
-- a bare swap may not put a summary node in context
--
SELECT lives_ok($$ SELECT mnemo.create_session('tap_n');
    SELECT mnemo.append_messages('tap_n', (
        SELECT jsonb_agg(jsonb_build_object('id', 'tap_n' || g, 'role', 'user',
                                            'parts', jsonb_build_array(jsonb_build_object('type', 'text', 'text', 'm' || g))))
          FROM generate_series(1, 6) AS g)) $$, 'six messages');
SELECT lives_ok($$ SELECT mnemo.commit_summary('tap_n', 'tap_ns1', 's1', 2, ARRAY['tap_n1', 'tap_n2']);
                   SELECT mnemo.commit_summary('tap_n', 'tap_ns2', 's2', 2, ARRAY['tap_n3', 'tap_n4']);
                   SELECT mnemo.commit_summary('tap_n', 'tap_nc', 'c', 2, ARRAY['tap_ns1', 'tap_ns2'], 'condensed') $$,
                'two leaves condensed');
CREATE TEMP TABLE n0 AS SELECT pg_temp.state('tap_n') AS s;
-- the issue's reproduction: a superseded summary swapped back in
SELECT throws_ok($$ SELECT mnemo.swap_context_items('tap_n', ARRAY['tap_n5'], 'tap_ns1') $$, 'MN006', NULL,
                 'a bare swap cannot reinstate a superseded summary (MN006)');
SELECT throws_ok($$ SELECT mnemo.swap_context_items('tap_n', ARRAY['tap_nc'], 'tap_ns2') $$, 'MN006', NULL,
                 'nor swap a superseded summary in for its parent (MN006)');
SELECT is((SELECT s FROM n0), pg_temp.state('tap_n'), 'the refused swaps changed nothing');
SELECT results_eq($$ SELECT item_id FROM mnemo.get_context_items('tap_n') $$,
                  $$ VALUES ('tap_nc'), ('tap_n5'), ('tap_n6') $$, 'the view holds the condensation and the tail');
SELECT results_eq($$ SELECT id FROM mnemo.summary_nodes('tap_n') $$, $$ VALUES ('tap_nc') $$,
                  'summary_nodes() lists every node in context');
-- a summary message that is no node still goes in by a bare swap
SELECT lives_ok($$ SELECT mnemo.append_message('tap_n', 'assistant', '[{"type": "text", "text": "bare"}]',
                                               id => 'tap_nbare', is_summary => true);
                   SELECT mnemo.swap_context_items('tap_n', ARRAY['tap_n5'], 'tap_nbare') $$,
                'a bare summary (no node) is swapped in as before');

--
-- MN012: every write to a soft-deleted session
--
SELECT lives_ok($$ SELECT mnemo.create_session('tap_d');
    SELECT mnemo.append_messages('tap_d', '[
      {"id": "tap_ds", "role": "assistant", "is_summary": true, "parts": [{"type": "text", "text": "bare"}]},
      {"id": "tap_d1", "role": "user", "parts": [{"type": "text", "text": "one"}]},
      {"id": "tap_d2", "role": "assistant", "parts": [{"type": "tool", "id": "tap_dt", "tool_name": "ls",
        "tool_call_id": "c1", "tool_state": "completed", "input": {}, "output": "a b c", "token_estimate": 50000}]},
      {"id": "tap_d3", "role": "user", "parts": [{"type": "text", "text": "two"}]},
      {"id": "tap_d4", "role": "user", "parts": [{"type": "text", "text": "three"}]}]');
    SELECT mnemo.soft_delete_session('tap_d') $$, 'a session with a tool call, then soft-deleted');
CREATE TEMP TABLE d0 AS SELECT pg_temp.state('tap_d') AS s;
SELECT throws_ok($$ SELECT mnemo.append_message('tap_d', 'user', '[]') $$, 'MN012', NULL, 'append_message: MN012');
SELECT throws_ok($$ SELECT mnemo.append_messages('tap_d', '[{"role": "user", "parts": []}]') $$, 'MN012', NULL,
                 'append_messages: MN012');
SELECT throws_ok($$ SELECT mnemo.append_part('tap_d', 'tap_d1', '{"type": "text", "text": "late"}') $$, 'MN012', NULL,
                 'append_part: MN012');
SELECT throws_ok($$ SELECT mnemo.update_part_status('tap_d', 'tap_dt', tool_state => 'error') $$, 'MN012', NULL,
                 'update_part_status: MN012');
SELECT throws_ok($$ SELECT mnemo.update_message_tokens('tap_d', 'tap_d2', '{"input": 5}', 1.0) $$, 'MN012', NULL,
                 'update_message_tokens: MN012');
SELECT throws_ok($$ SELECT mnemo.tombstone_part('tap_d', 'tap_dt') $$, 'MN012', NULL, 'tombstone_part: MN012');
SELECT throws_ok($$ SELECT mnemo.prune_tool_outputs('tap_d', 0, 0) $$, 'MN012', NULL, 'prune_tool_outputs: MN012');
SELECT throws_ok($$ SELECT mnemo.swap_context_items('tap_d', ARRAY['tap_d1'], 'tap_ds') $$, 'MN012', NULL,
                 'swap_context_items: MN012');
SELECT throws_ok($$ SELECT mnemo.commit_summary('tap_d', 'tap_dsum', 's', 1, ARRAY['tap_d1']) $$, 'MN012', NULL,
                 'commit_summary: MN012');
SELECT is((SELECT s FROM d0), pg_temp.state('tap_d'), 'the refused writes wrote nothing (nor touched updated_at)');
-- the same calls on an active session: the refusals above are about the session, not the arguments
SELECT lives_ok($$ SELECT mnemo.create_session('tap_e');
    SELECT mnemo.append_messages('tap_e', '[
      {"id": "tap_es", "role": "assistant", "is_summary": true, "parts": [{"type": "text", "text": "bare"}]},
      {"id": "tap_e1", "role": "user", "parts": [{"type": "text", "text": "one"}]},
      {"id": "tap_e2", "role": "assistant", "parts": [{"type": "tool", "id": "tap_et", "tool_name": "ls",
        "tool_call_id": "c1", "tool_state": "completed", "input": {}, "output": "a b c", "token_estimate": 50000}]},
      {"id": "tap_e3", "role": "user", "parts": [{"type": "text", "text": "two"}]},
      {"id": "tap_e4", "role": "user", "parts": [{"type": "text", "text": "three"}]}]') $$,
    'the same session, active');
SELECT is(mnemo.prune_tool_outputs('tap_e', 0, 0), 1, 'prune_tool_outputs on the active twin tombstones one part');
SELECT lives_ok($$ SELECT mnemo.append_part('tap_e', 'tap_e1', '{"type": "text", "text": "late"}');
                   SELECT mnemo.update_part_status('tap_e', 'tap_et', tool_state => 'completed', completed_at => 1);
                   SELECT mnemo.update_message_tokens('tap_e', 'tap_e2', '{"input": 5}', 1.0);
                   SELECT mnemo.tombstone_part('tap_e', 'tap_et') $$, 'the status writers on the active twin');
SELECT lives_ok($$ SELECT mnemo.swap_context_items('tap_e', ARRAY['tap_e1'], 'tap_es');
                   SELECT mnemo.commit_summary('tap_e', 'tap_esum', 's', 1, ARRAY['tap_e2']) $$,
                'the compaction writers on the active twin');
SELECT is((SELECT count(*) FROM mnemo.messages WHERE session_id = 'tap_d'), 5::bigint,
          'the soft-deleted session still has its five messages');
SELECT is((SELECT string_agg(m.id, ',' ORDER BY m.seq) FROM mnemo.get_messages('tap_d') m), 'tap_ds,tap_d1,tap_d2,tap_d3,tap_d4',
          'and they stay readable');

SELECT * FROM finish();
ROLLBACK;
