#!/usr/bin/env bash
# bench/profiles/reads.sh: the full-history reads against a plain table's
# SELECT, warm, one backend per read, as bench/append's application role.
#
#   bash bench/profiles/reads.sh [ROUNDS [CALLS]]     (default 5 rounds of 100 calls)
#   bash bench/profiles/reads.sh perf READ OUT.txt    perf of one read's backend
#
# The content: 1,000 turns of bench/append's shape (bench/append_load.c):
# a user text of ~200 B, an assistant text of ~800 B, and on every third
# turn a tool part (a grep call and a ~4 KB result with newlines) on the
# assistant message: 2,000 messages.  The plain table holds the same rows,
# the tool call's JSON and result appended to the assistant's content, as
# bench/append's plain side writes them (id bigserial primary key,
# session_id, seq, role, content; unique (session_id, seq)).  A fork of the
# session at seq 1,000 then gets the next 1,000 turns' messages of its own,
# so that its line is 2,000 messages in two segments.
#
# Each read runs in one backend (psql, every row sent to the client; not
# PREPARE and EXECUTE, whose rows a portal keeps in a tuplestore before it
# sends them) 10 times to warm up, then CALLS times counted; the reads
# take turns, ROUNDS times.  A read's figures: the median time of its
# counted calls over all rounds (psql's \timing: until the last row is in
# the client), and the median over rounds of its backend's CPU time per
# call (/proc/self/stat, read by the backend: what the read costs the
# server, and less moved by other work on the host than the time).
# Connects with the PG* environment, as a superuser, to a database with
# mnemo; makes role mnemo_bench_app (as bench/append) and schema
# reads_plain.
set -euo pipefail

work=$(mktemp -d /tmp/mnemo-reads.XXXXXX)
trap 'rm -rf "$work"' EXIT
app=mnemo_bench_app
clk=$(getconf CLK_TCK)
cpu_ticks="(SELECT split_part(s, ' ', 14)::bigint + split_part(s, ' ', 15)::bigint FROM pg_read_file('/proc/self/stat') s)"
main=reads_m_$$		# this run's sessions
fork=reads_f_$$

setup() {
	psql -X -q -v ON_ERROR_STOP=1 -v main="$main" -v fork="$fork" <<'SQL'
SET client_min_messages = warning;
DO $$ BEGIN CREATE ROLE mnemo_bench_app NOLOGIN;
EXCEPTION WHEN duplicate_object THEN NULL; END $$;
DROP SCHEMA IF EXISTS reads_plain CASCADE;
CREATE SCHEMA reads_plain;
CREATE TABLE reads_plain.messages (id bigserial PRIMARY KEY, session_id text, seq int,
    role text, content text, UNIQUE (session_id, seq));
GRANT USAGE ON SCHEMA mnemo, reads_plain TO mnemo_bench_app;
GRANT SELECT, INSERT ON reads_plain.messages TO mnemo_bench_app;
GRANT USAGE ON SEQUENCE reads_plain.messages_id_seq TO mnemo_bench_app;

-- bench/append_load.c's shape: words of its list, ~len bytes
CREATE FUNCTION reads_plain.words(len int, lines bool) RETURNS text LANGUAGE plpgsql AS $f$
DECLARE
    w text[] := '{the,parser,keeps,token,of,line,when,a,comment,ends,buffer,so,next,statement,starts,late,fix,is,to,reset,lookahead,before,returning,and,add,test,with,trailing,input,checked,other,callers,none,depend,on,stale,state,apply,patch,run,suite,file,function,returns,error,value,index,session,message,context,summary,tool,output,query,table,row,commit,lock,page,cache,plan,result,build,deploy}';
    s text := '';
    n int := 0;
BEGIN
    WHILE length(s) < len LOOP
        n := n + 1;
        s := s || w[1 + floor(random() * 64)::int] || CASE WHEN lines AND n % 12 = 0 THEN E'\n' ELSE ' ' END;
    END LOOP;
    RETURN rtrim(s, E' \n') || '.';
END $f$;

-- turns [a, b) into mnemo session s and the plain table's session p
CREATE FUNCTION reads_plain.turns(s text, p text, a int, b int, seq0 int) RETURNS void
LANGUAGE plpgsql AS $f$
DECLARE
    i int;
    u text; asst text; input jsonb; result text;
    batch jsonb := '[]';
    seq int := seq0;
BEGIN
    FOR i IN a .. b - 1 LOOP
        u := reads_plain.words(200, false);
        asst := reads_plain.words(800, false);
        IF i % 3 = 2 THEN
            input := jsonb_build_object('path', 'src/file_' || i || '.c', 'pattern', reads_plain.words(16, false));
            result := reads_plain.words(4000, true);
            batch := batch || jsonb_build_array(
                jsonb_build_object('role', 'user', 'parts', jsonb_build_array(jsonb_build_object('type', 'text', 'text', u))),
                jsonb_build_object('role', 'assistant', 'parts', jsonb_build_array(
                    jsonb_build_object('type', 'text', 'text', asst),
                    jsonb_build_object('type', 'tool', 'tool_name', 'grep', 'tool_call_id', 'call_' || i,
                                       'tool_state', 'completed', 'input', input, 'output', result))));
            asst := asst || E'\n' || jsonb_build_object('name', 'grep', 'id', 'call_' || i, 'input', input)::text
                    || E'\n' || result;
        ELSE
            batch := batch || jsonb_build_array(
                jsonb_build_object('role', 'user', 'parts', jsonb_build_array(jsonb_build_object('type', 'text', 'text', u))),
                jsonb_build_object('role', 'assistant', 'parts', jsonb_build_array(jsonb_build_object('type', 'text', 'text', asst))));
        END IF;
        INSERT INTO reads_plain.messages (session_id, seq, role, content)
            VALUES (p, seq + 1, 'user', u), (p, seq + 2, 'assistant', asst);
        seq := seq + 2;
        IF jsonb_array_length(batch) >= 100 THEN
            PERFORM mnemo.append_messages(s, batch);
            batch := '[]';
        END IF;
    END LOOP;
    IF jsonb_array_length(batch) > 0 THEN
        PERFORM mnemo.append_messages(s, batch);
    END IF;
END $f$;
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA reads_plain TO mnemo_bench_app;

SET ROLE mnemo_bench_app;
SELECT setseed(0.34);
SELECT mnemo.create_session(:'main') \gset
SELECT reads_plain.turns(:'main', 'main', 0, 1000, 0);
SELECT mnemo.fork_session(:'main', '1000', :'fork') \gset
-- the fork's own 1,000 turns; the plain table's fork is seqs 1-1000 of main, copied
INSERT INTO reads_plain.messages (session_id, seq, role, content)
    SELECT 'fork', seq, role, content FROM reads_plain.messages WHERE session_id = 'main' AND seq <= 1000;
SELECT reads_plain.turns(:'fork', 'fork', 1000, 1500, 1000);
RESET ROLE;
VACUUM ANALYZE reads_plain.messages;
VACUUM ANALYZE mnemo.log;
SQL
}

# the reads, by name
declare -A reads=(
	[plain]="SELECT * FROM reads_plain.messages WHERE session_id = 'main' ORDER BY seq"
	[flat]="SELECT * FROM mnemo.get_messages_flat('$main')"
	[with_parts]="SELECT * FROM mnemo.get_messages_with_parts('$main')"
	[plain_fork]="SELECT * FROM reads_plain.messages WHERE session_id = 'fork' ORDER BY seq"
	[flat_fork]="SELECT * FROM mnemo.get_messages_flat('$fork')"
	[with_parts_fork]="SELECT * FROM mnemo.get_messages_with_parts('$fork')"
)
order=(plain flat with_parts plain_fork flat_fork with_parts_fork)

# one backend (psql) of 10 warm-up calls and CALLS counted ones: each
# counted call's time (\timing: until the result is in the client) appended
# to $work/name.ms, and the backend's CPU time per call (utime + stime of
# /proc/self/stat, read by the backend itself) to $work/name.cpu
run_read() {	# name calls
	local name=$1 calls=$2 i
	{
		echo "SET client_min_messages = warning;"
		echo "SET ROLE $app;"
		for ((i = 0; i < 10; i++)); do echo "${reads[$name]};"; done
		echo "RESET ROLE;"
		echo "SELECT $cpu_ticks AS t0 \\gset"
		echo "SET ROLE $app;"
		echo "\\timing on"
		for ((i = 0; i < calls; i++)); do echo "${reads[$name]};"; done
		echo "\\timing off"
		echo "RESET ROLE;"
		echo "\\o"
		echo "SELECT ($cpu_ticks - :t0) * 1000.0 / $clk / $calls AS cpu_ms \\gset"
		echo "\\echo cpu :cpu_ms"
	} >"$work/$name.sql"
	psql -X -A -q -v ON_ERROR_STOP=1 -o /dev/null -f "$work/$name.sql" >"$work/$name.out"
	awk '/^Time:/ { print $2 }' "$work/$name.out" >>"$work/$name.ms"
	awk '/^cpu / { print $2 }' "$work/$name.out" >>"$work/$name.cpu"
}

median() {	# file: its median, its minimum, how many
	sort -n "$1" | awk '{ v[NR] = $1 } END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2;
		printf "%.2f %.2f %d", m, v[1], NR }'
}

if [ "${1:-}" = perf ]; then
	read=${2:?usage: reads.sh perf READ OUT.txt}
	out=${3:?usage: reads.sh perf READ OUT.txt}
	setup >/dev/null
	echo "${reads[$read]};" >"$work/read.sql"
	(cd "$work" && PGOPTIONS="-c role=$app" pgbench -n -M prepared -c 1 -T 14 -f read.sql \
		>"$work/pgbench.txt" 2>&1) &
	sleep 3
	pid=$(psql -X -Atc "SELECT pid FROM pg_stat_activity WHERE application_name = 'pgbench' LIMIT 1")
	perf record -q -g -p "$pid" -o "$work/perf.data" -- sleep 8 >/dev/null 2>&1
	wait
	{
		echo "# ${reads[$read]}, pgbench -M prepared, one client, 8 s recorded in its backend"
		echo "## inclusive (children), -g none"
		perf report -i "$work/perf.data" --stdio --children -g none --percent-limit 2 2>/dev/null |
			grep -v '^#' | grep -v '^$' | head -60
		echo "## self"
		perf report -i "$work/perf.data" --stdio --no-children -g none --percent-limit 0.7 2>/dev/null |
			grep -v '^#' | grep -v '^$' | head -60
	} >"$out"
	exit 0
fi

rounds=${1:-5}
calls=${2:-100}
setup >/dev/null
psql -X -Atc "SELECT 'rows: main ' || (SELECT count(*) FROM mnemo.get_messages_flat('$main')) ||
	' flat, ' || (SELECT count(*) FROM reads_plain.messages WHERE session_id = 'main') ||
	' plain; fork ' || (SELECT count(*) FROM mnemo.get_messages_flat('$fork')) || ' flat, ' ||
	(SELECT count(*) FROM reads_plain.messages WHERE session_id = 'fork') || ' plain'"
for ((r = 0; r < rounds; r++)); do
	for name in "${order[@]}"; do
		run_read "$name" "$calls"
	done
done
printf "%-16s %9s %9s %7s %8s %10s %8s\n" read "median ms" "min ms" calls "/ plain" "CPU ms" "/ plain"
for name in "${order[@]}"; do
	read -r med min n <<<"$(median "$work/$name.ms")"
	read -r cpu _ _ <<<"$(median "$work/$name.cpu")"
	base=plain
	case $name in *_fork) base=plain_fork ;; esac
	read -r bmed _ _ <<<"$(median "$work/$base.ms")"
	read -r bcpu _ _ <<<"$(median "$work/$base.cpu")"
	printf "%-16s %9s %9s %7s %8.2f %10s %8.2f\n" "$name" "$med" "$min" "$n" \
		"$(echo "$med / $bmed" | bc -l)" "$cpu" "$(echo "$cpu / $bcpu" | bc -l)"
done
