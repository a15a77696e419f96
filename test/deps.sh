#!/usr/bin/env bash
# Install the Debian packages mnemo builds and tests with, when missing.
# Used by `make demo`, `make test` and .ci/run; a no-op when all are present.
set -euo pipefail

packages=(
	postgresql-15 postgresql-server-dev-15 postgresql-15-pgtap
	libtap-parser-sourcehandler-pgtap-perl libpq-dev libcurl4-openssl-dev
	libjson-c-dev libssl-dev build-essential pkg-config util-linux procps sed curl
	clang-14 libclang-rt-14-dev man-db groff-base jq
)

# --list: print the packages, for .ci/run's unconditional install
if [ "${1:-}" = --list ]; then
	echo "${packages[@]}"
	exit 0
fi

missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" != 0 ]; then
	echo "missing packages: ${missing[*]}; install them as root (apt-get install ${missing[*]})" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y "${missing[@]}"
