#!/usr/bin/env bash
# The recall measure (issue 35): every session of ../shared/data/transcripts
# with at least MNEMO_SWEEP_MIN tokens of context (6000; a line says so when
# the folder is absent) is compacted by `mnemo compact --level 3` to a
# quarter of its context.  Then every distinctive token that left the
# context -- numbers of four digits or more, file paths, and the command
# lines of tool calls, found in the messages no longer in the view and in
# none of the assembled context's text -- is looked for as a model would:
# lcm_grep's server call, recall_search, by its words, then (as a model
# retries) as a regular expression of the literal.  It is found when a hit
# is a message that holds it and names a covering summary that is in the
# context.  Each session must find all of its tokens; the rate per session
# is printed as TAP comments.  At most MNEMO_RECALL_SAMPLE tokens a session
# (60, chosen by their md5) keep the run short.
#
# Run by test/client/run.sh with MNEMO_BIN (the sanitized mnemo) and
# PGDATABASE (a fresh database with the extension); prints TAP.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1

M=${MNEMO_BIN:?MNEMO_BIN is the mnemo command to test}
DATA=${MNEMO_TRANSCRIPTS:-../shared/data/transcripts}
MIN=${MNEMO_SWEEP_MIN:-6000}
SAMPLE=${MNEMO_RECALL_SAMPLE:-60}
work=$(mktemp -d /tmp/mnemo-recall-sweep.XXXXXX)
trap 'rm -rf "$work"' EXIT

# shellcheck source=lib/tap.sh
. test/client/lib/tap.sh

if [ ! -d "$DATA" ]; then
	echo "# $DATA is absent: the recall sweep over real sessions is skipped"
	ok "recall sweep skipped: no transcripts"
	echo "1..$n"
	exit 0
fi

# the measure, one session: "found total" of its sampled tokens
psql_q <<'SQL' >/dev/null
CREATE TABLE recall_sweep_tokens (session_id text, token text, kind text);
CREATE FUNCTION recall_sweep(s text, sample int) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	view text[] := ARRAY(SELECT item_id FROM mnemo.get_context_items(s));
	ctx text := (SELECT coalesce(string_agg(content, E'\n'), '') FROM mnemo.build_context(s, 2147483647));
	t record;
	found int := 0;
	total int := 0;
	lit text;
	words text;
BEGIN
	DELETE FROM recall_sweep_tokens WHERE session_id = s;
	-- the parts of the messages the view no longer holds
	INSERT INTO recall_sweep_tokens
	SELECT DISTINCT s, tok, kind FROM (
		SELECT f.id, coalesce(f.content->>'text', '') || ' ' || coalesce(f.content->>'output', '')
		       || ' ' || coalesce((f.content->'input')::text, '') AS body, f.content
		  FROM mnemo.get_messages_flat(s) f
		 WHERE NOT f.is_summary AND f.part_id IS NOT NULL AND f.id <> ALL (view)) p,
	LATERAL (
		SELECT m[1] AS tok, 'number' AS kind FROM regexp_matches(p.body, '\m([0-9]{4,})\M', 'g') m
		UNION ALL
		SELECT m[1], 'path' FROM regexp_matches(p.body, '((?:/[A-Za-z0-9_.-]+){2,})', 'g') m
		UNION ALL
		SELECT left(split_part(btrim(c), E'\n', 1), 200), 'command'
		  FROM (SELECT coalesce(p.content->'input'->>'command', p.content->'input'->>'cmd') AS c) x
		 WHERE c IS NOT NULL AND btrim(c) <> '') k
	WHERE length(tok) >= 4 AND position(tok IN ctx) = 0;
	FOR t IN SELECT token, kind FROM recall_sweep_tokens WHERE session_id = s
	          ORDER BY md5(token) LIMIT sample LOOP
		total := total + 1;
		-- the literal as the searched text holds it (a tool's input is JSON)
		lit := regexp_replace(replace(replace(t.token, '\', '\\'), '"', '\"'),
		                      '([.^$*+?()\[\]{}|\\])', '\\\1', 'g');
		-- a command is searched by its words, as a model would: its plain
		-- arguments, without quotes, options or shell operators
		words := CASE WHEN t.kind <> 'command' THEN t.token ELSE
		         (SELECT string_agg(w, ' ') FROM (
		             SELECT w FROM regexp_split_to_table(translate(t.token, '"''', '  '), '\s+') w
		              WHERE w ~ '^[A-Za-z0-9_./:@=][A-Za-z0-9_./:@=-]*$' LIMIT 8) x) END;
		IF (words IS NOT NULL AND EXISTS (SELECT 1 FROM mnemo.recall_search(s, words, false, NULL, 200) h
		            WHERE h.covered_by = ANY (view)
		              AND EXISTS (SELECT 1 FROM mnemo.get_messages_flat(s) f
		                           WHERE f.id = h.message_id AND position(t.token IN f.content::text) > 0)))
		   OR (length(lit) <= 256 AND EXISTS (
		        SELECT 1 FROM mnemo.recall_search(s, lit, true, NULL, 200) h
		         WHERE h.covered_by = ANY (view))) THEN
			found := found + 1;
		ELSE
			RAISE NOTICE 'recall sweep: % not found in % (%)', t.token, s, t.kind;
		END IF;
	END LOOP;
	RETURN found || ' ' || total;
END $$;
SQL

find "$DATA" -type f \( -name '*.jsonl' -o -name '*.traj' -o -name '*.json' \) ! -name metadata.json |
	sort >"$work/files"
while read -r f; do
	"$M" import --quiet "$f" >/dev/null 2>&1
done <"$work/files"
psql_q -c "SELECT s.id, r.included_tokens + r.omitted_tokens FROM mnemo.sessions s,
    mnemo.context_report(s.id, 2147483647) r
  WHERE r.included_tokens + r.omitted_tokens >= $MIN ORDER BY 2 DESC, 1" >"$work/big"
check "the transcripts import ($(wc -l <"$work/files") files, $(wc -l <"$work/big") sessions of $MIN tokens or more)" \
	test -s "$work/big"

all_found=0
all_total=0
rows=()
while IFS='|' read -r sid total; do
	budget=$((total / 4))
	run_m compact "$sid" --level 3 --budget "$budget"
	expect_rc 0 "$sid compacted to a quarter ($budget tokens)"
	# a search job's work, so that the measure is of recall, not of a backlog
	psql_q -c "SELECT mnemo.index_search('$sid', 1000000)" >/dev/null
	read -r found tot < <(psql_q -c "SELECT recall_sweep('$sid', $SAMPLE)" 2>"$work/notices")
	all_found=$((all_found + found))
	all_total=$((all_total + tot))
	is "$found/$tot" "$tot/$tot" "$sid: every sampled token that left the context is found under a summary in context"
	[ "$found" -eq "$tot" ] || sed 's/^/# /' "$work/notices" | head -5
	kinds=$(psql_q -c "SELECT string_agg(kind || ' ' || n, ', ' ORDER BY kind) FROM
	  (SELECT kind, count(*) n FROM recall_sweep_tokens WHERE session_id = '$sid' GROUP BY kind) k")
	rows+=("$(printf '%-40s %7s %6s %4s/%-4s %s' "$sid" "$total" "$budget" "$found" "$tot" "${kinds:-none}")")
done <"$work/big"

echo "# the recall sweep at 1/4: session, tokens, budget, found/sampled, tokens that left the context by kind"
for r in "${rows[@]}"; do echo "#   $r"; done
if [ "$all_total" -gt 0 ]; then
	echo "# recall rate: $all_found of $all_total ($((100 * all_found / all_total))%)"
fi
check "some tokens left the context to be recalled ($all_total)" test "$all_total" -gt 0

echo "1..$n"
[ "$failed" -eq 0 ]
