-- pgbench script for test/concurrency.sh: every client appends to ONE session.
SELECT mnemo.append_message('conc_one', 'user',
       jsonb_build_array(jsonb_build_object('type', 'text', 'text', 'hello from client ' || :client_id)));
