#!/usr/bin/env bash
# Proves the course on a machine with an NVIDIA GPU, stage by stage, and writes the transcript
# evidence/ keeps:
#   scripts/course-check.sh [TRANSCRIPT] [STAGE...]     default: every stage of course/
# For each stage, in CUDA C++, Python and Rust: the reference (must be accepted), the starter (must
# get the verdict its stage.toml's [expect] starter states) and every corpus file of that stage in
# tests/submissions/<track>-<number>/ (must match the expectation on its first line). Python and
# Rust arrive compiled by scripts/build-language-jobs.sh (CPU only, beside the build), so the GPU
# machine needs neither Numba nor rustc. Each line shows the verdict, the findings and the figures
# the gate used. Exit 0 only if every expectation held.
set -uo pipefail
cd "$(dirname "$0")/.."
export NO_COLOR=1
source scripts/lib/transcript.sh
source scripts/lib/starter_verdict.sh
start_transcript course "${1:-}"
shift || true
jobs=${CUDOJO_LANGUAGE_JOBS:-$build/language-jobs}
failures=0
expect_fail() { echo "EXPECTATION FAILED: $*"; failures=$((failures + 1)); }

echo "# cudojo course check"
print_provenance scripts/course-check.sh "$@"
[ -d "$jobs" ] || scripts/build-language-jobs.sh "$jobs" || { echo "no builds in $jobs"; exit 2; }
echo "builds:  $jobs (made by scripts/build-language-jobs.sh)"
echo

# One line per judged file: verdict, findings, and the gate's figures.
summary='"%-13s %-34s %s" % (r["verdict"], ",".join(f["code"] + ("@%d" % f["line"] if f.get("line") else "") for f in r["findings"]) or "-", (r["gate"]["rule"].split(" (")[0] + ": %.2f" % r["gate"]["value"]) if (r.get("gate") or {}).get("value") is not None else r["message"][:70])'
line_of() { python3 -c "import json,sys; r=json.load(sys.stdin); print($summary)"; }
verdict_of() { python3 -c "import json,sys; print(json.load(sys.stdin)['verdict'])"; }
# judge STAGE FILE: CUDA source directly; a .build file with --build.
judge() {
  case "$2" in
    *.build) "$cudojo" check "$1" --build "$2" --json ;;
    *) "$cudojo" check "$1" "$2" --json ;;
  esac
}

stages=("$@")
if [ ${#stages[@]} -eq 0 ]; then
  mapfile -t stages < <("$cudojo" stages --json | python3 -c "import json,sys; [print(s['id']) for s in json.load(sys.stdin)]")
fi
start_all=$(date +%s)
for stage in "${stages[@]}"; do
  tag=${stage/\//-}
  folder=$(dirname "$(grep -l "^id = \"$stage\"" course/*/*/stage.toml | head -1)")
  starter_verdict=$(starter_verdict "$stage")
  echo "## $stage ($("$cudojo" show "$stage" --json | python3 -c "import json,sys; print(json.load(sys.stdin)['title'])"))"
  printf '%-44s %-13s %-34s %s\n' file verdict findings gate
  files=("$folder/reference.cu" "$jobs/$tag/reference.py.build" "$jobs/$tag/reference.rs.build"
         "$folder/starter.cu" "$jobs/$tag/starter.py.build" "$jobs/$tag/starter.rs.build")
  for file in tests/submissions/"$tag"/*.cu "$jobs"/corpus/"$tag"/*.build; do
    [ -e "$file" ] && files+=("$file")
  done
  for file in "${files[@]}"; do
    [ -e "$file" ] || { expect_fail "$stage: $file is missing"; continue; }
    name=${file#"$jobs"/}
    name=${name%.build}
    report=$(judge "$stage" "$file")
    printf '%-44s %s\n' "$name" "$(line_of <<<"$report")"
    verdict=$(verdict_of <<<"$report")
    case "$file" in
      */reference.*) [ "$verdict" = accepted ] || expect_fail "$stage $name gave $verdict" ;;
      */starter.*) [ "$verdict" = "$starter_verdict" ] || expect_fail "$stage $name gave $verdict, not $starter_verdict" ;;
      *)
        if [ "${file%.build}" != "$file" ]; then
          expectation=$(cat "${file%.build}.expect")
        else
          expectation=$(head -1 "$file" | sed 's|^\xef\xbb\xbf||; s|^// expect: ||')
        fi
        result=$(python3 scripts/lib/check_expectation.py "$expectation" <<<"$report")
        echo "    expected: $expectation -> ${result##* }"
        case "$result" in *MISMATCH*) expect_fail "$name: $result" ;; esac
        ;;
    esac
  done
  echo
done
echo "wall: $(( $(date +%s) - start_all )) s for ${#stages[@]} stages"
echo
echo "## Summary"
if [ $failures -eq 0 ]; then echo "all expectations held"; else echo "$failures expectation(s) failed"; fi
exit $((failures > 0))
