-- pgbench script for test/concurrency.sh: each client appends to its own session conc_<client_id>.
SELECT mnemo.append_message('conc_' || :client_id, 'user',
       jsonb_build_array(jsonb_build_object('type', 'text', 'text', 'hello from client ' || :client_id)));
