-- prune_tool_outputs: the seed's ToolOutputPruner as one set-based call.
-- Each rule has a case below that fails if the rule is dropped.
\set VERBOSITY terse
SELECT id FROM mnemo.create_session('pr_m');

-- a tool part of NAME/STATE worth 100 tokens
CREATE FUNCTION pg_temp.tool(id text, name text, state text DEFAULT 'completed')
RETURNS jsonb LANGUAGE sql AS $$
  SELECT jsonb_build_object('type', 'tool', 'id', id, 'tool_name', name, 'tool_call_id', 'c_' || id,
                            'tool_state', state, 'input', jsonb_build_object('arg', id),
                            'output', 'output of ' || id, 'token_estimate', 100)
$$;
-- the tool parts of a session: which are tombstoned
CREATE FUNCTION pg_temp.parts(sid text)
RETURNS TABLE (seq bigint, part_id text, tool_name text, tool_state text, pruned boolean)
LANGUAGE sql AS $$
  SELECT m.seq, p.id, p.tool_name, p.tool_state, p.compacted_at IS NOT NULL
    FROM mnemo.messages m JOIN mnemo.message_parts p ON p.session_id = m.session_id AND p.seq = m.seq
   WHERE m.session_id = sid AND p.part_type = 'tool' ORDER BY m.seq, p.part_index
$$;

SELECT seq FROM mnemo.append_message('pr_m', 'user', '[{"type":"text","text":"one"}]', id => 'pr_m_u1');
SELECT seq FROM mnemo.append_message('pr_m', 'assistant',
  jsonb_build_array(pg_temp.tool('pr_t1', 'read'), pg_temp.tool('pr_t2', 'skill'),
                    pg_temp.tool('pr_t3', 'read', 'running'), pg_temp.tool('pr_t4', 'read', 'error')),
  id => 'pr_m_a1');
SELECT seq FROM mnemo.append_message('pr_m', 'assistant',
  jsonb_build_array(pg_temp.tool('pr_t5', 'read'), pg_temp.tool('pr_t6', 'read')), id => 'pr_m_a2');
SELECT seq FROM mnemo.append_message('pr_m', 'assistant',
  jsonb_build_array(pg_temp.tool('pr_t7', 'read'), pg_temp.tool('pr_t8', 'read')), id => 'pr_m_a3');
SELECT seq FROM mnemo.append_message('pr_m', 'user', '[{"type":"text","text":"two"}]', id => 'pr_m_u2');
SELECT seq FROM mnemo.append_message('pr_m', 'assistant',
  jsonb_build_array(pg_temp.tool('pr_t9', 'read')), id => 'pr_m_a4');
-- pr_t6 was tombstoned long ago
SELECT mnemo.update_part_status('pr_m', 'pr_t6', compacted_at => 1000);

-- one user turn only: everything is protected
SELECT mnemo.prune_tool_outputs('pr_m', 0, 0) AS pruned;
SELECT seq FROM mnemo.append_message('pr_m', 'user', '[{"type":"text","text":"three"}]', id => 'pr_m_u3');
SELECT seq FROM mnemo.append_message('pr_m', 'assistant',
  jsonb_build_array(pg_temp.tool('pr_t10', 'read')), id => 'pr_m_a5');

-- eligible, newest first: t8, t7, t5, t1 (t2 is a protected tool, t3 and t4
-- not completed, t6 already tombstoned, t9 and t10 within the last two user
-- turns).  protect_tokens 150 keeps t8; t7, t5, t1 are candidates, 300
-- tokens: not more than minimum_tokens 300, so nothing happens at all
SELECT mnemo.prune_tool_outputs('pr_m', 150, 300) AS pruned;
SELECT count(*) FILTER (WHERE compacted_at IS NOT NULL) AS tombstoned
  FROM mnemo.message_parts WHERE session_id = 'pr_m';
-- 300 > 299: the three candidates are tombstoned
SELECT mnemo.prune_tool_outputs('pr_m', 150, 299) AS pruned;
SELECT * FROM pg_temp.parts('pr_m');
-- the old tombstone is untouched
SELECT compacted_at FROM mnemo.message_parts WHERE id = 'pr_t6';
-- one timestamp for the whole call, and a current one
SELECT count(DISTINCT compacted_at) AS timestamps,
       bool_and(compacted_at > 1000) AS current
  FROM mnemo.message_parts WHERE id IN ('pr_t1', 'pr_t5', 'pr_t7');
-- the content stays in the row, and reads back unchanged
SELECT id, content->>'output' AS output, content = pg_temp.tool(id, 'read') AS unchanged
  FROM mnemo.message_parts WHERE id IN ('pr_t1', 'pr_t5', 'pr_t7') ORDER BY id;
-- context assembly shows the tombstones
SELECT count(*) AS tombstones_rendered FROM mnemo.build_context('pr_m', 100000)
 WHERE content LIKE '%[Tool ''read'' output compacted at %';
-- a second call finds nothing more above the protected window
SELECT mnemo.prune_tool_outputs('pr_m', 150, 0) AS pruned;
-- with no protected tools and no window, skill goes too (t8 and t2)
SELECT mnemo.prune_tool_outputs('pr_m', 0, 0, '{}') AS pruned;
SELECT part_id, pruned FROM pg_temp.parts('pr_m') WHERE part_id IN ('pr_t2', 'pr_t8');
-- the defaults: 40000 protected, more than 20000 needed
SELECT mnemo.prune_tool_outputs('pr_m') AS pruned;

-- the scan stops at the newest summary message: nothing at or before it
SELECT id FROM mnemo.create_session('pr_s');
SELECT seq FROM mnemo.append_message('pr_s', 'user', '[{"type":"text","text":"a"}]', id => 'pr_s_u0');
SELECT seq FROM mnemo.append_message('pr_s', 'assistant', jsonb_build_array(pg_temp.tool('pr_s_x', 'read')), id => 'pr_s_a0');
SELECT seq FROM mnemo.append_message('pr_s', 'assistant', '[{"type":"text","text":"summary"}]', id => 'pr_s_sum', is_summary => true);
SELECT seq FROM mnemo.append_message('pr_s', 'user', '[{"type":"text","text":"b"}]', id => 'pr_s_u1');
SELECT seq FROM mnemo.append_message('pr_s', 'assistant', jsonb_build_array(pg_temp.tool('pr_s_y', 'read')), id => 'pr_s_a1');
SELECT seq FROM mnemo.append_message('pr_s', 'user', '[{"type":"text","text":"c"}]', id => 'pr_s_u2');
SELECT seq FROM mnemo.append_message('pr_s', 'user', '[{"type":"text","text":"d"}]', id => 'pr_s_u3');
SELECT mnemo.prune_tool_outputs('pr_s', 0, 0) AS pruned;
SELECT * FROM pg_temp.parts('pr_s');

-- only messages in the live context view are scanned
SELECT id FROM mnemo.create_session('pr_c');
SELECT seq FROM mnemo.append_message('pr_c', 'assistant', '[{"type":"text","text":"summary"}]', id => 'pr_c_sum', is_summary => true);
SELECT seq FROM mnemo.append_message('pr_c', 'user', '[{"type":"text","text":"a"}]', id => 'pr_c_u1');
SELECT seq FROM mnemo.append_message('pr_c', 'assistant', jsonb_build_array(pg_temp.tool('pr_c_x', 'read')), id => 'pr_c_a1');
SELECT seq FROM mnemo.append_message('pr_c', 'assistant', jsonb_build_array(pg_temp.tool('pr_c_y', 'read')), id => 'pr_c_a2');
SELECT seq FROM mnemo.append_message('pr_c', 'user', '[{"type":"text","text":"b"}]', id => 'pr_c_u2');
SELECT seq FROM mnemo.append_message('pr_c', 'user', '[{"type":"text","text":"c"}]', id => 'pr_c_u3');
SELECT mnemo.swap_context_items('pr_c', '{pr_c_a1}', 'pr_c_sum');
SELECT mnemo.prune_tool_outputs('pr_c', 0, 0) AS pruned;
SELECT * FROM pg_temp.parts('pr_c');

-- a session with no messages
SELECT id FROM mnemo.create_session('pr_e');
SELECT mnemo.prune_tool_outputs('pr_e', 0, 0) AS pruned;

-- a watched session notifies once per call that pruned something
SELECT id FROM mnemo.create_session('pr_w');
SELECT mnemo.watch('pr_w') AS channel \gset
SELECT seq FROM mnemo.append_message('pr_w', 'assistant', jsonb_build_array(pg_temp.tool('pr_w_x', 'read'), pg_temp.tool('pr_w_y', 'read')), id => 'pr_w_a');
SELECT seq FROM mnemo.append_message('pr_w', 'user', '[{"type":"text","text":"b"}]', id => 'pr_w_u2');
SELECT seq FROM mnemo.append_message('pr_w', 'user', '[{"type":"text","text":"c"}]', id => 'pr_w_u3');
LISTEN :"channel";
\o | sed -e 's/PID [0-9]*/PID N/' -e 's/mnemo_[0-9a-f]\{32\}/mnemo_CHANNEL/'
SELECT mnemo.prune_tool_outputs('pr_w', 0, 0) AS pruned;
\o
\o | sed -e 's/PID [0-9]*/PID N/'
SELECT mnemo.prune_tool_outputs('pr_w', 0, 0) AS pruned;
SELECT 'nothing above' AS nothing_pruned;
\o
UNLISTEN mnemo;

-- errors
SELECT mnemo.prune_tool_outputs('pr_nope');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.prune_tool_outputs(NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.prune_tool_outputs('pr_m', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.prune_tool_outputs('pr_m', 0, NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.prune_tool_outputs('pr_m', 0, 0, NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.prune_tool_outputs('pr_m', 0, 0, '{skill,NULL}');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.prune_tool_outputs('pr_m', -1, 0);
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.prune_tool_outputs('pr_m', 0, -1);
\echo :LAST_ERROR_SQLSTATE
