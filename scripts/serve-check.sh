#!/usr/bin/env bash
# Runs `cudojo serve` on this machine and drives it with 50 corpus submissions through the API,
# writing a transcript (default: evidence/<UTC date>-<gpu>-serve.txt). Needs a GPU for the
# verdicts to be the corpus's expected ones (without one, every compiled job is no_device). Its
# learners are a class's (an administrator made first with `cudojo admin create`), and the class's
# grid is checked against the judged jobs' own reports.
#   scripts/serve-check.sh [TRANSCRIPT]
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/transcript.sh
start_transcript serve "${1:-}"

echo "# cudojo serve check"
print_provenance scripts/serve-check.sh "$@"
data=$(mktemp -d)
admin=$("$build/cudojo" admin create "Serve check" --data-dir "$data" --json |
        python3 -c 'import json, sys; print(json.load(sys.stdin)["token"])')
"$build/cudojo" serve --port 0 --data-dir "$data" > "$data/serve.log" 2>&1 &
server=$!
for _ in $(seq 1 50); do
  url=$(grep -o 'http://[0-9.]*:[0-9]*/' "$data/serve.log" | head -1)
  [ -n "$url" ] && break
  sleep 0.2
done
echo "server:  $(grep 'cudojo serve: http' "$data/serve.log")"
python3 scripts/serve_load.py "$url" --count 50 --admin "$admin"
status=$?
kill -TERM $server
wait $server
echo "server stopped; exit $status"
exit $status
