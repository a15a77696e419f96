#!/usr/bin/env bash
# make test-citus, second part: ALTER EXTENSION mnemo UPDATE on a real Citus
# cluster (doc/scale-out.md, "Upgrades on Citus").
#
#   bash test/citus/upgrade.sh
#   MNEMO_CITUS_UPGRADE_FROM=0.6.0 bash test/citus/upgrade.sh
#
# Builds the version before this one from git (the parent of the commit
# that last changed default_version in mnemo.control), or the version
# MNEMO_CITUS_UPGRADE_FROM names (the parent of the commit that moved
# default_version past it), installs it, starts a
# coordinator and two workers with it (test/citus/cluster.sh of that
# version, mnemo.distribute() included) and writes two sessions with parts.
# Then installs this tree, runs the update on the coordinator and
# mnemo.distribute() again, as doc/scale-out.md says, and checks every node
# and shard, the rows, the reads, an append and the delegated functions.
#
# Skipped, with one line, without Citus or without the git history to build
# the version before.
set -euo pipefail
cd "$(dirname "$0")/../.."

lib=$(pg_config --pkglibdir)
if [ ! -f "$lib/citus.so" ]; then
	echo "test-citus upgrade: skipped: Citus is not installed in the PostgreSQL that pg_config names"
	exit 0
fi
if [ -n "${MNEMO_CITUS_UPGRADE_FROM:-}" ]; then
	bump=$(git log -n 1 --format=%H -S "default_version = '$MNEMO_CITUS_UPGRADE_FROM'" -- mnemo.control 2>/dev/null || true)
else
	bump=$(git log -n 1 --format=%H -G 'default_version' -- mnemo.control 2>/dev/null || true)
fi
if [ -z "$bump" ] || ! git rev-parse -q --verify "$bump^" >/dev/null; then
	echo "test-citus upgrade: skipped: no git history to build the version before this one"
	exit 0
fi
old_version=$(git show "$bump^:mnemo.control" | sed -n "s/^default_version = '\(.*\)'/\1/p")
new_version=$(sed -n "s/^default_version = '\(.*\)'/\1/p" mnemo.control)

. test/lib.sh
top=$(mktemp -d /tmp/mnemo-citus-up.XXXXXX)
tmp=$top/work
mkdir -p "$tmp"
[ "$(id -u)" = 0 ] && chmod 755 "$top"
port=$((${MNEMO_CITUS_PORT:-57430} + 10))
finish() {
	MNEMO_CITUS_PORT=$port bash test/citus/cluster.sh stop "$top/nodes" >/dev/null 2>&1 || true
	git worktree remove --force "$top/old" >/dev/null 2>&1 || true
	rm -rf "$top"
	# this tree's build stays installed
	make -s PG_CFLAGS=-Werror install >/dev/null 2>&1 || true
}
trap finish EXIT

git worktree add -q --detach "$top/old" "$bump^"
check "$old_version built and installed" make -s -C "$top/old" install
check "a coordinator and two workers at $old_version" \
	env MNEMO_CITUS_PORT=$port bash "$top/old/test/citus/cluster.sh" start "$top/nodes" mnemo_up
eval "$(MNEMO_CITUS_PORT=$port bash test/citus/cluster.sh env "$top/nodes" mnemo_up)"
is "$(val "SELECT extversion FROM pg_extension WHERE extname = 'mnemo'")" "$old_version" \
	"the store is at $old_version"
check "two sessions with messages and parts, written by $old_version" \
	psql -X -q -v ON_ERROR_STOP=1 \
	-c "SELECT mnemo.create_session('cu_a'), mnemo.create_session('cu_b')" \
	-c "SELECT mnemo.append_messages('cu_a', '[{\"id\": \"a1\", \"role\": \"user\", \"parts\": [{\"type\": \"text\", \"text\": \"a\"}]},
	      {\"id\": \"a2\", \"role\": \"assistant\", \"parts\": [{\"type\": \"text\", \"text\": \"b\"}, {\"type\": \"text\", \"text\": \"c\"}]}]')" \
	-c "SELECT mnemo.append_messages('cu_b', '[{\"id\": \"b1\", \"role\": \"user\", \"parts\": [{\"type\": \"text\", \"text\": \"x\"}]}]')"

check "this tree built and installed" make -s PG_CFLAGS=-Werror install
check "ALTER EXTENSION mnemo UPDATE on the coordinator" psql -X -q -v ON_ERROR_STOP=1 -c "ALTER EXTENSION mnemo UPDATE"
check "mnemo.distribute() again" psql -X -q -v ON_ERROR_STOP=1 -c "SELECT mnemo.distribute()"
is "$(val "SELECT string_agg(result, ' ') FROM run_command_on_all_nodes(
             \$\$SELECT extversion FROM pg_extension WHERE extname = 'mnemo'\$\$)")" \
	"$new_version $new_version $new_version" "the coordinator and both workers are at $new_version"
is "$(val "SELECT count(*) FROM run_command_on_shards('mnemo.log', \$\$SELECT count(*) FROM pg_index i
             WHERE i.indrelid = '%s'::regclass AND ((i.indisprimary AND i.indnkeyatts = 4)
                OR (i.indisunique AND NOT i.indisprimary AND i.indpred IS NOT NULL))\$\$) WHERE result = '3'")" \
	"$(val "SELECT count(*) FROM pg_dist_shard WHERE logicalrelid = 'mnemo.log'::regclass")" \
	"every shard of the log is keyed by (session_id, tenant, seq, part_index), its message ids and given part ids unique apart"
is "$(val "SELECT colocationid = (SELECT colocationid FROM pg_dist_partition WHERE logicalrelid = 'mnemo.sessions'::regclass)
             FROM pg_dist_partition WHERE logicalrelid = 'mnemo.log'::regclass")" t \
	"the log is distributed by session, colocated with mnemo.sessions"
is "$(val "SELECT string_agg(c.relname || ':' || c.relkind::text, ' ' ORDER BY c.relname) FROM pg_class c
             WHERE c.relnamespace = 'mnemo'::regnamespace AND c.relname IN ('messages', 'message_parts')")" \
	"message_parts:v messages:v" "messages and message_parts are views of it"
is "$(val "SELECT string_agg(m.id || '.' || p.part_index || '=' || (p.content ->> 'text'), ' ' ORDER BY m.id, p.part_index)
             FROM mnemo.message_parts p JOIN mnemo.messages m
               ON m.session_id = p.session_id AND m.tenant = p.tenant AND m.seq = p.seq")" \
	"a1.0=a a2.0=b a2.1=c b1.0=x" "every part names its message by seq"
is "$(val "SELECT string_agg(seq || ':' || (content ->> 'text'), ' ' ORDER BY seq, part_index)
             FROM mnemo.get_messages_flat('cu_a')")" "1:a 2:b 2:c" "get_messages_flat reads the updated session"
is "$(val "SELECT string_agg(message_id || '.' || part_index || '=' || (content ->> 'text'), ' ' ORDER BY part_index)
             FROM mnemo.get_parts('cu_a', 'a2')")" "a2.0=b a2.1=c" "get_parts, made anew by the update, answers"
is "$(val "SELECT count(*) FROM run_command_on_workers(\$\$SELECT count(*) FROM pg_dist_object o
             WHERE o.classid = 'pg_proc'::regclass AND o.objid = 'mnemo.get_parts(text, text)'::regprocedure
               AND o.colocationid IS NOT NULL\$\$) WHERE result = '1'")" 2 \
	"every worker knows get_parts is delegated"
is "$(val "SELECT count(*) FROM run_command_on_workers(\$\$SELECT count(*) FROM pg_dist_object o
             WHERE o.classid = 'pg_proc'::regclass AND o.objid = 'mnemo.get_message(text, text)'::regprocedure
               AND o.colocationid IS NOT NULL\$\$) WHERE result = '1'")" 2 \
	"every worker knows get_message, made anew by the 0.13.0 update, is delegated"
is "$(val "SELECT seq || ':' || role FROM mnemo.get_message('cu_a', 'a2')")" "2:assistant" "and it answers"
is "$(val "SELECT mnemo.append_part('cu_b', 'b1', '{\"type\": \"text\", \"text\": \"y\"}')")" 1 \
	"append_part continues a message written before the update"
is "$(val "SELECT string_agg(seq || ':' || (content ->> 'text'), ' ' ORDER BY seq, part_index)
             FROM mnemo.get_messages_flat('cu_b')")" "1:x 1:y" "and the read has it"
is "$(val "SELECT id FROM mnemo.get_parts('cu_b', 'b1') WHERE part_index = 1")" "b1:1" \
	"the part appended after the update has its id derived from its place"
is "$(val "SELECT mnemo.tombstone_part('cu_b', 'b1:1') > 0 AND mnemo.tombstone_part('cu_b',
             (SELECT id FROM mnemo.get_parts('cu_b', 'b1') WHERE part_index = 0)) > 0")" t \
	"tombstone_part finds a part by its derived id and one by the id stored before the update"

msg=$(val "SELECT id FROM mnemo.append_message('cu_a', 'assistant', '[]')")
is "$(val "SELECT mnemo.append_part('cu_a', '$msg', '{\"type\": \"text\", \"text\": \"s\"}')")" 0 \
	"a message appended without parts takes its first part at index 0"
is "$(val "SELECT string_agg(part_index || '=' || (content ->> 'text'), ' ' ORDER BY part_index)
             FROM mnemo.get_parts('cu_a', '$msg')")" "0=s" "and reads it back"

summary "test-citus upgrade $old_version -> $new_version"
