#!/usr/bin/env bash
# A rejudging end to end on this machine's GPU (issue #24), writing a transcript (default:
# evidence/<UTC date>-<gpu>-rejudge.txt): `cudojo serve` on a copy of the course, a class of
# learners sending 50 kernels to reduction/3, then the stage's gate tightened in the copy and the
# course reloaded with SIGHUP; a first rejudging cancelled (the grid and export unchanged), a second
# judged, its summary read, applied, and every job's verdict compared before and after: the jobs
# that changed must be exactly those the summary listed. Needs a GPU for real verdicts.
#   scripts/rejudge-check.sh [TRANSCRIPT]
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/transcript.sh
start_transcript rejudge "${1:-}"

echo "# cudojo rejudging check"
print_provenance scripts/rejudge-check.sh "$@"
data=$(mktemp -d)
cp -r course "$data/course"
export CUDOJO_COURSE="$data/course"
admin=$("$cudojo" admin create "Rejudge check" --data-dir "$data" --json |
        python3 -c 'import json, sys; print(json.load(sys.stdin)["token"])')
"$cudojo" serve --port 0 --data-dir "$data" > "$data/serve.log" 2>&1 &
server=$!
for _ in $(seq 1 50); do
  url=$(grep -o 'http://[0-9.]*:[0-9]*/' "$data/serve.log" | head -1)
  [ -n "$url" ] && break
  sleep 0.2
done
echo "server:  $(grep 'cudojo serve: http' "$data/serve.log")"
python3 scripts/rejudge_load.py "$url" --admin "$admin" --course "$data/course" --server-pid "$server"
status=$?
kill -TERM $server
wait $server
grep -E "SIGHUP|reloaded|refused" "$data/serve.log"
echo "server stopped; exit $status"
exit $status
