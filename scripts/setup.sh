#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine that already has the CUDA 13 toolkit, then configures and
# builds cudojo into ./build. Safe to run again: apt and cmake skip what is already done.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(cmake ninja-build g++ pkg-config libcli11-dev nlohmann-json3-dev libtomlplusplus-dev
          libfmt-dev libgtest-dev libsqlite3-dev libssl-dev libcpp-httplib-dev libcmark-gfm-dev libcmark-gfm-extensions-dev
          # The HTTP server: Boost.Beast's parser on Boost.Asio's event loop (header-only).
          libboost-dev
          chromium clang-format
          # Python (Numba) and Rust (nvptx64) kernels, compiled inside bubblewrap's sandbox.
          python3 python3-numba rustc-web rust-web-src bubblewrap
          # The deployment test runs the API through nginx, as docs/DEPLOY.md sets it up (and its
          # walkthrough's curl commands); the client's TLS test makes its certificate with openssl.
          nginx curl openssl
          # The shared store's client library, and the server the tests start on loopback.
          libpq-dev postgresql
          # The partition test puts nodes in network namespaces (ip netns), as root.
          iproute2
          # The man page is made from the CLI's help (help2man); the completion tests check the
          # zsh script with zsh itself; the client's proxy tests go through a real proxy.
          help2man zsh tinyproxy)
# Node.js runs the browser test and installs the page's packages; the machine may already have it.
command -v node >/dev/null || packages+=(nodejs)
command -v npm >/dev/null || packages+=(npm)
missing=()
for package in "${packages[@]}"; do
  dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}"
fi

cuda_root="${CUDA_HOME:-/usr/local/cuda}"
if [ ! -x "$cuda_root/bin/nvcc" ] && ! command -v nvcc >/dev/null; then
  echo "setup: the CUDA 13 toolkit was not found at $cuda_root (set CUDA_HOME)" >&2
  exit 1
fi

# The page's packages (CodeMirror, and playwright-core for the browser test), exactly as locked.
npm ci --prefix web --no-audit --no-fund --loglevel=error --fetch-retries=2 --fetch-timeout=60000

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCUDAToolkit_ROOT="$cuda_root" \
  -DCMAKE_CUDA_COMPILER="$cuda_root/bin/nvcc"
cmake --build build -j "$(nproc)"

# Rust's core for nvptx64, built once per machine (20-30 s) so no learner's first check waits for it.
build/cudojo toolchains
