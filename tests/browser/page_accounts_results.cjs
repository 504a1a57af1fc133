// Issue #14's checks of the page (run by page_test.cjs): accounts, history, progress, results, the
// leaderboard, narrow screens and axe.
"use strict";
const {
  webDir, screenshot, checks, expect, overflowing, checkAxe, tokensSeen, recordRequests, editorValue,
  waitForState, showReport, stageOpen, serveVendorFallback, routeOrFake, gutterWidth, openStage,
} = require("./page_support.cjs");

async function checkIssue14(browser, url, screenshot) {
  // bypassCSP: the server's CSP (script-src 'self') would refuse the injected axe-core.
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 }, bypassCSP: true });
  await serveVendorFallback(context, webDir);
  recordRequests(context);
  const emulated = new Set();
  // The learner the made-up /api/me knows: filled in at sign-up.
  const me = { id: 0, name: "", leaderboard: false, token: null };
  const puts = [];
  await routeOrFake(context, (u) => u.pathname === "/api/me", (route) => {
    const auth = route.request().headers().authorization || "";
    if (!me.token || auth !== `Bearer ${me.token}`) return route.fulfill({ status: 401, json: { error: "unknown token" } });
    if (route.request().method() === "PUT") me.leaderboard = Boolean(route.request().postDataJSON().leaderboard);
    return route.fulfill({ json: { id: me.id, name: me.name, leaderboard: me.leaderboard } });
  }, emulated);
  await context.route((u) => u.pathname === "/api/me", (route) => {
    if (route.request().method() === "PUT") puts.push(route.request().postDataJSON());
    return route.fallback();
  });
  // Progress and the leaderboard need accepted runs (a GPU): these two are always made up here;
  // the real routes' shapes are checked below where the server has them.
  const progress = { stages: {
    "reduction/1": { status: "accepted", attempts: 3, best_time_ratio: 0.953, best_time_ms: 0.0123, last_job: 1 },
    "reduction/2": { status: "attempted", attempts: 1, best_time_ratio: null, best_time_ms: null, last_job: 2 } } };
  await context.route((u) => u.pathname === "/api/progress", (route) => route.fulfill({ json: progress }));
  await context.route((u) => /^\/api\/stages\/.+\/leaderboard$/.test(u.pathname), (route) => route.fulfill({ json: {
    stage: "reduction/1", entries: [
      { rank: 1, name: "Jane Doe", time_ratio: 0.91, time_ms: 0.0117, language: "cuda", at: 1700000000 },
      { rank: 2, name: "ada", time_ratio: 1.02, time_ms: 0.0131, language: "python", at: 1700000100 }] } }));

  const page = await context.newPage();
  const pageErrors = [];
  page.on("pageerror", (error) => { pageErrors.push(error); console.error(`page error: ${error.message}`); });
  await page.goto(url);
  await page.waitForSelector("nav button[data-stage='reduction/2']");

  // 1. The editor was created hidden: its gutter is measured once shown, on stage 1 and on stage 2.
  await openStage(page, "reduction/1");
  expect(await gutterWidth(page) > 10, `stage 1: the line-number gutter has a width, the code right of it (${await gutterWidth(page)})`);
  await openStage(page, "reduction/2");
  expect(await gutterWidth(page) > 10, `stage 2: the line-number gutter has a width, the code right of it (${await gutterWidth(page)})`);

  // 2. Accounts. Errors go to the message area, not the name slot.
  await page.fill("#learner-name", "");
  await page.click("#signin-button");
  await page.waitForSelector("#account-message:not([hidden])");
  expect((await page.textContent("#account-message")).includes("Type a display name"), "an empty name is refused in the message area");
  expect(await page.textContent("#who") === "", "... and the name slot stays empty");
  await page.route("**/api/learners", (route) => route.fulfill({ status: 400, json: { error: "a learner name is 1 to 40 characters" } }), { times: 1 });
  await page.fill("#learner-name", "x");
  await page.click("#signin-button");
  await page.waitForSelector("#account-message:has-text('1 to 40 characters')");
  expect(await page.textContent("#who") === "", "a refused sign-up leaves the name slot empty");

  // Sign-up with a name that has a space: the token is shown once, with Copy and a note.
  const signup = page.waitForResponse((r) => r.url().endsWith("/api/learners") && r.request().method() === "POST");
  await page.fill("#learner-name", "Jane Doe");
  await page.click("#signin-button");
  const learner = await (await signup).json();
  expect(learner.name === "Jane Doe", `the server keeps "Jane Doe" (got ${JSON.stringify(learner.name)})`);
  Object.assign(me, { id: learner.id, name: learner.name, token: learner.token });
  tokensSeen.add(learner.token);
  await page.waitForSelector("#who:has-text('signed in as Jane Doe')");
  expect(await page.isVisible("#token-reveal"), "the token is shown after sign-up");
  expect(await page.inputValue("#token-value") === learner.token, "... the token itself");
  expect((await page.textContent("#token-reveal")).includes("keep it"), "... with a note to keep it");
  await context.grantPermissions(["clipboard-read", "clipboard-write"]);
  await page.getByRole("button", { name: "Copy", exact: true }).click();
  await page.waitForSelector("#token-copy:has-text('Copied')");
  expect(await page.evaluate(() => navigator.clipboard.readText()) === learner.token, "Copy puts the token on the clipboard");
  await page.click("#token-done");
  expect(!(await page.isVisible("#token-reveal")) && await page.inputValue("#token-value") === "", "the token is shown once");
  expect(await page.evaluate(() => localStorage.getItem("cudojo.learner-id")) === String(learner.id), "the drafts' owner is the learner");

  // Sign out forgets the token and the drafts' owner; a token signs in again (GET /api/me).
  await page.click("#signout");
  await page.waitForSelector("#signed-out:not([hidden])");
  expect(await page.evaluate(() => localStorage.getItem("cudojo.token") === null && localStorage.getItem("cudojo.learner-id") === null
                               && !Object.keys(localStorage).some((key) => key.startsWith("cudojo.drafts"))),
         "Sign out forgets the token, the drafts' owner and every draft");
  expect(await page.isVisible("#signin-button") && !(await page.isVisible("#who")), "signed out: the sign-up form is back");
  await page.fill("#token-input", "not-a-token");
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await page.waitForSelector("#account-message:has-text('not known')");
  expect(await page.evaluate(() => localStorage.getItem("cudojo.token")) === null, "an unknown token does not sign in");
  await page.getByLabel("Sign in with a token").fill(learner.token);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await page.waitForSelector("#who:has-text('signed in as Jane Doe')");
  expect(await page.isHidden("#account-message"), "a good token clears the message");

  // A stale token on load signs out with a message.
  await page.evaluate(() => localStorage.setItem("cudojo.token", "stale-token-0000"));
  await page.reload();
  await page.waitForSelector("#account-message:has-text('no longer valid')");
  expect(await page.evaluate(() => localStorage.getItem("cudojo.token")) === null, "a stale token is forgotten");
  expect(await page.isVisible("#signin-button") && await page.textContent("#who") === "", "... and the page shows it is signed out");
  await page.getByLabel("Sign in with a token").fill(learner.token);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await page.waitForSelector("#who:has-text('signed in as Jane Doe')");

  // 5. Progress in words beside each stage, with the best ratio.
  await page.waitForSelector("nav button[data-stage='reduction/1'][data-progress='accepted']");
  expect(await page.getByRole("button", { name: /reduction\/1.*accepted.*best 0\.95/ }).count() === 1, "reduction/1 is named accepted, best 0.95");
  expect(await page.getByRole("button", { name: /reduction\/2.*attempted/ }).count() === 1, "reduction/2 is named attempted");
  expect(await page.getByRole("button", { name: /reduction\/3.*new/ }).count() === 1, "reduction/3 is named new");
  const navText = await page.textContent("#stages");
  expect(!/null|undefined/.test(navText), `the stage list shows no "null" or "undefined" (${navText.slice(0, 200)})`);

  // 4. Ctrl+Enter runs; long lines wrap. A compile error runs with no GPU.
  await openStage(page, "reduction/1");
  expect(await page.evaluate(() => window.cudojoEditor.getOption("lineWrapping")), "the editor wraps long lines");
  const long = `// ${"a long comment that goes on ".repeat(12)}`;
  const wrapped = await page.evaluate((text) => {
    const cm = window.cudojoEditor;
    cm.replaceRange(`${text}\nint broken_here = undeclared_name;\n`, { line: 0, ch: 0 });
    return cm.charCoords({ line: 0, ch: text.length }, "local").top > cm.charCoords({ line: 0, ch: 0 }, "local").top;
  }, long);
  expect(wrapped, "a long comment line wraps onto a second row");
  const draft = await editorValue(page);
  const posted = page.waitForResponse((r) => r.url().endsWith("/api/jobs") && r.request().method() === "POST");
  await page.evaluate(() => window.cudojoEditor.focus());
  await page.keyboard.press("Control+Enter");
  const job = await (await posted).json();
  expect(await editorValue(page) === draft, "Ctrl+Enter runs without typing a newline");
  // 6. The verdict in words beside its code; the Metrics tab says why nothing was timed.
  await page.waitForSelector("#tab-result .verdict[data-verdict='compile_error']:has-text('Compile error')", { timeout: 60000 });
  await page.click(".tabs button[data-tab='metrics']");
  await page.waitForSelector("#tab-metrics .metrics-note:has-text('Nothing was timed')");
  // 3. The last result is kept across a reload.
  expect(await page.evaluate(() => localStorage.getItem("cudojo.result.reduction/1")) !== null, "the last result is kept");
  await page.reload();
  await page.waitForSelector("#tab-result .verdict[data-verdict='compile_error']");

  // 3. History: open asks before replacing a changed draft; diff shows the lines.
  await page.evaluate(() => window.cudojoEditor.replaceRange("// an edit after the run\n", { line: 0, ch: 0 }));
  const edited = await editorValue(page);
  await page.click(".tabs button[data-tab='history']");
  const row = page.locator(`#tab-history tr[data-job='${job.id}']`);
  await row.waitFor();
  await row.locator("button.diff-job").click();
  await page.waitForSelector("#diff-view:not([hidden]) .diff-ins");
  expect((await page.textContent("#diff-view .diff-ins")).includes("+ // an edit after the run"), "the diff shows the added line");
  expect(await page.locator("#diff-view .diff-del").count() === 0, "... and nothing removed");
  await row.locator("button.open-job").click();
  await page.waitForSelector("#confirm-dialog[open]");
  expect((await page.textContent("#confirm-text")).includes(`job #${job.id}`), "open asks before replacing the edited draft");
  await page.keyboard.press("Escape");
  await page.waitForSelector("#confirm-dialog:not([open])", { state: "attached" });
  expect(await editorValue(page) === edited, "Cancel (Escape) keeps the draft");
  await row.locator("button.open-job").click();
  await page.click("#confirm-ok");
  await page.waitForFunction((text) => window.cudojoEditor.getValue() === text, draft);
  // Reset to starter asks too.
  const starter = await page.evaluate(async () => (await import("/js/languages.js")).currentLanguage().starter);
  await page.click("#reset");
  await page.click("#confirm-cancel");
  await page.waitForSelector("#confirm-dialog:not([open])", { state: "attached" });
  expect(await editorValue(page) === draft, "Reset, cancelled, keeps the draft");
  await page.click("#reset");
  await page.click("#confirm-ok");
  await page.waitForFunction((text) => window.cudojoEditor.getValue() === text, starter, { timeout: 5000 }).catch(() => {});
  expect(await editorValue(page) === starter, "Reset, confirmed, gives the starter");

  // 6. Drawn reports: test rows show their tolerance; a note says why nothing was timed; 5. Next stage.
  await showReport(page, { verdict: "wrong_answer", stage: "reduction/1", language: "cuda", message: "",
    tests: [{ name: "n=1000", ok: false, expected: 1, got: 2, detail: "|got - sum| / |sum| <= 1e-05" }],
    metrics: { note: "not timed: the kernel gave a wrong answer" } });
  expect((await page.textContent("#tab-result td.detail")).includes("<= 1e-05"), "a test row shows the bound it used");
  expect((await page.textContent("#tab-result .verdict")) === "Wrong answer", "wrong_answer in words, without its code");
  expect((await page.textContent("#tab-metrics")).includes("the kernel gave a wrong answer"), "the Metrics tab shows metrics.note");
  expect(await page.locator("#tab-result a.next-stage").count() === 0, "no Next stage link without acceptance");
  await showReport(page, { verdict: "too_slow", stage: "reduction/1", language: "cuda", message: "", metrics: {} });
  expect((await page.textContent("#tab-result .verdict")) === "Too slow", "too_slow in words");
  await showReport(page, { verdict: "accepted", stage: "reduction/1", language: "cuda", message: "", metrics: {} });
  const next = page.locator("#tab-result a.next-stage");
  expect(await next.getAttribute("href") === "#reduction/2", "an accepted verdict links to the next stage");

  // 8. Accessibility at 1400 x 900, light and dark.
  await checkAxe(page, "1400x900");
  await page.emulateMedia({ colorScheme: "dark" });
  expect(await page.evaluate(() => getComputedStyle(document.body).backgroundColor) !== "rgb(247, 248, 250)", "the dark theme applies");
  await checkAxe(page, "1400x900 dark");
  await page.screenshot({ path: screenshot.replace(/(\.png)?$/, "-dark.png") });
  await page.emulateMedia({ colorScheme: "light" });

  // 7. The leaderboard tab and the opt-in (PUT /api/me).
  await next.click();
  await waitForState(page, stageOpen, "reduction/2");
  await page.click(".tabs button[data-tab='leaderboard']");
  await page.waitForSelector("#tab-leaderboard tr[data-rank='1']");
  expect((await page.textContent("#tab-leaderboard tr[data-rank='1']")).includes("Jane Doe"), "the leaderboard lists names with spaces");
  const optin = page.getByLabel("Show my name on the leaderboards");
  expect(!(await optin.isChecked()) && await optin.isEnabled(), "the opt-in starts off and is enabled when signed in");
  await optin.check();
  await waitForState(page, (state) => Boolean(state.me && state.me.leaderboard === true));
  expect(puts.length === 1 && puts[0].leaderboard === true, `the opt-in sends PUT /api/me {"leaderboard": true} (got ${JSON.stringify(puts)})`);
  await page.reload();
  await waitForState(page, (state) => Boolean(state.me && state.me.leaderboard === true));
  await page.click(".tabs button[data-tab='leaderboard']");
  expect(await page.getByLabel("Show my name on the leaderboards").isChecked(), "the opt-in is remembered (GET /api/me)");
  await page.screenshot({ path: screenshot.replace(/(\.png)?$/, "-wide.png") });

  // 1. A 420 px screen: nothing wider than it; the editor and Run are on it; axe again.
  await page.setViewportSize({ width: 420, height: 900 });
  await openStage(page, "reduction/1");
  expect(await gutterWidth(page) > 10, "at 420 px the gutter still has a width");
  // Signed in; then the header as it is right after sign-up (the token shown) and when signed out.
  const headers = {
    "signed in": () => {},
    "token shown": () => {
      document.getElementById("token-reveal").hidden = false;
      document.getElementById("token-value").value = "t".repeat(43);
    },
    "signed out": async () => {
      for (const [id, hidden] of [["token-reveal", true], ["signed-in", true], ["signed-out", false]]) document.getElementById(id).hidden = hidden;
      (await import("/js/message.js")).accountMessage("Your token is no longer valid (this server does not know it any more), so you are signed out.");
    },
  };
  for (const [label, setup] of Object.entries(headers)) {
    await page.evaluate(setup);
    const { bad, scrollWidth } = await overflowing(page);
    expect(bad.length === 0 && scrollWidth <= 420,
           `at 420 px (${label}) nothing is wider than the screen (scrollWidth ${scrollWidth}; ${bad.slice(0, 5).join("; ")})`);
  }
  await checkAxe(page, "420x900 signed-out header");
  await page.evaluate(async () => {
    (await import("/js/message.js")).accountMessage("");
    (await import("/js/account.js")).showLearner();
  });
  for (const selector of [".CodeMirror", "#run"]) {
    const box = await page.locator(selector).boundingBox();
    expect(box && box.x >= 0 && box.x + box.width <= 420 && await page.isVisible(selector), `at 420 px ${selector} is on the screen`);
  }
  await checkAxe(page, "420x900");
  await page.screenshot({ path: screenshot.replace(/(\.png)?$/, "-420.png"), fullPage: true });

  // The real routes' shapes, where this server has them (asked from here: the page's routes are made up).
  const get = async (route) => {
    const response = await fetch(new URL(route, url), { headers: { Authorization: `Bearer ${learner.token}` } });
    return { status: response.status, body: await response.json().catch(() => null) };
  };
  const realProgress = await get("/api/progress");
  if (realProgress.status !== 404) {
    expect(realProgress.status === 200 && typeof realProgress.body.stages === "object", `GET /api/progress has stages (${realProgress.status})`);
    const mine = realProgress.body.stages["reduction/1"];
    expect(mine && mine.status === "attempted", `the server counts the compile error as an attempt at reduction/1 (${JSON.stringify(mine)})`);
  }
  const realBoard = await get("/api/stages/reduction/1/leaderboard");
  if (realBoard.status !== 404) {
    expect(realBoard.status === 200 && Array.isArray(realBoard.body.entries), `the leaderboard route has entries (${realBoard.status})`);
  }
  expect(pageErrors.length === 0, `no script errors in the issue #14 checks (got ${pageErrors.length})`);
  console.log(`issue #14: accounts, history dialog and diff, kept results, Ctrl+Enter, wrapping, progress, verdict words, ` +
              `metrics note, test bounds, next stage, leaderboard, 420 px, axe (light, dark, narrow)` +
              (emulated.size ? `; this server lacks ${[...emulated].join(", ")}: made-up answers used` : ""));
  await context.close();
}

module.exports = { checkIssue14 };
