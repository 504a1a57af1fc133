#!/usr/bin/env bash
# Packs build/ for a GPU machine that has the CUDA toolkit but not our Debian libraries:
# stripped binaries in .device-build/, and the shared libraries they need (other than glibc,
# libstdc++ and the CUDA toolkit's) in .device-build/lib, found there through $ORIGIN/lib.
# Then, on the GPU machine: CUDOJO_BUILD=.device-build scripts/gpu-check.sh (and languages-check.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf .device-build
mkdir -p .device-build/lib
for binary in cudojo cudojo_e2e_tests cudojo_unit_tests; do
  strip -o ".device-build/$binary" "build/$binary"
done
ldd build/cudojo | awk '/=> \// {print $3}' | while read -r library; do
  case "$(basename "$library")" in
    libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|libresolv.so*|libgcc_s.so*|libstdc++.so*|libnvrtc*) ;;
    *) cp -L "$library" .device-build/lib/ ;;
  esac
done
# The Python and Rust kernels, compiled here: the GPU machine needs neither Numba nor rustc.
CUDOJO_BUILD=build scripts/build-language-jobs.sh .device-build/language-jobs
# The scaffolded stages of scripts/course-gpu-check.sh, and their Python and Rust builds.
CUDOJO_BUILD=build scripts/course-gpu-check.sh --prepare .device-build/scaffolds
du -sh .device-build
