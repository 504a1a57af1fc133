// One rejudging (#class/3/rejudge/7, ?items=all for every job): what it took and why; its
// progress, asked again every 2 s while reruns wait and stopped once every job is judged or the
// view is left; the verdicts before -> after as a table; the jobs whose verdict flips, each leading
// to the learner's runs and to the job (job.js); every job on request; and, for an instructor,
// Apply (only once every job is judged, the reason said beside it while it waits) and Cancel, each
// confirmed first in words that say what will change.

import { el } from "../dom.js";
import { api, localTime } from "../api.js";
import { confirmDialog } from "../dialog.js";
import { verdictBadge } from "../report_view.js";
import { classHref, replaceParams } from "./router.js";
import { button, heading, message, say, scrolling, statusLine, table, uid } from "./ui.js";
import { STATE_WORDS, applyBlocked, changeWords, filterWords, plural, progressWords, ratioText, shortVersion } from "./rejudge_words.js";

const POLL_MS = 2000;

const verdictCell = (verdict) => (verdict && verdict !== "none" ? verdictBadge(verdict) : "none");

// A result (RejudgeResult) in a cell: its verdict and ratio; null before the rerun is judged.
const resultCell = (result, state) => (result
  ? el("td", { "data-verdict": result.verdict || "none" }, verdictCell(result.verdict), " ", ratioText(result.ratio))
  : el("td", { class: "muted" }, state));

function matrixTable(summary) {
  const rows = summary.matrix.map((cell) => el("tr", { class: cell.before !== cell.after ? "flip" : "",
                                                       "data-before": cell.before, "data-after": cell.after },
    el("td", {}, verdictCell(cell.before)), el("td", {}, verdictCell(cell.after)),
    el("td", {}, cell.before !== cell.after ? "changes" : "same"), el("td", { class: "num" }, cell.jobs)));
  return scrolling("Verdicts before and after", table(`Verdicts before → after, of the ${plural(summary.judged, "job")} judged again`,
    ["Before", "After", "Change", "Jobs"], rows, { class: "staff-table rejudge-matrix" }));
}

function itemsTable(cls, caption, items, withRerun) {
  const rows = items.map((item) => el("tr", { "data-job": item.job, ...(item.flips ? { class: "flip" } : {}) },
    el("th", { scope: "row" }, el("a", { href: classHref(cls.id, `learner/${item.learner.id}`, { stage: item.stage }) }, item.learner.name)),
    el("td", {}, el("a", { href: classHref(cls.id, `job/${item.job}`) }, `#${item.job}`)),
    el("td", { class: "mono" }, item.stage), el("td", {}, localTime(item.submitted_at)),
    resultCell(item.before, ""), resultCell(item.after, item.rerun_state),
    withRerun ? el("td", {}, el("a", { href: classHref(cls.id, `job/${item.rerun}`), "aria-label": `rerun #${item.rerun} of job #${item.job}` },
                                `#${item.rerun}`)) : null));
  const headers = ["Learner", "Job", "Stage", "Sent", "Before", "After", ...(withRerun ? ["Rerun"] : [])];
  return scrolling(caption, table(caption, headers, rows, { class: "staff-table rejudge-items" }));
}

function factsList(detail, names) {
  const facts = [["State", STATE_WORDS[detail.state] || detail.state], ["Which jobs", filterWords(detail.filter, names)],
                 ["Reason", detail.reason || "none given"], ["Started", `${localTime(detail.created_at)} by ${detail.created_by.name}`]];
  const versions = new Set((detail.flips || []).map((item) => item.after && item.after.stage_version).filter(Boolean));
  if (versions.size === 1) facts.push(["Judged again under", `stage version ${shortVersion([...versions][0])}`]);
  return el("dl", { class: "facts" }, ...facts.flatMap(([term, value]) => [el("dt", {}, term), el("dd", {}, value)]));
}

export async function showRejudging(box, context) {
  const { cls, rejudgingId, params, canChange } = context;
  const path = `/api/classes/${cls.id}/rejudgings/${rejudgingId}`;
  let every = params.get("items") === "all";
  const load = () => api(every ? `${path}?items=all` : path);
  const [first, roster] = await Promise.all([load(), api(`/api/classes/${cls.id}/learners`).catch(() => ({ learners: [] }))]);
  if (!context.current()) return;
  const names = new Map(roster.learners.map((l) => [l.id, l.name]));
  let detail = first;

  const facts = el("div");
  const progress = el("p", { class: "message rejudge-progress", role: "status", "aria-live": "polite" });
  const bar = el("progress", { max: "1", value: "0", "aria-label": "Jobs judged again" });
  const matrix = el("div");
  const flips = el("div");
  const all = el("div");
  const status = statusLine();
  const why = el("p", { class: "staff-note", id: uid("apply-why") });
  const applyButton = el("button", { type: "button", class: "primary", "aria-describedby": why.id }, "Apply");
  const cancelButton = button("Cancel the rejudging", null);
  const actions = el("div", { class: "button-row" }, applyButton, cancelButton);
  const toggle = button("Show every job", null, { "aria-expanded": String(every) });

  const draw = () => {
    facts.replaceChildren(factsList(detail, names));
    progress.textContent = progressWords(detail);
    bar.max = String(Math.max(detail.jobs, 1));
    bar.value = String(detail.judged);
    bar.hidden = detail.state !== "judging";
    const { summary } = detail;
    matrix.replaceChildren(summary.matrix.length ? matrixTable(summary) : message("No job is judged again yet."));
    flips.replaceChildren(detail.flips.length
      ? itemsTable(cls, `Jobs whose verdict changes (${detail.flips.length})`, detail.flips, false)
      : message(summary.judged ? `No verdict changes among the ${plural(summary.judged, "job")} judged again so far.` : "None judged yet."));
    all.replaceChildren(...(every && detail.items ? [itemsTable(cls, `Every job of rejudging #${detail.id} (${detail.items.length})`, detail.items, true)] : []));
    toggle.textContent = every ? "Hide the list of every job" : "Show every job";
    toggle.setAttribute("aria-expanded", String(every));
    const blocked = applyBlocked(detail);
    actions.hidden = detail.state !== "judging";
    applyButton.disabled = Boolean(blocked);
    why.textContent = detail.state === "judging" ? (blocked || "Every job is judged again: applying puts the new verdicts in place.") : "";
  };

  // Asked again every POLL_MS while reruns wait; stops once all are judged or the view is left.
  const alive = () => context.current() && box.isConnected;
  const waiting = () => detail.state === "judging" && detail.judged < detail.jobs;
  const poll = () => {
    if (!waiting()) return;
    setTimeout(async () => {
      if (!alive()) return;
      try {
        detail = await load();
      } catch (error) {
        say(status, `Cannot ask how it stands: ${error.message}`, "bad");
      }
      if (!alive()) return;
      draw();
      poll();
    }, POLL_MS);
  };
  const reload = async () => {
    detail = await load();
    if (alive()) draw();
  };

  toggle.addEventListener("click", async () => {
    every = !every;
    replaceParams(new URLSearchParams(every ? { items: "all" } : {}));
    await reload().catch((error) => say(status, `Cannot load every job: ${error.message}`, "bad"));
  });
  applyButton.addEventListener("click", async () => {
    const text = `Apply rejudging #${detail.id}? ${changeWords(detail)} Learners, the grid and the leaderboards see the new verdicts at once, ` +
      "each counted from the job's own submission time. There is no undo.";
    if (!(await confirmDialog(text, "Apply"))) return;
    try {
      await api(`${path}/apply`, { method: "POST", body: "{}" });
      await reload();
      say(status, `Applied: ${plural(detail.summary.flipped, "verdict")} changed.`);
    } catch (error) {
      say(status, `Not applied: ${error.message}`, "bad");
    }
  });
  cancelButton.addEventListener("click", async () => {
    const text = `Cancel rejudging #${detail.id}? Its ${plural(detail.jobs, "rerun")} ${detail.jobs === 1 ? "is" : "are"} deleted and no verdict changes.`;
    if (!(await confirmDialog(text, "Cancel the rejudging", "Keep it"))) return;
    try {
      await api(`${path}/cancel`, { method: "POST", body: "{}" });
      await reload();
      say(status, "Cancelled: no verdict changed.");
    } catch (error) {
      say(status, `Not cancelled: ${error.message}`, "bad");
    }
  });

  draw();
  box.replaceChildren(
    el("p", { class: "crumbs" }, el("a", { href: classHref(cls.id, "rejudge") }, "← Rejudge")),
    heading(3, `Rejudging #${detail.id}`), facts,
    el("section", { "aria-label": "Progress" }, progress, bar),
    canChange ? el("section", { "aria-label": "Apply or cancel" }, actions, why, status) : status,
    el("section", { "aria-label": "Verdicts before and after" }, heading(4, "Verdicts before and after"), matrix),
    el("section", { "aria-label": "Jobs whose verdict changes" }, heading(4, "Jobs whose verdict changes"), flips),
    el("div", { class: "button-row" }, toggle), all);
  poll();
}
