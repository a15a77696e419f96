--
-- part_ids: a part appended without an id has the id <message id>:<part_index>,
-- derived from its place and stored as NULL; the ids callers give are stored,
-- unique within the session, and may not take the form of another part's
--
\set VERBOSITY terse
SELECT id FROM mnemo.create_session('pi');
SELECT id, seq FROM mnemo.append_message('pi', 'assistant', '[
  {"type": "text", "text": "a"},
  {"type": "tool", "tool_name": "ls", "tool_call_id": "c1"},
  {"type": "text", "id": "pi_given", "text": "b"},
  {"type": "text", "id": "pi_m1:3", "text": "its own derived id, given"}
]', id => 'pi_m1');
-- what is stored, and what every read gives
SELECT part_index, id FROM mnemo.message_parts WHERE session_id = 'pi' ORDER BY part_index;
SELECT part_index, id FROM mnemo.get_parts('pi', 'pi_m1');
SELECT part_index, part_id FROM mnemo.get_messages_flat('pi');
SELECT jsonb_path_query_array(parts, '$[*].id') AS ids FROM mnemo.get_messages_with_parts('pi');
SELECT jsonb_path_query_array(parts, '$[*].id') AS ids FROM mnemo.history('pi');

-- a derived id names its part in update_part_status and tombstone_part
SELECT mnemo.update_part_status('pi', 'pi_m1:1', tool_state => 'completed', output => '"ok"');
SELECT tool_state, content->>'output' AS output FROM mnemo.get_parts('pi', 'pi_m1') WHERE part_index = 1;
SELECT mnemo.tombstone_part('pi', 'pi_m1:1') > 0 AS derived,
       mnemo.tombstone_part('pi', 'pi_given') > 0 AS given,
       mnemo.tombstone_part('pi', 'pi_m1:3') > 0 AS own_given;
SELECT count(*) FILTER (WHERE compacted_at IS NOT NULL) AS tombstoned
  FROM mnemo.message_parts WHERE session_id = 'pi';
-- no such part (MN003): an index past the last, a message of no part, a
-- form that is not the one mnemo derives, another session's part
SELECT mnemo.tombstone_part('pi', 'pi_m1:4');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.tombstone_part('pi', 'pi_nope:0');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.tombstone_part('pi', 'pi_m1:01');
\echo :LAST_ERROR_SQLSTATE
SELECT id FROM mnemo.create_session('pi_other');
SELECT mnemo.update_part_status('pi_other', 'pi_m1:0', tool_state => 'running');
\echo :LAST_ERROR_SQLSTATE

-- refused (22023), nothing written: a given id of the derived form that is
-- another part's, in append_message, append_messages and append_part
SELECT mnemo.append_message('pi', 'user', '[{"type": "text", "text": "x", "id": "pi_m1:0"}]', id => 'pi_m2');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.append_message('pi', 'user', '[{"type": "text", "text": "x", "id": "pi_m2:1"}]', id => 'pi_m2');
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) FROM mnemo.append_messages('pi', '[{"role": "user", "parts": [{"type": "text", "text": "x"}]},
  {"role": "user", "id": "pi_m3", "parts": [{"type": "text", "text": "x", "id": "pi_m2:0"}]}]');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.append_part('pi', 'pi_m1', '{"type": "text", "text": "x", "id": "pi_m1:9"}');
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS messages, (SELECT count(*) FROM mnemo.message_parts WHERE session_id = 'pi') AS parts
  FROM mnemo.messages WHERE session_id = 'pi';

-- ids that only look alike are stored as given
SELECT seq FROM mnemo.append_message('pi', 'user', '[
  {"type": "text", "text": "x", "id": "pi_m1:01"},
  {"type": "text", "text": "x", "id": "pi_m1:"},
  {"type": "text", "text": "x", "id": ":2"},
  {"type": "text", "text": "x", "id": "pi_m1:-1"},
  {"type": "text", "text": "x", "id": "pi_m1:99999999999"}
]', id => 'pi_m4');
SELECT part_index, id FROM mnemo.message_parts WHERE session_id = 'pi' AND seq = 2 ORDER BY part_index;
SELECT mnemo.tombstone_part('pi', 'pi_m1:01') > 0 AS found_as_given;

-- append_part: the next index's derived id, or the part's own given; a given
-- id is unique in the session (MN004)
SELECT mnemo.append_part('pi', 'pi_m1', '{"type": "text", "text": "c"}');
SELECT mnemo.append_part('pi', 'pi_m1', '{"type": "text", "text": "d", "id": "pi_m1:5"}');
SELECT mnemo.append_part('pi', 'pi_m1', '{"type": "text", "text": "e", "id": "pi_given"}');
\echo :LAST_ERROR_SQLSTATE
SELECT part_index, id FROM mnemo.get_parts('pi', 'pi_m1') WHERE part_index >= 4;
SELECT count(*) FILTER (WHERE id IS NULL) AS stored_without, count(id) AS stored_with
  FROM mnemo.message_parts WHERE session_id = 'pi' AND seq = 1;

-- a message id too long to derive from (250 bytes: a colon and ten digits
-- more would pass the 256 an id may have): its parts get made ids, stored
SELECT seq FROM mnemo.append_message('pi', 'user', '[{"type": "text", "text": "x"}]', id => repeat('m', 250));
SELECT id ~ '^part_[0-9A-HJKMNP-TV-Z]{26}$' AS made, length(id)
  FROM mnemo.message_parts WHERE session_id = 'pi' AND seq = 3;

-- a fork reads its inherited parts by the same ids
SELECT id FROM mnemo.fork_session('pi', '1', 'pi_f');
SELECT part_index, id FROM mnemo.get_parts('pi_f', 'pi_m1') WHERE part_index < 2;
SELECT count(*) AS same_ids FROM mnemo.get_messages_flat('pi_f') f
  JOIN mnemo.get_messages_flat('pi') p USING (seq, part_index) WHERE f.part_id = p.part_id;

-- ids no part has, of every shape: each is MN003, and nothing is tombstoned
SELECT count(*) FILTER (WHERE compacted_at IS NOT NULL) AS tombstoned_before
  FROM mnemo.message_parts WHERE session_id = 'pi';
DO $$
DECLARE
  i text;
  state text;
  n int := 0;
  missing int := 0;
BEGIN
  FOREACH i IN ARRAY ARRAY['', ':', '::', ':0', 'pi_m1::0', 'pi_m1:2147483648', 'pi_m1:' || repeat('9', 300),
                           repeat('x', 300) || ':0', 'pi_m1: 0', E'pi_m1:0\n', 'pi_m1:+0', 'pi_m1:0x1'] LOOP
    n := n + 1;
    BEGIN
      PERFORM mnemo.tombstone_part('pi', i);
    EXCEPTION WHEN OTHERS THEN
      GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE;
      IF state = 'MN003' THEN
        missing := missing + 1;
      END IF;
    END;
  END LOOP;
  RAISE NOTICE '% ids, % of them MN003', n, missing;
END $$;
SELECT count(*) FILTER (WHERE compacted_at IS NOT NULL) AS tombstoned_after
  FROM mnemo.message_parts WHERE session_id = 'pi';
