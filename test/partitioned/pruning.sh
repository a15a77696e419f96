#!/usr/bin/env bash
# Every call of a function that acts on one session touches one partition:
# the proof, on the hash-partitioned layout (mnemo.partitions), that each
# call would be routed to one Citus shard (doc/scale-out.md).
#
#   bash test/partitioned/pruning.sh [DIR]   (test/run.sh passes its cluster)
#
# Method: each call runs in its own session with auto_explain logging, at
# NOTICE level to this client, the JSON plan of every statement the call runs
# (log_nested_statements: the statements inside the C functions too), after
# executor start-up, so partitions pruned at plan time or at start-up (the
# $1 of a prepared statement) are already gone.  The plans are then read back
# in SQL: per statement, the partitions of each table it scans; per call, the
# partition bounds it touched.  A call passes when every statement touches at
# most one partition of each table, all with the same bound (colocated: the
# same shard), and it ran at least one statement on a mnemo table.  Inserts
# show only the partitioned table; the row goes to its session's partition.
#
# The calls below name every mnemo function; a function that is neither
# called here nor listed as not per session fails the coverage check, so a
# new function cannot go unchecked.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"

setup_cluster pruning "${1:-}"
PGOPTIONS="-c mnemo.partitions=4" setup_db mnemo_pruning

# functions that do not act on one session, and why
exempt="
version          no table
new_id           no table
estimate_tokens  no table
list_sessions    lists sessions across all of them (a multi-shard read by design)
store_file_reference        file_references is a reference table
get_file_reference          file_references is a reference table
get_file_reference_by_path  file_references is a reference table
distribute       the Citus set-up itself
_session_column  reads the catalog
_guard           trigger function
"

seed=$(cat <<'SQL'
SELECT mnemo.create_session('pr_a');
SELECT mnemo.append_messages('pr_a', '[
  {"role":"user","id":"pr_m1","parts":[{"type":"text","text":"one"}]},
  {"role":"assistant","id":"pr_m2","parts":[{"type":"text","text":"two"},
     {"type":"tool","id":"pr_t1","tool_name":"ls","tool_call_id":"c1","tool_state":"completed",
      "input":{"p":"/"},"output":"etc usr","token_estimate":100}]},
  {"role":"user","id":"pr_m3","parts":[{"type":"text","text":"three"}]},
  {"role":"assistant","id":"pr_m4","parts":[{"type":"text","text":"four"}]},
  {"role":"user","id":"pr_m5","parts":[{"type":"text","text":"five"}]},
  {"role":"assistant","id":"pr_m6","parts":[{"type":"text","text":"six"}]},
  {"role":"assistant","id":"pr_x1","is_summary":true,"parts":[{"type":"text","text":"spare"}]}]');
SELECT mnemo.commit_summary('pr_a', 'pr_s1', 'one and two', 5, ARRAY['pr_m1', 'pr_m2']);
SELECT mnemo.create_session('pr_b');
SELECT mnemo.append_message('pr_b', 'user', '[{"type":"text","text":"other"}]', id => 'pr_b1');
SQL
)

# function<TAB>call: each runs in a transaction that is rolled back, so
# every call sees the seeded data; function/variant names a second call
calls=$(cat <<'SQL'
create_session	SELECT mnemo.create_session('pr_new')
create_session/child	SELECT mnemo.create_session('pr_child', parent_id => 'pr_a')
get_or_create_session	SELECT mnemo.get_or_create_session('pr_a')
get_session	SELECT mnemo.get_session('pr_a')
soft_delete_session	SELECT mnemo.soft_delete_session('pr_a')
purge_session	SELECT mnemo.purge_session('pr_a')
watch	SELECT mnemo.watch('pr_a')
unwatch	SELECT mnemo.unwatch('pr_a')
append_message	SELECT mnemo.append_message('pr_a', 'user', '[{"type":"text","text":"more"}]')
append_messages	SELECT mnemo.append_messages('pr_a', '[{"role":"user","parts":[{"type":"text","text":"more"}]}]')
append_part	SELECT mnemo.append_part('pr_m6', '{"type":"text","text":"more"}')
update_part_status	SELECT mnemo.update_part_status('pr_t1', tool_state => 'error', error_message => 'boom')
update_message_tokens	SELECT mnemo.update_message_tokens('pr_m6', '{"input": 3, "output": 4}', 0.5, 'stop')
tombstone_part	SELECT mnemo.tombstone_part('pr_t1')
swap_context_items	SELECT mnemo.swap_context_items('pr_a', ARRAY['pr_m3', 'pr_m4'], 'pr_x1')
build_context	SELECT count(*) FROM mnemo.build_context('pr_a', 1000)
context_report	SELECT mnemo.context_report('pr_a', 1000)
commit_summary	SELECT mnemo.commit_summary('pr_a', 'pr_s2', 'three and four', 6, ARRAY['pr_m3', 'pr_m4'])
expand_summary	SELECT count(*) FROM mnemo.expand_summary('pr_s1', true)
summary_nodes	SELECT count(*) FROM mnemo.summary_nodes('pr_a', true)
get_message	SELECT mnemo.get_message('pr_m1')
get_messages	SELECT count(*) FROM mnemo.get_messages('pr_a', 'pr_m1')
get_parts	SELECT count(*) FROM mnemo.get_parts('pr_m2')
get_messages_with_parts	SELECT count(*) FROM mnemo.get_messages_with_parts('pr_a')
get_messages_with_parts_by_ids	SELECT count(*) FROM mnemo.get_messages_with_parts_by_ids(ARRAY['pr_m2', 'pr_m1'])
history	SELECT count(*) FROM mnemo.history('pr_a', 2)
get_context_items	SELECT count(*) FROM mnemo.get_context_items('pr_a')
last_summary	SELECT mnemo.last_summary('pr_a')
prune_tool_outputs	SELECT mnemo.prune_tool_outputs('pr_a', 0, 0)
search_history	SELECT count(*) FROM mnemo.search_history('pr_a', 'one')
SQL
)

# plans CALL: the JSON plans of the statements CALL runs, as one JSON array
plans() {
	psql -X -q -v ON_ERROR_STOP=1 2>&1 >/dev/null <<SQL |
LOAD 'auto_explain';
SET auto_explain.log_min_duration = 0;
SET auto_explain.log_nested_statements = on;
SET auto_explain.log_analyze = off;
SET auto_explain.log_format = json;
SET auto_explain.log_level = notice;
SET client_min_messages = notice;
BEGIN;
$1;
ROLLBACK;
SQL
		awk 'BEGIN { print "[" }
		     /^NOTICE:  duration: .* plan:$/ { if (n++) print ","; next }
		     /^(psql:|NOTICE:|WARNING:|ERROR:|DETAIL:|HINT:|CONTEXT:)/ { print "error: " $0 > "/dev/stderr"; next }
		     { print }
		     END { print "]" }'
}

# check_plans JSON: one line per statement that touches more than one
# partition of a table, then one line if the call touched more than one
# bound; nothing when the call is pruned to one partition.
check_plans() {
	psql -X -q -tA -v ON_ERROR_STOP=1 -v plans="$1" <<'SQL'
CREATE TEMP TABLE touched AS
  WITH plan AS (
    SELECT s.n, s.p->>'Query Text' AS query, s.p
      FROM jsonb_array_elements(:'plans'::jsonb) WITH ORDINALITY AS s(p, n))
  SELECT plan.n, plan.query, parent.relname AS tab, c.relname AS partition,
         pg_get_expr(c.relpartbound, c.oid) AS bound
    FROM plan
   CROSS JOIN LATERAL jsonb_path_query(plan.p, 'strict $.**."Relation Name"') AS r(name)
    JOIN pg_class c ON c.relname = r.name #>> '{}' AND c.relnamespace = 'mnemo'::regnamespace
    LEFT JOIN pg_inherits i ON i.inhrelid = c.oid
    LEFT JOIN pg_class parent ON parent.oid = i.inhparent;
SELECT format('statement %s touches %s partitions of %s: %s', n, count(DISTINCT partition), tab,
              regexp_replace(left(query, 300), '\s+', ' ', 'g'))
  FROM touched WHERE tab IS NOT NULL
 GROUP BY n, tab, query HAVING count(DISTINCT partition) > 1
 ORDER BY n, tab;
SELECT format('the call touches %s different partitions: %s', count(DISTINCT bound),
              string_agg(DISTINCT partition, ', '))
  FROM touched WHERE bound IS NOT NULL HAVING count(DISTINCT bound) > 1;
SELECT 'no statement of the call read or wrote a mnemo table' WHERE NOT EXISTS (SELECT FROM touched);
SQL
}

# check_call NAME SQL
check_call() {
	local name=$1 sql=$2 json out
	if ! json=$(plans "$sql" 2>"$tmp/plans.err") || [ -s "$tmp/plans.err" ]; then
		not_ok "$name: one partition per call"
		echo "#   $sql"
		sed 's/^/#   /' "$tmp/plans.err" | head -n 5
		return
	fi
	out=$(check_plans "$json" 2>&1) || true
	if [ -z "$out" ]; then
		ok "$name: one partition per call"
	else
		not_ok "$name: one partition per call"
		echo "#   $sql"
		sed 's/^/#   /' <<<"$out"
	fi
}

# the layout is the one the check is about
is "$(val "SELECT count(*) FILTER (WHERE c.relkind = 'p') > 0 AND count(*) FILTER (WHERE c.relkind = 'r') = 0
             FROM pg_class c
            WHERE c.relnamespace = 'mnemo'::regnamespace AND NOT c.relispartition
              AND mnemo._session_column(c.oid) IS NOT NULL")" t \
	"every table with a session column is hash-partitioned"

check "the seed data goes in" psql -X -q -v ON_ERROR_STOP=1 -c "$seed"

# the check can fail: a read of all sessions' messages is caught
json=$(plans "SELECT count(*) FROM mnemo.messages" 2>/dev/null || echo '[]')
out=$(check_plans "$json" 2>&1 || true)
case $out in
*"touches 4 partitions of messages"*) ok "a statement that reads every session's rows is caught" ;;
*)
	not_ok "a statement that reads every session's rows is caught"
	echo "#   got: $out"
	;;
esac

while IFS=$'\t' read -r name sql; do
	[ -n "$name" ] && check_call "$name" "$sql"
done <<<"$calls"

# coverage: every function of the extension is called above or exempt
called=$(cut -f1 <<<"$calls" | sed 's|/.*||' | sort -u | paste -sd, -)
listed=$(awk 'NF { print $1 }' <<<"$exempt" | sort -u | paste -sd, -)
missing=$(val "SELECT coalesce(string_agg(DISTINCT p.proname, ', '), '')
                 FROM pg_proc p JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid
                  AND d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
                 JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'mnemo'
                WHERE p.proname <> ALL (string_to_array('$called,$listed', ','))")
is "$missing" "" "every mnemo function is checked here or listed as not per session"

summary pruning
