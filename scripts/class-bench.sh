#!/usr/bin/env bash
# The class's grid and exports at class scale (issue #23): 300 learners x 12 stages with 30,000
# finished jobs, server time per request on SQLite and on PostgreSQL (a throwaway local cluster),
# by tests/bench/class_bench.py. Needs no GPU. The issue's target is 200 ms for the grid and the CSV.
#   [CUDOJO_BUILD=build] scripts/class-bench.sh [TRANSCRIPT] [-- BENCH OPTIONS]
#   default TRANSCRIPT: evidence/<UTC date>-cpu-class-grid.txt
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/transcript.sh
transcript_path=${1:-evidence/$(date -u +%Y-%m-%d)-cpu-class-grid.txt}
[ $# -gt 0 ] && shift
[ "${1:-}" = "--" ] && shift
start_transcript class-grid "$transcript_path"

echo "# cudojo class grid and export benchmark (issue #23)"
print_provenance scripts/class-bench.sh "$@"
echo "cpu:     $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo)"
[ -x "$cudojo" ] || { echo "build $cudojo first (scripts/setup.sh)"; exit 2; }
work=$(mktemp -d)
trap 'tests/postgres/cluster.sh stop "$work/pg" >/dev/null 2>&1; rm -rf "$work"' EXIT
postgres=()
if compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null; then
  url=$(tests/postgres/cluster.sh start "$work/pg") || exit 1
  echo "postgres: $(psql "$url" -tAc 'SHOW server_version') on loopback (a test cluster: fsync off)"
  postgres=(--postgres "$url")
else
  echo "postgres: not installed here (Debian's postgresql package); SQLite only"
fi
echo
python3 tests/bench/class_bench.py --cudojo "$cudojo" "${postgres[@]}" "$@"
