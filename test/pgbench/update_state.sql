-- pgbench script for test/concurrency.sh: every client merges a patch with a
-- key of its own (from a sequence) into the state of ONE session.
SELECT mnemo.update_state('conc_state', jsonb_build_object('k' || nextval('conc_state_keys'), (:client_id)::int));
