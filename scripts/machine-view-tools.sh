#!/usr/bin/env bash
# What the CUDA toolkit's disassembler and Nsight Compute print for a small program whose time sits
# on known lines (scripts/probes/source_hot_spots.cu): the formats `cudojo asm --sass` and the hot
# spots read (issue #28). Options, SASS with line info, and ncu's source page as CSV.
#   scripts/machine-view-tools.sh [TRANSCRIPT]   default: evidence/<UTC date>-<gpu>-machine-view-tools.txt
# Needs nvcc, ptxas, nvdisasm and ncu (CUDA_HOME, default /usr/local/cuda); no build of cudojo.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/transcript.sh
start_transcript machine-view-tools "${1:-}"
cuda=${CUDA_HOME:-/usr/local/cuda}
export PATH="$PATH:$cuda/bin"
echo "# The disassembler's and Nsight Compute's formats"
print_provenance scripts/machine-view-tools.sh "$@"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp scripts/probes/source_hot_spots.cu "$work/"
cd "$work"
for tool in nvdisasm cuobjdump ncu; do echo "## $tool --version"; $tool --version 2>&1 | tail -2; done
echo "## nvdisasm --help"; nvdisasm --help 2>&1 | head -120
echo "## ncu --help (source, page, import, section, sampling)"
ncu --help 2>&1 | grep -i -A3 "print-source\|--page\|import-source\|--section \|sampling\|--set \|print-details\|print-units\|print-metric" | head -120
echo "## ptx with -lineinfo, then ptxas -lineinfo to a cubin, then nvdisasm"
nvcc -arch=sm_90 -lineinfo -ptx -o k.ptx source_hot_spots.cu && ptxas -arch=sm_90 -lineinfo -v k.ptx -o k.cubin 2>&1
grep -n "\.file\|\.loc" k.ptx | head -20
echo "## nvdisasm -g -c"; nvdisasm -g -c k.cubin 2>&1 | head -150
echo "## nvdisasm -gi -c (inline)"; nvdisasm -gi -c k.cubin 2>&1 | head -40
echo "## nvdisasm -json (if any)"; nvdisasm -json k.cubin 2>&1 | head -c 3000; echo
echo "## nvdisasm -ndf -c -g -fun 1? functions list"; nvdisasm -lrm count -c k.cubin 2>&1 | head -10
echo "## program under ncu (source counters, warp state)"
nvcc -arch=sm_90 -lineinfo -O2 -o prog source_hot_spots.cu
start=$(date +%s.%N)
ncu --clock-control none --section SourceCounters --section WarpStateStats --import-source yes -f -o rep ./prog 2>&1 | tail -8
echo "ncu took $(echo "$(date +%s.%N) - $start" | bc) s; report $(stat -c %s rep.ncu-rep) bytes"
start=$(date +%s.%N)
ncu --clock-control none --set full --import-source yes -f -o repfull ./prog 2>&1 | tail -3
echo "ncu --set full took $(echo "$(date +%s.%N) - $start" | bc) s; report $(stat -c %s repfull.ncu-rep) bytes"
for view in sass cuda "cuda,sass" ptx; do
  echo "## ncu -i rep --page source --csv --print-source $view"
  ncu -i rep.ncu-rep --page source --csv --print-source "$view" 2>&1 | head -70 | cut -c1-900
done
echo "## --page source without --csv, cuda"
ncu -i rep.ncu-rep --page source --print-source cuda 2>&1 | head -50 | cut -c1-400
echo "## --page details --csv (head)"; ncu -i rep.ncu-rep --page details --csv 2>&1 | head -40 | cut -c1-300
echo "## --page raw metrics with pcsamp/inst (names)"
ncu -i rep.ncu-rep --page raw --csv 2>&1 | head -2 | tr ',' '\n' | grep -i "pcsamp\|inst_executed\|source" | head -40
echo "## the kernel's cubin inside the program (cuobjdump -sass head)"; cuobjdump -sass prog 2>&1 | head -20
