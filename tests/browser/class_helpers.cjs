// What the class test's steps do on a page more than once: sign in with a token, join a class,
// type at the end of the editor and run it, catch a file the page saves (its Blob, through the download
// event), read a CSV, and tell the page its tab is shown again.
"use strict";
const fs = require("node:fs");

// The header's "Sign in with a token". A member of staff's page reloads into the staff view.
async function signInWithToken(page, token, { staff = false } = {}) {
  await page.getByLabel("Sign in with a token").fill(token);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await page.waitForSelector(staff ? "#staff-bar:not([hidden])" : "#signed-in:not([hidden])");
}

// On the class's Staff tab (open already): adds `name` as a teaching assistant; their token, shown once.
async function addAssistant(staff, name) {
  await staff.getByLabel("Name", { exact: true }).fill(name);
  await staff.getByLabel("Role").selectOption("ta");
  await staff.getByRole("button", { name: "Add", exact: true }).click();
  const secret = staff.locator(`.secret:has-text('${name}')`);
  await secret.waitFor();
  return secret.locator("input").inputValue();
}

// "Join your class": a name and the invite code; the token is shown once.
async function joinClass(page, { name, invite }) {
  await page.getByLabel("Display name").fill(name);
  await page.getByLabel("Invite code").fill(invite);
  await page.click("#signin-button");
  await page.waitForSelector(`#who:has-text('signed in as ${name}')`);
  await page.waitForSelector("#token-reveal:not([hidden])");
}

// Types `text` at the end of the editor's text, as a learner would.
async function typeAtEnd(page, text) {
  await page.evaluate(() => {
    const editor = window.cudojoEditor;
    editor.focus();
    editor.setCursor({ line: editor.lastLine(), ch: editor.getLine(editor.lastLine()).length });
  });
  await page.keyboard.type(text);
}

// Types `text` at the end of the editor and runs it; resolves to the job's id once its compile
// error is shown (no GPU is needed to judge one).
async function runCompileError(page, text) {
  await typeAtEnd(page, text);
  const posted = page.waitForResponse((r) => r.url().endsWith("/api/jobs") && r.request().method() === "POST");
  await page.click("#run");
  const job = await (await posted).json();
  // The status line says "submitting", "queued" or "running" from the click until the verdict.
  await page.waitForFunction(() => /^done/.test(document.querySelector("#status").textContent), null, { timeout: 60000 });
  await page.waitForSelector("#tab-result .verdict[data-verdict='compile_error']");
  return job.id;
}

// The text of the file the page saves when `act` runs (a Blob behind an <a download>).
async function downloaded(page, act) {
  const [download] = await Promise.all([page.waitForEvent("download"), act()]);
  return fs.readFileSync(await download.path(), "utf8");
}

// A CSV without quoted fields (what the exports hold here) as objects keyed by the header.
function csvRows(text) {
  const [header, ...lines] = text.trim().split(/\r?\n/).map((line) => line.split(","));
  return lines.map((fields) => Object.fromEntries(header.map((name, i) => [name, fields[i] ?? ""])));
}

// The tab is shown again: headless chromium's tab is always visible, so the event alone is sent.
const visibleAgain = (page) => page.evaluate(() => document.dispatchEvent(new Event("visibilitychange")));

// Every string of the page's storage and its DOM, to look for text that must not be there.
const everything = (page) => page.evaluate(() => JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }) +
  document.documentElement.outerHTML + window.cudojoEditor.getValue());

module.exports = { signInWithToken, addAssistant, joinClass, typeAtEnd, runCompileError, downloaded, csvRows, visibleAgain, everything };
