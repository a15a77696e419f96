# shellcheck shell=bash disable=SC2154 # here, tmp, dir, pids: lib.sh, sourced by crash.sh first
# Crash tests of the multi-step writes: cases 4.-9. of test/crash.sh, which
# sources this file (it needs lib.sh and crash.sh's wait_server, wait_reinit
# and check_sessions) and runs test_calls after its own cases.
#
# Each call is stopped part-way through, after it wrote rows of its own:
# another session, the blocker, holds a row the call locks late, in an open
# transaction, and the call waits for it (pg_stat_activity: wait_event_type
# Lock, blocked by the blocker's pid).  Its uncommitted writes so far are
# read from the table pages (pageinspect: rows whose xmin or deleting xmax is
# the call's transaction or one of its subtransactions, which have later
# xids), since no snapshot shows them.  Then either its backend is killed
# with kill -9 (the postmaster resets every backend and recovers) or the
# server is stopped with pg_ctl stop -m immediate and started again (crash
# recovery).  Where each call waits:
#
#   commit_summary, condensing two leaf summaries A and B:
#     - at the supersession: B's summary_nodes row held FOR UPDATE; the
#       summary message, its parts, its node and edges are written, A marked
#       superseded;
#     - at the swap: B's context_items row held FOR KEY SHARE; all of the
#       above and both marked superseded, A's context row deleted.
#   fork_session: a row at the last position of the child's view (its first
#     generation, the source's tenant) inserted, uncommitted, by the blocker; the child's session
#     row, its lineage and the rest of its view are written.
#   resume_session: the same at the last position of the view's next
#     generation; the discarded range is written, the old generation deleted.
#   purge_session (of a fork, with summaries and a checkpoint): one of its
#     context_items rows held FOR KEY SHARE (the statement deletes that table
#     last); its messages, parts, nodes, edges, checkpoint, lineage and
#     session row are deleted and its parent's forks count is decremented.
#   swap_context_items: the second of the two context rows it removes held
#     FOR KEY SHARE; the first is deleted (its session lock writes nothing).
#
# After the crash: the call's client lost its connection and got no result;
# nothing it wrote is there (named, row by row) and every row of every
# session it touched is as it was before the call (all of each table keyed
# by the session, compared as one digest with counts), so the context view
# too; every session passes check_sessions and `mnemo verify` (but the one
# with bare swaps, which record no provenance by design: its verify report
# is as before); and the same call made again succeeds and does all of it.

# the mnemo command, built by make before the tests run (test/run.sh)
mnemo_cli="$here/../client/mnemo"

# calls_setup: pageinspect, and the helpers the cases read rows with.
calls_setup() {
	psql -X -q -v ON_ERROR_STOP=1 >/dev/null <<'SQL'
CREATE EXTENSION IF NOT EXISTS pageinspect;
-- The rows of rel that transaction x or a later one inserted, and deleted
-- (or updated: the old version), read from the pages: committed or not,
-- visible or not.  While a call is blocked nothing else writes these tables,
-- so the rows of xids from the call's on are its own or its subtransactions'
-- (and in a test cluster xids compare as numbers).
CREATE FUNCTION public.written_by(rel regclass, x xid, OUT inserted bigint, OUT deleted bigint)
LANGUAGE sql AS $$
  SELECT count(*) FILTER (WHERE t.t_xmin::text::bigint >= x::text::bigint),
         count(*) FILTER (WHERE t.t_xmax::text::bigint >= x::text::bigint
                            AND t.t_infomask & 128 = 0    -- HEAP_XMAX_LOCK_ONLY: a lock, not a delete
                            AND t.t_infomask & 4096 = 0)  -- HEAP_XMAX_IS_MULTI
    FROM generate_series(0, pg_relation_size(rel) / current_setting('block_size')::int - 1) b,
         LATERAL heap_page_items(get_raw_page(rel::text, b::int)) t
   WHERE t.lp_flags = 1
$$;
-- Every row of session s: its sessions row and its rows in every table of
-- mnemo with a session_id, as "table=count ..." and a digest of them all.
CREATE FUNCTION public.session_rows(s text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  t record;
  c bigint;
  h text;
  counts text := '';
  all_rows text := '';
BEGIN
  FOR t IN SELECT r.relname, CASE WHEN r.relname = 'sessions' THEN 'id' ELSE 'session_id' END AS col
             FROM pg_class r
            WHERE r.relnamespace = 'mnemo'::regnamespace AND r.relkind IN ('r', 'p') AND NOT r.relispartition
              AND (r.relname = 'sessions' OR EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = r.oid
                                                       AND a.attname = 'session_id' AND NOT a.attisdropped))
            ORDER BY r.relname
  LOOP
    EXECUTE format('SELECT count(*), string_agg(x::text, E''\n'' ORDER BY x::text) FROM mnemo.%I x WHERE %I = $1',
                   t.relname, t.col) INTO c, h USING s;
    IF c > 0 THEN
      counts := counts || t.relname || '=' || c || ' ';
      all_rows := all_rows || t.relname || E'\n' || h || E'\n';
    END IF;
  END LOOP;
  RETURN counts || md5(all_rows);
END
$$;
SQL
}

# ctx_view SESSION: its context view, "type:id@position,..."
ctx_view() {
	val "SELECT string_agg(item_type || ':' || item_id || '@' || position, ',' ORDER BY position)
	       FROM mnemo.get_context_items('$1')"
}

# new_session SESSION N: a session with N user messages SESSION_m1 .. SESSION_mN.
new_session() {
	psql -X -q -v ON_ERROR_STOP=1 -c "SELECT mnemo.create_session('$1')" \
		-c "SELECT mnemo.append_message('$1', 'user', jsonb_build_array(jsonb_build_object('type', 'text',
		      'text', 'message ' || i || ' of $1')), id => '$1_m' || i) FROM generate_series(1, $2) i" >/dev/null
}

# leaf SESSION ID M...: a leaf summary ID over the messages SESSION_mM, ...
leaf() {
	local s=$1 id=$2 m ids=""
	shift 2
	for m in "$@"; do ids+="${ids:+,}'${s}_m$m'"; done
	psql -X -q -v ON_ERROR_STOP=1 \
		-c "SELECT mnemo.commit_summary('$s', '$id', 'summary $id', 10, ARRAY[$ids])" >/dev/null
}

# verify_all LABEL: `mnemo verify` passes for every session but those with
# a summary that has no node (put in context by a bare swap_context_items:
# no provenance, so verify reports what it replaced as unreachable).
verify_all() {
	local label=$1 s bad="" count=0
	for s in $(val "SELECT id FROM mnemo.sessions s WHERE NOT EXISTS (SELECT 1 FROM mnemo.messages m
	                   WHERE m.session_id = s.id AND m.is_summary AND NOT EXISTS (SELECT 1 FROM mnemo.summary_nodes n
	                         WHERE n.session_id = m.session_id AND n.id = m.id)) ORDER BY id"); do
		count=$((count + 1))
		"$mnemo_cli" verify "$s" >"$tmp/verify.out" 2>&1 || bad+=" $s"
	done
	is "$count:${bad# }" "$count:" "$label: mnemo verify passes for each of the $count sessions"
	[ -z "$bad" ] || sed 's/^/#   /' "$tmp/verify.out"
}

# start_blocker SQL: a psql (application_name mnemo_blocker) that runs SQL in
# an open transaction and then sits idle in it, reading more from fd 8.
start_blocker() {
	rm -f "$tmp/blocker.fifo"
	mkfifo "$tmp/blocker.fifo"
	PGAPPNAME=mnemo_blocker psql -X -q -v ON_ERROR_STOP=1 -tA <"$tmp/blocker.fifo" >"$tmp/blocker.out" 2>&1 &
	blocker=$!
	pids+=("$blocker")
	exec 8>"$tmp/blocker.fifo"
	printf '%s\n' "BEGIN;" "$1" >&8
	wait_for "SELECT count(*) = 1 FROM pg_stat_activity WHERE application_name = 'mnemo_blocker'
	           AND state = 'idle in transaction' AND backend_xid IS NOT NULL" ||
		{ cat "$tmp/blocker.out"; return 1; }
}

# start_call SQL: SQL in the background (application_name mnemo_call); waits
# until it waits for a lock the blocker holds.
start_call() {
	PGAPPNAME=mnemo_call psql -X -q -v ON_ERROR_STOP=1 -tA -c "$1" >"$tmp/call.out" 2>&1 8>&- &
	caller=$!
	pids+=("$caller")
	wait_for "SELECT count(*) = 1 FROM pg_stat_activity c
	           WHERE c.application_name = 'mnemo_call' AND c.wait_event_type = 'Lock'
	             AND pg_blocking_pids(c.pid) = (SELECT array_agg(b.pid) FROM pg_stat_activity b
	                                             WHERE b.application_name = 'mnemo_blocker')" ||
		{ cat "$tmp/call.out"; return 1; }
}

# mid_call MODE LABEL BLOCK_SQL CALL_SQL TABLES: the call CALL_SQL stopped
# by the blocker's BLOCK_SQL, having written (inserted or deleted rows) in
# each of TABLES (of mnemo); then the crash of MODE (backend: kill -9 of the
# call's backend; server: pg_ctl stop -m immediate, then started again), and
# the recovery.
mid_call() {
	local mode=$1 label=$2 block=$3 call=$4 tables=$5 pid xid state rc=0 lines
	check "$label: the blocker holds its lock in an open transaction" start_blocker "$block"
	check "$label: the call waits for the blocker's lock" start_call "$call"
	pid=$(val "SELECT pid FROM pg_stat_activity WHERE application_name = 'mnemo_call'")
	xid=$(val "SELECT backend_xid FROM pg_stat_activity WHERE application_name = 'mnemo_call'")
	local written="(SELECT t, w.* FROM unnest(string_to_array('$tables', ' ')) WITH ORDINALITY u(t, o),
	                 LATERAL public.written_by(('mnemo.' || t)::regclass, '$xid') w ORDER BY o)"
	echo "#   written so far, uncommitted: $(val "SELECT string_agg(format('%s +%s -%s', t, inserted, deleted), ', ')
	                                            FROM $written x")"
	is "$(val "SELECT coalesce(string_agg(t, ' '), 'none') FROM $written x WHERE inserted + deleted = 0")" none \
		"$label: the call is part-way through: it has written rows in $tables"
	if [ "$mode" = backend ]; then
		lines=$(wc -l <"$dir/server.log")
		kill -9 "$pid"
		exec 8>&-
		check "$label: the postmaster resets and recovers after the call's backend was killed" \
			wait_reinit "$lines"
	else
		bash "$here/cluster.sh" crash "$dir"
		# closed before the start: a postmaster that inherited it would keep
		# the blocker's input open
		exec 8>&-
		state=$("$(pg_config --bindir)/pg_controldata" "$dir/data" | sed -n 's/^Database cluster state: *//p')
		is "$state" "in production" "$label: pg_ctl stop -m immediate: the cluster needs crash recovery"
		bash "$here/cluster.sh" start "$dir"
	fi
	check "$label: the server accepts connections again" wait_server
	wait "$blocker" 2>/dev/null || true
	wait "$caller" 2>/dev/null || rc=$?
	# psql's status 2: the connection to the server went bad
	is "$rc $(grep -c 'server closed the connection unexpectedly' "$tmp/call.out")" "2 1" \
		"$label: the call's client lost its connection and got no result"
	[ "$rc" = 2 ] || sed 's/^/#   /' "$tmp/call.out"
}

# after_crash LABEL SESSIONS ROWS VIEW: each of SESSIONS has the rows it had
# (ROWS: their session_rows, one a line) and the first its context view
# (VIEW); every session passes check_sessions and mnemo verify.
after_crash() {
	local label=$1 sessions=$2 rows=$3 before_view=$4
	is "$(rows_of "$sessions")" "$rows" "$label: every row of $sessions is as before the call"
	is "$(ctx_view "${sessions%% *}")" "$before_view" "$label: the context view of ${sessions%% *} is as before the call"
	check_sessions "$label"
	verify_all "$label"
}

# rows_of SESSIONS: their session_rows, one a line.
rows_of() {
	local s out=""
	for s in $1; do out+="$(val "SELECT public.session_rows('$s')")"$'\n'; done
	printf '%s' "$out"
}

# commit_summary condensing A and B, stopped at STOP: supersede (B's node
# row) or swap (B's context row).
test_call_summary() {
	local mode=$1 stop=$2 s=call_${1}_summary_$2 label rows before block
	label="commit_summary stopped at the $stop, $mode crash"
	new_session "$s" 10
	leaf "$s" "${s}_a" 1 2 3
	leaf "$s" "${s}_b" 4 5 6
	rows=$(rows_of "$s")
	before=$(ctx_view "$s")
	if [ "$stop" = supersede ]; then
		block="SELECT 1 FROM mnemo.summary_nodes WHERE session_id = '$s' AND id = '${s}_b' FOR UPDATE;"
	else
		block="SELECT 1 FROM mnemo.context_items WHERE session_id = '$s' AND item_id = '${s}_b' FOR KEY SHARE;"
	fi
	mid_call "$mode" "$label" "$block" \
		"SELECT mnemo.commit_summary('$s', '${s}_c', 'condensed', 20, ARRAY['${s}_a', '${s}_b'], 'condensed', 2)" \
		"log summary_nodes summary_edges$([ "$stop" = swap ] && echo ' context_items')"
	is "$(val "SELECT (SELECT count(*) FROM mnemo.messages WHERE session_id = '$s' AND id = '${s}_c')
	             || ' ' || (SELECT count(*) FROM mnemo.message_parts p WHERE p.session_id = '$s'
	                         AND p.content->>'summary_node_id' = '${s}_c')
	             || ' ' || (SELECT count(*) FROM mnemo.summary_nodes WHERE session_id = '$s' AND id = '${s}_c')
	             || ' ' || (SELECT count(*) FROM mnemo.summary_edges WHERE session_id = '$s' AND summary_id = '${s}_c')
	             || ' ' || (SELECT count(*) FROM mnemo.summary_nodes WHERE session_id = '$s' AND superseded_by IS NOT NULL)")" \
		"0 0 0 0 0" "$label: no summary message, part, node or edge of the condensation, nothing superseded"
	after_crash "$label" "$s" "$rows" "$before"
	is "$(val "SELECT mnemo.commit_summary('$s', '${s}_c', 'condensed', 20, ARRAY['${s}_a', '${s}_b'], 'condensed', 2)")" 1 \
		"$label: the same commit_summary then succeeds, at position 1"
	is "$(ctx_view "$s")" "summary:${s}_c@1,message:${s}_m7@7,message:${s}_m8@8,message:${s}_m9@9,message:${s}_m10@10" \
		"$label: the condensation replaced both summaries in the view"
	is "$(val "SELECT string_agg(id || '>' || coalesce(superseded_by, '-'), ',' ORDER BY id) FROM mnemo.summary_nodes
	            WHERE session_id = '$s'")" "${s}_a>${s}_c,${s}_b>${s}_c,${s}_c>-" \
		"$label: it superseded both nodes"
	is "$("$mnemo_cli" verify "$s" 2>&1 | tail -n 1)" \
		"verify: 10 messages, 10 reachable (4 in context, 6 through 1 summary), 0 failed" \
		"$label: mnemo verify: the messages under it are reachable through it"
}

# fork_session at a checkpoint of a session with a summary and a message
# after the checkpoint.
test_call_fork() {
	local mode=$1 s=call_${1}_fork label child rows before last expected
	label="fork_session, $mode crash"
	child=${s}_child
	new_session "$s" 10
	leaf "$s" "${s}_a" 1 2 3
	psql -X -q -v ON_ERROR_STOP=1 -c "SELECT mnemo.add_checkpoint('$s', 'cp')" \
		-c "SELECT mnemo.append_message('$s', 'user', '[{\"type\": \"text\", \"text\": \"after the checkpoint\"}]')" >/dev/null
	rows=$(rows_of "$s $child")
	before=$(ctx_view "$s")
	# the view as of the checkpoint: the source's, without what came after it
	expected=$(val "SELECT string_agg(c.item_type || ':' || c.item_id, ',' ORDER BY c.position)
	                  FROM mnemo.get_context_items('$s') c JOIN mnemo.messages m ON m.session_id = '$s' AND m.id = c.item_id
	                 WHERE m.seq <= (SELECT seq FROM mnemo.checkpoints WHERE session_id = '$s' AND label = 'cp')")
	last=$(tr , '\n' <<<"$expected" | wc -l)
	mid_call "$mode" "$label" \
		"INSERT INTO mnemo.context_items (session_id, generation, position, item_type, item_id, seq, created_at, tenant)
		   SELECT '$child', 0, $last, 'message', 'blocker', 0, 0, tenant FROM mnemo.sessions WHERE id = '$s';" \
		"SELECT id FROM mnemo.fork_session('$s', 'cp', '$child')" \
		"sessions lineage context_items"
	is "$(sqlstate_of "SELECT mnemo.get_session('$child')")" MN001 \
		"$label: there is no child session (MN001)"
	after_crash "$label" "$s $child" "$rows" "$before"
	is "$(val "SELECT id FROM mnemo.fork_session('$s', 'cp', '$child')")" "$child" \
		"$label: the same fork_session then succeeds"
	is "$(val "SELECT string_agg(item_type || ':' || item_id, ',' ORDER BY position) FROM mnemo.get_context_items('$child')")" \
		"$expected" "$label: the child's view is the source's as of the checkpoint"
	is "$(val "SELECT forks FROM mnemo.sessions WHERE id = '$s'")" 1 "$label: the source counts one fork"
	is "$("$mnemo_cli" verify "$child" 2>&1 | tail -n 1)" \
		"verify: 10 messages, 10 reachable (7 in context, 3 through 1 summary), 0 failed" \
		"$label: mnemo verify of the child"
}

# resume_session to a checkpoint before a summary over messages before it
# (the view as of the checkpoint expands the summary).
test_call_resume() {
	local mode=$1 s=call_${1}_resume label rows before gen
	label="resume_session, $mode crash"
	new_session "$s" 6
	psql -X -q -v ON_ERROR_STOP=1 -c "SELECT mnemo.add_checkpoint('$s', 'cp')" \
		-c "SELECT mnemo.append_message('$s', 'user', jsonb_build_array(jsonb_build_object('type', 'text',
		      'text', 'after ' || i)), id => '${s}_m' || i) FROM generate_series(7, 8) i" >/dev/null
	leaf "$s" "${s}_a" 1 2 3
	rows=$(rows_of "$s")
	before=$(ctx_view "$s")
	gen=$(val "SELECT context_generation + 1 FROM mnemo.sessions WHERE id = '$s'")
	mid_call "$mode" "$label" \
		"INSERT INTO mnemo.context_items (session_id, generation, position, item_type, item_id, seq, created_at, tenant)
		   SELECT '$s', $gen, 6, 'message', 'blocker', 0, 0, tenant FROM mnemo.sessions WHERE id = '$s';" \
		"SELECT mnemo.resume_session('$s', 'cp')" \
		"discarded context_items"
	is "$(val "SELECT count(*) FROM mnemo.list_discarded('$s')")" 0 "$label: nothing is discarded"
	after_crash "$label" "$s" "$rows" "$before"
	is "$(val "SELECT mnemo.resume_session('$s', 'cp')")" 3 \
		"$label: the same resume_session then succeeds and discards 3 (2 messages and the summary)"
	is "$(ctx_view "$s")" "$(for i in 1 2 3 4 5 6; do printf 'message:%s_m%s@%s,' "$s" "$i" "$i"; done | sed 's/,$//')" \
		"$label: the view is the one as of the checkpoint"
	is "$(val "SELECT string_agg(id, ',' ORDER BY seq) FROM mnemo.list_discarded('$s')")" "${s}_m7,${s}_m8,${s}_a" \
		"$label: list_discarded names what came after the checkpoint"
}

# purge_session of a fork that has a summary over inherited and own
# messages and a checkpoint; its parent's forks count goes down with it.
test_call_purge() {
	local mode=$1 p=call_${1}_purge label s rows before
	label="purge_session, $mode crash"
	s=${p}_child
	new_session "$p" 4
	psql -X -q -v ON_ERROR_STOP=1 -c "SELECT mnemo.add_checkpoint('$p', 'cp')" \
		-c "SELECT 1 FROM mnemo.fork_session('$p', 'cp', '$s')" \
		-c "SELECT mnemo.append_message('$s', 'user', jsonb_build_array(jsonb_build_object('type', 'text',
		      'text', 'own ' || i)), id => '${s}_m' || i) FROM generate_series(5, 8) i" \
		-c "SELECT mnemo.add_checkpoint('$s', 'cp')" >/dev/null
	psql -X -q -v ON_ERROR_STOP=1 \
		-c "SELECT mnemo.commit_summary('$s', '${s}_a', 'summary', 10, ARRAY['${p}_m3', '${p}_m4', '${s}_m5'])" >/dev/null
	rows=$(rows_of "$s $p")
	before=$(ctx_view "$s")
	mid_call "$mode" "$label" \
		"SELECT 1 FROM mnemo.context_items WHERE session_id = '$s' AND item_id = '${s}_a' FOR KEY SHARE;" \
		"SELECT mnemo.purge_session('$s')" \
		"sessions log summary_nodes summary_edges checkpoints lineage"
	is "$(val "SELECT forks FROM mnemo.sessions WHERE id = '$p'")" 1 "$label: the parent still counts the fork"
	after_crash "$label" "$s $p" "$rows" "$before"
	is "$(val "SELECT mnemo.purge_session('$s')")" 5 \
		"$label: the same purge_session then succeeds (4 messages and the summary)"
	is "$(val "SELECT public.session_rows('$s')")" "$(val "SELECT md5('')")" "$label: no row of the fork is left"
	is "$(val "SELECT forks FROM mnemo.sessions WHERE id = '$p'")" 0 "$label: the parent counts no fork"
	check_sessions "$label, purged"
}

# swap_context_items of two messages that are explicit context rows.
test_call_swap() {
	local mode=$1 s=call_${1}_swap label rows before report
	label="swap_context_items, $mode crash"
	new_session "$s" 8
	psql -X -q -v ON_ERROR_STOP=1 \
		-c "SELECT mnemo.append_message('$s', 'assistant', '[{\"type\": \"text\", \"text\": \"S1\"}]', id => '${s}_s1', is_summary => true)" \
		-c "SELECT mnemo.swap_context_items('$s', ARRAY['${s}_m5'], '${s}_s1')" \
		-c "SELECT mnemo.append_message('$s', 'assistant', '[{\"type\": \"text\", \"text\": \"S2\"}]', id => '${s}_s2', is_summary => true)" >/dev/null
	rows=$(rows_of "$s")
	before=$(ctx_view "$s")
	report=$("$mnemo_cli" verify "$s" 2>&1 || true)
	mid_call "$mode" "$label" \
		"SELECT 1 FROM mnemo.context_items WHERE session_id = '$s' AND item_id = '${s}_m3' FOR KEY SHARE;" \
		"SELECT mnemo.swap_context_items('$s', ARRAY['${s}_m2', '${s}_m3'], '${s}_s2')" \
		"context_items"
	after_crash "$label" "$s" "$rows" "$before"
	is "$("$mnemo_cli" verify "$s" 2>&1 || true)" "$report" \
		"$label: mnemo verify reports the same as before the call (a bare swap records no provenance)"
	is "$(val "SELECT mnemo.swap_context_items('$s', ARRAY['${s}_m2', '${s}_m3'], '${s}_s2')")" 2 \
		"$label: the same swap_context_items then succeeds, at position 2"
	is "$(ctx_view "$s")" "message:${s}_m1@1,summary:${s}_s2@2,message:${s}_m4@4,summary:${s}_s1@5,message:${s}_m6@6,message:${s}_m7@7,message:${s}_m8@8" \
		"$label: the swap replaced both messages"
}

test_calls() {
	local mode
	calls_setup
	for mode in backend server; do
		test_call_summary "$mode" supersede
		test_call_summary "$mode" swap
		test_call_fork "$mode"
		test_call_resume "$mode"
		test_call_purge "$mode"
		test_call_swap "$mode"
	done
}
