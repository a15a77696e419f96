--
-- sessions: create_session, get_session, get_or_create_session,
-- list_sessions, soft_delete_session, purge_session
--
\set VERBOSITY sqlstate

--
-- create_session: defaults
--
SELECT id, parent_id, model_id, provider_id, agent, title, is_active, metadata,
       system_prompt, state, watched, last_seq,
       created_at = updated_at AS same_times,
       abs(created_at - extract(epoch FROM clock_timestamp()) * 1000) < 60000 AS created_now
  FROM mnemo.create_session('ses_a');

-- every argument, by name
SELECT id, parent_id, model_id, provider_id, agent, title, is_active, metadata, system_prompt
  FROM mnemo.create_session(id => 'ses_b', model_id => 'gpt-4o', provider_id => 'openai',
                            agent => 'coder', parent_id => 'ses_a', title => 'Refactor',
                            metadata => '{"team": "x", "n": 1}', system_prompt => 'Be brief.');

-- and by position
SELECT id, model_id, provider_id, agent, parent_id, title, metadata, system_prompt
  FROM mnemo.create_session('ses_c', 'm', 'p', 'a', 'ses_b', 't', '{}', 'sp');

-- NULL for a defaulted argument means its default
SELECT id, model_id, provider_id, agent, system_prompt
  FROM mnemo.create_session('ses_d', model_id => NULL, provider_id => NULL,
                            agent => NULL, system_prompt => NULL);

-- a NULL id makes a time-ordered sess_ id (rolled back: the id is not printed
-- and does not show up in list_sessions below)
BEGIN;
SELECT id ~ '^sess_[0-9A-HJKMNP-TV-Z]{26}$' AS generated, is_active, last_seq
  FROM mnemo.create_session();
SELECT id ~ '^sess_[0-9A-HJKMNP-TV-Z]{26}$' AS generated
  FROM mnemo.create_session(NULL, title => 'untitled');
ROLLBACK;

-- errors: duplicate id MN004, missing parent MN001, metadata not an object
-- 22023, empty or over-long id 22023
SELECT mnemo.create_session('ses_a');
SELECT mnemo.create_session('ses_e', parent_id => 'no_such_session');
SELECT mnemo.create_session('ses_e', metadata => '[1, 2]');
SELECT mnemo.create_session('ses_e', metadata => '"text"');
SELECT mnemo.create_session('ses_e', metadata => '42');
SELECT mnemo.create_session('ses_e', metadata => 'null');
SELECT mnemo.create_session('');
SELECT mnemo.create_session(repeat('s', 257));
-- 256 bytes is the longest id (rolled back to keep it out of later output)
BEGIN;
SELECT length(id) FROM mnemo.create_session(repeat('s', 256));
ROLLBACK;
-- none of the failed calls left a row
SELECT count(*) FROM mnemo.sessions WHERE id IN ('ses_e', '');

--
-- get_session
--
SELECT id, parent_id, model_id, provider_id, agent, title, metadata, system_prompt, is_active
  FROM mnemo.get_session('ses_b');
SELECT (mnemo.get_session('ses_a')).parent_id IS NULL AS no_parent;
SELECT mnemo.get_session('no_such_session');
SELECT mnemo.get_session(NULL);
-- a system prompt and metadata too big to stay in the row (stored out of
-- line, in TOAST) come back whole from the functions that return one row
-- (the row once outlived the memory it was made in, and crashed the server)
SELECT id FROM mnemo.create_session('ses_big',
  system_prompt => (SELECT string_agg(md5(g::text), '') FROM generate_series(1, 3000) g),
  metadata => (SELECT jsonb_object_agg('k' || g, md5(g::text)) FROM generate_series(1, 3000) g));
-- on a new connection, so that the row is the backend's first large
-- allocation: its malloc maps it apart, and a read after it was freed faults
\c
SELECT length(system_prompt) AS prompt, length(metadata::text) AS metadata,
       system_prompt = (SELECT string_agg(md5(g::text), '') FROM generate_series(1, 3000) g) AS same_prompt
  FROM mnemo.get_session('ses_big');
SELECT length(system_prompt) AS prompt, metadata->>'k3000' = md5('3000') AS same_metadata
  FROM mnemo.get_or_create_session('ses_big');

--
-- get_or_create_session
--
-- an existing session comes back unchanged, whatever the other arguments say
SELECT updated_at AS b_updated_at FROM mnemo.get_session('ses_b') \gset
SELECT id, model_id, provider_id, agent, parent_id, title, metadata, system_prompt,
       updated_at = :b_updated_at AS updated_at_unchanged
  FROM mnemo.get_or_create_session('ses_b', model_id => 'other', provider_id => 'other',
                                   agent => 'other', title => 'Other',
                                   metadata => '{"other": true}', system_prompt => 'other');
SELECT title, model_id, updated_at = :b_updated_at AS updated_at_unchanged
  FROM mnemo.get_session('ses_b');
-- a new one is created from the arguments
SELECT id, model_id, provider_id, agent, parent_id, title, metadata, system_prompt, is_active
  FROM mnemo.get_or_create_session('ses_f', model_id => 'claude', provider_id => 'anthropic',
                                   parent_id => 'ses_a', title => 'New',
                                   metadata => '{"k": "v"}', system_prompt => 'hi');
-- the second call returns it
SELECT id, title FROM mnemo.get_or_create_session('ses_f', title => 'Changed');
SELECT count(*) FROM mnemo.sessions WHERE id = 'ses_f';
-- errors
SELECT mnemo.get_or_create_session(NULL);
SELECT mnemo.get_or_create_session('ses_g', parent_id => 'no_such_session');
SELECT mnemo.get_or_create_session('ses_g', metadata => '[]');
SELECT count(*) FROM mnemo.sessions WHERE id = 'ses_g';

--
-- list_sessions: newest first
--
-- children of ls_parent, created in the order ls_3, ls_1, ls_2 (neither id
-- order nor its reverse), a few milliseconds apart, and after the sessions
-- above (the unfiltered list below would otherwise flake on a shared ms)
SELECT pg_sleep(0.005);
SELECT id FROM mnemo.create_session('ls_parent');
SELECT pg_sleep(0.005);
SELECT id FROM mnemo.create_session('ls_3', parent_id => 'ls_parent');
SELECT pg_sleep(0.005);
SELECT id FROM mnemo.create_session('ls_1', parent_id => 'ls_parent');
SELECT pg_sleep(0.005);
SELECT id FROM mnemo.create_session('ls_2', parent_id => 'ls_parent');

-- unfiltered: the newest sessions of the whole database
SELECT id, parent_id FROM mnemo.list_sessions() LIMIT 4;
SELECT id FROM mnemo.list_sessions("limit" => 4);
-- parent filter
SELECT id FROM mnemo.list_sessions('ls_parent');
SELECT id FROM mnemo.list_sessions(parent_id => 'ses_a');
SELECT count(*) FROM mnemo.list_sessions(parent_id => 'ses_d');
SELECT count(*) FROM mnemo.list_sessions(parent_id => 'no_such_session');
-- limit and offset
SELECT id FROM mnemo.list_sessions('ls_parent', true, 2, 0);
SELECT id FROM mnemo.list_sessions('ls_parent', true, 2, 2);
SELECT id FROM mnemo.list_sessions('ls_parent', "offset" => 1);
SELECT count(*) FROM mnemo.list_sessions('ls_parent', "limit" => 0);
SELECT count(*) FROM mnemo.list_sessions('ls_parent', "offset" => 3);
-- active_only: a soft-deleted child is left out unless active_only is false
SELECT mnemo.soft_delete_session('ls_1');
SELECT id, is_active FROM mnemo.list_sessions('ls_parent');
SELECT id, is_active FROM mnemo.list_sessions('ls_parent', active_only => false);
SELECT id FROM mnemo.list_sessions("limit" => 3);
SELECT id FROM mnemo.list_sessions(active_only => false, "limit" => 3);
-- newest first also among sessions made in the same millisecond: the order
-- is (created_at, id) descending, with no per-node sequence, and the ids
-- mnemo makes are time-ordered and increase within a backend; 200 children
-- made in a burst list in exactly the reverse of their creation order
SELECT id FROM mnemo.create_session('ls_tie');
CREATE TEMP TABLE ls_made (n serial, id text);
DO $$
BEGIN
  FOR g IN 1..200 LOOP
    INSERT INTO ls_made (id) SELECT id FROM mnemo.create_session(parent_id => 'ls_tie');
  END LOOP;
END
$$;
WITH l AS (SELECT id, ordinality AS ord FROM mnemo.list_sessions('ls_tie', "limit" => 200) WITH ORDINALITY)
SELECT count(*) AS listed, count(*) FILTER (WHERE l.ord = 201 - m.n) AS newest_first
  FROM l JOIN ls_made m USING (id);
-- errors: negative limit or offset 22023, NULL flags and bounds 22004
SELECT * FROM mnemo.list_sessions("limit" => -1);
SELECT * FROM mnemo.list_sessions("offset" => -1);
SELECT * FROM mnemo.list_sessions('ls_parent', true, -5, 0);
SELECT * FROM mnemo.list_sessions(active_only => NULL);
SELECT * FROM mnemo.list_sessions("limit" => NULL);
SELECT * FROM mnemo.list_sessions("offset" => NULL);

--
-- soft_delete_session
--
SELECT id FROM mnemo.create_session('sd');
SELECT seq FROM mnemo.append_message('sd', 'user', '[{"type": "text", "text": "before"}]', id => 'sd_m1');
SELECT updated_at AS sd_updated_at FROM mnemo.get_session('sd') \gset
SELECT pg_sleep(0.002);
SELECT mnemo.soft_delete_session('sd');
SELECT is_active, updated_at > :sd_updated_at AS updated_at_moved, last_seq
  FROM mnemo.get_session('sd');
-- appends now fail with MN012, and leave nothing
SELECT mnemo.append_message('sd', 'user', '[{"type": "text", "text": "after"}]', id => 'sd_m2');
SELECT mnemo.append_messages('sd', '[{"role": "user", "parts": []}]');
SELECT mnemo.append_part('sd', 'sd_m1', '{"type": "text", "text": "more"}');
SELECT count(*) FROM mnemo.messages WHERE session_id = 'sd';
SELECT count(*) FROM mnemo.message_parts WHERE session_id = 'sd';
-- reads still work
SELECT seq, id, role FROM mnemo.get_messages('sd');
SELECT seq, jsonb_array_length(parts) FROM mnemo.get_messages_with_parts('sd');
SELECT seq FROM mnemo.history('sd');
SELECT item_type, item_id, position FROM mnemo.get_context_items('sd');
SELECT id, role FROM mnemo.get_message('sd', 'sd_m1');
SELECT part_index, content->>'text' AS text FROM mnemo.get_parts('sd', 'sd_m1');
-- idempotent; unknown session MN001; NULL 22004
SELECT mnemo.soft_delete_session('sd');
SELECT is_active FROM mnemo.get_session('sd');
SELECT mnemo.soft_delete_session('no_such_session');
SELECT mnemo.soft_delete_session(NULL);

--
-- purge_session: deletes the session and every row it owns
--
SELECT id FROM mnemo.create_session('pg_keep');
SELECT seq FROM mnemo.append_message('pg_keep', 'user', '[{"type": "text", "text": "stays"}]', id => 'pg_keep_m1');
SELECT id FROM mnemo.create_session('pg_gone');
SELECT seq FROM mnemo.append_messages('pg_gone', '[
  {"id": "pg_m1", "role": "user", "parts": [{"type": "text", "text": "a"}]},
  {"id": "pg_m2", "role": "assistant", "parts": [{"type": "tool", "id": "pg_p1", "tool_name": "ls", "tool_call_id": "c1"}]},
  {"id": "pg_s1", "role": "assistant", "is_summary": true, "parts": [{"type": "text", "text": "sum"}]}
]');
SELECT mnemo.tombstone_part('pg_gone', 'pg_p1') > 0 AS tombstoned;
SELECT mnemo.swap_context_items('pg_gone', ARRAY['pg_m1'], 'pg_s1');
SELECT id FROM mnemo.create_session('pg_child', parent_id => 'pg_gone');
SELECT (SELECT count(*) FROM mnemo.messages WHERE session_id = 'pg_gone') AS messages,
       (SELECT count(*) FROM mnemo.message_parts WHERE session_id = 'pg_gone') AS parts,
       (SELECT count(*) FROM mnemo.context_items WHERE session_id = 'pg_gone') AS context_items;
-- returns the number of messages deleted (summaries included)
SELECT mnemo.purge_session('pg_gone');
SELECT (SELECT count(*) FROM mnemo.sessions WHERE id = 'pg_gone') AS sessions,
       (SELECT count(*) FROM mnemo.messages WHERE session_id = 'pg_gone') AS messages,
       (SELECT count(*) FROM mnemo.message_parts WHERE session_id = 'pg_gone') AS parts,
       (SELECT count(*) FROM mnemo.context_items WHERE session_id = 'pg_gone') AS context_items,
       (SELECT count(*) FROM mnemo.summary_nodes WHERE session_id = 'pg_gone') AS summary_nodes;
SELECT mnemo.get_session('pg_gone');
SELECT mnemo.get_message('pg_gone', 'pg_m1');
-- other sessions keep their rows; a child keeps its (now dangling) parent_id
SELECT seq, id FROM mnemo.get_messages('pg_keep');
SELECT id, parent_id FROM mnemo.get_session('pg_child');
-- the id can be used again
SELECT id, last_seq FROM mnemo.create_session('pg_gone');
SELECT seq FROM mnemo.append_message('pg_gone', 'user', '[]', id => 'pg_m1');
-- a session without messages: 0
SELECT mnemo.purge_session('pg_child');
-- unknown session MN001, NULL 22004
SELECT mnemo.purge_session('pg_child');
SELECT mnemo.purge_session(NULL);
-- EXECUTE is revoked from PUBLIC (see test/pgtap for the SET ROLE test)
SELECT has_function_privilege('public', 'mnemo.purge_session(text)', 'EXECUTE') AS public_may_purge,
       has_function_privilege('public', 'mnemo.soft_delete_session(text)', 'EXECUTE') AS public_may_soft_delete;
