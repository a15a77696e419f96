--
-- flat: get_messages_flat, a session's messages with their parts as rows,
-- one per part beside its message's columns, nothing assembled
--
\set VERBOSITY sqlstate

SELECT id FROM mnemo.create_session('fl');
SELECT id FROM mnemo.create_session('fl_empty');
SELECT seq FROM mnemo.append_messages('fl', '[
  {"id": "fl_1", "role": "user", "parts": [{"type": "text", "id": "fl_1_a", "text": "quote \" backslash \\ tab \t newline \n bell \u0007 del \u007f é 😀 </script>"}]},
  {"id": "fl_2", "role": "assistant", "run_id": "run_1", "parts": [
     {"type": "reasoning", "id": "fl_2_a", "text": ""},
     {"type": "tool", "id": "fl_2_b", "tool_name": "ls", "tool_call_id": "c1",
      "input": {"path": "/tmp", "deep": [1, 2.50, -3e2, 123456789012345678901234567890, true, false, null, {}, []]},
      "tool_state": "running"},
     {"type": "text", "id": "fl_2_c", "text": "listing", "extra": {"nested": {"a": [[]], "b": "\u0001"}}}]},
  {"id": "fl_3", "role": "tool", "parts": []},
  {"id": "fl_4", "role": "assistant", "parts": [
     {"type": "file_ref", "id": "fl_4_a", "content_id": "sha256:f", "path": "/tmp/a.txt", "token_estimate": 3}]}
]');
SELECT seq FROM mnemo.append_message('fl', 'assistant', '[{"type": "text", "id": "fl_s1_a", "text": "so far: ls"}]',
                                     id => 'fl_s1', is_summary => true);
SELECT mnemo.update_part_status('fl', 'fl_2_b', tool_state => 'completed', started_at => 1736000000000,
                                completed_at => 1736000000250, output => 'a.txt');
SELECT mnemo.tombstone_part('fl', 'fl_2_b') > 0 AS tombstoned;
SELECT mnemo.update_message_tokens('fl', 'fl_2', '{"input": 10, "output": 5}', 0.25, 'stop');

-- one row per part in (seq, part_index) order; a message without parts is
-- one row with NULL part columns; the tombstone and the live state stand
-- beside the content, which is the object as stored (still "running")
SELECT id, session_id, seq, role, run_id, is_summary, tokens_input, tokens_output, cost,
       finish_reason, part_id, part_index, tool_state, compacted_at IS NOT NULL AS tombstoned,
       started_at, completed_at, token_estimate
  FROM mnemo.get_messages_flat('fl');
SELECT part_id, content FROM mnemo.get_messages_flat('fl') WHERE part_id = 'fl_2_b';

-- content is jsonb's own text of the stored object, byte for byte, whatever
-- it holds (escapes, control characters, numbers of any size, nesting)
SELECT count(*) AS parts, count(*) FILTER (WHERE f.content::text = p.content::text) AS same_text
  FROM mnemo.get_messages_flat('fl') f
  JOIN mnemo.message_parts p
    ON p.session_id = f.session_id AND p.seq = f.seq AND p.part_index = f.part_index;
SELECT content FROM mnemo.get_messages_flat('fl') WHERE part_id = 'fl_1_a';
SELECT pg_typeof(content) FROM mnemo.get_messages_flat('fl') LIMIT 1;

-- every character that needs escaping, at every offset of the 8-byte steps
-- the printer takes over plain text
SELECT id FROM mnemo.create_session('fl_esc');
SELECT count(*) FROM mnemo.append_messages('fl_esc', (
  SELECT jsonb_agg(jsonb_build_object('role', 'user', 'parts', parts))
    FROM (SELECT c, jsonb_agg(jsonb_build_object('type', 'text',
                     'text', repeat('x', i) || chr(c) || repeat('y', 17 - i) || chr(c),
                     chr(c) || 'key', repeat('z', i))) AS parts
            FROM (SELECT generate_series(1, 31) AS c UNION VALUES (34), (92), (127), (233)) cs,
                 generate_series(0, 16) AS i
           GROUP BY c) m));
SELECT count(*) AS parts, count(*) FILTER (WHERE f.content::text = p.content::text) AS same_text
  FROM mnemo.get_messages_flat('fl_esc') f
  JOIN mnemo.message_parts p
    ON p.session_id = f.session_id AND p.seq = f.seq AND p.part_index = f.part_index;

-- the same messages and parts as get_messages_with_parts: its arrays rebuilt
-- from the rows are equal to its own
SELECT count(*) AS messages,
       count(*) FILTER (WHERE w.parts = f.parts AND w.seq = f.seq AND w.role = f.role) AS same
  FROM mnemo.get_messages_with_parts('fl') w
  JOIN (SELECT id, seq, role,
               coalesce(jsonb_agg(content::jsonb || jsonb_strip_nulls(jsonb_build_object(
                   'id', part_id, 'part_index', part_index, 'tool_state', tool_state,
                   'compacted_at', compacted_at, 'started_at', started_at,
                   'completed_at', completed_at, 'token_estimate', token_estimate))
                   ORDER BY part_index) FILTER (WHERE part_id IS NOT NULL), '[]') AS parts
          FROM mnemo.get_messages_flat('fl') GROUP BY id, seq, role) f USING (id);

-- since_message_id: only what came after it
SELECT seq, id, part_id FROM mnemo.get_messages_flat('fl', 'fl_3');
SELECT count(*) FROM mnemo.get_messages_flat('fl', 'fl_s1');
SELECT count(*) FROM mnemo.get_messages_flat('fl_empty');

-- ids that do not ascend with the seqs (the parts are then looked up by
-- id), and more messages than one chunk of the read (1024 seqs)
SELECT id FROM mnemo.create_session('fl_many');
SELECT count(*) FROM mnemo.append_messages('fl_many', (
  SELECT jsonb_agg(jsonb_build_object('id', 'fl_many_' || (3000 - n), 'role', 'user',
                   'parts', CASE WHEN n % 5 = 0 THEN '[]'::jsonb ELSE jsonb_build_array(
                       jsonb_build_object('type', 'text', 'text', 'message ' || n),
                       jsonb_build_object('type', 'text', 'text', 'second ' || n)) END) ORDER BY n)
    FROM generate_series(1, 1500) AS n));
SELECT count(*) AS rows, count(DISTINCT seq) AS messages, min(seq), max(seq),
       bool_and(part_id IS NULL) FILTER (WHERE seq % 5 = 0) AS empty_ones_null,
       bool_and(content->>'text' = CASE part_index WHEN 0 THEN 'message ' ELSE 'second ' END || seq)
         FILTER (WHERE seq % 5 <> 0) AS parts_of_their_message
  FROM mnemo.get_messages_flat('fl_many');
-- in (seq, part_index) order
SELECT bool_and(ok) AS ordered FROM (
  SELECT (seq, coalesce(part_index, -1)) > lag((seq, coalesce(part_index, -1)))
           OVER (ORDER BY ord) IS NOT FALSE AS ok
    FROM mnemo.get_messages_flat('fl_many') WITH ORDINALITY AS f(id, session_id, seq, role,
         created_at, agent, model_id, provider_id, run_id, is_summary, tokens_input,
         tokens_output, tokens_cache_read, tokens_cache_write, tokens_reasoning, cost,
         finish_reason, part_id, part_index, content, tool_state, compacted_at, started_at,
         completed_at, token_estimate, ord)) o;
SELECT count(*) AS rows, min(seq) FROM mnemo.get_messages_flat('fl_many', 'fl_many_1977');
-- after a resume, the discarded messages are not on the line
SELECT mnemo.add_checkpoint('fl_many', 'at-1000', seq => 1000) IS NOT NULL AS checkpoint;
SELECT mnemo.resume_session('fl_many', 'at-1000') AS discarded;
SELECT seq FROM mnemo.append_message('fl_many', 'user', '[{"type": "text", "text": "after the resume"}]');
SELECT count(DISTINCT seq) AS messages, max(seq) FILTER (WHERE seq <= 1500) AS last_kept,
       min(seq) FILTER (WHERE seq > 1000) AS first_after
  FROM mnemo.get_messages_flat('fl_many');

-- errors: an unknown since-message MN002, an unknown session MN001, NULL 22004
SELECT * FROM mnemo.get_messages_flat('fl', 'no_such_message');
SELECT * FROM mnemo.get_messages_flat('no_such_session');
SELECT * FROM mnemo.get_messages_flat(NULL);

-- a fork: the inherited rows first, each showing the ancestor that holds it,
-- up to the fork point only; then the fork's own
SELECT id FROM mnemo.fork_session('fl', '2', 'fl_f');
SELECT seq FROM mnemo.append_message('fl_f', 'user', '[{"type": "text", "id": "fl_f_a", "text": "in the fork"}]', id => 'fl_f1');
SELECT seq FROM mnemo.append_message('fl', 'user', '[{"type": "text", "text": "parent, after"}]', id => 'fl_6');
SELECT session_id, seq, id, part_id FROM mnemo.get_messages_flat('fl_f');
SELECT session_id, seq, id, part_id FROM mnemo.get_messages_flat('fl_f', 'fl_1');
SELECT seq, id FROM mnemo.get_messages_flat('fl_f', 'fl_f1');
SELECT * FROM mnemo.get_messages_flat('fl_f', 'fl_6');

-- tenancy: another tenant's session is not there (MN001), as through every
-- read; the tenant's own reads its rows
\set VERBOSITY terse
CREATE ROLE fl_a;
CREATE ROLE fl_b;
GRANT USAGE ON SCHEMA mnemo TO fl_a, fl_b;
GRANT SELECT ON ALL TABLES IN SCHEMA mnemo TO fl_a, fl_b;
SET ROLE fl_a;
SELECT id FROM mnemo.create_session('fl_ta');
SELECT seq FROM mnemo.append_message('fl_ta', 'user', '[{"type": "text", "text": "private"}]', id => 'fl_ta1');
SELECT id, part_index, content->>'text' AS text FROM mnemo.get_messages_flat('fl_ta');
RESET ROLE;
SET ROLE fl_b;
SELECT * FROM mnemo.get_messages_flat('fl_ta');
SELECT count(*) AS rows_seen FROM mnemo.message_parts WHERE session_id = 'fl_ta';
RESET ROLE;
\set VERBOSITY sqlstate
SELECT mnemo.purge_session('fl_ta') AS purged;
DELETE FROM mnemo.tenants WHERE tenant IN ('fl_a', 'fl_b');
DROP OWNED BY fl_a, fl_b;
DROP ROLE fl_a, fl_b;

-- ids that ascend within each chunk of 1,024 seqs but interleave across
-- chunks (even numbers, then odd): every part comes once, beside its message
SELECT id FROM mnemo.create_session('fl_mix');
SELECT count(*) FROM mnemo.append_messages('fl_mix', (SELECT jsonb_agg(jsonb_build_object('role', 'user',
  'id', 'mix_' || lpad((CASE WHEN g <= 1024 THEN 2 * g ELSE 2 * (g - 1024) - 1 END)::text, 5, '0'),
  'parts', jsonb_build_array(jsonb_build_object('type', 'text', 'text', 'seq ' || g))) ORDER BY g)
  FROM generate_series(1, 2048) g));
SELECT count(*) AS rows, count(DISTINCT id) AS messages,
       bool_and(content->>'text' = 'seq ' || seq) AS each_beside_its_message
  FROM mnemo.get_messages_flat('fl_mix');

-- get_messages_with_parts and history build their arrays in C from this
-- scan: each message's array is the text of MNEMO_PARTS_JSON's over the
-- tables, for every session above (status columns and a tombstone, escapes,
-- ids that descend or interleave across chunks, a resume, a fork, no parts)
SELECT s AS session, count(w.id) AS messages,
       count(*) FILTER (WHERE w.id IS NOT NULL AND w.parts::text IS DISTINCT FROM coalesce((
         SELECT jsonb_agg(p.content || jsonb_strip_nulls(jsonb_build_object(
                  'id', coalesce(p.id, w.id || ':' || p.part_index), 'part_index', p.part_index,
                  'tool_state', p.tool_state,
                  'compacted_at', p.compacted_at, 'started_at', p.started_at,
                  'completed_at', p.completed_at, 'token_estimate', p.token_estimate))
                ORDER BY p.part_index)
           FROM mnemo.message_parts p WHERE p.session_id = w.session_id AND p.seq = w.seq),
         '[]')::text) AS differing,
       (SELECT array_agg(h::text) FROM mnemo.history(s) h)
         IS NOT DISTINCT FROM (SELECT array_agg(a::text) FROM mnemo.get_messages_with_parts(s) a)
         AS history_same,
       (SELECT array_agg(h::text) FROM mnemo.history(s, 3) h)
         IS NOT DISTINCT FROM (SELECT array_agg(a::text ORDER BY a.seq) FROM (SELECT * FROM mnemo.get_messages_with_parts(s)
                                                            ORDER BY seq DESC LIMIT 3) a) AS history_3_same
  FROM unnest(ARRAY['fl', 'fl_empty', 'fl_esc', 'fl_many', 'fl_f', 'fl_mix']) s
  LEFT JOIN LATERAL mnemo.get_messages_with_parts(s) w ON true
 GROUP BY s ORDER BY s;
