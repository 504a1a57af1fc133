// The page's entry point, loaded by index.html as <script type="module">, after the classic
// scripts of the libraries (CodeMirror, KaTeX, highlight.js, jsdiff) and lesson.js. It only wires
// the modules together and starts them; each feature lives in the module named for it:
//
//   dom.js          el and $                      api.js          the fetch wrapper, the token
//   state.js        what several modules share    events.js       the events modules send each other
//   account.js      sign-up, sign-in, sign-out    dialog.js       the yes/no dialog
//   stages.js       stage list, lesson, progress  languages.js    what we know about each language
//   editor.js       CodeMirror and line marks     source.js       the editor's text, language switch, Reset
//   drafts.js       the learner's drafts          run.js          Run, following a job
//   tabs.js         which result tab is shown     report.js       the Result tab
//   driver.js       the Driver tab                metrics.js      the Metrics tab
//   history.js      the History tab and diff      leaderboard.js  the Leaderboard tab and opt-in
//
// No module does anything when it is imported; this file starts them, so it alone decides what
// the page runs. Today that is one view, the learner's. Another view (an instructor's, in its own
// folder under js/) would be chosen here, before anything is started.

import { $ } from "./dom.js";
import { state } from "./state.js";
import { ACCOUNT_CHANGED, on } from "./events.js";
import { checkStoredToken, showLearner, startAccount } from "./account.js";
import { startEditor } from "./editor.js";
import { startSource } from "./source.js";
import { startTabs } from "./tabs.js";
import { startRun } from "./run.js";
import { loadLeaderboard, showOptIn, startLeaderboard } from "./leaderboard.js";
import { loadHistory } from "./history.js";
import { loadProgress, loadStages, startStages } from "./stages.js";

function startLearnerView() {
  startEditor();
  startAccount();
  startSource();
  startTabs();
  startRun();
  startLeaderboard();
  startStages();

  // What the learner sees of their own runs follows who is signed in.
  on(ACCOUNT_CHANGED, () => {
    showOptIn();
    loadProgress();
    if (state.stage) { loadHistory(); loadLeaderboard(); }
  });

  showLearner();
  checkStoredToken().finally(() => {
    showOptIn();
    loadProgress();
  });
  loadStages().catch((error) => { $("#lesson").textContent = `Cannot reach the server: ${error.message}`; });
}

startLearnerView();
