#!/usr/bin/env bash
# Proves the GPU's profiling process (run/gpu_profiler.h) on a machine with an NVIDIA GPU and writes
# the transcript evidence/ keeps. From the repository root after scripts/setup.sh (or with a copied
# build: CUDOJO_BUILD=.device-build):
#   scripts/profiling-process-check.sh [TRANSCRIPT]   default: evidence/<UTC date>-<gpu>-profiling-process-check.txt
# It runs CUPTI's range profiler kept enabled between profiles (each later one must find it enabled,
# measure as the first did and start its passes sooner; a configuration with SM throughput enabled
# anew and kept), the judge's session tests, and a server slot profiling through the process: two
# profiles of one kernel, a faulting kernel between, then hot spots by Nsight Compute (the process
# let go first) and one more profile. Exit 0 only if every test passed.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/transcript.sh
start_transcript profiling-process-check "${1:-}"

echo "# The GPU's profiling process"
print_provenance scripts/profiling-process-check.sh "$@"
failures=0
echo
echo "## CUPTI kept enabled, and the judge's GPU session (unit tests)"
"$build/cudojo_unit_tests" --gtest_filter='CuptiOnAGpu.*:GpuSessionTest.*' || failures=$((failures + 1))
echo
echo "## A server slot profiling through the process (end-to-end)"
"$build/cudojo_e2e_tests" --gtest_filter='Gpu.AServerSlotProfilesThroughTheGpusProfilingProcessAndNcuStillCounts' ||
  failures=$((failures + 1))
echo
echo "failed groups: $failures"
exit $((failures > 0))
