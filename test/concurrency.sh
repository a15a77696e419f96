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
# 4. pgbench, 16 clients x 500 claims of run ids 1..100 of ONE session, the
#    even ones completed by their winner in the same transaction: every
#    claimed id has exactly one winner, every other claim of it failed with
#    MN007 (odd: in flight) or MN008 (even: completed), completion_seq is
#    dense 1..50.
# 5. pgbench, 16 clients x 100 update_state calls on ONE session, each with
#    a key of its own: the state holds all 1600 keys (no patch lost).  (Each
#    merge rewrites the whole state, so 100 each keeps it quick.)
# 6. pgbench, 16 clients x 200 transactions on a root, its fork and the
#    fork's fork: appends to any of them, and searches of either fork, which
#    index every session of their line: no transaction fails (no deadlock),
#    and a last search of the fork's fork finds every message of its line.
# 7. pgbench, 16 clients x 100 transactions appending one of three images
#    to a new session and to the client's own, then purging the new one,
#    while the others append the same images (src/log/blobs.c): no error, every
#    blob counts exactly the parts that name it, none is missing or left
#    over, and every image of the clients' sessions reads back exactly.
# 8. pgbench, 16 clients x 500 appends to session conc_twin of one of two
#    tenants at random (one id, two sessions): no error, each tenant's seqs
#    dense 1..N, every message in its own tenant's session.
#
# Prints TAP-like "ok N - ..." / "not ok N - ..." lines; exits non-zero if
# any assertion failed.  These are assertions about behaviour, not speed.
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

clients=16
per_client=500

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# run_pgbench SCRIPT LABEL [N]: 16 clients x N (500) transactions, checks its report.
run_pgbench() {
	local script=$1 label=$2 out rc=0 each=${3:-$per_client}
	local total=$((clients * each))
	out=$(pgbench -n -M prepared -f "$script" -c "$clients" -j 4 -t "$each" 2>&1) || rc=$?
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

# rel TABLE: mnemo.TABLE, or TABLE itself when it names its schema.
rel() { case $1 in *.*) echo "$1" ;; *) echo "mnemo.$1" ;; esac; }

# not_dense TABLE COLUMN IDS [ALSO]: SQL counting the sessions of IDS whose
# COLUMN in mnemo.TABLE is not dense 1..N (or whose c rows fail ALSO).
not_dense() {
	echo "SELECT count(*) FROM (
	        SELECT count(*) AS c, count(DISTINCT $2) AS d, min($2) AS lo, max($2) AS hi
	          FROM $(rel "$1") WHERE session_id IN ($3) GROUP BY session_id) s
	       WHERE NOT (c = d AND lo = 1 AND hi = c${4:+ AND $4})"
}

# counter_off TABLE COLUMN IDS: SQL counting the sessions of IDS whose
# counter sessions.last_COLUMN is not max(COLUMN) of their rows in mnemo.TABLE.
counter_off() {
	echo "SELECT count(*) FROM mnemo.sessions s
	       WHERE s.id IN ($3) AND (mnemo.get_session(s.id)).last_$2 IS DISTINCT FROM
	             (SELECT max($2) FROM $(rel "$1") t WHERE t.session_id = s.id)"
}

# rows TABLE IDS: how many rows of mnemo.TABLE belong to the sessions of IDS.
rows() { val "SELECT count(*) FROM $(rel "$1") WHERE session_id IN ($2)"; }

# not_one_each TABLE KEY WHERE IDS: SQL counting the messages of IDS that do
# not have exactly one row x in mnemo.TABLE with x.KEY = their id and WHERE.
not_one_each() {
	local key=${2%%=*} col=id
	[ "$key" != "$2" ] && col=${2#*=}
	echo "SELECT count(*) FROM mnemo.messages m
	       WHERE m.session_id IN ($4)
	         AND (SELECT count(*) FROM $(rel "$1") x
	               WHERE x.session_id = m.session_id AND x.$key = m.$col AND $3) <> 1"
}

# check_log IDS NSESSIONS LABEL: the invariants over the sessions whose ids
# the query IDS returns.
check_log() {
	local ids=$1 nsessions=$2 label=$3 total=$((clients * per_client))
	is "$(rows messages "$ids")" "$total" \
		"$label: $total messages"
	is "$(val "SELECT count(DISTINCT session_id) FROM mnemo.messages WHERE session_id IN ($ids)")" "$nsessions" \
		"$label: spread over $nsessions session(s)"
	is "$(val "$(not_dense messages seq "$ids" "c = $total / $nsessions")")" 0 \
		"$label: seqs dense 1..N in every session (max(seq) = count = count(distinct seq))"
	is "$(val "$(counter_off messages seq "$ids")")" 0 \
		"$label: get_session's last_seq = max(seq)"
	# the context view, its explicit rows and its implicit tail (an append
	# writes no context row), as a table to check like the others
	val "DROP TABLE IF EXISTS public.context_view;
	     CREATE TABLE public.context_view AS
	       SELECT s.id AS session_id, c.* FROM mnemo.sessions s, LATERAL mnemo.get_context_items(s.id) c
	        WHERE s.id IN ($ids);
	     CREATE INDEX ON public.context_view (session_id, item_id)" >/dev/null
	is "$(rows public.context_view "$ids")" "$total" \
		"$label: $total context items"
	is "$(val "$(not_one_each public.context_view item_id "x.item_type = 'message'" "$ids")")" 0 \
		"$label: exactly one context item per message"
	is "$(val "$(not_dense public.context_view position "$ids")")" 0 \
		"$label: context positions dense 1..N in every session"
	is "$(val "SELECT count(*) FROM mnemo.messages m JOIN public.context_view c
	              ON c.session_id = m.session_id AND c.item_id = m.id
	            WHERE m.session_id IN ($ids) AND c.position <> m.seq")" 0 \
		"$label: context order is seq order (position = seq)"
	val "DROP TABLE public.context_view" >/dev/null
	is "$(rows message_parts "$ids")" "$total" \
		"$label: $total parts"
	is "$(val "$(not_one_each message_parts seq=seq \
		"x.part_index = 0 AND x.part_type = 'text' AND x.content->>'text' LIKE 'hello from client %'" "$ids")")" 0 \
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
	check "blocking: a transaction holds an append to session A open" holder_open

	t0=$(now_ms)
	is "$(PGOPTIONS='-c lock_timeout=1s' val "SELECT seq FROM mnemo.append_message('block_b', 'user', '$part')")" 1 \
		"blocking: an append to session B succeeds under lock_timeout = 1s meanwhile"
	elapsed=$(($(now_ms) - t0))
	echo "#   session B append took $elapsed ms"
	check "blocking: the session A transaction was still open when B's append committed" holder_open 0

	t0=$(now_ms)
	is "$(PGOPTIONS='-c lock_timeout=1s' sqlstate_of "SELECT mnemo.append_message('block_a', 'user', '$part')")" 55P03 \
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
	check "blocking: a second append to session A waits on a lock" \
		wait_for "SELECT count(*) = 1 FROM pg_stat_activity
		           WHERE application_name = 'mnemo_waiter' AND wait_event_type = 'Lock'"
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

test_run_claims() {
	local total=$((clients * per_client))
	psql -X -q -v ON_ERROR_STOP=1 >/dev/null <<'SQL'
SELECT mnemo.create_session('conc_runs');
CREATE TABLE conc_claims (client int, k int, outcome text);
CREATE FUNCTION conc_claim(client int, k int) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM mnemo.claim_run('conc_runs', 'run_' || k);
    IF k % 2 = 0 THEN
        PERFORM mnemo.complete_run('conc_runs', 'run_' || k);
    END IF;
    INSERT INTO conc_claims VALUES (client, k, 'won');
EXCEPTION WHEN SQLSTATE 'MN007' OR SQLSTATE 'MN008' THEN
    INSERT INTO conc_claims VALUES (client, k, SQLSTATE);
END
$$;
SQL
	run_pgbench "$here/pgbench/claim_run.sql" "run claims"
	is "$(val "SELECT count(*) FROM conc_claims")" "$total" "run claims: $total claims, each won or refused"
	is "$(val "SELECT count(*) FROM (SELECT k FROM conc_claims WHERE outcome = 'won' GROUP BY k HAVING count(*) <> 1) s")" 0 \
		"run claims: no run id was won twice"
	is "$(val "SELECT count(*) FROM (SELECT DISTINCT k FROM conc_claims) a
	            FULL JOIN (SELECT k FROM conc_claims WHERE outcome = 'won') w USING (k) WHERE w.k IS NULL")" 0 \
		"run claims: every run id claimed was won by one client"
	is "$(val "SELECT count(*) FROM mnemo.runs WHERE session_id = 'conc_runs'")" \
		"$(val "SELECT count(*) FROM conc_claims WHERE outcome = 'won'")" \
		"run claims: one row in mnemo.runs per winner"
	is "$(val "SELECT count(*) FROM conc_claims WHERE outcome <> 'won' AND outcome <> CASE WHEN k % 2 = 0 THEN 'MN008' ELSE 'MN007' END")" 0 \
		"run claims: every other claim got MN007 (in flight) or MN008 (completed), as its run was"
	is "$(val "SELECT count(*) = max(completion_seq) AND count(DISTINCT completion_seq) = count(*) AND min(completion_seq) = 1
	            FROM mnemo.runs WHERE session_id = 'conc_runs' AND completion_seq IS NOT NULL")" t \
		"run claims: completion_seq dense 1..N over the completed runs"
	is "$(val "SELECT count(*) FROM mnemo.runs WHERE session_id = 'conc_runs'
	            AND (completion_seq IS NULL) <> (substr(run_id, 5)::int % 2 = 1)")" 0 \
		"run claims: exactly the even runs completed"
}

test_state_merges() {
	local each=100
	local total=$((clients * each))
	psql -X -q -v ON_ERROR_STOP=1 \
		-c "SELECT mnemo.create_session('conc_state')" -c "CREATE SEQUENCE conc_state_keys" >/dev/null
	run_pgbench "$here/pgbench/update_state.sql" "state merges" "$each"
	is "$(val "SELECT count(*) FROM jsonb_object_keys(mnemo.get_state('conc_state'))")" "$total" \
		"state merges: the state holds all $total keys, none lost"
	is "$(val "SELECT count(*) FROM jsonb_each(mnemo.get_state('conc_state')) e GROUP BY e.value ORDER BY 1 LIMIT 1")" \
		"$each" "state merges: each client's $each patches are all there"
}

test_search_forks() {
	local each=200
	psql -X -q -v ON_ERROR_STOP=1 >/dev/null <<'SQL'
SELECT mnemo.create_session('conc_root');
SELECT count(mnemo.append_message('conc_root', 'user', '[{"type": "text", "text": "hello tool"}]')) FROM generate_series(1, 5);
SELECT fork_seq FROM mnemo.fork_session('conc_root', '5', 'conc_f1');
SELECT count(mnemo.append_message('conc_f1', 'user', '[{"type": "text", "text": "hello tool"}]')) FROM generate_series(1, 5);
SELECT fork_seq FROM mnemo.fork_session('conc_f1', '10', 'conc_f2');
SQL
	run_pgbench "$here/pgbench/search_forks.sql" "fork searches" "$each"
	is "$(val "SELECT count(*) FROM mnemo.search_history('conc_f2', 'tool', 100000)")" \
		"$(val "SELECT count(*) FROM mnemo.history('conc_f2')")" \
		"fork searches: a search of the fork's fork finds every message of its line"
}

test_blob_purges() {
	local each=100
	psql -X -q -v ON_ERROR_STOP=1 >/dev/null <<'SQL'
CREATE TABLE conc_images AS
SELECT k, translate(encode(decode(repeat(lpad(to_hex(k + 1), 2, '0') || 'a0b1c2', 8000), 'hex'), 'base64'),
                    E'\n', '') AS b64
  FROM generate_series(0, 2) k;
CREATE FUNCTION conc_image(k integer) RETURNS jsonb LANGUAGE sql STABLE AS $$
    SELECT jsonb_build_array(jsonb_build_object('type', 'image', 'media_type', 'image/png', 'data',
                                                (SELECT b64 FROM conc_images i WHERE i.k = conc_image.k)))
$$;
SELECT count(mnemo.create_session('conc_img_' || c)) FROM generate_series(0, 15) c;
SQL
	run_pgbench "$here/pgbench/blob_purge.sql" "blob purges" "$each"
	is "$(val "SELECT count(*) FROM mnemo.blobs b FULL JOIN (
	             SELECT tenant, decode(content -> 'data' ->> 'sha256', 'hex') AS sha256, count(*) AS n
	               FROM mnemo.message_parts
	              WHERE part_type = 'image' AND jsonb_typeof(content -> 'data') = 'object'
	              GROUP BY 1, 2) r USING (tenant, sha256)
	            WHERE b.refs IS DISTINCT FROM r.n")" 0 \
		"blob purges: every blob counts exactly the parts that name it, and every part's blob is there"
	is "$(val "SELECT count(*) FROM mnemo.sessions WHERE id LIKE 'sess\\_%'")" 0 \
		"blob purges: every new session was purged"
	is "$(val "SELECT count(*) || '/' || count(*) FILTER (WHERE p ->> 'data' IN (SELECT b64 FROM conc_images))
	             FROM mnemo.sessions s, mnemo.get_messages_with_parts(s.id) m, jsonb_array_elements(m.parts) p
	            WHERE s.id LIKE 'conc\_img\_%'")" "$((clients * each))/$((clients * each))" \
		"blob purges: all $((clients * each)) images of the clients' sessions read back exactly"
	is "$(val "SELECT count(*) FROM mnemo.blobs")" 3 "blob purges: one blob per image"
}

# one session id in two tenants, appended to at once through one pooled
# (superuser) connection per client that names the tenant per call
test_same_id() {
	local total=$((clients * per_client))
	psql -X -q -v ON_ERROR_STOP=1 >/dev/null <<'SQL'
CREATE ROLE conc_ta;
CREATE ROLE conc_tb;
SET mnemo.tenant = 'conc_ta';
SELECT mnemo.create_session('conc_twin');
SET mnemo.tenant = 'conc_tb';
SELECT mnemo.create_session('conc_twin');
SQL
	run_pgbench "$here/pgbench/append_twin.sql" "one id, two tenants"
	is "$(val "SELECT count(*) FROM mnemo.messages WHERE session_id = 'conc_twin'")" "$total" \
		"one id, two tenants: $total messages"
	is "$(val "SELECT string_agg(tenant, ',' ORDER BY tenant) FROM (
	             SELECT tenant, count(*) AS c, count(DISTINCT seq) AS d, min(seq) AS lo, max(seq) AS hi
	               FROM mnemo.messages WHERE session_id = 'conc_twin' GROUP BY tenant) s
	            WHERE c = d AND lo = 1 AND hi = c AND c > 0")" "conc_ta,conc_tb" \
		"one id, two tenants: each tenant's session has seqs dense 1..N of its own"
	is "$(val "SELECT count(*) FROM mnemo.message_parts
	            WHERE session_id = 'conc_twin' AND content ->> 'text' <> tenant")" 0 \
		"one id, two tenants: every message is in the session of the tenant that appended it"
	is "$(val "SELECT string_agg(tenant || ':' || ((SELECT max(seq) FROM mnemo.messages m
	                                               WHERE m.session_id = 'conc_twin' AND m.tenant = s.tenant)
	                                              = (mnemo.get_session('conc_twin')).last_seq)::text, ',' ORDER BY tenant)
	             FROM (SELECT DISTINCT tenant FROM mnemo.sessions WHERE id = 'conc_twin') s,
	                  LATERAL (SELECT set_config('mnemo.tenant', s.tenant, true)) c")" "conc_ta:true,conc_tb:true" \
		"one id, two tenants: get_session, with mnemo.tenant, gives each tenant's last_seq"
	psql -X -q -c "DROP ROLE conc_ta" -c "DROP ROLE conc_tb" >/dev/null
}

main() {
	setup_cluster concurrency "${1:-}"
	setup_db mnemo_concurrency
	test_one_session
	test_own_sessions
	test_no_cross_session_blocking
	test_run_claims
	test_state_merges
	test_search_forks
	test_blob_purges
	test_same_id
	summary concurrency
}

main "$@"
