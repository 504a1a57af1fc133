// Running the kernel: Run (or Ctrl+Enter, Cmd+Enter on a Mac) submits the editor's text of the open
// stage; job_follow.js follows the job until its report comes. Owns the Run and Withdraw buttons,
// the status line beside them (for the open stage's job: its place in the queue or its phase, for
// how long, whether any judge is running, whether the server answers) and the line under them that
// says when a job of another stage is judged. Run is held only on the stage whose job is waiting:
// the learner may open and run other stages meanwhile. A report goes to its own stage, never to
// whichever stage is open when it comes. The drafts are saved as the run is sent (drafts.js).

import { $, el } from "./dom.js";
import { state } from "./state.js";
import { api, token } from "./api.js";
import { editor } from "./editor.js";
import { flushDrafts } from "./drafts.js";
import { isLate } from "./deadlines.js";
import { keepReport, showReport, verdictBadge } from "./report.js";
import { loadHistory } from "./history.js";
import { loadProgress } from "./stages.js";
import { ACCOUNT_CHANGED, OPEN_STAGE, STAGE_OPENED, on, send } from "./events.js";
import {
  anyJudgeOnline, currentAccount, follow, followedJob, followedJobs, forgetAll, resume, secondsLeftAtQueuePace, whenFollowed,
  withdraw,
} from "./job_follow.js";

const openStageId = () => (state.stage ? state.stage.id : null);
const seconds = (since) => Math.max(0, Math.round((Date.now() - since) / 1000));
// What the status line said last for a stage whose job ended ("done in 1.2 s", "withdrawn ..."),
// kept until that stage's next run.
const lastWords = new Map();
let submitting = null;  // the stage whose submission is on its way

// The open stage's job in words: where it is, for how long, and anything that holds it up.
function describe(entry) {
  const waited = `${seconds(entry.since)} s`;
  if (entry.unreachableSince) {
    return `the server does not answer (for ${seconds(entry.unreachableSince)} s); still asking · waiting ${waited}`;
  }
  const job = entry.progress || {};
  if (job.state === "running") return `running: ${job.phase || "starting"} · ${waited}`;
  const left = secondsLeftAtQueuePace(entry);
  const pace = left === null ? "" : ` · about ${Math.max(1, Math.round(left))} s more at the queue's pace so far`;
  const place = `queued, ${job.position ?? 0} ahead · ${waited}${pace}`;
  if (anyJudgeOnline() === false) {
    return `${place} · no judge is running on this server now: your job waits until one starts (or withdraw it)`;
  }
  return place;
}

function render() {
  const stage = openStageId();
  const entry = stage ? followedJob(stage) : null;
  const waiting = Boolean(entry) || submitting === stage;
  $("#run").disabled = waiting;
  $("#run").title = waiting ? "This stage's run is still being judged" : "Run (Ctrl+Enter or Cmd+Enter)";
  $("#withdraw").hidden = !(entry && entry.progress && entry.progress.state === "queued");
  if (entry) $("#status").textContent = describe(entry);
  else if (submitting !== stage) $("#status").textContent = (stage && lastWords.get(stage)) || "";
}

// A job of a stage not open now was judged: said under the bar, with a link to that stage, whose
// Result tab shows it once opened.
function sayJudgedElsewhere(stage, report) {
  const open = el("a", { href: `#${stage}`, onclick: (event) => { event.preventDefault(); send(OPEN_STAGE, { id: stage }); } },
                  `open ${stage}`);
  const note = el("p", { class: "judged-elsewhere", "data-stage": stage },
                  `Your run of ${stage} is judged: `, verdictBadge(report.verdict), " ", open);
  const box = $("#judged-elsewhere");
  box.querySelector(`[data-stage="${CSS.escape(stage)}"]`)?.remove();
  box.append(note);
  box.hidden = false;
}

function clearJudgedElsewhere(stage) {
  const box = $("#judged-elsewhere");
  box.querySelector(`[data-stage="${CSS.escape(stage)}"]`)?.remove();
  box.hidden = box.childElementCount === 0;
}

function judged(entry, job) {
  if (!job) {
    lastWords.set(entry.stage, entry.gone || "");
    return;
  }
  const report = { language: job.language, ...job.report, job_id: job.id, stage: job.stage || entry.stage, late: isLate(job),
                   stage_version_current: job.stage_version_current, submitted_source: entry.source,
                   ncu_report: job.ncu_report };
  const took = job.queued_to_verdict_ms ? `done in ${(job.queued_to_verdict_ms / 1000).toFixed(2)} s (queued to verdict)` : "done";
  lastWords.set(entry.stage, took);
  if (entry.stage === openStageId()) {
    showReport(report, { keep: true });
    loadHistory();
  } else {
    keepReport(report);
    sayJudgedElsewhere(entry.stage, report);
  }
  loadProgress();
}

async function run() {
  const stage = openStageId();
  if (!stage || $("#run").disabled) return;
  if (!token()) {
    // Signing up is its own decision, made in the header's form: Run never makes an account.
    $("#status").textContent = "Sign up or sign in first (at the top of the page); then Run.";
    $("#learner-name").focus();
    return;
  }
  flushDrafts();
  const source = editor.getValue();
  const asked = currentAccount();
  submitting = stage;
  lastWords.delete(stage);
  clearJudgedElsewhere(stage);
  render();
  $("#status").textContent = "submitting...";
  // One key per press of Run: when the answer is lost (the connection dropped, or the server's
  // database was briefly away) the same submission is sent again under it, and the server gives
  // back the job it already queued rather than a second one.
  const submission = {
    method: "POST",
    body: JSON.stringify({ stage, source, language: state.language, profile: $("#profile").checked }),
    idempotencyKey: submissionKey(),
  };
  try {
    let job;
    for (let attempt = 1; ; attempt++) {
      try {
        job = await api("/api/jobs", submission);
        break;
      } catch (error) {
        const lost = error.status === undefined || error.status === 502 || error.status === 503;
        if (!lost || attempt === 3) throw error;
        if (openStageId() === stage) $("#status").textContent = "the server did not answer; sending again...";
        await new Promise((resolve) => setTimeout(resolve, 1000 * attempt));
      }
    }
    submitting = null;
    const entry = follow(stage, { state: "queued", position: 0, stage, ...job }, Date.now(), asked);
    if (entry) entry.source = source;
    else render();  // the learner changed meanwhile: that job is not this page's any more
  } catch (error) {
    submitting = null;
    lastWords.set(stage, error.message);
    render();
  }
}

// 128 random bits as hex. Not crypto.randomUUID, which browsers offer only over HTTPS or on
// localhost; a class server on plain HTTP must work too.
function submissionKey() {
  return Array.from(crypto.getRandomValues(new Uint8Array(16)), (byte) => byte.toString(16).padStart(2, "0")).join("");
}

async function withdrawOpenStage() {
  const stage = openStageId();
  $("#withdraw").disabled = true;  // one DELETE per press, not a second that would answer 404
  try {
    await withdraw(stage);
  } catch (error) {
    lastWords.set(stage, `not withdrawn: ${error.message}`);
    if (openStageId() === stage) $("#status").textContent = lastWords.get(stage);
  } finally {
    $("#withdraw").disabled = false;
  }
}

export function startRun() {
  const withdrawButton = el("button", { id: "withdraw", type: "button", class: "secondary", hidden: true,
                                        title: "Take this run out of the queue before it is judged" }, "Withdraw");
  $("#status").before(withdrawButton);
  $(".bar").after(el("div", { id: "judged-elsewhere", role: "status", "aria-live": "polite", hidden: true }));
  withdrawButton.addEventListener("click", withdrawOpenStage);
  whenFollowed({ changed: render, done: judged });
  // The elapsed time on the status line moves while anything is followed.
  setInterval(() => { if (followedJobs().length) render(); }, 1000);
  on(STAGE_OPENED, ({ id }) => {
    clearJudgedElsewhere(id);
    render();
    if (token()) resume(id);
  });
  on(ACCOUNT_CHANGED, () => {
    forgetAll();
    lastWords.clear();
    $("#judged-elsewhere").replaceChildren();
    $("#judged-elsewhere").hidden = true;
  });
  $("#run").addEventListener("click", run);
  editor.setOption("extraKeys", { "Ctrl-Enter": () => run(), "Cmd-Enter": () => run() });
  // Ctrl+Enter (Cmd+Enter on a Mac) runs from anywhere on the page; inside the editor its keymap does.
  document.addEventListener("keydown", (event) => {
    if (event.key !== "Enter" || !(event.ctrlKey || event.metaKey)) return;
    if (event.target.closest && event.target.closest(".CodeMirror")) return;
    if ($("#confirm-dialog").open) return;
    event.preventDefault();
    run();
  });
}
