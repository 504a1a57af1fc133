#!/usr/bin/env bash
# Captures compute-sanitizer's raw logs for the parser's test fixtures (tests/fixtures/sanitizer/):
# a missing barrier (racecheck), a divergent barrier (synccheck), an unguarded load (memcheck),
# and a correct kernel (all three clean). Needs a GPU.
#   scripts/capture-sanitizer-fixtures.sh OUTPUT_DIR
set -euo pipefail
cd "$(dirname "$0")/.."
build=${CUDOJO_BUILD:-build}
out=${1:?output folder}
mkdir -p "$out"
export CUDOJO_KEEP_SANITIZER_LOGS=$out NO_COLOR=1
for pair in reduction/3:tests/submissions/reduction-3/missing_barrier.cu \
            reduction/3:tests/submissions/reduction-3/divergent_barrier.cu \
            reduction/2:tests/submissions/reduction-2/unguarded_load.cu \
            reduction/3:course/reduction/03-block-tree/reference.cu; do
  echo "### ${pair#*:}"
  "$build/cudojo" check "${pair%%:*}" "${pair#*:}" || true
done
ls -la "$out"
