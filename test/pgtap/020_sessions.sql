-- 020_sessions: session lifecycle, its errors with exact SQLSTATEs, and
-- purge_session's privilege under SET ROLE to non-superuser roles.
BEGIN;
SELECT plan(54);

--
-- create / get / get_or_create
--
SELECT lives_ok($$ SELECT mnemo.create_session('tap_s1', model_id => 'm', title => 't') $$,
                'create_session with a caller id');
SELECT results_eq($$ SELECT id, model_id, provider_id, agent, title, is_active, metadata, system_prompt,
                            last_seq FROM mnemo.get_session('tap_s1') $$,
                  $$ VALUES ('tap_s1', 'm', '', 'default', 't', true, NULL::jsonb, '', 0::bigint) $$,
                  'get_session returns the stored row with its defaults');
SELECT matches((mnemo.create_session()).id, '^sess_[0-9A-HJKMNP-TV-Z]{26}$', 'a NULL id makes a sess_ id');
SELECT throws_ok($$ SELECT mnemo.create_session('tap_s1') $$, 'MN004',
                 'session "tap_s1" already exists', 'duplicate session id: MN004');
SELECT throws_ok($$ SELECT mnemo.create_session('tap_s2', parent_id => 'tap_missing') $$, 'MN001',
                 'session "tap_missing" does not exist', 'missing parent: MN001');
SELECT throws_ok($$ SELECT mnemo.create_session('tap_s2', metadata => '[1]') $$, '22023', NULL,
                 'metadata that is not an object: 22023');
SELECT throws_ok($$ SELECT mnemo.create_session('') $$, '22023', NULL, 'empty session id: 22023');
SELECT throws_ok($$ SELECT mnemo.create_session(repeat('x', 257)) $$, '22023', NULL, 'session id over 256 bytes: 22023');
SELECT throws_ok($$ SELECT mnemo.get_session('tap_missing') $$, 'MN001',
                 'session "tap_missing" does not exist', 'get_session of an unknown id: MN001');
SELECT throws_ok($$ SELECT mnemo.get_session(NULL) $$, '22004', NULL, 'get_session(NULL): 22004');
SELECT is((mnemo.get_or_create_session('tap_s1', model_id => 'other', title => 'other')).title, 't',
          'get_or_create_session returns an existing session unchanged');
SELECT is((mnemo.get_or_create_session('tap_s3', title => 'new')).title, 'new',
          'get_or_create_session creates a missing session from its arguments');
SELECT throws_ok($$ SELECT mnemo.get_or_create_session(NULL) $$, '22004', NULL, 'get_or_create_session(NULL): 22004');

--
-- list_sessions
--
SELECT lives_ok($$ SELECT mnemo.create_session('tap_c' || g, parent_id => 'tap_s1') FROM generate_series(1, 3) AS g $$,
                'three children');
SELECT is((SELECT count(*) FROM mnemo.list_sessions('tap_s1')), 3::bigint, 'list_sessions filters by parent');
SELECT is((SELECT count(*) FROM mnemo.list_sessions('tap_s1', true, 2, 0)), 2::bigint, 'limit');
SELECT is((SELECT count(*) FROM mnemo.list_sessions('tap_s1', true, 2, 2)), 1::bigint, 'offset');
SELECT throws_ok($$ SELECT * FROM mnemo.list_sessions("limit" => -1) $$, '22023', NULL, 'negative limit: 22023');
SELECT throws_ok($$ SELECT * FROM mnemo.list_sessions("offset" => -1) $$, '22023', NULL, 'negative offset: 22023');

--
-- soft_delete_session
--
SELECT lives_ok($$ SELECT mnemo.append_message('tap_c1', 'user', '[]', id => 'tap_c1_m1') $$, 'append before soft delete');
SELECT lives_ok($$ SELECT mnemo.soft_delete_session('tap_c1') $$, 'soft_delete_session');
SELECT is((SELECT count(*) FROM mnemo.list_sessions('tap_s1')), 2::bigint, 'a soft-deleted session is not listed as active');
SELECT throws_ok($$ SELECT mnemo.append_message('tap_c1', 'user', '[]') $$, 'MN012',
                 'session "tap_c1" is inactive', 'append to a soft-deleted session: MN012');
SELECT is((SELECT count(*) FROM mnemo.get_messages('tap_c1')), 1::bigint, 'a soft-deleted session stays readable');
SELECT throws_ok($$ SELECT mnemo.soft_delete_session('tap_missing') $$, 'MN001', NULL, 'soft delete of an unknown id: MN001');

--
-- purge_session: revoked from PUBLIC; an eraser role is granted EXECUTE on
-- it and must have the privileges of the tenant of what it purges
--
-- an application role (a tenant) set up as doc/security.md says
CREATE ROLE tap_mnemo_app NOLOGIN;
GRANT USAGE ON SCHEMA mnemo TO tap_mnemo_app;
GRANT SELECT ON ALL TABLES IN SCHEMA mnemo TO tap_mnemo_app;
-- the erasure role: EXECUTE on purge_session and a member of the tenant role;
-- and one with EXECUTE but not a member
CREATE ROLE tap_mnemo_eraser NOLOGIN;
GRANT USAGE ON SCHEMA mnemo TO tap_mnemo_eraser;
GRANT EXECUTE ON FUNCTION mnemo.purge_session(text) TO tap_mnemo_eraser;
GRANT tap_mnemo_app TO tap_mnemo_eraser;
CREATE ROLE tap_mnemo_half NOLOGIN;
GRANT USAGE ON SCHEMA mnemo TO tap_mnemo_half;
GRANT EXECUTE ON FUNCTION mnemo.purge_session(text) TO tap_mnemo_half;
-- pgTAP records results in temp objects owned by the test's user
GRANT ALL ON __tcache__ TO tap_mnemo_app, tap_mnemo_eraser, tap_mnemo_half;
GRANT ALL ON SEQUENCE __tcache___id_seq, __tresults___numb_seq TO tap_mnemo_app, tap_mnemo_eraser, tap_mnemo_half;

SELECT function_privs_are('mnemo', 'purge_session', ARRAY['text'], 'tap_mnemo_app', ARRAY[]::text[],
                          'the application role may not execute purge_session');
SELECT function_privs_are('mnemo', 'purge_session', ARRAY['text'], 'tap_mnemo_eraser', ARRAY['EXECUTE'],
                          'the erasure role may execute purge_session');
SELECT ok(NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname IN ('tap_mnemo_app', 'tap_mnemo_eraser', 'tap_mnemo_half')
                                               AND (rolsuper OR rolbypassrls)),
          'the test roles are not superusers');

SET ROLE tap_mnemo_app;
SELECT lives_ok($$ SELECT mnemo.create_session('tap_p1'); SELECT mnemo.append_message('tap_p1', 'user', '[{"type": "text", "text": "x"}]') $$,
                'a session to purge, of the tenant tap_mnemo_app');
SELECT throws_ok($$ SELECT mnemo.purge_session('tap_p1') $$, '42501', NULL,
                 'purge_session without the grant: 42501');
RESET ROLE;
SET ROLE tap_mnemo_half;
SELECT throws_ok($$ SELECT mnemo.purge_session('tap_p1') $$, 'MN001', NULL,
                 'purge_session of a tenant whose privileges the caller lacks: MN001, as a missing session');
RESET ROLE;
SELECT is((SELECT count(*) FROM mnemo.messages WHERE session_id = 'tap_p1'), 1::bigint, 'the refused purges deleted nothing');
SET ROLE tap_mnemo_eraser;
SELECT is(mnemo.purge_session('tap_p1'), 1::bigint, 'the erasure role purges a session of its tenant');
SELECT throws_ok($$ SELECT mnemo.purge_session('tap_p1') $$, 'MN001', NULL, 'purging it again: MN001');
RESET ROLE;
SELECT is((SELECT count(*) FROM mnemo.sessions WHERE id = 'tap_p1')
          + (SELECT count(*) FROM mnemo.messages WHERE session_id = 'tap_p1')
          + (SELECT count(*) FROM mnemo.message_parts WHERE session_id = 'tap_p1')
          + (SELECT count(*) FROM mnemo.context_items WHERE session_id = 'tap_p1'), 0::bigint,
          'no row of the purged session is left');

-- restoring a session and its checkpoints (a transcript import): the
-- session's created time, checkpoints at their own seq and time
SELECT is((mnemo.create_session('tap_r1', created_at => 1700000000123)).created_at, 1700000000123::bigint,
          'create_session keeps a given created_at');
SELECT ok((SELECT updated_at FROM mnemo.get_session('tap_r1')) > extract(epoch FROM now()) * 1000 - 600000,
          'and its updated_at is the time of the write, so "last written" sorts an import first');
SELECT throws_ok($$ SELECT mnemo.create_session('tap_r2', created_at => -1) $$, '22023', NULL,
                 'a negative created_at: 22023');
SELECT ok((mnemo.create_session('tap_r3')).created_at > 1700000000123, 'a NULL created_at is now');
SELECT lives_ok($$ SELECT mnemo.append_messages('tap_r1', '[{"role": "user", "parts": [{"type": "text", "text": "a"}]},
                                                        {"role": "assistant", "parts": [{"type": "text", "text": "b"}]},
                                                        {"role": "user", "parts": [{"type": "text", "text": "c"}]}]') $$,
                'three messages in tap_r1');
SELECT is((SELECT (c.seq, c.created_at, c.auto)::text FROM mnemo.add_checkpoint('tap_r1', 'tap_at2', true, 2, 1700000000500) c),
          '(2,1700000000500,t)', 'add_checkpoint at an earlier seq and a given time');
SELECT is((SELECT c.seq FROM mnemo.add_checkpoint('tap_r1', 'tap_at0', false, 0) c), 0::bigint,
          'a checkpoint at seq 0 (before the first message)');
SELECT is((SELECT c.seq FROM mnemo.add_checkpoint('tap_r1', 'tap_end') c), 3::bigint,
          'without a seq: the session''s end');
SELECT throws_ok($$ SELECT mnemo.add_checkpoint('tap_r1', 'tap_past', false, 4) $$, '22023',
                 'checkpoint "tap_past" at seq 4 is past the end of session "tap_r1" (seq 3)',
                 'a seq past the end: 22023, naming both');
SELECT throws_ok($$ SELECT mnemo.add_checkpoint('tap_r1', 'tap_neg', false, 1, -5) $$, '22023', NULL,
                 'a negative created_at: 22023');
SELECT is((SELECT string_agg(label, ',') FROM mnemo.list_checkpoints('tap_r1')), 'tap_at0,tap_at2,tap_end',
          'the refused ones wrote nothing; the list is in seq order');

-- and a summary committed again with its own time and part ids
SELECT throws_ok($$ SELECT mnemo.commit_summary('tap_r1', 'tap_sum', 'x', 1,
                        ARRAY(SELECT id FROM mnemo.messages WHERE session_id = 'tap_r1' AND seq <= 2),
                        part_ids => ARRAY['tap_p1']) $$, '22023',
                 'part_ids must name the summary''s two parts: its text and its compaction marker',
                 'commit_summary with one part id: 22023');
SELECT throws_ok($$ SELECT mnemo.commit_summary('tap_r1', 'tap_sum', 'x', 1,
                        ARRAY(SELECT id FROM mnemo.messages WHERE session_id = 'tap_r1' AND seq <= 2),
                        created_at => -1) $$, '22023', NULL, 'commit_summary with a negative created_at: 22023');
SELECT throws_ok($$ SELECT mnemo.commit_summary('tap_r1', 'tap_sum', 'x', 1,
                        ARRAY(SELECT id FROM mnemo.messages WHERE session_id = 'tap_r1' AND seq <= 2),
                        metadata => '[1]') $$, '22023', 'metadata must be a JSON object',
                 'commit_summary with metadata that is not an object: 22023');
SELECT is((SELECT count(*) FROM mnemo.messages WHERE session_id = 'tap_r1' AND is_summary), 0::bigint,
          'the refused commits wrote no summary');
SELECT lives_ok($$ SELECT mnemo.commit_summary('tap_r1', 'tap_sum', 'the first two', 3,
                        ARRAY(SELECT id FROM mnemo.messages WHERE session_id = 'tap_r1' AND seq <= 2),
                        created_at => 1700000000900, part_ids => ARRAY['tap_sum_text', 'tap_sum_marker'],
                        metadata => '{"tokensBefore": 21450, "details": {"readFiles": ["a.ts"]}}') $$,
                'commit_summary with created_at, part_ids and metadata');
SELECT is((SELECT content - 'id' - 'type' - 'token_estimate' FROM mnemo.message_parts
           WHERE session_id = 'tap_r1' AND id = 'tap_sum_text'),
          '{"text": "the first two", "metadata": {"details": {"readFiles": ["a.ts"]}, "tokensBefore": 21450}}'::jsonb,
          'the metadata is kept in its text part');
SELECT is((SELECT created_at FROM mnemo.messages WHERE session_id = 'tap_r1' AND id = 'tap_sum'), 1700000000900::bigint,
          'the summary message has the given time');
SELECT is((SELECT string_agg(id || ':' || part_type, ',' ORDER BY part_index) FROM mnemo.message_parts
           WHERE session_id = 'tap_r1'
             AND seq = (SELECT seq FROM mnemo.messages WHERE session_id = 'tap_r1' AND id = 'tap_sum')),
          'tap_sum_text:text,tap_sum_marker:compaction_marker', 'and its parts the given ids');

SELECT * FROM finish();
ROLLBACK;
