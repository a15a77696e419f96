#!/usr/bin/env bash
# mnemo map: a map created and worked from the command line, its status,
# usage errors; then one 300-item map shared by three processes, one of
# them killed with SIGKILL midway: every item is done exactly once, none is
# lost (the dead worker's items are taken over when their lease expires).
#
# Run by test/client/run.sh with MNEMO_BIN (the sanitized mnemo),
# MNEMO_PROVIDER_SERVER and PGDATABASE (a fresh database with the
# extension); prints TAP.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1

M=${MNEMO_BIN:?MNEMO_BIN is the mnemo command to test}
SRV=${MNEMO_PROVIDER_SERVER:-}
if [ -z "$SRV" ]; then
	make -s -C test/provider_server >/dev/null 2>&1 || { echo "Bail out! cannot build test/provider_server"; exit 1; }
	SRV=$PWD/test/provider_server/provider-server
fi
work=$(mktemp -d /tmp/mnemo-map.XXXXXX)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT

# shellcheck source=lib/tap.sh
. test/client/lib/tap.sh

cat >"$work/srv.script" <<'SCRIPT'
model gpt-4o-mini
reply repeat=forever
  text "```json\n{\"ok\": true}\n```"
  wait_ms 30
SCRIPT
"$SRV" --script "$work/srv.script" --port-file "$work/port" --log "$work/log" --key sk-map-test \
	--quiet 2>"$work/srv.err" &
pids+=($!)
for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.05; done
[ -s "$work/port" ] || { echo "Bail out! the provider server did not start"; exit 1; }
unset ANTHROPIC_API_KEY ANTHROPIC_BASE_URL
export OPENAI_BASE_URL=http://127.0.0.1:$(cat "$work/port")/v1 OPENAI_API_KEY=sk-map-test
model=(--provider openai --model gpt-4o-mini)

echo 'Is {{ item.n }} even? Answer {"ok": true|false}.' >"$work/tpl"
echo '{"type": "object", "required": ["ok"], "properties": {"ok": {"type": "boolean"}}}' >"$work/schema"
for i in $(seq 0 9); do echo "{\"n\": $i}"; done >"$work/ten.jsonl"

# ---- a small map from the command line --------------------------------

run_m map --template "$work/tpl" --items "$work/ten.jsonl" --schema "$work/schema" "${model[@]}" --id ten
expect_rc 0 "mnemo map over ten items"
is "$(grep -c '"success": true' "$work/out")" 10 "one JSON line per item on stdout, all successful"
check "the map and its session are named on stderr" grep -qE '^map ten \(session [^ ]+\): 10 items$' "$work/err"
check "plain progress lines when stderr is not a terminal" grep -q '^progress: [0-9]*/10 (0 failed)$' "$work/err"
check "and the end" grep -qx 'map ten: 10 done, 0 failed' "$work/err"
is "$(psql_q -c "SELECT string_agg(DISTINCT result::text, ',') FROM mnemo.map_items WHERE map_id = 'ten'")" \
	'{"ok": true}' "each validated output is stored (fence stripped)"
sid=$(psql_q -c "SELECT session_id FROM mnemo.maps WHERE map_id = 'ten'")
# on a terminal (script(1) gives it one): a progress bar redrawn in place
if command -v script >/dev/null; then
	script -qec "$M map --template $work/tpl --items $work/ten.jsonl ${model[*]} --id ten_tty >/dev/null" \
		/dev/null >"$work/tty" 2>&1
	check "a progress bar on a terminal, redrawn with a carriage return" \
		grep -q $'\r\\[##############################\\] 10/10 (0 failed)' "$work/tty"
	check "and no plain progress lines there" test "$(grep -c '^progress:' "$work/tty")" = 0
else
	not_ok "script(1) (util-linux) is needed to give mnemo map a terminal"
fi
run_m map status ten
expect_rc 0 "mnemo map status"
check "status: counts and completion" \
	grep -qE "^map ten \(session $sid, llm\): 10 items, 10 done, 0 failed, 0 in flight, 0 pending, completed " "$work/out"
run_m map resume ten --session "$sid"
expect_rc 0 "resume of a finished map"
check "has nothing left to do" grep -qx 'map ten: 0 done, 0 failed' "$work/err"

# ---- usage and errors ----------------------------------------------------

run_m map --items "$work/ten.jsonl"
expect_rc 2 "a new map without --template"
echo 'the same prompt for all' >"$work/bad.tpl"
run_m map --template "$work/bad.tpl" --items "$work/ten.jsonl" --session "$sid" --id nope
expect_rc 1 "a template without {{ item }}"
check "is refused before any call" grep -q '{{ item }}' "$work/err"
is "$(psql_q -c "SELECT count(*) FROM mnemo.maps WHERE map_id = 'nope'")" 0 "and stores nothing"
printf '{"n": 1}\n{"n": \n' >"$work/broken.jsonl"
run_m map --template "$work/tpl" --items "$work/broken.jsonl" --session "$sid"
expect_rc 1 "a JSONL file with a broken line"
check "names the line" grep -q 'broken.jsonl:2: not JSON' "$work/err"
run_m map status map_none
expect_rc 3 "the status of a map that does not exist"
run_m map frobnicate x
expect_rc 2 "an unknown subcommand"
run_m map --help
expect_rc 0 "map --help"
check "--help names the subcommands" grep -q 'mnemo map resume MAP' "$work/out"

# ---- three processes, one map, one killed ------------------------------

for i in $(seq 0 299); do echo "{\"n\": $i}"; done >"$work/big.jsonl"
# created (and one item worked) by a first process, then shared
run_m map --template "$work/tpl" --items "$work/big.jsonl" --schema "$work/schema" "${model[@]}" \
	--id big --max-items 1 --concurrency 1
expect_rc 0 "a 300-item map is created"
cp "$work/out" "$work/w0.out"
bsid=$(psql_q -c "SELECT session_id FROM mnemo.maps WHERE map_id = 'big'")
for w in 1 2 3; do
	"$M" map resume big --session "$bsid" --concurrency 4 --lease-ms 1500 \
		>"$work/w$w.out" 2>"$work/w$w.err" &
	pids+=($!)
	eval "wpid$w=\$!"
done
# kill the second worker once a quarter of the map is done
for _ in $(seq 600); do
	[ "$(psql_q -c "SELECT done FROM mnemo.map_status('$bsid', 'big')")" -ge 75 ] && break
	sleep 0.05
done
# shellcheck disable=SC2154 # set by eval
held=$(psql_q -c "SELECT count(*) FROM mnemo.map_items WHERE map_id = 'big' AND state = 'running'")
{
	kill -9 "$wpid2"
	wait "$wpid2"
} 2>/dev/null
# shellcheck disable=SC2154
wait "$wpid1"
rc1=$?
# shellcheck disable=SC2154
wait "$wpid3"
rc3=$?
is "$rc1:$rc3" "0:0" "the two surviving workers finish the map (exit 0)"
ok "items in flight when the worker was killed: $held"
is "$(psql_q -c "SELECT items || ' ' || done || ' ' || failed || ' ' || in_flight || ' ' || pending || ' ' || (completed_at IS NOT NULL) FROM mnemo.map_status('$bsid', 'big')")" \
	"300 300 0 0 0 true" "300 items, all done, none failed, pending or in flight: none lost"
is "$(psql_q -c "SELECT count(DISTINCT ordinal) || ' ' || count(DISTINCT completion_seq) || ' ' || min(completion_seq) || ' ' || max(completion_seq) FROM mnemo.map_items WHERE map_id = 'big' AND state = 'done'")" \
	"300 300 1 300" "every item recorded once, numbered 1..300 in completion order"
reclaimed=$(psql_q -c "SELECT count(*) FROM mnemo.map_items WHERE map_id = 'big' AND claims > 1")
if [ "$reclaimed" -ge 1 ]; then
	ok "the killed worker's items were claimed again after their lease ($reclaimed)"
else
	not_ok "no item was claimed twice: the kill took no item with it"
fi
cat "$work"/w[0-3].out | sed -n 's/^{"ordinal": \([0-9]*\),.*/\1/p' | sort -n >"$work/reported"
is "$(uniq -d "$work/reported" | wc -l)" 0 "no item was reported by two workers"
killed=$(grep -c . "$work/w2.out")
is "$(($(grep -c . "$work/reported") <= 300 && $(grep -c . "$work/reported") >= 300 - 8))" 1 \
	"the workers reported every item but those the killed one recorded and had not printed ($killed before the kill)"
if [ "$(grep -c . "$work/log")" -ge 300 ]; then
	ok "at least one request per item ($(grep -c . "$work/log"))"
else
	not_ok "fewer requests than items: $(grep -c . "$work/log")"
fi

echo "1..$n"
[ "$failed" -eq 0 ]
