#!/usr/bin/env bash
# bench/profiles/long_snapshot.sh: appends while another transaction holds a
# snapshot, as pg_dump does for the whole of its run (and a long import, or
# any long transaction).
#
#   bash bench/profiles/long_snapshot.sh [SLICES] [SECONDS]   (defaults 4, 15)
#
# Connects with the PG* environment to a database with mnemo.  Two pgbench
# clients append one small message a call, each to a session of its own,
# for SLICES slices of SECONDS; the rate of each slice is printed.  Then the
# same again while a REPEATABLE READ transaction that has read
# mnemo.sessions sleeps beside them.  Up to 0.5.0 each append updated its
# session's row (last_seq, last_position, updated_at), and none of the dead
# versions could be pruned while the snapshot was held: the second line fell
# slice after slice where the first stayed level.  Since 0.6.0 an append
# writes no version of the row, and both lines are level.  mnemo.sessions'
# size and dead tuples are printed after each line.
set -euo pipefail
slices=${1:-4}
secs=${2:-15}
script=$(mktemp /tmp/mnemo-long-snapshot.XXXXXX)
holder=
cleanup() {
	if [ -n "$holder" ]; then
		psql -X -q -c "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		               WHERE application_name = 'mnemo_long_snapshot'" >/dev/null 2>&1 || true
		wait "$holder" 2>/dev/null || true
	fi
	rm -f "$script"
}
trap cleanup EXIT

cat >"$script" <<'SQL'
SELECT mnemo.append_messages('long_snapshot_' || :k || '_' || :client_id, '[{"role": "user", "parts": [{"type": "text", "text": "a user message"}]}]');
SQL

# line K LABEL: one line of SLICES rates, on two sessions of its own
# (long_snapshot_K_0 and _1, K a number: pgbench quotes no variable)
line() {
	local k=$1 rates=()
	shift
	# each line starts from a table without dead versions
	psql -X -q -c "VACUUM mnemo.sessions" >/dev/null
	psql -X -q -v ON_ERROR_STOP=1 -c "SELECT mnemo.create_session('long_snapshot_$k' || '_' || c) FROM generate_series(0, 1) c" >/dev/null
	for ((i = 1; i <= slices; i++)); do
		rates+=("$(pgbench -n -c 2 -j 2 -T "$secs" -D k="$k" -f "$script" 2>/dev/null |
			awk '/^tps/ { printf "%d", $3 }')")
	done
	printf '%-24s %s appends/s\n' "$1" "${rates[*]}"
	psql -X -Atc "SELECT '  mnemo.sessions: ' || pg_size_pretty(pg_relation_size('mnemo.sessions')) || ', '
	              || n_dead_tup || ' dead tuples' FROM pg_stat_user_tables WHERE relid = 'mnemo.sessions'::regclass"
}

echo "# bench/profiles/long_snapshot.sh $slices $secs, $(date -u +%Y-%m-%d), load $(cut -d' ' -f1 /proc/loadavg)"
echo "# two clients, one append of one message a call, a session each; rates of ${secs} s slices"
line "$$1" "no snapshot held"
printf 'BEGIN ISOLATION LEVEL REPEATABLE READ;\nSELECT count(*) FROM mnemo.sessions;\nSELECT pg_sleep(%d);\nCOMMIT;\n' \
	$((slices * secs + 30)) | PGAPPNAME=mnemo_long_snapshot psql -X -q >/dev/null 2>&1 &
holder=$!
sleep 1
line "$$2" "a snapshot held"
