-- 090_install: CREATE EXTENSION refuses a schema named mnemo that the
-- installing role does not own (its owner could otherwise DROP SCHEMA mnemo
-- CASCADE and take the extension and every row with it), and leaves that
-- schema as it found it.
BEGIN;
SELECT plan(6);

DROP EXTENSION mnemo;
DROP SCHEMA IF EXISTS mnemo CASCADE;
CREATE ROLE tap_squatter NOLOGIN;
CREATE SCHEMA mnemo AUTHORIZATION tap_squatter;
SET ROLE tap_squatter;
CREATE TABLE mnemo.planted (x int);
RESET ROLE;

SELECT throws_ok($$ CREATE EXTENSION mnemo $$, '42501',
                 'schema "mnemo" already exists and is owned by role "tap_squatter", not by "' || current_user || '"',
                 'CREATE EXTENSION refuses a mnemo schema another role owns: 42501');
SELECT is((SELECT nspowner::regrole::text FROM pg_namespace WHERE nspname = 'mnemo'), 'tap_squatter',
          'the schema keeps its owner');
SELECT is((SELECT string_agg(relname, ',') FROM pg_class WHERE relnamespace = 'mnemo'::regnamespace), 'planted',
          'and holds exactly what it held');
SELECT ok(NOT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'mnemo'), 'no extension was created');

-- a mnemo schema the installing role owns is fine
DROP SCHEMA mnemo CASCADE;
CREATE SCHEMA mnemo;
SELECT lives_ok($$ CREATE EXTENSION mnemo $$, 'a mnemo schema of the installing role is used');
SELECT is((SELECT extversion FROM pg_extension WHERE extname = 'mnemo'), '0.13.0', 'and the extension is installed');

SELECT * FROM finish();
ROLLBACK;
