// Following a learner's jobs until their reports come, one per stage at most (a learner may run
// reduction/3 and go on to read reduction/1 while it waits). Each job is followed by a stream of
// its progress (EventSource, opened with a one-use ticket: a browser cannot send the token as a
// header there, and a token in a URL would be logged) or, when no stream can be had (the server's
// places are taken, the learner opened one elsewhere, the connection dropped), by a poll once a
// second. What is known of each job (its progress, since when, whether the server answers, whether
// any judge is running) is kept here; run.js draws it for the open stage.

import { state } from "./state.js";
import { api } from "./api.js";

// stage id -> { id, stage, since, progress, unreachableSince, gone, events }
const followed = new Map();
let judgesOnline = null;  // null: not asked yet; else whether any node has judges (GET /api/nodes)
let judgesAskedAt = 0;
// Bumped when the learner changes (forgetAll): an answer asked for under an older account is dropped.
let account = 0;
export const currentAccount = () => account;
let onChange = () => {};
let onDone = () => {};

export const followedJob = (stageId) => followed.get(stageId) || null;
export const followedJobs = () => [...followed.values()];
export const anyJudgeOnline = () => judgesOnline;

// run.js's callbacks: `changed()` when anything shown may have changed, `done(entry, job)` when a
// job's report came (the entry is no longer followed then).
export function whenFollowed({ changed, done }) {
  onChange = changed;
  onDone = done;
}

// Whether the server has any judge at all (a node with workers, seen in the last minute): a job
// queued on a server with none waits until one starts, and the learner is told so. Asked at most
// every 5 s, and only while a job is queued.
async function askForJudges() {
  if (Date.now() - judgesAskedAt < 5000) return;
  judgesAskedAt = Date.now();
  const nodes = await api("/api/nodes").catch(() => null);
  if (Array.isArray(nodes)) judgesOnline = nodes.some((node) => (node.workers || 0) > 0);
  onChange();
}

// The queue's pace as this page saw it: places gained per second since the job's first known place.
// Seconds left at that pace, or null until the place has moved and 3 s have passed (a pace read
// over less says nothing).
export function secondsLeftAtQueuePace(entry) {
  const first = entry.firstPlace, job = entry.progress;
  if (!first || !job || job.state !== "queued" || !(first.position > job.position)) return null;
  const seconds = (Date.now() - first.at) / 1000;
  if (seconds < 3) return null;
  const perSecond = (first.position - job.position) / seconds;
  return perSecond > 0 ? (job.position + 1) / perSecond : null;
}

// A job read under this id that is not this stage's (its id was withdrawn and given out again):
// no longer ours to follow.
const notThisStages = (entry, job) => job && job.stage && job.stage !== entry.stage;

function update(entry, job) {
  if (followed.get(entry.stage) !== entry) return;  // replaced by a newer run meanwhile
  if (notThisStages(entry, job)) return forget(entry, "this job is no longer queued: it was withdrawn");
  if (job.state === "queued" && typeof job.position === "number" && !entry.firstPlace) {
    entry.firstPlace = { position: job.position, at: Date.now() };
  }
  entry.progress = job;
  entry.unreachableSince = null;
  if (job.state === "queued") askForJudges();
  onChange();
}

function finish(entry, job) {
  if (followed.get(entry.stage) !== entry) return;
  if (notThisStages(entry, job)) return forget(entry, "this job is no longer queued: it was withdrawn");
  stopStream(entry);
  followed.delete(entry.stage);
  onDone(entry, job);
  onChange();
}

function stopStream(entry) {
  if (!entry.events) return;
  entry.events.close();
  if (state.events === entry.events) state.events = null;
  entry.events = null;
}

// The job is no longer on the server (withdrawn, here or in another tab).
function forget(entry, why) {
  if (followed.get(entry.stage) !== entry) return;
  stopStream(entry);
  followed.delete(entry.stage);
  entry.gone = why;
  onDone(entry, null);
  onChange();
}

function poll(entry) {
  const ask = async () => {
    if (followed.get(entry.stage) !== entry) return;
    try {
      const job = await api(`/api/jobs/${entry.id}`);
      if (job.state === "done") return finish(entry, job);
      update(entry, job);
    } catch (error) {
      if (error.status === 404) return forget(entry, "this job is no longer queued: it was withdrawn");
      // Signed out, or another account: this job is not the page's to ask about any more.
      if (error.status === 401 || error.status === 403) return forget(entry, "");
      // The server did not answer, or answered with an error: said, with since when, and asked again.
      if (!entry.unreachableSince) entry.unreachableSince = Date.now();
      onChange();
    }
    setTimeout(ask, 1000);
  };
  ask();
}

async function stream(entry) {
  let ticket;
  try {
    ticket = await api(`/api/jobs/${entry.id}/ticket`, { method: "POST", body: "{}" });
  } catch (error) {
    return poll(entry);
  }
  if (followed.get(entry.stage) !== entry) return;
  const events = new EventSource(ticket.events);
  entry.events = events;
  state.events = events;
  events.addEventListener("progress", (event) => update(entry, JSON.parse(event.data)));
  events.addEventListener("result", (event) => finish(entry, JSON.parse(event.data)));
  // This learner opened another stream (another tab): this one polls instead of taking it back.
  events.addEventListener("replaced", () => {
    stopStream(entry);
    poll(entry);
  });
  events.onerror = () => {
    // The stream ended early (server restart, network, the job withdrawn) or was refused: polled.
    stopStream(entry);
    poll(entry);
  };
}

// Starts following `job` (as POST /api/jobs or GET /api/jobs/{id} gave it) of `stage`; a job of
// that stage followed before is let go (its report still comes to the history).
// `asked`: currentAccount() when the job was asked for; an answer that comes after the learner
// changed is not followed (null).
export function follow(stage, job, since = Date.now(), asked = account) {
  if (asked !== account) return null;
  const old = followed.get(stage);
  if (old) stopStream(old);
  const entry = { id: job.id, stage, since, progress: job, unreachableSince: null, gone: null, events: null,
                  firstPlace: job.state === "queued" && typeof job.position === "number" ? { position: job.position, at: Date.now() } : null };
  followed.set(stage, entry);
  if (job.state === "queued") askForJudges();
  onChange();
  stream(entry);
  return entry;
}

// Withdraws the stage's job while it is queued (DELETE /api/jobs/{id}); throws with the server's
// words when it is running or done already.
export async function withdraw(stage) {
  const entry = followed.get(stage);
  if (!entry) return;
  await api(`/api/jobs/${entry.id}`, { method: "DELETE" });
  forget(entry, "withdrawn: it left the queue, and your source is still in the editor");
}

// The page was reloaded, or another learner signed in: nothing is followed. Jobs of the learner
// still waiting are found again by resume().
export function forgetAll() {
  account += 1;
  for (const entry of followed.values()) stopStream(entry);
  followed.clear();
  onChange();
}

// The learner's jobs on `stage` that are not done yet (a reload while one waited): the newest is
// followed again, from when it was queued.
export async function resume(stage) {
  if (followed.has(stage)) return;
  const asked = account;
  const history = await api(`/api/history?stage=${encodeURIComponent(stage)}&limit=5`).catch(() => null);
  const waiting = history && Array.isArray(history.jobs) ? history.jobs.find((job) => job.state !== "done") : null;
  if (!waiting || followed.has(stage)) return;
  const since = typeof waiting.created_at === "number" ? waiting.created_at * 1000 : Date.now();
  follow(stage, { id: waiting.id, stage, state: waiting.state, position: waiting.position ?? 0, phase: waiting.phase || "" },
         since, asked);
}
