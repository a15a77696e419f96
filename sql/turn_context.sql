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

-- errors: as build_context's
SELECT * FROM mnemo.turn_context('tc_nope', 10);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mnemo.turn_context('tc', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mnemo.turn_context('tc', -1);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mnemo.turn_context(NULL, 10);
\echo :LAST_ERROR_SQLSTATE
