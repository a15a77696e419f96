--
-- runs: claim_run, complete_run, snapshot, and messages carrying their run
--
\set VERBOSITY terse

SELECT id FROM mnemo.create_session('rn');
-- a message without a run: in every snapshot
SELECT seq FROM mnemo.append_message('rn', 'system', '[{"type": "text", "text": "setup"}]');

-- claim: the run is in flight
SELECT session_id, run_id, completed_at IS NULL AS in_flight, completion_seq,
       tenant = current_user AS own_tenant
  FROM mnemo.claim_run('rn', 'run_a');
SELECT run_id FROM mnemo.claim_run('rn', 'run_b');

-- interleaved appends of two runs, one message and a batch
SELECT seq FROM mnemo.append_message('rn', 'user', '[{"type": "text", "text": "a1"}]', run_id => 'run_a');
SELECT seq FROM mnemo.append_message('rn', 'user', '[{"type": "text", "text": "b1"}]', run_id => 'run_b');
SELECT seq FROM mnemo.append_messages('rn', '[
  {"role": "assistant", "parts": [{"type": "text", "text": "a2"}], "run_id": "run_a"},
  {"role": "assistant", "parts": [{"type": "text", "text": "b2"}], "run_id": "run_b"}]');
SELECT seq, run_id FROM mnemo.get_messages('rn') ORDER BY seq;

-- a second claim of an in-flight run: MN007, of a completed one: MN008
SELECT mnemo.claim_run('rn', 'run_a');
\echo :LAST_ERROR_SQLSTATE

-- completion order is the order runs complete, not the order they were claimed
SELECT run_id, completion_seq, completed_at >= claimed_at AS after_claim
  FROM mnemo.complete_run('rn', 'run_b');
SELECT run_id, completion_seq FROM mnemo.complete_run('rn', 'run_a');
-- idempotent: the run as it completed, unchanged
SELECT completed_at AS a_completed_at FROM mnemo.runs WHERE session_id = 'rn' AND run_id = 'run_a' \gset
SELECT pg_sleep(0.002);
SELECT run_id, completion_seq, completed_at = :a_completed_at AS unchanged
  FROM mnemo.complete_run('rn', 'run_a');
SELECT mnemo.claim_run('rn', 'run_a');
\echo :LAST_ERROR_SQLSTATE
-- never claimed: MN009, nothing written
SELECT mnemo.complete_run('rn', 'run_never');
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) FROM mnemo.runs WHERE session_id = 'rn';

-- a third run, in flight, interleaved with a fourth that completes
SELECT run_id FROM mnemo.claim_run('rn', 'run_c');
SELECT run_id FROM mnemo.claim_run('rn', 'run_d');
SELECT seq FROM mnemo.append_message('rn', 'user', '[{"type": "text", "text": "c1"}]', run_id => 'run_c');
SELECT seq FROM mnemo.append_message('rn', 'user', '[{"type": "text", "text": "d1"}]', run_id => 'run_d');
SELECT seq FROM mnemo.append_message('rn', 'assistant', '[{"type": "text", "text": "free"}]');
SELECT run_id, completion_seq FROM mnemo.complete_run('rn', 'run_d');
-- a message naming a run that was never claimed belongs to no completed run
SELECT seq FROM mnemo.append_message('rn', 'user', '[{"type": "text", "text": "x1"}]', run_id => 'run_x');
-- and a summary is never part of a snapshot
SELECT seq FROM mnemo.append_message('rn', 'assistant', '[{"type": "text", "text": "summary"}]', is_summary => true);

-- snapshot after a run: no run, or completed at or before it; seq order
SELECT seq, run_id, parts->0->>'text' AS text FROM mnemo.snapshot('rn', 'run_b');
SELECT seq, run_id, parts->0->>'text' AS text FROM mnemo.snapshot('rn', 'run_a');
SELECT seq, run_id, parts->0->>'text' AS text FROM mnemo.snapshot('rn', 'run_d');
-- the rows are message_with_parts, as get_messages_with_parts gives them
SELECT (SELECT array_agg(s ORDER BY s.seq) FROM mnemo.snapshot('rn', 'run_d') s)
     = (SELECT array_agg(g ORDER BY g.seq) FROM mnemo.get_messages_with_parts('rn') g
         WHERE g.seq IN (1, 2, 3, 4, 5, 7, 8)) AS same_rows;
-- after the in-flight run completes, its messages join later snapshots
SELECT run_id, completion_seq FROM mnemo.complete_run('rn', 'run_c');
SELECT seq, run_id FROM mnemo.snapshot('rn', 'run_c');
SELECT count(*) FROM mnemo.snapshot('rn', 'run_d');

-- snapshot after a run that is not completed: MN010
SELECT run_id FROM mnemo.claim_run('rn', 'run_e');
SELECT * FROM mnemo.snapshot('rn', 'run_e');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mnemo.snapshot('rn', 'run_never');
\echo :LAST_ERROR_SQLSTATE

-- bad input
SELECT mnemo.claim_run('rn_missing', 'run_a');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.complete_run('rn_missing', 'run_a');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mnemo.snapshot('rn_missing', 'run_a');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.claim_run('rn', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.claim_run('rn', '');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.claim_run('rn', repeat('r', 257));
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.complete_run('rn', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mnemo.snapshot('rn', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT run_id, completion_seq IS NULL AS in_flight FROM mnemo.runs WHERE session_id = 'rn' ORDER BY run_id;

-- a failed claim in a transaction leaves nothing; a rolled-back claim frees the id
BEGIN;
SELECT run_id FROM mnemo.claim_run('rn', 'run_f');
ROLLBACK;
SELECT run_id FROM mnemo.claim_run('rn', 'run_f');

-- runs are per session: the same id in another session is another run
SELECT id FROM mnemo.create_session('rn_other');
SELECT session_id, run_id, completion_seq FROM mnemo.claim_run('rn_other', 'run_a');
SELECT session_id, run_id, completion_seq FROM mnemo.complete_run('rn_other', 'run_a');

-- an inactive session takes no claim or completion (MN012); snapshots still read
SELECT run_id FROM mnemo.claim_run('rn_other', 'run_g');
SELECT mnemo.soft_delete_session('rn_other');
SELECT mnemo.claim_run('rn_other', 'run_h');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.complete_run('rn_other', 'run_g');
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) FROM mnemo.snapshot('rn_other', 'run_a');
SELECT mnemo.purge_session('rn_other');
SELECT count(*) FROM mnemo.runs WHERE session_id = 'rn_other';
