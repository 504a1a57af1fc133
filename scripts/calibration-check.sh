#!/usr/bin/env bash
# Calibrates the stage gates on this GPU and shows them at work:
#   scripts/calibration-check.sh [TRANSCRIPT]   default: evidence/<UTC date>-<gpu>-calibration.txt
# 1. `cudojo calibrate` runs every reference and writes calibration/<gpu>.json (commit it);
# 2. stage 3 is checked with a correct tree kernel (must be accepted under the calibrated gate)
#    and with the stage-2 kernel, one atomic per element (must fail the same gate);
# 3. stage 4 the same way with its reference and its serial starter.
# Exit 0 only if every expectation held.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/transcript.sh
start_transcript calibration "${1:-}"
export NO_COLOR=1
failures=0
echo "# cudojo calibrated gates"
print_provenance scripts/calibration-check.sh "$@"
echo

echo "## 1. cudojo calibrate"
$cudojo calibrate || { echo "EXPECTATION FAILED: calibrate"; failures=$((failures + 1)); }
file=$(ls -t calibration/*.json 2>/dev/null | head -1)
echo "--- $file"
cat "$file"
echo

# stage file expected-verdict: prints the gate as the report states it; fails unless the verdict
# is the expected one and the gate used the calibration file.
gate() {
  local report
  report=$($cudojo check "$1" "$2" --json --no-sanitize)  # exits 1 for any verdict but accepted
  EXPECTED=$3 python3 -c '
import json, os, sys
r = json.load(sys.stdin); m = r["metrics"]; g = r.get("gate") or {}
print("  verdict %s; time %.4f ms vs reference %.4f ms in this run (%.2fx)" % (r["verdict"], m["time_ms"]["median"], m["reference_time_ms"]["median"], m["time_ratio"]))
print("  SM throughput %s%% (reference %s%%, by %s)" % (m.get("sm_throughput_pct"), m.get("reference_sm_throughput_pct"), m.get("metrics_source")))
print("  gate: %s -> %s" % (g.get("rule"), "met" if g.get("passed") else "not met"))
print("  calibration file: %s (measured %s)" % (r["calibration"]["file"] or "(none)", r["calibration"]["measured_at"]))
ok = r["verdict"] == os.environ["EXPECTED"] and r["calibration"]["file"] and "calibrated" in g.get("rule", "")
if not ok: print("EXPECTATION FAILED: expected %s under the calibrated gate" % os.environ["EXPECTED"])
sys.exit(0 if ok else 1)
' <<<"$report" || failures=$((failures + 1))
}

echo "## 2. Stage 3 under the calibrated gate"
echo "### a correct block tree (tests/submissions/reduction-3/tree.cu), expected accepted"
gate reduction/3 tests/submissions/reduction-3/tree.cu accepted
echo "### the stage-2 kernel, one atomic per element (course/reduction/02-atomic-sum/reference.cu), expected too_slow"
gate reduction/3 course/reduction/02-atomic-sum/reference.cu too_slow
echo

echo "## 3. Stage 4 under the calibrated gate"
echo "### the reference, expected accepted"
gate reduction/4 course/reduction/04-warp-shuffle/reference.cu accepted
echo "### the serial starter, expected too_slow"
gate reduction/4 course/reduction/04-warp-shuffle/starter.cu too_slow
echo

echo "## Summary"
if [ $failures -eq 0 ]; then echo "all expectations held"; else echo "$failures expectation(s) failed"; fi
exit $((failures > 0))
