#!/usr/bin/env bash
# The Citus benchmark: a delegated call on a coordinator and two workers
# (test/citus/cluster.sh, all on this machine, over loopback) against the
# same call on a single node (test/cluster.sh), both through pgbench with
# prepared statements, in the same run:
#
#   - per-call latency, one client: append_message (one message, one part)
#     and build_context (a session of BENCH_CITUS_MESSAGES messages), and
#     build_context of a fork of such a session at its end (on the cluster
#     its source may be on the other worker: the fork's node reads it);
#   - append throughput, 8 clients on 64 sessions.
#
#   bash bench/citus.sh
#   BENCH_CITUS_SECONDS   seconds per measure (default 10)
#   BENCH_CITUS_MESSAGES  messages per session for build_context (default 100)
#
# Without Citus in the PostgreSQL that pg_config names it prints one line
# saying it was skipped, and why.  Figures: doc/benchmarks.md.
set -euo pipefail
cd "$(dirname "$0")/.."

lib=$(pg_config --pkglibdir)
if [ ! -f "$lib/citus.so" ]; then
	echo "bench/citus: skipped: Citus is not installed in the PostgreSQL that pg_config names ($lib/citus.so is missing)"
	exit 0
fi
secs=${BENCH_CITUS_SECONDS:-10}
msgs=${BENCH_CITUS_MESSAGES:-100}
make -s install >/dev/null

top=$(mktemp -d /tmp/mnemo-bench-citus.XXXXXX)
[ "$(id -u)" = 0 ] && chmod 755 "$top"
stop_all() {
	bash test/citus/cluster.sh stop "$top/citus" >/dev/null 2>&1 || true
	MNEMO_TEST_PORT=${MNEMO_BENCH_PORT:-57439} bash test/cluster.sh stop "$top/single" >/dev/null 2>&1 || true
	rm -rf "$top"
}
trap stop_all EXIT

bash test/citus/cluster.sh start "$top/citus" mnemo_bench >/dev/null
MNEMO_TEST_PORT=${MNEMO_BENCH_PORT:-57439} bash test/cluster.sh start "$top/single"
(
	eval "$(MNEMO_TEST_PORT=${MNEMO_BENCH_PORT:-57439} bash test/cluster.sh env "$top/single")"
	createdb mnemo_bench
	psql -X -q -d mnemo_bench -c "CREATE EXTENSION mnemo"
)

cat >"$top/append.sql" <<'SQL'
\set s random(1, 64)
SELECT mnemo.append_message(:s::text, 'user', '[{"type": "text", "text": "a benchmark turn"}]');
SQL
cat >"$top/context.sql" <<'SQL'
\set s random(1, 64)
SELECT * FROM mnemo.build_context(:s::text, 1000000);
SQL
cat >"$top/fork.sql" <<'SQL'
\set s random(1001, 1016)
SELECT * FROM mnemo.build_context(:s::text, 1000000);
SQL

# measure LAYOUT: the figures of one layout, as "name value" lines
measure() {
	psql -X -q -v ON_ERROR_STOP=1 -c "
	  SELECT mnemo.create_session(g::text) FROM generate_series(1, 64) g" >/dev/null
	for g in $(seq 1 64); do
		psql -X -q -v ON_ERROR_STOP=1 -c "SELECT count(*) FROM mnemo.append_messages('$g',
		  (SELECT jsonb_agg(jsonb_build_object('role', 'user', 'parts',
		          jsonb_build_array(jsonb_build_object('type', 'text', 'text', 'message ' || m))))
		     FROM generate_series(1, $msgs) m))" >/dev/null
	done
	for g in $(seq 1 16); do
		psql -X -q -v ON_ERROR_STOP=1 -c "SELECT mnemo.fork_session('$g', '$msgs', '$((1000 + g))')" >/dev/null
	done
	pgbench -n -M prepared -c 1 -T "$secs" -f "$top/fork.sql" 2>/dev/null |
		awk -v l="$1" '/^latency average/ { print l " fork_build_context latency_ms " $4 }'
	pgbench -n -M prepared -c 1 -T "$secs" -f "$top/append.sql" 2>/dev/null |
		awk -v l="$1" '/^latency average/ { print l " append_message latency_ms " $4 }'
	pgbench -n -M prepared -c 1 -T "$secs" -f "$top/context.sql" 2>/dev/null |
		awk -v l="$1" '/^latency average/ { print l " build_context latency_ms " $4 }'
	pgbench -n -M prepared -c 8 -j 2 -T "$secs" -f "$top/append.sql" 2>/dev/null |
		awk -v l="$1" '/^tps/ { print l " append_8_clients calls_per_s " $3 }'
}

{
	(eval "$(MNEMO_TEST_PORT=${MNEMO_BENCH_PORT:-57439} bash test/cluster.sh env "$top/single")"
	 export PGDATABASE=mnemo_bench; measure single)
	(eval "$(bash test/citus/cluster.sh env "$top/citus" mnemo_bench)"; measure citus)
} | tee "$top/figures"

awk '{ v[$1 " " $2] = $4 }
     END {
       printf "citus/single: append_message latency %.2fx, build_context latency %.2fx, on a fork %.2fx, 8-client append throughput %.2fx\n",
         v["citus append_message"] / v["single append_message"],
         v["citus build_context"] / v["single build_context"],
         v["citus fork_build_context"] / v["single fork_build_context"],
         v["citus append_8_clients"] / v["single append_8_clients"]
     }' "$top/figures"
