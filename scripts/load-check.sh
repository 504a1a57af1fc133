#!/usr/bin/env bash
# The hostile-load test (tests/load/hostile_load.py, also a ctest) as a transcript for evidence/:
#   scripts/load-check.sh [TRANSCRIPT]
# Needs no GPU: the server runs without judging workers and every attack is on loopback.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/transcript.sh
start_transcript load "${1:-}"
echo "# cudojo hostile-load check"
print_provenance scripts/load-check.sh "$@"
echo "cpu:     $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo)"
echo
python3 tests/load/hostile_load.py "$cudojo"
