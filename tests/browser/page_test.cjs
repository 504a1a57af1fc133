// Browser test of the page: Debian's chromium driven by playwright-core.
//   node page_test.cjs CUDOJO_BINARY WEB_DIR SCREENSHOT_PNG
// Starts `cudojo serve` on a free port with a fresh data folder, opens the page, signs in,
// chooses stage 3, checks the lesson and the starter, puts a compile error on a known line, runs,
// and expects the verdict and a clickable diagnostic at that line. No GPU is needed: compiling
// happens before any device is touched.
"use strict";
const { spawn } = require("node:child_process");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");

const [binary, webDir, screenshot] = process.argv.slice(2);
const { chromium } = require(path.join(webDir, "node_modules", "playwright-core"));

function startServer() {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "cudojo-browser-"));
  const server = spawn(binary, ["serve", "--port", "0", "--data-dir", dataDir, "--workers", "1", "--web-dir", webDir],
                       { stdio: ["ignore", "pipe", "inherit"] });
  return new Promise((resolve, reject) => {
    let seen = "";
    const timer = setTimeout(() => reject(new Error(`server did not start: ${seen}`)), 15000);
    server.stdout.on("data", (chunk) => {
      seen += chunk;
      const match = /http:\/\/[\d.]+:(\d+)\//.exec(seen);
      if (match) {
        clearTimeout(timer);
        resolve({ server, url: match[0] });
      }
    });
    server.on("exit", (code) => reject(new Error(`server exited with ${code}: ${seen}`)));
  });
}

function expect(condition, message) {
  if (!condition) throw new Error(`expectation failed: ${message}`);
}

(async () => {
  const { server, url } = await startServer();
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  let failed = false;
  try {
    const page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
    await page.goto(url);
    await page.fill("#learner-name", "playwright");
    await page.click("#signin-button");
    await page.waitForSelector("#who:has-text('signed in as playwright')");

    await page.click("nav button[data-stage='reduction/3']");
    await page.waitForSelector("#lesson:has-text('Guard the value, not the thread')");
    const starter = await page.evaluate(() => window.cudojoEditor.getValue());
    expect(starter.includes("atomicAdd(out, X[i]);"), "the editor holds the stage 3 starter");
    expect(await page.isVisible(".CodeMirror-linenumber"), "the editor shows line numbers");
    expect(await page.isVisible(".cm-keyword"), "the editor highlights syntax");

    // Type a line using an undeclared name right after the atomicAdd line, as a learner would.
    const atomicLine = starter.split("\n").findIndex((line) => line.includes("atomicAdd(out, X[i]);"));
    const errorLine = atomicLine + 2;  // 1-based number of the new line
    await page.evaluate((line) => {
      const editor = window.cudojoEditor;
      editor.focus();
      editor.setCursor({ line, ch: editor.getLine(line).length });
    }, atomicLine);
    await page.keyboard.press("Enter");
    await page.keyboard.type("total_so_far += X[i];");
    await page.click("#run");

    await page.waitForSelector(".verdict:has-text('compile_error')", { timeout: 60000 });
    const link = page.locator(`#tab-result a.line[data-line='${errorLine}']`);
    expect(await link.count() >= 1, `a diagnostic links to line ${errorLine}`);
    const message = await page.textContent("#tab-result .diagnostics");
    expect(message.includes("total_so_far"), "the diagnostic names the undeclared identifier");
    await link.first().click();
    const cursorLine = await page.evaluate(() => window.cudojoEditor.getCursor().line + 1);
    expect(cursorLine === errorLine, `clicking the link moves the cursor to line ${errorLine} (got ${cursorLine})`);
    await page.click(".tabs button[data-tab='history']");
    await page.waitForSelector("#tab-history .verdict:has-text('compile_error')");
    await page.click(".tabs button[data-tab='result']");
    await page.screenshot({ path: screenshot, fullPage: true });
    console.log(`browser test passed: compile error shown at line ${errorLine}; screenshot ${screenshot}`);
  } catch (error) {
    failed = true;
    console.error(error);
  } finally {
    await browser.close();
    server.kill("SIGTERM");
  }
  process.exit(failed ? 1 : 0);
})().catch((error) => {
  console.error(error);
  process.exit(1);
});
