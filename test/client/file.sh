#!/usr/bin/env bash
# mnemo file PATH [--session S] [--threshold N]: inline below the threshold,
# the reference and its summary above it, the cache on a second run, the
# file attached to a session and rendered by build_context, binary and
# missing files, usage errors.
#
# Run by test/client/run.sh with MNEMO_BIN (the sanitized mnemo) and
# PGDATABASE (a fresh database with the extension); prints TAP.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1

M=${MNEMO_BIN:?MNEMO_BIN is the mnemo command to test}
work=$(mktemp -d /tmp/mnemo-file.XXXXXX)
trap 'rm -rf "$work"' EXIT

# shellcheck source=lib/tap.sh
. test/client/lib/tap.sh

PY=test/data/file-parser.py
id="sha256:$(sha256sum "$PY" | cut -c1-64)"

run_m file "$PY"
expect_rc 0 "a small file with the default threshold"
check "below 10000 tokens it is inline" grep -q "^inline: [0-9]* tokens (below the threshold of 10000)$" "$work/out"
check "an inline file stores nothing" test "$(psql_q -c 'SELECT count(*) FROM mnemo.file_references')" = 0

run_m file "$PY" --threshold 10
expect_rc 0 "--threshold 10: a reference"
check "it prints the sha256 content id" grep -qx "content_id: $id" "$work/out"
check "the type" grep -qx "type: python" "$work/out"
check "a miss the first time" grep -qx "cached: no" "$work/out"
check "the summary's outline" grep -qx "Functions (2): main, serve" "$work/out"
run_m file "$PY" --threshold 10
check "a hit the second time" grep -qx "cached: yes" "$work/out"
check "one row stored" test "$(psql_q -c 'SELECT count(*) FROM mnemo.file_references')" = 1

psql_q -c "SELECT FROM mnemo.create_session('s1')" >/dev/null
run_m file "$PY" --threshold 10 --session s1
expect_rc 0 "--session s1 attaches it"
check "it prints the message it appended" grep -qE "^attached: [^ ]+ \(seq 1\)$" "$work/out"
check "the part is a file_ref with the content id" \
	test "$(psql_q -c "SELECT content->>'content_id' FROM mnemo.message_parts WHERE session_id = 's1' AND part_type = 'file_ref'")" = "$id"
check "build_context renders the [FILE: ...] block" \
	test "$(psql_q -c "SELECT count(*) FROM mnemo.build_context('s1', 100000) c WHERE c.content LIKE '[FILE: $PY]' || chr(10) || 'Content-ID: $id' || chr(10) || '%'")" = 1

run_m file "$PY" --session no-such-session
expect_rc 3 "a missing session"
printf 'GIF89a\0\0\0' >"$work/image.gif"
run_m file "$work/image.gif"
expect_rc 1 "a binary file is refused"
check "the message says binary" grep -q "binary" "$work/err"
run_m file "$work/nothing-here.txt"
expect_rc 1 "a missing file"
run_m file
expect_rc 2 "no path: a usage error"
run_m file "$PY" --threshold 0
expect_rc 2 "--threshold 0: a usage error"
run_m file --help
expect_rc 0 "file --help"
check "--help names --session and --threshold" grep -q -- "--session SESSION.*--threshold N" "$work/out"

echo "1..$n"
[ "$failed" -eq 0 ]
