#!/usr/bin/env bash
# The floor, on real sessions (issue 30): every session of
# ../shared/data/transcripts with at least MNEMO_SWEEP_MIN tokens (6000)
# compacted by `mnemo compact --level 3 --budget 1` exits 5 and names its
# floor; a fresh copy compacted to that floor reaches it, and passes the
# sweep's checks (compact_sweep.sh).
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
fi

echo "1..$n"
[ "$failed" -eq 0 ]
