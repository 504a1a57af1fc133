// Screenshots of the page for docs/screenshots/: every stage at 1400x900 and at 420 px wide, as a
// newcomer would see it before installing. Starts `cudojo serve` on a free port with a fresh data
// folder (no GPU needed) and drives Debian's chromium with playwright-core.
//   node scripts/screenshots.cjs [CUDOJO_BINARY] [OUT_DIR]     defaults: build/cudojo docs/screenshots
"use strict";
const fs = require("node:fs");
const path = require("node:path");

const root = path.resolve(__dirname, "..");
const binary = path.resolve(process.argv[2] || path.join(root, "build", "cudojo"));
const outDir = path.resolve(process.argv[3] || path.join(root, "docs", "screenshots"));
const webDir = path.join(root, "web");
const { startServer, launchChromium } = require(path.join(root, "tests", "browser", "serve.cjs"));


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
    console.log(`wrote ${written.length} screenshots:\n${written.join("\n")}`);
  } finally {
    await browser.close();
    server.kill("SIGTERM");
  }
})().catch((error) => {
  console.error(error);
  process.exit(1);
});
