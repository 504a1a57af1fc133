// Browser test of running a class on the page (web/js/staff/ and the learner's side of a class):
// Debian's chromium driven by playwright-core against the real server, no GPU.
//   node tests/browser/class_test.cjs CUDOJO_BINARY WEB_DIR OUT_DIR
// Makes an administrator with `cudojo admin create` before starting `cudojo serve --workers 1` on
// the same data folder, then, each in its own browser context (own storage):
//  1. the administrator signs in with that token (the page turns into the staff view), makes the
//     class "GPU 101" with the instructor "Prof Ada", whose token is shown once;
//  2. the instructor signs in with it, imports a roster (a bad line first: nothing imported, the
//     problem shown with its line; then from a file), edits a row, removes and restores a learner,
//     sets reduction/2 due in the past and hides
//     reduction/3's leaderboard until a future deadline;
//  3. a learner joins with the invite code (the instructor gives her a student id); the nav says reduction/2 is past
//     due, the editor's line too; a compile error there is judged and marked late (result and
//     history); reduction/3's leaderboard says until when it is hidden;
//  4. the grid shows the learner's reduction/2 cell with 1 late run, filters and sorts, keeps its
//     first column in view; Export CSV and JSON are saved through the page's Blob and say
//     late_jobs 1 for that cell; after a second run, the learner's runs say "late" and the run
//     shows its report, its source and a diff against the run before;
//  5. (token reset) the instructor resets the learner's token: their open page signs out with a
//     message when the tab is shown again; signed in with the new token, a second reset signs them
//     out on their next action (Run);
//  6. (drafts) "issue tokens" saves a CSV of tokens for those not signed in; learner A signs in
//     with theirs, types a draft and signs out at once; learner B at the same browser sees the
//     starter in every language, and none of A's text in the editor, the page or localStorage
//     (an old-style local draft of A's is deleted, not shown); A signs in again and gets the draft
//     back from the server; with the server out of reach A's next edit is kept in this browser
//     (another tab shows it) and sent when the network is back;
//  7. the instructor adds a teaching assistant, who sees the grid but no button that changes
//     anything;
//  8. axe-core finds nothing serious or critical in the staff views at 1400x900 (light and dark)
//     and at 420 px, where nothing is wider than the screen but inside its own scrolling box.
// Screenshots in OUT_DIR: grid, learner, job and roster views at 1400x900 (-desktop) and 420 px
// (-phone), and the learner's late result.
"use strict";
const fs = require("node:fs");
const path = require("node:path");

const [binary, webDir, outDir] = process.argv.slice(2).map((arg) => path.resolve(arg));
const serve = require("./serve.cjs");
const { expect } = require("./checks.cjs");
const { signInWithToken, joinClass, runCompileError } = require("./class_helpers.cjs");
const { gridShowsLate, runsAndDiff, taReadsOnly, staffViewsFit } = require("./class_staff_views.cjs");
const { resetSignsOut, draftsStayPrivate } = require("./class_accounts.cjs");

const DESKTOP = { width: 1400, height: 900 };
const shot = (page, name) => page.screenshot({ path: path.join(outDir, `${name}.png`), fullPage: true });

// A browser context as a person at their own computer: bypassCSP lets axe-core be injected.
async function person(browser, errors, label) {
  const context = await browser.newContext({ viewport: DESKTOP, bypassCSP: true, acceptDownloads: true });
  const page = await context.newPage();
  page.on("pageerror", (error) => { errors.push(`${label}: ${error.message}`); console.error(`page error (${label}): ${error.message}`); });
  return { context, page };
}

// 1. The administrator makes the class and its instructor.
async function adminMakesClass(page, url, admin) {
  await page.goto(url);
  await signInWithToken(page, admin.token, { staff: true });
  await page.waitForSelector("#staff h2:has-text('Classes')");
  expect((await page.textContent("#who-class")) === "administrator", "the header says the administrator is one");
  await page.getByLabel("Class name").fill("GPU 101");
  await page.getByLabel("Instructor's name").fill("Prof Ada");
  await page.getByRole("button", { name: "Make the class" }).click();
  const secret = page.locator(".secret:has-text('Prof Ada')");
  await secret.waitFor();
  const token = await secret.locator("input").inputValue();
  expect(/^[0-9a-f]{64}$/.test(token), `the instructor's token is shown once (${token})`);
  const row = page.locator("#staff tr:has(a:text-is('GPU 101'))");
  await row.waitFor();
  const invite = (await row.locator("td.mono").textContent()).trim();
  const classId = Number(await row.getAttribute("data-class"));
  await page.waitForSelector("#staff tr:has(th:text-is('Prof Ada'))");  // the staff accounts list her
  await secret.getByRole("button", { name: "I have saved it" }).click();
  expect(await secret.count() === 0, "the token box goes once saved");
  return { token, invite, classId };
}

// 2. The roster and the deadlines.
async function instructorSetsUp(page, url, made) {
  await page.goto(url);
  await signInWithToken(page, made.token, { staff: true });
  await page.click(`#staff a:text-is('GPU 101')`);
  await page.waitForSelector("#staff h3:has-text('Progress grid')");
  await page.click(".class-tabs a:text-is('Roster')");
  await page.getByLabel("Roster as CSV").fill("student_id,name,email\ns1,Alice Ang,alice@example.org\nnot an id!,Bob Bell,\n");
  await page.getByRole("button", { name: "Import", exact: true }).click();
  const problem = page.locator("#staff table:has(caption:has-text('Problems')) tr:has(td:text-is('3'))");
  await problem.waitFor();
  expect((await problem.textContent()).includes("student id"), "the bad line is named with its problem");
  expect(await page.locator("tr[data-learner]").count() === 0, "nothing was imported");
  await page.getByLabel("or choose a CSV file").setInputFiles({ name: "roster.csv", mimeType: "text/csv",
    buffer: Buffer.from("student_id,name,email\ns1,Alice Ang,alice@example.org\ns2,Bob Bell,\n") });
  await page.waitForFunction(() => document.querySelector(".roster-csv").value.includes("Bob Bell"));
  await page.getByRole("button", { name: "Import", exact: true }).click();
  await page.waitForSelector("#staff .message:has-text('Imported: 2 new')");
  await page.waitForSelector("tr[data-learner]:has-text('Bob Bell')");
  expect(await page.locator("tr[data-learner]").count() === 2, "the two learners are on the roster");
  // Edit a row in place; remove and restore.
  await page.getByRole("button", { name: "Edit Bob Bell" }).click();
  await page.getByLabel("Email of Bob Bell").fill("bob@example.org");
  await page.getByRole("button", { name: "Save", exact: true }).click();
  await page.waitForSelector("tr[data-learner]:has-text('bob@example.org')");
  await page.getByRole("button", { name: "Remove Bob Bell" }).click();
  await page.click("#confirm-ok");
  await page.waitForSelector("tr[data-learner].removed:has-text('Bob Bell')");
  await page.getByRole("button", { name: "Restore Bob Bell" }).click();
  await page.waitForSelector("tr[data-learner]:not(.removed):has-text('Bob Bell')");

  await page.click(".class-tabs a:text-is('Deadlines')");
  const due2 = page.getByLabel("Due date and time of reduction/2");
  await due2.fill("2020-01-01T09:00");
  await page.getByRole("button", { name: "Save the deadline of reduction/2" }).click();
  await page.waitForSelector("tr[data-stage='reduction/2'] .due-now:has-text('was due')");
  await page.getByLabel("Due date and time of reduction/3").fill("2099-06-30T17:30");
  await page.locator("tr[data-stage='reduction/3'] input[type=checkbox]").check();
  await page.getByRole("button", { name: "Save the deadline of reduction/3" }).click();
  await page.waitForSelector("tr[data-stage='reduction/3'] .due-now:has-text('leaderboard hidden')");
  const saved = await page.evaluate(async (id) => (await (await import("/js/api.js")).api(`/api/classes/${id}`)).deadlines, made.classId);
  const wanted = await page.evaluate(() => new Date("2020-01-01T09:00").getTime() / 1000);
  expect(saved["reduction/2"] && saved["reduction/2"].due_at === wanted,
         `the deadline typed in the browser's zone reaches the server as that moment (${JSON.stringify(saved)} vs ${wanted})`);
  expect(saved["reduction/3"].hide_leaderboard === true, "reduction/3's leaderboard is hidden until due");
}

// 3. A learner joins and runs late.
async function learnerRunsLate(page, url, made) {
  await page.goto(url);
  await joinClass(page, { name: "Carol Chen", invite: made.invite });
  // A student id is the roster's, or the instructor's to give, never the joiner's: the instructor
  // gives Carol hers, as the roster's edit does.
  const carolId = await page.evaluate(() => fetch("/api/me", {
    headers: { Authorization: `Bearer ${localStorage.getItem("cudojo.token")}` } }).then((r) => r.json()).then((me) => me.id));
  const patched = await fetch(new URL(`/api/classes/${made.classId}/learners/${carolId}`, url), { method: "PATCH",
    headers: { Authorization: `Bearer ${made.token}`, "Content-Type": "application/json" }, body: JSON.stringify({ student_id: "s3" }) });
  expect(patched.status === 200, `the instructor gives the joined learner a student id (${patched.status})`);
  expect((await page.textContent("#who-class")).includes("GPU 101"), "the class's name is beside the learner's");
  await page.click("#token-done");
  await page.waitForFunction(() => (document.querySelector("nav button[data-stage='reduction/2'] .due-mark") || {}).textContent?.startsWith("past due"));
  expect((await page.textContent("nav button[data-stage='reduction/3'] .due-mark")).startsWith("due "), "reduction/3 says when it is due");
  await page.click("nav button[data-stage='reduction/3']");
  await page.click(".tabs button[data-tab='leaderboard']");
  await page.waitForSelector("#tab-leaderboard :text('hidden until')");
  await page.click("nav button[data-stage='reduction/2']");
  await page.waitForSelector("#due:has-text('Past due')");
  const first = await runCompileError(page, "\nint first_try = missing_name;");
  await page.waitForSelector("#tab-result .late-note:has-text('late')");
  await shot(page, "learner-late-result-desktop");
  await page.click(".tabs button[data-tab='history']");
  await page.waitForSelector(`#tab-history tr[data-job='${first}'] .late-mark`);
  return first;
}


fs.mkdirSync(outDir, { recursive: true });
const dataDir = serve.freshDataDir();
const admin = serve.cudojoJson(binary, dataDir, ["admin", "create", "Root Admin"]);
expect(admin.admin === true && /^[0-9a-f]{64}$/.test(admin.token), "`cudojo admin create --json` prints an administrator's token");
serve.runBrowserTest(binary, webDir, async ({ url, browser }) => {
  const errors = [];
  const root = await person(browser, errors, "administrator");
  const made = await adminMakesClass(root.page, url, admin);
  console.log(`1. the administrator made class ${made.classId} (invite ${made.invite}); the instructor's token was shown once`);
  const ada = await person(browser, errors, "instructor");
  await instructorSetsUp(ada.page, url, made);
  console.log("2. roster imported (a bad line refused with its line number, then a file), a row edited, removed, restored; deadlines set in the browser's zone");
  const carol = await person(browser, errors, "learner");
  const first = await learnerRunsLate(carol.page, url, made);
  console.log("3. a learner joined with the invite code; past due and due marks; a late run; a hidden leaderboard says until when");
  await gridShowsLate(ada.page);
  const jobs = { first, second: await runCompileError(carol.page, "\nint second_try = other_missing_name;") };
  expect(await carol.page.locator("#tab-history .late-mark").count() === 2, "both runs are marked late in the history");
  await runsAndDiff(ada.page, jobs);
  console.log("4. grid: a late run, missing, filters in the URL, sort, sticky column; CSV and JSON exports say late_jobs 1; runs, report, source, diff");
  await resetSignsOut(ada.page, carol.page);
  console.log("5. a reset token signed the learner's page out when the tab was shown again, and on Run");
  const shared = await person(browser, errors, "shared browser");
  await draftsStayPrivate(ada.page, shared.page, url);
  console.log("6. tokens issued as CSV; A's draft never shown to B at the same browser; back for A from the server; kept locally while the server is away");
  const tim = await person(browser, errors, "teaching assistant");
  await taReadsOnly(ada.page, tim.page, url);
  console.log("7. a teaching assistant reads the class with no button that changes it");
  await staffViewsFit(ada.page, made.classId, jobs, shot, webDir);
  console.log(`8. axe finds nothing serious in the staff views (1400x900 light and dark, 420 px); nothing wider than 420 px; screenshots in ${outDir}`);
  expect(errors.length === 0, `no script errors on any page (got ${errors.join("; ")})`);
  console.log("class test passed");
}, { dataDir });
