#!/usr/bin/env bash
# Does a kernel that faults in one process break another process's correct work on the same GPU?
# (issue #25: under the burst, two correct reduction/8 kernels got cudaErrorLaunchFailure on a
# warm worker while other slots judged kernels that trap or read outside memory.)
# Two victims launch and allocate in a loop; first alone (the control), then while other processes
# run kernels that trap, read far outside memory, or spin and then trap.
#   scripts/foreign-fault.sh [TRANSCRIPT]   default: evidence/<UTC date>-<gpu>-foreign-fault.txt
# Needs nvcc; no build of cudojo.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/transcript.sh
start_transcript foreign-fault "${1:-}"
export PATH="$PATH:${CUDA_HOME:-/usr/local/cuda}/bin"

echo "# A fault in one process, seen from another"
print_provenance scripts/foreign-fault.sh "$@"
echo

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
nvcc -O2 -arch=sm_90 -o "$work/foreign_fault" scripts/probes/foreign_fault.cu || { echo "nvcc failed"; exit 1; }

# round SECONDS KIND...: two victims for SECONDS while each KIND of fault runs in a loop beside,
# each under $wrap (empty, or a compute-sanitizer command as the judge's tool workers run).
wrap=""
round() {
  local seconds=$1; shift
  echo "## victims for ${seconds} s beside: ${*:-nothing}${wrap:+, each under $wrap}"
  "$work/foreign_fault" --victim "$seconds" & local v1=$!
  "$work/foreign_fault" --victim "$seconds" & local v2=$!
  local faults=0 unexpected=0 deadline=$((SECONDS + seconds))
  if (($# > 0)); then
    while ((SECONDS < deadline)); do
      for kind in "$@"; do
        $wrap "$work/foreign_fault" --fault "$kind" >/dev/null 2>&1 || unexpected=$((unexpected + 1))
        faults=$((faults + 1))
      done
    done
  fi
  wait "$v1"; local r1=$?
  wait "$v2"; local r2=$?
  echo "processes run beside: $faults (of them not as meant: $unexpected); victims' exits: $r1 $r2"
  echo
}
round 10
round 20 trap address
round 20 spin-trap
for tool in memcheck racecheck synccheck; do
  wrap="compute-sanitizer --tool $tool --error-exitcode 0"
  round 15 trap address none
done
wrap=""
round 10
echo "## the kernel's log of GPU faults (Xid), if this machine lets it be read"
dmesg 2>&1 | grep -i -E 'xid|nvrm' | tail -20 || true
