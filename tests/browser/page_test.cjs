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
// two tracks on a wide screen and on a phone. The checks live by concern in page_tracks.cjs,
// page_accounts_results.cjs and page_streams.cjs; what they share in page_support.cjs.
"use strict";
const {
  binary, webDir, screenshot, serve, checks, expect, requestUrls, tokensSeen, recordRequests,
  expectNoTokenInUrls, isPost, isPoll, editorValue, stored, serverDraft, expectDraftSaved, waitForState,
  showReport, stageOpen, expectLanguage, typeLineAfter, serveVendorFallback,
} = require("./page_support.cjs");
const { checkStageGroups, checkTracks } = require("./page_tracks.cjs");
const { checkStreamFallback } = require("./page_streams.cjs");
const { checkIssue14 } = require("./page_accounts_results.cjs");

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
  expect(await page.locator("#tab-result .verdict[data-verdict='compile_error']").count() === 1,
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

  await page.waitForSelector(".verdict[data-verdict='compile_error']", { timeout: 60000 });
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
  await page.waitForSelector("#tab-history .verdict[data-verdict='compile_error']");
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
