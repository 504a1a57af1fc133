#!/usr/bin/env bash
# The judge's own speed on a GPU machine: wall time of `cudojo check` from the command to the
# report, in a fresh process each run, for the cases issue #9 sets targets for, and where the time
# went (the report's timings_ms, median per step). Prints a table; writes no files except the
# transcript when one is named.
#   scripts/bench-check.sh [RUNS]          RUNS per case, default 5
#   CUDOJO_BUILD=.device-build-before scripts/bench-check.sh    the same table for another build
set -uo pipefail
cd "$(dirname "$0")/.."
build=${CUDOJO_BUILD:-build}
runs=${1:-5}
export NO_COLOR=1

# case name | stage | file | extra flags | target (s)
cases=(
  "full check, stage-3 reference|reduction/3|course/reduction/03-block-tree/reference.cu||2.0"
  "full check, stage-4 reference|reduction/4|course/reduction/04-warp-shuffle/reference.cu||2.0"
  "compile error|reduction/2|tests/submissions/reduction-2/compile_error.cu||0.3"
  "wrong answer (missing barrier)|reduction/3|tests/submissions/reduction-3/missing_barrier.cu||1.0"
  "stage-3 reference, --no-sanitize|reduction/3|course/reduction/03-block-tree/reference.cu|--no-sanitize|"
  "stage-3 reference, --no-sanitize --no-profile|reduction/3|course/reduction/03-block-tree/reference.cu|--no-sanitize --no-profile|"
)

echo "build: $build, $runs runs per case, a fresh process each run"
printf '%-46s %-14s %8s %8s %8s %8s  %s\n' case verdict median min max target steps
for entry in "${cases[@]}"; do
  IFS='|' read -r name stage file flags target <<<"$entry"
  reports=()
  walls=()
  for _ in $(seq 1 "$runs"); do
    start=$(date +%s%N)
    # shellcheck disable=SC2086
    report=$("$build/cudojo" check "$stage" "$file" --json $flags 2>/dev/null)
    end=$(date +%s%N)
    walls+=($(((end - start) / 1000)))
    reports+=("$report")
  done
  printf '%s\n' "${reports[@]}" | WALLS="${walls[*]}" NAME="$name" TARGET="$target" python3 -c '
import json, os, statistics, sys
text = sys.stdin.read()
decoder = json.JSONDecoder()
reports, i = [], 0
while i < len(text):
    while i < len(text) and text[i].isspace(): i += 1
    if i >= len(text): break
    report, i = decoder.raw_decode(text, i)
    reports.append(report)
walls = [int(w) / 1e6 for w in os.environ["WALLS"].split()]
verdicts = sorted({r["verdict"] for r in reports})
steps = {}
for r in reports:
    for step, ms in (r.get("timings_ms") or {}).items():
        steps.setdefault(step, []).append(ms)
    for tool in (r.get("sanitizer") or {}).get("tools", []):
        if "timings_ms" not in r: steps.setdefault("sanitizer." + tool["tool"], []).append(tool["seconds"] * 1000)
order = ["start_workers", "worker_start", "compile", "device_query", "wait_for_cuda", "cuda_start", "load",
         "reference_time", "tests", "barrier_check", "wait_for_gpu", "held_for_tools", "peak_probe", "timing",
         "profile", "sanitizer.racecheck", "sanitizer.synccheck", "sanitizer.memcheck", "ncu", "worker_exit"]
named = [s for s in order if s in steps] + sorted(s for s in steps if s not in order and s != "total")
step_text = ", ".join("%s %.0f" % (s, statistics.median(steps[s])) for s in named)
target = os.environ["TARGET"]
met = "" if not target else ("  (target <= %s s: %s)" % (target, "met" if statistics.median(walls) <= float(target) else "NOT met"))
print("%-46s %-14s %7.3fs %7.3fs %7.3fs %8s  %s%s" % (os.environ["NAME"], ",".join(verdicts), statistics.median(walls),
      min(walls), max(walls), (target + " s") if target else "-", step_text or "(no timings_ms in this build)", met))
'
done
