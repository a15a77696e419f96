--
-- guard: append-only by privileges
--
-- An application role holds the documented grants (USAGE on the schema,
-- SELECT on the tables, EXECUTE on the functions) and nothing else, so every
-- direct INSERT, UPDATE, DELETE, TRUNCATE, COPY FROM and LOCK stronger than
-- ACCESS SHARE fails with 42501 and changes nothing, while mnemo's functions
-- write for it with the extension owner's rights.  The log is mnemo.log;
-- its views mnemo.messages and mnemo.message_parts refuse writes as well.
--
\set VERBOSITY terse

CREATE ROLE gd_app;
GRANT USAGE ON SCHEMA mnemo TO gd_app;
GRANT SELECT ON ALL TABLES IN SCHEMA mnemo TO gd_app;
SET ROLE gd_app;

SELECT id FROM mnemo.create_session('gd');
SELECT seq FROM mnemo.append_message('gd', 'user', '[{"type": "text", "id": "gd_p1", "text": "hi"}]', id => 'gd_m1');
SELECT seq FROM mnemo.append_message('gd', 'assistant',
  '[{"type": "tool", "id": "gd_p2", "tool_name": "ls", "tool_call_id": "c1", "output": "a.txt"}]', id => 'gd_m2');
SELECT seq FROM mnemo.append_message('gd', 'assistant', '[{"type": "text", "text": "sum"}]', id => 'gd_s1', is_summary => true);
SELECT content_id FROM mnemo.store_file_reference('sha256:gd', '/gd.txt');

-- a fingerprint of every row the guard protects in this test
CREATE FUNCTION pg_temp.fingerprint() RETURNS text LANGUAGE sql AS $$
  SELECT md5(concat_ws('|',
    (SELECT string_agg(s::text, ',' ORDER BY id) FROM mnemo.sessions s WHERE id LIKE 'gd%'),
    (SELECT string_agg(m::text, ',' ORDER BY seq) FROM mnemo.messages m WHERE session_id = 'gd'),
    (SELECT string_agg(p::text, ',' ORDER BY seq, part_index) FROM mnemo.message_parts p WHERE session_id = 'gd'),
    (SELECT string_agg(c::text, ',' ORDER BY position) FROM mnemo.context_items c WHERE session_id = 'gd'),
    (SELECT count(*)::text FROM mnemo.summary_nodes),
    (SELECT string_agg(f::text, ',' ORDER BY content_id) FROM mnemo.file_references f)))
$$;
SELECT pg_temp.fingerprint() AS before \gset

--
-- INSERT
--
INSERT INTO mnemo.sessions (id, created_at, updated_at) VALUES ('gd_x', 0, 0);
\echo :LAST_ERROR_SQLSTATE
INSERT INTO mnemo.log (session_id, seq, id, role, created_at) VALUES ('gd', 4, 'gd_x', 'user', 0);
\echo :LAST_ERROR_SQLSTATE
INSERT INTO mnemo.log (session_id, seq, part_index, part_id, part_type, content)
  VALUES ('gd', 1, 1, 'gd_x', 'text', '{"type": "text", "text": "forged"}');
\echo :LAST_ERROR_SQLSTATE
INSERT INTO mnemo.context_items (session_id, position, item_type, item_id, created_at)
  VALUES ('gd', 9, 'summary', 'gd_s1', 0);
\echo :LAST_ERROR_SQLSTATE
INSERT INTO mnemo.summary_nodes (session_id, id, kind, level, seq_start, seq_end, created_at)
  VALUES ('gd', 'gd_s1', 'leaf', 1, 1, 1, 0);
\echo :LAST_ERROR_SQLSTATE
INSERT INTO mnemo.file_references (content_id, path, created_at) VALUES ('sha256:x', '/x', 0);
\echo :LAST_ERROR_SQLSTATE
-- INSERT ... SELECT and COPY are INSERTs too
INSERT INTO mnemo.log (session_id, seq, id, role, created_at)
  SELECT session_id, seq + 100, id || '_copy', role, created_at FROM mnemo.messages WHERE session_id = 'gd';
\echo :LAST_ERROR_SQLSTATE
\copy mnemo.file_references (content_id, path, created_at) from '/dev/null'
\echo :LAST_ERROR_SQLSTATE

--
-- DELETE
--
DELETE FROM mnemo.sessions WHERE id = 'gd';
\echo :LAST_ERROR_SQLSTATE
DELETE FROM mnemo.log WHERE session_id = 'gd';
\echo :LAST_ERROR_SQLSTATE
DELETE FROM mnemo.log WHERE part_id = 'gd_p2';
\echo :LAST_ERROR_SQLSTATE
DELETE FROM mnemo.context_items WHERE session_id = 'gd';
\echo :LAST_ERROR_SQLSTATE
DELETE FROM mnemo.file_references WHERE content_id = 'sha256:gd';
\echo :LAST_ERROR_SQLSTATE
DELETE FROM mnemo.summary_nodes;
\echo :LAST_ERROR_SQLSTATE

--
-- TRUNCATE
--
TRUNCATE mnemo.sessions;
\echo :LAST_ERROR_SQLSTATE
TRUNCATE mnemo.log;
\echo :LAST_ERROR_SQLSTATE
TRUNCATE mnemo.context_items;
\echo :LAST_ERROR_SQLSTATE
TRUNCATE mnemo.summary_nodes;
\echo :LAST_ERROR_SQLSTATE
TRUNCATE mnemo.file_references;
\echo :LAST_ERROR_SQLSTATE
TRUNCATE mnemo.log, mnemo.context_items;
\echo :LAST_ERROR_SQLSTATE

--
-- UPDATE of an immutable column: MN005 naming the table and the column
--
UPDATE mnemo.log SET content = '{}';
\echo :LAST_ERROR_SQLSTATE
UPDATE mnemo.log SET content = content || '{"output": "forged"}' WHERE part_id = 'gd_p2';
\echo :LAST_ERROR_SQLSTATE
UPDATE mnemo.log SET part_type = 'reasoning' WHERE part_id = 'gd_p1';
\echo :LAST_ERROR_SQLSTATE
UPDATE mnemo.log SET part_index = 7 WHERE part_id = 'gd_p1';
\echo :LAST_ERROR_SQLSTATE
UPDATE mnemo.log SET tool_name = 'rm' WHERE part_id = 'gd_p2';
\echo :LAST_ERROR_SQLSTATE
UPDATE mnemo.log SET token_estimate = 0 WHERE part_id = 'gd_p1';
\echo :LAST_ERROR_SQLSTATE
UPDATE mnemo.log SET role = 'user' WHERE id = 'gd_m2';
\echo :LAST_ERROR_SQLSTATE
UPDATE mnemo.log SET seq = seq + 10 WHERE session_id = 'gd';
\echo :LAST_ERROR_SQLSTATE
UPDATE mnemo.log SET id = 'gd_renamed' WHERE id = 'gd_m1';
\echo :LAST_ERROR_SQLSTATE
UPDATE mnemo.log SET is_summary = true WHERE id = 'gd_m1';
\echo :LAST_ERROR_SQLSTATE
UPDATE mnemo.log SET session_id = 'ses_a' WHERE id = 'gd_m1';
\echo :LAST_ERROR_SQLSTATE
UPDATE mnemo.log SET created_at = 0 WHERE id = 'gd_m1';
\echo :LAST_ERROR_SQLSTATE
UPDATE mnemo.sessions SET context_tail_seq = 100 WHERE id = 'gd';
\echo :LAST_ERROR_SQLSTATE
UPDATE mnemo.sessions SET discards = 100 WHERE id = 'gd';
\echo :LAST_ERROR_SQLSTATE
UPDATE mnemo.sessions SET id = 'gd2' WHERE id = 'gd';
\echo :LAST_ERROR_SQLSTATE
UPDATE mnemo.sessions SET parent_id = 'ses_a' WHERE id = 'gd';
\echo :LAST_ERROR_SQLSTATE
UPDATE mnemo.context_items SET position = position + 100 WHERE session_id = 'gd';
\echo :LAST_ERROR_SQLSTATE
UPDATE mnemo.context_items SET item_id = 'gd_s1' WHERE item_id = 'gd_m1';
\echo :LAST_ERROR_SQLSTATE
UPDATE mnemo.file_references SET path = '/elsewhere' WHERE content_id = 'sha256:gd';
\echo :LAST_ERROR_SQLSTATE
-- a statement that would change an immutable and a status column fails as a whole
UPDATE mnemo.log SET finish_reason = 'stop', role = 'system' WHERE id = 'gd_m2';
\echo :LAST_ERROR_SQLSTATE
-- inside a function or DO block it is the same
DO $$ BEGIN DELETE FROM mnemo.log WHERE id = 'gd_m1'; END $$;
\echo :LAST_ERROR_SQLSTATE
DO $$ BEGIN UPDATE mnemo.log SET content = '{}' WHERE part_id = 'gd_p1'; END $$;
\echo :LAST_ERROR_SQLSTATE

-- the views of the log refuse writes as the log does
INSERT INTO mnemo.messages (session_id, seq, id, role, created_at) VALUES ('gd', 4, 'gd_x', 'user', 0);
\echo :LAST_ERROR_SQLSTATE
UPDATE mnemo.message_parts SET content = '{}' WHERE id = 'gd_p1';
\echo :LAST_ERROR_SQLSTATE
DELETE FROM mnemo.messages WHERE session_id = 'gd';
\echo :LAST_ERROR_SQLSTATE

-- none of it changed anything
SELECT pg_temp.fingerprint() = :'before' AS unchanged;
SELECT (SELECT count(*) FROM mnemo.messages WHERE session_id = 'gd') AS messages,
       (SELECT count(*) FROM mnemo.message_parts WHERE session_id = 'gd') AS parts,
       (SELECT count(*) FROM mnemo.context_items WHERE session_id = 'gd') AS context_items,
       (SELECT count(*) FROM mnemo.file_references WHERE content_id IN ('sha256:x', 'sha256:copied')) AS forged_files;
SELECT part_index, content FROM mnemo.get_parts('gd', 'gd_m2');

--
-- status columns are not writable directly either: they change through
-- update_part_status, update_message_tokens and tombstone_part
--
UPDATE mnemo.log SET finish_reason = 'length', tokens_input = 3, cost = 0.5 WHERE id = 'gd_m2';
\echo :LAST_ERROR_SQLSTATE
UPDATE mnemo.log SET tool_state = 'completed', completed_at = 1736000000000 WHERE part_id = 'gd_p2';
\echo :LAST_ERROR_SQLSTATE
UPDATE mnemo.log SET compacted_at = 1000 WHERE part_id = 'gd_p2';
\echo :LAST_ERROR_SQLSTATE
UPDATE mnemo.sessions SET title = 'renamed', system_prompt = 'evil', is_active = false WHERE id = 'gd';
\echo :LAST_ERROR_SQLSTATE
UPDATE mnemo.sessions SET metadata = '{}' WHERE id = 'gd';
\echo :LAST_ERROR_SQLSTATE
SELECT finish_reason, tokens_input, cost FROM mnemo.get_message('gd', 'gd_m2');
SELECT title, system_prompt, is_active FROM mnemo.get_session('gd');

--
-- locks: ACCESS SHARE (what SELECT takes) only
--
BEGIN;
LOCK TABLE mnemo.log IN ACCESS EXCLUSIVE MODE;
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
BEGIN;
LOCK TABLE mnemo.sessions IN EXCLUSIVE MODE;
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
BEGIN;
LOCK TABLE mnemo.log IN ROW EXCLUSIVE MODE;
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
BEGIN;
LOCK TABLE mnemo.log IN ACCESS SHARE MODE;
SELECT 'locked' AS access_share;
ROLLBACK;

--
-- mnemo's own functions still write for the role, also right after one of
-- them failed, and a failed one leaves nothing
--
SELECT seq FROM mnemo.append_message('gd', 'user', '[{"type": "text", "text": "ok"}]', id => 'gd_m4');
DELETE FROM mnemo.log WHERE id = 'gd_m4';
\echo :LAST_ERROR_SQLSTATE
SELECT seq FROM mnemo.append_message('gd', 'user', '[{"type": "text", "id": "gd_p1", "text": "dup"}]');
\echo :LAST_ERROR_SQLSTATE
DELETE FROM mnemo.log WHERE id = 'gd_m4';
\echo :LAST_ERROR_SQLSTATE
-- in one transaction with a write of mnemo's: the function's rights end with it
BEGIN;
SELECT seq FROM mnemo.append_message('gd', 'user', '[]', id => 'gd_m5');
UPDATE mnemo.log SET role = 'system' WHERE id = 'gd_m5';
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
SELECT count(*) FROM mnemo.messages WHERE id = 'gd_m5';
SELECT current_user AS still;

RESET ROLE;
SELECT purge_done FROM (SELECT mnemo.purge_session('gd') AS purge_done) p;
DROP OWNED BY gd_app;
DROP ROLE gd_app;
