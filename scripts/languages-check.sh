#!/usr/bin/env bash
# Proves the Python and Rust kernels on a GPU machine, as a transcript for evidence/:
#   scripts/languages-check.sh [TRANSCRIPT]
# The kernels are compiled beforehand, CPU only, by scripts/build-language-jobs.sh (into
# $CUDOJO_LANGUAGE_JOBS, default $CUDOJO_BUILD/language-jobs; built here when missing and the
# toolchains are present), and judged here with `cudojo check STAGE --build FILE`: every stage's
# Python and Rust reference (accepted) and starter (the verdict its CUDA starter gets), the corpus
# files against their first lines, the early-return mistake in each language five times, and the
# judge's figures per language beside the CUDA reference. Exit 0 only if every expectation held.
set -uo pipefail
cd "$(dirname "$0")/.."
export NO_COLOR=1
source scripts/lib/transcript.sh
source scripts/lib/starter_verdict.sh
start_transcript languages "${1:-}"
jobs=${CUDOJO_LANGUAGE_JOBS:-$build/language-jobs}
failures=0
expect_fail() { echo "EXPECTATION FAILED: $*"; failures=$((failures + 1)); }
field() { python3 -c "import json,sys; r=json.load(sys.stdin); print($1)"; }
judge() { "$cudojo" check "$1" --build "$2" --json; }

echo "# cudojo languages check (Python with Numba, Rust on nvptx64)"
print_provenance scripts/languages-check.sh "$@"
[ -d "$jobs" ] || scripts/build-language-jobs.sh "$jobs" || { echo "no builds in $jobs"; exit 2; }
echo "builds:  $jobs ($(find "$jobs" -name '*.build' | wc -l) files, made by scripts/build-language-jobs.sh)"
echo

echo "## 1. References and starters in Python and Rust"
printf '%-12s %-22s %-14s %-40s %s\n' stage file verdict findings figures
for folder in "$jobs"/*-*/; do
  tag=$(basename "$folder")
  stage=${tag/-//}
  starter_verdict=$(starter_verdict "$stage")
  for build_file in "$folder"reference.*.build "$folder"starter.*.build; do
    name=$(basename "$build_file" .build)
    report=$(judge "$stage" "$build_file")
    line=$(field '"%-14s %-40s %s" % (r["verdict"], ",".join(f["code"] + ("@%d" % f["line"] if f.get("line") else "") for f in r["findings"]) or "-", ("time %.4f ms, reference %.4f ms, ratio %.2f" % (r["metrics"]["time_ms"]["median"], r["metrics"]["reference_time_ms"]["median"], r["metrics"]["time_ratio"])) if r["metrics"].get("time_ratio") else r["message"][:60])' <<<"$report")
    printf '%-12s %-22s %s\n' "$stage" "$name" "$line"
    verdict=$(field 'r["verdict"]' <<<"$report")
    case "$name" in
      reference.*) [ "$verdict" = accepted ] || expect_fail "$stage $name gave $verdict" ;;
      starter.*) [ "$verdict" = "$starter_verdict" ] || expect_fail "$stage $name gave $verdict, CUDA's starter gets $starter_verdict" ;;
    esac
  done
done
echo

echo "## 2. Corpus in Python and Rust (expectation on each file's first line)"
printf '%-36s %-22s %s\n' file expected result
for build_file in "$jobs"/corpus/*/*.build; do
  folder=$(basename "$(dirname "$build_file")")
  stage=${folder/-//}
  expectation=$(cat "${build_file%.build}.expect")
  result=$(judge "$stage" "$build_file" | python3 scripts/lib/check_expectation.py "$expectation")
  printf '%-36s %-22s %s\n' "$folder/$(basename "$build_file" .build)" "$(echo "$expectation" | cut -d' ' -f1 | cut -d= -f2)" "$result"
  case "$result" in *MISMATCH*) expect_fail "$build_file: $result" ;; esac
done
echo

echo "## 3. Early return in the stage-3 fold, 5 runs per language (fresh data seed each run)"
for language in py rs; do
  caught=0
  for run in 1 2 3 4 5; do
    line=$(judge reduction/3 "$jobs/corpus/reduction-3/early_return.$language.build" |
           field '"%s %s seed=%d" % (r["verdict"], ",".join(f["code"] for f in r["findings"]), r["seed"])')
    echo "$language run $run: $line"
    case "$line" in wrong_answer*uninitialized_shared*) caught=$((caught + 1)) ;; esac
  done
  echo "$language: caught as wrong_answer with uninitialized_shared $caught of 5"
  [ $caught -eq 5 ] || expect_fail "early return in $language caught only $caught of 5 times"
done
echo

echo "## 4. Judge figures per language: stage 3 and 4 references against the CUDA reference, 3 runs each"
echo "(time ratio = the kernel's median / the CUDA reference's median, both timed in the same run)"
printf '%-12s %-10s %-28s %s\n' stage language "time ratios (3 runs)" "median kernel time, SM throughput"
for stage in reduction/3 reduction/4; do
  tag=${stage/\//-}
  folder=$(ls -d course/reduction/0${stage#reduction/}-*/)
  for language in cuda py rs; do
    ratios="" detail=""
    for run in 1 2 3; do
      if [ $language = cuda ]; then
        report=$("$cudojo" check "$stage" "$folder/reference.cu" --json)
      else
        report=$(judge "$stage" "$jobs/$tag/reference.$language.build")
      fi
      ratios="$ratios $(field '"%.3f" % r["metrics"]["time_ratio"] if r["metrics"].get("time_ratio") else r["verdict"]' <<<"$report")"
      detail=$(field '"%.4f ms, SM throughput %s%%" % (r["metrics"]["time_ms"]["median"], ("%.1f" % r["metrics"]["sm_throughput_pct"]) if r["metrics"].get("sm_throughput_pct") else "-")' <<<"$report")
    done
    printf '%-12s %-10s %-28s %s\n' "$stage" "$language" "$ratios" "$detail"
  done
done
echo

echo "## 5. One full JSON report: the Python stage-3 reference"
judge reduction/3 "$jobs/reduction-3/reference.py.build"
echo

echo "## Summary"
if [ $failures -eq 0 ]; then echo "all expectations held"; else echo "$failures expectation(s) failed"; fi
exit $((failures > 0))
