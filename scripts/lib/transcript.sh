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
