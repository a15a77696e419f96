#!/usr/bin/env bash
# Transcripts of other agents through `mnemo import`: a real excerpt of each
# format (test/data/transcript-*, sources in test/data/README.md) imports
# with its content where it belongs, exports, and re-imports into another
# database byte-identically; formats are detected or named; files that are
# not transcripts fail and leave nothing; a log cut short imports with
# --lenient; an agent's log imported again adds only what is new (a mnemo
# export with its own id is refused);
# a file of several sessions (tau-bench results, an OpenHands resolver
# output) makes one each, all or none (the whole files too, where the
# shared data set is beside the repository).
#
# Run by test/client/run.sh with MNEMO_BIN (the sanitized mnemo) and
# PGDATABASE (a fresh database with the extension); prints TAP.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1

M=${MNEMO_BIN:?MNEMO_BIN is the mnemo command to test}
D=test/data
work=$(mktemp -d /tmp/mnemo-transcripts.XXXXXX)
copy_db="${PGDATABASE}_transcripts_copy"
cleanup() {
	dropdb --if-exists "$copy_db" >/dev/null 2>&1
	rm -rf "$work"
}
trap cleanup EXIT

# shellcheck source=lib/tap.sh
. test/client/lib/tap.sh
sessions() { psql_q -c "SELECT count(*) FROM mnemo.sessions"; }
# q SID SQL-after-WHERE-session: a count over the session's parts
parts_where() { psql_q -c "SELECT count(*) FROM mnemo.message_parts WHERE session_id = '$1' AND $2"; }
# the parts as the functions read them (content), where an image's data is
# its base64 again: the table holds it once per tenant, as bytes (mnemo.blobs)
parts_read_where() {
	psql_q -c "SELECT count(*) FROM mnemo.get_messages_with_parts('$1') m, jsonb_array_elements(m.parts) content WHERE $2"
}
msgs_where() { psql_q -c "SELECT count(*) FROM mnemo.messages WHERE session_id = '$1' AND $2"; }

createdb "$copy_db" >/dev/null 2>&1 && psql_q -d "$copy_db" -c "CREATE EXTENSION mnemo" >/dev/null

# ---- each format: detected, imported, exported, re-imported identically ----

# FILE FORMAT MESSAGES: the format detected from the content, the message
# count, and the export round trip into another database.
round_trip() {
	local file=$1 format=$2 want=$3 sid
	run_m import "$file" --new-ids
	expect_rc 0 "$format: $(basename "$file") imports, detected from its content"
	sid=$(cat "$work/out")
	check "$format: $want messages" test "$(msgs_where "$sid" true)" = "$want"
	"$M" export "$sid" >"$work/$format.first.jsonl" 2>"$work/err"
	run_m --db "dbname=$copy_db" import "$work/$format.first.jsonl" --quiet
	expect_rc 0 "$format: its export imports into another database"
	check "$format: into the session of the header's id" test "$(cat "$work/out")" = "$sid"
	"$M" --db "dbname=$copy_db" export "$sid" >"$work/$format.second.jsonl" 2>"$work/err"
	check "$format: export, import, export: byte-identical (the session's created time too)" \
		cmp -s "$work/$format.first.jsonl" "$work/$format.second.jsonl"
	run_m import "$file" --new-ids --format "$format" --quiet
	expect_rc 0 "$format: --format $format reads it too"
	# a UTF-8 byte order mark, as Windows editors and PowerShell write one
	{ printf '\357\273\277'; cat "$file"; } >"$work/bom"
	run_m import "$work/bom" --new-ids --quiet
	check "$format: a byte order mark before it is skipped" \
		test "$rc:$(msgs_where "$(cat "$work/out")" true)" = "0:$want"
	last_sid=$sid
}

round_trip $D/transcript-pi.jsonl pi 16
pi_sid=$last_sid
check "pi: the session takes the log's model and provider" \
	test "$(psql_q -c "SELECT model_id || '/' || provider_id || '/' || agent FROM mnemo.sessions WHERE id = '$pi_sid'")" = "claude-sonnet-4-5/anthropic/pi"
check "pi: a thinking block is a reasoning part with its signature" \
	test "$(parts_where "$pi_sid" "part_type = 'reasoning' AND content ? 'signature'")" = 1
check "pi: every toolCall is a tool part, completed by its toolResult" \
	test "$(parts_where "$pi_sid" "part_type = 'tool' AND tool_state = 'completed' AND content ? 'output'")" -ge 5
check "pi: message times are the records' timestamps" \
	test "$(msgs_where "$pi_sid" "created_at BETWEEN 1763681000000 AND 1763690000000")" = 16
check "pi: api and errorMessage kept in the message's metadata" \
	test "$(parts_where "$pi_sid" "content->'metadata' ? 'errorMessage'")" = 1
check "pi: the session's time is the session record's timestamp" \
	test "$(psql_q -c "SELECT created_at FROM mnemo.sessions WHERE id = '$pi_sid'")" = 1763681630805
check "pi: usage restored (cache reads of a real turn)" \
	test "$(msgs_where "$pi_sid" "tokens_cache_read > 0")" -ge 1

# a pi log of version 3 with what extensions write: custom (their state,
# not in the context), label and session_info are bookkeeping;
# custom_message (and a message of role custom) is in pi's context as a
# user turn, and is a user message, its customType, display and details
# kept in metadata
cat >"$work/pi3.jsonl" <<'EOF2'
{"type":"session","version":3,"id":"pi3-sess","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}
{"type":"message","id":"e1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"plain string prompt","timestamp":1767225601000}}
{"type":"custom","id":"e2","parentId":"e1","timestamp":"2026-01-01T00:00:01.500Z","customType":"todo","data":{"x":1}}
{"type":"message","id":"e3","parentId":"e2","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"ok"}],"api":"x","provider":"anthropic","model":"m","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"total":0}},"stopReason":"stop","timestamp":1767225602000}}
{"type":"custom","id":"e4","parentId":"e3","timestamp":"2026-01-01T00:00:04.000Z","customType":"todo","data":{"x":2}}
{"type":"label","id":"e5","parentId":"e4","timestamp":"2026-01-01T00:00:04.000Z","targetId":"e3","label":"good"}
{"type":"session_info","id":"e6","parentId":"e5","timestamp":"2026-01-01T00:00:04.000Z","name":"My session"}
{"type":"custom_message","id":"e7","parentId":"e6","timestamp":"2026-01-01T00:00:05.000Z","customType":"note","content":"injected context","display":true}
{"type":"message","id":"e8","parentId":"e7","timestamp":"2026-01-01T00:00:06.000Z","message":{"role":"custom","customType":"plan","content":[{"type":"text","text":"the plan"}],"display":false,"details":{"k":1},"timestamp":1767225606000}}
EOF2
run_m import "$work/pi3.jsonl"
expect_rc 0 "pi v3: a log with extension entries imports"
check "pi v3: custom, label and session_info are bookkeeping, reported" \
	grep -q "left out 4 records: 2 custom, 1 label, 1 session_info" "$work/err"
check "pi v3: custom_message and a message of role custom are user messages" \
	test "$(msgs_where pi3-sess "role = 'user'")" = 3
check "pi v3: with their text" \
	test "$(parts_where pi3-sess "content->>'text' IN ('injected context', 'the plan')")" = 2
check "pi v3: their customType, display and details in metadata" \
	test "$(parts_where pi3-sess "content->'metadata' @> '{\"customType\": \"plan\", \"display\": false, \"details\": {\"k\": 1}}' OR content->'metadata' @> '{\"customType\": \"note\", \"display\": true}'")" = 2
check "pi v3: at their records' times" \
	test "$(msgs_where pi3-sess "created_at IN (1767225605000, 1767225606000) AND role = 'user'")" = 2

# a user's !command in pi (a message of role bashExecution) is a user turn
# pi sends to the model as the text bashExecutionToText makes; a !!command
# (excludeFromContext) is not sent, and is bookkeeping
cat >"$work/pi-bash.jsonl" <<'EOF2'
{"type":"session","version":3,"id":"pi-bash","timestamp":"2026-01-02T00:00:00.000Z","cwd":"/w"}
{"type":"message","id":"b1","parentId":null,"timestamp":"2026-01-02T00:00:01.000Z","message":{"role":"bashExecution","command":"ls src","output":"a.c\nb.c","exitCode":0,"cancelled":false,"truncated":false,"timestamp":1767312001000}}
{"type":"message","id":"b2","parentId":"b1","timestamp":"2026-01-02T00:00:02.000Z","message":{"role":"bashExecution","command":"make","output":"","exitCode":2,"cancelled":false,"truncated":true,"fullOutputPath":"/tmp/pi-bash-1.log","timestamp":1767312002000}}
{"type":"message","id":"b3","parentId":"b2","timestamp":"2026-01-02T00:00:03.000Z","message":{"role":"bashExecution","command":"env","output":"SECRET=1","exitCode":0,"cancelled":false,"truncated":false,"timestamp":1767312003000,"excludeFromContext":true}}
{"type":"message","id":"b4","parentId":"b3","timestamp":"2026-01-02T00:00:04.000Z","message":{"role":"user","content":[{"type":"text","text":"why did make fail?"}],"timestamp":1767312004000}}
EOF2
run_m import "$work/pi-bash.jsonl"
expect_rc 0 "pi: a log with bashExecution entries imports"
is "$(psql_q -c "SELECT string_agg(p.content->>'text', '|' ORDER BY m.seq) FROM mnemo.messages m JOIN mnemo.message_parts p ON p.session_id = m.session_id AND p.seq = m.seq AND p.part_type = 'text' WHERE m.session_id = 'pi-bash' AND m.role = 'user'")" \
	"$(printf 'Ran `ls src`\n```\na.c\nb.c\n```|Ran `make`\n(no output)\n\nCommand exited with code 2\n\n[Output truncated. Full output: /tmp/pi-bash-1.log]|why did make fail?')" \
	"pi: each !command is a user message of the text pi sends the model"
check "pi: its command and exit code kept in metadata, at the record's time" \
	test "$(msgs_where pi-bash "created_at = 1767312002000 AND EXISTS (SELECT 1 FROM mnemo.message_parts p WHERE p.session_id = 'pi-bash' AND p.seq = messages.seq AND p.content->'metadata' @> '{\"command\": \"make\", \"exitCode\": 2}')")" = 1
check "pi: a !!command kept out of the model's context is bookkeeping" \
	grep -q "left out 1 record: 1 bashExecution excluded from context" "$work/err"

# a pi log with branches (/tree): the active branch (the path to the last
# entry) is the session, its branch_summary the user turn pi sends; each
# branch left behind is a fork of it at the last message they share,
# holding its own messages
run_m import $D/transcript-pi-tree.jsonl
expect_rc 0 "pi tree: a log with two branches left behind imports"
is "$(wc -l <"$work/out") $(head -n 1 "$work/out")" "3 pi-tree" "pi tree: the session, then a fork for each branch"
texts_of() { psql_q -c "SELECT string_agg(m.role || ':' || coalesce(p.content->>'text', ''), ' ' ORDER BY m.seq) FROM mnemo.messages m JOIN mnemo.message_parts p ON p.session_id = m.session_id AND p.seq = m.seq AND p.part_type = 'text' WHERE m.session_id = '$1'"; }
is "$(texts_of pi-tree)" $'user:Q assistant:A user:The following is a summary of a branch that this conversation came back from:\n\n<summary>\nTried another answer.</summary> user:F2 assistant:R2' "pi tree: the active branch, with the branch summary as pi sends it"
f1=$(sed -n 2p "$work/out")
f2=$(sed -n 3p "$work/out")
is "$(psql_q -c "SELECT string_agg(parent_id || ' ' || fork_seq, ',' ORDER BY id) FROM (SELECT id, parent_id, (SELECT min(seq) - 1 FROM mnemo.messages m WHERE m.session_id = s.id) AS fork_seq FROM mnemo.sessions s WHERE id IN ('$f1', '$f2')) x")" \
	"$(if [[ "$f1" < "$f2" ]]; then echo "pi-tree 2,pi-tree 1"; else echo "pi-tree 1,pi-tree 2"; fi)" \
	"pi tree: each branch a fork of the session at the last message they share"
is "$(texts_of "$f1")|$(texts_of "$f2")" "user:F1 assistant:R1|assistant:A2" "pi tree: each fork holds its branch's own messages"
is "$("$M" export "$f1" 2>/dev/null | grep -c '"role"')" 4 "pi tree: a fork reads as its whole branch (the shared messages through its lineage)"
run_m verify pi-tree
expect_rc 0 "pi tree: the session verifies"

# a pi log that compacted twice (pi's compaction records): 10 messages and
# the 2 summaries, each committed over the messages before its first kept
# entry
round_trip $D/transcript-pi-compacted.jsonl pi 12
pc_sid=$last_sid
ctx_of() { psql_q -c "SELECT string_agg(CASE WHEN c.item_type = 'summary' THEN 'S' ELSE m.role || m.seq END, ' ' ORDER BY c.position) FROM mnemo.get_context_items('$1') c JOIN mnemo.messages m ON m.session_id = '$1' AND m.id = c.item_id"; }
is "$(ctx_of "$pc_sid")" "S S user8 assistant9 user11 assistant12" \
	"pi compaction: the summaries are back in context, what they cover out of it (the kept entries stay)"
is "$(psql_q -c "SELECT string_agg(kind || ' ' || seq_start || '-' || seq_end, ', ' ORDER BY seq_start) FROM mnemo.summary_nodes('$pc_sid')")" \
	"leaf 1-3, leaf 4-6" "pi compaction: a leaf node per compaction, over the messages before its first kept entry"
check "pi compaction: the summary is pi's, at the compaction's time" \
	test "$(msgs_where "$pc_sid" "is_summary AND created_at = 1764583245000 AND EXISTS (SELECT 1 FROM mnemo.message_parts p WHERE p.session_id = '$pc_sid' AND p.seq = messages.seq AND p.content->>'text' LIKE '## Goal%tested and documented.%')")" = 1
summary_meta() { psql_q "$@" -c "SELECT string_agg(p.content->>'metadata', ' ' ORDER BY m.seq) FROM mnemo.messages m JOIN mnemo.message_parts p ON p.session_id = m.session_id AND p.seq = m.seq AND p.part_type = 'text' WHERE m.session_id = '$pc_sid' AND m.is_summary"; }
is "$(summary_meta)" '{"tokensBefore": 21450} {"tokensBefore": 23990}' \
	"pi compaction: what the record has beyond the summary (tokensBefore) is kept in the summary's metadata"
is "$(summary_meta -d "$copy_db")" "$(summary_meta)" "pi compaction: and comes back with the summary from its export"
run_m import $D/transcript-pi-compacted.jsonl --new-ids
check "pi compaction: the summary line counts it kept" grep -q 'kept in metadata 8 fields: 6 api, 2 tokensBefore$' "$work/err"
check "pi compaction: a toolCall's arguments keep their order (input_text)" \
	test "$(parts_where "$pc_sid" "content->>'input_text' = '{\"path\":\"src/list.ts\",\"offset\":1,\"limit\":80}'")" = 1
run_m verify "$pc_sid"
expect_rc 0 "pi compaction: mnemo verify passes (every message reachable through the DAG)"
run_m --db "dbname=$copy_db" verify "$pc_sid"
expect_rc 0 "pi compaction: and in the copy made from its export"
is "$(psql_q -d "$copy_db" -c "SELECT string_agg(CASE WHEN c.item_type = 'summary' THEN 'S' ELSE m.role || m.seq END, ' ' ORDER BY c.position) FROM mnemo.get_context_items('$pc_sid') c JOIN mnemo.messages m ON m.session_id = '$pc_sid' AND m.id = c.item_id")" \
	"$(ctx_of "$pc_sid")" "pi compaction: the copy's context view is the original's"
# an export whose last compaction marker counts other items than the
# context holds: that summary cannot be committed again, and is kept as a
# summary message, which is not a record left out
"$M" export "$pc_sid" | tac | sed '0,/"compacted_item_count": 3/s//"compacted_item_count": 2/' | tac >"$work/pc-unmatched.jsonl"
run_m import "$work/pc-unmatched.jsonl" --new-ids
expect_rc 0 "an export with a compaction marker the context does not match imports"
is "$(sed 's/^mnemo: imported 12 messages into [^;]*//' "$work/err")" "; kept 1 summary as a message, not a compaction" \
	"the summary line counts that summary kept as a message, not among the records left out"
is "$(msgs_where "$(cat "$work/out")" is_summary)/$(psql_q -c "SELECT count(*) FROM mnemo.summary_nodes('$(cat "$work/out")')")" "2/1" \
	"both summaries stored, one of them restored as a compaction"
# pi's version 1 logs name the first kept entry by its index (the session
# record is 0)
{
	head -n 9 $D/transcript-pi-compacted.jsonl | sed 's/"id":"e[0-9]*","parentId":[^,]*,//; 1s/"version":3,//; 1s/"id":"[^"]*"/"id":"pi-v1-compacted"/'
	printf '{"type":"compaction","timestamp":"2025-12-01T10:00:32.000Z","summary":"v1 summary","firstKeptEntryIndex":5,"tokensBefore":100}\n'
	tail -n 2 $D/transcript-pi-compacted.jsonl | sed 's/"id":"e[0-9]*","parentId":[^,]*,//'
} >"$work/pi-v1.jsonl"
run_m import "$work/pi-v1.jsonl"
expect_rc 0 "a version 1 pi log that compacted imports"
is "$(ctx_of pi-v1-compacted)" "S user4 assistant5 assistant6 user8 assistant9" \
	"its firstKeptEntryIndex (5: the 5th record after the session's) keeps that message and what follows"
sed 's/"firstKeptEntryId":"e0000005"/"firstKeptEntryId":"nowhere"/; s/"id":"5f0c2b8e[^"]*"/"id":"pi-lost-kept"/' $D/transcript-pi-compacted.jsonl >"$work/pi-lost.jsonl"
run_m import "$work/pi-lost.jsonl"
expect_rc 0 "a compaction whose first kept entry is not in the log imports"
check "and says it left the compaction out" grep -q "compaction whose first kept entry is not in the log" "$work/err"

round_trip $D/transcript-openai.json openai 8
oa_sid=$last_sid
check "openai (JSON array): the system message is a system message" \
	test "$(msgs_where "$oa_sid" "role = 'system'")" = 1
check "openai: tool calls keep their arguments as input and get their results" \
	test "$(parts_where "$oa_sid" "part_type = 'tool' AND content->'input'->>'reservation_id' = 'EUJUY6' AND content->>'output' LIKE '{\"reservation_id\": \"EUJUY6\"%' AND tool_state = 'completed'")" = 1
round_trip $D/transcript-openai.jsonl openai 10

round_trip $D/transcript-anthropic.json anthropic 8
an_sid=$last_sid
check "anthropic: the request's system field is the session's system prompt" \
	test "$(psql_q -c "SELECT system_prompt FROM mnemo.sessions WHERE id = '$an_sid'")" = "You are Claude Code, working on the kimi-cli repository."
check "anthropic: tool_use blocks completed by their tool_result blocks" \
	test "$(parts_where "$an_sid" "part_type = 'tool' AND tool_state = 'completed'")" = 3

# a request body whose system is a list of blocks (prompt caching): their
# texts are the system prompt, the blocks kept; tools and the sampling
# parameters kept in the session's metadata, which export writes back
cat >"$work/anth-blocks.json" <<'EOF2'
{"model":"claude-sonnet-4-5","max_tokens":1024,"temperature":0.2,"top_p":0.9,"stream":true,"system":[{"type":"text","text":"You are terse."},{"type":"text","text":"Answer in English.","cache_control":{"type":"ephemeral"}}],"tools":[{"name":"ls","description":"list files","input_schema":{"type":"object","properties":{}}}],"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"text","text":"hello"}]}]}
EOF2
run_m import "$work/anth-blocks.json"
expect_rc 0 "anthropic: a request body with system blocks, tools and parameters imports"
ab_sid=$(cat "$work/out")
is "$(psql_q -c "SELECT system_prompt FROM mnemo.sessions WHERE id = '$ab_sid'")" "$(printf 'You are terse.\n\nAnswer in English.')" \
	"anthropic: system blocks joined as the system prompt"
is "$(psql_q -c "SELECT (metadata->'system'->1->'cache_control'->>'type') || ' ' || (metadata->'request'->'tools'->0->>'name') || ' ' || (metadata->'request'->>'max_tokens') || ' ' || (metadata->'request'->>'temperature') || ' ' || (metadata->'request'->>'top_p') || ' ' || (metadata->'request'->>'stream') FROM mnemo.sessions WHERE id = '$ab_sid'")" \
	"ephemeral ls 1024 0.2 0.9 true" "anthropic: the blocks, tools, max_tokens, temperature, top_p and stream kept"
check "anthropic: and written back by export" \
	sh -c "'$M' export '$ab_sid' | head -n 1 | grep -q '\"request\": {\"tools\": \[{\"name\": \"ls\"'"
# an OpenAI tool result with an image (a screenshot tool's): its text is the
# call's output, its image an image part of a tool message after it
cat >"$work/oa-img.json" <<'EOF2'
[{"role":"user","content":"take a screenshot"},
{"role":"assistant","content":null,"tool_calls":[{"id":"call_s1","type":"function","function":{"name":"screenshot","arguments":"{\"region\":\"full\"}"}}]},
{"role":"tool","tool_call_id":"call_s1","content":[{"type":"text","text":"captured 1 screen"},{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo="}}]},
{"role":"assistant","content":"It shows a login page."}]
EOF2
run_m import "$work/oa-img.json"
expect_rc 0 "openai: a tool result with an image imports"
oi_sid=$(cat "$work/out")
check "openai: the call completed with the result's text" \
	test "$(parts_where "$oi_sid" "tool_name = 'screenshot' AND tool_state = 'completed' AND content->>'output' = 'captured 1 screen'")" = 1
check "openai: the image an image part of the tool message after it, naming the call" \
	test "$(parts_read_where "$oi_sid" "content->>'type' = 'image' AND content->>'media_type' = 'image/png' AND content->>'data' = 'iVBORw0KGgo=' AND content->'metadata'->>'tool_call_id' = 'call_s1'")" = 1

# --format that the content disagrees with: read as named, with a warning
printf '%s\n' '{"model":"gpt-4o","messages":[{"role":"system","content":"be brief"},{"role":"user","content":"hi"},{"role":"assistant","content":"hello"}]}' >"$work/oa-body.json"
run_m import "$work/oa-body.json" --format anthropic
expect_rc 0 "--format anthropic on an OpenAI body: read as named"
check "with a warning that it reads as openai" \
	grep -q "^mnemo: warning: line 1: --format anthropic, but the content reads as openai" "$work/err"
run_m import "$work/anth-blocks.json" --format anthropic
check "no warning when the content agrees" test "$(grep -c warning "$work/err")" = 0

round_trip $D/transcript-swe-agent.traj swe-agent 7
swe_sid=$last_sid
check "swe-agent: its thought and action are kept in metadata" \
	test "$(parts_where "$swe_sid" "content->'metadata' ? 'thought'")" -ge 1
check "swe-agent: function calls paired with their tool messages" \
	test "$(parts_where "$swe_sid" "part_type = 'tool' AND tool_state = 'completed'")" -ge 4

round_trip $D/transcript-openhands.jsonl openhands 5
oh_sid=$last_sid
check "openhands: run actions are tool parts completed by their observations" \
	test "$(parts_where "$oh_sid" "part_type = 'tool' AND tool_name = 'run' AND content ? 'output'")" = 2
check "openhands: the resolver run's fields are the session's metadata" \
	test "$(psql_q -c "SELECT metadata->>'source' || ' ' || (metadata ? 'git_patch') FROM mnemo.sessions WHERE id = '$oh_sid'")" = "openhands true"

# a newer OpenHands stream (a JSON array of events with ids, causes and
# tool_call_metadata, args nested): each observation completes the action
# its cause names, at the observation's time, the part keeping the model's
# tool_call_id; two calls of one response each get their own result; a
# "null" observation and agent_state_changed are bookkeeping, not tools
round_trip $D/transcript-openhands-events.json openhands 8
ohe_sid=$last_sid
is "$(psql_q -c "SELECT string_agg(tool_name || ':' || (content->>'tool_call_id') || ':' || tool_state || ':' || coalesce(completed_at::text, '-'), ' ' ORDER BY seq, part_index) FROM mnemo.message_parts WHERE session_id = '$ohe_sid' AND part_type = 'tool' AND tool_name IN ('run', 'edit')")" \
	"run:toolu_01AbCdEf:completed:1749546007250 run:toolu_01GhIjKl:completed:1749546007900 edit:toolu_01MnOpQr:completed:1749546011500" \
	"openhands events: each action completed by the observation its cause names, at its time"
check "openhands events: the output is the observation's content" \
	test "$(parts_where "$ohe_sid" "tool_name = 'run' AND content->>'output' = 'README.md' || chr(10) || 'src'")" = 1
check "openhands events: no tool named null, no orphan tool message of an action" \
	test "$(parts_where "$ohe_sid" "tool_name IN ('null', 'agent_state_changed', 'run', 'edit') AND seq IN (SELECT seq FROM mnemo.messages WHERE session_id = '$ohe_sid' AND role = 'tool')")" = 0
run_m import $D/transcript-openhands-events.json --new-ids
check "openhands events: null and agent_state_changed reported as bookkeeping" \
	grep -q "1 agent_state_changed, 1 null" "$work/err"
check "openhands events: a thought under args is the action's text" \
	test "$(parts_where "$ohe_sid" "content->>'text' = 'I''ll count the lines first.'")" = 1

# a Codex CLI rollout: session_meta is the session, developer messages are
# system ones, the items of one model response are one assistant message
# (reasoning summaries with their encrypted content, function and custom
# tool calls completed by their outputs, a web search), token_count its
# usage, event_msg copies bookkeeping, compacted a summary over what it
# replaced
round_trip $D/transcript-codex.jsonl codex 9
cx_sid=$last_sid
is "$(psql_q -c "SELECT model_id || '/' || provider_id || '/' || agent || '/' || (system_prompt LIKE 'You are Codex%') || '/' || (metadata->>'source') || '/' || (metadata->>'codex_source') || '/' || (metadata->'git'->>'branch') FROM mnemo.sessions WHERE id = '$cx_sid'")" \
	"gpt-5-codex/openai/codex/true/codex/cli/main" "codex: model, provider, base instructions as the system prompt, cwd and git in metadata"
is "$(psql_q -c "SELECT string_agg(role, ' ' ORDER BY seq) FROM mnemo.messages WHERE session_id = '$cx_sid'")" \
	"system user user assistant assistant assistant assistant user assistant" \
	"codex: developer as system, one assistant message a model response, the summary in order"
is "$(parts_where "$cx_sid" "part_type = 'reasoning' AND content->>'encrypted_content' LIKE 'gAAAA%'")" 2 \
	"codex: reasoning items are reasoning parts with their encrypted content"
is "$(parts_where "$cx_sid" "part_type = 'reasoning' AND content->>'text' = '**Counting lines**' || chr(10) || chr(10) || 'I''ll run wc on the file.'")" 1 \
	"codex: a reasoning summary's texts joined"
is "$(psql_q -c "SELECT string_agg(tool_name || ':' || tool_state || ':' || coalesce(completed_at::text, '-'), ' ' ORDER BY seq, part_index) FROM mnemo.message_parts WHERE session_id = '$cx_sid' AND part_type = 'tool'")" \
	"shell:completed:1761732008021 apply_patch:completed:1761732011201 web_search:completed:1761732012500" \
	"codex: function, custom-tool and web-search calls paired with their outputs, at their times"
check "codex: function arguments are the tool's input, a custom tool's text under input" \
	test "$(parts_where "$cx_sid" "((tool_name = 'shell' AND content->'input'->>'workdir' = '/home/ada/proj') OR (tool_name = 'apply_patch' AND content->'input'->>'input' LIKE '*** Begin Patch%' AND content->>'output' LIKE 'Success.%'))")" = 2
is "$(psql_q -c "SELECT string_agg(tokens_input || '+' || tokens_cache_read || '/' || tokens_output || '/' || tokens_reasoning, ' ' ORDER BY seq) FROM mnemo.messages WHERE session_id = '$cx_sid' AND role = 'assistant' AND NOT is_summary")" \
	"2138+3072/64/32 270+5120/116/32 580+5120/50/0 2100+0/9/0" \
	"codex: each token_count is the usage of the response it follows (cached input apart)"
is "$(psql_q -c "SELECT string_agg(kind || ' ' || seq_start || '-' || seq_end, ', ') FROM mnemo.summary_nodes('$cx_sid')")" "leaf 1-6" \
	"codex: compacted is a leaf summary over every message before it"
check "codex: the summary replaced them in context, its replacement_history kept" \
	test "$(ctx_of "$cx_sid")" = "S user8 assistant9" -a "$(parts_where "$cx_sid" "content->'metadata' ? 'replacement_history'")" = 1
check "codex: an input_image's data URL is an image part" \
	test "$(parts_where "$cx_sid" "part_type = 'image' AND content->>'media_type' = 'image/png'")" = 1
check "codex: a later turn_context's model is its messages'" \
	test "$(msgs_where "$cx_sid" "seq = 9 AND model_id = 'gpt-5'")" = 1
run_m import $D/transcript-codex.jsonl
is "$(cat "$work/out")" 019a2f00-1c2d-7e51-840f-580cd7992d50 "codex: the session takes the rollout's id"
check "codex: event_msg copies and turn_context reported as bookkeeping" \
	grep -q "left out 7 records: 2 turn_context, 1 agent_message, 1 agent_reasoning, 1 exec_command_end, 1 patch_apply_end, 1 user_message" "$work/err"

# ---- a file of several sessions: one session each, all in one transaction ----

run_m import $D/transcript-tau-bench.json
expect_rc 0 "tau-bench results (two trajectories) import, detected from their content"
is "$(wc -l <"$work/out")" 2 "tau-bench: one session id a line, one per trajectory"
tb1=$(sed -n 1p "$work/out")
tb2=$(sed -n 2p "$work/out")
is "$(msgs_where "$tb1" true) $(msgs_where "$tb2" true)" "8 10" \
	"tau-bench: each trajectory's messages in a session of its own, in file order"
is "$(psql_q -c "SELECT metadata->>'source' || ' ' || (metadata->>'task_id') || ' ' || (metadata->>'trial') || ' ' || (metadata ? 'info') FROM mnemo.sessions WHERE id = '$tb2'")" \
	"tau-bench 48 2 true" "tau-bench: the trajectory's task, trial, reward and info are its session's metadata"
is "$(parts_where "$tb1" "part_type = 'tool' AND tool_state = 'completed'")" 2 \
	"tau-bench: function calls completed by their tool messages"
check "tau-bench: the summary counts the sessions" grep -q "imported 18 messages into 2 sessions" "$work/err"
"$M" export "$tb2" >"$work/tau.first.jsonl" 2>"$work/err"
run_m --db "dbname=$copy_db" import "$work/tau.first.jsonl" --quiet
expect_rc 0 "tau-bench: a trajectory's export imports into another database"
"$M" --db "dbname=$copy_db" export "$tb2" >"$work/tau.second.jsonl" 2>"$work/err"
check "tau-bench: export, import, export: byte-identical" cmp -s "$work/tau.first.jsonl" "$work/tau.second.jsonl"

cat $D/transcript-openhands.jsonl $D/transcript-openhands.jsonl >"$work/oh-two.jsonl"
before=$(sessions)
run_m import "$work/oh-two.jsonl" --session oh-two
expect_rc 1 "an OpenHands output of two runs under --session, which names one, fails"
check "and names the line where the second begins" grep -q "line 2: a second session in the file" "$work/err"
is "$(sessions)" "$before" "and stores nothing"
{ cat $D/transcript-openhands.jsonl; echo '{"instance_id": "second", "history": []}'; } >"$work/oh-bad.jsonl"
run_m import "$work/oh-bad.jsonl"
expect_rc 1 "an OpenHands output whose second run has no event fails"
check "naming the session's line" grep -q 'no message in the session of line 2 (read as openhands' "$work/err"
is "$(sessions)" "$before" "and the first run's session, stored before it in the same transaction, is not left"
run_m import "$work/oh-two.jsonl" --quiet
expect_rc 0 "an OpenHands resolver output of two runs imports"
is "$(wc -l <"$work/out")" 2 "openhands: two session ids"
is "$(msgs_where "$(sed -n 1p "$work/out")" true) $(msgs_where "$(sed -n 2p "$work/out")" true)" "5 5" \
	"openhands: each run is a session of its own"

# The whole files, where the project's shared data set is beside the
# repository (its READMEs give the counts): tau-bench's 200 trajectories of
# 5,308 messages, 1,164 of them tool results that complete their calls; the
# OpenHands resolver output's two runs.
shared=${MNEMO_SHARED_TRANSCRIPTS:-../shared/data/transcripts}
if [ -f "$shared/tau-bench/historical_trajectories/gpt-4o-airline.json" ]; then
	run_m import "$shared/tau-bench/historical_trajectories/gpt-4o-airline.json"
	expect_rc 0 "tau-bench's whole results file imports"
	is "$(wc -l <"$work/out")" 200 "as 200 sessions"
	ids=$(paste -sd, "$work/out" | sed "s/,/','/g")
	is "$(psql_q -c "SELECT count(*) || ' ' || count(*) FILTER (WHERE role = 'system') FROM mnemo.messages WHERE session_id IN ('$ids')")" \
		"4144 200" "of 5,308 - 1,164 messages, a system message each"
	is "$(psql_q -c "SELECT count(*) FROM mnemo.message_parts WHERE session_id IN ('$ids') AND part_type = 'tool' AND tool_state = 'completed'")" \
		1164 "and 1,164 tool calls, each completed by its result"
	for f in "$shared"/openhands/*.json "$shared"/openhands/*.jsonl; do
		[ -f "$f" ] || continue
		run_m import "$f" --quiet
		expect_rc 0 "OpenHands $(basename "$f") imports"
		ids=$(paste -sd, "$work/out" | sed "s/,/','/g")
		# a call answered by a result, of those that are not their run's
		# last message (a run ends on finish, which nothing answers)
		fig=$(psql_q -F ' ' -c "SELECT count(*) FILTER (WHERE p.tool_state = 'completed'), count(*) FROM mnemo.message_parts p JOIN mnemo.messages m ON m.session_id = p.session_id AND m.seq = p.seq WHERE p.session_id IN ('$ids') AND p.part_type = 'tool' AND m.role = 'assistant' AND m.seq < (SELECT max(seq) FROM mnemo.messages l WHERE l.session_id = p.session_id)")
		echo "# openhands pairing, $(basename "$f"): ${fig% *} of ${fig#* } tool calls paired"
		check "OpenHands $(basename "$f"): at least 95% of its tool calls paired" \
			test "$(( ${fig% *} * 100 ))" -ge "$(( ${fig#* } * 95 ))" -a "${fig#* }" -gt 0
	done
	run_m import "$shared/openhands/resolver-output.jsonl" --quiet
	is "$(wc -l <"$work/out")" 2 "the resolver output as its two runs"
fi

round_trip $D/claude-code/bf/3a8bd70c3e/1/full.jsonl claude-code 5
cc_sid=$last_sid
# jsonb sorts an object's keys (shorter first): a tool input whose keys it
# would reorder keeps its text as written in "input_text"
check "claude-code: the Edit inputs, whose keys jsonb reorders, keep their text as written" \
	test "$(parts_where "$cc_sid" "part_type = 'tool' AND content->>'input_text' LIKE '{\"replace_all\":false,\"file_path\":%' AND (content->>'input_text')::jsonb = content->'input'")" = 2
check "claude-code: an input already in jsonb's order (Read's) has no copy" \
	test "$(parts_where "$cc_sid" "part_type = 'tool' AND tool_name = 'Read' AND NOT content ? 'input_text'")" = 1
# Claude Code's sub-agents: a log's SESSION/subagents/agent-ID.jsonl are
# imported with it, each a child session (parent_id) whose id is the
# parent's and the agent's, named in the metadata of the Task call that
# started it; a sub-agent's log alone is a session of its own; export
# --with-children writes them after it, and reads back byte for byte
ccs=5f0c2a1e-7d3b-4c55-9a0e-2b8f6d1c4e90
ccs_child=$ccs-agent-a7c1e9f04b2d6e813
run_m import "$D/claude-code-subagents/$ccs/subagents/agent-a7c1e9f04b2d6e813.jsonl" --session alone-sub
expect_rc 0 "claude-code: a sub-agent's log alone imports"
is "$(msgs_where alone-sub true) $(psql_q -c "SELECT metadata->>'agent_id' FROM mnemo.sessions WHERE id = 'alone-sub'")" "3 a7c1e9f04b2d6e813" \
	"claude-code: as a session of its own, its sidechain records its conversation"
run_m import "$D/claude-code-subagents/$ccs.jsonl"
expect_rc 0 "claude-code: a log with a sub-agent imports"
is "$(paste -sd ' ' "$work/out")" "$ccs $ccs_child" "claude-code: the session, then its sub-agent's"
is "$(psql_q -c "SELECT parent_id FROM mnemo.sessions WHERE id = '$ccs_child'") $(msgs_where "$ccs" true) $(msgs_where "$ccs_child" true)" "$ccs 3 3" \
	"claude-code: the sub-agent a child session of it, with its own messages"
check "claude-code: the Task call's metadata names the sub-agent and its session" \
	test "$(parts_where "$ccs" "tool_name = 'Task' AND tool_state = 'completed' AND content->'metadata' = '{\"agent_id\": \"a7c1e9f04b2d6e813\", \"subagent_session\": \"$ccs_child\"}'")" = 1
check "claude-code: the sub-agent's own calls paired with their results" \
	test "$(parts_where "$ccs_child" "tool_name = 'Grep' AND tool_state = 'completed'")" = 1
"$M" export --with-children "$ccs" >"$work/cc-kids.first.jsonl" 2>"$work/err"
is "$(grep -c '"type": "mnemo.session"' "$work/cc-kids.first.jsonl")" 2 "export --with-children: the session and its child"
check "export --with-children: the child's header names its parent" \
	grep -q "\"id\": \"$ccs_child\", \"parent_id\": \"$ccs\"" "$work/cc-kids.first.jsonl"
run_m --db "dbname=$copy_db" import "$work/cc-kids.first.jsonl"
expect_rc 0 "export --with-children: imports into another database"
"$M" --db "dbname=$copy_db" export --with-children "$ccs" >"$work/cc-kids.second.jsonl" 2>"$work/err"
check "export --with-children, import, export: byte-identical" \
	cmp -s "$work/cc-kids.first.jsonl" "$work/cc-kids.second.jsonl"
# an older log writes its sub-agent's records inline, isSidechain true
cat >"$work/cc-inline.jsonl" <<'EOF2'
{"parentUuid":null,"isSidechain":false,"sessionId":"cc-inline","cwd":"/w","version":"1.0.30","type":"user","message":{"role":"user","content":"look around"},"uuid":"m1","timestamp":"2025-06-01T10:00:00.000Z"}
{"parentUuid":"m1","isSidechain":false,"sessionId":"cc-inline","cwd":"/w","version":"1.0.30","type":"assistant","message":{"id":"msg_1","model":"claude-sonnet-4","role":"assistant","content":[{"type":"tool_use","id":"toolu_T1","name":"Task","input":{"description":"look","prompt":"List the files"}}],"stop_reason":"tool_use","usage":{"input_tokens":1,"output_tokens":1}},"uuid":"m2","timestamp":"2025-06-01T10:00:01.000Z"}
{"parentUuid":null,"isSidechain":true,"sessionId":"cc-inline","cwd":"/w","version":"1.0.30","type":"user","message":{"role":"user","content":"List the files"},"uuid":"s1","timestamp":"2025-06-01T10:00:02.000Z"}
{"parentUuid":"s1","isSidechain":true,"sessionId":"cc-inline","cwd":"/w","version":"1.0.30","type":"assistant","message":{"id":"msg_s1","model":"claude-haiku","role":"assistant","content":[{"type":"text","text":"a.c b.c"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}},"uuid":"s2","timestamp":"2025-06-01T10:00:03.000Z"}
{"parentUuid":"m2","isSidechain":false,"sessionId":"cc-inline","cwd":"/w","version":"1.0.30","type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_T1","type":"tool_result","content":"a.c b.c"}]},"uuid":"m3","timestamp":"2025-06-01T10:00:04.000Z"}
EOF2
run_m import "$work/cc-inline.jsonl"
expect_rc 0 "claude-code: an older log with inline sidechain records imports"
cci_child=$(sed -n 2p "$work/out")
is "$(msgs_where cc-inline true) $(psql_q -c "SELECT parent_id FROM mnemo.sessions WHERE id = '$cci_child'") $(msgs_where "$cci_child" true)" "2 cc-inline 2" \
	"claude-code: its sidechain records a child session of it"

# Claude Code's compaction: a microcompact_boundary clears tool results (the
# parts are tombstoned), a user record with isCompactSummary is what the
# conversation goes on from (a summary over everything before it)
cc_log=$D/claude-code/bf/3a8bd70c3e/1/full.jsonl
{
	head -n 14 "$cc_log"
	printf '%s\n' '{"type":"system","subtype":"microcompact_boundary","content":"Context microcompacted","isSidechain":false,"timestamp":"2026-03-02T08:50:40.000Z","uuid":"mc-1","microcompactMetadata":{"trigger":"auto","preTokens":9000,"tokensSaved":4000,"compactedToolIds":["toolu_01DJfGh7ZTDzLJVYtvuyJ1wc","toolu_01KxxDdfDjENzs99e1tP37he"]}}' \
		'{"type":"system","subtype":"compact_boundary","content":"Conversation compacted","isSidechain":false,"timestamp":"2026-03-02T08:50:41.000Z","uuid":"cb-1","compactMetadata":{"trigger":"manual","preTokens":12000}}' \
		'{"type":"user","isSidechain":false,"isCompactSummary":true,"timestamp":"2026-03-02T08:50:42.000Z","uuid":"cs-1","message":{"role":"user","content":"This session is being continued from a previous conversation. Summary: the truncate fix was planned and the three files were read."}}'
	tail -n +15 "$cc_log"
} | sed 's/"sessionId":"[^"]*"/"sessionId":"cc-compacted"/' >"$work/cc-compacted.jsonl"
run_m import "$work/cc-compacted.jsonl"
expect_rc 0 "claude-code: a log that compacted imports"
is "$(ctx_of cc-compacted)" "S assistant6" \
	"claude-code compaction: the summary, then what followed, is the context"
is "$(psql_q -c "SELECT string_agg(tool_call_id || ' ' || compacted_at, ', ' ORDER BY tool_call_id) FROM mnemo.message_parts WHERE session_id = 'cc-compacted' AND compacted_at IS NOT NULL")" \
	"toolu_01DJfGh7ZTDzLJVYtvuyJ1wc 1772441440000, toolu_01KxxDdfDjENzs99e1tP37he 1772441440000" \
	"claude-code microcompaction: the cleared calls' parts are tombstoned at its time"
run_m verify cc-compacted
expect_rc 0 "claude-code compaction: mnemo verify passes"
"$M" export cc-compacted >"$work/cc-compacted.first.jsonl" 2>"$work/err"
run_m --db "dbname=$copy_db" import "$work/cc-compacted.first.jsonl"
"$M" --db "dbname=$copy_db" export cc-compacted >"$work/cc-compacted.second.jsonl" 2>"$work/err"
check "claude-code compaction: export, import, export: byte-identical" \
	cmp -s "$work/cc-compacted.first.jsonl" "$work/cc-compacted.second.jsonl"
run_m show "$cc_sid"
check "claude-code: and libmnemo reads the input in the order written (mnemo show)" \
	grep -q '^    {"replace_all":false,"file_path":' "$work/out"

# ---- what is not a transcript fails and leaves nothing ------------------

before=$(sessions)
: >"$work/empty.jsonl"
run_m import "$work/empty.jsonl"
expect_rc 1 "an empty file fails"
check "saying it is empty" grep -q "empty: nothing to import" "$work/err"
printf '{"type":"session","id":"x","cwd":"/"}\n{"type":"model_change","modelId":"m"}\n' >"$work/nomsg.jsonl"
run_m import "$work/nomsg.jsonl"
expect_rc 1 "a log with no message fails"
check "naming what it read" grep -q "no message in the transcript (read as pi" "$work/err"
run_m import $D/transcript-pi.jsonl --format claude-code
expect_rc 1 "a pi log read as Claude Code fails"
check "saying what it read it as" grep -q "read as claude-code" "$work/err"
run_m import $D/transcript-pi.jsonl --format csv
expect_rc 2 "an unknown --format is a usage error"
check "names the formats" grep -q "^mnemo import: unknown --format 'csv' (one of mnemo, claude-code, pi, openai, anthropic, swe-agent, openhands, codex)" "$work/err"
run_m -d no_such_database_at_all import no-such-file --format csv
expect_rc 2 "found before the file is opened or the server asked"
check "and none of these left a session" test "$(sessions)" = "$before"

# a directory is named as one, as a missing file is, before the server is asked
before=$(sessions)
mkdir -p "$work/a-dir"
run_m import "$work/a-dir"
expect_rc 1 "a directory instead of a file fails"
check "naming the path and why" grep -q "^mnemo: $work/a-dir: Is a directory\$" "$work/err"
run_m -d no_such_database_at_all import "$work/a-dir"
check "found before the server is asked" grep -q "Is a directory" "$work/err"
check "and it left no session" test "$(sessions)" = "$before"

# ---- a log cut short, and the lines of errors ---------------------------

head -c -200 $D/transcript-pi.jsonl >"$work/cut.jsonl"
run_m import "$work/cut.jsonl" --new-ids
expect_rc 1 "a log whose last line is cut short fails"
check "naming the line and --lenient" grep -q "line 32: .*--lenient skips it" "$work/err"
run_m import "$work/cut.jsonl" --new-ids --lenient
expect_rc 0 "--lenient imports it"
check "and reports the line it skipped" grep -q "1 truncated last line" "$work/err"
# blank lines are skipped everywhere: after the cut line too
{ cat "$work/cut.jsonl"; printf '\n\n \n'; } >"$work/cut-blank.jsonl"
run_m import "$work/cut-blank.jsonl" --new-ids --lenient
expect_rc 0 "--lenient imports it with blank lines after the cut line"
check "and reports the line it skipped" grep -q "1 truncated last line" "$work/err"
{ cat "$work/cut.jsonl"; printf '\n\n{"type":"model_change"}\n'; } >"$work/cut-more.jsonl"
run_m import "$work/cut-more.jsonl" --new-ids --lenient
expect_rc 1 "but a bad line with a record after it fails, --lenient or not"
check "naming its line" grep -q "^mnemo: line 32: not valid JSON" "$work/err"
{ printf '\357\273\277'; cat "$work/pi.first.jsonl"; } >"$work/bom.jsonl"
run_m import "$work/bom.jsonl" --new-ids --quiet
expect_rc 0 "a mnemo export after a byte order mark"
printf '{"role":"user","content":"a"}\n\357\273\277{"role":"user","content":"b"}\n' >"$work/bom-inside.jsonl"
run_m import "$work/bom-inside.jsonl"
expect_rc 1 "a byte order mark anywhere else is not skipped"
printf '[\n  {"role": "user", "content": "hi"},\n  {"role": "user", "content": 5}\n]\n' >"$work/bad.json"
run_m import "$work/bad.json"
expect_rc 1 "a bad element of a JSON document"
check "is named by its line" grep -q "^mnemo: line 3: \"content\" must be" "$work/err"
# \u0000 (and a lone surrogate), which PostgreSQL's text cannot hold: U+FFFD,
# the policy chat follows for a NUL in a streamed reply
printf '{"role":"user","content":"a\\u0000b"}\n{"role":"user","content":"\\ud800c"}\n' >"$work/nul.jsonl"
run_m import "$work/nul.jsonl"
expect_rc 0 "\\u0000 and a lone surrogate import"
nul_sid=$(cat "$work/out")
check "as U+FFFD" test "$(parts_where "$nul_sid" "content->>'text' IN (E'a\\uFFFDb', E'\\uFFFDc')")" = 2
check "and the summary says they were replaced, not left out" \
	bash -c "grep -q '; replaced 2 characters: 2 .u0000 or lone surrogate made U+FFFD\$' '$work/err' && ! grep -q 'left out' '$work/err'"
# a server-side error (a message id used twice) names the line
printf '{"id":"m1","role":"user","parts":[]}\n{"id":"m1","role":"user","parts":[]}\n' >"$work/dup.jsonl"
run_m import "$work/dup.jsonl"
expect_rc 1 "a message id used twice"
check "is named by its line (the server said messages[1])" grep -q "^mnemo: line 2: " "$work/err"

# ---- images ---------------------------------------------------------------

cat >"$work/images.json" <<'EOF2'
[{"role": "user", "content": [{"type": "text", "text": "what is this?"},
  {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
  {"type": "image_url", "image_url": {"url": "https://example.com/cat.jpg"}}]},
 {"role": "assistant", "content": "a cat"}]
EOF2
run_m import "$work/images.json"
expect_rc 0 "OpenAI image_url blocks import"
img_sid=$(cat "$work/out")
check "a data: URL is an image part with its media type and base64 data" \
	test "$(parts_read_where "$img_sid" "content->>'type' = 'image' AND content->>'media_type' = 'image/png' AND content->>'data' = 'iVBORw0KGgo='")" = 1
check "a plain URL is an image part with the url" \
	test "$(parts_where "$img_sid" "part_type = 'image' AND content->>'url' = 'https://example.com/cat.jpg'")" = 1
check "an image is estimated at 1600 tokens" \
	test "$(parts_where "$img_sid" "part_type = 'image' AND token_estimate = 1600")" = 2
check "build_context renders a placeholder with its size and estimate" \
	bash -c "psql -X -q -A -t -c \"SELECT content FROM mnemo.build_context('$img_sid', 100000) WHERE position = 1\" | grep -qF '[Image: image/png, 12 bytes of base64, ~1600 tokens]'"
# mnemo show is for reading: a pasted screenshot's base64 (hundreds of KB
# in real Claude Code logs) is shortened to its size; --json keeps it whole
big_b64=$(head -c 30000 /dev/zero | base64 -w0)
printf '[{"role": "user", "content": [{"type": "text", "text": "see"}, {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "%s"}}]}]\n' "$big_b64" >"$work/bigimg.json"
run_m import "$work/bigimg.json"
expect_rc 0 "an Anthropic image block of 40000 bytes of base64 imports"
big_sid=$(cat "$work/out")
"$M" show "$big_sid" >"$work/show.txt" 2>"$work/err"
check "show prints the image part without its base64" bash -c "! grep -qF AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA '$work/show.txt'"
check "but with its media type and size" grep -qF '"data": "AAAAAAAAAAAAAAAA... (40000 bytes of base64: mnemo show --json has them)", "type": "image", "media_type": "image/png"}' "$work/show.txt"
check "show --json keeps it whole" bash -c "'$M' show '$big_sid' --json | grep -qF '$big_b64'"
"$M" show "$img_sid" >"$work/show.txt" 2>"$work/err"
check "a short one is shown as it is" grep -qF '"data": "iVBORw0KGgo="' "$work/show.txt"
printf '{"role": "user", "parts": [{"type": "image", "media_type": "image/png", "data": "AA==", "url": "x"}]}\n' >"$work/badimg.jsonl"
run_m import "$work/badimg.jsonl"
expect_rc 1 "an image part with both data and url"
check "is refused, naming the line" grep -q '^mnemo: line 1: parts\[0\]: an image has either "data" (base64) or "url"' "$work/err"

# ---- a whole session: header with state, checkpoints, created time -------

psql_q >/dev/null <<'SQL'
SELECT mnemo.create_session('tx_whole', title => 'whole', metadata => '{"tags": ["a", "b"]}',
                            system_prompt => 'be brief', created_at => 1700000000000);
SELECT mnemo.add_checkpoint('tx_whole', 'start');
SELECT mnemo.append_messages('tx_whole', '[{"role": "user", "parts": [{"type": "text", "text": "one"}]},
                                          {"role": "assistant", "parts": [{"type": "text", "text": "two"}]}]');
SELECT mnemo.add_checkpoint('tx_whole', 'turn-2', true);
SELECT mnemo.append_messages('tx_whole', '[{"role": "user", "parts": [{"type": "text", "text": "three"}]},
                                          {"role": "assistant", "parts": [{"type": "text", "text": "four"}]}]');
SELECT mnemo.add_checkpoint('tx_whole', 'end', false, 4, 1700000009000);
SELECT mnemo.add_checkpoint('tx_whole', 'also end', true, 4, 1700000009001);
SELECT mnemo.update_state('tx_whole', '{"step": 3, "plan": {"done": ["x"], "next": null}}');
SQL
cps_of() { psql_q "$@" -c "SELECT string_agg(seq || ' ' || label || ' ' || auto || ' ' || created_at, ',' ORDER BY seq, created_at, label) FROM mnemo.list_checkpoints('tx_whole')"; }
"$M" export tx_whole >"$work/whole.first.jsonl" 2>"$work/err"
check "the header carries the session's state" \
	grep -q '"metadata": {"tags": \["a", "b"\]}, "state": {"plan": {"done": \["x"\], "next": null}, "step": 3}, "created_at": 1700000000000}$' "$work/whole.first.jsonl"
is "$(awk '/"type": "mnemo.checkpoint"/ { sub(/.*"label": "/, ""); sub(/".*/, ""); printf "[%s]", $0; next }
	/"role"/ { sub(/.*"role": "/, ""); sub(/".*/, ""); printf "%s ", $0 }' "$work/whole.first.jsonl")" \
	"[start]user assistant [turn-2]user assistant [end][also end]" \
	"each checkpoint is a line after the message it labels the end at"
check "a checkpoint line: label, auto, created_at" \
	grep -qx '{"type": "mnemo.checkpoint", "label": "end", "auto": false, "created_at": 1700000009000}' "$work/whole.first.jsonl"
run_m --db "dbname=$copy_db" import "$work/whole.first.jsonl"
expect_rc 0 "the whole session imports into another database"
is "$(cps_of -d "$copy_db")" "$(cps_of)" "its checkpoints come back at their seqs, with auto and their times"
is "$(psql_q -d "$copy_db" -c "SELECT mnemo.get_state('tx_whole')")" "$(psql_q -c "SELECT mnemo.get_state('tx_whole')")" \
	"its state comes back (update_state)"
is "$(psql_q -d "$copy_db" -c "SELECT created_at || ' ' || title || ' ' || system_prompt || ' ' || metadata FROM mnemo.sessions WHERE id = 'tx_whole'")" \
	'1700000000000 whole be brief {"tags": ["a", "b"]}' "and its created time, title, system prompt and metadata"
"$M" --db "dbname=$copy_db" export tx_whole >"$work/whole.second.jsonl" 2>"$work/err"
check "export, import, export of a whole session: byte-identical" cmp -s "$work/whole.first.jsonl" "$work/whole.second.jsonl"

# ---- several exports in one file: a session for each header ---------------

psql_q >/dev/null <<'SQL'
SELECT mnemo.create_session('tx_pair', title => 'pair', created_at => 1700000001000);
SELECT mnemo.append_messages('tx_pair', '[{"role": "user", "parts": [{"type": "text", "text": "five"}]}]');
SQL
run_m export tx_whole tx_pair
expect_rc 0 "mnemo export of two sessions"
cp "$work/out" "$work/pair.first.jsonl"
is "$(grep -c '"type": "mnemo.session"' "$work/pair.first.jsonl")" 2 "writes a header for each"
check "each session as its own export writes it" \
	cmp -s "$work/pair.first.jsonl" <(cat "$work/whole.first.jsonl"; "$M" export tx_pair)
run_m --db "dbname=$copy_db" import "$work/pair.first.jsonl"
expect_rc 1 "the file imports into a database that holds the first session: refused"
check "naming the session and its header's line" grep -q 'line 1: session "tx_whole" of this transcript already exists' "$work/err"
is "$(psql_q -d "$copy_db" -c "SELECT count(*) FROM mnemo.sessions WHERE id = 'tx_pair'")" 0 \
	"and the second session is not left behind"
run_m --db "dbname=$copy_db" purge tx_whole --yes
expect_rc 0 "mnemo purge of the copy's first session"
run_m --db "dbname=$copy_db" import "$work/pair.first.jsonl"
expect_rc 0 "then the file imports"
is "$(tr '\n' ' ' <"$work/out")" "tx_whole tx_pair " "printing each session's id, a line each"
check "the summary counts both" grep -q '^mnemo: imported 5 messages into 2 sessions$' "$work/err"
"$M" --db "dbname=$copy_db" export tx_whole tx_pair >"$work/pair.second.jsonl" 2>"$work/err"
check "export of two, import, export: byte-identical" cmp -s "$work/pair.first.jsonl" "$work/pair.second.jsonl"
run_m export tx_pair tx_nope tx_whole
expect_rc 3 "mnemo export of a session that does not exist"
is "$(grep -c '"type": "mnemo.session"' "$work/out")" 1 "writes the sessions before it, not those after"
run_m checkpoints tx_whole --json
expect_rc 0 "mnemo checkpoints --json"
is "$(jq -c '[.[] | [.seq, .label, .auto, .created_at > 0]]' "$work/out")" \
	'[[0,"start",false,true],[2,"turn-2",true,true],[4,"end",false,true],[4,"also end",true,true]]' \
	"lists the checkpoints as a JSON array: seq, label, auto, created_at"
run_m checkpoints tx_whole --add "by hand" --json
is "$(jq -c '[.[] | [.seq, .label, .auto]]' "$work/out")" '[[4,"by hand",false]]' "--add with --json prints the new one as an array of one"
before=$(sessions)
sed 's/"label": "also end"/"label": "end"/' "$work/whole.first.jsonl" >"$work/dup-cp.jsonl"
run_m import "$work/dup-cp.jsonl" --new-ids
expect_rc 1 "a checkpoint label used twice in a transcript"
check "is named by the line of its second use" grep -q '^mnemo: line 9: checkpoint "end" already exists' "$work/err"
check "and leaves no session" test "$(sessions)" = "$before"
printf '{"type": "mnemo.session", "version": 1}\n{"type": "mnemo.checkpoint", "label": ""}\n' >"$work/bad-cp.jsonl"
run_m import "$work/bad-cp.jsonl"
expect_rc 1 "a checkpoint without a label"
check "names its line" grep -q '^mnemo: line 2: a checkpoint.s "label" must be a string' "$work/err"
printf '{"type": "mnemo.session", "version": 1, "state": [1]}\n' >"$work/bad-state.jsonl"
run_m import "$work/bad-state.jsonl"
expect_rc 1 "a state that is not an object"
check "names its line" grep -q '^mnemo: line 1: "state" must be an object' "$work/err"

# ---- an agent's log with its own id: read again, only what is new --------

run_m import $D/transcript-pi.jsonl
expect_rc 0 "a pi log imports under its own session id"
check "which is the log's" test "$(cat "$work/out")" = d703a1a9-1b7b-4fb1-b512-c9738b1fe617
before=$(sessions)
run_m import $D/transcript-pi.jsonl
expect_rc 0 "importing it again adds what is new to its session"
check "which is nothing: '0 new'" grep -q "^mnemo: d703a1a9-1b7b-4fb1-b512-c9738b1fe617: 0 new" "$work/err"
check "and no second session" test "$(sessions)" = "$before"
# a mnemo export imports once: it is a snapshot, not a log that grows
"$M" export d703a1a9-1b7b-4fb1-b512-c9738b1fe617 >"$work/pi-export.jsonl" 2>/dev/null
run_m import "$work/pi-export.jsonl"
expect_rc 1 "a mnemo export of a session that is there is refused"
check "with MN004's message and the hint" grep -q "already exists: it was imported before (--new-ids" "$work/err"
check "and no second session" test "$(sessions)" = "$before"

echo "1..$n"
[ "$failed" -eq 0 ]
