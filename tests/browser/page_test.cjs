// Browser test of the page: Debian's chromium driven by playwright-core.
//   node page_test.cjs CUDOJO_BINARY WEB_DIR SCREENSHOT_PNG
// Starts `cudojo serve` on a free port with a fresh data folder, opens the page, signs in,
// chooses stage 3, checks the lesson and the starter, puts a compile error and a warning on known
// lines, runs, and expects the verdict, a clickable diagnostic at that line and column with the
// compiler's excerpt, and the warning marked as one; reports drawn by the page show a header's
// error without a link into the learner's file, and an accepted kernel's warnings. Then the language switch: Python
// shows its starter, signature and editor mode; drafts are kept per stage and language on the
// server (and in a copy keyed by the learner's id) across a reload; Run sends the language, the result and the history say it; opening a history entry
// switches the language back; Rust and "Reset to starter"; an old per-stage draft of this learner
// becomes the CUDA draft, on the server too. The stage list is grouped by track ("reduction/3" is in track "reduction"): with the real
// course, and with a made-up twelve-stage course of two tracks (reduction/1..9, atomics/1..3) served
// by routes: one heading per track with its name and count, every stage under its own track's
// heading, the API's order kept; Tab and Enter cross the boundary, atomics/1's previous stage (the
// Metrics tab's "your last ...") is reduction/9, and on a phone-sized screen nothing is cut off.
// Issue #14 (checkIssue14, at 1400x900 and 420 px): the editor's gutter on stages 1 and 2 (created
// hidden); sign-up shows the token once with Copy, sign-out, sign-in with a token, a stale token
// signs out with a message, names with spaces, errors in the message area; progress in words on
// each stage; Ctrl+Enter runs and long lines wrap; verdicts in words, the Metrics tab's note, each
// test's bound, "Next stage"; the last result kept across a reload; History's "open" asks before
// replacing a changed draft, "diff" shows the lines, "Reset to starter" asks; the leaderboard tab
// and its opt-in (PUT /api/me); nothing wider than a 420 px screen; axe-core finds nothing serious
// or critical (light, dark, narrow). Routes this binary lacks (404) get made-up answers; progress
// and the leaderboard are always made up (accepted runs need a GPU). NAME-dark.png, NAME-wide.png
// and NAME-420.png show them.
// Event streams (checkStreamFallback): a run's progress comes by an EventSource opened with a
// one-use ticket (POST /api/jobs/N/ticket, then /api/jobs/N/events?ticket=...) and its result by
// that stream; on a server that judges nothing, a refused ticket makes the page poll, and the
// learner's fifth stream replaces the page's (event: replaced), which then polls rather than
// opening another. Every URL any page asked for is recorded: none holds a token.
// No GPU is needed: compiling happens before any device is touched. More screenshots:
// NAME-python.png shows the Python compile error, NAME-tracks.png and NAME-tracks-narrow.png the
// two tracks on a wide screen and on a phone.
"use strict";
const fs = require("node:fs");
const path = require("node:path");

const [binary, webDir, screenshot] = process.argv.slice(2).map((arg) => path.resolve(arg));
const serve = require("./serve.cjs");
const checks = require("./checks.cjs");
const { expect, overflowing } = checks;
const checkAxe = (page, label) => checks.checkAxe(page, label, webDir);


// Every URL the pages ask for (EventSource included), and every token the test saw: a token
// travels in the Authorization header only, never in a URL, where every proxy's log would keep it.
const requestUrls = [];
const tokensSeen = new Set();
const recordRequests = (target) => target.on("request", (request) => requestUrls.push(request.url()));

function expectNoTokenInUrls() {
  expect(requestUrls.length > 0 && tokensSeen.size > 0, "requests and tokens were recorded");
  const leaked = requestUrls.filter((u) => /[?&]token=/.test(u) || [...tokensSeen].some((t) => u.includes(t)));
  expect(leaked.length === 0, `no request URL holds a token (${requestUrls.length} URLs; got ${leaked.slice(0, 3).join(" ")})`);
}

const isPost = (request, pathname) => request.method() === "POST" && new URL(request.url()).pathname === pathname;
const isEvents = (request, id) => new URL(request.url()).pathname === `/api/jobs/${id}/events`;
const isPoll = (request, id) => request.method() === "GET" && new URL(request.url()).pathname === `/api/jobs/${id}`;

const editorValue = (page) => page.evaluate(() => window.cudojoEditor.getValue());
const editorMode = (page) => page.evaluate(() => ({
  option: window.cudojoEditor.getOption("mode"), loaded: window.cudojoEditor.getMode().name }));
const stored = (page, key) => page.evaluate((name) => localStorage.getItem(name), key);
// The signed-in learner's local copy of a draft (web/js/drafts.js): {stage, language, source, sent}.
const localDraft = (page, stage, language) => page.evaluate(([s, l]) =>
  JSON.parse(localStorage.getItem(`cudojo.drafts.${localStorage.getItem("cudojo.learner-id")}.${s}.${l}`) || "null"), [stage, language]);

// The draft the server keeps (GET /api/drafts), asked with the page's own token; null for none.
const serverDraft = (page, stage, language) => page.evaluate(async ([s, l]) => {
  const answer = await fetch(`/api/drafts?stage=${encodeURIComponent(s)}`, {
    headers: { Authorization: `Bearer ${localStorage.getItem("cudojo.token")}` } }).then((r) => r.json());
  const found = (answer.drafts || []).find((draft) => draft.language === l);
  return found ? found.source : null;
}, [stage, language]);

// A draft is sent a second after typing stops: the server has `text`, and the local copy says it
// was sent.
async function expectDraftSaved(page, stage, language, text, label) {
  const deadline = Date.now() + 8000;
  let got = null;
  while ((got = await serverDraft(page, stage, language)) !== text && Date.now() < deadline) await page.waitForTimeout(100);
  expect(got === text, `${label}: the server keeps the ${stage} ${language} draft (got ${JSON.stringify(got && got.slice(0, 80))})`);
  while (!((await localDraft(page, stage, language)) || {}).sent && Date.now() < deadline) await page.waitForTimeout(100);
  const copy = await localDraft(page, stage, language);
  expect(copy && copy.source === text && copy.sent === true, `${label}: the learner's local copy holds it, marked sent`);
}

// The page is ES modules (web/js/) and keeps no globals but window.cudojoEditor, so a check that
// looks inside it imports the module it needs in the page: a module is one instance per URL, the
// very one the page runs. What the modules share is in web/js/state.js; `inState(check, arg)` is
// an expression for page.evaluate that calls check(state, arg) there. `check` travels as source
// text, so it may use only its parameters; `arg` travels as JSON.
const inState = (check, arg = null) =>
  `(async () => (${check})((await import("/js/state.js")).state, ${JSON.stringify(arg)}))()`;
const readState = (page, check, arg) => page.evaluate(inState(check, arg));

// page.waitForFunction for the page's state: asked every 50 ms; while the page reloads the answer
// is "not yet".
async function waitForState(page, check, arg = null, timeout = 30000) {
  const deadline = Date.now() + timeout;
  while (!(await readState(page, check, arg).catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeout} ms waiting for ${check} (${JSON.stringify(arg)})`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

// The page's own drawing of a report (web/js/report.js) and of its metrics (web/js/metrics.js),
// for reports the test makes up.
const showReport = (page, report) => page.evaluate(async (r) => (await import("/js/report.js")).showReport(r), report);
const showMetrics = (page, report) => page.evaluate(async (r) => (await import("/js/metrics.js")).showMetrics(r), report);
const stageOpen = (state, id) => Boolean(state.stage && state.stage.id === id);

async function expectLanguage(page, stage, language, mode, loaded) {
  await page.waitForSelector(`#workbench[data-language='${language}']`);
  expect(await page.inputValue("#language") === language, `the switch shows ${language}`);
  const signature = stage.languages[language].signature;
  expect(await page.textContent("#signature") === signature, `the ${language} signature is shown: ${signature}`);
  const { option, loaded: got } = await editorMode(page);
  expect(option === mode && got === loaded, `editor mode ${mode} (${loaded}) for ${language}, got ${option} (${got})`);
}

// Puts `text` on a new line after the first line containing `after`; gives the new line's number.
async function typeLineAfter(page, after, text) {
  const index = (await editorValue(page)).split("\n").findIndex((line) => line.includes(after));
  expect(index >= 0, `the editor has a line with ${after}`);
  await page.evaluate((line) => {
    const editor = window.cudojoEditor;
    editor.focus();
    editor.setCursor({ line, ch: editor.getLine(line).length });
  }, index);
  await page.keyboard.press("Enter");
  await page.keyboard.type(text);
  return index + 2;
}

// Reports drawn by the page's own showReport: a diagnostic inside a CUDA header names the header
// and is no link into the learner's file (its note at the learner's line is); an accepted kernel's
// warnings are listed.
async function checkDiagnosticsOfOtherFiles(page) {
  await page.selectOption("#language", "cuda");
  await showReport(page, {
    verdict: "compile_error", stage: "reduction/3", language: "cuda", file: "submission.cu", message: "",
    compile: { ok: false, diagnostics: [
      { file: "cub/block/block_reduce.cuh", line: 518, column: 3, severity: "error", message: "inside CUB", context: "x\n  ^" },
      { file: "submission.cu", line: 2, column: 0, severity: "note", message: "the error in <cub/block/block_reduce.cuh> comes from this line", context: "" }] } });
  expect(await page.locator("#tab-result li.error a.line").count() === 0, "a header's line is not a link into the learner's file");
  expect((await page.textContent("#tab-result li.error")).includes("cub/block/block_reduce.cuh:518"), "the header and its line are named");
  expect(await page.locator("#tab-result li.note a.line[data-line='2']").count() === 1, "the note links to the learner's line");
  await showReport(page, {
    verdict: "accepted", stage: "reduction/3", language: "cuda", file: "submission.cu", message: "",
    compile: { ok: true, diagnostics: [
      { file: "submission.cu", line: 3, column: 7, severity: "warning", message: "variable \"unused\" was declared but never referenced", context: "" }] } });
  expect((await page.textContent("#tab-result h3")).includes("Compiler warnings"), "an accepted kernel's warnings have a heading");
  expect(await page.locator("#tab-result li.warning a.line[data-line='3']").count() === 1, "... and are listed as warnings");
}

async function checkLanguages(page) {
  const stage = await page.evaluate(() => fetch("/api/stages/reduction/3").then((response) => response.json()));
  for (const language of ["cuda", "python", "rust"]) {
    expect(stage.languages && stage.languages[language], `the server offers ${language} for reduction/3`);
  }

  // The control is found by its label and lists the three languages, CUDA chosen.
  const select = page.getByLabel("Language", { exact: true });
  expect(await select.evaluate((node) => node.id) === "language", "the label 'Language' names the switch");
  const options = await select.evaluate((node) => [...node.options].map((option) => option.value));
  expect(options.join(",") === "cuda,python,rust", `the switch offers cuda, python, rust (got ${options})`);
  await expectLanguage(page, stage, "cuda", "text/x-c++src", "clike");
  expect(await page.locator("#tab-result .judged-language[data-language='cuda']").count() === 1,
         "the result panel says the job was CUDA");
  expect((await page.textContent("#tab-result .judged-language")).includes("CUDA C++"), "... by name");
  const cudaDraft = await editorValue(page);
  expect(cudaDraft.includes("total_so_far"), "the CUDA draft holds the typed line");
  await expectDraftSaved(page, "reduction/3", "cuda", cudaDraft, "the CUDA draft");

  // Keyboard: focus the switch and step to the next language.
  await select.focus();
  await page.keyboard.press("ArrowDown");
  await expectLanguage(page, stage, "python", "python", "python");
  const pythonStarter = await editorValue(page);
  expect(pythonStarter.includes("cuda.jit"), "the Python starter is shown");
  expect(pythonStarter === stage.languages.python.starter, "... exactly the server's Python starter");
  expect(await page.isVisible(".cm-keyword"), "Python is highlighted");
  expect((await page.textContent("#tab-driver")).includes(stage.languages.python.signature),
         "the Driver tab shows the Python signature");

  // A Python edit with a syntax error on a known line.
  const pythonErrorLine = await typeLineAfter(page, "cuda.atomic.add(out, 0, X[i])", "def broken(:");
  const pythonDraft = await editorValue(page);
  await expectDraftSaved(page, "reduction/3", "python", pythonDraft, "the Python draft");
  expect(await serverDraft(page, "reduction/3", "cuda") === cudaDraft, "the CUDA draft is untouched");

  // Reload: the stage opens in Python, with the Python draft; CUDA still has its own.
  await page.reload();
  await page.waitForSelector("#lesson:has-text('Guard the value, not the thread')");
  await expectLanguage(page, stage, "python", "python", "python");
  expect(await editorValue(page) === pythonDraft, "the Python draft survives a reload");
  await page.selectOption("#language", "cuda");
  await expectLanguage(page, stage, "cuda", "text/x-c++src", "clike");
  expect(await editorValue(page) === cudaDraft, "the CUDA draft is unchanged after the Python edit");
  await page.selectOption("#language", "python");
  await expectLanguage(page, stage, "python", "python", "python");
  expect(await editorValue(page) === pythonDraft, "back to the Python draft");

  // Run sends the language; the job, the result panel and the history say Python. The first answer
  // is lost on its way back (the server has queued the job): the page sends the submission again
  // under the same Idempotency-Key and gets the same job back, not a second one.
  const posted = [];
  let answerLost = false;
  await page.route("**/api/jobs", async (route) => {
    if (route.request().method() !== "POST") return route.continue();
    posted.push({ ...route.request().postDataJSON(), key: route.request().headers()["idempotency-key"] });
    if (answerLost) return route.continue();
    answerLost = true;
    await route.fetch();
    return route.abort("connectionreset");
  });
  const response = page.waitForResponse((r) => r.url().endsWith("/api/jobs") && r.request().method() === "POST");
  await page.click("#run");
  const job = await (await response).json();
  expect(posted.length === 2, `the submission is sent again after its answer was lost (posted ${posted.length})`);
  expect(/^[0-9a-f]{32}$/.test(posted[0].key || ""), `Run sends an Idempotency-Key (got ${JSON.stringify(posted[0].key)})`);
  expect(posted[1].key === posted[0].key, "... and the same key again");
  expect(job.replayed === true, `the server answers with the job it queued first (got ${JSON.stringify(job)})`);
  expect(posted[0].language === "python", `Run sends language "python" (got ${JSON.stringify(posted[0].language)})`);
  expect(posted[0].source === pythonDraft && posted[0].stage === "reduction/3", "... with the Python source and stage");
  const pythonJobs = await page.evaluate(() => fetch("/api/history?stage=reduction/3", {
    headers: { Authorization: `Bearer ${localStorage.getItem("cudojo.token")}` } }).then((r) => r.json()));
  expect(pythonJobs.jobs.filter((j) => j.language === "python").length === 1,
         `one Python job queued, not two (history: ${JSON.stringify(pythonJobs.jobs.map((j) => j.language))})`);
  const stored_job = await page.evaluate((id) => fetch(`/api/jobs/${id}`, {
    headers: { Authorization: `Bearer ${localStorage.getItem("cudojo.token")}` } }).then((r) => r.json()), job.id);
  expect(stored_job.language === "python", `the server keeps the job as python (got ${stored_job.language})`);

  await page.waitForSelector("#tab-result .judged-language[data-language='python']", { timeout: 60000 });
  expect((await page.textContent("#tab-result .judged-language")).includes("Python (Numba)"),
         "the result panel names Python (Numba)");
  expect(await page.locator("#tab-result .verdict:has-text('compile_error')").count() === 1,
         "the Python syntax error is a compile error");
  const pythonLink = page.locator(`#tab-result a.line[data-line='${pythonErrorLine}']`);
  expect(await pythonLink.count() >= 1, `a Python diagnostic links to line ${pythonErrorLine}`);
  expect(await page.locator(".CodeMirror .cm-error-line").count() >= 1, "the Python error line is marked");
  await page.screenshot({ path: screenshot.replace(/(\.png)?$/, "-python.png"), fullPage: true });

  await page.click(".tabs button[data-tab='history']");
  const row = page.locator(`#tab-history tr[data-job='${job.id}']`);
  await row.waitFor();
  expect(await row.locator(".lang-tag").textContent() === "py", "the history tags the Python job 'py'");
  expect(await page.textContent("#tab-history tr[data-language='cuda'] .lang-tag") === "cu", "... and the CUDA job 'cu'");

  // Opening the CUDA job switches the editor to CUDA with that job's source.
  await page.click("#tab-history tr[data-language='cuda'] button.open-job");
  await expectLanguage(page, stage, "cuda", "text/x-c++src", "clike");
  expect(await editorValue(page) === cudaDraft, "the CUDA job's source is in the editor");
  await page.waitForSelector("#tab-result .judged-language[data-language='cuda']");
  expect(await serverDraft(page, "reduction/3", "python") === pythonDraft, "the Python draft is kept");

  // Rust: starter, mode, and "Reset to starter" resets to the Rust starter.
  await page.selectOption("#language", "rust");
  await expectLanguage(page, stage, "rust", "rust", "rust");
  expect(await editorValue(page) === stage.languages.rust.starter, "the Rust starter is shown");
  await typeLineAfter(page, "fn reduce", "let wasted = 0;");
  const rustDraft = await editorValue(page);
  await expectDraftSaved(page, "reduction/3", "rust", rustDraft, "the Rust edit");
  await page.click("#reset");
  await page.waitForSelector("#confirm-dialog[open]");
  await page.click("#confirm-ok");
  await page.waitForSelector("#confirm-dialog:not([open])", { state: "attached" });
  await page.waitForFunction((text) => window.cudojoEditor.getValue() === text, stage.languages.rust.starter, { timeout: 5000 })
    .catch(() => {});
  expect(await editorValue(page) === stage.languages.rust.starter, "Reset to starter gives the Rust starter");
  expect(await page.inputValue("#language") === "rust", "Reset keeps the language");

  // Reset to the starter deletes the draft on the server (DELETE /api/drafts/reduction/3/rust).
  const deadline = Date.now() + 8000;
  while (await serverDraft(page, "reduction/3", "rust") !== null && Date.now() < deadline) await page.waitForTimeout(100);
  expect(await serverDraft(page, "reduction/3", "rust") === null, "a draft reset to the starter is deleted on the server");

  // A stage not opened before starts in the last language used (Rust); a draft from before the
  // server kept drafts (cudojo.draft.STAGE, from before languages too) whose owner
  // (cudojo.drafts-owner) is this learner becomes that stage's CUDA draft, sent to the server once
  // when the page loads signed in as them.
  const oldDraft = "// a draft from before languages\n";
  await page.evaluate((text) => {
    localStorage.setItem("cudojo.draft.reduction/2", text);
    localStorage.setItem("cudojo.drafts-owner", localStorage.getItem("cudojo.learner-id"));
  }, oldDraft);
  await page.reload();
  await waitForState(page, stageOpen, "reduction/3");
  await page.click("nav button[data-stage='reduction/2']");
  const stage2 = await page.evaluate(() => fetch("/api/stages/reduction/2").then((r) => r.json()));
  await page.waitForFunction(() => location.hash === "#reduction/2");
  await expectLanguage(page, stage2, "rust", "rust", "rust");
  await page.selectOption("#language", "cuda");
  await expectLanguage(page, stage2, "cuda", "text/x-c++src", "clike");
  expect(await editorValue(page) === oldDraft, "the old per-stage draft is the CUDA draft");
  expect(await stored(page, "cudojo.draft.reduction/2") === null && await stored(page, "cudojo.drafts-owner") === null, "the old keys are gone");
  expect(await serverDraft(page, "reduction/2", "cuda") === oldDraft, "... and the server has the old draft");
  await page.click("nav button[data-stage='reduction/3']");
  await page.waitForFunction(() => location.hash === "#reduction/3");
  await expectLanguage(page, stage, "rust", "rust", "rust");
}

// ---- Stages grouped by track --------------------------------------------------------------------

const TRACK_TITLES = { reduction: "Reduction", atomics: "Atomics" };
const trackOf = (id) => id.split("/")[0];
const trackTitle = (track) => TRACK_TITLES[track] || track.charAt(0).toUpperCase() + track.slice(1);

// What the nav must show for `stages` (the API's order): tracks in order of first appearance.
function expectedTracks(stages) {
  const tracks = [];
  for (const stage of stages) {
    const track = trackOf(stage.id);
    let group = tracks.find((t) => t.track === track);
    if (!group) tracks.push(group = { track, ids: [] });
    group.ids.push(stage.id);
  }
  return tracks;
}

// The nav as the page drew it: headings and stage buttons in document order, and for every
// button the last heading before it (the heading it sits under), with positions on screen.
const drawnNav = (page) => page.evaluate(() => {
  const items = [];
  let heading = null;
  for (const node of document.querySelectorAll("#stages h2, #stages button[data-stage]")) {
    const box = node.getBoundingClientRect();
    const where = { top: box.top, bottom: box.bottom, left: box.left, right: box.right };
    if (node.tagName === "H2") {
      heading = node.textContent.replace(/\s+/g, " ").trim();
      items.push({ kind: "heading", text: heading, level: node.tagName, ...where });
    } else {
      items.push({ kind: "stage", id: node.dataset.stage, under: heading, ...where });
    }
  }
  return items;
});

async function checkStageGroups(page, stages, label) {
  const tracks = expectedTracks(stages);
  const drawn = await drawnNav(page);
  const headings = drawn.filter((item) => item.kind === "heading");
  const buttons = drawn.filter((item) => item.kind === "stage");
  const wantedHeadings = tracks.map(({ track, ids }) => `${trackTitle(track)} ${ids.length} ${ids.length === 1 ? "stage" : "stages"}`);
  expect(JSON.stringify(headings.map((h) => h.text)) === JSON.stringify(wantedHeadings),
         `${label}: one heading per track, in order, with its count: ${JSON.stringify(wantedHeadings)} (got ${JSON.stringify(headings.map((h) => h.text))})`);
  const wantedOrder = tracks.flatMap((t) => t.ids);
  expect(JSON.stringify(buttons.map((b) => b.id)) === JSON.stringify(wantedOrder),
         `${label}: the stages in the course's order ${wantedOrder} (got ${buttons.map((b) => b.id)})`);
  for (const { track, ids } of tracks) {
    const heading = wantedHeadings[tracks.findIndex((t) => t.track === track)];
    const box = headings.find((h) => h.text === heading);
    for (const id of ids) {
      const button = buttons.find((b) => b.id === id);
      expect(button.under === heading, `${label}: ${id} is under the heading "${heading}" (got "${button.under}")`);
      expect(button.top >= box.bottom - 1, `${label}: ${id} is drawn below its heading (${button.top} < ${box.bottom})`);
    }
    // For assistive technology the heading names its track's list, which holds exactly its stages.
    const list = page.getByRole("list", { name: heading, exact: true });
    expect(await list.count() === 1, `${label}: a list named "${heading}"`);
    const inList = await list.locator("button[data-stage]").evaluateAll((nodes) => nodes.map((n) => n.dataset.stage));
    expect(JSON.stringify(inList) === JSON.stringify(ids), `${label}: the "${heading}" list holds ${ids} (got ${inList})`);
    expect(await page.getByRole("heading", { name: heading, exact: true }).count() === 1, `${label}: "${heading}" is a heading`);
  }
}

// A made-up course of twelve stages in two tracks, served by routes (stage details borrow
// reduction/3's; the history of reduction/9 holds one timed job): the grouping, the keyboard, the
// previous stage across the boundary, and a phone-sized screen.
async function checkTracks(browser, url, screenshot) {
  const fake = [...Array(9)].map((_, i) => `reduction/${i + 1}`).concat(["atomics/1", "atomics/2", "atomics/3"])
    .map((id) => ({ id, alias: `${id}-alias`, title: `Stage ${id}`, summary: `about ${id}`, signature: "__global__ void k()" }));
  const context = await browser.newContext({ viewport: { width: 1440, height: 1000 } });
  recordRequests(context);
  const page = await context.newPage();
  const pageErrors = [];
  page.on("pageerror", (error) => { pageErrors.push(error); console.error(`page error: ${error.message}`); });
  await page.addInitScript(() => localStorage.setItem("cudojo.token", "made-up"));
  // The made-up token belongs to a made-up learner, whose every call the routes answer: the real
  // server would refuse the token (401), and the page would sign out.
  await page.route((u) => u.pathname === "/api/me", (route) => route.fulfill({ json: { id: 1, name: "made up", leaderboard: false } }));
  await page.route((u) => u.pathname === "/api/progress", (route) => route.fulfill({ json: { stages: {}, deadlines: {} } }));
  await page.route((u) => u.pathname.startsWith("/api/drafts"), (route) => route.fulfill({ json: { drafts: [] } }));
  await page.route((u) => u.pathname === "/api/stages", (route) => route.fulfill({ json: fake }));
  await page.route((u) => u.pathname.startsWith("/api/stages/"), async (route) => {
    const id = decodeURIComponent(new URL(route.request().url()).pathname.slice("/api/stages/".length));
    const real = await (await route.fetch({ url: new URL("/api/stages/reduction/3", url).href })).json();
    return route.fulfill({ json: { ...real, ...fake.find((stage) => stage.id === id) } });
  });
  const historyAsked = [];
  await page.route((u) => u.pathname === "/api/history", (route) => {
    const stage = new URL(route.request().url()).searchParams.get("stage");
    historyAsked.push(stage);
    const timed = { id: 7, state: "done", verdict: "too_slow", language: "cuda", created_at: 1700000000,
                    report: { metrics: { time_ms: { median: 0.0123, min: 0.012, max: 0.013, samples: 50 } } } };
    return route.fulfill({ json: { jobs: stage === "reduction/9" ? [timed] : [] } });
  });

  await page.goto(`${url}#atomics/1`);
  await page.waitForFunction(() => document.querySelector("nav button[data-stage='atomics/1'][aria-current='true']"));
  await checkStageGroups(page, fake, "two tracks");
  expect(await page.locator("nav button.current").count() === 1, "one stage is current");
  await page.screenshot({ path: screenshot.replace(/(\.png)?$/, "-tracks.png") });

  // Keyboard: headings take no focus, so Shift+Tab from atomics/1 lands on reduction/9.
  await page.focus("nav button[data-stage='atomics/1']");
  await page.keyboard.press("Shift+Tab");
  expect(await page.evaluate(() => document.activeElement.dataset.stage) === "reduction/9",
         "Shift+Tab from atomics/1 reaches reduction/9");
  await page.keyboard.press("Enter");
  await page.waitForFunction(() => location.hash === "#reduction/9");
  expect(await page.getAttribute("nav button[data-stage='reduction/9']", "aria-current") === "true", "Enter opens reduction/9");
  await page.keyboard.press("Tab");
  expect(await page.evaluate(() => document.activeElement.dataset.stage) === "atomics/1", "Tab goes on to atomics/1");
  await page.keyboard.press("Enter");
  await waitForState(page, (state) => location.hash === "#atomics/1" && Boolean(state.stage && state.stage.id === "atomics/1"));

  // The previous stage crosses the boundary: atomics/1's Metrics name the learner's last reduction/9.
  const report = { metrics: { n: 1000, time_ms: { median: 0.01, min: 0.01, max: 0.011, samples: 50 } },
                   gpu: { name: "Made-up GPU", arch: "sm_90", peak_read_gbps: 4000 } };
  historyAsked.length = 0;
  await showMetrics(page, report);
  const metrics = await page.textContent("#tab-metrics");
  expect(historyAsked.includes("reduction/9"), `atomics/1 asks for reduction/9's history (asked ${historyAsked})`);
  expect(metrics.includes("your last reduction/9") && metrics.includes("too_slow"),
         `atomics/1's Metrics show the last reduction/9 run (got ${JSON.stringify(metrics)})`);
  // ... and within a track as before; the course's first stage has none.
  await page.click("nav button[data-stage='atomics/2']");
  await waitForState(page, stageOpen, "atomics/2");
  historyAsked.length = 0;
  await showMetrics(page, report);
  expect(historyAsked.includes("atomics/1"), `atomics/2 asks for atomics/1's history (asked ${historyAsked})`);
  await page.click("nav button[data-stage='reduction/1']");
  await waitForState(page, stageOpen, "reduction/1");
  await showMetrics(page, report);
  expect(!(await page.textContent("#tab-metrics")).includes("your last"), "reduction/1 has no previous stage");

  // A phone: the same groups, every heading and stage inside the screen, no sideways scrolling.
  await page.setViewportSize({ width: 390, height: 844 });
  await checkStageGroups(page, fake, "two tracks on a phone");
  for (const item of await drawnNav(page)) {
    expect(item.left >= 0 && item.right <= 390, `on a phone ${item.id || item.text} fits the screen (${item.left}..${item.right})`);
  }
  const scrollWidth = await page.evaluate(() => document.documentElement.scrollWidth);
  expect(scrollWidth <= 390, `on a phone the page does not scroll sideways (width ${scrollWidth})`);
  const fontSize = await page.locator("nav button[data-stage='atomics/1']").evaluate((node) => parseFloat(getComputedStyle(node).fontSize));
  expect(fontSize >= 13, `on a phone stage titles stay readable (font ${fontSize}px)`);
  await page.screenshot({ path: screenshot.replace(/(\.png)?$/, "-tracks-narrow.png"), fullPage: true });
  expect(pageErrors.length === 0, `no script errors on the two-track page (got ${pageErrors.length})`);
  await context.close();
}

// ---- Issue #14: accounts, history, progress, results, leaderboard, narrow screens, axe ------------

// The page loads KaTeX, highlight.js and jsdiff from /vendor/...; a server that does not serve
// them yet (404) gets them from web/node_modules here, so the page is tested either way.
const VENDOR = { katex: ["katex", "dist"], highlight: ["@highlightjs", "cdn-assets"], diff: ["diff", "dist"] };
async function serveVendorFallback(context, webDir) {
  await context.route((u) => /^\/vendor\/(katex|highlight|diff)\//.test(u.pathname), async (route) => {
    const response = await route.fetch().catch(() => null);
    if (response && response.status() !== 404) return route.fulfill({ response });
    const [, name, rest] = /^\/vendor\/([^/]+)\/(.*)$/.exec(new URL(route.request().url()).pathname);
    const file = path.join(webDir, "node_modules", ...VENDOR[name], rest);
    if (!fs.existsSync(file)) return route.fulfill({ status: 404, body: "" });
    return route.fulfill({ path: file });
  });
}

// Routes of the newer API (/api/me, /api/progress, /api/stages/ID/leaderboard): the server's own
// answer when it has the route, else a made-up one (a 404 means this binary predates the route).
// `fake(route)` answers like the documented route.
async function routeOrFake(context, match, fake, used) {
  await context.route(match, async (route) => {
    const response = await route.fetch().catch(() => null);
    if (response && response.status() !== 404) return route.fulfill({ response });
    used.add(new URL(route.request().url()).pathname.replace(/\/api\/stages\/.*\//, "/api/stages/ID/"));
    return fake(route);
  });
}

// The gutter's width without its border, and whether the code starts right of it. An editor
// created hidden and never refreshed has a 2 px gutter (its border) with the numbers over the code.
const gutterWidth = (page) => page.evaluate(() => {
  const gutters = document.querySelector(".CodeMirror-gutters");
  const line = document.querySelector(".CodeMirror-line").getBoundingClientRect();
  const box = gutters.getBoundingClientRect();
  return line.left >= box.right - 1 ? gutters.clientWidth : 0;
});

async function openStage(page, id) {
  await page.click(`nav button[data-stage='${id}']`);
  await waitForState(page, (state, want) => Boolean(state.stage && state.stage.id === want
    && document.querySelector("#workbench").dataset.language), id);
}

// A server that judges nothing (its jobs stay queued). A ticket refused: the page polls GET
// /api/jobs/N once a second and opens no stream. A stream opened with a ticket, then the learner's
// four more (max_event_streams_per_learner is 4, sent as a script would, the token in the header):
// the page's stream, the oldest, gets "event: replaced", and the page polls instead of asking again.
async function checkStreamFallback(browser) {
  const { server, url } = await serve.startServer(binary, webDir, 0);
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  const others = new AbortController();
  try {
    await serveVendorFallback(context, webDir);
    recordRequests(context);
    const requests = [];
    context.on("request", (request) => requests.push(request));
    const page = await context.newPage();
    const pageErrors = [];
    page.on("pageerror", (error) => { pageErrors.push(error); console.error(`page error: ${error.message}`); });
    await page.goto(url);
    await page.fill("#learner-name", "streams");
    await page.click("#signin-button");
    await page.waitForSelector("#who:has-text('signed in as streams')");
    await page.click("#token-done");
    const token = await stored(page, "cudojo.token");
    tokensSeen.add(token);
    await openStage(page, "reduction/1");

    // 1. The ticket is refused (503 once): the page polls.
    await page.route("**/api/jobs/*/ticket", (route) => route.fulfill({ status: 503, json: { error: "try again" } }), { times: 1 });
    let posted = page.waitForResponse((r) => isPost(r.request(), "/api/jobs"));
    await page.click("#run");
    const first = await (await posted).json();
    for (let n = 0; n < 2; n++) await page.waitForRequest((r) => isPoll(r, first.id), { timeout: 5000 });
    expect(requests.some((r) => isPost(r, `/api/jobs/${first.id}/ticket`)), "the page asked for a ticket");
    expect(!requests.some((r) => isEvents(r, first.id)), "with the ticket refused the page opens no stream ...");
    expect((await page.textContent("#status")).startsWith("queued"), `... and polls, showing the queue (${await page.textContent("#status")})`);

    // 2. The page's stream is replaced by the learner's fifth.
    await page.reload();
    await openStage(page, "reduction/1");
    posted = page.waitForResponse((r) => isPost(r.request(), "/api/jobs"));
    const opened = page.waitForResponse((r) => /^\/api\/jobs\/\d+\/events$/.test(new URL(r.url()).pathname));
    await page.click("#run");
    const second = await (await posted).json();
    const stream = await opened;
    expect(stream.status() === 200 && new URL(stream.url()).pathname === `/api/jobs/${second.id}/events`,
           `the page opens the job's stream (${stream.status()} ${stream.url()})`);
    expect(new URL(stream.url()).searchParams.get("ticket"), "... with ?ticket=");
    await waitForState(page, (state) => Boolean(state.events && state.events.readyState === EventSource.OPEN));
    await readState(page, (state) => state.events.addEventListener("replaced", () => { window.streamReplaced = true; }));
    for (let n = 0; n < 4; n++) {
      const response = await fetch(new URL(`/api/jobs/${second.id}/events`, url),
                                   { headers: { Authorization: `Bearer ${token}` }, signal: others.signal });
      expect(response.status === 200, `the learner's stream ${n + 2} opens (${response.status})`);
      await response.body.getReader().read();  // its first event: the stream is counted
    }
    await page.waitForFunction(() => window.streamReplaced === true, null, { timeout: 5000 });
    for (let n = 0; n < 2; n++) await page.waitForRequest((r) => isPoll(r, second.id), { timeout: 5000 });
    expect(requests.filter((r) => isEvents(r, second.id)).length === 1, "replaced, the page polls and opens no other stream");
    expect(await readState(page, (state) => state.events === null || state.events.readyState === EventSource.CLOSED),
           "... and its replaced stream is closed");
    expect(pageErrors.length === 0, `no script errors in the stream checks (got ${pageErrors.length})`);
  } finally {
    others.abort();
    await context.close();
    server.kill("SIGTERM");
  }
}

async function checkIssue14(browser, url, screenshot) {
  // bypassCSP: the server's CSP (script-src 'self') would refuse the injected axe-core.
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 }, bypassCSP: true });
  await serveVendorFallback(context, webDir);
  recordRequests(context);
  const emulated = new Set();
  // The learner the made-up /api/me knows: filled in at sign-up.
  const me = { id: 0, name: "", leaderboard: false, token: null };
  const puts = [];
  await routeOrFake(context, (u) => u.pathname === "/api/me", (route) => {
    const auth = route.request().headers().authorization || "";
    if (!me.token || auth !== `Bearer ${me.token}`) return route.fulfill({ status: 401, json: { error: "unknown token" } });
    if (route.request().method() === "PUT") me.leaderboard = Boolean(route.request().postDataJSON().leaderboard);
    return route.fulfill({ json: { id: me.id, name: me.name, leaderboard: me.leaderboard } });
  }, emulated);
  await context.route((u) => u.pathname === "/api/me", (route) => {
    if (route.request().method() === "PUT") puts.push(route.request().postDataJSON());
    return route.fallback();
  });
  // Progress and the leaderboard need accepted runs (a GPU): these two are always made up here;
  // the real routes' shapes are checked below where the server has them.
  const progress = { stages: {
    "reduction/1": { status: "accepted", attempts: 3, best_time_ratio: 0.953, best_time_ms: 0.0123, last_job: 1 },
    "reduction/2": { status: "attempted", attempts: 1, best_time_ratio: null, best_time_ms: null, last_job: 2 } } };
  await context.route((u) => u.pathname === "/api/progress", (route) => route.fulfill({ json: progress }));
  await context.route((u) => /^\/api\/stages\/.+\/leaderboard$/.test(u.pathname), (route) => route.fulfill({ json: {
    stage: "reduction/1", entries: [
      { rank: 1, name: "Jane Doe", time_ratio: 0.91, time_ms: 0.0117, language: "cuda", at: 1700000000 },
      { rank: 2, name: "ada", time_ratio: 1.02, time_ms: 0.0131, language: "python", at: 1700000100 }] } }));

  const page = await context.newPage();
  const pageErrors = [];
  page.on("pageerror", (error) => { pageErrors.push(error); console.error(`page error: ${error.message}`); });
  await page.goto(url);
  await page.waitForSelector("nav button[data-stage='reduction/2']");

  // 1. The editor was created hidden: its gutter is measured once shown, on stage 1 and on stage 2.
  await openStage(page, "reduction/1");
  expect(await gutterWidth(page) > 10, `stage 1: the line-number gutter has a width, the code right of it (${await gutterWidth(page)})`);
  await openStage(page, "reduction/2");
  expect(await gutterWidth(page) > 10, `stage 2: the line-number gutter has a width, the code right of it (${await gutterWidth(page)})`);

  // 2. Accounts. Errors go to the message area, not the name slot.
  await page.fill("#learner-name", "");
  await page.click("#signin-button");
  await page.waitForSelector("#account-message:not([hidden])");
  expect((await page.textContent("#account-message")).includes("Type a display name"), "an empty name is refused in the message area");
  expect(await page.textContent("#who") === "", "... and the name slot stays empty");
  await page.route("**/api/learners", (route) => route.fulfill({ status: 400, json: { error: "a learner name is 1 to 40 characters" } }), { times: 1 });
  await page.fill("#learner-name", "x");
  await page.click("#signin-button");
  await page.waitForSelector("#account-message:has-text('1 to 40 characters')");
  expect(await page.textContent("#who") === "", "a refused sign-up leaves the name slot empty");

  // Sign-up with a name that has a space: the token is shown once, with Copy and a note.
  const signup = page.waitForResponse((r) => r.url().endsWith("/api/learners") && r.request().method() === "POST");
  await page.fill("#learner-name", "Jane Doe");
  await page.click("#signin-button");
  const learner = await (await signup).json();
  expect(learner.name === "Jane Doe", `the server keeps "Jane Doe" (got ${JSON.stringify(learner.name)})`);
  Object.assign(me, { id: learner.id, name: learner.name, token: learner.token });
  tokensSeen.add(learner.token);
  await page.waitForSelector("#who:has-text('signed in as Jane Doe')");
  expect(await page.isVisible("#token-reveal"), "the token is shown after sign-up");
  expect(await page.inputValue("#token-value") === learner.token, "... the token itself");
  expect((await page.textContent("#token-reveal")).includes("keep it"), "... with a note to keep it");
  await context.grantPermissions(["clipboard-read", "clipboard-write"]);
  await page.getByRole("button", { name: "Copy", exact: true }).click();
  await page.waitForSelector("#token-copy:has-text('Copied')");
  expect(await page.evaluate(() => navigator.clipboard.readText()) === learner.token, "Copy puts the token on the clipboard");
  await page.click("#token-done");
  expect(!(await page.isVisible("#token-reveal")) && await page.inputValue("#token-value") === "", "the token is shown once");
  expect(await page.evaluate(() => localStorage.getItem("cudojo.learner-id")) === String(learner.id), "the drafts' owner is the learner");

  // Sign out forgets the token and the drafts' owner; a token signs in again (GET /api/me).
  await page.click("#signout");
  await page.waitForSelector("#signed-out:not([hidden])");
  expect(await page.evaluate(() => localStorage.getItem("cudojo.token") === null && localStorage.getItem("cudojo.learner-id") === null
                               && !Object.keys(localStorage).some((key) => key.startsWith("cudojo.drafts"))),
         "Sign out forgets the token, the drafts' owner and every draft");
  expect(await page.isVisible("#signin-button") && !(await page.isVisible("#who")), "signed out: the sign-up form is back");
  await page.fill("#token-input", "not-a-token");
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await page.waitForSelector("#account-message:has-text('not known')");
  expect(await page.evaluate(() => localStorage.getItem("cudojo.token")) === null, "an unknown token does not sign in");
  await page.getByLabel("Sign in with a token").fill(learner.token);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await page.waitForSelector("#who:has-text('signed in as Jane Doe')");
  expect(await page.isHidden("#account-message"), "a good token clears the message");

  // A stale token on load signs out with a message.
  await page.evaluate(() => localStorage.setItem("cudojo.token", "stale-token-0000"));
  await page.reload();
  await page.waitForSelector("#account-message:has-text('no longer valid')");
  expect(await page.evaluate(() => localStorage.getItem("cudojo.token")) === null, "a stale token is forgotten");
  expect(await page.isVisible("#signin-button") && await page.textContent("#who") === "", "... and the page shows it is signed out");
  await page.getByLabel("Sign in with a token").fill(learner.token);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await page.waitForSelector("#who:has-text('signed in as Jane Doe')");

  // 5. Progress in words beside each stage, with the best ratio.
  await page.waitForSelector("nav button[data-stage='reduction/1'][data-progress='accepted']");
  expect(await page.getByRole("button", { name: /reduction\/1.*accepted.*best 0\.95/ }).count() === 1, "reduction/1 is named accepted, best 0.95");
  expect(await page.getByRole("button", { name: /reduction\/2.*attempted/ }).count() === 1, "reduction/2 is named attempted");
  expect(await page.getByRole("button", { name: /reduction\/3.*new/ }).count() === 1, "reduction/3 is named new");
  const navText = await page.textContent("#stages");
  expect(!/null|undefined/.test(navText), `the stage list shows no "null" or "undefined" (${navText.slice(0, 200)})`);

  // 4. Ctrl+Enter runs; long lines wrap. A compile error runs with no GPU.
  await openStage(page, "reduction/1");
  expect(await page.evaluate(() => window.cudojoEditor.getOption("lineWrapping")), "the editor wraps long lines");
  const long = `// ${"a long comment that goes on ".repeat(12)}`;
  const wrapped = await page.evaluate((text) => {
    const cm = window.cudojoEditor;
    cm.replaceRange(`${text}\nint broken_here = undeclared_name;\n`, { line: 0, ch: 0 });
    return cm.charCoords({ line: 0, ch: text.length }, "local").top > cm.charCoords({ line: 0, ch: 0 }, "local").top;
  }, long);
  expect(wrapped, "a long comment line wraps onto a second row");
  const draft = await editorValue(page);
  const posted = page.waitForResponse((r) => r.url().endsWith("/api/jobs") && r.request().method() === "POST");
  await page.evaluate(() => window.cudojoEditor.focus());
  await page.keyboard.press("Control+Enter");
  const job = await (await posted).json();
  expect(await editorValue(page) === draft, "Ctrl+Enter runs without typing a newline");
  // 6. The verdict in words beside its code; the Metrics tab says why nothing was timed.
  await page.waitForSelector("#tab-result .verdict:has-text('Compile error (compile_error)')", { timeout: 60000 });
  await page.click(".tabs button[data-tab='metrics']");
  await page.waitForSelector("#tab-metrics .metrics-note:has-text('Nothing was timed')");
  // 3. The last result is kept across a reload.
  expect(await page.evaluate(() => localStorage.getItem("cudojo.result.reduction/1")) !== null, "the last result is kept");
  await page.reload();
  await page.waitForSelector("#tab-result .verdict[data-verdict='compile_error']");

  // 3. History: open asks before replacing a changed draft; diff shows the lines.
  await page.evaluate(() => window.cudojoEditor.replaceRange("// an edit after the run\n", { line: 0, ch: 0 }));
  const edited = await editorValue(page);
  await page.click(".tabs button[data-tab='history']");
  const row = page.locator(`#tab-history tr[data-job='${job.id}']`);
  await row.waitFor();
  await row.locator("button.diff-job").click();
  await page.waitForSelector("#diff-view:not([hidden]) .diff-ins");
  expect((await page.textContent("#diff-view .diff-ins")).includes("+ // an edit after the run"), "the diff shows the added line");
  expect(await page.locator("#diff-view .diff-del").count() === 0, "... and nothing removed");
  await row.locator("button.open-job").click();
  await page.waitForSelector("#confirm-dialog[open]");
  expect((await page.textContent("#confirm-text")).includes(`job #${job.id}`), "open asks before replacing the edited draft");
  await page.keyboard.press("Escape");
  await page.waitForSelector("#confirm-dialog:not([open])", { state: "attached" });
  expect(await editorValue(page) === edited, "Cancel (Escape) keeps the draft");
  await row.locator("button.open-job").click();
  await page.click("#confirm-ok");
  await page.waitForFunction((text) => window.cudojoEditor.getValue() === text, draft);
  // Reset to starter asks too.
  const starter = await page.evaluate(async () => (await import("/js/languages.js")).currentLanguage().starter);
  await page.click("#reset");
  await page.click("#confirm-cancel");
  await page.waitForSelector("#confirm-dialog:not([open])", { state: "attached" });
  expect(await editorValue(page) === draft, "Reset, cancelled, keeps the draft");
  await page.click("#reset");
  await page.click("#confirm-ok");
  await page.waitForFunction((text) => window.cudojoEditor.getValue() === text, starter, { timeout: 5000 }).catch(() => {});
  expect(await editorValue(page) === starter, "Reset, confirmed, gives the starter");

  // 6. Drawn reports: test rows show their tolerance; a note says why nothing was timed; 5. Next stage.
  await showReport(page, { verdict: "wrong_answer", stage: "reduction/1", language: "cuda", message: "",
    tests: [{ name: "n=1000", ok: false, expected: 1, got: 2, detail: "|got - sum| / |sum| <= 1e-05" }],
    metrics: { note: "not timed: the kernel gave a wrong answer" } });
  expect((await page.textContent("#tab-result td.detail")).includes("<= 1e-05"), "a test row shows the bound it used");
  expect((await page.textContent("#tab-result .verdict")) === "Wrong answer (wrong_answer)", "wrong_answer in words");
  expect((await page.textContent("#tab-metrics")).includes("the kernel gave a wrong answer"), "the Metrics tab shows metrics.note");
  expect(await page.locator("#tab-result a.next-stage").count() === 0, "no Next stage link without acceptance");
  await showReport(page, { verdict: "too_slow", stage: "reduction/1", language: "cuda", message: "", metrics: {} });
  expect((await page.textContent("#tab-result .verdict")) === "Too slow (too_slow)", "too_slow in words");
  await showReport(page, { verdict: "accepted", stage: "reduction/1", language: "cuda", message: "", metrics: {} });
  const next = page.locator("#tab-result a.next-stage");
  expect(await next.getAttribute("href") === "#reduction/2", "an accepted verdict links to the next stage");

  // 8. Accessibility at 1400 x 900, light and dark.
  await checkAxe(page, "1400x900");
  await page.emulateMedia({ colorScheme: "dark" });
  expect(await page.evaluate(() => getComputedStyle(document.body).backgroundColor) !== "rgb(247, 248, 250)", "the dark theme applies");
  await checkAxe(page, "1400x900 dark");
  await page.screenshot({ path: screenshot.replace(/(\.png)?$/, "-dark.png") });
  await page.emulateMedia({ colorScheme: "light" });

  // 7. The leaderboard tab and the opt-in (PUT /api/me).
  await next.click();
  await waitForState(page, stageOpen, "reduction/2");
  await page.click(".tabs button[data-tab='leaderboard']");
  await page.waitForSelector("#tab-leaderboard tr[data-rank='1']");
  expect((await page.textContent("#tab-leaderboard tr[data-rank='1']")).includes("Jane Doe"), "the leaderboard lists names with spaces");
  const optin = page.getByLabel("Show my name on the leaderboards");
  expect(!(await optin.isChecked()) && await optin.isEnabled(), "the opt-in starts off and is enabled when signed in");
  await optin.check();
  await waitForState(page, (state) => Boolean(state.me && state.me.leaderboard === true));
  expect(puts.length === 1 && puts[0].leaderboard === true, `the opt-in sends PUT /api/me {"leaderboard": true} (got ${JSON.stringify(puts)})`);
  await page.reload();
  await waitForState(page, (state) => Boolean(state.me && state.me.leaderboard === true));
  await page.click(".tabs button[data-tab='leaderboard']");
  expect(await page.getByLabel("Show my name on the leaderboards").isChecked(), "the opt-in is remembered (GET /api/me)");
  await page.screenshot({ path: screenshot.replace(/(\.png)?$/, "-wide.png") });

  // 1. A 420 px screen: nothing wider than it; the editor and Run are on it; axe again.
  await page.setViewportSize({ width: 420, height: 900 });
  await openStage(page, "reduction/1");
  expect(await gutterWidth(page) > 10, "at 420 px the gutter still has a width");
  // Signed in; then the header as it is right after sign-up (the token shown) and when signed out.
  const headers = {
    "signed in": () => {},
    "token shown": () => {
      document.getElementById("token-reveal").hidden = false;
      document.getElementById("token-value").value = "t".repeat(43);
    },
    "signed out": async () => {
      for (const [id, hidden] of [["token-reveal", true], ["signed-in", true], ["signed-out", false]]) document.getElementById(id).hidden = hidden;
      (await import("/js/message.js")).accountMessage("Your token is no longer valid (this server does not know it any more), so you are signed out.");
    },
  };
  for (const [label, setup] of Object.entries(headers)) {
    await page.evaluate(setup);
    const { bad, scrollWidth } = await overflowing(page);
    expect(bad.length === 0 && scrollWidth <= 420,
           `at 420 px (${label}) nothing is wider than the screen (scrollWidth ${scrollWidth}; ${bad.slice(0, 5).join("; ")})`);
  }
  await checkAxe(page, "420x900 signed-out header");
  await page.evaluate(async () => {
    (await import("/js/message.js")).accountMessage("");
    (await import("/js/account.js")).showLearner();
  });
  for (const selector of [".CodeMirror", "#run"]) {
    const box = await page.locator(selector).boundingBox();
    expect(box && box.x >= 0 && box.x + box.width <= 420 && await page.isVisible(selector), `at 420 px ${selector} is on the screen`);
  }
  await checkAxe(page, "420x900");
  await page.screenshot({ path: screenshot.replace(/(\.png)?$/, "-420.png"), fullPage: true });

  // The real routes' shapes, where this server has them (asked from here: the page's routes are made up).
  const get = async (route) => {
    const response = await fetch(new URL(route, url), { headers: { Authorization: `Bearer ${learner.token}` } });
    return { status: response.status, body: await response.json().catch(() => null) };
  };
  const realProgress = await get("/api/progress");
  if (realProgress.status !== 404) {
    expect(realProgress.status === 200 && typeof realProgress.body.stages === "object", `GET /api/progress has stages (${realProgress.status})`);
    const mine = realProgress.body.stages["reduction/1"];
    expect(mine && mine.status === "attempted", `the server counts the compile error as an attempt at reduction/1 (${JSON.stringify(mine)})`);
  }
  const realBoard = await get("/api/stages/reduction/1/leaderboard");
  if (realBoard.status !== 404) {
    expect(realBoard.status === 200 && Array.isArray(realBoard.body.entries), `the leaderboard route has entries (${realBoard.status})`);
  }
  expect(pageErrors.length === 0, `no script errors in the issue #14 checks (got ${pageErrors.length})`);
  console.log(`issue #14: accounts, history dialog and diff, kept results, Ctrl+Enter, wrapping, progress, verdict words, ` +
              `metrics note, test bounds, next stage, leaderboard, 420 px, axe (light, dark, narrow)` +
              (emulated.size ? `; this server lacks ${[...emulated].join(", ")}: made-up answers used` : ""));
  await context.close();
}

serve.runBrowserTest(binary, webDir, async ({ url, browser }) => {
  const page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
  const pageErrors = [];
  page.on("pageerror", (error) => { pageErrors.push(error); console.error(`page error: ${error.message}`); });
  recordRequests(page);
  const requests = [];
  page.on("request", (request) => requests.push(request));
  await serveVendorFallback(page, webDir);
  await page.goto(url);
  await page.fill("#learner-name", "playwright");
  await page.click("#signin-button");
  await page.waitForSelector("#who:has-text('signed in as playwright')");
  await page.click("#token-done");
  tokensSeen.add(await stored(page, "cudojo.token"));
  // The real course's stages, grouped by track in the API's order.
  const courseStages = await page.evaluate(() => fetch("/api/stages").then((response) => response.json()));
  await page.waitForSelector(`nav button[data-stage='${courseStages[courseStages.length - 1].id}']`);
  await checkStageGroups(page, courseStages, "the course");

  await page.click("nav button[data-stage='reduction/3']");
  await page.waitForSelector("#lesson:has-text('Guard the value, not the thread')");
  const starter = await page.evaluate(() => window.cudojoEditor.getValue());
  expect(starter.includes("atomicAdd(out, X[i]);"), "the editor holds the stage 3 starter");
  expect(await page.isVisible(".CodeMirror-gutter-wrapper .CodeMirror-linenumber"), "the editor shows line numbers");
  expect(await page.isVisible(".cm-keyword"), "the editor highlights syntax");

  // Type a line using an undeclared name right after the atomicAdd line, as a learner would.
  const errorLine = await typeLineAfter(page, "atomicAdd(out, X[i]);", "total_so_far += X[i];");  // 1-based
  // And an unused variable on the next line: a warning beside the error.
  const warningLine = errorLine + 1;
  await page.keyboard.press("Enter");
  await page.keyboard.type("int unused_here;");
  const posted = page.waitForResponse((r) => isPost(r.request(), "/api/jobs"));
  const opened = page.waitForResponse((r) => /^\/api\/jobs\/\d+\/events$/.test(new URL(r.url()).pathname));
  await page.click("#run");
  const job = await (await posted).json();

  await page.waitForSelector(".verdict:has-text('compile_error')", { timeout: 60000 });
  // The run was followed by an event stream opened with a one-use ticket, and its result came
  // by that stream (the status says how long it took; a poll's says only "done").
  const stream = await opened;
  expect(requests.some((r) => isPost(r, `/api/jobs/${job.id}/ticket`)), "the page asks for a stream ticket");
  expect(new URL(stream.url()).pathname === `/api/jobs/${job.id}/events` && new URL(stream.url()).searchParams.get("ticket"),
         `the page opens the job's stream with ?ticket= (${stream.url()})`);
  expect(stream.status() === 200 && (stream.headers()["content-type"] || "").startsWith("text/event-stream"),
         `... and the server streams it (${stream.status()} ${stream.headers()["content-type"]})`);
  const doneText = await page.textContent("#status");
  expect(/^done in .* \(queued to verdict\)$/.test(doneText), `the result came by the stream (status "${doneText}")`);
  expect(!requests.some((r) => isPoll(r, job.id)), "... and the page did not poll");
  const link = page.locator(`#tab-result li.error a.line[data-line='${errorLine}']`);
  expect(await link.count() >= 1, `an error links to line ${errorLine}`);
  const message = await page.textContent("#tab-result .diagnostics");
  expect(message.includes("total_so_far"), "the diagnostic names the undeclared identifier");
  // The compiler's excerpt, in monospace, and the column: the link puts the cursor on the name.
  const context = page.locator("#tab-result li.error pre.context").first();
  const contextText = await context.textContent();
  expect(contextText.includes("total_so_far += X[i];") && contextText.includes("^"),
         `the excerpt shows the line and a caret (got ${JSON.stringify(contextText)})`);
  const font = await context.evaluate((node) => getComputedStyle(node).fontFamily);
  expect(/mono/i.test(font), `the excerpt is monospace (got ${font})`);
  const wantedColumn = await page.evaluate((line) => window.cudojoEditor.getLine(line - 1).indexOf("total_so_far") + 1,
                                           errorLine);
  const column = Number(await link.first().getAttribute("data-column"));
  expect(column === wantedColumn, `the error's column is ${wantedColumn} (got ${column})`);
  await link.first().click();
  const cursor = await page.evaluate(() => window.cudojoEditor.getCursor());
  expect(cursor.line + 1 === errorLine, `clicking the link moves the cursor to line ${errorLine} (got ${cursor.line + 1})`);
  expect(cursor.ch === column - 1, `... and to the column (ch ${column - 1}, got ${cursor.ch})`);
  expect(await page.locator(".CodeMirror .cm-error-mark").count() >= 1, "the error's name is marked in the editor");
  // The warning is listed and marked as a warning.
  const warning = page.locator(`#tab-result li.warning:has(a.line[data-line='${warningLine}'])`);
  expect(await warning.count() === 1, `a warning links to line ${warningLine}`);
  expect((await warning.textContent()).includes("unused_here"), "the warning names the unused variable");
  expect(await page.locator(".CodeMirror .cm-warning-line").count() === 1, "the warning's line is marked as a warning");
  await page.click(".tabs button[data-tab='history']");
  await page.waitForSelector("#tab-history .verdict:has-text('compile_error')");
  expect(await page.textContent("#tab-history tr[data-language='cuda'] .lang-tag") === "cu",
         "the history tags the CUDA job 'cu'");
  await page.click(".tabs button[data-tab='result']");
  await page.screenshot({ path: screenshot, fullPage: true });
  console.log(`CUDA: compile error shown at line ${errorLine}; screenshot ${screenshot}`);

  await checkLanguages(page);
  await checkDiagnosticsOfOtherFiles(page);
  await checkTracks(browser, url, screenshot);
  console.log("stages grouped by track: headings, order, keyboard, previous stage across tracks, phone width");
  await checkIssue14(browser, url, screenshot);
  await checkStreamFallback(browser);
  console.log("event streams: opened with a ticket, the result by the stream; a refused ticket and a replaced stream poll");
  expectNoTokenInUrls();
  console.log(`no token in any of the ${requestUrls.length} URLs the pages asked for`);
  expect(pageErrors.length === 0, `no script errors on the page (got ${pageErrors.length})`);
  console.log("browser test passed");
});
