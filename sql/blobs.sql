--
-- blobs: an image's base64 data is stored once per tenant, as bytes
-- (mnemo.blobs, src/log/blobs.c), and every read gives the appended base64 back
--
\set VERBOSITY sqlstate

-- a 300 KB "image": random bytes, as incompressible as a PNG or JPEG
SELECT setseed(0.34);
CREATE TEMP TABLE img AS
SELECT translate(encode(decode(string_agg(lpad(to_hex((random() * 255)::int), 2, '0'), ''), 'hex'),
                        'base64'), E'\n', '') AS b64
  FROM generate_series(1, 300000);
SELECT length(b64), length(decode(b64, 'base64')) AS bytes FROM img;

-- every relation of the store (tables, their TOAST and indexes, partitions)
CREATE FUNCTION pg_temp.store_bytes() RETURNS bigint LANGUAGE sql AS $$
    SELECT sum(pg_total_relation_size(c.oid))::bigint
      FROM pg_class c WHERE c.relnamespace = 'mnemo'::regnamespace AND c.relkind = 'r'
$$;
CREATE FUNCTION pg_temp.image(data text) RETURNS jsonb LANGUAGE sql AS $$
    SELECT jsonb_build_array(jsonb_build_object('type', 'text', 'text', 'what is this?'),
                             jsonb_build_object('type', 'image', 'media_type', 'image/png', 'data', data))
$$;

-- ten messages carrying the same image grow the store by about one copy of
-- its bytes (before blobs: 4.25 MB, the base64 text ten times over)
-- (a first message with a 3,000-byte image, so that every table, or the
-- session's partition of it, and the TOAST table of mnemo.blobs have
-- their first pages)
SELECT id FROM mnemo.create_session('bl');
SELECT seq FROM mnemo.append_message('bl', 'user', pg_temp.image((SELECT left(b64, 4000) FROM img)));
SELECT pg_temp.store_bytes() AS before \gset
SELECT count(mnemo.append_message('bl', 'user', pg_temp.image((SELECT b64 FROM img)))) AS appended
  FROM generate_series(1, 10);
SELECT pg_temp.store_bytes() - :before < 1.2 * 300000 AS grew_by_one_copy;
SELECT octet_length(bytes) AS bytes, refs, sha256 = sha256(decode((SELECT b64 FROM img), 'base64')) AS keyed_by_sha256
  FROM mnemo.blobs ORDER BY 1;
-- the part names its blob instead of holding the data
SELECT DISTINCT content - 'data' AS rest, content -> 'data' ->> 'bytes' AS bytes,
       content -> 'data' ->> 'sha256' = encode(sha256(decode((SELECT b64 FROM img), 'base64')), 'hex') AS sha256
  FROM mnemo.message_parts WHERE session_id = 'bl' AND part_type = 'image' AND content -> 'data' ->> 'bytes' <> '3000';

-- every read gives the appended base64 back, byte for byte
SELECT count(*) AS parts, bool_and(p ->> 'data' = (SELECT b64 FROM img)) AS exact
  FROM mnemo.get_messages_with_parts('bl') m, jsonb_array_elements(m.parts) p WHERE p ->> 'type' = 'image' AND m.seq > 1;
SELECT count(*) AS parts, bool_and(p ->> 'data' = (SELECT b64 FROM img)) AS exact
  FROM mnemo.get_messages_with_parts_by_ids('bl', ARRAY(SELECT id FROM mnemo.messages WHERE session_id = 'bl')) m,
       jsonb_array_elements(m.parts) p WHERE p ->> 'type' = 'image' AND m.seq > 1;
SELECT count(*) AS parts, bool_and(p ->> 'data' = (SELECT b64 FROM img)) AS exact
  FROM mnemo.history('bl', 3) m, jsonb_array_elements(m.parts) p WHERE p ->> 'type' = 'image' AND m.seq > 1;
SELECT count(*) AS parts, bool_and(f.content::jsonb ->> 'data' = (SELECT b64 FROM img)) AS exact
  FROM mnemo.get_messages_flat('bl') f WHERE f.content::jsonb ->> 'type' = 'image' AND f.seq > 1;
SELECT count(*) AS parts, bool_and(content ->> 'data' = (SELECT b64 FROM img)) AS exact,
       bool_and(content = pg_temp.image((SELECT b64 FROM img)) -> 1) AS whole_part
  FROM mnemo.get_parts('bl', (SELECT id FROM mnemo.messages WHERE session_id = 'bl' AND seq = 4))
 WHERE part_type = 'image';
-- the text of get_messages_flat is jsonb's: the same as the appended part's
SELECT count(*) AS parts, bool_and(f.content::text = (pg_temp.image((SELECT b64 FROM img)) -> 1)::text) AS same_text
  FROM mnemo.get_messages_flat('bl') f WHERE f.content::jsonb ->> 'type' = 'image' AND f.seq > 1;
-- the estimate and the rendering are as before the blob: 400,000 bytes of base64
SELECT DISTINCT token_estimate FROM mnemo.message_parts WHERE session_id = 'bl' AND part_type = 'image';
SELECT DISTINCT role, content, tokens FROM mnemo.build_context('bl', 100000) ORDER BY content;

-- append_messages (imports) and append_part share the same copy
SELECT count(*) AS appended FROM mnemo.append_messages('bl', jsonb_build_array(
    jsonb_build_object('role', 'user', 'parts', pg_temp.image((SELECT b64 FROM img))),
    jsonb_build_object('role', 'user', 'parts', pg_temp.image((SELECT b64 FROM img)))));
SELECT mnemo.append_part('bl', (SELECT id FROM mnemo.messages WHERE session_id = 'bl' AND seq = 1),
                         pg_temp.image((SELECT b64 FROM img)) -> 1) AS part_index;
SELECT octet_length(bytes) AS bytes, refs FROM mnemo.blobs ORDER BY 1;

-- data that would not come back exactly stays in the part as text, as
-- before: line breaks, non-canonical trailing bits, bad base64, a url
SELECT id FROM mnemo.create_session('bl_text');
CREATE TEMP TABLE odd (name text, data text);
INSERT INTO odd VALUES
    ('line breaks', encode(decode(left((SELECT b64 FROM img), 400), 'base64'), 'base64')),
    ('trailing bits', 'QR=='),
    ('no padding', 'QQ'),
    ('bad base64', 'not base64 at all!'),
    ('empty', '');
SELECT count(mnemo.append_message('bl_text', 'user', pg_temp.image(data) - 0)) AS appended FROM odd;
SELECT octet_length(bytes) AS bytes, refs FROM mnemo.blobs ORDER BY 1;
SELECT jsonb_typeof(content -> 'data') AS stored_as, count(*)
  FROM mnemo.message_parts WHERE session_id = 'bl_text' GROUP BY 1;
SELECT o.name, (SELECT count(*) FROM mnemo.get_messages_with_parts('bl_text') m, jsonb_array_elements(m.parts) p
                 WHERE p ->> 'data' = o.data) AS read_back
  FROM odd o ORDER BY o.name;
-- a url is not data
SELECT seq FROM mnemo.append_message('bl_text', 'user',
    '[{"type": "image", "media_type": "image/png", "url": "https://example.com/a.png"}]');
SELECT content ->> 'url' AS url FROM mnemo.message_parts WHERE session_id = 'bl_text' AND content ? 'url';
-- the errors of today: data and url both, data not a string (so an object
-- in "data" is always a stored reference, never what a caller gave)
SELECT mnemo.append_message('bl_text', 'user', '[{"type": "image", "data": "QQ==", "url": "x"}]');
SELECT mnemo.append_message('bl_text', 'user', '[{"type": "image", "data": {"sha256": "00", "bytes": 1}}]');
SELECT count(*) AS messages FROM mnemo.messages WHERE session_id = 'bl_text';

-- purge: a blob another session still references stays, with fewer refs;
-- one no session references any more is deleted
SELECT id FROM mnemo.create_session('bl_other');
SELECT seq FROM mnemo.append_message('bl_other', 'user', pg_temp.image((SELECT b64 FROM img)));
SELECT seq FROM mnemo.append_message('bl_other', 'user', pg_temp.image('AAECAwQFBgcICQ=='));
SELECT octet_length(bytes) AS bytes, refs FROM mnemo.blobs ORDER BY 1;
SELECT mnemo.purge_session('bl') AS purged;
SELECT octet_length(bytes) AS bytes, refs FROM mnemo.blobs ORDER BY 1;
SELECT count(*) AS parts, bool_and(p ->> 'data' = (SELECT b64 FROM img)) AS exact
  FROM mnemo.get_messages_with_parts('bl_other') m, jsonb_array_elements(m.parts) p
 WHERE p ->> 'type' = 'image' AND m.seq = 1;
SELECT mnemo.purge_session('bl_other') AS purged;
SELECT count(*) AS blobs FROM mnemo.blobs;
SELECT mnemo.purge_session('bl_text') AS purged;
