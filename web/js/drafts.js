// The learner's drafts: one text per stage and language, whatever the editor held last. Every
// read and write of a draft goes through the functions here: stages.js opens a stage's drafts,
// source.js keeps one on each edit, history.js reads one before replacing it, account.js names
// their owner, run.js saves them before a run.
//
// Where they live. A signed-in learner's drafts live on the server (GET/PUT/DELETE /api/drafts):
// an edit is sent a second after typing stops, and at once before a run, a switch of stage or
// language, and when the page is hidden (fetch keepalive). This browser keeps a copy of each,
// cudojo.drafts.LEARNER.STAGE.LANGUAGE = {stage, language, source, sent}, so a learner whose server
// cannot be reached keeps working; copies not yet sent go first whenever the server answers. A
// visitor who is not signed in keeps drafts in memory only. Sign-out removes every copy, so the
// next learner at this browser sees nothing of the last one's.
//
// Drafts from before the server kept them (cudojo.draft.STAGE.LANGUAGE, cudojo.draft.STAGE for
// CUDA, their owner in cudojo.drafts-owner) are sent once when that same learner signs in, where
// the server has none, and deleted when anyone else does. A draft equal to the starter is not
// kept (null below), so a stage whose starter changes on the server shows the new one.

import { api } from "./api.js";

const LOCAL_PREFIX = "cudojo.drafts.";
const OLD_PREFIX = "cudojo.draft.";
const OLD_OWNER_KEY = "cudojo.drafts-owner";
const SAVE_AFTER_MS = 1000;

let owner = null;          // the learner id (a string) the drafts belong to; null for a visitor
const memory = new Map();  // "STAGE\nLANGUAGE" -> the draft, or null for the starter
let saveTimer = null;
let retryTimer = null;  // a send refused for now (no network, 429, 5xx) is tried again by itself
let sending = Promise.resolve();  // sends run one after another, so the server keeps the newest
let onState = () => {};

const memoryKey = (stage, language) => `${stage}\n${language}`;
const localKey = (learner, stage, language) => `${LOCAL_PREFIX}${learner}.${stage}.${language}`;
const draftPath = (stage, language) =>
  `/api/drafts/${stage.split("/").map(encodeURIComponent).join("/")}/${encodeURIComponent(language)}`;

function readLocal(key) {
  try { return JSON.parse(localStorage.getItem(key)); } catch { return null; }
}

function writeLocal(stage, language, source, sent) {
  // A full storage keeps the draft in memory only; it is then sent only while the page is open.
  try { localStorage.setItem(localKey(owner, stage, language), JSON.stringify({ stage, language, source, sent })); } catch { /* full */ }
}

function localKeys(keep) {
  return Array.from({ length: localStorage.length }, (_, i) => localStorage.key(i)).filter((key) => key && keep(key));
}

function localCopies(learner) {
  return localKeys((key) => key.startsWith(`${LOCAL_PREFIX}${learner}.`))
    .map((key) => ({ key, ...readLocal(key) })).filter((copy) => copy.stage && copy.language);
}

// Tells source.js how the last save went, in words for the line beside Run.
export function watchDrafts(listener) {
  onState = listener;
}

async function sendCopy(copy, keepalive) {
  const options = copy.source === null ? { method: "DELETE", keepalive }
    : { method: "PUT", body: JSON.stringify({ source: copy.source }), keepalive };
  await api(draftPath(copy.stage, copy.language), options);
  const now = readLocal(copy.key);
  if (!now || now.source !== copy.source) return;  // edited again meanwhile: the newer text goes next
  if (copy.source === null) localStorage.removeItem(copy.key);
  else localStorage.setItem(copy.key, JSON.stringify({ ...now, sent: true }));
}

// What a failed send means: "later" (tried again by itself, after `seconds`), "stop" (the token is
// refused: account.js signs out) or "skip" (this draft cannot be sent; the others go on).
function failed(error, copy) {
  if (error.status === undefined || error.status >= 500) {
    onState("draft kept in this browser: the server cannot be reached; it is sent when it can be");
    return { next: "later", seconds: 15 };
  }
  if (error.status === 429) {
    onState("draft kept in this browser: the server asks to wait; it is sent again shortly");
    return { next: "later", seconds: error.retryAfter || 30 };
  }
  if (error.status === 401) return { next: "stop" };
  if (error.status === 404) localStorage.removeItem(copy.key);  // the stage or language is gone
  onState(error.status === 413 ? "draft too long for the server (64 KiB at most); kept in this browser"
    : `draft not saved: ${error.message}`);
  return { next: "skip" };
}

async function sendUnsent(learner) {
  const unsent = localCopies(learner).filter((copy) => !copy.sent);
  for (const copy of unsent) {
    if (owner !== learner) return;  // signed out meanwhile
    try {
      await sendCopy(copy, false);
    } catch (error) {
      const { next, seconds } = failed(error, copy);
      if (next === "later") retryTimer = setTimeout(() => flushDrafts(), seconds * 1000);
      if (next !== "skip") return;
    }
  }
  if (unsent.length && owner === learner && !hasUnsentDrafts()) onState("draft saved");
}

// Sends every draft not yet on the server now. keepalive: the page is going away, so the requests
// are fired to outlive it and nothing waits for them.
export function flushDrafts({ keepalive = false } = {}) {
  clearTimeout(saveTimer);
  clearTimeout(retryTimer);
  if (owner === null) return Promise.resolve();
  const learner = owner;
  if (keepalive) {
    for (const copy of localCopies(learner).filter((c) => !c.sent)) sendCopy(copy, true).catch(() => {});
    return Promise.resolve();
  }
  sending = sending.then(() => sendUnsent(learner));
  return sending;
}

export function hasUnsentDrafts() {
  return owner !== null && localCopies(owner).some((copy) => !copy.sent);
}

// Makes a stage's drafts ready to read: what this browser has not sent goes first, then the
// server's drafts of the stage replace what was known; a server that cannot be reached leaves the
// local copies standing. Visitors have nothing to fetch.
export async function openDrafts(stageIds) {
  if (owner === null) return;
  const learner = owner;
  await flushDrafts();
  const query = stageIds.length === 1 ? `?stage=${encodeURIComponent(stageIds[0])}` : "";
  const answer = await api(`/api/drafts${query}`).catch(() => null);
  if (!answer || owner !== learner) return;
  const wanted = new Set(stageIds);
  for (const key of [...memory.keys()]) if (wanted.has(key.split("\n")[0])) memory.delete(key);
  const unsent = new Set();
  for (const copy of localCopies(learner).filter((c) => wanted.has(c.stage))) {
    if (copy.sent) localStorage.removeItem(copy.key);  // the server's answer below stands instead
    else { memory.set(memoryKey(copy.stage, copy.language), copy.source); unsent.add(memoryKey(copy.stage, copy.language)); }
  }
  for (const draft of answer.drafts.filter((d) => wanted.has(d.stage))) {
    if (unsent.has(memoryKey(draft.stage, draft.language))) continue;
    memory.set(memoryKey(draft.stage, draft.language), draft.source);
    writeLocal(draft.stage, draft.language, draft.source, true);
  }
}

// The draft of a stage in a language, or null when there is none (the starter stands).
export function readDraft(stageId, language) {
  const key = memoryKey(stageId, language);
  if (memory.has(key)) return memory.get(key);
  const copy = owner === null ? null : readLocal(localKey(owner, stageId, language));
  return copy ? copy.source : null;
}

// Keeps `text` as the draft; text equal to the starter drops the draft instead.
export function keepDraft(stageId, language, text, starter) {
  const source = text === starter ? null : text;
  if (source === readDraft(stageId, language)) return;
  memory.set(memoryKey(stageId, language), source);
  if (owner === null) return;
  writeLocal(stageId, language, source, false);
  clearTimeout(saveTimer);
  saveTimer = setTimeout(() => flushDrafts(), SAVE_AFTER_MS);
}

// Old drafts of this learner and a visitor's drafts typed before signing in: each is kept as a
// copy to send where the server has no draft of that stage and language. Old drafts of anyone
// else are deleted; a server that cannot be reached leaves the old ones for the next sign-in.
async function adoptDrafts(learner, visitorDrafts) {
  const oldKeys = localKeys((key) => key.startsWith(OLD_PREFIX));
  const candidates = [...visitorDrafts];
  if (localStorage.getItem(OLD_OWNER_KEY) === learner) {
    for (const key of oldKeys) {
      const rest = key.slice(OLD_PREFIX.length);
      const dot = rest.lastIndexOf(".");
      const [stage, language] = dot > rest.lastIndexOf("/") ? [rest.slice(0, dot), rest.slice(dot + 1)] : [rest, "cuda"];
      candidates.push({ stage, language, source: localStorage.getItem(key) });
    }
  }
  let onServer = new Set();
  if (candidates.length) {
    const answer = await api("/api/drafts").catch(() => null);
    if (!answer) return;
    onServer = new Set(answer.drafts.map((d) => memoryKey(d.stage, d.language)));
  }
  for (const { stage, language, source } of candidates) {
    if (owner === learner && !onServer.has(memoryKey(stage, language))) writeLocal(stage, language, source, false);
  }
  for (const key of [...oldKeys, OLD_OWNER_KEY]) localStorage.removeItem(key);
}

// The learner whose drafts these are (the id from the server), after sign-up, sign-in or a load.
// Resolves once the drafts this browser holds for them have been sent, where they can be.
export async function setDraftsOwner(learnerId) {
  if (learnerId === undefined || learnerId === null) return;
  const learner = String(learnerId);
  if (owner !== learner) {
    const visitorDrafts = owner === null
      ? [...memory].filter(([, source]) => source !== null).map(([key, source]) => ({ stage: key.split("\n")[0], language: key.split("\n")[1], source }))
      : [];
    owner = learner;
    memory.clear();
    for (const key of localKeys((k) => k.startsWith(LOCAL_PREFIX) && !k.startsWith(`${LOCAL_PREFIX}${learner}.`))) localStorage.removeItem(key);
    await adoptDrafts(learner, visitorDrafts);
  }
  return flushDrafts();
}

// Sign-out: every draft copy leaves this browser. keepUnsent (the server refused the token): the
// learner's copies the server has not got stay, keyed by their id, to be sent when they sign in
// again; they are never shown to anyone else and are deleted when someone else signs in.
export function forgetDraftsOwner({ keepUnsent = false } = {}) {
  clearTimeout(saveTimer);
  clearTimeout(retryTimer);
  const leaving = owner;
  owner = null;
  memory.clear();
  const kept = new Set(keepUnsent && leaving !== null ? localCopies(leaving).filter((c) => !c.sent).map((c) => c.key) : []);
  for (const key of localKeys((k) => k.startsWith(LOCAL_PREFIX) || k.startsWith(OLD_PREFIX) || k === OLD_OWNER_KEY)) {
    if (!kept.has(key)) localStorage.removeItem(key);
  }
}

// The page is going away or out of sight: what is typed goes now. The network coming back sends
// what could not be sent.
export function startDrafts() {
  window.addEventListener("pagehide", () => flushDrafts({ keepalive: true }));
  document.addEventListener("visibilitychange", () => { if (document.visibilityState === "hidden") flushDrafts({ keepalive: true }); });
  window.addEventListener("online", () => flushDrafts());
}
