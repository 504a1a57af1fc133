// The Metrics tab: a report's timings and profiler figures beside the reference's, the learner's
// last run of the stage before (asked from the history), or why nothing was timed. Drawn by
// report.js for every report it shows.

import { $, el } from "./dom.js";
import { state } from "./state.js";
import { api, token } from "./api.js";

// The report drawn last: an answer that comes back after a newer report is dropped.
let shownReport = null;

// The learner's last timed run of the stage above this one on the page, or null.
async function previousStageFigures() {
  const index = state.stages.findIndex((stage) => stage.id === state.stage.id);
  if (index <= 0 || !token()) return null;
  const previous = state.stages[index - 1];
  const history = await api(`/api/history?stage=${encodeURIComponent(previous.id)}`).catch(() => null);
  if (!history || !history.jobs) return null;
  // An older server sends whole reports; the newer one summaries (time_ratio), the report on request.
  const timed = history.jobs.find((job) => (job.report && job.report.metrics && job.report.metrics.time_ms) || job.time_ratio);
  if (!timed) return null;
  const report = timed.report || (await api(`/api/jobs/${timed.id}`).catch(() => ({}))).report;
  return report && report.metrics && report.metrics.time_ms ? { stage: previous.id, metrics: report.metrics, verdict: timed.verdict } : null;
}

// "43.5 % (reference 44.5 %)", or why there is no figure.
function percentPair(value, reference, note) {
  if (value === null || value === undefined) return note || "not measured";
  const ref = reference === null || reference === undefined ? "n/a" : `${reference.toFixed(1)} %`;
  return `${value.toFixed(1)} % (reference ${ref})`;
}

// The judge leaves SM throughput out where the stage's gate does not read it (the report's note
// says so); the other figures were still measured.
function smLeftOut(m) {
  return (m.sm_throughput_pct === null || m.sm_throughput_pct === undefined) &&
    (m.metrics_note || "").includes("SM throughput not measured");
}

// The judge's own failures are never put on the kernel: it was not run, or not to the end.
function whyNothingWasTimed(verdict) {
  switch (verdict) {
    case "compile_error": return "the source did not compile.";
    case "no_device": return "no GPU was available to the judge, so the kernel was not run; this is not your kernel's fault. Run it again later.";
    case "internal_error": return "the judge failed before it could time the kernel; this is not your kernel's fault. Run it again, and tell your instructor if it stays.";
    case "accepted": case "too_slow": case undefined: case null: case "": return "no reason was given.";
    default: return "the kernel did not pass the tests.";
  }
}

export async function showMetrics(report) {
  shownReport = report;
  const m = report.metrics || {};
  const box = $("#tab-metrics");
  if (!m.time_ms) {
    const why = m.note || whyNothingWasTimed(report.verdict);
    box.replaceChildren(el("p", { class: "metrics-note" }, el("strong", {}, "Nothing was timed: "), why));
    return;
  }
  const ms = (stats) => (stats ? `${stats.median.toFixed(4)} ms (min ${stats.min.toFixed(4)}, max ${stats.max.toFixed(4)}, ${stats.samples} samples)` : "");
  const rows = [
    ["n", m.n],
    ["your kernel", ms(m.time_ms)],
    ["reference", ms(m.reference_time_ms)],
    ["ratio", m.time_ratio ? `${m.time_ratio.toFixed(2)} x the reference` : ""],
    ...(m.baseline_time_ms
      ? [[m.baseline_name || "baseline", ms(m.baseline_time_ms)],
         ["ratio to the baseline", m.baseline_ratio ? `${m.baseline_ratio.toFixed(2)} x ${m.baseline_name}` : ""]]
      : []),
    ["bandwidth", m.bandwidth_gbps ? `${m.bandwidth_gbps.toFixed(1)} GB/s` : "(not meaningful for this contract)"],
    ["% of measured peak", m.pct_of_peak ? `${m.pct_of_peak.toFixed(1)} % of ${report.gpu.peak_read_gbps.toFixed(0)} GB/s` : ""],
    ["SM throughput", percentPair(m.sm_throughput_pct, m.reference_sm_throughput_pct,
      smLeftOut(m) ? "not measured on this stage: its gate does not read it, and it takes most of the profiler's passes" : m.metrics_note)],
    ["DRAM throughput", percentPair(m.dram_throughput_pct, m.reference_dram_throughput_pct, m.metrics_note)],
    ["global atomics", m.global_atomics === null || m.global_atomics === undefined ? "n/a"
      : `${m.global_atomics} (reference ${m.reference_global_atomics ?? "n/a"})`],
    ["GPU", report.gpu ? `${report.gpu.name} (${report.gpu.arch})` : ""],
  ];
  const calibration = report.calibration || {};
  if (calibration.previous_stage && calibration.previous_reference_time_ms) {
    rows.push([`${calibration.previous_stage} reference (this GPU)`,
      `${calibration.previous_reference_time_ms.median.toFixed(4)} ms` +
      (calibration.previous_sm_throughput_pct ? `, SM ${calibration.previous_sm_throughput_pct.toFixed(1)} %` : "")]);
  }
  const previous = await previousStageFigures();
  if (previous) rows.push([`your last ${previous.stage}`, `${ms(previous.metrics.time_ms)} (${previous.verdict})`]);
  if (report !== shownReport) return;  // a newer report came while we asked
  box.replaceChildren(el("table", {}, ...rows.map(([key, value]) => el("tr", {}, el("th", {}, key), el("td", {}, value)))),
    ...(report.gate ? [el("p", {}, el("strong", {}, "Gate: "), report.gate.rule, " — ", report.gate.passed ? "passed" : "not passed")] : []));
}
