// Running the kernel: Run (or Ctrl+Enter, Cmd+Enter on a Mac) submits the editor's text, then
// follows the job until its report comes. Owns the Run button and the status line beside it.
//
// Following a job: a stream of its progress (EventSource, opened with a one-use ticket, since a
// browser cannot send the token as a header there and a token in a URL would be logged), or, when
// no stream can be had (the server's places are taken, the learner opened one elsewhere, the
// connection dropped), a poll once a second. The report goes to report.js, marked late when the
// run came after the stage's deadline; the history and the progress are asked again. The drafts
// are saved as the run is sent (drafts.js).

import { $ } from "./dom.js";
import { state } from "./state.js";
import { api, token } from "./api.js";
import { editor } from "./editor.js";
import { signUp } from "./account.js";
import { accountMessage } from "./message.js";
import { flushDrafts } from "./drafts.js";
import { isLate } from "./deadlines.js";
import { showReport } from "./report.js";
import { loadHistory } from "./history.js";
import { loadProgress } from "./stages.js";

// The job the page follows now; a stream ticket that arrives for an older one is not used.
let followedJob = null;

function describeProgress(job) {
  if (job.state === "queued") return `queued, ${job.position} ahead`;
  if (job.state === "running") return `running: ${job.phase}`;
  return "done";
}

// 128 random bits as hex. Not crypto.randomUUID, which browsers offer only over HTTPS or on
// localhost; a class server on plain HTTP must work too.
function submissionKey() {
  return Array.from(crypto.getRandomValues(new Uint8Array(16)), (byte) => byte.toString(16).padStart(2, "0")).join("");
}

async function run() {
  if (!state.stage || $("#run").disabled) return;
  if (!token()) {
    if (!$("#learner-name").value.trim()) {
      $("#status").textContent = "Type a display name and sign up (or sign in with a token) first.";
      $("#learner-name").focus();
      return;
    }
    try { await signUp(); } catch (error) { accountMessage(`Sign-up failed: ${error.message}`); return; }
  }
  flushDrafts();
  $("#run").disabled = true;
  $("#status").textContent = "submitting...";
  // One key per press of Run: when the answer is lost (the connection dropped, or the server's
  // database was briefly away) the same submission is sent again under it, and the server gives
  // back the job it already queued rather than a second one.
  const submission = {
    method: "POST",
    body: JSON.stringify({ stage: state.stage.id, source: editor.getValue(), language: state.language }),
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
        $("#status").textContent = "the server did not answer; sending again...";
        await new Promise((resolve) => setTimeout(resolve, 1000 * attempt));
      }
    }
    followedJob = job.id;
    $("#status").textContent = describeProgress(job);
    follow(job.id);
  } catch (error) {
    $("#status").textContent = error.message;
    $("#run").disabled = false;
  }
}

// The job is judged: its report is shown and kept, `status` says so.
function finished(job, status) {
  $("#run").disabled = false;
  $("#status").textContent = status;
  showReport({ language: job.language, ...job.report, late: isLate(job), stage_version_current: job.stage_version_current }, { keep: true });
  loadHistory();
  loadProgress();
}

async function follow(id) {
  if (state.events) state.events.close();
  state.events = null;
  let ticket;
  try {
    ticket = await api(`/api/jobs/${id}/ticket`, { method: "POST", body: "{}" });
  } catch (error) {
    return poll(id);
  }
  if (followedJob !== id) return;
  const events = new EventSource(ticket.events);
  state.events = events;
  events.addEventListener("progress", (event) => {
    $("#status").textContent = describeProgress(JSON.parse(event.data));
  });
  events.addEventListener("result", (event) => {
    events.close();
    const job = JSON.parse(event.data);
    finished(job, `done in ${(job.queued_to_verdict_ms / 1000).toFixed(2)} s (queued to verdict)`);
  });
  // This learner opened another stream (another tab): this one polls instead of taking it back.
  events.addEventListener("replaced", () => {
    events.close();
    poll(id);
  });
  events.onerror = () => {
    // The stream ended early (server restart, network) or was refused: ask once a second instead.
    events.close();
    poll(id);
  };
}

function poll(id) {
  const ask = async () => {
    const job = await api(`/api/jobs/${id}`).catch(() => null);
    if (job && job.state === "done") {
      finished(job, "done");
    } else {
      if (job) $("#status").textContent = describeProgress(job);
      setTimeout(ask, 1000);
    }
  };
  ask();
}

export function startRun() {
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
