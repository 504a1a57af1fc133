// The Result tab: a judged report (report_view.js draws it) with the lines it speaks of marked in
// the editor and linked to, "Next stage" under an accepted verdict, and the last result of each
// stage kept across reloads. Called by run.js when a job ends, history.js when a job is opened, and
// stages.js when a stage opens; it hands the same report to the Metrics tab (metrics.js). Under a
// run of the learner's own (report.job_id), "Share this run" (share_controls.js); under a profiled
// run, its hot spots and Nsight Compute report (hot_spots.js).
// localStorage: cudojo.result.STAGE holds the stage's last report (with the source that was run, so
// its lines can be marked again after a reload), until sign-out (account.js).

import { $, el } from "./dom.js";
import { state } from "./state.js";
import { clearMarks, editor, lineLink, markLine } from "./editor.js";
import { renderReport, verdictBadge } from "./report_view.js";
import { showMetrics } from "./metrics.js";
import { token } from "./api.js";
import { shareControls } from "./share_controls.js";
import { clearHeat, showHotSpots } from "./hot_spots.js";
import { showTab } from "./tabs.js";
import { OPEN_STAGE, send } from "./events.js";

export { verdictBadge };

const RESULT_PREFIX = "cudojo.result.";
const resultKey = (stageId) => `${RESULT_PREFIX}${stageId}`;

// Keeps `report` as its stage's last result without drawing it (run.js: a report of a stage that is
// not open); the stage's Result tab shows it when it opens.
export function keepReport(report) {
  if (!report || !report.stage) return;
  try { localStorage.setItem(resultKey(report.stage), JSON.stringify(report)); } catch { /* full: not kept */ }
}

function lastResult(stageId) {
  try { return JSON.parse(localStorage.getItem(resultKey(stageId)) || "null"); } catch { return null; }
}

// Sign-out: a report quotes the learner's source (the compiler's excerpts), so none is kept for
// whoever uses this browser next.
export function forgetResults() {
  const keys = Array.from({ length: localStorage.length }, (_, i) => localStorage.key(i));
  for (const key of keys) if (key && key.startsWith(RESULT_PREFIX)) localStorage.removeItem(key);
}

// A stage has just opened: its last result, or what the two tabs say before the first run.
export function showLastResult(stageId) {
  const last = lastResult(stageId);
  if (last) {
    showReport(last, { restored: true });
  } else {
    $("#tab-result").replaceChildren(el("p", { class: "muted" }, "Run your kernel to see the verdict here."));
    $("#tab-metrics").replaceChildren(el("p", { class: "muted" }, "No timing yet."));
  }
}

function nextStage() {
  const index = state.stages.findIndex((stage) => stage.id === state.stage.id);
  return index >= 0 && index + 1 < state.stages.length ? state.stages[index + 1] : null;
}

// keep: store it as the stage's last result; restored: it came from storage, and the editor may
// hold other text now, so its lines are marked only when the editor holds the text that was run
// (report.submitted_source, which run.js adds).
export function showReport(report, { keep = false, restored = false } = {}) {
  if (keep) keepReport(report);
  clearMarks();
  clearHeat();
  const box = $("#tab-result");
  const language = (report && report.language) || "cuda";
  // Lines are marked only in the text the report is about: same stage, same language.
  const ownStage = Boolean(report) && (!report.stage || !state.stage || report.stage === state.stage.id);
  const here = ownStage && language === state.language;
  const sameText = !restored || (typeof report.submitted_source === "string" && report.submitted_source === editor.getValue());
  const mark = (line, kind, column) => { if (here && sameText) markLine(line, kind, column); };
  const following = report && report.verdict === "accepted" && here && state.stage ? nextStage() : null;
  const next = following && el("a", { class: "next-stage", href: `#${following.id}`,
    onclick: (event) => { event.preventDefault(); send(OPEN_STAGE, { id: following.id }); } },
  `Next stage: ${following.id} ${following.title || ""} →`);
  renderReport(box, report, { lineLink, mark, next });
  if (!report) return;
  showHotSpots(box, report, { mark: here && sameText, lineLink });  // a profiled run's
  // A run of the signed-in learner's own (run.js and history.js name its job) can be shared.
  if (report.job_id && ownStage && token() && state.view === "learner") box.append(shareControls(report.job_id));
  showMetrics(report);
  showTab("result");
}
