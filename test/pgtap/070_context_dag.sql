-- 070_context_dag: context assembly, the summary DAG, pruning and search:
-- their exact SQLSTATEs and invariants.  build_context and context_report
-- agree for every budget; a failing commit_summary writes nothing (invariant
-- 3); a condensation expands back to exactly the original messages
-- (invariant 4); a tombstone keeps the content; search reaches what the view
-- no longer holds.
BEGIN;
SELECT plan(86);

--
-- fixture: tap_c, eight messages (one with a tool part), two leaves, a
-- condensation of them and one more leaf
--
SELECT lives_ok($$ SELECT mnemo.create_session('tap_c'); SELECT mnemo.create_session('tap_d');
                   SELECT mnemo.create_session('tap_e'); SELECT mnemo.create_session('tap_p') $$, 'sessions');
SELECT lives_ok($$ SELECT mnemo.append_messages('tap_c', '[
    {"id": "tap_c1", "role": "user", "parts": [{"type": "text", "text": "alpha question about the zebra migration plan"}]},
    {"id": "tap_c2", "role": "assistant", "parts": [{"type": "text", "text": "checking"},
        {"type": "tool", "id": "tap_c2_t", "tool_name": "grep", "tool_call_id": "k1", "tool_state": "completed",
         "input": {"pattern": "quagga"}, "output": "three matches in herd.txt"}]},
    {"id": "tap_c3", "role": "user", "parts": [{"type": "text", "text": "gamma"}]},
    {"id": "tap_c4", "role": "assistant", "parts": [{"type": "reasoning", "text": "delta thinking"}, {"type": "text", "text": "delta"}]},
    {"id": "tap_c5", "role": "user", "parts": [{"type": "text", "text": "epsilon epsilon epsilon epsilon epsilon"}]},
    {"id": "tap_c6", "role": "assistant", "parts": [{"type": "text", "text": "zeta zeta zeta zeta zeta zeta zeta zeta"}]},
    {"id": "tap_c7", "role": "user", "parts": [{"type": "text", "text": "eta eta eta"}]},
    {"id": "tap_c8", "role": "assistant", "parts": [{"type": "text", "text": "theta theta theta theta theta"}]}]') $$,
                'eight messages');
SELECT ok(mnemo.tombstone_part('tap_c', 'tap_c2_t') > 0, 'a tombstoned tool part underneath');
SELECT is(mnemo.commit_summary('tap_c', 'tap_cs1', 'alpha and checking', 10, ARRAY['tap_c1', 'tap_c2']), 1::bigint,
          'leaf one');
SELECT is(mnemo.commit_summary('tap_c', 'tap_cs2', 'gamma and delta', 12, ARRAY['tap_c4', 'tap_c3'], 'leaf', 2), 3::bigint,
          'leaf two');
SELECT is(mnemo.commit_summary('tap_c', 'tap_cs3', 'alpha to delta', 15, ARRAY['tap_cs1', 'tap_cs2'], 'condensed', 1),
          1::bigint, 'the condensation');
SELECT is(mnemo.commit_summary('tap_c', 'tap_cs4', 'epsilon', 7, ARRAY['tap_c5']), 5::bigint, 'leaf three');
SELECT results_eq($$ SELECT item_type, item_id, position FROM mnemo.get_context_items('tap_c') $$,
                  $$ VALUES ('summary', 'tap_cs3', 1::bigint), ('summary', 'tap_cs4', 5), ('message', 'tap_c6', 6),
                            ('message', 'tap_c7', 7), ('message', 'tap_c8', 8) $$, 'the view');

--
-- build_context / context_report: errors
--
SELECT throws_ok($$ SELECT * FROM mnemo.build_context('tap_missing', 10) $$, 'MN001', NULL, 'build_context: unknown session');
SELECT throws_ok($$ SELECT * FROM mnemo.build_context(NULL, 10) $$, '22004', NULL, 'build_context: NULL session');
SELECT throws_ok($$ SELECT * FROM mnemo.build_context('tap_c', NULL) $$, '22004', NULL, 'build_context: NULL budget');
SELECT throws_ok($$ SELECT * FROM mnemo.build_context('tap_c', -1) $$, '22023', NULL, 'build_context: negative budget');
SELECT throws_ok($$ SELECT * FROM mnemo.context_report('tap_missing', 10) $$, 'MN001', NULL, 'context_report: unknown session');
SELECT throws_ok($$ SELECT * FROM mnemo.context_report(NULL, 10) $$, '22004', NULL, 'context_report: NULL session');
SELECT throws_ok($$ SELECT * FROM mnemo.context_report('tap_c', NULL) $$, '22004', NULL, 'context_report: NULL budget');
SELECT throws_ok($$ SELECT * FROM mnemo.context_report('tap_c', -1) $$, '22023', NULL, 'context_report: negative budget');

--
-- build_context / context_report: invariants over several budgets
--
CREATE TEMP TABLE budgets (b int);
INSERT INTO budgets VALUES (0), (1), (21), (22), (28), (29), (30), (31), (39), (40), (1000000), (2147483647);
SELECT results_eq($$ SELECT b, (mnemo.context_report('tap_c', b)).included_items FROM budgets ORDER BY b $$,
                  $$ SELECT b, (SELECT count(*)::int FROM mnemo.build_context('tap_c', b)) FROM budgets ORDER BY b $$,
                  'included_items is the number of rows build_context returns');
SELECT results_eq($$ SELECT b, (r).included_items + (r).omitted_items
                       FROM (SELECT b, mnemo.context_report('tap_c', b) AS r FROM budgets) x ORDER BY b $$,
                  $$ SELECT b, (SELECT count(*)::int FROM mnemo.get_context_items('tap_c')) FROM budgets ORDER BY b $$,
                  'included + omitted is the number of context items');
SELECT results_eq($$ SELECT b, (SELECT array_agg(item_id ORDER BY position) FROM mnemo.build_context('tap_c', b)
                                 WHERE item_type = 'summary') FROM budgets ORDER BY b $$,
                  $$ SELECT b, ARRAY['tap_cs3', 'tap_cs4'] FROM budgets ORDER BY b $$,
                  'every summary is always present');
SELECT results_eq($$ SELECT b, (SELECT array_agg(item_id ORDER BY position) FROM mnemo.build_context('tap_c', b)
                                 WHERE item_type = 'message') FROM budgets ORDER BY b $$,
                  $$ SELECT b, (SELECT array_agg(item_id ORDER BY position)
                                  FROM (SELECT * FROM mnemo.get_context_items('tap_c') WHERE item_type = 'message'
                                         ORDER BY position DESC
                                         LIMIT (SELECT count(*) FROM mnemo.build_context('tap_c', b)
                                                 WHERE item_type = 'message')) n)
                       FROM budgets ORDER BY b $$,
                  'the messages returned are the newest contiguous run of the view');
SELECT results_eq($$ SELECT b, (mnemo.context_report('tap_c', b)).included_tokens FROM budgets ORDER BY b $$,
                  $$ SELECT b, (SELECT sum(tokens) FROM mnemo.build_context('tap_c', b)) FROM budgets ORDER BY b $$,
                  'included_tokens is the sum of the tokens build_context returns');
SELECT results_eq($$ SELECT b, (r).summary_tokens, (r).included_tokens + (r).omitted_tokens
                       FROM (SELECT b, mnemo.context_report('tap_c', b) AS r FROM budgets) x ORDER BY b $$,
                  $$ SELECT b, 22::bigint, 40::bigint FROM budgets ORDER BY b $$,
                  'summary tokens are the nodes'' token counts; included + omitted tokens is the whole view');
SELECT results_eq($$ SELECT b, (SELECT count(*)::int FROM mnemo.build_context('tap_c', b) WHERE item_type = 'message')
                       FROM budgets ORDER BY b $$,
                  $$ VALUES (0, 0), (1, 0), (21, 0), (22, 0), (28, 0), (29, 1), (30, 1), (31, 2), (39, 2), (40, 3),
                            (1000000, 3), (2147483647, 3) $$,
                  'the fixture exercises every cut: none, one, two and all three messages');

--
-- commit_summary: errors, each with nothing written (invariant 3)
--
SELECT lives_ok($$ SELECT mnemo.append_messages('tap_d', (
    SELECT jsonb_agg(jsonb_build_object('id', 'tap_d' || g, 'role', 'user',
                                        'parts', jsonb_build_array(jsonb_build_object('type', 'text', 'text', 'd' || g))))
      FROM generate_series(1, 4) AS g)) $$, 'four messages in tap_d');
SELECT is(mnemo.commit_summary('tap_d', 'tap_ds1', 'd1', 3, ARRAY['tap_d1']), 1::bigint, 'a leaf in tap_d');
SELECT lives_ok($$ SELECT mnemo.append_message('tap_d', 'assistant', '[]', id => 'tap_d_plain', is_summary => true) $$,
                'a summary message without a node');

CREATE FUNCTION pg_temp.state() RETURNS text LANGUAGE sql AS $$
    SELECT md5(concat_ws('#',
        (SELECT string_agg(m::text, '|' ORDER BY session_id, seq) FROM mnemo.messages m
          WHERE session_id IN ('tap_c', 'tap_d')),
        (SELECT string_agg(p::text, '|' ORDER BY session_id, seq, part_index) FROM mnemo.message_parts p
          WHERE session_id IN ('tap_c', 'tap_d')),
        (SELECT string_agg(n::text, '|' ORDER BY session_id, id) FROM mnemo.summary_nodes n
          WHERE session_id IN ('tap_c', 'tap_d')),
        (SELECT string_agg(e::text, '|' ORDER BY session_id, summary_id, ordinal) FROM mnemo.summary_edges e
          WHERE session_id IN ('tap_c', 'tap_d')),
        (SELECT string_agg(c::text, '|' ORDER BY session_id, position) FROM mnemo.context_items c
          WHERE session_id IN ('tap_c', 'tap_d')),
        (SELECT string_agg(s::text, '|' ORDER BY id) FROM mnemo.sessions s WHERE id IN ('tap_c', 'tap_d'))))
$$;
CREATE TEMP TABLE state0 AS SELECT pg_temp.state() AS state;
CREATE TEMP TABLE states (n serial, label text, state text);
CREATE FUNCTION pg_temp.mark(label text) RETURNS void LANGUAGE sql AS $$
    INSERT INTO states (label, state) VALUES (label, pg_temp.state())
$$;

SELECT throws_ok($$ SELECT mnemo.commit_summary('tap_d', 'tap_dx', 'x', 1, ARRAY['tap_d2', 'tap_d1']) $$, 'MN006', NULL,
                 'MN006: an item swapped out already');
SELECT pg_temp.mark('swapped out');
SELECT throws_ok($$ SELECT mnemo.commit_summary('tap_d', 'tap_dx', 'x', 1, ARRAY['tap_d2', 'tap_d_none']) $$, 'MN006', NULL,
                 'MN006: an unknown item');
SELECT pg_temp.mark('unknown item');
SELECT throws_ok($$ SELECT mnemo.commit_summary('tap_d', 'tap_dx', 'x', 1, ARRAY['tap_d2', 'tap_c6']) $$, 'MN006', NULL,
                 'MN006: an item in another session''s context');
SELECT pg_temp.mark('other session item');
SELECT throws_ok($$ SELECT mnemo.commit_summary('tap_d', 'tap_dx', 'x', 1, ARRAY[]::text[]) $$, 'MN006', NULL,
                 'MN006: an empty list');
SELECT pg_temp.mark('empty list');
SELECT throws_ok($$ SELECT mnemo.commit_summary('tap_d', 'tap_dx', 'x', 1, ARRAY['tap_d2', 'tap_d3', 'tap_d2']) $$, 'MN006', NULL,
                 'MN006: a repeated item');
SELECT pg_temp.mark('repeated');
SELECT throws_ok($$ SELECT mnemo.commit_summary('tap_d', 'tap_dx', 'x', 1, ARRAY['tap_d2', 'tap_ds1']) $$, 'MN006', NULL,
                 'MN006: a leaf over a summary');
SELECT pg_temp.mark('leaf over summary');
SELECT throws_ok($$ SELECT mnemo.commit_summary('tap_d', 'tap_dx', 'x', 1, ARRAY['tap_ds1', 'tap_d2'], 'condensed', 2) $$,
                 'MN006', NULL, 'MN006: a condensation over a message');
SELECT pg_temp.mark('condensed over message');
SELECT throws_ok($$ SELECT mnemo.commit_summary('tap_d', 'tap_ds1', 'x', 1, ARRAY['tap_d2']) $$, 'MN004', NULL,
                 'MN004: the id of a summary');
SELECT pg_temp.mark('summary id taken');
SELECT throws_ok($$ SELECT mnemo.commit_summary('tap_d', 'tap_d4', 'x', 1, ARRAY['tap_d2']) $$, 'MN004', NULL,
                 'MN004: the id of a message');
SELECT pg_temp.mark('message id taken');
SELECT throws_ok($$ SELECT mnemo.commit_summary('tap_d', 'tap_d1', 'x', 1, ARRAY['tap_d2']) $$, 'MN004', NULL,
                 'MN004: the id of a message of the session no longer in context');
SELECT pg_temp.mark('swapped-out message id taken');
SELECT throws_ok($$ SELECT mnemo.commit_summary('tap_missing', 'tap_dx', 'x', 1, ARRAY['tap_d2']) $$, 'MN001', NULL,
                 'MN001: an unknown session');
SELECT pg_temp.mark('unknown session');
SELECT throws_ok($$ SELECT mnemo.commit_summary('tap_d', 'tap_dx', 'x', 1, ARRAY['tap_d2'], 'twig', 1) $$, '22023', NULL,
                 '22023: a bad kind');
SELECT pg_temp.mark('bad kind');
SELECT throws_ok($$ SELECT mnemo.commit_summary('tap_d', 'tap_dx', 'x', 1, ARRAY['tap_d2'], 'leaf', 0) $$, '22023', NULL,
                 '22023: level 0');
SELECT pg_temp.mark('level 0');
SELECT throws_ok($$ SELECT mnemo.commit_summary('tap_d', 'tap_dx', 'x', 1, ARRAY['tap_d2'], 'leaf', 4) $$, '22023', NULL,
                 '22023: level 4');
SELECT pg_temp.mark('level 4');
SELECT throws_ok($$ SELECT mnemo.commit_summary('tap_d', 'tap_dx', 'x', -1, ARRAY['tap_d2']) $$, '22023', NULL,
                 '22023: a negative token count');
SELECT pg_temp.mark('negative token count');
SELECT throws_ok($$ SELECT mnemo.commit_summary(NULL, 'tap_dx', 'x', 1, ARRAY['tap_d2']) $$, '22004', NULL,
                 '22004: NULL session');
SELECT pg_temp.mark('NULL session');
SELECT throws_ok($$ SELECT mnemo.commit_summary('tap_d', NULL, 'x', 1, ARRAY['tap_d2']) $$, '22004', NULL,
                 '22004: NULL summary id');
SELECT pg_temp.mark('NULL summary id');
SELECT throws_ok($$ SELECT mnemo.commit_summary('tap_d', 'tap_dx', NULL, 1, ARRAY['tap_d2']) $$, '22004', NULL,
                 '22004: NULL content');
SELECT pg_temp.mark('NULL content');
SELECT throws_ok($$ SELECT mnemo.commit_summary('tap_d', 'tap_dx', 'x', NULL, ARRAY['tap_d2']) $$, '22004', NULL,
                 '22004: NULL token count');
SELECT pg_temp.mark('NULL token count');
SELECT throws_ok($$ SELECT mnemo.commit_summary('tap_d', 'tap_dx', 'x', 1, NULL) $$, '22004', NULL,
                 '22004: NULL list');
SELECT pg_temp.mark('NULL list');
SELECT throws_ok($$ SELECT mnemo.commit_summary('tap_d', 'tap_dx', 'x', 1, ARRAY['tap_d2'], NULL, 1) $$, '22004', NULL,
                 '22004: NULL kind');
SELECT pg_temp.mark('NULL kind');
SELECT throws_ok($$ SELECT mnemo.commit_summary('tap_d', 'tap_dx', 'x', 1, ARRAY['tap_d2'], 'leaf', NULL) $$, '22004', NULL,
                 '22004: NULL level');
SELECT pg_temp.mark('NULL level');
SELECT results_eq($$ SELECT label, state FROM states ORDER BY n $$,
                  $$ SELECT label, (SELECT state FROM state0) FROM states ORDER BY n $$,
                  'after each failing commit_summary messages, parts, nodes, edges, view and sessions are unchanged');
SELECT is((SELECT count(*) FROM mnemo.messages WHERE id = 'tap_dx'), 0::bigint, 'no summary message was appended');
-- the id refused above is still free, and the items are still in context
SELECT is(mnemo.commit_summary('tap_d', 'tap_dx', 'x', 1, ARRAY['tap_d3', 'tap_d2']), 2::bigint,
          'the same commit with valid arguments succeeds afterwards');

--
-- invariant 4: lossless.  Two leaves and a condensation expand back to the
-- original messages exactly as stored, tombstoned output included
--
SELECT bag_eq($$ SELECT item_id, seq, role, parts FROM mnemo.expand_summary('tap_c', 'tap_cs3', true)
                  WHERE item_type = 'message' $$,
              $$ SELECT id, seq, role, parts FROM mnemo.get_messages_with_parts('tap_c')
                  WHERE id IN ('tap_c1', 'tap_c2', 'tap_c3', 'tap_c4') $$,
                  'expand_summary(recursive) gives exactly the original messages with their stored parts');
SELECT is((SELECT parts->1->>'output' FROM mnemo.expand_summary('tap_c', 'tap_cs3', true) WHERE item_id = 'tap_c2'),
          'three matches in herd.txt', 'the tombstoned tool output comes back');
SELECT results_eq($$ SELECT depth, summary_id, item_type, item_id FROM mnemo.expand_summary('tap_c', 'tap_cs3') $$,
                  $$ VALUES (1, 'tap_cs3', 'summary', 'tap_cs1'), (1, 'tap_cs3', 'summary', 'tap_cs2') $$,
                  'one level: the two leaves');
SELECT results_eq($$ SELECT id, kind, superseded_by FROM mnemo.summary_nodes('tap_c', true) ORDER BY id $$,
                  $$ VALUES ('tap_cs1', 'leaf', 'tap_cs3'), ('tap_cs2', 'leaf', 'tap_cs3'),
                            ('tap_cs3', 'condensed', NULL), ('tap_cs4', 'leaf', NULL) $$,
                  'both leaves are superseded by the condensation');
SELECT results_eq($$ SELECT id FROM mnemo.summary_nodes('tap_c') $$, ARRAY['tap_cs3', 'tap_cs4'],
                  'summary_nodes hides superseded nodes');
SELECT results_eq($$ SELECT id FROM mnemo.summary_nodes('tap_c', false) $$, ARRAY['tap_cs3', 'tap_cs4'],
                  'summary_nodes(session, false) too');
SELECT results_eq($$ SELECT seq_start, seq_end FROM mnemo.summary_nodes('tap_c') $$,
                  $$ VALUES (1::bigint, 4::bigint), (5, 5) $$, 'the spans of original messages');
SELECT throws_ok($$ SELECT * FROM mnemo.summary_nodes('tap_missing') $$, 'MN001', NULL, 'summary_nodes: MN001');

--
-- expand_summary: errors
--
SELECT throws_ok($$ SELECT * FROM mnemo.expand_summary('tap_c', 'tap_c6') $$, 'MN002', NULL, 'expand_summary of a message: MN002');
SELECT throws_ok($$ SELECT * FROM mnemo.expand_summary('tap_d', 'tap_d_plain') $$, 'MN002', NULL,
                 'expand_summary of a summary message without a node: MN002');
SELECT throws_ok($$ SELECT * FROM mnemo.expand_summary('tap_c', 'tap_nothing') $$, 'MN002', NULL, 'expand_summary of an unknown id: MN002');
SELECT throws_ok($$ SELECT * FROM mnemo.expand_summary(NULL, NULL) $$, '22004', NULL, 'expand_summary(NULL): 22004');

--
-- prune_tool_outputs
--
SELECT throws_ok($$ SELECT mnemo.prune_tool_outputs('tap_missing') $$, 'MN001', NULL, 'prune: unknown session');
SELECT throws_ok($$ SELECT mnemo.prune_tool_outputs(NULL) $$, '22004', NULL, 'prune: NULL session');
SELECT throws_ok($$ SELECT mnemo.prune_tool_outputs('tap_p', NULL) $$, '22004', NULL, 'prune: NULL protect_tokens');
SELECT throws_ok($$ SELECT mnemo.prune_tool_outputs('tap_p', 0, NULL) $$, '22004', NULL, 'prune: NULL minimum_tokens');
SELECT throws_ok($$ SELECT mnemo.prune_tool_outputs('tap_p', 0, 0, NULL) $$, '22004', NULL, 'prune: NULL protected_tools');
SELECT throws_ok($$ SELECT mnemo.prune_tool_outputs('tap_p', 0, 0, ARRAY['skill', NULL]) $$, '22004', NULL,
                 'prune: a NULL protected tool');
SELECT throws_ok($$ SELECT mnemo.prune_tool_outputs('tap_p', -1, 0) $$, '22023', NULL, 'prune: negative protect_tokens');
SELECT throws_ok($$ SELECT mnemo.prune_tool_outputs('tap_p', 0, -1) $$, '22023', NULL, 'prune: negative minimum_tokens');
SELECT is(mnemo.prune_tool_outputs('tap_e', 0, 0), 0, 'prune of an empty session: 0');
SELECT is(mnemo.prune_tool_outputs('tap_e'), 0, 'prune of an empty session with the defaults: 0');
SELECT lives_ok($$ SELECT mnemo.append_message('tap_p', 'user', '[{"type": "text", "text": "u1"}]', id => 'tap_p1');
                   SELECT mnemo.append_message('tap_p', 'assistant', '[{"type": "tool", "id": "tap_p2_t", "tool_name": "read",
                       "tool_call_id": "r1", "tool_state": "completed", "input": {"path": "/etc/hosts"},
                       "output": "127.0.0.1 localhost ✓", "token_estimate": 100}]', id => 'tap_p2');
                   SELECT mnemo.append_message('tap_p', 'user', '[{"type": "text", "text": "u2"}]', id => 'tap_p3');
                   SELECT mnemo.append_message('tap_p', 'user', '[{"type": "text", "text": "u3"}]', id => 'tap_p4') $$,
                'a tool part behind two user turns');
CREATE TEMP TABLE part0 AS SELECT md5(content::text) AS h FROM mnemo.message_parts WHERE id = 'tap_p2_t';
SELECT is(mnemo.prune_tool_outputs('tap_p', 0, 0), 1, 'one part pruned');
SELECT ok((SELECT compacted_at IS NOT NULL FROM mnemo.message_parts WHERE id = 'tap_p2_t'), 'it is tombstoned');
SELECT is((SELECT md5(content::text) FROM mnemo.message_parts WHERE id = 'tap_p2_t'), (SELECT h FROM part0),
          'its content is unchanged');
SELECT is(mnemo.prune_tool_outputs('tap_p', 0, 0), 0, 'a second prune finds nothing');

--
-- search_history
--
SELECT throws_ok($$ SELECT * FROM mnemo.search_history('tap_missing', 'zebra') $$, 'MN001', NULL, 'search: unknown session');
SELECT throws_ok($$ SELECT * FROM mnemo.search_history(NULL, 'zebra') $$, '22004', NULL, 'search: NULL session');
SELECT throws_ok($$ SELECT * FROM mnemo.search_history('tap_c', NULL) $$, '22004', NULL, 'search: NULL query');
SELECT throws_ok($$ SELECT * FROM mnemo.search_history('tap_c', 'zebra', NULL) $$, '22004', NULL, 'search: NULL limit');
SELECT throws_ok($$ SELECT * FROM mnemo.search_history('tap_c', 'zebra', -1) $$, '22023', NULL, 'search: negative limit');
SELECT results_eq($$ SELECT message_id, seq, role, in_context FROM mnemo.search_history('tap_c', 'zebra') $$,
                  $$ VALUES ('tap_c1', 1::bigint, 'user', false) $$,
                  'a message compacted out of the view is found, not in context');
SELECT results_eq($$ SELECT message_id, in_context FROM mnemo.search_history('tap_c', 'quagga') $$,
                  $$ VALUES ('tap_c2', false) $$, 'so is a tombstoned tool input under a condensation');
SELECT results_eq($$ SELECT message_id, in_context FROM mnemo.search_history('tap_c', 'theta') $$,
                  $$ VALUES ('tap_c8', true) $$, 'a message still in the view is in context');

SELECT * FROM finish();
ROLLBACK;
