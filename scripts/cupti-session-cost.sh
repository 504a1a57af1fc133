#!/usr/bin/env bash
# Where a CUPTI range-profiler session's time goes on this GPU, and what keeping the profiler
# enabled in a warm worker would save (issue #25: each job's first profiling pass costs 150-250 ms
# before its first launch). Also asks whether another process can run kernels, enable its own range
# profiler, or time a kernel undisturbed, while one process keeps its profiler enabled.
#   scripts/cupti-session-cost.sh [TRANSCRIPT]   default: evidence/<UTC date>-<gpu>-cupti-session-cost.txt
# Needs nvcc and libcupti (CUDA_HOME, default /usr/local/cuda); no build of cudojo.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/transcript.sh
start_transcript cupti-session-cost "${1:-}"
cuda=${CUDA_HOME:-/usr/local/cuda}
export PATH="$PATH:$cuda/bin"

echo "# A CUPTI range-profiler session, call by call (times in ms)"
print_provenance scripts/cupti-session-cost.sh "$@"
echo

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cupti_lib=$(dirname "$(find "$cuda/" -name 'libcupti.so' 2>/dev/null | head -1)")
nvcc -O2 -std=c++17 -arch=sm_90 -I"$cuda/extras/CUPTI/include" -o "$work/cupti_session_cost" \
  scripts/probes/cupti_session_cost.cu -L"$cupti_lib" -lcupti -lcuda -Xlinker -rpath="$cupti_lib" ||
  { echo "nvcc failed"; exit 1; }
"$work/cupti_session_cost"
echo "exit: $?"
