#!/usr/bin/env bash
# How many replay passes each hardware metric of the judge's profile costs on this GPU, and what
# cheaper metrics that say nearly the same would cost (issue #25: the profile's passes are most of
# the time a correct job holds the GPU alone). Nsight Compute prints the passes of each profiled
# kernel; its kernel replay needs the same passes as the CUPTI range profiler the worker uses.
#   scripts/profiler-passes.sh [TRANSCRIPT]   default: evidence/<UTC date>-<gpu>-profiler-passes.txt
# Needs nvcc and ncu on PATH (or CUDA_HOME/bin); no build of cudojo.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/transcript.sh
start_transcript profiler-passes "${1:-}"
export PATH="$PATH:${CUDA_HOME:-/usr/local/cuda}/bin"

echo "# Replay passes per metric"
print_provenance scripts/profiler-passes.sh "$@"
echo

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
nvcc -O3 -arch=sm_90 -o "$work/profiled_sum" scripts/probes/profiled_sum.cu || { echo "nvcc failed"; exit 1; }

# The judge's metrics (src/measure/profiler.cc, profiler_metric_names), then candidates.
judged="sm__throughput.avg.pct_of_peak_sustained_elapsed dram__throughput.avg.pct_of_peak_sustained_elapsed gpu__time_duration.sum smsp__inst_executed_op_global_red.sum smsp__inst_executed_op_global_atom.sum"
candidates="sm__cycles_active.avg.pct_of_peak_sustained_elapsed sm__inst_executed.avg.pct_of_peak_sustained_elapsed dram__bytes_read.sum.pct_of_peak_sustained_elapsed dram__bytes.sum.pct_of_peak_sustained_elapsed gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"

# One ncu run: the metrics given (comma-separated), the passes it needed ("==PROF== Profiling
# "block_sum": 0%....100% - N passes", printed without --csv) and the values it read.
profile() {
  local label=$1 metrics=$2 log passes
  log=$(ncu --metrics "$metrics" --print-units base "$work/profiled_sum" 2>&1)
  passes=$(grep -o -- '- [0-9]* pass' <<<"$log" | head -1 | grep -o '[0-9]*')
  printf '%-70s passes %s\n' "$label" "${passes:-?}"
  for metric in ${metrics//,/ }; do grep -E "^ *$metric " <<<"$log" | head -1 | sed 's/^ */    /'; done
  [[ -n $passes ]] || { echo "    (no pass count; ncu said:)"; tail -5 <<<"$log" | sed 's/^/    /'; }
}

echo "## each of the judge's metrics alone"
for metric in $judged; do profile "$metric" "$metric"; done
echo
echo "## all of the judge's metrics together (what every correct job pays)"
profile "judge's five" "$(tr ' ' ',' <<<"$judged")"
echo
echo "## without the SM throughput breakdown"
profile "judge's five less sm__throughput" "$(tr ' ' '\n' <<<"$judged" | grep -v '^sm__throughput' | paste -sd,)"
echo
echo "## candidates, each alone"
for metric in $candidates; do profile "$metric" "$metric"; done
echo
echo "## duration, atomics and the cheapest SM and DRAM candidates together"
profile "duration, red, atom, sm__cycles_active, dram__bytes" "gpu__time_duration.sum,smsp__inst_executed_op_global_red.sum,smsp__inst_executed_op_global_atom.sum,sm__cycles_active.avg.pct_of_peak_sustained_elapsed,dram__bytes.sum.pct_of_peak_sustained_elapsed"
