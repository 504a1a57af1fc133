#!/usr/bin/env bash
# Fails when a C++ or CUDA file of ours differs from what clang-format makes of it with the
# checked-in .clang-format. The submission corpus, the known gaps and the fixtures are left as
# written: their line numbers are expectations.
#   tests/format/check_format.sh [SOURCE_ROOT]
set -euo pipefail
cd "${1:-$(dirname "$0")/../..}"
mapfile -t files < <(git ls-files 'src/*.cc' 'src/*.h' 'src/*.cu' 'tests/*.cc' 'tests/*.h' |
                     grep -v -E '^tests/(submissions|known_gaps|fixtures)/')
if clang-format --dry-run --Werror "${files[@]}"; then
  echo "${#files[@]} files formatted as .clang-format says"
else
  echo "run: clang-format -i on the files above"
  exit 1
fi
