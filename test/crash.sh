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
# 4.-9. Multi-step writes stopped part-way (test/crash_calls.sh, sourced
#    below): commit_summary (twice: at the supersession of the nodes it
#    consumes, and at its context swap), fork_session, resume_session,
#    purge_session and swap_context_items each wait on a row lock after they
#    wrote rows of their own, uncommitted; then their backend is killed with
#    kill -9, and again with the server stopped by pg_ctl stop -m immediate.
#    Nothing the call wrote is there, every row of the sessions it touched
#    is as before, the checks below and `mnemo verify` pass, and the same
#    call then succeeds.
#
# After each crash, every session of the database is checked
# (check_sessions): seqs dense from the fork point to last_seq, no row of a
# session that does not exist, the summary DAG whole (every node with its
# summary message, marker and edges), fork counts, every btree index
# holding every heap row (amcheck), a context view of the
# session's own line; and for sessions without summaries, forks or resumes,
# exactly one context item per message at position = seq.
#
# Prints TAP-like "ok N - ..." / "not ok N - ..." lines; exits non-zero if
# any assertion failed.
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source-path=SCRIPTDIR source=crash_calls.sh
. "$(dirname "$0")/crash_calls.sh"

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
			# shellcheck disable=SC2001 # a prefix on each line of a batch
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

# check_sessions LABEL: every session of the database, as test 4.-9. leave
# them too (summaries, forks, resumes, purges): see the header.
check_sessions() {
	local label=$1 t orphans=""
	is "$(val "SELECT count(*) FROM mnemo.sessions s,
	             LATERAL (SELECT count(*) AS c, count(DISTINCT seq) AS d, min(seq) AS lo, max(seq) AS hi
	                        FROM mnemo.messages m WHERE m.session_id = s.id) x,
	             LATERAL (SELECT (mnemo.get_session(s.id)).last_seq) l(last_seq)
	            WHERE NOT (x.c = x.d AND x.c = l.last_seq - coalesce(s.fork_seq, 0)
	                       AND (x.c = 0 OR (x.lo = coalesce(s.fork_seq, 0) + 1 AND x.hi = l.last_seq)))")" 0 \
		"$label: every session's seqs are dense, fork point + 1 .. get_session's last_seq"
	for t in messages message_parts context_items summary_nodes summary_edges checkpoints runs lineage \
		discarded compaction_claims pending_requests search_queue search_progress search_documents maps map_items; do
		orphans+="${orphans:+ UNION ALL }SELECT '$t' AS t, session_id FROM mnemo.$t"
	done
	is "$(val "SELECT string_agg(DISTINCT t, ',') FROM ($orphans
	             UNION ALL SELECT 'lineage.ancestor_id', ancestor_id FROM mnemo.lineage) x
	            WHERE NOT EXISTS (SELECT 1 FROM mnemo.sessions s WHERE s.id = x.session_id)")" "" \
		"$label: no row of a session that does not exist (no half purge, no half fork)"
	is "$(val "SELECT (SELECT count(*) FROM mnemo.summary_nodes n
	            WHERE NOT EXISTS (SELECT 1 FROM mnemo.messages m
	                               WHERE m.session_id = n.session_id AND m.id = n.id AND m.is_summary)
	               OR (SELECT count(*) FROM mnemo.summary_edges e WHERE e.session_id = n.session_id AND e.summary_id = n.id)
	                  IS DISTINCT FROM (SELECT (p.content->>'compacted_item_count')::bigint FROM mnemo.message_parts p
	                                     JOIN mnemo.messages m ON m.session_id = p.session_id AND m.seq = p.seq
	                                     WHERE p.session_id = n.session_id AND m.id = n.id
	                                       AND p.part_type = 'compaction_marker' AND p.content->>'summary_node_id' = n.id)
	               OR (n.superseded_by IS NOT NULL AND NOT EXISTS (SELECT 1 FROM mnemo.summary_edges e
	                    WHERE e.session_id = n.session_id AND e.summary_id = n.superseded_by AND e.item_id = n.id)))
	      + (SELECT count(*) FROM mnemo.summary_edges e WHERE NOT EXISTS (SELECT 1 FROM mnemo.summary_nodes n
	                 WHERE n.session_id = e.session_id AND n.id = e.summary_id))
	      + (SELECT count(*) FROM mnemo.message_parts p WHERE p.part_type = 'compaction_marker'
	            AND NOT EXISTS (SELECT 1 FROM mnemo.summary_nodes n JOIN mnemo.messages m
	                             ON m.session_id = n.session_id AND m.id = n.id
	                            WHERE n.session_id = p.session_id AND m.seq = p.seq))")" 0 \
		"$label: the summary DAG is whole: each node with its summary message, its marker and that many edges, each edge and marker with its node, each superseded node an edge of its superseder"
	is "$(val "SELECT count(*) FROM mnemo.sessions s
	            WHERE s.forks <> (SELECT count(*) FROM mnemo.sessions c WHERE c.parent_id = s.id AND c.fork_seq IS NOT NULL)")" 0 \
		"$label: every session's forks count is its number of forks"
	# every btree index of the store holds every heap row it should (an
	# error of bt_index_check is printed instead of t): recovery replayed
	# the heap and index records of rows written with the table AM
	# (src/core/insert_direct.c) as of any INSERT
	is "$(val "SET client_min_messages = warning; CREATE EXTENSION IF NOT EXISTS amcheck;
	           SELECT count(*) > 0 FROM (SELECT bt_index_check(c.oid, true) FROM pg_class c
	            WHERE c.relnamespace = 'mnemo'::regnamespace AND c.relkind = 'i'
	              AND c.relam = (SELECT oid FROM pg_am WHERE amname = 'btree')) x")" t \
		"$label: every index of the store holds every row (amcheck, heapallindexed)"
	# the context view (its explicit rows and its implicit tail) of every session
	local view="(SELECT s.id AS session_id, c.* FROM mnemo.sessions s, LATERAL mnemo.get_context_items(s.id) c)"
	is "$(val "SELECT (SELECT count(*) FROM $view c
	            WHERE NOT EXISTS (SELECT 1 FROM mnemo.messages m
	                               WHERE m.id = c.item_id AND m.is_summary = (c.item_type = 'summary')
	                                 AND (m.session_id = c.session_id OR m.session_id IN
	                                      (SELECT l.ancestor_id FROM mnemo.lineage l WHERE l.session_id = c.session_id))))
	      + (SELECT count(*) FROM (SELECT 1 FROM $view c GROUP BY c.session_id, c.position HAVING count(*) > 1) p)
	      + (SELECT count(*) FROM (SELECT 1 FROM $view c GROUP BY c.session_id, c.item_id HAVING count(*) > 1) i)")" 0 \
		"$label: every context item is a message or summary of its session's line, once, at a position of its own"
	# sessions without summaries, forks or resumes: one item per message, at position = seq
	local plain="(SELECT s.* FROM mnemo.sessions s WHERE s.fork_seq IS NULL AND s.discards = 0
	                AND NOT EXISTS (SELECT 1 FROM mnemo.messages m WHERE m.session_id = s.id AND m.is_summary))"
	is "$(val "SELECT count(*) FROM $plain s
	            WHERE coalesce((SELECT max(m.seq) FROM mnemo.messages m WHERE m.session_id = s.id), 0)
	                  <> coalesce((SELECT max(position) FROM mnemo.get_context_items(s.id) c), 0)")" 0 \
		"$label: the view ends at the last message (sessions without summaries, forks or resumes)"
	is "$(val "SELECT count(*) FROM (SELECT count(c.item_id) AS n FROM mnemo.messages m
	              JOIN $plain s ON s.id = m.session_id
	              LEFT JOIN $view c ON c.session_id = m.session_id AND c.item_id = m.id AND c.item_type = 'message'
	             GROUP BY m.session_id, m.id) x WHERE n <> 1")" 0 \
		"$label: exactly one context item per message (sessions without summaries, forks or resumes)"
	is "$(val "SELECT count(*) FROM $view c JOIN $plain s ON s.id = c.session_id
	            WHERE c.position IS DISTINCT FROM (SELECT m.seq FROM mnemo.messages m
	                                                WHERE m.session_id = c.session_id AND m.id = c.item_id)")" 0 \
		"$label: every context item is at position = seq (dense positions; same sessions)"
	is "$(val "SELECT count(*) FROM mnemo.messages m
	            WHERE (SELECT count(*) FROM mnemo.message_parts p
	                    WHERE p.session_id = m.session_id AND p.seq = m.seq AND p.part_index = 0) <> 1")" 0 \
		"$label: every message has its part"
	is "$(val "SELECT count(*) FROM mnemo.message_parts p
	            WHERE NOT EXISTS (SELECT 1 FROM mnemo.messages m WHERE m.session_id = p.session_id AND m.seq = p.seq)")" 0 \
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
	is "$(val "SELECT count(*) FROM public.acked a JOIN mnemo.message_parts p ON p.session_id = a.session_id AND p.seq = a.seq
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
	             FROM (SELECT l.id, l.last_seq, mnemo.append_message(l.id, 'user', '[{\"type\":\"text\",\"text\":\"after\"}]') AS r
	                     FROM (SELECT id, (mnemo.get_session(id)).last_seq FROM mnemo.sessions
	                            WHERE id LIKE 'crash%' ORDER BY id OFFSET 0) l) s")" \
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
	             + (SELECT count(*) FROM mnemo.message_parts WHERE session_id = '$sess' AND content->>'text' = 'uncommitted')
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
	test_calls
	summary crash
}

main "$@"
