// The course: the stage list grouped by track (the nav), the learner's progress beside each
// stage, and opening a stage (its lesson, then the editor and the tabs for it). main.js loads the
// list and the progress; run.js reloads the progress when a job ends; report.js's "Next stage"
// opens a stage through OPEN_STAGE (events.js). Deadlines beside each stage are deadlines.js's.
// Staff read the lessons here too (state.view "staff"): the lesson only, no editor, nothing of a
// learner's. The one HTML the page inserts is the lesson,
// rendered by the server (cmark-gfm in safe mode); lesson.js (window.cudojoLesson) adds math,
// highlighted code and diagrams to it.
//
// The hash names the open stage ("#reduction/3"), so a link opens it and the browser's Back and
// Forward walk the stages opened: opening one sets the hash (one history entry, none when it is
// already there), and a change of hash (Back, a link such as the landing text's) opens the stage
// it names, or the landing text again for a hash that names none. A hash that holds a link to a
// shared run (#shared/TOKEN) shows that run instead (shared_view.js), to anyone: signed out, a
// learner or staff. The tab's title names the open stage. On a phone the lesson is below the stage
// list: a stage opened by the learner scrolls into view, with the focus, else a tap would seem to
// do nothing.

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
import { OPEN_STAGE, STAGE_OPENED, on, send } from "./events.js";
import { sharedTokenOf, showSharedJob } from "./shared_view.js";

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
           el("button", { type: "button", "data-stage": stage.id, onclick: () => selectStage(stage.id, { reveal: true }) },
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

// The page's title and the lesson's landing text (index.html) as they were before any stage opened,
// for a hash that names no stage.
const landing = { title: document.title, lesson: null };

// The stage the hash names, or null: "#reduction%2F3" and "#reduction/3" both name reduction/3.
function stageOfHash() {
  const id = decodeURIComponent(location.hash.slice(1));
  return state.stages.some((stage) => stage.id === id) ? id : null;
}

function markCurrent(id) {
  for (const button of document.querySelectorAll("nav button")) {
    const current = button.dataset.stage === id;
    button.classList.toggle("current", current);
    if (current) button.setAttribute("aria-current", "true");
    else button.removeAttribute("aria-current");
  }
}

// The lesson's top into view, and the focus into the lesson, when it is out of sight: on a phone,
// where the stage list is above it, or after scrolling down to the results. Not on a wide screen
// with the lesson in view, where the focus stays on the stage button for the next Tab.
function revealLesson() {
  const lesson = $("#lesson");
  const top = lesson.getBoundingClientRect().top;
  if (top >= 0 && top < window.innerHeight / 2) return;
  lesson.scrollIntoView({ block: "start" });
  lesson.focus({ preventScroll: true });
}

// The stage list; the stage the URL's hash names opens.
export async function loadStages() {
  const groups = groupByTrack(await api("/api/stages"));
  // state.stages is the order on the page, so a stage's previous one (metrics.js) is the button
  // above it, across a track's boundary too (atomics/1 follows reduction/9).
  state.stages = groups.flatMap((group) => group.stages);
  renderStageNav(groups);
  const named = stageOfHash();
  if (named) selectStage(named);
  else openSharedFromHash();
}

// The lesson (and the editor, for a learner with a stage open) or a shared run: one at a time.
function showShared(shown) {
  $("#shared-job").hidden = !shown;
  $("#lesson").hidden = shown;
}

// When the hash holds a link to a shared run: that run, no stage current, no editor; true then.
// reveal: the link was followed on this page, so the run comes into view with the focus.
export function openSharedFromHash({ reveal = false } = {}) {
  const link = sharedTokenOf(location.hash);
  if (link === null) return false;
  const mine = ++openings;  // a stage still being opened stays closed
  wanted = null;
  flushDrafts();
  markCurrent(null);
  showShared(true);
  $("#workbench").hidden = true;
  $("#skip-to-editor").hidden = true;
  document.title = "A shared run · cudojo";
  const box = $("#shared-job");
  showSharedJob(box, link, { current: () => mine === openings }).then(() => {
    if (mine !== openings) return;
    const heading = box.querySelector(".shared-title");
    if (heading) document.title = `${heading.textContent} · cudojo`;
    if (reveal && heading) {
      heading.scrollIntoView({ block: "start" });
      heading.focus({ preventScroll: true });
    }
  });
  return true;
}

// Opens a stage. Only the newest opening goes on after each answer: a click on another stage, or
// a change of learner meanwhile, wins. reveal: the learner asked for it (a click, Back, "Next
// stage"), so the lesson is brought into view; not on loading the page or a change of learner.
let openings = 0;
let wanted = null;
export async function selectStage(id, { reveal = false } = {}) {
  const mine = ++openings;
  wanted = id;
  flushDrafts();  // the stage left behind keeps what was typed in it
  const stage = await api(`/api/stages/${id}`);
  if (mine !== openings) return;
  await openDrafts([stage.id]);
  if (mine !== openings) return;
  state.stage = stage;
  // Setting the hash it already has would add no entry either, but "#reduction%2F3" differs.
  if (stageOfHash() !== stage.id) location.hash = stage.id;
  markCurrent(stage.id);
  showShared(false);
  const lesson = $("#lesson");
  lesson.innerHTML = stage.lesson_html;  // server-rendered, raw HTML stripped
  // lesson.js (math, code highlighting, diagrams); a page without it shows the plain lesson.
  try { if (window.cudojoLesson) window.cudojoLesson.enhance(lesson); } catch (error) { console.error(error); }
  if (reveal) revealLesson();
  if (state.view === "staff") return;  // staff read the lesson; running kernels is a learner's
  document.title = `${stage.id}: ${stage.title} · cudojo`;
  $("#workbench").hidden = false;
  $("#skip-to-editor").hidden = false;
  renderDeadlines();
  editor.refresh();  // the editor was created hidden: its gutter is measured now
  openSource(stage);
  hideDiff();
  showLastResult(stage.id);
  send(STAGE_OPENED, { id: stage.id });  // run.js: this stage's job, if one waits, on the status line
  loadHistory();
  loadLeaderboard();
}

// Back past the first stage opened: the landing text, no stage current, no editor.
// state.stage stays the last stage opened: a run of it still being followed ends in its hidden
// panels.
function showLanding() {
  ++openings;  // a stage still being opened stays closed
  wanted = null;
  flushDrafts();
  markCurrent(null);
  showShared(false);
  $("#lesson").replaceChildren(...landing.lesson.map((node) => node.cloneNode(true)));
  $("#workbench").hidden = true;
  $("#skip-to-editor").hidden = true;
  document.title = landing.title;
}

// After a change of learner (main.js): the stage open, or being opened, opens again, so the
// editor, the history and the results are the new learner's (a visitor's: the starter).
export function reopenStage() {
  return wanted ? selectStage(wanted) : Promise.resolve();
}

// The skip links (index.html) move the focus without touching the hash, which names the stage.
function startSkipLinks() {
  $("#skip-to-lesson").addEventListener("click", (event) => {
    event.preventDefault();
    if ($("#lesson").hidden) $("#shared-job .shared-title")?.focus();  // a shared run is shown instead
    else $("#lesson").focus();
  });
  $("#skip-to-editor").addEventListener("click", (event) => {  // shown while a stage is open
    event.preventDefault();
    editor.focus();
  });
}

export function startStages() {
  landing.lesson = [...$("#lesson").childNodes].map((node) => node.cloneNode(true));
  on(OPEN_STAGE, ({ id }) => selectStage(id, { reveal: true }));
  startSkipLinks();
  // The staff's view routes its own hash (staff/view.js); the learner's is the stage's.
  if (state.view === "staff") return;
  window.addEventListener("hashchange", () => {
    const named = stageOfHash();
    if (named && !(state.stage && state.stage.id === named && wanted === named)) selectStage(named, { reveal: true });
    else if (!named && openSharedFromHash({ reveal: true })) return;
    else if (!named && state.stages.length) showLanding();
  });
}
