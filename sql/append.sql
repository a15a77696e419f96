--
-- append: append_message, append_messages, append_part
--
\set VERBOSITY sqlstate
-- the parts with their message's id (a part row names its message by seq)
-- the parts with their message's id, and their id as the reads give it (a
-- part stored without one has its derived id, <message id>:<part_index>)
CREATE TEMP VIEW parts AS
  SELECT p.session_id, p.part_index, coalesce(p.id, m.id || ':' || p.part_index) AS id,
         p.part_type, p.content, p.tool_name, p.tool_call_id, p.tool_state, p.compacted_at,
         p.started_at, p.completed_at, p.token_estimate, p.tenant, p.seq,
         p.id AS stored_id, m.id AS message_id
    FROM mnemo.message_parts p
    JOIN mnemo.messages m ON m.session_id = p.session_id AND m.tenant = p.tenant AND m.seq = p.seq;

SELECT id FROM mnemo.create_session('ap', model_id => 'gpt-4o', provider_id => 'openai', agent => 'coder');
SELECT id FROM mnemo.create_session('ap_other');
-- the session row as created: an append writes no version of it
SELECT xmin AS ap_xmin, ctid AS ap_ctid FROM mnemo.sessions WHERE id = 'ap' \gset

--
-- append_message: seq starts at 1 and grows by exactly 1
--
SELECT * FROM mnemo.append_message('ap', 'user', '[{"type": "text", "text": "hello"}]', id => 'ap_m1');
-- a NULL id makes a msg_ id
SELECT id ~ '^msg_[0-9A-HJKMNP-TV-Z]{26}$' AS generated, seq
  FROM mnemo.append_message('ap', 'assistant', '[]');
SELECT * FROM mnemo.append_message('ap', 'system', '[{"type": "text", "text": "be brief"}]', id => 'ap_m3');
SELECT * FROM mnemo.append_message('ap', 'tool', '[{"type": "text", "text": "ok"}]', id => 'ap_m4');
-- agent, model and provider default to the session's; given ones win
SELECT * FROM mnemo.append_message('ap', 'assistant', '[]', id => 'ap_m5', agent => 'planner',
                                   model_id => 'o3', provider_id => 'azure', run_id => 'run_1');
-- another session has its own seqs
SELECT * FROM mnemo.append_message('ap_other', 'user', '[]', id => 'ap_o1');

SELECT seq, CASE WHEN id LIKE 'msg\_%' THEN 'msg_*' ELSE id END AS id, role, agent, model_id,
       provider_id, run_id, is_summary, tokens_input, tokens_output, cost, finish_reason,
       abs(created_at - extract(epoch FROM clock_timestamp()) * 1000) < 60000 AS created_now
  FROM mnemo.get_messages('ap') ORDER BY seq;
SELECT last_seq FROM mnemo.get_session('ap');
-- five appends later the session row is the one create_session wrote: the
-- seqs came from the messages' key, under a lock that writes nothing
SELECT xmin = :'ap_xmin' AND ctid = :'ap_ctid' AS session_row_unwritten
  FROM mnemo.sessions WHERE id = 'ap';
-- and get_session's updated_at is the newest message's time
SELECT (SELECT updated_at FROM mnemo.get_session('ap')) =
       (SELECT created_at FROM mnemo.messages WHERE session_id = 'ap' ORDER BY seq DESC LIMIT 1)
       AS updated_at_is_newest_message;

-- every non-summary message joins the end of the context view
SELECT item_type, CASE WHEN item_id LIKE 'msg\_%' THEN 'msg_*' ELSE item_id END AS item_id, position
  FROM mnemo.get_context_items('ap');

--
-- parts: every type, stored in order, content exactly as given
--
SELECT * FROM mnemo.append_message('ap', 'assistant', '[
  {"type": "text", "id": "ap_p0", "text": "hello world!"},
  {"type": "reasoning", "id": "ap_p1", "text": "think think think"},
  {"type": "tool", "id": "ap_p2", "tool_name": "ls", "tool_call_id": "call_1", "input": {"path": "/tmp"}},
  {"type": "tool", "id": "ap_p3", "tool_name": "cat", "tool_call_id": "call_2", "tool_state": "completed",
   "input": {}, "output": "x", "token_estimate": 42},
  {"type": "file_ref", "id": "ap_p4", "content_id": "sha256:abc", "path": "/tmp/a.py",
   "file_type": "python", "summary": "a module"},
  {"type": "text", "id": "ap_p5", "text": "given zero", "token_estimate": 0},
  {"type": "compaction_marker", "id": "ap_p6"},
  {"type": "step_start", "id": "ap_p7"},
  {"type": "step_finish", "id": "ap_p8", "reason": "stop"},
  {"type": "patch", "id": "ap_p9", "text": "diff"},
  {"type": "text", "text": "no id"}
]', id => 'ap_m6');
SELECT part_index, id, part_type,
       tool_name, tool_call_id, tool_state, compacted_at, started_at, completed_at
  FROM parts WHERE message_id = 'ap_m6' ORDER BY part_index;
SELECT part_index, content FROM parts WHERE message_id = 'ap_m6' ORDER BY part_index;
-- a part appended without an id: its id is derived from its place, and
-- stored as NULL
SELECT id, stored_id IS NULL AS not_stored
  FROM parts WHERE message_id = 'ap_m6' AND part_index = 10;
-- token_estimate: given ones are kept; text and reasoning are estimate_tokens
-- of the text; tool and file_ref parts get an estimate of their rendering;
-- a free-form part without text renders as nothing
SELECT part_index, part_type, token_estimate,
       token_estimate = mnemo.estimate_tokens(content->>'text') AS is_text_estimate
  FROM parts WHERE message_id = 'ap_m6' AND part_index NOT IN (2, 4) ORDER BY part_index;
SELECT part_index, part_type, token_estimate > 0 AS has_estimate
  FROM parts WHERE message_id = 'ap_m6' AND part_index IN (2, 4) ORDER BY part_index;
-- the multibyte estimate counts characters
SELECT seq FROM mnemo.append_message('ap', 'user', '[{"type": "text", "id": "ap_mb", "text": "éééééééé"}]', id => 'ap_m7');
SELECT token_estimate FROM mnemo.message_parts WHERE id = 'ap_mb';
-- token_estimate bounds: 0 and 2^31-1; integral numbers written as 1e2 and
-- 22.0 are 100 and 22
SELECT seq FROM mnemo.append_message('ap', 'user',
  '[{"type": "text", "id": "ap_te1", "text": "a", "token_estimate": 2147483647},
    {"type": "text", "id": "ap_te2", "text": "a", "token_estimate": 1e2},
    {"type": "text", "id": "ap_te3", "text": "a", "token_estimate": 22.0}]', id => 'ap_m8');
SELECT id, token_estimate FROM parts WHERE message_id = 'ap_m8' ORDER BY part_index;

--
-- summary messages get no context item; a NULL id makes a sum_ id
--
SELECT * FROM mnemo.append_message('ap', 'assistant', '[{"type": "text", "text": "summary"}]',
                                   id => 'ap_s1', is_summary => true);
SELECT id ~ '^sum_[0-9A-HJKMNP-TV-Z]{26}$' AS generated, seq
  FROM mnemo.append_message('ap', 'assistant', '[]', is_summary => true);
SELECT * FROM mnemo.append_message('ap', 'user', '[]', id => 'ap_m11');
-- is_summary NULL is false
SELECT * FROM mnemo.append_message('ap', 'user', '[]', id => 'ap_m12', is_summary => NULL);
SELECT seq, id, is_summary FROM mnemo.messages WHERE session_id = 'ap' AND seq >= 8 AND id NOT LIKE 'sum\_%' ORDER BY seq;
-- positions stay dense: the summaries took seqs 9 and 10 but no positions
SELECT item_type, item_id, position FROM mnemo.get_context_items('ap') WHERE position >= 6;
SELECT last_seq FROM mnemo.get_session('ap');

--
-- errors; none of them writes anything or uses up a seq
--
-- duplicate message id in the same session: MN004; ids are unique within
-- their session only, so another session may use the same one
SELECT mnemo.append_message('ap', 'user', '[]', id => 'ap_m1');
SELECT mnemo.append_message('ap_other', 'user', '[]', id => 'ap_m1');
-- duplicate part id, taken by another message: MN004, and the message row is not left behind
SELECT mnemo.append_message('ap', 'user', '[{"type": "text", "id": "ap_p0", "text": "again"}]', id => 'ap_dup1');
SELECT count(*) FROM mnemo.messages WHERE id = 'ap_dup1';
-- ... or twice in the same call: no message, no first part
SELECT mnemo.append_message('ap', 'user',
  '[{"type": "text", "id": "ap_twice", "text": "a"}, {"type": "text", "id": "ap_twice", "text": "b"}]',
  id => 'ap_dup2');
SELECT (SELECT count(*) FROM mnemo.messages WHERE id = 'ap_dup2') AS messages,
       (SELECT count(*) FROM mnemo.message_parts p WHERE p.session_id = 'ap' AND (p.id = 'ap_twice'
          OR NOT EXISTS (SELECT FROM mnemo.messages m WHERE m.session_id = p.session_id AND m.seq = p.seq))) AS parts,
       (SELECT count(*) FROM mnemo.context_items WHERE item_id = 'ap_dup2') AS context_items;
-- unknown session: MN001
SELECT mnemo.append_message('no_such_session', 'user', '[]');
-- unknown role: 22023
SELECT mnemo.append_message('ap', 'robot', '[]');
SELECT mnemo.append_message('ap', 'User', '[]');
SELECT mnemo.append_message('ap', '', '[]');
-- parts not an array: 22023
SELECT mnemo.append_message('ap', 'user', '{}');
SELECT mnemo.append_message('ap', 'user', '{"type": "text", "text": "x"}');
SELECT mnemo.append_message('ap', 'user', '"text"');
SELECT mnemo.append_message('ap', 'user', '1');
SELECT mnemo.append_message('ap', 'user', 'null');
-- a part that is not an object: 22023
SELECT mnemo.append_message('ap', 'user', '[1]');
SELECT mnemo.append_message('ap', 'user', '["text"]');
SELECT mnemo.append_message('ap', 'user', '[[]]');
SELECT mnemo.append_message('ap', 'user', '[null]');
SELECT mnemo.append_message('ap', 'user', '[{"type": "text", "text": "fine"}, 2]');
-- unknown or missing part type: 22023
SELECT mnemo.append_message('ap', 'user', '[{"type": "image"}]');
SELECT mnemo.append_message('ap', 'user', '[{"type": "TEXT", "text": "x"}]');
SELECT mnemo.append_message('ap', 'user', '[{"text": "x"}]');
SELECT mnemo.append_message('ap', 'user', '[{"type": null, "text": "x"}]');
SELECT mnemo.append_message('ap', 'user', '[{"type": 1}]');
-- missing or mistyped required fields: 22023
SELECT mnemo.append_message('ap', 'user', '[{"type": "text"}]');
SELECT mnemo.append_message('ap', 'user', '[{"type": "text", "text": 5}]');
SELECT mnemo.append_message('ap', 'user', '[{"type": "reasoning"}]');
SELECT mnemo.append_message('ap', 'assistant', '[{"type": "tool", "tool_call_id": "c"}]');
SELECT mnemo.append_message('ap', 'assistant', '[{"type": "tool", "tool_name": "ls"}]');
SELECT mnemo.append_message('ap', 'assistant', '[{"type": "tool", "tool_name": 1, "tool_call_id": "c"}]');
SELECT mnemo.append_message('ap', 'assistant', '[{"type": "tool", "tool_name": "ls", "tool_call_id": "c", "input": [1]}]');
SELECT mnemo.append_message('ap', 'assistant', '[{"type": "tool", "tool_name": "ls", "tool_call_id": "c", "error_message": {}}]');
SELECT mnemo.append_message('ap', 'user', '[{"type": "file_ref", "content_id": "sha256:abc"}]');
SELECT mnemo.append_message('ap', 'user', '[{"type": "file_ref", "path": "/tmp/a.py"}]');
SELECT mnemo.append_message('ap', 'user', '[{"type": "file_ref", "content_id": "c", "path": "p", "summary": 1}]');
-- bad tool_state: 22023
SELECT mnemo.append_message('ap', 'assistant', '[{"type": "tool", "tool_name": "ls", "tool_call_id": "c", "tool_state": "done"}]');
SELECT mnemo.append_message('ap', 'assistant', '[{"type": "tool", "tool_name": "ls", "tool_call_id": "c", "tool_state": 1}]');
-- bad token_estimate: negative, fractional, a string, a boolean, too big: 22023
SELECT mnemo.append_message('ap', 'user', '[{"type": "text", "text": "x", "token_estimate": -1}]');
SELECT mnemo.append_message('ap', 'user', '[{"type": "text", "text": "x", "token_estimate": 1.5}]');
SELECT mnemo.append_message('ap', 'user', '[{"type": "text", "text": "x", "token_estimate": "5"}]');
SELECT mnemo.append_message('ap', 'user', '[{"type": "text", "text": "x", "token_estimate": true}]');
SELECT mnemo.append_message('ap', 'user', '[{"type": "text", "text": "x", "token_estimate": 2147483648}]');
-- bad ids: empty or over 256 bytes, 22023; a part id that is not a string, 22023
SELECT mnemo.append_message('ap', 'user', '[]', id => '');
SELECT mnemo.append_message('ap', 'user', '[]', id => repeat('m', 257));
SELECT mnemo.append_message('ap', 'user', '[{"type": "text", "id": "", "text": "x"}]');
SELECT mnemo.append_message('ap', 'user', '[{"type": "text", "id": 7, "text": "x"}]');
-- NULL required arguments: 22004
SELECT mnemo.append_message(NULL, 'user', '[]');
SELECT mnemo.append_message('ap', NULL, '[]');
SELECT mnemo.append_message('ap', 'user', NULL);
-- text that is not JSON: 22P02
SELECT mnemo.append_message('ap', 'user', '[{"type": "text", "text": "x"');
SELECT mnemo.append_message('ap', 'user', 'not json');
-- nothing was written: the seqs, positions and rows are as before
SELECT last_seq FROM mnemo.get_session('ap');
SELECT count(*) AS messages, max(seq) AS max_seq FROM mnemo.messages WHERE session_id = 'ap';
SELECT count(*) AS context_items FROM mnemo.get_context_items('ap');
SELECT * FROM mnemo.append_message('ap', 'user', '[]', id => 'ap_m13');

--
-- a multi-megabyte part stores and reads back whole
--
SELECT id FROM mnemo.create_session('ap_big');
SELECT * FROM mnemo.append_message('ap_big', 'user',
  jsonb_build_array(jsonb_build_object('type', 'text', 'id', 'ap_big_p', 'text', repeat('x', 5000000))),
  id => 'ap_big_m');
SELECT part_index, length(content->>'text') AS length, token_estimate,
       content->>'text' = repeat('x', 5000000) AS unchanged
  FROM mnemo.get_parts('ap_big', 'ap_big_m');
SELECT seq, length(parts->0->>'text') AS length FROM mnemo.get_messages_with_parts('ap_big');
-- multibyte: 3,000,000 characters, 6,000,000 bytes
SELECT seq FROM mnemo.append_message('ap_big', 'user',
  jsonb_build_array(jsonb_build_object('type', 'text', 'id', 'ap_big_p2', 'text', repeat('é', 3000000))),
  id => 'ap_big_m2');
SELECT length(content->>'text') AS chars, octet_length(content->>'text') AS bytes, token_estimate
  FROM mnemo.get_parts('ap_big', 'ap_big_m2');

--
-- append_messages: a batch at consecutive seqs, atomically
--
SELECT id FROM mnemo.create_session('ab', agent => 'coder');
SELECT * FROM mnemo.append_message('ab', 'user', '[{"type": "text", "text": "first"}]', id => 'ab_0');
SELECT CASE WHEN id LIKE 'msg\_%' THEN 'msg_*' ELSE id END AS id, seq
  FROM mnemo.append_messages('ab', '[
  {"id": "ab_1", "role": "user", "parts": [{"type": "text", "id": "ab_1_p0", "text": "q1"}]},
  {"id": "ab_2", "role": "assistant", "agent": "planner", "model_id": "o3", "provider_id": "azure",
   "run_id": "run_9", "parts": [{"type": "tool", "id": "ab_2_p0", "tool_name": "ls", "tool_call_id": "c1"},
                                {"type": "text", "id": "ab_2_p1", "text": "done"}]},
  {"role": "user", "parts": []}
]');
SELECT seq, CASE WHEN id LIKE 'msg\_%' THEN 'msg_*' ELSE id END AS id, role, agent, model_id,
       provider_id, run_id, is_summary
  FROM mnemo.messages WHERE session_id = 'ab' ORDER BY seq;
SELECT message_id, part_index, id, part_type
  FROM parts WHERE session_id = 'ab' ORDER BY message_id, part_index;
-- a summary in a batch gets a seq but no context item
SELECT * FROM mnemo.append_messages('ab', '[
  {"id": "ab_4", "role": "user", "parts": []},
  {"id": "ab_s", "role": "assistant", "is_summary": true, "parts": [{"type": "text", "text": "s"}]},
  {"id": "ab_6", "role": "assistant", "is_summary": false, "parts": []}
]');
SELECT item_type, CASE WHEN item_id LIKE 'msg\_%' THEN 'msg_*' ELSE item_id END AS item_id, position
  FROM mnemo.get_context_items('ab');
-- an empty batch returns nothing and uses no seq
SELECT count(*) FROM mnemo.append_messages('ab', '[]');
SELECT last_seq FROM mnemo.get_session('ab');
-- atomic: one bad message anywhere in the batch, and none of it is stored
SELECT * FROM mnemo.append_messages('ab', '[
  {"id": "ab_x1", "role": "user", "parts": []},
  {"id": "ab_x2", "role": "robot", "parts": []}
]');
SELECT * FROM mnemo.append_messages('ab', '[
  {"id": "ab_x1", "role": "user", "parts": [{"type": "text", "text": "ok"}]},
  {"id": "ab_x2", "role": "user", "parts": [{"type": "text"}]}
]');
-- ... also when it fails while writing: a duplicate message id
SELECT * FROM mnemo.append_messages('ab', '[
  {"id": "ab_x1", "role": "user", "parts": [{"type": "text", "id": "ab_x1_p", "text": "ok"}]},
  {"id": "ab_x2", "role": "user", "parts": []},
  {"id": "ab_x1", "role": "user", "parts": []}
]');
SELECT * FROM mnemo.append_messages('ab', '[
  {"id": "ab_x1", "role": "user", "parts": [{"type": "text", "id": "ab_x1_p", "text": "ok"}]},
  {"id": "ab_1", "role": "user", "parts": []}
]');
-- ... a duplicate part id
SELECT * FROM mnemo.append_messages('ab', '[
  {"id": "ab_x1", "role": "user", "parts": [{"type": "text", "id": "ab_x1_p", "text": "ok"}]},
  {"id": "ab_x2", "role": "user", "parts": [{"type": "text", "id": "ab_1_p0", "text": "taken"}]}
]');
-- shape errors: 22023
SELECT * FROM mnemo.append_messages('ab', '{}');
SELECT * FROM mnemo.append_messages('ab', '{"role": "user", "parts": []}');
SELECT * FROM mnemo.append_messages('ab', '"x"');
SELECT * FROM mnemo.append_messages('ab', '[1]');
SELECT * FROM mnemo.append_messages('ab', '[{"role": "user", "parts": []}, []]');
SELECT * FROM mnemo.append_messages('ab', '[{"parts": []}]');
SELECT * FROM mnemo.append_messages('ab', '[{"role": "user"}]');
SELECT * FROM mnemo.append_messages('ab', '[{"role": "user", "parts": {}}]');
SELECT * FROM mnemo.append_messages('ab', '[{"role": "user", "parts": null}]');
SELECT * FROM mnemo.append_messages('ab', '[{"role": "user", "parts": [], "is_summary": "yes"}]');
SELECT * FROM mnemo.append_messages('ab', '[{"role": "user", "parts": [], "id": 5}]');
-- unknown session MN001; NULLs 22004; not JSON 22P02
SELECT * FROM mnemo.append_messages('no_such_session', '[{"role": "user", "parts": []}]');
SELECT * FROM mnemo.append_messages(NULL, '[]');
SELECT * FROM mnemo.append_messages('ab', NULL);
SELECT * FROM mnemo.append_messages('ab', '[{"role": "user", "parts": [');
-- none of the failed batches left anything
SELECT (SELECT count(*) FROM mnemo.messages WHERE id LIKE 'ab\_x%') AS messages,
       (SELECT count(*) FROM mnemo.message_parts p WHERE p.session_id = 'ab' AND (p.id = 'ab_x1_p'
          OR NOT EXISTS (SELECT FROM mnemo.messages m WHERE m.session_id = p.session_id AND m.seq = p.seq))) AS parts,
       (SELECT count(*) FROM mnemo.context_items WHERE item_id LIKE 'ab\_x%') AS context_items;
SELECT last_seq FROM mnemo.get_session('ab');
SELECT * FROM mnemo.append_messages('ab', '[{"id": "ab_7", "role": "user", "parts": []}]');

--
-- append_part: the next part_index of the message, dense from its existing parts
--
SELECT mnemo.append_part('ab', 'ab_2', '{"type": "text", "id": "ab_2_p2", "text": "more"}');
SELECT mnemo.append_part('ab', 'ab_2', '{"type": "reasoning", "text": "hmm"}');
SELECT mnemo.append_part('ab', 'ab_2', '{"type": "tool", "id": "ab_2_p4", "tool_name": "cat", "tool_call_id": "c2"}');
SELECT part_index, id, part_type,
       tool_state, token_estimate
  FROM mnemo.get_parts('ab', 'ab_2');
-- a message without parts starts at 0 (its row, without a part until then,
-- takes it), after a first part whose id is taken, which leaves it without
-- one; a summary message takes parts too
SELECT mnemo.append_part('ab', 'ab_4', '{"type": "text", "id": "ab_2_p2", "text": "taken"}');
SELECT mnemo.append_part('ab', 'ab_4', '{"type": "text", "id": "ab_4_p0", "text": "streamed"}');
SELECT mnemo.append_part('ab', 'ab_4', '{"type": "text", "id": "ab_4_p1", "text": "tokens", "token_estimate": 9}');
SELECT mnemo.append_part('ab', 'ab_s', '{"type": "compaction_marker", "id": "ab_s_p1"}');
SELECT message_id, part_index, id, token_estimate
  FROM parts WHERE message_id IN ('ab_4', 'ab_s') ORDER BY message_id, part_index;
-- appending parts does not touch seqs or the context view
SELECT last_seq FROM mnemo.get_session('ab');
-- errors: unknown message MN002, duplicate part id MN004, bad part 22023,
-- NULLs 22004, not JSON 22P02; none leaves a row or a gap in part_index
SELECT mnemo.append_part('ab', 'no_such_message', '{"type": "text", "text": "x"}');
SELECT mnemo.append_part('ab', 'ab_2', '{"type": "text", "id": "ab_1_p0", "text": "taken"}');
SELECT mnemo.append_part('ab', 'ab_2', '[{"type": "text", "text": "x"}]');
SELECT mnemo.append_part('ab', 'ab_2', '"x"');
SELECT mnemo.append_part('ab', 'ab_2', '{"type": "image"}');
SELECT mnemo.append_part('ab', 'ab_2', '{"type": "tool", "tool_name": "ls", "tool_call_id": "c", "tool_state": "done"}');
SELECT mnemo.append_part(NULL, NULL, '{"type": "text", "text": "x"}');
SELECT mnemo.append_part('ab', 'ab_2', NULL);
SELECT mnemo.append_part('ab', 'ab_2', '{"type": "text", "text": ');
SELECT mnemo.append_part('ab', 'ab_2', '{"type": "text", "id": "ab_2_p5", "text": "next"}');
SELECT count(*), max(part_index) FROM parts WHERE message_id = 'ab_2';

-- a large batch without ids: every message gets a generated id and a seq
SELECT id FROM mnemo.create_session('ap_batch');
SELECT count(*) AS stored, count(DISTINCT id) AS distinct_ids, bool_and(id LIKE 'msg\_%') AS generated,
       min(seq) AS first_seq, max(seq) AS last_seq
  FROM mnemo.append_messages('ap_batch',
       (SELECT jsonb_agg(jsonb_build_object('role', 'user', 'parts',
                 jsonb_build_array(jsonb_build_object('type', 'text', 'text', 'batch ' || g))))
          FROM generate_series(1, 300) g));

-- A time given is kept as given, the epoch (0) included: an import restores
-- a transcript's times exactly.  0 used to be taken for "now" by
-- append_messages and by the summary message of commit_summary (whose
-- node kept the 0).
SELECT id FROM mnemo.create_session('rv_time');
SELECT seq FROM mnemo.append_messages('rv_time',
  '[{"role": "user", "parts": [], "id": "rv_time_a", "created_at": 0},
    {"role": "user", "parts": [], "id": "rv_time_b", "created_at": 1}]');
SELECT mnemo.commit_summary('rv_time', 'rv_time_s', 'summary', 1,
                            ARRAY['rv_time_a', 'rv_time_b'], created_at => 0);
SELECT seq, id, created_at FROM mnemo.messages WHERE session_id = 'rv_time' ORDER BY seq;
SELECT id, created_at FROM mnemo.summary_nodes WHERE session_id = 'rv_time';
-- without a time, the summary's message and node are stamped with one now
SELECT seq FROM mnemo.append_messages('rv_time',
  '[{"role": "user", "parts": [], "id": "rv_time_c"},
    {"role": "user", "parts": [], "id": "rv_time_d"}]');
SELECT mnemo.commit_summary('rv_time', 'rv_time_t', 'summary', 1, ARRAY['rv_time_c', 'rv_time_d']);
SELECT m.created_at = n.created_at AS same_time,
       abs(m.created_at - extract(epoch FROM clock_timestamp()) * 1000) < 60000 AS created_now
  FROM mnemo.messages m JOIN mnemo.summary_nodes n ON n.session_id = m.session_id AND n.id = m.id
 WHERE m.session_id = 'rv_time' AND m.id = 'rv_time_t';
SELECT mnemo.purge_session('rv_time');
