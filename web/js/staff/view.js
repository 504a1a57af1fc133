// The staff's view: what a member of staff (an administrator, or an instructor or teaching
// assistant of a class) sees instead of the learner's editor. main.js starts it when GET /api/me
// says kind "staff". The hash says which view is shown (router.js); each view is one module:
//
//   router.js     the hash: parse and write          frame.js      a class's name, role and tabs
//   ui.js         tables, fields, messages           secret.js     a token shown once, with Copy
//   download.js   saving an export as a file         classes.js    the class list, a new class
//   accounts.js   staff accounts (administrators)    grid.js       the progress grid and its controls
//   grid_cells.js a grid cell in words, sort, filter learner.js    a learner's runs
//   job.js        a run: report, source, diff        roster.js     roster import, tokens to hand out
//   roster_table.js the roster, edit and reset       deadlines.js  each stage's deadline
//   members.js    a class's staff                    audit.js      the audit logs
//   settings.js   name, invite code, switches        rejudge.js    stage versions, new rejudging, list
//   rejudging.js  one rejudging: flips, apply        rejudge_words.js  a rejudging in words
//   links.js      learners' live links to runs, Stop
//
// A teaching assistant sees the same views without the buttons that change anything (the server
// refuses them too). The lessons stay readable: #reduction/3 shows the course as learners read it,
// and a link to a run a learner shared (#shared/TOKEN) shows that run as it shows anyone.

import { $, el } from "../dom.js";
import { state } from "../state.js";
import { api } from "../api.js";
import { loadStages, openSharedFromHash, selectStage, startStages } from "../stages.js";
import { parseHash } from "./router.js";
import { canChange, classFrame } from "./frame.js";
import { failure, message } from "./ui.js";
import { showClasses } from "./classes.js";
import { showGrid } from "./grid.js";
import { showLearnerRuns } from "./learner.js";
import { showJob } from "./job.js";
import { showRoster } from "./roster.js";
import { showDeadlines } from "./deadlines.js";
import { showMembers } from "./members.js";
import { showClassAudit, showServerAudit } from "./audit.js";
import { showSettings } from "./settings.js";
import { showRejudge } from "./rejudge.js";
import { showRejudging } from "./rejudging.js";
import { showLinks } from "./links.js";

const VIEWS = {
  classes: showClasses, "server-audit": showServerAudit, grid: showGrid, learner: showLearnerRuns, job: showJob,
  roster: showRoster, deadlines: showDeadlines, staff: showMembers, audit: showClassAudit, settings: showSettings,
  rejudge: showRejudge, rejudging: showRejudging, links: showLinks,
};

let navigation = 0;  // the newest navigation; an older one's late answer draws nothing
let courseStarted = false;

function showCourse(where) {
  if (!courseStarted) {
    courseStarted = true;
    startStages();
    loadStages().catch((error) => { $("#lesson").textContent = `Cannot reach the server: ${error.message}`; });
  } else if (openSharedFromHash({ reveal: true })) {
    // a run a learner shared (#shared/TOKEN): staff open it as anyone does
  } else if (where.stageId && (!state.stage || state.stage.id !== where.stageId)
             && state.stages.some((stage) => stage.id === where.stageId)) {
    selectStage(where.stageId);
  }
}

async function route({ focus = false } = {}) {
  const where = parseHash(location.hash);
  const mine = ++navigation;
  const course = where.view === "course";
  $(".layout").hidden = !course;
  $("#staff").hidden = course;
  for (const link of document.querySelectorAll("#staff-bar a")) {
    if ((link.dataset.part === "course") === course) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  if (course) return showCourse(where);
  const box = $("#staff");
  const context = { ...where, me: state.me, current: () => mine === navigation, refresh: () => route() };
  try {
    let target = box;
    if (where.classId !== undefined) {
      context.cls = await api(`/api/classes/${where.classId}`);
      if (!context.current()) return;
      context.canChange = canChange(context.cls);
      target = classFrame(box, context.cls, where.view);
    }
    target.replaceChildren(message("Loading..."));
    await VIEWS[where.view](target, context);
  } catch (error) {
    if (context.current()) box.replaceChildren(el("p", { class: "crumbs" }, el("a", { href: "#classes" }, "All classes")), failure("Cannot show this", error));
  }
  if (focus && context.current()) {
    const title = box.querySelector(".staff-content .staff-heading") || box.querySelector(".staff-heading");
    if (title) title.focus();
  }
}

export function startStaffView() {
  document.body.classList.add("staff-view");
  $("#staff-bar").hidden = false;
  window.addEventListener("hashchange", () => route({ focus: true }));
  route();
}
