-- 090_bounds: bounded input, bounded rendering (issue 13; doc/limits.md).
--  * JSON nesting: a part (and session metadata) nests at most 512 levels,
--    the part object being level 1 and every array, object or scalar inside
--    one level deeper (json-c's count); 513 is 22023.  The client checks
--    the same number (test/client/t_bounds.c).
--  * Rendering is linear in the content: JSON renders compactly, and a tool's
--    input, output and error each render at most 65,536 bytes then a marker;
--    the read functions still return the whole part.
--  * build_context and context_report never fail because an item is huge:
--    an item whose rendering passes 16 MB is left out and reported like any
--    item that does not fit.
--  * expand_summary on a deep chain of condensations: the exact items, in
--    depth-first order.
BEGIN;
SELECT plan(31);

-- a tool part nesting exactly n levels: the part (1), its input (2), arrays, a number
CREATE FUNCTION pg_temp.nested_part(n int) RETURNS jsonb LANGUAGE sql AS $$
    SELECT ('{"type": "tool", "tool_name": "deep", "tool_call_id": "c", "input": {"x": '
            || repeat('[', n - 3) || '1' || repeat(']', n - 3) || '}}')::jsonb
$$;
CREATE FUNCTION pg_temp.depth(j jsonb) RETURNS int LANGUAGE sql AS $$
    WITH RECURSIVE t(v, d) AS (
        SELECT j, 1
        UNION ALL
        SELECT c.v, t.d + 1 FROM t, LATERAL (
            SELECT value FROM jsonb_array_elements(CASE jsonb_typeof(t.v) WHEN 'array' THEN t.v END)
            UNION ALL
            SELECT value FROM jsonb_each(CASE jsonb_typeof(t.v) WHEN 'object' THEN t.v END)) AS c(v))
    SELECT max(d) FROM t
$$;

--
-- nesting
--
SELECT is(pg_temp.depth(pg_temp.nested_part(512)), 512, 'the helper builds a part 512 levels deep');
SELECT is(pg_temp.depth('{"type": "text", "text": "hi"}'), 2, 'a text part is 2 levels deep (json-c''s count)');
SELECT lives_ok($$ SELECT mnemo.create_session('tap_b') $$, 'a session');
SELECT lives_ok($$ SELECT mnemo.append_message('tap_b', 'assistant', jsonb_build_array(pg_temp.nested_part(512)),
                                               id => 'tap_b_deep') $$,
                'append_message: a part 512 levels deep is accepted');
SELECT is((SELECT content FROM mnemo.get_parts('tap_b', 'tap_b_deep')), pg_temp.nested_part(512),
          'and reads back unchanged');
SELECT throws_ok($$ SELECT mnemo.append_message('tap_b', 'assistant', jsonb_build_array(pg_temp.nested_part(513))) $$,
                 '22023', 'parts[0] nests deeper than 512 levels', 'append_message: 513 levels is 22023');
SELECT throws_ok($$ SELECT mnemo.append_messages('tap_b', jsonb_build_array(jsonb_build_object(
                     'role', 'user', 'parts', jsonb_build_array(pg_temp.nested_part(513))))) $$,
                 '22023', 'messages[0].parts[0] nests deeper than 512 levels', 'append_messages: 513 levels is 22023');
SELECT lives_ok($$ SELECT mnemo.append_messages('tap_b', jsonb_build_array(jsonb_build_object(
                     'role', 'user', 'parts', jsonb_build_array(pg_temp.nested_part(512))))) $$,
                'append_messages: 512 levels is accepted (the batch around the part does not count)');
SELECT throws_ok($$ SELECT mnemo.append_part('tap_b', 'tap_b_deep', pg_temp.nested_part(513)) $$,
                 '22023', 'part nests deeper than 512 levels', 'append_part: 513 levels is 22023');
SELECT throws_ok($$ SELECT mnemo.append_message('tap_b', 'assistant', jsonb_build_array(pg_temp.nested_part(12000))) $$,
                 '22023', NULL, 'the issue''s tool input nested 12,000 deep is refused');
SELECT throws_ok($$ SELECT mnemo.create_session('tap_b_meta', metadata => ('{"a": ' || repeat('[', 512) || repeat(']', 512) || '}')::jsonb) $$,
                 '22023', 'session metadata nests deeper than 512 levels', 'create_session: metadata 513 levels deep is 22023');
SELECT lives_ok($$ SELECT mnemo.create_session('tap_b_meta', metadata => ('{"a": ' || repeat('[', 511) || repeat(']', 511) || '}')::jsonb) $$,
                'create_session: metadata 512 levels deep is accepted');
SELECT is((SELECT count(*) FROM mnemo.messages WHERE session_id = 'tap_b'), 2::bigint, 'only the accepted appends stored messages');

--
-- rendering: compact and capped
--
SELECT lives_ok($$ SELECT mnemo.create_session('tap_r') $$, 'a session for rendering');
-- the issue's part, stored as 0.1.0 let it be (an upgraded database): written
-- here directly, as the superuser
INSERT INTO mnemo.log (session_id, seq, part_index, id, role, created_at, agent, model_id, provider_id,
                       is_summary, part_id, part_type, content, tool_name, tool_call_id, token_estimate, tenant)
    SELECT 'tap_r', 1, 0, 'tap_r1', 'assistant', 0, 'default', '', '', false, 'tap_r1_p', 'tool',
           pg_temp.nested_part(12000), 'deep', 'c', 0, tenant
      FROM mnemo.sessions WHERE id = 'tap_r';
INSERT INTO mnemo.context_items (session_id, position, item_type, item_id, seq, created_at, tenant, generation)
    SELECT 'tap_r', 1, 'message', 'tap_r1', 1, 0, tenant, context_generation FROM mnemo.sessions WHERE id = 'tap_r';
UPDATE mnemo.sessions SET context_tail_seq = 1 WHERE id = 'tap_r';
SELECT cmp_ok((SELECT length(content) FROM mnemo.build_context('tap_r', 1000000)), '<', 25000,
              'a 24 KB tool input nested 12,000 deep renders to under 25 KB (was 576 MB)');
SELECT is((SELECT content FROM mnemo.build_context('tap_r', 1000000)),
          E'[Tool: deep]\nInput: {"x": ' || repeat('[', 11997) || '1' || repeat(']', 11997) || E'}\n[/Tool]',
          'compactly, whole (it is under the cap)');

SELECT lives_ok($$ SELECT mnemo.append_message('tap_r', 'tool', jsonb_build_array(jsonb_build_object(
                     'type', 'tool', 'id', 'tap_r2_p', 'tool_name', 'cat', 'tool_call_id', 'c2', 'tool_state', 'completed',
                     'input', jsonb_build_object('path', 'big.txt'), 'output', repeat('é', 100000))), id => 'tap_r2') $$,
                'a tool output of 200,000 bytes');
SELECT is((SELECT content FROM mnemo.build_context('tap_r', 1000000) WHERE item_id = 'tap_r2'),
          E'[Tool: cat]\nInput: {"path": "big.txt"}\nOutput: ' || repeat('é', 32768)
          || E'\n[... 134464 more bytes not shown; the full part is in mnemo.get_parts]\n[/Tool]',
          'renders its first 65,536 bytes (whole characters) and says how much was cut');
SELECT is((SELECT token_estimate FROM mnemo.message_parts WHERE id = 'tap_r2_p'),
          mnemo.estimate_tokens((SELECT content FROM mnemo.build_context('tap_r', 1000000) WHERE item_id = 'tap_r2')),
          'its token estimate is the capped rendering''s');
SELECT is((SELECT content->>'output' FROM mnemo.get_parts('tap_r', 'tap_r2')), repeat('é', 100000),
          'get_parts returns the whole output');

--
-- a huge item is left out, not fatal (each item is two parts, each under
-- mnemo.max_part_bytes)
--
SELECT lives_ok($$ SELECT mnemo.create_session('tap_h');
                   SELECT mnemo.append_message('tap_h', 'user', '[{"type": "text", "text": "first"}]', id => 'tap_h1');
                   SELECT mnemo.append_message('tap_h', 'user',
                       jsonb_build_array(jsonb_build_object('type', 'text', 'text', repeat('x', 9000000)),
                                         jsonb_build_object('type', 'text', 'text', repeat('y', 9000000))), id => 'tap_h2');
                   SELECT mnemo.append_message('tap_h', 'user',
                       jsonb_build_array(jsonb_build_object('type', 'text', 'text', repeat('z', 8500000)),
                                         jsonb_build_object('type', 'text', 'text', repeat('w', 8500000))), id => 'tap_h3');
                   SELECT mnemo.append_message('tap_h', 'user', '[{"type": "text", "text": "last words"}]', id => 'tap_h4') $$,
                'two items rendering past 16 MB between two small ones');
SELECT results_eq($$ SELECT item_id, content FROM mnemo.build_context('tap_h', 2000000000) $$,
                  $$ VALUES ('tap_h4', 'last words') $$,
                  'build_context works, and stops at the newest huge item as at one that does not fit');
SELECT results_eq($$ SELECT included_items, included_tokens, omitted_items, omitted_tokens
                     FROM mnemo.context_report('tap_h', 2000000000) $$,
                  $$ VALUES (1, 2::bigint, 3, 1::bigint + 4500000 + 4250000) $$,
                  'context_report counts the huge items'' tokens as omitted (18,000,001 and 17,000,001 characters; each part under mnemo.max_part_bytes)');
SELECT results_eq($$ SELECT item_id FROM mnemo.build_context('tap_h', 2) $$, $$ VALUES ('tap_h4') $$,
                  'a small budget still gets the newest message');

-- many items: those that cannot fit are let go while the view is read
SELECT lives_ok($$ SELECT mnemo.create_session('tap_m');
                   SELECT mnemo.append_messages('tap_m', (SELECT jsonb_agg(jsonb_build_object('id', 'tap_m' || g, 'role', 'user',
                       'parts', jsonb_build_array(jsonb_build_object('type', 'text', 'text', lpad(g::text, 1000, '.'))))
                       ORDER BY g) FROM generate_series(1, 3000) g)) $$, '3,000 messages of 1,000 characters');
SELECT results_eq($$ SELECT item_id, content FROM mnemo.build_context('tap_m', 2600) $$,
                  $$ SELECT 'tap_m' || g, lpad(g::text, 1000, '.') FROM generate_series(2991, 3000) g $$,
                  'a budget of 2,600 tokens keeps the newest ten, their contents intact');
SELECT results_eq($$ SELECT included_items, included_tokens, omitted_items, omitted_tokens
                     FROM mnemo.context_report('tap_m', 2600) $$,
                  $$ VALUES (10, 2500::bigint, 2990, 747500::bigint) $$, 'and reports the other 2,990');

--
-- expand_summary down a chain of 1,000 condensations
--
SELECT lives_ok($$ SELECT mnemo.create_session('tap_x');
    SELECT mnemo.append_messages('tap_x', (SELECT jsonb_agg(jsonb_build_object('id', 'm' || g, 'role', 'user',
        'parts', jsonb_build_array(jsonb_build_object('type', 'text', 'text', 'text ' || g))) ORDER BY g)
        FROM generate_series(1, 1000) g));
    SELECT mnemo.commit_summary('tap_x', 'l1', 's', 1, ARRAY['m1']);
    SELECT mnemo.commit_summary('tap_x', 'l' || k, 's', 1, ARRAY['m' || k]),
           mnemo.commit_summary('tap_x', 'c' || k, 's', 1,
                                ARRAY[CASE WHEN k = 2 THEN 'l1' ELSE 'c' || (k - 1) END, 'l' || k], 'condensed')
      FROM generate_series(2, 1000) k ORDER BY k $$,
    'c_k condenses c_(k-1) and a leaf over m_k, 1,000 levels deep');
SELECT results_eq($$ SELECT depth, summary_id, item_type, item_id FROM mnemo.expand_summary('tap_x', 'c1000', true) $$,
    $$ SELECT depth, summary_id, item_type, item_id FROM (
         SELECT 1 AS grp, 1000 - k AS ord, 1000 - k + 1 AS depth, 'c' || k AS summary_id, 'summary' AS item_type,
                CASE WHEN k = 2 THEN 'l1' ELSE 'c' || (k - 1) END AS item_id
           FROM generate_series(2, 1000) k
         UNION ALL SELECT 2, 0, 1000, 'l1', 'message', 'm1'
         UNION ALL SELECT 3, 2 * (k - 2), 1000 - k + 1, 'c' || k, 'summary', 'l' || k FROM generate_series(2, 1000) k
         UNION ALL SELECT 3, 2 * (k - 2) + 1, 1000 - k + 2, 'l' || k, 'message', 'm' || k FROM generate_series(2, 1000) k
       ) e ORDER BY grp, ord $$,
    'recursive expansion: every item of the 1,000 levels, depth first, in order');
SELECT results_eq($$ SELECT seq, role, parts->0->>'text' FROM mnemo.expand_summary('tap_x', 'c1000', true) WHERE item_id = 'm500' $$,
                  $$ VALUES (500::bigint, 'user', 'text 500') $$, 'with each message''s seq, role and parts');
SELECT results_eq($$ SELECT depth, summary_id, item_id FROM mnemo.expand_summary('tap_x', 'c1000') $$,
                  $$ VALUES (1, 'c1000', 'c999'), (1, 'c1000', 'l1000') $$, 'without recursive: the node''s own items');

SELECT * FROM finish();
ROLLBACK;
