-- pgbench script for test/concurrency.sh: every client claims run ids of ONE
-- session, drawn from a small set so that many claim the same id at once;
-- conc_claim (made by the test) records which client won each claim.
\set k random(1, 100)
SELECT conc_claim(:client_id, :k);
