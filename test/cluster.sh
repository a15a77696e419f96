#!/usr/bin/env bash
# A private PostgreSQL cluster for tests, demos and benchmarks.
#
#   test/cluster.sh start DIR   initdb (if needed) and start a cluster in DIR,
#                               unix socket in DIR only, no TCP
#   test/cluster.sh stop DIR    fast shutdown
#   test/cluster.sh crash DIR   immediate shutdown (no checkpoint: crash recovery on start)
#   test/cluster.sh env DIR     print the PG* variables that reach it
#
# initdb refuses to run as root, so as root the cluster belongs to the
# postgres user (created by the Debian package) and DIR is handed to it.
set -euo pipefail

PGBIN=${PGBIN:-$(pg_config --bindir)}
cmd=${1:?usage: cluster.sh start|stop|crash|env DIR}
dir=$(realpath -m "${2:?usage: cluster.sh start|stop|crash|env DIR}")
port=${MNEMO_TEST_PORT:-54329}

as_owner() {
	if [ "$(id -u)" = 0 ]; then
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}

case "$cmd" in
start)
	mkdir -p "$dir"
	[ "$(id -u)" = 0 ] && chown postgres: "$dir"
	if [ ! -f "$dir/data/PG_VERSION" ]; then
		as_owner "$PGBIN/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log"
		cat >>"$dir/data/postgresql.conf" <<CONF
listen_addresses = ''
unix_socket_directories = '$dir'
port = $port
max_connections = 100
shared_buffers = 256MB
fsync = on
log_min_messages = warning
CONF
	fi
	as_owner "$PGBIN/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start >/dev/null
	;;
stop)
	as_owner "$PGBIN/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null
	;;
crash)
	as_owner "$PGBIN/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null
	;;
env)
	echo "export PGHOST='$dir' PGPORT=$port PGUSER=postgres PGDATABASE=postgres"
	;;
*)
	echo "usage: cluster.sh start|stop|crash|env DIR" >&2
	exit 2
	;;
esac
