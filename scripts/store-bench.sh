#!/usr/bin/env bash
# The stores' ceiling with no judging (tests/bench/store_bench.cc): jobs queued, claimed, moved through
# four phases and finished per second, with event-stream polls beside them, on SQLite (one node)
# and on PostgreSQL (a throwaway local cluster, two nodes). Needs no GPU.
#   scripts/store-bench.sh [TRANSCRIPT]     default: evidence/<UTC date>-cpu-store-bench.txt
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/transcript.sh
start_transcript store-bench "${1:-evidence/$(date -u +%Y-%m-%d)-cpu-store-bench.txt}"

echo "# cudojo store bench"
print_provenance scripts/store-bench.sh "$@"
bench="$build/cudojo_store_bench"
[ -x "$bench" ] || { echo "build $bench first (cmake --build build)"; exit 2; }
work=$(mktemp -d)
trap 'tests/postgres/cluster.sh stop "$work/pg" >/dev/null 2>&1; rm -rf "$work"' EXIT

echo
echo "## SQLite, one node (its only deployment), 4 slots"
"$bench" "$work/bench.sqlite3" --jobs 2000 --nodes 1 --threads 4

url=$(tests/postgres/cluster.sh start "$work/pg") || exit 1
for shape in "1 4" "2 4" "4 4"; do
  read -r nodes threads <<< "$shape"
  database="bench_${nodes}x${threads}"
  psql "$url" -qc "CREATE DATABASE $database" || exit 1
  echo
  echo "## PostgreSQL 15 on loopback, $nodes node(s) x $threads slots (fsync off: a test cluster)"
  "$bench" "${url%/*}/$database" --jobs 2000 --nodes "$nodes" --threads "$threads"
done
