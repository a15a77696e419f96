-- compaction_block reads a session that is not a fork from both ends, only
-- as far as its rules need (src/context/context_walk.c), and a fork's view whole
-- (src/context/context_view.c).  The two must pick the same block on every input:
-- for sessions of irregular shapes, a plain session A and a fork B holding
-- the same items (B inherits the first k messages of A's prefix P and
-- appends the rest under the same ids) are compacted alike, block by block
-- as A's picker chooses them, and at every step both pickers are asked over
-- a grid of arguments, leaf and condensed; every answer must be the same.
\set VERBOSITY terse
SELECT setseed(0.36);
-- the messages of a shape, ids m<i>: roles and sizes drawn at random
CREATE FUNCTION pg_temp.shape(shape int, n int, pre text) RETURNS jsonb LANGUAGE sql AS $$
  SELECT jsonb_agg(jsonb_build_object('id', pre || 'm' || g,
    'role', CASE
      WHEN shape = 1 THEN CASE WHEN g % 2 = 1 THEN 'user' ELSE 'assistant' END
      WHEN shape = 2 THEN CASE WHEN g = 1 THEN 'user' WHEN g % 3 = 0 THEN 'assistant' ELSE 'tool' END
      WHEN shape = 3 THEN CASE WHEN r < 0.15 THEN 'user' WHEN r < 0.55 THEN 'assistant' ELSE 'tool' END
      WHEN shape = 4 THEN CASE WHEN g <= 2 THEN 'user' ELSE 'assistant' END
      WHEN shape = 5 THEN 'assistant'
      ELSE 'user' END,
    'parts', jsonb_build_array(jsonb_build_object('type', 'text',
      'text', 'm' || g || ' ' || repeat('word ', CASE WHEN r2 < 0.04 THEN 900 ELSE (r2 * 90)::int END))))
    ORDER BY g)
  FROM (SELECT g, random() AS r, random() AS r2 FROM generate_series(1, n) g) x
$$;
-- the grid: 0 when both sessions answer alike everywhere, else how often not
CREATE FUNCTION pg_temp.differ(a text, b text, OUT differ int, OUT asked int, OUT hits int)
LANGUAGE plpgsql AS $$
DECLARE
  kind text; tm int; mt int; mi int; pt int; lt int; x text; y text;
BEGIN
  differ := 0; asked := 0; hits := 0;
  FOREACH kind IN ARRAY ARRAY['leaf', 'condensed'] LOOP
   FOREACH pt IN ARRAY ARRAY[-1, 0, 60, 700] LOOP
    FOREACH tm IN ARRAY CASE WHEN pt < 0 THEN ARRAY[0, 3, 8] ELSE ARRAY[8] END LOOP
     FOREACH mt IN ARRAY ARRAY[40, 20000] LOOP
      FOREACH mi IN ARRAY ARRAY[2, 3] LOOP
       FOREACH lt IN ARRAY ARRAY[-1, 0, 150] LOOP
        SELECT string_agg(row(k.*)::text, '') INTO x
          FROM mnemo.compaction_block(a, kind, tm, mt, mi, CASE WHEN lt = 0 THEN 7 END,
                                      nullif(pt, -1), nullif(lt, -1)) k;
        SELECT string_agg(row(k.*)::text, '') INTO y
          FROM mnemo.compaction_block(b, kind, tm, mt, mi, CASE WHEN lt = 0 THEN 7 END,
                                      nullif(pt, -1), nullif(lt, -1)) k;
        asked := asked + 1;
        IF x IS NOT NULL THEN hits := hits + 1; END IF;
        IF x IS DISTINCT FROM y THEN
          differ := differ + 1;
          RAISE NOTICE '% and % differ: %(%, %, %, %, %, %)', a, b, kind, tm, mt, mi, pt, lt, 0;
        END IF;
       END LOOP;
      END LOOP;
     END LOOP;
    END LOOP;
   END LOOP;
  END LOOP;
END $$;
-- A, P and B for a shape, then rounds of compaction committed to both
CREATE FUNCTION pg_temp.run(shape int, n int, k int, rounds int,
  OUT shape_ int, OUT steps int, OUT asked int, OUT hits int, OUT differ int)
LANGUAGE plpgsql AS $$
DECLARE
  a text := 'bw' || shape || '_a'; p text := 'bw' || shape || '_p'; b text := 'bw' || shape || '_b';
  msgs jsonb := pg_temp.shape(shape, n, 'bw' || shape);
  blk record; d record; i int; kind text;
BEGIN
  shape_ := shape; steps := 0; asked := 0; hits := 0; differ := 0;
  PERFORM mnemo.create_session(a); PERFORM mnemo.create_session(p);
  PERFORM mnemo.append_messages(a, msgs);
  PERFORM mnemo.append_messages(p, (SELECT jsonb_agg(e ORDER BY o) FROM jsonb_array_elements(msgs) WITH ORDINALITY t(e, o) WHERE o <= k));
  PERFORM mnemo.fork_session(p, k::text, b);
  PERFORM mnemo.append_messages(b, (SELECT jsonb_agg(e ORDER BY o) FROM jsonb_array_elements(msgs) WITH ORDINALITY t(e, o) WHERE o > k));
  FOR i IN 0 .. rounds LOOP
    d := pg_temp.differ(a, b);
    steps := steps + 1; asked := asked + d.asked; hits := hits + d.hits; differ := differ + d.differ;
    EXIT WHEN i = rounds;
    -- the next block as the engine would take it: messages, else nodes;
    -- every other one by budget, which pins the task and the latest user
    -- message, so that messages before a block stay as explicit rows
    kind := 'leaf';
    IF i % 2 = 1 THEN
      SELECT * INTO blk FROM mnemo.compaction_block(a, 'leaf', 4, 900, 3, NULL, 200, 300);
    ELSE
      SELECT * INTO blk FROM mnemo.compaction_block(a, 'leaf', 4, 900, 3);
    END IF;
    IF blk IS NULL OR blk.item_ids IS NULL THEN
      kind := 'condensed';
      SELECT * INTO blk FROM mnemo.compaction_block(a, 'condensed', 4, 900, 2);
    END IF;
    EXIT WHEN blk IS NULL OR blk.item_ids IS NULL;
    PERFORM mnemo.commit_summary(a, 'bw' || shape || '_s' || i, 'summary ' || i || ' of ' || kind,
                                 10 + i, blk.item_ids, kind, 3);
    PERFORM mnemo.commit_summary(b, 'bw' || shape || '_s' || i, 'summary ' || i || ' of ' || kind,
                                 10 + i, blk.item_ids, kind, 3);
  END LOOP;
END $$;
SELECT r.* FROM generate_series(1, 6) s, LATERAL pg_temp.run(s, 140, 50, 6) r;
-- explicit message rows were made (messages kept before a block)
SELECT count(*) > 0 AS explicit_messages FROM mnemo.context_items c JOIN mnemo.sessions s ON s.id = c.session_id AND c.generation = s.context_generation WHERE c.session_id LIKE 'bw%\_a' AND c.item_type = 'message';
-- the fork's view is read whole; A's is walked: the fork is a fork
SELECT s.id, s.fork_seq IS NOT NULL AS fork FROM mnemo.sessions s WHERE s.id LIKE 'bw1\__' ORDER BY s.id;
-- What a pick reads: two sessions never compacted whose oldest and newest
-- messages are alike, one ten times the other, a chat and an agent's loop
-- (one prompt, then only tool steps: the second user message is none, the
-- latest the first of all).  compaction_block reads the same number of rows
-- of mnemo's tables on both (the current transaction's counters, summed
-- over every mnemo table and partition), far fewer than the sessions hold.
CREATE FUNCTION pg_temp.fill(s text, n integer, loop boolean) RETURNS bigint LANGUAGE sql AS $$
  SELECT count(*) FROM mnemo.append_messages(s, (SELECT jsonb_agg(jsonb_build_object(
    'role', CASE WHEN loop AND g = 1 THEN 'user' WHEN loop THEN 'tool'
                 WHEN g % 2 = 1 THEN 'user' ELSE 'assistant' END,
    'parts', jsonb_build_array(jsonb_build_object('type', 'text',
      'text', 'message ' || (n - g) % 2 || ' of the session, about twelve tokens long'))) ORDER BY g)
    FROM generate_series(1, n) g))
$$;
CREATE FUNCTION pg_temp.rows_read() RETURNS bigint LANGUAGE sql AS $$
  SELECT sum(coalesce(idx_tup_fetch, 0) + coalesce(seq_tup_read, 0))::bigint
    FROM pg_stat_xact_user_tables WHERE schemaname = 'mnemo'
$$;
CREATE FUNCTION pg_temp.read_by(sql text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE before bigint := pg_temp.rows_read();
BEGIN
  EXECUTE sql;
  RETURN pg_temp.rows_read() - before;
END $$;
SELECT (mnemo.create_session(s)).id FROM unnest(ARRAY['bw_chat_s', 'bw_chat_l', 'bw_loop_s', 'bw_loop_l']) s;
SELECT pg_temp.fill('bw_chat_s', 1000, false), pg_temp.fill('bw_chat_l', 10000, false),
       pg_temp.fill('bw_loop_s', 1000, true), pg_temp.fill('bw_loop_l', 10000, true);
-- statistics that know the sessions, and pages all-visible, as a database
-- past autovacuum has: plans made on stale statistics differ from
-- partition to partition, and an autovacuum that came during the reads
-- to one partition only would spare the index-only scans of the sessions
-- in it their heap fetches
VACUUM ANALYZE mnemo.sessions, mnemo.log, mnemo.context_items;
CREATE FUNCTION pg_temp.reads(s text) RETURNS TABLE (pick text, items int, rows_read bigint) LANGUAGE sql AS $$
  SELECT 'by turns', (SELECT cardinality(item_ids) FROM mnemo.compaction_block(s, max_tokens => 500)),
         pg_temp.read_by(format('SELECT * FROM mnemo.compaction_block(%L, max_tokens => 500)', s))
  UNION ALL
  SELECT 'by budget', (SELECT cardinality(item_ids) FROM mnemo.compaction_block(s, max_tokens => 500, protect_tokens => 600)),
         pg_temp.read_by(format('SELECT * FROM mnemo.compaction_block(%L, max_tokens => 500, protect_tokens => 600)', s))
  UNION ALL
  SELECT 'condensed', (SELECT cardinality(item_ids) FROM mnemo.compaction_block(s, 'condensed', min_items => 2, protect_tokens => 600)),
         pg_temp.read_by(format('SELECT * FROM mnemo.compaction_block(%L, %L, min_items => 2, protect_tokens => 600)', s, 'condensed'))
$$;
BEGIN;
SELECT small.pick, small.items, large.items AS items_large,
       small.rows_read = large.rows_read AS same_rows_read, large.rows_read < 1000 AS fewer_than_the_small_session_holds
  FROM pg_temp.reads('bw_chat_s') small JOIN pg_temp.reads('bw_chat_l') large USING (pick);
SELECT small.pick, small.items, large.items AS items_large,
       small.rows_read = large.rows_read AS same_rows_read, large.rows_read < 1000 AS fewer_than_the_small_session_holds
  FROM pg_temp.reads('bw_loop_s') small JOIN pg_temp.reads('bw_loop_l') large USING (pick);
COMMIT;
