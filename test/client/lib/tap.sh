# shellcheck shell=bash
# TAP for the client's shell tests (cli.sh, transcripts.sh, manners.sh,
# file.sh, keyless.sh, chat.sh), sourced after each has set M (the mnemo
# command) and work (its scratch folder); each prints its own plan from $n
# and fails on $failed.
n=0
failed=0
ok() {
	n=$((n + 1))
	echo "ok $n - $*"
}
not_ok() {
	n=$((n + 1))
	failed=$((failed + 1))
	echo "not ok $n - $*"
}
# check DESCRIPTION COMMAND...: ok when the command succeeds
check() {
	local desc=$1
	shift
	if "$@"; then ok "$desc"; else not_ok "$desc"; fi
}
# is GOT WANT DESCRIPTION
is() {
	if [ "$1" = "$2" ]; then
		ok "$3"
	else
		not_ok "$3"
		echo "#   got:  '$1'"
		echo "#   want: '$2'"
	fi
}
# run_m ARGS...: mnemo with stdout and stderr in $work/out, $work/err; sets rc
run_m() {
	"$M" "$@" >"$work/out" 2>"$work/err"
	rc=$?
}
# expect_rc WANT DESCRIPTION: the last run_m's exit status
expect_rc() {
	if [ "$rc" -eq "$1" ]; then
		ok "$2 (exit $rc)"
	else
		not_ok "$2: exit $rc, want $1"
		sed 's/^/# stderr: /' "$work/err" | head -n 5
	fi
}
psql_q() { psql -X -q -A -t -v ON_ERROR_STOP=1 "$@"; }
