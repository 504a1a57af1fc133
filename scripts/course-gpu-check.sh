#!/usr/bin/env bash
# `cudojo course check --gpu` on this machine's GPU (issue #24), writing a transcript (default:
# evidence/<UTC date>-<gpu>-course-check-gpu.txt): the shipped course, then a course of seven stages
# scaffolded by `cudojo stage new`, one on each contract, whose references must be accepted and
# starters get their declared verdict at once. Python and Rust compile in bubblewrap's sandbox; on a
# GPU machine without it, `course check` skips them, and their builds, made beforehand on a machine
# that has it (`scripts/course-gpu-check.sh --prepare`, which scripts/pack-device-build.sh runs), are
# judged here with `cudojo check --build`.
#   scripts/course-gpu-check.sh [TRANSCRIPT]
#   scripts/course-gpu-check.sh --prepare FOLDER     scaffolds and Python/Rust builds, no GPU needed
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/transcript.sh
contracts=(counter one_accumulator partial_per_block two_kernel_sum u64_sum histogram float_max)

# The scaffolded course: course.toml naming the track, and stage scaffold/N on contract N.
scaffold() {
  local folder=$1
  rm -rf "$folder" && mkdir -p "$folder"
  for i in "${!contracts[@]}"; do
    "$cudojo" stage new "scaffold/$((i + 1))" --contract "${contracts[$i]}" --course "$folder" > /dev/null || return 1
  done
  echo 'tracks = ["scaffold"]' > "$folder/course.toml"
}

if [ "${1:-}" = "--prepare" ]; then
  out=${2:?--prepare FOLDER}
  scaffold "$out/course" || exit 1
  mkdir -p "$out/builds"
  for i in "${!contracts[@]}"; do
    n=$((i + 1)); stage_dir=$(ls -d "$out/course/scaffold/$(printf %02d $n)-"*)
    for file in "$stage_dir"/reference.py "$stage_dir"/reference.rs "$stage_dir"/starter.py "$stage_dir"/starter.rs; do
      "$cudojo" --course "$out/course" build "scaffold/$n" "$file" \
        -o "$out/builds/scaffold-$n.$(basename "$file").build" > /dev/null || exit 1
    done
  done
  echo "prepared $out: $(ls "$out/builds" | wc -l) builds"
  exit 0
fi

start_transcript course-check-gpu "${1:-}"
echo "# cudojo course check --gpu"
print_provenance scripts/course-gpu-check.sh "$@"
export NO_COLOR=1
status=0
echo "== the shipped course"
"$cudojo" course check --gpu --course course 2>&1 | grep -v "^cudojo course check: judging" ||
  true
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
echo "== one stage scaffolded on each contract"
prepared=${CUDOJO_SCAFFOLDS:-$build/scaffolds}
work=$(mktemp -d)
if [ -d "$prepared/course" ]; then cp -r "$prepared/course" "$work/course"; else scaffold "$work/course" || status=1; fi
"$cudojo" course check --gpu --course "$work/course" 2>&1 | grep -v "^cudojo course check: judging\|TODO(author) marker"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
if [ -d "$prepared/builds" ]; then
  echo "== the scaffolds' Python and Rust references and starters (built where bubblewrap is)"
  for file in "$prepared"/builds/*.build; do
    name=$(basename "$file" .build); n=${name#scaffold-}; n=${n%%.*}
    verdict=$("$cudojo" --course "$work/course" check "scaffold/$n" --build "$file" --json 2>/dev/null |
              python3 -c "import json,sys; r=json.load(sys.stdin); print(r['verdict'], '-', r['message'][:80])")
    want=accepted; case "$name" in *starter*) want=wrong_answer ;; esac
    mark=ok; [ "${verdict%% *}" = "$want" ] || { mark=WRONG; status=1; }
    echo "$mark $name: $verdict"
  done
fi
echo "exit $status"
exit $status
