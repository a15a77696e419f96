#!/usr/bin/env bash
# bench/profiles/one_table.sh: what the one-table layout of issue 34 would
# gain on the append path as it is since 0.10.0, measured in SQL before any
# C code changes.
#
#   bash bench/profiles/one_table.sh [OUT.txt]
#   env: ONE_ROUNDS (5), ONE_SECONDS (4, per pgbench run), ONE_PORT (54378)
#
# layouts.txt (issue 15) found that the layout did not decide the time of a
# turn.  Each of its sides also updated the session row on every turn, as
# the append did then; since 0.10.0 an append takes the session's advisory
# lock and reads the newest seq from the key instead, and writes no session
# row.  This script measures the layouts again on that path.
#
# Starts a private cluster (test/cluster.sh), installs mnemo, and makes:
#   two     mnemo.messages and mnemo.message_parts as 0.12.0 installs them
#           (keys, partial indexes, the CHECKs' C functions), the layout
#           until 0.13.0
#   one     one table of part rows keyed (session_id, tenant, seq,
#           part_index), the message's columns on its part 0 row, the
#           message id unique among part 0 rows, the part id among the
#           part ids given, the partial indexes of summaries and user
#           messages, its CHECK: mnemo.log as 0.13.0 installs it
#   int     the same table keyed by an integer in place of (session_id,
#           tenant): a bigint the session row would hold, read by the lock's
#           probe of that row at no extra cost, so the log's rows and every
#           key carry 8 bytes where they carry the two text columns (the
#           lever bench/profiles/turn.txt names)
#   plain   bench/append's hand-written table (its own key and a unique
#           (session_id, seq)), written as bench/append writes it: BEGIN,
#           two INSERTs, COMMIT (four round trips)
#   plain1  the same table in one statement, to separate round trips from
#           storage
# A layout side writes a turn (a user message of ~200 B and an assistant
# message of ~800 B, one text part each) in one statement, as the append
# does in one call: the session's advisory lock, the newest seq read from
# the key, the rows.  Not modelled: mnemo's C work per call (JSON parsing,
# the tenant check, compression from 256 B), on either layout.
#
# Measured: turns/s of one client (synchronous_commit off), of four clients
# on a session each (W3, synchronous_commit on), of one client writing 100
# messages a statement (synchronous_commit off); the medians of ONE_ROUNDS
# interleaved runs.  Bytes and WAL per turn over 1,000 turns.
set -euo pipefail

rounds=${ONE_ROUNDS:-5}
secs=${ONE_SECONDS:-4}
out=${1:-/dev/stdout}
. "$(dirname "$0")/private_cluster.sh" one-table "${ONE_PORT:-54378}"

psql -X -q -v ON_ERROR_STOP=1 <<'SQL'
CREATE EXTENSION mnemo;
-- 0.12.0's tables, as sql/mnemo--0.12.0.sql makes them, their CHECKs the
-- same C functions
CREATE SCHEMA two;
CREATE FUNCTION two.check_message(text, double precision, bigint, bigint, bigint, bigint, bigint, bigint)
    RETURNS boolean LANGUAGE c IMMUTABLE AS '$libdir/mnemo', 'mnemo_check_message';
CREATE FUNCTION two.check_part(text, integer, bigint, bigint, bigint)
    RETURNS boolean LANGUAGE c IMMUTABLE AS '$libdir/mnemo', 'mnemo_check_part';
CREATE TABLE two.messages (
    session_id text NOT NULL, seq bigint NOT NULL, id text NOT NULL, role text NOT NULL,
    created_at bigint NOT NULL, agent text NOT NULL DEFAULT 'default', model_id text NOT NULL DEFAULT '',
    provider_id text NOT NULL DEFAULT '', run_id text, is_summary boolean NOT NULL DEFAULT false,
    tokens_input bigint, tokens_output bigint, tokens_cache_read bigint, tokens_cache_write bigint,
    tokens_reasoning bigint, cost double precision, finish_reason text, tenant text NOT NULL,
    PRIMARY KEY (session_id, tenant, id), UNIQUE (session_id, tenant, seq),
    CHECK (two.check_message(role, cost, created_at, tokens_input, tokens_output, tokens_cache_read,
                             tokens_cache_write, tokens_reasoning)));
CREATE INDEX ON two.messages (session_id, tenant, seq) WHERE is_summary;
CREATE INDEX ON two.messages (session_id, tenant, seq) WHERE role = 'user' AND NOT is_summary;
CREATE TABLE two.message_parts (
    session_id text NOT NULL, part_index integer NOT NULL, id text, part_type text NOT NULL,
    content jsonb NOT NULL, tool_name text, tool_call_id text, tool_state text, compacted_at bigint,
    started_at bigint, completed_at bigint, token_estimate integer NOT NULL DEFAULT 0,
    tenant text NOT NULL, seq bigint NOT NULL,
    PRIMARY KEY (session_id, tenant, seq, part_index),
    CHECK (two.check_part(tool_state, token_estimate, compacted_at, started_at, completed_at)));
CREATE UNIQUE INDEX ON two.message_parts (session_id, tenant, id) WHERE id IS NOT NULL;
CREATE SCHEMA one;
CREATE TABLE one.log (
    session_id text NOT NULL, tenant text NOT NULL, seq bigint NOT NULL, part_index integer NOT NULL,
    id text, role text, created_at bigint, agent text, model_id text, provider_id text, run_id text,
    is_summary boolean, tokens_input bigint, tokens_output bigint, tokens_cache_read bigint,
    tokens_cache_write bigint, tokens_reasoning bigint, cost double precision, finish_reason text,
    part_id text, part_type text, content jsonb, tool_name text, tool_call_id text, tool_state text,
    compacted_at bigint, started_at bigint, completed_at bigint, token_estimate integer,
    PRIMARY KEY (session_id, tenant, seq, part_index),
    CHECK (mnemo._check_log_row(part_index, id, role, created_at, agent, model_id, provider_id,
           is_summary, cost, tokens_input, tokens_output, tokens_cache_read, tokens_cache_write,
           tokens_reasoning, part_type, content, tool_state, token_estimate, compacted_at, started_at,
           completed_at)));
CREATE UNIQUE INDEX ON one.log (session_id, tenant, id) WHERE id IS NOT NULL;
CREATE UNIQUE INDEX ON one.log (session_id, tenant, part_id) WHERE part_id IS NOT NULL;
CREATE INDEX ON one.log (session_id, tenant, seq) WHERE is_summary;
CREATE INDEX ON one.log (session_id, tenant, seq) WHERE role = 'user' AND NOT is_summary;
CREATE SCHEMA int;
CREATE TABLE int.log (
    sid bigint NOT NULL, seq bigint NOT NULL, part_index integer NOT NULL,
    id text, role text, created_at bigint, agent text, model_id text, provider_id text, run_id text,
    is_summary boolean, tokens_input bigint, tokens_output bigint, tokens_cache_read bigint,
    tokens_cache_write bigint, tokens_reasoning bigint, cost double precision, finish_reason text,
    part_id text, part_type text, content jsonb, tool_name text, tool_call_id text, tool_state text,
    compacted_at bigint, started_at bigint, completed_at bigint, token_estimate integer,
    PRIMARY KEY (sid, seq, part_index),
    CHECK (mnemo._check_log_row(part_index, id, role, created_at, agent, model_id, provider_id,
           is_summary, cost, tokens_input, tokens_output, tokens_cache_read, tokens_cache_write,
           tokens_reasoning, part_type, content, tool_state, token_estimate, compacted_at, started_at,
           completed_at)));
CREATE UNIQUE INDEX ON int.log (sid, id) WHERE id IS NOT NULL;
CREATE UNIQUE INDEX ON int.log (sid, part_id) WHERE part_id IS NOT NULL;
CREATE INDEX ON int.log (sid, seq) WHERE is_summary;
CREATE INDEX ON int.log (sid, seq) WHERE role = 'user' AND NOT is_summary;
CREATE TABLE public.plain (id bigserial PRIMARY KEY, session_id text NOT NULL, seq bigint NOT NULL,
    role text NOT NULL, content text NOT NULL, created_at bigint NOT NULL DEFAULT 0, UNIQUE (session_id, seq));
CREATE TABLE public.plain1 (LIKE public.plain INCLUDING ALL);
-- the turn's texts, the same on every side
CREATE TABLE public.texts AS
    SELECT i, repeat(md5(i::text) || ' ', 6) AS u, repeat(md5((i + 1)::text) || ' ', 24) AS a
      FROM generate_series(0, 999) i;
ALTER TABLE public.texts ADD PRIMARY KEY (i);
SQL

# session id of client c in run r: 31 characters, as create_session makes them
sess="'sess_01M8XVQWS361TVA75PD' || lpad((:run * 10 + :client_id)::text, 6, '0')"
lock="pg_advisory_xact_lock(hashtextextended($sess || 'postgres', 0))"
sid="(:run * 10 + :client_id)::bigint"

layout_sql() {	# side, messages a statement
	local s=$1 n=$2 rows
	rows="SELECT $sess AS k, l.seq + g AS seq, 'msg_01M8XVQWS361TVA75PDFXZ' || (:run * 1000000 + 10 * :client_id)::text || '_' || (l.seq + g)::text AS mid,
	  CASE WHEN g % 2 = 1 THEN 'user' ELSE 'assistant' END AS role,
	  jsonb_build_object('type', 'text', 'text', CASE WHEN g % 2 = 1 THEN t.u ELSE t.a END) AS content
	  FROM last l, generate_series(1, $n) g, public.texts t WHERE t.i = ((l.seq + g) % 1000)::integer"
	# the lock, then the newest seq: a select list is evaluated in order
	local last="last AS MATERIALIZED (SELECT $lock AS locked, coalesce((SELECT max(seq) FROM"
	echo "WITH"
	case $s in
	two)
		echo "$last two.messages WHERE session_id = $sess AND tenant = 'postgres'), 0) AS seq),
		  r AS MATERIALIZED ($rows),
		  m AS (INSERT INTO two.messages (session_id, tenant, seq, id, role, created_at, agent, model_id, provider_id, is_summary)
		        SELECT k, 'postgres', seq, mid, role, 1, 'default', '', '', false FROM r)
		  INSERT INTO two.message_parts (session_id, tenant, seq, part_index, part_type, content, token_estimate)
		  SELECT k, 'postgres', seq, 0, 'text', content, 50 FROM r;" ;;
	one)
		echo "$last one.log WHERE session_id = $sess AND tenant = 'postgres'), 0) AS seq),
		  r AS MATERIALIZED ($rows)
		  INSERT INTO one.log (session_id, tenant, seq, part_index, id, role, created_at, agent, model_id, provider_id,
		                       is_summary, part_type, content, token_estimate)
		  SELECT k, 'postgres', seq, 0, mid, role, 1, 'default', '', '', false, 'text', content, 50 FROM r;" ;;
	int)
		echo "$last int.log WHERE sid = $sid), 0) AS seq),
		  r AS MATERIALIZED ($rows)
		  INSERT INTO int.log (sid, seq, part_index, id, role, created_at, agent, model_id, provider_id,
		                       is_summary, part_type, content, token_estimate)
		  SELECT $sid, seq, 0, mid, role, 1, 'default', '', '', false, 'text', content, 50 FROM r;" ;;
	esac
}

plain_sql() {	# side, messages a statement; seqs counted by the client, as bench/append's
	local s=$1 n=$2
	echo '\set turn :turn + 1'
	if [ "$s" = plain ]; then
		echo "BEGIN;"
		echo "INSERT INTO public.plain (session_id, seq, role, content) SELECT $sess, 2 * :turn - 1, 'user', u FROM public.texts WHERE i = :turn % 1000;"
		echo "INSERT INTO public.plain (session_id, seq, role, content) SELECT $sess, 2 * :turn, 'assistant', a FROM public.texts WHERE i = :turn % 1000;"
		echo "COMMIT;"
		return
	fi
	echo "INSERT INTO public.$s (session_id, seq, role, content)
	  SELECT $sess, $n * (:turn - 1) + g, CASE WHEN g % 2 = 1 THEN 'user' ELSE 'assistant' END, CASE WHEN g % 2 = 1 THEN u ELSE a END
	    FROM generate_series(1, $n) g, public.texts WHERE i = (:turn + g) % 1000;"
}

for s in plain plain1 two one int; do
	case $s in plain*) plain_sql $s 2 >"$dir/$s.sql"; plain_sql plain1 100 >"$dir/$s.batch.sql" ;;
	*) layout_sql $s 2 >"$dir/$s.sql"; layout_sql $s 100 >"$dir/$s.batch.sql" ;; esac
done

# bytes and WAL of 1,000 turns, run 0, one client
declare -A bytes wal
for s in plain two one int; do
	before=$(psql -X -Atc "SELECT pg_current_wal_lsn()")
	pgbench -n -M prepared -f "$dir/$s.sql" -D run=0 -D turn=0 -c 1 -t 1000 >/dev/null 2>&1
	psql -X -q -c CHECKPOINT
	wal[$s]=$(psql -X -Atc "SELECT round(pg_wal_lsn_diff(pg_current_wal_lsn(), '$before') / 1000)")
	case $s in
	plain) rels="'public.plain'" ;;
	two) rels="'two.messages', 'two.message_parts'" ;;
	one) rels="'one.log'" ;;
	int) rels="'int.log'" ;;
	esac
	bytes[$s]=$(psql -X -Atc "SELECT round(sum(pg_total_relation_size(r::regclass)) / 1000.0) FROM unnest(ARRAY[$rels]) r")
done

# turns/s: one client sync off, W3 sync on, 100 a statement sync off
declare -A t1 tw tb
run=1
for r in $(seq "$rounds"); do
	for s in plain plain1 two one int; do
		run=$((run + 1))
		t1[$s]+="$(PGOPTIONS='-c synchronous_commit=off' pgbench -n -M prepared -f "$dir/$s.sql" -D run=$run -D turn=0 \
			-c 1 -T "$secs" 2>/dev/null | sed -n 's/^tps = \([0-9.]*\).*/\1/p') "
		run=$((run + 1))
		tw[$s]+="$(pgbench -n -M prepared -f "$dir/$s.sql" -D run=$run -D turn=0 -c 4 -j 4 -T "$secs" 2>/dev/null |
			sed -n 's/^tps = \([0-9.]*\).*/\1/p') "
		[ "$s" = plain ] && continue
		run=$((run + 1))
		tb[$s]+="$(PGOPTIONS='-c synchronous_commit=off' pgbench -n -M prepared -f "$dir/$s.batch.sql" -D run=$run -D turn=0 \
			-c 1 -T "$secs" 2>/dev/null | sed -n 's/^tps = \([0-9.]*\).*/\1/p') "
	done
done

median() { tr ' ' '\n' | grep . | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }
{
	echo "# bench/profiles/one_table.sh, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "# medians of $rounds interleaved runs of ${secs}s; x = side / plain (four round trips), x1 = side / plain1"
	printf '%-7s %12s %12s %14s %6s %6s %12s %6s %18s %6s\n' side 'bytes/turn' 'WAL/turn' 'one client' x x1 'W3' x 'batch (msgs/s)' x1
	for s in plain plain1 two one int; do
		m1=$(echo "${t1[$s]}" | median) mw=$(echo "${tw[$s]}" | median)
		p1=$(echo "${t1[plain]}" | median) pw=$(echo "${tw[plain]}" | median)
		q1=$(echo "${t1[plain1]}" | median)
		if [ "$s" = plain ]; then mb=- xb=-; else
			mb=$(echo "${tb[$s]}" | median)
			xb=$(ratio "$mb" "$(echo "${tb[plain1]}" | median)")
			mb=$(awk -v t="$mb" 'BEGIN {printf "%.0f", t * 100}')
		fi
		printf '%-7s %12s %12s %14.0f %6s %6s %12.0f %6s %18s %6s\n' "$s" "${bytes[$s]:-${bytes[plain]}}" \
			"${wal[$s]:-${wal[plain]}}" "$m1" "$(ratio "$m1" "$p1")" "$(ratio "$m1" "$q1")" "$mw" \
			"$(ratio "$mw" "$pw")" "$mb" "$xb"
	done
	echo "# runs (turns/s): one client / W3 / batch (statements/s)"
	for s in plain plain1 two one int; do echo "#   $s: ${t1[$s]}/ ${tw[$s]}/ ${tb[$s]:-}"; done
} >"$out"
