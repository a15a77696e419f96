-- 065_parts_arrays: every read that returns a message's parts as a jsonb
-- array returns the same array, the one src/reads/reads.h defines: each
-- part's stored object (an image's base64 put back from its blob) with its
-- id (given, or "<message id>:<part_index>"), part_index and the live status
-- columns that are set laid over it, in part_index order; [] for a message
-- without parts.  The definition is written out below in SQL as the oracle;
-- the functions build it in C (src/reads/flat.c), on forks too.
BEGIN;
SELECT plan(14);

-- the oracle: message mid of session owner (the session that holds its rows)
CREATE FUNCTION pg_temp.parts_of(owner text, mid text) RETURNS jsonb LANGUAGE sql STABLE AS $$
    SELECT coalesce((
        SELECT jsonb_agg(
                   (CASE WHEN p.part_type = 'image' AND jsonb_typeof(p.content -> 'data') = 'object'
                         THEN p.content || jsonb_build_object('data',
                                (SELECT mnemo._base64(b.bytes) FROM mnemo.blobs b
                                 WHERE b.tenant = p.tenant
                                   AND b.sha256 = decode(p.content -> 'data' ->> 'sha256', 'hex')))
                         ELSE p.content END)
                   || jsonb_strip_nulls(jsonb_build_object(
                          'id', coalesce(p.id, m.id || ':' || p.part_index), 'part_index', p.part_index,
                          'tool_state', p.tool_state, 'compacted_at', p.compacted_at,
                          'started_at', p.started_at, 'completed_at', p.completed_at,
                          'token_estimate', p.token_estimate))
                   ORDER BY p.part_index)
        FROM mnemo.message_parts p
        WHERE p.session_id = m.session_id AND p.tenant = m.tenant AND p.seq = m.seq), '[]')
    FROM mnemo.messages m WHERE m.session_id = owner AND m.id = mid
$$;

-- an image of 3 kB, stored once as a blob
CREATE TEMP TABLE img AS
    SELECT translate(encode(decode(repeat(md5('tap_pa'), 96), 'hex'), 'base64'), E'\n', '') AS b64;

SELECT lives_ok($$
    SELECT mnemo.create_session('tap_pa');
    SELECT mnemo.append_messages('tap_pa', jsonb_build_array(
        jsonb_build_object('id', 'a1', 'role', 'user', 'parts', jsonb_build_array(
            jsonb_build_object('type', 'text', 'id', 'a1_t', 'text', 'look at this'),
            jsonb_build_object('type', 'image', 'media_type', 'image/png', 'data', (SELECT b64 FROM img)))),
        jsonb_build_object('id', 'a2', 'role', 'assistant', 'parts', jsonb_build_array(
            jsonb_build_object('type', 'reasoning', 'text', 'thinking "hard"'),
            jsonb_build_object('type', 'tool', 'id', 'a2_call', 'tool_name', 'grep', 'tool_call_id', 'c1',
                               'tool_state', 'running', 'input', jsonb_build_object('pattern', 'x')),
            jsonb_build_object('type', 'text', 'text', 'found it'))),
        jsonb_build_object('id', 'a3', 'role', 'assistant', 'parts', '[]'::jsonb),
        jsonb_build_object('id', 'a4', 'role', 'assistant', 'parts', jsonb_build_array(
            jsonb_build_object('type', 'tool', 'id', 'a4_call', 'tool_name', 'cat', 'tool_call_id', 'c2',
                               'tool_state', 'completed', 'output', repeat('out ', 500))))));
    SELECT mnemo.update_part_status('tap_pa', 'a2_call', tool_state => 'completed', started_at => 5,
                                    completed_at => 9, output => 'line 3');
    SELECT mnemo.tombstone_part('tap_pa', 'a4_call');
    SELECT mnemo.commit_summary('tap_pa', 'a_sum', 'the first two', 5, ARRAY['a1', 'a2']);
    SELECT mnemo.claim_run('tap_pa', 'r1');
    SELECT mnemo.append_message('tap_pa', 'assistant', '[{"type": "text", "text": "in the run"}]', id => 'a5',
                                run_id => 'r1');
    SELECT mnemo.complete_run('tap_pa', 'r1');
    SELECT mnemo.add_checkpoint('tap_pa', 'cp1');
    SELECT mnemo.fork_session('tap_pa', 'cp1', 'tap_pa_f');
    SELECT mnemo.append_message('tap_pa', 'user', '[{"type": "text", "text": "later"}]', id => 'a6');
    SELECT mnemo.append_message('tap_pa', 'assistant',
                                '[{"type": "tool", "id": "a7_call", "tool_name": "ls", "tool_call_id": "c3", "tool_state": "running"}]',
                                id => 'a7');
    SELECT mnemo.resume_session('tap_pa', 'cp1');
$$, 'a session of every kind of part, a run, a summary, a fork and a resume');

SELECT ok((SELECT content -> 'data' ? 'sha256' FROM mnemo.log WHERE session_id = 'tap_pa' AND part_type = 'image'),
          'the image is stored as a blob: the oracle puts its base64 back');

SELECT results_eq($$ SELECT id, parts FROM mnemo.get_messages_with_parts('tap_pa') $$,
                  $$ SELECT id, pg_temp.parts_of('tap_pa', id)
                       FROM unnest(ARRAY['a1', 'a2', 'a3', 'a4', 'a_sum', 'a5']) WITH ORDINALITY AS u(id, o) ORDER BY o $$,
                  'get_messages_with_parts');
SELECT results_eq($$ SELECT id, parts FROM mnemo.history('tap_pa', 3) $$,
                  $$ SELECT id, pg_temp.parts_of('tap_pa', id)
                       FROM unnest(ARRAY['a4', 'a_sum', 'a5']) WITH ORDINALITY AS u(id, o) ORDER BY o $$,
                  'history');
SELECT results_eq($$ SELECT id, parts FROM mnemo.get_messages_with_parts_by_ids('tap_pa', ARRAY['a4', 'a1', 'a3', 'a4', 'a6']) $$,
                  $$ SELECT id, pg_temp.parts_of('tap_pa', id)
                       FROM unnest(ARRAY['a4', 'a1', 'a3', 'a4', 'a6']) WITH ORDINALITY AS u(id, o) ORDER BY o $$,
                  'get_messages_with_parts_by_ids: in the order given, twice when named twice, discarded ones too');
SELECT results_eq($$ SELECT id, parts FROM mnemo.snapshot('tap_pa', 'r1') $$,
                  $$ SELECT id, pg_temp.parts_of('tap_pa', id)
                       FROM unnest(ARRAY['a1', 'a2', 'a3', 'a4', 'a5']) WITH ORDINALITY AS u(id, o) ORDER BY o $$,
                  'snapshot');
SELECT results_eq($$ SELECT id, parts FROM mnemo.list_discarded('tap_pa') $$,
                  $$ SELECT id, pg_temp.parts_of('tap_pa', id)
                       FROM unnest(ARRAY['a6', 'a7']) WITH ORDINALITY AS u(id, o) ORDER BY o $$,
                  'list_discarded');
SELECT results_eq($$ SELECT item_id, parts FROM mnemo.expand_summary('tap_pa', 'a_sum') $$,
                  $$ SELECT id, pg_temp.parts_of('tap_pa', id)
                       FROM unnest(ARRAY['a1', 'a2']) WITH ORDINALITY AS u(id, o) ORDER BY o $$,
                  'expand_summary');
SELECT results_eq($$ SELECT item_id, parts FROM mnemo.turn_context('tap_pa', 100000)
                     WHERE item_type = 'message' AND role = 'assistant' ORDER BY position $$,
                  $$ SELECT id, pg_temp.parts_of('tap_pa', id)
                       FROM unnest(ARRAY['a3', 'a4', 'a5']) WITH ORDINALITY AS u(id, o) ORDER BY o $$,
                  'turn_context: the assistant messages after the summary');

-- the fork: its inherited messages are read in the session that holds them
SELECT lives_ok($$
    SELECT mnemo.claim_run('tap_pa_f', 'rf');
    SELECT mnemo.append_message('tap_pa_f', 'user', '[{"type": "text", "text": "in the fork"}]', id => 'f1',
                                run_id => 'rf');
    SELECT mnemo.complete_run('tap_pa_f', 'rf');
$$, 'the fork gets a message of its own, in a run');
SELECT results_eq($$ SELECT id, parts FROM mnemo.get_messages_with_parts('tap_pa_f') $$,
                  $$ SELECT id, pg_temp.parts_of(CASE WHEN id = 'f1' THEN 'tap_pa_f' ELSE 'tap_pa' END, id)
                       FROM unnest(ARRAY['a1', 'a2', 'a3', 'a4', 'a_sum', 'a5', 'f1']) WITH ORDINALITY AS u(id, o) ORDER BY o $$,
                  'a fork: get_messages_with_parts');
SELECT results_eq($$ SELECT id, parts FROM mnemo.get_messages_with_parts_by_ids('tap_pa_f', ARRAY['f1', 'a2', 'a1']) $$,
                  $$ SELECT id, pg_temp.parts_of(CASE WHEN id = 'f1' THEN 'tap_pa_f' ELSE 'tap_pa' END, id)
                       FROM unnest(ARRAY['f1', 'a2', 'a1']) WITH ORDINALITY AS u(id, o) ORDER BY o $$,
                  'a fork: get_messages_with_parts_by_ids, inherited and own');
SELECT results_eq($$ SELECT id, parts FROM mnemo.snapshot('tap_pa_f', 'rf') $$,
                  $$ SELECT id, pg_temp.parts_of(CASE WHEN id = 'f1' THEN 'tap_pa_f' ELSE 'tap_pa' END, id)
                       FROM unnest(ARRAY['a1', 'a2', 'a3', 'a4', 'a5', 'f1']) WITH ORDINALITY AS u(id, o) ORDER BY o $$,
                  'a fork: snapshot, its inherited messages and its own');
SELECT results_eq($$ SELECT item_id, parts FROM mnemo.expand_summary('tap_pa_f', 'a_sum') $$,
                  $$ SELECT id, pg_temp.parts_of('tap_pa', id)
                       FROM unnest(ARRAY['a1', 'a2']) WITH ORDINALITY AS u(id, o) ORDER BY o $$,
                  'a fork: expand_summary of an inherited summary');

SELECT * FROM finish();
ROLLBACK;
