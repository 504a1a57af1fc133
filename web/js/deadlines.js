// The learner's deadlines, as their class set them (state.deadlines, from GET /api/me and
// /api/progress: {STAGE: {due_at, hide_leaderboard}}): "due <date>" or "past due" under each stage
// in the nav and above the editor, in the browser's time zone, and whether a run was late. Drawn
// by stages.js when the nav, the progress or the open stage changes; run.js and history.js ask
// isLate for a job the server did not mark.

import { $ } from "./dom.js";
import { state } from "./state.js";
import { localTime } from "./api.js";

const deadlineOf = (stageId) => (state.deadlines && state.deadlines[stageId]) || null;
const passed = (deadline) => deadline.due_at * 1000 <= Date.now();

// Whether a job of `stageId` submitted at `createdAt` (seconds) came after the stage's deadline;
// the server's own "late" wins where a job has one.
export function isLate(job) {
  if (typeof job.late === "boolean") return job.late;
  const deadline = deadlineOf(job.stage);
  return Boolean(deadline && job.created_at && job.created_at > deadline.due_at);
}

export function renderDeadlines() {
  for (const button of document.querySelectorAll("nav button[data-stage]")) {
    const mark = button.querySelector(".due-mark");
    if (!mark) continue;
    const deadline = deadlineOf(button.dataset.stage);
    mark.textContent = !deadline ? "" : passed(deadline) ? `past due (${localTime(deadline.due_at)})` : `due ${localTime(deadline.due_at)}`;
    mark.classList.toggle("past-due", Boolean(deadline && passed(deadline)));
  }
  const line = $("#due");
  const deadline = state.stage ? deadlineOf(state.stage.id) : null;
  line.hidden = !deadline;
  if (!deadline) return;
  line.classList.toggle("past-due", passed(deadline));
  line.textContent = passed(deadline)
    ? `Past due: the deadline was ${localTime(deadline.due_at)}; runs from now on are marked late.`
    : `Due ${localTime(deadline.due_at)} (your time zone).`;
}
