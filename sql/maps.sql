--
-- maps: create_map, claim_map_items, complete_map_item, fail_map_item,
-- map_status, map_results, list_maps, and their notifications
--
\set VERBOSITY sqlstate

SELECT id FROM mnemo.create_session('mp');
SELECT mnemo.watch('mp') AS channel \gset
LISTEN :"channel";

-- a map of three items, inserted in one statement; map_started on the feed
\o | sed -e 's/PID [0-9]*/PID N/' -e 's/mnemo_[0-9a-f]\{32\}/mnemo_CHANNEL/'
SELECT session_id, map_id, kind, template, schema, options, item_count, finished,
       completed_at IS NULL AS open, tenant = current_user AS own_tenant
  FROM mnemo.create_map('mp', 'm1', '["a", {"x": 1}, 3]', 'Say {{ item }}',
                        '{"type": "object"}', '{"concurrency": 2}');
\o
SELECT ordinal, item, state, claims, lease_holder, result, completion_seq
  FROM mnemo.map_items WHERE session_id = 'mp' AND map_id = 'm1' ORDER BY ordinal;
SELECT kind, items, done, failed, in_flight, pending, completed_at FROM mnemo.map_status('mp', 'm1');

-- two claimants: the first gets items 0 and 1, the second only what is left
SELECT ordinal, state, claims, lease_holder, lease_expires > created_at AS leased
  FROM mnemo.claim_map_items('mp', 'm1', 'w1', 2, 60000) i, mnemo.maps m
 WHERE m.session_id = 'mp' AND m.map_id = 'm1' ORDER BY ordinal;
SELECT ordinal, lease_holder FROM mnemo.claim_map_items('mp', 'm1', 'w2', 5, 60000);
SELECT count(*) AS nothing_left FROM mnemo.claim_map_items('mp', 'm1', 'w3', 5, 60000);
SELECT items, done, failed, in_flight, pending FROM mnemo.map_status('mp', 'm1');

-- only the holder records an outcome
SELECT mnemo.complete_map_item('mp', 'm1', 0, 'w2', '{"ok": true}') IS NULL AS not_holder;
\o | sed -e 's/PID [0-9]*/PID N/' -e 's/mnemo_[0-9a-f]\{32\}/mnemo_CHANNEL/'
SELECT mnemo.complete_map_item('mp', 'm1', 1, 'w1', '{"n": 1}', 2) AS completion_seq;
\o
-- exactly once: a second record of the same item is refused
SELECT mnemo.complete_map_item('mp', 'm1', 1, 'w1', '{"n": 2}') IS NULL AS again;
SELECT mnemo.fail_map_item('mp', 'm1', 1, 'w1', 'timeout', 'late') IS NULL AS fail_after_done;

-- an expired lease: the item goes back to the pool and another worker takes it
UPDATE mnemo.map_items SET lease_expires = 0 WHERE session_id = 'mp' AND map_id = 'm1' AND ordinal = 0;
SELECT items, done, failed, in_flight, pending FROM mnemo.map_status('mp', 'm1');
SELECT ordinal, lease_holder, claims FROM mnemo.claim_map_items('mp', 'm1', 'w3', 5, 60000);
-- the old holder's late result is dropped
SELECT mnemo.complete_map_item('mp', 'm1', 0, 'w1', '{"late": true}') IS NULL AS old_holder;
\o | sed -e 's/PID [0-9]*/PID N/' -e 's/mnemo_[0-9a-f]\{32\}/mnemo_CHANNEL/'
SELECT mnemo.fail_map_item('mp', 'm1', 0, 'w3', 'schema_error', 'missing "x"', 3) AS completion_seq;
\o
-- a holder whose lease expired but that nobody took over still records it;
-- the last item completes the map
UPDATE mnemo.map_items SET lease_expires = 0 WHERE session_id = 'mp' AND map_id = 'm1' AND ordinal = 2;
\o | sed -e 's/PID [0-9]*/PID N/' -e 's/mnemo_[0-9a-f]\{32\}/mnemo_CHANNEL/'
SELECT mnemo.complete_map_item('mp', 'm1', 2, 'w2', '"three"', 1, 'mp_sub2') AS completion_seq;
\o
SELECT items, done, failed, in_flight, pending, completed_at IS NOT NULL AS completed
  FROM mnemo.map_status('mp', 'm1');
SELECT finished, completed_at IS NOT NULL AS completed FROM mnemo.maps WHERE session_id = 'mp' AND map_id = 'm1';

-- results in completion order, queryable in SQL
SELECT completion_seq, ordinal, item, state, result, error_kind, error, attempts, sub_session_id,
       lease_holder, claims
  FROM mnemo.map_results('mp', 'm1');
SELECT count(*) AS claims_after_completion FROM mnemo.claim_map_items('mp', 'm1', 'w4');
SELECT map_id, kind, item_count FROM mnemo.list_maps('mp');

-- errors, nothing written by any of them
SELECT mnemo.create_map('mp', 'm1', '[1]', 'x {{ item }}');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.create_map('mp', 'm2', '[]', 'x {{ item }}');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.create_map('mp', 'm2', '{"a": 1}', 'x {{ item }}');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.create_map('mp', 'm2', '[1]', '');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.create_map('mp', 'm2', '[1]', 'x', '[1]');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.create_map('mp', 'm2', '[1]', 'x', NULL, '[]');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.create_map('mp', 'm2', '[1]', 'x', kind => 'batch');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.create_map('mp', '', '[1]', 'x');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.create_map('mp', 'm2', NULL, 'x');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.create_map('mp_none', 'm2', '[1]', 'x');
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS no_m2 FROM mnemo.maps WHERE map_id = 'm2';
SELECT mnemo.claim_map_items('mp', 'nope', 'w1');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.claim_map_items('mp', 'm1', 'w1', 0);
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.claim_map_items('mp', 'm1', 'w1', 1, 0);
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.claim_map_items('mp', 'm1', '', 1);
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.complete_map_item('mp', 'nope', 0, 'w1', '1');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.complete_map_item('mp', 'm1', 0, 'w1', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.complete_map_item('mp', 'm1', 0, 'w1', '1', -1);
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.fail_map_item('mp', 'm1', 0, 'w1', 'oops', 'x');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.map_status('mp', 'nope');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.map_results('mp_none', 'm1');
\echo :LAST_ERROR_SQLSTATE
SELECT mnemo.list_maps('mp_none');
\echo :LAST_ERROR_SQLSTATE
-- an inactive session takes no new map, but its maps stay readable
SELECT mnemo.soft_delete_session('mp');
SELECT mnemo.create_map('mp', 'm3', '[1]', 'x');
\echo :LAST_ERROR_SQLSTATE
SELECT items, done, failed FROM mnemo.map_status('mp', 'm1');

-- purge_session removes the maps with the session
SELECT id FROM mnemo.create_session('mp_purge');
SELECT map_id FROM mnemo.create_map('mp_purge', 'pm', '[1, 2]', 'x {{ item }}');
SELECT mnemo.purge_session('mp_purge');
SELECT (SELECT count(*) FROM mnemo.maps WHERE session_id = 'mp_purge') AS maps,
       (SELECT count(*) FROM mnemo.map_items WHERE session_id = 'mp_purge') AS items;
UNLISTEN *;
