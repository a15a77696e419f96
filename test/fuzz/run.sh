#!/usr/bin/env bash
# The fuzz run: build each libFuzzer target of test/fuzz/ with clang
# (-fsanitize=fuzzer,address,undefined), replay its committed corpus, then
# fuzz it for a bounded time.  Prints TAP.
#
#   bash test/fuzz/run.sh                  every target, 20 s each
#   FUZZ_SECONDS=300 bash test/fuzz/run.sh a longer run
#   FUZZ_TARGETS="fuzz_sse" bash test/fuzz/run.sh
#
# Targets: fuzz_sse (the SSE parser), fuzz_openai and fuzz_anthropic (the
# parser and each provider's decoder).  Each checks that an input decodes
# the same whole, byte by byte and in chunks, and the invariants of the
# delta stream (fuzz_common.h); ASan, UBSan and LeakSanitizer catch the
# rest.  New inputs the fuzzer finds go to a temporary directory, not into
# the committed corpus.  A crash prints "not ok", the report, and where the
# crashing input was kept (FUZZ_ARTIFACTS, default /tmp/mnemo-fuzz-artifacts):
# fix the code, then add the input to test/fuzz/corpus/<target>/crash-<what>.
#
# Needs clang with its libFuzzer runtime (Debian 12: clang-14 and
# libclang-rt-14-dev); CLANG=... picks the compiler.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1

secs=${FUZZ_SECONDS:-20}
targets=${FUZZ_TARGETS:-fuzz_sse fuzz_openai fuzz_anthropic}
artifacts=${FUZZ_ARTIFACTS:-/tmp/mnemo-fuzz-artifacts}
work=$(mktemp -d /tmp/mnemo-fuzz.XXXXXX)
trap 'rm -rf "$work"' EXIT

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
comment() { sed 's/^/# /' "$@"; }
finish() {
	echo "1..$n"
	[ "$nfailed" -eq 0 ]
	exit
}

# ---- a compiler with libFuzzer --------------------------------------------

FLAGS="-std=c11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
WARN="-Wall -Wextra -Werror -Wstrict-prototypes -Wwrite-strings"
cat >"$work/probe.c" <<'EOF'
#include <stddef.h>
#include <stdint.h>
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) { (void) data; (void) size; return 0; }
EOF
cc=
for c in ${CLANG:-} clang-14 clang; do
	command -v "$c" >/dev/null 2>&1 || continue
	# shellcheck disable=SC2086 # flag lists
	if "$c" $FLAGS -o "$work/probe" "$work/probe.c" >"$work/probe.log" 2>&1 &&
		"$work/probe" -runs=1 >/dev/null 2>&1; then
		cc=$c
		break
	fi
done
if [ -z "$cc" ]; then
	not_ok "fuzz: no clang with a working libFuzzer runtime (Debian: apt-get install clang-14 libclang-rt-14-dev)"
	[ -s "$work/probe.log" ] && comment "$work/probe.log"
	finish
fi

# ---- each target ------------------------------------------------------------

srcs="client/src/stream/sse.c client/src/stream/stream.c client/src/stream/openai_stream.c
	client/src/stream/anthropic_stream.c client/src/stream/text_chunk.c client/src/stream/names.c client/src/core/buf.c
	client/src/core/json.c client/src/core/text.c"
for t in $targets; do
	bin=$work/$t
	corpus=test/fuzz/corpus/$t
	# shellcheck disable=SC2086,SC2046 # flag lists
	if ! "$cc" $FLAGS $WARN -Iclient/include -Iclient/src -I"$(pg_config --includedir)" $(pkg-config --cflags json-c) \
		-o "$bin" "test/fuzz/$t.c" $srcs $(pkg-config --libs json-c) >"$work/$t.cc.log" 2>&1; then
		not_ok "$t: builds with $cc -fsanitize=fuzzer,address,undefined"
		head -n 40 "$work/$t.cc.log" | comment
		continue
	fi

	# the committed corpus, each input once: the regression part
	shopt -s nullglob
	inputs=("$corpus"/*)
	shopt -u nullglob
	if [ ${#inputs[@]} -eq 0 ]; then
		not_ok "$t: its corpus $corpus is empty"
	elif "$bin" -rss_limit_mb=2048 -timeout=10 "${inputs[@]}" >"$work/$t.replay.log" 2>&1; then
		ok "$t: replays its ${#inputs[@]} corpus inputs without a crash, a leak or a broken invariant"
	else
		not_ok "$t: replaying its corpus"
		grep -v '^Running: \|^Executed ' "$work/$t.replay.log" | head -n 60 | comment
	fi

	# fuzzing for a bounded time; new inputs go to a scratch directory
	mkdir -p "$work/new-$t" "$work/art-$t"
	dict=
	[ -f "test/fuzz/$t.dict" ] && dict=-dict=test/fuzz/$t.dict
	"$bin" -max_total_time="$secs" -max_len=8192 -timeout=10 -rss_limit_mb=2048 \
		-print_final_stats=1 -artifact_prefix="$work/art-$t/" $dict \
		"$work/new-$t" "$corpus" >"$work/$t.log" 2>&1
	rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *\([0-9]*\).*/\1/p' "$work/$t.log" | tail -n 1)
	cov=$(grep -o 'cov: [0-9]*' "$work/$t.log" | tail -n 1)
	shopt -s nullglob
	found=("$work/art-$t"/*)
	shopt -u nullglob
	if [ "$rc" -eq 0 ] && [ ${#found[@]} -eq 0 ]; then
		ok "$t: ${secs} s, ${execs:-?} runs, ${cov:-cov: ?}, no crash"
	else
		mkdir -p "$artifacts"
		kept=
		for f in "${found[@]}"; do
			cp "$f" "$artifacts/$t-$(basename "$f")" && kept="$kept $artifacts/$t-$(basename "$f")"
		done
		not_ok "$t: crashed after ${execs:-?} runs (exit $rc); input kept in:${kept:- (none written)}"
		grep -v '^#[0-9]\|^INFO:\|^\s*$' "$work/$t.log" | head -n 80 | comment
		for f in "${found[@]}"; do
			echo "# input $(basename "$f") ($(wc -c <"$f") bytes), C-escaped:"
			od -An -c -v "$f" | head -n 20 | comment
		done
	fi
done

finish
