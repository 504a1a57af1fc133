# Shared by the GPU scripts (sourced, not run): the build folder to use, and a transcript that
# keeps everything the script prints.
#   start_transcript NAME [PATH]   PATH defaults to evidence/<UTC date>-<gpu>-NAME.txt;
#                                  sets $transcript and sends stdout and stderr through tee into it.
build=${CUDOJO_BUILD:-build}
cudojo=$build/cudojo

start_transcript() {
  local name=$1 path=${2:-} gpu_slug
  gpu_slug=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | awk '{print tolower($NF)}')
  transcript=${path:-evidence/$(date -u +%Y-%m-%d)-${gpu_slug:-gpu}-$name.txt}
  mkdir -p "$(dirname "$transcript")"
  exec > >(tee "$transcript") 2>&1
}

# The transcript's header: when, what command, which code, which machine and GPU. The code is named
# by a fingerprint of src course tests scripts, because a copied tree's git metadata can be stale;
#   find src course tests scripts -type f | LC_ALL=C sort | xargs sha256sum | sha256sum
# over a checkout of a commit gives the same value, which is how evidence/README.md matches them.
print_provenance() {
  echo "date:    $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
  echo "command: $*"
  echo "tree:    $(find src course tests scripts -type f | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -c1-16) (sha256 of src course tests scripts)"
  echo "host:    $(uname -srm)"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader 2>/dev/null ||
    echo "gpu:     none (no nvidia-smi)"
  echo "nvcc:    $(nvcc --version 2>/dev/null | tail -1)"
}
