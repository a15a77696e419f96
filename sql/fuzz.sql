-- Random inputs: 3000 appends built from random JSON fragments, wrong shapes
-- and odd values included.  Every call either stores a whole message or fails
-- with a clear SQLSTATE; the backend survives; nothing is half-written.
-- setseed makes the run repeatable.
SELECT setseed(0.4242);
SELECT id FROM mnemo.create_session('fz');
CREATE TEMP TABLE fz_outcome (sqlstate text);
DO $$
DECLARE
    fragments text[] := ARRAY[
        '{"type":"text","text":"hello"}', '{"type":"text"}', '{"type":"text","text":5}',
        '{"type":"reasoning","text":""}', '{"type":"tool","tool_name":"ls","tool_call_id":"c"}',
        '{"type":"tool","tool_name":"ls"}', '{"type":"tool","tool_name":"ls","tool_call_id":"c","tool_state":"weird"}',
        '{"type":"tool","tool_name":"ls","tool_call_id":"c","input":[1,2]}',
        '{"type":"tool","tool_name":"ls","tool_call_id":"c","input":{"a":{"b":[null,true]}},"output":{"x":1}}',
        '{"type":"file_ref","content_id":"abc","path":"/p"}', '{"type":"file_ref","path":"/p"}',
        '{"type":"patch"}', '{"type":"nope"}', '{}', '[]', 'null', '"text"', '42', 'true',
        '{"type":"text","text":"x","token_estimate":-1}', '{"type":"text","text":"x","token_estimate":1e40}',
        '{"type":"text","text":"x","token_estimate":"7"}', '{"type":"text","text":"x","token_estimate":3}',
        '{"type":"text","text":"x","id":""}', '{"type":"text","text":"x","id":"fz_dup"}',
        '{"type":null}', '{"type":"text","text":"\u00e9\u2603"}'];
    roles text[] := ARRAY['user', 'assistant', 'system', 'tool', 'robot', '', NULL];
    parts text;
    n int;
    state text;
BEGIN
    FOR i IN 1..3000 LOOP
        n := floor(random() * 4)::int;
        IF random() < 0.1 THEN
            parts := fragments[1 + floor(random() * array_length(fragments, 1))::int];
        ELSE
            SELECT '[' || coalesce(string_agg(fragments[1 + floor(random() * array_length(fragments, 1))::int], ','), '') || ']'
              INTO parts FROM generate_series(1, n);
        END IF;
        BEGIN
            PERFORM mnemo.append_message('fz', roles[1 + floor(random() * 7)::int], parts::jsonb);
            state := 'ok';
        EXCEPTION WHEN OTHERS THEN
            GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE;
        END;
        INSERT INTO fz_outcome VALUES (state);
    END LOOP;
END
$$;
-- only clear codes: stored, bad value, null, duplicate id
SELECT sqlstate FROM fz_outcome GROUP BY sqlstate ORDER BY sqlstate;
-- every stored call is one dense seq with one item in the context view
-- (its implicit tail), and every part has its message
SELECT (SELECT count(*) FROM fz_outcome WHERE sqlstate = 'ok') = count(*) AS one_message_per_success,
       max(seq) = count(*) AS seqs_dense
  FROM mnemo.messages WHERE session_id = 'fz';
SELECT count(*) = (SELECT count(*) FROM mnemo.messages WHERE session_id = 'fz') AS one_context_item_each
  FROM mnemo.get_context_items('fz');
SELECT count(*) AS orphan_parts FROM mnemo.message_parts p
 WHERE p.session_id = 'fz'
   AND NOT EXISTS (SELECT 1 FROM mnemo.messages m WHERE m.session_id = p.session_id AND m.seq = p.seq);
SELECT (SELECT last_seq FROM mnemo.get_session('fz')) = (SELECT max(seq) FROM mnemo.messages WHERE session_id = 'fz') AS counter_matches;
-- the flat read gives every stored part back, printed as jsonb prints it
SELECT count(f.part_id) = (SELECT count(*) FROM mnemo.message_parts WHERE session_id = 'fz') AS every_part,
       count(DISTINCT f.seq) = (SELECT count(*) FROM mnemo.messages WHERE session_id = 'fz') AS every_message,
       count(*) FILTER (WHERE f.content::text IS DISTINCT FROM p.content::text) AS differing
  FROM mnemo.get_messages_flat('fz') f
  LEFT JOIN mnemo.message_parts p
    ON p.session_id = 'fz' AND p.seq = f.seq AND p.part_index = f.part_index;
