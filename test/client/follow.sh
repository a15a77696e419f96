#!/usr/bin/env bash
# mnemo import --follow PATH, and a grown log imported again: a real Claude
# Code log (test/data/claude-code) written into a folder a piece at a time
# while the follower runs, one line in two pieces, the follower killed
# (-9) in the middle and started again, then stopped by SIGTERM; the
# session it makes holds what a one-shot import of the whole log holds
# (compared export against export, ids and token estimates aside), nothing
# twice; a grown log imported again by hand adds only what is new
# ("N new"); a log replaced under the same name (rotation) is followed too.
#
# Run by test/client/run.sh with MNEMO_BIN (the sanitized mnemo) and
# PGDATABASE (a fresh database with the extension); prints TAP.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1

M=${MNEMO_BIN:?MNEMO_BIN is the mnemo command to test}
work=$(mktemp -d /tmp/mnemo-follow.XXXXXX)
whole_db="${PGDATABASE}_follow_whole"
pid=
cleanup() {
	[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
	dropdb --if-exists "$whole_db" >/dev/null 2>&1
	rm -rf "$work"
}
trap cleanup EXIT

# shellcheck source=lib/tap.sh
. test/client/lib/tap.sh

LOG=test/data/claude-code/29/77bc73228c/1/full.jsonl
SID=7758c4c5-5d29-41e5-bc0a-b3091fd59b0c
CODEX=test/data/transcript-codex.jsonl
lines=$(wc -l <"$LOG")
msgs() { psql_q -c "SELECT count(*) FROM mnemo.messages WHERE session_id = '$1'"; }
# a digest of the session's messages and parts, without what differs by
# construction: ids, token estimates (a part stored before its result came
# is estimated without it), and for a result that came after its call was
# stored, the list output update_part_status stores as text (compared as the
# JSON it holds) and the part metadata it does not write (a Task call's link
# to its sub-agent), nor the copy of tool_state in the content (the column
# is compared)
digest() {
	psql_q -d "$1" -c "SELECT md5(string_agg(concat_ws('|', m.seq, m.role, m.created_at, m.tokens_input, m.tokens_output, m.tokens_cache_read, m.tokens_cache_write, m.finish_reason, p.part_index, p.part_type, p.tool_state, (p.content - 'output' - 'metadata' - 'tool_state')::text, CASE WHEN jsonb_typeof(p.content->'output') = 'string' AND left(p.content->>'output', 3) = '[{\"' THEN (p.content->>'output')::jsonb ELSE p.content->'output' END), E'\\n' ORDER BY m.seq, p.part_index)) FROM mnemo.messages m JOIN mnemo.message_parts p ON p.session_id = m.session_id AND p.seq = m.seq WHERE m.session_id = '$SID'"
}
# wait_for SID N: until the session holds N messages (10 s at most)
wait_for() {
	for _ in $(seq 100); do
		[ "$(msgs "$1")" = "$2" ] && return 0
		sleep 0.1
	done
	return 1
}
start() {
	"$M" import --follow "$work/logs" --interval 50 >>"$work/f.out" 2>>"$work/f.err" &
	pid=$!
}

# the whole log at once, for the counts and the comparison
createdb "$whole_db" >/dev/null 2>&1 && psql_q -d "$whole_db" -c "CREATE EXTENSION mnemo" >/dev/null
"$M" --db "dbname=$whole_db" import "$LOG" --quiet >/dev/null 2>&1
want=$(psql_q -d "$whole_db" -c "SELECT count(*) FROM mnemo.messages WHERE session_id = '$SID'")
# what the first 150 lines make
head -n 150 "$LOG" >"$work/part.jsonl"
"$M" --db "dbname=$whole_db" import "$work/part.jsonl" --new-ids --session part150 --quiet >/dev/null 2>&1
want150=$(psql_q -d "$whole_db" -c "SELECT count(*) FROM mnemo.messages WHERE session_id = 'part150'")
check "the log makes $want messages, its first 150 lines $want150" test "$want" -gt "$want150" -a "$want150" -gt 0

mkdir -p "$work/logs/project"
F="$work/logs/project/$SID.jsonl"
head -n 150 "$LOG" >"$F"
start
check "the follower imports what the log holds when it starts" wait_for "$SID" "$want150"
check "and prints the session's id" grep -qx "$SID" "$work/f.out"

# line 151 written in two pieces, a pause between them
line=$(sed -n 151p "$LOG")
printf '%s' "${line:0:40}" >>"$F"
sleep 0.3
check "a line half written is not read yet (the follower goes on)" kill -0 "$pid"
printf '%s\n' "${line:40}" >>"$F"
sed -n "152,$((lines / 2))p" "$LOG" >>"$F"
sleep 1
kill -9 "$pid"
wait "$pid" 2>/dev/null
pid=
mid=$(msgs "$SID")
check "killed (-9) in the middle, with more than at the start ($mid)" test "$mid" -gt "$want150"

sed -n "$((lines / 2 + 1)),${lines}p" "$LOG" >>"$F"
start
check "started again, it catches up to the whole log: $want messages" wait_for "$SID" "$want"
sleep 0.3
is "$(msgs "$SID")" "$want" "and adds nothing twice"
d1=$(digest "$PGDATABASE")
d2=$(digest "$whole_db")
check "what it stored is what a one-shot import of the whole log stores" test -n "$d1" -a "$d1" = "$d2"
is "$(psql_q -c "SELECT count(*) FILTER (WHERE tool_state = 'completed') || '/' || count(*) FROM mnemo.message_parts WHERE session_id = '$SID' AND part_type = 'tool'")" \
	"$(psql_q -d "$whole_db" -c "SELECT count(*) FILTER (WHERE tool_state = 'completed') || '/' || count(*) FROM mnemo.message_parts WHERE session_id = '$SID' AND part_type = 'tool'")" \
	"every tool call paired as in the one-shot import"

# a second log in the folder: found and followed
cp "$CODEX" "$work/logs/project/rollout-1.jsonl"
check "a log that appears in the folder is followed" wait_for 019a2f00-1c2d-7e51-840f-580cd7992d50 9

# rotation: the log replaced by another file under its name
mv "$work/logs/project/rollout-1.jsonl" "$work/rotated.jsonl"
sed 's/019a2f00-1c2d-7e51-840f-580cd7992d50/019a2f00-0000-7e51-840f-580cd7992d50/' "$CODEX" \
	>"$work/logs/project/rollout-1.jsonl"
check "a log rotated (replaced under its name) is read as the new file" \
	wait_for 019a2f00-0000-7e51-840f-580cd7992d50 9

kill -TERM "$pid"
stopped=1
for _ in $(seq 50); do
	kill -0 "$pid" 2>/dev/null || {
		stopped=0
		break
	}
	sleep 0.1
done
wait "$pid"
rc=$?
pid=
check "SIGTERM stops it, exit 0 ($rc)" test "$stopped" = 0 -a "$rc" = 0
check "saying so" grep -q "^mnemo: stopped following" "$work/f.err"

# a grown log imported again by hand
head -n 200 "$LOG" >"$work/grow.jsonl"
run_m --db "dbname=$whole_db" import "$LOG"
expect_rc 0 "the whole log imported again into the session it made: exit 0"
check "says 0 new" grep -q "^mnemo: $SID: 0 new" "$work/err"
"$M" --db "dbname=$whole_db" import "$work/grow.jsonl" --quiet >/dev/null 2>&1
is "$(psql_q -d "$whole_db" -c "SELECT count(*) FROM mnemo.messages WHERE session_id = '$SID'")" "$want" \
	"a shorter copy of it adds nothing"
db2="${whole_db}2"
createdb "$db2" >/dev/null 2>&1 && psql_q -d "$db2" -c "CREATE EXTENSION mnemo" >/dev/null
"$M" --db "dbname=$db2" import "$work/grow.jsonl" --quiet >/dev/null 2>&1
grown=$(psql_q -d "$db2" -c "SELECT count(*) FROM mnemo.messages WHERE session_id = '$SID'")
run_m --db "dbname=$db2" import "$LOG"
expect_rc 0 "a log imported at 200 lines, then whole: exit 0"
check "says how many are new ($((want - grown)))" grep -q "^mnemo: $SID: $((want - grown)) new" "$work/err"
d1=$(digest "$db2")
check "and the session is the whole log's" test -n "$d1" -a "$d1" = "$d2"
dropdb --if-exists "$db2" >/dev/null 2>&1

run_m import --follow "$work/logs" --session x
expect_rc 2 "--follow with --session is a usage error"
run_m import --follow "$work/nowhere"
expect_rc 1 "--follow of a path that does not exist"

echo "1..$n"
[ "$failed" -eq 0 ]
