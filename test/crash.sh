#!/usr/bin/env bash
# Crash test: nothing a client saw acknowledged is lost, nothing half-written
# survives.
#
#   test/crash.sh [DIR]
#
# DIR is a running cluster started by test/cluster.sh (test/run.sh passes its
# own; this test crashes and restarts it and leaves it running); without it a
# private cluster is started in a temporary directory and removed at the end.
# The extension must be installed (make install).
#
# 1. Server crash: 4 clients append in a loop (one psql per call, autocommit,
#    so a printed (id, seq) means the commit was acknowledged; each client
#    logs what it got), alternating between a session they share, their own
#    session and, every few turns, an append_messages batch of 3.  Mid-load
#    the cluster is stopped with `pg_ctl stop -m immediate` (no checkpoint,
#    crash recovery on start), then restarted.  Every acknowledged append is
#    there with the same session and seq; every session's seqs and context
#    positions are dense with one context item and one part per message; the
#    counters match; no batch is half there; appends continue at max + 1.
# 2. Client killed: a psql inside an open transaction that appended is
#    killed with kill -9 while another append to that session waits for it.
#    The uncommitted append is absent (no message, part or context item), the
#    waiting append gets the next seq, seqs stay dense.
# 3. Backend killed: the same with the server process of that transaction
#    killed with kill -9 (the postmaster resets every backend and recovers).
#
# Prints TAP-like "ok N - ..." / "not ok N - ..." lines; exits non-zero if
# any assertion failed.
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

nclients=4

# client C: appends until $tmp/stop exists; each acknowledged append becomes
# a line "session|id|seq|tag" in $tmp/acked.C, written only after psql
# returned the committed result.
client() {
	local c=$1 i=0 sess out sql
	while [ ! -e "$tmp/stop" ]; do
		i=$((i + 1))
		if [ $((i % 5)) -eq 0 ]; then
			sess=crash_$c
			sql="SELECT id || '|' || seq || '|batch $c.$i' FROM mnemo.append_messages('$sess',
			       (SELECT jsonb_agg(jsonb_build_object('role', 'user', 'parts',
			                 jsonb_build_array(jsonb_build_object('type', 'text', 'text', 'batch $c.$i #' || k))))
			          FROM generate_series(1, 3) k))"
		else
			if [ $((i % 2)) -eq 0 ]; then sess=crash_$c; else sess=crash_shared; fi
			sql="SELECT id || '|' || seq || '|single $c.$i' FROM mnemo.append_message('$sess', 'user',
			       jsonb_build_array(jsonb_build_object('type', 'text', 'text', 'single $c.$i')))"
		fi
		if out=$(psql -X -q -v ON_ERROR_STOP=1 -tA -c "$sql" 2>>"$tmp/errors.$c"); then
			sed "s/^/$sess|/" <<<"$out" >>"$tmp/acked.$c"
		else
			echo "$i" >>"$tmp/unacked.$c"
			sleep 0.05
		fi
	done
}

acked_count() { cat "$tmp"/acked.* 2>/dev/null | wc -l; }

# all clients have acknowledged appends, at least $1 in all
load_running() {
	local c
	for c in $(seq 1 "$nclients"); do
		[ -s "$tmp/acked.$c" ] || return 1
	done
	[ "$(acked_count)" -ge "$1" ]
}

wait_server() {
	local deadline=$(($(date +%s) + 60))
	until [ "$(val 'SELECT 1')" = 1 ]; do
		[ "$(date +%s)" -ge "$deadline" ] && return 1
		sleep 0.2
	done
}

# wait_reinit LINES: the server log, after its first LINES lines, shows the
# postmaster's reset after a backend died and the end of the recovery.
wait_reinit() {
	local deadline=$(($(date +%s) + 60))
	until tail -n +"$(($1 + 1))" "$dir/server.log" | grep -q "ready to accept connections"; do
		[ "$(date +%s)" -ge "$deadline" ] && return 1
		sleep 0.2
	done
	tail -n +"$(($1 + 1))" "$dir/server.log" | grep -q "terminated by signal 9"
}

# check_sessions LABEL: dense seqs, context items, parts and counters in
# every session of the database.
check_sessions() {
	local label=$1
	is "$(val "SELECT count(*) FROM (
	             SELECT session_id, count(*) AS c, count(DISTINCT seq) AS d, min(seq) AS lo, max(seq) AS hi
	               FROM mnemo.messages GROUP BY session_id) s
	            WHERE NOT (c = d AND lo = 1 AND hi = c)")" 0 \
		"$label: every session's seqs are dense 1..max"
	is "$(val "SELECT count(*) FROM mnemo.sessions s
	            WHERE s.last_seq <> coalesce((SELECT max(seq) FROM mnemo.messages m WHERE m.session_id = s.id), 0)
	               OR s.last_position <> coalesce((SELECT max(position) FROM mnemo.get_context_items(s.id) c), 0)")" 0 \
		"$label: sessions.last_seq and last_position match the rows"
	# the context view (its explicit rows and its implicit tail) of every session
	local view="(SELECT s.id AS session_id, c.* FROM mnemo.sessions s, LATERAL mnemo.get_context_items(s.id) c)"
	is "$(val "SELECT count(*) FROM (SELECT count(c.item_id) AS n FROM mnemo.messages m
	              LEFT JOIN $view c ON c.session_id = m.session_id AND c.item_id = m.id AND c.item_type = 'message'
	             GROUP BY m.session_id, m.id) x WHERE n <> 1")" 0 \
		"$label: exactly one context item per message"
	is "$(val "SELECT count(*) FROM $view c
	            WHERE NOT EXISTS (SELECT 1 FROM mnemo.messages m WHERE m.session_id = c.session_id AND m.id = c.item_id)
	               OR c.position <> (SELECT m.seq FROM mnemo.messages m WHERE m.session_id = c.session_id AND m.id = c.item_id)")" 0 \
		"$label: every context item is a message, at position = seq (dense positions)"
	is "$(val "SELECT count(*) FROM mnemo.messages m
	            WHERE (SELECT count(*) FROM mnemo.message_parts p
	                    WHERE p.session_id = m.session_id AND p.message_id = m.id AND p.part_index = 0) <> 1")" 0 \
		"$label: every message has its part"
	is "$(val "SELECT count(*) FROM mnemo.message_parts p
	            WHERE NOT EXISTS (SELECT 1 FROM mnemo.messages m WHERE m.session_id = p.session_id AND m.id = p.message_id)")" 0 \
		"$label: no part without its message"
}

test_server_crash() {
	local c p state total lost
	psql -X -q -v ON_ERROR_STOP=1 -c "SELECT mnemo.create_session('crash_shared')" \
		-c "SELECT mnemo.create_session('crash_' || c) FROM generate_series(1, $nclients) c" >/dev/null
	for c in $(seq 1 "$nclients"); do
		client "$c" &
		pids+=($!)
	done

	local deadline=$(($(date +%s) + 60))
	until load_running 200; do
		[ "$(date +%s)" -ge "$deadline" ] && break
		sleep 0.1
	done
	check "server crash: $nclients clients are appending ($(acked_count) acknowledged so far)" load_running 200

	bash "$here/cluster.sh" crash "$dir"
	ok "server crash: pg_ctl stop -m immediate mid-load"
	sleep 0.5
	touch "$tmp/stop"
	for p in "${pids[@]}"; do wait "$p" || true; done
	pids=()
	state=$("$(pg_config --bindir)/pg_controldata" "$dir/data" | sed -n 's/^Database cluster state: *//p')
	is "$state" "in production" "server crash: the cluster was not shut down cleanly (needs crash recovery)"

	bash "$here/cluster.sh" start "$dir"
	check "server crash: the cluster restarts and recovers" wait_server

	total=$(acked_count)
	echo "#   $total appends acknowledged before the crash; $(cat "$tmp"/unacked.* 2>/dev/null | wc -l) attempts failed after it"
	psql -X -q -v ON_ERROR_STOP=1 \
		-c "CREATE TABLE public.acked (session_id text, id text, seq bigint, tag text)" >/dev/null
	cat "$tmp"/acked.* | psql -X -q -v ON_ERROR_STOP=1 \
		-c "COPY public.acked FROM STDIN WITH (FORMAT text, DELIMITER '|')" >/dev/null
	is "$(val "SELECT count(*) FROM public.acked")" "$total" "server crash: the acknowledged appends were loaded"
	is "$(val "SELECT count(DISTINCT id) = count(*) AND count(DISTINCT (session_id, seq)) = count(*) FROM public.acked")" t \
		"server crash: no id or (session, seq) was acknowledged twice"
	lost=$(val "SELECT count(*) FROM public.acked a
	             WHERE NOT EXISTS (SELECT 1 FROM mnemo.messages m
	                                WHERE m.id = a.id AND m.session_id = a.session_id AND m.seq = a.seq)")
	is "$lost" 0 "server crash: every acknowledged append is present with the same session and seq"
	if [ "$lost" != 0 ]; then
		val "SELECT * FROM public.acked a WHERE NOT EXISTS (SELECT 1 FROM mnemo.messages m WHERE m.id = a.id
		       AND m.session_id = a.session_id AND m.seq = a.seq) LIMIT 10" | sed 's/^/#   lost: /'
	fi
	is "$(val "SELECT count(*) FROM public.acked a JOIN mnemo.message_parts p ON p.message_id = a.id
	            WHERE a.tag LIKE 'single %' AND p.content->>'text' <> a.tag")" 0 \
		"server crash: acknowledged messages have their content"
	is "$(val "SELECT count(*) FROM (
	             SELECT substring(p.content->>'text' FROM '^batch [0-9.]+') AS batch, count(*) AS c
	               FROM mnemo.message_parts p WHERE p.content->>'text' LIKE 'batch %' GROUP BY 1) b
	            WHERE c <> 3")" 0 \
		"server crash: no append_messages batch is partly present"
	is "$(val "SELECT count(*) > 0 FROM mnemo.message_parts WHERE content->>'text' LIKE 'batch %'")" t \
		"server crash: batches were part of the load"
	check_sessions "server crash"
	is "$(val "SELECT string_agg(s.id || ':' || ((r).seq = s.last_seq + 1)::text, ',' ORDER BY s.id)
	             FROM (SELECT id, last_seq, mnemo.append_message(id, 'user', '[{\"type\":\"text\",\"text\":\"after\"}]') AS r
	                     FROM mnemo.sessions WHERE id LIKE 'crash%' ORDER BY id) s")" \
		"crash_1:true,crash_2:true,crash_3:true,crash_4:true,crash_shared:true" \
		"server crash: appends continue at max(seq) + 1 in every session"
}

# start_victim APPNAME SESSION MSGID: a psql that appends MSGID to SESSION in
# an open transaction and then sits idle in it, reading more input from fd 7.
start_victim() {
	local app=$1 sess=$2 msgid=$3
	rm -f "$tmp/fifo"
	mkfifo "$tmp/fifo"
	PGAPPNAME=$app psql -X -q -v ON_ERROR_STOP=1 -tA <"$tmp/fifo" >"$tmp/$app.out" 2>&1 &
	victim=$!
	pids+=("$victim")
	exec 7>"$tmp/fifo"
	printf '%s\n' "BEGIN;" \
		"SELECT seq FROM mnemo.append_message('$sess', 'user', '[{\"type\":\"text\",\"text\":\"uncommitted\"}]', id => '$msgid');" >&7
	wait_for "SELECT count(*) = 1 FROM pg_stat_activity
	           WHERE application_name = '$app' AND state = 'idle in transaction'
	             AND query LIKE '%append_message%'"
}

# start_waiter APPNAME SESSION: an append to SESSION in the background; waits
# until it is blocked on a lock.
start_waiter() {
	local app=$1 sess=$2
	PGAPPNAME=$app psql -X -q -v ON_ERROR_STOP=1 -tA \
		-c "SELECT seq FROM mnemo.append_message('$sess', 'user', '[{\"type\":\"text\",\"text\":\"waiter\"}]')" \
		>"$tmp/$app.out" 2>&1 &
	waiter=$!
	pids+=("$waiter")
	wait_for "SELECT count(*) = 1 FROM pg_stat_activity
	           WHERE application_name = '$app' AND wait_event_type = 'Lock'"
}

# check_killed LABEL SESSION MSGID: after the victim died.
check_killed() {
	local label=$1 sess=$2 msgid=$3 rc=0
	wait "$waiter" || rc=$?
	is "$rc $(cat "$tmp/$label-waiter.out")" "0 3" "$label: the waiting append committed as seq 3"
	is "$(val "SELECT (SELECT count(*) FROM mnemo.messages WHERE id = '$msgid')
	             + (SELECT count(*) FROM mnemo.message_parts WHERE message_id = '$msgid')
	             + (SELECT count(*) FROM mnemo.context_items WHERE item_id = '$msgid')")" 0 \
		"$label: the uncommitted append left no message, part or context item"
	is "$(val "SELECT string_agg(seq::text, ',' ORDER BY seq) FROM mnemo.messages WHERE session_id = '$sess'")" 1,2,3 \
		"$label: the session's seqs are 1,2,3"
	is "$(val "SELECT seq FROM mnemo.append_message('$sess', 'user', '[{\"type\":\"text\",\"text\":\"next\"}]', id => '$msgid')")" 4 \
		"$label: the next append (reusing the dead transaction's id) gets seq 4"
	check_sessions "$label"
}

test_client_kill() {
	local sess=kill_client msgid=msg_killed_client rc=0
	psql -X -q -v ON_ERROR_STOP=1 -c "SELECT mnemo.create_session('$sess')" \
		-c "SELECT mnemo.append_message('$sess', 'user', '[{\"type\":\"text\",\"text\":\"m\"}]') FROM generate_series(1, 2)" >/dev/null
	check "client kill: a client appended in an open transaction" start_victim mnemo_victim "$sess" "$msgid"
	check "client kill: another append to the session waits for it" start_waiter client-kill-waiter "$sess"
	kill -9 "$victim"
	exec 7>&-
	wait "$victim" 2>/dev/null || rc=$?
	is "$rc" 137 "client kill: the client died of kill -9"
	check "client kill: its backend goes away" \
		wait_for "SELECT count(*) = 0 FROM pg_stat_activity WHERE application_name = 'mnemo_victim'"
	check_killed client-kill "$sess" "$msgid"
}

test_backend_kill() {
	local sess=kill_backend msgid=msg_killed_backend pid
	psql -X -q -v ON_ERROR_STOP=1 -c "SELECT mnemo.create_session('$sess')" \
		-c "SELECT mnemo.append_message('$sess', 'user', '[{\"type\":\"text\",\"text\":\"m\"}]') FROM generate_series(1, 2)" >/dev/null
	check "backend kill: a client appended in an open transaction" start_victim mnemo_victim2 "$sess" "$msgid"
	pid=$(val "SELECT pid FROM pg_stat_activity WHERE application_name = 'mnemo_victim2'")
	log_before=$(wc -l <"$dir/server.log")
	kill -9 "$pid"
	exec 7>&-
	wait "$victim" 2>/dev/null || true
	check "backend kill: the postmaster resets and recovers after the backend was killed" \
		wait_reinit "$log_before"
	check "backend kill: the server accepts connections again" wait_server
	# The postmaster's reset ended every session; start the waiter again on
	# a fresh transaction so the seq check below means the same as above.
	psql -X -q -v ON_ERROR_STOP=1 -tA \
		-c "SELECT seq FROM mnemo.append_message('$sess', 'user', '[{\"type\":\"text\",\"text\":\"after\"}]')" \
		>"$tmp/backend-kill-waiter.out" 2>&1 &
	waiter=$!
	check_killed backend-kill "$sess" "$msgid"
}

main() {
	setup_cluster crash "${1:-}"
	setup_db mnemo_crash
	test_server_crash
	test_client_kill
	test_backend_kill
	summary crash
}

main "$@"
