#!/usr/bin/env bash
# bench/profiles/perf.sh: where a backend spends an append or a load, by perf.
#
#   bash bench/profiles/perf.sh turn|import OUT.txt
#
#   turn    one append_messages call per turn (user ~200 B + assistant
#           ~800 B, as bench/append; libmnemo's statement, which returns
#           the new ids), pgbench -M prepared, one client,
#           synchronous_commit off, 8 s recorded in the serving backend
#   batch   one append_messages call of 100 messages (user ~200 B and
#           assistant ~800 B alternating), pgbench -M prepared, one client,
#           synchronous_commit off, 8 s recorded in the serving backend
#   import  client/mnemo import of 50,000 messages of one ~90 B text part
#           each, ids kept (as bench/import.sh), recorded in the backend
#   load    SELECT * FROM mnemo.get_messages_flat() of a session of 2,000
#           messages of one text part each (user ~200 B, assistant ~800 B,
#           as bench/append's history load), pgbench -M prepared, one
#           client, 8 s recorded in the serving backend
#
# Connects with the PG* environment to a database with mnemo (as bench/run.sh
# or test/cluster.sh sets it), needs perf and, for import, client/mnemo.
# Writes perf's call graph, by inclusive share, to OUT.txt.
#
# MNEMO_PERF_ROLE=ROLE runs every call as ROLE (SET ROLE at connection
# start, as bench/append's mnemo_bench_app: made here if missing), so that
# the profile takes an application role's path; by default they run as
# the connecting superuser, whose writes check the session's tenant first.
set -euo pipefail
cd "$(dirname "$0")/../.."
role_opt=
if [ -n "${MNEMO_PERF_ROLE:-}" ]; then
	psql -X -q -v ON_ERROR_STOP=1 -v role="$MNEMO_PERF_ROLE" <<'SQL'
SELECT format('CREATE ROLE %I NOLOGIN', :'role') WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = :'role') \gexec
SELECT format('GRANT USAGE ON SCHEMA mnemo TO %I', :'role') \gexec
SQL
	role_opt="-c role=$MNEMO_PERF_ROLE"
	export PGOPTIONS="${PGOPTIONS:-} $role_opt"
fi

what=${1:?usage: perf.sh turn|batch|import|load OUT.txt}
out=${2:?usage: perf.sh turn|batch|import|load OUT.txt}
work=$(mktemp -d /tmp/mnemo-perf.XXXXXX)
trap 'rm -rf "$work"' EXIT

case $what in
turn)
	session=$(psql -X -Atc "SELECT id FROM mnemo.create_session()")
	user=$(printf 'u%.0s' $(seq 200))
	assistant=$(printf 'a %.0s' $(seq 400))
	printf "SELECT id, seq FROM mnemo.append_messages('%s'::text, '[{\"role\": \"user\", \"parts\": [{\"type\": \"text\", \"text\": \"%s\"}]}, {\"role\": \"assistant\", \"parts\": [{\"type\": \"text\", \"text\": \"%s\"}]}]'::jsonb);\n" \
		"$session" "$user" "$assistant" >"$work/turn.sql"
	PGOPTIONS="-c synchronous_commit=off $role_opt" pgbench -n -M prepared -f "$work/turn.sql" -T 12 -c 1 \
		>"$work/pgbench.txt" 2>&1 &
	sleep 2
	pid=$(psql -X -Atc "SELECT pid FROM pg_stat_activity WHERE application_name = 'pgbench' LIMIT 1")
	perf record -g -p "$pid" -o "$work/perf.data" -- sleep 8 2>/dev/null
	wait
	header="one append_messages call per turn, pgbench -M prepared -c 1, synchronous_commit=off: $(grep -o 'tps = [0-9.]*' "$work/pgbench.txt")"
	comm=()
	;;
batch)
	session=$(psql -X -Atc "SELECT id FROM mnemo.create_session()")
	batch=$(psql -X -Atc "SELECT jsonb_agg(jsonb_build_object('role', CASE WHEN n % 2 = 1 THEN 'user' ELSE 'assistant' END,
		'parts', jsonb_build_array(jsonb_build_object('type', 'text',
			'text', repeat('word ', CASE WHEN n % 2 = 1 THEN 40 ELSE 160 END))))) FROM generate_series(1, 100) AS n")
	printf "SELECT id, seq FROM mnemo.append_messages('%s'::text, '%s'::jsonb);\n" "$session" "$batch" >"$work/batch.sql"
	PGOPTIONS="-c synchronous_commit=off $role_opt" pgbench -n -M prepared -f "$work/batch.sql" -T 12 -c 1 \
		>"$work/pgbench.txt" 2>&1 &
	sleep 2
	pid=$(psql -X -Atc "SELECT pid FROM pg_stat_activity WHERE application_name = 'pgbench' LIMIT 1")
	perf record -g -p "$pid" -o "$work/perf.data" -- sleep 8 2>/dev/null
	wait
	header="one append_messages call of 100 messages, pgbench -M prepared -c 1, synchronous_commit=off: $(grep -o 'tps = [0-9.]*' "$work/pgbench.txt")"
	comm=()
	;;
import)
	awk -v n=50000 -v tag="$$-$(date +%s)" 'BEGIN {
		printf "{\"type\": \"mnemo.session\", \"version\": 1, \"id\": \"perf-import-%s\", \"agent\": \"default\", \"model_id\": \"\", \"provider_id\": \"\", \"system_prompt\": \"\", \"created_at\": 1772441431000}\n", tag
		for (i = 1; i <= n; i++)
			printf "{\"id\": \"msg_%08d\", \"role\": \"%s\", \"created_at\": %d, \"agent\": \"default\", \"model_id\": \"\", \"provider_id\": \"\", \"parts\": [{\"id\": \"part_%08d\", \"text\": \"message %d of the import profile, some ninety bytes of words to store and to index\", \"type\": \"text\", \"token_estimate\": 22}]}\n", i, (i % 2 ? "user" : "assistant"), 1772441431000 + i, i, i
	}' >"$work/transcript.jsonl"
	# the postmaster, so that the backend it forks for the import is recorded
	postmaster=$(head -1 "$(psql -X -Atc 'SHOW data_directory')/postmaster.pid")
	perf record -g -p "$postmaster" -o "$work/perf.data" -- \
		client/mnemo import "$work/transcript.jsonl" --quiet >/dev/null 2>&1
	header="client/mnemo import of 50,000 messages of one text part each (ids kept), the backend"
	comm=()
	;;
load)
	session=$(psql -X -Atc "SELECT id FROM mnemo.create_session()")
	psql -X -q -v ON_ERROR_STOP=1 -v s="$session" <<'SQL'
SELECT count(*) FROM mnemo.append_messages(:'s', (
  SELECT jsonb_agg(jsonb_build_object('role', CASE WHEN n % 2 = 1 THEN 'user' ELSE 'assistant' END,
                   'parts', jsonb_build_array(jsonb_build_object('type', 'text',
                       'text', repeat('word ', CASE WHEN n % 2 = 1 THEN 40 ELSE 160 END))))
                   ORDER BY n)
    FROM generate_series(1, 2000) AS n));
ANALYZE mnemo.log;
SQL
	echo "SELECT * FROM mnemo.get_messages_flat('$session');" >"$work/load.sql"
	pgbench -n -M prepared -f "$work/load.sql" -T 12 -c 1 >"$work/pgbench.txt" 2>&1 &
	sleep 2
	pid=$(psql -X -Atc "SELECT pid FROM pg_stat_activity WHERE application_name = 'pgbench' LIMIT 1")
	perf record -g -p "$pid" -o "$work/perf.data" -- sleep 8 2>/dev/null
	wait
	header="SELECT * FROM mnemo.get_messages_flat() of 2,000 messages, pgbench -M prepared -c 1: $(grep -o 'tps = [0-9.]*' "$work/pgbench.txt")"
	comm=()
	;;
*)
	echo "usage: perf.sh turn|batch|import|load OUT.txt" >&2
	exit 2
	;;
esac
{
	echo "# $header"
	echo "# $(psql -X -Atc 'SELECT version()')"
	echo "# perf report --children (inclusive share of the backend's samples), symbols above 1.5%"
	perf report -i "$work/perf.data" "${comm[@]}" --children --stdio --percent-limit 1.5 -g none 2>/dev/null |
		grep -E '^ +[0-9.]+%' | grep -v ' 0x0000'
} >"$out"
echo "wrote $out"
