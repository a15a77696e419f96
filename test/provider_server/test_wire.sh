# test/provider_server/test_wire.sh: the second half of test.sh, sourced by
# it (its helpers, server and counters): stalls, drops and truncation,
# SIGTERM with a client connected, the deviations of OpenAI-compatible
# servers, Anthropic's extras, big, non-streaming and raw replies, request
# bodies however a client sends them, and many clients at once.
# shellcheck shell=bash

# ---- stall, drop, truncate -----------------------------------------------------

cat >"$tmp/st.script" <<'EOF'
reply stall-long
  text "slow" " reply"
  stall at=2 seconds=30
  repeat 2
reply quick
  text "quick"
reply stall-short
  text "slow" " reply"
  stall at=2 seconds=1
reply stall-keepalive
  text "x"
  stall at=1 seconds=1.2 keepalive_ms=300
reply stall-anthropic-ping
  text "x"
  ping none
  stall at=1 seconds=0.7 keepalive_ms=300
reply drop
  text "cut" " off" " here"
  drop at=3
reply drop-rst
  text "cut" " off" " here"
  drop byte=100 rst
reply truncate
  text "ends" " early"
  truncate at=3
reply wait
  text "late"
  wait_ms 600
reply stall-bytes
  text "abc"
  stall byte=7 seconds=30 then=close
EOF
start st
t0=$(ms)
oa "$OA_BODY" --max-time 1 >"$tmp/st1"
rc=$?
t1=$(ms)
is "$rc" 28 "stall: curl --max-time 1 times out (exit 28) on a stalled stream"
is "$(grep -c '^data: ' "$tmp/st1")" 2 "having received exactly the 2 events before the stall"
[ $((t1 - t0)) -lt 3000 ] && ok "and the timeout, not the server, ended it ($((t1 - t0)) ms)" || not_ok "stall: timed out in time"
# the stalled connection's thread must not hold up other clients
oa "$OA_BODY" --max-time 30 >/dev/null &
bg=$!
sleep 0.2
t0=$(ms)
oa "$OA_BODY" >"$tmp/st2"
t1=$(ms)
kill "$bg" 2>/dev/null
wait "$bg" 2>/dev/null
has "$tmp/st2" '"content":"quick"' "another client is served while a stream stalls"
[ $((t1 - t0)) -lt 1000 ] && ok "at once ($((t1 - t0)) ms)" || not_ok "another client is served at once ($((t1 - t0)) ms)"
t0=$(ms)
oa "$OA_BODY" >"$tmp/st3"
rc=$?
t1=$(ms)
is "$rc" 0 "stall seconds=1 then continue: the stream completes"
has "$tmp/st3" 'data: [DONE]' "with its [DONE]"
[ $((t1 - t0)) -ge 950 ] && ok "after the stall ($((t1 - t0)) ms)" || not_ok "stall lasted 1 s ($((t1 - t0)) ms)"
oa "$OA_BODY" >"$tmp/st4"
is "$(grep -c '^: keep-alive$' "$tmp/st4")" 3 "stall keepalive_ms=300 for 1.2 s: keep-alives at 300, 600 and 900 ms"
an "$AN_BODY" >"$tmp/st5"
is "$(grep -c '^event: ping$' "$tmp/st5")" 2 "Anthropic stall keep-alives are ping events"
oa "$OA_BODY" >"$tmp/st6"
rc=$?
is "$rc" 18 "drop: curl reports a partial transfer (exit 18)"
is "$(grep -c '^data: ' "$tmp/st6")" 3 "after exactly 3 events"
hasnt "$tmp/st6" "finish_reason\":\"stop" "and no finish chunk"
oa "$OA_BODY" >"$tmp/st7"
rc=$?
[ "$rc" = 56 ] || [ "$rc" = 18 ] && ok "drop rst: a reset connection is a transfer error ($rc)" || not_ok "drop rst: transfer error (got $rc)"
is "$(wc -c <"$tmp/st7")" 100 "after exactly byte=100 bytes"
oa "$OA_BODY" >"$tmp/st8"
rc=$?
is "$rc" 0 "truncate: the HTTP body ends cleanly"
is "$(grep -c '^data: ' "$tmp/st8")" 3 "after 3 events"
hasnt "$tmp/st8" "[DONE]" "without finish or [DONE]: a truncated stream that looks finished to HTTP"
t0=$(ms)
oa "$OA_BODY" -o /dev/null -w '%{time_starttransfer}' >"$tmp/st9"
t1=$(ms)
[ $((t1 - t0)) -ge 580 ] && ok "wait_ms 600 delays the response head ($((t1 - t0)) ms)" || not_ok "wait_ms delays the head ($((t1 - t0)) ms)"
oa "$OA_BODY" --max-time 1 >"$tmp/st10"
is "$(wc -c <"$tmp/st10")" 7 "stall byte=7: exactly 7 bytes, then silence"
stop

# ---- SIGTERM while a client is connected ----------------------------------------

cat >"$tmp/tm.script" <<'EOF'
reply
  text "x"
  stall at=1 seconds=60
EOF
start tm
oa "$OA_BODY" --max-time 30 >/dev/null &
bg=$!
for _ in $(seq 50); do [ -s "$LOG" ] && break; sleep 0.05; done
t0=$(ms)
stop
t1=$(ms)
wait "$bg" 2>/dev/null
bgrc=$?
is "$bgrc" 18 "SIGTERM mid-stall: the client sees the stream cut (curl exit 18)"
# (stop has checked the exit status and the sanitizer report)
[ $((t1 - t0)) -lt 1000 ] && ok "promptly ($((t1 - t0)) ms)" || not_ok "SIGTERM exit was prompt ($((t1 - t0)) ms)"
[ ! -e "$tmp/tm.port" ] && ok "and removes its port file" || not_ok "SIGTERM removes the port file"

# ---- deviations of OpenAI-compatible servers -----------------------------------

cat >"$tmp/dv.script" <<'EOF'
reply ollama
  id chatcmpl-612
  created 1755000003
  model qwen3:8b
  fingerprint fp_ollama
  whole_tools
  tool get_weather "{\"city\":\"Paris\"}" id=call_k2j4
  usage input=80 output=18
reply openrouter
  tool bash "{\"cmd\":\"ls\"}" split=4
  tool_index_base 1
  finish stop
reply no-done
  text "x"
  no_done
  include_usage never
reply keepalive
  text "a" "b"
  keepalive 0,2
reply reference-1.4
  id chatcmpl-B2
  created 1727346182
  model gpt-4o-2024-08-06
  fingerprint fp_14
  logprobs
  refusal
  tool get_weather "{\"city\":\"Paris\"}" id=call_4Xzl split=2,4
  usage input=44 output=16 reasoning=0
reply parallel
  tool a "{}" id=call_a
  tool b "{}" id=call_b
  interleave_tools
reply unknown-fields
  text "x"
  field obfuscation "\"q3\""
  field timings "{\"prompt_n\":12}"
  include_usage never
reply reasoning
  thinking "hmm"
  text "ok"
  reasoning_field reasoning
EOF
start dv
oa "$OA_BODY" >"$tmp/dv1"
cat >"$tmp/dv1.want" <<'EOF'
data: {"id":"chatcmpl-612","object":"chat.completion.chunk","created":1755000003,"model":"qwen3:8b","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"role":"assistant","content":"","tool_calls":[{"id":"call_k2j4","index":0,"type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},"finish_reason":null}]}

data: {"id":"chatcmpl-612","object":"chat.completion.chunk","created":1755000003,"model":"qwen3:8b","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}

data: {"id":"chatcmpl-612","object":"chat.completion.chunk","created":1755000003,"model":"qwen3:8b","system_fingerprint":"fp_ollama","choices":[],"usage":{"prompt_tokens":80,"completion_tokens":18,"total_tokens":98}}

data: [DONE]

EOF
same_file "$tmp/dv1" "$tmp/dv1.want" "Ollama: the whole tool call in one chunk, byte for byte as the reference records it"
oa "$OA_BODY" >"$tmp/dv2"
has "$tmp/dv2" '"tool_calls":[{"index":1,"id":"call_' "OpenRouter: tool-call index starts at 1"
has "$tmp/dv2" '"delta":{},"finish_reason":"stop"' "OpenRouter: finish_reason stop with a tool call"
oa "$OA_BODY" >"$tmp/dv3"
hasnt "$tmp/dv3" '[DONE]' "no_done: the stream ends without [DONE]"
has "$tmp/dv3" '"finish_reason":"stop"' "but with its finish chunk"
oa "$OA_BODY" >"$tmp/dv4"
is "$(grep -c '^: keep-alive$' "$tmp/dv4")" 2 "keepalive 0,2: two comment lines"
is "$(head -c 14 "$tmp/dv4")" ": keep-alive" "the first before any event"
oa "$OA_BODY" >"$tmp/dv5"
cat >"$tmp/dv5.want" <<'EOF'
data: {"id":"chatcmpl-B2","object":"chat.completion.chunk","created":1727346182,"model":"gpt-4o-2024-08-06","system_fingerprint":"fp_14","choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_4Xzl","type":"function","function":{"name":"get_weather","arguments":""}}],"refusal":null},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-B2","object":"chat.completion.chunk","created":1727346182,"model":"gpt-4o-2024-08-06","system_fingerprint":"fp_14","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\""}}]},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-B2","object":"chat.completion.chunk","created":1727346182,"model":"gpt-4o-2024-08-06","system_fingerprint":"fp_14","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"city"}}]},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-B2","object":"chat.completion.chunk","created":1727346182,"model":"gpt-4o-2024-08-06","system_fingerprint":"fp_14","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\":\"Paris\"}"}}]},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-B2","object":"chat.completion.chunk","created":1727346182,"model":"gpt-4o-2024-08-06","system_fingerprint":"fp_14","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"tool_calls"}]}

data: {"id":"chatcmpl-B2","object":"chat.completion.chunk","created":1727346182,"model":"gpt-4o-2024-08-06","system_fingerprint":"fp_14","choices":[],"usage":{"prompt_tokens":44,"completion_tokens":16,"total_tokens":60,"completion_tokens_details":{"reasoning_tokens":0}}}

data: [DONE]

EOF
same_file "$tmp/dv5" "$tmp/dv5.want" "the recorded gpt-4o tool-call stream (reference §1.4) byte for byte"
oa "$OA_BODY" >"$tmp/dv6"
a_first=$(grep -n '"id":"call_a"' "$tmp/dv6" | cut -d: -f1)
b_first=$(grep -n '"id":"call_b"' "$tmp/dv6" | cut -d: -f1)
a_args=$(grep -n '"index":0,"function":{"arguments":"{}"' "$tmp/dv6" | cut -d: -f1)
[ -n "$a_first" ] && [ -n "$b_first" ] && [ -n "$a_args" ] && [ "$b_first" -lt "$a_args" ] &&
	ok "interleave_tools: call 1 starts before call 0's arguments arrive" || not_ok "interleave_tools interleaves"
oa "$OA_BODY" >"$tmp/dv7"
has "$tmp/dv7" '"finish_reason":null}],"obfuscation":"q3","timings":{"prompt_n":12}}' "field adds unknown top-level fields to every chunk"
oa "$OA_BODY" >"$tmp/dv8"
has "$tmp/dv8" '"delta":{"reasoning":"hmm"}' "thinking on the OpenAI path: delta.reasoning (reasoning_field)"
stop

# ---- Anthropic: thinking, tool input, usage, ping, unknown events ------------

cat >"$tmp/an.script" <<'EOF'
reply
  id msg_T
  thinking "Let me think." split=4 signature="sig-1"
  text "Answer."
  tool bash "{\"cmd\":\"ls\"}" id=toolu_9 split=0,7
  usage input=10 output=20 cache_read=5 cache_write=3
  delta_usage full
  insert at=3 "event: brand_new_event\ndata: {\"type\":\"brand_new_event\"}\n\n"
EOF
start an
an "$AN_BODY" >"$tmp/an1"
has "$tmp/an1" '"content_block":{"type":"thinking","thinking":""}}' "a thinking block starts"
has "$tmp/an1" '"delta":{"type":"thinking_delta","thinking":"Let "}}' "with thinking_delta pieces"
has "$tmp/an1" '"delta":{"type":"signature_delta","signature":"sig-1"}}' "and a signature_delta"
has "$tmp/an1" '"index":2,"content_block":{"type":"tool_use","id":"toolu_9","name":"bash","input":{}}}' "the tool_use block is index 2"
has "$tmp/an1" '"index":2,"delta":{"type":"input_json_delta","partial_json":""}}' "split=0,...: the first input_json_delta is empty, as the API often sends"
has "$tmp/an1" '"usage":{"input_tokens":10,"cache_creation_input_tokens":3,"cache_read_input_tokens":5,"output_tokens":1}}}' "message_start carries input and cache usage"
has "$tmp/an1" '"stop_reason":"tool_use","stop_sequence":null},"usage":{"input_tokens":10,"cache_creation_input_tokens":3,"cache_read_input_tokens":5,"output_tokens":20}}' "message_delta: tool_use and cumulative usage (delta_usage full)"
has "$tmp/an1" "event: brand_new_event" "insert puts an unknown event type in the stream"
is "$(grep -c '^event: ping$' "$tmp/an1")" 1 "one ping by default"
is "$(sed -n 7p "$tmp/an1")" "event: ping" "right after the first content_block_start, as the API does"
stop

# ---- big replies, non-streaming replies ----------------------------------------

cat >"$tmp/bg.script" <<'EOF'
reply
  text_tokens 5000
  repeat 2
reply nonstream-openai
  text "Hello"
  tool bash "{\"cmd\":\"ls\"}" id=call_1
  usage input=3 output=4
reply nonstream-anthropic
  text "Hello"
  tool bash "{\"cmd\": \"ls\"}" id=toolu_1
  usage input=3 output=4
EOF
start bg
oa "$OA_BODY" >"$tmp/bg1"
is "$(grep -c '"delta":{"content":' "$tmp/bg1")" 5000 "text_tokens 5000: 5000 content deltas (OpenAI)"
has "$tmp/bg1" '"completion_tokens":5000,' "usage output defaults to the number of deltas"
an "$AN_BODY" >"$tmp/bg2"
is "$(grep -c '"type":"text_delta"' "$tmp/bg2")" 5000 "text_tokens 5000: 5000 text_delta events (Anthropic)"
oa '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}' -D "$tmp/bg3.h" >"$tmp/bg3"
printf '%s' '{"id":"chatcmpl-3","object":"chat.completion","created":' >"$tmp/bg3.want"
head -c "$(wc -c <"$tmp/bg3.want")" "$tmp/bg3" >"$tmp/bg3.head"
same_file "$tmp/bg3.head" "$tmp/bg3.want" "without stream: true, a chat.completion object"
has "$tmp/bg3" '"message":{"role":"assistant","content":"Hello","refusal":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"bash","arguments":"{\"cmd\":\"ls\"}"}}]},"logprobs":null,"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7}}' "with the message, tool calls and usage"
has "$tmp/bg3.h" "content-length: " "sent with a content-length"
an '{"model":"claude-sonnet-4-5","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}' >"$tmp/bg4"
has "$tmp/bg4" '"content":[{"type":"text","text":"Hello"},{"type":"tool_use","id":"toolu_1","name":"bash","input":{"cmd":"ls"}}],"stop_reason":"tool_use"' "Anthropic without stream: a message with parsed tool input"
stop

# ---- raw replies, framing, finish reasons -----------------------------------

cat >"$tmp/mx.script" <<'EOF'
reply raw
  raw "data: {\"choices\":[{\"finish_reason\":null,\"index\":0,\"delta\":{\"content\":\"Hello\"}}],\"object\":\"chat.completion.chunk\"}\n\n"
  raw "data:{\"no\":\"space\"}\r\r"
reply close
  text "x"
  framing close
reply all
  text "a" "b" "c"
  chunks all
reply length
  text "cut"
  finish length
  stop_sequence "###"
reply cr
  text "x"
  line_ending cr
  ping none
reply no-usage
  text "x"
  usage none
EOF
"$bin" --script "$tmp/mx.script" --render 1 >"$tmp/mx1.want"
start mx
oa "$OA_BODY" >"$tmp/mx1"
same_file "$tmp/mx1" "$tmp/mx1.want" "raw: the given bytes, verbatim (llama.cpp field order, data: without a space, CR ends)"
printf 'data: {"choices":[{"finish_reason":null,"index":0,"delta":{"content":"Hello"}}],"object":"chat.completion.chunk"}\n\ndata:{"no":"space"}\r\r' >"$tmp/mx1.lit"
same_file "$tmp/mx1" "$tmp/mx1.lit" "and --render agrees with the literal"
oa "$OA_BODY" -D "$tmp/mx2.h" >"$tmp/mx2"
is "$?" 0 "framing close: the body ends when the connection closes"
hasnt "$tmp/mx2.h" "transfer-encoding" "without chunked encoding"
has "$tmp/mx2.h" "connection: close" "and says connection: close"
has "$tmp/mx2" "data: [DONE]" "the whole stream arrives"
oa "$OA_BODY" --raw >"$tmp/mx3"
is "$(grep -cE $'^[0-9a-f]+\r$' "$tmp/mx3")" 2 "chunks all: one HTTP chunk and the terminator"
an "$AN_BODY" >"$tmp/mx4"
has "$tmp/mx4" '"delta":{"stop_reason":"max_tokens","stop_sequence":"###"}' "finish length is max_tokens on the Anthropic path, with the stop_sequence"
an "$AN_BODY" >"$tmp/mx5"
case $(hex "$tmp/mx5") in
*0a*) not_ok "line_ending cr: no LF at all" ;;
*0d0d*) ok "line_ending cr: events end in CR CR" ;;
*) not_ok "line_ending cr: events end in CR CR" ;;
esac
an "$AN_BODY" >"$tmp/mx6"
hasnt "$tmp/mx6" '"usage"' "usage none: no usage anywhere (a broken gateway)"
stop

# ---- request bodies however the client sends them ----------------------------

cat >"$tmp/rb.script" <<'EOF'
reply
  text "x"
  repeat forever
EOF
start rb
big=$(head -c 300000 /dev/zero | tr '\0' 'a')
printf '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"%s"}],"stream":true}' "$big" >"$tmp/big.json"
curl -sN -H "Authorization: Bearer $OKEY" -H 'Expect: 100-continue' --data-binary @"$tmp/big.json" \
	"http://127.0.0.1:$PORT/v1/chat/completions" >"$tmp/rb1"
has "$tmp/rb1" 'data: [DONE]' "a 300 kB body with Expect: 100-continue is read and answered"
has "$LOG" "\"body_bytes\":$(wc -c <"$tmp/big.json")," "all of it"
curl -sN -H "Authorization: Bearer $OKEY" -H 'Transfer-Encoding: chunked' --data-binary "$OA_BODY" \
	"http://127.0.0.1:$PORT/v1/chat/completions" >"$tmp/rb2"
has "$tmp/rb2" 'data: [DONE]' "a chunked request body is read and answered"
is "$(tail -n 1 "$LOG" | grep -cF "\"body\":$OA_BODY}")" 1 "and logged whole"
# by hand, over bash's /dev/tcp: a chunked body trickling in a few bytes at a
# time (chunk-size lines and CRLFs split across reads), then two pipelined
# requests in one write, the second asking to close
body='{"model":"m","messages":[],"stream":true}'
if exec 3<>"/dev/tcp/127.0.0.1/$PORT"; then
	printf -v req 'POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n%x\r\n%s\r\n0\r\n\r\n' \
		16 "${body:0:16}" $((${#body} - 16)) "${body:16}"
	for ((i = 0; i < ${#req}; i += 7)); do
		printf '%s' "${req:i:7}" >&3
		sleep 0.01
	done
	printf -v one 'POST /chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\nContent-Length: %d\r\n\r\n%s' ${#body} "$body"
	printf -v two 'POST /chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s' ${#body} "$body"
	printf '%s%s' "$one" "$two" >&3
	timeout 5 cat <&3 >"$tmp/rb3"
	exec 3<&-
	is "$(grep -c '^HTTP/1.1 200 OK' "$tmp/rb3")" 3 "a trickled chunked request and two pipelined ones: three responses on one connection"
	is "$(tail -n 3 "$LOG" | grep -cF "\"body\":$body}")" 3 "each body read exactly"
	is "$(tail -n 3 "$LOG" | sed 's/.*"conn":\([0-9]*\).*/\1/' | sort -u | wc -l)" 1 "all on the same connection"
else
	not_ok "connect with /dev/tcp"
fi
stop

# ---- many clients at once --------------------------------------------------------

cat >"$tmp/cc.script" <<'EOF'
reply
  text "a" "b" "c"
  chunks random seed=3 max=11
  delay_ms 1
  repeat 30
reply
  text "thirty-first"
EOF
start cc
for i in $(seq 30); do
	oa "$OA_BODY" >"$tmp/cc.$i" &
done
wait $(jobs -p | grep -vx "$SPID")
complete=0
for i in $(seq 30); do
	tail -c 14 "$tmp/cc.$i" | grep -qF 'data: [DONE]' && complete=$((complete + 1))
done
is "$complete" 30 "30 clients at once: 30 complete streams"
is "$(grep -o '"reply":1,' "$LOG" | wc -l)" 30 "each got one serving of the repeated reply"
is "$(grep -o '"n":[0-9]*' "$LOG" | sort -u | wc -l)" 30 "30 log lines, each request numbered once"
oa "$OA_BODY" >"$tmp/cc.31"
has "$tmp/cc.31" '"content":"thirty-first"' "then the next reply"
stop
