--
-- files: store_file_reference, get_file_reference, get_file_reference_by_path
--
\set VERBOSITY sqlstate

-- store: all arguments, then defaults
SELECT content_id, path, file_type, token_count, exploration_summary,
       abs(created_at - extract(epoch FROM clock_timestamp()) * 1000) < 60000 AS created_now
  FROM mnemo.store_file_reference('sha256:aaa', '/src/a.py', 'python', 1200, 'def main(): ...');
SELECT content_id, path, file_type, token_count, exploration_summary
  FROM mnemo.store_file_reference('sha256:bbb', '/src/b.json');
SELECT content_id, path, file_type, token_count, exploration_summary
  FROM mnemo.store_file_reference('sha256:ccc', '/src/c.md', NULL, NULL, NULL);

-- get by content id
SELECT content_id, path, file_type, token_count, exploration_summary
  FROM mnemo.get_file_reference('sha256:aaa');
-- a missing one is NULL, not an error
SELECT mnemo.get_file_reference('sha256:none') IS NULL AS missing;
SELECT (mnemo.get_file_reference('sha256:none')).path IS NULL AS missing;

-- storing the same content id again replaces the row: path, type, counts, time
SELECT created_at AS aaa_created_at FROM mnemo.get_file_reference('sha256:aaa') \gset
SELECT pg_sleep(0.002);
SELECT content_id, path, file_type, token_count, exploration_summary,
       created_at > :aaa_created_at AS newer
  FROM mnemo.store_file_reference('sha256:aaa', '/moved/a.py', 'python3', 1300, 'moved');
SELECT count(*) FROM mnemo.file_references WHERE content_id = 'sha256:aaa';
SELECT content_id, path, file_type, token_count, exploration_summary
  FROM mnemo.get_file_reference('sha256:aaa');
-- the old path no longer finds it
SELECT mnemo.get_file_reference_by_path('/src/a.py') IS NULL AS old_path_gone;
SELECT content_id FROM mnemo.get_file_reference_by_path('/moved/a.py');

-- by path: the most recently stored reference for the path
SELECT content_id FROM mnemo.store_file_reference('sha256:v1', '/src/d.txt', 'text', 10, 'version 1');
SELECT pg_sleep(0.002);
SELECT content_id FROM mnemo.store_file_reference('sha256:v2', '/src/d.txt', 'text', 20, 'version 2');
SELECT pg_sleep(0.002);
SELECT content_id FROM mnemo.store_file_reference('sha256:v3', '/src/d.txt', 'text', 30, 'version 3');
SELECT content_id, token_count, exploration_summary FROM mnemo.get_file_reference_by_path('/src/d.txt');
-- a content id must be one a file-id footer can carry through summaries
SELECT mnemo.store_file_reference('a, b', '/src/e.txt');
SELECT mnemo.store_file_reference('c]', '/src/e.txt');
SELECT mnemo.store_file_reference(' d', '/src/e.txt');
SELECT count(*) FROM mnemo.file_references WHERE path = '/src/e.txt';
-- re-storing an older version makes it the most recent again
SELECT pg_sleep(0.002);
SELECT content_id FROM mnemo.store_file_reference('sha256:v1', '/src/d.txt', 'text', 10, 'version 1 again');
SELECT content_id, exploration_summary FROM mnemo.get_file_reference_by_path('/src/d.txt');
-- every version stays retrievable by content id
SELECT content_id, path, token_count FROM mnemo.file_references
 WHERE path = '/src/d.txt' ORDER BY content_id;
-- ... also when the two stores fall in the same millisecond: store two
-- references for each of 200 paths back to back; the second must win every time
DO $$
BEGIN
  FOR g IN 1..200 LOOP
    PERFORM mnemo.store_file_reference('sha256:tie_a' || g, '/tie/' || g);
    PERFORM mnemo.store_file_reference('sha256:tie_b' || g, '/tie/' || g);
  END LOOP;
END
$$;
SELECT count(*) AS paths,
       count(*) FILTER (WHERE (mnemo.get_file_reference_by_path('/tie/' || g)).content_id = 'sha256:tie_b' || g)
         AS newest_found
  FROM generate_series(1, 200) AS g;
-- a path nobody stored: NULL
SELECT mnemo.get_file_reference_by_path('/nowhere') IS NULL AS missing;

-- a long path (3,201 bytes; Linux allows 4,096) is stored, or refused with
-- 22023 like an over-long id: never an internal error from the path index
CREATE FUNCTION pg_temp.store_long_path() RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  PERFORM mnemo.store_file_reference('sha256:long',
    '/' || (SELECT string_agg(md5(g::text), '') FROM generate_series(1, 100) AS g));
  RETURN 'stored';
EXCEPTION WHEN invalid_parameter_value THEN
  RETURN 'refused';
END
$$;
SELECT pg_temp.store_long_path() IN ('stored', 'refused') AS stored_or_refused;

-- errors: empty path or negative token_count 22023, empty content id 22023,
-- NULL content id or path 22004
SELECT mnemo.store_file_reference('sha256:eee', '');
SELECT mnemo.store_file_reference('sha256:eee', '/e', 'text', -1);
SELECT mnemo.store_file_reference('', '/e');
SELECT mnemo.store_file_reference(NULL, '/e');
SELECT mnemo.store_file_reference('sha256:eee', NULL);
SELECT mnemo.get_file_reference(NULL);
SELECT mnemo.get_file_reference_by_path(NULL);
SELECT count(*) FROM mnemo.file_references WHERE content_id = 'sha256:eee' OR path = '/e';
