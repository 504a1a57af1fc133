// Issue #26, "a link to one job (read-only, made by its owner, revocable) to show a teaching
// assistant or a friend", against a real server (no GPU: a kernel that does not compile is judged
// compile_error, a finished job).
//   node share_test.cjs CUDOJO_BINARY WEB_DIR OUT_DIR
// 1. A learner runs a kernel; under its verdict on the Result tab, "Share this run" makes a link,
//    shown once in a read-only field with Copy and "Stop sharing".
// 2. A browser that is signed out opens the link: the stage, the verdict in words, the report with
//    its line links into the read-only source, and no editor, no Run, nothing of the learner.
// 3. After a reload the learner's page says the run is shared (the link cannot be shown again), with
//    "New link", which stops the old link, and "Stop sharing", after which the link says it no
//    longer shows a run.
// The learner joined a class made with `cudojo class create` before the server started; its staff
// then (share_staff.cjs):
// 4. the instructor sees the learner's new link in the Links tab (learner, stage, verdict) and stops
//    it there after a confirm: the link opens nothing, the learner's controls say staff stopped it;
// 5. the staff job view says since when a run is shared; "Stop the link" there (Cancel first) says
//    who stopped it and when;
// 6. the instructor turns links off in Settings (Cancel first, then confirmed): the live link stops,
//    the learner's open page shows the server's refusal of a new one, after a reload says links are
//    off with nothing to press, the Links tab says so too; then links are turned on again;
// 7. a teaching assistant sees the Links tab and the job's link line with no Stop, and the switch
//    disabled.
// Each state at 1400x900 and 420 px, light and dark, with axe; screenshots in OUT_DIR (PNG for each
// state, JPEG of the shared run and the controls for docs/screenshots/).
"use strict";
const fs = require("node:fs");
const path = require("node:path");
const serve = require("./serve.cjs");
const { expect } = require("./checks.cjs");
const steps = require("./learner_steps.cjs");
const { openStage } = steps;
const { joinClass } = require("./class_helpers.cjs");
const staffSteps = require("./share_staff.cjs");

const [binary, webDir, outDir] = process.argv.slice(2).map((arg) => path.resolve(arg));
fs.mkdirSync(outDir, { recursive: true });

const LEARNER = "Zephyrine Quill";

// The page's look in this state at both widths and both schemes (learner_steps.cjs): nothing wider
// than a phone, axe; `options.focus` brought into view first, `options.jpeg` kept for the docs.
const checkLook = (page, label, options = {}) => steps.checkLook(page, label, { outDir, webDir, ...options });

// A page of its own (a context of its own: no token, no storage shared with the learner's).
async function freshPage(browser) {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 }, bypassCSP: true });
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (error) => errors.push(error));
  return { context, page, errors };
}

// 2. What a link shows to someone signed out.
async function checkSharedRun(browser, link, source) {
  const { context, page, errors } = await freshPage(browser);
  const authorized = [];
  page.on("request", (request) => { if (request.headers().authorization) authorized.push(request.url()); });
  try {
    await page.goto(link);
    await page.waitForSelector("#shared-job .shared-title", { timeout: 15000 });
    const title = await page.textContent("#shared-job .shared-title");
    expect(/Shared run: reduction\/2/.test(title), `the shared run names its stage (${title})`);
    expect(await page.textContent("#shared-job .job-facts .verdict") === "Compile error", "the verdict in words");
    expect(await page.getAttribute("#shared-job .report .verdict", "data-verdict") === "compile_error", "the report drawn as the learner saw it");
    expect(await page.locator("#shared-job .report .diagnostics li").count() >= 1, "the compiler's diagnostics are in it");
    const shown = await page.evaluate(() => [...document.querySelectorAll("#shared-job pre.source .source-line")].map((line) => line.textContent).join("\n"));
    expect(shown === source.replace(/\n$/, ""), "the source, read-only, line by line");
    expect(await page.isHidden("#workbench") && await page.isHidden("#run"), "no editor and no Run");
    expect(await page.locator("#shared-job textarea, #shared-job .CodeMirror, #shared-job [contenteditable='true']").count() === 0, "nothing in it can be edited");
    const text = await page.textContent("body");
    expect(!text.includes(LEARNER) && !text.includes("Zephyrine"), "nothing says who sent it");
    expect(authorized.length === 0, `no request carries a token (${authorized.join(" ")})`);
    expect((await page.title()).includes("Shared run: reduction/2"), `the tab's title says what it is (${await page.title()})`);
    // A line link leads into the read-only source.
    await page.click("#shared-job .report .line-link");
    expect(await page.locator("#shared-job .source-line.lit").count() === 1, "a line link lights its line in the source");
    expect(await page.evaluate(() => document.activeElement.matches("#shared-job pre.source")), "... and the source takes the focus");
    await page.evaluate(() => window.scrollTo(0, 0));
    await checkLook(page, "shared-run", { jpeg: "share-run-shared" });
    // From the shared run to the stage, as a link.
    await page.click("#shared-job a[href='#reduction/2']");
    await page.waitForFunction(() => !document.querySelector("#workbench").hidden && document.querySelector("#shared-job").hidden);
    await page.goBack();
    await page.waitForSelector("#shared-job:not([hidden]) .shared-title");
    expect(await page.isHidden("#workbench"), "Back: the shared run again, without the editor");
    expect(errors.length === 0, `no script errors on the shared run (${errors.map((e) => e.message).join("; ")})`);
    console.log("shared run: stage, verdict in words, report, source read-only, nothing of the learner, signed out");
  } finally {
    await context.close();
  }
}

// A link that opens nothing says so, to anyone.
async function expectClosed(browser, link, label) {
  const { context, page } = await freshPage(browser);
  try {
    await page.goto(link);
    await page.waitForSelector("#shared-job .shared-title", { timeout: 15000 });
    const title = await page.textContent("#shared-job .shared-title");
    expect(title === "This link no longer shows a run", `${label}: the link says it shows nothing now (${title})`);
    expect(await page.locator("#shared-job pre.source").count() === 0, `${label}: no source`);
    return page;
  } catch (error) {
    await context.close();
    throw error;
  }
}

const dataDir = serve.freshDataDir();
const made = serve.cudojoJson(binary, dataDir, ["class", "create", "GPU 201", "--instructor", "Prof Ada"]);

serve.runBrowserTest(binary, webDir, async ({ url, browser }) => {
  // 1. The learner's run and its link.
  const { context, page, errors } = await freshPage(browser);
  await page.goto(url);
  await joinClass(page, { name: LEARNER, invite: made.invite_code });
  await page.click("#token-done");
  await openStage(page, "reduction/2");
  await page.evaluate(() => window.cudojoEditor.setValue(window.cudojoEditor.getValue() + "\nthis line does not compile\n"));
  const source = await page.evaluate(() => window.cudojoEditor.getValue());
  await page.click("#run");
  await page.waitForSelector("#tab-result .verdict[data-verdict='compile_error']", { timeout: 60000 });
  await page.waitForSelector("#tab-result .share button.share-make", { timeout: 15000 });
  const heading = await page.textContent("#tab-result .share h3");
  expect(heading === "Share this run", `the Result tab offers "Share this run" (${heading})`);
  await checkLook(page, "share-offered", { focus: "#tab-result .share" });
  await page.click("#tab-result .share button.share-make");
  await page.waitForSelector("#tab-result .share input.share-link");
  const link = await page.inputValue("#tab-result .share input.share-link");
  expect(new RegExp(`^${url.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}#shared/[0-9a-f]{64}$`).test(link), `the link is this server's, with its token (${link})`);
  expect(await page.getAttribute("#tab-result .share input.share-link", "readonly") !== null, "the link is read-only");
  expect(await page.evaluate(() => document.activeElement.matches("#tab-result .share input.share-link")), "the link takes the focus, selected to copy");
  const label = await page.evaluate(() => { const input = document.querySelector("#tab-result .share input.share-link"); return input.labels[0] && input.labels[0].textContent; });
  expect(label === "Link to this run", `the link's field is labelled (${label})`);
  expect(await page.locator("#tab-result .share button:has-text('Copy')").count() === 1, "Copy beside it");
  expect(await page.locator("#tab-result .share button.share-stop").count() === 1, "... and Stop sharing");
  expect(/shown only this once/.test(await page.textContent("#tab-result .share")), "the page says the link is shown once");
  await checkLook(page, "share-link-made", { focus: "#tab-result .share", jpeg: "share-run-controls" });

  // 2. Someone signed out opens it.
  await checkSharedRun(browser, link, source);

  // 3. After a reload: shared, the link not shown again; a new link stops the old one.
  await page.reload();
  await page.waitForSelector("#tab-result .share button.share-new", { timeout: 15000 });
  const said = await page.textContent("#tab-result .share");
  expect(/This run is shared \(since .+\)/.test(said) && /cannot be shown again/.test(said), `after a reload the run is said to be shared (${said})`);
  expect(await page.locator("#tab-result .share input.share-link").count() === 0 && !said.includes(link.slice(-64)), "... and its link is not shown");
  await checkLook(page, "share-after-reload", { focus: "#tab-result .share" });
  await page.click("#tab-result .share button.share-new");
  await page.waitForSelector("#tab-result .share input.share-link");
  const newer = await page.inputValue("#tab-result .share input.share-link");
  expect(newer !== link, "New link makes another link");
  const replaced = await expectClosed(browser, link, "the link New link replaced");
  await replaced.context().close();

  // Stop sharing: the link then says it shows nothing.
  await page.click("#tab-result .share button.share-stop");
  await page.waitForSelector("#tab-result .share button.share-make");
  expect(/Not shared any more/.test(await page.textContent("#tab-result .share .message")), "the page says the run is not shared any more");
  expect(await page.evaluate(() => document.activeElement.matches("#tab-result .share button.share-make")), "the focus stays in the controls");
  const stopped = await expectClosed(browser, newer, "a stopped link");
  try {
    await checkLook(stopped, "share-stopped-link", { focus: "#shared-job .shared-title" });
  } finally {
    await stopped.context().close();
  }
  console.log("1-3. a link made, shown once, opened signed out; New link and Stop sharing close the old ones");

  // 4-7. The class's staff.
  const staff = await freshPage(browser);
  const assistant = await freshPage(browser);
  const shared = { learner: page, staff: staff.page, url, made, learnerName: LEARNER, checkLook,
                   expectClosed: (link, label) => expectClosed(browser, link, label) };
  const jobId = await staffSteps.instructorStopsFromLinks(shared);
  console.log("4. the Links tab lists the live link; Stop (confirmed) closes it; the learner is told staff stopped it");
  await staffSteps.instructorStopsFromJob({ ...shared, jobId });
  console.log("5. the job view says since when it is shared; Stop the link there says who stopped it");
  await staffSteps.instructorTurnsLinksOff(shared);
  console.log("6. links turned off in Settings (confirmed): links closed, the learner refused and told; on again");
  await staffSteps.assistantReadsLinks({ ...shared, assistant: assistant.page, jobId });
  console.log("7. a teaching assistant reads the Links tab and the job's link with no Stop; the switch disabled");
  for (const [who, seen] of [["learner", errors], ["instructor", staff.errors], ["teaching assistant", assistant.errors]]) {
    expect(seen.length === 0, `no script errors on the ${who}'s page (${seen.map((e) => e.message).join("; ")})`);
  }
  await Promise.all([context.close(), staff.context.close(), assistant.context.close()]);
  console.log("share test passed");
}, { workers: 1, dataDir });
