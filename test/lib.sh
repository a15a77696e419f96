# shellcheck shell=bash
# Helpers shared by the shell tests (test/concurrency.sh, test/crash.sh,
# test/backup.sh), sourced by each:
#
#   . "$(dirname "$0")/lib.sh"
#
# TAP-like output: ok/not_ok/is/check print "ok N - ..." / "not ok N - ..."
# lines and count them in n and nfail; summary NAME prints the count and
# fails if any assertion did.  psql: val and sqlstate_of.  Cluster:
# setup_cluster NAME [DIR] reaches the cluster test/run.sh passes, or starts
# a private one when the test runs standalone, and removes it on exit.
set -euo pipefail

# test/, wherever the test was started from: cluster.sh and pgbench/ are here.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# --- TAP ---------------------------------------------------------------------

n=0
nfail=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); nfail=$((nfail + 1)); echo "not ok $n - $1"; }

# is GOT EXPECTED DESCRIPTION
is() {
	if [ "$1" = "$2" ]; then
		ok "$3"
	else
		not_ok "$3"
		echo "#   got:      '$1'"
		echo "#   expected: '$2'"
	fi
}

# check DESCRIPTION COMMAND...: ok when the command succeeds; when it fails,
# the last 20 lines of its output are shown as diagnostics.  The command runs
# in this shell, not in a $(...) subshell, because some set variables, start
# background processes or open fds that the test uses afterwards; so its
# output goes to a file in $tmp (made by setup_cluster) meanwhile.
check() {
	local desc=$1
	shift
	if "$@" >"$tmp/check.out" 2>&1; then
		ok "$desc"
	else
		not_ok "$desc"
		sed 's/^/#   /' "$tmp/check.out" | tail -n 20
	fi
}

# summary NAME: the last line of a test's output; fails if any assertion
# failed, which makes it the test's exit status when main ends with it.
summary() {
	echo "# $1: $n assertions, $nfail failed"
	[ "$nfail" -eq 0 ]
}

# --- psql --------------------------------------------------------------------
# DB defaults to $PGDATABASE; PGOPTIONS set on the call reaches psql
# (PGOPTIONS='-c lock_timeout=1s' val ...).

# val [DB] SQL: the result of one query, or the error text (never fails).
val() {
	local db=()
	if [ $# -ge 2 ]; then db=(-d "$1"); shift; fi
	psql -X -v ON_ERROR_STOP=1 -tA -q "${db[@]}" -c "$1" 2>&1 || true
}

# sqlstate_of [DB] SQL: the SQLSTATE the statement fails with, or "none".
sqlstate_of() {
	local db=() out
	if [ $# -ge 2 ]; then db=(-d "$1"); shift; fi
	if out=$(psql -X -v ON_ERROR_STOP=1 -v VERBOSITY=sqlstate -tA -q "${db[@]}" -c "$1" 2>&1); then
		echo none
	else
		sed -n 's/^.*ERROR: *\([0-9A-Z]\{5\}\).*$/\1/p' <<<"$out" | head -1
	fi
}

# wait_for SQL [SECONDS]: poll until SQL returns t (default: 30 s; 0 tries
# once).
wait_for() {
	local deadline=$(($(date +%s) + ${2:-30}))
	while [ "$(val "$1")" != t ]; do
		[ "$(date +%s)" -ge "$deadline" ] && return 1
		sleep 0.1
	done
}

# fresh_db DB: an empty database DB, dropping any left by an earlier run.
fresh_db() {
	dropdb --if-exists "$1" 2>/dev/null || true
	createdb "$1"
}

# setup_db DB: a fresh database DB with mnemo, the default for what follows.
setup_db() {
	fresh_db "$1"
	export PGDATABASE=$1
	psql -X -q -v ON_ERROR_STOP=1 -c "CREATE EXTENSION mnemo"
}

# --- cluster -----------------------------------------------------------------

dir=
own_cluster=
tmp=
# Background processes a test started; killed on exit, so that one a failed
# assertion left running does not hold the cluster up.
pids=()

cleanup() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	[ -n "$tmp" ] && rm -rf "$tmp"
	if [ -n "$own_cluster" ]; then
		bash "$here/cluster.sh" stop "$dir" >/dev/null 2>&1 || true
		rm -rf "$dir"
	fi
}

# setup_cluster NAME [DIR]: the PG* environment for the cluster in DIR, or,
# without DIR, for a private cluster started in /tmp/mnemo-NAME.*; and a
# scratch directory $tmp.  Both private directories go on exit.
setup_cluster() {
	trap cleanup EXIT
	if [ -n "${2:-}" ]; then
		dir=$2
	else
		dir=$(mktemp -d "/tmp/mnemo-$1.XXXXXX")
		own_cluster=1
		bash "$here/cluster.sh" start "$dir"
	fi
	eval "$(bash "$here/cluster.sh" env "$dir")"
	tmp=$(mktemp -d "/tmp/mnemo-$1-work.XXXXXX")
}
