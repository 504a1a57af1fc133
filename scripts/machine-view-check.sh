#!/usr/bin/env bash
# Proves the GPU half of the machine view (issue #28) on a machine with an NVIDIA GPU and the CUDA
# toolkit's nvdisasm and ncu, and writes the transcript evidence/ keeps:
#   scripts/machine-view-check.sh [TRANSCRIPT]   default: evidence/<UTC date>-<gpu>-machine-view.txt
# 1. the SASS tests that skip where the toolkit has no disassembler; 2. `cudojo asm --sass`;
# 3. the hot spots of every stage's starter and reference, with reduction/3's starter expected on its
# atomicAdd line and reduction/4's on its serial loop; 4. a check's wall time with and without hot
# spots; 5. a take-home Nsight Compute report read back by `ncu --import`; 6. nvdisasm's own listing
# of an inlined atomicAdd (the format compile/sass_listing.cc reads). Exit 0 only if every
# expectation held. FIXTURE_OUT=FOLDER also keeps the raw source page of section 5 there.
# ptxas and nvdisasm run in the judge's sandbox, so the machine needs bubblewrap (CUDOJO_BWRAP names
# one carried there); HOT_BUILDS names a folder of `cudojo build` files of Python and Rust starters.
set -uo pipefail
cd "$(dirname "$0")/.."
export NO_COLOR=1
source scripts/lib/transcript.sh
start_transcript machine-view "${1:-}"
cuda=${CUDA_HOME:-/usr/local/cuda}
export PATH="$PATH:$cuda/bin"
failures=0
expect_fail() { echo "EXPECTATION FAILED: $*"; failures=$((failures + 1)); }
ms_since() { echo $((($(date +%s%N) - $1) / 1000000)); }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "# cudojo: the machine view on a GPU (issue #28)"
print_provenance scripts/machine-view-check.sh "$@"
echo "nvdisasm: $(command -v nvdisasm || echo none)   ncu: $(command -v ncu || echo none)"
echo

echo "## 1. The SASS tests (skipped where there is no nvdisasm)"
$build/cudojo_unit_tests --gtest_filter='SassListing.*:KernelResources.*' 2>&1 | tail -15 ||
  expect_fail "SASS unit tests"
$build/cudojo_e2e_tests --gtest_filter='CliAsm.*' 2>&1 | tail -12 || expect_fail "cudojo asm end-to-end tests"
echo

echo "## 2. cudojo asm reduction/3 starter.cu --sass"
$cudojo asm reduction/3 course/reduction/03-block-tree/starter.cu --sass || expect_fail "asm --sass"
echo

# The line of FILE holding TEXT (its first).
line_of() { grep -n -F "$2" "$1" | head -1 | cut -d: -f1; }

echo "## 3. Hot spots of every stage's starter and reference (cudojo check --hot-spots)"
for folder in course/*/*/; do
  [ -f "$folder/stage.toml" ] || continue
  stage=$(grep '^id = ' "$folder/stage.toml" | cut -d'"' -f2)
  for kernel in starter reference; do
    start=$(date +%s%N)
    $cudojo check "$stage" "$folder/$kernel.cu" --hot-spots --json >"$work/report.json" 2>"$work/err.txt"
    wall=$(ms_since "$start")
    python3 - "$work/report.json" "$stage" "$kernel" "$wall" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
hot = r.get("hot_spots") or {}
print(f"### {sys.argv[2]} {sys.argv[3]}.cu: {r['verdict']}, check {int(sys.argv[4])} ms, hot spots "
      f"{hot.get('ms', 0):.0f} ms, {hot.get('samples', 0)} samples ({hot.get('drain_samples', 0)} draining)")
for line in hot.get("lines", [])[:5]:
    print(f"  {100 * line['share']:5.1f}%  line {line['line']:<3} {line['text'][:70]:<70}  "
          f"{100 * line['stall_share']:.0f}% {line['stall']}")
if hot.get("note"):
    print("  note:", hot["note"])
PY
    if [ "$stage/$kernel" = reduction/3/starter ] || [ "$stage/$kernel" = reduction/4/starter ]; then
      top=$(python3 -c "import json,sys; r=json.load(open(sys.argv[1])); l=(r.get('hot_spots') or {}).get('lines',[]); print(l[0]['line'] if l else 0)" "$work/report.json")
      if [ "$stage" = reduction/3 ]; then
        want=$(line_of "$folder/starter.cu" "atomicAdd(")
        [ "$top" = "$want" ] && echo "  expected: the hottest line is the atomicAdd's ($want): yes" ||
          expect_fail "reduction/3's starter: hottest line $top, not the atomicAdd's $want"
      else
        loop=$(line_of "$folder/starter.cu" "for (")
        body=$((loop + 1))
        if [ "$top" = "$loop" ] || [ "$top" = "$body" ]; then
          echo "  expected: the hottest line is the serial loop's ($loop-$body): yes"
        else
          expect_fail "reduction/4's starter: hottest line $top, not the serial loop's $loop-$body"
        fi
      fi
    fi
  done
done
echo

echo "## 3b. Python's and Rust's starters of reduction/3 and /4 (builds made on a CPU machine: HOT_BUILDS)"
# The hottest line of a report: its number, or 0.
hottest() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); l=(r.get('hot_spots') or {}).get('lines',[]); print(l[0]['line'] if l else 0)" "$1"; }
for build_file in "${HOT_BUILDS:-/nonexistent}"/*.build; do
  [ -f "$build_file" ] || { echo "(no builds in HOT_BUILDS)"; break; }
  name=$(basename "$build_file" .build)  # r3-starter-py
  stage=reduction/${name:1:1}
  language=${name##*-}
  folder=$(ls -d course/reduction/0${name:1:1}-*/)
  source_file="$folder/starter.$language"
  $cudojo check "$stage" --build "$build_file" --hot-spots --json >"$work/report.json" 2>"$work/err.txt"
  python3 -c "
import json, sys
r = json.load(open(sys.argv[1]))
hot = r.get('hot_spots') or {}
print(f'### {sys.argv[2]}: {r[\"verdict\"]}, {hot.get(\"samples\", 0)} samples')
for line in hot.get('lines', [])[:3]:
    print(f'  {100 * line[\"share\"]:5.1f}%  line {line[\"line\"]:<3} {line[\"text\"][:60]:<60}  {line[\"stall\"]}')
if hot.get('note'): print('  note:', hot['note'])" "$work/report.json" "$name"
  top=$(hottest "$work/report.json")
  if [ "${name:1:1}" = 3 ]; then
    want=$(grep -n -E 'atomic.add\(|atomic_add_f32\(' "$source_file" | head -1 | cut -d: -f1)
    [ "$top" = "$want" ] && echo "  expected: the atomic's line ($want): yes" ||
      expect_fail "$name: hottest line $top, not the atomic's $want"
  else
    loop=$(grep -n -E '^\s*for ' "$source_file" | head -1 | cut -d: -f1)
    if [ "$top" -ge "$loop" ] && [ "$top" -le $((loop + 3)) ]; then
      echo "  expected: the serial loop's lines ($loop-$((loop + 3))): yes"
    else
      expect_fail "$name: hottest line $top, not in the serial loop's $loop-$((loop + 3))"
    fi
  fi
done
echo

echo "## 4. A check's wall time with and without hot spots (3 runs each, ms)"
for case in "reduction/3 course/reduction/03-block-tree/reference.cu" \
            "reduction/6 course/reduction/06-memory-speed/reference.cu" \
            "atomics/3 course/atomics/03-cas-max/reference.cu"; do
  set -- $case
  without="" with=""
  for run in 1 2 3; do
    start=$(date +%s%N); $cudojo check "$1" "$2" >/dev/null 2>&1; without="$without $(ms_since "$start")"
    start=$(date +%s%N); $cudojo check "$1" "$2" --hot-spots >/dev/null 2>&1; with="$with $(ms_since "$start")"
  done
  echo "$1 reference: without:$without   with --hot-spots:$with"
done
echo

echo "## 5. A take-home report: cudojo check reduction/3 starter.cu --ncu-report"
start=$(date +%s%N)
$cudojo check reduction/3 course/reduction/03-block-tree/starter.cu --ncu-report "$work/r3.ncu-rep" | tail -14
echo "check with --ncu-report: $(ms_since "$start") ms"
if [ -s "$work/r3.ncu-rep" ]; then
  echo "report: $(stat -c %s "$work/r3.ncu-rep") bytes"
  ncu --import "$work/r3.ncu-rep" --page details 2>&1 | head -30
  ncu --import "$work/r3.ncu-rep" --page details >/dev/null 2>&1 || expect_fail "ncu --import could not read the report"
  if [ -n "${FIXTURE_OUT:-}" ]; then
    mkdir -p "$FIXTURE_OUT"
    ncu --import "$work/r3.ncu-rep" --page source --csv --print-source cuda,sass >"$FIXTURE_OUT/reduction3-starter-source-page.csv" 2>&1
    cp "$work/r3.ncu-rep" "$FIXTURE_OUT/reduction3-starter.ncu-rep"
  fi
  echo "the source page's header:"
  ncu --import "$work/r3.ncu-rep" --page source --csv --print-source cuda,sass 2>&1 | grep -m1 '^"Line No"' | tr ',' '\n' | tr '\n' ' '
  echo
else
  expect_fail "no report was written"
fi
echo

echo "## 5b. Through the server: a profiled job's hot spots, and its report downloaded and read back"
if [ -x "$build/cudojo_api_tests" ]; then
  CUDOJO_KEEP_DOWNLOADED_REPORT="$work/downloaded.ncu-rep" \
    $build/cudojo_api_tests --gtest_filter='Profile.OnAGpu*' 2>&1 | tail -4 || expect_fail "the profiled job's API test"
  if [ -s "$work/downloaded.ncu-rep" ]; then
    echo "downloaded: $(stat -c %s "$work/downloaded.ncu-rep") bytes"
    ncu --import "$work/downloaded.ncu-rep" --page details 2>&1 | grep -E "^\s+(reduce|Section: GPU Speed|Duration)" | head -5
    ncu --import "$work/downloaded.ncu-rep" --page details >/dev/null 2>&1 || expect_fail "ncu could not read the download"
  else
    expect_fail "no report was downloaded"
  fi
else
  echo "(no cudojo_api_tests in $build)"
fi
echo

echo "## 6. nvdisasm -gi of reduction/3's starter built by nvcc -lineinfo (an inlined atomicAdd)"
nvcc -arch=sm_90 -lineinfo -cubin -o "$work/starter3.cubin" course/reduction/03-block-tree/starter.cu &&
  nvdisasm -gi -c "$work/starter3.cubin" | grep -v '^\s*/\*[0-9a-f]*\*/\s*NOP' | head -60
echo

echo "failures: $failures"
exit $((failures > 0))
