#!/usr/bin/env bash
# make test: every test mnemo has, on a private cluster.
#
#   bash test/run.sh          (what `make test` runs)
#
# 0. install the Debian packages that are missing (test/deps.sh);
# 1. build with extension warnings as errors (make PG_CFLAGS=-Werror) and
#    make install (as root into the system PostgreSQL 15);
# 2. start a private cluster (test/cluster.sh) in a fresh temporary
#    directory: unix socket only, owned by postgres when run as root;
# 3. run, each adding to the counts:
#      pg_regress   make installcheck: the REGRESS tests (sql/, expected/),
#                   then the ISOLATION specs (test/specs/, test/expected/);
#                   one count per test
#      pgTAP        pg_prove over test/pgtap/*.sql, each file in a fresh
#                   database with pgtap and mnemo; one count per assertion
#      partitioned  pg_regress, isolation and pgTAP again on the layout where
#                   each table is hash-partitioned by session (mnemo.partitions),
#                   and test/partitioned/pruning.sh: every call of a
#                   function that acts on one session touches one partition
#      client       test/client/run.sh DIR, if it exists (hook below)
#      examples     test/examples.sh DIR: examples/*.c built against an
#                   install of libmnemo and run; the README's copies of them
#      docs         test/docs.sh: the man page (renders, installed where man
#                   finds it, names every command and option) and the
#                   references (every SQL and C function documented)
#      concurrency  test/concurrency.sh DIR
#      crash        test/crash.sh DIR (crashes and restarts the cluster)
#      backup       test/backup.sh DIR
#      upgrade      test/upgrade.sh DIR: 0.1.0 with data, ALTER EXTENSION
#                   UPDATE, the rows read back, the schema equals a fresh
#                   install's
#      providers    test/provider_server/test.sh: the scripted fake of the
#                   OpenAI and Anthropic streaming APIs, checked with curl
#      fuzz         test/fuzz/run.sh: the SSE parser and the providers' event
#                   decoders under libFuzzer for a bounded time (FUZZ_SECONDS)
#      bench        a tiny run of bench/run.sh (they build and run; no figures)
#    The shell tests print "ok N - ..." / "not ok N - ..." lines; each is a
#    count, and a step that fails without a "not ok" line counts one failure.
# 4. stop the cluster (always), print the server log tail if anything
#    failed, and end with the line "N passed, N failed"; the exit status is
#    non-zero if anything failed.
#
# MNEMO_TEST_KEEP=1 keeps the cluster directory for inspection.
# MNEMO_TEST_ONLY="concurrency backup" runs only the named steps (after the
# build): regress, pgtap, partitioned, client, examples, docs, concurrency,
# crash, backup, upgrade, providers, fuzz, bench.
set -euo pipefail
cd "$(dirname "$0")/.."

started=$(date +%s)
passed=0
failed=0
failures=()
dir=
work=
completed=

pass() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); failures+=("$1"); }

# abort: stop here after a failure already counted (build, cluster start).
abort() {
	completed=1
	exit 1
}

section() { printf '\n=== %s ===\n' "$1"; }

wanted() { [ -z "${MNEMO_TEST_ONLY:-}" ] || [[ " $MNEMO_TEST_ONLY " == *" $1 "* ]]; }

finish() {
	local rc=$?
	set +e
	if [ -z "$completed" ]; then
		fail "test/run.sh stopped early (exit status $rc)"
	fi
	if [ -n "$dir" ] && [ -f "$dir/data/PG_VERSION" ]; then
		bash test/cluster.sh stop "$dir" >/dev/null 2>&1
		if [ "$failed" -gt 0 ] && [ -f "$dir/server.log" ]; then
			section "server log (last 40 lines of $dir/server.log)"
			tail -n 40 "$dir/server.log"
		fi
	fi
	if [ -n "$dir" ]; then
		if [ -n "${MNEMO_TEST_KEEP:-}" ]; then
			echo "cluster kept in $dir"
		else
			rm -rf "$dir"
		fi
	fi
	[ -n "$work" ] && rm -rf "$work"
	if [ "$failed" -gt 0 ]; then
		section "failed"
		printf '  %s\n' "${failures[@]}"
	fi
	echo
	echo "make test took $(($(date +%s) - started)) s"
	echo "$passed passed, $failed failed"
	[ "$failed" -eq 0 ] && exit 0
	exit 1
}
trap finish EXIT

# A variable of the Makefile (REGRESS, ISOLATION), as make sees it.
make_var() {
	# shellcheck disable=SC2016 # $(%s) is make syntax
	printf '.PHONY: mnemo-print-var\nmnemo-print-var:\n\t@echo $(%s)\n' "$1" >"$work/print.mk"
	make -s --no-print-directory -f Makefile -f "$work/print.mk" mnemo-print-var
}

build() {
	section "build (make PG_CFLAGS=-Werror, make install)"
	if make PG_CFLAGS=-Werror >"$work/build.log" 2>&1; then
		pass
		echo "ok - build, warnings as errors"
		grep -i 'warning' "$work/build.log" || true
	else
		fail "build: make PG_CFLAGS=-Werror"
		tail -n 60 "$work/build.log"
		abort
	fi
	if make PG_CFLAGS=-Werror install >"$work/install.log" 2>&1; then
		pass
		echo "ok - make install ($(pg_config --pkglibdir)/mnemo.so)"
	else
		fail "build: make install"
		tail -n 30 "$work/install.log"
		abort
	fi
}

start_cluster() {
	section "cluster"
	dir=$(mktemp -d /tmp/mnemo-test.XXXXXX)
	if bash test/cluster.sh start "$dir"; then
		eval "$(bash test/cluster.sh env "$dir")"
		echo "private cluster in $dir (socket only, port $PGPORT)"
	else
		fail "cluster: test/cluster.sh start"
		cat "$dir/initdb.log" "$dir/server.log" 2>/dev/null | tail -n 30
		abort
	fi
}

# count_regress LOG RC LABEL: one count per "test NAME ... ok|FAILED" line of
# pg_regress or pg_isolation_regress; a failure without such a line counts one.
count_regress() {
	local log=$1 rc=$2 label=$3 line name result nfailed=0
	while IFS= read -r line; do
		[[ $line =~ ^(test[[:space:]]+)?[[:space:]]*([A-Za-z0-9_./-]+)[[:space:]]+\.\.\.[[:space:]]+(ok|FAILED|failed)(.*)$ ]] || continue
		name=${BASH_REMATCH[2]}
		result=${BASH_REMATCH[3]}
		if [ "$result" = ok ] || [[ ${BASH_REMATCH[4]} == *"(ignored)"* ]]; then
			pass
		else
			fail "$label: $name"
			nfailed=$((nfailed + 1))
		fi
	done <"$log"
	if [ "$rc" -ne 0 ] && [ "$nfailed" -eq 0 ]; then
		fail "$label: make installcheck exited with status $rc"
	fi
}

# run_installcheck LABEL DIFFS MAKEARGS...: make installcheck, counted per test.
run_installcheck() {
	local label=$1 diffs=$2 rc=0
	shift 2
	make --no-print-directory installcheck "$@" >"$work/$label.log" 2>&1 || rc=$?
	sed -n '/running regression test queries/,$p' "$work/$label.log"
	grep -E 'could not|No such file|cannot open|FATAL|ERROR:|DETAIL:' "$work/$label.log" || true
	count_regress "$work/$label.log" "$rc" "$label"
	if [ "$rc" -ne 0 ] && [ -f "$diffs" ]; then
		echo "--- $diffs (first 80 lines) ---"
		head -n 80 "$diffs"
	fi
}

# run_listed LABEL VAR INPUT EXPECTED DIFFS [MAKEARGS...]: the tests of the
# Makefile list VAR through make installcheck (only those: the other list is
# emptied), with MAKEARGS added to the make command line.  A
# test whose INPUT or EXPECTED file (% stands for its name) is missing counts
# as a failure and is left out of the run, since pg_regress stops at the
# first missing file.
run_listed() {
	local label=$1 var=$2 input=$3 expected=$4 diffs=$5 t in out present=()
	shift 5
	section "$label (make installcheck)"
	for t in $(make_var "$var"); do
		in=${input//%/$t}
		out=${expected//%/$t}
		if [ -f "$in" ] && [ -f "$out" ]; then
			present+=("$t")
		else
			echo "missing $in or $out"
			fail "$label: $t ($in or $out missing)"
		fi
	done
	if [ ${#present[@]} -gt 0 ]; then
		# the last assignment of a variable on make's command line wins
		run_installcheck "$label" "$diffs" REGRESS= ISOLATION= "$var=${present[*]}" "$@"
	fi
}

regress() {
	run_listed pg_regress REGRESS sql/%.sql expected/%.out regression.diffs
	run_listed isolation ISOLATION test/specs/%.spec test/expected/%.out output_iso/regression.diffs
}

# count_tap LOG RC LABEL: one count per "ok"/"not ok" line (TODO counts as
# a pass).  Planned tests that never ran (prove's "Failed X/Y subtests" with
# more than the "not ok" lines) count as failures, and so does a non-zero
# exit without any of these.
count_tap() {
	local log=$1 rc=$2 label=$3 line nfailed=0 missing=0
	while IFS= read -r line; do
		case $line in
		"not ok"*"# TODO"* | "not ok"*"# todo"*) pass ;;
		"not ok"*)
			fail "$label: ${line#not ok }"
			nfailed=$((nfailed + 1))
			;;
		"ok "*) pass ;;
		"Failed "*/*" subtests"*)
			[[ $line =~ ^Failed\ ([0-9]+)/ ]] && missing=$((missing + BASH_REMATCH[1]))
			;;
		esac
	done <"$log"
	while [ "$missing" -gt "$nfailed" ]; do
		fail "$label: a planned test did not run (see the pg_prove output)"
		nfailed=$((nfailed + 1))
	done
	if [ "$rc" -ne 0 ] && [ "$nfailed" -eq 0 ]; then
		fail "$label: exited with status $rc"
	fi
}

# run_tap LABEL COMMAND...: runs a TAP-printing command, shows and counts it.
run_tap() {
	local label=$1 t0
	t0=$(date +%s)
	shift
	{
		local rc=0
		"$@" 2>&1 || rc=$?
		echo "$rc" >"$work/$label.rc"
	} | tee "$work/$label.log"
	count_tap "$work/$label.log" "$(cat "$work/$label.rc")" "$label"
	echo "# $label took $(($(date +%s) - t0)) s"
}

# pgtap [LABEL]: each file in a fresh copy of a template database made with
# CREATE EXTENSION pgtap, mnemo (in the layout PGOPTIONS asks for).
pgtap() {
	local label=${1:-pgtap} f name files=()
	section "$label (pg_prove test/pgtap/*.sql)"
	shopt -s nullglob
	files=(test/pgtap/*.sql)
	shopt -u nullglob
	if [ ${#files[@]} -eq 0 ]; then
		echo "no pgTAP tests (test/pgtap/*.sql)"
		return
	fi
	dropdb --if-exists mnemo_tap_template 2>/dev/null || true
	if ! { createdb mnemo_tap_template &&
		psql -X -q -v ON_ERROR_STOP=1 -d mnemo_tap_template \
			-c "CREATE EXTENSION pgtap" -c "CREATE EXTENSION mnemo"; }; then
		fail "$label: could not create a database with pgtap and mnemo"
		return
	fi
	for f in "${files[@]}"; do
		name=$label-$(basename "$f" .sql)
		dropdb --if-exists mnemo_tap 2>/dev/null || true
		createdb -T mnemo_tap_template mnemo_tap
		echo "--- $f"
		run_tap "$name" pg_prove --verbose --dbname mnemo_tap "$f"
	done
	dropdb --if-exists mnemo_tap 2>/dev/null || true
}

# The same pg_regress, isolation and pgTAP tests, with the same expected
# outputs, on the hash-partitioned layout (doc/scale-out.md): every database
# they create gets mnemo with mnemo.partitions = 4, so each table with a
# session column is partitioned by it.  Then test/partitioned/pruning.sh:
# each function that acts on one session touches one partition per call.
partitioned() {
	local out=$work/partitioned
	mkdir -p "$out"
	export PGOPTIONS="-c mnemo.partitions=4"
	run_listed partitioned-pg_regress REGRESS sql/%.sql expected/%.out "$out/regression.diffs" \
		REGRESS_OPTS="$(make_var REGRESS_OPTS) --outputdir=$out"
	run_listed partitioned-isolation ISOLATION test/specs/%.spec test/expected/%.out "$out/iso/regression.diffs" \
		ISOLATION_OPTS="$(make_var ISOLATION_OPTS) --outputdir=$out/iso"
	pgtap partitioned-pgtap
	unset PGOPTIONS
	section "partitioned-pruning (test/partitioned/pruning.sh)"
	run_tap partitioned-pruning bash test/partitioned/pruning.sh "$dir"
}

# Client tests hook: test/client/run.sh DIR runs with PGHOST/PGPORT/PGUSER
# set to the cluster, makes its own databases, and prints "ok N - ..." /
# "not ok N - ..." lines like the shell tests.
client() {
	if [ -f test/client/run.sh ]; then
		section "client (test/client/run.sh)"
		run_tap client bash test/client/run.sh "$dir"
	fi
}

# tap_script LABEL SCRIPT: a TAP-printing script that needs no cluster.
tap_script() {
	section "$1 ($2)"
	run_tap "$1" bash "$2"
}

shell_test() {
	section "$1 (test/$1.sh)"
	run_tap "$1" bash "test/$1.sh" "$dir"
}

# The benchmarks are not timed here (figures belong to make bench), but they
# must still build and run: a tiny run of each on its own cluster.
bench_smoke() {
	section "bench (a tiny run of make bench)"
	if BENCH_TURNS=60 BENCH_ROUNDS=1 BENCH_W3=2:20 BENCH_LATENCY_TURNS=100 BENCH_LOADS=3 BENCH_SIZES=1000 BENCH_SWAP_SIZES=200,400 BENCH_CALLS=5 \
		BENCH_SEND_CALLS=5 BENCH_COMPACT_MESSAGES=60 BENCH_COMPACT_DELAY=1 BENCH_FORK_SIZES=300,600 BENCH_FORK_CALLS=3 \
		BENCH_IMPORT_MESSAGES=300 BENCH_IMPORT_RUNS=1 BENCH_IMPORT_AMONG=2 \
		BENCH_MAP_ITEMS=32 BENCH_MAP_DELAY=5 BENCH_SCALE_SEARCH_SIZES=600,1200 BENCH_SCALE_SEARCH_CALLS=2 \
		BENCH_SCALE_SIZES=200,400 BENCH_SCALE_CALLS=2 BENCH_SCALE_COMPACT_SIZES=300,600 BENCH_SCALE_COMPACT_BUDGET=2000 \
		bash bench/run.sh >"$work/bench.out" 2>&1; then
		echo "ok - bench/append, bench/context, bench/send, bench/compact, bench/fork, bench/import, bench/map, bench/scale, bench/scale_search and bench/scale_compact build and run"
		pass
	else
		echo "not ok - bench/append, bench/context, bench/send, bench/compact, bench/fork, bench/import, bench/map, bench/scale, bench/scale_search and bench/scale_compact build and run"
		tail -n 20 "$work/bench.out" | sed 's/^/#   /'
		fail "bench: make bench failed"
	fi
}

main() {
	work=$(mktemp -d /tmp/mnemo-test-work.XXXXXX)
	# a fresh Debian machine as root: install what is missing (a no-op when
	# all is there; as another user it names what to install and stops)
	if ! bash test/deps.sh; then
		fail "packages: test/deps.sh"
		abort
	fi
	build
	start_cluster
	if wanted regress; then regress; fi
	if wanted pgtap; then pgtap; fi
	if wanted partitioned; then partitioned; fi
	if wanted client; then client; fi
	if wanted examples; then shell_test examples; fi
	if wanted docs; then shell_test docs; fi
	if wanted concurrency; then shell_test concurrency; fi
	if wanted crash; then shell_test crash; fi
	if wanted backup; then shell_test backup; fi
	if wanted upgrade; then shell_test upgrade; fi
	if wanted providers; then tap_script providers test/provider_server/test.sh; fi
	if wanted fuzz; then tap_script fuzz test/fuzz/run.sh; fi
	if wanted bench; then bench_smoke; fi
	completed=1
}

main "$@"
