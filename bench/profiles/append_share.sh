#!/usr/bin/env bash
# bench/profiles/append_share.sh: the CPU an append costs, as a ratio the
# host's speed cancels out of, for comparing two trees on a noisy machine.
#
#   bash bench/profiles/append_share.sh turn|batch [CALLS]
#
#   turn    CALLS (default 6000) append_messages calls of one turn (user
#           ~200 B + assistant ~800 B, as bench/append)
#   batch   CALLS (default 300) append_messages calls of 100 messages (user
#           ~200 B and assistant ~800 B alternating)
#
# One psql connection runs the calls as the application role
# mnemo_bench_app (created if need be, as bench/append does) with
# synchronous_commit off, prepared once, while perf samples its backend.
# Prints the samples in mnemo_append_messages over the backend's other
# samples (parsing the call, commit): the same work on both sides of a
# comparison, so the ratio moves with what mnemo does, not with the host.
# Run it against each tree's cluster in turn, several times, and compare
# medians (doc/benchmarks.md, "Before and after the Citus and tenancy work").
# Connects with the PG* environment to a database with mnemo; needs perf.
set -euo pipefail

what=${1:?usage: append_share.sh turn|batch [CALLS]}
work=$(mktemp -d /tmp/mnemo-share.XXXXXX)
trap 'rm -rf "$work"' EXIT

psql -X -q -c "DO \$\$ BEGIN CREATE ROLE mnemo_bench_app NOLOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END \$\$" \
	-c "GRANT USAGE ON SCHEMA mnemo TO mnemo_bench_app" >/dev/null
session=$(psql -X -qAt -c "SET ROLE mnemo_bench_app" -c "SELECT id FROM mnemo.create_session()")
case $what in
turn)
	calls=${2:-6000}
	user=$(printf 'u%.0s' $(seq 200))
	assistant=$(printf 'a %.0s' $(seq 400))
	payload="[{\"role\": \"user\", \"parts\": [{\"type\": \"text\", \"text\": \"$user\"}]}, {\"role\": \"assistant\", \"parts\": [{\"type\": \"text\", \"text\": \"$assistant\"}]}]"
	;;
batch)
	calls=${2:-300}
	payload=$(psql -X -Atc "SELECT jsonb_agg(jsonb_build_object('role', CASE WHEN n % 2 = 1 THEN 'user' ELSE 'assistant' END,
		'parts', jsonb_build_array(jsonb_build_object('type', 'text',
			'text', repeat('word ', CASE WHEN n % 2 = 1 THEN 40 ELSE 160 END))))) FROM generate_series(1, 100) AS n")
	;;
*)
	echo "usage: append_share.sh turn|batch [CALLS]" >&2
	exit 2
	;;
esac

{
	echo "SET ROLE mnemo_bench_app; SET synchronous_commit = off;"
	echo "\\o $work/pid"
	echo "SELECT pg_backend_pid();"
	echo "\\o /dev/null"
	echo "SELECT pg_sleep(1.5);"
	echo "PREPARE a(text, jsonb) AS SELECT count(*) FROM mnemo.append_messages(\$1, \$2);"
	for _ in $(seq "$calls"); do
		printf "EXECUTE a('%s', '%s');\n" "$session" "$payload"
	done
} >"$work/calls.sql"
psql -X -q -At -v ON_ERROR_STOP=1 -f "$work/calls.sql" >"$work/psql.out" 2>&1 &
client=$!
while [ ! -s "$work/pid" ]; do sleep 0.1; done
sleep 0.2
perf record -F 2000 -g -p "$(head -1 "$work/pid")" -o "$work/perf.data" >/dev/null 2>&1
wait "$client" || { cat "$work/psql.out" >&2; exit 1; }
perf script -i "$work/perf.data" -F ip,sym 2>/dev/null | awk -v what="$what" -v calls="$calls" '
/^$/ { if (n > 0) { total++; for (i = 1; i <= n; i++) if (frame[i] == "mnemo_append_messages") { inside++; break } } n = 0; next }
{ frame[++n] = $2 }
END { printf "%s x %d: %d samples, %d in mnemo_append_messages, share %.3f\n", what, calls, total, inside, inside / (total - inside) }'
