#!/usr/bin/env bash
# The sweep over real sessions (issue 30): every session of
# ../shared/data/transcripts (a line says so when it is absent) with at
# least MNEMO_SWEEP_MIN tokens of context (6000), a fresh import each time:
# 1. `mnemo compact --level 3` at 1/2, 1/4 and 1/10 of its context: at 1/2
#    and 1/4 it must reach the budget, at 1/10 reach it or exit 5 naming
#    the floor; the table: session, tokens, budget, tokens after, exit, ms,
#    user messages in context of all, the task verbatim (1) or summarised;
# 2. at the floor: a budget of 1 exits 5 naming it, and a fresh copy
#    compacted to that floor reaches it;
# 3. `mnemo compact --level 1` at 1/4, the local provider server
#    (test/provider_server) writing the summaries (Level 3 for a session
#    that names no model).
# After each: `mnemo verify` passes, the task (the first user message) is in
# context or under a summary in context, and every file id of the (pruned)
# context is still in it.  One test, so that the transcripts are imported
# once; it takes minutes.
# mnemo-test-timeout: 900
#
# Run by test/client/run.sh with MNEMO_BIN and PGDATABASE; prints TAP.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1

M=${MNEMO_BIN:?MNEMO_BIN is the mnemo command to test}
# the sweep runs hundreds of compactions: the plain build (make -C client,
# which test/client/run.sh builds first) keeps it within the test's time;
# the sanitized one runs every other test of the engine
S=${MNEMO_SWEEP_BIN:-client/mnemo}
[ -x "$S" ] || S=$M
DATA=${MNEMO_TRANSCRIPTS:-../shared/data/transcripts}
MIN=${MNEMO_SWEEP_MIN:-6000}
SRV=${MNEMO_PROVIDER_SERVER:-}
if [ -z "$SRV" ]; then
	make -s -C test/provider_server >/dev/null 2>&1 || { echo "Bail out! cannot build test/provider_server"; exit 1; }
	SRV=$PWD/test/provider_server/provider-server
fi
work=$(mktemp -d /tmp/mnemo-sweep.XXXXXX)
srv_pid=
cleanup() {
	[ -n "$srv_pid" ] && kill -TERM "$srv_pid" 2>/dev/null && wait "$srv_pid" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT

# shellcheck source=lib/tap.sh
. test/client/lib/tap.sh
# shellcheck source=lib/compact.sh
. test/client/lib/compact.sh

if sweep_setup "$DATA" "$MIN"; then
	echo "# source                                   tokens      budget   after exit     ms users task"
	while IFS='|' read -r src total; do
		users=$(psql_q -c "SELECT count(*) FROM mnemo.messages WHERE session_id = '$src' AND role = 'user' AND NOT is_summary")
		for d in 2 4 10; do
			budget=$((total / d))
			sid=$(import "$work/exp/$src.jsonl")
			started=$(date +%s%N)
			"$S" compact "$sid" --level 3 --budget "$budget" >"$work/out" 2>"$work/err"
			crc=$?
			ms=$((($(date +%s%N) - started) / 1000000))
			after=$(size "$sid")
			[ "$d" = 10 ] || is "$crc" 0 "$src at 1/$d ($budget tokens) reaches its budget"
			check_after "$sid" "$budget" "$crc" "$src at 1/$d"
			kept=$(psql_q -c "SELECT count(*) FROM mnemo.get_context_items('$sid') c
			  JOIN mnemo.messages m ON m.session_id = '$sid' AND m.id = c.item_id
			  WHERE m.role = 'user' AND NOT m.is_summary")
			printf '# %-40s %7s %11s %7s %4s %6s %5s %4s\n' "$(source "$src")" "$total" "1/$d=$budget" "$after" \
				"$crc" "$ms" "$kept/$users" "$(task_verbatim "$sid")"
			"$S" delete "$sid" >/dev/null 2>&1
		done
	done <"$work/big"

	# the floor a budget of 1 names, then that budget
	while IFS='|' read -r src total; do
		sid=$(import "$work/exp/$src.jsonl")
		"$S" compact "$sid" --level 3 --budget 1 >"$work/out" 2>"$work/err"
		rc=$?
		floor=$(sed -n "s/.*cannot be compacted under \([0-9]*\) tokens.*/\1/p" "$work/err")
		is "$rc/$([ -n "$floor" ] && echo named)" "5/named" "$src: a budget of 1 exits 5 naming the floor (${floor:-none})"
		"$S" delete "$sid" >/dev/null 2>&1
		sid=$(import "$work/exp/$src.jsonl")
		"$S" compact "$sid" --level 3 --budget "${floor:-1}" >"$work/out" 2>"$work/err"
		crc=$?
		is "$crc" 0 "$src: the floor it named, ${floor:-none} of $total tokens, is reached"
		check_after "$sid" "${floor:-1}" "$crc" "$src at its floor"
		"$S" delete "$sid" >/dev/null 2>&1
	done <"$work/big"

	# Level 1 through the provider server, at 1/4
	cat >"$work/l1.script" <<'EOF'
model gpt-4o-mini

reply repeat=100000
  text "## Goal\nThe task as the model summarised it.\n## In Progress\nwork"
EOF
	"$SRV" --script "$work/l1.script" --port-file "$work/l1.port" --log /dev/null \
		--key sk-compact-test --quiet 2>"$work/l1.err" &
	srv_pid=$!
	for _ in $(seq 100); do [ -s "$work/l1.port" ] && break; sleep 0.05; done
	export OPENAI_API_KEY=sk-compact-test ANTHROPIC_API_KEY=sk-compact-test
	export OPENAI_BASE_URL=http://127.0.0.1:$(cat "$work/l1.port")/v1
	export ANTHROPIC_BASE_URL=http://127.0.0.1:$(cat "$work/l1.port")
	while IFS='|' read -r src total; do
		budget=$((total / 4))
		sid=$(import "$work/exp/$src.jsonl")
		# a session that names no model (tau-bench's, SWE-agent's) is given one
		model=$(psql_q -c "SELECT coalesce(model_id, '') FROM mnemo.sessions WHERE id = '$sid'")
		named=()
		[ -n "$model" ] || named=(--provider openai --model gpt-4o-mini)
		"$S" compact "$sid" --level 1 --budget "$budget" "${named[@]}" >"$work/out" 2>"$work/err"
		rc=$?
		l1=$(sed -n 's/^compact: .*(L1 \([0-9]*\),.*/\1/p' "$work/out")
		is "$rc/$([ "${l1:-0}" -gt 0 ] && echo L1)" "0/L1" \
			"$src at 1/4 through Level 1${named:+ (--model, none named)}: reached, with the model's summaries"
		check_after "$sid" "$budget" "$rc" "$src at 1/4, Level 1"
		"$S" delete "$sid" >/dev/null 2>&1
	done <"$work/big"
	unset OPENAI_API_KEY ANTHROPIC_API_KEY OPENAI_BASE_URL ANTHROPIC_BASE_URL
	kill -TERM "$srv_pid" 2>/dev/null && wait "$srv_pid" 2>/dev/null
	srv_pid=
fi

echo "1..$n"
[ "$failed" -eq 0 ]
