-- 110_fork: a fork's context view is its source's view as of the fork
-- point, also after a compaction that spans that point (a leaf, and a
-- condensation consuming a summary from before the point): the same items,
-- rendered the same, and expanded through the DAG exactly the inherited
-- messages, each once, in order.  A fork after a run: exactly the
-- snapshot.  A fork of a fork: its source's view as of its own point.
BEGIN;
SELECT plan(17);

-- the messages a session's view covers, summaries expanded down to messages
CREATE FUNCTION pg_temp.covered(s text) RETURNS text[] LANGUAGE sql AS $$
    SELECT array_agg(id ORDER BY ord, sub) FROM (
        SELECT c.position AS ord, 0 AS sub, c.item_id AS id
          FROM mnemo.get_context_items(s) c WHERE c.item_type = 'message'
        UNION ALL
        SELECT c.position, e.seq, e.item_id
          FROM mnemo.get_context_items(s) c, mnemo.expand_summary(s, c.item_id, true) e
         WHERE c.item_type = 'summary' AND e.item_type = 'message') t
$$;
CREATE FUNCTION pg_temp.rendered(s text) RETURNS text LANGUAGE sql AS $$
    SELECT string_agg(item_id || ':' || role || ':' || content, E'\n' ORDER BY position)
      FROM mnemo.build_context(s, 100000)
$$;
CREATE FUNCTION pg_temp.messages(s text, upto bigint) RETURNS text[] LANGUAGE sql AS $$
    SELECT array_agg(id ORDER BY seq) FROM mnemo.get_messages(s) WHERE NOT is_summary AND seq <= upto
$$;

--
-- a leaf spanning the fork point
--
SELECT lives_ok($$
    SELECT mnemo.create_session('tap_f');
    SELECT mnemo.append_messages('tap_f', (SELECT jsonb_agg(jsonb_build_object('id', 'tap_f' || i,
        'role', CASE WHEN i % 2 = 1 THEN 'user' ELSE 'assistant' END,
        'parts', jsonb_build_array(jsonb_build_object('type', 'text', 'text', 'message ' || i))) ORDER BY i)
        FROM generate_series(1, 6) i));
    SELECT mnemo.add_checkpoint('tap_f', 'six') $$, 'tap_f: six messages and a checkpoint');
CREATE TEMP TABLE at_six AS
    SELECT (SELECT array_agg(item_id ORDER BY position) FROM mnemo.get_context_items('tap_f')) AS items,
           pg_temp.rendered('tap_f') AS rendered;
SELECT lives_ok($$
    SELECT mnemo.append_messages('tap_f', (SELECT jsonb_agg(jsonb_build_object('id', 'tap_f' || i,
        'role', 'user', 'parts', jsonb_build_array(jsonb_build_object('type', 'text', 'text', 'later ' || i))) ORDER BY i)
        FROM generate_series(7, 10) i));
    SELECT mnemo.commit_summary('tap_f', 'tap_fs', 'one to eight', 4,
        ARRAY['tap_f1', 'tap_f2', 'tap_f3', 'tap_f4', 'tap_f5', 'tap_f6', 'tap_f7', 'tap_f8']);
    SELECT mnemo.fork_session('tap_f', 'six', 'tap_f_c') $$,
    'tap_f: four more, a leaf over one to eight (spanning seq 6), and a fork at the checkpoint');
SELECT is((SELECT array_agg(item_id ORDER BY position) FROM mnemo.get_context_items('tap_f_c')),
          (SELECT items FROM at_six), 'the fork''s view holds the items the parent''s view held at the fork point');
SELECT is(pg_temp.rendered('tap_f_c'), (SELECT rendered FROM at_six),
          'and build_context renders it as the parent''s did then');
SELECT is(pg_temp.covered('tap_f_c'), pg_temp.messages('tap_f', 6),
          'the fork''s view covers exactly the parent''s messages up to the fork point');
CREATE TEMP TABLE parent_f AS
    SELECT (SELECT array_agg(item_id ORDER BY position) FROM mnemo.get_context_items('tap_f')) AS items;
SELECT lives_ok($$ SELECT mnemo.commit_summary('tap_f_c', 'tap_f_cs', 'one to four, in the fork', 4,
                                               ARRAY['tap_f1', 'tap_f2', 'tap_f3', 'tap_f4']) $$,
                'the fork compacts four messages it inherited');
SELECT is(pg_temp.covered('tap_f_c'), pg_temp.messages('tap_f', 6),
          'its view still covers exactly the inherited messages, through its own leaf');
SELECT is((SELECT array_agg(item_id ORDER BY position) FROM mnemo.get_context_items('tap_f')),
          (SELECT items FROM parent_f), 'and the parent''s view is untouched');

--
-- a condensation, committed after the point, over a leaf from before it
--
SELECT lives_ok($$
    SELECT mnemo.create_session('tap_g');
    SELECT mnemo.append_messages('tap_g', (SELECT jsonb_agg(jsonb_build_object('id', 'tap_g' || i,
        'role', CASE WHEN i % 2 = 1 THEN 'user' ELSE 'assistant' END,
        'parts', jsonb_build_array(jsonb_build_object('type', 'text', 'text', 'word ' || i))) ORDER BY i)
        FROM generate_series(1, 8) i));
    SELECT mnemo.commit_summary('tap_g', 'tap_gl1', 'one to three', 3, ARRAY['tap_g1', 'tap_g2', 'tap_g3']);
    SELECT mnemo.add_checkpoint('tap_g', 'cp') $$, 'tap_g: eight messages, a leaf over 1-3, a checkpoint');
CREATE TEMP TABLE at_cp AS
    SELECT (SELECT array_agg(item_id ORDER BY position) FROM mnemo.get_context_items('tap_g')) AS items,
           pg_temp.rendered('tap_g') AS rendered;
SELECT lives_ok($$
    SELECT mnemo.append_message('tap_g', 'user', '[{"type": "text", "text": "ten"}]', id => 'tap_g10');
    SELECT mnemo.commit_summary('tap_g', 'tap_gl2', 'four to six', 3, ARRAY['tap_g4', 'tap_g5', 'tap_g6']);
    SELECT mnemo.commit_summary('tap_g', 'tap_gc', 'one to six', 3, ARRAY['tap_gl1', 'tap_gl2'], 'condensed', 2);
    SELECT mnemo.fork_session('tap_g', 'cp', 'tap_g_c') $$,
    'tap_g: a leaf over 4-6 and a condensation of both leaves after the checkpoint, then a fork at it');
SELECT is((SELECT array_agg(item_id ORDER BY position) FROM mnemo.get_context_items('tap_g_c')),
          (SELECT items FROM at_cp), 'the condensation is expanded: the leaf from before the point stays');
SELECT is(pg_temp.rendered('tap_g_c'), (SELECT rendered FROM at_cp), 'rendered as the parent''s view was then');
SELECT is(pg_temp.covered('tap_g_c'), pg_temp.messages('tap_g', 8),
          'covering exactly messages 1-8, each once, in order');

--
-- a fork of the fork, at a seq inside its inheritance
--
SELECT lives_ok($$
    SELECT mnemo.append_message('tap_g_c', 'user', '[{"type": "text", "text": "own"}]', id => 'tap_g_c11');
    SELECT mnemo.fork_session('tap_g_c', '5', 'tap_g_cc') $$, 'a fork of the fork at seq 5');
SELECT is(pg_temp.covered('tap_g_cc'), pg_temp.messages('tap_g', 5),
          'the fork of the fork covers exactly messages 1-5 of the first session');

--
-- a fork after a run, with a leaf over a message of a run in flight
--
SELECT lives_ok($$
    SELECT mnemo.create_session('tap_r');
    SELECT mnemo.claim_run('tap_r', 'r1');
    SELECT mnemo.claim_run('tap_r', 'r2');
    SELECT mnemo.append_message('tap_r', 'user', '[{"type": "text", "text": "a"}]', id => 'tap_r1', run_id => 'r1');
    SELECT mnemo.append_message('tap_r', 'user', '[{"type": "text", "text": "b"}]', id => 'tap_r2', run_id => 'r2');
    SELECT mnemo.append_message('tap_r', 'user', '[{"type": "text", "text": "c"}]', id => 'tap_r3');
    SELECT mnemo.append_message('tap_r', 'user', '[{"type": "text", "text": "d"}]', id => 'tap_r4', run_id => 'r1');
    SELECT mnemo.commit_summary('tap_r', 'tap_rs', 'a b c', 3, ARRAY['tap_r1', 'tap_r2', 'tap_r3']);
    SELECT mnemo.complete_run('tap_r', 'r1');
    SELECT mnemo.fork_session('tap_r', 'run:r1', 'tap_r_c') $$, 'tap_r: two runs interleaved, a leaf over both, a fork after r1');
SELECT is(pg_temp.covered('tap_r_c'), (SELECT array_agg(id ORDER BY seq) FROM mnemo.snapshot('tap_r', 'r1')),
          'the fork''s view covers exactly snapshot(r1): nothing of the run in flight');

SELECT * FROM finish();
ROLLBACK;
