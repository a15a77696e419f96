#!/usr/bin/env bash
# bench/profiles/import_ab.sh: bench/import.sh for an older build and for
# this tree, alternating, each on a fresh private cluster, on the same host
# in one sitting: the import's gain as a same-host ratio, where a figure
# from another day moves with the shared host (COPY of the same texts varies
# 310,000-480,000 rows/s from day to day here).
#
#   bash bench/profiles/import_ab.sh [COMMIT] [ROUNDS] [AMONG]
#                  (defaults 8750df7, the build issue 17 was written
#                  against, 2 rounds and 0; 100,000 messages, median of 3
#                  imports each, then, with AMONG > 0, 3 more under UUID
#                  session ids among AMONG other sessions, and an export:
#                  bench/import.sh's lines)
#
# The transcript is the one both builds read: BENCH_IMPORT_BARE=1 (the
# default here; bench/import.sh says what it changes, AMONG among it).  An
# older build that reads mnemo's header line (2f1de9d, the build before the
# set-based writes) can be compared on the full transcript with
# BENCH_IMPORT_BARE=0.
#
# Installs each build into the system PostgreSQL in turn (run it under
# flock -o /tmp/mnemo-test.lock where others share the machine) and leaves
# this tree's installed.  Each line: the build, the load average before it,
# and bench/import.sh's figure line.
set -euo pipefail
cd "$(dirname "$0")/../.."
here=$PWD
commit=${1:-8750df7}
rounds=${2:-2}
among=${3:-0}
export BENCH_IMPORT_BARE=${BENCH_IMPORT_BARE:-1}
old=$(mktemp -d /tmp/mnemo-import-ab.XXXXXX)
# beside it, not in it: the server's user must reach its directory
cluster=$(mktemp -u /tmp/mnemo-import-ab-cluster.XXXXXX)
cleanup() {
	git -C "$here" worktree remove --force "$old/tree" >/dev/null 2>&1 || true
	bash test/cluster.sh stop "$cluster" >/dev/null 2>&1 || true
	rm -rf "$old" "$cluster"
	(cd "$here" && make -s install >/dev/null 2>&1) || true
}
trap cleanup EXIT

git worktree add --detach "$old/tree" "$commit" >/dev/null 2>&1
(cd "$old/tree" && make -s >/dev/null && make -s -C client >/dev/null)
make -s >/dev/null && make -s -C client >/dev/null
# the older tree may predate bench/import.sh: both run this tree's, from
# their own bench/ (it runs the client/mnemo beside it)
cp bench/import.sh "$old/tree/bench/import_ab_copy.sh"

for ((r = 1; r <= rounds; r++)); do
	for tree in "$old/tree" "$here"; do
		name=$([ "$tree" = "$here" ] && echo "this tree" || echo "$commit")
		(cd "$tree" && make -s install >/dev/null 2>&1)
		bash test/cluster.sh start "$cluster" >/dev/null 2>&1
		eval "$(bash test/cluster.sh env "$cluster")"
		psql -X -q -c "CREATE EXTENSION mnemo CASCADE"
		load=$(cut -d' ' -f1 /proc/loadavg)
		script=$([ "$tree" = "$here" ] && echo bench/import.sh || echo bench/import_ab_copy.sh)
		line=$(cd "$tree" && bash "$script" 100000 3 "$among" 2>/dev/null | tail -n +3 | tr -s ' \n' ' ')
		echo "$name, round $r, load $load: $line"
		bash test/cluster.sh stop "$cluster" >/dev/null 2>&1
		rm -rf "$cluster"
	done
done
