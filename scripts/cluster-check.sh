#!/usr/bin/env bash
# Several `cudojo serve` nodes on one PostgreSQL database, on this machine, with a transcript:
# tests/cluster/multi_node.py (300 submissions, a judge node killed mid-job, the database restarted
# mid-run), then, as root, tests/cluster/partition.py (each node a host in its own network
# namespace, one cut off and restored). Needs no GPU: the judges compile every job and answer
# compile_error or no_device.
#   scripts/cluster-check.sh [TRANSCRIPT]     default: evidence/<UTC date>-cpu-cluster.txt
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/transcript.sh
start_transcript cluster "${1:-evidence/$(date -u +%Y-%m-%d)-cpu-cluster.txt}"

echo "# cudojo cluster check"
print_provenance scripts/cluster-check.sh "$@"
echo "cores:   $(nproc)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0

echo
echo "## 1. Three nodes, 300 submissions, a judge killed, the database restarted"
python3 tests/cluster/multi_node.py --cudojo "$cudojo" --work "$work/multi" || status=1

echo
echo "## 2. Hosts in network namespaces, one cut off and restored"
python3 tests/cluster/partition.py --cudojo "$cudojo" --work "$work/partition"
case $? in
  0) ;;
  77) echo "(skipped: see the reason above)" ;;
  *) status=1 ;;
esac
exit $status
