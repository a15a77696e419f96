#!/usr/bin/env bash
# Backup test: pg_dump of a mnemo database restores into a fresh database
# with every row intact, and the restored store keeps working.
#
#   test/backup.sh [DIR]
#
# DIR is a running cluster started by test/cluster.sh (test/run.sh passes its
# own); without it a private cluster is started in a temporary directory and
# removed at the end.  The extension must be installed (make install).
#
# What works (PostgreSQL 15), and why:
#   The mnemo tables are registered with pg_extension_config_dump, so pg_dump
#   writes `CREATE EXTENSION mnemo` followed by COPY of their rows.  The
#   append-only guard of 0.1.0 (an ordinary BEFORE INSERT trigger) refused
#   those COPYs in a plain restore; since 0.2.0 privileges and row-level
#   security keep the log append-only and the procedures below still hold:
#
#   1. plain format (the procedure the README documents):
#        pg_dump -f dump.sql db
#        createdb new
#        PGOPTIONS='-c session_replication_role=replica' psql -v ON_ERROR_STOP=1 -f dump.sql new
#   2. custom format, the same way:
#        pg_dump -Fc -f dump.custom db
#        PGOPTIONS='-c session_replication_role=replica' pg_restore -e -d new dump.custom
#   3. custom format with --disable-triggers: it only acts in a data-only
#        restore (in a full restore it is ignored and the guard refuses the
#        rows), so restore the schema first, then the data:
#        pg_restore -e --schema-only -d new dump.custom
#        pg_restore -e --single-transaction --data-only --disable-triggers -d new dump.custom
#      (--disable-triggers runs ALTER TABLE ... DISABLE TRIGGER ALL around
#      each COPY and enables the triggers again.)
#   4. custom format, plain, no setting at all (0.1.0 exited 1 here, with
#      every table empty: its guard refused the COPYs):
#        pg_restore -e -d new dump.custom
#   The first three need a superuser (session_replication_role, disabling the
#   guard), as does CREATE EXTENSION mnemo itself.
#
# For each, every row of every table in schema mnemo is compared between the
# source and the restored database, RLS and the privileges are checked,
# and appends in the restored database continue the seqs and positions.
#
# The hash-partitioned layout (mnemo.partitions, doc/scale-out.md) keeps
# the rows in the partitions, which are registered for pg_dump too:
#   5. restore into the same layout: the same mnemo.partitions for the
#      restore's CREATE EXTENSION,
#        PGOPTIONS='-c mnemo.partitions=4' pg_restore -e -d new dump.custom
#   6. restore into any layout: dump through the partition roots,
#        pg_dump -Fc --load-via-partition-root -f dump.custom db
#        pg_restore -e -d new dump.custom
#
# Prints TAP-like "ok N - ..." / "not ok N - ..." lines; exits non-zero if
# any assertion failed.
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

src=mnemo_backup

# The source database: sessions (one a child, one soft-deleted, one
# watched), messages of every role, every part type, a part appended later,
# a completed tool with merged output, a tombstone, token usage, a batch, a
# summary swapped into the context view, a file reference, a summary node,
# and text that COPY has to escape.
populate() {
	fresh_db "$src"
	psql -X -q -v ON_ERROR_STOP=1 -d "$src" >/dev/null <<'SQL'
CREATE EXTENSION mnemo;
SELECT mnemo.create_session('bk_a', model_id => 'gpt-x', provider_id => 'openai', agent => 'coder',
       title => 'Backup A', metadata => '{"tenant": "t1", "tags": ["x", "y"]}', system_prompt => 'Be brief.');
SELECT mnemo.create_session('bk_child', parent_id => 'bk_a', title => 'child');
SELECT mnemo.create_session('bk_b');
SELECT mnemo.create_session('bk_deleted');
SELECT mnemo.create_session('bk_watched');
SELECT mnemo.watch('bk_watched');

SELECT mnemo.append_message('bk_a', 'system', '[{"type":"text","text":"You are a test."}]', id => 'msg_a1');
SELECT mnemo.append_message('bk_a', 'user',
       '[{"type":"text","text":"tab\there, newline\nthere, backslash \\ quote '' \" unicode é 漢字 🙂"}]', id => 'msg_a2');
SELECT mnemo.append_message('bk_a', 'assistant',
       '[{"type":"reasoning","text":"thinking"},
         {"type":"tool","id":"part_tool","tool_name":"grep","tool_call_id":"call_1","tool_state":"pending","input":{"pattern":"TODO"}},
         {"type":"file_ref","content_id":"sha256:0123abcd","path":"src/main.c","file_type":"c","summary":"main()","token_estimate":42}]',
       id => 'msg_a3', run_id => 'run_1');
SELECT mnemo.update_part_status('bk_a', 'part_tool', tool_state => 'running', started_at => 1700000000000);
SELECT mnemo.update_part_status('bk_a', 'part_tool', tool_state => 'completed', completed_at => 1700000001000,
       output => 'src/a.c:1: TODO');
SELECT mnemo.tombstone_part('bk_a', 'part_tool');
SELECT mnemo.append_part('bk_a', 'msg_a3', '{"type":"text","text":"Found one TODO."}');
SELECT mnemo.update_message_tokens('bk_a', 'msg_a3',
       '{"input":100,"output":20,"cache_read":5,"cache_write":3,"reasoning":7}', 0.0123, 'stop');
SELECT mnemo.append_messages('bk_child',
       '[{"role":"user","parts":[{"type":"text","text":"child one"},
                                 {"type":"image","media_type":"image/png","data":"iVBORw0KGgo="}]},
         {"role":"assistant","parts":[{"type":"text","text":"child two"}]}]');
SELECT mnemo.store_file_reference('sha256:0123abcd', 'src/main.c', 'c', 420, 'int main(void): entry point');
SELECT mnemo.store_file_reference('sha256:4567ef', 'README.md', 'markdown', 99, '# Title');

SELECT mnemo.append_message('bk_b', 'user', format('[{"type":"text","text":"turn %s"}]', i)::jsonb, id => 'msg_b' || i)
  FROM generate_series(1, 6) i;
SELECT mnemo.append_message('bk_b', 'assistant', '[{"type":"text","text":"Summary of turns 1-3."}]',
       id => 'sum_b1', is_summary => true);
SELECT mnemo.swap_context_items('bk_b', ARRAY['msg_b1', 'msg_b2', 'msg_b3'], 'sum_b1');
SELECT mnemo.append_message('bk_b', 'user', '[{"type":"text","text":"after the swap"}]', id => 'msg_b7');

SELECT mnemo.append_message('bk_deleted', 'user', '[{"type":"text","text":"bye"}]');
SELECT mnemo.soft_delete_session('bk_deleted');
SELECT mnemo.append_message('bk_watched', 'user', '[{"type":"text","text":"watched"}]');

-- the summary DAG: two leaves condensed into one node
SELECT mnemo.create_session('bk_dag');
SELECT mnemo.append_message('bk_dag', 'user', format('[{"type":"text","text":"dag %s"}]', i)::jsonb, id => 'msg_d' || i)
  FROM generate_series(1, 5) i;
SELECT mnemo.commit_summary('bk_dag', 'sum_d1', 'dag 1-2', 3, ARRAY['msg_d1', 'msg_d2']);
SELECT mnemo.commit_summary('bk_dag', 'sum_d2', 'dag 3-4', 3, ARRAY['msg_d3', 'msg_d4'], 'leaf', 2);
SELECT mnemo.commit_summary('bk_dag', 'sum_d3', 'dag 1-4', 4, ARRAY['sum_d1', 'sum_d2'], 'condensed', 1);
SQL
}

# The source of the partitioned cases: the same rows, each session table
# hash-partitioned into 4.
part_src=mnemo_backup_partitioned
populate_partitioned() {
	src=$part_src PGOPTIONS='-c mnemo.partitions=4' populate
	is "$(val "$part_src" "SELECT count(DISTINCT tableoid) > 1 AND count(*) = (SELECT count(*) FROM ONLY mnemo.log_p0)
	                                + (SELECT count(*) FROM mnemo.log_p1) + (SELECT count(*) FROM mnemo.log_p2)
	                                + (SELECT count(*) FROM mnemo.log_p3) FROM mnemo.log")" \
		t "partitioned source: the messages and parts are in the log's partitions, more than one of them"
}

# parent_tables DB: the mnemo tables that are not partitions.
parent_tables() {
	val "$1" "SELECT string_agg(c.relname, ' ' ORDER BY c.relname) FROM pg_class c
	           WHERE c.relnamespace = 'mnemo'::regnamespace AND c.relkind IN ('r', 'p') AND NOT c.relispartition"
}

# table_digest DB TABLE: row count and an md5 over every row, in a fixed order.
table_digest() {
	val "$1" "SELECT count(*) || ' ' || coalesce(md5(string_agg(t::text, '|' ORDER BY t::text)), '-')
	            FROM mnemo.$2 t"
}

mnemo_tables() {
	val "$1" "SELECT string_agg(tablename, ' ' ORDER BY tablename) FROM pg_tables WHERE schemaname = 'mnemo'"
}

check_source() {
	local t
	for t in sessions messages message_parts context_items summary_nodes summary_edges file_references blobs; do
		is "$(val "$src" "SELECT count(*) > 0 FROM mnemo.$t")" t "source: mnemo.$t has rows to back up"
	done
	is "$(val "$src" "SELECT string_agg(item_type || ':' || item_id || '@' || position, ',' ORDER BY position)
	                   FROM mnemo.get_context_items('bk_b')")" \
		"summary:sum_b1@1,message:msg_b4@4,message:msg_b5@5,message:msg_b6@6,message:msg_b7@8" \
		"source: bk_b's context view holds the swapped-in summary"
	is "$(val "$src" "SELECT compacted_at IS NOT NULL AND tool_state = 'completed' FROM mnemo.message_parts WHERE id = 'part_tool'")" t \
		"source: the tool part is completed and tombstoned"
}

# compare NEWDB LABEL: every row of every mnemo table is the same.
compare() {
	local new=$1 label=$2 t want
	is "$(mnemo_tables "$new")" "$(mnemo_tables "$src")" "$label: the same mnemo tables"
	for t in $(mnemo_tables "$src"); do
		want=$(table_digest "$src" "$t")
		if ! [[ $want =~ ^[0-9]+\ ([0-9a-f]{32}|-)$ ]]; then
			not_ok "$label: every row of mnemo.$t is identical (no digest of the source: $want)"
			continue
		fi
		is "$(table_digest "$new" "$t")" "$want" "$label: every row of mnemo.$t is identical"
	done
	is "$(val "$new" "SELECT extversion FROM pg_extension WHERE extname = 'mnemo'")" \
		"$(val "$src" "SELECT extversion FROM pg_extension WHERE extname = 'mnemo'")" \
		"$label: the same extension version"
}

# works NEWDB LABEL: the restored store keeps its row-level security and
# privileges (what keeps the log append-only since 0.2.0) and keeps appending.
works() {
	local new=$1 label=$2 q
	q="SELECT count(*) FILTER (WHERE c.relrowsecurity) || '/' || count(*)
	          || ' ' || count(*) FILTER (WHERE has_table_privilege('public', c.oid, 'INSERT')
	                                      OR has_table_privilege('public', c.oid, 'UPDATE')
	                                      OR has_table_privilege('public', c.oid, 'DELETE'))
	     FROM pg_class c WHERE c.relnamespace = 'mnemo'::regnamespace AND c.relkind = 'r'"
	is "$(val "$new" "$q")" "$(val "$src" "$q")" \
		"$label: row-level security on every table and no write privilege for PUBLIC, as in the source"
	q="SELECT count(*) FROM pg_policies WHERE schemaname = 'mnemo' AND qual = 'mnemo.tenant_visible(tenant)'"
	is "$(val "$new" "$q")" "$(val "$src" "$q")" "$label: the tenant policies, as in the source"
	is "$(val "$new" "SELECT seq FROM mnemo.append_message('bk_a', 'user', '[{\"type\":\"text\",\"text\":\"restored\"}]')")" \
		"$(val "$src" "SELECT max(seq) + 1 FROM mnemo.messages WHERE session_id = 'bk_a'")" \
		"$label: an append to bk_a continues its seqs"
	val "$new" "SELECT mnemo.append_message('bk_b', 'user', '[{\"type\":\"text\",\"text\":\"restored\"}]', id => 'msg_restored_b')" >/dev/null
	is "$(val "$new" "SELECT m.seq || ' ' || c.position FROM mnemo.messages m
	                   JOIN mnemo.get_context_items('bk_b') c ON c.item_id = m.id
	                  WHERE m.session_id = 'bk_b' AND m.id = 'msg_restored_b'")" \
		"9 9" "$label: an append to the swapped session bk_b takes seq 9 and joins its view at position 9"
	is "$(val "$new" "SELECT seq FROM mnemo.append_messages('bk_child', '[{\"role\":\"user\",\"parts\":[{\"type\":\"text\",\"text\":\"x\"}]}]')")" \
		3 "$label: a batch append to bk_child continues at seq 3"
	is "$(val "$new" "SELECT mnemo.tombstone_part('bk_a', 'part_tool') = compacted_at FROM mnemo.message_parts WHERE id = 'part_tool'")" t \
		"$label: the tombstone survived (tombstone_part returns the first compacted_at)"
	is "$(sqlstate_of "$new" "SELECT mnemo.append_message('bk_deleted', 'user', '[{\"type\":\"text\",\"text\":\"x\"}]')")" MN012 \
		"$label: the soft-deleted session still refuses appends (MN012)"
	is "$(val "$new" "SELECT (mnemo.get_session('bk_watched')).watched")" t \
		"$label: the watched flag survived"
	is "$(val "$new" "SELECT string_agg(item_id, ',' ORDER BY depth, item_id) FROM mnemo.expand_summary('bk_dag', 'sum_d3', true)")" \
		"sum_d1,sum_d2,msg_d1,msg_d2,msg_d3,msg_d4" "$label: the summary DAG expands down to the original messages"
	val "$new" "SELECT mnemo.create_session('bk_after_restore')" >/dev/null
	is "$(val "$new" "SELECT id FROM mnemo.list_sessions(active_only => false, \"limit\" => 1)")" \
		bk_after_restore "$label: a session created after the restore lists newest (creation order restored)"
}

test_plain() {
	local new=mnemo_restored_plain
	check "plain: pg_dump" pg_dump -f "$tmp/dump.sql" "$src"
	fresh_db "$new"
	check "plain: restore with PGOPTIONS='-c session_replication_role=replica' psql -f" \
		env PGOPTIONS='-c session_replication_role=replica' \
		psql -X -q -v ON_ERROR_STOP=1 -o /dev/null -f "$tmp/dump.sql" -d "$new"
	compare "$new" plain
	works "$new" plain
}

test_custom_replica() {
	local new=mnemo_restored_custom
	check "custom: pg_dump -Fc" pg_dump -Fc -f "$tmp/dump.custom" "$src"
	fresh_db "$new"
	check "custom: restore with PGOPTIONS='-c session_replication_role=replica' pg_restore" \
		env PGOPTIONS='-c session_replication_role=replica' pg_restore -e -d "$new" "$tmp/dump.custom"
	compare "$new" custom
	works "$new" custom
}

# A plain pg_restore -d, no settings: it exits 0 and restores every row.
test_custom_plain() {
	local new=mnemo_restored_plain_restore
	fresh_db "$new"
	check "pg_restore -d: exits 0 without any setting" pg_restore -e -d "$new" "$tmp/dump.custom"
	compare "$new" pg_restore
	works "$new" pg_restore
}

test_custom_disable_triggers() {
	local new=mnemo_restored_triggers
	fresh_db "$new"
	check "disable-triggers: pg_restore --schema-only" pg_restore -e --schema-only -d "$new" "$tmp/dump.custom"
	check "disable-triggers: pg_restore --data-only --disable-triggers" \
		pg_restore -e --single-transaction --data-only --disable-triggers -d "$new" "$tmp/dump.custom"
	compare "$new" disable-triggers
	works "$new" disable-triggers
}

# 5: the partitioned layout into the same layout.
test_partitioned_same() {
	local new=mnemo_restored_partitioned
	check "partitioned: pg_dump -Fc" pg_dump -Fc -f "$tmp/dump.partitioned" "$part_src"
	fresh_db "$new"
	check "partitioned: restore with PGOPTIONS='-c mnemo.partitions=4' pg_restore" \
		env PGOPTIONS='-c mnemo.partitions=4' pg_restore -e -d "$new" "$tmp/dump.partitioned"
	src=$part_src compare "$new" partitioned
	src=$part_src works "$new" partitioned
}

# 6: the partitioned layout through the partition roots, into the plain one.
test_partitioned_root() {
	local new=mnemo_restored_from_roots t
	check "partition roots: pg_dump -Fc --load-via-partition-root" \
		pg_dump -Fc --load-via-partition-root -f "$tmp/dump.roots" "$part_src"
	fresh_db "$new"
	check "partition roots: pg_restore -d into a plain install" pg_restore -e -d "$new" "$tmp/dump.roots"
	is "$(parent_tables "$new")" "$(parent_tables "$part_src")" "partition roots: the same mnemo tables, unpartitioned"
	is "$(val "$new" "SELECT count(*) FROM pg_class WHERE relnamespace = 'mnemo'::regnamespace AND relispartition")" 0 \
		"partition roots: no partitions in the restored database"
	for t in $(parent_tables "$part_src"); do
		is "$(table_digest "$new" "$t")" "$(table_digest "$part_src" "$t")" \
			"partition roots: every row of mnemo.$t is identical"
	done
	is "$(val "$new" "SELECT seq FROM mnemo.append_message('bk_a', 'user', '[{\"type\":\"text\",\"text\":\"restored\"}]')")" \
		"$(val "$part_src" "SELECT max(seq) + 1 FROM mnemo.messages WHERE session_id = 'bk_a'")" \
		"partition roots: an append to bk_a continues its seqs"
}

main() {
	setup_cluster backup "${1:-}"
	populate
	check_source
	test_plain
	test_custom_replica
	test_custom_plain
	test_custom_disable_triggers
	populate_partitioned
	test_partitioned_same
	test_partitioned_root
	summary backup
}

main "$@"
