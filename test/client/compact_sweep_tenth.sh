#!/usr/bin/env bash
# The sweep of compact_sweep.sh at 1/10 of each session's context: reach the
# budget or exit 5 naming the floor.
#
# Run by test/client/run.sh with MNEMO_BIN and PGDATABASE; prints TAP.
MNEMO_SWEEP_FRACTIONS=10 exec bash "$(dirname "$0")/compact_sweep.sh"
