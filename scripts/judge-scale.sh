#!/usr/bin/env bash
# Judging at class scale (issue #25), two builds side by side in one run on one GPU: the same job
# list through each build's `cudojo serve`, one build after the other, never both at once, and a
# table of the issue's figures with its targets.
#   CUDOJO_BUILD=.device-build CUDOJO_BUILD_BEFORE=.device-build-before scripts/judge-scale.sh [TRANSCRIPT]
#   JUDGE_SCALE_PARTS=idle,burst,cold   which parts (scripts/judge_scale.py explains each)
#   JUDGE_SCALE_BEFORE_PARTS=...         the before build's parts, when not the same
#   JUDGE_SCALE_KEEP=DIR                 keep each build's JSON there
# Exit 0 only if the new build's burst gave the same verdicts as it judged one job at a time
# (when both were run) and every reference was accepted cold.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/transcript.sh
before=${CUDOJO_BUILD_BEFORE:-}
parts=${JUDGE_SCALE_PARTS:-idle,burst,cold}
before_parts=${JUDGE_SCALE_BEFORE_PARTS:-$parts}
start_transcript judge-scale "${1:-}"

echo "# cudojo at class scale"
print_provenance scripts/judge-scale.sh "$@"
echo "new build:    $build ($("$build/cudojo" --version 2>/dev/null | head -1))"
[ -n "$before" ] && echo "before build: $before ($("$before/cudojo" --version 2>/dev/null | head -1))"
echo "parts: $parts${before:+ (before: $before_parts)}"
echo

out=$(mktemp -d)
status=0
# The GPU faults the driver logs (Xid) during the run, where dmesg can be read: a kernel that
# faults shows there with its process, which tells a learner's fault from anything else.
xid_from=$(dmesg 2>/dev/null | wc -l)
if [ -n "$before" ]; then
  echo "## before: $before"
  python3 scripts/judge_scale.py "$before" "$out/before.json" --parts "$before_parts" || status=1
  echo
fi
echo "## new: $build"
python3 scripts/judge_scale.py "$build" "$out/new.json" --parts "$parts" ${JUDGE_SCALE_ARGS:-} || status=1
echo

python3 - "$out" <<'EOF' || status=1
import json, pathlib, statistics, sys
out = pathlib.Path(sys.argv[1])
runs = {name: json.loads((out / f"{name}.json").read_text()) for name in ("before", "new") if (out / f"{name}.json").exists()}

def p90(values):
    values = sorted(values)
    return values[int(0.9 * (len(values) - 1))] if values else None

def spread(ratios):
    ratios = [r for r in ratios if r]
    return (max(ratios) - min(ratios)) / statistics.median(ratios) * 100 if len(ratios) > 1 else None

def fmt(value, unit=""):
    return "-" if value is None else f"{value:.2f}{unit}"

rows = []
def row(what, target, key):
    rows.append((what, target, *[fmt(key(runs[n])) if n in runs else "-" for n in ("before", "new")]))

def burst(run):
    return run["bursts"][0] if run.get("bursts") else None

row("burst: jobs a minute", ">= 120", lambda r: burst(r) and burst(r)["jobs_per_minute"])
row("burst: seconds for all", "", lambda r: burst(r) and burst(r)["seconds"])
row("idle: queued->verdict median (s)", "<= 0.8", lambda r: r.get("idle") and statistics.median(x["queued_to_verdict_s"] for x in r["idle"]))
row("idle: queued->verdict p90 (s)", "<= 1.5", lambda r: r.get("idle") and p90([x["queued_to_verdict_s"] for x in r["idle"]]))
row("burst on more slots: jobs a minute", "", lambda r: r.get("wide") and r["wide"]["jobs_per_minute"])
row("burst on more slots: slots", "", lambda r: r.get("wide") and r["wide"]["slots"])
def burst_step_s(run, step):
    """A step of the burst's jobs' timings_ms, summed in seconds; None when no job had it."""
    values = [x["timings_ms"][step] for x in burst(run)["results"]
              if (x.get("timings_ms") or {}).get(step)] if burst(run) else []
    return sum(values) / 1000 if values else None
def first_passes(run):
    return [x["timings_ms"]["profile_first_pass"] for x in burst(run)["results"]
            if (x.get("timings_ms") or {}).get("profile_first_pass")] if burst(run) else []
row("burst: profiles' first pass, sum (s)", "", lambda r: burst_step_s(r, "profile_first_pass"))
row("burst: profiles' first pass, median (ms)", "", lambda r: statistics.median(first_passes(r)) if first_passes(r) else None)
row("burst: profiling in the turn alone, sum (s)", "", lambda r: burst_step_s(r, "profile"))
row("burst: timing in the turn alone, sum (s)", "", lambda r: burst_step_s(r, "timing"))
row("burst: waits to be alone, sum (s)", "", lambda r: burst_step_s(r, "wait_for_gpu"))
# The copies' profiled figures: a profile taken during the burst must read as the others do.
row("10 copies: profiled duration spread (%)", "", lambda r: burst(r) and spread(
    [x.get("kernel_duration_ms") for x in burst(r)["results"] if x["file"] == "reduction-4/warp_shuffle.cu"]))
row("10 copies: profiled DRAM spread (%)", "", lambda r: burst(r) and spread(
    [x.get("dram_throughput_pct") for x in burst(r)["results"] if x["file"] == "reduction-4/warp_shuffle.cu"]))
row("10 copies in the burst: ratio spread (%)", "<= 2", lambda r: burst(r) and spread(
    [x["time_ratio"] for x in burst(r)["results"] if x["file"] == "reduction-4/warp_shuffle.cu"]))
for stage in sorted({c["stage"] for r in runs.values() for c in r.get("cold", [])}):
    target = "<= 2.5" if stage in ("reduction/6", "reduction/7") else "<= 1.5"
    row(f"cold check {stage} median (s)", target,
        lambda r, s=stage: next((c["median_s"] for c in r.get("cold", []) if c["stage"] == s), None))

print(f"{'figure':44} {'target':>8} {'before':>10} {'new':>10}")
for what, target, *values in rows:
    print(f"{what:44} {target:>8} " + " ".join(f"{v:>10}" for v in values))

failed = False
new = runs.get("new", {})
for c in new.get("cold", []):
    if c["verdicts"] != ["accepted"]:
        print(f"new build: cold check of {c['stage']}'s reference gave {c['verdicts']}")
        failed = True
if new.get("alone") and new.get("bursts"):
    alone = {}
    for x in new["alone"]:
        alone.setdefault(x["file"], set()).add((x["verdict"], tuple(x["findings"])))
    for index, b in enumerate(new["bursts"]):
        differ = [x for x in b["results"] if (x["verdict"], tuple(x["findings"])) not in alone.get(x["file"], set())]
        print(f"burst {index + 1}: {len(b['results'])} jobs, {len(differ)} with a verdict or finding unlike one at a time")
        for x in differ:
            print(f"  {x['file']}: {x['verdict']} {x['findings']} (alone: {sorted(alone.get(x['file'], []))})")
        failed |= bool(differ)
    alone_ratios = [x["time_ratio"] for x in new["alone"] if x["file"] == "reduction-4/warp_shuffle.cu"]
    print(f"10 copies judged alone: ratio spread {fmt(spread(alone_ratios), ' %')} (target <= 1 %)")
def unlike_expected(x):
    want = x.get("expected") or {}
    problems = [] if x["verdict"] == want.get("verdict") else [f"verdict {x['verdict']}, not {want.get('verdict')}"]
    if "finding" in want:
        code, _, line = want["finding"].partition("@")
        found = [f for f in x["findings"] if f.split("@")[0] == code]
        if not found or (line and f"{code}@{line}" not in found):
            problems.append(f"finding {want['finding']} missing from {x['findings']}")
    return problems
for index, b in enumerate(new.get("bursts", []) + ([new["wide"]] if new.get("wide") else [])):
    unlike = [(x, unlike_expected(x)) for x in b["results"] if unlike_expected(x)]
    print(f"burst {index + 1}: {len(b['results'])} jobs, {len(unlike)} unlike what their corpus file expects")
    for x, problems in unlike:
        print(f"  {x['file']}: {'; '.join(problems)}")
    failed |= bool(unlike)
for pair in new.get("pairs", []):
    first, then = pair["first"], pair["then_reference"]
    ok = then["verdict"] == "accepted" and not then["findings"]
    print(f"{first['file']} ({first['verdict']}) then the reference: {then['verdict']} {then['findings']}, "
          f"fresh worker {then['fresh_worker']} {'ok' if ok else 'MOVED'}")
    failed |= not ok
sys.exit(1 if failed else 0)
EOF
echo
echo "## GPU faults the driver logged during the run (Xid)"
dmesg 2>/dev/null | tail -n +$((xid_from + 1)) | grep -i 'xid' || echo "(none, or dmesg cannot be read here)"
# JUDGE_SCALE_KEEP=DIR keeps each build's JSON (every job's report timings) there.
[ -n "${JUDGE_SCALE_KEEP:-}" ] && mkdir -p "$JUDGE_SCALE_KEEP" && cp "$out"/*.json "$JUDGE_SCALE_KEEP"/
rm -rf "$out"
echo "exit $status"
exit $status
