#!/usr/bin/env bash
# bench/profiles/by_ids.sh: what a read of messages by id costs on a session
# the planner's statistics think small, with the mnemo installed in
# PostgreSQL's lib (install each version in turn to compare them).
#
#   bash bench/profiles/by_ids.sh [OUT.txt]
#   env: BYID_BIG (20000, messages of each of the two large sessions),
#        BYID_SMALL (2000), BYID_SECONDS (4, per pgbench run), BYID_PORT (54379)
#
# Starts a private cluster (test/cluster.sh), fills two large sessions,
# ANALYZEs, then fills the session read: its messages came after the
# statistics, which give it about none (a session grown since the last
# ANALYZE, or a small one beside large ones).  A join of ids to its
# messages may then be hashed over the whole session.  Measured, with
# pgbench -M prepared, one client, as the superuser (the session's tenant):
#   by_ids 20    get_messages_with_parts_by_ids of its 20 newest messages
#                (what a chat turn reads of its tool calls)
#   by_ids all   the same of every message, in seq order
#   with_parts   get_messages_with_parts, the whole history (for scale)
#   search 5     search_history's 5 newest hits of a word in every message,
#                the session indexed first (index_search)
# and, for each, the heap rows of mnemo.log its index scans fetched in one
# call (pg_stat_xact_user_tables.idx_tup_fetch), which the plan decides.
set -euo pipefail

big=${BYID_BIG:-20000}
small=${BYID_SMALL:-2000}
secs=${BYID_SECONDS:-4}
out=${1:-/dev/stdout}
. "$(dirname "$0")/private_cluster.sh" by-ids "${BYID_PORT:-54379}"

psql -X -q -At -v ON_ERROR_STOP=1 -v big="$big" -v small="$small" >/dev/null <<'SQL'
CREATE EXTENSION mnemo;
CREATE FUNCTION fill(sid text, n integer) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM mnemo.create_session(sid);
    FOR b IN 0 .. (n - 1) / 1000 LOOP
        PERFORM mnemo.append_messages(sid, (
            SELECT jsonb_agg(jsonb_build_object(
                       'role', CASE WHEN i % 2 = 0 THEN 'user' ELSE 'assistant' END,
                       'parts', jsonb_build_array(jsonb_build_object('type', 'text',
                           'text', repeat('word ', CASE WHEN i % 2 = 0 THEN 40 ELSE 160 END))))
                   ORDER BY i)
            FROM generate_series(b * 1000, least(n, (b + 1) * 1000) - 1) AS i));
    END LOOP;
END $$;
SELECT fill('big_a', :big);
SELECT fill('big_b', :big);
ANALYZE;
SELECT fill('small', :small);
SELECT mnemo.index_search('small');
CREATE TABLE asked AS
    SELECT (SELECT array_agg(id ORDER BY seq) FROM (SELECT id, seq FROM mnemo.messages
             WHERE session_id = 'small' ORDER BY seq DESC LIMIT 20) n) AS newest,
           (SELECT array_agg(id ORDER BY seq) FROM mnemo.messages WHERE session_id = 'small') AS every;
SQL

work=$dir/sql
mkdir "$work"
newest=$(psql -X -Atc "SELECT newest FROM asked")
every=$(psql -X -Atc "SELECT every FROM asked")
echo "SELECT * FROM mnemo.get_messages_with_parts_by_ids('small', '$newest');" >"$work/by_ids_20.sql"
echo "SELECT * FROM mnemo.get_messages_with_parts_by_ids('small', '$every');" >"$work/by_ids_all.sql"
echo "SELECT * FROM mnemo.get_messages_with_parts('small');" >"$work/with_parts.sql"
echo "SELECT * FROM mnemo.search_history('small', 'word', 5);" >"$work/search_5.sql"

{
	echo "# bench/profiles/by_ids.sh, $(date -u '+%Y-%m-%d %H:%M UTC'), $(psql -X -Atc 'SELECT version()' | cut -d' ' -f1-2)"
	echo "# two sessions of $big messages, ANALYZE, then the session read: $small messages"
	printf '%-12s %14s %22s\n' read "latency (ms)" "log rows fetched/call"
	for what in by_ids_20 by_ids_all with_parts search_5; do
		lat=$(pgbench -n -M prepared -f "$work/$what.sql" -T "$secs" -c 1 2>&1 |
			sed -n 's/^latency average = \([0-9.]*\) ms/\1/p')
		fetched=$(psql -X -q -At <<SQL
BEGIN;
SELECT idx_tup_fetch FROM pg_stat_xact_user_tables WHERE relid = 'mnemo.log'::regclass \gset before_
$(sed 's/SELECT \*/SELECT count(*)/' "$work/$what.sql")
SELECT idx_tup_fetch - :before_idx_tup_fetch FROM pg_stat_xact_user_tables WHERE relid = 'mnemo.log'::regclass;
COMMIT;
SQL
		)
		printf '%-12s %14s %22s\n' "$what" "$lat" "$(echo "$fetched" | tail -1)"
	done
} >"$out"
