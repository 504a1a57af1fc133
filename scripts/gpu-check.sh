#!/usr/bin/env bash
# Proves cudojo's GPU behaviour on a machine with an NVIDIA GPU and writes the transcript that
# evidence/ keeps. Run from the repository root after scripts/setup.sh (or with a copied build/):
#   scripts/gpu-check.sh [TRANSCRIPT]     default: evidence/<UTC date>-<gpu>-check.txt
# It runs: the GPU end-to-end tests; every reference and starter; the early-return kernel ten
# times; a hanging kernel followed by a normal check; the whole submission corpus against the
# expectations in each file's first line (`finding=code@line` also checks the line); the known
# gaps; and the wall time of a full check. Exit 0 only if
# every expectation held. CUDOJO_SKIP_COURSE=1 leaves sections 2 and 5 (every stage's reference,
# starter and corpus) to scripts/course-check.sh, which covers them in all three languages.
set -uo pipefail
cd "$(dirname "$0")/.."

export NO_COLOR=1
failures=0
# Everything below goes to the terminal and the transcript.
source scripts/lib/transcript.sh
source scripts/lib/starter_verdict.sh
start_transcript check "${1:-}"

seconds() { local ms=$((($2 - $1) / 1000000)); printf '%d.%03d s' $((ms / 1000)) $((ms % 1000)); }
expect_fail() { echo "EXPECTATION FAILED: $*"; failures=$((failures + 1)); }

# One field of a report on stdin, by a Python expression over `r` (the report).
field() { python3 -c "import json,sys; r=json.load(sys.stdin); print($1)"; }

echo "# cudojo GPU check"
print_provenance scripts/gpu-check.sh "$@"
echo

echo "## 1. GPU end-to-end tests (gtest, label gpu)"
$build/cudojo_e2e_tests --gtest_filter='Gpu*' 2>&1 || expect_fail "GPU end-to-end tests"
# The unit tests that need a GPU (the judge's session: planted kernels, the input compared on the device).
if [ -x "$build/cudojo_unit_tests" ]; then
  $build/cudojo_unit_tests --gtest_filter='GpuSessionTest.*' 2>&1 || expect_fail "GPU unit tests"
fi
echo

echo "## 2. References and starters"
[ "${CUDOJO_SKIP_COURSE:-0}" = 1 ] && echo "(left to scripts/course-check.sh: CUDOJO_SKIP_COURSE=1)"
for folder in course/*/*/; do
  [ "${CUDOJO_SKIP_COURSE:-0}" = 1 ] && break
  [ -f "$folder/stage.toml" ] || continue
  stage=$(grep '^id = ' "$folder/stage.toml" | cut -d'"' -f2)
  starter_verdict=$(starter_verdict "$stage")
  echo "### $stage reference.cu"
  start=$(date +%s%N)
  $cudojo check "$stage" "$folder/reference.cu"
  code=$?
  end=$(date +%s%N)
  printf 'exit %d, wall %s\n\n' "$code" "$(seconds "$start" "$end")"
  [ $code -eq 0 ] || expect_fail "$stage reference not accepted"
  echo "### $stage starter.cu (expected $starter_verdict)"
  $cudojo check "$stage" "$folder/starter.cu"
  verdict=$($cudojo check "$stage" "$folder/starter.cu" --json | field 'r["verdict"]')
  echo "second run verdict: $verdict"
  [ "$verdict" = "$starter_verdict" ] || expect_fail "$stage starter gave $verdict"
  echo
done

echo "## 3. Early return in the stage-3 fold, 10 runs (fresh data seed each run)"
caught=0
for run in $(seq 1 10); do
  line=$($cudojo check reduction/3 tests/submissions/reduction-3/early_return.cu --json |
         field '"%s %s seed=%d" % (r["verdict"], ",".join(f["code"] for f in r["findings"]), r["seed"])')
  echo "run $run: $line"
  case "$line" in wrong_answer*uninitialized_shared*) caught=$((caught + 1)) ;; esac
done
echo "caught as wrong_answer with uninitialized_shared: $caught of 10"
[ $caught -eq 10 ] || expect_fail "early return caught only $caught of 10 times"
echo

echo "## 4. A hanging kernel, then a normal check"
start=$(date +%s%N)
$cudojo check reduction/3 tests/submissions/reduction-3/hang.cu
end=$(date +%s%N)
printf 'wall %s\n' "$(seconds "$start" "$end")"
$cudojo check reduction/3 course/reduction/03-block-tree/reference.cu --json |
  field '"next check: %s (%.0f ms)" % (r["verdict"], r["wall_ms"])'
echo

echo "## 5. Corpus: tests/submissions (expectation on each file's first line)"
printf '%-42s %-22s %-22s %s\n' file expected got result
[ "${CUDOJO_SKIP_COURSE:-0}" = 1 ] && echo "(left to scripts/course-check.sh: CUDOJO_SKIP_COURSE=1)"
for file in tests/submissions/*/*.cu; do
  [ "${CUDOJO_SKIP_COURSE:-0}" = 1 ] && break
  stage=$(basename "$(dirname "$file")" | sed 's/-/\//')
  expectation=$(head -1 "$file" | sed 's|^\xef\xbb\xbf||; s|^// expect: ||')
  report=$($cudojo check "$stage" "$file" --json)
  result=$(python3 scripts/lib/check_expectation.py "$expectation" <<<"$report")
  printf '%-42s %-22s %s\n' "${file#tests/submissions/}" "$(echo "$expectation" | cut -d' ' -f1 | cut -d= -f2)" "$result"
  case "$result" in *MISMATCH*) expect_fail "$file: $result" ;; esac
done
echo

echo "## 6. Known gaps: tests/known_gaps (verdicts reported, nothing expected)"
for file in tests/known_gaps/*.cu; do
  [ -e "$file" ] || { echo "(none open)"; break; }
  printf '%s: ' "$file"
  stage=$(sed -n 's|^// stage: ||p' "$file" | head -1)
  $cudojo check "${stage:-reduction/3}" "$file" --json |
    field '"%s %s" % (r["verdict"], ",".join(f["code"] for f in r["findings"]) or "(no findings)")'
done
echo

echo "## 7. Wall time of a full check"
echo "without the sanitizer pass (--no-sanitize), 5 runs:"
for run in 1 2 3 4 5; do
  start=$(date +%s%N)
  $cudojo check reduction/3 course/reduction/03-block-tree/reference.cu --json --no-sanitize >/tmp/cudojo_wall.json
  end=$(date +%s%N)
  printf 'run %d: wall %s, verdict %s\n' "$run" "$(seconds "$start" "$end")" "$(field 'r["verdict"]' </tmp/cudojo_wall.json)"
done
echo "with racecheck, synccheck and memcheck (the default), 3 runs:"
for run in 1 2 3; do
  start=$(date +%s%N)
  $cudojo check reduction/3 course/reduction/03-block-tree/reference.cu --json >/tmp/cudojo_wall.json
  end=$(date +%s%N)
  printf 'run %d: wall %s, verdict %s, sanitizers %s\n' "$run" "$(seconds "$start" "$end")" \
    "$(field 'r["verdict"]' </tmp/cudojo_wall.json)" \
    "$(field '" ".join("%s=%d" % (t["tool"], t["errors"]) for t in r["sanitizer"]["tools"])' </tmp/cudojo_wall.json)"
done
echo "with sanitizers, a kernel that includes <cooperative_groups.h> (slow to compile), 3 runs:"
for run in 1 2 3; do
  start=$(date +%s%N)
  $cudojo check reduction/3 tests/submissions/reduction-3/warp_shuffle_atomic.cu --json >/tmp/cudojo_wall_cg.json
  end=$(date +%s%N)
  printf 'run %d: wall %s, verdict %s, compile %.0f ms, sanitizers %s\n' "$run" "$(seconds "$start" "$end")" \
    "$(field 'r["verdict"]' </tmp/cudojo_wall_cg.json)" "$(field 'r["compile"]["compile_ms"]' </tmp/cudojo_wall_cg.json)" \
    "$(field '" ".join("%s=%.1fs" % (t["tool"], t["seconds"]) for t in r["sanitizer"]["tools"])' </tmp/cudojo_wall_cg.json)"
done
echo "one full JSON report from the last run of the stage-3 reference:"
cat /tmp/cudojo_wall.json
echo

echo "## Summary"
if [ $failures -eq 0 ]; then echo "all expectations held"; else echo "$failures expectation(s) failed"; fi
exit $((failures > 0))
