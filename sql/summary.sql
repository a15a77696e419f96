-- The summary DAG: commit_summary, expand_summary, summary_nodes.
\set VERBOSITY terse
SELECT id FROM mnemo.create_session('sm');
SELECT seq FROM mnemo.append_messages('sm', '[
  {"role":"user","id":"sm_m1","parts":[{"type":"text","text":"one"}]},
  {"role":"assistant","id":"sm_m2","parts":[{"type":"text","text":"two"},
     {"type":"tool","id":"sm_t1","tool_name":"ls","tool_call_id":"c1","input":{"p":"/"},"output":"etc\nusr"}]},
  {"role":"user","id":"sm_m3","parts":[{"type":"text","text":"three"}]},
  {"role":"assistant","id":"sm_m4","parts":[{"type":"text","text":"four"}]},
  {"role":"user","id":"sm_m5","parts":[{"type":"text","text":"five"}]}]');
SELECT mnemo.tombstone_part('sm', 'sm_t1') > 0 AS tombstoned;

-- a leaf over two messages: the summary takes the first position
SELECT mnemo.commit_summary('sm', 'sm_s1', 'one and two', 5, ARRAY['sm_m1', 'sm_m2']);
SELECT mnemo.commit_summary('sm', 'sm_s2', 'three and four', 6, ARRAY['sm_m3', 'sm_m4'], 'leaf', 2);
SELECT * FROM mnemo.get_context_items('sm');
-- the summary message: assistant, is_summary, a text part and a compaction marker
SELECT seq, role, is_summary FROM mnemo.get_message('sm', 'sm_s1');
SELECT part_type, content->>'text' AS text, content->>'summary_node_id' AS node,
       content->>'level' AS level, token_estimate
  FROM mnemo.get_parts('sm', 'sm_s1') ORDER BY part_index;
SELECT (mnemo.last_summary('sm')).id;

-- condensation of the two leaves: both superseded, one condensed node
SELECT mnemo.commit_summary('sm', 'sm_s3', 'one to four', 7, ARRAY['sm_s1', 'sm_s2'], 'condensed', 1);
SELECT * FROM mnemo.get_context_items('sm');
SELECT id, kind, level, token_count, seq_start, seq_end, superseded_by
  FROM mnemo.summary_nodes('sm', include_superseded => true);
SELECT id FROM mnemo.summary_nodes('sm');

-- expansion: one level, then through two levels down to the messages
SELECT depth, summary_id, item_type, item_id, seq FROM mnemo.expand_summary('sm', 'sm_s3');
SELECT depth, summary_id, item_type, item_id, seq, role FROM mnemo.expand_summary('sm', 'sm_s3', recursive => true);
-- the originals come back exactly as stored, tombstoned tool output included
SELECT bool_and(e.parts = w.parts) AND count(*) = 4 AS exact
  FROM mnemo.expand_summary('sm', 'sm_s3', true) e
  JOIN mnemo.get_messages_with_parts('sm') w ON w.id = e.item_id
 WHERE e.item_type = 'message';
SELECT e.parts->1->>'output' AS tool_output, (e.parts->1->>'compacted_at') IS NOT NULL AS tombstoned
  FROM mnemo.expand_summary('sm', 'sm_s3', true) e WHERE e.item_id = 'sm_m2';
-- which summary covers a message: an index lookup on the provenance rows
SELECT summary_id FROM mnemo.summary_edges WHERE session_id = 'sm' AND item_id = 'sm_m2';

-- build_context uses the node's token count
SELECT "position", item_id, tokens, content FROM mnemo.build_context('sm', 100);

-- failures change nothing
SELECT mnemo.commit_summary('sm', 'sm_x', 'x', 1, ARRAY['sm_m1']);
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.commit_summary('sm', 'sm_x', 'x', 1, ARRAY['sm_m5', 'sm_s3']);
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.commit_summary('sm', 'sm_x', 'x', 1, ARRAY['sm_m5'], 'condensed', 1);
\echo :LAST_ERROR_SQLSTATE
-- a summary swapped in without commit_summary has no node: condensing it
-- would lose the span and the edges that expansion follows
SELECT id FROM mnemo.create_session('sb');
SELECT seq FROM mnemo.append_messages('sb', '[
  {"role":"user","id":"sb_m1","parts":[{"type":"text","text":"one"}]},
  {"role":"user","id":"sb_m2","parts":[{"type":"text","text":"two"}]},
  {"role":"assistant","id":"sb_bare","is_summary":true,"parts":[{"type":"text","text":"bare"}]}]');
SELECT mnemo.commit_summary('sb', 'sb_s1', 'one', 1, ARRAY['sb_m1']);
SELECT mnemo.swap_context_items('sb', ARRAY['sb_m2'], 'sb_bare');
SELECT mnemo.commit_summary('sb', 'sb_x', 'x', 1, ARRAY['sb_s1', 'sb_bare'], 'condensed', 2);
\echo :LAST_ERROR_SQLSTATE
SELECT item_id FROM mnemo.get_context_items('sb');
SELECT id, superseded_by FROM mnemo.summary_nodes('sb', true);
SELECT mnemo.commit_summary('sm', 'sm_x', 'x', 1, ARRAY[]::text[]);
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.commit_summary('sm', 'sm_x', 'x', 1, ARRAY['sm_m5'], 'twig', 1);
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.commit_summary('sm', 'sm_x', 'x', 1, ARRAY['sm_m5'], 'leaf', 4);
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.commit_summary('sm', 'sm_x', 'x', -1, ARRAY['sm_m5']);
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.commit_summary('sm', 'sm_m5', 'x', 1, ARRAY['sm_m5']);
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.commit_summary('sm_nope', 'sm_x', 'x', 1, ARRAY['sm_m5']);
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.commit_summary('sm', 'sm_x', NULL, 1, ARRAY['sm_m5']);
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS messages, max(seq) AS max_seq FROM mnemo.messages WHERE session_id = 'sm';
SELECT count(*) AS nodes FROM mnemo.summary_nodes('sm', true);
SELECT * FROM mnemo.get_context_items('sm');
SELECT * FROM mnemo.expand_summary('sm', 'sm_m1');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mnemo.summary_nodes('sm_nope');
\echo :LAST_ERROR_SQLSTATE
-- the DAG is append-only too: an application role may only read it
CREATE ROLE sm_app;
GRANT USAGE ON SCHEMA mnemo TO sm_app;
GRANT SELECT ON ALL TABLES IN SCHEMA mnemo TO sm_app;
SET ROLE sm_app;
UPDATE mnemo.summary_nodes SET token_count = 0 WHERE id = 'sm_s3';
\echo :LAST_ERROR_SQLSTATE
UPDATE mnemo.summary_nodes SET superseded_by = NULL WHERE id = 'sm_s1';
\echo :LAST_ERROR_SQLSTATE
DELETE FROM mnemo.summary_edges WHERE session_id = 'sm';
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
DROP OWNED BY sm_app;
DROP ROLE sm_app;
SELECT id, token_count, superseded_by FROM mnemo.summary_nodes('sm', true) ORDER BY id;

-- covered items expand in seq order, whatever order they were listed in;
-- a NULL in the list is 22004
SELECT id FROM mnemo.create_session('sm2');
SELECT seq FROM mnemo.append_messages('sm2', '[
  {"role":"user","id":"sm2_a","parts":[{"type":"text","text":"a"}]},
  {"role":"assistant","id":"sm2_b","parts":[{"type":"text","text":"b"}]},
  {"role":"user","id":"sm2_c","parts":[{"type":"text","text":"c"}]}]');
SELECT mnemo.commit_summary('sm2', 'sm2_x', 'x', 1, ARRAY['sm2_b', NULL]);
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.commit_summary('sm2', 'sm2_s', 'a and b', 2, ARRAY['sm2_b', 'sm2_a']);
SELECT item_id, seq FROM mnemo.expand_summary('sm2', 'sm2_s');

-- a summary covers a contiguous run of the view (issue 32, invariant 9):
-- am4 lies between am3 and am5, so MN006, and nothing is written: no
-- summary message, no node, no edge, the view as it was
SELECT id FROM mnemo.create_session('nc');
SELECT count(*) FROM mnemo.append_messages('nc', (SELECT jsonb_agg(jsonb_build_object('role', 'user', 'id', 'am' || g,
  'parts', jsonb_build_array(jsonb_build_object('type', 'text', 'text', 'm' || g))) ORDER BY g) FROM generate_series(1, 6) g));
SELECT mnemo.commit_summary('nc', 'nc_s1', 'three and five', 5, ARRAY['am3', 'am5']);
SELECT (SELECT count(*) FROM mnemo.messages WHERE session_id = 'nc') AS messages,
       (SELECT count(*) FROM mnemo.summary_nodes WHERE session_id = 'nc') AS nodes,
       (SELECT count(*) FROM mnemo.summary_edges WHERE session_id = 'nc') AS edges,
       (SELECT string_agg(item_id, ',' ORDER BY position) FROM mnemo.get_context_items('nc')) AS view;
-- once am3 to am5 are summarised, a condensation must be contiguous too:
-- am1 and nc_s2 are not (am2 lies between); am2 and nc_s2 are, but a
-- leaf covers messages only
SELECT mnemo.commit_summary('nc', 'nc_s2', 'three to five', 5, ARRAY['am5', 'am3', 'am4']);
SELECT mnemo.commit_summary('nc', 'nc_s3', 'one and three to five', 5, ARRAY['am1', 'nc_s2']);
SELECT mnemo.commit_summary('nc', 'nc_s3', 'two to five', 5, ARRAY['am2', 'nc_s2'], 'leaf');
\echo :LAST_ERROR_SQLSTATE
SELECT string_agg(item_id || '@' || position, ',' ORDER BY position) FROM mnemo.get_context_items('nc');
