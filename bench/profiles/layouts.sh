#!/usr/bin/env bash
# bench/profiles/layouts.sh: which storage layout for messages and parts could
# meet issue 15's append targets, measured before any C code changes.
#
#   bash bench/profiles/layouts.sh [OUT.txt]
#   env: LAYOUT_TURNS (1000, for bytes and WAL), LAYOUT_ROUNDS (3),
#        LAYOUT_IMPORT (390 batches of 256 small messages a side and round,
#        as `mnemo import` writes 100,000; 0: none),
#        LAYOUT_SECONDS (5, per pgbench run), LAYOUT_PORT (54377),
#        LAYOUT_SID (ulid: session ids "sess_" + 26 characters, as
#        create_session makes them; bench: 16 characters, as bench/append's),
#        LAYOUT_SIDES (all below; plain and plain1 are needed for the ratios)
#
# Starts a private cluster (test/cluster.sh, its own directory and socket),
# creates each candidate layout as plain SQL tables in a schema of its own,
# and writes the same turns into each with plain SQL: no mnemo code, so the
# figures are the storage's alone.  A turn is a user message (~200 B) and an
# assistant message (~800 B), one text part each, from one seeded word
# generator (bench.texts) for every side.  Each layout side writes a turn the
# way append_messages does: one round trip, the session row's seq
# reservation (UPDATE ... RETURNING, as src/lifecycle/sessions.c does) and one INSERT
# ... SELECT per table, as one statement of data-modifying CTEs.  The plain
# side is bench/append's hand-written table and transaction (BEGIN, two
# INSERTs, COMMIT: four round trips); "plain1" writes it in one statement,
# to separate round trips from storage.  Not modelled on any side: the
# CHECK functions, RLS policies and triggers of mnemo's install script (the
# plain table has none either) and mnemo's C work per call.
#
# The import-shaped phase writes batches as bench/import.sh's import does:
# 256 messages of one 60-120 B text part a call, each call reserving its
# seqs in the session row and writing each table with one INSERT ... SELECT
# (plain: the same rows into its table in one statement), pgbench -t
# LAYOUT_IMPORT, synchronous_commit off (the import commits once), one
# client on a session of its own.
#
# Sides (each also has mnemo.sessions' table, whose row every turn updates):
#   plain, plain1  bench/append's table; four round trips a turn, or one
#   A       messages + message_parts as in sql/mnemo--0.3.0.sql
#   B       parts keyed (session_id, seq, part_index), UNIQUE (session_id, id)
#   C       B with a bigint session key instead of the text session id
#   D0/1/2  one row per message, its parts a jsonb array; part ids found by
#           nothing (D0), a side table (D1), an expression GIN index (D2)
#   E       one table of part rows, message columns on part_index 0 rows
#   X_lean  X with defaults stored as NULL, tenant an int, fixed-width first
#   X_hash  X_lean with hash indexes on the ids, uniqueness checked in the turn
#   X_C     X with the text keys in the "C" collation
#   E_hashU E_hash without the uniqueness check (what the check costs; not a
#           candidate, and not among the default sides)
set -euo pipefail

turns=${LAYOUT_TURNS:-1000}
batches=${LAYOUT_IMPORT:-390}
rounds=${LAYOUT_ROUNDS:-3}
secs=${LAYOUT_SECONDS:-5}
sid=${LAYOUT_SID:-ulid}
out=${1:-/dev/stdout}
here=$(cd "$(dirname "$0")/../.." && pwd)
dir=$(mktemp -d /tmp/mnemo-layouts.XXXXXX)
sides=${LAYOUT_SIDES:-plain plain1 A A_C A_lean B B_lean B_hash C D0 D1 D2 E E_lean E_hash E_hash_C}

cleanup() {
	bash "$here/test/cluster.sh" stop "$dir" >/dev/null 2>&1 || true
	rm -rf "$dir"
}
trap cleanup EXIT
chmod 755 "$dir"
# its own port too: the socket file is named after it, and a stray PGPORT
# must not reach another helper's cluster
export MNEMO_TEST_PORT=${LAYOUT_PORT:-54377}
bash "$here/test/cluster.sh" start "$dir"
eval "$(bash "$here/test/cluster.sh" env "$dir")"
export PGOPTIONS='-c client_min_messages=warning'
q() { psql -X -q -v ON_ERROR_STOP=1 "$@"; }
val() { psql -X -At -v ON_ERROR_STOP=1 -c "$1"; }

# No autovacuum: its WAL would land in some side's WAL figure.  Checkpoints
# only where the script asks (before each measurement), never inside one.
q -c "ALTER SYSTEM SET autovacuum = off" -c "ALTER SYSTEM SET max_wal_size = '8GB'" \
	-c "ALTER SYSTEM SET checkpoint_timeout = '1h'" -c "SELECT pg_reload_conf()" >/dev/null
load_before=$(cut -d' ' -f1-3 /proc/loadavg)

# Ids shaped like mnemo's (src/core/ids.c: prefix, 10 time-ordered characters, 16
# random ones): same lengths, increasing within a session, as ULIDs are.
q <<'SQL'
CREATE SCHEMA bench;
CREATE FUNCTION bench.mid(p text, s text, n bigint) RETURNS text LANGUAGE sql IMMUTABLE
  AS $$ SELECT p || lpad(to_hex(n), 10, '0') || right(s, 16) $$;
CREATE FUNCTION bench.words(len int) RETURNS text LANGUAGE plpgsql AS $$
DECLARE w text[] := string_to_array('the parser keeps token of line when a comment ends buffer so next '
  'statement starts late fix is to reset lookahead before returning and add test with trailing input '
  'checked other callers none depend on stale state apply patch run suite file function returns error '
  'value index session message context summary tool output query table row commit lock page cache plan '
  'result build deploy', ' '); s text := '';
BEGIN
  WHILE length(s) < len LOOP s := s || w[1 + floor(random() * array_length(w, 1))::int] || ' '; END LOOP;
  RETURN rtrim(s) || '.';
END $$;
SELECT setseed(0.15) \gset
CREATE TABLE bench.texts (i int PRIMARY KEY, u text, a text, uj jsonb, aj jsonb, ue int, ae int);
-- a row of all four is over the TOAST threshold: stored compressed, aj
-- would reach the layouts' rows still compressed, not as a client sends it
ALTER TABLE bench.texts ALTER u SET STORAGE PLAIN, ALTER a SET STORAGE PLAIN,
  ALTER uj SET STORAGE PLAIN, ALTER aj SET STORAGE PLAIN;
INSERT INTO bench.texts (i, u, a) SELECT i, bench.words(200), bench.words(800) FROM generate_series(0, 999) i;
UPDATE bench.texts SET uj = jsonb_build_object('type', 'text', 'text', u), ue = length(u) / 4,
                       aj = jsonb_build_object('type', 'text', 'text', a), ae = length(a) / 4;
-- turn t of a session whose seqs so far end at base: one row per message
-- (each has one part here), as the arrays append_messages builds
CREATE FUNCTION bench.turn(s text, base bigint, t int)
  RETURNS TABLE (seq bigint, msg_id text, role text, part_id text, content jsonb, est int, at bigint)
  LANGUAGE sql STABLE AS $$
  SELECT base + k, bench.mid('msg_', s, base + k), r, bench.mid('part_', s, base + k), c, e, 1764000000000 + t
    FROM bench.texts x, LATERAL (VALUES (1, 'user', x.uj, x.ue), (2, 'assistant', x.aj, x.ae)) v(k, r, c, e)
   WHERE x.i = t % 1000 $$;
-- an import's small messages (bench/import.sh: 60-120 B of text each), and
-- batch b of 256 of them at seqs base + 1 .., shaped as bench.turn's rows
CREATE TABLE bench.itexts (i int PRIMARY KEY, j jsonb, e int);
INSERT INTO bench.itexts SELECT i, jsonb_build_object('type', 'text', 'text', t), length(t) / 4
  FROM (SELECT i, bench.words(60 + (random() * 60)::int) AS t FROM generate_series(0, 999) i) w;
CREATE FUNCTION bench.batch(s text, base bigint, b int)
  RETURNS TABLE (seq bigint, msg_id text, role text, part_id text, content jsonb, est int, at bigint)
  LANGUAGE sql STABLE AS $$
  SELECT base + k, bench.mid('msg_', s, base + k), CASE WHEN k % 2 = 1 THEN 'user' ELSE 'assistant' END,
         bench.mid('part_', s, base + k), x.j, x.e, 1764000000000 + base + k
    FROM generate_series(1, 256) k JOIN bench.itexts x ON x.i = (b * 256 + k) % 1000 $$;
CREATE FUNCTION bench.part_ids(parts jsonb) RETURNS text[] LANGUAGE sql IMMUTABLE
  AS $$ SELECT array_agg(p->>'id') FROM jsonb_array_elements(parts) p $$;
CREATE TABLE bench.sizes (side text, phase text, rel text, bytes bigint);
CREATE TABLE bench.res (side text, measure text, value float8);
-- the rows' own bytes (tuple, alignment, line pointer): a heap holds whole
-- rows a page, so its pages move in steps that hide a few bytes a row
CREATE FUNCTION bench.tuple_bytes(s text) RETURNS TABLE (rel text, bytes bigint) LANGUAGE plpgsql AS $$
DECLARE t regclass;
BEGIN
  FOR t IN SELECT oid FROM pg_class WHERE relnamespace = s::regnamespace AND relkind = 'r' AND relname <> 'sessions' LOOP
    rel := t::text;
    EXECUTE format('SELECT sum((pg_column_size(x.*) + 7) / 8 * 8 + 4) FROM %s x', t) INTO bytes;
    RETURN NEXT;
  END LOOP;
END $$;
CREATE TABLE bench.tuples (side text, rel text, bytes bigint);
SQL
q -c "CREATE FUNCTION bench.sid(n int) RETURNS text LANGUAGE sql IMMUTABLE AS \$f\$ SELECT CASE '$sid'
  WHEN 'bench' THEN 'bench_' || (100000 + n / 10) || '_' || n % 10 || '_m'
  ELSE 'sess_' || lpad(to_hex(n), 10, '0') || left(md5(n::text), 16) END \$f\$"

# mnemo.sessions' columns and indexes, as every layout reserves seqs in it;
# C adds the integer key its other tables carry.
sessions_ddl() {
	cat <<SQL
CREATE TABLE $1.sessions (id text PRIMARY KEY, parent_id text, created_at bigint NOT NULL,
  updated_at bigint NOT NULL, model_id text NOT NULL DEFAULT '', provider_id text NOT NULL DEFAULT '',
  agent text NOT NULL DEFAULT 'default', title text, is_active boolean NOT NULL DEFAULT true,
  metadata jsonb, system_prompt text NOT NULL DEFAULT '', state jsonb NOT NULL DEFAULT '{}',
  watched boolean NOT NULL DEFAULT false, last_seq bigint NOT NULL DEFAULT 0,
  last_position bigint NOT NULL DEFAULT 0, tenant text NOT NULL,
  context_generation bigint NOT NULL DEFAULT 0, context_dead bigint NOT NULL DEFAULT 0,
  fork_seq bigint, fork_run text, forks bigint NOT NULL DEFAULT 0, discards bigint NOT NULL DEFAULT 0,
  context_tail_seq bigint NOT NULL DEFAULT 0 $2);
CREATE INDEX ON $1.sessions (created_at, id);
CREATE INDEX ON $1.sessions (parent_id, created_at, id) WHERE parent_id IS NOT NULL;
SQL
}
# mnemo.messages' message columns (sql/mnemo--0.3.0.sql), and the "lean"
# form: fixed-width columns first (no alignment padding), defaults stored as
# NULL (reads coalesce), tenant an int key into a small tenants table.
msg_cols="seq bigint NOT NULL, id text NOT NULL, role text NOT NULL, created_at bigint NOT NULL,
  agent text NOT NULL DEFAULT 'default', model_id text NOT NULL DEFAULT '', provider_id text NOT NULL DEFAULT '',
  run_id text, is_summary boolean NOT NULL DEFAULT false, tokens_input bigint NOT NULL DEFAULT 0,
  tokens_output bigint NOT NULL DEFAULT 0, tokens_cache_read bigint NOT NULL DEFAULT 0,
  tokens_cache_write bigint NOT NULL DEFAULT 0, tokens_reasoning bigint NOT NULL DEFAULT 0,
  cost double precision NOT NULL DEFAULT 0, finish_reason text"
msg_lean="seq bigint NOT NULL, created_at bigint NOT NULL, tokens_input bigint, tokens_output bigint,
  tokens_cache_read bigint, tokens_cache_write bigint, tokens_reasoning bigint, cost double precision,
  tenant int NOT NULL, is_summary boolean, id text NOT NULL, role text NOT NULL, agent text,
  model_id text, provider_id text, run_id text, finish_reason text"
part_cols="part_type text NOT NULL, content jsonb NOT NULL, tool_name text, tool_call_id text,
  tool_state text, compacted_at bigint, started_at bigint, completed_at bigint,
  token_estimate integer NOT NULL DEFAULT 0"
part_lean="compacted_at bigint, started_at bigint, completed_at bigint, part_index integer NOT NULL,
  token_estimate integer NOT NULL DEFAULT 0, part_type text NOT NULL, content jsonb NOT NULL,
  tool_name text, tool_call_id text, tool_state text"

ddl() {
	local s=$1
	echo "CREATE SCHEMA $s;"
	case $s in
	plain | plain1) echo "CREATE TABLE $s.messages (id bigserial PRIMARY KEY, session_id text, seq int,
	  role text, content text, created_at timestamptz DEFAULT now(), UNIQUE (session_id, seq));"; return ;;
	C) sessions_ddl "$s" ", key bigint GENERATED ALWAYS AS IDENTITY UNIQUE" ;;
	*) sessions_ddl "$s" "" ;;
	esac
	local pj='' k='session_id' kt='text'
	case $s in D*) pj='parts jsonb NOT NULL,' ;; C) k='session_key' kt='bigint' ;; esac
	case $s in
	A | B | C | D*) echo "CREATE TABLE $s.messages ($k $kt NOT NULL,
	  $msg_cols, $pj tenant text NOT NULL, PRIMARY KEY ($k, id), UNIQUE ($k, seq));" ;;
	A_lean | B_lean | B_hash) echo "CREATE TABLE $s.messages ($msg_lean, session_id text NOT NULL,
	  PRIMARY KEY (session_id, id), UNIQUE (session_id, seq));" ;;
	esac
	case $s in A | B | C | D* | A_lean | B_*) echo "CREATE INDEX ON $s.messages ($k, seq) WHERE is_summary;" ;; esac
	case $s in
	A) echo "CREATE TABLE $s.message_parts (session_id text NOT NULL, message_id text NOT NULL,
	  part_index integer NOT NULL, id text NOT NULL, $part_cols, tenant text NOT NULL,
	  PRIMARY KEY (session_id, id), UNIQUE (session_id, message_id, part_index));" ;;
	A_lean) echo "CREATE TABLE $s.message_parts ($part_lean, tenant int NOT NULL, session_id text NOT NULL,
	  message_id text NOT NULL, id text NOT NULL,
	  PRIMARY KEY (session_id, id), UNIQUE (session_id, message_id, part_index));" ;;
	B) echo "CREATE TABLE $s.message_parts (session_id text NOT NULL, seq bigint NOT NULL,
	  part_index integer NOT NULL, id text NOT NULL, $part_cols, tenant text NOT NULL,
	  PRIMARY KEY (session_id, seq, part_index), UNIQUE (session_id, id));" ;;
	B_lean | B_hash) echo "CREATE TABLE $s.message_parts (seq bigint NOT NULL, $part_lean, tenant int NOT NULL,
	  session_id text NOT NULL, id text NOT NULL,
	  PRIMARY KEY (session_id, seq, part_index), UNIQUE (session_id, id));" ;;
	C) echo "CREATE TABLE $s.message_parts (session_key bigint NOT NULL, seq bigint NOT NULL,
	  part_index integer NOT NULL, id text NOT NULL, $part_cols, tenant text NOT NULL,
	  PRIMARY KEY (session_key, seq, part_index), UNIQUE (session_key, id));" ;;
	# D1: part ids only, in a side table that also enforces their uniqueness
	D1) echo "CREATE TABLE $s.part_ids (session_id text NOT NULL, id text NOT NULL, seq bigint NOT NULL,
	  part_index integer NOT NULL, tenant text NOT NULL, PRIMARY KEY (session_id, id));" ;;
	# D2: an expression GIN index finds a part by id (no uniqueness); no
	# pending list, whose flushes stall an append (issue 15)
	D2) echo "CREATE INDEX ON $s.messages USING gin (bench.part_ids(parts)) WITH (fastupdate = off);" ;;
	# E: message columns on the part_index 0 row only (NULL on the others)
	E) echo "CREATE TABLE $s.items (session_id text NOT NULL, seq bigint NOT NULL, part_index integer NOT NULL,
	  id text NOT NULL, message_id text, role text, created_at bigint, agent text DEFAULT 'default',
	  model_id text DEFAULT '', provider_id text DEFAULT '', run_id text, is_summary boolean DEFAULT false,
	  tokens_input bigint DEFAULT 0, tokens_output bigint DEFAULT 0, tokens_cache_read bigint DEFAULT 0,
	  tokens_cache_write bigint DEFAULT 0, tokens_reasoning bigint DEFAULT 0, cost double precision DEFAULT 0,
	  finish_reason text, $part_cols, tenant text NOT NULL,
	  PRIMARY KEY (session_id, seq, part_index), UNIQUE (session_id, id));" ;;
	E_lean | E_hash*) echo "CREATE TABLE $s.items (seq bigint NOT NULL, created_at bigint, tokens_input bigint,
	  tokens_output bigint, tokens_cache_read bigint, tokens_cache_write bigint, tokens_reasoning bigint,
	  cost double precision, $part_lean, tenant int NOT NULL, is_summary boolean, session_id text NOT NULL,
	  id text NOT NULL, message_id text, role text, agent text, model_id text, provider_id text, run_id text,
	  finish_reason text, PRIMARY KEY (session_id, seq, part_index), UNIQUE (session_id, id));" ;;
	esac
	case $s in
	E | E_lean) echo "CREATE UNIQUE INDEX ON $s.items (session_id, message_id) WHERE part_index = 0;" ;;
	# ids found through hash indexes (one 4-byte hash an entry, not the text
	# key), their uniqueness checked by the append under the session row lock
	# that every write to a session already holds (src/lifecycle/sessions.c)
	B_hash) echo "ALTER TABLE $s.messages DROP CONSTRAINT messages_pkey;
	  ALTER TABLE $s.message_parts DROP CONSTRAINT message_parts_session_id_id_key;
	  CREATE INDEX ON $s.messages USING hash (id); CREATE INDEX ON $s.message_parts USING hash (id);" ;;
	E_hash*) echo "ALTER TABLE $s.items DROP CONSTRAINT items_session_id_id_key;
	  CREATE INDEX ON $s.items USING hash (id); CREATE INDEX ON $s.items USING hash (message_id) WHERE part_index = 0;" ;;
	esac
	case $s in E*) echo "CREATE INDEX ON $s.items (session_id, seq) WHERE is_summary AND part_index = 0;" ;; esac
}
# X_C: layout X with its text keys in the "C" collation (ids are ASCII:
# byte order is their order), so that btree compares with memcmp, not strcoll
base() { echo "${1%_C}"; }
as_side() { # rename the base layout's schema to side $1's; ids COLLATE "C"
	if [ "$1" = "$(base "$1")" ]; then cat; return; fi
	sed -E "s/\\b$(base "$1")\\./$1./g; s/SCHEMA $(base "$1")( |;)/SCHEMA $1\\1/g;
	  s/\\b(session_id|message_id|id) text/\\1 text COLLATE \"C\"/g"
}

# One turn as pgbench runs it: :turn counts this client's turns, the
# session is the client's own in this run (W3: four sessions at once).
turn_sql() {
	local s=$1 key=id k=session_id ten=tenant pj='' pv='' hash='' ins=()
	local sess='bench.sid(:run * 10 + :client_id)' text='FROM bench.texts WHERE i = :turn % 1000'
	local n=2 rows=bench.turn
	echo '\set turn :turn + 1'
	# a batch: one call of 256 small messages (the import-shaped phase)
	if [ "${2:-turn}" = batch ]; then
		n=256 rows=bench.batch
		case $s in plain*) echo "INSERT INTO $s.messages (session_id, seq, role, content)
		  SELECT $sess, seq, role, content->>'text' FROM bench.batch($sess, 256 * (:turn - 1), :turn);"
		  return ;; esac
	fi
	case $s in
	plain) echo "BEGIN;
	  INSERT INTO plain.messages (session_id, seq, role, content) SELECT $sess, 2 * :turn - 1, 'user', u $text;
	  INSERT INTO plain.messages (session_id, seq, role, content) SELECT $sess, 2 * :turn, 'assistant', a $text;
	  END;"; return ;;
	plain1) echo "INSERT INTO plain1.messages (session_id, seq, role, content)
	  SELECT $sess, 2 * :turn - 2 + k, r, c FROM bench.texts,
	  LATERAL (VALUES (1, 'user', u), (2, 'assistant', a)) v(k, r, c) WHERE i = :turn % 1000;"; return ;;
	C) key=key k=session_key ;;
	*_lean) ten=1 ;;
	# no unique index on the ids: the append looks them up first
	*_hash) ten=1 hash="WHERE NOT EXISTS (SELECT FROM $s." ;;
	D*) pj='parts,' pv="jsonb_build_array(content || jsonb_build_object('id', part_id, 'token_estimate', est))," ;;
	esac
	case $s in
	A | B | C | D*) ins+=("INSERT INTO $s.messages ($k, seq, id, role, created_at, agent, model_id, provider_id,
	  run_id, is_summary, $pj tenant) SELECT k, seq, msg_id, role, at, 'default', '', '', NULL, false, $pv tenant FROM r") ;;
	A_lean | B_lean | B_hash) ins+=("INSERT INTO $s.messages (session_id, seq, id, role, created_at, tenant)
	  SELECT k, seq, msg_id, role, at, 1 FROM r ${hash:+${hash}messages x WHERE x.session_id = r.k AND x.id = r.msg_id)}") ;;
	esac
	case $s in
	A | A_lean) ins+=("INSERT INTO $s.message_parts (session_id, message_id, part_index, id, part_type,
	  content, token_estimate, tenant) SELECT k, msg_id, 0, part_id, 'text', content, est, $ten FROM r") ;;
	B | B_lean | B_hash | C) ins+=("INSERT INTO $s.message_parts ($k, seq, part_index, id, part_type, content,
	  token_estimate, tenant) SELECT k, seq, 0, part_id, 'text', content, est, $ten FROM r
	  ${hash:+${hash}message_parts x WHERE x.session_id = r.k AND x.id = r.part_id)}") ;;
	D1) ins+=("INSERT INTO $s.part_ids SELECT k, part_id, seq, 0, tenant FROM r") ;;
	E) ins+=("INSERT INTO $s.items (session_id, seq, part_index, id, message_id, role, created_at, agent,
	  model_id, provider_id, is_summary, part_type, content, token_estimate, tenant)
	  SELECT k, seq, 0, part_id, msg_id, role, at, 'default', '', '', false, 'text', content, est, tenant FROM r") ;;
	E_lean | E_hashU) ins+=("INSERT INTO $s.items (session_id, seq, part_index, id, message_id, role, created_at,
	  part_type, content, token_estimate, tenant) SELECT k, seq, 0, part_id, msg_id, role, at, 'text', content, est, 1 FROM r") ;;
	E_hash) ins+=("INSERT INTO $s.items (session_id, seq, part_index, id, message_id, role, created_at,
	  part_type, content, token_estimate, tenant) SELECT k, seq, 0, part_id, msg_id, role, at, 'text', content, est, 1 FROM r
	  WHERE NOT EXISTS (SELECT FROM $s.items i WHERE i.session_id = r.k AND i.id = r.part_id)
	    AND NOT EXISTS (SELECT FROM $s.items i WHERE i.session_id = r.k AND i.message_id = r.msg_id AND i.part_index = 0)") ;;
	esac
	echo "WITH s AS (UPDATE $s.sessions SET last_seq = last_seq + $n, last_position = last_position + $n,
	  updated_at = 1764000000000 + :turn WHERE id = $sess RETURNING id, $key AS k, last_seq - $n AS base, tenant),
	r AS (SELECT s.k, s.tenant, t.* FROM s, $rows(s.id, s.base, :turn) t)"
	local i
	for ((i = 0; i < ${#ins[@]} - 1; i++)); do echo ", w$i AS (${ins[i]})"; done
	echo "${ins[-1]};"
}

# The sessions a run's clients write to (the plain sides have no such table).
new_sessions() {
	case $1 in plain*) return ;; esac
	val "INSERT INTO $1.sessions (id, created_at, updated_at, tenant)
	     SELECT bench.sid($2 * 10 + c), 0, 0, 'mnemo_bench_app' FROM generate_series(0, 3) c" >/dev/null
}
sizes() {
	val "INSERT INTO bench.sizes SELECT '$1', '$2', c.relname, pg_relation_size(c.oid)
	     FROM pg_class c WHERE c.relnamespace = '$1'::regnamespace AND c.relkind IN ('r', 'i')
	     UNION ALL SELECT '$1', '$2', c.relname || ' TOAST', pg_total_relation_size(c.reltoastrelid)
	     FROM pg_class c WHERE c.relnamespace = '$1'::regnamespace AND c.reltoastrelid <> 0" >/dev/null
}

run=0
for s in $sides; do
	ddl "$(base "$s")" | as_side "$s" | q >/dev/null
	turn_sql "$(base "$s")" | as_side "$s" >"$dir/$s.sql"
	turn_sql "$(base "$s")" batch | as_side "$s" >"$dir/$s.batch.sql"
	new_sessions "$s" "$run"
	sizes "$s" before
	val "CHECKPOINT" >/dev/null
	lsn=$(val "SELECT pg_current_wal_lsn()")
	pgbench -n -M prepared -f "$dir/$s.sql" -D run=$run -D turn=0 -c 1 -t "$turns" >"$dir/$s.log" 2>&1 ||
		{ cat "$dir/$s.log" >&2; exit 1; }
	val "INSERT INTO bench.res VALUES ('$s', 'wal', pg_wal_lsn_diff(pg_current_wal_lsn(), '$lsn') / $turns)" >/dev/null
	sizes "$s" after
	val "INSERT INTO bench.tuples SELECT '$s', * FROM bench.tuple_bytes('$s')" >/dev/null
	# every side stored every message (E_hash skips a row whose id exists)
	rows=$(val "SELECT count(*) FROM $s.$(case $s in E*) echo items ;; *) echo messages ;; esac)")
	[ "$rows" = $((2 * turns)) ] || { echo "$s: $rows rows after $turns turns" >&2; exit 1; }
done

# Throughput: every side once per round, the order rotated each round so
# that a drift of the host's load spreads over all sides alike.
set -- $sides
for r in $(seq "$rounds"); do
	for s in "$@"; do
		for c in 1 4; do
			run=$((run + 1))
			new_sessions "$s" "$run"
			val "CHECKPOINT" >/dev/null
			pgbench -n -M prepared -f "$dir/$s.sql" -D run=$run -D turn=0 -c $c -j $c -T "$secs" \
				>"$dir/run.log" 2>&1 || { cat "$dir/run.log" >&2; exit 1; }
			tps=$(sed -n 's/^tps = \([0-9.]*\) .*/\1/p' "$dir/run.log")
			val "INSERT INTO bench.res VALUES ('$s', 'tps$c', $tps)" >/dev/null
		done
	done
	set -- "${@:2}" "$1"
done
# Import-shaped: messages/s of LAYOUT_IMPORT batches, every side once a
# round, the order rotated as above.
set -- $sides
for r in $(seq "$rounds"); do
	[ "$batches" -gt 0 ] || break
	for s in "$@"; do
		run=$((run + 1))
		new_sessions "$s" "$run"
		val "CHECKPOINT" >/dev/null
		PGOPTIONS="$PGOPTIONS -c synchronous_commit=off" pgbench -n -M prepared -f "$dir/$s.batch.sql" \
			-D run=$run -D turn=0 -c 1 -t "$batches" >"$dir/run.log" 2>&1 || { cat "$dir/run.log" >&2; exit 1; }
		tps=$(sed -n 's/^tps = \([0-9.]*\) .*/\1/p' "$dir/run.log")
		val "INSERT INTO bench.res VALUES ('$s', 'import', $tps * 256)" >/dev/null
	done
	set -- "${@:2}" "$1"
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

{
	echo "# LAYOUT_TURNS=$turns LAYOUT_ROUNDS=$rounds LAYOUT_SECONDS=$secs LAYOUT_SID=$sid" \
		"${LAYOUT_SIDES:+LAYOUT_SIDES=\"$LAYOUT_SIDES\" }bash bench/profiles/layouts.sh"
	echo "# $(date -u '+%Y-%m-%d %H:%M UTC'); $(val 'SELECT version()')"
	echo "# host: $(nproc) cores; load average before $load_before, after $load_after"
	echo "# cluster: test/cluster.sh settings (fsync on, shared_buffers 256MB), synchronous_commit on,"
	echo "#   autovacuum off, a CHECKPOINT before each measurement; no RLS, CHECK functions or triggers on any side"
	echo
	echo "## Growth per turn over $turns turns into fresh tables (one session), B/turn"
	q -P footer=off -c "SELECT a.side, a.rel, round((a.bytes - coalesce(b.bytes, 0))::numeric / $turns, 1) AS b_per_turn
	  FROM bench.sizes a LEFT JOIN bench.sizes b ON b.side = a.side AND b.rel = a.rel AND b.phase = 'before'
	  WHERE a.phase = 'after' AND a.bytes <> coalesce(b.bytes, 0) ORDER BY a.side = 'plain' DESC, a.side, a.rel"
	echo "## Per side: bytes per turn (heap, TOAST, indexes); rows/turn: the heap rows' own bytes (no page"
	echo "## steps); WAL per turn; turns/s (median of $rounds runs of ${secs}s, pgbench -M prepared),"
	echo "## one client on one session, and 4 clients each on its own session (W3); x = side / plain, x1 = side / plain1"
	q -P footer=off <<SQL
WITH g AS (SELECT a.side, sum(a.bytes - coalesce(b.bytes, 0))::float8 / $turns AS bytes
             FROM bench.sizes a LEFT JOIN bench.sizes b ON b.side = a.side AND b.rel = a.rel AND b.phase = 'before'
            WHERE a.phase = 'after' GROUP BY a.side),
tu AS (SELECT side, sum(bytes)::float8 / $turns AS tb FROM bench.tuples GROUP BY side),
m AS (SELECT side, measure, percentile_cont(0.5) WITHIN GROUP (ORDER BY value) AS v FROM bench.res GROUP BY 1, 2),
t AS (SELECT g.side, g.bytes, tu.tb, w.v AS wal, t1.v AS tps1, t4.v AS tps4 FROM g JOIN tu USING (side)
        JOIN m w ON w.side = g.side AND w.measure = 'wal' LEFT JOIN m t1 ON t1.side = g.side AND t1.measure = 'tps1'
        LEFT JOIN m t4 ON t4.side = g.side AND t4.measure = 'tps4'),
p AS (SELECT * FROM t WHERE side = 'plain'), p1 AS (SELECT * FROM t WHERE side = 'plain1')
SELECT t.side, round(t.bytes::numeric) AS "bytes/turn", round((t.bytes / p.bytes)::numeric, 2) AS x,
       round(t.tb::numeric) AS "rows/turn", round((t.tb / p.tb)::numeric, 2) AS x,
       round(t.wal::numeric) AS "WAL/turn", round((t.wal / p.wal)::numeric, 2) AS x,
       round(t.tps1::numeric) AS "turns/s 1", round((t.tps1 / p.tps1)::numeric, 2) AS x,
       round((t.tps1 / p1.tps1)::numeric, 2) AS x1,
       round(t.tps4::numeric) AS "W3 turns/s", round((t.tps4 / p.tps4)::numeric, 2) AS x,
       round((t.tps4 / p1.tps4)::numeric, 2) AS x1
  FROM t, p, p1 ORDER BY t.side = 'plain' DESC, t.side = 'plain1' DESC, t.side;
SQL
	if [ "$batches" -gt 0 ] && [ "$rounds" -gt 0 ]; then
		echo "## Import-shaped: $batches calls of 256 small messages (one 60-120 B text part each), one client,"
		echo "## synchronous_commit off; messages/s, median of $rounds runs; x = side / plain1, xA = side / A"
		q -P footer=off <<SQL
WITH m AS (SELECT side, percentile_cont(0.5) WITHIN GROUP (ORDER BY value) AS v FROM bench.res
            WHERE measure = 'import' GROUP BY side)
SELECT m.side, round(m.v::numeric) AS "messages/s", round((m.v / p.v)::numeric, 2) AS x,
       round((m.v / a.v)::numeric, 2) AS "xA"
  FROM m LEFT JOIN m p ON p.side = 'plain1' LEFT JOIN m a ON a.side = 'A'
 ORDER BY m.side = 'plain' DESC, m.side = 'plain1' DESC, m.side;
SQL
	fi
	echo "## every run, turns/s (import: messages/s)"
	q -P footer=off -c "SELECT side, measure, string_agg(round(value::numeric)::text, ' ') AS runs
	  FROM bench.res WHERE measure <> 'wal' GROUP BY 1, 2 ORDER BY 1, 2"
} >"$out"
