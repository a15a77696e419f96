-- 050_swap: invariant 3 (atomic swap).  A failing swap changes nothing --
-- not the context view, not the log, not another session; a succeeding one
-- is exact: the named items go, one summary item takes the smallest
-- position they held, every other item keeps its position.
BEGIN;
SELECT plan(37);

SELECT lives_ok($$ SELECT mnemo.create_session('tap_w'); SELECT mnemo.create_session('tap_w2') $$, 'sessions');
SELECT lives_ok($$ SELECT mnemo.append_messages('tap_w', (
    SELECT jsonb_agg(jsonb_build_object('id', 'tap_w' || g, 'role', 'user',
                                        'parts', jsonb_build_array(jsonb_build_object('type', 'text', 'text', 'm' || g))))
      FROM generate_series(1, 8) AS g)) $$, 'eight messages');
SELECT lives_ok($$ SELECT mnemo.append_messages('tap_w', '[
    {"id": "tap_ws1", "role": "assistant", "is_summary": true, "parts": [{"type": "text", "text": "s1"}]},
    {"id": "tap_ws2", "role": "assistant", "is_summary": true, "parts": [{"type": "text", "text": "s2"}]},
    {"id": "tap_ws3", "role": "assistant", "is_summary": true, "parts": [{"type": "text", "text": "s3"}]}]') $$,
                'three summary messages');
SELECT lives_ok($$ SELECT mnemo.append_message('tap_w2', 'user', '[]', id => 'tap_w2_1');
                   SELECT mnemo.append_message('tap_w2', 'assistant', '[]', id => 'tap_w2_s', is_summary => true) $$,
                'another session');

CREATE FUNCTION pg_temp.state() RETURNS text LANGUAGE sql AS $$
    SELECT md5(concat_ws('#',
        (SELECT string_agg(c::text, '|' ORDER BY session_id, position) FROM mnemo.context_items c
          WHERE session_id IN ('tap_w', 'tap_w2')),
        (SELECT string_agg(m::text, '|' ORDER BY session_id, seq) FROM mnemo.messages m
          WHERE session_id IN ('tap_w', 'tap_w2')),
        (SELECT string_agg(p::text, '|' ORDER BY session_id, seq, part_index) FROM mnemo.message_parts p
          WHERE session_id IN ('tap_w', 'tap_w2')),
        (SELECT string_agg(s::text, '|' ORDER BY id) FROM mnemo.sessions s WHERE id IN ('tap_w', 'tap_w2')),
        (SELECT count(*)::text FROM mnemo.summary_nodes)))
$$;
CREATE TEMP TABLE ctx0 AS SELECT * FROM mnemo.get_context_items('tap_w');
CREATE TEMP TABLE state0 AS SELECT pg_temp.state() AS state;
SELECT results_eq($$ SELECT item_id, position FROM ctx0 $$,
                  $$ SELECT 'tap_w' || g, g::bigint FROM generate_series(1, 8) AS g $$, 'the view before: 8 messages at 1..8');

--
-- failing swaps: MN006 (or the argument errors) and nothing changes
--
SELECT throws_ok($$ SELECT mnemo.swap_context_items('tap_w', ARRAY[]::text[], 'tap_ws1') $$, 'MN006', NULL, 'empty list');
SELECT throws_ok($$ SELECT mnemo.swap_context_items('tap_w', ARRAY['tap_w2', 'tap_w3', 'tap_w_gone'], 'tap_ws1') $$, 'MN006',
                 'invalid context swap in session "tap_w": item "tap_w_gone" is not in context',
                 'an id not in context, after two that are');
SELECT throws_ok($$ SELECT mnemo.swap_context_items('tap_w', ARRAY['tap_w2', 'tap_w2_1'], 'tap_ws1') $$, 'MN006', NULL,
                 'an id in another session''s context');
SELECT throws_ok($$ SELECT mnemo.swap_context_items('tap_w', ARRAY['tap_w2', 'tap_w3', 'tap_w2'], 'tap_ws1') $$, 'MN006',
                 'invalid context swap in session "tap_w": item "tap_w2" is named twice', 'an id named twice');
SELECT throws_ok($$ SELECT mnemo.swap_context_items('tap_w', ARRAY['tap_w2', 'tap_w3'], 'tap_w4') $$, 'MN006', NULL,
                 'a summary id that is not a summary message');
SELECT throws_ok($$ SELECT mnemo.swap_context_items('tap_w', ARRAY['tap_w2', 'tap_w3'], 'tap_w_none') $$, 'MN006', NULL,
                 'a summary id that does not exist');
SELECT throws_ok($$ SELECT mnemo.swap_context_items('tap_w', ARRAY['tap_w2', 'tap_w3'], 'tap_w2_s') $$, 'MN006', NULL,
                 'the summary of another session');
SELECT throws_ok($$ SELECT mnemo.swap_context_items('tap_w', ARRAY['tap_w2', NULL], 'tap_ws1') $$, '22004', NULL,
                 'a NULL id');
SELECT throws_ok($$ SELECT mnemo.swap_context_items('tap_missing', ARRAY['tap_w2'], 'tap_ws1') $$, 'MN001', NULL,
                 'an unknown session');
SELECT throws_ok($$ SELECT mnemo.swap_context_items(NULL, ARRAY['tap_w2'], 'tap_ws1') $$, '22004', NULL, 'a NULL session');
SELECT throws_ok($$ SELECT mnemo.swap_context_items('tap_w', ARRAY['tap_w2'], NULL) $$, '22004', NULL, 'a NULL summary');
SELECT results_eq($$ SELECT * FROM mnemo.get_context_items('tap_w') $$, $$ SELECT * FROM ctx0 $$,
                  'after the failed swaps the view is as before');
SELECT is(pg_temp.state(), (SELECT state FROM state0), 'and so is everything else, in both sessions');

--
-- a succeeding swap is exact
--
SELECT is(mnemo.swap_context_items('tap_w', ARRAY['tap_w5', 'tap_w3', 'tap_w4'], 'tap_ws1'), 3::bigint,
          'a swap returns the smallest removed position');
SELECT results_eq($$ SELECT item_type, item_id, position FROM mnemo.get_context_items('tap_w') $$,
                  $$ VALUES ('message', 'tap_w1', 1::bigint), ('message', 'tap_w2', 2), ('summary', 'tap_ws1', 3),
                            ('message', 'tap_w6', 6), ('message', 'tap_w7', 7), ('message', 'tap_w8', 8) $$,
                  'the three items are gone, the summary is at 3, the others kept their positions');
SELECT is((SELECT count(*) FROM mnemo.messages WHERE session_id = 'tap_w'), 11::bigint, 'the log keeps every message');
SELECT results_eq($$ SELECT * FROM mnemo.get_context_items('tap_w2') $$,
                  $$ VALUES ('message', 'tap_w2_1', 1::bigint) $$, 'the other session''s view is untouched');
CREATE TEMP TABLE ctx1 AS SELECT * FROM mnemo.get_context_items('tap_w');

-- a swap that names a removed item now fails: the race another compactor loses
SELECT throws_ok($$ SELECT mnemo.swap_context_items('tap_w', ARRAY['tap_w4', 'tap_w6'], 'tap_ws2') $$, 'MN006', NULL,
                 'a span that overlaps an earlier swap');
SELECT throws_ok($$ SELECT mnemo.swap_context_items('tap_w', ARRAY['tap_w6'], 'tap_ws1') $$, 'MN006',
                 'invalid context swap in session "tap_w": summary "tap_ws1" is already in context',
                 'a summary already in context');
SELECT results_eq($$ SELECT * FROM mnemo.get_context_items('tap_w') $$, $$ SELECT * FROM ctx1 $$,
                  'the failed swaps changed nothing');

-- items must be one contiguous run of the view (issue 32): tap_w2 to tap_w7
-- lie between tap_w1 and tap_w8; summaries can be swapped out (condensation)
SELECT throws_ok($$ SELECT mnemo.swap_context_items('tap_w', ARRAY['tap_w8', 'tap_w1'], 'tap_ws2') $$, 'MN006',
                 'invalid context swap in session "tap_w": the items are not a contiguous run of the context view: "tap_w2" lies between "tap_w1" and "tap_w8"',
                 'a non-contiguous swap');
SELECT is(mnemo.swap_context_items('tap_w', ARRAY['tap_w1'], 'tap_ws2'), 1::bigint, 'a swap of one item');
SELECT results_eq($$ SELECT item_type, item_id, position FROM mnemo.get_context_items('tap_w') $$,
                  $$ VALUES ('summary', 'tap_ws2', 1::bigint), ('message', 'tap_w2', 2), ('summary', 'tap_ws1', 3),
                            ('message', 'tap_w6', 6), ('message', 'tap_w7', 7), ('message', 'tap_w8', 8) $$,
                  'exact after the swap');
SELECT is(mnemo.swap_context_items('tap_w', ARRAY['tap_ws1', 'tap_ws2', 'tap_w2'], 'tap_ws3'), 1::bigint, 'a condensation');
SELECT results_eq($$ SELECT item_type, item_id, position FROM mnemo.get_context_items('tap_w') $$,
                  $$ VALUES ('summary', 'tap_ws3', 1::bigint), ('message', 'tap_w6', 6), ('message', 'tap_w7', 7),
                            ('message', 'tap_w8', 8) $$,
                  'exact after the condensation');
SELECT is((SELECT count(*) FROM mnemo.context_items WHERE session_id = 'tap_w' AND item_type = 'summary'), 1::bigint,
          'one summary item');
-- a new message joins the end of the view at position = its seq (past every position used)
SELECT is((mnemo.append_message('tap_w', 'user', '[]', id => 'tap_w9')).seq, 12::bigint, 'an append after the swaps');
SELECT results_eq($$ SELECT item_id, position FROM mnemo.get_context_items('tap_w') $$,
                  $$ VALUES ('tap_ws3', 1::bigint), ('tap_w6', 6), ('tap_w7', 7), ('tap_w8', 8), ('tap_w9', 12) $$,
                  'it joins the end of the view');
-- every message is still readable, unchanged
SELECT results_eq($$ SELECT id, parts->0->>'text' FROM mnemo.get_messages_with_parts('tap_w') WHERE seq <= 8 $$,
                  $$ SELECT 'tap_w' || g, 'm' || g FROM generate_series(1, 8) AS g $$,
                  'the swapped-out messages read back unchanged');

-- two swaps in one transaction: the second fails, the savepoint rolls it back alone
SELECT lives_ok($$ SELECT mnemo.append_message('tap_w', 'assistant', '[]', id => 'tap_ws4', is_summary => true) $$,
                'one more summary');
CREATE TEMP TABLE ctx2 AS SELECT * FROM mnemo.get_context_items('tap_w');
SELECT throws_ok($$ SELECT mnemo.swap_context_items('tap_w', ARRAY['tap_w6', 'tap_w7'], 'tap_ws4');
                    SELECT mnemo.swap_context_items('tap_w', ARRAY['tap_w9', 'tap_w6'], 'tap_ws4') $$, 'MN006', NULL,
                 'a statement pair whose second swap fails');
SELECT results_eq($$ SELECT * FROM mnemo.get_context_items('tap_w') $$, $$ SELECT * FROM ctx2 $$,
                  'neither swap of the failed pair is visible');

SELECT * FROM finish();
ROLLBACK;
