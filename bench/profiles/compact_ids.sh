#!/usr/bin/env bash
# bench/profiles/compact_ids.sh: what storing the library's own message ids
# as 16 bytes would take off mnemo.log, measured on the table itself before
# any code is written (issue 34, "ids stored compactly").
#
#   bash bench/profiles/compact_ids.sh [OUT.txt]
#   env: IDS_SESSIONS (5), IDS_TURNS (1000, per session), IDS_PORT (54379)
#
# Starts a private cluster (test/cluster.sh), installs mnemo and appends, as
# an application role, IDS_SESSIONS sessions of IDS_TURNS turns of
# bench/append's shape (a user text of ~200 B, an assistant text of ~800 B,
# one call a turn), so every message id is one mnemo.new_id() made:
# "msg_" and a 26-character ULID, 30 bytes.  It then copies the log's rows,
# in the key's order, into two tables made LIKE mnemo.log with its defaults
# and indexes:
#   text   the id as text, as mnemo.log stores it
#   bytes  the id as the 16 bytes of its ULID (a uuid column: 16 bytes,
#          no length header), decoded from the text so that the ids keep
#          their order and the unique index fills its pages as it does
# and prints the heap and each index of both, per message.  Both are
# mnemo's own table in two forms, compared with each other: this is a
# layout study, not a baseline (bench/append's baseline stays the plain
# table a user writes by hand).
set -euo pipefail
sessions=${IDS_SESSIONS:-5}
turns=${IDS_TURNS:-1000}
out=${1:-/dev/stdout}

# shellcheck source-path=SCRIPTDIR source=private_cluster.sh
. "$(dirname "$0")/private_cluster.sh" compact-ids "${IDS_PORT:-54379}"

psql -X -q -v ON_ERROR_STOP=1 -v sessions="$sessions" -v turns="$turns" >"$dir/sizes.txt" <<'SQL'
CREATE EXTENSION mnemo;
CREATE ROLE ids_app NOLOGIN;
GRANT USAGE ON SCHEMA mnemo TO ids_app;
SET ROLE ids_app;
CREATE TEMP TABLE made AS SELECT (mnemo.create_session()).id FROM generate_series(1, :sessions);
SELECT count(*) FROM (
  SELECT mnemo.append_messages(s.id, jsonb_build_array(
           jsonb_build_object('role', 'user', 'parts', jsonb_build_array(jsonb_build_object(
             'type', 'text', 'text', left(repeat(md5(s.id || t), 7), 200)))),
           jsonb_build_object('role', 'assistant', 'parts', jsonb_build_array(jsonb_build_object(
             'type', 'text', 'text', left(repeat(md5(t || s.id), 25), 800))))))
    FROM made AS s,
         generate_series(1, :turns) AS t) AS appended;
RESET ROLE;

CREATE FUNCTION pg_temp.ulid_bytes(id text) RETURNS uuid LANGUAGE sql IMMUTABLE AS $$
  -- 26 Crockford base32 characters are 130 bits, the first two zero
  SELECT string_agg(to_hex(substr(b, 3 + 4 * k, 4)::bit(4)::integer), '' ORDER BY k)::uuid
    FROM (SELECT string_agg((strpos('0123456789ABCDEFGHJKMNPQRSTVWXYZ', c) - 1)::bit(5)::text, ''
                            ORDER BY i) AS b
            FROM unnest(string_to_array(substr(id, strpos(id, '_') + 1), NULL))
                 WITH ORDINALITY AS u(c, i)) AS bits,
         generate_series(0, 31) AS k
$$;

CREATE TABLE public.ids_text (LIKE mnemo.log INCLUDING DEFAULTS INCLUDING INDEXES);
CREATE TABLE public.ids_bytes (LIKE mnemo.log INCLUDING DEFAULTS INCLUDING INDEXES);
ALTER TABLE public.ids_bytes ALTER COLUMN id TYPE uuid USING NULL;
INSERT INTO public.ids_text SELECT * FROM mnemo.log ORDER BY session_id, tenant, seq, part_index;
INSERT INTO public.ids_bytes
SELECT session_id, tenant, seq, part_index, pg_temp.ulid_bytes(id), role, created_at, agent,
       model_id, provider_id, run_id, is_summary, tokens_input, tokens_output, tokens_cache_read,
       tokens_cache_write, tokens_reasoning, cost, finish_reason, part_id, part_type, content,
       tool_name, tool_call_id, tool_state, compacted_at, started_at, completed_at, token_estimate
  FROM mnemo.log ORDER BY session_id, tenant, seq, part_index;
VACUUM ANALYZE public.ids_text, public.ids_bytes;

-- the decoding keeps every id apart and in order
SELECT CASE WHEN count(DISTINCT b.id) = count(*)
             AND bool_and(t.id < t.next_id) = bool_and(b.id < b.next_id)
            THEN 'ids decoded: distinct, order kept' ELSE 'DECODING LOST IDS' END
  FROM (SELECT id, lead(id) OVER (ORDER BY session_id, seq) AS next_id, session_id, seq
          FROM public.ids_text WHERE id IS NOT NULL) t
  JOIN (SELECT id, lead(id) OVER (ORDER BY session_id, seq) AS next_id, session_id, seq
          FROM public.ids_bytes WHERE id IS NOT NULL) b USING (session_id, seq);

\pset footer off
SELECT c.relname AS relation,
       pg_relation_size(c.oid) AS bytes,
       round(pg_relation_size(c.oid)::numeric / (SELECT count(*) FROM mnemo.log WHERE id IS NOT NULL), 1)
         AS "bytes a message"
  FROM pg_class c
 WHERE c.oid IN ('public.ids_text'::regclass, 'public.ids_bytes'::regclass)
    OR c.oid IN (SELECT indexrelid FROM pg_index
                  WHERE indrelid IN ('public.ids_text'::regclass, 'public.ids_bytes'::regclass))
 ORDER BY c.relname;
SELECT t.kind, round(sum(pg_total_relation_size(t.oid))::numeric
                     / (SELECT count(*) FROM mnemo.log WHERE id IS NOT NULL), 1) AS "bytes a message, all"
  FROM (VALUES ('text', 'public.ids_text'::regclass), ('bytes', 'public.ids_bytes'::regclass)) AS t(kind, oid)
 GROUP BY t.kind ORDER BY t.kind DESC;
SQL

{
	echo "# bench/profiles/compact_ids.sh, $(date -u '+%Y-%m-%d %H:%M UTC'), $sessions sessions of $turns turns"
	echo "# $(psql -X -Atc 'SELECT version()')"
	cat "$dir/sizes.txt"
} >"$out"
