#!/usr/bin/env bash
# The mnemo command's psql manners: connection options anywhere (-d, -h,
# -p, -U, --dbname), DATABASE_URL, --json on the listing commands, search,
# delete and purge, plural-correct messages, range errors that name the
# range, tail unwatching what it watched, and the bash completion (commands,
# options, file names, checkpoint labels, session ids of the database the
# line names).
#
# Run by test/client/run.sh with MNEMO_BIN (the sanitized mnemo) and
# PGDATABASE, PGHOST, PGPORT (a fresh database with the extension); prints TAP.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1

M=${MNEMO_BIN:?MNEMO_BIN is the mnemo command to test}
work=$(mktemp -d /tmp/mnemo-manners.XXXXXX)
tail_pid=
cleanup() {
	[ -n "$tail_pid" ] && kill -KILL "$tail_pid" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT

# shellcheck source=lib/tap.sh
. test/client/lib/tap.sh
json_ok() { python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$1" 2>/dev/null; }

db=$PGDATABASE host=$PGHOST port=$PGPORT user=${PGUSER:-$(id -un)}
psql_q -c "SELECT mnemo.create_session('manners', 'm', 'p', 'a', NULL, 'Manners')" >/dev/null
psql_q -c "SELECT mnemo.append_message('manners', 'user', '[{\"type\":\"text\",\"text\":\"the quick brown fox\"}]')" >/dev/null
psql_q -c "SELECT mnemo.append_message('manners', 'assistant', '[{\"type\":\"text\",\"text\":\"jumps over the lazy dog\"}]')" >/dev/null

# ---- connection options anywhere, and DATABASE_URL ------------------------

env -u PGDATABASE -u PGHOST -u PGPORT "$M" sessions -d "$db" -h "$host" -p "$port" -U "$user" >"$work/out" 2>"$work/err"
rc=$?
expect_rc 0 "-d -h -p -U after the command, with no PG* variables"
check "and the session is listed" grep -q "^manners " "$work/out"
env -u PGDATABASE -u PGHOST -u PGPORT "$M" --host="$host" --port="$port" show manners --dbname="$db" >"$work/out" 2>&1
check "--host= --port= before and --dbname= after the command" grep -q "^session   manners" "$work/out"
env -u PGDATABASE DATABASE_URL="postgresql:///$db?host=$host&port=$port" "$M" sessions >"$work/out" 2>&1
check "DATABASE_URL when no -d is given" grep -q "^manners " "$work/out"
env DATABASE_URL="postgresql:///no_such_db?host=$host&port=$port" "$M" -d "$db" sessions >"$work/out" 2>&1
check "-d wins over DATABASE_URL" grep -q "^manners " "$work/out"
env -u PGDATABASE "$M" sessions -d"$db" >"$work/out" 2>&1
check "-dDB, the value attached, as psql takes it" grep -q "^manners " "$work/out"
run_m sessions -p
expect_rc 2 "-p without a value is a usage error"
run_m -h
expect_rc 0 "-h alone is still help"
check "printing the usage, which names the connection options" grep -q -- "-U, --username USER" "$work/out"

# ---- a list cut by --limit says so ------------------------------------------

psql_q -c "SELECT mnemo.create_session('manners-older', created_at => 1000)" >/dev/null
run_m sessions --limit 1
check "sessions --limit 1 of two: the newest only" test "$(awk 'NR > 1 { print $1 }' "$work/out")" = manners
is "$(cat "$work/err")" "mnemo: 1 session shown, and there are more: --limit N for more" \
	"and stderr says there are more"
run_m sessions --limit 2
is "$(cat "$work/err")" "" "sessions --limit 2 of two: nothing on stderr"
run_m sessions --limit 1 --json
is "$(cat "$work/err")" "" "sessions --limit 1 --json: nothing on stderr"
check "and the array holds one session" \
	bash -c "python3 -c 'import json,sys; assert len(json.load(open(sys.argv[1])))==1' '$work/out'"

# ---- --json on the listing commands -----------------------------------------

run_m sessions --json
check "sessions --json is a JSON array with the session" \
	bash -c "python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); s=[x for x in d if x[\"id\"]==\"manners\"][0]; assert s[\"messages\"]==2 and s[\"title\"]==\"Manners\" and s[\"active\"] is True' '$work/out'"
run_m context manners --budget 1000 --json
check "context --json is a JSON array of the two entries" \
	bash -c "python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert [e[\"role\"] for e in d]==[\"user\",\"assistant\"] and d[0][\"content\"]==\"the quick brown fox\"' '$work/out'"
run_m show manners --json
check "show --json is the export's JSON Lines" \
	bash -c "python3 -c 'import json,sys; l=[json.loads(x) for x in open(sys.argv[1])]; assert l[0][\"type\"]==\"mnemo.session\" and len(l)==3' '$work/out'"

# ---- search -------------------------------------------------------------------

run_m search manners "lazy dog"
expect_rc 0 "mnemo search SESSION QUERY"
check "finds the assistant's message" grep -q "^#2 assistant " "$work/out"
check "and counts hits in the singular" grep -qx "mnemo: 1 hit" "$work/err"
check "not on a terminal: the snippet's words without ts_headline's <b> marks" \
	grep -qx "#2 assistant [^ ]* in context  jumps over the lazy dog" "$work/out"
run_m search manners "lazy dog" --json
check "search --json" bash -c "python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d[0][\"seq\"]==2 and d[0][\"in_context\"] is True' '$work/out'"
check "search --json: the snippet as the server wrote it, marks and all" \
	python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))[0]["snippet"] == "jumps over the <b>lazy</b> <b>dog</b>"' "$work/out"
bold=$'\e[1mlazy\e[0m \e[1mdog\e[0m'
script -qfec "$M search manners 'lazy dog'" /dev/null >"$work/tty.out" 2>&1
check "on a terminal: the matched words bold (ESC[1m ... ESC[0m)" grep -qF "the $bold" "$work/tty.out"
NO_COLOR= script -qfec "$M search manners 'lazy dog'" /dev/null >"$work/tty.out" 2>&1
check "and with NO_COLOR set but empty" grep -qF "the $bold" "$work/tty.out"
NO_COLOR=1 script -qfec "$M search manners 'lazy dog'" /dev/null >"$work/tty.out" 2>&1
check "NO_COLOR=1 on a terminal: the words plain, no escape, no marks" \
	bash -c "grep -q 'in context  jumps over the lazy dog' '$work/tty.out' && ! grep -q \$'\\e' '$work/tty.out'"
psql_q -c "SELECT mnemo.create_session('manners-esc')" \
	-c "SELECT mnemo.append_message('manners-esc', 'user', '[{\"type\":\"text\",\"text\":\"a trap \\u001b[2J here\"}]')" >/dev/null
script -qfec "$M search manners-esc trap" /dev/null >"$work/tty.out" 2>&1
check "a stored escape in the snippet stays visible (\\x1b) beside our bold" \
	grep -qF $'\e[1mtrap\e[0m \\x1b[2J here' "$work/tty.out"
# a tool-heavy session: a snippet from a tool's input reads as text, not as
# the JSON it is stored as
psql_q -c "SELECT mnemo.create_session('manners-tool')" \
	-c "SELECT mnemo.append_message('manners-tool', 'assistant', '[{\"type\":\"tool\",\"tool_name\":\"run\",\"tool_call_id\":\"c1\",\"input\":{\"thought\":\"I will count the lines\",\"command\":\"wc -l README.md\"}}]')" >/dev/null
run_m search manners-tool lines
expect_rc 0 "search in a tool's input"
check "the snippet reads as text: its keys and values, no JSON quotes or braces" \
	bash -c "grep -q 'thought: I will count the lines' '$work/out' && ! grep -q '\"' '$work/out' && ! grep -q '{' '$work/out'"
run_m search manners-tool lines --json
check "--json keeps the snippet as the server wrote it" grep -qF 'thought\": \"I will count the <b>lines</b>' "$work/out"
run_m search no-such-session fox
expect_rc 3 "search of a missing session"
run_m search manners
expect_rc 2 "search without a query"

# a backlog larger than a search reads directly is said, on stderr
psql_q -c "SELECT mnemo.create_session('manners-log')" \
	-c "SELECT count(*) FROM mnemo.append_messages('manners-log', (SELECT jsonb_agg(jsonb_build_object('role', 'user', 'parts', jsonb_build_array(jsonb_build_object('type', 'text', 'text', 'line ' || i)))) FROM generate_series(1, 3000) i))" >/dev/null
run_m search manners-log line --limit 2
expect_rc 0 "mnemo search on a backlog of 3,000 messages"
check "gives the newest at once" grep -q "^#3000 user " "$work/out"
check "and says how many are not yet indexed" grep -q "^mnemo: 2500 messages are not yet indexed" "$work/err"
run_m search manners "lazy dog"
check "a session indexed says nothing of it" bash -c "! grep -q 'not yet indexed' '$work/err'"

# ---- plurals and ranges -------------------------------------------------------

run_m context manners --budget 6
check "context: '1 item', not '1 items'" grep -Eq "^context: budget 6, 1 item \([0-9]+ tokens?, 0 of summaries\) included, 1 item \([0-9]+ tokens?\) left out$" "$work/out"
run_m sessions --limit abc
expect_rc 2 "--limit abc"
check "names the range from 1" grep -q "^mnemo sessions: --limit must be an integer from 1 to 2147483647, not 'abc'" "$work/err"

# ---- tail unwatches what it watched -------------------------------------------

"$M" tail manners >"$work/tail.out" 2>"$work/tail.err" &
tail_pid=$!
for _ in $(seq 100); do [ "$(psql_q -c "SELECT watched FROM mnemo.sessions WHERE id = 'manners'")" = t ] && break; sleep 0.05; done
check "tail watches the session while it runs" test "$(psql_q -c "SELECT watched FROM mnemo.sessions WHERE id = 'manners'")" = t
kill -INT "$tail_pid"
wait "$tail_pid"
rc=$?
tail_pid=
expect_rc 0 "tail ends on SIGINT"
check "and unwatches the session it watched" test "$(psql_q -c "SELECT watched FROM mnemo.sessions WHERE id = 'manners'")" = f
psql_q -c "SELECT mnemo.watch('manners')" >/dev/null
"$M" tail manners >"$work/tail.out" 2>"$work/tail.err" &
tail_pid=$!
sleep 0.5
kill -TERM "$tail_pid"
wait "$tail_pid"
tail_pid=
check "a session watched before tail stays watched after it" \
	test "$(psql_q -c "SELECT watched FROM mnemo.sessions WHERE id = 'manners'")" = t

# ---- delete (soft) and purge (asks) -------------------------------------------

run_m delete manners
expect_rc 0 "mnemo delete"
check "marks the session inactive" test "$(psql_q -c "SELECT is_active FROM mnemo.sessions WHERE id = 'manners'")" = f
check "and keeps its messages" test "$(psql_q -c "SELECT count(*) FROM mnemo.messages WHERE session_id = 'manners'")" = 2
run_m delete no-such-session
expect_rc 3 "delete of a missing session"
setsid "$M" purge manners </dev/null >"$work/out" 2>"$work/err"
rc=$?
expect_rc 1 "purge without a terminal and without --yes refuses"
check "saying to pass --yes" grep -q "pass --yes" "$work/err"
check "and the session is still there" test "$(psql_q -c "SELECT count(*) FROM mnemo.sessions WHERE id = 'manners'")" = 1
script -qfec "$M purge manners" /dev/null >"$work/tty.out" 2>&1 <<<"n"
check "on a terminal it asks" grep -q "Erase session manners and its 2 messages for good? \[y/N\]" "$work/tty.out"
check "and 'n' keeps the session" test "$(psql_q -c "SELECT count(*) FROM mnemo.sessions WHERE id = 'manners'")" = 1
run_m purge manners --yes
expect_rc 0 "purge --yes"
check "erases the session" test "$(psql_q -c "SELECT count(*) FROM mnemo.sessions WHERE id = 'manners'")" = 0
check "saying how many messages" grep -q "purged: 2 messages erased" "$work/err"

# ---- bash completion ------------------------------------------------------------

comp=client/completion/mnemo.bash
if bash -c "source '$comp'; COMP_WORDS=('$M' se); COMP_CWORD=1; _mnemo; printf '%s\n' \"\${COMPREPLY[@]}\"" >"$work/comp" 2>/dev/null &&
	grep -qx sessions "$work/comp" && grep -qx search "$work/comp"; then
	ok "bash completion completes commands from mnemo's help"
else
	not_ok "bash completion of 'mnemo se'"
fi
bash -c "source '$comp'; COMP_WORDS=('$M' import x --f); COMP_CWORD=3; _mnemo; printf '%s\n' \"\${COMPREPLY[@]}\"" >"$work/comp" 2>/dev/null
check "and a command's options from its help" grep -qx -- --format "$work/comp"
psql_q -c "SELECT mnemo.create_session('comp-s')" -c "SELECT mnemo.add_checkpoint('comp-s', 'cp-one')" >/dev/null
bash -c "source '$comp'; COMP_WORDS=('$M' fork comp-s c); COMP_CWORD=3; _mnemo; printf '%s\n' \"\${COMPREPLY[@]}\"" >"$work/comp" 2>/dev/null
check "fork SOURCE completes the source's checkpoint labels" grep -qx cp-one "$work/comp"
bash -c "source '$comp'; COMP_WORDS=('$M' resume comp-s ''); COMP_CWORD=3; _mnemo; printf '%s\n' \"\${COMPREPLY[@]}\"" >"$work/comp" 2>/dev/null
check "and so does resume SESSION" grep -qx cp-one "$work/comp"
# complete WORD...: the completion of the last word, one a line, in $work/comp
complete_words() {
	local words
	printf -v words "'%s' " "$@"
	bash -c "source '$comp'; COMP_WORDS=($words); COMP_CWORD=\$((\${#COMP_WORDS[@]} - 1)); _mnemo; printf '%s\n' \"\${COMPREPLY[@]}\"" >"$work/comp" 2>/dev/null
}
complete_words "$M" file client/completion/mnemo.ba
check "file PATH completes file names" grep -qx client/completion/mnemo.bash "$work/comp"
complete_words "$M" compact comp-s --tail ''
is "$(cat "$work/comp")" "" "compact --tail takes a number: no session ids offered"
complete_words "$M" help se
check "help completes the commands" bash -c "grep -qx sessions '$work/comp' && grep -qx search '$work/comp'"
# complete_line LINE: the completion at the end of LINE, as complete_words,
# from the words bash hands a completion function (without bash-completion,
# which takes '@' out of COMP_WORDBREAKS): split at blanks, and each run of
# the word breaks '=', ':' and '@' a word of its own, so that
# --dbname=postgresql://u@h:5432/db arrives as nine words.
complete_line() {
	local line=$1 words split
	mapfile -t split < <(printf '%s\n' "$line" | grep -oE '[=:@]+|[^[:blank:]=:@]+')
	[[ $line == *[[:blank:]] ]] && split+=('')
	printf -v words "'%s' " "${split[@]}"
	bash -c "source '$comp'; COMP_LINE='$line'; COMP_POINT=${#line}; COMP_WORDS=($words); COMP_CWORD=\$((\${#COMP_WORDS[@]} - 1)); _mnemo; printf '%s\n' \"\${COMPREPLY[@]}\"" >"$work/comp" 2>/dev/null
}
uri="postgresql://$user@localhost:$port/$db?host=$host"
for spelling in "--dbname=$db" "-d$db" "-d $db" "-d $uri" "--dbname=$uri"; do
	PGDATABASE=no_such_database complete_line "$M $spelling show comp-"
	check "session ids of the database named by $spelling" grep -qx comp-s "$work/comp"
done
# complete_quoted WORD...: as complete_words, for words that hold quotes, as
# bash hands them over: quoted as typed, a quoted part never split at a
# word break
complete_quoted() {
	local -a w=("$@")
	bash -c "source '$comp'; $(declare -p w); COMP_WORDS=(\"\${w[@]}\"); COMP_CWORD=\$((\${#w[@]} - 1)); COMP_LINE=\"\${w[*]}\"; COMP_LINE=\${COMP_LINE// = /=}; COMP_POINT=\${#COMP_LINE}; _mnemo; printf '%s\n' \"\${COMPREPLY[@]}\"" >"$work/comp" 2>/dev/null
}
PGDATABASE=no_such_database complete_quoted "$M" -d "'$uri'" show comp-
check "session ids of the database of a quoted URI: -d 'URI'" grep -qx comp-s "$work/comp"
PGDATABASE=no_such_database complete_quoted "$M" -d "\"$uri\"" show comp-
check "-d \"URI\"" grep -qx comp-s "$work/comp"
PGDATABASE=no_such_database complete_quoted "$M" --dbname = "'$uri'" show comp-
check "--dbname='URI'" grep -qx comp-s "$work/comp"
PGDATABASE=no_such_database complete_quoted "$M" "-d'$uri'" show comp-
check "-d'URI'" grep -qx comp-s "$work/comp"
PGDATABASE=no_such_database complete_line "$M -d $uri "
check "the ':' and '@' of a URI do not end -d's value: the command comes next" \
	bash -c "grep -qx sessions '$work/comp' && grep -qx search '$work/comp'"
complete_line "$M -d postgresql://$user@localhost:"
is "$(cat "$work/comp")" "" "a URI being typed is -d's value: nothing offered for it"
psql_q -c "SELECT mnemo.create_session('comp:colon')" >/dev/null
complete_line "$M show comp:c"
is "$(cat "$work/comp")" colon "an id with a ':' completes after the ':', the part of the word bash replaces"

echo "1..$n"
[ "$failed" -eq 0 ]
