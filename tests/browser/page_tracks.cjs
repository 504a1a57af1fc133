// The page's stage list grouped by track, with the real course and a made-up two-track course
// (run by page_test.cjs).
"use strict";
const { screenshot, expect, recordRequests, waitForState, showMetrics, stageOpen } = require("./page_support.cjs");

const TRACK_TITLES = { reduction: "Reduction", atomics: "Atomics" };
const trackOf = (id) => id.split("/")[0];
const trackTitle = (track) => TRACK_TITLES[track] || track.charAt(0).toUpperCase() + track.slice(1);

// What the nav must show for `stages` (the API's order): tracks in order of first appearance.
function expectedTracks(stages) {
  const tracks = [];
  for (const stage of stages) {
    const track = trackOf(stage.id);
    let group = tracks.find((t) => t.track === track);
    if (!group) tracks.push(group = { track, ids: [] });
    group.ids.push(stage.id);
  }
  return tracks;
}

// The nav as the page drew it: headings and stage buttons in document order, and for every
// button the last heading before it (the heading it sits under), with positions on screen.
const drawnNav = (page) => page.evaluate(() => {
  const items = [];
  let heading = null;
  for (const node of document.querySelectorAll("#stages h2, #stages button[data-stage]")) {
    const box = node.getBoundingClientRect();
    const where = { top: box.top, bottom: box.bottom, left: box.left, right: box.right };
    if (node.tagName === "H2") {
      heading = node.textContent.replace(/\s+/g, " ").trim();
      items.push({ kind: "heading", text: heading, level: node.tagName, ...where });
    } else {
      items.push({ kind: "stage", id: node.dataset.stage, under: heading, ...where });
    }
  }
  return items;
});

async function checkStageGroups(page, stages, label) {
  const tracks = expectedTracks(stages);
  const drawn = await drawnNav(page);
  const headings = drawn.filter((item) => item.kind === "heading");
  const buttons = drawn.filter((item) => item.kind === "stage");
  const wantedHeadings = tracks.map(({ track, ids }) => `${trackTitle(track)} ${ids.length} ${ids.length === 1 ? "stage" : "stages"}`);
  expect(JSON.stringify(headings.map((h) => h.text)) === JSON.stringify(wantedHeadings),
         `${label}: one heading per track, in order, with its count: ${JSON.stringify(wantedHeadings)} (got ${JSON.stringify(headings.map((h) => h.text))})`);
  const wantedOrder = tracks.flatMap((t) => t.ids);
  expect(JSON.stringify(buttons.map((b) => b.id)) === JSON.stringify(wantedOrder),
         `${label}: the stages in the course's order ${wantedOrder} (got ${buttons.map((b) => b.id)})`);
  for (const { track, ids } of tracks) {
    const heading = wantedHeadings[tracks.findIndex((t) => t.track === track)];
    const box = headings.find((h) => h.text === heading);
    for (const id of ids) {
      const button = buttons.find((b) => b.id === id);
      expect(button.under === heading, `${label}: ${id} is under the heading "${heading}" (got "${button.under}")`);
      expect(button.top >= box.bottom - 1, `${label}: ${id} is drawn below its heading (${button.top} < ${box.bottom})`);
    }
    // For assistive technology the heading names its track's list, which holds exactly its stages.
    const list = page.getByRole("list", { name: heading, exact: true });
    expect(await list.count() === 1, `${label}: a list named "${heading}"`);
    const inList = await list.locator("button[data-stage]").evaluateAll((nodes) => nodes.map((n) => n.dataset.stage));
    expect(JSON.stringify(inList) === JSON.stringify(ids), `${label}: the "${heading}" list holds ${ids} (got ${inList})`);
    expect(await page.getByRole("heading", { name: heading, exact: true }).count() === 1, `${label}: "${heading}" is a heading`);
  }
}

// A made-up course of twelve stages in two tracks, served by routes (stage details borrow
// reduction/3's; the history of reduction/9 holds one timed job): the grouping, the keyboard, the
// previous stage across the boundary, and a phone-sized screen.
async function checkTracks(browser, url, screenshot) {
  const fake = [...Array(9)].map((_, i) => `reduction/${i + 1}`).concat(["atomics/1", "atomics/2", "atomics/3"])
    .map((id) => ({ id, alias: `${id}-alias`, title: `Stage ${id}`, summary: `about ${id}`, signature: "__global__ void k()" }));
  const context = await browser.newContext({ viewport: { width: 1440, height: 1000 } });
  recordRequests(context);
  const page = await context.newPage();
  const pageErrors = [];
  page.on("pageerror", (error) => { pageErrors.push(error); console.error(`page error: ${error.message}`); });
  await page.addInitScript(() => localStorage.setItem("cudojo.token", "made-up"));
  // The made-up token belongs to a made-up learner, whose every call the routes answer: the real
  // server would refuse the token (401), and the page would sign out.
  await page.route((u) => u.pathname === "/api/me", (route) => route.fulfill({ json: { id: 1, name: "made up", leaderboard: false } }));
  await page.route((u) => u.pathname === "/api/progress", (route) => route.fulfill({ json: { stages: {}, deadlines: {} } }));
  await page.route((u) => u.pathname.startsWith("/api/drafts"), (route) => route.fulfill({ json: { drafts: [] } }));
  await page.route((u) => u.pathname === "/api/stages", (route) => route.fulfill({ json: fake }));
  await page.route((u) => u.pathname.startsWith("/api/stages/"), async (route) => {
    const id = decodeURIComponent(new URL(route.request().url()).pathname.slice("/api/stages/".length));
    const real = await (await route.fetch({ url: new URL("/api/stages/reduction/3", url).href })).json();
    return route.fulfill({ json: { ...real, ...fake.find((stage) => stage.id === id) } });
  });
  const historyAsked = [];
  await page.route((u) => u.pathname === "/api/history", (route) => {
    const stage = new URL(route.request().url()).searchParams.get("stage");
    historyAsked.push(stage);
    const timed = { id: 7, state: "done", verdict: "too_slow", language: "cuda", created_at: 1700000000,
                    report: { metrics: { time_ms: { median: 0.0123, min: 0.012, max: 0.013, samples: 50 } } } };
    return route.fulfill({ json: { jobs: stage === "reduction/9" ? [timed] : [] } });
  });

  await page.goto(`${url}#atomics/1`);
  await page.waitForFunction(() => document.querySelector("nav button[data-stage='atomics/1'][aria-current='true']"));
  await checkStageGroups(page, fake, "two tracks");
  expect(await page.locator("nav button.current").count() === 1, "one stage is current");
  await page.screenshot({ path: screenshot.replace(/(\.png)?$/, "-tracks.png") });

  // Keyboard: headings take no focus, so Shift+Tab from atomics/1 lands on reduction/9.
  await page.focus("nav button[data-stage='atomics/1']");
  await page.keyboard.press("Shift+Tab");
  expect(await page.evaluate(() => document.activeElement.dataset.stage) === "reduction/9",
         "Shift+Tab from atomics/1 reaches reduction/9");
  await page.keyboard.press("Enter");
  await page.waitForFunction(() => location.hash === "#reduction/9");
  expect(await page.getAttribute("nav button[data-stage='reduction/9']", "aria-current") === "true", "Enter opens reduction/9");
  await page.keyboard.press("Tab");
  expect(await page.evaluate(() => document.activeElement.dataset.stage) === "atomics/1", "Tab goes on to atomics/1");
  await page.keyboard.press("Enter");
  await waitForState(page, (state) => location.hash === "#atomics/1" && Boolean(state.stage && state.stage.id === "atomics/1"));

  // The previous stage crosses the boundary: atomics/1's Metrics name the learner's last reduction/9.
  const report = { metrics: { n: 1000, time_ms: { median: 0.01, min: 0.01, max: 0.011, samples: 50 } },
                   gpu: { name: "Made-up GPU", arch: "sm_90", peak_read_gbps: 4000 } };
  historyAsked.length = 0;
  await showMetrics(page, report);
  const metrics = await page.textContent("#tab-metrics");
  expect(historyAsked.includes("reduction/9"), `atomics/1 asks for reduction/9's history (asked ${historyAsked})`);
  expect(metrics.includes("your last reduction/9") && metrics.includes("too_slow"),
         `atomics/1's Metrics show the last reduction/9 run (got ${JSON.stringify(metrics)})`);
  // ... and within a track as before; the course's first stage has none.
  await page.click("nav button[data-stage='atomics/2']");
  await waitForState(page, stageOpen, "atomics/2");
  historyAsked.length = 0;
  await showMetrics(page, report);
  expect(historyAsked.includes("atomics/1"), `atomics/2 asks for atomics/1's history (asked ${historyAsked})`);
  await page.click("nav button[data-stage='reduction/1']");
  await waitForState(page, stageOpen, "reduction/1");
  await showMetrics(page, report);
  expect(!(await page.textContent("#tab-metrics")).includes("your last"), "reduction/1 has no previous stage");
  // SM throughput left out by the judge (the stage's gate does not read it) is said so in its row,
  // with DRAM throughput still shown.
  await showMetrics(page, { ...report, metrics: { ...report.metrics, sm_throughput_pct: null, dram_throughput_pct: 91.5,
    reference_sm_throughput_pct: 40.2, reference_dram_throughput_pct: 92.0,
    metrics_note: "SM throughput not measured: this stage's gate does not read it, and it takes most of the profiler's replay passes" } });
  const leftOut = await page.textContent("#tab-metrics");
  expect(leftOut.includes("not measured on this stage: its gate does not read it") && leftOut.includes("91.5 % (reference 92.0 %)"),
         `the SM row says why it is empty, DRAM keeps its figures (got ${JSON.stringify(leftOut)})`);

  // A phone: the same groups, every heading and stage inside the screen, no sideways scrolling.
  await page.setViewportSize({ width: 390, height: 844 });
  await checkStageGroups(page, fake, "two tracks on a phone");
  for (const item of await drawnNav(page)) {
    expect(item.left >= 0 && item.right <= 390, `on a phone ${item.id || item.text} fits the screen (${item.left}..${item.right})`);
  }
  const scrollWidth = await page.evaluate(() => document.documentElement.scrollWidth);
  expect(scrollWidth <= 390, `on a phone the page does not scroll sideways (width ${scrollWidth})`);
  const fontSize = await page.locator("nav button[data-stage='atomics/1']").evaluate((node) => parseFloat(getComputedStyle(node).fontSize));
  expect(fontSize >= 13, `on a phone stage titles stay readable (font ${fontSize}px)`);
  await page.screenshot({ path: screenshot.replace(/(\.png)?$/, "-tracks-narrow.png"), fullPage: true });
  expect(pageErrors.length === 0, `no script errors on the two-track page (got ${pageErrors.length})`);
  await context.close();
}

module.exports = { checkStageGroups, checkTracks };
