#!/usr/bin/env bash
# Compaction that reaches its budget (issue 30), besides the sweeps over
# real sessions (compact_sweep.sh):
# 1. generated shapes (seeded): long tool loops after one prompt, giant
#    outputs, tiny messages, summaries, forks, appends racing the
#    compaction; the same assertions;
# 2. the refusal below the floor, --ttl and --release, and a compaction
#    whose backend is killed (exit 4, issue 32);
# 3. a chat turn on a real imported session with a --context-limit below
#    its size: the request the provider receives is under the limit, the
#    turn succeeds, and the task is in the request.
#
# Run by test/client/run.sh with MNEMO_BIN (the sanitized mnemo) and
# PGDATABASE (a fresh database with the extension); prints TAP.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1

M=${MNEMO_BIN:?MNEMO_BIN is the mnemo command to test}
SRV=${MNEMO_PROVIDER_SERVER:-}
if [ -z "$SRV" ]; then
	make -s -C test/provider_server >/dev/null 2>&1 || { echo "Bail out! cannot build test/provider_server"; exit 1; }
	SRV=$PWD/test/provider_server/provider-server
fi
work=$(mktemp -d /tmp/mnemo-compact.XXXXXX)
srv_pid=
bg_pid=
cleanup() {
	[ -n "$bg_pid" ] && kill -KILL "$bg_pid" 2>/dev/null
	[ -n "$srv_pid" ] && kill -TERM "$srv_pid" 2>/dev/null && wait "$srv_pid" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT

# shellcheck source=lib/tap.sh
. test/client/lib/tap.sh
# shellcheck source=lib/compact.sh
. test/client/lib/compact.sh

# ---- 1. generated shapes ------------------------------------------------

# msg SID ROLE CHARS [TOOL]: append a message of CHARS characters
msg() {
	local text
	text=$(head -c "$3" /dev/zero | tr '\0' "${5:-w}")
	if [ "${4:-}" = tool ]; then
		psql_q -c "SELECT mnemo.append_message('$1', 'assistant', jsonb_build_array(
		  jsonb_build_object('type', 'tool', 'tool_name', 'bash', 'tool_call_id', 'c' || gen_random_uuid(),
		    'tool_state', 'completed', 'input', '{}'::jsonb, 'output', '$text file_0123abcd')))" >/dev/null
	else
		psql_q -c "SELECT mnemo.append_message('$1', '$2', jsonb_build_array(jsonb_build_object('type', 'text', 'text', '$text')))" >/dev/null
	fi
}

RANDOM=${MNEMO_COMPACT_SEED:-30}
echo "# generated shapes, seed ${MNEMO_COMPACT_SEED:-30}"
for shape in 1 2 3 4 5 6; do
	sid=shape$shape
	psql_q -c "SELECT mnemo.create_session('$sid')" >/dev/null
	msg "$sid" user $((200 + RANDOM % 2000)) "" t
	steps=$((20 + RANDOM % 120))
	for i in $(seq "$steps"); do
		case $((RANDOM % 10)) in
			0) msg "$sid" assistant $((40000 + RANDOM % 40000)) tool ;;  # a giant output
			1) msg "$sid" user $((10 + RANDOM % 400)) ;;
			2 | 3) msg "$sid" assistant $((1 + RANDOM % 20)) ;;           # tiny
			*) msg "$sid" assistant $((200 + RANDOM % 3000)) tool ;;
		esac
	done
	msg "$sid" user $((20 + RANDOM % 300))
	if [ "$shape" = 3 ]; then
		# summaries already there: a compaction, then more messages
		"$M" compact "$sid" --level 3 --budget $(($(size "$sid") / 2)) >/dev/null 2>&1
		for i in $(seq 30); do msg "$sid" assistant $((100 + RANDOM % 4000)) tool; done
	fi
	if [ "$shape" = 4 ]; then
		# a fork of it, compacted as its own
		psql_q -c "SELECT mnemo.fork_session('$sid', (SELECT max(seq) FROM mnemo.messages WHERE session_id = '$sid')::text, '${sid}f')" >/dev/null
		sid=${sid}f
		for i in $(seq 20); do msg "$sid" assistant $((100 + RANDOM % 4000)) tool; done
		msg "$sid" user 100
	fi
	total=$(size "$sid")
	psql_q -c "SELECT mnemo.prune_tool_outputs('$sid')" >/dev/null
	file_ids "$sid" >"$work/ids.before"
	budget=$((total / (2 + RANDOM % 12)))
	if [ "$shape" = 6 ]; then
		# appends racing the compaction: each must succeed (no deadlock, no
		# error) and every one must be stored
		before=$(psql_q -c "SELECT count(*) FROM mnemo.messages WHERE session_id = '$sid' AND NOT is_summary")
		(for i in $(seq 40); do msg "$sid" assistant $((100 + RANDOM % 2000)) || exit 1; done) &
		bg_pid=$!
		run_m compact "$sid" --level 3 --budget "$budget"
		wait "$bg_pid"
		appends_rc=$?
		bg_pid=
		check "shape 6: the 40 appends racing the compaction all succeed" test "$appends_rc" -eq 0
		is "$(psql_q -c "SELECT count(*) - $before FROM mnemo.messages WHERE session_id = '$sid' AND NOT is_summary")" 40 \
			"shape 6: and all 40 are stored beside the summaries"
		# the appends may outgrow the last round: one more brings it down
		[ "$rc" -eq 0 ] && run_m compact "$sid" --level 3 --budget "$budget"
	else
		run_m compact "$sid" --level 3 --budget "$budget"
	fi
	check_after "$sid" "$budget" "$rc" "shape $shape ($(psql_q -c "SELECT count(*) FROM mnemo.messages WHERE session_id = '$sid'") messages, $total tokens, budget $budget)"
done

# ---- 2. the floor, the claim's lease, a killed backend -------------------

psql_q -c "SELECT mnemo.create_session('floor')" >/dev/null
msg floor user 400
for i in $(seq 12); do msg floor assistant 2000 tool; done
msg floor user 8000
run_m compact floor --level 3 --budget 1500
expect_rc 5 "a budget below the floor (latest user message 2000 tokens): exit 5"
check "it says the floor and how far it got" \
	grep -Eq "below the session's floor: the context cannot be compacted under [0-9]+ tokens .*reached [0-9]+ from [0-9]+" "$work/err"
check "and still compacts as far as it can" grep -Eq "^compact: [1-9][0-9]* summar" "$work/out"
is "$(psql_q -c "SELECT count(*) FROM mnemo.compaction_claims WHERE session_id = 'floor'")" 0 \
	"its claim is released"
floor=$(sed -n "s/.*cannot be compacted under \([0-9]*\) tokens.*/\1/p" "$work/err")
run_m compact floor --level 3 --budget "$floor"
expect_rc 0 "the floor it named is a budget it reaches"

# a tool output bigger than the budget, alone between the task and the
# latest user message: replaced in the view (not the log) by an excerpt
# that says where the whole is, which expand_summary gives back
psql_q -c "SELECT mnemo.create_session('giant')" >/dev/null
msg giant user 200
msg giant assistant 60000 tool
msg giant user 100
run_m compact giant --level 3 --budget 3000
expect_rc 0 "a 15,000-token tool output under a budget of 3000"
giant=$(psql_q -c "SELECT id FROM mnemo.messages WHERE session_id = 'giant' AND seq = 2")
check "its excerpt in context names it" bash -c "psql -X -qAt -c \"SELECT content FROM mnemo.build_context('giant', 100000)\" | grep -q 'Excerpt of message $giant, whole in the log'"
is "$(psql_q -c "SELECT e.item_id FROM mnemo.get_context_items('giant') c, mnemo.expand_summary('giant', c.item_id) e WHERE c.item_type = 'summary'")" \
	"$giant" "expand_summary of the excerpt gives the whole message back"
check "the file id of the output is kept" bash -c "psql -X -qAt -c \"SELECT content FROM mnemo.build_context('giant', 100000)\" | grep -q 'file_0123abcd'"
# over the large-file threshold (10,000 tokens) it is also in the large-files
# room, content-addressed with an exploration summary, its id in the footer
ref=$(psql_q -c "SELECT content_id FROM mnemo.get_file_reference_by_path('message:$giant')")
check "the output is stored as a large-file reference ($ref)" bash -c "[[ '$ref' == sha256:* ]]"
check "its content id is in the excerpt's file-id footer in context" \
	bash -c "psql -X -qAt -c \"SELECT content FROM mnemo.build_context('giant', 100000)\" | grep -q '$ref'"
run_m describe giant "$ref"
check "mnemo describe (lcm_describe) gives its exploration summary" \
	bash -c "grep -q '^file $ref: message:$giant, type unknown, 1[0-9][0-9][0-9][0-9] tokens' '$work/out'"
is "$(psql_q -c "SELECT count(*) FROM mnemo.get_context_items('giant') c JOIN mnemo.messages m ON m.session_id = 'giant' AND m.id = c.item_id WHERE m.role = 'user'")" 2 \
	"the task and the latest user message stay verbatim"

# no --budget: half the context
psql_q -c "SELECT mnemo.create_session('half')" >/dev/null
msg half user 400
for i in $(seq 30); do msg half assistant 1500; done
before=$(size half)
run_m compact half --level 3
expect_rc 0 "mnemo compact without --budget"
check "halves the context ($before -> $(size half))" test "$(size half)" -le $((before / 2))

# --release: a dead holder's claim
psql_q -c "SELECT mnemo.claim_compaction('half', 'dead-compactor', 600000)" >/dev/null
run_m compact half --level 3
check "a live-looking claim blocks the compaction" grep -q "another compactor holds the claim" "$work/out"
run_m compact half --release
expect_rc 0 "mnemo compact --release"
is "$(cat "$work/out")" "compact: released the claim of dead-compactor" "names the holder it released"
is "$(psql_q -c "SELECT count(*) FROM mnemo.compaction_claims WHERE session_id = 'half'")" 0 "the claim is gone"
run_m compact half --release
is "$(cat "$work/out")" "compact: no claim on half" "--release with no claim says so"
run_m compact no-such --release
expect_rc 3 "--release of a missing session"
run_m compact half --release --budget 5
expect_rc 2 "--release takes no other option"

# a backend killed mid-compaction: Level 1 waits on a stalled model
cat >"$work/slow.script" <<'EOF'
model gpt-4o-mini

reply repeat=100
  text "## Goal\nslow"
  stall at=1 seconds=4
EOF
"$SRV" --script "$work/slow.script" --port-file "$work/slow.port" --log /dev/null \
	--key sk-compact-test --quiet 2>"$work/slow.err" &
srv_pid=$!
for _ in $(seq 100); do [ -s "$work/slow.port" ] && break; sleep 0.05; done
psql_q -c "SELECT mnemo.create_session('killed', provider_id => 'openai', model_id => 'gpt-4o-mini')" >/dev/null
msg killed user 400
for i in $(seq 20); do msg killed assistant 1500; done
OPENAI_API_KEY=sk-compact-test OPENAI_BASE_URL=http://127.0.0.1:$(cat "$work/slow.port")/v1 \
	"$M" compact killed --level 1 --budget 2000 --ttl 2000 >"$work/out" 2>"$work/err" &
bg_pid=$!
for _ in $(seq 200); do
	[ "$(psql_q -c "SELECT count(*) FROM mnemo.compaction_claims WHERE session_id = 'killed'")" = 1 ] && break
	sleep 0.05
done
sleep 0.5
is "$(psql_q -c "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
  WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'")" 1 \
	"the compactor's backend is killed while its model stalls"
wait "$bg_pid"
rc=$?
bg_pid=
is "$rc" 4 "mnemo compact whose backend is killed exits 4 (connection lost), not 0"
check "and says so, not \"no error\"" bash -c "! grep -q 'no error' '$work/err' && grep -q '^mnemo: ' '$work/err'"
is "$(psql_q -c "SELECT count(*) FROM mnemo.compaction_claims WHERE session_id = 'killed' AND holder LIKE '%:%'")" 1 \
	"its claim stays (a lost connection cannot release it)"
sleep 2.2
run_m compact killed --level 3 --budget 2000
expect_rc 0 "with --ttl 2000 the next compaction proceeds 2 s later"
kill -TERM "$srv_pid" 2>/dev/null && wait "$srv_pid" 2>/dev/null
srv_pid=

# ---- 3. a chat turn on a real session over its limit ---------------------

# a Claude Code session of 58,512 tokens, 110 messages (test/data/claude-code)
real=${MNEMO_CLAUDE_DIR:-test/data/claude-code}/29/77bc73228c/1/full.jsonl
if [ ! -f "$real" ]; then
	echo "# $real is absent: the chat turn on a real session is skipped"
else
	cat >"$work/turn.script" <<'EOF'
model gpt-4o-mini

reply repeat=100000
  text "## Goal\nsummarised"
EOF
	"$SRV" --script "$work/turn.script" --port-file "$work/turn.port" --log "$work/turn.log" \
		--key sk-compact-test --quiet 2>"$work/turn.err" &
	srv_pid=$!
	for _ in $(seq 100); do [ -s "$work/turn.port" ] && break; sleep 0.05; done
	sid=$("$M" import --new-ids --quiet "$real" 2>/dev/null | head -1)
	total=$(size "$sid")
	task=$(psql_q -c "SELECT left(regexp_replace(parts->0->>'text', '[^A-Za-z0-9 ]', ' ', 'g'), 400)
	  FROM mnemo.get_messages_with_parts('$sid') WHERE role = 'user' ORDER BY seq LIMIT 1" |
		grep -o '[A-Za-z0-9][A-Za-z0-9 ]\{20,\}' | head -1 | cut -c1-20)
	# the budget (limit less the output and the compaction's output) is a
	# quarter of the session
	limit=$((total / 4 + 4096 + 4000))
	printf 'go on\n' | OPENAI_API_KEY=sk-compact-test \
		"$M" chat --session "$sid" --provider openai --model gpt-4o-mini --context-limit "$limit" \
		--base-url "http://127.0.0.1:$(cat "$work/turn.port")/v1" >"$work/out" 2>"$work/err"
	is "$?" 0 "a turn on a real session of $total tokens, limit $limit: exit 0"
	# the turn's request (the compaction's own ask for summaries)
	last=$(grep -F '"go on"' "$work/turn.log" | tail -1)
	sent=$(printf '%s' "$last" | jq '[.body.messages[] | (.content | if type == "string" then . else tostring end)] | add | length / 4 | floor')
	check "the request sent is under the limit ($sent tokens of $((limit - 4096 - 4000)) usable)" \
		test "$sent" -le $((limit - 4096 - 4000))
	if [ -n "$task" ] && printf '%s' "$last" | tr -c 'A-Za-z0-9 \n' ' ' | grep -qF "$task"; then
		ok "the task's text (\"$task\") is in the request"
	else
		not_ok "the task's text (\"$task\") is not in the request"
	fi
	kill -TERM "$srv_pid" 2>/dev/null && wait "$srv_pid" 2>/dev/null
	srv_pid=
fi

echo "1..$n"
[ "$failed" -eq 0 ]
