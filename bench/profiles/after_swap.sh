#!/usr/bin/env bash
# bench/profiles/after_swap.sh: what build_context reads right after a
# compaction, at 2,000 and at 50,000 messages (issue 15 item 5).
#
#   bash bench/profiles/after_swap.sh OUT.txt
#
# For each size: a session of that many messages (one ~200 B text part
# each, 1,000 per append_messages call), then one commit_summary leaf over
# all but the newest 199 messages, with no VACUUM, as bench/context's
# "right after one swap" does.  Then, on one connection: EXPLAIN (ANALYZE,
# BUFFERS) of build_context once (the buffers it touches) and 40 timed
# calls (median and fastest).  Equal buffers at both sizes mean the read
# does the same work whatever the history left behind; bench/context's
# times then differ by what else the host does right after a large swap.
# Connects with the PG* environment to a database with mnemo.
set -euo pipefail
out=${1:?usage: after_swap.sh OUT.txt}
{
	echo "# bench/profiles/after_swap.sh: build_context right after a commit_summary of all but 199 messages, $(date -u +%Y-%m-%d)"
	echo "# $(psql -X -Atc 'SELECT version()')"
	for n in 2000 50000; do
		sid="after_swap_${n}_$$"
		psql -X -q -v ON_ERROR_STOP=1 >/dev/null <<SQL
SELECT mnemo.create_session('$sid');
SELECT count(*) FROM generate_series(1, $n / 1000) b,
  LATERAL mnemo.append_messages('$sid', (SELECT jsonb_agg(jsonb_build_object(
      'role', CASE WHEN i % 2 = 0 THEN 'user' ELSE 'assistant' END,
      'parts', jsonb_build_array(jsonb_build_object('type', 'text', 'text', repeat('word ', 40) || i))))
    FROM generate_series(1, 1000) i));
SELECT mnemo.commit_summary('$sid', 'sum_$sid', 'the summary of the older messages', 8,
  (SELECT array_agg(item_id ORDER BY position)
     FROM (SELECT item_id, position FROM mnemo.context_items
            WHERE session_id = '$sid' ORDER BY position LIMIT $n - 199) x));
SQL
		{
			echo "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, SUMMARY OFF) SELECT count(*) FROM mnemo.build_context('$sid', 1000000);"
			echo '\timing on'
			for i in $(seq 40); do
				echo "SELECT count(*) FROM mnemo.build_context('$sid', 1000000);"
			done
		} | psql -X -q -At >"$out.raw"
		printf '%6d messages: build_context touches %s; %s\n' "$n" \
			"$(sed -n '2s/^ *Buffers: //p' "$out.raw")" \
			"$(sed -n 's/^Time: \([0-9.]*\) ms$/\1/p' "$out.raw" | sort -n |
				awk '{ v[NR] = $1 } END { printf "40 calls, median %.3f ms, fastest %.3f ms", v[int((NR + 1) / 2)], v[1] }')"
		rm -f "$out.raw"
	done
} >"$out"
cat "$out"
