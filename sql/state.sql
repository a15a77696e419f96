--
-- state: update_state, get_state
--
\set VERBOSITY terse

SELECT id FROM mnemo.create_session('st');

-- a new session's state is {}
SELECT mnemo.get_state('st');

-- a patch merges its top-level keys and returns the merged state
SELECT mnemo.update_state('st', '{"mood": "calm", "topic": "billing"}');
SELECT mnemo.update_state('st', '{"mood": "frustrated", "last_intent": "complaint"}');
-- a nested object is replaced whole, a JSON null is kept as a value
SELECT mnemo.update_state('st', '{"profile": {"name": "Ada", "plan": "pro"}}');
SELECT mnemo.update_state('st', '{"profile": {"plan": "free"}, "topic": null}');
SELECT mnemo.get_state('st');
-- an empty patch changes nothing
SELECT mnemo.update_state('st', '{}') = mnemo.get_state('st') AS unchanged;
-- the state is the session's
SELECT state = mnemo.get_state('st') AS same FROM mnemo.get_session('st');

-- update_state moves updated_at
SELECT updated_at AS before FROM mnemo.sessions WHERE id = 'st' \gset
SELECT pg_sleep(0.002);
SELECT mnemo.update_state('st', '{"n": 1}') ->> 'n' AS n;
SELECT updated_at > :before AS touched FROM mnemo.sessions WHERE id = 'st';

-- bad input: each a clear error, the state unchanged
SELECT mnemo.get_state('st') AS before_bad \gset
SELECT mnemo.update_state('st', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.update_state('st', '[1, 2]');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.update_state('st', '42');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.update_state('st', 'null');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.update_state('st', '{bad');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.update_state('st', ('{"deep": ' || repeat('[', 600) || repeat(']', 600) || '}')::jsonb);
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.update_state('st_missing', '{"a": 1}');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.get_state('st_missing');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.update_state(NULL, '{"a": 1}');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.get_state('st') = :'before_bad'::jsonb AS unchanged;

-- an inactive session's state stays readable and takes no patch
SELECT mnemo.soft_delete_session('st');
SELECT mnemo.update_state('st', '{"late": true}');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.get_state('st') ? 'late' AS patched;
