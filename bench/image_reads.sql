-- bench/image_reads.sql: the median time of 30 reads of ten messages, each
-- carrying one 300 KB image, through get_messages_with_parts and
-- get_messages_flat, in one backend (doc/benchmarks.md, Images).
--
--   createdb rd && psql -d rd -c 'CREATE EXTENSION mnemo' && psql -X -d rd -f bench/image_reads.sql
\set QUIET on
CREATE TEMP TABLE img AS
SELECT translate(encode(decode(string_agg(lpad(to_hex((random() * 255)::int), 2, '0'), ''), 'hex'), 'base64'), E'\n', '') AS b64 FROM generate_series(1, 300000);
SELECT id FROM mnemo.create_session('rd') \gset
SELECT count(mnemo.append_message('rd', 'user', jsonb_build_array(jsonb_build_object('type', 'image', 'media_type', 'image/png', 'data', (SELECT b64 FROM img))))) FROM generate_series(1, 10) \gset
CREATE TEMP TABLE t (ms float8);
DO $$ DECLARE t0 timestamptz; i int; n bigint; BEGIN
  FOR i IN 1..30 LOOP t0 := clock_timestamp();
    SELECT sum(length(parts::text)) INTO n FROM mnemo.get_messages_with_parts('rd');
    INSERT INTO t VALUES (extract(epoch FROM clock_timestamp() - t0) * 1000); END LOOP; END $$;
SELECT 'with_parts' AS read, round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)::numeric, 2) AS median_ms FROM t;
TRUNCATE t;
DO $$ DECLARE t0 timestamptz; i int; n bigint; BEGIN
  FOR i IN 1..30 LOOP t0 := clock_timestamp();
    SELECT sum(length(content::text)) INTO n FROM mnemo.get_messages_flat('rd');
    INSERT INTO t VALUES (extract(epoch FROM clock_timestamp() - t0) * 1000); END LOOP; END $$;
\set QUIET off
SELECT 'flat' AS read, round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)::numeric, 2) AS median_ms FROM t;
SELECT mnemo.purge_session('rd');
