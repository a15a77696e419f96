# bench/profiles/private_cluster.sh: sourced by a profile script, a private
# cluster (test/cluster.sh settings) in a temporary directory, stopped and
# removed when the script exits; the PG* environment names it.
#
#   . "$(dirname "$0")/private_cluster.sh" NAME PORT
#
# Sets here (the repository) and dir (the cluster's directory, where the
# script may keep its own files too).
here=$(cd "$(dirname "$0")/../.." && pwd)
dir=$(mktemp -d "/tmp/mnemo-$1.XXXXXX")
export MNEMO_TEST_PORT=$2
private_cluster_stop() {
	bash "$here/test/cluster.sh" stop "$dir" >/dev/null 2>&1 || true
	rm -rf "$dir"
}
trap private_cluster_stop EXIT
bash "$here/test/cluster.sh" start "$dir" >/dev/null
eval "$(bash "$here/test/cluster.sh" env "$dir")"
export PGDATABASE=postgres
