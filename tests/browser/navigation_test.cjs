// Browser test of the learner's page, navigation and keyboard (issue #26):
//   node navigation_test.cjs CUDOJO_BINARY WEB_DIR OUT_DIR
// At 1400x900 and at 420x900, each in light and in dark: the landing text says what the course is,
// where to start (its link opens reduction/1) and what the token is; the first Tab stop is "Skip to
// the lesson", then "Skip to the editor" once a stage is open, and neither changes the hash; a
// stage tapped in the list brings its lesson into view (on a phone it is far below the list); the
// tab's title names the open stage; Back and Forward open the stage the hash names, the landing
// text past the first, and opening the open stage again adds no history entry; Escape, then Tab
// or Shift+Tab, leaves the editor (Tab alone indents), as a hint under it says; the result tabs
// answer Left, Right, Home and End with one Tab stop (WAI-ARIA tabs); a History table of long rows
// fits the screen; axe-core finds nothing serious or critical on the landing page and on a stage.
// The landing page is seen signed out; then a real learner (POST /api/learners) signs in, whose
// History tab's runs are made up by a route.
// OUT_DIR gets landing-desktop.png, landing-phone.png and stage-tapped-phone.png (light) and the
// same with -dark, for docs/screenshots/.
"use strict";
const fs = require("node:fs");
const path = require("node:path");

const [binary, webDir, outDir] = process.argv.slice(2).map((arg) => path.resolve(arg));
const { runBrowserTest } = require("./serve.cjs");
const checks = require("./checks.cjs");
const { expect, overflowing } = checks;
const checkAxe = (page, label) => checks.checkAxe(page, label, webDir);

const SIZES = [["desktop", { width: 1400, height: 900 }], ["phone", { width: 420, height: 900 }]];
const LANDING_TITLE = "cudojo: Atomics & Reductions";

// Six runs with long cells (a date, a verdict, a time, two buttons) for the History tab.
const VERDICTS = ["compile_error", "wrong_answer", "too_slow", "accepted", "no_device", "time_limit_exceeded"];
const madeUpHistory = (stage) => ({
  jobs: VERDICTS.map((verdict, i) => ({
    id: 10000 + i, stage, state: "done", verdict, language: ["cuda", "python", "rust"][i % 3],
    created_at: 1700000000 + i * 3600, time_ratio: i % 2 ? null : 1.234 + i,
    report: verdict === "accepted" ? { metrics: { time_ms: { median: 0.123456, min: 0.12, max: 0.13, samples: 50 } } } : null,
  })),
});

// Waits until `id` is open: the page's state (web/js/state.js, imported in the page: the very
// module the page runs), the hash, the current button and the editor all say so.
async function stageOpen(page, id) {
  const isOpen = (wanted) => import("/js/state.js").then(({ state }) => {
    const button = document.querySelector(`nav button[data-stage='${wanted}']`);
    return Boolean(state.stage && state.stage.id === wanted && location.hash === `#${wanted}` && button
                   && button.getAttribute("aria-current") === "true" && !document.querySelector("#workbench").hidden);
  });
  const deadline = Date.now() + 10000;
  while (!(await page.evaluate(isOpen, id).catch(() => false))) {
    if (Date.now() > deadline) {
      const open = await page.evaluate(() => import("/js/state.js").then(({ state }) => state.stage && state.stage.id));
      throw new Error(`timed out waiting for ${id} to open (the hash: ${await page.evaluate(() => location.hash)}; open: ${open})`);
    }
    await page.waitForTimeout(50);
  }
}

const active = (page) => page.evaluate(() => {
  const node = document.activeElement;
  return { id: node.id, tab: node.dataset.tab || null, text: node.textContent.trim().slice(0, 40),
           inEditor: Boolean(node.closest(".CodeMirror")), tag: node.tagName.toLowerCase() };
});

// A fresh load of the page at `hash` (not a change of hash in the page already open), with the
// stage it names open; every check starts from one, so one failing leaves the next its own start.
async function freshLoad(page, url, hash = "") {
  await page.goto("about:blank");
  await page.goto(`${url}${hash}`);
  await page.waitForSelector("nav button[data-stage='reduction/3']");
  if (hash) await stageOpen(page, hash.slice(1));
}

const lessonTop = (page) => page.evaluate(() => Math.round(document.querySelector("#lesson").getBoundingClientRect().top));

// The landing text, the skip link as the first Tab stop, and the link to reduction/1.
async function checkLanding(page, url, label, shot) {
  await freshLoad(page, url);
  const text = (await page.textContent("#lesson")).replace(/\s+/g, " ");
  for (const words of ["CUDA", "Reduction", "Atomics", "token", "invite code"]) {
    expect(text.includes(words), `${label}: the landing text mentions ${words} (got ${JSON.stringify(text.slice(0, 120))})`);
  }
  const start = page.locator("#lesson a", { hasText: "Start with reduction/1" });
  expect(await start.count() === 1, `${label}: the landing text has a "Start with reduction/1" link`);
  expect(await page.title() === LANDING_TITLE, `${label}: the landing page keeps the course's title (got ${await page.title()})`);

  await page.keyboard.press("Tab");
  const first = await active(page);
  expect(first.id === "skip-to-lesson" && first.text === "Skip to the lesson", `${label}: the first Tab stop is "Skip to the lesson" (got ${JSON.stringify(first)})`);
  const box = await page.locator("#skip-to-lesson").boundingBox();
  expect(box && box.x >= 0 && box.y >= 0 && box.x + box.width <= page.viewportSize().width && box.height >= 16,
         `${label}: the focused skip link is shown on the screen (${JSON.stringify(box)})`);
  await checkAxe(page, `${label} landing, skip link focused`);
  await page.keyboard.press("Enter");
  expect((await active(page)).id === "lesson", `${label}: the skip link puts the focus on the lesson`);
  expect(await page.evaluate(() => location.hash) === "", `${label}: the skip link leaves the hash alone`);
  const { bad, scrollWidth } = await overflowing(page);
  expect(bad.length === 0 && scrollWidth <= page.viewportSize().width, `${label}: the landing page fits the screen (${bad.slice(0, 3)})`);
  await page.evaluate(() => { document.activeElement.blur(); window.scrollTo(0, 0); });
  await page.screenshot({ path: path.join(outDir, `${shot}.png`) });

  await start.click();
  await stageOpen(page, "reduction/1");
  expect((await page.title()).includes("reduction/1"), `${label}: the title names reduction/1 (got ${await page.title()})`);
}

// A stage chosen in the list, from the top of the page: its lesson in view, the title naming it.
async function checkTapOpensInView(page, url, label, shot) {
  await freshLoad(page, url, "#reduction/1");
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.click("nav button[data-stage='reduction/3']");
  await stageOpen(page, "reduction/3");
  const stage = await page.evaluate(() => fetch("/api/stages/reduction/3").then((r) => r.json()));
  await page.waitForTimeout(100);
  const top = await lessonTop(page);
  const height = page.viewportSize().height;
  expect(top >= 0 && top < height / 2, `${label}: reduction/3's lesson is in view after choosing it (its top at ${top} of ${height})`);
  const title = await page.title();
  expect(title.includes("reduction/3") && title.includes(stage.title), `${label}: the title names reduction/3 (got ${title})`);
  if (shot) await page.screenshot({ path: path.join(outDir, `${shot}.png`) });
}

// Back and Forward open the stage the hash names; past the first, the landing text.
async function checkBackAndForward(page, url, label) {
  await freshLoad(page, url);
  await page.click("nav button[data-stage='reduction/1']");
  await stageOpen(page, "reduction/1");
  await page.click("nav button[data-stage='reduction/3']");
  await stageOpen(page, "reduction/3");
  const entries = await page.evaluate(() => history.length);
  await page.click("nav button[data-stage='reduction/3']");
  await page.waitForTimeout(300);
  expect(await page.evaluate(() => history.length) === entries, `${label}: opening the open stage again adds no history entry`);
  await page.goBack();
  await stageOpen(page, "reduction/1");
  const heading = await page.textContent("#lesson h1");
  const first = await page.evaluate(() => fetch("/api/stages/reduction/1").then((r) => r.json()));
  expect(heading.includes(first.title), `${label}: Back shows reduction/1's lesson (got ${heading})`);
  expect((await page.title()).includes("reduction/1"), `${label}: after Back the title names reduction/1`);
  await page.goForward();
  await stageOpen(page, "reduction/3");
  await page.goBack();
  await stageOpen(page, "reduction/1");
  await page.goBack();
  await page.waitForFunction(() => location.hash === "" && document.querySelector("#workbench").hidden, null, { timeout: 10000 });
  expect((await page.textContent("#lesson")).includes("Start with reduction/1"), `${label}: Back past the first stage shows the landing text`);
  expect(await page.locator("nav button[aria-current]").count() === 0, `${label}: ... with no stage current`);
  expect(await page.title() === LANDING_TITLE, `${label}: ... and the course's title`);
  await page.goForward();
  await stageOpen(page, "reduction/1");
}

// Tab indents; Escape, then Tab or Shift+Tab, leaves the editor; a hint says so.
async function checkEditorExit(page, url, label) {
  await freshLoad(page, url, "#reduction/1");
  await page.evaluate(() => { window.cudojoEditor.focus(); window.cudojoEditor.setCursor({ line: 0, ch: 0 }); });
  const before = await page.evaluate(() => window.cudojoEditor.getValue());
  await page.keyboard.press("Tab");
  expect((await active(page)).inEditor, `${label}: Tab alone stays in the editor`);
  expect(await page.evaluate(() => window.cudojoEditor.getValue()) !== before, `${label}: ... and indents`);
  await page.evaluate(() => window.cudojoEditor.undo());
  await page.keyboard.press("Escape");
  await page.keyboard.press("Tab");
  const after = await active(page);
  expect(!after.inEditor && after.id === "run", `${label}: Escape, then Tab, goes on to Run (got ${JSON.stringify(after)})`);
  await page.evaluate(() => window.cudojoEditor.focus());
  await page.keyboard.press("Escape");
  await page.keyboard.press("Shift+Tab");
  const backwards = await active(page);
  expect(!backwards.inEditor && backwards.id === "language", `${label}: Escape, then Shift+Tab, goes back to the language (got ${JSON.stringify(backwards)})`);
  expect(await page.evaluate(() => window.cudojoEditor.getValue()) === before, `${label}: leaving changed no text`);
  const described = await page.evaluate(() => {
    const input = window.cudojoEditor.getInputField();
    const hint = document.getElementById(input.getAttribute("aria-describedby") || "");
    return hint && hint.checkVisibility() ? hint.textContent : null;
  });
  expect(described && described.includes("Escape") && described.includes("Tab"),
         `${label}: a visible hint, the editor's description, says how to leave it (got ${JSON.stringify(described)})`);
}

// The WAI-ARIA tabs pattern: one Tab stop, Left/Right/Home/End move and show.
async function checkTabsKeyboard(page, label) {
  await page.click(".tabs [data-tab='result']");
  const stops = [];  // after each step, the tabs that Tab stops on: the selected one alone
  const expectShown = async (name, how) => {
    const got = await page.evaluate(() => ({
      focused: document.activeElement.dataset.tab,
      selected: [...document.querySelectorAll(".tabs [role='tab']")].filter((b) => b.getAttribute("aria-selected") === "true").map((b) => b.dataset.tab),
      stops: [...document.querySelectorAll(".tabs [role='tab']")].filter((b) => b.tabIndex === 0).map((b) => b.dataset.tab),
      shown: [...document.querySelectorAll(".tab")].filter((t) => !t.hidden).map((t) => t.id),
    }));
    expect(got.focused === name && got.selected.join() === name && got.shown.join() === `tab-${name}`,
           `${label}: ${how} focuses, selects and shows ${name} (got ${JSON.stringify(got)})`);
    stops.push(`${how}: ${got.stops}`);
  };
  await expectShown("result", "a click");
  for (const [key, name] of [["ArrowRight", "driver"], ["ArrowRight", "metrics"], ["End", "leaderboard"],
                             ["ArrowRight", "result"], ["ArrowLeft", "leaderboard"], ["Home", "result"]]) {
    await page.keyboard.press(key);
    await expectShown(name, key);
  }
  expect(stops.every((stop) => /: [a-z]+$/.test(stop)), `${label}: the tab list is one Tab stop, the selected tab (got ${stops.join("; ")})`);
  await page.keyboard.press("Tab");
  expect((await active(page)).id === "tab-result", `${label}: Tab from the tabs goes to the panel shown`);
}

// Long History rows inside the screen: the panel does not scroll sideways.
async function checkHistoryFits(page, label) {
  await page.click(".tabs [data-tab='history']");
  await page.waitForSelector("#history-list tr[data-job]");
  const width = page.viewportSize().width;
  const fit = await page.evaluate(() => {
    const panel = document.querySelector("#tab-history");
    const table = document.querySelector("#history-list table").getBoundingClientRect();
    return { scroll: panel.scrollWidth, client: panel.clientWidth, right: Math.round(table.right) };
  });
  expect(fit.scroll <= fit.client + 1 && fit.right <= width, `${label}: the History table fits its panel and the screen (${JSON.stringify(fit)})`);
  const { bad, scrollWidth } = await overflowing(page);
  expect(bad.length === 0 && scrollWidth <= width, `${label}: nothing is wider than the screen (${bad.slice(0, 3)})`);
}

// A fresh load of a stage's address: Tab, Tab reaches "Skip to the editor", which enters it.
async function checkSkipToEditor(page, url, label) {
  await freshLoad(page, url, "#reduction/1");
  await page.keyboard.press("Tab");
  await page.keyboard.press("Tab");
  const link = await active(page);
  expect(link.id === "skip-to-editor" && link.text === "Skip to the editor", `${label}: the second Tab stop is "Skip to the editor" (got ${JSON.stringify(link)})`);
  await page.keyboard.press("Enter");
  expect((await active(page)).inEditor, `${label}: "Skip to the editor" puts the focus in the editor`);
  expect(await page.evaluate(() => location.hash) === "#reduction/1", `${label}: ... and leaves the hash alone`);
}

async function checkSize(browser, url, token, [size, viewport], scheme) {
  const label = `${viewport.width}x${viewport.height} ${scheme}`;
  const suffix = scheme === "dark" ? "-dark" : "";
  const context = await browser.newContext({ viewport, colorScheme: scheme, bypassCSP: true });  // for axe-core
  const page = await context.newPage();
  const pageErrors = [];
  page.on("pageerror", (error) => { pageErrors.push(error.message); console.error(`page error: ${error.message}`); });
  await page.route((u) => u.pathname === "/api/history", (route) =>
    route.fulfill({ json: madeUpHistory(new URL(route.request().url()).searchParams.get("stage")) }));

  // Every check runs, each from its own start, so a page that fails one shows how it does on the rest.
  const failures = [];
  const attempt = async (check) => {
    try { await check(); } catch (error) { failures.push(error.message.split("\n")[0]); }
  };
  await attempt(() => checkLanding(page, url, label, `landing-${size}${suffix}`));
  // The landing page as a newcomer sees it, signed out; signed in from here on, for the History tab.
  await page.evaluate(([value, name]) => {
    localStorage.setItem("cudojo.token", value);
    localStorage.setItem("cudojo.name", name);
  }, [token.token, token.name]);
  await attempt(() => checkTapOpensInView(page, url, label, size === "phone" ? `stage-tapped-phone${suffix}` : null));
  await attempt(() => checkBackAndForward(page, url, label));
  await attempt(() => checkEditorExit(page, url, label));
  await attempt(() => checkTabsKeyboard(page, label));
  await attempt(() => checkHistoryFits(page, label));
  await attempt(() => checkAxe(page, `${label} stage, History tab`));
  await attempt(() => checkSkipToEditor(page, url, label));
  if (pageErrors.length) failures.push(`${label}: script errors: ${pageErrors.join("; ")}`);
  await context.close();
  console.log(failures.length ? `FAILED ${label}:\n  ${failures.join("\n  ")}` : `ok ${label}`);
  return failures.length;
}

runBrowserTest(binary, webDir, async ({ url, browser }) => {
  fs.mkdirSync(outDir, { recursive: true });
  const learner = await fetch(new URL("/api/learners", url), { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ name: "Nav Tester" }) }).then((r) => r.json());
  expect(learner.token, `a learner signs up (got ${JSON.stringify(learner)})`);
  let failed = 0;
  for (const size of SIZES) {
    for (const scheme of ["light", "dark"]) failed += await checkSize(browser, url, learner, size, scheme);
  }
  expect(failed === 0, `${failed} navigation checks failed (listed above)`);
  console.log("navigation test passed");
});
