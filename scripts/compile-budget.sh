#!/usr/bin/env bash
# Measures what compiling legitimate kernels costs, to set the compile limits in src/common/limits.h
# (compile_budget_ms and compile_memory_bytes for NVRTC, frontend_budget_ms for Python and Rust):
#   scripts/compile-budget.sh [TRANSCRIPT]     default: evidence/<UTC date>-cpu-compile-budget.txt
# For every reference and starter of the course in CUDA C++, Python and Rust, and every corpus file
# that is meant to compile, it runs `cudojo build` (CPU only: every compile the judge makes of that
# file, the barrier-counting build and a second kernel included) and prints its wall time and peak
# memory, slowest first. The memory is the cudojo process's, where `build` runs NVRTC; Python and
# Rust compile in a sandboxed child with its own limit (frontend_memory_bytes). No GPU needed.
set -uo pipefail
cd "$(dirname "$0")/.."
build=${CUDOJO_BUILD:-build}
transcript=${1:-evidence/$(date -u +%Y-%m-%d)-cpu-compile-budget.txt}
exec > >(tee "$transcript") 2>&1
echo "# cudojo compile budget"
echo "date:    $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
echo "command: scripts/compile-budget.sh $*"
echo "tree:    $(find src course tests scripts -type f | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -c1-16) (sha256 of src course tests scripts)"
echo "host:    $(uname -srm), $(nproc) cores"
echo
rows=$(mktemp)
timing=$(mktemp)
measure() {  # STAGE FILE
  /usr/bin/time -f "%e %M" -o "$timing" "$build/cudojo" build "$1" "$2" -o /dev/null >/dev/null 2>&1
  echo "$(tail -1 "$timing") $1 $2" >>"$rows"
}
for folder in course/*/*/; do
  [ -f "$folder/stage.toml" ] || continue
  stage=$(grep '^id = ' "$folder/stage.toml" | cut -d'"' -f2)
  for file in "$folder"reference.* "$folder"starter.*; do measure "$stage" "$file"; done
done
for file in tests/submissions/*/*.cu tests/submissions/*/*.py tests/submissions/*/*.rs; do
  head -1 "$file" | grep -q 'verdict=compile_error' && continue
  folder=$(basename "$(dirname "$file")")
  measure "${folder/-//}" "$file"
done
printf '%-10s %-10s %-14s %s\n' "wall s" "peak MB" stage file
sort -rn "$rows" | awk '{printf "%-10s %-10.0f %-14s %s\n", $1, $2 / 1024, $3, $4}'
echo
echo "files: $(wc -l <"$rows"); slowest: $(sort -rn "$rows" | head -1 | awk '{print $1 " s, " $4}'); most memory: $(sort -k2 -rn "$rows" | head -1 | awk '{printf "%.0f MB, %s", $2 / 1024, $4}')"
rm -f "$rows" "$timing"
