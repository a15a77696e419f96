-- bench/image_bytes.sql: what ten messages carrying the same 300 KB image
-- add to the store (every mnemo relation: tables, TOAST, indexes).
--
--   createdb img && psql -d img -c 'CREATE EXTENSION mnemo' && psql -X -d img -f bench/image_bytes.sql
--
-- The image is 300,000 random bytes (as incompressible as a PNG or JPEG),
-- 400,000 characters of base64.  A first message with a 3,000-byte image
-- comes first, so that the relations (and their TOAST tables) have their
-- first pages before the measure.
\set QUIET on
SELECT setseed(0.34) \gset
CREATE TEMP TABLE img AS
SELECT translate(encode(decode(string_agg(lpad(to_hex((random() * 255)::int), 2, '0'), ''), 'hex'),
                        'base64'), E'\n', '') AS b64
  FROM generate_series(1, 300000);
CREATE FUNCTION pg_temp.store_bytes() RETURNS bigint LANGUAGE sql AS $$
    SELECT sum(pg_total_relation_size(c.oid))::bigint
      FROM pg_class c WHERE c.relnamespace = 'mnemo'::regnamespace AND c.relkind = 'r'
$$;
CREATE FUNCTION pg_temp.image(data text) RETURNS jsonb LANGUAGE sql AS $$
    SELECT jsonb_build_array(jsonb_build_object('type', 'text', 'text', 'what is this?'),
                             jsonb_build_object('type', 'image', 'media_type', 'image/png', 'data', data))
$$;
SELECT (mnemo.create_session()).id AS sid \gset
SELECT seq FROM mnemo.append_message(:'sid', 'user', pg_temp.image((SELECT left(b64, 4000) FROM img))) \gset
SELECT pg_temp.store_bytes() AS before \gset
SELECT count(mnemo.append_message(:'sid', 'user', pg_temp.image((SELECT b64 FROM img)))) AS n
  FROM generate_series(1, 10) \gset
\set QUIET off
SELECT pg_temp.store_bytes() - :before AS bytes_for_10_copies,
       round((pg_temp.store_bytes() - :before) / 300000.0, 2) AS times_the_image,
       round((pg_temp.store_bytes() - :before) / 3000000.0, 2) AS times_ten_images;
SELECT mnemo.purge_session(:'sid') AS purged \gset
