// The learner's own progress on a stage, for the History tab: a chart of the time ratio of each
// timed run (oldest on the left; below 1 is faster than the reference), and any two runs' figures
// side by side (time, ratio, bandwidth, SM and DRAM throughput, atomics), read from their reports.
// history.js draws the table of runs and calls these.

import { el } from "./dom.js";
import { api, toDate } from "./api.js";
import { verdictBadge } from "./report_view.js";

const SVG = "http://www.w3.org/2000/svg";
function svg(tag, attributes = {}, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, value);
  for (const child of children) node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  return node;
}

// A job summary's ratio: the gate's (the baseline's when the stage has one), else the reference's.
const ratioOf = (job) => job.baseline_ratio ?? job.time_ratio ?? null;

// The chart of `jobs` (history summaries, any order); null when fewer than two were timed. Its
// words (role="img" with a label) say the first, best and last ratio, so it is not colour alone.
export function ratioChart(jobs) {
  const timed = jobs.filter((job) => typeof ratioOf(job) === "number").sort((a, b) => a.id - b.id);
  if (timed.length < 2) return null;
  const width = 360, height = 140, left = 40, right = 10, top = 10, bottom = 24;
  const ratios = timed.map(ratioOf);
  const high = Math.max(1.1, ...ratios) * 1.05, low = Math.min(0.9, ...ratios) * 0.95;
  const x = (index) => left + (index * (width - left - right)) / (timed.length - 1);
  const y = (ratio) => top + ((high - ratio) * (height - top - bottom)) / (high - low);
  const best = Math.min(...ratios);
  const label = `Time ratio of your ${timed.length} timed runs of this stage, oldest first: first ${ratios[0].toFixed(2)}, ` +
                `best ${best.toFixed(2)}, last ${ratios[ratios.length - 1].toFixed(2)} (1.00 is the reference's time; lower is faster).`;
  return el("figure", { class: "ratio-chart" },
    svg("svg", { viewBox: `0 0 ${width} ${height}`, role: "img", "aria-label": label },
      svg("line", { class: "reference-line", x1: left, x2: width - right, y1: y(1), y2: y(1) }),
      svg("text", { class: "axis", x: 2, y: y(1) + 4 }, "1.00"),
      // The top and bottom of the scale, unless they would sit on the reference's label.
      ...(y(1) - y(high) > 16 ? [svg("text", { class: "axis", x: 2, y: y(high) + 10 }, high.toFixed(2))] : []),
      ...(y(low) - y(1) > 16 ? [svg("text", { class: "axis", x: 2, y: y(low) }, low.toFixed(2))] : []),
      svg("polyline", { class: "ratios", points: timed.map((job, index) => `${x(index)},${y(ratioOf(job))}`).join(" ") }),
      ...timed.map((job, index) => svg("circle", { class: `run ${job.verdict || ""}`, cx: x(index), cy: y(ratioOf(job)), r: 3.5 },
                                       svg("title", {}, `#${job.id}: ${ratioOf(job).toFixed(2)} × (${job.verdict || job.state})`))),
      svg("text", { class: "axis", x: left, y: height - 6 }, `#${timed[0].id}`),
      svg("text", { class: "axis", x: width - right, y: height - 6, "text-anchor": "end" }, `#${timed[timed.length - 1].id}`)),
    el("figcaption", { class: "muted" }, label));
}

const fixed = (value, digits, unit = "") => (typeof value === "number" ? `${value.toFixed(digits)}${unit}` : "n/a");

// The figures of one run's report, as rows of the comparison.
function figures(job) {
  const m = (job.report && job.report.metrics) || {};
  return {
    verdict: job.verdict ? verdictBadge(job.verdict) : job.state,
    submitted: toDate(job.created_at).toLocaleString(),
    "time (median)": m.time_ms ? `${m.time_ms.median.toFixed(4)} ms` : "n/a",
    "ratio to the reference": fixed(m.time_ratio, 2, " ×"),
    ...(m.baseline_ratio !== undefined ? { [`ratio to ${m.baseline_name || "the baseline"}`]: fixed(m.baseline_ratio, 2, " ×") } : {}),
    bandwidth: fixed(m.bandwidth_gbps, 1, " GB/s"),
    "SM throughput": fixed(m.sm_throughput_pct, 1, " %"),
    "DRAM throughput": fixed(m.dram_throughput_pct, 1, " %"),
    "global atomics": typeof m.global_atomics === "number" ? String(m.global_atomics) : "n/a",
    GPU: job.report && job.report.gpu ? job.report.gpu.name : "n/a",
  };
}

// Two runs (ids) side by side, read from GET /api/jobs/{id}; an element to show.
export async function compareRuns(firstId, secondId) {
  const [first, second] = await Promise.all([firstId, secondId].map((id) => api(`/api/jobs/${id}`).catch((error) => ({ id, error }))));
  const failed = [first, second].find((job) => job.error);
  if (failed) return el("p", { class: "fail" }, `cannot read job #${failed.id}: ${failed.error.message}`);
  const [a, b] = [figures(first), figures(second)];
  return el("div", { class: "table-scroll compare-runs", tabindex: "0", role: "region", "aria-label": `job ${first.id} beside job ${second.id}` },
    el("table", {},
      el("tr", {}, el("th", {}, ""), el("th", { scope: "col" }, `#${first.id}`), el("th", { scope: "col" }, `#${second.id}`)),
      ...Object.keys(a).map((key) => el("tr", { "data-figure": key }, el("th", { scope: "row" }, key),
                                        el("td", { class: "num" }, a[key]), el("td", { class: "num" }, b[key] ?? "n/a")))));
}
