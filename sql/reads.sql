--
-- reads: get_message, get_messages, get_parts, get_messages_with_parts,
-- get_messages_with_parts_by_ids, history, get_context_items, last_summary
--
\set VERBOSITY sqlstate

SELECT id FROM mnemo.create_session('rd', model_id => 'm', provider_id => 'p');
SELECT id FROM mnemo.create_session('rd_other');
SELECT id FROM mnemo.create_session('rd_empty');
SELECT seq FROM mnemo.append_messages('rd', '[
  {"id": "rd_1", "role": "user", "parts": [{"type": "text", "id": "rd_1_a", "text": "list /tmp"}]},
  {"id": "rd_2", "role": "assistant", "run_id": "run_1", "parts": [
     {"type": "reasoning", "id": "rd_2_a", "text": "use ls"},
     {"type": "tool", "id": "rd_2_b", "tool_name": "ls", "tool_call_id": "c1", "input": {"path": "/tmp"},
      "tool_state": "running", "token_estimate": 10},
     {"type": "text", "id": "rd_2_c", "text": "listing"}]},
  {"id": "rd_3", "role": "tool", "parts": []},
  {"id": "rd_4", "role": "assistant", "parts": [
     {"type": "file_ref", "id": "rd_4_a", "content_id": "sha256:f", "path": "/tmp/a.txt", "token_estimate": 3}]},
  {"id": "rd_5", "role": "user", "parts": [{"type": "text", "id": "rd_5_a", "text": "thanks"}]}
]');
SELECT seq FROM mnemo.append_message('rd_other', 'user', '[{"type": "text", "id": "rdo_1_a", "text": "elsewhere"}]', id => 'rdo_1');
SELECT mnemo.update_part_status('rd', 'rd_2_b', tool_state => 'completed', started_at => 1736000000000,
                                completed_at => 1736000000250, output => 'a.txt');
SELECT mnemo.update_part_status('rd', 'rd_2_b', compacted_at => 1736000099000);
SELECT mnemo.update_message_tokens('rd', 'rd_2', '{"input": 10, "output": 5}', 0.25, 'stop');

--
-- get_message
--
SELECT session_id, seq, id, role, agent, model_id, provider_id, run_id, is_summary,
       tokens_input, tokens_output, tokens_cache_read, tokens_cache_write, tokens_reasoning,
       cost, finish_reason, created_at > 0 AS has_time
  FROM mnemo.get_message('rd', 'rd_2');
SELECT mnemo.get_message('rd', 'no_such_message');
SELECT mnemo.get_message(NULL, NULL);

--
-- get_messages: seq order; since_message_id reads what came after it
--
SELECT seq, id, role, run_id, finish_reason FROM mnemo.get_messages('rd');
SELECT seq, id FROM mnemo.get_messages('rd', since_message_id => 'rd_2');
SELECT seq, id FROM mnemo.get_messages('rd', 'rd_1');
SELECT count(*) FROM mnemo.get_messages('rd', 'rd_5');
SELECT count(*) FROM mnemo.get_messages('rd', NULL);
SELECT count(*) FROM mnemo.get_messages('rd_empty');
-- a since-message of another session, or none at all: MN002; unknown session MN001
SELECT * FROM mnemo.get_messages('rd', 'rdo_1');
SELECT * FROM mnemo.get_messages('rd', 'no_such_message');
SELECT * FROM mnemo.get_messages('no_such_session');
SELECT * FROM mnemo.get_messages(NULL);

--
-- get_parts: part_index order, the stored rows
--
SELECT session_id, message_id, part_index, id, part_type, tool_name, tool_call_id, tool_state,
       compacted_at, started_at, completed_at, token_estimate
  FROM mnemo.get_parts('rd', 'rd_2');
SELECT part_index, content FROM mnemo.get_parts('rd', 'rd_2');
SELECT count(*) FROM mnemo.get_parts('rd', 'rd_3');
SELECT * FROM mnemo.get_parts('rd', 'no_such_message');
SELECT * FROM mnemo.get_parts(NULL, NULL);

--
-- get_messages_with_parts: parts as a jsonb array in part_index order, each
-- the stored content with id, part_index, token_estimate and the live status
-- columns laid over it
--
SELECT id, seq, role, run_id, tokens_input, tokens_output, cost, finish_reason, is_summary,
       jsonb_array_length(parts) AS nparts
  FROM mnemo.get_messages_with_parts('rd');
SELECT jsonb_pretty(parts) FROM mnemo.get_messages_with_parts('rd') WHERE id = 'rd_2';
SELECT id, parts FROM mnemo.get_messages_with_parts('rd', 'rd_2');
-- the stored content itself is not changed by the overlay (it still says
-- "running": the column is the live state)
SELECT content FROM mnemo.message_parts WHERE id = 'rd_2_b';
SELECT count(*) FROM mnemo.get_messages_with_parts('rd_empty');
SELECT * FROM mnemo.get_messages_with_parts('rd', 'rdo_1');
SELECT * FROM mnemo.get_messages_with_parts('no_such_session');
SELECT * FROM mnemo.get_messages_with_parts(NULL);

--
-- get_messages_with_parts_by_ids: in the order given, repeats included,
-- within the one session named first
--
SELECT id, session_id, seq, jsonb_array_length(parts) AS nparts
  FROM mnemo.get_messages_with_parts_by_ids('rd', ARRAY['rd_5', 'rd_1', 'rd_3', 'rd_1']);
-- a message of another session is not found in this one (MN002)
\set VERBOSITY terse
SELECT * FROM mnemo.get_messages_with_parts_by_ids('rd', ARRAY['rd_1', 'rdo_1']);
SELECT id FROM mnemo.get_messages_with_parts_by_ids('rd_other', ARRAY['rdo_1']);
SELECT * FROM mnemo.get_message('rd', 'rdo_1');
SELECT * FROM mnemo.get_parts('rd_other', 'rd_2');
\set VERBOSITY sqlstate
-- the same overlay as get_messages_with_parts: the live tool_state wins over
-- the one the part was appended with
SELECT id, parts->1->>'tool_state' AS tool_state, parts->1->>'output' AS output,
       parts->1->>'compacted_at' AS compacted_at
  FROM mnemo.get_messages_with_parts_by_ids('rd', ARRAY['rd_2']);
SELECT count(*) FROM mnemo.get_messages_with_parts_by_ids('rd', ARRAY[]::text[]);
-- a missing id: MN002, naming the first missing one
\set VERBOSITY terse
SELECT * FROM mnemo.get_messages_with_parts_by_ids('rd', ARRAY['rd_1', 'missing_a', 'rd_2', 'missing_b']);
\echo :LAST_ERROR_SQLSTATE
\set VERBOSITY sqlstate
SELECT * FROM mnemo.get_messages_with_parts_by_ids('rd', ARRAY['missing_a']);
SELECT * FROM mnemo.get_messages_with_parts_by_ids('rd', ARRAY['rd_1', NULL]);
SELECT * FROM mnemo.get_messages_with_parts_by_ids('rd', NULL);

--
-- history: the last N messages, oldest first; NULL means all
--
SELECT seq, id, jsonb_array_length(parts) AS nparts FROM mnemo.history('rd', 2);
SELECT seq, id FROM mnemo.history('rd', 3);
SELECT seq, id FROM mnemo.history('rd');
SELECT seq, id FROM mnemo.history('rd', NULL);
SELECT seq, id FROM mnemo.history('rd', 100);
SELECT count(*) FROM mnemo.history('rd', 0);
SELECT count(*) FROM mnemo.history('rd_empty', 5);
SELECT parts->0->>'text' AS text FROM mnemo.history('rd', 1);
SELECT * FROM mnemo.history('rd', -1);
SELECT * FROM mnemo.history('no_such_session');
SELECT * FROM mnemo.history(NULL);

--
-- get_context_items, last_summary
--
SELECT * FROM mnemo.get_context_items('rd');
SELECT count(*) FROM mnemo.get_context_items('rd_empty');
SELECT * FROM mnemo.get_context_items('no_such_session');
SELECT * FROM mnemo.get_context_items(NULL);
-- no summary yet: NULL
SELECT mnemo.last_summary('rd') IS NULL AS no_summary;
SELECT (mnemo.last_summary('rd_empty')).id IS NULL AS no_summary;
-- the newest summary by seq, whether or not it is in context
SELECT seq FROM mnemo.append_message('rd', 'assistant', '[{"type": "text", "text": "s1"}]', id => 'rd_s1', is_summary => true);
SELECT seq FROM mnemo.append_message('rd', 'user', '[]', id => 'rd_7');
SELECT id, seq, is_summary, role FROM mnemo.last_summary('rd');
SELECT seq FROM mnemo.append_message('rd', 'assistant', '[{"type": "text", "text": "s2"}]', id => 'rd_s2', is_summary => true);
SELECT id, seq, is_summary FROM mnemo.last_summary('rd');
SELECT mnemo.swap_context_items('rd', ARRAY['rd_1', 'rd_2'], 'rd_s1');
SELECT * FROM mnemo.get_context_items('rd');
SELECT id, seq FROM mnemo.last_summary('rd');
SELECT mnemo.last_summary('rd_other') IS NULL AS no_summary;
SELECT * FROM mnemo.last_summary('no_such_session');
SELECT * FROM mnemo.last_summary(NULL);

--
-- get_messages_after: a follower's page, past a seq, at most limit rows
--
SELECT (mnemo.create_session('ra')).id;
SELECT count(*) FROM mnemo.append_messages('ra', (SELECT jsonb_agg(jsonb_build_object('id', 'ra_' || n, 'role', 'user', 'parts', '[]'::jsonb)) FROM generate_series(1, 6) n));
SELECT seq, id FROM mnemo.get_messages_after('ra', 2, 3);
SELECT seq, id FROM mnemo.get_messages_after('ra', 4);
SELECT count(*) FROM mnemo.get_messages_after('ra', 6);
SELECT count(*) FROM mnemo.get_messages_after('ra', 0, 100);
-- a fork's page runs across its line: the inherited messages, then its own
SELECT fork_seq FROM mnemo.fork_session('ra', '4', 'ra_f');
SELECT count(*) FROM mnemo.append_messages('ra_f', '[{"id": "ra_f5", "role": "user", "parts": []}, {"id": "ra_f6", "role": "user", "parts": []}]');
SELECT seq, id, session_id FROM mnemo.get_messages_after('ra_f', 2, 3);
SELECT seq, id FROM mnemo.get_messages_after('ra_f', 3);
-- the same rows as get_messages past the seq, on the source and the fork
SELECT (SELECT array_agg(id ORDER BY seq) FROM mnemo.get_messages_after(s, 1))
     = (SELECT array_agg(id ORDER BY seq) FROM mnemo.get_messages(s) WHERE seq > 1) AS same
  FROM unnest(ARRAY['ra', 'ra_f']) s;
-- a page reads its rows, not the session: rows of messages read in one
-- transaction (pg_stat_xact_user_tables, partitions included), a page of 5
-- at the end of 2,000 messages against the same page taken from get_messages
SELECT (mnemo.create_session('rb')).id;
SELECT count(*) FROM mnemo.append_messages('rb', (SELECT jsonb_agg(jsonb_build_object('role', 'user', 'parts', '[]'::jsonb)) FROM generate_series(1, 2000)));
CREATE FUNCTION pg_temp.messages_read() RETURNS bigint LANGUAGE sql AS $$
  SELECT sum(coalesce(idx_tup_fetch, 0) + coalesce(seq_tup_read, 0))::bigint FROM pg_stat_xact_user_tables
   WHERE schemaname = 'mnemo' AND relname ~ '^log(_p[0-9]+)?$' $$;
BEGIN;
SELECT pg_temp.messages_read() AS before \gset
SELECT array_agg(seq ORDER BY seq) FROM mnemo.get_messages_after('rb', 1995, 5);
SELECT pg_temp.messages_read() - :before < 50 AS page_reads_its_rows;
SELECT pg_temp.messages_read() AS before \gset
SELECT array_agg(seq ORDER BY seq) FROM (SELECT seq FROM mnemo.get_messages('rb') WHERE seq > 1995 ORDER BY seq LIMIT 5) g;
SELECT pg_temp.messages_read() - :before >= 2000 AS get_messages_reads_all;
COMMIT;
-- errors
SELECT * FROM mnemo.get_messages_after('ra', -1);
SELECT * FROM mnemo.get_messages_after('ra', 0, 0);
SELECT * FROM mnemo.get_messages_after('no_such_session', 0);
SELECT * FROM mnemo.get_messages_after('ra', NULL);
SELECT * FROM mnemo.get_messages_after(NULL, 0);
