--
-- pending: set_pending_request, clear_pending_request, load_pending_request
--
\set VERBOSITY terse

SELECT id FROM mnemo.create_session('hl');

-- none pending: NULL, not an error
SELECT mnemo.load_pending_request('hl') IS NULL AS none_pending;

-- set with its run; load returns both together
SELECT mnemo.set_pending_request('hl', '{"kind": "approve", "tool": "rm", "args": {"path": "/tmp/x"}}', 'run_1');
SELECT session_id, request, run_id, tenant = current_user AS own_tenant
  FROM mnemo.load_pending_request('hl');

-- setting again replaces request and run id at once; without a run id the
-- old one does not linger
SELECT mnemo.set_pending_request('hl', '{"kind": "input", "prompt": "name?"}');
SELECT request, run_id FROM mnemo.load_pending_request('hl');
SELECT mnemo.set_pending_request('hl', '{"kind": "input", "prompt": "age?"}', run_id => 'run_2');
SELECT request, run_id FROM mnemo.load_pending_request('hl');
SELECT count(*) FROM mnemo.pending_requests WHERE session_id = 'hl';

-- clear: true when one was pending, then false
SELECT mnemo.clear_pending_request('hl');
SELECT mnemo.clear_pending_request('hl');
SELECT mnemo.load_pending_request('hl') IS NULL AS none_pending;

-- bad input: each a clear error, nothing written
SELECT mnemo.set_pending_request('hl', NULL, 'run_3');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.set_pending_request('hl', '["not", "an", "object"]');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.set_pending_request('hl', '"text"');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.set_pending_request('hl', '{"a": 1}', '');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.set_pending_request('hl', '{not json}');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.set_pending_request('hl', ('{"deep": ' || repeat('[', 600) || repeat(']', 600) || '}')::jsonb);
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.set_pending_request('hl_missing', '{"a": 1}');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.load_pending_request('hl_missing');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.clear_pending_request('hl_missing');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.set_pending_request(NULL, '{"a": 1}');
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) FROM mnemo.pending_requests WHERE session_id = 'hl';

-- an inactive session keeps its request readable and takes no new one
SELECT mnemo.set_pending_request('hl', '{"kind": "last"}', 'run_9');
SELECT mnemo.soft_delete_session('hl');
SELECT mnemo.set_pending_request('hl', '{"kind": "later"}');
\echo :LAST_ERROR_SQLSTATE
SELECT request, run_id FROM mnemo.load_pending_request('hl');
SELECT mnemo.purge_session('hl');
SELECT count(*) FROM mnemo.pending_requests WHERE session_id = 'hl';
