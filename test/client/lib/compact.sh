# shellcheck shell=bash
# The compaction tests' shared checks (compact.sh, compact_sweep.sh),
# sourced after tap.sh with M (the mnemo command) and work set.

size() { psql_q -c "SELECT included_tokens + omitted_tokens FROM mnemo.context_report('$1', 2147483647)"; }

# The first user message: in context, or covered (through any depth) by a
# summary in context.  Prints 1 or 0.
task_reachable() {
	psql_q -c "WITH RECURSIVE up(id) AS (
	    (SELECT id FROM mnemo.messages WHERE session_id = '$1' AND role = 'user' AND NOT is_summary
	      ORDER BY seq LIMIT 1)
	    UNION SELECT e.summary_id FROM mnemo.summary_edges e JOIN up ON e.item_id = up.id
	     WHERE e.session_id = '$1')
	  SELECT count(*) > 0 FROM mnemo.get_context_items('$1') c JOIN up ON c.item_id = up.id" |
		sed 's/t/1/; s/f/0/'
}

# Whether the first user message is in context verbatim (as a message).
task_verbatim() {
	psql_q -c "SELECT count(*) FROM mnemo.get_context_items('$1') c
	  WHERE c.item_id = (SELECT id FROM mnemo.messages WHERE session_id = '$1' AND role = 'user'
	                       AND NOT is_summary ORDER BY seq LIMIT 1)"
}

# Every file id of the whole context, footers included, one a line.
file_ids() {
	psql_q -c "SELECT mnemo.file_id_footer(coalesce(string_agg(content, E'\n'), ''))
	  FROM mnemo.build_context('$1', 2147483647)" |
		sed -n 's/^\[LCM File IDs: \(.*\)\]$/\1/p' | tr ',' '\n' | sed 's/^ *//' | sort -u
}

# check_after SID BUDGET RC LABEL: the assertions after a compaction
check_after() {
	local sid=$1 budget=$2 got=$3 label=$4 after floor
	after=$(size "$sid")
	# a refusal names the floor it could not go under: only one above the
	# budget excuses not reaching it
	floor=$(grep -o "cannot be compacted under [0-9]* tokens" "$work/err" | grep -o '[0-9]*' | head -1)
	if [ "$got" -eq 0 ] && [ "$after" -le "$budget" ]; then
		ok "$label: $after <= $budget tokens"
	elif [ "$got" -eq 5 ] && [ -n "$floor" ] && [ "$floor" -gt "$budget" ]; then
		ok "$label: exit 5, the floor named, $floor > $budget ($after now)"
	else
		not_ok "$label: exit $got, context $after, budget $budget"
		sed 's/^/# /' "$work/err" | head -5
	fi
	run_m verify "$sid"
	expect_rc 0 "$label: mnemo verify"
	is "$(task_reachable "$sid")" 1 "$label: the task is in context or under a summary in context"
	file_ids "$sid" >"$work/ids.after"
	is "$(comm -23 "$work/ids.before" "$work/ids.after" | wc -l)" 0 "$label: every file id is kept"
}

# import FILE: a fresh copy of an exported session, pruned; prints its id
import() {
	local sid
	sid=$("$M" import --new-ids --quiet "$1" 2>/dev/null | head -1)
	psql_q -c "SELECT mnemo.prune_tool_outputs('$sid')" >/dev/null
	file_ids "$sid" >"$work/ids.before"
	echo "$sid"
}


# sweep_setup DATA MIN: import every transcript of DATA (returns 1 when it is
# absent, saying so), and list in $work/big the sessions of MIN tokens or
# more, "id|tokens", largest first, each exported to $work/exp/ID.jsonl;
# $work/sources has "id<TAB>source" for each session.
sweep_setup() {
	if [ ! -d "$1" ]; then
		echo "# $1 is absent: the sweep over real sessions is skipped"
		return 1
	fi
	mkdir -p "$work/exp"
	find "$1" -type f \( -name '*.jsonl' -o -name '*.traj' -o -name '*.json' \) \
		! -name metadata.json | sort >"$work/files"
	# each session's source, shortly: the path under DATA, #N for the N-th
	# session of a file of several
	while read -r f; do
		"$M" import --new-ids --quiet "$f" 2>/dev/null |
			awk -v f="${f#"$1"/}" '{ id[NR] = $1 } END { sub(/\/full\.jsonl$/, "", f)
				for (i = 1; i <= NR; i++) print id[i] "\t" f (NR > 1 ? "#" i : "") }' >>"$work/sources"
	done <"$work/files"
	psql_q -c "SELECT s.id, r.included_tokens + r.omitted_tokens FROM mnemo.sessions s,
	    mnemo.context_report(s.id, 2147483647) r
	  WHERE r.included_tokens + r.omitted_tokens >= $2 ORDER BY 2 DESC, 1" >"$work/big"
	is "$(wc -l <"$work/sources")" "$(psql_q -c "SELECT count(*) FROM mnemo.sessions")" \
		"every transcript of $1 imports ($(wc -l <"$work/files") files, $(wc -l <"$work/big") sessions of $2 tokens or more)"
	while IFS='|' read -r src _; do
		"$M" export "$src" >"$work/exp/$src.jsonl"
	done <"$work/big"
}

# source ID: where the session came from, as sweep_setup recorded it
source() { awk -F'\t' -v id="$1" '$1 == id { print $2 }' "$work/sources"; }
