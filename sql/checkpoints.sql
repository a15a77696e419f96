--
-- checkpoints: add_checkpoint, list_checkpoints
--
\set VERBOSITY terse

SELECT id FROM mnemo.create_session('cp');

-- an empty session: the checkpoint is at seq 0
SELECT session_id, label, seq, auto FROM mnemo.add_checkpoint('cp', 'start');

SELECT seq FROM mnemo.append_message('cp', 'user', '[{"type": "text", "text": "one"}]');
SELECT seq FROM mnemo.append_message('cp', 'assistant', '[{"type": "text", "text": "two"}]');
-- at the current end; auto defaults to false, the runtime passes true
SELECT label, seq, auto, tenant = current_user AS own_tenant,
       abs(created_at - extract(epoch FROM clock_timestamp()) * 1000) < 60000 AS created_now
  FROM mnemo.add_checkpoint('cp', 'turn-2', true);
SELECT pg_sleep(0.002);
SELECT label, seq, auto FROM mnemo.add_checkpoint('cp', 'after two');
SELECT seq FROM mnemo.append_message('cp', 'user', '[{"type": "text", "text": "three"}]');
-- a summary message ends the log too
SELECT seq FROM mnemo.append_message('cp', 'assistant', '[{"type": "text", "text": "sum"}]', is_summary => true);
SELECT label, seq FROM mnemo.add_checkpoint('cp', 'after summary');

-- listed in log order, then in the order they were added (by time)
SELECT label, seq, auto FROM mnemo.list_checkpoints('cp');

-- labels are unique per session: MN004, and nothing is written
SELECT mnemo.add_checkpoint('cp', 'turn-2');
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) FROM mnemo.checkpoints WHERE session_id = 'cp';
-- the same label in another session is another checkpoint
SELECT id FROM mnemo.create_session('cp_other');
SELECT session_id, label, seq FROM mnemo.add_checkpoint('cp_other', 'turn-2');

-- bad input
SELECT mnemo.add_checkpoint('cp_missing', 'x');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mnemo.list_checkpoints('cp_missing');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.add_checkpoint('cp', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.add_checkpoint(NULL, 'x');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.add_checkpoint('cp', 'x', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.add_checkpoint('cp', '');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.add_checkpoint('cp', repeat('x', 257));
\echo :LAST_ERROR_SQLSTATE
-- labels fork_session would read as a seq or a run
SELECT mnemo.add_checkpoint('cp', '2');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.add_checkpoint('cp', '007');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.add_checkpoint('cp', 'run:r1');
\echo :LAST_ERROR_SQLSTATE
SELECT label FROM mnemo.add_checkpoint('cp', '2b');
SELECT count(*) FROM mnemo.checkpoints WHERE session_id = 'cp';

-- a soft-deleted session keeps its checkpoints and takes no new one
SELECT mnemo.soft_delete_session('cp_other');
SELECT mnemo.add_checkpoint('cp_other', 'late');
\echo :LAST_ERROR_SQLSTATE
SELECT label FROM mnemo.list_checkpoints('cp_other');

-- purge_session removes them with the session
SELECT mnemo.purge_session('cp_other');
SELECT count(*) FROM mnemo.checkpoints WHERE session_id = 'cp_other';
