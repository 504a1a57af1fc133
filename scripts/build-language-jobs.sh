#!/usr/bin/env bash
# Compiles every Python and Rust kernel of the course and the corpus with `cudojo build`, CPU only,
# into one folder that scripts/languages-check.sh judges on a GPU machine with `cudojo check
# --build` (the GPU machine needs neither Numba nor rustc):
#   scripts/build-language-jobs.sh [OUT]       default OUT: build/language-jobs
# OUT/<stage-tag>/{reference,starter}.{py,rs}.build for the course; OUT/corpus/<dir>/<file>.build
# for tests/submissions, each beside <file>.expect (the file's first line). A compile error is a
# build too: `check --build` reports it as the learner would see it.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/transcript.sh
out=${1:-build/language-jobs}
rm -rf "$out"
mkdir -p "$out"
built=0
for folder in course/*/*/; do
  [ -f "$folder/stage.toml" ] || continue
  stage=$(grep '^id = ' "$folder/stage.toml" | cut -d'"' -f2)
  tag=${stage/\//-}
  mkdir -p "$out/$tag"
  for kind in reference starter; do
    for extension in py rs; do
      "$cudojo" build "$stage" "$folder/$kind.$extension" -o "$out/$tag/$kind.$extension.build" >/dev/null
      [ $? -le 1 ] || { echo "cudojo build failed on $folder/$kind.$extension" >&2; exit 2; }
      built=$((built + 1))
    done
  done
done
for file in tests/submissions/*/*.py tests/submissions/*/*.rs; do
  folder=$(basename "$(dirname "$file")")
  stage=${folder/-//}
  mkdir -p "$out/corpus/$folder"
  target="$out/corpus/$folder/$(basename "$file")"
  "$cudojo" build "$stage" "$file" -o "$target.build" >/dev/null
  [ $? -le 1 ] || { echo "cudojo build failed on $file" >&2; exit 2; }
  head -1 "$file" | sed -E 's@^(#|//) expect: @@' >"$target.expect"
  built=$((built + 1))
done
echo "built $built Python and Rust jobs into $out"
