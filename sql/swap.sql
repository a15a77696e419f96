--
-- swap: swap_context_items, the atomic context swap
--
\set VERBOSITY sqlstate

-- the context view of a session as one line: type:id@position, ...
CREATE FUNCTION pg_temp.ctx(session_id text) RETURNS text LANGUAGE sql AS $$
  SELECT coalesce(string_agg(item_type || ':' || item_id || '@' || position, ', ' ORDER BY position), '')
    FROM mnemo.get_context_items(session_id)
$$;

SELECT id FROM mnemo.create_session('sw');
SELECT id FROM mnemo.create_session('sw_other');
SELECT seq FROM mnemo.append_messages('sw', '[
  {"id": "sw_1", "role": "user", "parts": [{"type": "text", "text": "one"}]},
  {"id": "sw_2", "role": "assistant", "parts": [{"type": "text", "text": "two"}]},
  {"id": "sw_3", "role": "user", "parts": [{"type": "text", "text": "three"}]},
  {"id": "sw_4", "role": "assistant", "parts": [{"type": "text", "text": "four"}]},
  {"id": "sw_5", "role": "user", "parts": [{"type": "text", "text": "five"}]},
  {"id": "sw_6", "role": "assistant", "parts": [{"type": "text", "text": "six"}]},
  {"id": "sw_s1", "role": "assistant", "is_summary": true, "parts": [{"type": "text", "text": "2-4"}]},
  {"id": "sw_s2", "role": "assistant", "is_summary": true, "parts": [{"type": "text", "text": "1, 5"}]},
  {"id": "sw_s3", "role": "assistant", "is_summary": true, "parts": [{"type": "text", "text": "all"}]},
  {"id": "sw_s4", "role": "assistant", "is_summary": true, "parts": [{"type": "text", "text": "spare"}]}
]');
SELECT seq FROM mnemo.append_messages('sw_other', '[
  {"id": "swo_1", "role": "user", "parts": []},
  {"id": "swo_s", "role": "assistant", "is_summary": true, "parts": []}
]');
SELECT * FROM mnemo.get_context_items('sw');

--
-- a swap removes the named items, and one summary item takes the smallest
-- position they held; every other item keeps its position; returns it
--
SELECT mnemo.swap_context_items('sw', ARRAY['sw_4', 'sw_2', 'sw_3'], 'sw_s1');
SELECT * FROM mnemo.get_context_items('sw');
-- the removed items must be one contiguous run of the view, in any order:
-- sw_s1 lies between sw_1 and sw_5, so MN006, and nothing changes
-- (issue 32: the summary would sit before sw_s1 and claim it)
SELECT pg_temp.ctx('sw') AS before \gset
SELECT mnemo.swap_context_items('sw', ARRAY['sw_5', 'sw_1'], 'sw_s2');
SELECT pg_temp.ctx('sw') = :'before' AS unchanged;
\set VERBOSITY default
SELECT mnemo.swap_context_items('sw', ARRAY['sw_1', 'sw_5'], 'sw_s2');
\set VERBOSITY sqlstate
SELECT mnemo.swap_context_items('sw', ARRAY['sw_1'], 'sw_s2');
SELECT pg_temp.ctx('sw');
-- condensation: summaries are replaced by a summary
SELECT mnemo.swap_context_items('sw', ARRAY['sw_s2', 'sw_s1'], 'sw_s3');
SELECT pg_temp.ctx('sw');
-- new messages still join the end, after the highest position ever used
SELECT seq FROM mnemo.append_message('sw', 'user', '[]', id => 'sw_7');
SELECT pg_temp.ctx('sw');
-- the log is untouched: every message is still there
SELECT seq, id, is_summary FROM mnemo.get_messages('sw');
-- the summary's context row
SELECT item_type, item_id, position, created_at > 0 AS has_time
  FROM mnemo.context_items WHERE session_id = 'sw' AND item_type = 'summary';

--
-- invalid swaps: MN006, and the context view does not change
--
SELECT pg_temp.ctx('sw') AS before \gset
-- empty list
SELECT mnemo.swap_context_items('sw', ARRAY[]::text[], 'sw_s4');
SELECT pg_temp.ctx('sw') = :'before' AS unchanged;
SELECT mnemo.swap_context_items('sw', '{}', 'sw_s4');
SELECT pg_temp.ctx('sw') = :'before' AS unchanged;
-- an id no longer in context (another compactor won)
SELECT mnemo.swap_context_items('sw', ARRAY['sw_2'], 'sw_s4');
SELECT pg_temp.ctx('sw') = :'before' AS unchanged;
-- ... even next to ids that are
SELECT mnemo.swap_context_items('sw', ARRAY['sw_6', 'sw_7', 'sw_2'], 'sw_s4');
SELECT pg_temp.ctx('sw') = :'before' AS unchanged;
-- an id that never existed, or that is in another session's context
SELECT mnemo.swap_context_items('sw', ARRAY['no_such_item'], 'sw_s4');
SELECT pg_temp.ctx('sw') = :'before' AS unchanged;
SELECT mnemo.swap_context_items('sw', ARRAY['swo_1'], 'sw_s4');
SELECT pg_temp.ctx('sw') = :'before' AS unchanged;
-- an id named twice
SELECT mnemo.swap_context_items('sw', ARRAY['sw_6', 'sw_6'], 'sw_s4');
SELECT pg_temp.ctx('sw') = :'before' AS unchanged;
SELECT mnemo.swap_context_items('sw', ARRAY['sw_6', 'sw_7', 'sw_6'], 'sw_s4');
SELECT pg_temp.ctx('sw') = :'before' AS unchanged;
-- a summary id that is not a summary message
SELECT mnemo.swap_context_items('sw', ARRAY['sw_6'], 'sw_1');
SELECT pg_temp.ctx('sw') = :'before' AS unchanged;
SELECT mnemo.swap_context_items('sw', ARRAY['sw_6'], 'no_such_summary');
SELECT pg_temp.ctx('sw') = :'before' AS unchanged;
-- the summary of another session
SELECT mnemo.swap_context_items('sw', ARRAY['sw_6'], 'swo_s');
SELECT pg_temp.ctx('sw') = :'before' AS unchanged;
-- a summary already in context
SELECT mnemo.swap_context_items('sw', ARRAY['sw_6'], 'sw_s3');
SELECT pg_temp.ctx('sw') = :'before' AS unchanged;
SELECT mnemo.swap_context_items('sw', ARRAY['sw_s3'], 'sw_s3');
SELECT pg_temp.ctx('sw') = :'before' AS unchanged;
-- other errors: unknown session MN001; NULLs 22004; a 2-D list 22023
SELECT mnemo.swap_context_items('no_such_session', ARRAY['sw_6'], 'sw_s4');
SELECT mnemo.swap_context_items('sw', ARRAY['sw_6', NULL], 'sw_s4');
SELECT pg_temp.ctx('sw') = :'before' AS unchanged;
SELECT mnemo.swap_context_items(NULL, ARRAY['sw_6'], 'sw_s4');
SELECT mnemo.swap_context_items('sw', NULL, 'sw_s4');
SELECT mnemo.swap_context_items('sw', ARRAY['sw_6'], NULL);
SELECT mnemo.swap_context_items('sw', ARRAY[ARRAY['sw_6'], ARRAY['sw_7']], 'sw_s4');
SELECT pg_temp.ctx('sw') = :'before' AS unchanged;
-- the other session's view was never touched
SELECT pg_temp.ctx('sw_other');

-- after all that, a valid swap still works: the whole view for the spare summary
SELECT mnemo.swap_context_items('sw', ARRAY(SELECT item_id FROM mnemo.get_context_items('sw')), 'sw_s4');
SELECT pg_temp.ctx('sw');
-- swaps are not appends: seqs and positions are not allocated
SELECT last_seq FROM mnemo.get_session('sw');

-- generations: a swap deletes in place until the rows so deleted would
-- outnumber the live ones, then writes the view anew as the session's next
-- generation and deletes the old one, so a read never steps over more dead
-- rows than live ones; a failed swap moved nothing
SELECT context_generation FROM mnemo.get_session('sw');
SELECT count(*) AS rows, count(*) FILTER (WHERE c.generation = s.context_generation) AS live
  FROM mnemo.context_items c JOIN mnemo.sessions s ON s.id = c.session_id
 WHERE c.session_id = 'sw';
SELECT context_generation FROM mnemo.get_session('sw_other');
-- an append after a swap joins the live generation
SELECT seq FROM mnemo.append_message('sw', 'user', '[{"type":"text","text":"after"}]', id => 'sw_after');
SELECT pg_temp.ctx('sw');
SELECT count(*) FILTER (WHERE c.generation <> s.context_generation) AS stale
  FROM mnemo.context_items c JOIN mnemo.sessions s ON s.id = c.session_id
 WHERE c.session_id = 'sw';

-- the rule, step by step: six messages, all in the implicit tail; two
-- swaps of two take tail items, which leave no dead row (each writes its
-- summary's row); the third deletes both summary rows, 2 dead against 1
-- live row, so it writes generation 1 and starts the count again
SELECT id FROM mnemo.create_session('sw_gen');
SELECT count(*) FROM mnemo.append_messages('sw_gen', (SELECT jsonb_agg(jsonb_build_object('id', 'g' || i, 'role', 'user', 'parts', '[]'::jsonb) ORDER BY i) FROM generate_series(1, 6) i));
SELECT count(*) FROM mnemo.append_messages('sw_gen', '[{"id": "gs1", "role": "assistant", "is_summary": true, "parts": []},
  {"id": "gs2", "role": "assistant", "is_summary": true, "parts": []},
  {"id": "gs3", "role": "assistant", "is_summary": true, "parts": []}]');
SELECT mnemo.swap_context_items('sw_gen', ARRAY['g1', 'g2'], 'gs1');
SELECT context_generation, context_dead FROM mnemo.get_session('sw_gen');
SELECT mnemo.swap_context_items('sw_gen', ARRAY['g3', 'g4'], 'gs2');
SELECT context_generation, context_dead FROM mnemo.get_session('sw_gen');
SELECT mnemo.swap_context_items('sw_gen', ARRAY['gs1', 'gs2'], 'gs3');
SELECT context_generation, context_dead FROM mnemo.get_session('sw_gen');
SELECT pg_temp.ctx('sw_gen');
SELECT count(*) FILTER (WHERE c.generation <> s.context_generation) AS stale
  FROM mnemo.context_items c JOIN mnemo.sessions s ON s.id = c.session_id
 WHERE c.session_id = 'sw_gen';

--
-- the implicit tail: an append writes no context_items row; the session's
-- messages after sessions.context_tail_seq that are not summaries are the
-- end of its view, each at position = its seq
--
CREATE FUNCTION pg_temp.rows(session_id text) RETURNS text LANGUAGE sql AS $$
  SELECT coalesce(string_agg(c.item_id || '@' || c.position, ', ' ORDER BY c.position), '')
    FROM mnemo.context_items c JOIN mnemo.sessions s
      ON s.id = c.session_id AND c.generation = s.context_generation
   WHERE c.session_id = $1
$$;
SELECT id FROM mnemo.create_session('sw_tail');
SELECT count(*) FROM mnemo.append_messages('sw_tail', (SELECT jsonb_agg(jsonb_build_object('id', 't' || i, 'role', 'user', 'parts', '[]'::jsonb) ORDER BY i) FROM generate_series(1, 8) i));
SELECT count(*) FROM mnemo.append_messages('sw_tail', '[{"id": "ts1", "role": "assistant", "is_summary": true, "parts": []},
  {"id": "ts2", "role": "assistant", "is_summary": true, "parts": []},
  {"id": "ts3", "role": "assistant", "is_summary": true, "parts": []}]');
SELECT count(*) AS rows FROM mnemo.context_items WHERE session_id = 'sw_tail';
SELECT pg_temp.ctx('sw_tail');
-- a swap inside the tail: the summary takes the span's smallest position;
-- the tail items before the span become rows at their positions, the ones
-- after it stay implicit
SELECT mnemo.swap_context_items('sw_tail', ARRAY['t4', 't3'], 'ts1');
SELECT pg_temp.ctx('sw_tail');
SELECT pg_temp.rows('sw_tail');
SELECT context_tail_seq FROM mnemo.get_session('sw_tail');
-- a span partly explicit (ts1, a row) and partly tail (t5, t6); t2 and
-- t5 are not contiguous (ts1 lies between them)
SELECT mnemo.swap_context_items('sw_tail', ARRAY['t6', 't2', 't5'], 'ts2');
SELECT mnemo.swap_context_items('sw_tail', ARRAY['t6', 'ts1', 't5'], 'ts2');
SELECT pg_temp.ctx('sw_tail');
SELECT pg_temp.rows('sw_tail');
SELECT context_tail_seq FROM mnemo.get_session('sw_tail');
-- a failed swap that names tail items changes nothing: MN006, the tail start kept
SELECT pg_temp.ctx('sw_tail') AS before \gset
SELECT mnemo.swap_context_items('sw_tail', ARRAY['t8', 't5'], 'ts3');
SELECT mnemo.swap_context_items('sw_tail', ARRAY['t8', 'ts1'], 'no_such_summary');
SELECT pg_temp.ctx('sw_tail') = :'before' AS unchanged, pg_temp.rows('sw_tail'),
       context_tail_seq FROM mnemo.get_session('sw_tail');
-- an append after it joins the tail at its seq, after the summaries' seqs
SELECT seq FROM mnemo.append_message('sw_tail', 'user', '[]', id => 't9');
SELECT pg_temp.ctx('sw_tail');
-- tail items that are not contiguous: t8 lies between t7 and t9
SELECT pg_temp.ctx('sw_tail') AS before \gset
SELECT mnemo.swap_context_items('sw_tail', ARRAY['t9', 't7'], 'ts3');
SELECT pg_temp.ctx('sw_tail') = :'before' AS unchanged, pg_temp.rows('sw_tail'),
       context_tail_seq FROM mnemo.get_session('sw_tail');
-- build_context and get_context_items agree on the whole view
SELECT string_agg(item_id || '@' || position, ', ' ORDER BY position) FROM mnemo.build_context('sw_tail', 100000);
-- a condensation of rows and the last tail items: the whole view
SELECT mnemo.swap_context_items('sw_tail', ARRAY(SELECT item_id FROM mnemo.get_context_items('sw_tail')), 'ts3');
SELECT pg_temp.ctx('sw_tail');
SELECT pg_temp.rows('sw_tail');
SELECT context_tail_seq FROM mnemo.get_session('sw_tail');

-- Cancelling: the list of items to remove is sorted to find an id named
-- twice, and a sort of millions of ids takes seconds; a statement timeout
-- stops it there, not at the next statement the call runs (whose CONTEXT
-- the error would then show).
SELECT id FROM mnemo.create_session('rv_sw');
CREATE TEMP TABLE rv_sw_ids (ids text[]);
-- stored uncompressed: reading it back must not use up the timeout
ALTER TABLE rv_sw_ids ALTER ids SET STORAGE EXTERNAL;
INSERT INTO rv_sw_ids SELECT array_agg(md5(g::text)) FROM generate_series(1, 2000000) g;
\set VERBOSITY default
SET statement_timeout = '250ms';
SELECT mnemo.swap_context_items('rv_sw', ids, 'rv_sw_summary') FROM rv_sw_ids;
RESET statement_timeout;
\set VERBOSITY sqlstate
SELECT mnemo.purge_session('rv_sw');
