#!/usr/bin/env bash
# Upgrade test: a 0.1.0 database with data is updated step by step, to 0.2.0
# then each version after it up to 0.13.0, with ALTER EXTENSION mnemo
# UPDATE; its rows read back unchanged through the new functions, and its
# schema is the schema of a fresh install of the current version.  A database made hash-partitioned
# at 0.2.0 (mnemo.partitions) gets the tables 0.3.0 adds partitioned alike.
#
#   test/upgrade.sh [DIR]
#
# DIR is a running cluster started by test/cluster.sh (test/run.sh passes its
# own); without it a private cluster is started and removed at the end.  The
# extension must be installed (make install): the library is this version's,
# and the 0.1.0 script loads against it (src/core/compat.c keeps the one symbol it
# names that 0.2.0 dropped).  The 0.1.0 rows are loaded as a restore loads
# them, with session_replication_role = replica, since the 0.1.0 functions do
# not run on this library.
#
# The schemas are compared from the catalogs, not with pg_dump: pg_dump
# writes an extension's objects as one CREATE EXTENSION.  The description
# below names every table, column (in order, with type, nullability and
# default), constraint, index, function (signature, result, volatility,
# parallel safety, strictness, settings, ACL, C symbol), composite type,
# comment, policy, row-level security flag, table ACL and the tables pg_dump
# includes the rows of (extconfig).
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

old=mnemo_upgrade_old
new=mnemo_upgrade_new
part=mnemo_upgrade_partitioned

schema_sql="
WITH ns AS (SELECT 'mnemo'::regnamespace AS oid),
lines AS (
  SELECT format('column %s %s %s %s notnull=%s default=%s compression=%s', c.relname,
                row_number() OVER (PARTITION BY c.oid ORDER BY a.attnum), a.attname,
                format_type(a.atttypid, a.atttypmod), a.attnotnull,
                pg_get_expr(d.adbin, d.adrelid), a.attcompression) AS line
    FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid
    LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum
   WHERE c.relnamespace = (SELECT oid FROM ns) AND c.relkind IN ('r', 'c')
     AND a.attnum > 0 AND NOT a.attisdropped
  UNION ALL
  SELECT format('relation %s kind=%s rls=%s acl=%s', c.relname, c.relkind, c.relrowsecurity, c.relacl)
    FROM pg_class c WHERE c.relnamespace = (SELECT oid FROM ns) AND c.relkind IN ('r', 'S', 'c')
  UNION ALL
  SELECT format('constraint %s %s %s', conrelid::regclass, conname, pg_get_constraintdef(oid))
    FROM pg_constraint WHERE connamespace = (SELECT oid FROM ns)
  UNION ALL
  SELECT format('index %s', pg_get_indexdef(i.indexrelid))
    FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid WHERE c.relnamespace = (SELECT oid FROM ns)
  UNION ALL
  SELECT format('function %s returns %s vol=%s par=%s strict=%s secdef=%s config=%s acl=%s src=%s',
                p.oid::regprocedure, pg_get_function_result(p.oid), p.provolatile, p.proparallel,
                p.proisstrict, p.prosecdef, p.proconfig, p.proacl, p.prosrc)
    FROM pg_proc p WHERE p.pronamespace = (SELECT oid FROM ns)
  UNION ALL
  SELECT format('comment %s %s', d.classoid::regclass, coalesce(
                (SELECT c.oid::regclass::text FROM pg_class c WHERE d.classoid = 'pg_class'::regclass AND c.oid = d.objoid),
                (SELECT p.oid::regprocedure::text FROM pg_proc p WHERE d.classoid = 'pg_proc'::regclass AND p.oid = d.objoid),
                (SELECT t.oid::regtype::text FROM pg_type t WHERE d.classoid = 'pg_type'::regclass AND t.oid = d.objoid),
                d.objoid::text) || ' ' || d.objsubid || ' ' || d.description)
    FROM pg_description d
   WHERE (d.classoid = 'pg_class'::regclass AND d.objoid IN (SELECT oid FROM pg_class WHERE relnamespace = (SELECT oid FROM ns)))
      OR (d.classoid = 'pg_proc'::regclass AND d.objoid IN (SELECT oid FROM pg_proc WHERE pronamespace = (SELECT oid FROM ns)))
      OR (d.classoid = 'pg_type'::regclass AND d.objoid IN (SELECT oid FROM pg_type WHERE typnamespace = (SELECT oid FROM ns)))
  UNION ALL
  SELECT format('policy %s %s %s %s %s %s', tablename, policyname, cmd, roles, qual, with_check)
    FROM pg_policies WHERE schemaname = 'mnemo'
  UNION ALL
  SELECT format('trigger %s %s', tgrelid::regclass, tgname)
    FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
   WHERE c.relnamespace = (SELECT oid FROM ns) AND NOT t.tgisinternal
  UNION ALL
  SELECT format('extconfig %s', x::regclass) FROM pg_extension e, unnest(e.extconfig) AS x
   WHERE e.extname = 'mnemo'
  UNION ALL
  SELECT format('extension %s owner=%s schema=%s', extversion, extowner::regrole, extnamespace::regnamespace)
    FROM pg_extension WHERE extname = 'mnemo'
)
SELECT line FROM lines ORDER BY line"

# The 0.1.0 database: two sessions (one a child), messages of each role with
# text, reasoning, tool, file_ref and image parts, a tombstone, token usage, a leaf
# summary and its node, edges and context item, a file reference.
populate_old() {
	fresh_db "$old"
	psql -X -q -v ON_ERROR_STOP=1 -d "$old" >/dev/null <<'SQL'
CREATE EXTENSION mnemo VERSION '0.1.0';
SET session_replication_role = replica;
INSERT INTO mnemo.sessions (id, parent_id, created_at, updated_at, model_id, provider_id, agent, title,
                            metadata, system_prompt, state, watched, last_seq, last_position)
VALUES ('up_a', NULL, 1700000000000, 1700000005000, 'gpt-x', 'openai', 'coder', 'Upgrade A',
        '{"k": "v"}', 'Be brief.', '{"step": 2}', true, 4, 4),
       ('up_child', 'up_a', 1700000001000, 1700000001000, '', '', 'default', NULL, NULL, '', '{}', false, 1, 1);
INSERT INTO mnemo.messages (session_id, seq, id, role, created_at, agent, model_id, provider_id, run_id,
                            is_summary, tokens_input, tokens_output, cost, finish_reason)
VALUES ('up_a', 1, 'up_m1', 'user', 1700000001000, 'coder', 'gpt-x', 'openai', NULL, false, 0, 0, 0, NULL),
       ('up_a', 2, 'up_m2', 'assistant', 1700000002000, 'coder', 'gpt-x', 'openai', 'run_1', false, 120, 30, 0.25, 'tool_calls'),
       ('up_a', 3, 'up_m3', 'user', 1700000003000, 'coder', 'gpt-x', 'openai', NULL, false, 0, 0, 0, NULL),
       ('up_a', 4, 'up_s1', 'assistant', 1700000004000, 'coder', 'gpt-x', 'openai', NULL, true, 0, 0, 0, NULL),
       ('up_child', 1, 'up_c1', 'user', 1700000001500, 'default', '', '', NULL, false, 0, 0, 0, NULL);
INSERT INTO mnemo.message_parts (session_id, message_id, part_index, id, part_type, content, tool_name,
                                 tool_call_id, tool_state, compacted_at, started_at, completed_at, token_estimate)
VALUES ('up_a', 'up_m1', 0, 'up_p1', 'text', '{"type": "text", "text": "list the files"}', NULL, NULL, NULL, NULL, NULL, NULL, 3),
       ('up_a', 'up_m2', 0, 'up_p2', 'reasoning', '{"type": "reasoning", "text": "use ls"}', NULL, NULL, NULL, NULL, NULL, NULL, 1),
       ('up_a', 'up_m2', 1, 'up_p3', 'tool', '{"type": "tool", "tool_name": "ls", "tool_call_id": "c1", "input": {"path": "/"}, "output": "etc usr"}',
        'ls', 'c1', 'completed', 1700000009000, 1700000002100, 1700000002200, 12),
       ('up_a', 'up_m3', 0, 'up_p4', 'file_ref', '{"type": "file_ref", "content_id": "sha256:up", "path": "a.c", "summary": "main()"}', NULL, NULL, NULL, NULL, NULL, NULL, 9),
       ('up_a', 'up_s1', 0, 'up_p5', 'text', '{"type": "text", "text": "they listed files", "token_estimate": 4}', NULL, NULL, NULL, NULL, NULL, NULL, 4),
       ('up_child', 'up_c1', 0, 'up_p6', 'text', '{"type": "text", "text": "child says hi"}', NULL, NULL, NULL, NULL, NULL, NULL, 3);
-- an image twice as canonical base64, and its bytes once more with line
-- breaks: 0.6.0 stores the first two as one blob, the third stays text
INSERT INTO mnemo.message_parts (session_id, message_id, part_index, id, part_type, content, token_estimate)
SELECT 'up_child', 'up_c1', i, 'up_p' || (6 + i), 'image',
       jsonb_build_object('type', 'image', 'media_type', 'image/png',
                          'data', CASE WHEN i < 3 THEN translate(b64, E'\n', '') ELSE b64 END), 1600
  FROM generate_series(1, 3) i, encode(decode(repeat('89504e470d0a1a0a', 4000), 'hex'), 'base64') b64;
INSERT INTO mnemo.context_items (session_id, position, item_type, item_id, seq, created_at)
VALUES ('up_a', 1, 'summary', 'up_s1', 4, 1700000004000),
       ('up_a', 3, 'message', 'up_m3', 3, 1700000003000),
       ('up_child', 1, 'message', 'up_c1', 1, 1700000001500);
INSERT INTO mnemo.summary_nodes (session_id, id, kind, level, token_count, seq_start, seq_end, created_at)
VALUES ('up_a', 'up_s1', 'leaf', 1, 4, 1, 2, 1700000004000);
INSERT INTO mnemo.summary_edges (session_id, summary_id, ordinal, item_type, item_id)
VALUES ('up_a', 'up_s1', 1, 'message', 'up_m1'), ('up_a', 'up_s1', 2, 'message', 'up_m2');
INSERT INTO mnemo.file_references (content_id, path, file_type, token_count, exploration_summary, created_at)
VALUES ('sha256:up', 'a.c', 'c', 9, 'main()', 1700000000500);
SQL
}

# the rows of every table but the tenant, in a stable order; a session's
# counters are SESSION_COUNTERS (rows_sql_with)
rows_sql_template="SELECT md5(concat_ws('#',
  (SELECT string_agg(concat_ws(',', id, parent_id, created_at, updated_at, model_id, provider_id, agent, title,
                               is_active, metadata, system_prompt, state, watched, SESSION_COUNTERS), '|' ORDER BY id)
     FROM mnemo.sessions),
  (SELECT string_agg(concat_ws(',', session_id, seq, id, role, created_at, agent, model_id, provider_id, run_id,
                               is_summary, tokens_input, tokens_output, tokens_cache_read, tokens_cache_write,
                               tokens_reasoning, cost, finish_reason), '|' ORDER BY session_id, seq)
     FROM mnemo.messages),
  (SELECT string_agg(concat_ws(',', session_id, message_id, part_index, id, part_type, content, tool_name,
                               tool_call_id, tool_state, compacted_at, started_at, completed_at, token_estimate),
                     '|' ORDER BY session_id, message_id, part_index)
     FROM mnemo.message_parts),
  (SELECT string_agg(concat_ws(',', session_id, position, item_type, item_id, seq, created_at), '|' ORDER BY session_id, position)
     FROM mnemo.context_items),
  (SELECT string_agg(concat_ws(',', session_id, id, kind, level, token_count, seq_start, seq_end, created_at, superseded_by), '|')
     FROM mnemo.summary_nodes),
  (SELECT string_agg(concat_ws(',', session_id, summary_id, ordinal, item_type, item_id), '|' ORDER BY session_id, summary_id, ordinal)
     FROM mnemo.summary_edges),
  (SELECT string_agg(concat_ws(',', content_id, path, file_type, token_count, exploration_summary, created_at), '|')
     FROM mnemo.file_references)))"
rows_sql_with() { echo "${rows_sql_template//SESSION_COUNTERS/$1}"; }
# up to 0.5.0 the counters are columns of mnemo.sessions
rows_sql=$(rows_sql_with "last_seq, last_position")

# rows_sql with each part's content as the functions read it in 0.6.0: an
# image stored as a blob with its base64 back (src/log/blobs.c)
content_read="CASE WHEN p.part_type = 'image' AND jsonb_typeof(p.content -> 'data') = 'object'
  THEN p.content || jsonb_build_object('data', (SELECT replace(encode(b.bytes, 'base64'), E'\\n', '')
    FROM mnemo.blobs b WHERE b.tenant = p.tenant AND b.sha256 = decode(p.content -> 'data' ->> 'sha256', 'hex')))
  ELSE p.content END"
rows_read_with() {
	local q
	q=$(rows_sql_with "$1")
	q=${q/part_type, content, tool_name/part_type, $content_read, tool_name}
	echo "${q/FROM mnemo.message_parts)/FROM mnemo.message_parts p)}"
}

# rows_read_with once a part names its message by seq (0.9.0): the message's
# id, read through that seq, where the part held it
rows_by_seq() {
	local q
	q=$(rows_read_with "$1")
	echo "${q/FROM mnemo.message_parts p)/FROM (SELECT p.*, m.id AS message_id FROM mnemo.message_parts p
	  JOIN mnemo.messages m ON m.session_id = p.session_id AND m.tenant = p.tenant AND m.seq = p.seq) p)}"
}

# the three images of up_c1, as populate_old wrote them
images_sql="SELECT string_agg(CASE WHEN i < 3 THEN translate(b64, E'\\n', '') ELSE b64 END, ',' ORDER BY i)
  FROM generate_series(1, 3) i, encode(decode(repeat('89504e470d0a1a0a', 4000), 'hex'), 'base64') b64"

main() {
	local before owner
	setup_cluster upgrade "${1:-}"
	populate_old
	is "$(val "$old" "SELECT extversion FROM pg_extension WHERE extname = 'mnemo'")" 0.1.0 "a 0.1.0 database"
	before=$(val "$old" "$rows_sql")
	is "$(sqlstate_of "$old" "INSERT INTO mnemo.file_references (content_id, path, created_at) VALUES ('x', 'x', 0)")" \
		55000 "the 0.1.0 guard trigger runs against this library only to ask for the update (55000)"

	check "ALTER EXTENSION mnemo UPDATE TO '0.2.0'" \
		psql -X -q -v ON_ERROR_STOP=1 -d "$old" -c "ALTER EXTENSION mnemo UPDATE TO '0.2.0'"
	is "$(val "$old" "SELECT extversion FROM pg_extension WHERE extname = 'mnemo'")" 0.2.0 "the database is at 0.2.0"
	is "$(val "$old" "$rows_sql")" "$before" "every row of every table is unchanged (tenant aside)"
	owner=$(val "$old" "SELECT extowner::regrole FROM pg_extension WHERE extname = 'mnemo'")
	is "$(val "$old" "SELECT string_agg(DISTINCT tenant, ',') FROM (
	            SELECT tenant FROM mnemo.sessions UNION ALL SELECT tenant FROM mnemo.messages
	            UNION ALL SELECT tenant FROM mnemo.message_parts UNION ALL SELECT tenant FROM mnemo.context_items
	            UNION ALL SELECT tenant FROM mnemo.summary_nodes UNION ALL SELECT tenant FROM mnemo.summary_edges
	            UNION ALL SELECT tenant FROM mnemo.file_references) t")" "$owner" \
		"every existing row belongs to the extension owner's tenant ($owner)"

	before=$(val "$old" "$rows_sql")
	check "ALTER EXTENSION mnemo UPDATE TO '0.3.0'" \
		psql -X -q -v ON_ERROR_STOP=1 -d "$old" -c "ALTER EXTENSION mnemo UPDATE TO '0.3.0'"
	is "$(val "$old" "SELECT extversion FROM pg_extension WHERE extname = 'mnemo'")" 0.3.0 "the database is at 0.3.0"
	is "$(val "$old" "$rows_sql")" "$before" "every row of every table is unchanged by 0.2.0 -> 0.3.0"
	check "ALTER EXTENSION mnemo UPDATE TO '0.4.0'" \
		psql -X -q -v ON_ERROR_STOP=1 -d "$old" -c "ALTER EXTENSION mnemo UPDATE TO '0.4.0'"
	is "$(val "$old" "SELECT extversion FROM pg_extension WHERE extname = 'mnemo'")" 0.4.0 "the database is at 0.4.0"
	is "$(val "$old" "$rows_sql")" "$before" "every row of every table is unchanged by 0.3.0 -> 0.4.0"
	check "ALTER EXTENSION mnemo UPDATE TO '0.5.0'" \
		psql -X -q -v ON_ERROR_STOP=1 -d "$old" -c "ALTER EXTENSION mnemo UPDATE TO '0.5.0'"
	is "$(val "$old" "SELECT extversion FROM pg_extension WHERE extname = 'mnemo'")" 0.5.0 "the database is at 0.5.0"
	is "$(val "$old" "$rows_sql")" "$before" "every row of every table is unchanged by 0.4.0 -> 0.5.0"
	# 0.6.0 drops sessions.last_seq and last_position: get_session reads
	# last_seq from the messages, and it must say what the column said
	before=$(val "$old" "$(rows_sql_with last_seq)")
	check "ALTER EXTENSION mnemo UPDATE TO '0.6.0'" \
		psql -X -q -v ON_ERROR_STOP=1 -d "$old" -c "ALTER EXTENSION mnemo UPDATE TO '0.6.0'"
	is "$(val "$old" "SELECT extversion FROM pg_extension WHERE extname = 'mnemo'")" 0.6.0 "the database is at 0.6.0"
	is "$(val "$old" "$(rows_read_with "(mnemo.get_session(id)).last_seq")")" "$before" \
		"every row of every table is unchanged by 0.5.0 -> 0.6.0, the image parts as they read, and get_session's last_seq is the dropped column's"
	is "$(val "$old" "SELECT string_agg(id || ':' || jsonb_typeof(content -> 'data'), ',' ORDER BY id)
	                  FROM mnemo.message_parts WHERE part_type = 'image'")" \
		"up_p7:object,up_p8:object,up_p9:string" \
		"the two canonical images now name a blob, the one with line breaks is kept as text"
	before=$(val "$old" "$(rows_read_with "(mnemo.get_session(id)).last_seq")")
	check "ALTER EXTENSION mnemo UPDATE TO '0.7.0'" \
		psql -X -q -v ON_ERROR_STOP=1 -d "$old" -c "ALTER EXTENSION mnemo UPDATE TO '0.7.0'"
	is "$(val "$old" "SELECT extversion FROM pg_extension WHERE extname = 'mnemo'")" 0.7.0 "the database is at 0.7.0"
	is "$(val "$old" "$(rows_read_with "(mnemo.get_session(id)).last_seq")")" "$before" \
		"every row of every table is unchanged by 0.6.0 -> 0.7.0"
	check "ALTER EXTENSION mnemo UPDATE TO '0.8.0'" \
		psql -X -q -v ON_ERROR_STOP=1 -d "$old" -c "ALTER EXTENSION mnemo UPDATE TO '0.8.0'"
	is "$(val "$old" "SELECT extversion FROM pg_extension WHERE extname = 'mnemo'")" 0.8.0 "the database is at 0.8.0"
	is "$(val "$old" "$(rows_read_with "(mnemo.get_session(id)).last_seq")")" "$before" \
		"every row of every table is unchanged by 0.7.0 -> 0.8.0"
	# 0.9.0 gives each part its message's seq and keys the parts by it
	check "ALTER EXTENSION mnemo UPDATE TO '0.9.0'" \
		psql -X -q -v ON_ERROR_STOP=1 -d "$old" -c "ALTER EXTENSION mnemo UPDATE TO '0.9.0'"
	is "$(val "$old" "SELECT extversion FROM pg_extension WHERE extname = 'mnemo'")" 0.9.0 "the database is at 0.9.0"
	is "$(val "$old" "$(rows_by_seq "(mnemo.get_session(id)).last_seq")")" "$before" \
		"every row of every table is unchanged by 0.8.0 -> 0.9.0, each part's message found by its seq"
	is "$(val "$old" "SELECT string_agg(p.id || ':' || m.id, ',' ORDER BY p.id)
	                  FROM mnemo.message_parts p JOIN mnemo.messages m
	                    ON m.session_id = p.session_id AND m.tenant = p.tenant AND m.seq = p.seq")" \
		"up_p1:up_m1,up_p2:up_m2,up_p3:up_m2,up_p4:up_m3,up_p5:up_s1,up_p6:up_c1,up_p7:up_c1,up_p8:up_c1,up_p9:up_c1" \
		"every part names its message by the message's seq"
	is "$(val "$old" "SELECT count(*) FROM pg_attribute
	                   WHERE attrelid = 'mnemo.message_parts'::regclass AND attname = 'message_id'")" 0 \
		"and no longer stores the message's id"
	is "$(val "$old" "SELECT count(*) || ' ' || sum(refs) || ' ' || sum(octet_length(bytes)) || ' ' || min(tenant)
	                  FROM mnemo.blobs")" "1 2 32000 $owner" "one blob of 32,000 bytes, for both, of the owner's tenant"
	# 0.10.0 keys the parts by their place and derives the id of a part
	# appended without one; the ids stored before stay
	before=$(val "$old" "$(rows_by_seq "(mnemo.get_session(id)).last_seq")")
	check "ALTER EXTENSION mnemo UPDATE TO '0.10.0'" \
		psql -X -q -v ON_ERROR_STOP=1 -d "$old" -c "ALTER EXTENSION mnemo UPDATE TO '0.10.0'"
	is "$(val "$old" "SELECT extversion FROM pg_extension WHERE extname = 'mnemo'")" 0.10.0 "the database is at 0.10.0"
	is "$(val "$old" "$(rows_by_seq "(mnemo.get_session(id)).last_seq")")" "$before" \
		"every row of every table is unchanged by 0.9.0 -> 0.10.0, every part id stored before included"
	is "$(val "$old" "SELECT pg_get_constraintdef(oid) FROM pg_constraint
	                   WHERE conrelid = 'mnemo.message_parts'::regclass AND contype = 'p'")" \
		"PRIMARY KEY (session_id, tenant, seq, part_index)" "the parts' primary key is their place"
	is "$(val "$old" "SELECT count(*) FROM pg_attribute WHERE attrelid = 'mnemo.search_documents'::regclass
	                   AND attname = 'message_id'")" 0 "the search documents no longer store the message's id"
	# 0.11.0 changes no SQL object; its library compresses a part's content
	# from 256 bytes on (by lz4), and the rows stored before stay as they were
	# (checked once the database is at this library's version, below)
	before=$(val "$old" "$(rows_by_seq "(mnemo.get_session(id)).last_seq")")
	check "ALTER EXTENSION mnemo UPDATE TO '0.11.0'" \
		psql -X -q -v ON_ERROR_STOP=1 -d "$old" -c "ALTER EXTENSION mnemo UPDATE TO '0.11.0'"
	is "$(val "$old" "SELECT extversion FROM pg_extension WHERE extname = 'mnemo'")" 0.11.0 "the database is at 0.11.0"
	is "$(val "$old" "$(rows_by_seq "(mnemo.get_session(id)).last_seq")")" "$before" \
		"every row of every table is unchanged by 0.10.0 -> 0.11.0"
	# 0.12.0 changes a comment; its library stores the search documents'
	# words without their positions (checked below)
	before=$(val "$old" "$(rows_by_seq "(mnemo.get_session(id)).last_seq")")
	check "ALTER EXTENSION mnemo UPDATE TO '0.12.0'" \
		psql -X -q -v ON_ERROR_STOP=1 -d "$old" -c "ALTER EXTENSION mnemo UPDATE TO '0.12.0'"
	is "$(val "$old" "SELECT extversion FROM pg_extension WHERE extname = 'mnemo'")" 0.12.0 "the database is at 0.12.0"
	is "$(val "$old" "$(rows_by_seq "(mnemo.get_session(id)).last_seq")")" "$before" \
		"every row of every table is unchanged by 0.11.0 -> 0.12.0"
	# 0.13.0 keeps the log in one table, mnemo.log, one row per part, the
	# message's columns on its part 0 row; mnemo.messages and
	# mnemo.message_parts are views of it, column for column
	before=$(val "$old" "$(rows_by_seq "(mnemo.get_session(id)).last_seq")")
	check "ALTER EXTENSION mnemo UPDATE TO '0.13.0'" \
		psql -X -q -v ON_ERROR_STOP=1 -d "$old" -c "ALTER EXTENSION mnemo UPDATE TO '0.13.0'"
	is "$(val "$old" "SELECT extversion FROM pg_extension WHERE extname = 'mnemo'")" 0.13.0 "the database is at 0.13.0"
	is "$(val "$old" "$(rows_by_seq "(mnemo.get_session(id)).last_seq")")" "$before" \
		"every message and part reads back unchanged through the views by 0.12.0 -> 0.13.0"
	is "$(val "$old" "SELECT string_agg(s.id || ':' || (SELECT count(*) FROM mnemo.get_messages_flat(s.id)), ',' ORDER BY s.id)
	                  FROM mnemo.sessions s WHERE s.fork_seq IS NULL")" \
	   "$(val "$old" "SELECT string_agg(s.id || ':' || (SELECT count(*) FROM mnemo.log l WHERE l.session_id = s.id), ',' ORDER BY s.id)
	                  FROM mnemo.sessions s WHERE s.fork_seq IS NULL")" \
		"get_messages_flat reads a row per row of the log, a message without parts one"
	is "$(val "$old" "SELECT (SELECT count(*) FROM mnemo.log) = (SELECT count(*) FROM mnemo.message_parts)
	                         + (SELECT count(*) FROM mnemo.messages m WHERE NOT EXISTS (SELECT FROM mnemo.message_parts p
	                            WHERE p.session_id = m.session_id AND p.tenant = m.tenant AND p.seq = m.seq))")" t \
		"the log holds a row per part, and one per message without parts"
	is "$(val "$old" "SELECT relkind FROM pg_class WHERE oid IN ('mnemo.messages'::regclass, 'mnemo.message_parts'::regclass)
	                  GROUP BY relkind")" v "messages and message_parts are views"

	# read back and written through this version's functions, once the
	# database is at this library's version (doc/operations.md, Upgrading)
	is "$(val "$old" "SELECT string_agg(id || ':' || seq || ':' || role || ':' || jsonb_array_length(parts), ' ' ORDER BY seq)
	                  FROM mnemo.get_messages_with_parts('up_a')")" \
		"up_m1:1:user:1 up_m2:2:assistant:2 up_m3:3:user:1 up_s1:4:assistant:1" \
		"get_messages_with_parts reads the session's messages and parts"
	is "$(val "$old" "SELECT parts->1->>'output' || ' ' || (parts->1->>'tool_state') || ' ' || (parts->1->>'compacted_at')
	                  FROM mnemo.get_messages_with_parts_by_ids('up_a', ARRAY['up_m2'])")" \
		"etc usr completed 1700000009000" "a tool part with its output, state and tombstone (by_ids)"
	is "$(val "$old" "SELECT tokens_input || ' ' || cost || ' ' || finish_reason FROM mnemo.get_message('up_a', 'up_m2')")" \
		"120 0.25 tool_calls" "get_message: the token usage"
	is "$(val "$old" "SELECT string_agg(item_id, ',' ORDER BY item_id) FROM mnemo.expand_summary('up_a', 'up_s1')")" \
		"up_m1,up_m2" "expand_summary: the summary covers its two messages"
	is "$(val "$old" "SELECT string_agg(item_id || '=' || content, '|' ORDER BY position) FROM mnemo.build_context('up_a', 1000)")" \
		"up_s1=they listed files|up_m3=[FILE: a.c]
Content-ID: sha256:up
Type: unknown
Tokens: 0
Exploration Summary:
main()
[/FILE]" "build_context: the summary and the newest message"
	is "$(val "$old" "SELECT string_agg(id, ',' ORDER BY id) FROM mnemo.list_sessions(active_only => false)")" \
		"up_a,up_child" "list_sessions lists both"
	is "$(val "$old" "SELECT path FROM mnemo.get_file_reference('sha256:up')")" a.c \
		"the file reference, now the owner tenant's"
	is "$(val "$old" "SELECT (mnemo.append_message('up_a', 'user', '[{\"type\":\"text\",\"text\":\"after\"}]')).seq")" 5 \
		"an append continues the session's seqs"
	# the context rows written before the update stay the view's explicit
	# rows (the tail starts after the last seq of each session); an append
	# after it joins the implicit tail at position = its seq, writing no row
	is "$(val "$old" "SELECT string_agg(s.id || '=' || s.context_tail_seq, ',' ORDER BY s.id) FROM mnemo.sessions s")" \
		"up_a=4,up_child=1" "the update starts each session's tail after its last seq"
	is "$(val "$old" "SELECT string_agg(item_type || ':' || item_id || '@' || position, ',' ORDER BY position)
	                  FROM mnemo.get_context_items('up_a')")" \
		"summary:up_s1@1,message:up_m3@3,message:$(val "$old" "SELECT id FROM mnemo.messages WHERE session_id = 'up_a' AND seq = 5")@5" \
		"the old rows, then the appended message at position = its seq"
	is "$(val "$old" "SELECT count(*) FROM mnemo.context_items WHERE session_id = 'up_a'")" 2 \
		"the append wrote no context row"
	is "$(val "$old" "SELECT mnemo.append_part('up_a', 'up_m3', '{\"type\":\"text\",\"text\":\"more\"}')")" 1 \
		"append_part continues the message's parts"
	is "$(val "$old" "SELECT string_agg(p.part_index || '=' || p.id, ',' ORDER BY p.part_index)
	                  FROM mnemo.get_parts('up_a', 'up_m3') p")" "0=up_p4,1=up_m3:1" \
		"the part stored before keeps its id; the one appended after has its derived id"
	is "$(val "$old" "SELECT mnemo.tombstone_part('up_a', 'up_m3:1') > 0 AND mnemo.tombstone_part('up_a', 'up_p4') > 0")" t \
		"tombstone_part finds each by its id"
	is "$(val "$old" "SELECT mnemo.watch('up_a') ~ '^mnemo_[0-9a-f]{32}\$'")" t "watch returns the tenant's channel"

	is "$(val "$old" "SELECT string_agg(message_id, ',' ORDER BY message_id) FROM mnemo.search_history('up_a', 'files')")" \
		"up_m1,up_s1" "search_history finds what was stored before the update (none of it counted as indexed)"
	is "$(val "$old" "SELECT mnemo.search_pending('up_a')")" 0 "and indexed it on that first search"
	is "$(val "$old" "SELECT string_agg(seq || ':' || role || ':' || jsonb_array_length(parts), ' ' ORDER BY seq)
	                  FROM mnemo.get_messages_with_parts('up_a')")" \
		"1:user:1 2:assistant:2 3:user:2 4:assistant:1 5:user:1" "the updated session reads back, the appends made after the update included"

	seq=$(val "$old" "SELECT (mnemo.append_message('up_a', 'assistant',
	                    jsonb_build_array(jsonb_build_object('type', 'text', 'text', repeat('files listed ', 40))))).seq")
	is "$(val "$old" "SELECT pg_column_compression(p.content) || ' ' || (p.content ->> 'text' = repeat('files listed ', 40))
	                  FROM mnemo.message_parts p WHERE p.session_id = 'up_a' AND p.seq = '$seq'")" "lz4 true" \
		"a part of 520 bytes appended after the update is stored compressed, and reads back as given"

	# since 0.12.0 a search document holds its words without their
	# positions.  A document stored with them (as before 0.12.0: the
	# summary's, rewritten so here) is searched alike
	check "the summary's search document stored with its words' positions" \
		psql -X -q -v ON_ERROR_STOP=1 -d "$old" -c "UPDATE mnemo.search_documents SET tsv = to_tsvector('simple', 'they listed files')
		                                            WHERE session_id = 'up_a' AND seq = 4"
	is "$(val "$old" "SELECT string_agg(message_id, ',' ORDER BY seq) FROM mnemo.search_history('up_a', '\"listed files\"')")" \
		"up_s1,$(val "$old" "SELECT id FROM mnemo.messages WHERE session_id = 'up_a' AND seq = '$seq'")" \
		"a phrase finds the document stored with positions and the part indexed after the update"
	is "$(val "$old" "SELECT count(*) FILTER (WHERE tsv <> strip(tsv)) || ' ' || count(*) FILTER (WHERE seq = '$seq')
	                  FROM mnemo.search_documents WHERE session_id = 'up_a'")" "1 1" \
		"the new part's document holds no positions; the old one keeps its own"
	is "$(val "$old" "SELECT count(*) FROM mnemo.search_history('up_a', '\"files they\"')")" 0 \
		"words of a phrase out of order match no part"

	# (read by get_messages_with_parts, whose reads walk mnemo.log since
	# 0.13.0) the images stored as blobs by 0.6.0 read back exactly
	is "$(val "$old" "SELECT string_agg(p ->> 'data', ',' ORDER BY (p ->> 'part_index')::int)
	                  FROM mnemo.get_messages_with_parts('up_child') m, jsonb_array_elements(m.parts) p
	                 WHERE p ->> 'type' = 'image'")" "$(val "$old" "$images_sql")" \
		"get_messages_with_parts gives each image's base64 back exactly"
	# a message appended without parts (0.13.0: one row without a part)
	msg=$(val "$old" "SELECT id FROM mnemo.append_message('up_a', 'assistant', '[]')")
	is "$(val "$old" "SELECT mnemo.append_part('up_a', '$msg', '{\"type\":\"text\",\"text\":\"streamed\"}')
	                  || ' ' || mnemo.append_part('up_a', '$msg', '{\"type\":\"text\",\"text\":\"on\"}')")" "0 1" \
		"a message appended without parts takes its first part at index 0, then 1"
	is "$(val "$old" "SELECT string_agg(part_index || '=' || (content ->> 'text'), ',' ORDER BY part_index)
	                  FROM mnemo.get_parts('up_a', '$msg')")" "0=streamed,1=on" "and reads them back"

	# the schema of a fresh install
	fresh_db "$new"
	check "a fresh CREATE EXTENSION mnemo" psql -X -q -v ON_ERROR_STOP=1 -d "$new" -c "CREATE EXTENSION mnemo"
	val "$old" "$schema_sql" >"$tmp/upgraded.schema"
	val "$new" "$schema_sql" >"$tmp/fresh.schema"
	is "$(wc -l <"$tmp/fresh.schema")" "$(wc -l <"$tmp/upgraded.schema")" \
		"the catalog descriptions have as many lines ($(wc -l <"$tmp/fresh.schema"))"
	check "the upgraded schema equals a fresh 0.13.0 install's" diff "$tmp/fresh.schema" "$tmp/upgraded.schema"

	# an install made hash-partitioned at 0.2.0 (mnemo.partitions): the
	# tables 0.3.0 adds join its layout, with as many partitions
	fresh_db "$part"
	check "a 0.2.0 install with mnemo.partitions = 3" env PGOPTIONS="-c mnemo.partitions=3" \
		psql -X -q -v ON_ERROR_STOP=1 -d "$part" -c "CREATE EXTENSION mnemo VERSION '0.2.0'"
	# (written directly: 0.2.0's functions call the library installed now)
	check "a session of two messages with parts in it, as 0.2.0 stores them" \
		psql -X -q -v ON_ERROR_STOP=1 -d "$part" <<'SQL'
INSERT INTO mnemo.sessions (id, created_at, updated_at, last_seq, last_position, tenant)
VALUES ('up_q', 0, 0, 2, 2, current_user);
INSERT INTO mnemo.messages (session_id, seq, id, role, created_at, tenant)
VALUES ('up_q', 1, 'up_q1', 'user', 0, current_user), ('up_q', 2, 'up_q2', 'assistant', 0, current_user);
INSERT INTO mnemo.message_parts (session_id, message_id, part_index, id, part_type, content, tenant)
VALUES ('up_q', 'up_q1', 0, 'up_q1_p0', 'text', '{"type": "text", "text": "a"}', current_user),
       ('up_q', 'up_q2', 0, 'up_q2_p0', 'text', '{"type": "text", "text": "b"}', current_user),
       ('up_q', 'up_q2', 1, 'up_q2_p1', 'text', '{"type": "text", "text": "c"}', current_user);
SQL
	check "its ALTER EXTENSION mnemo UPDATE (to 0.13.0, through 0.3.0, 0.4.0, 0.5.0, 0.6.0, 0.7.0, 0.8.0, 0.9.0, 0.10.0, 0.11.0 and 0.12.0)" \
		psql -X -q -v ON_ERROR_STOP=1 -d "$part" -c "ALTER EXTENSION mnemo UPDATE"
	is "$(val "$part" "SELECT string_agg(c.relname || ':' || c.relkind::text || ':' || c.relrowsecurity || ':'
	                        || (SELECT count(*) FROM pg_inherits i WHERE i.inhparent = c.oid), ' ' ORDER BY c.relname)
	                     FROM pg_class c WHERE c.relnamespace = 'mnemo'::regnamespace
	                      AND c.relname IN ('sessions', 'log', 'checkpoints', 'runs', 'pending_requests',
	                                        'search_progress', 'search_queue', 'search_documents', 'lineage', 'discarded',
	                                        'maps', 'map_items')")" \
		"checkpoints:p:true:3 discarded:p:true:3 lineage:p:true:3 log:p:true:3 map_items:p:true:3 maps:p:true:3 pending_requests:p:true:3 runs:p:true:3 search_documents:p:true:3 search_progress:p:true:3 search_queue:p:true:3 sessions:p:true:3" \
		"the log (0.13.0), checkpoints, runs, pending_requests, search_progress, search_queue, search_documents, lineage, discarded, maps and map_items are partitioned as sessions is, with row-level security"
	is "$(val "$part" "SELECT string_agg(m.id || '.' || p.part_index || '=' || (p.content ->> 'text'), ' ' ORDER BY p.seq, p.part_index)
	                     FROM mnemo.message_parts p JOIN mnemo.messages m
	                       ON m.session_id = p.session_id AND m.tenant = p.tenant AND m.seq = p.seq
	                    WHERE p.session_id = 'up_q'")" "up_q1.0=a up_q2.0=b up_q2.1=c" \
		"the partitioned install's parts name their messages by seq"
	is "$(val "$part" "SELECT string_agg(seq || ':' || role || ':' || (content ->> 'text'), ' ' ORDER BY seq, part_index)
	                     FROM mnemo.get_messages_flat('up_q')")" "1:user:a 2:assistant:b 2:assistant:c" \
		"and get_messages_flat reads them by it"
	is "$(val "$part" "SELECT (mnemo.create_session('up_p')).id;
	                   SELECT (mnemo.claim_run('up_p', 'r1')).run_id;
	                   SELECT (mnemo.complete_run('up_p', 'r1')).completion_seq;
	                   SELECT (mnemo.add_checkpoint('up_p', 'c1')).seq;
	                   SELECT mnemo.set_pending_request('up_p', '{\"q\": 1}', 'r1');
	                   SELECT count(*) FROM (SELECT tableoid FROM mnemo.runs UNION ALL SELECT tableoid FROM mnemo.checkpoints
	                                         UNION ALL SELECT tableoid FROM mnemo.pending_requests) t
	                    WHERE tableoid::regclass::text ~ '_p[0-9]+\$'" | tr '\n' ' ')" \
		"up_p r1 1 0  3 " "their rows go to the partitions"
	is "$(val "$part" "SELECT mnemo.append_message('up_p', 'user', '[]') IS NOT NULL;
	                   SELECT (mnemo.add_checkpoint('up_p', 'c2')).seq;
	                   SELECT (mnemo.fork_session('up_p', 'c2', 'up_p_fork')).fork_seq;
	                   SELECT mnemo.append_message('up_p', 'user', '[]') IS NOT NULL;
	                   SELECT mnemo.resume_session('up_p', 'c2');
	                   SELECT count(*) FROM (SELECT tableoid FROM mnemo.lineage UNION ALL SELECT tableoid FROM mnemo.discarded) t
	                    WHERE tableoid::regclass::text ~ '_p[0-9]+\$'" | tr '\n' ' ')" \
		"t 1 1 t 1 2 " "a fork and a resume on the upgraded partitioned install: lineage and discarded rows in the partitions"
	# pg_dump writes the rows of registered extension members only: every
	# partition, those of 0.2.0 included, is registered by the update (but
	# compaction_claims', whose table is not: a lease does not outlive its
	# compactor)
	is "$(val "$part" "SELECT string_agg(c.relname, ' ' ORDER BY c.relname)
	                     FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid AND c.relkind = 'r'
	                    WHERE c.relnamespace = 'mnemo'::regnamespace
	                      AND c.oid <> ALL ((SELECT extconfig FROM pg_extension WHERE extname = 'mnemo')::oid[])")" \
		"compaction_claims_p0 compaction_claims_p1 compaction_claims_p2" \
		"every partition of the upgraded install is registered for pg_dump, but compaction_claims'"
	check "pg_dump of the upgraded partitioned install" pg_dump -Fc -f "$tmp/part.dump" "$part"
	is "$(pg_restore -f - "$tmp/part.dump" | grep -c '^COPY mnemo.sessions_p[0-9] ')" 3 \
		"it writes the rows of each sessions partition"
	dropdb --if-exists "$part" 2>/dev/null || true
	summary upgrade
}

main "$@"
