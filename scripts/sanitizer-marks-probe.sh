#!/usr/bin/env bash
# Probes compute-sanitizer on this GPU for what a kept racecheck or synccheck worker needs: a kernel
# each tool reports every time it runs (the end-of-job mark), when the report reaches the log file,
# and how a tool's start-up splits between the process start and CUDA's. Needs a GPU and nvcc.
#   scripts/sanitizer-marks-probe.sh [TRANSCRIPT]
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/transcript.sh
start_transcript sanitizer-marks "${1:-}"
print_provenance "$0 $*"
work=$(mktemp -d)
arch=sm_$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)
nvcc -O2 -arch="$arch" -lineinfo -o "$work/probe" scripts/probes/sanitizer_marks.cu || exit 1
run() {  # TOOL MODE
  local tool=$1 mode=$2 log=$work/$1-$2.log started
  echo "### $tool, $mode"
  started=$(date +%s%N)
  if [[ $tool == none ]]; then
    PROBE_SPAWNED_NS=$started timeout 60 "$work/probe" "$mode"
  else
    PROBE_SPAWNED_NS=$started timeout 60 compute-sanitizer --tool "$tool" --log-file "$log" "$work/probe" "$mode" "$log"
  fi
  echo "exit $?, wall $(( ($(date +%s%N) - started) / 1000000 )) ms"
  [[ -f $log ]] && { echo "--- $log"; cat "$log"; }
}
for tool in none memcheck racecheck synccheck; do run "$tool" noop; done
run racecheck race
for candidate in sync_mask sync_shfl sync_one_warp sync_half_warp; do run synccheck "$candidate"; done
run memcheck race
rm -rf "$work"
