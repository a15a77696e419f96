-- 080_tenancy: the role matrix.  Two tenant roles (tap_ta, tap_tb) with the
-- grants doc/security.md gives an application role, an eraser for tap_ta and
-- a pooled role that is a member of both, under SET ROLE: for every function
-- and every table, what each can and cannot do.  Reads see only the caller's
-- tenants, through the functions; the tables themselves are closed to
-- application roles (no SELECT, so no EXPLAIN ANALYZE counter, lock or
-- statistic of another tenant's rows); every function acting on another
-- tenant's session fails as for a missing one (MN001) and changes nothing;
-- direct reads, writes and locks are 42501;
-- purge needs the grant and the tenant; mnemo.tenant is honoured only for a
-- role the caller has the privileges of.
BEGIN;
SELECT plan(248);

-- the grants of doc/security.md, verbatim
CREATE ROLE tap_ta NOLOGIN;
CREATE ROLE tap_tb NOLOGIN;
GRANT USAGE ON SCHEMA mnemo TO tap_ta, tap_tb;
CREATE ROLE tap_eraser NOLOGIN;
GRANT USAGE ON SCHEMA mnemo TO tap_eraser;
GRANT EXECUTE ON FUNCTION mnemo.purge_session(text) TO tap_eraser;
GRANT tap_ta TO tap_eraser;
CREATE ROLE tap_pool NOLOGIN;
GRANT tap_ta, tap_tb TO tap_pool;
-- pgTAP records results in temp objects owned by the test's user
GRANT ALL ON __tcache__ TO tap_ta, tap_tb, tap_eraser, tap_pool;
GRANT ALL ON SEQUENCE __tcache___id_seq, __tresults___numb_seq TO tap_ta, tap_tb, tap_eraser, tap_pool;
SELECT ok(NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname LIKE 'tap\_%' AND rolname IN
                      ('tap_ta', 'tap_tb', 'tap_eraser', 'tap_pool') AND (rolsuper OR rolbypassrls)),
          'the test roles are neither superusers nor BYPASSRLS');

--
-- each tenant writes its own session through the functions
--
SET ROLE tap_ta;
SELECT lives_ok($$
    SELECT mnemo.create_session('ta_s', title => 'A', system_prompt => 'secret of A');
    SELECT mnemo.append_messages('ta_s', '[
        {"id": "ta_m1", "role": "user", "parts": [{"type": "text", "id": "ta_p1", "text": "alpha secret"}]},
        {"id": "ta_m2", "role": "assistant", "parts": [{"type": "tool", "id": "ta_t1", "tool_name": "ls",
            "tool_call_id": "c1", "tool_state": "completed", "output": "a.txt"}]},
        {"id": "ta_m3", "role": "user", "parts": [{"type": "text", "text": "more"}]}]');
    SELECT mnemo.commit_summary('ta_s', 'ta_sum', 'summary of A', 3, ARRAY['ta_m1']);
    SELECT mnemo.store_file_reference('sha256:shared', '/a.txt', exploration_summary => 'A''s file') $$,
    'tap_ta writes its session, a summary and a file reference');
SELECT lives_ok($$
    SELECT mnemo.add_checkpoint('ta_s', 'ta_cp');
    SELECT mnemo.claim_run('ta_s', 'ta_r1');
    SELECT mnemo.complete_run('ta_s', 'ta_r1');
    SELECT mnemo.claim_run('ta_s', 'ta_r2');
    SELECT mnemo.set_pending_request('ta_s', '{"q": "A?"}', 'ta_r2');
    SELECT mnemo.update_state('ta_s', '{"a": 1}');
    SELECT mnemo.create_map('ta_s', 'ta_map', '["x", "y"]', 'say {{ item }}');
    SELECT mnemo.claim_map_items('ta_s', 'ta_map', 'ta_worker') $$,
    'tap_ta adds a checkpoint, runs, a pending request, state and a map to its session');
RESET ROLE;
SET ROLE tap_tb;
SELECT lives_ok($$
    SELECT mnemo.create_session('tb_s', title => 'B');
    SELECT mnemo.append_message('tb_s', 'user', '[{"type": "text", "text": "beta"}]', id => 'tb_m1');
    SELECT mnemo.store_file_reference('sha256:shared', '/b.txt', exploration_summary => 'B''s file') $$,
    'tap_tb writes its own, and a file reference with the same content id');
RESET ROLE;

SELECT is((SELECT string_agg(DISTINCT tenant, ',') FROM (
              SELECT tenant FROM mnemo.sessions WHERE id = 'ta_s'
              UNION ALL SELECT tenant FROM mnemo.messages WHERE session_id = 'ta_s'
              UNION ALL SELECT tenant FROM mnemo.message_parts WHERE session_id = 'ta_s'
              UNION ALL SELECT tenant FROM mnemo.context_items WHERE session_id = 'ta_s'
              UNION ALL SELECT tenant FROM mnemo.summary_nodes WHERE session_id = 'ta_s'
              UNION ALL SELECT tenant FROM mnemo.summary_edges WHERE session_id = 'ta_s'
              UNION ALL SELECT tenant FROM mnemo.checkpoints WHERE session_id = 'ta_s'
              UNION ALL SELECT tenant FROM mnemo.runs WHERE session_id = 'ta_s'
              UNION ALL SELECT tenant FROM mnemo.pending_requests WHERE session_id = 'ta_s'
              UNION ALL SELECT tenant FROM mnemo.maps WHERE session_id = 'ta_s'
              UNION ALL SELECT tenant FROM mnemo.map_items WHERE session_id = 'ta_s') t), 'tap_ta',
          'every row of ta_s, in every table, carries the tenant tap_ta (read as the superuser)');
SELECT is((SELECT count(*) FROM mnemo.context_items WHERE session_id = 'ta_s' AND item_type = 'summary'), 1::bigint,
          'the summary''s context item is among them');
SELECT is((SELECT count(*) FROM mnemo.file_references WHERE content_id = 'sha256:shared'), 2::bigint,
          'one file reference per tenant for the same content');

-- a fingerprint of every row of tap_ta, to show the failures below changed nothing
CREATE FUNCTION pg_temp.rows_of_a() RETURNS text LANGUAGE sql AS $$
    SELECT md5(concat_ws('#',
        (SELECT string_agg(s::text, '|') FROM mnemo.sessions s WHERE tenant = 'tap_ta'),
        (SELECT string_agg(m::text, '|' ORDER BY seq) FROM mnemo.messages m WHERE tenant = 'tap_ta'),
        (SELECT string_agg(p::text, '|' ORDER BY session_id, seq, part_index) FROM mnemo.message_parts p WHERE tenant = 'tap_ta'),
        (SELECT string_agg(c::text, '|' ORDER BY position) FROM mnemo.context_items c WHERE tenant = 'tap_ta'),
        (SELECT string_agg(n::text, '|') FROM mnemo.summary_nodes n WHERE tenant = 'tap_ta'),
        (SELECT string_agg(e::text, '|' ORDER BY ordinal) FROM mnemo.summary_edges e WHERE tenant = 'tap_ta'),
        (SELECT string_agg(f::text, '|') FROM mnemo.file_references f WHERE tenant = 'tap_ta'),
        (SELECT string_agg(c::text, '|' ORDER BY label) FROM mnemo.checkpoints c WHERE tenant = 'tap_ta'),
        (SELECT string_agg(r::text, '|' ORDER BY run_id) FROM mnemo.runs r WHERE tenant = 'tap_ta'),
        (SELECT string_agg(h::text, '|') FROM mnemo.pending_requests h WHERE tenant = 'tap_ta'),
        (SELECT string_agg(mp::text, '|' ORDER BY map_id) FROM mnemo.maps mp WHERE tenant = 'tap_ta'),
        (SELECT string_agg(mi::text, '|' ORDER BY map_id, ordinal) FROM mnemo.map_items mi WHERE tenant = 'tap_ta')))
$$;
CREATE TEMP TABLE before_a AS SELECT pg_temp.rows_of_a() AS rows;
-- how many plan nodes of q's EXPLAIN ANALYZE name a relation (run as the caller)
CREATE FUNCTION pg_temp.plan_relations(q text) RETURNS int LANGUAGE plpgsql AS $$
DECLARE plan json;
BEGIN
    EXECUTE 'EXPLAIN (ANALYZE, FORMAT JSON) ' || q INTO plan;
    RETURN (length(plan::text) - length(replace(plan::text, '"Relation Name"', ''))) / length('"Relation Name"');
END $$;

--
-- every function on tap_ta's session, called by tap_tb: MN001, as if missing
--
CREATE TEMP TABLE calls (name text, sql text);
INSERT INTO calls VALUES
  ('get_session', $$SELECT mnemo.get_session('ta_s')$$),
  ('get_or_create_session', $$SELECT mnemo.get_or_create_session('ta_s')$$),
  ('create_session with parent', $$SELECT mnemo.create_session('tb_child', parent_id => 'ta_s')$$),
  ('soft_delete_session', $$SELECT mnemo.soft_delete_session('ta_s')$$),
  ('watch', $$SELECT mnemo.watch('ta_s')$$),
  ('unwatch', $$SELECT mnemo.unwatch('ta_s')$$),
  ('append_message', $$SELECT mnemo.append_message('ta_s', 'user', '[]')$$),
  ('append_messages', $$SELECT mnemo.append_messages('ta_s', '[{"role": "user", "parts": []}]')$$),
  ('append_part', $$SELECT mnemo.append_part('ta_s', 'ta_m3', '{"type": "text", "text": "x"}')$$),
  ('update_part_status', $$SELECT mnemo.update_part_status('ta_s', 'ta_t1', tool_state => 'error')$$),
  ('update_message_tokens', $$SELECT mnemo.update_message_tokens('ta_s', 'ta_m2', '{"input": 9}', 9, 'x')$$),
  ('tombstone_part', $$SELECT mnemo.tombstone_part('ta_s', 'ta_t1')$$),
  ('swap_context_items', $$SELECT mnemo.swap_context_items('ta_s', ARRAY['ta_m2'], 'ta_sum')$$),
  ('commit_summary', $$SELECT mnemo.commit_summary('ta_s', 'tb_sum', 'x', 1, ARRAY['ta_m2'])$$),
  ('prune_tool_outputs', $$SELECT mnemo.prune_tool_outputs('ta_s', 0, 0)$$),
  ('get_message', $$SELECT mnemo.get_message('ta_s', 'ta_m1')$$),
  ('get_messages', $$SELECT * FROM mnemo.get_messages('ta_s')$$),
  ('get_messages_after', $$SELECT * FROM mnemo.get_messages_after('ta_s', 0)$$),
  ('get_parts', $$SELECT * FROM mnemo.get_parts('ta_s', 'ta_m1')$$),
  ('get_messages_with_parts', $$SELECT * FROM mnemo.get_messages_with_parts('ta_s')$$),
  ('get_messages_flat', $$SELECT * FROM mnemo.get_messages_flat('ta_s')$$),
  ('get_messages_with_parts_by_ids', $$SELECT * FROM mnemo.get_messages_with_parts_by_ids('ta_s', ARRAY['ta_m1'])$$),
  ('history', $$SELECT * FROM mnemo.history('ta_s')$$),
  ('get_context_items', $$SELECT * FROM mnemo.get_context_items('ta_s')$$),
  ('build_context', $$SELECT * FROM mnemo.build_context('ta_s', 1000)$$),
  ('context_report', $$SELECT * FROM mnemo.context_report('ta_s', 1000)$$),
  ('turn_context', $$SELECT * FROM mnemo.turn_context('ta_s', 1000)$$),
  ('expand_summary', $$SELECT * FROM mnemo.expand_summary('ta_s', 'ta_sum', true)$$),
  ('summary_nodes', $$SELECT * FROM mnemo.summary_nodes('ta_s', true)$$),
  ('last_summary', $$SELECT * FROM mnemo.last_summary('ta_s')$$),
  ('search_history', $$SELECT * FROM mnemo.search_history('ta_s', 'secret')$$),
  ('index_search', $$SELECT mnemo.index_search('ta_s')$$),
  ('search_pending', $$SELECT mnemo.search_pending('ta_s')$$),
  ('recall_search', $$SELECT * FROM mnemo.recall_search('ta_s', 'secret')$$),
  ('compaction_block', $$SELECT * FROM mnemo.compaction_block('ta_s', tail_messages => 0)$$),
  ('claim_compaction', $$SELECT mnemo.claim_compaction('ta_s', 'tb_compactor')$$),
  ('release_compaction', $$SELECT mnemo.release_compaction('ta_s', 'tb_compactor')$$),
  ('commit_summary with a holder', $$SELECT mnemo.commit_summary('ta_s', 'tb_sum', 'x', 1, ARRAY['ta_m2'], holder => 'tb_compactor')$$),
  ('add_checkpoint', $$SELECT mnemo.add_checkpoint('ta_s', 'tb_cp')$$),
  ('list_checkpoints', $$SELECT * FROM mnemo.list_checkpoints('ta_s')$$),
  ('claim_run', $$SELECT mnemo.claim_run('ta_s', 'tb_r')$$),
  ('complete_run', $$SELECT mnemo.complete_run('ta_s', 'ta_r2')$$),
  ('snapshot', $$SELECT * FROM mnemo.snapshot('ta_s', 'ta_r1')$$),
  ('set_pending_request', $$SELECT mnemo.set_pending_request('ta_s', '{"q": "B?"}')$$),
  ('clear_pending_request', $$SELECT mnemo.clear_pending_request('ta_s')$$),
  ('load_pending_request', $$SELECT mnemo.load_pending_request('ta_s')$$),
  ('update_state', $$SELECT mnemo.update_state('ta_s', '{"b": 2}')$$),
  ('get_state', $$SELECT mnemo.get_state('ta_s')$$),
  ('fork_session', $$SELECT mnemo.fork_session('ta_s', '1', 'tb_fork')$$),
  ('resume_session', $$SELECT mnemo.resume_session('ta_s', 'ta_cp')$$),
  ('list_discarded', $$SELECT * FROM mnemo.list_discarded('ta_s')$$),
  ('create_map', $$SELECT mnemo.create_map('ta_s', 'tb_map', '[1]', 'x {{ item }}')$$),
  ('claim_map_items', $$SELECT * FROM mnemo.claim_map_items('ta_s', 'ta_map', 'tb_worker')$$),
  ('complete_map_item', $$SELECT mnemo.complete_map_item('ta_s', 'ta_map', 0, 'ta_worker', '"stolen"')$$),
  ('fail_map_item', $$SELECT mnemo.fail_map_item('ta_s', 'ta_map', 0, 'ta_worker', 'timeout', 'x')$$),
  ('map_status', $$SELECT * FROM mnemo.map_status('ta_s', 'ta_map')$$),
  ('map_results', $$SELECT * FROM mnemo.map_results('ta_s', 'ta_map')$$),
  ('list_maps', $$SELECT * FROM mnemo.list_maps('ta_s')$$);
GRANT SELECT ON calls TO tap_tb, tap_pool, tap_eraser;
-- the missing-session error, for comparison: another tenant's looks the same
CREATE TEMP TABLE missing AS
SELECT name, replace(sql, 'ta_s', 'no_such_s') AS sql FROM calls;
GRANT SELECT ON missing TO tap_tb;

SET ROLE tap_tb;
SELECT throws_ok(sql, 'MN001', 'session "ta_s" does not exist', 'tap_tb: ' || name || ' on tap_ta''s session: MN001')
  FROM calls WHERE name NOT IN ('get_or_create_session', 'create_session with parent') ORDER BY name;
SELECT throws_ok($$SELECT mnemo.create_session('tb_child', parent_id => 'ta_s')$$, 'MN001',
                 'session "ta_s" does not exist', 'tap_tb: a child of tap_ta''s session: MN001');
-- a session id is unique within its tenant: tap_tb's get_or_create_session
-- of tap_ta's id makes a session of its own (test/pgtap/085_same_id.sql)
SELECT throws_ok(sql, 'MN001', NULL, 'tap_tb: ' || name || ' on a missing session: MN001 too')
  FROM missing WHERE name IN ('get_messages_with_parts', 'append_message', 'build_context') ORDER BY name;
RESET ROLE;
SELECT is(pg_temp.rows_of_a(), (SELECT rows FROM before_a), 'none of tap_tb''s calls changed a row of tap_ta');

--
-- reads: each tenant sees its own rows only, by function; no SELECT at all
--
SET ROLE tap_tb;
SELECT is((SELECT string_agg(id, ',') FROM mnemo.list_sessions(active_only => false)), 'tb_s',
          'tap_tb: list_sessions lists its session only');
SELECT is((SELECT exploration_summary FROM mnemo.get_file_reference('sha256:shared')), 'B''s file',
          'tap_tb: get_file_reference reads its own reference');
SELECT is((SELECT path FROM mnemo.get_file_reference_by_path('/a.txt')), NULL,
          'tap_tb: get_file_reference_by_path does not find tap_ta''s path');
SELECT is((SELECT count(*) FROM mnemo.get_messages_with_parts('tb_s')), 1::bigint, 'tap_tb: reads its session');
SELECT throws_ok($$SELECT count(*) FROM mnemo.messages WHERE session_id = 'ta_s'$$, '42501', NULL,
                 'tap_tb: SELECT of tap_ta''s messages by session id: 42501');
RESET ROLE;
-- the side channel of issue 32: a leakproof comparison becomes an index
-- condition below the row-level security filter, and the filter's "Rows
-- Removed" counts the other tenant's rows.  Application roles have no SELECT,
-- so no plan of theirs reads a table: every table, with every index forced
ANALYZE mnemo.tenants;
CREATE TEMP TABLE leaks AS
SELECT c.relname AS tbl,
       format('EXPLAIN (ANALYZE, BUFFERS) SELECT 1 FROM mnemo.%I WHERE tenant >= %L', c.relname, 'tap_ta') AS sql
  FROM pg_class c WHERE c.relnamespace = 'mnemo'::regnamespace AND c.relkind IN ('r', 'p') AND NOT c.relispartition;
GRANT SELECT ON leaks TO tap_tb;
SELECT ok(pg_temp.plan_relations($$SELECT * FROM mnemo.sessions$$) >= 1,
          'plan_relations counts: the superuser''s SELECT of mnemo.sessions names its table (or partitions)');
SET ROLE tap_tb;
SET enable_seqscan = off;
SELECT throws_ok(sql, '42501', NULL, 'tap_tb: EXPLAIN ANALYZE on mnemo.' || tbl || ': 42501, no counter of any row')
  FROM leaks ORDER BY tbl;
SELECT throws_ok($$EXPLAIN (ANALYZE) SELECT 1 FROM mnemo.tenants WHERE channel >= 'mnemo_6' AND channel < 'mnemo_7'$$,
                 '42501', NULL, 'tap_tb: the issue''s channel prefix search: 42501');
SELECT is((SELECT count(*) FROM pg_catalog.pg_stats WHERE schemaname = 'mnemo'), 0::bigint,
          'tap_tb: no column statistics of mnemo''s tables (pg_stats shows none without SELECT)');
-- a function's plan is one Function Scan: its statements' counters are not shown
SELECT is(pg_temp.plan_relations($$SELECT * FROM mnemo.get_messages_flat('tb_s')$$), 0,
          'tap_tb: EXPLAIN ANALYZE of a read function names no table');
SELECT is(pg_temp.plan_relations($$SELECT * FROM mnemo.list_sessions(active_only => false)$$), 0,
          'tap_tb: EXPLAIN ANALYZE of list_sessions names no table');
RESET enable_seqscan;
SELECT ok(NOT mnemo.tenant_visible('tap_ta') AND mnemo.tenant_visible('tap_tb') AND NOT mnemo.tenant_visible('tap_no_such_role'),
          'tap_tb: tenant_visible is true for itself only, false for a role that does not exist');
RESET ROLE;
SET ROLE tap_ta;
SELECT is((SELECT string_agg(id, ',') FROM mnemo.list_sessions(active_only => false)), 'ta_s', 'tap_ta: list_sessions lists its session only');
SELECT is((SELECT count(*) FROM mnemo.get_messages_with_parts('ta_s')), 4::bigint, 'tap_ta: reads its session, the summary included');
SELECT is((SELECT count(*) FROM mnemo.get_messages_flat('ta_s')), 5::bigint,
          'tap_ta: reads its session as rows, one per part, the summary''s included');
SELECT is((SELECT string_agg(DISTINCT tenant, ',') FROM mnemo.list_sessions(active_only => false)), 'tap_ta',
          'tap_ta: list_sessions sees its tenant only');
SELECT is((SELECT string_agg(session_id, ',') FROM mnemo.find_map('ta_map')), 'ta_s',
          'tap_ta: find_map finds its map''s session by the map id');
RESET ROLE;
SET ROLE tap_tb;
SELECT is((SELECT count(*) FROM mnemo.find_map('ta_map')), 0::bigint, 'tap_tb: find_map does not find tap_ta''s map');
RESET ROLE;
SET ROLE tap_ta;
SELECT is((SELECT exploration_summary FROM mnemo.get_file_reference('sha256:shared')), 'A''s file',
          'tap_ta: its own file reference, untouched by tap_tb''s store');
RESET ROLE;
SELECT is((SELECT count(*) FROM mnemo.list_sessions(active_only => false) WHERE id IN ('ta_s', 'tb_s')), 2::bigint,
          'the superuser sees both tenants');

--
-- direct writes and locks: 42501 on every table, for every tenant role
--
CREATE TEMP TABLE dml (tbl text, sql text);
INSERT INTO dml
SELECT t, s FROM unnest(ARRAY['sessions', 'log', 'context_items', 'summary_nodes',
                              'summary_edges', 'file_references', 'blobs', 'tenants', 'compaction_claims',
                              'checkpoints', 'runs', 'pending_requests', 'lineage', 'discarded',
                              'maps', 'map_items']) AS t,
  LATERAL (VALUES
    (format('INSERT INTO mnemo.%I SELECT * FROM mnemo.%I LIMIT 1', t, t)),
    (format('UPDATE mnemo.%I SET tenant = tenant', t)),
    (format('DELETE FROM mnemo.%I', t)),
    (format('TRUNCATE mnemo.%I', t)),
    (format('LOCK TABLE mnemo.%I IN ACCESS EXCLUSIVE MODE', t))) AS v(s);
GRANT SELECT ON dml TO tap_ta;
SET ROLE tap_ta;
SELECT throws_ok(sql, '42501', NULL, 'tap_ta: ' || sql || ': 42501') FROM dml ORDER BY tbl, sql;
-- the issue's reproductions, by name
SELECT throws_ok($$UPDATE mnemo.sessions SET system_prompt = 'evil', is_active = false, metadata = '{}' WHERE id = 'ta_s'$$,
                 '42501', NULL, 'tap_ta: UPDATE of its own session''s system_prompt, is_active, metadata: 42501');
SELECT throws_ok($$UPDATE mnemo.messages SET cost = 0 WHERE session_id = 'ta_s'$$, '42501', NULL,
                 'tap_ta: UPDATE of messages.cost: 42501');
SELECT throws_ok($$LOCK TABLE mnemo.messages IN ACCESS SHARE MODE$$, '42501', NULL,
                 'tap_ta: LOCK ... ACCESS SHARE (what SELECT takes): 42501 too');
RESET ROLE;
SELECT is(pg_temp.rows_of_a(), (SELECT rows FROM before_a), 'none of the direct writes changed a row');

--
-- purge: the grant and the tenant
--
SET ROLE tap_tb;
SELECT throws_ok($$SELECT mnemo.purge_session('tb_s')$$, '42501', NULL, 'tap_tb: purge_session without the grant: 42501');
RESET ROLE;
SET ROLE tap_eraser;
SELECT throws_ok($$SELECT mnemo.purge_session('tb_s')$$, 'MN001', NULL,
                 'tap_eraser: purge of a session of a tenant it is not a member of: MN001');
SELECT is(mnemo.purge_session('ta_s'), 4::bigint, 'tap_eraser: purges tap_ta''s session (a member of tap_ta)');
RESET ROLE;
SELECT is((SELECT count(*) FROM mnemo.messages WHERE session_id IN ('ta_s', 'tb_s')), 1::bigint,
          'ta_s is gone, tb_s is whole');
SELECT is((SELECT count(*) FROM (SELECT 1 FROM mnemo.checkpoints WHERE session_id = 'ta_s'
                                 UNION ALL SELECT 1 FROM mnemo.runs WHERE session_id = 'ta_s'
                                 UNION ALL SELECT 1 FROM mnemo.pending_requests WHERE session_id = 'ta_s'
                                 UNION ALL SELECT 1 FROM mnemo.maps WHERE session_id = 'ta_s'
                                 UNION ALL SELECT 1 FROM mnemo.map_items WHERE session_id = 'ta_s') t),
          0::bigint, 'the purge took ta_s''s checkpoints, runs, pending request and maps with it');

--
-- mnemo.tenant: honoured only for a role whose privileges the caller has
--
SET ROLE tap_tb;
SET mnemo.tenant = 'tap_ta';
SELECT throws_ok($$SELECT mnemo.create_session('tb_as_a')$$, '42501', NULL,
                 'tap_tb with mnemo.tenant = tap_ta: create_session 42501');
SELECT throws_ok($$SELECT mnemo.store_file_reference('sha256:x', '/x')$$, '42501', NULL,
                 'tap_tb with mnemo.tenant = tap_ta: store_file_reference 42501');
SELECT throws_ok($$SELECT mnemo.get_file_reference('sha256:shared')$$, '42501', NULL,
                 'tap_tb with mnemo.tenant = tap_ta: get_file_reference 42501');
RESET mnemo.tenant;
RESET ROLE;
SET ROLE tap_pool;
SET mnemo.tenant = 'tap_ta';
SELECT is((mnemo.create_session('pool_a')).tenant, 'tap_ta', 'tap_pool with mnemo.tenant = tap_ta: the session is tap_ta''s');
SELECT is((mnemo.append_message('pool_a', 'user', '[]', id => 'pool_m1')).seq, 1::bigint, 'tap_pool: appends to it');
SET mnemo.tenant = 'tap_tb';
SELECT is((mnemo.create_session('pool_b')).tenant, 'tap_tb', 'tap_pool with mnemo.tenant = tap_tb: the session is tap_tb''s');
SELECT is((SELECT exploration_summary FROM mnemo.get_file_reference('sha256:shared')), 'B''s file',
          'tap_pool as tap_tb: tap_tb''s file reference');
SELECT is((SELECT count(*) FROM mnemo.list_sessions(active_only => false) WHERE id IN ('pool_a', 'pool_b', 'tb_s')), 3::bigint,
          'tap_pool sees the sessions of both tenants it is a member of');
SET mnemo.tenant = 'tap_no_such_role';
SELECT throws_ok($$SELECT mnemo.create_session('pool_x')$$, '42501', NULL,
                 'tap_pool with mnemo.tenant naming no role: 42501');
RESET mnemo.tenant;
SELECT is((mnemo.create_session('pool_self')).tenant, 'tap_pool', 'tap_pool without mnemo.tenant: its own tenant');
RESET ROLE;
SET ROLE tap_ta;
SELECT is((SELECT string_agg(id, ',' ORDER BY id) FROM mnemo.list_sessions(active_only => false)), 'pool_a',
          'tap_ta sees the session the pool made for it, not the others');
SELECT is((SELECT count(*) FROM mnemo.get_messages('pool_a')), 1::bigint, 'and its message');
RESET ROLE;
SET mnemo.tenant = 'tap_tb';
SELECT is((mnemo.create_session('su_b')).tenant, 'tap_tb', 'a superuser may act for any tenant');
RESET mnemo.tenant;

--
-- NOTIFY channels: one per tenant, readable by that tenant only
--
SET ROLE tap_tb;
SELECT ok(mnemo.watch('tb_s') ~ '^mnemo_[0-9a-f]{32}$', 'tap_tb: watch returns its channel');
SELECT throws_ok($$SELECT channel FROM mnemo.tenants$$, '42501', NULL,
                 'tap_tb: no SELECT on mnemo.tenants: its channel comes from watch only');
RESET ROLE;
SET ROLE tap_pool;
SET mnemo.tenant = 'tap_ta';
SELECT isnt(mnemo.watch('pool_a'), mnemo.watch('pool_b'), 'two tenants, two channels');
RESET mnemo.tenant;
RESET ROLE;
SET ROLE tap_tb;
SELECT throws_ok($$SELECT count(*) FROM mnemo.tenants WHERE tenant = 'tap_ta'$$, '42501', NULL,
                 'tap_tb cannot read tap_ta''s channel');
RESET ROLE;

--
-- a tenant is the role it was registered with, not its name: DROP ROLE and
-- CREATE ROLE of the same name reads nothing of the old role's
--
CREATE ROLE tap_carol NOLOGIN;
GRANT USAGE ON SCHEMA mnemo TO tap_carol;
GRANT ALL ON __tcache__ TO tap_carol;
GRANT ALL ON SEQUENCE __tcache___id_seq, __tresults___numb_seq TO tap_carol;
SET ROLE tap_carol;
SELECT lives_ok($$
    SELECT mnemo.create_session('carol_s', title => 'C');
    SELECT mnemo.append_message('carol_s', 'user', '[{"type": "text", "text": "carol secret"}]', id => 'carol_m1');
    SELECT mnemo.store_file_reference('sha256:carol', '/carol.txt', exploration_summary => 'carol''s file') $$,
    'tap_carol writes a session and a file reference');
RESET ROLE;
REVOKE ALL ON __tcache__ FROM tap_carol;
REVOKE ALL ON SEQUENCE __tcache___id_seq, __tresults___numb_seq FROM tap_carol;
REVOKE USAGE ON SCHEMA mnemo FROM tap_carol;
DROP ROLE tap_carol;
SELECT is((SELECT count(*) FROM mnemo.get_messages('carol_s')), 1::bigint,
          'after DROP ROLE the old tenant''s rows are still there (a superuser reads them)');
CREATE ROLE tap_carol NOLOGIN;
GRANT USAGE ON SCHEMA mnemo TO tap_carol;
GRANT ALL ON __tcache__ TO tap_carol;
GRANT ALL ON SEQUENCE __tcache___id_seq, __tresults___numb_seq TO tap_carol;
SET ROLE tap_carol;
SELECT throws_ok($$SELECT mnemo.get_session('carol_s')$$, 'MN001', 'session "carol_s" does not exist',
                 'the new tap_carol: the old one''s session does not exist for it');
SELECT throws_ok($$SELECT * FROM mnemo.get_messages('carol_s')$$, 'MN001', NULL,
                 'the new tap_carol: nor its messages');
SELECT is((SELECT count(*) FROM mnemo.list_sessions(active_only => false)), 0::bigint,
          'the new tap_carol lists no session');
SELECT throws_ok($$SELECT mnemo.get_file_reference('sha256:carol')$$, '42501', NULL,
                 'the new tap_carol: the old one''s file reference: 42501 (the name is a dropped role''s)');
SELECT throws_ok($$SELECT mnemo.create_session('carol_s2')$$, '42501', NULL,
                 'the new tap_carol cannot write as the old tenant either');
SELECT throws_ok($$SELECT mnemo.reassign_tenant('tap_carol', 'tap_carol')$$, '42501', NULL,
                 'reassign_tenant is not for tenants (revoked from PUBLIC)');
RESET ROLE;
SELECT throws_ok($$SELECT mnemo.reassign_tenant('tap_carol', 'tap_no_such_role')$$, '42704', NULL,
                 'reassign_tenant to a role that does not exist: 42704');
SELECT throws_ok($$SELECT mnemo.reassign_tenant('tap_never', 'tap_tb')$$, '42704', NULL,
                 'reassign_tenant of a tenant that is not registered: 42704');
SELECT throws_ok($$SELECT mnemo.reassign_tenant('tap_ta', 'tap_tb')$$, '23505', NULL,
                 'reassign_tenant of two tenants holding a file reference to the same content: 23505');
SELECT is((SELECT count(*) FROM mnemo.file_references WHERE tenant = 'tap_ta'), 1::bigint,
          'and the failed reassign moved nothing');
SELECT is(mnemo.reassign_tenant('tap_carol', 'tap_carol'), 1::bigint,
          'a superuser hands the old tap_carol''s session to the new role of that name');
SET ROLE tap_carol;
SELECT is((mnemo.get_session('carol_s')).title, 'C', 'the new tap_carol now reads the session');
SELECT is((SELECT exploration_summary FROM mnemo.get_file_reference('sha256:carol')), 'carol''s file',
          'and the file reference');
RESET ROLE;
-- session ids are per tenant: tap_tb's own carol_s stops the hand-over
SET ROLE tap_tb;
SELECT is((mnemo.create_session('carol_s', title => 'B')).title, 'B', 'tap_tb has a session carol_s of its own');
RESET ROLE;
SELECT throws_ok($$SELECT mnemo.reassign_tenant('tap_carol', 'tap_tb')$$, '23505',
                 'tenants "tap_carol" and "tap_tb" both have a session "carol_s"',
                 'reassign_tenant to a tenant with a session of one of the ids: 23505');
SELECT is((SELECT string_agg(tenant || ':' || title, ',' ORDER BY tenant) FROM mnemo.sessions WHERE id = 'carol_s'),
          'tap_carol:C,tap_tb:B', 'and the failed reassign moved nothing');
SET mnemo.tenant = 'tap_tb';
SELECT is(mnemo.purge_session('carol_s'), 0::bigint, 'the superuser purges tap_tb''s carol_s');
RESET mnemo.tenant;
SELECT is(mnemo.reassign_tenant('tap_carol', 'tap_tb'), 1::bigint, 'and hands it over to tap_tb');
SET ROLE tap_tb;
SELECT is((SELECT count(*) FROM mnemo.get_messages('carol_s')), 1::bigint, 'tap_tb reads the session handed to it');
RESET ROLE;
SET ROLE tap_carol;
SELECT throws_ok($$SELECT mnemo.get_session('carol_s')$$, 'MN001', NULL, 'tap_carol no longer does');
RESET ROLE;

--
-- images are stored once per tenant (mnemo.blobs, src/log/blobs.c): tap_tb
-- storing the image tap_ta stored learns nothing of it.  Its append writes
-- its own row, so it meets no unique violation, waits on no lock and
-- changes nothing of tap_ta's row; the table is closed to it, so no row,
-- count or plan counter says whether the image is there.
--
CREATE TEMP TABLE img AS
SELECT translate(encode(decode(repeat('89504e470d0a1a0a', 4000), 'hex'), 'base64'), E'\n', '') AS b64;
GRANT SELECT ON img TO tap_ta, tap_tb, tap_eraser;
CREATE FUNCTION pg_temp.image() RETURNS jsonb LANGUAGE sql AS $$
    SELECT jsonb_build_array(jsonb_build_object('type', 'image', 'media_type', 'image/png',
                                                'data', (SELECT b64 FROM img)))
$$;
SET ROLE tap_ta;
SELECT lives_ok($$SELECT mnemo.create_session('ta_img');
                  SELECT mnemo.append_message('ta_img', 'user', pg_temp.image())$$,
                'tap_ta stores an image');
RESET ROLE;
CREATE TEMP TABLE a_blob AS
SELECT ctid::text || '/' || xmin || '/' || xmax || '/' || refs AS row_version
  FROM mnemo.blobs WHERE tenant = 'tap_ta';
SELECT is((SELECT count(*) FROM a_blob), 1::bigint, 'tap_ta''s image is one blob of tap_ta''s');
SET ROLE tap_tb;
SELECT lives_ok($$SELECT mnemo.create_session('tb_img');
                  SELECT mnemo.append_message('tb_img', 'user', pg_temp.image());
                  SELECT mnemo.append_message('tb_img', 'user', pg_temp.image())$$,
                'tap_tb stores the same image twice: no unique violation, nothing to tell');
SELECT throws_ok($$SELECT count(*) FROM mnemo.blobs WHERE sha256 = sha256(decode((SELECT b64 FROM img), 'base64'))$$,
                 '42501', NULL, 'tap_tb: SELECT of mnemo.blobs by the image''s digest: 42501');
SELECT throws_ok($$EXPLAIN (ANALYZE) SELECT 1 FROM mnemo.blobs WHERE tenant = 'tap_ta'$$, '42501', NULL,
                 'tap_tb: EXPLAIN ANALYZE of mnemo.blobs: 42501');
SELECT is((SELECT string_agg(p ->> 'data', ',') = (SELECT b64 || ',' || b64 FROM img)
             FROM mnemo.get_messages_with_parts('tb_img') m, jsonb_array_elements(m.parts) p), true,
          'tap_tb reads its images back exactly');
RESET ROLE;
SELECT is((SELECT string_agg(tenant || ':' || refs, ',' ORDER BY tenant) FROM mnemo.blobs
            WHERE sha256 = sha256(decode((SELECT b64 FROM img), 'base64'))),
          'tap_ta:1,tap_tb:2', 'the same image in two tenants is two rows, each counting its own tenant''s parts');
SELECT is((SELECT ctid::text || '/' || xmin || '/' || xmax || '/' || refs FROM mnemo.blobs WHERE tenant = 'tap_ta'),
          (SELECT row_version FROM a_blob),
          'tap_tb''s appends neither wrote nor locked tap_ta''s row (ctid, xmin, xmax, refs unchanged)');
SET ROLE tap_eraser;
SELECT lives_ok($$SELECT mnemo.purge_session('ta_img')$$, 'tap_eraser purges tap_ta''s image session');
RESET ROLE;
SELECT is((SELECT string_agg(tenant || ':' || refs, ',' ORDER BY tenant) FROM mnemo.blobs
            WHERE sha256 = sha256(decode((SELECT b64 FROM img), 'base64'))),
          'tap_tb:2', 'the purge deleted tap_ta''s blob and left tap_tb''s');
-- a tenant handed over to one holding the same image: one blob, both counts
CREATE ROLE tap_dave NOLOGIN;
GRANT USAGE ON SCHEMA mnemo TO tap_dave;
GRANT SELECT ON img TO tap_dave;
GRANT ALL ON __tcache__ TO tap_dave;
GRANT ALL ON SEQUENCE __tcache___id_seq, __tresults___numb_seq TO tap_dave;
SET ROLE tap_dave;
SELECT lives_ok($$SELECT mnemo.create_session('dave_img');
                  SELECT mnemo.append_message('dave_img', 'user', pg_temp.image())$$,
                'tap_dave stores the image tap_tb stored');
RESET ROLE;
SELECT is(mnemo.reassign_tenant('tap_dave', 'tap_tb'), 1::bigint, 'a superuser hands tap_dave''s session to tap_tb');
SELECT is((SELECT string_agg(tenant || ':' || refs, ',' ORDER BY tenant) FROM mnemo.blobs
            WHERE sha256 = sha256(decode((SELECT b64 FROM img), 'base64'))),
          'tap_tb:3', 'tap_dave''s copy merged into tap_tb''s: one row counting the three parts');
SET ROLE tap_tb;
SELECT is((SELECT p ->> 'data' = (SELECT b64 FROM img)
             FROM mnemo.get_messages_with_parts('dave_img') m, jsonb_array_elements(m.parts) p), true,
          'tap_tb reads the image of the session handed to it exactly');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
