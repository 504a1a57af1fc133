#!/usr/bin/env bash
# The hostile-load benchmark of issue #21 as a transcript for evidence/: tests/load/hostile_load.py
# (also the ctest load.hostile) against the new build and, side by side in one table, an older one
# and the libmicrohttpd candidate.
#   [CUDOJO_BUILD=build] [CUDOJO_BUILD_BEFORE=DIR] scripts/load-check.sh [--candidates] [TRANSCRIPT] [-- TEST OPTIONS]
# CUDOJO_BUILD_BEFORE names an older build folder whose cudojo is run first, with --old (eec62b9's
# cpp-httplib server knows no --limit and no stream tickets). --candidates also builds
# tests/bench/http_candidates/mhd_candidate.cc (needs libmicrohttpd-dev) and runs the attacks that
# need no API against it. TEST OPTIONS go to every run (--seconds 8, --only slow,streams, ...).
# Needs no GPU: the servers run without judging workers and every attack is on loopback. Exits with
# the new build's status.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/transcript.sh

arguments=("$@")
candidates=0
transcript_path=
test_options=()
while [ $# -gt 0 ]; do
  case $1 in
    --candidates) candidates=1 ;;
    --) shift; test_options=("$@"); break ;;
    *) transcript_path=$1 ;;
  esac
  shift
done

start_transcript load "$transcript_path"
echo "# cudojo hostile-load benchmark (issue #21)"
print_provenance scripts/load-check.sh "${arguments[@]}"
echo "cpu:     $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo)"
echo "python:  $(python3 --version 2>&1)"
echo

results=$(mktemp -d)
trap 'rm -rf "$results"' EXIT
tables=()

if [ -n "${CUDOJO_BUILD_BEFORE:-}" ]; then
  echo "## Before: $CUDOJO_BUILD_BEFORE/cudojo (--old)"
  echo "load:    $(cut -d' ' -f1-3 /proc/loadavg) (1, 5, 15 min; others on this machine add noise)"
  python3 tests/load/hostile_load.py "$CUDOJO_BUILD_BEFORE/cudojo" --old --json "$results/old.json" "${test_options[@]}"
  echo "(exit $?; the old build is expected to fail)"
  echo
  tables+=("old=$results/old.json")
fi

if [ "$candidates" = 1 ]; then
  echo "## Candidate: libmicrohttpd (tests/bench/http_candidates/mhd_candidate.cc)"
  katex=web/node_modules/katex/dist/katex.min.js
  if g++ -std=c++20 -O2 -o "$results/mhd_candidate" tests/bench/http_candidates/mhd_candidate.cc -lmicrohttpd; then
    echo "load:    $(cut -d' ' -f1-3 /proc/loadavg)"
    python3 tests/load/hostile_load.py - --json "$results/mhd.json" "${test_options[@]}" \
      --server-command "$results/mhd_candidate --port {port} --file $katex"
    echo "(exit $?)"
  else
    echo "the candidate did not build (is libmicrohttpd-dev installed?)"
  fi
  echo
  tables+=("libmicrohttpd=$results/mhd.json")
fi

echo "## After: $cudojo"
echo "load:    $(cut -d' ' -f1-3 /proc/loadavg)"
python3 tests/load/hostile_load.py "$cudojo" --json "$results/new.json" "${test_options[@]}"
status=$?
echo "(exit $status)"
tables+=("new=$results/new.json")
echo

echo "## Side by side"
python3 tests/load/load_table.py "${tables[@]}"
exit $status
