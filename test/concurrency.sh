#!/usr/bin/env bash
# Concurrency test: many connections appending at once.
#
#   test/concurrency.sh [DIR]
#
# DIR is a running cluster started by test/cluster.sh (test/run.sh passes
# its own); without it a private cluster is started in a temporary directory
# and stopped at the end.  The extension must be installed (make install).
#
# 1. pgbench, 16 clients x 500 appends to ONE session: no errors, 8000
#    messages, seqs dense 1..8000, one context item per message at a dense
#    position, one part per message.
# 2. pgbench, 16 clients x 500 appends, each client to its own session
#    (conc_<client_id>): the same, per session.
# 3. Appends to different sessions do not block each other: while one
#    transaction that appended to session A stays open (idle), an append to
#    B succeeds under lock_timeout = 1s and one to A fails with 55P03 after
#    waiting; a plain append to A waits on the lock and, once the holder
#    commits, gets the next seq.
#
# Prints TAP-like "ok N - ..." / "not ok N - ..." lines; exits non-zero if
# any assertion failed.  These are assertions about behaviour, not speed.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
db=mnemo_concurrency
clients=16
per_client=500

n=0
nfail=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); nfail=$((nfail + 1)); echo "not ok $n - $1"; }

# is GOT EXPECTED DESCRIPTION
is() {
	if [ "$1" = "$2" ]; then
		ok "$3"
	else
		not_ok "$3"
		echo "#   got:      '$1'"
		echo "#   expected: '$2'"
	fi
}

# val SQL: the result of one query, or the error text (never fails).
val() { psql -X -v ON_ERROR_STOP=1 -tA -q -c "$1" 2>&1 || true; }

# sqlstate_of SQL [PGOPTIONS]: the SQLSTATE the statement fails with, or "none".
sqlstate_of() {
	local out
	if out=$(PGOPTIONS=${2:-} psql -X -v ON_ERROR_STOP=1 -v VERBOSITY=sqlstate -tA -q -c "$1" 2>&1); then
		echo none
	else
		sed -n 's/^.*ERROR: *\([0-9A-Z]\{5\}\).*$/\1/p' <<<"$out" | head -1
	fi
}

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# wait_for SQL [SECONDS]: poll until SQL returns t.
wait_for() {
	local deadline=$(($(date +%s) + ${2:-15}))
	while [ "$(val "$1")" != t ]; do
		[ "$(date +%s)" -ge "$deadline" ] && return 1
		sleep 0.1
	done
}

own_cluster=
tmp=
cleanup() {
	[ -n "$tmp" ] && rm -rf "$tmp"
	if [ -n "$own_cluster" ]; then
		bash "$here/cluster.sh" stop "$dir" >/dev/null 2>&1 || true
		rm -rf "$dir"
	fi
}

setup_cluster() {
	trap cleanup EXIT
	if [ -n "${1:-}" ]; then
		dir=$1
	else
		dir=$(mktemp -d /tmp/mnemo-concurrency.XXXXXX)
		own_cluster=1
		bash "$here/cluster.sh" start "$dir"
	fi
	eval "$(bash "$here/cluster.sh" env "$dir")"
	tmp=$(mktemp -d /tmp/mnemo-concurrency-work.XXXXXX)
}

setup_db() {
	dropdb --if-exists "$db" 2>/dev/null || true
	createdb "$db"
	export PGDATABASE=$db
	psql -X -q -v ON_ERROR_STOP=1 -c "CREATE EXTENSION mnemo"
}

# run_pgbench SCRIPT LABEL: 16 clients x 500 transactions, checks its report.
run_pgbench() {
	local script=$1 label=$2 out rc=0 total=$((clients * per_client))
	out=$(pgbench -n -M prepared -f "$script" -c "$clients" -j 4 -t "$per_client" 2>&1) || rc=$?
	sed 's/^/# /' <<<"$out" | grep -E 'processed|failed|tps|aborted|error' || true
	is "$rc" 0 "$label: pgbench exits 0"
	is "$(sed -n 's/^number of transactions actually processed: \([0-9]*\/[0-9]*\).*/\1/p' <<<"$out")" \
		"$total/$total" "$label: pgbench processed $total/$total transactions"
	if grep -q '^number of failed transactions' <<<"$out"; then
		is "$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' <<<"$out")" 0 \
			"$label: pgbench reports 0 failed transactions"
	fi
	if grep -qiE 'aborted|ERROR' <<<"$out"; then
		not_ok "$label: no client aborted and no error in pgbench output"
	else
		ok "$label: no client aborted and no error in pgbench output"
	fi
}

# check_log IDS NSESSIONS LABEL: the invariants over the sessions whose ids
# the query IDS returns.
check_log() {
	local ids=$1 nsessions=$2 label=$3 total=$((clients * per_client))
	is "$(val "SELECT count(*) FROM mnemo.messages WHERE session_id IN ($ids)")" "$total" \
		"$label: $total messages"
	is "$(val "SELECT count(DISTINCT session_id) FROM mnemo.messages WHERE session_id IN ($ids)")" "$nsessions" \
		"$label: spread over $nsessions session(s)"
	is "$(val "SELECT count(*) FROM (
	             SELECT count(*) AS c, count(DISTINCT seq) AS d, min(seq) AS lo, max(seq) AS hi
	               FROM mnemo.messages WHERE session_id IN ($ids) GROUP BY session_id) s
	            WHERE NOT (c = d AND lo = 1 AND hi = c AND c = $total / $nsessions)")" 0 \
		"$label: seqs dense 1..N in every session (max(seq) = count = count(distinct seq))"
	is "$(val "SELECT count(*) FROM mnemo.sessions s
	            WHERE s.id IN ($ids) AND s.last_seq IS DISTINCT FROM
	                  (SELECT max(seq) FROM mnemo.messages m WHERE m.session_id = s.id)")" 0 \
		"$label: sessions.last_seq = max(seq)"
	is "$(val "SELECT count(*) FROM mnemo.context_items WHERE session_id IN ($ids)")" "$total" \
		"$label: $total context items"
	is "$(val "SELECT count(*) FROM mnemo.messages m
	            WHERE m.session_id IN ($ids)
	              AND (SELECT count(*) FROM mnemo.context_items c
	                    WHERE c.session_id = m.session_id AND c.item_id = m.id
	                      AND c.item_type = 'message') <> 1")" 0 \
		"$label: exactly one context item per message"
	is "$(val "SELECT count(*) FROM (
	             SELECT count(*) AS c, count(DISTINCT position) AS d, min(position) AS lo, max(position) AS hi
	               FROM mnemo.context_items WHERE session_id IN ($ids) GROUP BY session_id) s
	            WHERE NOT (c = d AND lo = 1 AND hi = c)")" 0 \
		"$label: context positions dense 1..N in every session"
	is "$(val "SELECT count(*) FROM mnemo.messages m JOIN mnemo.context_items c
	              ON c.session_id = m.session_id AND c.item_id = m.id
	            WHERE m.session_id IN ($ids) AND c.position <> m.seq")" 0 \
		"$label: context order is seq order (position = seq)"
	is "$(val "SELECT count(*) FROM mnemo.sessions s
	            WHERE s.id IN ($ids) AND s.last_position IS DISTINCT FROM
	                  (SELECT max(position) FROM mnemo.context_items c WHERE c.session_id = s.id)")" 0 \
		"$label: sessions.last_position = max(position)"
	is "$(val "SELECT count(*) FROM mnemo.message_parts WHERE session_id IN ($ids)")" "$total" \
		"$label: $total parts"
	is "$(val "SELECT count(*) FROM mnemo.messages m
	            WHERE m.session_id IN ($ids)
	              AND (SELECT count(*) FROM mnemo.message_parts p
	                    WHERE p.session_id = m.session_id AND p.message_id = m.id
	                      AND p.part_index = 0 AND p.part_type = 'text'
	                      AND p.content->>'text' LIKE 'hello from client %') <> 1")" 0 \
		"$label: every message has its one text part"
}

test_one_session() {
	psql -X -q -v ON_ERROR_STOP=1 -c "SELECT mnemo.create_session('conc_one')" >/dev/null
	run_pgbench "$here/pgbench/append_one.sql" "one session"
	check_log "SELECT 'conc_one'" 1 "one session"
	is "$(val "SELECT count(*) FROM (SELECT content->>'text' FROM mnemo.message_parts
	            WHERE session_id = 'conc_one' GROUP BY 1 HAVING count(*) = $per_client) s")" "$clients" \
		"one session: each of the $clients clients stored its $per_client messages"
}

test_own_sessions() {
	psql -X -q -v ON_ERROR_STOP=1 \
		-c "SELECT mnemo.create_session('conc_' || i) FROM generate_series(0, $clients - 1) i" >/dev/null
	local ids="SELECT 'conc_' || i FROM generate_series(0, $clients - 1) i"
	run_pgbench "$here/pgbench/append_own.sql" "own sessions"
	check_log "$ids" "$clients" "own sessions"
	is "$(val "SELECT count(*) FROM mnemo.message_parts
	            WHERE session_id IN ($ids)
	              AND content->>'text' <> 'hello from client ' || substr(session_id, 6)")" 0 \
		"own sessions: each session holds only its own client's messages"
}

holder_open() {
	wait_for "SELECT count(*) = 1 FROM pg_stat_activity
	           WHERE application_name = 'mnemo_holder' AND state = 'idle in transaction'
	             AND query LIKE '%append_message%'" "$@"
}

test_no_cross_session_blocking() {
	local part='[{"type":"text","text":"x"}]' t0 elapsed holder waiter rc
	psql -X -q -v ON_ERROR_STOP=1 \
		-c "SELECT mnemo.create_session('block_a'), mnemo.create_session('block_b')" >/dev/null

	# A transaction that appended to block_a and stays open, idle, until
	# COMMIT arrives on fd 7.
	mkfifo "$tmp/holder.in"
	PGAPPNAME=mnemo_holder psql -X -q -v ON_ERROR_STOP=1 -tA <"$tmp/holder.in" >"$tmp/holder.out" 2>&1 &
	holder=$!
	exec 7>"$tmp/holder.in"
	printf '%s\n' "BEGIN;" "SELECT seq FROM mnemo.append_message('block_a', 'user', '$part');" >&7
	if holder_open; then
		ok "blocking: a transaction holds an append to session A open"
	else
		not_ok "blocking: a transaction holds an append to session A open"
	fi

	t0=$(now_ms)
	is "$(PGOPTIONS='-c lock_timeout=1s' val "SELECT seq FROM mnemo.append_message('block_b', 'user', '$part')")" 1 \
		"blocking: an append to session B succeeds under lock_timeout = 1s meanwhile"
	elapsed=$(($(now_ms) - t0))
	echo "#   session B append took $elapsed ms"
	if holder_open 0; then
		ok "blocking: the session A transaction was still open when B's append committed"
	else
		not_ok "blocking: the session A transaction was still open when B's append committed"
	fi

	t0=$(now_ms)
	is "$(sqlstate_of "SELECT mnemo.append_message('block_a', 'user', '$part')" '-c lock_timeout=1s')" 55P03 \
		"blocking: an append to session A under lock_timeout = 1s fails with 55P03"
	elapsed=$(($(now_ms) - t0))
	echo "#   session A append gave up after $elapsed ms"
	if [ "$elapsed" -ge 900 ]; then
		ok "blocking: that append waited for the lock before giving up"
	else
		not_ok "blocking: that append waited for the lock before giving up ($elapsed ms)"
	fi

	# A plain append to A waits for the holder and then takes seq 2.
	PGAPPNAME=mnemo_waiter psql -X -q -v ON_ERROR_STOP=1 -tA \
		-c "SELECT seq FROM mnemo.append_message('block_a', 'user', '$part')" >"$tmp/waiter.out" 2>&1 &
	waiter=$!
	if wait_for "SELECT count(*) = 1 FROM pg_stat_activity
	              WHERE application_name = 'mnemo_waiter' AND wait_event_type = 'Lock'"; then
		ok "blocking: a second append to session A waits on a lock"
	else
		not_ok "blocking: a second append to session A waits on a lock"
	fi
	printf '%s\n' "COMMIT;" >&7
	exec 7>&-
	rc=0; wait "$holder" || rc=$?
	is "$rc $(cat "$tmp/holder.out")" "0 1" "blocking: the holder committed its append as seq 1"
	rc=0; wait "$waiter" || rc=$?
	is "$rc $(cat "$tmp/waiter.out")" "0 2" "blocking: the waiting append then committed as seq 2"
	is "$(val "SELECT seq FROM mnemo.append_message('block_a', 'user', '$part')")" 3 \
		"blocking: the next append to session A gets seq 3 (the timed-out one left no gap)"
	is "$(val "SELECT string_agg(seq::text, ',' ORDER BY seq) FROM mnemo.messages WHERE session_id = 'block_a'")" 1,2,3 \
		"blocking: session A holds seqs 1,2,3"
}

main() {
	setup_cluster "${1:-}"
	setup_db
	test_one_session
	test_own_sessions
	test_no_cross_session_blocking
	echo "# concurrency: $n assertions, $nfail failed"
	[ "$nfail" -eq 0 ]
}

main "$@"
