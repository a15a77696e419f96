-- 066_by_id_cost: a read of a few messages by id costs those messages, not
-- the session, whatever the planner believes of the session's size.  The
-- statistics here say the session is empty (it grew after the last ANALYZE,
-- beside two large sessions that fill the most common values): a join of
-- the ids to its messages would then be hashed over all of them.  Counted
-- as the heap rows of mnemo.log that index scans fetched in this
-- transaction (pg_stat_xact_user_tables), which a plan decides and the
-- host's speed does not.
BEGIN;
SELECT plan(5);

CREATE FUNCTION pg_temp.fill(sid text, n integer) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM mnemo.create_session(sid);
    FOR b IN 0 .. (n - 1) / 500 LOOP
        PERFORM mnemo.append_messages(sid, (
            SELECT jsonb_agg(jsonb_build_object(
                       'id', sid || '_' || i,
                       'role', CASE WHEN i % 2 = 0 THEN 'user' ELSE 'assistant' END,
                       'parts', jsonb_build_array(jsonb_build_object('type', 'text', 'text', 'message ' || i)))
                   ORDER BY i)
            FROM generate_series(b * 500, least(n, (b + 1) * 500) - 1) AS i));
    END LOOP;
END $$;

CREATE FUNCTION pg_temp.fetched() RETURNS bigint LANGUAGE sql AS $$
    SELECT idx_tup_fetch FROM pg_stat_xact_user_tables WHERE relid = 'mnemo.log'::regclass
$$;

SELECT pg_temp.fill('tap_big_a', 3000);
SELECT pg_temp.fill('tap_big_b', 3000);
ANALYZE mnemo.log;
SELECT pg_temp.fill('tap_small', 3000);

CREATE TEMP TABLE asked AS
    SELECT array_agg('tap_small_' || i ORDER BY i) AS ids FROM generate_series(2900, 2919) AS i;
CREATE TEMP TABLE cost (what text PRIMARY KEY, before bigint, after bigint);

INSERT INTO cost VALUES ('by_ids', pg_temp.fetched(), NULL);
SELECT is((SELECT count(*) FROM mnemo.get_messages_with_parts_by_ids('tap_small', (SELECT ids FROM asked))),
          20::bigint, 'get_messages_with_parts_by_ids: 20 messages of a session of 3,000');
UPDATE cost SET after = pg_temp.fetched() WHERE what = 'by_ids';
SELECT cmp_ok((SELECT after - before FROM cost WHERE what = 'by_ids'), '<=', 100::bigint,
              'they fetch about their own rows (a message row and a part row each), not the session''s 3,000');

SELECT lives_ok($$ SELECT mnemo.commit_summary('tap_small', 'tap_small_sum', 'twenty of them', 5,
                                               (SELECT ids FROM asked)) $$, 'a summary of those 20');
INSERT INTO cost VALUES ('expand', pg_temp.fetched(), NULL);
SELECT is((SELECT count(*) FROM mnemo.expand_summary('tap_small', 'tap_small_sum')), 20::bigint,
          'expand_summary: the 20 messages it covers');
UPDATE cost SET after = pg_temp.fetched() WHERE what = 'expand';
SELECT cmp_ok((SELECT after - before FROM cost WHERE what = 'expand'), '<=', 100::bigint,
              'expanding them fetches about their own rows, not the session''s');

SELECT * FROM finish();
ROLLBACK;
