--
-- session_row: the session lock reads the session's row and newest seq by
-- index probes (src/tenancy/session_row.c), which compare session ids in
-- the collation of the indexes.  In a database whose collation orders text
-- unlike its bytes (ICU's en-US: 'a' < 'B'), every session is still found
-- and every append gets the next seq of its own session.
--
\set VERBOSITY sqlstate
SELECT current_database() AS regress_db \gset
CREATE DATABASE mnemo_icu TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US'
    LC_COLLATE 'C.UTF-8' LC_CTYPE 'C.UTF-8';
\c mnemo_icu
SET client_min_messages = warning;
CREATE EXTENSION mnemo;
-- the database's order is not the bytes'
SELECT 'a' < 'B' AS icu_order, 'a' < 'B' COLLATE "C" AS byte_order;

-- 300 sessions whose ids sort differently by either order: mixed case,
-- accents, digits
SELECT count(*) FROM (
  SELECT mnemo.create_session(chr(CASE WHEN i % 2 = 0 THEN 65 ELSE 97 END + i % 26)
                              || CASE WHEN i % 5 = 0 THEN 'é' ELSE '' END
                              || chr(CASE WHEN i % 3 = 0 THEN 97 ELSE 65 END + (i * 7) % 26) || '-' || i)
    FROM generate_series(1, 300) i) s;
-- three rounds of appends, each round in another order of the ids
DO $$
DECLARE
    r int;
    s text;
BEGIN
    FOR r IN 1..3 LOOP
        FOR s IN SELECT id FROM mnemo.sessions
                  ORDER BY CASE r WHEN 1 THEN id WHEN 2 THEN id COLLATE "C" ELSE md5(id) END LOOP
            PERFORM mnemo.append_message(s, 'user', jsonb_build_array(jsonb_build_object(
                'type', 'text', 'text', s || ' round ' || r)));
        END LOOP;
    END LOOP;
END $$;
-- every session has seqs 1, 2, 3, in the order of the rounds
SELECT count(*) AS sessions,
       bool_and(seqs = '{1,2,3}') AS dense,
       bool_and(texts = ARRAY[id || ' round 1', id || ' round 2', id || ' round 3']) AS in_order,
       bool_and(last_seq = 3) AS last_seq
  FROM (SELECT s.id, (mnemo.get_session(s.id)).last_seq,
               array_agg(m.seq ORDER BY m.seq) AS seqs,
               array_agg(p.content->>'text' ORDER BY m.seq) AS texts
          FROM mnemo.sessions s
          JOIN mnemo.messages m ON m.session_id = s.id
          JOIN mnemo.message_parts p ON p.session_id = s.id AND p.seq = m.seq
         GROUP BY s.id) per_session;

-- the keys rebuilt under new OIDs (REINDEX CONCURRENTLY swaps in a new
-- index): the probes find them again, and the next append is seq 4
REINDEX TABLE CONCURRENTLY mnemo.sessions;
REINDEX TABLE CONCURRENTLY mnemo.log;
SELECT count(*) AS appended, bool_and(a.seq = 4) AS seq_4
  FROM mnemo.sessions s,
       LATERAL mnemo.append_message(s.id, 'user', '[{"type": "text", "text": "after the reindex"}]'::jsonb) a;

-- The newest-seq probe starts at the newest seq this backend last found
-- for the session.  Rows it found that were then rolled back, or a session
-- purged and made anew, leave that above the newest: the probe looks again
-- from the start, and the next append takes the next seq, not a taken one.
SELECT id FROM mnemo.create_session('hinted');
SELECT seq FROM mnemo.append_message('hinted', 'user', '[{"type": "text", "text": "one"}]');
SELECT seq FROM mnemo.append_message('hinted', 'assistant', '[{"type": "text", "text": "two"}]');
BEGIN;
SELECT seq FROM mnemo.append_message('hinted', 'user', '[{"type": "text", "text": "three"}]');
SELECT seq FROM mnemo.append_message('hinted', 'assistant', '[{"type": "text", "text": "four"}]');
ROLLBACK;
SELECT seq FROM mnemo.append_message('hinted', 'user', '[{"type": "text", "text": "three again"}]');
SELECT seq FROM mnemo.append_message('hinted', 'assistant', '[{"type": "text", "text": "four again"}]');
SELECT mnemo.purge_session('hinted');
SELECT id FROM mnemo.create_session('hinted');
SELECT seq FROM mnemo.append_message('hinted', 'user', '[{"type": "text", "text": "anew"}]');
SELECT array_agg(seq ORDER BY seq) AS seqs, array_agg(p.content->>'text' ORDER BY seq) AS texts
  FROM mnemo.message_parts p WHERE p.session_id = 'hinted';

\c :regress_db
DROP DATABASE mnemo_icu;
