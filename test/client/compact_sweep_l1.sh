#!/usr/bin/env bash
# The sweep through Level 1 (issue 30): every session of
# ../shared/data/transcripts with at least MNEMO_SWEEP_MIN tokens (6000)
# compacted by `mnemo compact --level 1` at 1/4 of its context, the local
# provider server (test/provider_server) writing the summaries: it reaches
# the budget with the model's summaries and passes the sweep's checks
# (compact_sweep.sh).
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
SRV=${MNEMO_PROVIDER_SERVER:-}
if [ -z "$SRV" ]; then
	make -s -C test/provider_server >/dev/null 2>&1 || { echo "Bail out! cannot build test/provider_server"; exit 1; }
	SRV=$PWD/test/provider_server/provider-server
fi

if sweep_setup "$DATA" "$MIN"; then
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
		"$S" compact "$sid" --level 1 --budget "$budget" >"$work/out" 2>"$work/err"
		rc=$?
		l1=$(sed -n 's/^compact: .*(L1 \([0-9]*\),.*/\1/p' "$work/out")
		# a session that names no model (tau-bench's, SWE-agent's) has none to
		# summarise with: Level 3, as documented
		model=$(psql_q -c "SELECT coalesce(model_id, '') FROM mnemo.sessions WHERE id = '$sid'")
		if [ -n "$model" ]; then
			is "$rc/$([ "${l1:-0}" -gt 0 ] && echo L1)" "0/L1" "$src at 1/4 through Level 1: reached, with the model's summaries"
		else
			is "$rc" 0 "$src at 1/4 (no model named: Level 3): reached"
		fi
		check_after "$sid" "$budget" "$rc" "$src at 1/4, Level 1"
		"$S" delete "$sid" >/dev/null 2>&1
	done <"$work/big"
	unset OPENAI_API_KEY ANTHROPIC_API_KEY OPENAI_BASE_URL ANTHROPIC_BASE_URL
	kill -TERM "$srv_pid" 2>/dev/null && wait "$srv_pid" 2>/dev/null
	srv_pid=

fi

echo "1..$n"
[ "$failed" -eq 0 ]
