// The cudojo page. Talks only to the JSON API (docs/openapi.yaml); every string that came from a
// learner or the judge is placed with textContent, never as HTML. The one HTML we insert is the
// lesson, rendered server-side by cmark-gfm in safe mode.
"use strict";

const state = { stages: [], stage: null, me: null, progress: null, language: "cuda", jobId: null, events: null, marks: [], textMarks: [] };
const $ = (selector) => document.querySelector(selector);

function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (key === "class") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value);
  }
  for (const child of children) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

// ---- API -------------------------------------------------------------------------------------

const token = () => localStorage.getItem("cudojo.token");

// Every call goes through here. A failure throws an Error carrying the HTTP status (`status`), so
// callers can tell a refused token (401) from a route this server does not have yet (404).
// `options.token` replaces the stored token for one call (signing in with a token).
async function api(path, options = {}) {
  const { token: override, idempotencyKey, ...rest } = options;
  const headers = { "Content-Type": "application/json" };
  const bearer = override ?? token();
  if (bearer) headers.Authorization = `Bearer ${bearer}`;
  if (idempotencyKey) headers["Idempotency-Key"] = idempotencyKey;
  const response = await fetch(path, { ...rest, headers });
  const body = await response.json().catch(() => ({}));
  if (!response.ok) {
    const retry = response.headers.get("Retry-After");
    const error = new Error((body.error || `HTTP ${response.status}`) + (retry ? ` (retry in ${retry} s)` : ""));
    error.status = response.status;
    throw error;
  }
  return body;
}

// ---- Account ---------------------------------------------------------------------------------

// localStorage: cudojo.token (the bearer token), cudojo.name, cudojo.drafts-owner (the learner id
// whose drafts the cudojo.draft.* keys are). Sign-up shows the token once; "Sign in with a token"
// checks it with GET /api/me; a token the server no longer knows (401 on load) signs out.
const ACCOUNT_KEYS = ["cudojo.token", "cudojo.name", "cudojo.drafts-owner"];

function accountMessage(text, kind = "bad") {
  const box = $("#account-message");
  box.textContent = text || "";
  box.className = `message ${kind}`;
  box.hidden = !text;
}

function showLearner() {
  const name = localStorage.getItem("cudojo.name");
  const signedIn = Boolean(token());
  $("#who").textContent = signedIn ? `signed in as ${name || "(unnamed)"}` : "";
  $("#signed-in").hidden = !signedIn;
  $("#signed-out").hidden = signedIn;
  $("#leaderboard-optin").disabled = !signedIn;
}

function remember(learner, bearer) {
  localStorage.setItem("cudojo.token", bearer);
  localStorage.setItem("cudojo.name", learner.name || "");
  if (learner.id !== undefined) localStorage.setItem("cudojo.drafts-owner", String(learner.id));
  state.me = learner;
}

async function signIn(name) {
  if (!name) throw new Error("Type a display name first.");
  const learner = await api("/api/learners", { method: "POST", body: JSON.stringify({ name }), token: "" });
  remember(learner, learner.token);
  showLearner();
  accountMessage("");
  $("#token-value").value = learner.token;
  $("#token-reveal").hidden = false;
  afterAccountChange();
}

async function signInWithToken(bearer) {
  if (!bearer) throw new Error("Paste your token first.");
  let learner;
  try {
    learner = await api("/api/me", { token: bearer });
  } catch (error) {
    if (error.status === 401) throw new Error("That token is not known here; check it, or sign up with a name.");
    if (error.status === 404) throw new Error("This server cannot check tokens (no /api/me).");
    throw error;
  }
  remember(learner, bearer);
  showLearner();
  accountMessage("");
  afterAccountChange();
}

function signOut(message = "") {
  for (const key of ACCOUNT_KEYS) localStorage.removeItem(key);
  state.me = null;
  state.progress = null;
  $("#token-reveal").hidden = true;
  $("#token-value").value = "";
  showLearner();
  accountMessage(message, message ? "bad" : "ok");
  afterAccountChange();
}

// On load: is the stored token still known? 401 signs out with a message; a server without
// /api/me (404) or one that cannot be reached keeps the stored name.
async function checkStoredToken() {
  if (!token()) return;
  try {
    state.me = await api("/api/me");
    localStorage.setItem("cudojo.name", state.me.name || "");
    if (state.me.id !== undefined) localStorage.setItem("cudojo.drafts-owner", String(state.me.id));
    showLearner();
  } catch (error) {
    if (error.status === 401) {
      signOut("Your saved sign-in is no longer known to this server, so you are signed out. " +
              "Sign in with your token again, or sign up with a name.");
    }
  }
}

function afterAccountChange() {
  $("#leaderboard-optin").checked = Boolean(state.me && state.me.leaderboard);
  loadProgress();
  if (state.stage) { loadHistory(); loadLeaderboard(); }
}

$("#signin").addEventListener("submit", async (event) => {
  event.preventDefault();
  try {
    await signIn($("#learner-name").value.trim());
  } catch (error) {
    accountMessage(`Sign-up failed: ${error.message}`);
  }
});

$("#token-signin").addEventListener("submit", async (event) => {
  event.preventDefault();
  try {
    await signInWithToken($("#token-input").value.trim());
    $("#token-input").value = "";
  } catch (error) {
    accountMessage(`Sign-in failed: ${error.message}`);
  }
});

$("#signout").addEventListener("click", () => signOut());

$("#token-copy").addEventListener("click", async () => {
  const value = $("#token-value").value;
  try {
    await navigator.clipboard.writeText(value);
  } catch {
    $("#token-value").select();
    document.execCommand("copy");
  }
  $("#token-copy").textContent = "Copied";
});

$("#token-done").addEventListener("click", () => {
  $("#token-reveal").hidden = true;
  $("#token-value").value = "";
  $("#token-copy").textContent = "Copy";
  $("#run").focus();
});

// ---- Dialog ----------------------------------------------------------------------------------

// Asks a yes/no question in the page's <dialog>; resolves true for `okLabel`, false for Cancel or Escape.
function confirmDialog(text, okLabel) {
  const dialog = $("#confirm-dialog");
  $("#confirm-text").textContent = text;
  $("#confirm-ok").textContent = okLabel;
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => resolve(dialog.returnValue === "ok"), { once: true });
    dialog.returnValue = "cancel";
    dialog.showModal();
    $("#confirm-cancel").focus();
  });
}

// ---- Languages -------------------------------------------------------------------------------

// A stage's kernel can be written in any language the stage has a starter in (stage.languages).
// What we know without the server: the order of the switch, short tags for the history and the
// names of languages a stage no longer offers (an old job in the history).
const LANGUAGE_ORDER = ["cuda", "python", "rust"];
const KNOWN_LANGUAGES = {
  cuda: { name: "CUDA C++", tag: "cu", editor_mode: "text/x-c++src" },
  python: { name: "Python (Numba)", tag: "py", editor_mode: "python" },
  rust: { name: "Rust (nvptx64)", tag: "rs", editor_mode: "rust" },
};

// The languages of a stage; a server without the field offers CUDA only.
function stageLanguages(stage) {
  if (stage.languages && Object.keys(stage.languages).length) return stage.languages;
  return { cuda: { ...KNOWN_LANGUAGES.cuda, signature: stage.signature, starter: stage.starter, extension: ".cu" } };
}

function languageIds(stage) {
  const ids = Object.keys(stageLanguages(stage));
  const rank = (id) => (LANGUAGE_ORDER.includes(id) ? LANGUAGE_ORDER.indexOf(id) : LANGUAGE_ORDER.length);
  return ids.sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
}

function currentLanguage() {
  return stageLanguages(state.stage)[state.language];
}

function languageName(id) {
  const offered = state.stage && stageLanguages(state.stage)[id];
  return (offered && offered.name) || (KNOWN_LANGUAGES[id] && KNOWN_LANGUAGES[id].name) || id;
}

// "cu", "py", "rs": from the table above, else from the file extension the server names.
function languageTag(id) {
  if (KNOWN_LANGUAGES[id]) return KNOWN_LANGUAGES[id].tag;
  const offered = state.stage && stageLanguages(state.stage)[id];
  return offered && offered.extension ? offered.extension.replace(/^\./, "") : id;
}

function languageBadge(id) {
  return el("abbr", { class: `lang-tag lang-${id}`, "data-language": id, title: languageName(id) }, languageTag(id));
}

// localStorage keys: one draft per stage and language; the language last chosen per stage and
// anywhere. Drafts from before languages existed (cudojo.draft.STAGE) become the CUDA drafts.
const draftKey = (stageId, language) => `cudojo.draft.${stageId}.${language}`;
const stageLanguageKey = (stageId) => `cudojo.language.${stageId}`;
const LAST_LANGUAGE_KEY = "cudojo.language";

function migrateDraft(stageId) {
  const old = localStorage.getItem(`cudojo.draft.${stageId}`);
  if (old === null) return;
  if (localStorage.getItem(draftKey(stageId, "cuda")) === null) localStorage.setItem(draftKey(stageId, "cuda"), old);
  localStorage.removeItem(`cudojo.draft.${stageId}`);
}

// The language a stage opens in: the one last chosen there, else the last chosen anywhere, else CUDA.
function defaultLanguage(stage) {
  const offered = languageIds(stage);
  for (const wanted of [localStorage.getItem(stageLanguageKey(stage.id)), localStorage.getItem(LAST_LANGUAGE_KEY), "cuda"]) {
    if (wanted && offered.includes(wanted)) return wanted;
  }
  return offered[0];
}

// ---- Stages and lesson -----------------------------------------------------------------------

const editor = CodeMirror(document.getElementById("editor"), {
  mode: "text/x-c++src",
  lineNumbers: true,
  indentUnit: 4,
  matchBrackets: true,
  lineWrapping: true,  // long comment lines wrap instead of scrolling sideways
  screenReaderLabel: "Kernel source",
  extraKeys: { "Ctrl-Enter": () => run(), "Cmd-Enter": () => run() },
});
window.cudojoEditor = editor;  // for the browser test and for curious learners
editor.on("change", () => {
  // Whatever the editor holds is the draft of the current stage and language; the starter itself
  // is not kept, so a stage whose starter changes on the server shows the new one.
  if (!state.stage) return;
  const key = draftKey(state.stage.id, state.language);
  const text = editor.getValue();
  if (text === currentLanguage().starter) localStorage.removeItem(key);
  else localStorage.setItem(key, text);
});

function renderLanguageSwitch(stage) {
  $("#language").replaceChildren(
    ...languageIds(stage).map((id) => el("option", { value: id }, stageLanguages(stage)[id].name || languageName(id))));
}

// Shows `language` in the editor: its mode, its signature and its draft (or starter). `text`, when
// given, replaces the draft (a job opened from the history). `remember` records the choice.
function showLanguage(language, { text = null, remember = false } = {}) {
  const info = stageLanguages(state.stage)[language];
  if (!info) return false;
  clearMarks();
  state.language = language;
  $("#language").value = language;
  $("#workbench").dataset.language = language;
  editor.setOption("mode", info.editor_mode || (KNOWN_LANGUAGES[language] || {}).editor_mode || null);
  $("#signature").textContent = info.signature || "";
  editor.setValue(text ?? localStorage.getItem(draftKey(state.stage.id, language)) ?? info.starter ?? "");
  editor.clearHistory();  // undo stays within one language's text
  renderDriver(state.stage);
  if (remember) {
    localStorage.setItem(stageLanguageKey(state.stage.id), language);
    localStorage.setItem(LAST_LANGUAGE_KEY, language);
  }
  return true;
}

$("#language").addEventListener("change", (event) => {
  if (state.stage) showLanguage(event.target.value, { remember: true });
});

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
              el("span", { class: "id" }, stage.id), stage.title, el("span", { class: "progress-mark" }))))));
  }));
  renderProgress();
}

// ---- Progress --------------------------------------------------------------------------------

// Each stage button says in words (not colour alone) whether the learner has an accepted run, only
// attempts, or none, and the best time ratio. Unknown progress (signed out, an older server) shows nothing.
async function loadProgress() {
  if (!token()) {
    state.progress = null;
  } else {
    const answer = await api("/api/progress").catch(() => null);
    state.progress = answer && answer.stages ? answer.stages : null;
  }
  renderProgress();
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

async function loadStages() {
  const groups = groupByTrack(await api("/api/stages"));
  // state.stages is the order on the page, so a stage's previous one (previousStageFigures) is
  // the button above it, across a track's boundary too (atomics/1 follows reduction/9).
  state.stages = groups.flatMap((group) => group.stages);
  for (const stage of state.stages) migrateDraft(stage.id);
  renderStageNav(groups);
  const wanted = decodeURIComponent(location.hash.slice(1));
  if (state.stages.some((stage) => stage.id === wanted)) selectStage(wanted);
}

async function selectStage(id) {
  const stage = await api(`/api/stages/${id}`);
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
  $("#workbench").hidden = false;
  editor.refresh();  // the editor was created hidden: its gutter is measured now
  migrateDraft(stage.id);
  renderLanguageSwitch(stage);
  showLanguage(defaultLanguage(stage));
  $("#diff-view").hidden = true;
  $("#status").textContent = "";
  const last = lastResult(stage.id);
  if (last) {
    showReport(last, { restored: true });
  } else {
    $("#tab-result").replaceChildren(el("p", { class: "muted" }, "Run your kernel to see the verdict here."));
    $("#tab-metrics").replaceChildren(el("p", { class: "muted" }, "No timing yet."));
  }
  loadHistory();
  loadLeaderboard();
}

// The last result of each stage, kept across reloads: cudojo.result.STAGE holds its report.
const resultKey = (stageId) => `cudojo.result.${stageId}`;
function keepResult(report) {
  if (!report || !report.stage) return;
  try { localStorage.setItem(resultKey(report.stage), JSON.stringify(report)); } catch { /* full: not kept */ }
}
function lastResult(stageId) {
  try { return JSON.parse(localStorage.getItem(resultKey(stageId)) || "null"); } catch { return null; }
}

$("#reset").addEventListener("click", async () => {
  if (!state.stage) return;
  const starter = currentLanguage().starter || "";
  if (editor.getValue() === starter) return;
  if (await confirmDialog(`Replace your ${languageName(state.language)} draft with the starter? Your draft is lost.`, "Reset")) {
    editor.setValue(starter);
  }
});

// ---- Tabs ------------------------------------------------------------------------------------

function showTab(name) {
  for (const button of document.querySelectorAll(".tabs button")) {
    button.setAttribute("aria-selected", String(button.dataset.tab === name));
  }
  for (const tab of document.querySelectorAll(".tab")) tab.hidden = tab.id !== `tab-${name}`;
  if (name === "leaderboard") loadLeaderboard();
}
for (const button of document.querySelectorAll(".tabs button")) {
  button.addEventListener("click", () => showTab(button.dataset.tab));
}

function renderDriver(stage) {
  const tests = stage.tests || {};
  $("#tab-driver").replaceChildren(
    el("p", {}, el("strong", {}, "Kernel: "), languageBadge(state.language), " ",
       el("span", { class: "mono" }, (stageLanguages(stage)[state.language] || {}).signature || stage.signature)),
    el("p", {}, el("strong", {}, "Launch: "), stage.launch_text),
    el("p", {}, el("strong", {}, "What the host does: "), stage.driver),
    el("p", {}, el("strong", {}, "Tests: "), stage.tests_text || `Repeats: ${tests.runs}.`),
    el("p", {}, el("strong", {}, "Gate: "), stage.gate_text));
}

// ---- Running a job ---------------------------------------------------------------------------

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
    const name = $("#learner-name").value.trim();
    if (!name) {
      $("#status").textContent = "Type a display name and sign up (or sign in with a token) first.";
      $("#learner-name").focus();
      return;
    }
    try { await signIn(name); } catch (error) { accountMessage(`Sign-up failed: ${error.message}`); return; }
  }
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
    state.jobId = job.id;
    $("#status").textContent = describeProgress(job);
    follow(job.id);
  } catch (error) {
    $("#status").textContent = error.message;
    $("#run").disabled = false;
  }
}
$("#run").addEventListener("click", run);
// Ctrl+Enter (Cmd+Enter on a Mac) runs from anywhere on the page; inside the editor its keymap does.
document.addEventListener("keydown", (event) => {
  if (event.key !== "Enter" || !(event.ctrlKey || event.metaKey)) return;
  if (event.target.closest && event.target.closest(".CodeMirror")) return;
  if ($("#confirm-dialog").open) return;
  event.preventDefault();
  run();
});

// Follows a job as it is judged: a stream of its progress (EventSource, opened with a one-use
// ticket, since a browser cannot send the token as a header there and a token in a URL would be
// logged), or, when no stream can be had (the server's places are taken, the learner opened one
// elsewhere, the connection dropped), a poll once a second.
async function follow(id) {
  if (state.events) state.events.close();
  state.events = null;
  let ticket;
  try {
    ticket = await api(`/api/jobs/${id}/ticket`, { method: "POST", body: "{}" });
  } catch (error) {
    return poll(id);
  }
  if (state.jobId !== id) return;
  const events = new EventSource(ticket.events);
  state.events = events;
  events.addEventListener("progress", (event) => {
    $("#status").textContent = describeProgress(JSON.parse(event.data));
  });
  events.addEventListener("result", (event) => {
    events.close();
    const job = JSON.parse(event.data);
    $("#run").disabled = false;
    $("#status").textContent = `done in ${(job.queued_to_verdict_ms / 1000).toFixed(2)} s (queued to verdict)`;
    showReport({ language: job.language, ...job.report }, { keep: true });
    loadHistory();
    loadProgress();
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
      $("#run").disabled = false;
      $("#status").textContent = "done";
      showReport({ language: job.language, ...job.report }, { keep: true });
      loadHistory();
      loadProgress();
    } else {
      if (job) $("#status").textContent = describeProgress(job);
      setTimeout(ask, 1000);
    }
  };
  ask();
}

// ---- Results ---------------------------------------------------------------------------------

function clearMarks() {
  for (const { line, className } of state.marks) editor.removeLineClass(line, "background", className);
  for (const marker of state.textMarks || []) marker.clear();
  state.marks = [];
  state.textMarks = [];
}

// A diagnostic's column counts characters (code points); CodeMirror counts UTF-16 units.
function columnToCh(line, column) {
  if (!column || column < 1 || !line || line > editor.lineCount()) return 0;
  return [...editor.getLine(line - 1)].slice(0, column - 1).join("").length;
}

function lineLink(line, column) {
  if (!line) return null;
  const attributes = { class: "line", "data-line": line };
  if (column) attributes["data-column"] = column;
  attributes.onclick = () => {
    const where = { line: line - 1, ch: columnToCh(line, column) };
    editor.focus();
    editor.setCursor(where);
    editor.scrollIntoView(where, 80);
  };
  return el("a", attributes, column ? `line ${line}:${column}` : `line ${line}`);
}

// kind: "error" (the default), "warning" or "note"; with a column, the character there is marked too.
function markLine(line, kind = "error", column = 0) {
  if (!line || line > editor.lineCount()) return;
  const className = `cm-${kind}-line`;
  editor.addLineClass(line - 1, "background", className);
  state.marks.push({ line: line - 1, className });
  if (column) {
    const ch = columnToCh(line, column);
    const text = editor.getLine(line - 1);
    let end = ch + 1;
    while (end < text.length && /[A-Za-z0-9_]/.test(text[end]) && /[A-Za-z0-9_]/.test(text[ch])) end += 1;
    if (ch < text.length) {
      state.textMarks.push(editor.markText({ line: line - 1, ch }, { line: line - 1, ch: end },
                                           { className: `cm-${kind}-mark` }));
    }
  }
}

// "error" and "catastrophic error" are errors; "warning" a warning; "note" and "remark" notes.
function diagnosticKind(severity) {
  if (!severity || severity.includes("error")) return "error";
  return severity === "warning" ? "warning" : "note";
}

// The compiler's diagnostics: each with its severity, a link to the learner's line (only for lines
// of the learner's own file: a line of a CUDA header is named, not linked), and the compiler's
// excerpt (the source line and a caret) in monospace.
function renderDiagnostics(report, compile, mark) {
  const list = el("ul", { class: "diagnostics" });
  for (const diagnostic of compile.diagnostics) {
    const kind = diagnosticKind(diagnostic.severity);
    const own = !diagnostic.file || !report.file || diagnostic.file === report.file;
    let where = null;
    if (own && diagnostic.line) {
      mark(diagnostic.line, kind, diagnostic.column);
      where = lineLink(diagnostic.line, diagnostic.column);
    } else if (!own) {
      where = el("span", { class: "where mono" }, diagnostic.line ? `${diagnostic.file}:${diagnostic.line}` : diagnostic.file);
    }
    list.append(el("li", { class: `diagnostic ${kind}`, "data-severity": diagnostic.severity || "error" },
                   where, where ? ": " : "", el("span", { class: `severity ${kind}` }, diagnostic.severity || "error"),
                   ": ", diagnostic.message,
                   diagnostic.context ? el("pre", { class: "context" }, diagnostic.context) : null));
  }
  return list;
}

// The verdicts in words (docs/verdicts.md); the code stays beside them.
const VERDICT_WORDS = {
  accepted: "Accepted", too_slow: "Too slow", wrong_answer: "Wrong answer", compile_error: "Compile error",
  runtime_error: "Runtime error", time_limit_exceeded: "Time limit exceeded", no_device: "No GPU available",
  internal_error: "Judge error",
};
function verdictBadge(verdict) {
  const words = VERDICT_WORDS[verdict];
  return el("span", { class: `verdict ${verdict}`, "data-verdict": verdict }, words ? `${words} (${verdict})` : verdict);
}

function nextStage() {
  const index = state.stages.findIndex((stage) => stage.id === state.stage.id);
  return index >= 0 && index + 1 < state.stages.length ? state.stages[index + 1] : null;
}

// A time from the API: seconds since 1970 (created_at), or an ISO 8601 string.
function toDate(value) {
  return new Date(typeof value === "number" ? value * 1000 : value);
}

function formatNumber(value) {
  if (value === null || value === undefined) return "";
  if (typeof value === "string") return value;
  return Number.isInteger(value) ? String(value) : value.toPrecision(9);
}

// keep: store it as the stage's last result; restored: it came from storage, and the editor may
// hold other text now, so no lines are marked.
function showReport(report, { keep = false, restored = false } = {}) {
  if (keep) keepResult(report);
  clearMarks();
  const box = $("#tab-result");
  if (!report) {
    box.replaceChildren(el("p", { class: "muted" }, "No report."));
    return;
  }
  const language = report.language || "cuda";
  // Lines are marked only in the text the report is about: same stage, same language.
  const here = (!report.stage || !state.stage || report.stage === state.stage.id) && language === state.language;
  const mark = (line, kind, column) => { if (here && !restored) markLine(line, kind, column); };
  const parts = [el("p", {}, verdictBadge(report.verdict), " ", report.message || ""),
                 el("p", { class: "judged-language", "data-language": language },
                    "Language: ", languageBadge(language), " ", languageName(language))];
  const next = report.verdict === "accepted" && here && state.stage ? nextStage() : null;
  if (next) {
    parts.push(el("p", {}, el("a", { class: "next-stage", href: `#${next.id}`,
      onclick: (event) => { event.preventDefault(); selectStage(next.id); } }, `Next stage: ${next.id} ${next.title || ""} →`)));
  }
  if (report.error_name) parts.push(el("p", {}, "CUDA error: ", el("code", {}, report.error_name)));
  const compile = report.compile || {};
  if (compile.diagnostics && compile.diagnostics.length) {
    // A compile that failed lists its errors; one that passed may still have warnings.
    parts.push(el("h3", {}, compile.ok === false ? "Compiler" : "Compiler warnings"));
    parts.push(renderDiagnostics(report, compile, mark));
  } else if (compile.ok === false && compile.log) {
    parts.push(el("h3", {}, "Compiler"), el("pre", { class: "compile-log" }, compile.log));
  }
  if (report.findings && report.findings.length) {
    parts.push(el("h3", {}, "Findings"));
    for (const finding of report.findings) {
      mark(finding.line);
      parts.push(el("p", { class: "finding" }, el("code", {}, finding.code), " ", lineLink(finding.line), " ", finding.message));
    }
  }
  if (report.tests && report.tests.length) {
    const passed = report.tests.filter((test) => test.ok).length;
    parts.push(el("h3", {}, `Tests: ${passed} of ${report.tests.length} passed`));
    const rows = [...report.tests].sort((a, b) => Number(a.ok) - Number(b.ok));
    parts.push(el("table", {},
      el("tr", {}, el("th", {}, ""), el("th", {}, "case"), el("th", {}, "expected"), el("th", {}, "got"), el("th", {}, "tolerance / bound")),
      ...rows.map((test) => el("tr", {},
        el("td", { class: test.ok ? "ok" : "fail" }, test.ok ? "✓" : "✗"), el("td", {}, test.name),
        el("td", { class: "num" }, formatNumber(test.expected)), el("td", { class: "num" }, formatNumber(test.got)),
        el("td", { class: "detail" }, test.detail || "")))));
  }
  if (report.output && report.output.captured) {
    parts.push(el("h3", {}, `Output (device printf${report.output.truncated ? ", truncated" : ""})`),
               el("pre", {}, report.output.captured));
  }
  box.replaceChildren(...parts);
  showMetrics(report);
  showTab("result");
}

async function previousStageFigures() {
  const index = state.stages.findIndex((stage) => stage.id === state.stage.id);
  if (index <= 0 || !token()) return null;
  const previous = state.stages[index - 1];
  const history = await api(`/api/history?stage=${encodeURIComponent(previous.id)}`).catch(() => null);
  if (!history || !history.jobs) return null;
  // An older server sends whole reports; the newer one summaries (time_ratio), the report on request.
  const timed = history.jobs.find((job) => (job.report && job.report.metrics && job.report.metrics.time_ms) || job.time_ratio);
  if (!timed) return null;
  const report = timed.report || (await api(`/api/jobs/${timed.id}`).catch(() => ({}))).report;
  return report && report.metrics && report.metrics.time_ms ? { stage: previous.id, metrics: report.metrics, verdict: timed.verdict } : null;
}

// "43.5 % (reference 44.5 %)", or why there is no figure.
function percentPair(value, reference, note) {
  if (value === null || value === undefined) return note || "not measured";
  const ref = reference === null || reference === undefined ? "n/a" : `${reference.toFixed(1)} %`;
  return `${value.toFixed(1)} % (reference ${ref})`;
}

async function showMetrics(report) {
  state.shownReport = report;
  const m = report.metrics || {};
  const box = $("#tab-metrics");
  if (!m.time_ms) {
    const why = m.note || (report.verdict === "compile_error" ? "the source did not compile."
      : report.verdict && report.verdict !== "accepted" && report.verdict !== "too_slow" ? "the kernel did not pass the tests." : "no reason was given.");
    box.replaceChildren(el("p", { class: "metrics-note" }, el("strong", {}, "Nothing was timed: "), why));
    return;
  }
  const ms = (stats) => (stats ? `${stats.median.toFixed(4)} ms (min ${stats.min.toFixed(4)}, max ${stats.max.toFixed(4)}, ${stats.samples} samples)` : "");
  const rows = [
    ["n", m.n],
    ["your kernel", ms(m.time_ms)],
    ["reference", ms(m.reference_time_ms)],
    ["ratio", m.time_ratio ? `${m.time_ratio.toFixed(2)} x the reference` : ""],
    ...(m.baseline_time_ms
      ? [[m.baseline_name || "baseline", ms(m.baseline_time_ms)],
         ["ratio to the baseline", m.baseline_ratio ? `${m.baseline_ratio.toFixed(2)} x ${m.baseline_name}` : ""]]
      : []),
    ["bandwidth", m.bandwidth_gbps ? `${m.bandwidth_gbps.toFixed(1)} GB/s` : "(not meaningful for this contract)"],
    ["% of measured peak", m.pct_of_peak ? `${m.pct_of_peak.toFixed(1)} % of ${report.gpu.peak_read_gbps.toFixed(0)} GB/s` : ""],
    ["SM throughput", percentPair(m.sm_throughput_pct, m.reference_sm_throughput_pct, m.metrics_note)],
    ["DRAM throughput", percentPair(m.dram_throughput_pct, m.reference_dram_throughput_pct, m.metrics_note)],
    ["global atomics", m.global_atomics === null || m.global_atomics === undefined ? "n/a"
      : `${m.global_atomics} (reference ${m.reference_global_atomics ?? "n/a"})`],
    ["GPU", report.gpu ? `${report.gpu.name} (${report.gpu.arch})` : ""],
  ];
  const calibration = report.calibration || {};
  if (calibration.previous_stage && calibration.previous_reference_time_ms) {
    rows.push([`${calibration.previous_stage} reference (this GPU)`,
      `${calibration.previous_reference_time_ms.median.toFixed(4)} ms` +
      (calibration.previous_sm_throughput_pct ? `, SM ${calibration.previous_sm_throughput_pct.toFixed(1)} %` : "")]);
  }
  const previous = await previousStageFigures();
  if (previous) rows.push([`your last ${previous.stage}`, `${ms(previous.metrics.time_ms)} (${previous.verdict})`]);
  if (report !== state.shownReport) return;  // a newer report came while we asked
  box.replaceChildren(el("table", {}, ...rows.map(([key, value]) => el("tr", {}, el("th", {}, key), el("td", {}, value)))),
    ...(report.gate ? [el("p", {}, el("strong", {}, "Gate: "), report.gate.rule, " — ", report.gate.passed ? "passed" : "not passed")] : []));
}

// The History tab: the learner's runs of this stage, newest first, a page at a time ("Older runs"
// follows next_before). "open" puts a run's source in the editor (asking first when that replaces
// a changed draft); "diff" shows the current draft against it, line by line.
async function loadHistory({ before = null } = {}) {
  const box = $("#history-list");
  if (!token()) {
    box.replaceChildren(el("p", { class: "muted" }, "Sign in to keep a history of your runs."));
    return;
  }
  const stageId = state.stage.id;
  const query = `stage=${encodeURIComponent(stageId)}&limit=20` + (before ? `&before=${before}` : "");
  const history = await api(`/api/history?${query}`).catch((error) => ({ error }));
  if (!state.stage || state.stage.id !== stageId) return;
  if (history.error) {
    box.replaceChildren(el("p", { class: "fail" }, history.error.message));
    return;
  }
  if (!history.jobs.length && !before) {
    box.replaceChildren(el("p", { class: "muted" }, "No runs of this stage yet."));
    return;
  }
  const rows = history.jobs.map((job) => {
    const language = job.language || "cuda";
    const median = job.report && job.report.metrics && job.report.metrics.time_ms ? `${job.report.metrics.time_ms.median.toFixed(4)} ms` : "";
    const ratio = job.time_ratio ?? (job.report && job.report.metrics && job.report.metrics.time_ratio);
    return el("tr", { "data-job": job.id, "data-language": language },
      el("td", {}, `#${job.id}`), el("td", {}, languageBadge(language)),
      el("td", {}, toDate(job.created_at).toLocaleString()),
      el("td", {}, job.verdict ? verdictBadge(job.verdict) : job.state),
      el("td", { class: "num" }, median || (ratio ? `${ratio.toFixed(2)} ×` : "")),
      el("td", { class: "actions" },
         el("button", { type: "button", class: "secondary open-job", onclick: () => openJob(job.id),
                        "aria-label": `open job ${job.id} (${languageName(language)})` }, "open"), " ",
         el("button", { type: "button", class: "secondary diff-job", onclick: () => diffJob(job.id),
                        "aria-label": `diff your draft against job ${job.id}` }, "diff")));
  });
  let table = box.querySelector("table");
  if (!before || !table) {
    table = el("table", {}, el("tr", {}, el("th", {}, "job"), el("th", {}, "language"), el("th", {}, "submitted"),
                                  el("th", {}, "verdict"), el("th", {}, "time"), el("th", {}, "")));
    box.replaceChildren(table);
  }
  table.append(...rows);
  box.querySelector(".older")?.remove();
  if (history.next_before) {
    box.append(el("button", { type: "button", class: "secondary older",
                              onclick: () => loadHistory({ before: history.next_before }) }, "Older runs"));
  }
}

async function openJob(id) {
  const job = await api(`/api/jobs/${id}`).catch((error) => ({ error }));
  if (job.error) { $("#status").textContent = `cannot open job #${id}: ${job.error.message}`; return; }
  const language = job.language || "cuda";
  const info = stageLanguages(state.stage)[language];
  // The draft this replaces: the editor's text, or the stored draft of the job's language.
  const draft = language === state.language ? editor.getValue() : localStorage.getItem(draftKey(state.stage.id, language));
  if (info && draft !== null && draft !== (info.starter || "") && draft !== job.source) {
    const replace = await confirmDialog(`Replace your ${languageName(language)} draft with the source of job #${job.id}? Your draft is lost.`, "Replace");
    if (!replace) return;
  }
  // The editor switches to the job's language and its source becomes that language's draft.
  if (!showLanguage(language, { text: job.source, remember: true })) {
    $("#status").textContent = `job #${job.id} is in ${languageName(job.language)}, which this stage no longer offers`;
  }
  if (job.report) showReport({ language: job.language, ...job.report });
}

async function diffJob(id) {
  const view = $("#diff-view");
  const job = await api(`/api/jobs/${id}`).catch((error) => ({ error }));
  if (job.error || !window.Diff) {
    view.replaceChildren(el("p", { class: "fail" }, job.error ? job.error.message : "The diff library did not load."));
    view.hidden = false;
    return;
  }
  const parts = window.Diff.diffLines(job.source || "", editor.getValue());
  const lines = [];
  for (const part of parts) {
    const kind = part.added ? "ins" : part.removed ? "del" : "same";
    const sign = part.added ? "+" : part.removed ? "-" : " ";
    for (const line of part.value.replace(/\n$/, "").split("\n")) {
      lines.push(el("span", { class: `diff-line diff-${kind}` }, `${sign} ${line}`), "\n");
    }
  }
  const changed = parts.some((part) => part.added || part.removed);
  view.replaceChildren(
    el("h3", {}, `Your ${languageName(state.language)} draft against job #${job.id}`),
    el("p", { class: "muted" }, changed ? "Lines marked - are only in the job, + only in your draft." : "No differences."),
    el("pre", { class: "diff", tabindex: "0", "aria-label": `diff against job ${job.id}` }, ...lines),
    el("button", { type: "button", class: "secondary", onclick: () => { view.hidden = true; } }, "Close diff"));
  view.hidden = false;
}

// ---- Leaderboard -----------------------------------------------------------------------------

async function loadLeaderboard() {
  if (!state.stage || $("#tab-leaderboard").hidden) return;
  const box = $("#leaderboard-table");
  const stageId = state.stage.id;
  const board = await api(`/api/stages/${stageId}/leaderboard`).catch((error) => ({ error }));
  if (!state.stage || state.stage.id !== stageId) return;
  if (board.error) {
    box.replaceChildren(el("p", { class: "muted" }, board.error.status === 404
      ? "This server has no leaderboards yet." : `Cannot load the leaderboard: ${board.error.message}`));
    return;
  }
  if (!board.entries || !board.entries.length) {
    box.replaceChildren(el("p", { class: "muted" }, "No accepted runs on the leaderboard yet."));
    return;
  }
  box.replaceChildren(el("table", { class: "leaderboard" },
    el("tr", {}, el("th", {}, "rank"), el("th", {}, "name"), el("th", {}, "time ratio"), el("th", {}, "time"),
       el("th", {}, "language"), el("th", {}, "when")),
    ...board.entries.map((entry) => el("tr", { "data-rank": entry.rank },
      el("td", { class: "num" }, entry.rank), el("td", {}, entry.name),
      el("td", { class: "num" }, entry.time_ratio ? `${entry.time_ratio.toFixed(2)} ×` : ""),
      el("td", { class: "num" }, entry.time_ms ? `${entry.time_ms.toFixed(4)} ms` : ""),
      el("td", {}, languageBadge(entry.language || "cuda")),
      el("td", {}, entry.at ? toDate(entry.at).toLocaleDateString() : "")))));
}

$("#leaderboard-optin").addEventListener("change", async (event) => {
  const wanted = event.target.checked;
  try {
    state.me = { ...(state.me || {}), ...(await api("/api/me", { method: "PUT", body: JSON.stringify({ leaderboard: wanted }) })) };
    event.target.checked = Boolean(state.me.leaderboard ?? wanted);
    loadLeaderboard();
  } catch (error) {
    event.target.checked = !wanted;
    accountMessage(`Cannot change the leaderboard setting: ${error.message}`);
  }
});

showLearner();
checkStoredToken().finally(() => {
  $("#leaderboard-optin").checked = Boolean(state.me && state.me.leaderboard);
  loadProgress();
});
loadStages().catch((error) => { $("#lesson").textContent = `Cannot reach the server: ${error.message}`; });
