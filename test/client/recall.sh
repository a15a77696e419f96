#!/usr/bin/env bash
# mnemo grep, describe and expand: the recall tools for a person.  A fact
# compacted under a leaf, then under a condensation, is found with the
# summary that covers it, read back through expand page by page, and
# described; words and --regex, --under, --json, pages; exit codes.
#
# Run by test/client/run.sh with MNEMO_BIN (the sanitized mnemo) and
# PGDATABASE (a fresh database with the extension); prints TAP.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1

M=${MNEMO_BIN:?MNEMO_BIN is the mnemo command to test}
work=$(mktemp -d /tmp/mnemo-recall.XXXXXX)
trap 'rm -rf "$work"' EXIT

# shellcheck source=lib/tap.sh
. test/client/lib/tap.sh

psql_q <<'SQL' >/dev/null
SELECT mnemo.create_session('rs');
SELECT mnemo.append_messages('rs', '[
 {"role":"user","id":"rs_m1","parts":[{"type":"text","text":"start the api server"}]},
 {"role":"assistant","id":"rs_m2","parts":[{"type":"tool","tool_name":"bash","tool_call_id":"c1","tool_state":"completed","input":{"cmd":"serve --port 48213"},"output":"listening on 0.0.0.0:48213"}]},
 {"role":"assistant","id":"rs_m3","parts":[{"type":"text","text":"The server is up."}]},
 {"role":"user","id":"rs_m4","parts":[{"type":"text","text":"write the docs"}]},
 {"role":"assistant","id":"rs_m5","parts":[{"type":"text","text":"Docs written to /srv/docs/index.md"}]},
 {"role":"user","id":"rs_m6","parts":[{"type":"text","text":"what next"}]}]');
SELECT mnemo.commit_summary('rs', 'rs_l1', 'Started the api server.', 6, ARRAY['rs_m1', 'rs_m2', 'rs_m3']);
SQL

run_m grep rs 48213
expect_rc 0 "mnemo grep"
check "the hits are grouped under the summary that covers them" \
	bash -c "grep -q '^under summary rs_l1$' '$work/out' && grep -q '^  #2 assistant rs_m2  .*48213' '$work/out'"
check "the count on stderr" grep -qx "mnemo: 1 hit" "$work/err"

psql_q -c "SELECT mnemo.commit_summary('rs', 'rs_l2', 'Wrote the docs.', 4, ARRAY['rs_m4', 'rs_m5'])" \
	-c "SELECT mnemo.commit_summary('rs', 'rs_c1', 'Server up, docs written.', 5, ARRAY['rs_l1', 'rs_l2'], kind => 'condensed')" >/dev/null
run_m grep rs 48213 --json
expect_rc 0 "mnemo grep --json"
is "$(grep -o '"message_id": "[^"]*", "in_context": false, "covered_by": "[^"]*"' "$work/out" | sed 's/"message_id": "\([^"]*\)", "in_context": false, "covered_by": "\([^"]*\)"/\1@\2/' | paste -sd,)" \
	"rs_m2@rs_c1" "after a condensation the hits name the condensed summary, which is in context"
run_m grep rs 'index\.m[d]' --regex
expect_rc 0 "mnemo grep --regex"
check "a regular expression finds the path" grep -q "rs_m5" "$work/out"
run_m grep rs 'the' --under rs_l2
check "--under searches what that summary covers only" \
	bash -c "grep -q rs_m4 '$work/out' && ! grep -q rs_m1 '$work/out'"
run_m grep rs 'server' --limit 1
check "--limit 1 names the next page" grep -q "1 hits (more with --before [0-9]*)" "$work/err"
before=$(sed -n 's/.*more with --before \([0-9]*\).*/\1/p' "$work/err")
run_m grep rs 'server' --limit 1 --before "$before"
check "--before pages to older hits" \
	bash -c "[ \$(grep -c '^  #' '$work/out') -eq 1 ] && [ \$(sed -n 's/^  #\([0-9]*\) .*/\1/p' '$work/out') -lt $before ]"

run_m expand rs rs_l1
expect_rc 0 "mnemo expand"
check "expand shows the tool call and its output verbatim" \
	bash -c "grep -q '^\[assistant #2 rs_m2\]$' '$work/out' && grep -q 'listening on 0.0.0.0:48213' '$work/out'"
check "and says it is the whole of it" grep -qx "mnemo: 3 items of 3" "$work/err"
psql_q -c "SELECT mnemo.append_messages('rs', jsonb_build_array(
             jsonb_build_object('role', 'user', 'id', 'rs_p1', 'parts', jsonb_build_array(jsonb_build_object('type', 'text', 'text', repeat('alpha ', 60)))),
             jsonb_build_object('role', 'user', 'id', 'rs_p2', 'parts', jsonb_build_array(jsonb_build_object('type', 'text', 'text', repeat('omega ', 60))))))" \
	-c "SELECT mnemo.commit_summary('rs', 'rs_l3', 'two pastes', 5, ARRAY['rs_p1', 'rs_p2'])" >/dev/null
run_m expand rs rs_l3 --max-tokens 100
check "a page of 100 tokens holds the first paste and names the next page" \
	bash -c "grep -q alpha '$work/out' && ! grep -q omega '$work/out' && grep -q 'next page: --offset 1' '$work/err'"
run_m expand rs rs_l3 --max-tokens 100 --offset 1
check "the next page holds the second" bash -c "grep -q omega '$work/out' && ! grep -q alpha '$work/out'"
run_m expand rs rs_c1
check "a condensed summary expands to the summaries it condensed" \
	bash -c "grep -q 'rs_l1' '$work/out' && grep -q 'Started the api server.' '$work/out'"

run_m describe rs rs_l1
expect_rc 0 "mnemo describe"
check "describe: kind, span, the summary that condensed it, and the text" \
	bash -c "grep -q '^summary rs_l1: leaf, depth 0, level 1, covers messages #1 to #3, 6 tokens, condensed into rs_c1$' '$work/out' && grep -qx 'Started the api server.' '$work/out'"

run_m grep nosuch 48213
expect_rc 3 "grep of no session"
run_m grep rs 48213 --under nosuch
expect_rc 3 "grep under no summary"
run_m expand rs nosuch
expect_rc 3 "expand of no summary"
run_m describe rs nosuch
expect_rc 3 "describe of neither a summary nor a file"
run_m grep rs '(a)\1' --regex
check "a back-reference is refused with its reason" grep -qi "back-reference" "$work/err"
run_m grep rs x --limit 0
expect_rc 2 "--limit 0 is a usage error"
for cmd in grep describe expand; do
	run_m "$cmd" --help
	check "mnemo $cmd --help" grep -q "^Usage: mnemo $cmd SESSION" "$work/out"
done

echo "1..$n"
[ "$failed" -eq 0 ]
