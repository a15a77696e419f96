#!/usr/bin/env bash
# The mnemo command, as a script would use it: help and usage errors, exit
# codes, sessions/show/context, export/import round trips with cmp, a real
# Claude Code log, the progress bar, and tail following a session that psql
# writes to, ended by SIGTERM.
#
# Run by test/client/run.sh with MNEMO_BIN (the sanitized mnemo) and
# PGDATABASE (a fresh database with the extension); prints TAP.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1

M=${MNEMO_BIN:?MNEMO_BIN is the mnemo command to test}
CLAUDE_DIR=${MNEMO_CLAUDE_DIR:-test/data/claude-code}
SMALL=$CLAUDE_DIR/bf/3a8bd70c3e/1/full.jsonl
LARGE=$CLAUDE_DIR/29/77bc73228c/1/full.jsonl
work=$(mktemp -d /tmp/mnemo-cli.XXXXXX)
copy_db="${PGDATABASE}_cli_copy"
tail_pid=
cleanup() {
	[ -n "$tail_pid" ] && kill -KILL "$tail_pid" 2>/dev/null
	dropdb --if-exists "$copy_db" >/dev/null 2>&1
	rm -rf "$work"
}
trap cleanup EXIT

# shellcheck source=lib/tap.sh
. test/client/lib/tap.sh

# ---- help and usage errors ----------------------------------------------

run_m --help
expect_rc 0 "mnemo --help"
check "--help prints the usage to stdout, with every command" \
	grep -q "^Usage: mnemo \[-d DB\] \[-h HOST\] \[-p PORT\] \[-U USER\] COMMAND" "$work/out"
check "--help documents the exit codes" grep -q "2 usage error, 3 session or message not" "$work/out"
check "--help puts the commands' summaries in one column" \
	bash -c "awk '/^Commands:/ { on = 1; next } on && /^\$/ { on = 0 } on { match(\$0, /^  [a-z]+ +/); print RLENGTH }' '$work/out' | sort -u | wc -l | grep -qx 1"
for cmd in sessions show context export import tail compact verify checkpoints fork resume; do
	run_m "$cmd" --help
	if [ "$rc" -eq 0 ] && grep -q "^Usage: mnemo $cmd" "$work/out" && [ ! -s "$work/err" ]; then
		ok "mnemo $cmd --help: usage on stdout, exit 0"
	else
		not_ok "mnemo $cmd --help: exit $rc"
	fi
done
run_m help import
check "mnemo help import is import's usage" grep -q "^Usage: mnemo import FILE" "$work/out"
run_m --version
check "mnemo --version" grep -q "^mnemo [0-9]*\.[0-9]*\.[0-9]*$" "$work/out"

usage_case() {
	local desc=$1
	shift
	run_m "$@"
	if [ "$rc" -eq 2 ] && [ ! -s "$work/out" ] && grep -q "mnemo" "$work/err"; then
		ok "usage error, exit 2, message on stderr only: $desc"
	else
		not_ok "usage error: $desc: exit $rc"
	fi
}
usage_case "no command"
usage_case "an unknown command" frobnicate
usage_case "an unknown global option" --colour sessions
usage_case "--db without a value" --db
usage_case "show without a session" show
usage_case "show with two sessions" show a b
usage_case "an unknown option" sessions --sideways
usage_case "--limit not a number" sessions --limit ten
usage_case "--limit 0" sessions --limit 0
usage_case "context without --budget" context s
usage_case "a negative budget" context s --budget -5
usage_case "tail --after not a number" tail s --after x
usage_case "import without a file" import
usage_case "checkpoints without a session" checkpoints
usage_case "checkpoints --add without a label" checkpoints s --add

# ---- connection problems and missing sessions -----------------------------

run_m --db "host=$work/no-server-here" sessions
expect_rc 4 "no server at --db"
check "the connection error is on stderr as 'mnemo: ...'" grep -q "^mnemo: " "$work/err"
run_m --db "dbname=postgres" sessions
expect_rc 4 "a database without the extension"
check "which is named in the message" grep -q "extension" "$work/err"
PGDATABASE=postgres "$M" sessions >/dev/null 2>&1
rc=$?
expect_rc 4 "the connection comes from PG* without --db"

for cmd in show export tail; do
	run_m "$cmd" no-such-session
	expect_rc 3 "mnemo $cmd of a missing session"
done
run_m context no-such-session --budget 100
expect_rc 3 "mnemo context of a missing session"
check "the message names the session" grep -q '^mnemo: session "no-such-session" does not exist' "$work/err"

# ---- checkpoints -----------------------------------------------------------

run_m checkpoints no-such-session
expect_rc 3 "mnemo checkpoints of a missing session"
psql_q -c "SELECT mnemo.create_session('cli-cp')" \
	-c "SELECT mnemo.append_message('cli-cp', 'user', '[{\"type\": \"text\", \"text\": \"hi\"}]')" \
	-c "SELECT mnemo.add_checkpoint('cli-cp', 'turn-1', true)" >/dev/null
run_m checkpoints cli-cp
expect_rc 0 "mnemo checkpoints"
check "a header, then one line: seq, label, auto, time (tab-separated)" \
	bash -c "[ \$(wc -l <'$work/out') -eq 2 ] && head -n 1 '$work/out' | grep -qx 'SEQ	LABEL	KIND	CREATED' && grep -Eq '^1	turn-1	auto	[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z$' '$work/out'"
run_m checkpoints cli-cp --add 'before the storm'
expect_rc 0 "mnemo checkpoints --add"
check "prints the new checkpoint, manual" grep -Eq '^1	before the storm	manual	' "$work/out"
run_m checkpoints cli-cp
check "both listed, in the order they were added" \
	bash -c "tail -n +2 '$work/out' | cut -f2 | tr '\n' , | grep -qx 'turn-1,before the storm,'"
run_m checkpoints cli-cp --add turn-1
expect_rc 1 "mnemo checkpoints --add of a taken label"
check "the message names the label" grep -q '^mnemo: checkpoint "turn-1" already exists' "$work/err"

# ---- fork, resume, export --discarded ----------------------------------------

psql_q -c "SELECT mnemo.append_message('cli-cp', 'assistant', '[{\"type\": \"text\", \"text\": \"later words\"}]')" >/dev/null
run_m fork cli-cp turn-1 cli-fk
expect_rc 0 "mnemo fork at a checkpoint"
check "prints the new session's id" test "$(cat "$work/out")" = cli-fk
run_m export cli-fk
check "the fork exports the inherited message, not the source's later one" \
	bash -c "grep -q '\"hi\"' '$work/out' && ! grep -q 'later words' '$work/out'"
run_m fork cli-cp 1
expect_rc 0 "mnemo fork at a seq, with a generated id"
check "a sess_ id" grep -q '^sess_' "$work/out"
run_m fork cli-cp turn-1 cli-fk
expect_rc 1 "mnemo fork onto an existing id"
check "the message names the id" grep -q '^mnemo: session "cli-fk" already exists' "$work/err"
run_m fork cli-cp no-such-label
expect_rc 3 "mnemo fork at an unknown checkpoint"
check "the message names the checkpoint" grep -q 'checkpoint "no-such-label" does not exist' "$work/err"
run_m fork no-such-session 1
expect_rc 3 "mnemo fork of a missing session"
run_m resume cli-cp turn-1
expect_rc 0 "mnemo resume"
check "prints the count discarded" grep -qx '1 discarded' "$work/out"
run_m export cli-cp --discarded
expect_rc 0 "mnemo export --discarded"
check "a header, then the discarded message only" \
	bash -c "[ \$(wc -l <'$work/out') -eq 2 ] && head -1 '$work/out' | grep -q mnemo.session && grep -q 'later words' '$work/out'"
run_m export cli-cp
check "the plain export leaves it out" bash -c "! grep -q 'later words' '$work/out'"
# a checkpoint of the discarded turn is not listed as live
psql_q -c "SELECT mnemo.append_message('cli-cp', 'assistant', '[{\"type\": \"text\", \"text\": \"take two\"}]')" \
	-c "SELECT mnemo.add_checkpoint('cli-cp', 'turn-3', true)" >/dev/null
run_m resume cli-cp turn-1
run_m checkpoints cli-cp
check "after a resume, the checkpoint of the discarded turn is not listed" \
	bash -c "! grep -q '	turn-3	' '$work/out' && grep -q '	turn-1	' '$work/out'"
check "a line on stderr counts it" grep -q "^mnemo: 1 checkpoint of turns a resume discarded not listed" "$work/err"
run_m resume cli-cp no-such-label
expect_rc 3 "mnemo resume at an unknown checkpoint"
run_m resume no-such-session x
expect_rc 3 "mnemo resume of a missing session"
usage_case "fork without a point" fork cli-cp
usage_case "resume without a checkpoint" resume cli-cp

# ---- import of a real Claude Code log, sessions, show, context -------------

run_m import "$SMALL"
expect_rc 0 "mnemo import of a Claude Code log ($SMALL)"
sid=$(cat "$work/out")
check "it prints the session id, the log's own ($sid)" test "$sid" = 5c0447e5-f29d-434b-bb0b-8898b57a8e78
check "and a summary on stderr with the records left out" \
	grep -q "^mnemo: imported 5 messages into $sid; left out 7 records: .*progress" "$work/err"

run_m sessions
expect_rc 0 "mnemo sessions"
check "lists it under a header with its message count" \
	bash -c "head -n 1 '$work/out' | grep -q '^ID  *CREATED  *MESSAGES  TITLE' && grep -q '^$sid  .*  *5  ' '$work/out'"
# an imported log's session is created at the log's time (2025 and
# earlier), so by creation it sorts below newer sessions; --sort updated
# puts the session written last first
run_m sessions --sort updated
expect_rc 0 "mnemo sessions --sort updated"
check "the session imported last comes first, under an UPDATED column" \
	bash -c "head -n 1 '$work/out' | grep -q '^ID  *UPDATED  *MESSAGES  TITLE' && sed -n 2p '$work/out' | grep -q '^$sid '"
run_m sessions --sort size
expect_rc 2 "mnemo sessions --sort of something else: a usage error"

run_m show "$sid"
expect_rc 0 "mnemo show"
check "show prints the session's agent" grep -q "^agent     claude-code" "$work/out"
check "show prints every message header" test "$(grep -c '^--- #' "$work/out")" -eq 5
check "show prints a tool part with name, call id and state" \
	grep -q '^\[tool Read toolu_01DJfGh7ZTDzLJVYtvuyJ1wc completed\] [^ ]*:[0-9][0-9]*  ' "$work/out"
check "with its input and output" \
	bash -c "grep -q '^  input:' '$work/out' && grep -q '^  output:' '$work/out'"
check "and the user's text (UTF-8)" grep -q "修复 truncate 在 flex 容器中失效" "$work/out"

part=$(psql_q -c "SELECT coalesce(p.id, m.id || ':' || p.part_index) FROM mnemo.message_parts p
                   JOIN mnemo.messages m ON (m.session_id, m.tenant, m.seq) = (p.session_id, p.tenant, p.seq)
                  WHERE p.session_id = '$sid' AND p.tool_name = 'Read'")
psql_q -c "SELECT mnemo.tombstone_part('$sid', '$part')" >/dev/null
run_m show "$sid"
check "a tombstoned part is marked COMPACTED, its content still shown" \
	bash -c "grep -q '^\[tool Read .*\] $part  COMPACTED 20' '$work/out' && grep -q '^  output:' '$work/out'"

run_m context "$sid" --budget 100000
expect_rc 0 "mnemo context --budget 100000"
check "prints each entry and the report line" \
	bash -c "grep -q '^--- @1 message ' '$work/out' && tail -n 1 '$work/out' | grep -q '^context: budget 100000, 5 items (.* tokens, 0 of summaries) included, 0 items (0 tokens) left out$'"
check "the tombstoned output is rendered as compacted" grep -q "\[Tool 'Read' output compacted at" "$work/out"
run_m context "$sid" --budget 10
check "a small budget reports what is left out" \
	bash -c "tail -n 1 '$work/out' | grep -Eq '^context: budget 10, [0-9]+ items .* [1-9][0-9]* items \([1-9][0-9]* tokens\) left out$'"

# ---- compact and verify ----------------------------------------------------

run_m import "$LARGE" --session cli-compact --new-ids --quiet
expect_rc 0 "mnemo import of the larger log for compaction"
run_m compact cli-compact --dry-run
expect_rc 0 "mnemo compact --dry-run"
check "names the block the first round would summarise" \
	grep -Eq '^would summarise: leaf, [0-9]+ items, [0-9]+ tokens \(context [0-9]+ tokens\)$' "$work/out"
check "and writes nothing" test "$(psql_q -c "SELECT count(*) FROM mnemo.summary_nodes('cli-compact')")" -eq 0
before=$(psql_q -c "SELECT included_tokens + omitted_tokens FROM mnemo.context_report('cli-compact', 2147483647)")
run_m compact cli-compact --level 3 --budget 2000
expect_rc 0 "mnemo compact --level 3 --budget 2000"
check "prints a line per summary and the outcome" \
	bash -c "grep -q '^compacting cli-compact$' '$work/out' && grep -Eq '^  sum_[0-9A-Z]+: leaf summary of [0-9]+ items at level 3; context now [0-9]+ tokens$' '$work/out' && grep -Eq '^compact: [1-9][0-9]* summaries \(L1 0, L2 0, L3 [1-9][0-9]*\), $before -> [0-9]+ tokens, [0-9]+ tool outputs pruned$' '$work/out'"
after=$(psql_q -c "SELECT included_tokens + omitted_tokens FROM mnemo.context_report('cli-compact', 2147483647)")
check "the context is smaller ($before -> $after tokens)" test "$after" -lt "$before"
check "the claim is released" test "$(psql_q -c "SELECT count(*) FROM mnemo.compaction_claims WHERE session_id = 'cli-compact'")" -eq 0
run_m verify cli-compact
expect_rc 0 "mnemo verify after compaction"
check "every message reachable, through the summaries" \
	bash -c "tail -n 1 '$work/out' | grep -Eq '^verify: ([0-9]+) messages, \\1 reachable \([0-9]+ in context, [1-9][0-9]* through [1-9][0-9]* summar(y|ies)\), 0 failed$'"
# an answer nobody could read is an error, verify's verdict too
for args in "show cli-compact" "context cli-compact --budget 1000" "sessions" "export cli-compact" "verify cli-compact"; do
	# shellcheck disable=SC2086 # the words of args are the arguments
	"$M" $args >/dev/full 2>"$work/err"
	rc=$?
	expect_rc 1 "mnemo $args to a full device"
done
check "verify (the last) says what it could not write" grep -q "^mnemo: writing the verdict: No space left on device" "$work/err"
psql_q -c "SELECT mnemo.claim_compaction('cli-compact', 'elsewhere', 60000)" >/dev/null
run_m compact cli-compact --level 3
expect_rc 0 "mnemo compact while another process holds the claim"
check "says so and does nothing" grep -q '^compact: another compactor holds the claim; nothing done$' "$work/out"
psql_q -c "SELECT mnemo.release_compaction('cli-compact', 'elsewhere')" >/dev/null
# a summary swapped in by hand, with no DAG node: what it replaced is lost
victim=$(psql_q -c "SELECT item_id FROM mnemo.get_context_items('cli-compact') WHERE item_type = 'message' ORDER BY position DESC LIMIT 1")
psql_q -c "SELECT mnemo.append_message('cli-compact', 'assistant', '[{\"type\": \"text\", \"text\": \"lossy\"}]', id => 'cli-bare', is_summary => true)" >/dev/null
psql_q -c "SELECT mnemo.swap_context_items('cli-compact', ARRAY['$victim'], 'cli-bare')" >/dev/null
run_m verify cli-compact
expect_rc 1 "mnemo verify of a session that lost a message"
check "names the message that cannot be reached" \
	grep -q "^message $victim (seq [0-9]*): not reachable from the context view$" "$work/out"
run_m verify cli-compact --json
expect_rc 1 "mnemo verify --json of that session"
check "one JSON object naming the unreachable message, ok false" \
	bash -c "grep -q '{\"message_id\": \"$victim\", \"seq\": [0-9]*, \"problem\": \"not reachable from the context view\"}' '$work/out' && grep -q '\"ok\": false}$' '$work/out'"
# a tool call left without a result while the log goes on (a pi log whose
# toolResult never came), and one at the very end (an agent at work)
cat >"$work/unanswered.jsonl" <<'EOF2'
{"type":"session","version":3,"id":"cli-unanswered","timestamp":"2026-01-04T00:00:00.000Z","cwd":"/w"}
{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-04T00:00:01.000Z","message":{"role":"user","content":"list it","timestamp":1767484801000}}
{"type":"message","id":"u2","parentId":"u1","timestamp":"2026-01-04T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"call-lost","name":"ls","arguments":{"path":"."}}],"api":"x","provider":"anthropic","model":"m","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"total":0}},"stopReason":"toolUse","timestamp":1767484802000}}
{"type":"message","id":"u3","parentId":"u2","timestamp":"2026-01-04T00:00:03.000Z","message":{"role":"user","content":"never mind","timestamp":1767484803000}}
{"type":"message","id":"u4","parentId":"u3","timestamp":"2026-01-04T00:00:04.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"call-now","name":"ls","arguments":{"path":"/"}}],"api":"x","provider":"anthropic","model":"m","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"total":0}},"stopReason":"toolUse","timestamp":1767484804000}}
EOF2
run_m import "$work/unanswered.jsonl" --quiet
run_m verify cli-unanswered
expect_rc 0 "mnemo verify of a log with a call left without its result: a warning, exit 0"
check "the warning names the call in the middle of the log, not the one at its end" \
	bash -c "grep -q '^warning: message [^ ]* (seq 2): tool call call-lost (ls) has no result, and the log goes on after it$' '$work/out' && ! grep -q call-now '$work/out'"
check "the last line counts it" grep -q "^verify: 4 messages, 4 reachable (4 in context, 0 through 0 summaries), 0 failed; 1 tool call without a result$" "$work/out"
run_m verify cli-unanswered --strict
expect_rc 1 "--strict: the call without its result fails the check"
run_m verify cli-unanswered --json
expect_rc 0 "mnemo verify --json"
check "lists it under unanswered" \
	grep -q '"unanswered": \[{"message_id": "[^"]*", "seq": 2, "tool_call_id": "call-lost", "tool_name": "ls"}\], "problems": \[\], "ok": true}' "$work/out"
run_m verify no-such-session
expect_rc 3 "mnemo verify of a missing session"
run_m compact no-such-session --level 3
expect_rc 3 "mnemo compact of a missing session"
usage_case "compact --level 4" compact cli-compact --level 4
usage_case "compact --budget 0" compact cli-compact --budget 0

# ---- export / import round trips ----------------------------------------

run_m export "$sid"
expect_rc 0 "mnemo export"
cp "$work/out" "$work/first.jsonl"
check "a header line, then one line per message" test "$(wc -l <"$work/first.jsonl")" -eq 6
check "the header names the session" grep -q "^{\"type\": \"mnemo.session\", \"version\": 1, \"id\": \"$sid\"" "$work/first.jsonl"

createdb "$copy_db" >/dev/null 2>&1 && psql_q -d "$copy_db" -c "CREATE EXTENSION mnemo" >/dev/null
run_m --db "dbname=$copy_db" import "$work/first.jsonl" --session copied
expect_rc 0 "import of the export into another database (--db, --session)"
check "into the session asked for" test "$(cat "$work/out")" = copied
"$M" --db "dbname=$copy_db" export copied >"$work/second.jsonl" 2>"$work/err"
check "export, import, export: cmp finds the messages identical" \
	cmp -s <(tail -n +2 "$work/first.jsonl") <(tail -n +2 "$work/second.jsonl")
check "and the header but for the session id asked for and its created time" \
	test "$(head -n 1 "$work/first.jsonl" | sed "s/\"id\": \"$sid\"/\"id\": \"copied\"/; s/\"created_at\": [0-9]*//")" = \
	"$(head -n 1 "$work/second.jsonl" | sed 's/"created_at": [0-9]*//')"

# message ids are unique within their session (0.2.0): the same ids import
# into another session of the same database; into a taken session id, not
run_m import "$work/first.jsonl" --session again
expect_rc 0 "importing the same message ids into another session of the same database"
before=$(psql_q -c "SELECT count(*) FROM mnemo.sessions")
run_m import "$work/first.jsonl" --session again
expect_rc 1 "importing into a session id that exists fails"
check "with the duplicate id named on stderr" grep -q '^mnemo: session "again" already exists' "$work/err"
check "and leaves no session behind" test "$(psql_q -c "SELECT count(*) FROM mnemo.sessions")" = "$before"
run_m import "$work/first.jsonl" --new-ids --quiet
expect_rc 0 "--new-ids imports a copy into the same database"
check "--quiet: nothing on stderr" test ! -s "$work/err"
"$M" export "$(cat "$work/out")" | tail -n +2 | sed 's/"id": "[^"]*"/"id": ""/g' >"$work/third.jsonl"
tail -n +2 "$work/first.jsonl" | sed 's/"id": "[^"]*"/"id": ""/g' >"$work/first-noids.jsonl"
check "the copy's messages export the same but for the ids" cmp -s "$work/first-noids.jsonl" "$work/third.jsonl"

run_m import - --session again <"$work/first.jsonl"
check "import - reads stdin (a taken session id: refused)" test "$rc" -eq 1 -a "$(grep -c 'already exists' "$work/err")" -eq 1
"$M" import - --new-ids --session from-stdin <"$work/first.jsonl" >"$work/out" 2>"$work/err"
check "import - --new-ids from stdin" test "$(cat "$work/out")" = from-stdin

printf '{"role": "user", "parts": []}\n{"role": "user", "parts": [}\n' >"$work/bad.jsonl"
run_m import "$work/bad.jsonl" --session bad
expect_rc 1 "a malformed file"
check "the error names the line" grep -q '^mnemo: line 2: not valid JSON' "$work/err"
check "and no session bad exists" test "$(psql_q -c "SELECT count(*) FROM mnemo.sessions WHERE id = 'bad'")" = 0
run_m import "$work/does-not-exist.jsonl"
expect_rc 1 "a file that does not exist"
check "is named with the system's reason" grep -q "does-not-exist.jsonl: No such file or directory" "$work/err"

# ---- a large log, with the progress bar on a terminal ---------------------

start=$(date +%s%N)
script -qfec "$M import '$LARGE' --session large-tty" /dev/null >"$work/tty.out" 2>&1
rc=$?
elapsed=$((($(date +%s%N) - start) / 1000000))
expect_rc 0 "import of a 3 MB log with stderr on a terminal"
echo "# $(basename "$(dirname "$(dirname "$LARGE")")")/1 ($(wc -c <"$LARGE") bytes) imported in ${elapsed} ms by the sanitized mnemo, on a terminal"
check "draws a progress bar up to 100%" grep -q "importing \[#*\] 100%" "$work/tty.out"
run_m import "$LARGE" --session large-pipe
check "no bar when stderr is not a terminal" bash -c "! grep -q 'importing \[' '$work/err'"
check "the two imports hold the same messages" \
	test "$(psql_q -c "SELECT count(*) FROM mnemo.messages WHERE session_id = 'large-tty'")" = 110 \
	-a "$(psql_q -c "SELECT count(*) FROM mnemo.messages WHERE session_id = 'large-pipe'")" = 110

# ---- tail ----------------------------------------------------------------

psql_q -c "SELECT mnemo.create_session('tailed')" >/dev/null
psql_q -c "SELECT mnemo.append_message('tailed', 'user', '[{\"type\": \"text\", \"text\": \"before the tail\"}]')" >/dev/null
"$M" tail tailed >"$work/tail.out" 2>"$work/tail.err" &
tail_pid=$!
# following means watched: wait for it
for _ in $(seq 1 100); do
	[ "$(psql_q -c "SELECT watched FROM mnemo.sessions WHERE id = 'tailed'")" = t ] && break
	sleep 0.1
done
psql_q -c "SELECT mnemo.append_message('tailed', 'user', '[{\"type\": \"text\", \"text\": \"hello from psql\"}]')" >/dev/null
for _ in $(seq 1 100); do
	grep -q "hello from psql" "$work/tail.out" && break
	sleep 0.1
done
check "tail prints a message appended by psql as it commits" grep -q "^  hello from psql$" "$work/tail.out"
check "with its header (#2 user)" grep -q "^--- #2 user msg_" "$work/tail.out"
check "and not the message from before it started" bash -c "! grep -q 'before the tail' '$work/tail.out'"
kill -TERM "$tail_pid"
wait "$tail_pid"
rc=$?
tail_pid=
expect_rc 0 "tail ends on SIGTERM"

timeout 5 "$M" tail tailed --after 0 >"$work/tail0.out" 2>&1 &
tail_pid=$!
for _ in $(seq 1 100); do
	grep -q "hello from psql" "$work/tail0.out" && break
	sleep 0.1
done
kill -INT "$tail_pid"
wait "$tail_pid"
rc=$?
tail_pid=
expect_rc 0 "tail --after 0 ends on SIGINT"
check "tail --after 0 prints the whole session first" \
	bash -c "grep -q '^  before the tail$' '$work/tail0.out' && grep -q '^  hello from psql$' '$work/tail0.out'"

# a restart of the server under a running tail: it reconnects and goes on
# ---- control characters are shown, not obeyed --------------------------
# A stored OSC "set the window title" sequence (ESC ] 0 ; pwned BEL), a C1
# CSI (U+009B) and a DEL reach the terminal as visible escapes in every
# human-facing output; export keeps them, JSON-escaped, and re-imports them.
psql_q >/dev/null <<'SQL'
SELECT mnemo.create_session('esc', title => E'title \u001b]0;pwned\u0007', model_id => E'm\u001b[31m');
SELECT mnemo.append_message('esc', 'user',
  '[{"type": "text", "text": "hi \u001b]0;pwned\u0007 there \u009b2J del\u007f\ttab\nline two"}]');
SELECT mnemo.append_message('esc', 'assistant',
  '[{"type": "tool", "tool_name": "x\u001bname", "tool_call_id": "c\u0007", "input": {"k": "\u001b[2J"},
     "output": "out \u001b]52;c;Zm9v\u0007"}]');
SQL
# no_controls FILE: no C0 control but newline and tab, no DEL, no C1 as UTF-8
no_controls() {
	! LC_ALL=C grep -q "$(printf '[\001-\010\013-\037\177]')" "$1" && ! LC_ALL=C grep -q "$(printf '\302[\200-\237]')" "$1"
}
run_m show esc
expect_rc 0 "show of a session whose text holds escape sequences"
check "show: no raw control character reaches the terminal" no_controls "$work/out"
check "show: the OSC sequence is shown escaped" grep -qF 'hi \x1b]0;pwned\x07 there \u009b2J del\x7f' "$work/out"
check "show: tab and newline stay as they are" grep -qF "$(printf '\ttab')" "$work/out"
check "show: the title, tool name and tool output escaped" \
	bash -c "grep -qF 'title \\x1b]0;pwned\\x07' '$work/out' && grep -qF 'x\\x1bname c\\x07' '$work/out' && grep -qF 'out \\x1b]52;c;Zm9v\\x07' '$work/out'"
run_m context esc --budget 100000
expect_rc 0 "context of that session"
check "context: no raw control character" no_controls "$work/out"
check "context: the text escaped" grep -qF 'hi \x1b]0;pwned\x07 there \u009b2J' "$work/out"
run_m sessions
expect_rc 0 "sessions with that title"
check "sessions: no raw control character" no_controls "$work/out"
check "sessions: the title escaped" grep -qF 'title \x1b]0;pwned\x07' "$work/out"
"$M" tail esc --after 0 >"$work/tail_esc.out" 2>"$work/tail_esc.err" &
tail_pid=$!
for _ in $(seq 1 100); do
	grep -q "pwned" "$work/tail_esc.out" 2>/dev/null && grep -q "Zm9v" "$work/tail_esc.out" && break
	sleep 0.1
done
kill -TERM "$tail_pid"
wait "$tail_pid"
tail_pid=
check "tail: no raw control character" no_controls "$work/tail_esc.out"
check "tail: the text escaped" grep -qF 'hi \x1b]0;pwned\x07 there \u009b2J' "$work/tail_esc.out"
run_m export esc
expect_rc 0 "export of that session"
check "export: the text JSON-escaped" grep -qF 'hi \u001b]0;pwned\u0007 there' "$work/out"
check "export: no raw C0 control character" bash -c "! LC_ALL=C grep -q \"\$(printf '[\\001-\\037]')\" '$work/out'"

if [ -n "${MNEMO_TEST_CLUSTER_DIR:-}" ]; then
	"$M" tail tailed --after 1 >"$work/tail2.out" 2>"$work/tail2.err" &
	tail_pid=$!
	# it printed #2 once it follows
	for _ in $(seq 1 100); do
		grep -q "hello from psql" "$work/tail2.out" && break
		sleep 0.1
	done
	bash test/cluster.sh stop "$MNEMO_TEST_CLUSTER_DIR"
	sleep 0.5
	bash test/cluster.sh start "$MNEMO_TEST_CLUSTER_DIR"
	psql_q -c "SELECT mnemo.append_message('tailed', 'user', '[{\"type\": \"text\", \"text\": \"after the restart\"}]')" >/dev/null
	for _ in $(seq 1 150); do
		grep -q "after the restart" "$work/tail2.out" && break
		sleep 0.1
	done
	check "tail reconnects after a server restart and prints what comes next" \
		grep -q "^  after the restart$" "$work/tail2.out"
	check "saying so on stderr" \
		bash -c "grep -q 'reconnecting in' '$work/tail2.err' && grep -q '^mnemo: reconnected$' '$work/tail2.err'"
	check "printing each message once" test "$(grep -c '^--- #' "$work/tail2.out")" -eq 2
	kill -TERM "$tail_pid"
	wait "$tail_pid"
	rc=$?
	tail_pid=
	expect_rc 0 "and still ends on SIGTERM"
fi

echo "1..$n"
[ "$failed" -eq 0 ]
