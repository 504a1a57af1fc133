// Browser test of the page: Debian's chromium driven by playwright-core.
//   node page_test.cjs CUDOJO_BINARY WEB_DIR SCREENSHOT_PNG
// Starts `cudojo serve` on a free port with a fresh data folder, opens the page, signs in,
// chooses stage 3, checks the lesson and the starter, puts a compile error and a warning on known
// lines, runs, and expects the verdict, a clickable diagnostic at that line and column with the
// compiler's excerpt, and the warning marked as one; reports drawn by the page show a header's
// error without a link into the learner's file, and an accepted kernel's warnings. Then the language switch: Python
// shows its starter, signature and editor mode; drafts are kept per stage and language across a
// reload; Run sends the language, the result and the history say it; opening a history entry
// switches the language back; Rust and "Reset to starter"; an old per-stage draft becomes the CUDA
// draft. The stage list is grouped by track ("reduction/3" is in track "reduction"): with the real
// course, and with a made-up twelve-stage course of two tracks (reduction/1..9, atomics/1..3) served
// by routes: one heading per track with its name and count, every stage under its own track's
// heading, the API's order kept; Tab and Enter cross the boundary, atomics/1's previous stage (the
// Metrics tab's "your last ...") is reduction/9, and on a phone-sized screen nothing is cut off.
// No GPU is needed: compiling happens before any device is touched. More screenshots:
// NAME-python.png shows the Python compile error, NAME-tracks.png and NAME-tracks-narrow.png the
// two tracks on a wide screen and on a phone.
"use strict";
const { spawn } = require("node:child_process");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");

const [binary, webDir, screenshot] = process.argv.slice(2).map((arg) => path.resolve(arg));
const { chromium } = require(path.join(webDir, "node_modules", "playwright-core"));

function startServer() {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "cudojo-browser-"));
  const server = spawn(binary, ["serve", "--port", "0", "--data-dir", dataDir, "--workers", "1", "--web-dir", webDir],
                       { stdio: ["ignore", "pipe", "inherit"] });
  return new Promise((resolve, reject) => {
    let seen = "";
    const timer = setTimeout(() => reject(new Error(`server did not start: ${seen}`)), 15000);
    server.stdout.on("data", (chunk) => {
      seen += chunk;
      const match = /http:\/\/[\d.]+:(\d+)\//.exec(seen);
      if (match) {
        clearTimeout(timer);
        resolve({ server, url: match[0] });
      }
    });
    server.on("exit", (code) => reject(new Error(`server exited with ${code}: ${seen}`)));
  });
}

function expect(condition, message) {
  if (!condition) throw new Error(`expectation failed: ${message}`);
}

const editorValue = (page) => page.evaluate(() => window.cudojoEditor.getValue());
const editorMode = (page) => page.evaluate(() => ({
  option: window.cudojoEditor.getOption("mode"), loaded: window.cudojoEditor.getMode().name }));
const stored = (page, key) => page.evaluate((name) => localStorage.getItem(name), key);
const draftKey = (stage, language) => `cudojo.draft.${stage}.${language}`;

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
  await page.evaluate(() => showReport({
    verdict: "compile_error", stage: "reduction/3", language: "cuda", file: "submission.cu", message: "",
    compile: { ok: false, diagnostics: [
      { file: "cub/block/block_reduce.cuh", line: 518, column: 3, severity: "error", message: "inside CUB", context: "x\n  ^" },
      { file: "submission.cu", line: 2, column: 0, severity: "note", message: "the error in <cub/block/block_reduce.cuh> comes from this line", context: "" }] } }));
  expect(await page.locator("#tab-result li.error a.line").count() === 0, "a header's line is not a link into the learner's file");
  expect((await page.textContent("#tab-result li.error")).includes("cub/block/block_reduce.cuh:518"), "the header and its line are named");
  expect(await page.locator("#tab-result li.note a.line[data-line='2']").count() === 1, "the note links to the learner's line");
  await page.evaluate(() => showReport({
    verdict: "accepted", stage: "reduction/3", language: "cuda", file: "submission.cu", message: "",
    compile: { ok: true, diagnostics: [
      { file: "submission.cu", line: 3, column: 7, severity: "warning", message: "variable \"unused\" was declared but never referenced", context: "" }] } }));
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
  expect(await stored(page, draftKey("reduction/3", "cuda")) === cudaDraft, "the CUDA draft is stored under its key");

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
  expect(await stored(page, draftKey("reduction/3", "python")) === pythonDraft, "the Python draft is stored");
  expect(await stored(page, draftKey("reduction/3", "cuda")) === cudaDraft, "the CUDA draft is untouched");

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

  // Run sends the language; the job, the result panel and the history say Python.
  const posted = [];
  await page.route("**/api/jobs", (route) => {
    if (route.request().method() === "POST") posted.push(route.request().postDataJSON());
    return route.continue();
  });
  const response = page.waitForResponse((r) => r.url().endsWith("/api/jobs") && r.request().method() === "POST");
  await page.click("#run");
  const job = await (await response).json();
  expect(posted.length === 1, `one job posted (got ${posted.length})`);
  expect(posted[0].language === "python", `Run sends language "python" (got ${JSON.stringify(posted[0].language)})`);
  expect(posted[0].source === pythonDraft && posted[0].stage === "reduction/3", "... with the Python source and stage");
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
  await page.click("#tab-history tr[data-language='cuda'] button");
  await expectLanguage(page, stage, "cuda", "text/x-c++src", "clike");
  expect(await editorValue(page) === cudaDraft, "the CUDA job's source is in the editor");
  await page.waitForSelector("#tab-result .judged-language[data-language='cuda']");
  expect(await stored(page, draftKey("reduction/3", "python")) === pythonDraft, "the Python draft is kept");

  // Rust: starter, mode, and "Reset to starter" resets to the Rust starter.
  await page.selectOption("#language", "rust");
  await expectLanguage(page, stage, "rust", "rust", "rust");
  expect(await editorValue(page) === stage.languages.rust.starter, "the Rust starter is shown");
  await typeLineAfter(page, "fn reduce", "let wasted = 0;");
  expect(await stored(page, draftKey("reduction/3", "rust")) !== null, "the Rust edit is a draft");
  await page.click("#reset");
  expect(await editorValue(page) === stage.languages.rust.starter, "Reset to starter gives the Rust starter");
  expect(await page.inputValue("#language") === "rust", "Reset keeps the language");

  // A stage not opened before starts in the last language used (Rust); a draft from before
  // languages (cudojo.draft.STAGE) becomes that stage's CUDA draft.
  const oldDraft = "// a draft from before languages\n";
  await page.evaluate((text) => localStorage.setItem("cudojo.draft.reduction/2", text), oldDraft);
  await page.click("nav button[data-stage='reduction/2']");
  const stage2 = await page.evaluate(() => fetch("/api/stages/reduction/2").then((r) => r.json()));
  await page.waitForFunction(() => location.hash === "#reduction/2");
  await expectLanguage(page, stage2, "rust", "rust", "rust");
  await page.selectOption("#language", "cuda");
  await expectLanguage(page, stage2, "cuda", "text/x-c++src", "clike");
  expect(await editorValue(page) === oldDraft, "the old per-stage draft is the CUDA draft");
  expect(await stored(page, "cudojo.draft.reduction/2") === null, "the old key is gone");
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
  const page = await context.newPage();
  const pageErrors = [];
  page.on("pageerror", (error) => { pageErrors.push(error); console.error(`page error: ${error.message}`); });
  await page.addInitScript(() => localStorage.setItem("cudojo.token", "made-up"));
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
  await page.waitForFunction(() => location.hash === "#atomics/1" && state.stage && state.stage.id === "atomics/1");

  // The previous stage crosses the boundary: atomics/1's Metrics name the learner's last reduction/9.
  const report = { metrics: { n: 1000, time_ms: { median: 0.01, min: 0.01, max: 0.011, samples: 50 } },
                   gpu: { name: "Made-up GPU", arch: "sm_90", peak_read_gbps: 4000 } };
  historyAsked.length = 0;
  await page.evaluate((r) => showMetrics(r), report);
  const metrics = await page.textContent("#tab-metrics");
  expect(historyAsked.includes("reduction/9"), `atomics/1 asks for reduction/9's history (asked ${historyAsked})`);
  expect(metrics.includes("your last reduction/9") && metrics.includes("too_slow"),
         `atomics/1's Metrics show the last reduction/9 run (got ${JSON.stringify(metrics)})`);
  // ... and within a track as before; the course's first stage has none.
  await page.click("nav button[data-stage='atomics/2']");
  await page.waitForFunction(() => state.stage && state.stage.id === "atomics/2");
  historyAsked.length = 0;
  await page.evaluate((r) => showMetrics(r), report);
  expect(historyAsked.includes("atomics/1"), `atomics/2 asks for atomics/1's history (asked ${historyAsked})`);
  await page.click("nav button[data-stage='reduction/1']");
  await page.waitForFunction(() => state.stage && state.stage.id === "reduction/1");
  await page.evaluate((r) => showMetrics(r), report);
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

(async () => {
  const { server, url } = await startServer();
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  let failed = false;
  try {
    const page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
    const pageErrors = [];
    page.on("pageerror", (error) => { pageErrors.push(error); console.error(`page error: ${error.message}`); });
    await page.goto(url);
    await page.fill("#learner-name", "playwright");
    await page.click("#signin-button");
    await page.waitForSelector("#who:has-text('signed in as playwright')");
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
    const atomicLine = starter.split("\n").findIndex((line) => line.includes("atomicAdd(out, X[i]);"));
    const errorLine = atomicLine + 2;  // 1-based number of the new line
    await page.evaluate((line) => {
      const editor = window.cudojoEditor;
      editor.focus();
      editor.setCursor({ line, ch: editor.getLine(line).length });
    }, atomicLine);
    await page.keyboard.press("Enter");
    await page.keyboard.type("total_so_far += X[i];");
    // And an unused variable on the next line: a warning beside the error.
    const warningLine = errorLine + 1;
    await page.keyboard.press("Enter");
    await page.keyboard.type("int unused_here;");
    await page.click("#run");

    await page.waitForSelector(".verdict:has-text('compile_error')", { timeout: 60000 });
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
    expect(pageErrors.length === 0, `no script errors on the page (got ${pageErrors.length})`);
    console.log("browser test passed");
  } catch (error) {
    failed = true;
    console.error(error);
  } finally {
    await browser.close();
    server.kill("SIGTERM");
  }
  process.exit(failed ? 1 : 0);
})().catch((error) => {
  console.error(error);
  process.exit(1);
});
