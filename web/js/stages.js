// The course: the stage list grouped by track (the nav), the learner's progress beside each
// stage, and opening a stage (its lesson, then the editor and the tabs for it). main.js loads the
// list and the progress; run.js reloads the progress when a job ends; report.js's "Next stage"
// opens a stage through OPEN_STAGE (events.js). Deadlines beside each stage are deadlines.js's.
// Staff read the lessons here too (state.view "staff"): the lesson only, no editor, nothing of a
// learner's. The one HTML the page inserts is the lesson,
// rendered by the server (cmark-gfm in safe mode); lesson.js (window.cudojoLesson) adds math,
// highlighted code and diagrams to it.

import { $, el } from "./dom.js";
import { state } from "./state.js";
import { api, token } from "./api.js";
import { editor } from "./editor.js";
import { flushDrafts, openDrafts } from "./drafts.js";
import { renderDeadlines } from "./deadlines.js";
import { openSource } from "./source.js";
import { showLastResult } from "./report.js";
import { hideDiff, loadHistory } from "./history.js";
import { loadLeaderboard } from "./leaderboard.js";
import { OPEN_STAGE, on } from "./events.js";

// A stage id is "<track>/<number>" ("reduction/3"); the track is the text before the '/'.
const trackOf = (id) => (id.includes("/") ? id.slice(0, id.indexOf("/")) : id);

// "reduction" -> "Reduction", "warp-level" -> "Warp level".
function trackTitle(track) {
  const words = track.replace(/[-_]+/g, " ").trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

// The stages in tracks: [{ track, stages }]. A track comes where its first stage comes in the
// API's order (the course's folder order), its stages in that order too.
function groupByTrack(stages) {
  const groups = new Map();
  for (const stage of stages) {
    const track = trackOf(stage.id);
    if (!groups.has(track)) groups.set(track, []);
    groups.get(track).push(stage);
  }
  return [...groups].map(([track, members]) => ({ track, stages: members }));
}

// One heading and one list per track; the list is named by its heading for screen readers, and
// every stage is a button, so Tab and Enter walk the course.
function renderStageNav(groups) {
  $("#stages").replaceChildren(...groups.map(({ track, stages }) => {
    const headingId = `track-${track.replace(/[^A-Za-z0-9_-]/g, "-")}`;
    const count = `${stages.length} ${stages.length === 1 ? "stage" : "stages"}`;
    return el("section", { class: "track-group", "data-track": track },
      el("h2", { class: "track-heading", id: headingId },
         el("span", { class: "track-name" }, trackTitle(track)), " ", el("span", { class: "track-count" }, count)),
      el("ol", { class: "track-stages", "aria-labelledby": headingId },
         ...stages.map((stage) => el("li", {},
           el("button", { type: "button", "data-stage": stage.id, onclick: () => selectStage(stage.id) },
              el("span", { class: "id" }, stage.id), stage.title, el("span", { class: "progress-mark" }),
              el("span", { class: "due-mark" }))))));
  }));
  renderProgress();
  renderDeadlines();
}

// Each stage button says in words (not colour alone) whether the learner has an accepted run, only
// attempts, or none, and the best time ratio. Unknown progress (signed out, an older server) shows nothing.
export async function loadProgress() {
  if (!token() || state.view === "staff") {
    state.progress = null;
  } else {
    const answer = await api("/api/progress").catch(() => null);
    state.progress = answer && answer.stages ? answer.stages : null;
    if (answer && answer.deadlines) state.deadlines = answer.deadlines;
  }
  renderProgress();
  renderDeadlines();
}

function renderProgress() {
  for (const button of document.querySelectorAll("nav button[data-stage]")) {
    const mark = button.querySelector(".progress-mark");
    if (!mark) continue;
    if (!state.progress) {
      mark.replaceChildren();
      delete button.dataset.progress;
      continue;
    }
    const entry = state.progress[button.dataset.stage];
    const status = entry ? entry.status : "new";
    button.dataset.progress = status;
    const words = { accepted: "✓ accepted", attempted: "… attempted", new: "new" }[status] || status;
    const best = entry && entry.best_time_ratio ? `best ${entry.best_time_ratio.toFixed(2)} × reference` : "";
    mark.replaceChildren(el("span", { class: `badge progress-${status}` }, words),
                         ...(best ? [el("span", { class: "best" }, best)] : []));
  }
}

// The stage list; the stage the URL's hash names opens.
export async function loadStages() {
  const groups = groupByTrack(await api("/api/stages"));
  // state.stages is the order on the page, so a stage's previous one (metrics.js) is the button
  // above it, across a track's boundary too (atomics/1 follows reduction/9).
  state.stages = groups.flatMap((group) => group.stages);
  renderStageNav(groups);
  const wanted = decodeURIComponent(location.hash.slice(1));
  if (state.stages.some((stage) => stage.id === wanted)) selectStage(wanted);
}

// Opens a stage. Only the newest opening goes on after each answer: a click on another stage, or
// a change of learner meanwhile, wins.
let openings = 0;
let wanted = null;
export async function selectStage(id) {
  const mine = ++openings;
  wanted = id;
  flushDrafts();  // the stage left behind keeps what was typed in it
  const stage = await api(`/api/stages/${id}`);
  if (mine !== openings) return;
  await openDrafts([stage.id]);
  if (mine !== openings) return;
  state.stage = stage;
  location.hash = stage.id;
  for (const button of document.querySelectorAll("nav button")) {
    const current = button.dataset.stage === stage.id;
    button.classList.toggle("current", current);
    if (current) button.setAttribute("aria-current", "true");
    else button.removeAttribute("aria-current");
  }
  const lesson = $("#lesson");
  lesson.innerHTML = stage.lesson_html;  // server-rendered, raw HTML stripped
  // lesson.js (math, code highlighting, diagrams); a page without it shows the plain lesson.
  try { if (window.cudojoLesson) window.cudojoLesson.enhance(lesson); } catch (error) { console.error(error); }
  if (state.view === "staff") return;  // staff read the lesson; running kernels is a learner's
  $("#workbench").hidden = false;
  renderDeadlines();
  editor.refresh();  // the editor was created hidden: its gutter is measured now
  openSource(stage);
  hideDiff();
  $("#status").textContent = "";
  showLastResult(stage.id);
  loadHistory();
  loadLeaderboard();
}

// After a change of learner (main.js): the stage open, or being opened, opens again, so the
// editor, the history and the results are the new learner's (a visitor's: the starter).
export function reopenStage() {
  return wanted ? selectStage(wanted) : Promise.resolve();
}

export function startStages() {
  on(OPEN_STAGE, ({ id }) => selectStage(id));
}
