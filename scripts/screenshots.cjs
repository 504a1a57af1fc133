// Screenshots of the page for docs/screenshots/: every stage at 1400x900 and at 420 px wide, as a
// newcomer would see it before installing, and an instructor's progress grid (class-grid-desktop,
// class-grid-phone) of a made-up class: a roster of eight, a deadline past and one to come, and
// a few compile errors, some late. Starts `cudojo serve` on a free port with a fresh data folder
// (no GPU needed: a compile error is judged before any device is touched) and drives Debian's
// chromium with playwright-core.
//   node scripts/screenshots.cjs [CUDOJO_BINARY] [OUT_DIR]     defaults: build/cudojo docs/screenshots
"use strict";
const fs = require("node:fs");
const path = require("node:path");

const root = path.resolve(__dirname, "..");
const binary = path.resolve(process.argv[2] || path.join(root, "build", "cudojo"));
const outDir = path.resolve(process.argv[3] || path.join(root, "docs", "screenshots"));
const webDir = path.join(root, "web");
const { startServer, launchChromium, freshDataDir, cudojoJson } = require(path.join(root, "tests", "browser", "serve.cjs"));

const ROSTER = ["student_id,name,email", "s1001,Ada Lovelace,ada@example.org", "s1002,Alan Turing,", "s1003,Grace Hopper,",
                "s1004,Edsger Dijkstra,", "s1005,Barbara Liskov,", "s1006,Donald Knuth,", "s1007,Frances Allen,",
                "s1008,John Backus,"].join("\n");

// The made-up class, through the API as its instructor would make it; learners run compile errors.
async function makeClass(url, made) {
  const call = async (route, body = null, token = made.instructor.token, method = body ? "POST" : "GET") => {
    const response = await fetch(new URL(route, url), { method, body: body && JSON.stringify(body),
      headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" } });
    return response.json();
  };
  await call(`/api/classes/${made.id}/roster`, { csv: ROSTER });
  await call(`/api/classes/${made.id}/deadlines/reduction/2`, { due_at: Date.now() / 1000 - 86400 }, undefined, "PUT");
  await call(`/api/classes/${made.id}/deadlines/reduction/4`, { due_at: Date.now() / 1000 + 7 * 86400 }, undefined, "PUT");
  const { tokens } = await call(`/api/classes/${made.id}/tokens`, { learners: "all", format: "json" });
  const jobs = [];
  for (const [i, learner] of tokens.slice(0, 5).entries()) {
    for (const stage of ["reduction/1", "reduction/2", "reduction/3"].slice(0, 1 + (i % 3))) {
      jobs.push(await call("/api/jobs", { stage, language: "cuda", source: `int broken_${i} = missing;` }, learner.token));
    }
  }
  // Judged when the grid counts every run (a queued job is no attempt yet).
  const deadline = Date.now() + 60000;
  while (Date.now() < deadline) {
    const grid = await call(`/api/classes/${made.id}/grid`);
    const attempts = grid.learners.reduce((sum, l) => sum + Object.values(l.cells).reduce((s, c) => s + (c.attempts || 0), 0), 0);
    if (attempts === jobs.length) break;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

// The instructor's grid at both sizes, on its own server (one worker judges the compile errors).
async function classScreenshots(browser, written) {
  const dataDir = freshDataDir();
  const made = cudojoJson(binary, dataDir, ["class", "create", "GPU Programming", "--instructor", "Prof Ada"]);
  const { server, url } = await startServer(binary, webDir, 1, { dataDir });
  try {
    await makeClass(url, made);
    for (const [label, viewport] of [["desktop", { width: 1400, height: 900 }], ["phone", { width: 420, height: 900 }]]) {
      const page = await browser.newPage({ viewport });
      await page.addInitScript((token) => localStorage.setItem("cudojo.token", token), made.instructor.token);
      await page.goto(`${url}index.html#class/${made.id}/grid`);
      await page.waitForSelector("table.grid tbody tr", { timeout: 10000 });
      const file = path.join(outDir, `class-grid-${label}.jpg`);
      await page.screenshot({ path: file, type: "jpeg", quality: 70 });
      written.push(path.relative(root, file));
      await page.close();
    }
  } finally {
    server.kill("SIGTERM");
  }
}


(async () => {
  fs.mkdirSync(outDir, { recursive: true });
  const { server, url } = await startServer(binary, webDir, 0);
  const browser = await launchChromium(webDir);
  try {
    const stages = await (await fetch(new URL("api/stages", url))).json();
    const written = [];
    for (const [label, viewport] of [["desktop", { width: 1400, height: 900 }], ["phone", { width: 420, height: 900 }]]) {
      const page = await browser.newPage({ viewport });
      for (const stage of stages) {
        await page.goto("about:blank");  // the page reads the stage from the hash when it loads
        await page.goto(`${url}index.html#${encodeURIComponent(stage.id)}`);
        await page.waitForSelector(`[data-stage='${stage.id}'].current, [data-stage='${stage.id}'][aria-current]`,
                                   { state: "attached", timeout: 10000 });
        await page.waitForTimeout(300);  // the lesson's math, code and diagrams settle
        const file = path.join(outDir, `${stage.id.replace("/", "-")}-${label}.jpg`);
        await page.screenshot({ path: file, type: "jpeg", quality: 70 });
        written.push(path.relative(root, file));
      }
      await page.close();
    }
    await classScreenshots(browser, written);
    console.log(`wrote ${written.length} screenshots:\n${written.join("\n")}`);
  } finally {
    await browser.close();
    server.kill("SIGTERM");
  }
})().catch((error) => {
  console.error(error);
  process.exit(1);
});
