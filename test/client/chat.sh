#!/usr/bin/env bash
# mnemo chat through a pipe against the scripted provider server: the reply
# streams to stdout while the turn is still open, every message is stored,
# a tool call is printed and answered, --session resumes with the system
# prompt (as the next request's body shows), a dead turn is marked
# interrupted on resume, compaction is announced, and the usage errors.
#
# Run by test/client/run.sh with MNEMO_BIN (the sanitized mnemo) and
# PGDATABASE (a fresh database with the extension); prints TAP.
# MNEMO_PROVIDER_SERVER: the provider-server binary (built here if unset).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1

M=${MNEMO_BIN:?MNEMO_BIN is the mnemo command to test}
SRV=${MNEMO_PROVIDER_SERVER:-}
if [ -z "$SRV" ]; then
	make -s -C test/provider_server >/dev/null 2>&1 || { echo "Bail out! cannot build test/provider_server"; exit 1; }
	SRV=$PWD/test/provider_server/provider-server
fi
work=$(mktemp -d /tmp/mnemo-chat.XXXXXX)
srv_pid=
chat_pid=
cleanup() {
	[ -n "$chat_pid" ] && kill -KILL "$chat_pid" 2>/dev/null
	[ -n "$srv_pid" ] && kill -TERM "$srv_pid" 2>/dev/null && wait "$srv_pid" 2>/dev/null
	[ -n "${csrv_pid:-}" ] && kill -TERM "$csrv_pid" 2>/dev/null && wait "$csrv_pid" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT

# shellcheck source=lib/tap.sh
. test/client/lib/tap.sh
# chat INPUT ARGS...: mnemo chat fed INPUT; stdout, stderr in $work/out, err
chat() {
	local input=$1
	shift
	printf '%s' "$input" | "$M" chat "$@" >"$work/out" 2>"$work/err"
	rc=$?
}
# the request body the server logged for request N (one JSON line each)
request_body() { sed -n "${1}p" "$work/chat.log"; }

cat >"$work/chat.script" <<'EOF'
model gpt-4o-mini

reply first                      # 1: plain text in pieces, odd wire chunks
  text "Hello from the script, wörld." pieces=6
  chunks random seed=7 max=5
  usage input=31 output=7

reply resumed                    # 2: the resumed session's turn
  text "Welcome back."

reply tool                       # 3: a tool call
  text "Let me look."
  tool bash "{\"cmd\":\"ls -la\"}" id=call_ls split=0,4

reply after-tool                 # 4: after the tool's (error) result
  text "No tools here, fine."

reply slow                       # 5: two events, a pause, then the rest
  text "early " "late"
  stall at=2 seconds=3 then=continue

reply failing                    # 6: an error event mid-stream
  text "Partial"
  mid_error at=2

reply recovered                  # 7: the next line still gets its turn
  text "Recovered."

reply interrupted                # 8: stalls until Ctrl-C cancels it
  text "before" " after"
  stall at=2 seconds=30

reply after-cancel               # 9: the chat goes on after the cancel
  text "After the cancel."

reply imported-system            # 10: a session whose log has a system message
  text "Understood."
EOF

# serve NAME: a provider server on $work/NAME.script; its port in
# $work/NAME.port, its request log $work/NAME.log, its pid in $served
serve() {
	"$SRV" --script "$work/$1.script" --port-file "$work/$1.port" --log "$work/$1.log" \
		--key sk-chat-test --quiet 2>"$work/$1.err" &
	served=$!
	for _ in $(seq 100); do [ -s "$work/$1.port" ] && break; sleep 0.05; done
	if [ ! -s "$work/$1.port" ]; then
		echo "Bail out! the provider server did not start"
		exit 1
	fi
}
serve chat
srv_pid=$served
unset ANTHROPIC_API_KEY ANTHROPIC_BASE_URL
export OPENAI_BASE_URL=http://127.0.0.1:$(cat "$work/chat.port")/v1 OPENAI_API_KEY=sk-chat-test

# ---- a new session: the reply streams and is stored ---------------------

chat $'hi there\n' --provider openai --model gpt-4o-mini --system "You are terse."
is "$rc" 0 "mnemo chat through a pipe exits 0 at the end of input"
is "$(cat "$work/out")" "Hello from the script, wörld." "the streamed reply is printed on stdout, whole, once"
sid=$(sed -n 's/^session \([^ ]*\) created:.*/\1/p' "$work/err")
if [ -n "$sid" ]; then ok "the new session's id is printed on stderr ($sid)"; else not_ok "no session id on stderr"; sed 's/^/# /' "$work/err"; fi
is "$(psql_q -c "SELECT system_prompt || '|' || provider_id || '|' || model_id FROM mnemo.sessions WHERE id = '$sid'")" \
	"You are terse.|openai|gpt-4o-mini" "the session is stored with its system prompt, provider and model"
is "$(psql_q -c "SELECT string_agg(seq || ':' || role || ':' || (parts->0->>'text'), ',' ORDER BY seq) FROM mnemo.get_messages_with_parts('$sid')")" \
	"1:user:hi there,2:assistant:Hello from the script, wörld." "the user line and the whole reply are stored, in order"
is "$(psql_q -c "SELECT finish_reason || ' ' || tokens_input || ' ' || tokens_output FROM mnemo.messages WHERE session_id = '$sid' AND role = 'assistant'")" \
	"stop 31 7" "the reply's finish reason and usage are recorded"
if request_body 1 | grep -q '"messages":\[{"role":"system","content":"You are terse."},{"role":"user","content":"hi there"}\]'; then
	ok "the request carried the system prompt and the user line"
else
	not_ok "the first request's messages"; request_body 1 | cut -c1-400 | sed 's/^/# /'
fi
if grep -q sk-chat-test "$work/out" "$work/err"; then not_ok "the key shows in the output"; else ok "the key is never printed"; fi

# ---- resume: the system prompt and the history go with the next turn ----

chat $'and again\n' --session "$sid"
is "$rc" 0 "mnemo chat --session resumes (exit 0)"
is "$(cat "$work/out")" "Welcome back." "the resumed chat streams the next reply"
if grep -q "^session $sid resumed: 2 messages, provider openai, model gpt-4o-mini" "$work/err"; then
	ok "the resumed session is announced with its message count, provider and model"
else
	not_ok "the resume line"; sed 's/^/# /' "$work/err"
fi
if request_body 2 | grep -q '"messages":\[{"role":"system","content":"You are terse."},{"role":"user","content":"hi there"},{"role":"assistant","content":"Hello from the script, wörld."},{"role":"user","content":"and again"}\]' &&
	request_body 2 | grep -q '"model":"gpt-4o-mini"'; then
	ok "the resumed turn sends the stored system prompt, the history and the session's model"
else
	not_ok "the resumed request's messages"; request_body 2 | cut -c1-600 | sed 's/^/# /'
fi
is "$(psql_q -c "SELECT count(*) FROM mnemo.messages WHERE session_id = '$sid'")" 4 "the resumed turn is stored in the same session"

# ---- a tool call: printed, answered with an error result, sent back -----

chat $'list the files\nthen?\n' --session "$sid"
is "$rc" 0 "a turn with a tool call, then another (exit 0)"
is "$(cat "$work/out")" $'Let me look.\n[tool bash {"cmd":"ls -la"}]\nNo tools here, fine.' \
	"the tool call is printed with its name and input between the text"
is "$(psql_q -c "SELECT tool_state || '|' || (content->>'error_message') FROM mnemo.message_parts p JOIN mnemo.messages m ON m.session_id = p.session_id AND m.seq = p.seq WHERE m.session_id = '$sid' AND p.part_type = 'tool'" 2>&1)" \
	"error|mnemo chat runs no tools" "the tool part is stored and closed with an error result"
if request_body 4 | grep -q '{"role":"tool","tool_call_id":"call_ls","content":"mnemo chat runs no tools"}'; then
	ok "the next request carries the tool's result"
else
	not_ok "the tool result in the next request"; request_body 4 | cut -c1-800 | sed 's/^/# /'
fi

# ---- streaming: the first delta is on stdout while the turn is open -----

mkfifo "$work/in"
"$M" chat --session "$sid" <"$work/in" >"$work/slow.out" 2>"$work/slow.err" &
chat_pid=$!
exec 3>"$work/in"
echo "slow please" >&3
for _ in $(seq 40); do grep -q "early" "$work/slow.out" && break; sleep 0.05; done
if grep -q "early" "$work/slow.out" && ! grep -q "late" "$work/slow.out"; then
	ok "the first delta is printed before the rest of the reply has arrived"
else
	not_ok "streaming: stdout after 2 s: '$(cat "$work/slow.out")'"
fi
exec 3>&-
wait "$chat_pid"
rc=$?
chat_pid=
is "$rc:$(cat "$work/slow.out")" "0:early late" "then the rest streams and the chat ends at the end of input"

# ---- compaction: announced, and the engine runs --------------------------

# A server of its own: the compaction engine asks the model for summaries,
# as many as it takes, which the main script's order cannot foresee.
cat >"$work/compact.script" <<'EOF'
model gpt-4o-mini

reply repeat=200                 # turns and the engine's summaries alike
  text "## Goal\nchat summary"
EOF
serve compact
csrv_pid=$served
# usable = 8300 - 4096 - 4000 - system prompt: about 200 tokens, soft 60%
chat "$(printf 'x%.0s' $(seq 600))"$'\n' --session "$sid" --context-limit 8300 \
	--base-url "http://127.0.0.1:$(cat "$work/compact.port")/v1"
is "$rc" 0 "a turn over the soft threshold completes (exit 0)"
if grep -q "compaction triggered" "$work/err"; then
	ok "the compaction it triggers is announced on stderr"
else
	not_ok "no compaction line on stderr"; sed 's/^/# /' "$work/err"
fi
# mnemo chat runs the default engine (not a prune-only hook): ten turns in a
# small window, beyond the engine's fresh tail of 8 messages, get summarised
lines=$(for i in $(seq 10); do printf 'line %02d %s\n' "$i" "$(printf 'y%.0s' $(seq 30))"; done)
chat "$lines"$'\n' --provider openai --model gpt-4o-mini --context-limit 8250 \
	--base-url "http://127.0.0.1:$(cat "$work/compact.port")/v1"
kill -TERM "$csrv_pid" 2>/dev/null && wait "$csrv_pid" 2>/dev/null
csrv_pid=
csid=$(sed -n 's/^session \([^ ]*\) created:.*/\1/p' "$work/err")
is "$rc" 0 "a chat over its context limit, ten turns (exit 0)"
# the chat may end while its background compaction waits on the model:
# closing the store stops it (no summary then), and its claim goes with it
is "$(psql_q -c "SELECT count(*) FROM mnemo.compaction_claims WHERE session_id = '$csid'")" "0" \
	"mnemo chat compacts with the engine: no claim is left once it exits"
is "$(psql_q -c "SELECT count(*) FILTER (WHERE role = 'user') || ',' || count(*) FILTER (WHERE finish_reason = 'stop') FROM mnemo.messages WHERE session_id = '$csid'")" "10,10" \
	"every line and its reply are in the log (compaction summarises, it deletes nothing)"
if grep -q "Summar\|summar" "$work/compact.log"; then
	ok "the engine asked the chat's model for a summary"
else
	not_ok "no summary request"; cut -c1-300 "$work/compact.log" | sed 's/^/# /'
fi

# ---- a failed turn keeps what streamed, the chat goes on, exit 1 -------

chat $'fail now\nand now?\n' --session "$sid"
is "$rc" 1 "a turn that fails mid-stream makes the exit status 1"
is "$(cat "$work/out")" $'Partial\nRecovered.' "what streamed is printed, and the next line gets its turn"
is "$(psql_q -c "SELECT string_agg(finish_reason, ',' ORDER BY seq) FROM mnemo.messages WHERE session_id = '$sid' AND role = 'assistant' AND seq > 12")" \
	"error,stop" "the failed reply is stored with finish reason error, the next one normally"

# ---- Ctrl-C cancels the streaming reply, the chat goes on ---------------

# what the session holds so far (messages, and the summaries compaction made)
mark=$(psql_q -c "SELECT max(seq) FROM mnemo.messages WHERE session_id = '$sid'")

# job control: a background job gets SIGINT's default disposition, not the
# ignore a non-interactive shell gives it
set -m
rm -f "$work/in"
mkfifo "$work/in"
"$M" chat --session "$sid" <"$work/in" >"$work/int.out" 2>"$work/int.err" &
chat_pid=$!
exec 3>"$work/in"
echo "stall please" >&3
for _ in $(seq 100); do grep -q "before" "$work/int.out" && break; sleep 0.05; done
started=$(date +%s)
kill -INT "$chat_pid"
echo "go on" >&3
for _ in $(seq 100); do grep -q "After the cancel." "$work/int.out" && break; sleep 0.05; done
exec 3>&-
wait "$chat_pid"
rc=$?
chat_pid=
set +m
if [ $(($(date +%s) - started)) -lt 10 ]; then
	ok "Ctrl-C stops a stalled reply at once (not after the server's 30 s)"
else
	not_ok "Ctrl-C took $(($(date +%s) - started)) s"
fi
is "$rc:$(cat "$work/int.out")" $'1:before\nAfter the cancel.' \
	"what streamed is printed, the next line gets its turn, and the exit status says a turn failed"
is "$(psql_q -c "SELECT string_agg(m.finish_reason || ':' || coalesce(p.content->>'text', ''), ',' ORDER BY m.seq) FROM mnemo.messages m LEFT JOIN mnemo.message_parts p ON p.session_id = m.session_id AND p.seq = m.seq AND p.part_type = 'text' WHERE m.session_id = '$sid' AND m.role = 'assistant' AND m.seq > $mark")" \
	"cancelled:before,stop:After the cancel." "the cancelled reply is stored with what streamed, finish reason cancelled"

# ---- a dead turn is marked interrupted on resume ------------------------

dead=$(psql_q -c "SELECT id FROM mnemo.create_session('chat_dead', provider_id => 'openai', model_id => 'gpt-4o-mini', system_prompt => 'Be brief.')")
psql_q -c "SELECT mnemo.append_message('chat_dead', 'user', '[{\"type\":\"text\",\"text\":\"q\"}]')" >/dev/null
psql_q -c "SELECT mnemo.append_message('chat_dead', 'assistant', '[]', id => 'dead_reply')" >/dev/null
chat "" --session "$dead"
is "$rc" 0 "resuming a session with empty input exits 0"
is "$(psql_q -c "SELECT finish_reason FROM mnemo.messages WHERE id = 'dead_reply'")" "interrupted" \
	"a reply left without finish reason by a dead turn is marked interrupted on resume"

# ---- errors --------------------------------------------------------------

chat $'hi\n' --session no_such_session
is "$rc" 3 "an unknown --session exits 3"
chat $'hi\n' --provider gemini
is "$rc" 2 "an unknown --provider is a usage error (exit 2)"
chat $'hi\n' stray
is "$rc" 2 "a stray argument is a usage error (exit 2)"
OPENAI_API_KEY='' OPENAI_BASE_URL='' chat $'hi\n'
if [ "$rc" -eq 1 ] && grep -q "no provider" "$work/err"; then
	ok "no key and no --provider: exit 1 saying so"
else
	not_ok "no key: exit $rc"; sed 's/^/# /' "$work/err"
fi
before=$(psql_q -c "SELECT count(*) FROM mnemo.sessions")
"$M" --db "host=/nonexistent/socket" chat --provider openai </dev/null >/dev/null 2>&1
is "$?" 4 "no database connection exits 4"
is "$(psql_q -c "SELECT count(*) FROM mnemo.sessions")" "$before" "failed starts create no session"
"$M" chat --help >"$work/out"
if grep -q "Usage: mnemo chat" "$work/out" && "$M" --help | grep -q "^  chat "; then
	ok "mnemo chat --help, and chat is listed by mnemo --help"
else
	not_ok "help"
fi

# ---- a system message of an imported transcript is sent as system ------

printf '[{"role": "system", "content": "Answer in French."}, {"role": "user", "content": "hello"}, {"role": "assistant", "content": "bonjour"}]\n' >"$work/sys.json"
sys_sid=$("$M" import "$work/sys.json" --quiet 2>"$work/err")
chat $'and now?\n' --session "$sys_sid" --provider openai --model gpt-4o-mini
is "$rc" 0 "a chat on an imported session with a system message"
if request_body 10 | grep -q '"messages":\[{"role":"system","content":"Answer in French."},{"role":"user","content":"hello"},{"role":"assistant","content":"bonjour"},{"role":"user","content":"and now?"}\]'; then
	ok "the system message went as the system message, not as a user turn"
else
	not_ok "the system message in the request"; request_body 10 | cut -c1-600 | sed 's/^/# /'
fi

echo "1..$n"
[ "$failed" -eq 0 ]
