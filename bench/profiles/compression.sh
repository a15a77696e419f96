#!/usr/bin/env bash
# bench/profiles/compression.sh: what the parts of the real transcripts take
# on disk with each way of compressing their content (doc/operations.md,
# "Compression of parts").
#
#   bash bench/profiles/compression.sh [TRANSCRIPTS]   (default ../shared/data/transcripts)
#
# Imports every transcript under TRANSCRIPTS (each *.jsonl, *.json and
# *.traj but metadata.json) with the mnemo command into three databases:
#   installed   as CREATE EXTENSION leaves it: content from 256 bytes on in
#               a row short of 2 kB by lz4, longer rows by the toaster (pglz)
#   long_only   as 0.10.0 stored it: the early compression stopped by an
#               index over content (src/core/insert_direct.c leaves an
#               indexed column alone), long rows by the toaster (pglz)
#   lz4         the column's method lz4: every value by lz4
# and prints each database's parts: their number, heap, TOAST, and heap plus
# TOAST plus maps (the index over content is not counted).
#
# Connects with the PG* environment, as a superuser, to a cluster whose
# PostgreSQL has mnemo installed; makes and drops databases
# mnemo_compression_*.  Needs client/mnemo (make client).
set -euo pipefail
cd "$(dirname "$0")/../.."

dir=${1:-../shared/data/transcripts}
M=$PWD/client/mnemo
[ -x "$M" ] || { echo "compression.sh: build the mnemo command first (make client)" >&2; exit 1; }
mapfile -t files < <(find "$dir" -type f \( -name '*.jsonl' -o -name '*.json' -o -name '*.traj' \) \
	! -name metadata.json | sort)
[ "${#files[@]}" -gt 0 ] || { echo "compression.sh: no transcripts under $dir" >&2; exit 1; }

printf '%d transcripts from %s\n' "${#files[@]}" "$dir"
printf '%-10s %8s %12s %12s %12s\n' way parts heap toast total
for way in installed long_only lz4; do
	db=mnemo_compression_$way
	dropdb --if-exists "$db" 2>/dev/null
	createdb "$db"
	psql -X -q -v ON_ERROR_STOP=1 -d "$db" -c "CREATE EXTENSION mnemo"
	case $way in
	long_only)
		psql -X -q -v ON_ERROR_STOP=1 -d "$db" \
			-c "CREATE INDEX compression_off ON mnemo.log ((content IS NULL))" ;;
	lz4)
		psql -X -q -v ON_ERROR_STOP=1 -d "$db" \
			-c "ALTER TABLE mnemo.log ALTER COLUMN content SET COMPRESSION lz4" ;;
	esac
	for f in "${files[@]}"; do
		PGDATABASE=$db "$M" import "$f" >/dev/null 2>&1 || { echo "compression.sh: mnemo import $f failed" >&2; exit 1; }
	done
	psql -X -At -F ' ' -d "$db" -c "
		SELECT '$way', (SELECT count(*) FROM mnemo.message_parts),
		       pg_relation_size(c.oid), pg_relation_size(c.reltoastrelid),
		       pg_total_relation_size(c.oid) - pg_indexes_size(c.oid)
		  FROM pg_class c WHERE c.oid = 'mnemo.message_parts'::regclass" |
		while read -r w n heap toast total; do
			printf '%-10s %8d %12d %12d %12d\n' "$w" "$n" "$heap" "$toast" "$total"
		done
	dropdb "$db"
done
