// The class test's look at the staff views (class_test.cjs runs it): the progress grid, its
// filters and exports, then a learner's runs and one run against the one before (4); a teaching assistant's read-only view (7);
// axe-core and narrow screens over the views with screenshots (8).
"use strict";
const { expect, overflowing, checkAxe } = require("./checks.cjs");
const { addAssistant, downloaded, csvRows, signInWithToken } = require("./class_helpers.cjs");

// 4. The grid and its exports, after the learner's one late run.
async function gridShowsLate(page) {
  await page.click(".class-tabs a:text-is('Progress')");
  const cell = page.locator("tr[data-learner]:has-text('Carol Chen') td[data-stage='reduction/2']");
  await cell.waitFor();
  expect(await cell.getAttribute("data-late-jobs") === "1" && (await cell.textContent()).includes("1 late run"),
         `Carol's reduction/2 cell says 1 late run (${await cell.textContent()})`);
  const alice = page.locator("tr[data-learner]:has-text('Alice Ang') td[data-stage='reduction/2']");
  expect((await alice.textContent()).includes("missing"), "Alice's reduction/2, past due and not tried, is missing");
  expect((await page.locator("tr[data-learner]:has-text('Alice Ang') th").textContent()).includes("not signed in"), "Alice has not signed in");
  const sticky = await page.locator("table.grid tbody th").first().evaluate((node) => getComputedStyle(node).position);
  expect(sticky === "sticky", `the learner column stays in view (${sticky})`);

  await page.getByLabel("Status").selectOption("late");
  await page.waitForFunction(() => document.querySelectorAll("table.grid tbody tr").length === 1);
  expect(decodeURIComponent(await page.evaluate(() => location.hash)).includes("status=late"), "the filter is in the URL");
  await page.getByLabel("Status").selectOption("");
  await page.getByLabel("Sort by").selectOption("student");
  await page.getByRole("searchbox", { name: "Find a learner" }).fill("s");
  await page.waitForFunction(() => [...document.querySelectorAll("table.grid tbody tr")].map((r) => r.querySelector("td.mono").textContent).join() === "s1,s2,s3");
  await page.getByRole("searchbox", { name: "Find a learner" }).fill("");
  await page.waitForFunction(() => document.querySelectorAll("table.grid tbody tr").length === 3);

  const csv = csvRows(await downloaded(page, () => page.getByRole("button", { name: "Export CSV" }).click()));
  const carol = csv.find((row) => row.student_id === "s3");
  expect(carol && carol["reduction/2 late_jobs"] === "1", `the exported CSV says late_jobs 1 for Carol's reduction/2 (${JSON.stringify(carol)})`);
  const json = JSON.parse(await downloaded(page, () => page.getByRole("button", { name: "Export JSON" }).click()));
  const inJson = json.learners.find((learner) => learner.student_id === "s3");
  expect(inJson.cells["reduction/2"].late_jobs === 1, "the exported JSON says so too");
}

// 4, after the learner's second run: their runs, and the second against the first.
async function runsAndDiff(page, jobs) {
  await page.click("#staff button:text-is('Refresh')");
  await page.waitForSelector("tr[data-learner]:has-text('Carol Chen') td[data-stage='reduction/2'][data-late-jobs='2']");
  await page.click("table.grid a:text-is('Carol Chen')");
  await page.waitForSelector(`#staff tr[data-job='${jobs.second}'] .late-mark`);
  expect(await page.locator("#staff tr[data-job] .late-mark").count() === 2, "the learner's runs are marked late");
  await page.click(`#staff tr[data-job='${jobs.second}'] a`);
  await page.waitForSelector("#staff .report .verdict[data-verdict='compile_error']");
  await page.waitForSelector("#staff .diff .diff-ins:has-text('second_try')");
  expect(await page.locator("#staff .diff .diff-same:has-text('first_try')").count() === 1
         && await page.locator("#staff .diff .diff-del").count() === 0, "the run before's lines are kept as they were, nothing removed");
  expect(await page.locator("#staff .late-mark").count() >= 1, "the run is marked late");
  const link = page.locator("#staff .report .line-link").first();
  const line = await link.getAttribute("data-line");
  await link.click();
  expect(await page.locator(`#staff .source-line.lit[data-line='${line}']`).count() === 1, "a report's line link leads to the source line");
}

// 7. A teaching assistant, added by the instructor, reads the class and changes nothing.
async function taReadsOnly(staff, ta, url) {
  await staff.click(".class-tabs a:text-is('Staff')");
  const token = await addAssistant(staff, "Tim Tan");
  await staff.waitForSelector("#staff tr:has(th:text-is('Tim Tan')):has-text('teaching assistant')");
  await ta.goto(url);
  await signInWithToken(ta, token, { staff: true });
  await ta.click("#staff a:text-is('GPU 101')");
  await ta.waitForSelector("table.grid tbody tr");
  expect((await ta.textContent("#staff h2")).includes("teaching assistant"), "the TA's role is named");
  await ta.click(".class-tabs a:text-is('Roster')");
  await ta.waitForSelector("tr[data-learner]");
  expect(await ta.locator("#staff button:text-is('Reset token'), #staff button:text-is('Import'), #staff button:text-is('Edit')").count() === 0,
         "the TA's roster has no import, edit or reset");
  await ta.click(".class-tabs a:text-is('Deadlines')");
  await ta.waitForSelector("tr[data-stage='reduction/2']");
  expect(await ta.locator("#staff input, #staff button").count() === 0, "the TA's deadlines are text, with no control");
  await ta.click(".class-tabs a:text-is('Settings')");
  await ta.waitForSelector("#staff h3:has-text('Settings')");
  expect(await ta.locator("#staff button:text-is('Rename'), #staff button:text-is('New code')").count() === 0, "the TA cannot rename or renew the code");
}

// 8. Every staff view: axe at 1400x900 (light and dark); at 420 px nothing wider than the screen
// outside a scrolling box, axe again, and screenshots of the grid, a learner, a run and the roster.
async function staffViewsFit(page, classId, jobs, shot, webDir) {
  const views = [["grid", `#class/${classId}/grid`], ["learner", null], ["job", `#class/${classId}/job/${jobs.second}`],
                 ["roster", `#class/${classId}/roster`], ["deadlines", `#class/${classId}/deadlines`],
                 ["staff", `#class/${classId}/staff`], ["audit", `#class/${classId}/audit`],
                 ["settings", `#class/${classId}/settings`], ["classes", "#classes"]];
  const learnerHref = await page.evaluate((id) => fetch(`/api/classes/${id}/grid`, {
    headers: { Authorization: `Bearer ${localStorage.getItem("cudojo.token")}` } }).then((r) => r.json())
    .then((grid) => `#class/${id}/learner/${grid.learners.find((l) => l.student_id === "s3").id}`), classId);
  views[1][1] = learnerHref;
  const open = async (hash) => {
    await page.evaluate((h) => { location.hash = h; }, hash);
    await page.waitForFunction(() => !/Loading\.\.\.|Looking for/.test(document.querySelector("#staff").textContent)
                                      && document.querySelector("#staff table, #staff h3"), null, { timeout: 10000 })
      .catch(async (error) => { throw new Error(`${hash} did not show: ${(await page.textContent("#staff")).slice(0, 300)} (${error.message})`); });
    await page.waitForTimeout(100);
  };
  const pictured = ["grid", "learner", "job", "roster"];
  for (const [name, hash] of views) {
    await open(hash);
    await checkAxe(page, `${name} at 1400x900`, webDir);
    if (pictured.includes(name)) await shot(page, `${name}-desktop`);
  }
  await page.emulateMedia({ colorScheme: "dark" });
  for (const [name, hash] of views.slice(0, 4)) {
    await open(hash);
    await checkAxe(page, `${name} at 1400x900, dark`, webDir);
  }
  await open(views[0][1]);
  await shot(page, "grid-desktop-dark");
  await page.emulateMedia({ colorScheme: "light" });
  await page.setViewportSize({ width: 420, height: 900 });
  for (const [name, hash] of views) {
    await open(hash);
    const { bad, scrollWidth } = await overflowing(page);
    expect(bad.length === 0 && scrollWidth <= 420, `${name} at 420 px: nothing wider than the screen (scrollWidth ${scrollWidth}; ${bad.slice(0, 5).join("; ")})`);
    await checkAxe(page, `${name} at 420 px`, webDir);
    if (pictured.includes(name)) await shot(page, `${name}-phone`);
  }
  await page.setViewportSize({ width: 1400, height: 900 });
}

module.exports = { gridShowsLate, runsAndDiff, taReadsOnly, staffViewsFit };
