#!/usr/bin/env bash
# The sweep (issue 30): every session of ../shared/data/transcripts (a line
# says so when it is absent) with at least MNEMO_SWEEP_MIN tokens of context
# (6000), compacted by `mnemo compact --level 3` at 1/2, 1/4 and 1/10 of its
# context (1/10 in compact_sweep_tenth.sh, which runs this with
# MNEMO_SWEEP_FRACTIONS=10: one test each stays within its time).  At 1/2
# and 1/4 it must reach the budget; at 1/10 reach it or exit 5 naming the
# floor.  After each: `mnemo verify` passes, the task (the
# first user message) is in context or under a summary in context, and
# every file id of the (pruned) context is still in it.  Prints the table:
# session, tokens, budget, tokens after, exit, ms, user messages in context
# of all, the task verbatim (1) or summarised (0).
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
	echo "# session                          tokens  budget   after exit     ms users task"
	while IFS='|' read -r src total; do
		users=$(psql_q -c "SELECT count(*) FROM mnemo.messages WHERE session_id = '$src' AND role = 'user' AND NOT is_summary")
		for d in ${MNEMO_SWEEP_FRACTIONS:-2 4}; do
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
			printf '# %-30s %7s %7s %7s %4s %6s %5s %4s\n' "$src" "$total" "1/$d=$budget" "$after" \
				"$crc" "$ms" "$kept/$users" "$(task_verbatim "$sid")"
			"$S" delete "$sid" >/dev/null 2>&1
		done
	done <"$work/big"
fi

echo "1..$n"
[ "$failed" -eq 0 ]
