--
-- append_limits: the limits on what one append may store, as settings a
-- superuser sets (mnemo.max_parts_per_message, mnemo.max_part_bytes,
-- mnemo.max_messages_per_batch).  Past a limit the call fails with 54000
-- naming the limit and the value, and writes nothing; at the limit it works.
-- An application role cannot raise them.
--
\set VERBOSITY terse
SELECT id FROM mnemo.create_session('lim');
-- the defaults
SHOW mnemo.max_parts_per_message;
SHOW mnemo.max_part_bytes;
SHOW mnemo.max_messages_per_batch;

-- parts per message
SET mnemo.max_parts_per_message = 3;
SELECT seq FROM mnemo.append_message('lim', 'user',
  '[{"type":"text","text":"1"},{"type":"text","text":"2"},{"type":"text","text":"3"}]', id => 'lim_at');
SELECT mnemo.append_message('lim', 'user',
  '[{"type":"text","text":"1"},{"type":"text","text":"2"},{"type":"text","text":"3"},{"type":"text","text":"4"}]');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mnemo.append_messages('lim', '[{"role": "user", "parts": []},
  {"role": "user", "parts": [{"type":"text","text":"1"},{"type":"text","text":"2"},{"type":"text","text":"3"},{"type":"text","text":"4"}]}]');
\echo :LAST_ERROR_SQLSTATE
-- a message streamed part by part is held to the same limit
SELECT mnemo.append_part('lim', 'lim_at', '{"type":"text","text":"4"}');
\echo :LAST_ERROR_SQLSTATE
SET mnemo.max_parts_per_message = 4;
SELECT mnemo.append_part('lim', 'lim_at', '{"type":"text","text":"4"}');
SELECT mnemo.append_part('lim', 'lim_at', '{"type":"text","text":"5"}');
\echo :LAST_ERROR_SQLSTATE
RESET mnemo.max_parts_per_message;

-- bytes per part (of its stored JSON)
SET mnemo.max_part_bytes = 100;
SELECT seq FROM mnemo.append_message('lim', 'user', '[{"type":"text","text":"short"}]', id => 'lim_short');
SELECT mnemo.append_message('lim', 'user', jsonb_build_array(jsonb_build_object('type', 'text', 'text', repeat('x', 200))));
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mnemo.append_messages('lim', jsonb_build_array(jsonb_build_object('role', 'user',
  'parts', jsonb_build_array(jsonb_build_object('type', 'text', 'text', repeat('x', 200))))));
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.append_part('lim', 'lim_short', jsonb_build_object('type', 'text', 'text', repeat('x', 200)));
\echo :LAST_ERROR_SQLSTATE
RESET mnemo.max_part_bytes;

-- messages per batch
SET mnemo.max_messages_per_batch = 2;
SELECT seq FROM mnemo.append_messages('lim', '[{"role": "user", "parts": []}, {"role": "user", "parts": []}]');
SELECT * FROM mnemo.append_messages('lim', '[{"role": "user", "parts": []}, {"role": "user", "parts": []},
                                             {"role": "user", "parts": []}]');
\echo :LAST_ERROR_SQLSTATE
RESET mnemo.max_messages_per_batch;

-- nothing of the failed calls was written: seqs 1..4 are the four that passed
SELECT seq, CASE WHEN id LIKE 'msg\_%' THEN 'msg_...' ELSE id END AS id, (SELECT count(*) FROM mnemo.message_parts p WHERE p.session_id = m.session_id AND p.seq = m.seq) AS parts
  FROM mnemo.messages m WHERE session_id = 'lim' ORDER BY seq;
SELECT last_seq FROM mnemo.get_session('lim');

-- an output or error merged in by update_part_status is held to
-- max_part_bytes too: 54000, and the part keeps what it had
SELECT seq FROM mnemo.append_message('lim', 'assistant',
  '[{"type": "tool", "tool_name": "ls", "tool_call_id": "c1", "input": {}, "id": "lim_tool"}]', id => 'lim_t');
SET mnemo.max_part_bytes = 300;
SELECT mnemo.update_part_status('lim', 'lim_tool', output => repeat('o', 100));
SELECT mnemo.update_part_status('lim', 'lim_tool', error_message => repeat('e', 200));
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.update_part_status('lim', 'lim_tool', tool_state => 'error', output => repeat('p', 400));
\echo :LAST_ERROR_SQLSTATE
SELECT tool_state, length(content->>'output') AS output, content ? 'error_message' AS has_error
  FROM mnemo.message_parts WHERE session_id = 'lim' AND id = 'lim_tool';
RESET mnemo.max_part_bytes;

-- the limits are a superuser's to set
CREATE ROLE lim_app;
SET ROLE lim_app;
SET mnemo.max_parts_per_message = 1000000;
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
DROP ROLE lim_app;
SELECT mnemo.purge_session('lim');

-- Cancelling: a call that works through a large input can be cancelled
-- while it does, not only once it reaches its first statement.
-- append_messages validates every message and part of its batch before it
-- locks the session; a batch within the default limits can hold a million
-- parts (a second of validation).  A statement timeout must stop it there:
-- the error then comes from the validation, not from the session lock's
-- UPDATE, the first statement the call runs.
--
SELECT id FROM mnemo.create_session('rv_int');
CREATE TEMP TABLE rv_int_batch (messages jsonb);
-- stored uncompressed: reading it back must not use up the timeout
ALTER TABLE rv_int_batch ALTER messages SET STORAGE EXTERNAL;
INSERT INTO rv_int_batch
SELECT jsonb_agg(jsonb_build_object('role', 'user', 'parts', p.parts))
  FROM generate_series(1, 1000),
       (SELECT jsonb_agg('{"type": "patch"}'::jsonb) AS parts FROM generate_series(1, 1000)) p;
SELECT jsonb_array_length(messages) AS messages,
       jsonb_array_length(messages -> 0 -> 'parts') AS parts_each
  FROM rv_int_batch;
-- (the error's context, if any, says which statement it stopped)
\set VERBOSITY default
SET statement_timeout = '50ms';
SELECT count(*) FROM rv_int_batch b, mnemo.append_messages('rv_int', b.messages);
RESET statement_timeout;
\set VERBOSITY terse
-- nothing was written
SELECT last_seq FROM mnemo.get_session('rv_int');
SELECT mnemo.purge_session('rv_int');

-- Memory: a batch's parts are validated in a scratch context and only what
-- is stored is kept, and its INSERTs are generic-plan multi-row VALUES
-- statements of at most 128 rows, whose values exist one statement at a
-- time (a custom plan of one INSERT ... SELECT unnest($k) would fold every
-- array into itself as a constant, twice).  Measured in a fresh backend, by its peak
-- resident memory (Linux), up to the INSERT of the parts: the first part's
-- id is taken, so that statement fails at its first row (MN004) and the
-- shared buffers it would have filled do not count.  It used to hold about
-- 1,300 bytes per small part (a batch of 256 MB could take 7 GB), then
-- about 520 with the arrays of one INSERT ... SELECT, now about 360.
SELECT id FROM mnemo.create_session('rv_mem');
SELECT seq FROM mnemo.append_message('rv_mem', 'user',
  '[{"type": "text", "text": "taken", "id": "rv_mem_taken"}]');
CREATE TABLE rv_mem_batch AS
SELECT jsonb_build_array(jsonb_build_object('role', 'user',
         'parts', '[{"type": "text", "text": "x", "id": "rv_mem_taken"}]'::jsonb))
       || jsonb_agg(jsonb_build_object('role', 'user', 'parts', p.parts)) AS messages
  FROM generate_series(1, 1000),
       (SELECT jsonb_agg(jsonb_build_object('type', 'text', 'text', 'part ' || g)) AS parts
          FROM generate_series(1, 300) g) p;
\c
\set VERBOSITY terse
SELECT (regexp_match(pg_read_file('/proc/self/status'), 'VmHWM:\s+(\d+)'))[1]::bigint AS rv_hwm \gset
SELECT count(*) FROM rv_mem_batch b, mnemo.append_messages('rv_mem', b.messages);
SELECT ((regexp_match(pg_read_file('/proc/self/status'), 'VmHWM:\s+(\d+)'))[1]::bigint - :rv_hwm)
       * 1024 / 300000 < 800 AS under_800_bytes_per_part;
DROP TABLE rv_mem_batch;
SELECT mnemo.purge_session('rv_mem');
