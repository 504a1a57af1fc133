# starter_verdict STAGE: the verdict STAGE's starter must get in every language, from the
# `[expect] starter` key of its course/<track>/<NN-name>/stage.toml (docs/stages.md); empty when the
# stage declares none. `cudojo course check --gpu` checks the same key. Sourced by course-check.sh,
# gpu-check.sh and languages-check.sh, run from the repository's root.
starter_verdict() {
  local file
  file=$(grep -l "^id = \"$1\"" course/*/*/stage.toml | head -1)
  [ -n "$file" ] || return 0
  awk -F'"' '/^\[/ { in_expect = ($0 ~ /^\[expect\]/) } in_expect && /^starter *=/ { print $2 }' "$file"
}
