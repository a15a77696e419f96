#!/usr/bin/env bash
# Search on real sessions (0.12.0: the documents of parts shorter than
# 1,024 characters keep their words without positions).  Every session of
# ../shared/data/transcripts is imported and indexed; then phrases of two
# adjacent words, taken from its parts' texts, are searched as written,
# reversed, and negated beside their first word, for every match and for a
# page of 2, and each search must find exactly the (newest) messages whose
# parts' own words match the query: the searched text of a part
# (doc/sql.md, search_history) is computed here from get_messages_flat, as
# an oracle independent of the index.  At most MNEMO_SEARCH_SAMPLE phrases
# a session (8, chosen by their md5) keep the run short.
#
# mnemo-test-timeout: 600
# Run by test/client/run.sh with MNEMO_BIN (the sanitized mnemo) and
# PGDATABASE (a fresh database with the extension); prints TAP.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1

M=${MNEMO_BIN:?MNEMO_BIN is the mnemo command to test}
DATA=${MNEMO_TRANSCRIPTS:-../shared/data/transcripts}
SAMPLE=${MNEMO_SEARCH_SAMPLE:-8}
work=$(mktemp -d /tmp/mnemo-search-sweep.XXXXXX)
trap 'rm -rf "$work"' EXIT

# shellcheck source=lib/tap.sh
. test/client/lib/tap.sh

if [ ! -d "$DATA" ]; then
	echo "# $DATA is absent: the search sweep over real sessions is skipped"
	ok "search sweep skipped: no transcripts"
	echo "1..$n"
	exit 0
fi

psql_q <<'SQL' >/dev/null
CREATE TABLE search_sweep_docs (session_id text, id text, seq bigint, part_index int, len int, tsv tsvector);
-- the messages whose parts match q, by the oracle's words
-- the newest lim messages whose parts match q, by the oracle's words
CREATE FUNCTION search_sweep_expected(s text, q text, lim int) RETURNS text LANGUAGE sql AS $$
	SELECT coalesce(string_agg(id, ',' ORDER BY seq), '') FROM (
		SELECT DISTINCT id, seq FROM search_sweep_docs
		 WHERE session_id = s AND tsv @@ websearch_to_tsquery('simple', q)
		 ORDER BY seq DESC LIMIT lim) d
$$;
CREATE FUNCTION search_sweep_found(s text, q text, lim int) RETURNS text LANGUAGE sql AS $$
	SELECT coalesce(string_agg(message_id, ',' ORDER BY seq), '')
	  FROM mnemo.search_history(s, q, lim)
$$;
-- "checked mismatched phrases" of one session
CREATE FUNCTION search_sweep(s text, sample int) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	p record;
	q text;
	lim int;
	checked int := 0;
	bad int := 0;
	phrases int := 0;
BEGIN
	INSERT INTO search_sweep_docs
	SELECT s, f.id, f.seq, f.part_index, length(x.doc), to_tsvector('simple', x.doc)
	  FROM mnemo.get_messages_flat(s) f,
	       LATERAL (SELECT regexp_replace(left(
	         coalesce(f.content->>'text', '') || ' ' || coalesce(f.content->>'tool_name', '')
	         || ' ' || coalesce(f.content->>'input', '') || ' ' || coalesce(f.content->>'output', '')
	         || ' ' || coalesce(f.content->>'error_message', '') || ' ' || coalesce(f.content->>'path', '')
	         || ' ' || coalesce(f.content->>'summary', ''), 100000), '[^[:space:]]{255,}', ' ', 'g') AS doc) x
	 WHERE f.part_id IS NOT NULL;
	FOR p IN
		SELECT w1, w2 FROM (
			SELECT DISTINCT a.w AS w1, b.w AS w2
			  FROM mnemo.get_messages_flat(s) f,
			       LATERAL regexp_split_to_table(lower(left(f.content->>'text', 2000)), '\s+') WITH ORDINALITY a(w, i),
			       LATERAL regexp_split_to_table(lower(left(f.content->>'text', 2000)), '\s+') WITH ORDINALITY b(w, i)
			 WHERE b.i = a.i + 1 AND a.w ~ '^[a-z]{3,}$' AND b.w ~ '^[a-z]{3,}$' AND a.w <> b.w) x
		 ORDER BY md5(w1 || ' ' || w2) LIMIT sample
	LOOP
		phrases := phrases + 1;
		FOREACH q IN ARRAY ARRAY['"' || p.w1 || ' ' || p.w2 || '"', '"' || p.w2 || ' ' || p.w1 || '"',
		                         p.w1 || ' -"' || p.w1 || ' ' || p.w2 || '"'] LOOP
			-- every match, and a page of 2 (which documents holding the
			-- words apart must not fill)
			FOREACH lim IN ARRAY ARRAY[1000000, 2] LOOP
				checked := checked + 1;
				IF search_sweep_found(s, q, lim) IS DISTINCT FROM search_sweep_expected(s, q, lim) THEN
					bad := bad + 1;
					RAISE NOTICE 'search sweep: % (limit %) in %: found %, expected %', q, lim, s,
						search_sweep_found(s, q, lim), search_sweep_expected(s, q, lim);
				END IF;
			END LOOP;
		END LOOP;
	END LOOP;
	RETURN checked || ' ' || bad || ' ' || phrases;
END $$;
SQL

find "$DATA" -type f \( -name '*.jsonl' -o -name '*.traj' -o -name '*.json' \) ! -name metadata.json |
	sort >"$work/files"
while read -r f; do
	"$M" import --quiet "$f" >/dev/null 2>&1
done <"$work/files"
psql_q -c "SELECT id FROM mnemo.sessions ORDER BY id" >"$work/sessions"
check "the transcripts import ($(wc -l <"$work/files") files, $(wc -l <"$work/sessions") sessions)" \
	test -s "$work/sessions"

all_checked=0
all_phrases=0
while read -r sid; do
	psql_q -c "SELECT mnemo.index_search('$sid', 1000000)" >/dev/null
	read -r checked bad phrases < <(psql_q -c "SELECT search_sweep('$sid', $SAMPLE)" 2>"$work/notices")
	all_checked=$((all_checked + ${checked:-0}))
	all_phrases=$((all_phrases + ${phrases:-0}))
	is "$bad" 0 "$sid: $checked searches of $phrases phrases find what the parts' own words match"
	[ "$bad" = 0 ] || sed 's/^/# /' "$work/notices" | head -5
done <"$work/sessions"
# a document keeps its words' positions exactly when its part's searched
# text is 1,024 characters or longer
is "$(psql_q -c "SELECT count(*) FILTER (WHERE (d.tsv <> strip(d.tsv)) <> (o.len >= 1024)) || ' '
                        || count(*) FILTER (WHERE d.tsv <> strip(d.tsv)) || ' ' || count(*)
                   FROM mnemo.search_documents d JOIN search_sweep_docs o
                     ON o.session_id = d.session_id AND o.seq = d.seq AND o.part_index = d.part_index" |
      sed 's/^0 \([0-9]*\) \([0-9]*\)$/0/')" 0 \
	"a document keeps positions exactly when its text is 1,024 characters or longer ($(psql_q -c \
	"SELECT count(*) FILTER (WHERE tsv <> strip(tsv)) || ' of ' || count(*) FROM mnemo.search_documents") keep them)"
echo "# the search sweep: $all_checked searches of $all_phrases phrases over $(wc -l <"$work/sessions") sessions"
check "some phrases were searched ($all_phrases)" test "$all_phrases" -gt 0

echo "1..$n"
[ "$failed" -eq 0 ]
