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

-- on a large session the search is served by the GIN index of the
-- documents; appends name their ids
SELECT id FROM mnemo.create_session('sh_big');
SELECT count(*) FROM mnemo.append_messages('sh_big',
  (SELECT jsonb_agg(jsonb_build_object('role', 'user', 'id', 'sh_big_' || i, 'parts',
     jsonb_build_array(jsonb_build_object('type', 'text', 'text', 'routine message number ' || i ||
       CASE WHEN i % 1000 = 0 THEN ' needle' ELSE '' END))))
     FROM generate_series(1, 3000) i));
-- appends do not index, nor write anything for search: the batch waits as
-- the seqs past the session's search_progress (none yet), until
-- index_search (or a search) indexes it and moves indexed_seq
SELECT mnemo.search_pending('sh_big') AS pending;
SELECT count(*) AS queued FROM mnemo.search_queue WHERE session_id = 'sh_big';
SELECT count(*) AS progress FROM mnemo.search_progress WHERE session_id = 'sh_big';
SELECT count(*) AS documents FROM mnemo.search_documents WHERE session_id = 'sh_big';
SELECT mnemo.index_search('sh_big') AS indexed;
SELECT indexed_seq FROM mnemo.search_progress WHERE session_id = 'sh_big';
SELECT mnemo.search_pending('sh_big') AS pending;
SELECT mnemo.index_search('sh_big') AS indexed_again;
-- (VACUUM moves the GIN's pending list into the index, as autovacuum would)
VACUUM ANALYZE mnemo.search_documents;
ANALYZE mnemo.log;
-- scans of the search index, or of its partitions' indexes when the table
-- is partitioned (test/run.sh step partitioned)
CREATE FUNCTION pg_temp.search_idx_scans() RETURNS bigint LANGUAGE sql AS $$
  SELECT sum(idx_scan)::bigint FROM pg_stat_user_indexes
   WHERE indexrelid = 'mnemo.search_documents_tsv_idx'::regclass
      OR indexrelid IN (SELECT inhrelid FROM pg_inherits
                         WHERE inhparent = 'mnemo.search_documents_tsv_idx'::regclass)
$$;
SELECT pg_temp.search_idx_scans() AS before \gset
SELECT message_id, seq, snippet FROM mnemo.search_history('sh_big', 'needle');
SELECT pg_stat_force_next_flush();
SELECT pg_temp.search_idx_scans() > :before AS index_used;
-- the first page costs its limit, not the session's matches: a word in
-- every one of the 3,000 messages, newest first, reads a handful of
-- documents down (session_id, seq), not the 3,000 the index matches
-- (tuples fetched, of the table or its partitions)
CREATE FUNCTION pg_temp.documents_fetched() RETURNS bigint LANGUAGE sql AS $$
  SELECT sum(pg_stat_get_xact_tuples_fetched(t.oid) + pg_stat_get_xact_tuples_returned(t.oid)
             + (SELECT coalesce(sum(pg_stat_get_xact_tuples_returned(i.indexrelid)), 0)
                  FROM pg_index i WHERE i.indrelid = t.oid))::bigint
    FROM pg_class t
   WHERE t.oid = 'mnemo.search_documents'::regclass
      OR t.oid IN (SELECT inhrelid FROM pg_inherits WHERE inhparent = 'mnemo.search_documents'::regclass)
$$;
BEGIN;
SELECT pg_temp.documents_fetched() AS fetched_before \gset
SELECT message_id, seq FROM mnemo.search_history('sh_big', 'routine', 5);
SELECT pg_temp.documents_fetched() - :fetched_before AS fetched \gset
SELECT :fetched BETWEEN 5 AND 100 AS page_sized;
COMMIT;
-- ranked ranks the newest 1,000 matching messages, and says so
SELECT count(*), min(seq) AS oldest FROM mnemo.search_history('sh_big', 'routine', 10, ranked => true);
SELECT message_id, seq, role, in_context, snippet FROM mnemo.search_history('sh', 'seconds');

-- newest first; only this session's messages
SELECT message_id, seq, role, in_context, snippet FROM mnemo.search_history('sh', 'slot');
SELECT bool_and(rank > 0) AS ranked FROM mnemo.search_history('sh', 'slot');
-- ranked: by rank, a rank tie to the newer message
SELECT message_id, seq FROM mnemo.search_history('sh', 'slot', ranked => true)
 WHERE rank = (SELECT min(rank) FROM mnemo.search_history('sh', 'slot'));
-- a better rank comes first, however old: on a session and on a fork
-- (whose hits of each segment are merged in C); without ranked, the newest
SELECT id FROM mnemo.create_session('srk');
SELECT count(*) FROM mnemo.append_messages('srk', '[
  {"role": "user", "id": "srk_dense", "parts": [{"type": "text", "text": "otter otter otter otter"}]},
  {"role": "user", "id": "srk_mid", "parts": [{"type": "text", "text": "otter otter and many other words besides it"}]},
  {"role": "user", "id": "srk_sparse", "parts": [{"type": "text", "text": "one otter among a great many other words in a long line"}]}]');
SELECT message_id, rank > 0 AS ranked FROM mnemo.search_history('srk', 'otter', ranked => true);
SELECT message_id FROM mnemo.search_history('srk', 'otter');
SELECT fork_seq FROM mnemo.fork_session('srk', '2', 'srk_f');
SELECT seq FROM mnemo.append_message('srk_f', 'user', '[{"type": "text", "text": "an otter, once, in a sentence of many other words"}]', id => 'srk_f1');
SELECT message_id FROM mnemo.search_history('srk_f', 'otter', ranked => true);
SELECT message_id FROM mnemo.search_history('srk_f', 'otter');
SELECT message_id FROM mnemo.search_history('srk_f', 'otter', 2);
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
-- documents keep a part's words without their positions (about 40% of
-- their bytes); a phrase is still a phrase: the documents are filtered by
-- its words and the parts checked for the words in order, also under a NOT
-- and an OR.  Each query finds, indexed, what matching every part's own
-- words finds (sp_direct).
SELECT id FROM mnemo.create_session('sp');
SELECT count(*) FROM mnemo.append_messages('sp', '[
  {"role": "user", "id": "sp_near", "parts": [{"type": "text", "text": "the heron lands on the pier"}]},
  {"role": "user", "id": "sp_apart", "parts": [{"type": "text", "text": "a heron on the pier lands"}]},
  {"role": "user", "id": "sp_two", "parts": [{"type": "text", "text": "heron"}, {"type": "text", "text": "lands"}]},
  {"role": "user", "id": "sp_none", "parts": [{"type": "text", "text": "a gull on the pier"}]},
  {"role": "user", "id": "sp_dash", "parts": [{"type": "text", "text": "see sub-agent logs, or the agent sub logs"}]}]');
-- a part of 1,024 characters or more keeps its positions: computing its
-- words again would cost a search more than they take
SELECT count(*) FROM mnemo.append_messages('sp', jsonb_build_array(
  jsonb_build_object('role', 'tool', 'id', 'sp_long', 'parts', jsonb_build_array(jsonb_build_object(
    'type', 'text', 'text', 'the heron lands ' || repeat('filler word ', 400)))),
  jsonb_build_object('role', 'tool', 'id', 'sp_long_apart', 'parts', jsonb_build_array(jsonb_build_object(
    'type', 'text', 'text', 'heron ' || repeat('filler word ', 400) || 'lands')))));
SELECT mnemo.index_search('sp') AS indexed;
SELECT count(*) FILTER (WHERE tsv <> strip(tsv)) AS with_positions, count(*) AS documents
  FROM mnemo.search_documents WHERE session_id = 'sp';
CREATE FUNCTION pg_temp.sp_direct(q text) RETURNS text LANGUAGE sql AS $$
  SELECT coalesce(string_agg(m.id, ',' ORDER BY m.seq DESC), '') FROM mnemo.messages m
   WHERE m.session_id = 'sp' AND EXISTS (SELECT FROM mnemo.message_parts p
     WHERE p.session_id = m.session_id AND p.seq = m.seq
       AND to_tsvector('simple', p.content ->> 'text') @@ websearch_to_tsquery('simple', q))
$$;
-- the page counts matches, not documents that hold the words: a newer
-- message holding both words apart does not take the one row, whether its
-- document kept positions (sp_long_apart) or not (sp_apart)
SELECT message_id FROM mnemo.search_history('sp', '"heron lands"', 1);
SELECT message_id FROM mnemo.search_history('sp', '"lands on"', 1);
SELECT q, found, found = pg_temp.sp_direct(q) AS as_direct
  FROM (VALUES ('"heron lands"'), ('"lands heron"'), ('heron lands'), ('pier -"heron lands"'),
               ('"heron lands" or gull'), ('-"heron lands" pier'), ('sub-agent'), ('"agent sub"'),
               ('gull or -"lands on"')) v(q),
  LATERAL (SELECT coalesce(string_agg(message_id, ',' ORDER BY seq DESC), '') AS found
             FROM mnemo.search_history('sp', q)) f;
-- ranks come from the part's own words, positions and all: the same
-- whether the message was indexed or not (read-only: the search indexes
-- nothing, and reads the two new messages directly)
SELECT count(*) FROM mnemo.append_messages('sp', '[
  {"role": "user", "id": "sp_near2", "parts": [{"type": "text", "text": "the heron lands on the pier"}]},
  {"role": "user", "id": "sp_apart2", "parts": [{"type": "text", "text": "a heron on the pier lands"}]}]');
SELECT count(*) FROM mnemo.append_messages('sp', jsonb_build_array(
  jsonb_build_object('role', 'tool', 'id', 'sp_long2', 'parts', jsonb_build_array(jsonb_build_object(
    'type', 'text', 'text', 'the heron lands ' || repeat('filler word ', 400))))));
BEGIN READ ONLY;
SELECT mnemo.search_pending('sp') AS waiting;
SELECT message_id, rank > 0 AS ranked,
       rank = lead(rank) OVER (PARTITION BY replace(message_id, '2', '') ORDER BY seq DESC) AS as_indexed
  FROM mnemo.search_history('sp', 'heron lands', ranked => true)
 ORDER BY replace(message_id, '2', ''), seq DESC;
COMMIT;
-- a part is searched in its first 100,000 characters, without runs of 255
-- or more non-blank characters; appending such a part never fails or warns
SELECT seq FROM mnemo.append_message('sh', 'tool',
  jsonb_build_array(jsonb_build_object('type', 'text', 'id', 'sh_long_p',
    'text', 'early ' || repeat('z', 3000) || ' ' || repeat('filler ', 20000) || 'late')),
  id => 'sh_long');
SELECT message_id FROM mnemo.search_history('sh', 'early');
SELECT count(*) FROM mnemo.search_history('sh', 'late');
SELECT count(*) FROM mnemo.search_history('sh', repeat('z', 3000));
-- limits on a query: 32 words, or sixteen phrases, search a part where
-- every word matches them (the snippet comes from the part's first 20,000
-- characters: over all 100,000 the phrases took a minute); more terms and
-- operators, or over 10,000 bytes, is 54000 (twenty thousand words
-- exhausted the stack inside PostgreSQL's text search)
SELECT count(*), max(length(snippet)) < 400 AS short_snippet
  FROM mnemo.search_history('sh', repeat('filler ', 32));
SELECT count(*) FROM mnemo.search_history('sh', repeat('filler or ', 31) || 'filler');
SELECT count(*) FROM mnemo.search_history('sh', repeat('"filler filler" ', 16));
SELECT count(*) FROM mnemo.search_history('sh', repeat('filler ', 33));
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) FROM mnemo.search_history('sh', repeat('filler ', 1428));
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) FROM mnemo.search_history('sh', repeat('w ', 20000));
\echo :LAST_ERROR_SQLSTATE
\set VERBOSITY default
SELECT count(*) FROM mnemo.search_history('sh', repeat('filler ', 33));
SELECT count(*) FROM mnemo.search_history('sh', repeat('x', 10001));
\set VERBOSITY terse
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

-- not yet indexed: a read-only transaction (or a standby) cannot index, so
-- its search reads the newest 2,000 messages not yet indexed directly, and
-- would say how many more it could not search
SELECT id FROM mnemo.create_session('sh_ro');
SELECT seq FROM mnemo.append_message('sh_ro', 'user', '[{"type":"text","text":"first walrus"}]', id => 'sh_ro1');
SELECT mnemo.index_search('sh_ro') AS indexed;
SELECT seq FROM mnemo.append_message('sh_ro', 'user', '[{"type":"text","text":"second walrus"}]', id => 'sh_ro2');
SELECT seq FROM mnemo.append_messages('sh_ro', '[{"role":"user","id":"sh_ro3","parts":[{"type":"text","text":"third walrus"}]},
  {"role":"user","id":"sh_ro4","parts":[{"type":"text","text":"fourth"}]}]');
SELECT mnemo.search_pending('sh_ro') AS pending;
\set VERBOSITY default
BEGIN READ ONLY;
SELECT message_id FROM mnemo.search_history('sh_ro', 'walrus');
SELECT mnemo.search_pending('sh_ro') AS pending;
COMMIT;
\set VERBOSITY terse
-- a search that may write indexes first, so it finds everything
SELECT message_id FROM mnemo.search_history('sh_ro', 'walrus');
SELECT mnemo.search_pending('sh_ro') AS pending;
-- a part appended later, and a tool's output merged later, are queued again
-- and found
SELECT mnemo.append_part('sh_ro', 'sh_ro4', '{"type":"tool","id":"sh_ro_t","tool_name":"grep","tool_call_id":"c9","tool_state":"running","input":{"q":"x"}}');
SELECT mnemo.search_pending('sh_ro') AS pending;
SELECT message_id FROM mnemo.search_history('sh_ro', 'grep');
SELECT mnemo.update_part_status('sh_ro', 'sh_ro_t', tool_state => 'completed', output => 'a narwhal was found');
SELECT mnemo.search_pending('sh_ro') AS pending;
SELECT message_id, snippet FROM mnemo.search_history('sh_ro', 'narwhal');
-- a status change that leaves the words alone queues nothing
SELECT mnemo.tombstone_part('sh_ro', 'sh_ro_t') > 0 AS tombstoned;
SELECT mnemo.search_pending('sh_ro') AS pending;
-- a summary committed by commit_summary is searchable too
SELECT mnemo.commit_summary('sh_ro', 'sh_ro_sum', 'the walrus and the narwhal', 6, ARRAY['sh_ro1', 'sh_ro2']) > 0 AS committed;
SELECT message_id FROM mnemo.search_history('sh_ro', 'narwhal') ORDER BY 1;
-- purge takes the queue and the documents with the session
SELECT seq FROM mnemo.append_message('sh_ro', 'user', '[{"type":"text","text":"last"}]');
SELECT mnemo.purge_session('sh_ro') > 0 AS purged;
SELECT (SELECT count(*) FROM mnemo.search_queue WHERE session_id = 'sh_ro') AS queued,
       (SELECT count(*) FROM mnemo.search_progress WHERE session_id = 'sh_ro') AS progress,
       (SELECT count(*) FROM mnemo.search_documents WHERE session_id = 'sh_ro') AS documents;

-- a backlog is indexed a slice per search, never all at once: the first
-- search of 3,000 messages appended at once indexes 500 of them (the
-- oldest), reads the newest 2,000 directly, and says that the 500 between
-- were not searched, unless its page was full before them
SELECT id FROM mnemo.create_session('sh_log');
SELECT count(*) FROM mnemo.append_messages('sh_log',
  (SELECT jsonb_agg(jsonb_build_object('role', 'user', 'id', 'sh_log_' || i, 'parts',
     jsonb_build_array(jsonb_build_object('type', 'text', 'text', 'line ' || i ||
       CASE WHEN i IN (10, 700, 2900) THEN ' heron' ELSE '' END))))
     FROM generate_series(1, 3000) i));
\set VERBOSITY default
SELECT message_id FROM mnemo.search_history('sh_log', 'heron');
SELECT indexed_seq FROM mnemo.search_progress WHERE session_id = 'sh_log';
SELECT message_id FROM mnemo.search_history('sh_log', 'line', 3);
\set VERBOSITY terse
SELECT indexed_seq FROM mnemo.search_progress WHERE session_id = 'sh_log';
SELECT mnemo.search_pending('sh_log') AS pending;
-- index_search indexes at most max_messages (10,000 by default); a job
-- calls it until search_pending is 0
SELECT mnemo.index_search('sh_log', 200) AS documents;
SELECT indexed_seq FROM mnemo.search_progress WHERE session_id = 'sh_log';
SELECT mnemo.index_search('sh_log', 0) AS documents;
SELECT mnemo.index_search('sh_log') AS documents;
SELECT mnemo.search_pending('sh_log') AS pending;
SELECT message_id FROM mnemo.search_history('sh_log', 'heron');
SELECT mnemo.index_search('sh_log', -1);
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.index_search('sh_log', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mnemo.search_history('sh_log', 'heron', ranked => NULL);
\echo :LAST_ERROR_SQLSTATE
-- errors: unknown session MN001, NULL 22004
SELECT mnemo.index_search('sh_nope');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.search_pending('sh_nope');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.index_search(NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.search_pending(NULL);
\echo :LAST_ERROR_SQLSTATE
