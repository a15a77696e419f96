-- 085_same_id: a session id is unique within its tenant (0.7.0).  Two tenant
-- roles each run the same workload, every write of the API, on a session of
-- the same id ('twin', with the same message, part, summary, checkpoint,
-- run, map and fork ids), each with its own words.  Every read of one
-- tenant's twin gives as many rows as the same read of a session no other
-- tenant shares, and none of the other tenant's words; every write of one
-- leaves every row of the other unchanged; a role that sees both twins names
-- one with mnemo.tenant, or gets MN013.
BEGIN;
SELECT plan(100);

CREATE ROLE tap_sa NOLOGIN;
CREATE ROLE tap_sb NOLOGIN;
CREATE ROLE tap_spool NOLOGIN;
GRANT tap_sa, tap_sb TO tap_spool;
GRANT USAGE ON SCHEMA mnemo TO tap_sa, tap_sb;
GRANT ALL ON __tcache__ TO tap_sa, tap_sb, tap_spool;
GRANT ALL ON SEQUENCE __tcache___id_seq, __tresults___numb_seq TO tap_sa, tap_sb, tap_spool;
CREATE SCHEMA tw;
GRANT USAGE ON SCHEMA tw TO tap_sa, tap_sb, tap_spool;

-- every write of the API on session sid, its words tagged with tag
CREATE FUNCTION tw.workload(sid text, tag text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM mnemo.create_session(sid, title => 'title ' || tag, system_prompt => 'prompt ' || tag);
    PERFORM mnemo.append_messages(sid, format('[
        {"id": "m1", "role": "user", "parts": [{"type": "text", "id": "p1", "text": "question %1$s"}]},
        {"id": "m2", "role": "assistant", "parts": [{"type": "tool", "id": "p2", "tool_name": "grep",
            "tool_call_id": "c1", "tool_state": "running", "input": {"pattern": "%1$s"}}]},
        {"id": "m3", "role": "user", "parts": [{"type": "text", "id": "p3", "text": "more %1$s"}]},
        {"id": "m4", "role": "assistant", "parts": [{"type": "tool", "id": "p4", "tool_name": "ls",
            "tool_call_id": "c2", "tool_state": "completed", "output": "listing %1$s"}]}]', tag)::jsonb);
    PERFORM mnemo.append_part(sid, 'm4', format('{"type": "text", "id": "p5", "text": "answer %s"}', tag)::jsonb);
    PERFORM mnemo.update_part_status(sid, 'p2', tool_state => 'completed', output => 'found ' || tag);
    PERFORM mnemo.update_message_tokens(sid, 'm2', '{"input": 10, "output": 5}', 0.5, 'stop');
    PERFORM mnemo.add_checkpoint(sid, 'cp1');
    PERFORM mnemo.claim_run(sid, 'r1');
    PERFORM mnemo.append_message(sid, 'user', format('[{"type": "text", "id": "p6", "text": "run %s"}]', tag)::jsonb,
                                 id => 'm5', run_id => 'r1');
    PERFORM mnemo.complete_run(sid, 'r1');
    PERFORM mnemo.claim_compaction(sid, 'compactor');
    PERFORM mnemo.commit_summary(sid, 's1', 'summary ' || tag, 3, ARRAY['m1', 'm2'], holder => 'compactor');
    PERFORM mnemo.release_compaction(sid, 'compactor');
    PERFORM mnemo.tombstone_part(sid, 'p4');
    PERFORM mnemo.update_state(sid, jsonb_build_object('tag', tag));
    PERFORM mnemo.set_pending_request(sid, jsonb_build_object('q', tag));
    PERFORM mnemo.create_map(sid, 'map1', jsonb_build_array('x ' || tag, 'y ' || tag), 'say {{ item }}');
    PERFORM mnemo.claim_map_items(sid, 'map1', 'worker', 2);
    PERFORM mnemo.complete_map_item(sid, 'map1', 0, 'worker', to_jsonb('done ' || tag));
    PERFORM mnemo.fail_map_item(sid, 'map1', 1, 'worker', 'timeout', 'failed ' || tag);
    PERFORM mnemo.index_search(sid);
    PERFORM mnemo.watch(sid);
    PERFORM mnemo.fork_session(sid, 'cp1', sid || '_fork');
    PERFORM mnemo.append_message(sid || '_fork', 'user',
                                 format('[{"type": "text", "id": "p7", "text": "fork %s"}]', tag)::jsonb, id => 'm6');
    PERFORM mnemo.add_checkpoint(sid || '_fork', 'cp2');
    PERFORM mnemo.append_message(sid || '_fork', 'assistant',
                                 format('[{"type": "text", "id": "p8", "text": "later %s"}]', tag)::jsonb, id => 'm7');
    PERFORM mnemo.resume_session(sid || '_fork', 'cp2');
END $$;

-- the reads of the API on session sid, each as one line of text in a fixed order
CREATE TABLE tw.reads (name text PRIMARY KEY, sql text);
INSERT INTO tw.reads VALUES
  ('get_session', $$SELECT s::text FROM mnemo.get_session('%1$s') s$$),
  ('get_message', $$SELECT m::text FROM mnemo.get_message('%1$s', 'm1') m$$),
  ('get_messages', $$SELECT m::text FROM mnemo.get_messages('%1$s') m$$),
  ('get_messages_after', $$SELECT m::text FROM mnemo.get_messages_after('%1$s', 0) m$$),
  ('get_parts', $$SELECT p::text FROM mnemo.get_parts('%1$s', 'm4') p$$),
  ('get_messages_with_parts', $$SELECT m::text FROM mnemo.get_messages_with_parts('%1$s') m$$),
  ('get_messages_flat', $$SELECT m::text FROM mnemo.get_messages_flat('%1$s') m$$),
  ('get_messages_with_parts_by_ids', $$SELECT m::text FROM mnemo.get_messages_with_parts_by_ids('%1$s', ARRAY['m1', 'm3', 's1']) m$$),
  ('history', $$SELECT h::text FROM mnemo.history('%1$s') h$$),
  ('get_context_items', $$SELECT c::text FROM mnemo.get_context_items('%1$s') c$$),
  ('build_context', $$SELECT c::text FROM mnemo.build_context('%1$s', 100000) c$$),
  ('context_report', $$SELECT c::text FROM mnemo.context_report('%1$s', 100000) c$$),
  ('turn_context', $$SELECT c::text FROM mnemo.turn_context('%1$s', 100000) c$$),
  ('expand_summary', $$SELECT e::text FROM mnemo.expand_summary('%1$s', 's1', true) e$$),
  ('summary_nodes', $$SELECT n::text FROM mnemo.summary_nodes('%1$s', true) n$$),
  ('last_summary', $$SELECT l::text FROM mnemo.last_summary('%1$s') l$$),
  ('search_history', $$SELECT h::text FROM mnemo.search_history('%1$s', 'question') h$$),
  ('search_pending', $$SELECT mnemo.search_pending('%1$s')::text$$),
  ('recall_search', $$SELECT r::text FROM mnemo.recall_search('%1$s', 'e') r$$),
  ('compaction_block', $$SELECT b::text FROM mnemo.compaction_block('%1$s', tail_messages => 0, min_items => 2) b$$),
  ('list_checkpoints', $$SELECT c::text FROM mnemo.list_checkpoints('%1$s') c$$),
  ('snapshot', $$SELECT s::text FROM mnemo.snapshot('%1$s', 'r1') s$$),
  ('get_state', $$SELECT mnemo.get_state('%1$s')::text$$),
  ('load_pending_request', $$SELECT mnemo.load_pending_request('%1$s')::text$$),
  ('map_status', $$SELECT m::text FROM mnemo.map_status('%1$s', 'map1') m$$),
  ('map_results', $$SELECT m::text FROM mnemo.map_results('%1$s', 'map1') m$$),
  ('list_maps', $$SELECT m::text FROM mnemo.list_maps('%1$s') m$$),
  ('fork: get_messages_with_parts', $$SELECT m::text FROM mnemo.get_messages_with_parts('%1$s_fork') m$$),
  ('fork: get_messages_flat', $$SELECT m::text FROM mnemo.get_messages_flat('%1$s_fork') m$$),
  ('fork: build_context', $$SELECT c::text FROM mnemo.build_context('%1$s_fork', 100000) c$$),
  ('fork: list_discarded', $$SELECT d::text FROM mnemo.list_discarded('%1$s_fork') d$$),
  ('fork: list_checkpoints', $$SELECT c::text FROM mnemo.list_checkpoints('%1$s_fork') c$$);
GRANT SELECT ON tw.reads TO tap_sa, tap_sb, tap_spool;
-- how many rows each read gives of tap_sa's solo
CREATE TABLE tw.solo_counts (name text PRIMARY KEY, n int);
GRANT SELECT, INSERT ON tw.solo_counts TO tap_sa, tap_sb;

-- a read of session sid: its rows, one per line
CREATE FUNCTION tw.read(name text, sid text) RETURNS text[] LANGUAGE plpgsql AS $$
DECLARE r text[];
BEGIN
    EXECUTE format('SELECT coalesce(array_agg(x), ''{}'') FROM (' || (SELECT sql FROM tw.reads WHERE reads.name = read.name)
                   || ') t(x)', sid) INTO r;
    RETURN r;
END $$;

-- every row of tenant, in every per-session table (as the superuser)
CREATE FUNCTION tw.rows_of(tenant text) RETURNS text LANGUAGE sql AS $$
    SELECT md5(concat_ws('#',
        (SELECT string_agg(x::text, '|' ORDER BY x::text) FROM mnemo.sessions x WHERE x.tenant = $1),
        (SELECT string_agg(x::text, '|' ORDER BY x::text) FROM mnemo.messages x WHERE x.tenant = $1),
        (SELECT string_agg(x::text, '|' ORDER BY x::text) FROM mnemo.message_parts x WHERE x.tenant = $1),
        (SELECT string_agg(x::text, '|' ORDER BY x::text) FROM mnemo.context_items x WHERE x.tenant = $1),
        (SELECT string_agg(x::text, '|' ORDER BY x::text) FROM mnemo.summary_nodes x WHERE x.tenant = $1),
        (SELECT string_agg(x::text, '|' ORDER BY x::text) FROM mnemo.summary_edges x WHERE x.tenant = $1),
        (SELECT string_agg(x::text, '|' ORDER BY x::text) FROM mnemo.compaction_claims x WHERE x.tenant = $1),
        (SELECT string_agg(x::text, '|' ORDER BY x::text) FROM mnemo.checkpoints x WHERE x.tenant = $1),
        (SELECT string_agg(x::text, '|' ORDER BY x::text) FROM mnemo.runs x WHERE x.tenant = $1),
        (SELECT string_agg(x::text, '|' ORDER BY x::text) FROM mnemo.pending_requests x WHERE x.tenant = $1),
        (SELECT string_agg(x::text, '|' ORDER BY x::text) FROM mnemo.lineage x WHERE x.tenant = $1),
        (SELECT string_agg(x::text, '|' ORDER BY x::text) FROM mnemo.discarded x WHERE x.tenant = $1),
        (SELECT string_agg(x::text, '|' ORDER BY x::text) FROM mnemo.maps x WHERE x.tenant = $1),
        (SELECT string_agg(x::text, '|' ORDER BY x::text) FROM mnemo.map_items x WHERE x.tenant = $1),
        (SELECT string_agg(x::text, '|' ORDER BY x::text) FROM mnemo.search_progress x WHERE x.tenant = $1),
        (SELECT string_agg(x::text, '|' ORDER BY x::text) FROM mnemo.search_queue x WHERE x.tenant = $1),
        (SELECT string_agg(x::text, '|' ORDER BY x::text) FROM mnemo.search_documents x WHERE x.tenant = $1)))
$$;

--
-- the same workload, on the same ids, by two tenants; and on 'solo', an id
-- only tap_sa has, for the row counts a read gives when nothing is shared
--
SET ROLE tap_sa;
SELECT lives_ok($$SELECT tw.workload('twin', 'alpha')$$, 'tap_sa runs every write on its session twin');
SELECT lives_ok($$SELECT tw.workload('solo', 'alpha')$$, 'tap_sa runs it on solo, an id no one else has');
INSERT INTO tw.solo_counts SELECT name, cardinality(tw.read(name, 'solo')) FROM tw.reads;
RESET ROLE;
CREATE TEMP TABLE sa_before AS SELECT tw.rows_of('tap_sa') AS rows;
SET ROLE tap_sb;
SELECT lives_ok($$SELECT tw.workload('twin', 'beta')$$,
                'tap_sb creates its own session twin, with the same ids throughout, and runs every write on it');
RESET ROLE;
SELECT is(tw.rows_of('tap_sa'), (SELECT rows FROM sa_before), 'none of tap_sb''s writes changed a row of tap_sa');
SELECT is((SELECT string_agg(tenant || ':' || title, ',' ORDER BY tenant) FROM mnemo.sessions WHERE id = 'twin'),
          'tap_sa:title alpha,tap_sb:title beta', 'two sessions twin, one per tenant');
SELECT is((SELECT count(*) FROM mnemo.messages WHERE session_id = 'twin'),
          2 * (SELECT count(*) FROM mnemo.messages WHERE session_id = 'solo'), 'each twin has solo''s messages');

--
-- every read of each tenant's twin: solo's row count, its own words only
--
SET ROLE tap_sa;
SELECT is(cardinality(tw.read(r.name, 'twin')), c.n,
          'tap_sa: ' || r.name || ' of twin gives as many rows as of solo (' || c.n || ')')
  FROM tw.reads r JOIN tw.solo_counts c USING (name) ORDER BY r.name;
SELECT ok(NOT EXISTS (SELECT 1 FROM tw.reads r, unnest(tw.read(r.name, 'twin')) x WHERE x LIKE '%beta%'),
          'tap_sa: no read of twin shows a word of tap_sb''s twin');
SELECT ok((SELECT count(*) FROM tw.reads r WHERE array_to_string(tw.read(r.name, 'twin'), ' ') LIKE '%alpha%') >= 15,
          'tap_sa: the reads show its own words');
RESET ROLE;
SET ROLE tap_sb;
SELECT is(cardinality(tw.read(r.name, 'twin')), c.n,
          'tap_sb: ' || r.name || ' of twin gives as many rows as of tap_sa''s solo (' || c.n || ')')
  FROM tw.reads r JOIN tw.solo_counts c USING (name) ORDER BY r.name;
SELECT ok(NOT EXISTS (SELECT 1 FROM tw.reads r, unnest(tw.read(r.name, 'twin')) x WHERE x LIKE '%alpha%'),
          'tap_sb: no read of twin shows a word of tap_sa''s twin');
RESET ROLE;

--
-- more writes by tap_sa on its twin leave every row of tap_sb as it was
--
CREATE TEMP TABLE sb_before AS SELECT tw.rows_of('tap_sb') AS rows;
SET ROLE tap_sa;
SELECT lives_ok($$
    SELECT mnemo.append_message('twin', 'user', '[{"type": "text", "text": "again alpha"}]', id => 'm8');
    SELECT mnemo.update_part_status('twin', 'p2', compacted_at => 1);
    SELECT mnemo.prune_tool_outputs('twin', 0, 0);
    SELECT mnemo.claim_compaction('twin', 'compactor2');
    SELECT mnemo.commit_summary('twin', 's2', 'second alpha', 2, ARRAY['m3', 'm4'], holder => 'compactor2');
    SELECT mnemo.add_checkpoint('twin', 'cp3');
    SELECT mnemo.claim_run('twin', 'r2');
    SELECT mnemo.complete_run('twin', 'r2');
    SELECT mnemo.clear_pending_request('twin');
    SELECT mnemo.update_state('twin', '{"more": true}');
    SELECT mnemo.unwatch('twin');
    SELECT mnemo.index_search('twin');
    SELECT mnemo.fork_session('twin', 'cp3', 'twin_fork2');
    SELECT mnemo.resume_session('twin', 'cp1');
    SELECT mnemo.soft_delete_session('twin_fork') $$,
    'tap_sa writes on: appends, status, prune, a claim and a summary, checkpoints, runs, state, search, a fork, a resume, a soft delete');
RESET ROLE;
SELECT is(tw.rows_of('tap_sb'), (SELECT rows FROM sb_before), 'none of them changed a row of tap_sb');
SELECT is((SELECT is_active FROM mnemo.sessions WHERE id = 'twin_fork' AND tenant = 'tap_sb'), true,
          'tap_sb''s twin_fork is active, tap_sa''s soft-deleted');

--
-- the id within a tenant is still unique
--
SET ROLE tap_sa;
SELECT throws_ok($$SELECT mnemo.create_session('twin')$$, 'MN004', 'session "twin" already exists',
                 'tap_sa: create_session of its own id: MN004');
SELECT throws_ok($$SELECT mnemo.fork_session('solo', '0', 'twin')$$, 'MN004', NULL,
                 'tap_sa: a fork onto its own id: MN004');
SELECT is((SELECT title FROM mnemo.get_or_create_session('twin')), 'title alpha',
          'tap_sa: get_or_create_session of twin is its own');
RESET ROLE;
SET ROLE tap_sb;
SELECT is((SELECT title FROM mnemo.get_or_create_session('solo')), NULL,
          'tap_sb: get_or_create_session of tap_sa''s id solo makes a new session of its own, no MN004');
SELECT is((SELECT string_agg(id, ',' ORDER BY id) FROM mnemo.list_sessions(active_only => false)),
          'solo,twin,twin_fork', 'tap_sb: list_sessions lists its own three');
SELECT lives_ok($$SELECT mnemo.fork_session('twin', 'cp1', 'twin_fork2')$$,
                'tap_sb: a fork onto an id only tap_sa has');
SELECT is((SELECT count(*) FROM mnemo.get_messages_with_parts('solo')), 0::bigint,
          'tap_sb: its new solo is empty, not tap_sa''s');
RESET ROLE;

--
-- a role that sees both twins: mnemo.tenant chooses, else MN013
--
SET ROLE tap_spool;
SELECT throws_ok($$SELECT mnemo.get_session('twin')$$, 'MN013', NULL,
                 'tap_spool, a member of both: get_session of twin is ambiguous (MN013)');
SELECT throws_ok($$SELECT mnemo.append_message('twin', 'user', '[]')$$, 'MN013', NULL,
                 'tap_spool: so is an append, which writes nothing');
SELECT throws_ok($$SELECT count(*) FROM mnemo.build_context('twin', 1000)$$, 'MN013', NULL,
                 'tap_spool: and build_context');
SELECT throws_ok($$SELECT count(*) FROM mnemo.get_messages_with_parts('twin')$$, 'MN013', NULL,
                 'tap_spool: and a read');
SET mnemo.tenant = 'tap_sb';
SELECT is((SELECT title FROM mnemo.get_session('twin')), 'title beta', 'tap_spool with mnemo.tenant = tap_sb: tap_sb''s twin');
SELECT lives_ok($$SELECT mnemo.append_message('twin', 'user', '[{"type": "text", "text": "pooled beta"}]', id => 'm9')$$,
                'tap_spool appends to it');
SELECT is((SELECT string_agg(mnemo_text, ' ') FROM (
              SELECT p ->> 'text' AS mnemo_text FROM mnemo.get_messages_with_parts('twin') m, jsonb_array_elements(m.parts) p
               WHERE m.id = 'm9') t), 'pooled beta', 'and reads it back');
SET mnemo.tenant = 'tap_sa';
SELECT is((SELECT title FROM mnemo.get_session('twin')), 'title alpha', 'with mnemo.tenant = tap_sa: tap_sa''s twin');
SELECT is((SELECT count(*) FROM mnemo.get_messages('twin') WHERE id = 'm9'), 0::bigint,
          'which has no m9');
RESET mnemo.tenant;
RESET ROLE;
SELECT throws_ok($$SELECT mnemo.get_session('twin')$$, 'MN013', NULL, 'the superuser: twin is ambiguous too');
SELECT throws_ok($$SELECT mnemo.purge_session('twin')$$, 'MN013', NULL, 'the superuser''s purge of twin: MN013, nothing purged');
SELECT is((SELECT count(*) FROM mnemo.sessions WHERE id = 'twin'), 2::bigint, 'both twins are there');
CREATE TEMP TABLE sb_before_purge AS SELECT tw.rows_of('tap_sb') AS rows;
SET mnemo.tenant = 'tap_sa';
SELECT lives_ok($$SELECT mnemo.purge_session('twin_fork2'); SELECT mnemo.purge_session('twin_fork');
                  SELECT mnemo.purge_session('twin')$$,
                'with mnemo.tenant = tap_sa, the superuser purges tap_sa''s twin and its forks');
RESET mnemo.tenant;
SELECT is((SELECT string_agg(tenant, ',') FROM mnemo.sessions WHERE id = 'twin'), 'tap_sb', 'tap_sb''s twin is left');
SELECT is(tw.rows_of('tap_sb'), (SELECT rows FROM sb_before_purge), 'with every row of it');
SELECT is((SELECT count(*) FROM mnemo.messages WHERE session_id = 'twin' AND tenant = 'tap_sa'), 0::bigint,
          'and none of tap_sa''s twin');
SELECT is((SELECT title FROM mnemo.get_session('twin')), 'title beta', 'twin is now unambiguous to the superuser');

SELECT * FROM finish();
ROLLBACK;
