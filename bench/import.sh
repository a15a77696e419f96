#!/usr/bin/env bash
# bench/import.sh: `mnemo import` of a mnemo JSONL transcript of many small
# messages (issue 17 item 4), as messages per second, against COPY of the
# same messages' text into a plain table in the same run.
#
#   bash bench/import.sh [MESSAGES] [RUNS] [AMONG]   (defaults 100000, 3, 500)
#
# Connects with the PG* environment (bench/run.sh sets it to its private
# cluster; the database must have mnemo) and runs client/mnemo, which must
# be built.  The transcript is generated: a header, then MESSAGES lines
# alternating user and assistant, each one text part of 60-120 bytes with
# the ids and token_estimate an export writes, so the import keeps them.
# Each run imports the file under its own session id (the header's, changed
# per run; message and part ids kept, as an import of an export keeps them)
# and is timed from the start of the command to its exit; the median of RUNS
# is printed.
#
# The first line's session ids sort after every other one, so every index
# insert of the import takes PostgreSQL's rightmost-leaf fast path.  The
# second line is what an import of a Claude Code or pi log meets: its
# session id a random UUID, in a database that also holds AMONG sessions of
# 2,000 messages each (made first, untimed; 0: no second line), so that the
# session's rows go into the middle of every index.
#
# The last line times `mnemo export` of the last import (first line's
# session) to a file, against COPY of one run's texts out of the plain table.
#
# BENCH_IMPORT_BARE=1 writes the transcript as every build since 0.1.0 reads
# it, for a comparison with such a build (bench/profiles/import_ab.sh): no
# header line and no message times, each timed import into a database of its
# own (the extension dropped and made again, untimed: 0.1.0 kept message ids
# unique database-wide; a CHECKPOINT after), and no second line.
set -euo pipefail
cd "$(dirname "$0")/.."

messages=${1:-100000}
runs=${2:-3}
among=${3:-500}
bare=${BENCH_IMPORT_BARE:-0}
[ "$bare" = 1 ] && among=0
work=$(mktemp -d /tmp/mnemo-bench-import.XXXXXX)
trap 'rm -rf "$work"' EXIT

awk -v n="$messages" -v bare="$bare" 'BEGIN {
	if (!bare)
		printf "{\"type\": \"mnemo.session\", \"version\": 1, \"id\": \"bench-import\", \"agent\": \"default\", \"model_id\": \"\", \"provider_id\": \"\", \"system_prompt\": \"\", \"created_at\": 1772441431000}\n"
	srand(15)
	for (i = 1; i <= n; i++) {
		text = sprintf("message %d of the import benchmark:", i)
		len = 60 + int(rand() * 61)
		while (length(text) < len)
			text = text " word" int(rand() * 1000)
		if (bare)
			printf "{\"id\": \"msg_%08d\", \"role\": \"%s\", \"agent\": \"default\", \"model_id\": \"\", \"provider_id\": \"\", \"parts\": [{\"id\": \"part_%08d\", \"text\": \"%s\", \"type\": \"text\", \"token_estimate\": %d}]}\n", i, (i % 2 ? "user" : "assistant"), i, text, int(len / 4)
		else
			printf "{\"id\": \"msg_%08d\", \"role\": \"%s\", \"created_at\": %.0f, \"agent\": \"default\", \"model_id\": \"\", \"provider_id\": \"\", \"parts\": [{\"id\": \"part_%08d\", \"text\": \"%s\", \"type\": \"text\", \"token_estimate\": %d}]}\n", i, (i % 2 ? "user" : "assistant"), 1772441431000 + i, i, text, int(len / 4)
	}
}' >"$work/transcript.jsonl"
awk -v first=$((bare ? 1 : 2)) 'NR >= first { match($0, /"text": "[^"]*"/); print substr($0, RSTART + 9, RLENGTH - 10) }' \
	"$work/transcript.jsonl" >"$work/texts.txt"

now_ms() { date +%s%3N; }
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

psql -X -q -v ON_ERROR_STOP=1 -c "DROP TABLE IF EXISTS public.bench_import_plain" \
	-c "CREATE TABLE public.bench_import_plain (id bigserial PRIMARY KEY, session_id text, seq int, content text)" >/dev/null
: >"$work/mnemo.ms"
: >"$work/copy.ms"
for ((r = 1; r <= runs; r++)); do
	sed "1s/\"bench-import\"/\"bench-import-$$-$r\"/" "$work/transcript.jsonl" >"$work/run.jsonl"
	[ "$bare" = 1 ] && psql -X -q -v ON_ERROR_STOP=1 -c "DROP EXTENSION mnemo CASCADE" \
		-c "CREATE EXTENSION mnemo CASCADE" -c CHECKPOINT >/dev/null
	t0=$(now_ms)
	session=$(client/mnemo import "$work/run.jsonl" --quiet)
	echo $(($(now_ms) - t0)) >>"$work/mnemo.ms"
	t0=$(now_ms)
	awk -v s="copy-$r" '{ printf "%s\t%d\t%s\n", s, NR, $0 }' "$work/texts.txt" |
		psql -X -q -v ON_ERROR_STOP=1 -c "COPY public.bench_import_plain (session_id, seq, content) FROM STDIN"
	echo $(($(now_ms) - t0)) >>"$work/copy.ms"
done
mnemo_ms=$(median <"$work/mnemo.ms")
copy_ms=$(median <"$work/copy.ms")
stored=$(psql -X -Atc "SELECT count(*) FROM mnemo.messages WHERE session_id = '$session'")
[ "$stored" = "$messages" ] || { echo "bench/import: the last import stored $stored messages, not $messages" >&2; exit 1; }

# the export of the last import, against COPY out of the texts of one run
: >"$work/export.ms"
: >"$work/copy_out.ms"
for ((r = 1; r <= runs; r++)); do
	t0=$(now_ms)
	client/mnemo export "$session" >"$work/export.jsonl"
	echo $(($(now_ms) - t0)) >>"$work/export.ms"
	t0=$(now_ms)
	psql -X -q -v ON_ERROR_STOP=1 \
		-c "COPY (SELECT content FROM public.bench_import_plain WHERE session_id = 'copy-1' ORDER BY id) TO STDOUT" \
		>"$work/copy_out.txt"
	echo $(($(now_ms) - t0)) >>"$work/copy_out.ms"
done
export_ms=$(median <"$work/export.ms")
copy_out_ms=$(median <"$work/copy_out.ms")
lines=$(grep -c '"role": ' "$work/export.jsonl" || true)
[ "$lines" = "$messages" ] || { echo "bench/import: the export wrote $lines messages, not $messages" >&2; exit 1; }

# the same file under UUID session ids, among the others
if [ "$among" -gt 0 ]; then
	psql -X -q -v ON_ERROR_STOP=1 >/dev/null <<SQL
SELECT mnemo.append_messages((mnemo.create_session(gen_random_uuid()::text)).id,
       (SELECT jsonb_agg(jsonb_build_object('role', CASE WHEN i % 2 = 1 THEN 'user' ELSE 'assistant' END,
                                            'parts', jsonb_build_array(jsonb_build_object('type', 'text',
                                              'text', 'message ' || i || ' of another session of the import benchmark'))))
        FROM generate_series(1, 2000) i))
FROM generate_series(1, $among);
SQL
	: >"$work/uuid.ms"
	for ((r = 1; r <= runs; r++)); do
		sed "1s/\"bench-import\"/\"$(cat /proc/sys/kernel/random/uuid)\"/" "$work/transcript.jsonl" >"$work/run.jsonl"
		t0=$(now_ms)
		session=$(client/mnemo import "$work/run.jsonl" --quiet)
		echo $(($(now_ms) - t0)) >>"$work/uuid.ms"
	done
	uuid_ms=$(median <"$work/uuid.ms")
	stored=$(psql -X -Atc "SELECT count(*) FROM mnemo.messages WHERE session_id = '$session'")
	[ "$stored" = "$messages" ] || { echo "bench/import: the last UUID import stored $stored messages, not $messages" >&2; exit 1; }
fi

echo "bench/import: $messages messages (one text part of 60-120 B each), median of $runs runs"
printf '%-52s %12s %12s %8s\n' measure mnemo "plain COPY" ratio
awk -v n="$messages" -v a="$mnemo_ms" -v b="$copy_ms" 'BEGIN {
	printf "%-52s %12.0f %12.0f %8.2f  messages/s\n", "mnemo import vs COPY of the texts", n * 1000 / a, n * 1000 / b, b / a
}'
[ "$among" -gt 0 ] && awk -v n="$messages" -v a="$uuid_ms" -v b="$copy_ms" -v k="$among" 'BEGIN {
	printf "%-52s %12.0f %12.0f %8.2f  messages/s\n", "  a UUID session among " k " others of 2,000", n * 1000 / a, n * 1000 / b, b / a
}'
awk -v n="$messages" -v a="$export_ms" -v b="$copy_out_ms" 'BEGIN {
	printf "%-52s %12.0f %12.0f %8.2f  messages/s\n", "mnemo export vs COPY TO of the texts", n * 1000 / a, n * 1000 / b, b / a
}'
exit 0
