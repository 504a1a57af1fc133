// A learner's runs (#class/3/learner/17, ?stage= for one stage): who they are, then their jobs,
// newest first, a page at a time, each with its verdict, a "late" mark when it came after the
// stage's deadline, and a link to the run itself (job.js).

import { el } from "../dom.js";
import { api, localTime } from "../api.js";
import { languageBadge } from "../languages.js";
import { lateMark, verdictBadge } from "../report_view.js";
import { classHref, replaceParams } from "./router.js";
import { field, heading, message, pager, scrolling, table } from "./ui.js";

const PAGE = 25;

function jobRow(cls, job) {
  const ratio = job.time_ratio ? `${job.time_ratio.toFixed(2)} ×` : "";
  return el("tr", { "data-job": job.id },
    el("th", { scope: "row" }, el("a", { href: classHref(cls.id, `job/${job.id}`) }, `#${job.id}`)),
    el("td", { class: "mono" }, job.stage), el("td", {}, languageBadge(job.language || "cuda")),
    el("td", {}, localTime(job.created_at)),
    el("td", {}, job.verdict ? verdictBadge(job.verdict) : job.state),
    el("td", {}, job.late ? lateMark() : "on time"), el("td", { class: "num" }, ratio));
}

function whoIs(learner) {
  const facts = [["Student id", learner.student_id || "none"], ["Email", learner.email || "none"],
                 ["Joined", localTime(learner.created_at)], ["Signed in", learner.signed_in_at ? localTime(learner.signed_in_at) : "not yet"]];
  if (learner.removed_at) facts.push(["Removed", localTime(learner.removed_at)]);
  return el("dl", { class: "facts" }, ...facts.flatMap(([term, value]) => [el("dt", {}, term), el("dd", {}, value)]));
}

export async function showLearnerRuns(box, context) {
  const { cls, learnerId, params } = context;
  const stage = params.get("stage") || "";
  const path = (before) => `/api/classes/${cls.id}/learners/${learnerId}/jobs?limit=${PAGE}` +
    (stage ? `&stage=${encodeURIComponent(stage)}` : "") + (before ? `&before=${before}` : "");
  const [first, stages] = await Promise.all([api(path(null)), api("/api/stages")]);
  if (!context.current()) return;
  const learner = first.learner;
  const choose = el("select", {}, el("option", { value: "" }, "every stage"),
    ...stages.map((s) => el("option", { value: s.id, ...(s.id === stage ? { selected: "" } : {}) }, `${s.id} ${s.title}`)));
  choose.addEventListener("change", () => {
    replaceParams(new URLSearchParams(choose.value ? { stage: choose.value } : {}));
    context.refresh();
  });
  const runs = table(`Runs of ${learner.name}${stage ? ` in ${stage}` : ""}, newest first`,
    ["Job", "Stage", "Language", "Submitted", "Verdict", "Deadline", "Time ratio"], []);
  const body = runs.tBodies[0];
  const { more, add } = pager("Older runs", (before) => api(path(before)),
    (page) => body.append(...page.jobs.map((job) => jobRow(cls, job))));
  box.replaceChildren(
    el("p", { class: "crumbs" }, el("a", { href: classHref(cls.id) }, "← Progress grid")),
    heading(3, learner.name, learner.removed_at ? " (removed)" : ""), whoIs(learner),
    el("form", { class: "staff-form", onsubmit: (event) => event.preventDefault() }, field("Runs of", choose)),
    first.jobs.length ? scrolling(`Runs of ${learner.name}`, runs) : message(stage ? `No runs of ${stage} yet.` : "No runs yet."),
    more);
  add(first);
}
