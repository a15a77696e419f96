--
-- insert_direct: an append's rows meet the tables as an INSERT's would
-- (src/core/insert_direct.c writes them without SQL where nothing can tell):
-- every index holds every row it should, partial indexes included; the
-- columns an append leaves out get their defaults, as the table says now;
-- an operator's CHECK refuses a row, and nothing of the call is left; an
-- operator's trigger sees every row.  And a part's content of 256 bytes or
-- more in a row PostgreSQL would not compress is stored compressed, by lz4
-- or the column's method, and reads back as given.
--
\set VERBOSITY sqlstate
CREATE EXTENSION IF NOT EXISTS amcheck;

SELECT id FROM mnemo.create_session('di');
SELECT count(*) FROM mnemo.append_messages('di', '[
  {"role": "user", "parts": [{"type": "text", "text": "find the bug"}]},
  {"role": "assistant", "parts": [{"type": "text", "text": "looking"},
     {"type": "tool", "tool_name": "grep", "tool_call_id": "c1", "tool_state": "completed",
      "input": {"pattern": "bug"}, "output": "src/a.c:1: bug"}]},
  {"role": "tool", "parts": [{"type": "text", "text": "done"}]},
  {"role": "user", "parts": [{"type": "text", "text": "thanks"}]}]');
-- a batch large enough to go through the bulk-insert ring
SELECT count(*) FROM mnemo.append_messages('di',
  (SELECT jsonb_agg(jsonb_build_object('role', CASE WHEN i % 2 = 0 THEN 'user' ELSE 'assistant' END,
                                       'parts', jsonb_build_array(jsonb_build_object('type', 'text', 'text', 'm' || i))))
     FROM generate_series(1, 1200) i));
SELECT seq FROM mnemo.append_message('di', 'assistant', '[{"type": "text", "text": "one more"}]');

-- every index entry of every heap row (heapallindexed), and the partial
-- indexes hold exactly the rows of their predicates
-- (bt_index_check raises an error for a heap row an index lacks)
SELECT count(*) > 0 AS every_index_holds_every_row
  FROM (SELECT bt_index_check(c.oid, true)
          FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
          JOIN pg_class t ON t.oid = i.indrelid
         WHERE t.relnamespace = 'mnemo'::regnamespace AND c.relkind = 'i'
           AND c.relam = (SELECT oid FROM pg_am WHERE amname = 'btree')
           AND t.relname LIKE 'log%') checked;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT count(*) AS users_by_index FROM mnemo.messages
 WHERE session_id = 'di' AND role = 'user' AND NOT is_summary;
RESET enable_seqscan;
RESET enable_bitmapscan;
SELECT count(*) AS users_by_scan FROM mnemo.messages
 WHERE session_id = 'di' AND role = 'user' AND NOT is_summary;
SELECT count(*) AS messages, count(DISTINCT seq) AS seqs, max(seq) AS last FROM mnemo.messages WHERE session_id = 'di';
SELECT count(*) AS parts FROM mnemo.message_parts WHERE session_id = 'di';

-- the columns an append leaves out have their defaults: no token counts
-- or cost stored, which every function reads as 0
SELECT DISTINCT tokens_input, tokens_output, tokens_cache_read, tokens_cache_write,
       tokens_reasoning, cost, finish_reason, is_summary
  FROM mnemo.messages WHERE session_id = 'di';
SELECT DISTINCT tokens_input, tokens_output, tokens_cache_read, tokens_cache_write,
       tokens_reasoning, cost FROM mnemo.get_messages('di');
SELECT DISTINCT compacted_at, started_at, completed_at FROM mnemo.message_parts WHERE session_id = 'di';
-- ... as the table says now: a default changed after the first appends
ALTER TABLE mnemo.log ALTER COLUMN cost SET DEFAULT 0.25;
SELECT seq FROM mnemo.append_message('di', 'user', '[{"type": "text", "text": "priced"}]', id => 'di_priced');
ALTER TABLE mnemo.log ALTER COLUMN cost DROP DEFAULT;
SELECT seq FROM mnemo.append_message('di', 'user', '[{"type": "text", "text": "free"}]', id => 'di_free');
SELECT id, cost FROM mnemo.messages WHERE session_id = 'di' AND id IN ('di_priced', 'di_free') ORDER BY seq;
-- a default that is not a constant is computed for each row
CREATE SEQUENCE di_seq;
ALTER TABLE mnemo.log ALTER COLUMN finish_reason SET DEFAULT 'r' || nextval('public.di_seq');
SELECT count(*) FROM mnemo.append_messages('di', '[{"role": "user", "parts": []}, {"role": "user", "parts": []}]');
ALTER TABLE mnemo.log ALTER COLUMN finish_reason DROP DEFAULT;
DROP SEQUENCE di_seq;
SELECT finish_reason FROM mnemo.messages WHERE session_id = 'di' AND finish_reason IS NOT NULL ORDER BY seq;

-- an operator's CHECK refuses the row: 23514, and none of the call's rows is left
ALTER TABLE mnemo.log ADD CONSTRAINT no_secrets CHECK (content->>'text' IS DISTINCT FROM 'secret');
SELECT count(*) FROM mnemo.append_messages('di', '[
  {"role": "user", "parts": [{"type": "text", "text": "fine"}]},
  {"role": "user", "parts": [{"type": "text", "text": "secret"}]}]');
ALTER TABLE mnemo.log DROP CONSTRAINT no_secrets;
SELECT count(*) AS messages, max(seq) AS last FROM mnemo.messages WHERE session_id = 'di';
SELECT count(*) AS fine FROM mnemo.message_parts WHERE session_id = 'di' AND content->>'text' = 'fine';

-- an operator's trigger sees every row of an append
CREATE TABLE di_seen (tbl text, id text);
CREATE FUNCTION di_seen() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- (a partition's name without its suffix, on the partitioned layout)
    INSERT INTO public.di_seen
    SELECT regexp_replace(TG_TABLE_NAME, '_p[0-9]+$', ''), i FROM unnest(ARRAY[NEW.id, NEW.part_id]) i
     WHERE i IS NOT NULL;
    RETURN NEW;
END $$;
CREATE TRIGGER di_seen AFTER INSERT ON mnemo.log FOR EACH ROW EXECUTE FUNCTION di_seen();
SELECT count(*) FROM mnemo.append_messages('di', '[
  {"role": "user", "id": "di_t1", "parts": [{"type": "text", "text": "a", "id": "di_p1"}]},
  {"role": "assistant", "id": "di_t2", "parts": [{"type": "text", "text": "b", "id": "di_p2"},
                                                 {"type": "text", "text": "c", "id": "di_p3"}]}]');
SELECT tbl, id FROM di_seen ORDER BY tbl COLLATE "C", id COLLATE "C";
DROP TRIGGER di_seen ON mnemo.log;
-- and once it is gone, appends go on as before
SELECT seq FROM mnemo.append_message('di', 'user', '[{"type": "text", "text": "after"}]', id => 'di_after');
SELECT count(*) AS seen FROM di_seen;
DROP TABLE di_seen;
DROP FUNCTION di_seen();

-- content from 256 bytes on, in a row short of 2 kB, is stored compressed
-- by lz4 (the column names no method); shorter content, content that does
-- not shrink, and content in a longer row (the toaster's, by
-- default_toast_compression) as PostgreSQL stores it.  Where rows go
-- through INSERT (a partitioned layout), content is stored as an INSERT
-- stores it: compressed in the longer row only.
SELECT c.relkind = 'r' AS direct FROM pg_class c WHERE c.oid = 'mnemo.log'::regclass \gset
CREATE TEMP TABLE di_texts (name text, text text, compression text, by_insert text);
INSERT INTO di_texts VALUES
  ('short', repeat('ab ', 50), NULL, NULL),
  ('long', repeat('the parser keeps the token ', 20), 'lz4', NULL),
  ('random', (SELECT string_agg(md5(i::text), '') FROM generate_series(1, 10) i), NULL, NULL),
  ('row past 2 kB', repeat('the parser keeps the token ', 200), 'pglz', 'pglz');
SELECT t.name, octet_length(t.text) AS bytes,
       (SELECT (mnemo.append_message('di', 'user',
                  jsonb_build_array(jsonb_build_object('type', 'text', 'text', t.text)), id => 'dz_' || t.name)).seq) > 0 AS appended
  FROM di_texts t ORDER BY bytes;
SELECT t.name, t.compression,
       pg_column_compression(p.content) IS NOT DISTINCT FROM
         CASE WHEN :'direct'::boolean THEN t.compression ELSE t.by_insert END AS stored_so,
       (SELECT f.content ->> 'text' FROM mnemo.get_messages_flat('di') f WHERE f.id = m.id) = t.text AS reads_back
  FROM di_texts t JOIN mnemo.messages m ON m.session_id = 'di' AND m.id = 'dz_' || t.name
  JOIN mnemo.message_parts p ON p.session_id = 'di' AND p.seq = m.seq ORDER BY octet_length(t.text);
-- a method the column names is used instead; an index over content, or
-- storage that does not compress, leaves content as it is
CREATE FUNCTION pg_temp.di_long(id text) RETURNS boolean LANGUAGE sql AS $$
  SELECT (mnemo.append_message('di', 'user',
            jsonb_build_array(jsonb_build_object('type', 'text', 'text', t.text)), id => id)).seq > 0
    FROM di_texts t WHERE t.name = 'long' $$;
ALTER TABLE mnemo.log ALTER COLUMN content SET COMPRESSION pglz;
SELECT pg_temp.di_long('dz_named_method');
ALTER TABLE mnemo.log ALTER COLUMN content SET COMPRESSION DEFAULT;
CREATE INDEX di_content_idx ON mnemo.log ((content ->> 'type'));
SELECT pg_temp.di_long('dz_indexed');
DROP INDEX mnemo.di_content_idx;
ALTER TABLE mnemo.log ALTER COLUMN content SET STORAGE EXTERNAL;
SELECT pg_temp.di_long('dz_storage_external');
ALTER TABLE mnemo.log ALTER COLUMN content SET STORAGE EXTENDED;
SELECT pg_temp.di_long('dz_as_before');
SELECT m.id, e.compression,
       pg_column_compression(p.content) IS NOT DISTINCT FROM
         CASE WHEN :'direct'::boolean THEN e.compression END AS stored_so
  FROM (VALUES ('dz_named_method', 'pglz'), ('dz_indexed', NULL), ('dz_storage_external', NULL),
               ('dz_as_before', 'lz4')) e (id, compression)
  JOIN mnemo.messages m ON m.session_id = 'di' AND m.id = e.id
  JOIN mnemo.message_parts p ON p.session_id = 'di' AND p.seq = m.seq
 ORDER BY m.seq;

-- a taken id is still MN004 naming it, and the call leaves nothing
SELECT mnemo.append_message('di', 'user', '[{"type": "text", "text": "again"}]', id => 'di_after');
SELECT count(*) AS messages, max(seq) AS last FROM mnemo.messages WHERE session_id = 'di';

SELECT mnemo.purge_session('di');
