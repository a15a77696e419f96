#!/usr/bin/env bash
# A private Citus cluster: a coordinator and two workers on loopback, each a
# test/cluster.sh cluster with citus preloaded, the database DB made on each
# with the citus extension, the workers added, mnemo created and
# mnemo.distribute() run, as doc/scale-out.md documents.
#
#   test/citus/cluster.sh start DIR DB   nodes in DIR/coordinator, DIR/worker1,
#                                        DIR/worker2, ports PORT, PORT+1, PORT+2
#   test/citus/cluster.sh stop DIR
#   test/citus/cluster.sh env DIR DB     the PG* variables of the coordinator
#
# PORT is MNEMO_CITUS_PORT (57430): TCP on 127.0.0.1, which is how Citus
# nodes reach each other, besides each node's unix socket in its directory.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cmd=${1:?usage: cluster.sh start|stop|env DIR [DB]}
dir=$(realpath -m "${2:?usage: cluster.sh start|stop|env DIR [DB]}")
db=${3:-mnemo_citus}
port=${MNEMO_CITUS_PORT:-57430}
nodes="coordinator worker1 worker2"

node_port() {
	case $1 in
	coordinator) echo "$port" ;;
	worker1) echo $((port + 1)) ;;
	worker2) echo $((port + 2)) ;;
	esac
}

# on NODE SQL...: psql on NODE's unix socket, database DB
on() {
	local node=$1
	shift
	psql -X -q -v ON_ERROR_STOP=1 -h "$dir/$node" -p "$(node_port "$node")" -U postgres -d "$db" "$@"
}

case "$cmd" in
start)
	mkdir -p "$dir"
	[ "$(id -u)" = 0 ] && chown postgres: "$dir"
	for node in $nodes; do
		MNEMO_TEST_PORT=$(node_port "$node") bash "$here/cluster.sh" start "$dir/$node"
		MNEMO_TEST_PORT=$(node_port "$node") bash "$here/cluster.sh" stop "$dir/$node"
		cat >>"$dir/$node/data/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
shared_preload_libraries = 'citus'
shared_buffers = 64MB
max_prepared_transactions = 20
citus.node_conninfo = 'sslmode=disable'
CONF
		MNEMO_TEST_PORT=$(node_port "$node") bash "$here/cluster.sh" start "$dir/$node"
		psql -X -q -v ON_ERROR_STOP=1 -h "$dir/$node" -p "$(node_port "$node")" -U postgres \
			-d postgres -c "CREATE DATABASE $db"
		on "$node" -c "CREATE EXTENSION citus"
	done
	on coordinator <<SQL
SELECT citus_set_coordinator_host('127.0.0.1', $port);
SELECT citus_add_node('127.0.0.1', $((port + 1)));
SELECT citus_add_node('127.0.0.1', $((port + 2)));
CREATE EXTENSION mnemo;
SELECT mnemo.distribute();
SQL
	;;
stop)
	for node in $nodes; do
		if [ -f "$dir/$node/data/postmaster.pid" ]; then
			MNEMO_TEST_PORT=$(node_port "$node") bash "$here/cluster.sh" stop "$dir/$node" || true
		fi
	done
	;;
env)
	echo "export PGHOST='$dir/coordinator' PGPORT=$port PGUSER=postgres PGDATABASE=$db"
	;;
*)
	echo "usage: cluster.sh start|stop|env DIR [DB]" >&2
	exit 2
	;;
esac
