-- pgbench script for test/concurrency.sh: every client appends to a root, to
-- its fork or to the fork's fork (made by the test), or searches the fork or
-- the fork's fork, which first indexes every session of its line.  Searches
-- of related forks index the same sessions; taken in line order their locks
-- deadlocked.
\set k random(0, 4)
\if :k < 3
SELECT seq FROM mnemo.append_message(CASE :k::int WHEN 0 THEN 'conc_root' WHEN 1 THEN 'conc_f1' ELSE 'conc_f2' END, 'user', '[{"type": "text", "text": "hello tool"}]');
\else
SELECT count(*) FROM mnemo.search_history(CASE :k::int WHEN 3 THEN 'conc_f1' ELSE 'conc_f2' END, 'tool');
\endif
