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
// draft. No GPU is needed: compiling happens before any device is touched. A second screenshot,
// NAME-python.png, shows the Python compile error.
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
