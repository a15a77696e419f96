#!/usr/bin/env bash
# test/provider_server/test.sh: TAP test of provider-server, through curl.
#
#   bash test/provider_server/test.sh        builds it first (make -C)
#   PROVIDER_SERVER=/path/to/bin bash ...    tests that binary instead
#
# Each check starts the server on a script written here, talks to it with
# `curl -sN --no-buffer` as a client would, and asserts the bytes on the
# wire: the PROVIDERS.md examples byte for byte, status lines, headers,
# chunked framing, stalls, drops, the request log, the port-file handshake
# and the clean stop on SIGTERM (those from stalls on: test_wire.sh, sourced
# at the end).  Prints "ok N - ..." / "not ok N - ...",
# ends with a plan line, exits non-zero if anything failed.  Needs bash,
# curl and coreutils; about 15 s.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
bin=${PROVIDER_SERVER:-$here/provider-server}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/provider-server-test.XXXXXX")
pids=()

n=0
nfail=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); nfail=$((nfail + 1)); echo "not ok $n - $1"; }
diag() { sed 's/^/#   /'; }

cleanup() {
	local p
	for p in "${pids[@]}"; do
		kill -TERM "$p" 2>/dev/null
	done
	wait 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

# is GOT EXPECTED DESCRIPTION
is() {
	if [ "$1" = "$2" ]; then
		ok "$3"
	else
		not_ok "$3"
		printf 'got:      %s\nexpected: %s\n' "$1" "$2" | diag
	fi
}

# same_file GOT_FILE EXPECTED_FILE DESCRIPTION: byte for byte
same_file() {
	if cmp -s "$1" "$2"; then
		ok "$3"
	else
		not_ok "$3"
		diff <(cat -A "$2") <(cat -A "$1") | head -20 | diag
	fi
}

# has FILE FIXED_STRING DESCRIPTION / hasnt ...
has() {
	if grep -qF -- "$2" "$1"; then ok "$3"; else
		not_ok "$3"
		{ echo "missing: $2"; head -c 2000 "$1"; echo; } | diag
	fi
}
hasnt() {
	if ! grep -qF -- "$2" "$1"; then ok "$3"; else
		not_ok "$3"
		grep -F -- "$2" "$1" | head -5 | diag
	fi
}

ms() { date +%s%3N; }

# hex FILE: the bytes as one hex string, for matching binary framing
hex() { od -An -tx1 -v "$1" | tr -d ' \n'; }

if ! command -v curl >/dev/null; then
	echo "Bail out! curl is needed (apt-get install curl)"
	exit 1
fi

# ---- building ---------------------------------------------------------------

# Both builds must compile warning-free; the tests run the AddressSanitizer
# and UBSan one, so a memory error in the server fails here rather than
# making a client test flaky.
if [ -z "${PROVIDER_SERVER:-}" ]; then
	for variant in "" SANITIZE=1; do
		if make -s -C "$here" $variant >"$tmp/build.out" 2>&1; then
			ok "provider-server builds with -Wall -Wextra -Werror ${variant:-(plain)}"
		else
			not_ok "provider-server builds with -Wall -Wextra -Werror ${variant:-(plain)}"
			diag <"$tmp/build.out"
			echo "1..$n"
			exit 1
		fi
	done
	bin=$here/build-asan/provider-server
fi

# ---- starting and stopping ----------------------------------------------------

# start NAME [server options...]: serve $tmp/NAME.script; sets PORT SPID LOG
start() {
	local name=$1
	shift
	SERVER=$name
	rm -f "$tmp/$name.port" "$tmp/$name.log"
	"$bin" --script "$tmp/$name.script" --port-file "$tmp/$name.port" \
		--log "$tmp/$name.log" --quiet "$@" 2>"$tmp/$name.err" &
	SPID=$!
	pids+=("$SPID")
	LOG=$tmp/$name.log
	for _ in $(seq 100); do
		[ -s "$tmp/$name.port" ] && break
		kill -0 "$SPID" 2>/dev/null || break
		sleep 0.05
	done
	PORT=$(cat "$tmp/$name.port" 2>/dev/null)
	if [ -z "$PORT" ]; then
		echo "# server $name did not start:"
		diag <"$tmp/$name.err"
	fi
}

# stop: SIGTERM; the exit status in STOP_RC.  Checks that the server exited
# 0 and that its stderr holds no sanitizer report (test.sh runs the ASan
# build unless told otherwise).
stop() {
	kill -TERM "$SPID" 2>/dev/null
	wait "$SPID"
	STOP_RC=$?
	local err=$tmp/$SERVER.err
	if [ "$STOP_RC" = 0 ] && ! grep -qE 'Sanitizer|runtime error' "$err" 2>/dev/null; then
		ok "server $SERVER: stopped by SIGTERM, exit 0, no sanitizer report"
	else
		not_ok "server $SERVER: stopped by SIGTERM, exit 0, no sanitizer report (exit $STOP_RC)"
		head -40 "$err" | diag
	fi
}

OKEY=sk-test-openai-7f3c9a1e
AKEY=sk-ant-test-2b81e4d0
OA_BODY='{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"stream":true,"stream_options":{"include_usage":true}}'
OA_BODY_NOUSAGE='{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"stream":true}'
AN_BODY='{"model":"claude-sonnet-4-5","max_tokens":1024,"messages":[{"role":"user","content":"hi"}],"stream":true}'

# oa BODY [curl options...] / an BODY [curl options...]: one request, the
# body on stdout; curl's exit status is the function's.
oa() {
	local body=$1
	shift
	curl -sN --no-buffer "$@" -H "Authorization: Bearer $OKEY" \
		-H 'Content-Type: application/json' --data-binary "$body" \
		"http://127.0.0.1:$PORT/v1/chat/completions"
}
an() {
	local body=$1
	shift
	curl -sN --no-buffer "$@" -H "x-api-key: $AKEY" -H 'anthropic-version: 2023-06-01' \
		-H 'content-type: application/json' --data-binary "$body" \
		"http://127.0.0.1:$PORT/v1/messages"
}

# ---- the scripts shipped with the server load --------------------------------

for s in "$here"/scripts/*.script; do
	if out=$("$bin" --script "$s" --check 2>&1); then
		ok "script $(basename "$s") loads ($out)"
	else
		not_ok "script $(basename "$s") loads"
		echo "$out" | diag
	fi
done

# The example script in doc/wire-formats.md ("Scripts") loads too.
doc="$here/../../doc/wire-formats.md"
awk '/^```/ { if (inb) { inb = 0 } else { inb = 1; first = 1 }; next }
	inb && first { first = 0; keep = ($0 == "# a provider-server script (test.sh loads this example)") }
	inb && keep { print }' "$doc" >"$tmp/doc.script"
if [ ! -s "$tmp/doc.script" ]; then
	not_ok "the example script in doc/wire-formats.md is there (a fence opening with its marker line)"
elif out=$("$bin" --script "$tmp/doc.script" --check 2>&1); then
	ok "the example script in doc/wire-formats.md loads ($out)"
else
	not_ok "the example script in doc/wire-formats.md loads"
	echo "$out" | diag
fi

# ---- a bad script is refused with file:line -----------------------------------

printf 'reply\n  text "a"\n  chunks 1,x\n' >"$tmp/bad.script"
out=$("$bin" --script "$tmp/bad.script" --check 2>&1)
rc=$?
is "$rc" 2 "a malformed script exits 2"
case $out in
*bad.script:3:*) ok "and names the file and line ($out)" ;;
*) not_ok "and names the file and line"; echo "$out" | diag ;;
esac
printf 'reply\n  txet "a"\n' >"$tmp/bad2.script"
out=$("$bin" --script "$tmp/bad2.script" --check 2>&1)
case $out in
*"unknown directive 'txet'"*) ok "an unknown directive is an error, not ignored" ;;
*) not_ok "an unknown directive is an error"; echo "$out" | diag ;;
esac

# ---- PROVIDERS.md, byte for byte -----------------------------------------------

# The committed expected/*.sse are the fenced blocks of shared/PROVIDERS.md;
# when the document is reachable, check they still are.
providers_md=
for f in "$here/../../../shared/PROVIDERS.md" "$here/../../shared/PROVIDERS.md"; do
	[ -f "$f" ] && providers_md=$f && break
done
if [ -n "$providers_md" ]; then
	awk -v dir="$tmp" '/^```/ { if (inb) { inb = 0; k++ } else { inb = 1; f = dir "/md_block" (k + 1); printf "" > f }; next }
		inb { print >> f }' "$providers_md"
	i=1
	for e in openai_text openai_tool anthropic_text anthropic_tool_tail; do
		same_file "$tmp/md_block$i" "$here/expected/$e.sse" "expected/$e.sse is block $i of PROVIDERS.md"
		i=$((i + 1))
	done
else
	for e in openai_text openai_tool anthropic_text anthropic_tool_tail; do
		ok "expected/$e.sse against PROVIDERS.md # SKIP shared/PROVIDERS.md not found"
	done
fi

cp "$here/scripts/providers_md.script" "$tmp/md.script"
start md
oa "$OA_BODY" -D "$tmp/h1" >"$tmp/o1"
same_file "$tmp/o1" "$here/expected/openai_text.sse" "OpenAI text reply: the PROVIDERS.md bytes exactly"
oa "$OA_BODY" >"$tmp/o2"
same_file "$tmp/o2" "$here/expected/openai_tool.sse" "OpenAI tool-call reply: the PROVIDERS.md bytes exactly"
an "$AN_BODY" -D "$tmp/h3" >"$tmp/o3"
same_file "$tmp/o3" "$here/expected/anthropic_text.sse" "Anthropic text reply: the PROVIDERS.md bytes exactly"
an "$AN_BODY" >"$tmp/o4"
tail -c "$(wc -c <"$here/expected/anthropic_tool_tail.sse")" "$tmp/o4" >"$tmp/o4.tail"
same_file "$tmp/o4.tail" "$here/expected/anthropic_tool_tail.sse" "Anthropic tool_use block: ends with the PROVIDERS.md bytes exactly"
is "$(head -c 21 "$tmp/o4")" "event: message_start" "and the stream it ends starts with message_start"
has "$tmp/h1" "HTTP/1.1 200 OK" "a stream's status line is 200 OK"
has "$tmp/h1" "content-type: text/event-stream; charset=utf-8" "content-type is text/event-stream; charset=utf-8"
has "$tmp/h1" "transfer-encoding: chunked" "a stream is sent with chunked transfer encoding"
has "$tmp/h1" "x-request-id: req_1" "OpenAI responses carry x-request-id"
has "$tmp/h3" "request-id: req_3" "Anthropic responses carry request-id"
stop
[ ! -e "$tmp/md.port" ] && ok "and removes its port file" || not_ok "and removes its port file"

# ---- port-file handshake -------------------------------------------------------

cat >"$tmp/pf.script" <<'EOF'
reply
  text "one"
  repeat forever
EOF
start pf
p1=$PORT
s1=$SPID
if [[ $p1 =~ ^[0-9]+$ ]] && [ "$p1" -gt 0 ]; then ok "--port 0 picks a free port and writes it to --port-file ($p1)"; else not_ok "--port-file holds a port"; fi
# the file appears only after listen(): the first request, at once, works
oa "$OA_BODY" >"$tmp/pf1"
is "$?" 0 "a request right after the port file appears is served"
cp "$tmp/pf.script" "$tmp/pf2.script"
start pf2
[ "$PORT" != "$p1" ] && [ -n "$PORT" ] && ok "two servers at once get two ports ($p1, $PORT)" || not_ok "two servers at once get two ports"
stop
SPID=$s1
PORT=$p1
SERVER=pf
start_fixed_port=$PORT
stop
SERVER=fixed
"$bin" --script "$tmp/pf.script" --port "$start_fixed_port" --port-file "$tmp/fixed.port" --quiet 2>"$tmp/fixed.err" &
SPID=$!
pids+=("$SPID")
for _ in $(seq 100); do [ -s "$tmp/fixed.port" ] && break; sleep 0.05; done
is "$(cat "$tmp/fixed.port" 2>/dev/null)" "$start_fixed_port" "--port N listens on N"
stop

# ---- chunking at arbitrary byte boundaries -----------------------------------

cat >"$tmp/ch.script" <<'EOF'
reply sizes
  text "héllo wörld" pieces=3
  chunks 1,5,3
reply random
  id chatcmpl-r
  created 1730000000
  usage input=1 output=1
  text "héllo wörld, ça va? 日本語のテキスト" pieces=7
  chunks random seed=42 max=7
  delay_ms 1
reply bytes
  text "é"
  chunks 1
reply crlf
  text "a" "b"
  line_ending crlf
EOF
"$bin" --script "$tmp/ch.script" --render 1 --include-usage >"$tmp/ch1.want"
"$bin" --script "$tmp/ch.script" --render 2 --include-usage >"$tmp/ch2.want"
start ch
oa "$OA_BODY" --raw >"$tmp/ch1.raw"
printf '1\r\nd\r\n5\r\nata: \r\n3\r\n{"i\r\n1\r\nd\r\n5\r\n":"ch\r\n' >"$tmp/ch1.head"
head -c "$(wc -c <"$tmp/ch1.head")" "$tmp/ch1.raw" >"$tmp/ch1.rawhead"
same_file "$tmp/ch1.rawhead" "$tmp/ch1.head" "chunks 1,5,3: HTTP chunks of 1, 5, 3, 1, 5 ... bytes"
printf '0\r\n\r\n' >"$tmp/term"
tail -c 5 "$tmp/ch1.raw" >"$tmp/ch1.tail"
same_file "$tmp/ch1.tail" "$tmp/term" "the chunked body ends with the 0-size chunk"
oa "$OA_BODY" >"$tmp/ch2.got"
same_file "$tmp/ch2.got" "$tmp/ch2.want" "random chunks (seed 42): the de-chunked body is the rendered stream"
oa "$OA_BODY" --raw >"$tmp/ch3.raw"
case $(hex "$tmp/ch3.raw") in
*310d0ac30d0a310d0aa90d0a*) ok "a chunk boundary falls inside a UTF-8 sequence (é = c3 | a9)" ;;
*) not_ok "a chunk boundary falls inside a UTF-8 sequence" ;;
esac
oa "$OA_BODY" >"$tmp/ch4"
case $(hex "$tmp/ch4") in
*0d0a0d0a*) ok "line_ending crlf: events end in CRLF CRLF" ;;
*) not_ok "line_ending crlf: events end in CRLF CRLF" ;;
esac
case $(hex "$tmp/ch4") in
*7d0a0a*) not_ok "and no bare LF LF is left" ;;
*) ok "and no bare LF LF is left" ;;
esac
stop

# ---- usage only when asked, as the real API ------------------------------------

cat >"$tmp/us.script" <<'EOF'
reply
  text "x"
  usage input=7 output=1
  repeat 2
reply always
  text "x"
  include_usage always
reply never
  text "x"
  include_usage never
EOF
start us
oa "$OA_BODY" >"$tmp/us1"
oa "$OA_BODY_NOUSAGE" >"$tmp/us2"
oa "$OA_BODY_NOUSAGE" >"$tmp/us3"
oa "$OA_BODY" >"$tmp/us4"
has "$tmp/us1" '"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":1,"total_tokens":8}}' "include_usage requested: the usage chunk with empty choices"
hasnt "$tmp/us2" '"usage"' "include_usage not requested: no usage at all"
has "$tmp/us3" '"usage":{' "include_usage always: usage even when not asked (a deviating server)"
hasnt "$tmp/us4" '"usage"' "include_usage never: no usage even when asked (an old server)"
has "$LOG" '"stream":true,"include_usage":true' "the log records include_usage as requested"
stop

# ---- HTTP errors in each provider's exact shape -------------------------------

cat >"$tmp/er.script" <<'EOF'
reply
  error 429 retry_after=2 retry_after_ms=1500
reply
  error 429 code=insufficient_quota
reply
  error 401
reply
  error 400
reply
  error 404
reply
  error 500
reply
  error 503
reply
  error 529
reply
  error 429 retry_after=3
reply
  error 401
reply
  error 400 message="max_tokens: 100000 > 64000, which is the maximum allowed"
reply
  error 500
  should_retry false
EOF
start er
oa "$OA_BODY" -D "$tmp/er1.h" -w '%{http_code}' >"$tmp/er1"
printf '%s' '{"error":{"message":"Rate limit reached for gpt-4o in organization org-test on tokens per min (TPM): Limit 30000, Used 30000, Requested 1200. Please try again in 2.4s.","type":"tokens","param":null,"code":"rate_limit_exceeded"}}429' >"$tmp/er1.want"
same_file "$tmp/er1" "$tmp/er1.want" "OpenAI 429: status and rate_limit_exceeded body"
has "$tmp/er1.h" "retry-after: 2" "429 carries retry-after"
has "$tmp/er1.h" "retry-after-ms: 1500" "429 carries retry-after-ms"
has "$tmp/er1.h" "content-type: application/json; charset=utf-8" "an OpenAI error is application/json"
has "$tmp/er1.h" "content-length: " "an error body has a content-length"
oa "$OA_BODY" -w '%{http_code}' >"$tmp/er2"
has "$tmp/er2" '"type":"insufficient_quota","param":null,"code":"insufficient_quota"}}429' "OpenAI 429 insufficient_quota: its own type and code"
oa "$OA_BODY" -w '%{http_code}' >"$tmp/er3"
has "$tmp/er3" '"type":"invalid_request_error","param":null,"code":"invalid_api_key"}}401' "OpenAI 401: invalid_api_key"
hasnt "$tmp/er3" "$OKEY" "and, unlike the real API, the message does not echo the key"
oa "$OA_BODY" -w '%{http_code}' >"$tmp/er4"
has "$tmp/er4" '"type":"invalid_request_error","param":null,"code":null}}400' "OpenAI 400: invalid_request_error"
oa "$OA_BODY" -w '%{http_code}' >"$tmp/er5"
has "$tmp/er5" '{"error":{"message":"The model `gpt-4o-mini` does not exist or you do not have access to it.","type":"invalid_request_error","param":null,"code":"model_not_found"}}404' "OpenAI 404: model_not_found naming the requested model"
oa "$OA_BODY" -w '%{http_code}' >"$tmp/er6"
has "$tmp/er6" '{"error":{"message":"The server had an error while processing your request. Sorry about that!","type":"server_error","param":null,"code":null}}500' "OpenAI 500: server_error"
oa "$OA_BODY" -w '%{http_code}' >"$tmp/er7"
has "$tmp/er7" '"type":"server_error","param":null,"code":null}}503' "OpenAI 503: server_error"
an "$AN_BODY" -D "$tmp/er8.h" -w '%{http_code}' >"$tmp/er8"
printf '%s' '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_8"}529' >"$tmp/er8.want"
same_file "$tmp/er8" "$tmp/er8.want" "Anthropic 529: overloaded_error, with request_id"
has "$tmp/er8.h" "content-type: application/json" "an Anthropic error is application/json"
has "$tmp/er8.h" "request-id: req_8" "and carries request-id"
an "$AN_BODY" -D "$tmp/er9.h" -w '%{http_code}' >"$tmp/er9"
has "$tmp/er9" '{"type":"error","error":{"type":"rate_limit_error","message":' "Anthropic 429: rate_limit_error"
has "$tmp/er9.h" "retry-after: 3" "Anthropic 429 carries retry-after"
an "$AN_BODY" -w '%{http_code}' >"$tmp/er10"
has "$tmp/er10" '{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"},"request_id":"req_10"}401' "Anthropic 401: authentication_error"
an "$AN_BODY" -w '%{http_code}' >"$tmp/er11"
has "$tmp/er11" '{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: 100000 > 64000, which is the maximum allowed"},"request_id":"req_11"}400' "Anthropic 400 with the script's message"
an "$AN_BODY" -D "$tmp/er12.h" -w '%{http_code}' >"$tmp/er12"
has "$tmp/er12" '{"type":"error","error":{"type":"api_error","message":"Internal server error"},"request_id":"req_12"}500' "Anthropic 500: api_error"
has "$tmp/er12.h" "x-should-retry: false" "should_retry false sends x-should-retry: false"
stop

# ---- requests the real API refuses before any model runs ---------------------

cat >"$tmp/au.script" <<'EOF'
reply first
  text "first"
reply second
  text "second"
EOF
start au --key "$OKEY"
curl -sN -w '%{http_code}' -H 'Content-Type: application/json' --data-binary "$OA_BODY" \
	"http://127.0.0.1:$PORT/v1/chat/completions" >"$tmp/au1"
has "$tmp/au1" '"message":"You didn'"'"'t provide an API key.' "no Authorization: OpenAI's 401 'You didn't provide an API key'"
has "$tmp/au1" '}}401' "with status 401"
curl -sN -w '%{http_code}' -H 'Authorization: Bearer sk-wrong' --data-binary "$OA_BODY" \
	"http://127.0.0.1:$PORT/v1/chat/completions" >"$tmp/au2"
has "$tmp/au2" '"code":"invalid_api_key"}}401' "--key: a different key gets 401 invalid_api_key"
curl -sN -w '%{http_code}' -H "x-api-key: $OKEY" --data-binary "$AN_BODY" \
	"http://127.0.0.1:$PORT/v1/messages" >"$tmp/au3"
has "$tmp/au3" '"message":"anthropic-version: header is required"' "Anthropic without anthropic-version: 400"
curl -sN -w '%{http_code}' -H "x-api-key: $OKEY" -H 'anthropic-version: 2023-06-01' \
	--data-binary '{"model":"claude-sonnet-4-5","messages":[],"stream":true}' \
	"http://127.0.0.1:$PORT/v1/messages" >"$tmp/au4"
has "$tmp/au4" '"message":"max_tokens: Field required"' "Anthropic without max_tokens: 400"
oa '{"model":"gpt-4o-mini","messages":[' -w '%{http_code}' >"$tmp/au5"
has "$tmp/au5" 'We could not parse the JSON body of your request.' "a body that is not JSON: 400"
curl -sN -w '%{http_code}' -H "Authorization: Bearer $OKEY" "http://127.0.0.1:$PORT/v1/models" >"$tmp/au6"
has "$tmp/au6" '"message":"Invalid URL (GET /v1/models)"' "an unknown route: OpenAI's Invalid URL 404"
oa "$OA_BODY" >"$tmp/au7"
has "$tmp/au7" '"content":"first"' "the refused requests used no reply: the next one gets the first"
is "$(grep -c '"reply":null' "$LOG")" 6 "the log marks the six refusals reply null"
has "$LOG" '"note":"no anthropic-version header"' "and says why"
stop

# ---- the request log ----------------------------------------------------------

cat >"$tmp/lg.script" <<'EOF'
reply
  text "a"
  repeat 3
reply
  text "b"
  repeat 2
EOF
start lg --key "$OKEY"
oa "$OA_BODY" >/dev/null
curl -sN -H "x-api-key: $OKEY" -H 'anthropic-version: 2023-06-01' -H 'anthropic-beta: tools-2024-04-04' \
	--data-binary "$AN_BODY" "http://127.0.0.1:$PORT/v1/messages" >/dev/null
printf '{\n  "model": "gpt-4o-mini",\n  "messages": [ {"role": "user", "content": "multi\\nline"} ],\n  "stream": true\n}\n' >"$tmp/pretty.json"
curl -sN -H "Authorization: Bearer $OKEY" --data-binary @"$tmp/pretty.json" \
	"http://127.0.0.1:$PORT/v1/chat/completions" >/dev/null
# two requests on one connection: curl reuses it (keep-alive)
curl -sN -H "Authorization: Bearer $OKEY" --data-binary "$OA_BODY" \
	"http://127.0.0.1:$PORT/v1/chat/completions" "http://127.0.0.1:$PORT/chat/completions" >"$tmp/lg4"
stop
is "$(wc -l <"$LOG")" 5 "one log line per request"
hasnt "$LOG" "$OKEY" "the API key never appears in the log"
has "$LOG" '"authorization":"Bearer [redacted]"' "Authorization: its presence and scheme only"
has "$LOG" '"x-api-key":"[redacted]"' "x-api-key: its presence only"
has "$LOG" '"auth":"bearer","key":"match"' "the log says the OpenAI key matched --key"
has "$LOG" '"auth":"x-api-key","key":"match"' "and the Anthropic one"
has "$LOG" '"anthropic-version":"2023-06-01","anthropic-beta":"tools-2024-04-04"' "anthropic-version and anthropic-beta are logged"
has "$LOG" '"method":"POST","path":"/v1/chat/completions","dialect":"openai"' "method, path and dialect"
has "$LOG" '"path":"/v1/messages","dialect":"anthropic"' "the Anthropic path is the anthropic dialect"
has "$LOG" "\"body\":$OA_BODY}" "the JSON body is embedded as JSON"
has "$LOG" '"body":{"model":"gpt-4o-mini","messages":[{"role":"user","content":"multi\nline"}],"stream":true}}' "a pretty-printed body is logged on one line, minified"
is "$(sed -n 3p "$LOG" | grep -c '"include_usage":false')" 1 "a request without stream_options logs include_usage false"
c4=$(sed -n 4p "$LOG" | sed 's/.*"conn":\([0-9]*\).*/\1/')
c5=$(sed -n 5p "$LOG" | sed 's/.*"conn":\([0-9]*\).*/\1/')
is "$c5" "$c4" "keep-alive: curl's second request came on the same connection"
is "$(sed -n 5p "$LOG" | grep -o '"path":"[^"]*"')" '"path":"/chat/completions"' "/chat/completions (no /v1) is served too"
is "$(grep -o '"reply":[0-9]*' "$LOG" | tr '\n' ' ')" '"reply":1 "reply":1 "reply":1 "reply":2 "reply":2 ' "repeat 3 serves a reply three times, then the next"
has "$tmp/lg4" 'data: [DONE]' "both responses on the kept-alive connection are complete"

# ---- mid-stream errors --------------------------------------------------------

cat >"$tmp/me.script" <<'EOF'
reply
  id chatcmpl-C3
  created 1727346190
  model gpt-4o-2024-08-06
  logprobs
  text "Partial" " more"
  mid_error at=2
reply vllm
  text "Partial"
  mid_error at=2 type=InternalServerError code=500 message="boom" done
reply anthropic
  text "Partial" " more"
  mid_error at=4
EOF
start me
oa "$OA_BODY" >"$tmp/me1"
rc=$?
is "$rc" 0 "OpenAI mid-stream error: the HTTP body itself ends cleanly"
printf '%s\n\n%s\n\n' \
	'data: {"id":"chatcmpl-C3","object":"chat.completion.chunk","created":1727346190,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{"content":"Partial"},"logprobs":null,"finish_reason":null}]}' \
	'data: {"error":{"message":"The server had an error while processing your request. Sorry about that!","type":"server_error","param":null,"code":null}}' >"$tmp/me1.want"
tail -c "$(wc -c <"$tmp/me1.want")" "$tmp/me1" >"$tmp/me1.tail"
same_file "$tmp/me1.tail" "$tmp/me1.want" "OpenAI mid-stream error: the reference's bytes, then the end (no [DONE])"
oa "$OA_BODY" >"$tmp/me2"
has "$tmp/me2" "$(printf 'data: {"error":{"message":"boom","type":"InternalServerError","param":null,"code":500}}\n\ndata: [DONE]\n\n')" "vLLM style: the error, integer code, then [DONE]"
an "$AN_BODY" >"$tmp/me3"
printf 'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n' >"$tmp/me3.want"
tail -c "$(wc -c <"$tmp/me3.want")" "$tmp/me3" >"$tmp/me3.tail"
same_file "$tmp/me3.tail" "$tmp/me3.want" "Anthropic mid-stream error: event: error, overloaded_error, last"
is "$(grep -c '^event: ' "$tmp/me3")" 5 "after exactly the four events before it"
hasnt "$tmp/me3" "message_stop" "and no message_stop"
stop

# the wire's failure modes and the rest: test_wire.sh, in this shell
. "$here/test_wire.sh"

echo "1..$n"
[ "$nfail" -eq 0 ]
