#!/usr/bin/env bash
# Profiler metrics for every reference and starter of stages 2-4, measured by the CUPTI range
# profiler (the default) and by ncu (CUDOJO_PROFILER=ncu), side by side, with their difference.
#   scripts/metrics-check.sh [TRANSCRIPT]      default: evidence/<UTC date>-<gpu>-metrics.txt
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/transcript.sh
start_transcript metrics "${1:-}"
echo "# cudojo profiler metrics: CUPTI range profiler vs ncu"
print_provenance scripts/metrics-check.sh "$@"
echo
report() {  # stage file profiler -> one line of metrics
  CUDOJO_PROFILER=$3 "$build/cudojo" check "$1" "$2" --json --no-sanitize | python3 -c '
import json, sys
r = json.load(sys.stdin); m = r["metrics"]
def f(v, p=2): return "-" if v is None else ("%.*f" % (p, v))
print(r["verdict"], m.get("metrics_source") or "-", f(m.get("sm_throughput_pct")), f(m.get("dram_throughput_pct")),
      f(m.get("global_atomics"), 0), f(m.get("reference_sm_throughput_pct")), f(m.get("reference_dram_throughput_pct")),
      f(m.get("reference_global_atomics"), 0), (m.get("metrics_note") or "-").replace(" ", "_"),
      (r["gate"] or {}).get("rule", "-").replace(" ", "_"))'
}
printf '%-12s %-12s %-8s %-14s %-7s %8s %8s %10s %8s %8s %10s\n' stage file profiler verdict source "SM%" "DRAM%" atomics "ref SM%" "ref DRAM%" "ref atomics"
status=0
for stage in 2 3 4; do
  folder=$(ls -d course/reduction/0${stage}-*)
  for file in reference.cu starter.cu; do
    for profiler in cupti ncu; do
      read -r verdict source sm dram atomics rsm rdram ratomics note rule < <(report "reduction/$stage" "$folder/$file" "$profiler")
      printf '%-12s %-12s %-8s %-14s %-7s %8s %8s %10s %8s %8s %10s\n' "reduction/$stage" "$file" "$profiler" "$verdict" "$source" "$sm" "$dram" "$atomics" "$rsm" "$rdram" "$ratomics"
      [ "$note" = "-" ] || echo "    note: ${note//_/ }"
      echo "    gate: ${rule//_/ }"
      echo "$stage $file $profiler $sm $dram" >> /tmp/cudojo_metrics_pairs.txt
    done
  done
done
echo
echo "CUPTI vs ncu (relative difference of the submission's SM and DRAM throughput):"
python3 - <<'PY'
rows = {}
for line in open("/tmp/cudojo_metrics_pairs.txt"):
    stage, file, profiler, sm, dram = line.split()
    rows.setdefault((stage, file), {})[profiler] = (sm, dram)
worst = 0.0
for (stage, file), by in sorted(rows.items()):
    parts = []
    for index, name in ((0, "SM"), (1, "DRAM")):
        values = [by.get(p, ("-", "-"))[index] for p in ("cupti", "ncu")]
        if "-" in values:
            parts.append(f"{name}: not comparable (a collector gave no figure)")
            continue
        diff = abs(float(values[0]) - float(values[1])) / max(float(values[1]), 1e-9)
        worst = max(worst, diff)
        parts.append(f"{name} {100*diff:.1f}%")
    print(f"reduction/{stage} {file}: " + ", ".join(parts))
print(f"largest difference among comparable figures: {100*worst:.1f}% "
      f"({'within' if worst <= 0.05 else 'OUTSIDE'} the 5% target)")
PY
rm -f /tmp/cudojo_metrics_pairs.txt
exit $status
