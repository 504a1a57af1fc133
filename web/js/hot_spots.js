// Where a profiled run's time goes (issue #28): the report's hot_spots (Nsight Compute's samples
// per line of the learner's source) drawn under the Result tab's report as the five hottest lines,
// and as a heat mark in the editor's gutter beside every line with samples, its strength following
// the line's share (the hottest line full strength), its title the share and the stall. Under it,
// "Download the Nsight Compute report" when the job kept one (the job's ncu_report), fetched with
// the token (a plain link cannot send it) and saved as cudojo-job-ID.ncu-rep.
// report.js calls clearHeat before drawing any report and showHotSpots after; the run's Profile box
// (index.html, #profile) is read by run.js.

import { el } from "./dom.js";
import { editor } from "./editor.js";
import { saveFile } from "./staff/download.js";

const GUTTER = "heat-gutter";
const SHOWN = 5;

const percent = (share) => `${(100 * (share || 0)).toFixed(share >= 0.1 ? 0 : 1)}%`;
const stallWords = (line) => line.stall_words || line.stall || "";

// "42% of the samples; stall: waiting for global memory (long scoreboard), 80% of the line's".
function heatTitle(line) {
  const stall = stallWords(line);
  return `line ${line.line}: ${percent(line.share)} of the samples` +
    (stall ? `; stall: ${stall}${line.stall_share ? `, ${percent(line.stall_share)} of the line's` : ""}` : "");
}

// The heat gutter is added to the editor the first time a report has hot spots.
function ensureGutter() {
  const gutters = editor.getOption("gutters") || [];
  if (!gutters.includes(GUTTER)) editor.setOption("gutters", [...gutters, GUTTER]);
}

export function clearHeat() {
  if (editor && (editor.getOption("gutters") || []).includes(GUTTER)) editor.clearGutter(GUTTER);
}

// Marks each line with samples in the editor's gutter.
function markHeat(lines) {
  ensureGutter();
  const hottest = Math.max(...lines.map((line) => line.share || 0)) || 1;
  for (const line of lines) {
    if (!line.line || line.line > editor.lineCount() || !(line.samples > 0)) continue;
    const title = heatTitle(line);
    const mark = el("span", { class: "heat-mark", title, role: "img", "aria-label": title,
                              "data-line": line.line, "data-share": line.share });
    // From 0.15 for a line with almost no samples to 1 for the hottest (CSSOM, which the page's
    // content security policy allows, not a style attribute).
    mark.style.setProperty("--heat", String(0.15 + 0.85 * Math.min(1, (line.share || 0) / hottest)));
    editor.setGutterMarker(line.line - 1, GUTTER, mark);
  }
}

function hottestTable(lines, lineLink) {
  return el("table", { class: "hot-lines" },
    el("caption", { class: "visually-hidden" }, "The hottest lines: share of the samples, line, source and stall"),
    el("tr", {}, el("th", { scope: "col" }, "share"), el("th", { scope: "col" }, "line"),
       el("th", { scope: "col" }, "source"), el("th", { scope: "col" }, "mostly waiting on")),
    ...lines.slice(0, SHOWN).map((line) => el("tr", { class: "hot-line", "data-line": line.line },
      el("td", { class: "num" }, percent(line.share)),
      el("td", {}, lineLink(line.line) || String(line.line)),
      el("td", {}, el("code", {}, line.text || "")),
      el("td", { class: "stall", title: line.stall || "" }, stallWords(line)))));
}

function downloadLink(jobId, bytes) {
  const status = el("span", { class: "muted", role: "status", "aria-live": "polite" });
  const link = el("a", { class: "ncu-report", href: `/api/jobs/${jobId}/ncu-report`,
                         download: `cudojo-job-${jobId}.ncu-rep` }, "Download the Nsight Compute report");
  link.addEventListener("click", async (event) => {
    event.preventDefault();
    status.textContent = " fetching...";
    try {
      await saveFile(`/api/jobs/${jobId}/ncu-report`, {}, `cudojo-job-${jobId}.ncu-rep`);
      status.textContent = "";
    } catch (error) {
      status.textContent = ` not downloaded: ${error.message}`;
    }
  });
  const size = !bytes ? "" : bytes < 1048576 ? ` (${Math.max(1, Math.round(bytes / 1024))} KiB; open it in Nsight Compute)`
    : ` (${(bytes / 1048576).toFixed(1)} MiB; open it in Nsight Compute)`;
  return el("p", { class: "ncu-download" }, link, size, status);
}

// Appends the hot spots of `report` to `box` and marks the editor when `mark` (the editor holds the
// text that was run). lineLink(line): the element that leads to a line, as report.js gives it.
export function showHotSpots(box, report, { mark = false, lineLink = () => null } = {}) {
  const hot = report && report.hot_spots;
  const kept = report && report.ncu_report && report.job_id;
  if (!hot && !kept) return;
  const parts = [el("h3", {}, "Hot spots")];
  const lines = hot && Array.isArray(hot.lines) ? hot.lines : [];
  if (lines.length) {
    parts.push(el("p", { class: "muted" }, `Where the kernel's time goes, from ${hot.samples || 0} samples of one launch; the editor's gutter marks every line with samples.`));
    parts.push(hottestTable(lines, lineLink));
    if (mark) markHeat(lines);
  } else if (hot && hot.note) {
    parts.push(el("p", { class: "muted hot-note" }, hot.note));
  }
  if (kept) parts.push(downloadLink(report.job_id, report.ncu_report.bytes));
  box.append(el("section", { class: "hot-spots", "aria-label": "Hot spots" }, ...parts));
}
