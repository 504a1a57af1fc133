// The Rejudge tab (#class/3/rejudge): after a stage changed (its stage file, a reference, its
// calibration; the course reloaded), which version of each stage the class's finished jobs were
// judged under (GET /api/classes/ID/versions), with "Rejudge N older jobs" for a stage that has
// some; a form to start a rejudging by stage, verdict, learner and time; and the class's
// rejudgings, newest first, each leading to its detail (rejudging.js). Starting one changes no
// verdict: the reruns are judged beside the originals until an instructor applies them.
// A teaching assistant reads the versions and the rejudgings, and starts nothing.

import { el } from "../dom.js";
import { api, localTime } from "../api.js";
import { VERDICT_WORDS } from "../report_view.js";
import { classHref } from "./router.js";
import { button, field, heading, message, say, scrolling, statusLine, table } from "./ui.js";
import { fromInput } from "./deadlines.js";
import { STATE_WORDS, VERDICTS, filterWords, plural, shortVersion } from "./rejudge_words.js";

// POST the filter; on success the detail of the new rejudging is shown.
async function start(cls, body, status) {
  try {
    const made = await api(`/api/classes/${cls.id}/rejudgings`, { method: "POST", body: JSON.stringify(body) });
    location.hash = classHref(cls.id, `rejudge/${made.id}`);
  } catch (error) {
    say(status, `Cannot start a rejudging: ${error.message}`, "bad");
  }
}

function olderWords(stage) {
  if (!stage.older_jobs) return "none";
  const each = stage.older_versions.map((v) => `${shortVersion(v.version)}: ${v.jobs}`).join(", ");
  return [String(stage.older_jobs), el("span", { class: "cell-line" }, each)];
}

function versionsTable(cls, versions, canChange, status) {
  const headers = ["Stage", "Current version", "Jobs under it", "Jobs under older versions", ...(canChange ? ["Rejudge"] : [])];
  const rows = versions.stages.map((stage) => {
    const older = olderWords(stage);
    const words = `Rejudge ${plural(stage.older_jobs, "older job")}`;
    return el("tr", { "data-stage": stage.stage, "data-older": stage.older_jobs },
      el("th", { scope: "row", class: "mono" }, stage.stage),
      el("td", {}, el("code", { title: stage.current }, shortVersion(stage.current))),
      el("td", { class: "num" }, stage.current_jobs),
      el("td", { class: "num" }, ...(Array.isArray(older) ? older : [older])),
      canChange ? el("td", {}, stage.older_jobs
        ? button(words, () => start(cls, { stage: stage.stage, older_versions: true }, status), { "aria-label": `${words} of ${stage.stage}` })
        : "") : null);
  });
  return scrolling(`Stage versions of ${cls.name}`,
    table(`Stage versions: the class's finished jobs by the version they were judged under (course loaded ${localTime(versions.loaded_at)})`, headers, rows));
}

const select = (choices) => el("select", {}, ...choices.map(([value, words]) => el("option", { value }, words)));

// The instructor's form: every part optional; together they narrow.
function startForm(cls, stageIds, learners, status) {
  const stage = select([["", "every stage"], ...stageIds.map((id) => [id, id])]);
  const older = el("input", { type: "checkbox" });
  const verdict = select([["", "any verdict"], ...VERDICTS.map((v) => [v, VERDICT_WORDS[v] || v])]);
  const learner = select([["", "every learner"], ...learners.map((l) => [String(l.id), l.student_id ? `${l.name} (${l.student_id})` : l.name])]);
  const since = el("input", { type: "datetime-local" });
  const until = el("input", { type: "datetime-local" });
  const reason = el("input", { maxlength: "500", autocomplete: "off", placeholder: "e.g. gate 2.0 → 1.6" });
  const form = el("form", { class: "staff-form", "aria-label": "Start a rejudging" },
    field("Stage", stage), field("Verdict", verdict), field("Learner", learner),
    field("Sent since", since), field("Sent before", until), field("Reason", reason, "for the audit log and the other staff"),
    el("label", { class: "check" }, older, " only jobs judged under an older version of the stage"),
    el("button", { type: "submit" }, "Start the rejudging"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const body = {};
    if (stage.value) body.stage = stage.value;
    if (older.checked) body.older_versions = true;
    if (verdict.value) body.verdict = verdict.value;
    if (learner.value) body.learner = Number(learner.value);
    for (const [key, input] of [["since", since], ["until", until]]) {
      if (!input.value) continue;
      const seconds = fromInput(input.value);
      if (seconds === null) return say(status, `${key === "since" ? "Sent since" : "Sent before"} is not a date and time.`, "bad");
      body[key] = seconds;
    }
    if (reason.value.trim()) body.reason = reason.value.trim();
    start(cls, body, status);
  });
  return form;
}

function rejudgingsTable(cls, rejudgings, names) {
  const rows = rejudgings.map((r) => el("tr", { "data-rejudging": r.id, "data-state": r.state },
    el("th", { scope: "row" }, el("a", { href: classHref(cls.id, `rejudge/${r.id}`) }, `#${r.id}`)),
    el("td", {}, STATE_WORDS[r.state] || r.state), el("td", { class: "num" }, r.state === "cancelled" ? "reruns deleted" : `${r.judged} of ${r.jobs}`),
    el("td", {}, filterWords(r.filter, names)), el("td", {}, r.reason || ""),
    el("td", {}, `${localTime(r.created_at)}, ${r.created_by.name}`)));
  return scrolling(`Rejudgings of ${cls.name}`, table(`Rejudgings of ${cls.name} (${rejudgings.length}), newest first`,
    ["Rejudging", "State", "Judged", "Which jobs", "Reason", "Started"], rows));
}

export async function showRejudge(box, context) {
  const { cls, canChange } = context;
  const [versions, { rejudgings }, { learners }] = await Promise.all([
    api(`/api/classes/${cls.id}/versions`), api(`/api/classes/${cls.id}/rejudgings`), api(`/api/classes/${cls.id}/learners`)]);
  if (!context.current()) return;
  const names = new Map(learners.map((l) => [l.id, l.name]));
  const status = statusLine();
  const parts = [heading(3, "Rejudge"),
    el("p", { class: "staff-note" }, "A stage's version changes when its stage file, a reference or its calibration changes and the course is ",
       "reloaded. A rejudging judges finished jobs again beside the originals; no learner sees a change until it is applied."),
    status,
    el("section", { "aria-label": "Stage versions" }, heading(4, "Stage versions"), versionsTable(cls, versions, canChange, status))];
  if (canChange) {
    parts.push(el("section", { "aria-label": "Start a rejudging" }, heading(4, "Start a rejudging"),
      startForm(cls, versions.stages.map((s) => s.stage), learners.filter((l) => !l.removed_at), status)));
  }
  parts.push(el("section", { "aria-label": "Rejudgings" }, heading(4, "Rejudgings"),
    rejudgings.length ? rejudgingsTable(cls, rejudgings, names) : message("No rejudging yet.")));
  box.replaceChildren(...parts);
}
