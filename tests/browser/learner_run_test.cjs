// Issue #26, "wrong or lost information": what the page says about a learner's runs, against real
// servers (no GPU: a kernel that compiles is judged no_device, one that does not compile_error).
//   node learner_run_test.cjs CUDOJO_BINARY WEB_DIR OUT_DIR
// 1. A server with no judge (--workers 0): Run says the job waits because no judge is running, with
//    the seconds waited; another stage can be opened and run meanwhile; back on the first stage the
//    job is still shown, with Withdraw, which takes it out of the queue (the server forgets it).
//    After a reload a waiting job is found again; when the server goes away the page says so.
// 2. A server with a judge: a run of reduction/3 whose verdict arrives while reduction/1 is open
//    (its answer held back until then) lands on reduction/3, never in reduction/1's Result tab; the
//    page says it was judged, with a link. A no_device verdict is no attempt and the Metrics tab
//    does not blame the kernel. A compile error's line marks come back after a reload (while the
//    editor holds the text that was run). Run while signed out makes no account.
// 3. Drawn reports: the verdict in words only, the stage named, a too_slow gate's figures on the
//    Result tab, backticks as code, the hint for NVRTC's `expected a ";"`; the leaderboard names
//    each entry's GPU and marks the learner's own row.
// 4. History: a chart of the learner's time ratios on the stage; two runs' figures side by side.
// 5. A profiled run (issue #28): the Profile box sends "profile"; once the job is done with hot spots
//    (written into the server's store as a GPU machine's judge leaves it: no GPU here), the Result tab
//    lists the five hottest lines, the gutter marks each line with samples by its share, and the
//    Nsight Compute report downloads from the server under its name; an administrator's staff job view
//    of the run lists the same hot spots, and downloads the same report.
// Each state at 1400x900 and 420 px, light and dark, with axe; screenshots in OUT_DIR.
"use strict";
const fs = require("node:fs");
const path = require("node:path");
const serve = require("./serve.cjs");
const { execFileSync } = require("node:child_process");
const { expect } = require("./checks.cjs");
const steps = require("./learner_steps.cjs");
const { signInWithToken } = require("./class_helpers.cjs");
const { signUp, openStage } = steps;

const [binary, webDir, outDir] = process.argv.slice(2).map((arg) => path.resolve(arg));
fs.mkdirSync(outDir, { recursive: true });
// An administrator made on the server machine before it starts: the staff view of a learner's run.
const adminDataDir = serve.freshDataDir();
const admin = serve.cudojoJson(binary, adminDataDir, ["admin", "create", "Ada Admin"]);

const statusText = (page) => page.textContent("#status");

async function runAndGetJob(page) {
  const posted = page.waitForResponse((r) => r.url().endsWith("/api/jobs") && r.request().method() === "POST");
  await page.click("#run");
  return (await posted).json();
}

const asLearner = (page, path, method = "GET") => page.evaluate(async ([p, m]) => {
  const response = await fetch(p, { method: m, headers: { Authorization: `Bearer ${localStorage.getItem("cudojo.token")}` } });
  return { status: response.status, body: await response.json().catch(() => null) };
}, [path, method]);

// The page's look in this state at both widths and both schemes: nothing wider than a phone, axe.
const checkLook = (page, label) => steps.checkLook(page, label, { outDir, webDir });

// A server of its own with `workers` judges, and a fresh page on it; `body({ server, url, page,
// errors })` runs, and both are closed however it ends. `errors`: the page's script errors.
async function withOwnServer(browser, workers, body) {
  const { server, url } = await serve.startServer(binary, webDir, workers);
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 }, bypassCSP: true });
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (error) => errors.push(error));
  try {
    await body({ server, url, page, errors });
  } finally {
    server.kill("SIGKILL");
    await context.close();
  }
}

// 1. No judge: honest waiting, other stages meanwhile, Withdraw, a reload, the server gone.
async function checkWaiting(browser) {
  await withOwnServer(browser, 0, async ({ server, url, page, errors }) => {
    await page.goto(url);
    await signUp(page, "waiting learner");
    await openStage(page, "reduction/1");
    const job = await runAndGetJob(page);
    await page.waitForFunction(() => /no judge is running/.test(document.querySelector("#status").textContent), null, { timeout: 10000 });
    const first = await statusText(page);
    expect(/^queued, 0 ahead · \d+ s/.test(first), `the status says the place and the seconds waited (${first})`);
    await page.waitForFunction((before) => document.querySelector("#status").textContent !== before, first, { timeout: 4000 });
    expect(await page.isVisible("#withdraw"), "a queued job can be withdrawn");
    expect(await page.isDisabled("#run"), "Run waits on the stage whose job waits");
    await checkLook(page, "waiting-no-judge");

    // Another stage meanwhile: its Run is free, its status line empty, and it can run.
    await openStage(page, "reduction/2");
    expect(!(await page.isDisabled("#run")), "Run is free on another stage while reduction/1's job waits");
    expect(!(await page.isVisible("#withdraw")), "... with no Withdraw there");
    expect(!/queued/.test(await statusText(page)), `... and no other stage's queue on its status line (${await statusText(page)})`);
    const second = await runAndGetJob(page);
    await page.waitForFunction(() => /^queued, 1 ahead/.test(document.querySelector("#status").textContent), null, { timeout: 10000 });

    // Back: reduction/1's job is still shown and withdrawn from there.
    await openStage(page, "reduction/1");
    await page.waitForFunction(() => /^queued, 0 ahead/.test(document.querySelector("#status").textContent), null, { timeout: 10000 });
    await page.click("#withdraw");
    await page.waitForFunction(() => /withdrawn/.test(document.querySelector("#status").textContent), null, { timeout: 10000 });
    expect(!(await page.isDisabled("#run")), "after Withdraw, Run is free again");
    expect((await asLearner(page, `/api/jobs/${job.id}`)).status === 404, "the server no longer has the withdrawn job");
    expect((await asLearner(page, `/api/jobs/${second.id}`)).body.position === 0, "the job behind it moved up");

    // A reload: reduction/2's waiting job is found again and followed.
    await page.reload();
    await openStage(page, "reduction/2");
    await page.waitForFunction(() => /^queued, 0 ahead · \d+ s/.test(document.querySelector("#status").textContent), null, { timeout: 10000 });
    expect(await page.isVisible("#withdraw"), "after a reload the waiting job is followed again, with Withdraw");

    // Signing out while a job waits: the page lets it go (no endless asking under no token), and the
    // next learner finds Run free on that stage.
    await page.click("#signout");
    await page.waitForTimeout(2500);
    expect(!/does not answer|queued/.test(await statusText(page)), `signed out, the old job is not followed (${await statusText(page)})`);
    await signUp(page, "next learner");
    await openStage(page, "reduction/2");
    expect(!(await page.isDisabled("#run")) && !(await page.isVisible("#withdraw")), "the next learner's Run is free");
    await runAndGetJob(page);
    await page.waitForFunction(() => /^queued/.test(document.querySelector("#status").textContent), null, { timeout: 10000 });

    // The server goes away: the page says it does not answer, and for how long.
    await page.route("**/api/jobs/*/ticket", (route) => route.abort("connectionrefused"));
    server.kill("SIGKILL");
    await page.waitForFunction(() => /the server does not answer \(for \d+ s\)/.test(document.querySelector("#status").textContent),
                               null, { timeout: 15000 });
    expect(errors.length === 0, `no script errors while waiting (${errors.map((e) => e.message).join("; ")})`);
    console.log("waiting: no judge said, seconds counted, other stages free, Withdraw, a reload, the server gone");
  });
}

// 2. A judge: the verdict goes to its stage; no_device is no attempt; line marks after a reload.
async function checkVerdictsOnTheirStage(browser) {
  await withOwnServer(browser, 1, async ({ url, page, errors }) => {
    await page.goto(url);
    // Run while signed out makes no account.
    await openStage(page, "reduction/3");
    const signUps = [];
    page.on("request", (request) => { if (request.method() === "POST" && request.url().endsWith("/api/learners")) signUps.push(request); });
    await page.fill("#learner-name", "not yet");
    await page.click("#run");
    await page.waitForFunction(() => /Sign up or sign in first/.test(document.querySelector("#status").textContent));
    expect(signUps.length === 0, "Run while signed out sends no sign-up");
    expect(await page.evaluate(() => localStorage.getItem("cudojo.token")) === null, "... and the page holds no token");
    await signUp(page, "judged learner");

    // The answer of reduction/3's job is held until reduction/1 is open (a slow judge, a long queue).
    let release;
    const released = new Promise((resolve) => { release = resolve; });
    await page.route("**/api/jobs/*/ticket", (route) => route.fulfill({ status: 503, json: { error: "busy" } }));
    await page.route((u) => /^\/api\/jobs\/\d+$/.test(u.pathname), async (route) => {
      if (route.request().method() === "GET") await released;
      return route.continue();
    });
    await openStage(page, "reduction/3");
    await page.evaluate(() => window.cudojoEditor.setValue(window.cudojoEditor.getValue() + "\nthis line does not compile\n"));
    const job = await runAndGetJob(page);
    await openStage(page, "reduction/1");
    release();
    await page.waitForSelector(`#judged-elsewhere .judged-elsewhere[data-stage='reduction/3']`, { timeout: 60000 });
    expect(await page.locator("#tab-result .verdict").count() === 0,
           `reduction/1's Result tab shows no other stage's verdict (${await page.textContent("#tab-result")})`);
    expect((await page.textContent("#judged-elsewhere")).includes("Compile error"), "the note says reduction/3's verdict in words");
    await checkLook(page, "judged-elsewhere");
    await page.click("#judged-elsewhere a");
    await page.waitForSelector("#tab-result .verdict[data-verdict='compile_error']");
    expect((await page.textContent("#tab-result .judged-stage")).includes("reduction/3"), "the Result tab names the stage judged");
    await page.unroute((u) => /^\/api\/jobs\/\d+$/.test(u.pathname));
    expect(await page.locator(".CodeMirror .cm-error-line").count() >= 1, "reduction/3's error line is marked");
    await page.reload();
    await page.waitForSelector("#tab-result .verdict[data-verdict='compile_error']");
    expect(await page.locator(".CodeMirror .cm-error-line").count() >= 1, "after a reload the error line is marked again");
    await page.evaluate(() => window.cudojoEditor.replaceRange("// edited\n", { line: 0, ch: 0 }));
    await page.evaluate(async () => (await import("/js/drafts.js")).flushDrafts());
    await page.waitForTimeout(1500);
    await page.reload();
    await page.waitForSelector("#tab-result .verdict[data-verdict='compile_error']");
    expect(await page.locator(".CodeMirror .cm-error-line").count() === 0, "an edited text gets no stale marks after a reload");
    expect(job.id > 0, "the job was queued");

    // no_device: the judge's failure, not the learner's.
    await openStage(page, "reduction/1");
    await runAndGetJob(page);
    await page.waitForSelector("#tab-result .verdict[data-verdict='no_device']", { timeout: 60000 });
    await page.click(".tabs button[data-tab='metrics']");
    const note = await page.textContent("#tab-metrics");
    expect(/not your kernel's fault/.test(note) && !/did not pass the tests/.test(note), `the Metrics tab does not blame the kernel (${note})`);
    const progress = await asLearner(page, "/api/progress");
    expect(!progress.body.stages["reduction/1"], `a no_device job is no attempt (${JSON.stringify(progress.body.stages)})`);
    expect(progress.body.stages["reduction/3"] && progress.body.stages["reduction/3"].status === "attempted", "a compile error is one");
    await checkLook(page, "no-device-metrics");
    expect(errors.length === 0, `no script errors (${errors.map((e) => e.message).join("; ")})`);
    console.log("verdicts: on their own stage, named, marks after a reload, no_device no attempt, no account from Run");
  });
}

// 3. Reports the page draws: words, the stage, a gate's figures, code in backticks, a hint.
async function checkDrawnReports(browser, url) {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 }, bypassCSP: true });
  const page = await context.newPage();
  try {
    await page.goto(url);
    await openStage(page, "reduction/3");
    const show = (report) => page.evaluate(async (r) => (await import("/js/report.js")).showReport(r), report);
    await show({ verdict: "too_slow", stage: "reduction/3", language: "cuda", message: "Correct, but slower than the gate allows.",
                 tests: [{ name: "n=1000", ok: true, expected: 1, got: 1 }],
                 gate: { rule: "time_ms.median <= 2 x reference", value: 2.41, limit: 2.0, passed: false }, metrics: {} });
    expect(await page.textContent("#tab-result .verdict") === "Too slow", "the verdict in words only, no code beside it");
    expect((await page.getAttribute("#tab-result .verdict", "data-verdict")) === "too_slow", "... its code kept for machines");
    const gate = await page.textContent("#tab-result .gate-figures");
    expect(gate.includes("2.41") && gate.includes("2.00") && gate.includes("not passed"), `the Result tab shows the gate's figures (${gate})`);
    await show({ verdict: "compile_error", stage: "reduction/3", language: "rust", message: "",
                 compile: { ok: false, diagnostics: [
                   { severity: "error", line: 4, column: 1, message: "cannot find value `total` in this scope" },
                   { severity: "error", line: 7, column: 3, message: "expected a \";\"" }] } });
    expect(await page.locator("#tab-result .diagnostics code:has-text('total')").count() === 1, "`total` is shown as code");
    expect(!(await page.textContent("#tab-result .diagnostics")).includes("`"), "no raw backticks are left");
    expect((await page.textContent("#tab-result .diagnostics")).includes("the line before"), "NVRTC's expected ';' gets its hint");
    await checkLook(page, "drawn-reports");

    // The leaderboard names each entry's GPU and marks the learner's own row (the real route's
    // shape is in api.* tests; accepted runs need a GPU, so these entries are made up).
    await page.route((u) => /^\/api\/stages\/.+\/leaderboard$/.test(u.pathname), (route) => route.fulfill({ json: { stage: "reduction/3", entries: [
      { rank: 1, name: "Jane Doe", time_ratio: 0.91, time_ms: 0.0117, language: "cuda", gpu: "NVIDIA H200", mine: false, at: 1700000000 },
      { rank: 2, name: "ada", time_ratio: 1.02, time_ms: 0.0131, language: "python", gpu: "NVIDIA L4", mine: true, at: 1700000100 }] } }));
    await page.click(".tabs button[data-tab='leaderboard']");
    await page.waitForSelector("#leaderboard-table tr.mine");
    expect((await page.textContent("#leaderboard-table tr.mine")).includes("you"), "the learner's own row says 'you'");
    expect(await page.locator("#leaderboard-table tr.mine").count() === 1, "... and only that row");
    const gpus = await page.locator("#leaderboard-table td.gpu").allTextContents();
    expect(gpus.join(",") === "NVIDIA H200,NVIDIA L4", `each entry names its GPU (${gpus})`);
    await checkLook(page, "leaderboard");
    console.log("drawn reports: words only, stage, gate figures, code spans, the ';' hint");
  } finally {
    await context.close();
  }
}

// 4. The learner's own progress on a stage: a chart of their runs' time ratios, and two runs ticked
// side by side. Timed runs need a GPU, so the history and the two reports are made up here (their
// shapes are the API's: GET /api/history's summaries, GET /api/jobs/{id}'s report).
async function checkProgressAndCompare(browser, url) {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 }, bypassCSP: true });
  const page = await context.newPage();
  try {
    await page.goto(url);
    await signUp(page, "charting learner");
    const summary = (id, verdict, ratio) => ({ id, stage: "reduction/3", language: "cuda", state: "done", verdict,
                                               time_ratio: ratio, baseline_ratio: null, created_at: 1700000000 + id });
    const jobs = [summary(14, "accepted", 0.93), summary(13, "too_slow", 2.4), summary(12, "wrong_answer", null), summary(11, "too_slow", 3.1)];
    const report = (id, ms, ratio, gbps, sm) => ({ id, stage: "reduction/3", language: "cuda", state: "done", created_at: 1700000000 + id,
      verdict: ratio < 2 ? "accepted" : "too_slow", source: "// run " + id,
      report: { verdict: "x", gpu: { name: "NVIDIA H200" }, metrics: { time_ms: { median: ms }, time_ratio: ratio, bandwidth_gbps: gbps,
                                                                      sm_throughput_pct: sm, dram_throughput_pct: 80, global_atomics: 528 } } });
    await page.route((u) => u.pathname === "/api/history", (route) => route.fulfill({ json: { jobs } }));
    await page.route((u) => /^\/api\/jobs\/1[1-4]$/.test(u.pathname), (route) => {
      const id = Number(new URL(route.request().url()).pathname.split("/").pop());
      return route.fulfill({ json: id === 11 ? report(11, 0.19, 3.1, 1400.5, 12.5) : report(14, 0.057, 0.93, 4301.2, 31.0) });
    });
    await openStage(page, "reduction/3");
    await page.click(".tabs button[data-tab='history']");
    await page.waitForSelector("#tab-history figure.ratio-chart svg[role='img']");
    expect(await page.locator("#tab-history .ratio-chart circle").count() === 3, "the chart has a dot per timed run (3 of 4)");
    const label = await page.getAttribute("#tab-history .ratio-chart svg", "aria-label");
    expect(/first 3\.10, best 0\.93, last 0\.93/.test(label), `the chart says first, best and last in words (${label})`);
    expect(await page.isDisabled("#compare-runs"), "Compare waits for two ticks");
    await page.check("#tab-history tr[data-job='14'] .compare-pick input");
    await page.check("#tab-history tr[data-job='11'] .compare-pick input");
    expect(!(await page.isDisabled("#compare-runs")), "two ticked: Compare is free");
    await page.click("#compare-runs");
    await page.waitForSelector("#compare-view table");
    const row = async (figure) => page.locator(`#compare-view tr[data-figure='${figure}'] td`).allTextContents();
    expect((await row("bandwidth")).join("|") === "1400.5 GB/s|4301.2 GB/s", `GB/s side by side, older first (${await row("bandwidth")})`);
    expect((await row("SM throughput")).join("|") === "12.5 %|31.0 %", `SM throughput side by side (${await row("SM throughput")})`);
    expect((await row("GPU")).join("|") === "NVIDIA H200|NVIDIA H200", "each run names its GPU");
    await checkLook(page, "progress-and-compare");
    console.log("progress: a chart of the time ratios in words too; two runs' figures side by side");

    // A queue that moves: the status line gives the seconds left at the pace it moved (this server
    // has no judge, so the places it answers are made up: 6 at Run, then one fewer each second).
    await page.unroute((u) => /^\/api\/jobs\/1[1-4]$/.test(u.pathname));
    await page.route("**/api/jobs/*/ticket", (route) => route.fulfill({ status: 503, json: { error: "busy" } }));
    let place = 6;
    await page.route((u) => u.pathname === "/api/jobs", async (route) => {
      const job = await (await route.fetch()).json();
      return route.fulfill({ status: 202, json: { ...job, position: place } });
    });
    await page.route((u) => /^\/api\/jobs\/\d+$/.test(u.pathname), async (route) => {
      if (route.request().method() !== "GET") return route.continue();
      const job = await (await route.fetch()).json();
      place = Math.max(0, place - 1);
      return route.fulfill({ json: { ...job, state: "queued", position: place } });
    });
    await openStage(page, "reduction/2");
    await runAndGetJob(page);
    await page.waitForFunction(() => /queued, \d+ ahead · \d+ s · about \d+ s more at the queue's pace/.test(
      document.querySelector("#status").textContent), null, { timeout: 10000 });
    console.log(`waiting with a moving queue: "${await statusText(page)}"`);
  } finally {
    await context.close();
  }
}

// Runs [sql, params] statements on the server's SQLite file in one transaction (as rejudge_test.cjs).
function sql(dataDir, statements) {
  const script = "import json, sqlite3, sys\ndb = sqlite3.connect(sys.argv[1], timeout=10)\n" +
    "for query, params in json.load(sys.stdin): db.execute(query, params)\ndb.commit()\n";
  execFileSync("python3", ["-c", script, path.join(dataDir, "cudojo.sqlite3")], { input: JSON.stringify(statements) });
}

// The same profiled run in the staff job view (office hours): the hottest lines beside the source,
// each leading to its line there, and the report downloaded with the staff member's token.
async function checkStaffSeesHotSpots(browser, url, jobId, bytes) {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 }, bypassCSP: true, acceptDownloads: true });
  const page = await context.newPage();
  try {
    await page.goto(url);
    await signInWithToken(page, admin.token, { staff: true });
    const classes = await page.evaluate(async (token) => (await fetch("/api/classes",
      { headers: { Authorization: `Bearer ${token}` } })).json(), admin.token);
    const everyone = (classes.classes || classes).find((cls) => cls.is_default);
    await page.evaluate((hash) => { location.hash = hash; }, `#class/${everyone.id}/job/${jobId}`);
    await page.waitForSelector("#staff .hot-spots table.hot-lines", { timeout: 15000 });
    const rows = await page.locator("#staff tr.hot-line").evaluateAll((trs) => trs.map((tr) => tr.textContent));
    expect(rows.length === 5 && /^60%line 7/.test(rows[0]), `the staff job view lists the five hottest lines (${rows})`);
    await page.locator("#staff tr.hot-line button.line-link").first().click();
    const lit = await page.locator("#staff .source-line.lit").getAttribute("data-line");
    expect(lit === "7", `the hottest line leads to line 7 of the read-only source (${lit})`);
    const download = page.waitForEvent("download");
    await page.locator("#staff a.ncu-report").click();
    const saved = fs.readFileSync(await (await download).path());
    expect(saved.equals(bytes), `the staff member downloads the run's report (${saved.length} of 1000 bytes)`);
    await steps.checkLook(page, "staff-hot-spots", { outDir, webDir, focus: "#staff .hot-spots" });
    console.log("profiled run, staff view: hot spots and the report");
  } finally {
    await context.close();
  }
}

// 5. A profiled run: the flag sent, the hottest lines listed, the gutter's heat marks, the download.
async function checkHotSpots(browser, url, dataDir) {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 }, bypassCSP: true, acceptDownloads: true });
  const page = await context.newPage();
  try {
    await page.goto(url);
    await signUp(page, "profiling learner");
    await openStage(page, "reduction/2");
    const source = Array.from({ length: 12 }, (_, i) => `// line ${i + 1} of the kernel`).join("\n");
    await page.evaluate((text) => window.cudojoEditor.setValue(text), source);
    expect(!(await page.isChecked("#profile")), "Profile is off until asked for");
    await page.check("#profile");
    const posted = page.waitForRequest((r) => r.url().endsWith("/api/jobs") && r.method() === "POST");
    const job = await runAndGetJob(page);
    expect(JSON.parse((await posted).postData()).profile === true, "the Profile box sends profile: true");
    expect((await asLearner(page, `/api/jobs/${job.id}`)).body.profile === true, "the server keeps the job's profile flag");

    // The judge's part: six lines with samples (shares 0.6 .. 0.02), and a report of 1000 bytes.
    const shares = [[7, 0.6], [9, 0.2], [3, 0.1], [10, 0.05], [11, 0.03], [2, 0.02]];
    const lines = shares.map(([line, share]) => ({ line, text: `// line ${line} of the kernel`, samples: Math.round(share * 1000),
      share, instructions: 64, stall: "long_scoreboard", stall_words: "waiting for global memory (long scoreboard)", stall_share: 0.7 }));
    const report = { verdict: "too_slow", stage: "reduction/2", language: "cuda", message: "Correct, but too slow.",
      compile: { ok: true, log: "", diagnostics: [] }, tests: [], findings: [], metrics: { time_ratio: 3.2 }, gate: null,
      output: { captured: "", truncated: false, bytes: 0 }, hot_spots: { lines, samples: 1000, drain_samples: 0, note: "", ms: 2100 } };
    const bytes = Buffer.from(Array.from({ length: 1000 }, (_, i) => i % 256));
    sql(dataDir, [["INSERT INTO ncu_reports (job_id, bytes, report, kept_at) VALUES (?, 1000, X'" + bytes.toString("hex") + "', 0)", [job.id]],
                  ["UPDATE jobs SET state = 'done', phase = 'done', attempts = 1, verdict = 'too_slow', report = ?, started_at = ?," +
                   " finished_at = ? WHERE id = ?", [JSON.stringify(report), Date.now() / 1000, Date.now() / 1000, job.id]]]);

    await page.waitForSelector("#tab-result .hot-spots table.hot-lines", { timeout: 15000 });
    const rows = await page.locator("#tab-result tr.hot-line").evaluateAll((trs) => trs.map((tr) => tr.textContent));
    expect(rows.length === 5, `the five hottest lines, not all six (${rows.length})`);
    expect(/^60%line 7\/\/ line 7 of the kernelwaiting for global memory/.test(rows[0]), `the hottest first: share, line, text, stall (${rows[0]})`);
    const marks = await page.locator(".CodeMirror .heat-mark").evaluateAll((spans) => spans.map((span) => ({
      line: Number(span.dataset.line), heat: Number(span.style.getPropertyValue("--heat")), title: span.title })));
    expect(marks.length === 6, `every line with samples has a heat mark in the gutter (${marks.length})`);
    const heat = (line) => marks.find((mark) => mark.line === line).heat;
    expect(heat(7) === 1 && heat(9) < heat(7) && heat(2) < heat(3) && heat(2) >= 0.15, `the mark's strength follows the share (${JSON.stringify(marks)})`);
    expect(/60% of the samples; stall: waiting for global memory/.test(marks.find((mark) => mark.line === 7).title), "its title gives the share and the stall");
    const gutterLine = await page.evaluate(() => window.cudojoEditor.lineInfo(6).gutterMarkers !== null);
    expect(gutterLine, "the mark is on line 7 itself");
    await page.locator(".CodeMirror").screenshot({ path: path.join(outDir, "hot-spots-gutter.png") });

    const link = page.locator("#tab-result a.ncu-report");
    expect((await link.textContent()) === "Download the Nsight Compute report", "the job's report is offered");
    const download = page.waitForEvent("download");
    await link.click();
    const saved = await download;
    expect(saved.suggestedFilename() === `cudojo-job-${job.id}.ncu-rep`, `saved under its name (${saved.suggestedFilename()})`);
    const got = fs.readFileSync(await saved.path());
    expect(got.equals(bytes), `the bytes the server keeps (${got.length} of 1000)`);
    await steps.checkLook(page, "hot-spots", { outDir, webDir, focus: "#tab-result .hot-spots" });
    await checkStaffSeesHotSpots(browser, url, job.id, bytes);

    // The next run's report, without hot spots, leaves no heat behind.
    await page.uncheck("#profile");
    const next = await runAndGetJob(page);
    sql(dataDir, [["UPDATE jobs SET state = 'done', phase = 'done', attempts = 1, verdict = 'too_slow', report = ?," +
                   " started_at = ?, finished_at = ? WHERE id = ?",
                   [JSON.stringify({ ...report, hot_spots: undefined }), Date.now() / 1000, Date.now() / 1000, next.id]]]);
    await page.waitForFunction(() => !document.querySelector("#tab-result .hot-spots") &&
                               document.querySelector("#tab-result [data-verdict='too_slow']"), null, { timeout: 15000 });
    expect(await page.locator(".CodeMirror .heat-mark").count() === 0, "a report without hot spots clears the heat marks");
    console.log("profiled run: profile sent, five hottest lines, heat marks by share, the report downloaded");
  } finally {
    await context.close();
  }
}

serve.runBrowserTest(binary, webDir, async ({ url, browser, dataDir }) => {
  await checkHotSpots(browser, url, dataDir);
  await checkDrawnReports(browser, url);
  await checkProgressAndCompare(browser, url);
  await checkWaiting(browser);
  await checkVerdictsOnTheirStage(browser);
  console.log("learner run test passed");
}, { workers: 0, dataDir: adminDataDir });
