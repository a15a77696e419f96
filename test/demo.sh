#!/usr/bin/env bash
# make demo: install what is missing, build, start a private cluster under the
# project (.demo/, unix socket only), install mnemo and run a scripted session.
set -euo pipefail
cd "$(dirname "$0")/.."

bash test/deps.sh
make -s
make -s install >/dev/null

dir=$PWD/.demo
trap 'bash test/cluster.sh stop "$dir" 2>/dev/null || true' EXIT
bash test/cluster.sh start "$dir"
eval "$(bash test/cluster.sh env "$dir")"
echo "private cluster: $dir (socket only)"

out=$(psql -X -q -f test/demo.sql 2>&1) || { echo "$out"; exit 1; }
echo "$out"
grep -q "OK: every message sent is in the log" <<<"$out"
