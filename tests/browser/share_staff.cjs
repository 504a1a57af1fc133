// The share test's steps where a class's staff watch over the links its learners make to their runs
// (share_test.cjs runs them after the learner's own steps): the Links tab and its Stop, the link's
// line on the staff job view, the class's switch in Settings, and what the learner's share controls
// say after each; a teaching assistant reads the Links tab with no Stop.
"use strict";
const { expect } = require("./checks.cjs");
const { addAssistant, signInWithToken } = require("./class_helpers.cjs");

// The page's one confirm dialog (dialog.js) is open and says `pattern`; `answer` "ok" or "cancel".
async function answerConfirm(page, pattern, answer = "ok") {
  await page.waitForSelector("#confirm-dialog[open]");
  const text = await page.textContent("#confirm-text");
  expect(pattern.test(text), `the confirm dialog says what happens (${text})`);
  await page.click(answer === "ok" ? "#confirm-ok" : "#confirm-cancel");
  await page.waitForSelector("#confirm-dialog:not([open])", { state: "attached" });
}

// Opens a staff view by its hash and waits until it has drawn (`ready`: a selector in it).
async function openView(page, hash, ready) {
  await page.evaluate((h) => { location.hash = h; }, hash);
  await page.waitForSelector(ready, { timeout: 15000 });
}

// The learner's page after a reload: the share controls under the run, drawn.
async function learnerControls(page) {
  await page.reload();
  await page.waitForSelector("#tab-result .share .share-body :is(button, p.share-closed)", { timeout: 15000 });
  return page.textContent("#tab-result .share");
}

// The learner makes a link: resolves to it.
async function makeLink(page) {
  await page.click("#tab-result .share button.share-make");
  await page.waitForSelector("#tab-result .share input.share-link");
  return page.inputValue("#tab-result .share input.share-link");
}

// 4. An instructor sees the learner's live link in the Links tab and stops it there; the link then
// opens nothing and the learner's controls say staff stopped it.
async function instructorStopsFromLinks({ staff, learner, url, made, learnerName, expectClosed, checkLook }) {
  const link = await makeLink(learner);
  await staff.goto(url);
  await signInWithToken(staff, made.instructor.token, { staff: true });
  await staff.click(`#staff a:text-is('${made.name}')`);
  await staff.click(".class-tabs a:text-is('Links')");
  await staff.waitForSelector("#staff .staff-content tr[data-job]");
  expect(await staff.getAttribute(".class-tabs a:text-is('Links')", "aria-current") === "page", "the Links tab is marked as the one shown");
  const row = staff.locator("#staff tr[data-job]");
  expect(await row.count() === 1, "one live link is listed");
  const jobId = Number(await row.getAttribute("data-job"));
  expect((await row.locator("th a").textContent()) === learnerName, "the row names the learner");
  expect((await row.locator("th a").getAttribute("href")) === `#class/${made.id}/job/${jobId}`, "... who leads to the staff view of the run");
  expect((await row.textContent()).includes("reduction/2"), "the row names the stage");
  expect(await row.locator(".verdict").getAttribute("data-verdict") === "compile_error", "... and its verdict as a badge");
  await checkLook(staff, "staff-links", { focus: "#staff .staff-content" });
  await row.getByRole("button", { name: `Stop ${learnerName}'s link to job #${jobId}` }).click();
  await answerConfirm(staff, /stops opening the run for good/);
  await staff.waitForSelector("#staff .staff-content p.message:has-text('No live links')");
  expect(/Stopped .+ link to job #\d+: it opens nothing now/.test(await staff.textContent("#staff [role=status]")), "the status line says the link was stopped");
  expect(await staff.evaluate(() => document.activeElement.matches("#staff h3")), "the focus goes to the heading once the row is gone");
  const closed = await expectClosed(link, "a link staff stopped from the Links tab");
  await closed.context().close();
  const said = await learnerControls(learner);
  expect(said.includes("A member of your class's staff stopped your link"), `the learner's controls say staff stopped the link (${said})`);
  expect(await learner.locator("#tab-result .share button.share-make").count() === 1, "... and offer a new one");
  await checkLook(learner, "share-stopped-by-staff", { focus: "#tab-result .share" });
  return jobId;
}

// 5. The job view says the run is shared, and an instructor stops the link there too.
async function instructorStopsFromJob({ staff, learner, made, jobId, expectClosed }) {
  const link = await makeLink(learner);
  await openView(staff, `#class/${made.id}/job/${jobId}`, "#staff .link-state .link-words");
  const line = staff.locator("#staff .link-state .link-words");
  expect(/^Shared by link since .+\./.test(await line.textContent()), `the job view says since when it is shared (${await line.textContent()})`);
  await staff.click("#staff .link-state button:text-is('Stop the link')");
  await answerConfirm(staff, /stops opening this run for good/, "cancel");
  expect(await staff.locator("#staff .link-state button:text-is('Stop the link')").count() === 1, "Cancel leaves the link as it was");
  await staff.click("#staff .link-state button:text-is('Stop the link')");
  await answerConfirm(staff, /stops opening this run for good/);
  await staff.waitForSelector(`#staff .link-state .link-words:has-text('Link stopped by ${made.instructor.name} on')`);
  expect(await staff.locator("#staff .link-state button").count() === 0, "a stopped link has no Stop button");
  const closed = await expectClosed(link, "a link staff stopped from the job view");
  await closed.context().close();
}

// 6. The instructor turns links off in Settings (after a confirm): every live link stops, the
// learner's open page is refused a new one with the server's words, and after a reload is told
// links are off, with nothing to press; the Links tab says so. Then on again.
async function instructorTurnsLinksOff({ staff, learner, made, expectClosed, checkLook }) {
  await learnerControls(learner);
  const link = await makeLink(learner);
  await learner.click("#tab-result .share button.share-stop");  // a link the learner stops stays stopped
  await learner.waitForSelector("#tab-result .share button.share-make");
  const live = await makeLink(learner);
  await learnerControls(learner);  // the learner's page offers "New link" while the switch goes off
  await openView(staff, `#class/${made.id}/settings`, "#staff label:has-text('Learners may share a run by link')");
  const box = staff.getByLabel("Learners may share a run by link");
  expect(await box.isChecked() && await box.isEnabled(), "links are on, and the instructor may change that");
  await box.uncheck();
  await answerConfirm(staff, /every live link .+ stops for good.+cannot make new ones until/i, "cancel");
  // The dialog's close event (which answers) comes a task after it closes.
  const left = await staff.waitForFunction(() => [...document.querySelectorAll("#staff input[type=checkbox]")]
    .some((input) => input.closest("label").textContent.includes("share a run by link") && input.checked), null, { timeout: 5000 }).catch(() => null);
  expect(left !== null, "Cancel leaves links on");
  await box.click();
  await answerConfirm(staff, /every live link .+ stops for good/i);
  await staff.waitForSelector("#staff [role=status]:has-text('Links to runs are off')");
  expect(!(await box.isChecked()), "the box is unchecked");
  for (const [each, label] of [[live, "a live link when links were turned off"], [link, "a link the learner stopped"]]) {
    const closed = await expectClosed(each, label);
    await closed.context().close();
  }
  await learner.click("#tab-result .share button.share-new");
  await learner.waitForSelector("#tab-result .share .message.bad");
  const refused = await learner.textContent("#tab-result .share .message.bad");
  expect(/^Not done: .*instructors.*turned links to runs off/.test(refused), `the open page shows the server's refusal (${refused})`);
  const said = await learnerControls(learner);
  expect(said.includes("Your class's instructors have turned links to runs off"), `after a reload the controls say links are off (${said})`);
  expect(await learner.locator("#tab-result .share button").count() === 0, "... and offer nothing to press");
  await checkLook(learner, "share-links-off", { focus: "#tab-result .share" });
  await openView(staff, `#class/${made.id}/links`, "#staff .links-off");
  expect(await staff.locator("#staff tr[data-job]").count() === 0, "the Links tab lists nothing, and says links are off");
  await openView(staff, `#class/${made.id}/settings`, "#staff label:has-text('Learners may share a run by link')");
  await staff.getByLabel("Learners may share a run by link").check();
  await staff.waitForSelector("#staff [role=status]:has-text('Learners may share a run by link again')");
  const again = await learnerControls(learner);
  expect(!again.includes("turned links to runs off") && await learner.locator("#tab-result .share button.share-make").count() === 1,
         "links on again: the learner may make a new one");
  return makeLink(learner);
}

// 7. A teaching assistant, added by the instructor, reads the Links tab and the job's link line
// with nothing that stops a link, and the Settings switch disabled.
async function assistantReadsLinks({ staff, assistant, url, made, jobId, checkLook }) {
  await openView(staff, `#class/${made.id}/staff`, "#staff form[aria-label='Add to the staff']");
  const token = await addAssistant(staff, "Tim Tan");
  await assistant.goto(url);
  await signInWithToken(assistant, token, { staff: true });
  await openView(assistant, `#class/${made.id}/links`, "#staff tr[data-job]");
  expect(await assistant.locator("#staff tr[data-job]").count() === 1, "the teaching assistant sees the live link");
  expect(await assistant.locator("#staff .staff-content button").count() === 0, "... with no Stop button");
  await checkLook(assistant, "staff-links-assistant", { focus: "#staff .staff-content" });
  await openView(assistant, `#class/${made.id}/job/${jobId}`, "#staff .link-state .link-words");
  expect(/^Shared by link since/.test(await assistant.textContent("#staff .link-state .link-words")), "the job view says it is shared");
  expect(await assistant.locator("#staff .link-state button").count() === 0, "... with no Stop the link");
  await openView(assistant, `#class/${made.id}/settings`, "#staff label:has-text('Learners may share a run by link')");
  expect(await assistant.getByLabel("Learners may share a run by link").isDisabled(), "the switch is shown, disabled");
}

module.exports = { instructorStopsFromLinks, instructorStopsFromJob, instructorTurnsLinksOff, assistantReadsLinks };
