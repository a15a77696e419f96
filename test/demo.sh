#!/usr/bin/env bash
# make demo: install what is missing, build the extension, the client and the
# provider test server, start a private cluster under the project (.demo/,
# unix socket only, run as postgres when invoked as root), install mnemo and
# run a scripted agent session with tool calls through mnemo_session_send():
# against the provider whose key is in the environment (OPENAI_API_KEY, else
# ANTHROPIC_API_KEY), or, with none, against the bundled local test server.
# Then the stored messages, the context, a compaction by the engine at a
# budget of half the context, the SQL API underneath (test/demo.sql), the
# check that the log holds every message sent, and mnemo verify.  Exits 0
# when all of it worked.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==== %s\n' "$*"; }

bash test/deps.sh
echo "building the extension, libmnemo, the mnemo command and the provider test server..."
make -s
# As a normal user PostgreSQL's directories are not writable: the demo then
# needs the extension installed once by root, with this version's control
# and SQL files (the library's bytes differ between checkouts: debug paths).
pkglibdir=$(pg_config --pkglibdir)
extdir=$(pg_config --sharedir)/extension
installed_matches() {
	[ -f "$pkglibdir/mnemo.so" ] || return 1
	for f in mnemo.control sql/mnemo--*.sql; do
		cmp -s "$f" "$extdir/$(basename "$f")" || return 1
	done
}
if [ "$(id -u)" = 0 ] || { [ -w "$pkglibdir" ] && [ -w "$extdir" ]; }; then
	make -s install >/dev/null
elif ! installed_matches; then
	echo "make demo: this build of mnemo is not installed into PostgreSQL ($pkglibdir)," >&2
	echo "and only root may write there: run 'sudo make install' once, then make demo again" >&2
	exit 1
fi
make -s -C client >/dev/null
make -s -C test/provider_server >/dev/null

dir=$PWD/.demo
srv_pid=
cleanup() {
	[ -n "$srv_pid" ] && kill -TERM "$srv_pid" 2>/dev/null && wait "$srv_pid" 2>/dev/null
	bash test/cluster.sh stop "$dir" 2>/dev/null || true
}
trap cleanup EXIT
bash test/cluster.sh start "$dir"
eval "$(bash test/cluster.sh env "$dir")"
echo "private cluster: $dir (socket only)"
# the demo's own files, next to the cluster (.demo/ is ignored by git)
run=$dir/run
mkdir -p "$run"
PQ_INCLUDEDIR=$(pg_config --includedir)
PQ_LIBDIR=$(pg_config --libdir)
# shellcheck disable=SC2046 # flag lists
cc -std=c11 -O2 -Wall -Wextra -Werror -Iclient/include -I"$PQ_INCLUDEDIR" \
	-o "$run/agent" test/demo/agent.c client/libmnemo.a -L"$PQ_LIBDIR" -lpq \
	$(pkg-config --cflags --libs json-c libcurl libcrypto)

psql -X -q -v ON_ERROR_STOP=1 -c "SET client_min_messages = warning" \
	-c "DROP EXTENSION IF EXISTS mnemo CASCADE" -c "CREATE EXTENSION mnemo"

if [ -n "${OPENAI_API_KEY:-}" ]; then
	echo "provider: OpenAI (OPENAI_API_KEY is set${OPENAI_BASE_URL:+, OPENAI_BASE_URL $OPENAI_BASE_URL})"
elif [ -n "${ANTHROPIC_API_KEY:-}" ]; then
	echo "provider: Anthropic (ANTHROPIC_API_KEY is set${ANTHROPIC_BASE_URL:+, ANTHROPIC_BASE_URL $ANTHROPIC_BASE_URL})"
else
	echo "no provider key set: using the bundled local test server (test/provider_server,"
	echo "replies scripted in test/demo/demo.script); set OPENAI_API_KEY or ANTHROPIC_API_KEY"
	echo "to run the same session against a real model"
	rm -f "$run/port"
	test/provider_server/provider-server --script test/demo/demo.script --port-file "$run/port" \
		--log "$run/requests.log" --quiet &
	srv_pid=$!
	for _ in $(seq 200); do [ -s "$run/port" ] && break; sleep 0.05; done
	[ -s "$run/port" ] || { echo "the provider test server did not start" >&2; exit 1; }
	unset ANTHROPIC_BASE_URL
	export OPENAI_BASE_URL=http://127.0.0.1:$(cat "$run/port")/v1
	export OPENAI_API_KEY=demo-local-key
fi

step "1. a scripted agent session (test/demo/agent.c): three user turns, tools run locally, replies streamed"
"$run/agent" run "$run/sent.json" | tee "$run/agent.out"
sid=$(tail -n 1 "$run/agent.out")

step "2. the session's stored messages (mnemo show $sid)"
client/mnemo show "$sid"

step "3. its context as build_context returns it (mnemo context $sid --budget 100000)"
client/mnemo context "$sid" --budget 100000

# a budget of half the context, so that the engine has to summarise
size=$(psql -X -qAt -c "SELECT included_tokens + omitted_tokens FROM mnemo.context_report('$sid', 100000)")
budget=$((size / 2))
step "4. compaction by the engine at a low budget (mnemo compact $sid --budget $budget): the context is $size tokens"
client/mnemo compact "$sid" --budget "$budget"
echo
client/mnemo context "$sid" --budget 100000

step "5. the SQL API underneath (test/demo.sql, a session of its own)"
out=$(psql -X -q -f test/demo.sql 2>&1) || { echo "$out"; exit 1; }
echo "$out"
grep -q "OK: every message of the SQL session is in the log" <<<"$out"

step "6. the check: every message sent and received is in the log, compacted or not"
"$run/agent" check "$sid" "$run/sent.json"

step "7. the losslessness check (mnemo verify $sid): every message reachable from the context, unchanged"
client/mnemo verify "$sid"

# the first checkpoint mnemo_session_send added (after the first turn)
label=$(client/mnemo checkpoints "$sid" | awk -F'\t' '$2 ~ /^turn-/ { print $2; exit }')
cpseq=$(client/mnemo checkpoints "$sid" | awk -F'\t' -v l="$label" '$2 == l { print $1; exit }')
step "8. fork at the checkpoint $label (mnemo fork $sid $label $sid-fork): no copy, the context as it was then"
client/mnemo fork "$sid" "$label" "$sid-fork"
client/mnemo context "$sid-fork" --budget 100000
inherited=$(psql -X -qAt -c "SELECT count(*) FROM mnemo.get_messages('$sid-fork')")
expected=$(psql -X -qAt -c "SELECT count(*) FROM mnemo.get_messages('$sid') WHERE seq <= $cpseq")
echo "the fork reads $inherited messages in place (the source's up to seq $cpseq: $expected)"
[ "$inherited" = "$expected" ]
client/mnemo verify "$sid-fork"

step "9. resume the session at $label (mnemo resume $sid $label): the later turns are discarded, kept"
client/mnemo resume "$sid" "$label"
live=$(psql -X -qAt -c "SELECT count(*) FROM mnemo.get_messages('$sid')")
kept=$(client/mnemo export "$sid" --discarded | tail -n +2 | wc -l)
echo "live line: $live messages; discarded and still exportable (mnemo export $sid --discarded): $kept"
[ "$live" = "$expected" ] && [ "$kept" -gt 0 ]
echo
echo "demo: OK"
