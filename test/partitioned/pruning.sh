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
# The same plans' query texts show what Citus refuses in a write: a function
# that is not IMMUTABLE inside CASE, COALESCE or RETURNING.
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
reassign_tenant  every session of one tenant: an operator's hand-over
find_map         a map id across the caller's sessions (a multi-shard read, as list_sessions)
_session_column  reads the catalog
_session_functions  reads the catalog
_partition_by_session  the partitioned layout's set-up
tenant_visible   no table: the row-level security policies' test
file_id_footer   no table: a text function
truncate_summary no table: a text function
_check_session   no table: a CHECK constraint's function of one row
_check_log_row   no table: a CHECK constraint's function of one row
_check_context_item  no table: a CHECK constraint's function of one row
_base64          no table: the base64 of bytes (a stored image's data on its read)
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
SELECT mnemo.add_checkpoint('pr_a', 'pr_cp');
SELECT mnemo.claim_run('pr_a', 'pr_r1');
SELECT mnemo.complete_run('pr_a', 'pr_r1');
SELECT mnemo.claim_run('pr_a', 'pr_r2');
SELECT mnemo.set_pending_request('pr_a', '{"q":"?"}', 'pr_r2');
SELECT mnemo.create_map('pr_a', 'pr_map', '["a","b","c"]', 'x {{ item }}');
SELECT mnemo.claim_map_items('pr_a', 'pr_map', 'pr_w', 2);
SELECT mnemo.create_session('pr_b');
SELECT mnemo.append_message('pr_b', 'user', '[{"type":"text","text":"other"}]', id => 'pr_b1');
SELECT mnemo.fork_session('pr_b', '1', 'pr_f');
SELECT mnemo.append_message('pr_f', 'user', '[{"type":"text","text":"forked"}]', id => 'pr_f2');
SQL
)

# function<TAB>sessions<TAB>call: each call runs in a transaction that is
# rolled back, so every call sees the seeded data; function/variant names a
# second call.  sessions: the sessions whose partitions the call may touch,
# the one it acts on; create_session with a parent also reads the parent's
# row, which is why distribute() does not delegate it (doc/scale-out.md).
calls=$(cat <<'SQL'
create_session	pr_new	SELECT mnemo.create_session('pr_new')
create_session/child	pr_child,pr_a	SELECT mnemo.create_session('pr_child', parent_id => 'pr_a')
get_or_create_session	pr_a	SELECT mnemo.get_or_create_session('pr_a')
get_session	pr_a	SELECT mnemo.get_session('pr_a')
soft_delete_session	pr_a	SELECT mnemo.soft_delete_session('pr_a')
purge_session	pr_a	SELECT mnemo.purge_session('pr_a')
watch	pr_a	SELECT mnemo.watch('pr_a')
unwatch	pr_a	SELECT mnemo.unwatch('pr_a')
append_message	pr_a	SELECT mnemo.append_message('pr_a', 'user', '[{"type":"text","text":"more"}]')
append_messages	pr_a	SELECT mnemo.append_messages('pr_a', '[{"role":"user","parts":[{"type":"text","text":"more"}]}]')
append_part	pr_a	SELECT mnemo.append_part('pr_a', 'pr_m6', '{"type":"text","text":"more"}')
update_part_status	pr_a	SELECT mnemo.update_part_status('pr_a', 'pr_t1', tool_state => 'completed', completed_at => 2)
update_message_tokens	pr_a	SELECT mnemo.update_message_tokens('pr_a', 'pr_m6', '{"input": 3, "output": 4}', 0.5, 'stop')
tombstone_part	pr_a	SELECT mnemo.tombstone_part('pr_a', 'pr_t1')
swap_context_items	pr_a	SELECT mnemo.swap_context_items('pr_a', ARRAY['pr_m3', 'pr_m4'], 'pr_x1')
build_context	pr_a	SELECT count(*) FROM mnemo.build_context('pr_a', 1000)
context_report	pr_a	SELECT mnemo.context_report('pr_a', 1000)
turn_context	pr_a	SELECT count(*) FROM mnemo.turn_context('pr_a', 1000)
commit_summary	pr_a	SELECT mnemo.commit_summary('pr_a', 'pr_s2', 'three and four', 6, ARRAY['pr_m3', 'pr_m4'])
expand_summary	pr_a	SELECT count(*) FROM mnemo.expand_summary('pr_a', 'pr_s1', true)
summary_nodes	pr_a	SELECT count(*) FROM mnemo.summary_nodes('pr_a', true)
get_message	pr_a	SELECT mnemo.get_message('pr_a', 'pr_m1')
get_messages	pr_a	SELECT count(*) FROM mnemo.get_messages('pr_a', 'pr_m1')
get_messages_after	pr_a	SELECT count(*) FROM mnemo.get_messages_after('pr_a', 1, 10)
get_parts	pr_a	SELECT count(*) FROM mnemo.get_parts('pr_a', 'pr_m2')
get_messages_with_parts	pr_a	SELECT count(*) FROM mnemo.get_messages_with_parts('pr_a')
get_messages_flat	pr_a	SELECT count(*) FROM mnemo.get_messages_flat('pr_a', 'pr_m1')
get_messages_with_parts_by_ids	pr_a	SELECT count(*) FROM mnemo.get_messages_with_parts_by_ids('pr_a', ARRAY['pr_m2', 'pr_m1'])
history	pr_a	SELECT count(*) FROM mnemo.history('pr_a', 2)
get_context_items	pr_a	SELECT count(*) FROM mnemo.get_context_items('pr_a')
last_summary	pr_a	SELECT mnemo.last_summary('pr_a')
prune_tool_outputs	pr_a	SELECT mnemo.prune_tool_outputs('pr_a', 0, 0)
search_history	pr_a	SELECT count(*) FROM mnemo.search_history('pr_a', 'one')
index_search	pr_a	SELECT mnemo.index_search('pr_a')
search_pending	pr_a	SELECT mnemo.search_pending('pr_a')
recall_search	pr_a	SELECT count(*) FROM mnemo.recall_search('pr_a', 'one', summary_id => 'pr_s1')
recall_search/regex	pr_a	SELECT count(*) FROM mnemo.recall_search('pr_a', 'o.e', regex => true)
recall_expand	pr_a	SELECT count(*) FROM mnemo.recall_expand('pr_a', 'pr_s1')
compaction_block	pr_a	SELECT count(*) FROM mnemo.compaction_block('pr_a', tail_messages => 0, min_items => 2)
claim_compaction	pr_a	SELECT mnemo.claim_compaction('pr_a', 'pr_holder')
release_compaction	pr_a	SELECT mnemo.release_compaction('pr_a', 'pr_holder')
compaction_holder	pr_a	SELECT mnemo.compaction_holder('pr_a')
commit_summary/holder	pr_a	SELECT mnemo.claim_compaction('pr_a', 'pr_holder'); SELECT mnemo.commit_summary('pr_a', 'pr_s3', 'three and four', 6, ARRAY['pr_m3', 'pr_m4'], holder => 'pr_holder')
commit_summary/annotated	pr_a	SELECT mnemo.commit_summary('pr_a', 'pr_s4', 'three and four', 6, ARRAY['pr_m3', 'pr_m4'], annotate_tokens => 100)
commit_summary/annotated condensed	pr_a	SELECT mnemo.commit_summary('pr_a', 'pr_s5', 'one and two', 6, ARRAY['pr_s1'], 'condensed', annotate_tokens => 100)
add_checkpoint	pr_a	SELECT mnemo.add_checkpoint('pr_a', 'pr_cp2', true)
list_checkpoints	pr_a	SELECT count(*) FROM mnemo.list_checkpoints('pr_a')
claim_run	pr_a	SELECT mnemo.claim_run('pr_a', 'pr_r3')
complete_run	pr_a	SELECT mnemo.complete_run('pr_a', 'pr_r2')
complete_run/again	pr_a	SELECT mnemo.complete_run('pr_a', 'pr_r1')
snapshot	pr_a	SELECT count(*) FROM mnemo.snapshot('pr_a', 'pr_r1')
set_pending_request	pr_a	SELECT mnemo.set_pending_request('pr_a', '{"q":"again?"}', 'pr_r2')
clear_pending_request	pr_a	SELECT mnemo.clear_pending_request('pr_a')
load_pending_request	pr_a	SELECT mnemo.load_pending_request('pr_a')
update_state	pr_a	SELECT mnemo.update_state('pr_a', '{"k":"v"}')
get_state	pr_a	SELECT mnemo.get_state('pr_a')
fork_session	pr_fork,pr_a	SELECT mnemo.fork_session('pr_a', 'pr_cp', 'pr_fork')
fork_session/run	pr_fork,pr_a	SELECT mnemo.fork_session('pr_a', 'run:pr_r1', 'pr_fork')
resume_session	pr_a	SELECT mnemo.append_message('pr_a', 'user', '[{"type":"text","text":"later"}]'); SELECT mnemo.resume_session('pr_a', 'pr_cp')
list_discarded	pr_a	SELECT count(*) FROM mnemo.list_discarded('pr_a')
get_messages/fork	pr_f,pr_b	SELECT count(*) FROM mnemo.get_messages('pr_f')
get_messages_after/fork	pr_f,pr_b	SELECT count(*) FROM mnemo.get_messages_after('pr_f', 0)
get_messages_flat/fork	pr_f,pr_b	SELECT count(*) FROM mnemo.get_messages_flat('pr_f')
history/fork	pr_f,pr_b	SELECT count(*) FROM mnemo.history('pr_f', 5)
build_context/fork	pr_f,pr_b	SELECT count(*) FROM mnemo.build_context('pr_f', 1000)
get_messages_with_parts_by_ids/fork	pr_f,pr_b	SELECT count(*) FROM mnemo.get_messages_with_parts_by_ids('pr_f', ARRAY['pr_f2', 'pr_b1'])
get_messages_with_parts/fork	pr_f,pr_b	SELECT count(*) FROM mnemo.get_messages_with_parts('pr_f')
context_report/fork	pr_f,pr_b	SELECT mnemo.context_report('pr_f', 1000)
append_message/fork	pr_f,pr_b	SELECT mnemo.append_message('pr_f', 'user', '[{"type":"text","text":"more"}]', id => 'pr_f3')
create_map	pr_a	SELECT mnemo.create_map('pr_a', 'pr_map2', '[1,2]', 'x {{ item }}')
claim_map_items	pr_a	SELECT count(*) FROM mnemo.claim_map_items('pr_a', 'pr_map', 'pr_w2', 5)
complete_map_item	pr_a	SELECT mnemo.complete_map_item('pr_a', 'pr_map', 0, 'pr_w', '"done"')
fail_map_item	pr_a	SELECT mnemo.fail_map_item('pr_a', 'pr_map', 1, 'pr_w', 'timeout', 'slow')
map_status	pr_a	SELECT mnemo.map_status('pr_a', 'pr_map')
map_results	pr_a	SELECT count(*) FROM mnemo.map_results('pr_a', 'pr_map')
list_maps	pr_a	SELECT count(*) FROM mnemo.list_maps('pr_a')
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
SET auto_explain.log_verbose = on;
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

# check_plans JSON SESSIONS [FUNCTION [FORCED]]: one line per statement that
# touches more than one partition of a table, one line if the call touched a
# partition that does not hold one of SESSIONS (comma-separated ids), one per
# function that Citus would refuse in a write, one per INSERT that Citus
# cannot plan or route, one per write to a reference table if FUNCTION is
# delegated, one per partition outside the first of SESSIONS if FUNCTION is
# delegated with force_delegation (FORCED t or f overrides
# _session_functions); nothing when the call passes.
check_plans() {
	psql -X -q -tA -v ON_ERROR_STOP=1 -v plans="$1" -v sessions="$2" -v function="${3:-}" \
		-v forced="${4:-}" <<'SQL'
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
SELECT format('the call touches %s, not only the partitions of session %s',
              string_agg(DISTINCT partition, ', '), :'sessions')
  FROM touched t
 WHERE t.bound IS NOT NULL
   AND NOT EXISTS (
       SELECT FROM unnest(string_to_array(:'sessions', ',')) AS s(id),
                   regexp_match(t.bound, 'modulus (\d+), remainder (\d+)') AS b
        WHERE satisfies_hash_partition('mnemo.sessions'::regclass, b[1]::integer, b[2]::integer, s.id))
HAVING count(*) > 0;
SELECT 'no statement of the call read or wrote a mnemo table' WHERE NOT EXISTS (SELECT FROM touched);
-- a delegated call (force_delegation) may not leave its session's shards:
-- no write to a table without a session column, which Citus replicates to
-- every node (citusdata/citus#5634)
SELECT format('statement %s writes %s, which has no session column (a reference table under Citus): '
              '%s is delegated with force_delegation', s.n, c.relname, :'function')
  FROM jsonb_array_elements(:'plans'::jsonb) WITH ORDINALITY AS s(p, n)
 CROSS JOIN LATERAL jsonb_path_query(s.p, 'strict $.**?(@."Node Type" == "ModifyTable")."Relation Name"') AS r(name)
  JOIN pg_class c ON c.relname = r.name #>> '{}' AND c.relnamespace = 'mnemo'::regnamespace
 WHERE mnemo._session_column(c.oid) IS NULL
   AND EXISTS (SELECT FROM mnemo._session_functions() f
                WHERE f.fn::oid::regproc::text = 'mnemo.' || :'function');
-- force_delegation confines a delegated call to the shards of its
-- distribution argument's value (not its node): Citus refuses any statement
-- filtered by another session, a fork's ancestor included
SELECT format('the call touches %s, not only the partitions of its session %s, and %s is '
              'delegated with force_delegation', string_agg(DISTINCT t.partition, ', '),
              split_part(:'sessions', ',', 1), :'function')
  FROM touched t, regexp_match(t.bound, 'modulus (\d+), remainder (\d+)') AS b
 WHERE t.bound IS NOT NULL
   AND coalesce(nullif(:'forced', '')::boolean,
                (SELECT f.force_delegation FROM mnemo._session_functions() f
                  WHERE f.fn::oid::regproc::text = 'mnemo.' || :'function'), false)
   AND NOT satisfies_hash_partition('mnemo.sessions'::regclass, b[1]::integer, b[2]::integer,
                                    split_part(:'sessions', ',', 1))
HAVING count(*) > 0;
-- INSERTs Citus cannot plan or route: an INSERT ... SELECT with a generic
-- plan (its parameters are still $n in the plan: "could not create
-- distributed plan"), one that locks the rows it selects (FOR KEY SHARE
-- ...), and a CTE or a subquery in an INSERT ... VALUES or in any INSERT's
-- RETURNING ("subqueries are not supported within INSERT queries")
WITH plan AS (
  SELECT s.n, s.p, lower(regexp_replace(s.p->>'Query Text', '\s+', ' ', 'g')) AS q
    FROM jsonb_array_elements(:'plans'::jsonb) WITH ORDINALITY AS s(p, n)),
ins AS (
  SELECT n, p, q, substr(q, regexp_instr(q, '\minsert into\M')) AS stmt,
         q ~ '^ ?with\M' AS cte
    FROM plan WHERE q ~ '\minsert into\M'),
kind AS (
  SELECT n, p, q, stmt, cte,
         stmt ~ '^insert into [a-z0-9_."]+( as [a-z0-9_]+)? (\([^)]*\) ?)?select\M' AS from_select
    FROM ins),
found AS (
  SELECT n, q, 'an INSERT ... SELECT with a generic plan ($n in the plan), which Citus cannot plan' AS what
    FROM kind
   WHERE from_select
     AND EXISTS (SELECT FROM regexp_matches((p - 'Query Text')::text, '\$([0-9]+)', 'g') AS x(m)
                  -- $n, but not an InitPlan's output ("InitPlan 1 (returns $0)")
                  WHERE x.m[1] NOT IN (SELECT o[1]
                                         FROM regexp_matches((p - 'Query Text')::text,
                                                             'returns ([$0-9,]+)', 'g') AS r(l),
                                              regexp_matches(r.l[1], '\$([0-9]+)', 'g') AS o))
  UNION ALL
  SELECT n, q, 'an INSERT ... SELECT that locks the rows it selects, which Citus refuses'
    FROM kind WHERE from_select AND stmt ~ '\mfor (key share|share|update|no key update)\M'
  UNION ALL
  SELECT n, q, 'an INSERT ... VALUES with a CTE, which Citus does not route'
    FROM kind WHERE cte AND NOT from_select
  UNION ALL
  SELECT n, q, 'an INSERT ... VALUES with a subquery, which Citus does not route'
    FROM kind WHERE NOT from_select AND split_part(stmt, ' returning ', 1) ~ '\( ?select\M'
  UNION ALL
  SELECT n, q, 'an INSERT with a subquery in RETURNING, which Citus does not route'
    FROM kind WHERE stmt ~ '\mreturning\M.*\( ?select\M')
SELECT format('statement %s is %s: %s', n, what, left(q, 300)) FROM found ORDER BY n, what;
-- Citus evaluates a write's functions that are not IMMUTABLE before routing
-- it, and refuses them where they depend on rows: inside CASE or COALESCE
-- and in RETURNING.  The spans of a write statement's text in CASE ... END,
-- coalesce(...) and RETURNING ...; a function named there is flagged when
-- no function of that name is IMMUTABLE.
CREATE FUNCTION pg_temp.conditional_spans(q text) RETURNS SETOF text LANGUAGE plpgsql AS $f$
DECLARE
    s text := lower(q);
    pos integer := 1;
    at integer;
    stop integer;
    depth integer;
BEGIN
    IF s !~ '\m(insert|update|delete)\M' THEN
        RETURN;
    END IF;
    at := regexp_instr(s, '\mreturning\M');
    IF at > 0 THEN
        RETURN NEXT substr(s, at);
    END IF;
    LOOP
        at := regexp_instr(s, '\m(coalesce\s*\(|case\M)', pos);
        EXIT WHEN at = 0;
        depth := 0;
        stop := at;
        IF substr(s, at, 4) = 'case' THEN
            LOOP
                stop := regexp_instr(s, '\m(case|end)\M', stop);
                EXIT WHEN stop = 0;
                depth := depth + CASE WHEN substr(s, stop, 4) = 'case' THEN 1 ELSE -1 END;
                stop := stop + 3;
                EXIT WHEN depth = 0;
            END LOOP;
        ELSE
            stop := strpos(substr(s, at), '(') + at - 1;
            LOOP
                depth := depth + CASE substr(s, stop, 1) WHEN '(' THEN 1 WHEN ')' THEN -1 ELSE 0 END;
                EXIT WHEN depth = 0 OR stop > length(s);
                stop := stop + 1;
            END LOOP;
        END IF;
        IF stop = 0 THEN
            stop := length(s);
        END IF;
        RETURN NEXT substr(s, at, stop - at + 1);
        pos := at + 1;
    END LOOP;
END
$f$;
WITH plan AS (
  SELECT s.n, s.p->>'Query Text' AS query
    FROM jsonb_array_elements(:'plans'::jsonb) WITH ORDINALITY AS s(p, n)),
called AS (
  SELECT DISTINCT plan.n, plan.query, f[1] AS fn
    FROM plan, pg_temp.conditional_spans(plan.query) AS span,
         regexp_matches(span, '([a-z_][a-z0-9_]*)\s*\(', 'g') AS f)
SELECT format('statement %s calls %s, which is not IMMUTABLE, in a CASE, COALESCE or RETURNING of a write: %s',
              n, fn, regexp_replace(left(query, 300), '\s+', ' ', 'g'))
  FROM called
 WHERE EXISTS (SELECT FROM pg_proc WHERE proname = fn)
   AND NOT EXISTS (SELECT FROM pg_proc WHERE proname = fn AND provolatile = 'i')
 ORDER BY n, fn;
SQL
}

# check_call NAME SESSIONS SQL
check_call() {
	local name=$1 sessions=$2 sql=$3 json out
	if ! json=$(plans "$sql" 2>"$tmp/plans.err") || [ -s "$tmp/plans.err" ]; then
		not_ok "$name: one partition per call, routable writes"
		echo "#   $sql"
		sed 's/^/#   /' "$tmp/plans.err" | head -n 5
		return
	fi
	out=$(check_plans "$json" "$sessions" "${name%%/*}" 2>&1) || true
	if [ -z "$out" ]; then
		ok "$name: one partition per call, routable writes"
	else
		not_ok "$name: one partition per call, routable writes"
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

# a fork and its source are in different partitions, so that a statement of
# a call on the fork that reads its source is seen
is "$(val "SELECT count(DISTINCT r) FROM generate_series(0, 3) r, unnest(ARRAY['pr_f', 'pr_b']) s
            WHERE satisfies_hash_partition('mnemo.sessions'::regclass, 4, r, s)")" 2 \
	"the fork pr_f and its source pr_b are in different partitions"

# the check can fail: a read of all sessions' messages is caught
json=$(plans "SELECT count(*) FROM mnemo.messages" 2>/dev/null || echo '[]')
out=$(check_plans "$json" pr_a 2>&1 || true)
case $out in
*"touches 4 partitions of log"*) ok "a statement that reads every session's rows is caught" ;;
*)
	not_ok "a statement that reads every session's rows is caught"
	echo "#   got: $out"
	;;
esac

# and a write with a STABLE function inside CASE is caught
out=$(check_plans '[{"Query Text": "UPDATE mnemo.sessions SET metadata = CASE WHEN $2 THEN jsonb_build_object(1, 2) END WHERE id = $1", "Plan": {"Relation Name": "sessions"}}]' pr_a 2>&1 || true)
case $out in
*"calls jsonb_build_object, which is not IMMUTABLE"*) ok "a STABLE function inside CASE of a write is caught" ;;
*)
	not_ok "a STABLE function inside CASE of a write is caught"
	echo "#   got: $out"
	;;
esac

# and a delegated call that writes a reference table
out=$(check_plans '[{"Query Text": "INSERT INTO mnemo.tenants VALUES ($1, $2)", "Plan": {"Node Type": "ModifyTable", "Relation Name": "tenants"}}]' pr_a watch 2>&1 || true)
case $out in
*"writes tenants, which has no session column"*) ok "a delegated call that writes a reference table is caught" ;;
*)
	not_ok "a delegated call that writes a reference table is caught"
	echo "#   got: $out"
	;;
esac

# and the statements Citus could not plan or route (issue 31), each as it was:
# a set-based INSERT ... SELECT unnest($k) with a generic plan
out=$(check_plans '[{"Query Text": "INSERT INTO mnemo.messages (session_id, seq, id) SELECT $1, unnest($3), unnest($4)", "Plan": {"Node Type": "ModifyTable", "Operation": "Insert", "Relation Name": "messages", "Plans": [{"Node Type": "ProjectSet", "Output": ["$1", "unnest($3)", "unnest($4)"]}]}}]' pr_a 2>&1 || true)
case $out in
*"INSERT ... SELECT with a generic plan"*) ok "a generic-plan INSERT ... SELECT with parameters is caught" ;;
*)
	not_ok "a generic-plan INSERT ... SELECT with parameters is caught"
	echo "#   got: $out"
	;;
esac
# claim_compaction's upsert that returned the old holder from a CTE
out=$(check_plans '[{"Query Text": "WITH old AS (SELECT holder FROM mnemo.compaction_claims WHERE session_id = $1) INSERT INTO mnemo.compaction_claims AS c (session_id, holder) VALUES ($1, $2) ON CONFLICT (session_id) DO UPDATE SET holder = excluded.holder RETURNING (SELECT holder FROM old) IS DISTINCT FROM $2", "Plan": {"Node Type": "ModifyTable", "Relation Name": "compaction_claims"}}]' pr_a 2>&1 || true)
case $out in
*"INSERT ... VALUES with a CTE"*"subquery in RETURNING"*) ok "an INSERT with a CTE and a subquery in RETURNING is caught" ;;
*)
	not_ok "an INSERT with a CTE and a subquery in RETURNING is caught"
	echo "#   got: $out"
	;;
esac
# search_progress's row made from the session row it locked
out=$(check_plans '[{"Query Text": "INSERT INTO mnemo.search_progress AS g (session_id, indexed_seq, tenant) SELECT s.id, coalesce(s.fork_seq, 0), s.tenant FROM mnemo.sessions s WHERE s.id = $1 FOR KEY SHARE ON CONFLICT (session_id) DO UPDATE SET indexed_seq = g.indexed_seq RETURNING g.indexed_seq", "Plan": {"Node Type": "ModifyTable", "Relation Name": "search_progress"}}]' pr_a 2>&1 || true)
case $out in
*"INSERT ... SELECT that locks the rows it selects"*) ok "an INSERT ... SELECT ... FOR KEY SHARE is caught" ;;
*)
	not_ok "an INSERT ... SELECT ... FOR KEY SHARE is caught"
	echo "#   got: $out"
	;;
esac
# a read of a fork, were it delegated with force_delegation (as distribute()
# once did): it reads the source's partition
json=$(plans "SELECT count(*) FROM mnemo.get_messages('pr_f')" 2>/dev/null || echo '[]')
out=$(check_plans "$json" pr_f,pr_b get_messages t 2>&1 || true)
case $out in
*"delegated with force_delegation"*) ok "a force-delegated call that reads another session is caught" ;;
*)
	not_ok "a force-delegated call that reads another session is caught"
	echo "#   got: $out"
	;;
esac

while IFS=$'\t' read -r name sessions sql; do
	[ -n "$name" ] && check_call "$name" "$sessions" "$sql"
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
unchecked=$(val "SELECT coalesce(string_agg(f.fn::text, ', '), '') FROM mnemo._session_functions() f
                  WHERE f.fn::oid::regproc::text <> ALL (SELECT 'mnemo.' || unnest(string_to_array('$called', ',')))")
is "$unchecked" "" "every function distribute() delegates is checked here"

summary pruning
