// Browser test of rejudging on the page (web/js/staff/rejudge.js, rejudging.js, and the stage
// version under a report): Debian's chromium driven by playwright-core against the real server.
//   node tests/browser/rejudge_test.cjs CUDOJO_BINARY WEB_DIR OUT_DIR
// Makes an administrator and the class "GPU 201" with its instructor by the CLI, starts
// `cudojo serve --no-workers` (nothing judges: this test is the judge, by SQL, so no GPU is
// needed), imports a roster of two and plants finished reduction/1 jobs in the store: Alice's and
// Bob's accepted under a stage version that is not the current one, Bob's accepted under the
// current one; and Alice's wrong answer of reduction/2 under an old version. Then:
//  1. the instructor sees Alice's reduction/1 accepted in the grid; Rejudge says reduction/1 has 1
//     job under its current version and 2 under an older one, and "Rejudge 2 older jobs" starts
//     a rejudging of those two;
//  2. its detail says 0 of 2 judged, and Apply is disabled with the reason beside it; the test
//     judge finishes Bob's rerun (accepted) and the page, asking every 2 s, says 1 of 2; then
//     Alice's (too slow): 2 of 2, the matrix has accepted -> too_slow, the flip names Alice with a
//     link to her job, and the page stops asking;
//  3. "Show every job" lists both with their reruns; Apply asks first, saying what changes; once
//     applied, the grid says Alice attempted reduction/1 (no longer accepted), Bob accepted; the
//     versions say no job of reduction/1 is under an older version; the audit log has both actions;
//  4. Alice's job (staff view) is judged under the current version; her rerun says it is a rerun
//     of the rejudging; her reduction/2 job says the stage changed since;
//  5. a rejudging started from the form (reduction/2, wrong_answer, a reason) is cancelled, the
//     dialog's buttons saying which is which; the list shows both, applied and cancelled;
//  6. a teaching assistant reads Rejudge and a judging rejudging's detail with no button that
//     starts, applies or cancels; Alice, signed in, reads "stage changed since" under her reduction/2 job and the
//     current version under her rejudged reduction/1 job;
//  7. axe finds nothing serious in Rejudge and a rejudging at 1400x900 (light, dark) and 420 px,
//     where nothing is wider than the screen outside its own scrolling box.
// Screenshots in OUT_DIR.
"use strict";
const { execFileSync } = require("node:child_process");
const fs = require("node:fs");
const path = require("node:path");

const [binary, webDir, outDir] = process.argv.slice(2).map((arg) => path.resolve(arg));
const serve = require("./serve.cjs");
const { expect, overflowing, checkAxe } = require("./checks.cjs");
const { signInWithToken } = require("./class_helpers.cjs");

const OLD = "00000000deadbeef";  // a stage version no course has
const shot = (page, name) => page.screenshot({ path: path.join(outDir, `${name}.png`), fullPage: true });

// Runs [sql, params] statements on the server's SQLite file in one transaction (Python's sqlite3,
// as tests/load does); gives the last one's rows.
function sql(dataDir, statements) {
  const script = "import json, sqlite3, sys\ndb = sqlite3.connect(sys.argv[1], timeout=10)\nrows = []\n" +
    "for query, params in json.load(sys.stdin): rows = [list(r) for r in db.execute(query, params)]\n" +
    "db.commit()\nprint(json.dumps(rows))\n";
  return JSON.parse(execFileSync("python3", ["-c", script, path.join(dataDir, "cudojo.sqlite3")],
                                 { input: JSON.stringify(statements), encoding: "utf8" }));
}

// A finished job's report as the judge writes it, cut to what the page and the store read.
const report = (stage, verdict, ratio, digest) => JSON.stringify({
  verdict, stage, language: "cuda", message: verdict === "accepted" ? "Accepted." : `Judged ${verdict}.`,
  compile: { ok: true, log: "", diagnostics: [] }, tests: [], findings: [], metrics: { time_ratio: ratio },
  gate: null, output: { captured: "", truncated: false, bytes: 0 },
  stage_version: { digest, stage_files: digest, calibration: "none", data_generator: 1, judge_rules: 1 } });

const plant = (dataDir, learner, stage, verdict, ratio, digest, hoursAgo) => {
  const at = Date.now() / 1000 - hoursAgo * 3600;
  return sql(dataDir, [["INSERT INTO jobs (learner_id, stage, source, state, phase, attempts, verdict, report, created_at, started_at, finished_at)" +
    " VALUES (?, ?, ?, 'done', 'done', 1, ?, ?, ?, ?, ?)", [learner, stage, `// ${stage} by ${learner}\n`, verdict,
    report(stage, verdict, ratio, digest), at, at + 1, at + 2]], ["SELECT last_insert_rowid()", []]])[0][0];
};

// The test judge: the rerun of `job` in `rejudging` finishes with `verdict`.
const judgeRerun = (dataDir, rejudging, job, stage, verdict, ratio, digest) => sql(dataDir, [[
  "UPDATE jobs SET state = 'done', phase = 'done', attempts = 1, verdict = ?, report = ?, started_at = ?, finished_at = ?" +
  " WHERE rejudging_id = ? AND rejudges_job = ?", [verdict, report(stage, verdict, ratio, digest), Date.now() / 1000,
  Date.now() / 1000, rejudging, job]]]);

async function call(url, token, method, where, body) {
  const response = await fetch(new URL(where, url), { method, headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
                                                      ...(body ? { body: JSON.stringify(body) } : {}) });
  const answer = await response.json().catch(() => ({}));
  expect(response.ok, `${method} ${where} answers ${response.status}: ${JSON.stringify(answer)}`);
  return answer;
}

async function person(browser, errors, label) {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 }, bypassCSP: true });
  const page = await context.newPage();
  page.on("pageerror", (error) => errors.push(`${label}: ${error.message}`));
  return page;
}

const open = async (page, hash, ready) => {
  await page.evaluate((h) => { location.hash = h; }, hash);
  await page.waitForSelector(ready);
  await page.waitForTimeout(100);
};

// 1 and 2: the versions, a rejudging of the older jobs, its progress as the test judge works.
async function startAndWatch(page, url, world) {
  await page.goto(url);
  await signInWithToken(page, world.ada, { staff: true });
  await page.click("#staff a:text-is('GPU 201')");
  await page.waitForSelector("tr[data-learner]:has-text('Alice Ang') td[data-stage='reduction/1'][data-status='accepted']");
  await page.click(".class-tabs a:text-is('Rejudge')");
  const row = page.locator("tr[data-stage='reduction/1']");
  await row.waitFor();
  const cells = await row.locator("td").allTextContents();
  expect(cells[0] === world.current.slice(0, 8) && cells[1] === "1" && cells[2].startsWith("2") && cells[2].includes(OLD.slice(0, 8)),
         `reduction/1: its current version, 1 job under it, 2 under ${OLD.slice(0, 8)} (${cells.join(" | ")})`);
  const requests = [];
  page.on("request", (request) => { if (/\/rejudgings\/\d+$/.test(request.url())) requests.push(Date.now()); });
  await page.getByRole("button", { name: "Rejudge 2 older jobs of reduction/1" }).click();
  await page.waitForSelector("#staff h3:has-text('Rejudging #')");
  const id = Number(/rejudge\/(\d+)/.exec(await page.evaluate(() => location.hash))[1]);
  const progress = page.locator(".rejudge-progress");
  expect((await progress.getAttribute("aria-live")) === "polite" && (await progress.textContent()).includes("0 of 2"), "the progress says 0 of 2, read out");
  const apply = page.getByRole("button", { name: "Apply", exact: true });
  expect(await apply.isDisabled(), "Apply waits while jobs are judged");
  const why = await page.textContent(`#${await apply.getAttribute("aria-describedby")}`);
  expect(why.includes("every job is judged again") && why.includes("0 of 2"), `the reason is beside it (${why})`);
  await shot(page, "rejudging-judging-desktop");

  judgeRerun(world.dataDir, id, world.bobOld, "reduction/1", "accepted", 0.95, world.current);
  await page.waitForSelector(".rejudge-progress:has-text('1 of 2')", { timeout: 5000 });
  expect(await apply.isDisabled(), "Apply still waits at 1 of 2");
  judgeRerun(world.dataDir, id, world.aliceOld, "reduction/1", "too_slow", 1.9, world.current);
  await page.waitForSelector(".rejudge-progress:has-text('all 2 jobs judged')", { timeout: 5000 });
  expect(!(await apply.isDisabled()), "Apply is enabled once every job is judged");
  const flip = page.locator("table.rejudge-items tr[data-job]");
  expect(await flip.count() === 1 && (await flip.textContent()).includes("Alice Ang"), "the one flip is Alice's");
  expect(await flip.locator(`a[href='#class/${world.classId}/job/${world.aliceOld}']`).count() === 1, "it links to her job");
  expect(await flip.locator("td[data-verdict='accepted']").count() === 1 && await flip.locator("td[data-verdict='too_slow']").count() === 1,
         "before accepted, after too slow");
  expect(await page.locator("table.rejudge-matrix tr.flip[data-before='accepted'][data-after='too_slow']").count() === 1
         && await page.locator("table.rejudge-matrix tr[data-before='accepted'][data-after='accepted']").count() === 1,
         "the matrix counts accepted -> too_slow and accepted -> accepted");
  const asked = requests.length;
  await page.waitForTimeout(2600);
  expect(requests.length === asked, `the page stops asking once all are judged (${requests.length - asked} more)`);
  return id;
}

// 3 and 4: every job, Apply, and what the class shows after.
async function applyAndSee(page, url, world, id) {
  await page.getByRole("button", { name: "Show every job" }).click();
  await page.waitForSelector("table.rejudge-items:has(caption:has-text('Every job')) tr[data-job]");
  expect(await page.locator("table:has(caption:has-text('Every job')) tr[data-job]").count() === 2, "every job: both");
  expect((await page.evaluate(() => location.hash)).includes("items=all"), "the list of every job is in the URL");
  await shot(page, "rejudging-judged-desktop");
  await page.getByRole("button", { name: "Apply", exact: true }).click();
  const asked = await page.textContent("#confirm-text");
  expect(asked.includes("1 of 2 jobs changes verdict") && asked.includes("accepted → too_slow: 1"), `the dialog says what changes (${asked})`);
  await page.click("#confirm-ok");
  await page.waitForSelector(".rejudge-progress:has-text('Applied')");
  expect(await page.getByRole("button", { name: "Apply", exact: true }).isHidden(), "nothing to apply once applied");
  await page.click(".class-tabs a:text-is('Progress')");
  await page.waitForSelector("tr[data-learner]:has-text('Alice Ang') td[data-stage='reduction/1'][data-status='attempted']");
  expect(await page.locator("tr[data-learner]:has-text('Bob Bell') td[data-stage='reduction/1'][data-status='accepted']").count() === 1,
         "Bob's reduction/1 stays accepted");
  await page.click(".class-tabs a:text-is('Rejudge')");
  const row = page.locator("tr[data-stage='reduction/1'][data-older='0']");
  await row.waitFor();
  expect((await row.locator("td").nth(1).textContent()) === "3" && await row.locator("button").count() === 0,
         "reduction/1: all 3 jobs under the current version, nothing to rejudge");
  const audit = await call(url, world.ada, "GET", `/api/classes/${world.classId}/audit`);
  const actions = audit.entries.map((entry) => entry.action);
  expect(actions.includes("rejudging.create") && actions.includes("rejudging.apply"), `the audit log has both (${actions})`);

  await open(page, `#class/${world.classId}/job/${world.aliceOld}`, "#staff .report .verdict");
  expect((await page.textContent("#staff .stage-version code")) === world.current.slice(0, 8)
         && await page.locator("#staff .stage-changed").count() === 0, "Alice's job is judged under the current version now");
  const [[rerun]] = sql(world.dataDir, [["SELECT id FROM jobs WHERE rejudging_id = ? AND rejudges_job = ?", [id, world.aliceOld]]]);
  await open(page, `#class/${world.classId}/job/${rerun}`, "#staff .rerun-note");
  expect((await page.textContent("#staff .rerun-note")).includes(`rejudging #${id}`), "the rerun says whose rerun it is");
  await open(page, `#class/${world.classId}/job/${world.aliceR2}`, "#staff .stage-changed");
}

// 5. A rejudging from the form, cancelled.
async function startFromFormAndCancel(page, world) {
  await page.click(".class-tabs a:text-is('Rejudge')");
  await page.getByLabel("Stage", { exact: true }).selectOption("reduction/2");
  await page.getByLabel("Verdict", { exact: true }).selectOption("wrong_answer");
  await page.getByLabel("Learner", { exact: true }).selectOption({ label: "Alice Ang (s1)" });
  await page.getByLabel("Reason", { exact: true }).fill("typo in the tolerance");
  await page.getByRole("button", { name: "Start the rejudging" }).click();
  await page.waitForSelector(".rejudge-progress:has-text('0 of 1')");
  expect((await page.textContent("#staff .facts")).includes("typo in the tolerance"), "the reason is shown");
  await page.getByRole("button", { name: "Cancel the rejudging" }).click();
  expect((await page.textContent("#confirm-cancel")) === "Keep it" && (await page.textContent("#confirm-ok")) === "Cancel the rejudging",
         "the dialog's buttons say which is which");
  await page.click("#confirm-ok");
  await page.waitForSelector(".rejudge-progress:has-text('Cancelled')");
  await page.click(".crumbs a:has-text('Rejudge')");
  await page.waitForSelector("tr[data-rejudging][data-state='cancelled']");
  expect(await page.locator("tr[data-rejudging][data-state='applied']").count() === 1, "the list shows the applied one too");
}

// 6. A teaching assistant reads; Alice reads her jobs' versions.
async function othersRead(browser, errors, url, world, id) {
  const { token } = await call(url, world.ada, "POST", `/api/classes/${world.classId}/staff`, { name: "Tim Tan", role: "ta" });
  const tim = await person(browser, errors, "teaching assistant");
  await tim.goto(url);
  await signInWithToken(tim, token, { staff: true });
  await open(tim, `#class/${world.classId}/rejudge`, "tr[data-stage='reduction/2']");
  expect(await tim.locator("#staff button, #staff form").count() === 0, "the TA's Rejudge has no button and no form");
  const judging = await call(url, world.ada, "POST", `/api/classes/${world.classId}/rejudgings`, { stage: "reduction/2" });
  await open(tim, `#class/${world.classId}/rejudge/${judging.id}`, ".rejudge-progress:has-text('0 of 1')");
  expect(await tim.locator("#staff button:text-is('Apply'), #staff button:text-is('Cancel the rejudging')").count() === 0,
         "nor the detail of one judging");

  const alice = await call(url, world.ada, "POST", `/api/classes/${world.classId}/learners/${world.alice}/token`, {});
  const learner = await person(browser, errors, "learner");
  await learner.goto(url);
  await signInWithToken(learner, alice.token);
  for (const [stage, job, changed] of [["reduction/2", world.aliceR2, true], ["reduction/1", world.aliceOld, false]]) {
    await learner.click(`nav button[data-stage='${stage}']`);
    await learner.click(".tabs button[data-tab='history']");
    await learner.click(`#tab-history tr[data-job='${job}'] button.open-job`);
    await learner.waitForSelector(`#tab-result .stage-version[data-version]`);
    const version = await learner.getAttribute("#tab-result .stage-version", "data-version");
    expect(version === (changed ? OLD : world.versions[stage]) && (await learner.locator("#tab-result .stage-changed").count()) === (changed ? 1 : 0),
           `${stage}: judged under ${version}, ${changed ? "with" : "without"} the note that the stage changed`);
    if (changed) await shot(learner, "learner-stage-changed-desktop");
  }
}

// 7. axe and narrow screens.
async function fits(page, world, id) {
  const views = [["rejudge", `#class/${world.classId}/rejudge`, "tr[data-stage]"],
                 ["rejudging", `#class/${world.classId}/rejudge/${id}?items=all`, "table.rejudge-matrix"]];
  for (const scheme of ["light", "dark"]) {
    await page.emulateMedia({ colorScheme: scheme });
    for (const [name, hash, ready] of views) {
      await open(page, hash, ready);
      await checkAxe(page, `${name} at 1400x900, ${scheme}`, webDir);
      if (scheme === "light") await shot(page, `${name}-desktop`);
    }
  }
  await page.emulateMedia({ colorScheme: "light" });
  await page.setViewportSize({ width: 420, height: 900 });
  for (const [name, hash, ready] of views) {
    await open(page, hash, ready);
    const { bad, scrollWidth } = await overflowing(page);
    expect(bad.length === 0 && scrollWidth <= 420, `${name} at 420 px: nothing wider than the screen (scrollWidth ${scrollWidth}; ${bad.slice(0, 5).join("; ")})`);
    await checkAxe(page, `${name} at 420 px`, webDir);
    await shot(page, `${name}-phone`);
  }
}

fs.mkdirSync(outDir, { recursive: true });
const dataDir = serve.freshDataDir();
serve.cudojoJson(binary, dataDir, ["admin", "create", "Root Admin"]);
const made = serve.cudojoJson(binary, dataDir, ["class", "create", "GPU 201", "--instructor", "Prof Ada"]);
serve.runBrowserTest(binary, webDir, async ({ url, browser }) => {
  const errors = [];
  const world = { dataDir, classId: made.id, ada: made.instructor.token };
  await call(url, world.ada, "POST", `/api/classes/${world.classId}/roster`, { csv: "student_id,name,email\ns1,Alice Ang,\ns2,Bob Bell,\n" });
  const { learners } = await call(url, world.ada, "GET", `/api/classes/${world.classId}/learners`);
  [world.alice, world.bob] = ["Alice Ang", "Bob Bell"].map((name) => learners.find((l) => l.name === name).id);
  const versions = await call(url, world.ada, "GET", `/api/classes/${world.classId}/versions`);
  world.versions = Object.fromEntries(versions.stages.map((stage) => [stage.stage, stage.current]));
  world.current = world.versions["reduction/1"];
  expect(/^[0-9a-f]{16}$/.test(world.current) && world.current !== OLD, `reduction/1 has a version (${world.current})`);
  world.aliceOld = plant(dataDir, world.alice, "reduction/1", "accepted", 0.9, OLD, 30);
  world.bobOld = plant(dataDir, world.bob, "reduction/1", "accepted", 0.95, OLD, 29);
  plant(dataDir, world.bob, "reduction/1", "accepted", 0.97, world.current, 2);
  world.aliceR2 = plant(dataDir, world.alice, "reduction/2", "wrong_answer", null, OLD, 28);
  console.log(`planted jobs ${world.aliceOld}, ${world.bobOld} (version ${OLD}) and one under ${world.current}`);

  const ada = await person(browser, errors, "instructor");
  const id = await startAndWatch(ada, url, world);
  console.log(`1-2. Rejudge showed 2 older jobs of reduction/1; rejudging ${id} went 0, 1, 2 of 2 by itself, Apply waiting with its reason; the flip is Alice's`);
  await applyAndSee(ada, url, world, id);
  console.log("3-4. every job listed; applied after the dialog; the grid says Alice attempted; versions current; audit; job and rerun views say so");
  await startFromFormAndCancel(ada, world);
  console.log("5. a rejudging from the form was cancelled");
  await othersRead(browser, errors, url, world, id);
  console.log("6. a TA reads without buttons; the learner sees the stage version and 'changed since'");
  await fits(ada, world, id);
  console.log(`7. axe finds nothing serious (1400x900 light and dark, 420 px); nothing wider than 420 px; screenshots in ${outDir}`);
  expect(errors.length === 0, `no script errors on any page (got ${errors.join("; ")})`);
  console.log("rejudge test passed");
}, { dataDir, workers: 0 });
