--
-- recall_expand: the model's lcm_expand.  What a leaf or a condensed
-- summary covers, rendered as text with tombstoned outputs whole, a page at
-- a time under a token cap; a fork's inherited summary; errors; another
-- tenant's session.
--
\set VERBOSITY terse
SELECT id FROM mnemo.create_session('rx_s');
SELECT count(*) FROM mnemo.append_messages('rx_s', '[
 {"role":"user","id":"rx_m1","parts":[{"type":"text","text":"start the server on port 48213"}]},
 {"role":"assistant","id":"rx_m2","parts":[{"type":"tool","tool_name":"bash","tool_call_id":"c1","tool_state":"completed","input":{"cmd":"cat /srv/app/config.yaml"},"output":"listen: 48213"}]},
 {"role":"assistant","id":"rx_m3","parts":[{"type":"text","text":"the server is up"}]},
 {"role":"user","id":"rx_m4","parts":[{"type":"text","text":"check the port again"}]},
 {"role":"assistant","id":"rx_m5","parts":[{"type":"text","text":"port checked"}]},
 {"role":"user","id":"rx_m6","parts":[{"type":"text","text":"what port was it"}]}]');

-- a leaf over m1..m3, then a leaf over m4..m5 condensed with it
SELECT mnemo.commit_summary('rx_s', 'rx_l1', 'started a server', 5, ARRAY['rx_m1', 'rx_m2', 'rx_m3']);
SELECT mnemo.commit_summary('rx_s', 'rx_l2', 'checked the port', 5, ARRAY['rx_m4', 'rx_m5']);
SELECT mnemo.commit_summary('rx_s', 'rx_c1', 'a server, its port checked', 6, ARRAY['rx_l1', 'rx_l2'],
                                     kind => 'condensed');

-- a fork, to expand what it inherited
SELECT id, fork_seq FROM mnemo.fork_session('rx_s', '9', 'rx_f');
SELECT seq FROM mnemo.append_message('rx_f', 'user', '[{"type":"text","text":"port 48213 still?"}]', id => 'rx_f1');

-- recall_expand: what a summary covers, as text, a page at a time; a
-- tombstoned output comes back whole
SELECT mnemo.tombstone_part('rx_s', (SELECT p.id FROM mnemo.get_parts('rx_s', 'rx_m2') p)) > 0 AS tombstoned;
SELECT ordinal, item_type, item_id, seq, role, content, tokens, items FROM mnemo.recall_expand('rx_s', 'rx_l1');
-- a condensed summary expands to the summaries it condensed
SELECT ordinal, item_type, item_id, items FROM mnemo.recall_expand('rx_s', 'rx_c1');
SELECT ordinal, item_id, tokens FROM mnemo.recall_expand('rx_s', 'rx_l1', 0, 100);
SELECT ordinal, item_id FROM mnemo.recall_expand('rx_s', 'rx_l1', 1, 100);
SELECT count(*) FROM mnemo.recall_expand('rx_s', 'rx_l1', 3);
-- one item over the cap is cut to it, and says so
SELECT count(*) FROM mnemo.append_messages('rx_s', jsonb_build_array(jsonb_build_object('role', 'user', 'id', 'rx_big',
       'parts', jsonb_build_array(jsonb_build_object('type', 'text', 'text', repeat('word ', 2000))))));
SELECT mnemo.commit_summary('rx_s', 'rx_l3', 'a long paste', 5, ARRAY['rx_big']) > 0 AS committed;
SELECT tokens <= 140 AS within_cap, content ~ 'cut here: the item holds about 2' AS says_cut
  FROM mnemo.recall_expand('rx_s', 'rx_l3', 0, 100);
-- two items of about 65 tokens: a page of 100 holds one, the next page the other
SELECT count(*) FROM mnemo.append_messages('rx_s', jsonb_build_array(
       jsonb_build_object('role', 'user', 'id', 'rx_p1', 'parts', jsonb_build_array(jsonb_build_object('type', 'text', 'text', repeat('word ', 48)))),
       jsonb_build_object('role', 'user', 'id', 'rx_p2', 'parts', jsonb_build_array(jsonb_build_object('type', 'text', 'text', repeat('more ', 48))))));
SELECT mnemo.commit_summary('rx_s', 'rx_l4', 'two pastes', 5, ARRAY['rx_p1', 'rx_p2']) > 0 AS committed;
SELECT ordinal, item_id, tokens, items FROM mnemo.recall_expand('rx_s', 'rx_l4', 0, 100);
SELECT ordinal, item_id, tokens, items FROM mnemo.recall_expand('rx_s', 'rx_l4', 1, 100);
-- a fork expands what it inherited
SELECT ordinal, item_id FROM mnemo.recall_expand('rx_f', 'rx_l1', 2);
SELECT * FROM mnemo.recall_expand('rx_s', 'rx_nosuch');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mnemo.recall_expand('rx_s', 'rx_l1', -1);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mnemo.recall_expand('rx_s', 'rx_l1', 0, 99);
\echo :LAST_ERROR_SQLSTATE

-- another tenant's session is not there
CREATE ROLE rx_other;
GRANT USAGE ON SCHEMA mnemo TO rx_other;
GRANT SELECT ON ALL TABLES IN SCHEMA mnemo TO rx_other;
SET ROLE rx_other;
SELECT * FROM mnemo.recall_expand('rx_s', 'rx_l1');
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
DROP OWNED BY rx_other;
DROP ROLE rx_other;
