#!/usr/bin/env bash
# make test-citus: mnemo on a real Citus cluster (doc/scale-out.md).
#
#   bash test/citus/run.sh
#
# When Citus is installed in the PostgreSQL that pg_config names, this
# builds and installs mnemo and the mnemo command, starts a coordinator and
# two workers on loopback (test/citus/cluster.sh: the documented set-up,
# mnemo.distribute() included), and from the coordinator runs every append
# form, calls on sessions of both workers in one transaction, a claimed
# compaction through `mnemo compact`, forks (read, appended to, forked
# again), resume, search, checkpoints, runs, maps, and a CLI import and
# export.  Then it checks where the rows are: the coordinator's count of each
# table is the sum over its shards, no shell table holds a row, two tenant
# roles' rows stay apart on the shards; and that each delegated call sends
# exactly one command to one node (citus.log_remote_commands).
#
# Without Citus it prints one line saying it was skipped, and why, and
# succeeds: `make test` never needs Citus.
set -euo pipefail
cd "$(dirname "$0")/../.."

lib=$(pg_config --pkglibdir)
if [ ! -f "$lib/citus.so" ]; then
	echo "test-citus: skipped: Citus is not installed in the PostgreSQL that pg_config names ($lib/citus.so is missing; doc/scale-out.md)"
	exit 0
fi

. test/lib.sh
make -s PG_CFLAGS=-Werror install >/dev/null
make -s client >/dev/null
M=$PWD/client/mnemo

top=$(mktemp -d /tmp/mnemo-citus.XXXXXX)
tmp=$top/work
mkdir -p "$tmp"
[ "$(id -u)" = 0 ] && chmod 755 "$top"
stop_citus() {
	bash test/citus/cluster.sh stop "$top/nodes" >/dev/null 2>&1 || true
	rm -rf "$top"
}
trap stop_citus EXIT
bash test/citus/cluster.sh start "$top/nodes" mnemo_citus >"$tmp/setup.log" 2>&1 || {
	echo "not ok 1 - the documented set-up runs on a coordinator and two workers"
	sed 's/^/#   /' "$tmp/setup.log" | tail -n 20
	exit 1
}
eval "$(bash test/citus/cluster.sh env "$top/nodes" mnemo_citus)"
ok "the documented set-up runs on a coordinator and two workers"

q() { psql -X -q -v ON_ERROR_STOP=1 -tA "$@"; }

# --- the set-up --------------------------------------------------------------

is "$(val "SELECT count(*) FROM pg_dist_node WHERE noderole = 'primary' AND groupid > 0")" 2 \
	"two workers"
is "$(val "SELECT count(*) FILTER (WHERE p.partmethod = 'h') || ' distributed, '
                || count(DISTINCT p.colocationid) FILTER (WHERE p.partmethod = 'h') || ' colocation group, '
                || count(*) FILTER (WHERE p.partmethod = 'n') || ' reference'
             FROM pg_dist_partition p")" \
	"$(val "SELECT count(*) FILTER (WHERE mnemo._session_column(c.oid) IS NOT NULL) || ' distributed, 1 colocation group, '
                || count(*) FILTER (WHERE mnemo._session_column(c.oid) IS NULL) || ' reference'
             FROM pg_class c JOIN pg_depend d ON d.classid = 'pg_class'::regclass AND d.objid = c.oid
              AND d.deptype = 'e' AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'mnemo')
            WHERE c.relkind IN ('r', 'p') AND NOT c.relispartition")" \
	"every session table is distributed in one colocation group, the others are reference tables"
is "$(val "SELECT count(*) FROM pg_dist_object o JOIN mnemo._session_functions() f ON f.fn::oid = o.objid
            WHERE o.classid = 'pg_proc'::regclass AND o.distribution_argument_index = 0
              AND o.force_delegation IS NOT TRUE")" \
	"$(val "SELECT count(*) FROM mnemo._session_functions()")" \
	"every session function is delegated by its first argument, without force_delegation"
placements=$(val "SELECT string_agg(logicalrelid::text || ':' || colocationid || ':' || partmethod, ' ' ORDER BY logicalrelid::text)
                    FROM pg_dist_partition")
check "mnemo.distribute() again, as after an update" q -c "SELECT mnemo.distribute()"
is "$(val "SELECT string_agg(logicalrelid::text || ':' || colocationid || ':' || partmethod, ' ' ORDER BY logicalrelid::text)
             FROM pg_dist_partition")" "$placements" \
	"and every table stays where it was"
is "$(val "SELECT count(*) FROM run_command_on_workers(\$\$SELECT count(*) FROM pg_dist_object o
             WHERE o.classid = 'pg_proc'::regclass AND o.objid = 'mnemo.get_parts(text, text)'::regprocedure
               AND o.colocationid IS NOT NULL\$\$) WHERE result = '1'")" 2 \
	"and every worker knows get_parts is delegated"

# the node of a session's shards
node_of() {
	val "SELECT n.nodeport FROM pg_dist_placement p JOIN pg_dist_node n ON n.groupid = p.groupid
          WHERE p.shardid = get_shard_id_for_distribution_column('mnemo.sessions', '$1')"
}
# ID on WORKER_PORT: the first of PREFIX0, PREFIX1, ... whose shards are there
id_on() {
	local i
	for i in $(seq 0 50); do
		if [ "$(node_of "$1$i")" = "$2" ]; then
			echo "$1$i"
			return
		fi
	done
	return 1
}
w1=$((PGPORT + 1))
w2=$((PGPORT + 2))
a=$(id_on cs_a "$w1")
b=$(id_on cs_b "$w2")
f1=$(id_on cs_f "$w2")
f2=$(id_on cs_g "$w1")

# --- every append form --------------------------------------------------------

check "create_session on each worker" q -c "SELECT mnemo.create_session('$a'); SELECT mnemo.create_session('$b')"
check "append_message" q -c "SELECT mnemo.append_message('$a', 'user',
  '[{\"type\":\"text\",\"text\":\"hello citus\"},{\"type\":\"tool\",\"id\":\"cs_t1\",\"tool_name\":\"ls\",\"tool_call_id\":\"c1\",\"tool_state\":\"running\",\"input\":{}}]',
  id => 'cs_m1')"
# 300 messages of 3 parts: the rows go in statements of 128, 32, 8 and 4 rows
check "append_messages, 300 messages of 3 parts" q -c "SELECT count(*) FROM mnemo.append_messages('$a',
  (SELECT jsonb_agg(jsonb_build_object('role', CASE WHEN g % 2 = 0 THEN 'assistant' ELSE 'user' END,
          'parts', jsonb_build_array(jsonb_build_object('type', 'text', 'text', 'message ' || g),
                                     jsonb_build_object('type', 'text', 'text', 'second'),
                                     jsonb_build_object('type', 'text', 'text', 'third'))))
     FROM generate_series(1, 300) g))"
check "append_part" q -c "SELECT mnemo.append_part('$a', 'cs_m1', '{\"type\":\"text\",\"text\":\"late part\"}')"
check "update_part_status" q -c "SELECT mnemo.update_part_status('$a', 'cs_t1', tool_state => 'completed', output => 'etc usr')"
is "$(val "SELECT count(*) || ' ' || sum(jsonb_array_length(parts)) FROM mnemo.get_messages_with_parts('$a')")" \
	"301 903" "every message and part is read back from the coordinator"
check "commit_summary" q -c "SELECT mnemo.commit_summary('$a', 'cs_sum1', 'the first three', 5,
  ARRAY(SELECT id FROM mnemo.get_messages('$a') ORDER BY seq LIMIT 3))"
is "$(val "SELECT count(*) || ' ' || bool_and(t.parts = w.parts)
             FROM mnemo.turn_context('$a', 100000) t
             JOIN mnemo.get_messages_with_parts_by_ids('$a', ARRAY(
                    SELECT item_id FROM mnemo.build_context('$a', 100000)
                     WHERE role = 'assistant' AND item_type = 'message')) w ON w.id = t.item_id")" \
	"$(val "SELECT count(*) FROM mnemo.build_context('$a', 100000) WHERE role = 'assistant' AND item_type = 'message'") true" \
	"turn_context: each assistant message's parts as get_messages_with_parts_by_ids gives them"

# --- one transaction, sessions on both workers --------------------------------

check "several calls in one BEGIN ... COMMIT on sessions of both workers" q <<SQL
BEGIN;
SELECT mnemo.append_message('$a', 'user', '[{"type":"text","text":"in a transaction"}]', id => 'cs_tx_a');
SELECT mnemo.append_message('$b', 'user', '[{"type":"text","text":"in a transaction"}]', id => 'cs_tx_b');
SELECT mnemo.add_checkpoint('$b', 'cs_tx_cp');
SELECT count(*) FROM mnemo.build_context('$a', 100000);
COMMIT;
SQL
is "$(val "SELECT count(*) FROM mnemo.messages WHERE id IN ('cs_tx_a', 'cs_tx_b')")" 2 "both committed"
check "a failed call in a transaction leaves nothing of it" bash -c "! psql -X -q -v ON_ERROR_STOP=1 <<'SQL'
BEGIN;
SELECT mnemo.append_message('$b', 'user', '[{\"type\":\"text\",\"text\":\"rolled back\"}]', id => 'cs_rb');
SELECT mnemo.append_message('$a', 'user', '[{\"type\":\"text\",\"text\":\"taken\"}]', id => 'cs_m1');
COMMIT;
SQL"
is "$(val "SELECT count(*) FROM mnemo.messages WHERE id = 'cs_rb'")" 0 "the other worker's append is rolled back"

# --- checkpoints, runs, maps, resume, search ------------------------------------

check "checkpoints" q -c "SELECT mnemo.add_checkpoint('$a', 'cs_cp'); SELECT count(*) FROM mnemo.list_checkpoints('$a')"
check "runs" q -c "SELECT mnemo.claim_run('$a', 'cs_r1'); SELECT mnemo.complete_run('$a', 'cs_r1')"
check "maps" q <<SQL
SELECT mnemo.create_map('$b', 'cs_map', '["one", "two", "three"]', 'say {{ item }}');
SELECT count(*) FROM mnemo.claim_map_items('$b', 'cs_map', 'cs_w', 2);
SELECT mnemo.complete_map_item('$b', 'cs_map', 0, 'cs_w', '"done"');
SELECT mnemo.fail_map_item('$b', 'cs_map', 1, 'cs_w', 'timeout', 'slow');
SQL
is "$(val "SELECT (mnemo.map_status('$b', 'cs_map')).done")" 1 "map_status"
check "state and pending requests" q -c "SELECT mnemo.update_state('$a', '{\"k\": 1}');
  SELECT mnemo.set_pending_request('$a', '{\"q\": 1}'); SELECT mnemo.clear_pending_request('$a')"
is "$(val "SELECT count(*) FROM mnemo.search_history('$a', 'message 42')")" 1 "search_history finds a message"
is "$(q -c "SELECT mnemo.append_message('$a', 'user', '[{\"type\":\"text\",\"text\":\"after the checkpoint\"}]') IS NOT NULL" 2>&1)" t \
	"an append after the checkpoint"
is "$(val "SELECT mnemo.resume_session('$a', 'cs_cp')")" 1 "resume_session discards it"
is "$(val "SELECT count(*) FROM mnemo.list_discarded('$a')")" 1 "and keeps it in list_discarded"
# the parts arrays of the other reads, each as one join (src/reads/flat.c
# builds them all)
is "$(val "SELECT count(*) || ' ' || bool_and(s.parts = w.parts) FROM mnemo.snapshot('$a', 'cs_r1') s
             JOIN mnemo.get_messages_with_parts('$a') w ON w.id = s.id")" \
	"$(val "SELECT count(*) FROM mnemo.get_messages('$a') WHERE NOT is_summary") true" \
	"snapshot: every message's parts as get_messages_with_parts gives them"
is "$(val "SELECT count(*) || ' ' || bool_and(e.parts = w.parts) FROM mnemo.expand_summary('$a', 'cs_sum1') e
             JOIN mnemo.get_messages_with_parts('$a') w ON w.id = e.item_id")" "3 true" \
	"expand_summary: the parts of the three messages it covers"
is "$(val "SELECT count(*) || ' ' || bool_and(d.parts = w.parts) FROM mnemo.list_discarded('$a') d
             JOIN mnemo.get_messages_with_parts_by_ids('$a', ARRAY(SELECT id FROM mnemo.list_discarded('$a'))) w
               ON w.id = d.id")" "1 true" \
	"list_discarded: its parts as get_messages_with_parts_by_ids gives them"

# --- forks -----------------------------------------------------------------------

check "fork_session onto the other worker" q -c "SELECT mnemo.fork_session('$a', 'cs_cp', '$f1')"
is "$(val "SELECT count(*) FROM mnemo.get_messages('$f1')")" \
	"$(val "SELECT count(*) FROM mnemo.get_messages('$a')")" "the fork reads its inherited messages"
check "an append to the fork, with an id (checked against the source's)" \
	q -c "SELECT mnemo.append_message('$f1', 'user', '[{\"type\":\"text\",\"text\":\"on the fork\"}]', id => 'cs_f_m')"
is "$(sqlstate_of "SELECT mnemo.append_message('$f1', 'user', '[{\"type\":\"text\",\"text\":\"x\"}]', id => 'cs_m1')")" \
	MN004 "an id the fork inherited is taken"
check "a fork of the fork, back on the first worker" q -c "SELECT mnemo.fork_session('$f1',
  '$(val "SELECT last_seq FROM mnemo.get_session('$f1')")', '$f2')"
check "an append to the fork of the fork" q -c "SELECT mnemo.append_message('$f2', 'user', '[{\"type\":\"text\",\"text\":\"twice forked\"}]')"
is "$(val "SELECT count(*) FROM mnemo.build_context('$f2', 1000000)")" \
	"$(val "SELECT count(*) + 1 FROM mnemo.build_context('$f1', 1000000)")" \
	"build_context of the fork of the fork"
is "$(val "SELECT count(*) FROM mnemo.search_history('$f2', 'twice forked')")" 1 "search on the fork of the fork"
# a phrase: the documents hold no positions, so each match is checked
# against its part, a statement on the part's shard (0.12.0)
check "the fork of the fork indexed" q -c "SELECT mnemo.index_search('$f2')"
is "$(val "SELECT count(*) FROM mnemo.search_history('$f2', '\"twice forked\"')")" 1 "a phrase on the fork of the fork"
is "$(val "SELECT count(*) FROM mnemo.search_history('$f2', '\"forked twice\"')")" 0 "and its words out of order match nothing"
is "$(val "SELECT count(*) FROM mnemo.search_history('$a', '\"message 42\"', ranked => true)")" 1 "a ranked phrase on the first session"

# --- the mnemo command --------------------------------------------------------------

log=test/data/claude-code/29/77bc73228c/1/full.jsonl
imported=$("$M" import "$log" --session cs_imported --new-ids --quiet 2>"$tmp/import.err") || true
is "$imported" cs_imported "mnemo import of a Claude Code log"
# a Claude Code log that compacted (as test/client/transcripts.sh builds it):
# the import tombstones the cleared tool parts and commits the summary
cc_log=test/data/claude-code/bf/3a8bd70c3e/1/full.jsonl
{
	head -n 14 "$cc_log"
	printf '%s\n' '{"type":"system","subtype":"microcompact_boundary","content":"Context microcompacted","isSidechain":false,"timestamp":"2026-03-02T08:50:40.000Z","uuid":"mc-1","microcompactMetadata":{"trigger":"auto","preTokens":9000,"tokensSaved":4000,"compactedToolIds":["toolu_01DJfGh7ZTDzLJVYtvuyJ1wc","toolu_01KxxDdfDjENzs99e1tP37he"]}}' \
		'{"type":"system","subtype":"compact_boundary","content":"Conversation compacted","isSidechain":false,"timestamp":"2026-03-02T08:50:41.000Z","uuid":"cb-1","compactMetadata":{"trigger":"manual","preTokens":12000}}' \
		'{"type":"user","isSidechain":false,"isCompactSummary":true,"timestamp":"2026-03-02T08:50:42.000Z","uuid":"cs-1","message":{"role":"user","content":"This session is being continued from a previous conversation. Summary: the truncate fix was planned and the three files were read."}}'
	tail -n +15 "$cc_log"
} | sed 's/"sessionId":"[^"]*"/"sessionId":"cs_cc_compacted"/' >"$tmp/cc-compacted.jsonl"
"$M" import "$tmp/cc-compacted.jsonl" --quiet >/dev/null 2>"$tmp/cc.err" || sed 's/^/#   /' "$tmp/cc.err"
is "$(val "SELECT count(*) FROM mnemo.message_parts WHERE session_id = 'cs_cc_compacted' AND compacted_at IS NOT NULL")/$(val "SELECT count(*) FROM mnemo.summary_nodes('cs_cc_compacted')")" \
	2/1 "mnemo import of a Claude Code log that compacted: 2 tool parts tombstoned, 1 summary"
check "mnemo compact --level 3 takes the claim, compacts and releases it" \
	"$M" compact cs_imported --level 3 --budget 2000
sed -n 's/^compact:/# compact:/p' "$tmp/check.out"
is "$(val "SELECT count(*) > 0 FROM mnemo.summary_nodes('cs_imported')") $(val "SELECT count(*) FROM mnemo.compaction_claims WHERE session_id = 'cs_imported'")" \
	"t 0" "the compaction stored its summaries and released its claim"
"$M" export "$f2" >"$tmp/f2.jsonl" 2>"$tmp/export.err" || true
is "$(($(wc -l <"$tmp/f2.jsonl") - 1))" "$(val "SELECT count(*) FROM mnemo.get_messages('$f2')")" \
	"mnemo export of the fork of the fork: every message, inherited ones included"
reimported=$("$M" import "$tmp/f2.jsonl" --new-ids --quiet 2>>"$tmp/import.err") || sed 's/^/#   /' "$tmp/import.err"
is "$(val "SELECT count(*) FROM mnemo.get_messages('$reimported')")" \
	"$(val "SELECT count(*) FROM mnemo.get_messages('$f2')")" "and imported back"

# --- tenants ------------------------------------------------------------------------

check "two tenant roles" q <<'SQL'
CREATE ROLE cs_tenant_a LOGIN;
CREATE ROLE cs_tenant_b LOGIN;
GRANT USAGE ON SCHEMA mnemo TO cs_tenant_a, cs_tenant_b;
GRANT SELECT ON ALL TABLES IN SCHEMA mnemo TO cs_tenant_a, cs_tenant_b;
SQL
check "each writes a session" bash -c "
  psql -X -q -v ON_ERROR_STOP=1 -U cs_tenant_a -c \"SELECT mnemo.create_session('cs_ta'); SELECT mnemo.append_message('cs_ta', 'user', '[{\\\"type\\\":\\\"text\\\",\\\"text\\\":\\\"a\\\"}]')\" &&
  psql -X -q -v ON_ERROR_STOP=1 -U cs_tenant_b -c \"SELECT mnemo.create_session('cs_tb'); SELECT mnemo.append_message('cs_tb', 'user', '[{\\\"type\\\":\\\"text\\\",\\\"text\\\":\\\"b\\\"}]')\""
is "$(PGUSER=cs_tenant_a val "SELECT string_agg(id, ',' ORDER BY id) FROM mnemo.sessions")" cs_ta \
	"a tenant sees only its session"
is "$(PGUSER=cs_tenant_a sqlstate_of "SELECT mnemo.get_messages('cs_tb')")" MN001 \
	"and another tenant's is missing to it"
is "$(val "SELECT sum(result::bigint) FROM run_command_on_shards('mnemo.log',
             \$\$SELECT count(*) FROM %s WHERE (session_id = 'cs_ta') <> (tenant = 'cs_tenant_a')
                                         OR (session_id = 'cs_tb') <> (tenant = 'cs_tenant_b')\$\$)")" 0 \
	"on the shards, each tenant's rows carry its tenant and no other's"
is "$(PGUSER=cs_tenant_a val "SELECT string_agg(id, ',' ORDER BY id) FROM mnemo.list_sessions()")" cs_ta \
	"list_sessions, as a tenant, lists its own session only"
# a tenant is bound by its role's name on Citus (a role's OID differs per
# node): reassign_tenant is how a superuser hands sessions over there
check "a third tenant's session, handed over to a fourth" bash -c "
  psql -X -q -v ON_ERROR_STOP=1 -c 'CREATE ROLE cs_tenant_c LOGIN; CREATE ROLE cs_tenant_d LOGIN; GRANT USAGE ON SCHEMA mnemo TO cs_tenant_c, cs_tenant_d' &&
  psql -X -q -v ON_ERROR_STOP=1 -U cs_tenant_c -c \"SELECT mnemo.create_session('cs_tc'); SELECT mnemo.append_message('cs_tc', 'user', '[{\\\"type\\\":\\\"text\\\",\\\"text\\\":\\\"c\\\"}]')\" &&
  psql -X -q -v ON_ERROR_STOP=1 -c \"SELECT mnemo.reassign_tenant('cs_tenant_c', 'cs_tenant_d')\""
is "$(PGUSER=cs_tenant_d val "SELECT count(*) FROM mnemo.get_messages('cs_tc')") $(PGUSER=cs_tenant_c sqlstate_of "SELECT mnemo.get_messages('cs_tc')")" \
	"1 MN001" "reassign_tenant: the new tenant reads the session, the old one no longer"
# session ids are unique within a tenant: both tenants' sessions cs_twin sit
# in the one shard group their id hashes to, and each call reads its own
check "two tenants each create a session cs_twin and append to it (a: one message, b: two)" bash -c "
  psql -X -q -v ON_ERROR_STOP=1 -U cs_tenant_a -c \"SELECT mnemo.create_session('cs_twin'); SELECT mnemo.append_message('cs_twin', 'user', '[{\\\"type\\\":\\\"text\\\",\\\"text\\\":\\\"a\\\"}]')\" &&
  psql -X -q -v ON_ERROR_STOP=1 -U cs_tenant_b -c \"SELECT mnemo.create_session('cs_twin'); SELECT mnemo.append_messages('cs_twin', '[{\\\"role\\\":\\\"user\\\",\\\"parts\\\":[]},{\\\"role\\\":\\\"assistant\\\",\\\"parts\\\":[]}]')\""
is "$(PGUSER=cs_tenant_a val "SELECT count(*) FROM mnemo.get_messages_with_parts('cs_twin')") $(PGUSER=cs_tenant_b val "SELECT count(*) FROM mnemo.get_messages_with_parts('cs_twin')")" \
	"1 2" "each tenant reads its own cs_twin"
is "$(val "SELECT count(DISTINCT shardid) FROM run_command_on_shards('mnemo.log', \$\$SELECT count(*) FROM %s WHERE session_id = 'cs_twin'\$\$) r
             WHERE r.result::int > 0") $(sqlstate_of "SELECT mnemo.get_session('cs_twin')")" "1 MN013" \
	"both tenants' rows of cs_twin are in one shard, and the superuser, who sees both, gets MN013"

# --- where the rows are -------------------------------------------------------------

tables=$(val "SELECT string_agg(logicalrelid::text, ' ' ORDER BY logicalrelid::text)
                FROM pg_dist_partition WHERE partmethod = 'h'")
bad=
for t in $tables; do
	here_n=$(val "SELECT count(*) FROM $t")
	shards=$(val "SELECT coalesce(sum(result::bigint), 0) FROM run_command_on_shards('$t', 'SELECT count(*) FROM %s')")
	[ "$here_n" = "$shards" ] || bad="$bad $t($here_n != $shards)"
done
is "${bad# }" "" "each distributed table's count on the coordinator equals the sum over its shards"
is "$(val "SELECT count(*) > 900 FROM mnemo.log")" t "(which hold the rows written above)"
shell=
for port in "$PGPORT" "$w1" "$w2"; do
	node=coordinator
	[ "$port" = "$w1" ] && node=worker1
	[ "$port" = "$w2" ] && node=worker2
	size=$(psql -X -tA -h "$top/nodes/$node" -p "$port" -c \
		"SELECT coalesce(sum(pg_relation_size(logicalrelid)), 0) FROM pg_dist_partition" 2>&1)
	[ "$size" = 0 ] || shell="$shell $node:$size"
done
is "${shell# }" "" "no shell table holds a row, on any node (pg_relation_size of each is 0)"

# --- one command to one node per delegated call --------------------------------------

# remote SQL: "N commands to M nodes", what SQL sends from the coordinator
remote() {
	psql -X -q -v ON_ERROR_STOP=1 -c "SET citus.log_remote_commands = on" -c "$1" 2>&1 >/dev/null |
		awk '/^NOTICE:  issuing / { n++ } /^DETAIL:  on server / { nodes[$4] = 1 }
		     END { printf "%d commands to %d nodes\n", n, length(nodes) }'
}
for call in \
	"SELECT mnemo.append_message('$a', 'user', '[{\"type\":\"text\",\"text\":\"one trip\"}]')" \
	"SELECT mnemo.append_messages('$b', '[{\"role\":\"user\",\"parts\":[{\"type\":\"text\",\"text\":\"one\"}]},{\"role\":\"assistant\",\"parts\":[{\"type\":\"text\",\"text\":\"two\"}]}]')" \
	"SELECT * FROM mnemo.build_context('$a', 100000)" \
	"SELECT * FROM mnemo.get_messages_with_parts('$f2')" \
	"SELECT mnemo.append_message('$f2', 'user', '[{\"type\":\"text\",\"text\":\"fork trip\"}]', id => 'cs_f2_trip')" \
	"SELECT mnemo.claim_compaction('$b', 'cs_holder')" \
	"SELECT * FROM mnemo.search_history('$a', 'hello')" \
	"SELECT mnemo.add_checkpoint('$b', 'cs_trip')"; do
	is "$(remote "$call")" "1 commands to 1 nodes" "one command to one node: ${call:0:60}"
done

summary test-citus
