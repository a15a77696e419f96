-- turn_context: build_context, the parts of its assistant messages and
-- context_report, from one assembly.
\set VERBOSITY terse
SELECT id FROM mnemo.create_session('tc');

-- an empty session: no entry, and still the budget row
SELECT item_type, "position", item_id, parts, budget FROM mnemo.turn_context('tc', 100);

SELECT seq FROM mnemo.append_message('tc', 'user',
  '[{"type":"text","text":"List /tmp, please."}]', id => 'tc_u1');
SELECT seq FROM mnemo.append_message('tc', 'assistant',
  '[{"type":"text","text":"Listing it."},
    {"type":"tool","id":"tc_t1","tool_name":"ls","tool_call_id":"c1","input":{"path":"/tmp"},"output":"a.txt"}]',
  id => 'tc_a1');
SELECT seq FROM mnemo.append_message('tc', 'user', '[{"type":"text","text":"And /var?"}]', id => 'tc_u2');
SELECT seq FROM mnemo.append_message('tc', 'assistant', '[{"type":"text","text":"Nothing there."}]', id => 'tc_a2');
SELECT seq FROM mnemo.append_message('tc', 'assistant',
  '[{"type":"text","text":"Summary: the user listed /tmp."}]', id => 'tc_s1', is_summary => true);
SELECT mnemo.swap_context_items('tc', ARRAY['tc_u1'], 'tc_s1');

-- for several budgets (all fits, some left out, only the summary), the
-- entries are build_context's, the budget is context_report's, and the parts
-- are get_messages_with_parts_by_ids' for assistant messages, NULL otherwise
SELECT b AS budget,
       (SELECT array_agg(row(t."position", t.item_type, t.item_id, t.role, t.content, t.tokens)::text
                         ORDER BY t."position")
          FROM mnemo.turn_context('tc', b) t WHERE t.item_type <> 'budget')
       IS NOT DISTINCT FROM
       (SELECT array_agg(row(c.*)::text ORDER BY c."position") FROM mnemo.build_context('tc', b) c)
         AS same_entries,
       (SELECT t.budget FROM mnemo.turn_context('tc', b) t WHERE t.item_type = 'budget')
         = mnemo.context_report('tc', b) AS same_report,
       (SELECT bool_and(CASE WHEN t.role = 'assistant' AND t.item_type = 'message'
                             THEN t.parts = (SELECT w.parts FROM mnemo.get_messages_with_parts_by_ids('tc', ARRAY[t.item_id]) w)
                             ELSE t.parts IS NULL END)
          FROM mnemo.turn_context('tc', b) t WHERE t.item_type <> 'budget') AS same_parts
  FROM unnest(ARRAY[10000, 12, 1]) AS b;

-- the rows themselves, in position order, the budget row last
SELECT item_type, item_id, role, jsonb_array_length(parts) AS parts,
       parts->1->>'tool_call_id' AS call, (budget).included_items, (budget).omitted_items
  FROM mnemo.turn_context('tc', 10000);

-- every kind of part comes back as get_messages_with_parts_by_ids gives
-- it: an image whose bytes are a blob, a tombstoned tool part, a part id
-- given and one derived, and an assistant message without parts ([])
SELECT id FROM mnemo.create_session('tc_kinds');
SELECT seq FROM mnemo.append_message('tc_kinds', 'user', '[{"type":"text","text":"look at this"}]');
SELECT seq FROM mnemo.append_message('tc_kinds', 'assistant', jsonb_build_array(
  jsonb_build_object('type', 'image', 'media_type', 'image/png', 'data', encode(sha256('tc'), 'base64')),
  jsonb_build_object('type', 'tool', 'id', 'tk_t1', 'tool_name', 'ls', 'tool_call_id', 'k1',
                     'input', '{}'::jsonb, 'output', repeat('x', 300), 'state', 'completed')),
  id => 'tk_a1');
SELECT jsonb_typeof(content->'data') AS image_data_stored_as FROM mnemo.message_parts
 WHERE session_id = 'tc_kinds' AND part_type = 'image';
SELECT mnemo.update_part_status('tc_kinds', 'tk_t1', compacted_at => 1700000000000);
SELECT seq FROM mnemo.append_message('tc_kinds', 'assistant', '[]', id => 'tk_a2');
SELECT t.item_id, jsonb_array_length(t.parts) AS parts,
       t.parts = (SELECT w.parts FROM mnemo.get_messages_with_parts_by_ids('tc_kinds', ARRAY[t.item_id]) w) AS same_parts
  FROM mnemo.turn_context('tc_kinds', 10000) t WHERE t.role = 'assistant' ORDER BY t."position";

-- errors: as build_context's
SELECT * FROM mnemo.turn_context('tc_nope', 10);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mnemo.turn_context('tc', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mnemo.turn_context('tc', -1);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mnemo.turn_context(NULL, 10);
\echo :LAST_ERROR_SQLSTATE
