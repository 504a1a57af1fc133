// The History tab: the learner's runs of the open stage, newest first, a page at a time ("Older
// runs" follows next_before). "open" puts a run's source in the editor (asking first when that
// replaces a changed draft); "diff" shows the current draft against it, line by line (diff.js). A
// run submitted after the stage's deadline says "late". Above the runs, a chart of their time ratio;
// any two ticked are compared side by side (run_compare.js). stages.js loads it when a stage opens,
// run.js when a job ends, main.js when the learner changes.

import { $, el } from "./dom.js";
import { state } from "./state.js";
import { api, toDate, token } from "./api.js";
import { editor } from "./editor.js";
import { confirmDialog } from "./dialog.js";
import { readDraft } from "./drafts.js";
import { languageBadge, languageName, stageLanguages } from "./languages.js";
import { showReport } from "./report.js";
import { lateMark, verdictBadge } from "./report_view.js";
import { diffView } from "./diff.js";
import { isLate } from "./deadlines.js";
import { compareRuns, ratioChart } from "./run_compare.js";
import { showLanguage } from "./source.js";

export async function loadHistory({ before = null } = {}) {
  const box = $("#history-list");
  if (!token()) {
    box.replaceChildren(el("p", { class: "muted" }, "Sign in to keep a history of your runs."));
    return;
  }
  const stageId = state.stage.id;
  const query = `stage=${encodeURIComponent(stageId)}&limit=20` + (before ? `&before=${before}` : "");
  const history = await api(`/api/history?${query}`).catch((error) => ({ error }));
  if (!state.stage || state.stage.id !== stageId) return;
  if (history.error) {
    box.replaceChildren(el("p", { class: "fail" }, history.error.message));
    return;
  }
  if (!history.jobs.length && !before) {
    box.replaceChildren(el("p", { class: "muted" }, "No runs of this stage yet."));
    return;
  }
  const rows = history.jobs.map((job) => {
    const language = job.language || "cuda";
    const median = job.report && job.report.metrics && job.report.metrics.time_ms ? `${job.report.metrics.time_ms.median.toFixed(4)} ms` : "";
    const ratio = job.time_ratio ?? (job.report && job.report.metrics && job.report.metrics.time_ratio);
    return el("tr", { "data-job": job.id, "data-language": language },
      el("td", {}, `#${job.id}`), el("td", {}, languageBadge(language)),
      el("td", {}, toDate(job.created_at).toLocaleString()),
      el("td", {}, job.verdict ? verdictBadge(job.verdict) : job.state, isLate(job) ? " " : null, isLate(job) ? lateMark() : null),
      el("td", { class: "num" }, median || (ratio ? `${ratio.toFixed(2)} ×` : "")),
      el("td", { class: "actions" },
         el("button", { type: "button", class: "secondary open-job", onclick: () => openJob(job.id),
                        "aria-label": `open job ${job.id} (${languageName(language)})` }, "open"), " ",
         el("button", { type: "button", class: "secondary diff-job", onclick: () => diffJob(job.id),
                        "aria-label": `diff your draft against job ${job.id}` }, "diff"), " ",
         el("label", { class: "compare-pick" },
            el("input", { type: "checkbox", value: job.id, "aria-label": `compare job ${job.id}`, onchange: pickedForComparison }),
            " compare")));
  });
  let table = box.querySelector("table");
  if (!before || !table) {
    table = el("table", {}, el("tr", {}, el("th", {}, "job"), el("th", {}, "language"), el("th", {}, "submitted"),
                                  el("th", {}, "verdict"), el("th", {}, "time"), el("th", {}, "")));
    const chart = ratioChart(history.jobs);
    box.replaceChildren(...(chart ? [chart] : []), table,
      el("p", { class: "compare-bar" },
         el("button", { type: "button", class: "secondary", id: "compare-runs", disabled: "", onclick: showComparison },
            "Compare the two runs ticked"), " ", el("span", { class: "muted", id: "compare-hint" }, "Tick two runs to see their figures side by side.")),
      el("div", { id: "compare-view" }));
  }
  table.append(...rows);
  box.querySelector(".older")?.remove();
  if (history.next_before) {
    box.append(el("button", { type: "button", class: "secondary older",
                              onclick: () => loadHistory({ before: history.next_before }) }, "Older runs"));
  }
}

// Exactly two runs ticked: they can be compared.
function pickedForComparison() {
  const picked = document.querySelectorAll("#history-list .compare-pick input:checked");
  $("#compare-runs").disabled = picked.length !== 2;
  $("#compare-hint").textContent = picked.length > 2 ? "Tick only two runs." : picked.length === 2 ? "" : "Tick two runs to see their figures side by side.";
}

async function showComparison() {
  const ids = [...document.querySelectorAll("#history-list .compare-pick input:checked")].map((box) => Number(box.value)).sort((a, b) => a - b);
  if (ids.length !== 2) return;
  const stageId = state.stage.id;
  const comparison = await compareRuns(ids[0], ids[1]);
  if (state.stage && state.stage.id === stageId) $("#compare-view").replaceChildren(comparison);
}

async function openJob(id) {
  const job = await api(`/api/jobs/${id}`).catch((error) => ({ error }));
  if (job.error) { $("#status").textContent = `cannot open job #${id}: ${job.error.message}`; return; }
  const language = job.language || "cuda";
  const info = stageLanguages(state.stage)[language];
  // The draft this replaces: the editor's text, or the stored draft of the job's language.
  const draft = language === state.language ? editor.getValue() : readDraft(state.stage.id, language);
  if (info && draft !== null && draft !== (info.starter || "") && draft !== job.source) {
    const replace = await confirmDialog(`Replace your ${languageName(language)} draft with the source of job #${job.id}? Your draft is lost.`, "Replace");
    if (!replace) return;
  }
  // The editor switches to the job's language and its source becomes that language's draft.
  if (!showLanguage(language, { text: job.source, remember: true })) {
    $("#status").textContent = `job #${job.id} is in ${languageName(job.language)}, which this stage no longer offers`;
  }
  if (job.report) {
    showReport({ language: job.language, ...job.report, job_id: job.id, late: isLate(job),
                 stage_version_current: job.stage_version_current, ncu_report: job.ncu_report });
  }
}

async function diffJob(id) {
  const view = $("#diff-view");
  const job = await api(`/api/jobs/${id}`).catch((error) => ({ error }));
  const diff = job.error ? null : diffView(job.source, editor.getValue(), `diff against job ${job.id}`);
  if (!diff) {
    view.replaceChildren(el("p", { class: "fail" }, job.error ? job.error.message : "The diff library did not load."));
    view.hidden = false;
    return;
  }
  view.replaceChildren(
    el("h3", {}, `Your ${languageName(state.language)} draft against job #${job.id}`),
    el("p", { class: "muted" }, diff.changed ? "Lines marked - are only in the job, + only in your draft." : "No differences."),
    diff.view,
    el("button", { type: "button", class: "secondary", onclick: () => { view.hidden = true; } }, "Close diff"));
  view.hidden = false;
}

// A diff belongs to the stage it was asked on.
export function hideDiff() {
  $("#diff-view").hidden = true;
}
