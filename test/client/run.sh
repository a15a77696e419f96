#!/usr/bin/env bash
# The client tests: libmnemo and the mnemo command against a running cluster.
#
#   bash test/client/run.sh DIR     (test/run.sh calls it with PGHOST, PGPORT
#                                    and PGUSER set to the cluster in DIR;
#                                    without PGHOST it takes them from
#                                    test/cluster.sh env DIR)
#
# 1. build the client twice: as installed (make -C client) and with
#    AddressSanitizer, LeakSanitizer and UBSan (make -C client SANITIZE=1,
#    in client/build-asan/);
# 2. check that the sanitizers work here: a planted leak must be reported,
#    or "no leaks" below would mean nothing;
# 3. run every test/client/t_*.c, compiled against the sanitized static
#    library, and every test/client/*.sh (with MNEMO_BIN, the sanitized
#    mnemo command), each in a fresh database of its own named after it
#    with the extension created (PGDATABASE), MNEMO_TEST_CLUSTER_DIR=DIR
#    exported so that a test may stop and start the cluster
#    (bash test/cluster.sh stop|start DIR);
# 4. check the shared library's exports and soname and `make install` into a
#    temporary prefix (test/examples.sh builds and runs examples/ against
#    such an install).
#
# MNEMO_CLIENT_ONLY="t_store cli" runs only the named tests (the checks of
# steps 1, 2 and 4 always run).
#
# Prints one TAP stream: each test's own lines renumbered and prefixed with
# its name, then the plan.  A test that crashes, exits non-zero, times out,
# leaves no plan or runs another number of tests than planned, or whose run
# produced any sanitizer report, gets a "not ok" line of its own.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1

dir=$(realpath -m "${1:?usage: test/client/run.sh CLUSTER_DIR}")
export MNEMO_TEST_CLUSTER_DIR=$dir
# run by hand: reach the cluster in DIR (test/run.sh has set these already)
if [ -z "${PGHOST:-}" ]; then
	eval "$(bash test/cluster.sh env "$dir")"
fi
work=$(mktemp -d /tmp/mnemo-client.XXXXXX)
trap 'rm -rf "$work"' EXIT

TEST_TIMEOUT=${MNEMO_CLIENT_TEST_TIMEOUT:-180}
SANFLAGS="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
TEST_CFLAGS="-std=c11 -g -O1 -Wall -Wextra -Werror -Wstrict-prototypes -Wwrite-strings"
PQ_INCLUDEDIR=$(pg_config --includedir)
PQ_LIBDIR=$(pg_config --libdir)

n=0
nfailed=0
ok() {
	n=$((n + 1))
	echo "ok $n - $*"
}
not_ok() {
	n=$((n + 1))
	nfailed=$((nfailed + 1))
	echo "not ok $n - $*"
}
# Print a file as TAP comments.
comment() { sed 's/^/# /' "$@"; }
finish() {
	echo "1..$n"
	[ "$nfailed" -eq 0 ]
	exit
}

# Sanitizer reports go to files, one per process (log_path.PID), so that a
# report from a child process (the mnemo command in a shell test) is seen.
sanitizer_env() {
	local logdir=$1
	mkdir -p "$logdir"
	export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:abort_on_error=0:log_path=$logdir/asan"
	export LSAN_OPTIONS="log_path=$logdir/asan"
	export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:log_path=$logdir/ubsan"
}

# ---- 1. build ----------------------------------------------------------

version=$(make -s --no-print-directory -C client print-version 2>/dev/null)
major=${version%%.*}
# the soname's version: the major, and before 1.0 the minor too (version.h)
abi=$major
[ "$major" = 0 ] && abi=${version%.*}
if make -C client >"$work/build.log" 2>&1; then
	ok "libmnemo $version and mnemo build with -Wall -Wextra -Werror (make -C client)"
else
	not_ok "libmnemo builds (make -C client)"
	tail -n 40 "$work/build.log" | comment
	finish
fi
if make -C client SANITIZE=1 >"$work/build-asan.log" 2>&1; then
	ok "the ASan+UBSan build (make -C client SANITIZE=1)"
else
	not_ok "the ASan+UBSan build (make -C client SANITIZE=1)"
	tail -n 40 "$work/build-asan.log" | comment
	finish
fi
asan_lib=client/build-asan/libmnemo.a
asan_bin=client/build-asan/mnemo
# the scripted provider server the chat-turn tests send to (t_send)
if make -C test/provider_server >"$work/provider-server.log" 2>&1; then
	export MNEMO_PROVIDER_SERVER=$PWD/test/provider_server/provider-server
	ok "the provider test server builds (make -C test/provider_server)"
else
	not_ok "the provider test server builds (make -C test/provider_server)"
	tail -n 20 "$work/provider-server.log" | comment
fi
# make demo's agent is built only by make demo: build it here too, so that an
# API change cannot leave the demo behind
# shellcheck disable=SC2046 # flag lists
if cc -std=c11 -O0 -Wall -Wextra -Werror -Iclient/include -I"$(pg_config --includedir)" \
	-o "$work/demo-agent" test/demo/agent.c client/libmnemo.a -L"$(pg_config --libdir)" -lpq \
	$(pkg-config --cflags --libs json-c libcurl libcrypto) >"$work/demo-agent.log" 2>&1; then
	ok "make demo's agent (test/demo/agent.c) builds against the library"
else
	not_ok "make demo's agent (test/demo/agent.c) builds against the library"
	tail -n 20 "$work/demo-agent.log" | comment
fi

# ---- 2. the sanitizers catch what they must -----------------------------

cat >"$work/planted_leak.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int
main(void)
{
	char	   *p = malloc(77);

	strcpy(p, "leaked on purpose");
	printf("%s\n", p);
	p = NULL;
	return 0;
}
EOF
# shellcheck disable=SC2086 # flag lists
if cc $TEST_CFLAGS -O0 $SANFLAGS -o "$work/planted_leak" "$work/planted_leak.c" 2>"$work/planted.log"; then
	(
		sanitizer_env "$work/san-planted"
		"$work/planted_leak" >/dev/null 2>&1
	)
	if cat "$work/san-planted"/* 2>/dev/null | grep -q "LeakSanitizer: detected memory leaks"; then
		ok "LeakSanitizer reports a planted leak (so a silent run means no leak)"
	else
		not_ok "LeakSanitizer reports a planted leak: it did not; leak checks below are void"
	fi
else
	not_ok "the planted-leak program compiles with $SANFLAGS"
	comment "$work/planted.log"
fi

# ---- 3. the tests --------------------------------------------------------

# A fresh database named after the test, with the extension.
fresh_db() {
	local db=$1
	dropdb --if-exists "$db" >/dev/null 2>&1 || true
	createdb "$db" >"$work/createdb.log" 2>&1 &&
		psql -X -q -v ON_ERROR_STOP=1 -d "$db" -c "CREATE EXTENSION mnemo" >>"$work/createdb.log" 2>&1
}

# The cluster must be up for the next test even if this one stopped it.
ensure_cluster() {
	local name=$1 rc i
	pg_isready -q -t 5 >/dev/null 2>&1
	rc=$?
	[ "$rc" = 0 ] && return
	# rejecting (1): a backend that crashed sent the postmaster through
	# recovery, after which it takes connections again: a failure, not a stop
	for ((i = 0; i < 60 && rc == 1; i++)); do
		sleep 1
		pg_isready -q -t 5 >/dev/null 2>&1
		rc=$?
	done
	if [ "$rc" = 0 ]; then
		not_ok "$name: crashed a server process (the server recovered)"
		return
	fi
	not_ok "$name: left the cluster stopped (restarted it)"
	bash test/cluster.sh start "$dir" >/dev/null 2>&1 || {
		not_ok "could not restart the cluster in $dir"
		finish
	}
}

wanted() { [ -z "${MNEMO_CLIENT_ONLY:-}" ] || [[ " $MNEMO_CLIENT_ONLY " == *" $1 "* ]]; }

# run_test NAME COMMAND...: run a TAP-printing test program and fold its
# output into this stream.
run_test() {
	local name=$1 db out logdir rc line desc plan='' ran=0 failed_here=0 f has_report
	shift
	db=$(echo "$name" | tr '[:upper:]' '[:lower:]' | tr -c 'a-z0-9_\n' '_')
	out=$work/$name.out
	logdir=$work/san-$name
	if ! fresh_db "$db"; then
		not_ok "$name: could not create database $db with the extension"
		comment "$work/createdb.log"
		return
	fi
	(
		sanitizer_env "$logdir"
		export PGDATABASE=$db MNEMO_BIN="$PWD/$asan_bin"
		exec timeout -k 10 "$TEST_TIMEOUT" "$@"
	) >"$out" 2>&1 </dev/null
	rc=$?
	echo "# --- $name"
	while IFS= read -r line; do
		if [[ $line =~ ^(not\ )?ok\ [0-9]+(\ -)?\ ?(.*)$ ]]; then
			ran=$((ran + 1))
			desc=${BASH_REMATCH[3]}
			if [ -z "${BASH_REMATCH[1]}" ]; then
				ok "$name: $desc"
			elif [[ $desc =~ \#\ (TODO|todo) ]]; then
				# a TODO test fails by design: shown, not counted (TAP, count_tap)
				n=$((n + 1))
				echo "not ok $n - $name: $desc"
			else
				failed_here=1
				not_ok "$name: $desc"
			fi
		elif [[ $line =~ ^1\.\.([0-9]+) ]]; then
			plan=${BASH_REMATCH[1]}
		elif [[ $line =~ ^Bail\ out! ]]; then
			failed_here=1
			not_ok "$name: $line"
		elif [[ $line == "#"* ]]; then
			echo "$line"
		else
			echo "# $line"
		fi
	done <"$out"

	has_report=
	compgen -G "$logdir/*" >/dev/null && has_report=1
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		not_ok "$name: timed out after ${TEST_TIMEOUT} s"
	elif [ -z "$plan" ]; then
		not_ok "$name: no plan (it stopped early, exit status $rc)"
	elif [ "$plan" -ne "$ran" ]; then
		not_ok "$name: planned $plan tests, ran $ran"
	elif [ "$rc" -ne 0 ] && [ "$failed_here" -eq 0 ] && [ -z "$has_report" ]; then
		not_ok "$name: exited with status $rc"
	fi
	if [ -n "$has_report" ]; then
		not_ok "$name: sanitizer report (leak or memory error)"
		for f in "$logdir"/*; do
			echo "# $f:"
			head -n 80 "$f" | comment
		done
	fi
	ensure_cluster "$name"
}

shopt -s nullglob
for src in test/client/t_*.c; do
	name=$(basename "$src" .c)
	wanted "$name" || continue
	# shellcheck disable=SC2086,SC2046 # flag lists
	if ! cc $TEST_CFLAGS $SANFLAGS -Iclient/include -Iclient/src -Itest/client -I"$PQ_INCLUDEDIR" \
		-o "$work/$name" "$src" "$asan_lib" -L"$PQ_LIBDIR" -lpq \
		$(pkg-config --libs json-c libcurl libcrypto) -pthread >"$work/$name.cc.log" 2>&1; then
		not_ok "$name: compiles against libmnemo"
		head -n 40 "$work/$name.cc.log" | comment
		continue
	fi
	run_test "$name" "$work/$name"
done
for script in test/client/*.sh; do
	[ "$(basename "$script")" = run.sh ] && continue
	wanted "$(basename "$script" .sh)" || continue
	# a test that needs longer says so in a line "# mnemo-test-timeout: S"
	limit=$(sed -n 's/^# mnemo-test-timeout: \([0-9][0-9]*\)$/\1/p' "$script" | head -n 1)
	TEST_TIMEOUT=${limit:-$TEST_TIMEOUT} run_test "$(basename "$script" .sh)" bash "$script"
done
shopt -u nullglob

# ---- 4. what an application developer gets -----------------------------

echo "# --- the shared library and the install"
so=client/libmnemo.so.$version
# read once, then searched: `nm | grep -q` fails under pipefail when grep
# quits before nm has written all (SIGPIPE), as it does past 4 KB of symbols
symbols=$(nm -D --defined-only "$so" 2>/dev/null)
others=$(awk 'NF == 3 { print $3 }' <<<"$symbols" | grep -v '^mnemo_' || true)
if [ -z "$others" ] && grep -q ' mnemo_store_open$' <<<"$symbols"; then
	ok "libmnemo.so exports only mnemo_* symbols ($(grep -c ' mnemo_' <<<"$symbols"))"
else
	not_ok "libmnemo.so exports only mnemo_* symbols; also: ${others//$'\n'/ }"
fi
soname=$(readelf -d "$so" 2>/dev/null | sed -n 's/.*Library soname: \[\(.*\)\].*/\1/p')
if [ "$soname" = "libmnemo.so.$abi" ]; then
	ok "the soname is libmnemo.so.$abi"
else
	not_ok "the soname is libmnemo.so.$abi, not '$soname'"
fi

prefix=$work/prefix
if make -C client install PREFIX="$prefix" >"$work/install.log" 2>&1; then
	missing=()
	for f in include/mnemo.h lib/libmnemo.a "lib/libmnemo.so.$version" "lib/libmnemo.so.$abi" \
		lib/libmnemo.so lib/pkgconfig/mnemo.pc; do
		[ -e "$prefix/$f" ] || missing+=("$f")
	done
	compgen -G "client/cli/*.c" >/dev/null && { [ -x "$prefix/bin/mnemo" ] || missing+=(bin/mnemo); }
	pcversion=$(PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --modversion mnemo 2>&1)
	if [ ${#missing[@]} -eq 0 ] && [ "$pcversion" = "$version" ]; then
		ok "make -C client install PREFIX=... installs the header, libraries, mnemo.pc ($pcversion) and mnemo"
	else
		not_ok "make install: missing ${missing[*]:-nothing}; pkg-config --modversion mnemo: $pcversion"
	fi
else
	not_ok "make -C client install PREFIX=$prefix"
	tail -n 20 "$work/install.log" | comment
fi
# the install is for the check above; leave client/mnemo.pc with the default prefix
make -s -C client mnemo.pc >/dev/null 2>&1 || true

finish
