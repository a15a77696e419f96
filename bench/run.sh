#!/usr/bin/env bash
# make bench: build and install mnemo, build bench/append and bench/context,
# start a private PostgreSQL cluster in a temporary directory (test/cluster.sh:
# unix socket only, its settings plus nothing else), create a database with
# mnemo, run the append benchmark, then the context benchmark, then the send
# and compact benchmarks (libmnemo and test/provider_server built for them),
# then the fork benchmark, then the import benchmark (bench/import.sh, with
# the mnemo CLI), then the map benchmark (LLMMap against the provider server),
# then the scale benchmarks (one uncompacted session as it grows: its context
# and commit, bench/scale.c; its search, bench/scale_search.c; compacted to a
# budget by mnemo_compact, bench/scale_compact.c),
# stop the cluster and remove it.
#
#   bash bench/run.sh [append|context|send|compact|fork|import|map|scale|scale_search|scale_compact|all]   or   BENCH=send make bench
#                  which benchmarks to run    (default all)
#   BENCH_TURNS    append: turns per run              (default 1000)
#   BENCH_ROUNDS   append: interleaved rounds, median (default 10; issue 34 asks for 7 or more)
#   BENCH_W3       append: CLIENTS:TURNS at once      (default 4:200)
#   BENCH_LATENCY_TURNS append: turns for percentiles (default 10000)
#   BENCH_LOADS    append: history loads a round, median (default 20)
#   BENCH_IMAGE_KB append: the image stored 10 times, KB (default 300)
#                  append's raw figures: bench/results/append-<time>.jsonl
#   BENCH_SIZES    context: session sizes, messages   (default 1000,100000,1000000)
#   BENCH_SWAP_SIZES context: sessions timed right after one large swap
#                  (default 2000,50000)
#   BENCH_CALLS    context: timed calls per size      (default 200)
#   BENCH_SEND_CALLS   send: timed calls per reply size (default BENCH_CALLS,
#                  else 200)
#   BENCH_SEND_TOKENS  send: reply sizes, tokens (default 50,500,5000)
#   BENCH_SEND_CHUNKS  send: the server's writes, event or all (default event)
#   BENCH_IMPORT_MESSAGES import: transcript length, messages (default 100000)
#   BENCH_IMPORT_RUNS      import: timed imports, median (default 3)
#   BENCH_IMPORT_AMONG     import: other sessions of 2,000 messages for the
#                          UUID-session line (default 500; 0: no such line)
#   BENCH_COMPACT_MESSAGES compact: transcript length, messages (default 2000)
#   BENCH_COMPACT_DELAY    compact: the server's delay per reply, ms (default 20)
#   BENCH_COMPACT_SESSIONS compact: real transcripts compacted at 1/2, 1/4, 1/10,
#                  comma-separated (default: ../shared/data's pi session and
#                  largest Claude Code session, when there; "" for none)
#                  compact's figures: bench/results/compact-<time>.jsonl
#   BENCH_FORK_SIZES fork: session sizes, messages (default 1000,100000)
#   BENCH_FORK_CALLS fork: timed forks (and copies) per size (default 50)
#   BENCH_MAP_ITEMS        map: items per map (default 320)
#   BENCH_MAP_DELAY        map: the server's delay per reply, ms (default 100)
#   BENCH_MAP_CONCURRENCY  map: workers (default 16)
#   BENCH_SCALE_SIZES      scale: one uncompacted session's sizes, messages,
#                          ascending (default 10000,100000; add 1000000 for
#                          the issue's largest, about 3 minutes of loading)
#   BENCH_SCALE_CALLS      scale: timed calls per operation and size (default 20)
#   BENCH_SCALE_SEARCH_SIZES scale_search: session sizes, messages
#                  (default 10000,100000; BENCH_SCALE_SEARCH_1M=1 adds 1000000)
#   BENCH_SCALE_SEARCH_CALLS scale_search: timed searches per figure (default 20)
#   BENCH_SCALE_COMPACT_SIZES scale_compact: session sizes compacted, messages
#                  (default 10000,100000; the issue's 1,000,000 takes minutes)
#   BENCH_SCALE_COMPACT_BUDGET scale_compact: the budget compacted to (default 100000)
set -euo pipefail
cd "$(dirname "$0")/.."

which=${1:-${BENCH:-all}}
case $which in
append|context|send|compact|fork|import|map|scale|scale_search|scale_compact|all) ;;
*) echo "usage: bash bench/run.sh [append|context|send|compact|fork|import|map|scale|scale_search|scale_compact|all]" >&2; exit 2 ;;
esac

started=$(date +%s)
make -s
make -s install >/dev/null

PG_INCLUDE=$(pg_config --includedir)
PG_LIBDIR=$(pg_config --libdir)
cc -std=c11 -O2 -Wall -Wextra -Werror -I"$PG_INCLUDE" bench/append.c bench/append_sides.c bench/append_load.c bench/append_storage.c bench/append_table.c bench/common.c \
	-L"$PG_LIBDIR" -lpq -pthread -o bench/append
cc -std=c11 -O2 -Wall -Wextra -Werror -I"$PG_INCLUDE" bench/context.c bench/context_load.c bench/context_measure.c bench/context_swap.c bench/common.c \
	-L"$PG_LIBDIR" -lpq -o bench/context
cc -std=c11 -O2 -Wall -Wextra -Werror -I"$PG_INCLUDE" bench/fork.c bench/common.c \
	-L"$PG_LIBDIR" -lpq -o bench/fork
cc -std=c11 -O2 -Wall -Wextra -Werror -I"$PG_INCLUDE" bench/scale.c bench/common.c \
	-L"$PG_LIBDIR" -lpq -o bench/scale
cc -std=c11 -O2 -Wall -Wextra -Werror -I"$PG_INCLUDE" bench/scale_search.c bench/common.c \
	-L"$PG_LIBDIR" -lpq -o bench/scale_search
if [ "$which" = send ] || [ "$which" = compact ] || [ "$which" = import ] || [ "$which" = map ] || [ "$which" = scale_compact ] || [ "$which" = all ]; then
	make -s -C client >/dev/null
	make -s -C test/provider_server >/dev/null
	for b in send compact map scale_compact; do
		# shellcheck disable=SC2046 # flag lists
		cc -std=c11 -O2 -Wall -Wextra -Werror -I"$PG_INCLUDE" -Iclient/include $(pkg-config --cflags json-c) \
			bench/$b.c bench/common.c bench/provider.c client/libmnemo.a -L"$PG_LIBDIR" -lpq \
			$(pkg-config --libs json-c libcurl libcrypto) -pthread -o bench/$b
	done
fi

dir=$(mktemp -d /tmp/mnemo-bench.XXXXXX)
cleanup() {
	bash test/cluster.sh stop "$dir" 2>/dev/null || true
	rm -rf "$dir"
}
trap cleanup EXIT
bash test/cluster.sh start "$dir"
eval "$(bash test/cluster.sh env "$dir")"
psql -X -q -v ON_ERROR_STOP=1 -c "CREATE DATABASE mnemo_bench" >/dev/null
export PGDATABASE=mnemo_bench
psql -X -q -v ON_ERROR_STOP=1 -c "CREATE EXTENSION mnemo" >/dev/null

echo "cluster:    private, test/cluster.sh defaults (initdb + shared_buffers=256MB, fsync=on), socket $dir"
echo "load:       $(cut -d' ' -f1-3 /proc/loadavg) (before; other work on the host skews the figures)"
echo "cpu:        $(nproc) x $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), $(uname -sr)"
if [ "$which" = append ] || [ "$which" = all ]; then
	mkdir -p bench/results
	cmd=(bench/append --turns "${BENCH_TURNS:-1000}" --rounds "${BENCH_ROUNDS:-10}"
		--w3 "${BENCH_W3:-4:200}" --latency-turns "${BENCH_LATENCY_TURNS:-10000}"
		--loads "${BENCH_LOADS:-20}" --image-kb "${BENCH_IMAGE_KB:-300}" --json "bench/results/append-$(date -u +%Y%m%dT%H%M%SZ).jsonl")
	echo "make bench: ${cmd[*]}"
	"${cmd[@]}"
fi
if [ "$which" = context ] || [ "$which" = all ]; then
	[ "$which" = all ] && echo
	cmd=(bench/context --sizes "${BENCH_SIZES:-1000,100000,1000000}"
		--swap-sizes "${BENCH_SWAP_SIZES:-2000,50000}" --calls "${BENCH_CALLS:-200}")
	echo "make bench: ${cmd[*]}"
	"${cmd[@]}"
fi
if [ "$which" = send ] || [ "$which" = all ]; then
	[ "$which" = all ] && echo
	cmd=(bench/send --server test/provider_server/provider-server
		--tokens "${BENCH_SEND_TOKENS:-50,500,5000}" --calls "${BENCH_SEND_CALLS:-${BENCH_CALLS:-200}}"
		--chunks "${BENCH_SEND_CHUNKS:-event}")
	echo "make bench: ${cmd[*]}"
	"${cmd[@]}"
fi
if [ "$which" = compact ] || [ "$which" = all ]; then
	[ "$which" = all ] && echo
	mkdir -p bench/results
	real=../shared/data/transcripts
	sessions=${BENCH_COMPACT_SESSIONS-}
	if [ -z "${BENCH_COMPACT_SESSIONS+set}" ] && [ -f "$real/pi-mono/large-session.jsonl" ]; then
		sessions=$real/pi-mono/large-session.jsonl,$(ls -S "$real"/kimi-cli-claude-code/*/*/*/full.jsonl | head -1)
	fi
	cmd=(bench/compact --server test/provider_server/provider-server
		--messages "${BENCH_COMPACT_MESSAGES:-2000}" --delay-ms "${BENCH_COMPACT_DELAY:-20}"
		--json "bench/results/compact-$(date -u +%Y%m%dT%H%M%SZ).jsonl"
		${sessions:+--sessions "$sessions"})
	echo "make bench: ${cmd[*]}"
	"${cmd[@]}"
fi
if [ "$which" = fork ] || [ "$which" = all ]; then
	[ "$which" = all ] && echo
	cmd=(bench/fork --sizes "${BENCH_FORK_SIZES:-1000,100000}" --calls "${BENCH_FORK_CALLS:-50}")
	echo "make bench: ${cmd[*]}"
	"${cmd[@]}"
fi
if [ "$which" = import ] || [ "$which" = all ]; then
	[ "$which" = all ] && echo
	cmd=(bash bench/import.sh "${BENCH_IMPORT_MESSAGES:-100000}" "${BENCH_IMPORT_RUNS:-3}" "${BENCH_IMPORT_AMONG:-500}")
	echo "make bench: ${cmd[*]}"
	"${cmd[@]}"
fi
if [ "$which" = map ] || [ "$which" = all ]; then
	[ "$which" = all ] && echo
	cmd=(bench/map --server test/provider_server/provider-server --items "${BENCH_MAP_ITEMS:-320}"
		--delay-ms "${BENCH_MAP_DELAY:-100}" --concurrency "${BENCH_MAP_CONCURRENCY:-16}")
	echo "make bench: ${cmd[*]}"
	"${cmd[@]}"
fi
if [ "$which" = scale ] || [ "$which" = all ]; then
	[ "$which" = all ] && echo
	cmd=(bench/scale --sizes "${BENCH_SCALE_SIZES:-10000,100000}" --calls "${BENCH_SCALE_CALLS:-20}")
	echo "make bench: ${cmd[*]}"
	"${cmd[@]}"
fi
if [ "$which" = scale_search ] || [ "$which" = all ]; then
	[ "$which" = all ] && echo
	sizes=${BENCH_SCALE_SEARCH_SIZES:-10000,100000}
	[ "${BENCH_SCALE_SEARCH_1M:-0}" = 1 ] && sizes=$sizes,1000000
	cmd=(bench/scale_search --sizes "$sizes" --calls "${BENCH_SCALE_SEARCH_CALLS:-20}")
	echo "make bench: ${cmd[*]}"
	"${cmd[@]}"
fi
if [ "$which" = scale_compact ] || [ "$which" = all ]; then
	[ "$which" = all ] && echo
	cmd=(bench/scale_compact --server test/provider_server/provider-server
		--sizes "${BENCH_SCALE_COMPACT_SIZES:-10000,100000}" --budget "${BENCH_SCALE_COMPACT_BUDGET:-100000}")
	echo "make bench: ${cmd[*]}"
	"${cmd[@]}"
fi
echo "load:       $(cut -d' ' -f1-3 /proc/loadavg) (after)"
echo "wall time:  $(($(date +%s) - started)) s"
