--
-- recall: recall_grep, the model's lcm_grep.  A detail compacted out of the
-- context view is found, with the summary of the view that now covers it;
-- words and regular expressions, under a summary, in a fork's inherited
-- line, paginated; costly or invalid patterns refused; another tenant's
-- session never searched.
--
\set VERBOSITY terse
SELECT id FROM mnemo.create_session('rc_s');
SELECT count(*) FROM mnemo.append_messages('rc_s', '[
 {"role":"user","id":"rc_m1","parts":[{"type":"text","text":"start the server on port 48213"}]},
 {"role":"assistant","id":"rc_m2","parts":[{"type":"tool","tool_name":"bash","tool_call_id":"c1","tool_state":"completed","input":{"cmd":"cat /srv/app/config.yaml"},"output":"listen: 48213"}]},
 {"role":"assistant","id":"rc_m3","parts":[{"type":"text","text":"the server is up"}]},
 {"role":"user","id":"rc_m4","parts":[{"type":"text","text":"check the port again"}]},
 {"role":"assistant","id":"rc_m5","parts":[{"type":"text","text":"port checked"}]},
 {"role":"user","id":"rc_m6","parts":[{"type":"text","text":"what port was it"}]}]');

-- before any compaction every hit is in context
SELECT message_id, seq, role, covered_by FROM mnemo.recall_grep('rc_s', '48213');

-- a leaf over m1..m3, then a leaf over m4..m5 condensed with it
SELECT mnemo.commit_summary('rc_s', 'rc_l1', 'started a server', 5, ARRAY['rc_m1', 'rc_m2', 'rc_m3']);
SELECT message_id, seq, snippet, covered_by FROM mnemo.recall_grep('rc_s', '48213');
SELECT mnemo.commit_summary('rc_s', 'rc_l2', 'checked the port', 5, ARRAY['rc_m4', 'rc_m5']);
SELECT mnemo.commit_summary('rc_s', 'rc_c1', 'a server, its port checked', 6, ARRAY['rc_l1', 'rc_l2'],
                                     kind => 'condensed');
-- the hits now name the condensed summary, which is what the view holds
SELECT message_id, seq, covered_by FROM mnemo.recall_grep('rc_s', 'port');
-- a summary message itself: the superseded leaf is covered by the condensed node
SELECT message_id, covered_by FROM mnemo.recall_grep('rc_s', 'started');

-- under a summary: only what its span covers
SELECT message_id FROM mnemo.recall_grep('rc_s', 'port', 'rc_l2');
SELECT message_id FROM mnemo.recall_grep('rc_s', 'port', 'rc_l1');

-- a regular expression, in tool input and output alike, newest first
SELECT message_id, seq, covered_by, snippet ~ 'config\.yaml' AS shows_match
  FROM mnemo.recall_grep('rc_s', 'config\.ya?ml|4821[0-9]', regex => true);
SELECT message_id FROM mnemo.recall_grep('rc_s', '^what', 'rc_c1', regex => true);

-- pages
SELECT message_id FROM mnemo.recall_grep('rc_s', 'port', "limit" => 2);
SELECT message_id FROM mnemo.recall_grep('rc_s', 'port', "limit" => 2, "offset" => 2);
SELECT count(*) FROM mnemo.recall_grep('rc_s', 'port', "offset" => 100);

-- a fork finds what it inherited, covered by the summary it inherited
SELECT id, fork_seq FROM mnemo.fork_session('rc_s', '9', 'rc_f');
SELECT seq FROM mnemo.append_message('rc_f', 'user', '[{"type":"text","text":"port 48213 still?"}]', id => 'rc_f1');
SELECT message_id, seq, covered_by FROM mnemo.recall_grep('rc_f', '48213');
SELECT message_id, covered_by FROM mnemo.recall_grep('rc_f', '4821.', regex => true);

-- refused: costly or invalid patterns, bad arguments
SELECT * FROM mnemo.recall_grep('rc_s', '(a+)\1', regex => true);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mnemo.recall_grep('rc_s', repeat('a', 257), regex => true);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mnemo.recall_grep('rc_s', '(unclosed', regex => true);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mnemo.recall_grep('rc_s', 'port', "limit" => 0);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mnemo.recall_grep('rc_s', 'port', "limit" => 201);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mnemo.recall_grep('rc_s', 'port', "offset" => -1);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mnemo.recall_grep('rc_s', 'port', 'rc_nosuch');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mnemo.recall_grep('rc_nosuch', 'port');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mnemo.recall_grep('rc_s', NULL);
\echo :LAST_ERROR_SQLSTATE

-- recall_expand: what a summary covers, as text, a page at a time; a
-- tombstoned output comes back whole
SELECT mnemo.tombstone_part('rc_s', (SELECT p.id FROM mnemo.message_parts p
                                      WHERE p.session_id = 'rc_s' AND p.message_id = 'rc_m2')) > 0 AS tombstoned;
SELECT ordinal, item_type, item_id, seq, role, content, tokens, items FROM mnemo.recall_expand('rc_s', 'rc_l1');
-- a condensed summary expands to the summaries it condensed
SELECT ordinal, item_type, item_id, items FROM mnemo.recall_expand('rc_s', 'rc_c1');
-- pages: the cap keeps the first item always, then what fits
SELECT ordinal, item_id, tokens FROM mnemo.recall_expand('rc_s', 'rc_l1', 0, 100);
SELECT ordinal, item_id FROM mnemo.recall_expand('rc_s', 'rc_l1', 1, 100);
SELECT count(*) FROM mnemo.recall_expand('rc_s', 'rc_l1', 3);
-- one item over the cap is cut to it, and says so
SELECT count(*) FROM mnemo.append_messages('rc_s', jsonb_build_array(jsonb_build_object('role', 'user', 'id', 'rc_big',
       'parts', jsonb_build_array(jsonb_build_object('type', 'text', 'text', repeat('word ', 2000))))));
SELECT mnemo.commit_summary('rc_s', 'rc_l3', 'a long paste', 5, ARRAY['rc_big']) > 0 AS committed;
SELECT tokens <= 140 AS within_cap, content ~ 'cut here: the item holds about 2' AS says_cut
  FROM mnemo.recall_expand('rc_s', 'rc_l3', 0, 100);
-- two items of about 65 tokens: a page of 100 holds one, the next page the other
SELECT count(*) FROM mnemo.append_messages('rc_s', jsonb_build_array(
       jsonb_build_object('role', 'user', 'id', 'rc_p1', 'parts', jsonb_build_array(jsonb_build_object('type', 'text', 'text', repeat('word ', 48)))),
       jsonb_build_object('role', 'user', 'id', 'rc_p2', 'parts', jsonb_build_array(jsonb_build_object('type', 'text', 'text', repeat('more ', 48))))));
SELECT mnemo.commit_summary('rc_s', 'rc_l4', 'two pastes', 5, ARRAY['rc_p1', 'rc_p2']) > 0 AS committed;
SELECT ordinal, item_id, tokens, items FROM mnemo.recall_expand('rc_s', 'rc_l4', 0, 100);
SELECT ordinal, item_id, tokens, items FROM mnemo.recall_expand('rc_s', 'rc_l4', 1, 100);
-- a fork expands what it inherited
SELECT ordinal, item_id FROM mnemo.recall_expand('rc_f', 'rc_l1', 2);
SELECT * FROM mnemo.recall_expand('rc_s', 'rc_nosuch');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mnemo.recall_expand('rc_s', 'rc_l1', -1);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mnemo.recall_expand('rc_s', 'rc_l1', 0, 99);
\echo :LAST_ERROR_SQLSTATE

-- another tenant's session is not there
CREATE ROLE rc_other;
GRANT USAGE ON SCHEMA mnemo TO rc_other;
GRANT SELECT ON ALL TABLES IN SCHEMA mnemo TO rc_other;
SET ROLE rc_other;
SELECT * FROM mnemo.recall_grep('rc_s', '48213');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mnemo.recall_grep('rc_s', '48213', regex => true);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mnemo.recall_expand('rc_s', 'rc_l1');
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
DROP OWNED BY rc_other;
DROP ROLE rc_other;
