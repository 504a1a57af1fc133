// The class test's accounts (class_test.cjs runs it): a token reset by the instructor signs the
// learner's open page out (5); tokens issued as a CSV, and one learner's drafts never shown to the
// next at the same browser, but back from the server when they return, and kept in the browser
// while the server is out of reach (6).
"use strict";
const { expect } = require("./checks.cjs");
const { csvRows, downloaded, everything, signInWithToken, typeAtEnd, visibleAgain } = require("./class_helpers.cjs");

// 5. A reset token signs the learner's open page out: when the tab is shown again, and on the
// next action.
async function resetSignsOut(staff, learner) {
  const reset = async () => {
    await staff.click(".class-tabs a:text-is('Roster')");
    await staff.getByRole("button", { name: "Reset token of Carol Chen" }).click();
    await staff.click("#confirm-ok");
    const box = staff.locator(".secret:has-text('Carol Chen')");
    await box.waitFor();
    return box.locator("input").inputValue();
  };
  const fresh = await reset();
  await visibleAgain(learner);
  await learner.waitForSelector("#account-message:has-text('no longer valid')");
  expect(await learner.evaluate(() => localStorage.getItem("cudojo.token")) === null, "the refused token is forgotten");
  expect(await learner.isVisible("#signin-button"), "the page shows it is signed out");
  await signInWithToken(learner, fresh);
  await learner.waitForSelector("#who:has-text('Carol Chen')");
  await reset();
  const refused = learner.waitForResponse((r) => r.url().endsWith("/api/jobs") && r.status() === 401);
  await learner.click("#run");
  await refused;
  await learner.waitForSelector("#account-message:has-text('no longer valid')");
  expect(await learner.isVisible("#signin-button"), "Run with a reset token signs out");
}

// The learner's own drafts on the server, asked from here with their token.
async function serverDrafts(url, token, stage) {
  const response = await fetch(new URL(`/api/drafts?stage=${encodeURIComponent(stage)}`, url), { headers: { Authorization: `Bearer ${token}` } });
  return (await response.json()).drafts;
}

async function whoIs(url, token) {
  return (await fetch(new URL("/api/me", url), { headers: { Authorization: `Bearer ${token}` } })).json();
}

async function editorHolds(page, language, check, label) {
  await page.selectOption("#language", language);
  await page.waitForSelector(`#workbench[data-language='${language}']`);
  const text = await page.evaluate(() => window.cudojoEditor.getValue());
  expect(check(text), `${label} (${language}: ${JSON.stringify(text.slice(0, 120))})`);
}

// 6. Drafts stay with their learner.
async function draftsStayPrivate(staff, page, url) {
  await staff.click(".class-tabs a:text-is('Roster')");
  await staff.getByLabel("New tokens for").selectOption("not_signed_in");
  const tokens = csvRows(await downloaded(staff, () => staff.getByRole("button", { name: "Issue tokens (CSV)" }).click()));
  // Alice and Bob never signed in; Carol has not since her token was reset.
  expect(tokens.map((row) => row.student_id).sort().join() === "s1,s2,s3" && tokens.every((row) => /^[0-9a-f]{64}$/.test(row.token)),
         `issue tokens saves a CSV of those not signed in yet (${tokens.map((row) => row.student_id)})`);
  const [alice, bob] = ["s1", "s2"].map((id) => tokens.find((row) => row.student_id === id).token);
  const secret = "// alice's secret plan";
  const old = "// alice's old local draft";
  const starters = (await (await fetch(new URL("/api/stages/reduction/1", url))).json()).languages;

  await page.goto(`${url}#reduction/1`);
  await signInWithToken(page, alice);
  await page.waitForSelector("#workbench[data-language='cuda']");
  await typeAtEnd(page, `\n${secret}`);
  await page.click("#signout");  // at once: the draft is sent before the token is forgotten
  await page.waitForSelector("#signed-out:not([hidden])");
  await page.waitForFunction((text) => !window.cudojoEditor.getValue().includes(text), secret);
  expect(!(await everything(page)).includes(secret), "after sign-out nothing of Alice's draft is on the page or in storage");
  const kept = await serverDrafts(url, alice, "reduction/1");
  expect(kept.some((draft) => draft.language === "cuda" && draft.source.includes(secret)), "the server has Alice's draft");

  // A draft of Alice's in the old local form: Bob's sign-in deletes it unseen.
  const aliceId = (await whoIs(url, alice)).id;
  await page.evaluate(([text, id]) => {
    localStorage.setItem("cudojo.draft.reduction/1.cuda", text);
    localStorage.setItem("cudojo.drafts-owner", String(id));
  }, [old, aliceId]);
  await signInWithToken(page, bob);
  await page.waitForSelector("#who:has-text('Bob Bell')");
  for (const language of ["cuda", "python", "rust"]) {
    await editorHolds(page, language, (text) => text === starters[language].starter, "Bob sees the starter");
  }
  const seen = await everything(page);
  expect(!seen.includes(secret) && !seen.includes(old), "none of Alice's text is on Bob's page or in storage");
  expect((await serverDrafts(url, bob, "reduction/1")).length === 0, "Bob has no drafts on the server");
  await page.click("#signout");
  await page.waitForSelector("#signed-out:not([hidden])");

  await signInWithToken(page, alice);
  await page.waitForSelector("#who:has-text('Alice Ang')");
  // The stage opens again for her once her drafts have come from the server (stages.js): on a busy
  // machine that is after her name shows, so the editor is given the time it takes.
  await page.waitForFunction((text) => window.cudojoEditor.getValue().includes(text), secret, { timeout: 15000 })
    .catch(() => {});
  await editorHolds(page, "cuda", (text) => text.includes(secret), "Alice signed in again gets her draft from the server");
  await draftsWithoutServer(page, url, alice);
}

// The server out of reach: what is typed stays in this browser (the line beside Run says so), a
// second tab of the same browser shows it from there, and it is sent when the network is back. (A
// second tab rather than a reload: a reload would send it on its way out, with keepalive.)
async function draftsWithoutServer(page, url, alice) {
  const typed = "// typed while the server was away";
  const away = (route) => route.abort("connectionrefused");
  const context = page.context();
  await context.route("**/api/drafts**", away);
  await typeAtEnd(page, `\n${typed}`);
  await page.waitForSelector("#draft-state:has-text('kept in this browser')");
  const other = await context.newPage();
  await other.goto(`${url}#reduction/1`);
  await other.waitForSelector("#workbench[data-language='cuda']");
  await other.waitForFunction((text) => window.cudojoEditor.getValue().includes(text), typed);
  const onServer = async () => (await serverDrafts(url, alice, "reduction/1")).some((draft) => draft.source.includes(typed));
  expect(!(await onServer()), "the server has not got the draft typed while it was away");
  await context.unroute("**/api/drafts**", away);
  await other.evaluate(() => window.dispatchEvent(new Event("online")));
  const deadline = Date.now() + 5000;
  while (!(await onServer()) && Date.now() < deadline) await other.waitForTimeout(100);
  expect(await onServer(), "back online, the draft kept in this browser is sent");
  await other.close();
}

module.exports = { resetSignsOut, draftsStayPrivate };
