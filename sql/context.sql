-- build_context and context_report: the seed's ContextBuilder.
\set VERBOSITY terse
SELECT id FROM mnemo.create_session('cx');

-- an empty session: nothing to assemble, nothing left out
SELECT count(*) FROM mnemo.build_context('cx', 100);
SELECT * FROM mnemo.context_report('cx', 100);

-- every part kind, rendered
SELECT seq FROM mnemo.append_message('cx', 'user',
  '[{"type":"text","text":"List /tmp, please."}]', id => 'cx_u1');
SELECT seq FROM mnemo.append_message('cx', 'assistant',
  '[{"type":"reasoning","text":"The user wants a listing."},
    {"type":"text","text":"Listing it."},
    {"type":"tool","id":"cx_t1","tool_name":"ls","tool_call_id":"c1","input":{"path":"/tmp","all":true},"output":"a.txt\nb.txt"},
    {"type":"tool","id":"cx_t2","tool_name":"cat","tool_call_id":"c2","input":{"path":"/nope"},"tool_state":"error","error_message":"no such file"}]',
  id => 'cx_a1');
SELECT seq FROM mnemo.append_message('cx', 'user',
  '[{"type":"file_ref","content_id":"sha256:f1","path":"/data/x.json","file_type":"json","token_count":4200,"summary":"object with keys a, b"},
    {"type":"step_start"}]',
  id => 'cx_u2');
SELECT seq FROM mnemo.append_message('cx', 'assistant', '[{"type":"text","text":"Three things."}]', id => 'cx_a2');
SELECT "position", item_type, item_id, role, tokens, content FROM mnemo.build_context('cx', 10000);
-- tokens is estimate_tokens of the rendered content
SELECT bool_and(tokens = mnemo.estimate_tokens(content)) AS estimated FROM mnemo.build_context('cx', 10000);
-- clients that want structured tool calls fetch the raw parts by item id
SELECT id, jsonb_array_length(parts) AS parts, parts->2->>'tool_call_id' AS third_call
  FROM mnemo.get_messages_with_parts_by_ids('cx', ARRAY(SELECT item_id FROM mnemo.build_context('cx', 10000)));

-- a tombstoned tool part renders as its tombstone; its output stays stored
SELECT mnemo.update_part_status('cx', 'cx_t1', compacted_at => 1700000000000);
SELECT content FROM mnemo.build_context('cx', 10000) WHERE item_id = 'cx_a1';
SELECT content->>'output' AS stored_output FROM mnemo.message_parts WHERE id = 'cx_t1';

-- newest to oldest while they fit: the first message that does not fit
-- stops the walk, so what is kept is the most recent contiguous run
SELECT item_id, tokens FROM mnemo.build_context('cx', 10000) ORDER BY "position";
SELECT item_id FROM mnemo.build_context('cx', 32) ORDER BY "position";
SELECT * FROM mnemo.context_report('cx', 32);
SELECT item_id FROM mnemo.build_context('cx', 2) ORDER BY "position";
SELECT * FROM mnemo.context_report('cx', 0);

-- summaries are reserved first and always kept, even over budget
SELECT seq FROM mnemo.append_message('cx', 'assistant',
  '[{"type":"text","text":"Summary: the user listed /tmp and read a JSON file."}]',
  id => 'cx_s1', is_summary => true);
SELECT mnemo.swap_context_items('cx', ARRAY['cx_u1', 'cx_a1'], 'cx_s1');
SELECT "position", item_type, item_id, role, tokens, content FROM mnemo.build_context('cx', 10000);
SELECT item_id FROM mnemo.build_context('cx', 20) ORDER BY "position";
SELECT * FROM mnemo.context_report('cx', 20);
-- a budget smaller than the summaries alone: the summaries and no message
SELECT item_id FROM mnemo.build_context('cx', 1) ORDER BY "position";
SELECT * FROM mnemo.context_report('cx', 1);

-- a summary appended and not swapped in is in the log, not in the view,
-- whatever its parts: the walks newest first (build_context) and oldest
-- first (compaction_block) leave it out, and the messages around it keep
-- every part
SELECT id FROM mnemo.create_session('cx_tail');
SELECT seq FROM mnemo.append_message('cx_tail', 'user', '[{"type":"text","text":"before"}]', id => 'ct_u1');
SELECT seq FROM mnemo.append_message('cx_tail', 'assistant',
  '[{"type":"text","text":"summary one"},{"type":"text","text":"summary two"}]',
  id => 'ct_s1', is_summary => true);
SELECT seq FROM mnemo.append_message('cx_tail', 'assistant',
  '[{"type":"text","text":"after"},{"type":"text","text":"and more"}]', id => 'ct_a1');
SELECT count(*) FROM generate_series(1, 6) k,
  LATERAL mnemo.append_message('cx_tail', CASE WHEN k % 2 = 1 THEN 'user' ELSE 'assistant' END,
    jsonb_build_array(jsonb_build_object('type', 'text', 'text', 'turn ' || k)), id => 'ct_' || k) m;
SELECT "position", item_id, content FROM mnemo.build_context('cx_tail', 10000) ORDER BY "position";
SELECT (mnemo.context_report('cx_tail', 10000)).*;
SELECT item_ids, content FROM mnemo.compaction_block('cx_tail', tail_messages => 0);

-- only the context view is read: the swapped-out messages are in the log, not here
SELECT count(*) AS in_log FROM mnemo.get_messages('cx');
SELECT count(*) AS assembled FROM mnemo.build_context('cx', 10000);

-- errors
SELECT * FROM mnemo.build_context('cx_nope', 10);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mnemo.build_context('cx', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mnemo.build_context('cx', -1);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mnemo.context_report(NULL, 10);
\echo :LAST_ERROR_SQLSTATE

-- Flat at any size (issue 36): on an uncompacted session, assembly reads
-- what its budget holds, not the session.  Two sessions whose newest
-- messages are alike, one ten times the other: build_context and
-- context_report read the same number of rows of mnemo's tables on both
-- (the current transaction's counters, summed over every mnemo table and
-- partition), and far fewer than the sessions hold.
CREATE FUNCTION pg_temp.fill(s text, n integer) RETURNS bigint LANGUAGE sql AS $$
  SELECT count(*) FROM mnemo.append_messages(s, (SELECT jsonb_agg(jsonb_build_object(
    'role', CASE WHEN g % 2 = 1 THEN 'user' ELSE 'assistant' END,
    'parts', jsonb_build_array(jsonb_build_object('type', 'text',
      'text', 'message ' || (n - g) % 2 || ' of the newest, about twelve tokens long'))) ORDER BY g)
    FROM generate_series(1, n) g))
$$;
CREATE FUNCTION pg_temp.rows_read(tables text DEFAULT '%') RETURNS bigint LANGUAGE sql AS $$
  SELECT sum(coalesce(idx_tup_fetch, 0) + coalesce(seq_tup_read, 0))::bigint
    FROM pg_stat_xact_user_tables WHERE schemaname = 'mnemo' AND relname LIKE tables
$$;
CREATE FUNCTION pg_temp.read_by(sql text, tables text DEFAULT '%') RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE before bigint := pg_temp.rows_read(tables);
BEGIN
  EXECUTE sql;
  RETURN pg_temp.rows_read(tables) - before;
END $$;
-- fn(session, 1000) on two sessions: whether it read as many rows of the
-- tables on both, and fewer than the smaller holds
CREATE FUNCTION pg_temp.alike(fn text, small text, large text, tables text DEFAULT '%')
  RETURNS TABLE (same_rows_read boolean, fewer_than_the_small_session_holds boolean)
  LANGUAGE plpgsql AS $$
DECLARE
  s bigint := pg_temp.read_by(format('SELECT count(*) FROM mnemo.%I(%L, 1000)', fn, small), tables);
  l bigint := pg_temp.read_by(format('SELECT count(*) FROM mnemo.%I(%L, 1000)', fn, large), tables);
BEGIN
  RETURN QUERY SELECT s = l, l < 1000;
END $$;
SELECT id FROM mnemo.create_session('cx_small');
SELECT id FROM mnemo.create_session('cx_large');
SELECT pg_temp.fill('cx_small', 1000), pg_temp.fill('cx_large', 10000);
BEGIN;
SELECT count(*), sum(tokens) FROM mnemo.build_context('cx_small', 1000);
SELECT count(*), sum(tokens) FROM mnemo.build_context('cx_large', 1000);
SELECT pg_temp.read_by($$SELECT count(*) FROM mnemo.build_context('cx_small', 1000)$$) AS small,
       pg_temp.read_by($$SELECT count(*) FROM mnemo.build_context('cx_large', 1000)$$) AS large
\gset
SELECT :small = :large AS same_rows_read, :large < 1000 AS fewer_than_the_small_session_holds;
SELECT pg_temp.read_by($$SELECT * FROM mnemo.context_report('cx_small', 1000)$$) AS small,
       pg_temp.read_by($$SELECT * FROM mnemo.context_report('cx_large', 1000)$$) AS large
\gset
SELECT :small = :large AS same_rows_read, :large < 1000 AS fewer_than_the_small_session_holds;
-- and what is left out is still counted, every item exactly
SELECT budget_tokens, included_items, omitted_items, included_items + omitted_items AS items
  FROM mnemo.context_report('cx_large', 1000);
COMMIT;

-- The same after compaction (DESIGN.md, invariant 5: context cost grows
-- with the context, not the session).  Two more sessions alike
-- at their newest, one ten times the other, each with every message but
-- its newest 500 under one summary: the history behind the summary is read
-- by none of build_context, context_report and turn_context.
CREATE FUNCTION pg_temp.summarise_all_but(s text, kept integer) RETURNS boolean LANGUAGE sql AS $$
  SELECT mnemo.commit_summary(s, s || '_sum', 'what came before', 20,
    (SELECT array_agg(item_id ORDER BY position) FROM mnemo.get_context_items(s) c
      WHERE item_type = 'message'
        AND position <= (SELECT max(position) - kept FROM mnemo.get_context_items(s)))) IS NOT NULL
$$;
SELECT id FROM mnemo.create_session('cx_csmall');
SELECT id FROM mnemo.create_session('cx_clarge');
SELECT pg_temp.fill('cx_csmall', 1000), pg_temp.fill('cx_clarge', 10000);
SELECT pg_temp.summarise_all_but('cx_csmall', 500), pg_temp.summarise_all_but('cx_clarge', 500);
-- with statistics, as autovacuum gives them within a minute: on the
-- partitioned layout a partition never analyzed has its id probes planned
-- as a scan of the session's key (pgTAP 066_by_id_cost covers statistics
-- that misjudge one session)
ANALYZE mnemo.log;
SELECT item_type, count(*) FROM mnemo.get_context_items('cx_clarge') GROUP BY 1 ORDER BY 1;
BEGIN;
SELECT fn, a.* FROM unnest(ARRAY['build_context', 'context_report', 'turn_context']) WITH ORDINALITY AS u(fn, n),
  LATERAL pg_temp.alike(fn, 'cx_csmall', 'cx_clarge') a ORDER BY n;
COMMIT;

-- And on forks: a fork at the newest seq of each uncompacted session above
-- copies its view, 1,000 or 10,000 items its parent holds; assembly walks
-- it newest first like any other, looking each batch's items up where they
-- are, so it reads the same messages on both (it read and rendered the
-- whole view before).  The rows of the view it reads to find the
-- summaries, which it reserves first, are still the view's: the summaries
-- are found by a filter on the view's key range.
SELECT (mnemo.fork_session(s, (SELECT max(seq) FROM mnemo.messages WHERE session_id = s)::text, s || '_fork')).id
  FROM unnest(ARRAY['cx_small', 'cx_large']) AS s;
SELECT count(*), sum(tokens) FROM mnemo.build_context('cx_large_fork', 1000);
SELECT (SELECT md5(string_agg(item_id || content, ',' ORDER BY position)) FROM mnemo.build_context('cx_large_fork', 1000))
     = (SELECT md5(string_agg(item_id || content, ',' ORDER BY position)) FROM mnemo.build_context('cx_large', 1000))
       AS the_parents_context;
BEGIN;
SELECT fn, a.* FROM unnest(ARRAY['build_context', 'context_report', 'turn_context']) WITH ORDINALITY AS u(fn, n),
  LATERAL pg_temp.alike(fn, 'cx_small_fork', 'cx_large_fork', 'log%') a ORDER BY n;
COMMIT;
