// Deadlines (#class/3/deadlines): every stage of the course with its due date and time, typed in
// the browser's time zone (a datetime-local input; the server gets seconds since 1970), and
// whether its leaderboard stays hidden from learners until then. Save and Clear act on one stage.
// A teaching assistant reads them.

import { el } from "../dom.js";
import { api, localTime } from "../api.js";
import { button, heading, say, scrolling, statusLine, table, uid } from "./ui.js";

const pad = (n) => String(n).padStart(2, "0");

// Seconds since 1970 as a datetime-local value in this browser's zone, and back.
function toInput(seconds) {
  const d = new Date(seconds * 1000);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}
export function fromInput(value) {
  const time = new Date(value).getTime();
  return Number.isNaN(time) ? null : Math.round(time / 1000);
}

const dueWords = (deadline) => (!deadline ? "no deadline"
  : `${deadline.due_at * 1000 <= Date.now() ? "was due" : "due"} ${localTime(deadline.due_at)}` +
    (deadline.hide_leaderboard ? "; leaderboard hidden until then" : ""));

function stageRow(cls, stage, deadlines, canChange) {
  const now = el("td", { class: "due-now" }, dueWords(deadlines[stage.id]));
  const title = el("th", { scope: "row" }, el("span", { class: "mono" }, stage.id), " ", stage.title);
  if (!canChange) return el("tr", { "data-stage": stage.id }, title, now);
  const deadline = deadlines[stage.id];
  const due = el("input", { type: "datetime-local", id: uid("due"), value: deadline ? toInput(deadline.due_at) : "",
                            "aria-label": `Due date and time of ${stage.id}` });
  const hide = el("input", { type: "checkbox", id: uid("hide"), ...(deadline && deadline.hide_leaderboard ? { checked: "" } : {}) });
  const status = statusLine();
  const clear = button("Clear", async () => {
    try {
      await api(`/api/classes/${cls.id}/deadlines/${stage.id}`, { method: "DELETE" });
      delete deadlines[stage.id];
      due.value = "";
      hide.checked = false;
      now.textContent = dueWords(null);
      say(status, "cleared");
    } catch (error) { say(status, error.message, "bad"); }
  }, { "aria-label": `Clear the deadline of ${stage.id}` });
  const save = button("Save", async () => {
    const dueAt = fromInput(due.value);
    if (dueAt === null) return say(status, "choose a date and time first", "bad");
    try {
      const saved = await api(`/api/classes/${cls.id}/deadlines/${stage.id}`, { method: "PUT",
        body: JSON.stringify({ due_at: dueAt, hide_leaderboard: hide.checked }) });
      deadlines[stage.id] = { due_at: saved.due_at, hide_leaderboard: saved.hide_leaderboard };
      now.textContent = dueWords(deadlines[stage.id]);
      say(status, "saved");
    } catch (error) { say(status, error.message, "bad"); }
  }, { "aria-label": `Save the deadline of ${stage.id}` });
  return el("tr", { "data-stage": stage.id }, title, now, el("td", {}, due),
    el("td", {}, el("label", { for: hide.id, class: "check" }, hide, " hide until due")),
    el("td", { class: "actions" }, save, " ", clear, status));
}

export async function showDeadlines(box, context) {
  const { cls, canChange } = context;
  const stages = await api("/api/stages");
  if (!context.current()) return;
  const deadlines = { ...(cls.deadlines || {}) };
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone || "this browser's zone";
  const headers = ["Stage", "Now", ...(canChange ? [`Due (${zone})`, "Leaderboard", "Change"] : [])];
  box.replaceChildren(heading(3, "Deadlines"),
    el("p", { class: "staff-note" }, `Times are in your time zone, ${zone}. A run after its stage's deadline is marked late; a learner's `,
       "grid cell says whether the stage was accepted on time."),
    scrolling(`Deadlines of ${cls.name}`, table(`Deadlines of ${cls.name}`, headers,
      stages.map((stage) => stageRow(cls, stage, deadlines, canChange)))));
}
