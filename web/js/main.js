// The page's entry point, loaded by index.html as <script type="module">, after the classic
// scripts of the libraries (CodeMirror, KaTeX, highlight.js, jsdiff) and lesson.js. It only wires
// the modules together and starts them; each feature lives in the module named for it:
//
//   dom.js          el and $                      api.js          the fetch wrapper, the token
//   state.js        what several modules share    events.js       the events modules send each other
//   account.js      join, sign-up, sign-in/out    dialog.js       the yes/no dialog
//   stages.js       stage list, lesson, progress  deadlines.js    "due" and "past due", late runs
//   languages.js    what we know of languages     editor.js       CodeMirror and line marks
//   source.js       the editor's text, Reset      drafts.js       the learner's drafts (server, local copy)
//   run.js          Run, Withdraw, the status     tabs.js         which result tab is shown
//   job_follow.js   following jobs, per stage
//   report.js       the Result tab                report_view.js  a report drawn into any element
//   driver.js       the Driver tab                metrics.js      the Metrics tab
//   assembly.js     the Assembly tab: resources, source beside its PTX or SASS
//   history.js      the History tab               diff.js         a line diff of two texts
//   leaderboard.js  the Leaderboard tab, opt-in   message.js      the header's message line
//   share_controls.js  "Share this run"           shared_view.js  a run shared by link (#shared/...)
//   source_view.js  a source read-only, numbered  clipboard.js    Copy
//
// and the staff's view, in staff/ (its own list is in staff/view.js).
//
// No module does anything when it is imported; this file starts them, so it alone decides what
// the page runs: it asks who the stored token is (GET /api/me) and starts the staff's view for a
// member of staff, the learner's for anyone else. When that changes (a member of staff signs in
// or out) the page reloads, so one view never runs beside the other.

import { $ } from "./dom.js";
import { state } from "./state.js";
import { ACCOUNT_CHANGED, on } from "./events.js";
import { checkStoredToken, keepNoticeForReload, showLearner, startAccount } from "./account.js";
import { startEditor } from "./editor.js";
import { startSource } from "./source.js";
import { startDrafts } from "./drafts.js";
import { startTabs } from "./tabs.js";
import { startAssembly } from "./assembly.js";
import { startRun } from "./run.js";
import { showOptIn, startLeaderboard } from "./leaderboard.js";
import { loadProgress, loadStages, reopenStage, startStages } from "./stages.js";
import { startStaffView } from "./staff/view.js";

const viewFor = (me) => (me && me.kind === "staff" ? "staff" : "learner");

function startLearnerView() {
  startEditor();
  startSource();
  startDrafts();
  startTabs();
  startAssembly();
  startRun();
  startLeaderboard();
  startStages();

  // What the learner sees of their own work follows who is signed in: the open stage opens again
  // with the new learner's drafts (a visitor's: the starter), history and results.
  on(ACCOUNT_CHANGED, () => {
    showOptIn();
    loadProgress();
    reopenStage();
  });

  showOptIn();
  loadProgress();
  loadStages().catch((error) => { $("#lesson").textContent = `Cannot reach the server: ${error.message}`; });
}

async function start() {
  startAccount();
  showLearner();
  state.view = viewFor(await checkStoredToken());
  on(ACCOUNT_CHANGED, () => {
    if (viewFor(state.me) === state.view) return;
    keepNoticeForReload();
    location.reload();
  });
  if (state.view === "staff") startStaffView();
  else startLearnerView();
}

start();
