#!/usr/bin/env bash
# The judge's speed on a GPU machine, as a transcript for evidence/: scripts/bench-check.sh on this
# build and, when CUDOJO_BUILD_BEFORE names an older build (scripts/pack-device-build.sh of an
# earlier commit), on that one too, so the two tables come from the same machine and hour.
#   CUDOJO_BUILD_BEFORE=.device-build-before scripts/perf-check.sh [TRANSCRIPT] [RUNS]
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/transcript.sh
start_transcript perf "${1:-}"
runs=${2:-5}

echo "# cudojo perf check"
print_provenance scripts/perf-check.sh "$@"
echo
if [ -n "${CUDOJO_BUILD_BEFORE:-}" ]; then
  echo "## Before: $CUDOJO_BUILD_BEFORE"
  CUDOJO_BUILD=$CUDOJO_BUILD_BEFORE scripts/bench-check.sh "$runs"
  echo
fi
echo "## After: $build"
CUDOJO_BUILD=$build scripts/bench-check.sh "$runs"
