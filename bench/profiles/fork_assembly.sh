#!/usr/bin/env bash
# bench/profiles/fork_assembly.sh: what assembling a fork's context costs,
# against its parent's, when the parent was never compacted (its whole
# history is its view, and the fork copies that view).
#
#   bash bench/profiles/fork_assembly.sh [OUT.txt]
#   env: FORK_MESSAGES (10000), FORK_SECONDS (3, per pgbench run),
#        FORK_PORT (54380)
#
# Starts a private cluster (test/cluster.sh), installs mnemo, appends
# FORK_MESSAGES messages of about twelve tokens to a session, forks it at
# its newest seq, ANALYZEs, then for the parent and the fork: the rows of
# mnemo's tables one call reads (this transaction's counters), and the
# mean latency of `build_context(s, 1000)` and `turn_context(s, 1000)`,
# pgbench -M prepared -c 1.
set -euo pipefail
n=${FORK_MESSAGES:-10000}
secs=${FORK_SECONDS:-3}
out=${1:-/dev/stdout}

# shellcheck source-path=SCRIPTDIR source=private_cluster.sh
. "$(dirname "$0")/private_cluster.sh" fork-assembly "${FORK_PORT:-54380}"

psql -X -q -v ON_ERROR_STOP=1 -v n="$n" >/dev/null <<'SQL'
CREATE EXTENSION mnemo;
SELECT mnemo.create_session('parent');
SELECT count(*) FROM generate_series(0, (:n - 1) / 10000) AS b,
  LATERAL mnemo.append_messages('parent', (SELECT jsonb_agg(jsonb_build_object(
    'role', CASE WHEN g % 2 = 1 THEN 'user' ELSE 'assistant' END,
    'parts', jsonb_build_array(jsonb_build_object('type', 'text',
      'text', 'message ' || g || ' of the history, about twelve tokens long'))) ORDER BY g)
    FROM generate_series(b * 10000 + 1, least(:n, b * 10000 + 10000)) AS g));
SELECT mnemo.fork_session('parent', (SELECT max(seq) FROM mnemo.messages WHERE session_id = 'parent')::text, 'fork');
ANALYZE;
SQL

{
	echo "# bench/profiles/fork_assembly.sh, $(date -u '+%Y-%m-%d %H:%M UTC'), a parent of $n messages, never compacted, forked at its end"
	echo "# $(psql -X -Atc 'SELECT version()')"
	psql -X -q <<'SQL'
CREATE FUNCTION pg_temp.read(sql text) RETURNS TABLE (relation name, rows_read bigint) LANGUAGE plpgsql AS $$
BEGIN
  CREATE TEMP TABLE before ON COMMIT DROP AS
    SELECT relname, coalesce(idx_tup_fetch, 0) + coalesce(seq_tup_read, 0) AS n
      FROM pg_stat_xact_user_tables WHERE schemaname = 'mnemo';
  EXECUTE sql;
  RETURN QUERY SELECT t.relname, coalesce(t.idx_tup_fetch, 0) + coalesce(t.seq_tup_read, 0) - b.n
    FROM pg_stat_xact_user_tables t JOIN before b USING (relname)
   WHERE t.schemaname = 'mnemo'
     AND coalesce(t.idx_tup_fetch, 0) + coalesce(t.seq_tup_read, 0) - b.n > 0 ORDER BY 1;
END $$;
\pset footer off
BEGIN;
\echo rows read by build_context(parent, 1000)
SELECT * FROM pg_temp.read($$SELECT count(*) FROM mnemo.build_context('parent', 1000)$$);
COMMIT;
BEGIN;
\echo rows read by build_context(fork, 1000)
SELECT * FROM pg_temp.read($$SELECT count(*) FROM mnemo.build_context('fork', 1000)$$);
COMMIT;
SQL
	for s in parent fork; do
		for f in build_context turn_context; do
			echo "SELECT count(*) FROM mnemo.$f('$s', 1000);" >"$dir/q.sql"
			printf '%-14s %-7s %s ms\n' "$f" "$s" \
				"$(pgbench -n -M prepared -f "$dir/q.sql" -T "$secs" -c 1 2>&1 | grep -o 'latency average = [0-9.]*' | grep -o '[0-9.]*$')"
		done
	done
} >"$out"
