#!/usr/bin/env bash
# The examples of examples/ as a user builds them, and the README's copies.
#
#   test/examples.sh [DIR]
#
# DIR is a running cluster started by test/cluster.sh (test/run.sh passes its
# own); without it a private cluster is started and removed at the end.  The
# extension must be installed (make install).
#
# 1. libmnemo is installed into a temporary prefix (make client-install
#    PREFIX=...), as a user installs it;
# 2. each examples/NAME.c is compiled as its header comment says, with
#    $(pkg-config --cflags --libs mnemo) and -std=c11 -Wall -Wextra -Werror,
#    against that install, and run in a fresh database of its own.  An
#    example checks its own results and exits non-zero on a wrong one.
#    Each is also built against the sanitized static library and run under
#    ASan, LeakSanitizer and UBSan: an example must not leak what it teaches
#    to free.  examples/NAME.script, when there is one, is played by the local
#    provider server (test/provider_server), which the example reaches
#    through OPENAI_BASE_URL; each examples/NAME.sql runs in psql
#    (ON_ERROR_STOP) and ends with DO blocks that ASSERT its results;
# 3. the README cannot drift from the files: every C block of README.md and
#    doc/*.md (and every SQL block so marked) is marked with the file it
#    comes from, and is that file
#    (<!-- file: examples/X.c -->) or a run of its lines
#    (<!-- from: examples/X.c -->), byte for byte.  The checker is itself
#    checked on a README with one line changed.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
cd "$here/.." || exit 1
setup_cluster examples "${1:-}"

# ---- 1. the install ------------------------------------------------------

prefix=$tmp/prefix
installed=
if make -s --no-print-directory client-install PREFIX="$prefix" >"$tmp/install.log" 2>&1 &&
	[ -f "$prefix/lib/pkgconfig/mnemo.pc" ]; then
	installed=1
	ok "make client-install PREFIX=... installs libmnemo with its pkg-config file"
else
	not_ok "make client-install PREFIX=... installs libmnemo with its pkg-config file"
	tail -n 20 "$tmp/install.log" | sed 's/^/#   /'
fi
# the install rewrote client/mnemo.pc for its prefix: put back the default
make -s -C client mnemo.pc >/dev/null 2>&1 || true

# ---- 2. build and run each example -----------------------------------------

srv=test/provider_server/provider-server
srv_pid=
stop_server() {
	if [ -n "$srv_pid" ]; then
		kill -TERM "$srv_pid" 2>/dev/null || true
		wait "$srv_pid" 2>/dev/null || true
		srv_pid=
	fi
}

# start_server SCRIPT: the provider server playing SCRIPT; sets OPENAI_*.
start_server() {
	rm -f "$tmp/port"
	"$srv" --script "$1" --port-file "$tmp/port" --log "$tmp/requests.log" --quiet &
	srv_pid=$!
	pids+=("$srv_pid")
	for _ in $(seq 200); do [ -s "$tmp/port" ] && break; sleep 0.05; done
	[ -s "$tmp/port" ] || return 1
	OPENAI_BASE_URL=http://127.0.0.1:$(cat "$tmp/port")/v1
	export OPENAI_BASE_URL OPENAI_API_KEY=example-key
	unset ANTHROPIC_API_KEY ANTHROPIC_BASE_URL
}

shopt -s nullglob
examples=(examples/*.c)
shopt -u nullglob
[ ${#examples[@]} -gt 0 ] || not_ok "examples/*.c: there are examples"
if compgen -G "examples/*.script" >/dev/null &&
	! make -s -C test/provider_server >"$tmp/server-build.log" 2>&1; then
	not_ok "the provider test server builds (make -C test/provider_server)"
	tail -n 20 "$tmp/server-build.log" | sed 's/^/#   /'
fi

# run_example NAME OUT COMMAND...: run a built example in a fresh database
# of its own, with the provider server when it has a script; its exit status.
run_example() {
	local name=$1 out=$2 rc=0 script=examples/$1.script
	shift 2
	if [ -f "$script" ] && ! start_server "$script"; then
		echo "the provider server playing $script did not start" >"$out"
		stop_server
		return 1
	fi
	exdb=example_$name
	fresh_db "$exdb"
	psql -X -q -v ON_ERROR_STOP=1 -d "$exdb" -c "CREATE EXTENSION mnemo"
	PGDATABASE=$exdb timeout -k 5 120 "$@" >"$out" 2>&1 || rc=$?
	stop_server
	dropdb --if-exists "$exdb" >/dev/null 2>&1 || true
	return "$rc"
}

# The sanitized library test/client/run.sh uses (built here if missing), so
# that an example which leaks, or teaches a leak, fails.
SANFLAGS="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
asan_lib=client/build-asan/libmnemo.a
if ! make -s -C client SANITIZE=1 >"$tmp/asan-build.log" 2>&1 || [ ! -f "$asan_lib" ]; then
	not_ok "the ASan+UBSan build of libmnemo (make -C client SANITIZE=1)"
	tail -n 20 "$tmp/asan-build.log" | sed 's/^/#   /'
	asan_lib=
fi

for src in "${examples[@]}"; do
	name=$(basename "$src" .c)
	bin=$tmp/$name
	if [ -z "$installed" ]; then
		not_ok "examples/$name.c: no install to build it against"
		continue
	fi
	# shellcheck disable=SC2016 # expanded by the inner sh, as a user types it
	if PKG_CONFIG_PATH=$prefix/lib/pkgconfig sh -c \
		'cc -std=c11 -Wall -Wextra -Werror -o "$1" "$2" $(pkg-config --cflags --libs mnemo)' \
		sh "$bin" "$src" >"$tmp/$name.cc.log" 2>&1; then
		ok "examples/$name.c compiles with -Wall -Wextra -Werror and pkg-config against the install"
	else
		not_ok "examples/$name.c compiles with -Wall -Wextra -Werror and pkg-config against the install"
		head -n 30 "$tmp/$name.cc.log" | sed 's/^/#   /'
		continue
	fi
	rc=0
	LD_LIBRARY_PATH=$prefix/lib run_example "$name" "$tmp/$name.out" "$bin" || rc=$?
	if [ "$rc" -eq 0 ]; then
		ok "examples/$name.c runs against the test cluster and its checks hold"
		head -n 12 "$tmp/$name.out" | sed 's/^/#   /'
	else
		not_ok "examples/$name.c runs against the test cluster and its checks hold (exit status $rc)"
		tail -n 30 "$tmp/$name.out" | sed 's/^/#   /'
	fi

	[ -n "$asan_lib" ] || continue
	# shellcheck disable=SC2046,SC2086 # flag lists
	if ! cc -std=c11 -g -O1 -Wall -Wextra -Werror $SANFLAGS -Iclient/include -o "$bin.asan" "$src" \
		"$asan_lib" -L"$(pg_config --libdir)" -lpq $(pkg-config --libs json-c libcurl libcrypto) -pthread \
		>"$tmp/$name.asan.cc.log" 2>&1; then
		not_ok "examples/$name.c compiles with ASan and UBSan"
		head -n 30 "$tmp/$name.asan.cc.log" | sed 's/^/#   /'
		continue
	fi
	logdir=$tmp/san-$name
	mkdir -p "$logdir"
	rc=0
	ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:log_path=$logdir/asan" \
		UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:log_path=$logdir/ubsan" \
		run_example "$name" "$tmp/$name.asan.out" "$bin.asan" || rc=$?
	if [ "$rc" -eq 0 ] && ! compgen -G "$logdir/*" >/dev/null; then
		ok "examples/$name.c runs under ASan, LeakSanitizer and UBSan with no report"
	else
		not_ok "examples/$name.c runs under ASan, LeakSanitizer and UBSan with no report (exit status $rc)"
		tail -n 10 "$tmp/$name.asan.out" | sed 's/^/#   /'
		cat "$logdir"/* 2>/dev/null | head -n 40 | sed 's/^/#   /'
	fi
done

# doc/c-api.md's static link, as it is written there
if [ -n "$installed" ]; then
	# shellcheck disable=SC2016 # expanded by the inner sh, as a user types it
	if PKG_CONFIG_PATH=$prefix/lib/pkgconfig sh -c 'cc -std=c11 -Wall -Wextra -Werror -o "$1" "$2" \
		$(pkg-config --cflags mnemo) "$(pkg-config --variable=libdir mnemo)/libmnemo.a" \
		$(pkg-config --libs libpq json-c libcurl libcrypto)' sh "$tmp/quickstart.static" examples/quickstart.c \
		>"$tmp/static.cc.log" 2>&1 && run_example quickstart "$tmp/static.out" "$tmp/quickstart.static"; then
		ok "examples/quickstart.c links the static libmnemo.a as doc/c-api.md says, and runs"
	else
		not_ok "examples/quickstart.c links the static libmnemo.a as doc/c-api.md says, and runs"
		cat "$tmp/static.cc.log" "$tmp/static.out" 2>/dev/null | tail -n 20 | sed 's/^/#   /'
	fi
fi

# the SQL examples: psql stops at the first error, and each ends with checks
for src in examples/*.sql; do
	[ -f "$src" ] || continue
	name=$(basename "$src" .sql)
	exdb=example_sql_$name
	fresh_db "$exdb"
	psql -X -q -v ON_ERROR_STOP=1 -d "$exdb" -c "CREATE EXTENSION mnemo"
	if psql -X -v ON_ERROR_STOP=1 -d "$exdb" -f "$src" >"$tmp/$name.sql.out" 2>&1; then
		ok "examples/$name.sql runs in psql and its checks hold"
	else
		not_ok "examples/$name.sql runs in psql and its checks hold"
		tail -n 20 "$tmp/$name.sql.out" | sed 's/^/#   /'
	fi
	dropdb --if-exists "$exdb" >/dev/null 2>&1 || true
done

# ---- 3. the README's copies ------------------------------------------------

# check_blocks DOC: every ```c block of DOC, and every marked ```sql block,
# is equal to its file (or to a run of its lines); prints one problem a
# line, fails if any or if DOC has no marked block at all.
check_blocks() {
	local doc=$1 line mark='' path kind lang='' in_block='' block='' text lineno=0 start=0 bad=0 nblocks=0
	while IFS= read -r line || [ -n "$line" ]; do
		lineno=$((lineno + 1))
		if [ -n "$in_block" ]; then
			if [ "$line" = '```' ]; then
				in_block=
				[ -n "$mark" ] && nblocks=$((nblocks + 1))
				if [ -z "$mark" ]; then
					if [ "$lang" = c ]; then
						echo "$doc:$start: a C block with no <!-- file: ... --> or <!-- from: ... --> mark"
						bad=1
					fi
				else
					kind=${mark%% *}
					path=${mark#* }
					if [ ! -f "$path" ]; then
						echo "$doc:$start: $path does not exist"
						bad=1
					else
						text=$(cat "$path")
						if [ "$kind" = file ] && [ "$block" != "$text" ]; then
							echo "$doc:$start: differs from $path (copy the file into the block)"
							bad=1
						elif [ "$kind" = from ] && [[ $'\n'$text$'\n' != *$'\n'"$block"$'\n'* ]]; then
							echo "$doc:$start: is not a run of lines of $path (copy them from the file)"
							bad=1
						fi
					fi
				fi
				mark=
			else
				[ "$lineno" -gt $((start + 1)) ] && block+=$'\n'
				block+=$line
			fi
			continue
		fi
		if [[ $line =~ ^\<!--\ (file|from):\ ([^ ]+)\ --\>$ ]]; then
			mark="${BASH_REMATCH[1]} ${BASH_REMATCH[2]}"
		elif [ "$line" = '```c' ] || [ "$line" = '```sql' ]; then
			lang=${line#\`\`\`}
			in_block=1
			block=
			start=$lineno
		elif [ -n "$line" ]; then
			mark=
		fi
	done <"$doc"
	[ "$bad" -eq 0 ] && [ "$nblocks" -gt 0 ]
}

docs=(README.md)
shopt -s nullglob
for f in doc/*.md; do grep -q '^<!-- f[a-z]*: examples/' "$f" && docs+=("$f"); done
shopt -u nullglob
for doc in "${docs[@]}"; do
	if check_blocks "$doc" >"$tmp/blocks.log" 2>&1; then
		ok "$doc: every C block is a marked copy of a file in examples/ ($(grep -c '^<!-- f[a-z]*: examples/' "$doc") copies)"
	else
		not_ok "$doc: every C block is a marked copy of a file in examples/"
		sed 's/^/#   /' "$tmp/blocks.log"
	fi
done

# the checker must see a one-character change in a copied block
if grep -q '^<!-- file: ' README.md; then
	awk '/^<!-- file: / { armed = 1 } armed && /^[ \t]*return/ && !done { sub(/return/, "return  "); done = 1 } { print }' \
		README.md >"$tmp/README.changed.md"
	if ! cmp -s README.md "$tmp/README.changed.md" && ! check_blocks "$tmp/README.changed.md" >/dev/null 2>&1; then
		ok "the copy check fails on a README whose copied example has one line changed"
	else
		not_ok "the copy check fails on a README whose copied example has one line changed"
	fi
else
	not_ok "README.md includes at least one whole example (<!-- file: examples/... -->)"
fi

summary examples
