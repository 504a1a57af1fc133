#!/usr/bin/env bash
# Runs every lab experiment on this machine's GPU and writes the transcript and the sum-sweep chart
# (default: evidence/<UTC date>-<gpu>-lab.txt and .svg).
#   scripts/lab-check.sh [TRANSCRIPT]
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/transcript.sh
start_transcript lab "${1:-}"
echo "# cudojo lab"
print_provenance "$build/cudojo lab all --plot ${transcript%.txt}-sum-sweep.svg"
echo
"$build/cudojo" lab all --plot "${transcript%.txt}-sum-sweep.svg"
status=$?
echo "exit $status"
exit $status
