-- 100_partition_layout: mnemo._partition_by_session, which CREATE EXTENSION
-- runs on every session table when mnemo.partitions > 0 (doc/scale-out.md),
-- on a scratch table that has one of everything the rebuild must carry over:
-- owner, serial, default, CHECK, comments, keys, indexes, a trigger,
-- row-level security with two policies, table and column grants.  The same
-- file passes on both layouts: it partitions its own table.
BEGIN;
SELECT plan(31);

CREATE ROLE tap_part_owner NOLOGIN;
CREATE ROLE tap_part_reader NOLOGIN;
CREATE SCHEMA tap_part;
GRANT USAGE ON SCHEMA tap_part TO tap_part_reader;
CREATE FUNCTION tap_part.stamp() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.note := coalesce(NEW.note, 'stamped');
    RETURN NEW;
END
$$;
CREATE TABLE tap_part.t (
    session_id  text NOT NULL,
    id          text NOT NULL,
    n           bigserial,
    size        integer NOT NULL DEFAULT 7 CHECK (size >= 0),
    note        text,
    PRIMARY KEY (session_id, id),
    UNIQUE (session_id, n)
);
CREATE INDEX t_note_idx ON tap_part.t (session_id, lower(note));
COMMENT ON TABLE tap_part.t IS 'scratch';
COMMENT ON COLUMN tap_part.t.note IS 'a note';
COMMENT ON INDEX tap_part.t_note_idx IS 'by note';
CREATE TRIGGER stamp BEFORE INSERT ON tap_part.t FOR EACH ROW EXECUTE FUNCTION tap_part.stamp();
ALTER TABLE tap_part.t ENABLE ROW LEVEL SECURITY;
ALTER TABLE tap_part.t FORCE ROW LEVEL SECURITY;
CREATE POLICY own ON tap_part.t TO tap_part_reader USING (session_id = current_user)
    WITH CHECK (size < 100);
CREATE POLICY small ON tap_part.t AS RESTRICTIVE FOR SELECT TO PUBLIC USING (size < 50);
GRANT SELECT, INSERT ON tap_part.t TO tap_part_reader;
GRANT UPDATE (note) ON tap_part.t TO tap_part_reader;
ALTER TABLE tap_part.t OWNER TO tap_part_owner;

-- what the table is, as text: kept before, compared after
CREATE FUNCTION pg_temp.shape()
RETURNS TABLE (columns text[], defaults text[], constraints text[], indexes text[], policies text[],
               acl text, column_acl text[])
LANGUAGE sql AS $$
SELECT (SELECT array_agg(format('%s %s %s', attname, format_type(atttypid, atttypmod), attnotnull) ORDER BY attnum)
          FROM pg_attribute WHERE attrelid = 'tap_part.t'::regclass AND attnum > 0 AND NOT attisdropped) AS columns,
       (SELECT array_agg(pg_get_expr(adbin, adrelid) ORDER BY adnum) FROM pg_attrdef
         WHERE adrelid = 'tap_part.t'::regclass) AS defaults,
       (SELECT array_agg(conname || ' ' || pg_get_constraintdef(oid) ORDER BY conname) FROM pg_constraint
         WHERE conrelid = 'tap_part.t'::regclass) AS constraints,
       (SELECT array_agg(regexp_replace(pg_get_indexdef(indexrelid), '^.* USING ', '') ORDER BY indexrelid::regclass::text)
          FROM pg_index WHERE indrelid = 'tap_part.t'::regclass) AS indexes,
       (SELECT array_agg(polname || ' ' || polpermissive || ' ' || polcmd::text || ' ' || polroles::regrole[]::text
                         || ' ' || coalesce(pg_get_expr(polqual, polrelid), '') || ' '
                         || coalesce(pg_get_expr(polwithcheck, polrelid), '') ORDER BY polname)
          FROM pg_policy WHERE polrelid = 'tap_part.t'::regclass) AS policies,
       (SELECT relacl::text FROM pg_class WHERE oid = 'tap_part.t'::regclass) AS acl,
       (SELECT array_agg(attname || ' ' || attacl::text ORDER BY attname) FROM pg_attribute
         WHERE attrelid = 'tap_part.t'::regclass AND attacl IS NOT NULL) AS column_acl
$$;
CREATE TEMP TABLE before AS SELECT * FROM pg_temp.shape();

-- refusals change nothing
SELECT throws_ok($$SELECT mnemo._partition_by_session('mnemo.file_references', 4)$$, '22023', NULL,
                 'a table without a session column is refused (22023)');
SELECT throws_ok($$SELECT mnemo._partition_by_session('tap_part.t', 0)$$, '22023', NULL,
                 'zero partitions are refused (22023)');
CREATE TABLE tap_part.bad (session_id text NOT NULL, id text NOT NULL UNIQUE);
SELECT throws_ok($$SELECT mnemo._partition_by_session('tap_part.bad', 4)$$, '0A000',
                 'unique constraint on partitioned table must include all partitioning columns',
                 'a unique key without the session column is refused, as Citus refuses it (0A000)');
SELECT is((SELECT relkind::text FROM pg_class WHERE oid = 'tap_part.bad'::regclass), 'r',
          'the refused table is left as it was');
CREATE VIEW tap_part.v AS SELECT id FROM tap_part.t;
SELECT throws_ok($$SELECT mnemo._partition_by_session('tap_part.t', 3)$$, '2BP01', NULL,
                 'a table something depends on is refused (2BP01), as the install''s tables are after it');
SELECT is((SELECT relkind::text FROM pg_class WHERE oid = 'tap_part.t'::regclass), 'r',
          'and left as it was');
DROP VIEW tap_part.v;
SELECT ok(has_function_privilege('public', 'mnemo._partition_by_session(regclass, integer)', 'EXECUTE') = false,
          'PUBLIC may not execute mnemo._partition_by_session');

SELECT lives_ok($$SELECT mnemo._partition_by_session('tap_part.t', 3)$$, 'the scratch table is partitioned');
SELECT is((SELECT pg_get_partkeydef('tap_part.t'::regclass)), 'HASH (session_id)', 'by hash of session_id');
SELECT set_eq($$SELECT inhrelid::regclass::text FROM pg_inherits WHERE inhparent = 'tap_part.t'::regclass$$,
              ARRAY['tap_part.t_p0', 'tap_part.t_p1', 'tap_part.t_p2'], 'into t_p0 .. t_p2');
SELECT is((SELECT columns FROM pg_temp.shape()), (SELECT columns FROM before), 'the same columns');
SELECT is((SELECT defaults FROM pg_temp.shape()), (SELECT defaults FROM before), 'the same defaults (the serial''s sequence)');
SELECT is((SELECT constraints FROM pg_temp.shape()), (SELECT constraints FROM before), 'the same constraints, names included');
SELECT is((SELECT indexes FROM pg_temp.shape()), (SELECT indexes FROM before), 'the same indexes');
SELECT is((SELECT policies FROM pg_temp.shape()), (SELECT policies FROM before), 'the same policies');
SELECT is((SELECT acl FROM pg_temp.shape()), (SELECT acl FROM before), 'the same grants');
SELECT is((SELECT column_acl FROM pg_temp.shape()), (SELECT column_acl FROM before), 'the same column grants');
SELECT is((SELECT relowner::regrole::text FROM pg_class WHERE oid = 'tap_part.t'::regclass), 'tap_part_owner',
          'the same owner');
SELECT ok((SELECT relrowsecurity AND relforcerowsecurity FROM pg_class WHERE oid = 'tap_part.t'::regclass),
          'row-level security enabled and forced');
SELECT is((SELECT count(*) FROM pg_class c JOIN pg_inherits i ON i.inhrelid = c.oid
            WHERE i.inhparent = 'tap_part.t'::regclass AND c.relrowsecurity
              AND NOT EXISTS (SELECT FROM pg_policy WHERE polrelid = c.oid)
              AND c.relacl IS NULL), 3::bigint,
          'each partition: row-level security, no policy, no grant (read through the table only)');
SELECT is(obj_description('tap_part.t'::regclass, 'pg_class'), 'scratch', 'the table comment');
SELECT is(col_description('tap_part.t'::regclass, 5), 'a note', 'the column comment');
SELECT is(obj_description('tap_part.t_note_idx'::regclass, 'pg_class'), 'by note', 'the index comment');
SELECT has_trigger('tap_part', 't', 'stamp', 'the trigger');
SELECT is((SELECT d.refobjid::regclass::text FROM pg_depend d
            WHERE d.objid = 'tap_part.t_n_seq'::regclass AND d.deptype = 'a'), 'tap_part.t',
          'the serial''s sequence belongs to the new table');
SELECT set_eq($$SELECT c.relname::text FROM pg_index x JOIN pg_class c ON c.oid = x.indexrelid
                 WHERE x.indrelid = 'tap_part.t_p1'::regclass$$,
              ARRAY['t_pkey_p1', 't_session_id_n_key_p1', 't_note_idx_p1'],
              'a partition''s indexes are named <index>_p<i>');

-- rows go to their session's partition, through the trigger and the default
INSERT INTO tap_part.t (session_id, id) VALUES ('a', '1'), ('a', '2'), ('b', '1');
SELECT is((SELECT count(DISTINCT tableoid) FROM tap_part.t WHERE session_id = 'a'), 1::bigint,
          'one session''s rows are in one partition');
SELECT is((SELECT string_agg(note || size || '#' || n, ',' ORDER BY session_id, id) FROM tap_part.t),
          'stamped7#1,stamped7#2,stamped7#3', 'the trigger, the default and the serial still fill the rows');
SELECT throws_ok($$INSERT INTO tap_part.t (session_id, id) VALUES ('a', '1')$$, '23505', NULL,
                 'the primary key still holds');
SELECT throws_ok($$INSERT INTO tap_part.t (session_id, id, size) VALUES ('c', '1', -1)$$, '23514', NULL,
                 'the CHECK constraint still holds');
SET LOCAL ROLE tap_part_reader;
SELECT is((SELECT count(*) FROM tap_part.t), 0::bigint,
          'the policies still apply: the reader sees no session of its own');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
