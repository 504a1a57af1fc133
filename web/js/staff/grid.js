// The progress grid (#class/3/grid): one row per learner, one column per stage in course order,
// each cell its status in words (grid_cells.js), runs, best ratio and late marks. Sorted by name,
// student id, stages accepted or one stage; filtered by text and by status (in one stage or any);
// the choices are kept in the hash's query, so a link shows the same rows. The first column stays
// in view while the table scrolls inside its own box. Export saves the server's CSV or JSON.

import { el } from "../dom.js";
import { api, localTime } from "../api.js";
import { classHref, replaceParams } from "./router.js";
import { button, field, heading, say, scrolling, statusLine } from "./ui.js";
import { saveFile } from "./download.js";
import { STATUS_FILTERS, cellLines, cellOf, filterLearners, sortChoices, sortLearners } from "./grid_cells.js";

const select = (choices, value) =>
  el("select", {}, ...choices.map(([id, words]) => el("option", { value: id, ...(id === value ? { selected: "" } : {}) }, words)));

function cell(learner, stage) {
  const data = cellOf(learner, stage);
  const lateClass = data.timing === "late" || data.late_jobs ? " has-late" : "";
  const [status, ...rest] = cellLines(data);
  return el("td", { class: `cell status-${data.status} timing-${data.timing}${lateClass}`, "data-stage": stage,
                    "data-status": data.status, "data-timing": data.timing, "data-late-jobs": data.late_jobs || 0 },
    el("span", { class: "cell-status" }, status), ...rest.map((line) => el("span", { class: "cell-line" }, line)));
}

function row(cls, learner, stages) {
  return el("tr", { "data-learner": learner.id },
    el("th", { scope: "row" }, el("a", { href: classHref(cls.id, `learner/${learner.id}`) }, learner.name),
       learner.signed_in ? null : el("span", { class: "cell-line" }, "not signed in")),
    el("td", { class: "mono" }, learner.student_id || ""),
    el("td", { class: "num" }, `${learner.accepted} of ${stages.length}`), el("td", { class: "num" }, learner.on_time),
    ...stages.map((stage) => cell(learner, stage)));
}

function stageHeader(stage, deadline) {
  return el("th", { scope: "col", "data-stage": stage }, el("span", { class: "mono" }, stage),
    deadline ? el("span", { class: "cell-line" }, `${deadline.due_at * 1000 <= Date.now() ? "was due" : "due"} ${localTime(deadline.due_at)}`) : null);
}

export async function showGrid(box, context) {
  const { cls, params } = context;
  const grid = await api(`/api/classes/${cls.id}/grid`);
  if (!context.current()) return;
  const choice = { q: params.get("q") || "", status: params.get("status") || "", stage: params.get("stage") || "",
                   sort: params.get("sort") || "name" };
  const find = el("input", { type: "search", value: choice.q, placeholder: "name, student id or email", autocomplete: "off" });
  const status = select(STATUS_FILTERS, choice.status);
  const stage = select([["", "any stage"], ...grid.stages.map((id) => [id, id])], choice.stage);
  const sort = select(sortChoices(grid.stages), choice.sort);
  const count = statusLine();
  const exported = statusLine();
  const exportAs = (format) => saveFile(`/api/classes/${cls.id}/export?format=${format}`, {}, `class-${cls.id}.${format}`)
    .then((name) => say(exported, `Saved ${name}.`)).catch((error) => say(exported, `Cannot export: ${error.message}`, "bad"));

  const headers = [["name", "Learner"], ["student", "Student id"], ["accepted", "Accepted"], ["", "On time"]]
    .map(([key, words]) => el("th", { scope: "col", "data-sort": key }, words));
  const stageHeaders = grid.stages.map((id) => stageHeader(id, grid.deadlines[id]));
  const body = el("tbody");
  const table = el("table", { class: "staff-table grid" },
    el("caption", {}, `Progress of ${cls.name}: ${grid.learners.length} learners, ${grid.stages.length} stages, as of ${localTime(grid.generated_at)}`),
    el("thead", {}, el("tr", {}, ...headers, ...stageHeaders)), body);

  // Each row is built once (300 learners x 12 stages is thousands of cells); sorting and filtering
  // only choose and order the rows.
  const rows = new Map(grid.learners.map((learner) => [learner.id, row(cls, learner, grid.stages)]));
  const draw = () => {
    const shown = sortLearners(filterLearners(grid.learners, grid.stages, choice), choice.sort);
    body.replaceChildren(...shown.map((learner) => rows.get(learner.id)));
    for (const th of [...headers, ...stageHeaders]) {
      const key = th.dataset.sort ?? `stage:${th.dataset.stage}`;
      if (key && key === choice.sort) th.setAttribute("aria-sort", key === "accepted" ? "descending" : "ascending");
      else th.removeAttribute("aria-sort");
    }
    say(count, `Showing ${shown.length} of ${grid.learners.length} learners.`, "muted");
    replaceParams(new URLSearchParams(Object.entries(choice).filter(([key, value]) => value && !(key === "sort" && value === "name"))));
  };
  let typing = null;
  find.addEventListener("input", () => { clearTimeout(typing); typing = setTimeout(() => { choice.q = find.value; draw(); }, 150); });
  for (const [control, key] of [[status, "status"], [stage, "stage"], [sort, "sort"]]) {
    control.addEventListener("change", () => { choice[key] = control.value; draw(); });
  }

  box.replaceChildren(heading(3, "Progress grid"),
    el("form", { class: "staff-form grid-controls", role: "search", "aria-label": "Find learners", onsubmit: (event) => event.preventDefault() },
       field("Find a learner", find), field("Status", status), field("in", stage), field("Sort by", sort)),
    el("div", { class: "button-row" },
       button("Export CSV", () => exportAs("csv")), button("Export JSON", () => exportAs("json")),
       button("Refresh", () => context.refresh()), exported),
    count,
    grid.learners.length ? scrolling(`Progress grid of ${cls.name}`, table)
      : el("p", { class: "muted" }, "No learners yet: import a roster, or hand out the invite code (Settings)."));
  draw();
}
