-- search_history: full-text search over a session's whole log.
\set VERBOSITY terse
SELECT id FROM mnemo.create_session('sh');
SELECT id FROM mnemo.create_session('sh_other');
SELECT seq FROM mnemo.append_message('sh', 'user',
  '[{"type":"text","text":"Why is the replication slot lagging?"}]', id => 'sh_u1');
SELECT seq FROM mnemo.append_message('sh', 'assistant',
  '[{"type":"text","text":"Let me look at the slot."},
    {"type":"tool","id":"sh_t1","tool_name":"psql","tool_call_id":"c1","tool_state":"completed",
     "input":{"sql":"select * from pg_replication_slots"},"output":"slot_a lag 42 seconds, wal_status reserved"}]',
  id => 'sh_a1');
SELECT seq FROM mnemo.append_message('sh', 'assistant',
  '[{"type":"tool","id":"sh_t2","tool_name":"cat","tool_call_id":"c2","tool_state":"error",
     "input":{"path":"/etc/postgresql/postgresql.conf"},"error_message":"permission denied"}]',
  id => 'sh_a2');
SELECT seq FROM mnemo.append_message('sh', 'user',
  '[{"type":"file_ref","content_id":"sha256:c1","path":"/srv/recovery.conf","file_type":"conf","summary":"primary_conninfo and a slot name"}]',
  id => 'sh_u2');
SELECT seq FROM mnemo.append_message('sh', 'assistant', '[{"type":"text","text":"The slot is fine now."}]', id => 'sh_a3');
SELECT seq FROM mnemo.append_message('sh_other', 'user', '[{"type":"text","text":"slot slot slot"}]', id => 'sh_o1');

-- the tool output is tombstoned and the first two messages compacted out of
-- the context view: both are still found, and say they are not in context
SELECT mnemo.tombstone_part('sh', 'sh_t1') > 0 AS tombstoned;
SELECT seq FROM mnemo.append_message('sh', 'assistant',
  '[{"type":"text","text":"Summary: the user asked about a lagging replication slot."}]',
  id => 'sh_sum', is_summary => true);
SELECT mnemo.swap_context_items('sh', '{sh_u1,sh_a1}', 'sh_sum');

-- on a large session the search is served by the GIN index (a changed
-- expression in src/search.c or the install script would lose it); appends
-- name their ids
SELECT id FROM mnemo.create_session('sh_big');
SELECT count(*) FROM mnemo.append_messages('sh_big',
  (SELECT jsonb_agg(jsonb_build_object('role', 'user', 'id', 'sh_big_' || i, 'parts',
     jsonb_build_array(jsonb_build_object('type', 'text', 'text', 'routine message number ' || i ||
       CASE WHEN i % 1000 = 0 THEN ' needle' ELSE '' END))))
     FROM generate_series(1, 3000) i));
ANALYZE mnemo.message_parts;
ANALYZE mnemo.messages;
-- scans of the search index, or of its partitions' indexes when message_parts
-- is partitioned (test/run.sh step partitioned)
CREATE FUNCTION pg_temp.search_idx_scans() RETURNS bigint LANGUAGE sql AS $$
  SELECT sum(idx_scan)::bigint FROM pg_stat_user_indexes
   WHERE indexrelid = 'mnemo.message_parts_search_idx'::regclass
      OR indexrelid IN (SELECT inhrelid FROM pg_inherits
                         WHERE inhparent = 'mnemo.message_parts_search_idx'::regclass)
$$;
SELECT pg_temp.search_idx_scans() AS before \gset
SELECT message_id, seq, snippet FROM mnemo.search_history('sh_big', 'needle');
SELECT pg_stat_force_next_flush();
SELECT pg_temp.search_idx_scans() > :before AS index_used;
SELECT message_id, seq, role, in_context, snippet FROM mnemo.search_history('sh', 'seconds');

-- by rank, then newest first; only this session's messages
SELECT message_id, seq, role, in_context, snippet FROM mnemo.search_history('sh', 'slot');
SELECT bool_and(rank > 0) AS ranked FROM mnemo.search_history('sh', 'slot');
-- a rank tie goes to the newer message
SELECT message_id, seq FROM mnemo.search_history('sh', 'slot')
 WHERE rank = (SELECT min(rank) FROM mnemo.search_history('sh', 'slot'));
-- limit
SELECT message_id FROM mnemo.search_history('sh', 'slot', 2);
SELECT count(*) FROM mnemo.search_history('sh', 'slot', 0);
-- tool inputs, tool names, errors, file paths and summaries are searched
SELECT message_id FROM mnemo.search_history('sh', 'pg_replication_slots');
SELECT message_id FROM mnemo.search_history('sh', 'permission denied');
SELECT message_id FROM mnemo.search_history('sh', 'cat');
SELECT message_id FROM mnemo.search_history('sh', '/srv/recovery.conf');
SELECT message_id, in_context FROM mnemo.search_history('sh', 'lagging');
-- web search syntax: phrases, or, negation (which applies part by part:
-- sh_a1's text part mentions neither word)
SELECT message_id FROM mnemo.search_history('sh', '"slot is fine"');
SELECT message_id FROM mnemo.search_history('sh', 'denied or fine');
SELECT message_id FROM mnemo.search_history('sh', 'slot -lagging -seconds');
-- a part is searched in its first 100,000 characters, without runs of 255
-- or more non-blank characters; appending such a part never fails or warns
SELECT seq FROM mnemo.append_message('sh', 'tool',
  jsonb_build_array(jsonb_build_object('type', 'text', 'id', 'sh_long_p',
    'text', 'early ' || repeat('z', 3000) || ' ' || repeat('filler ', 20000) || 'late')),
  id => 'sh_long');
SELECT message_id FROM mnemo.search_history('sh', 'early');
SELECT count(*) FROM mnemo.search_history('sh', 'late');
SELECT count(*) FROM mnemo.search_history('sh', repeat('z', 3000));
-- nothing found, no words: no rows, no error
SELECT count(*) FROM mnemo.search_history('sh', 'kubernetes');
SELECT count(*) FROM mnemo.search_history('sh', '');
SELECT count(*) FROM mnemo.search_history('sh', ' !? -- ');
-- a session with no messages
SELECT id FROM mnemo.create_session('sh_empty');
SELECT count(*) FROM mnemo.search_history('sh_empty', 'slot');

-- errors
SELECT * FROM mnemo.search_history('sh_nope', 'slot');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mnemo.search_history(NULL, 'slot');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mnemo.search_history('sh', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mnemo.search_history('sh', 'slot', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mnemo.search_history('sh', 'slot', -1);
\echo :LAST_ERROR_SQLSTATE
