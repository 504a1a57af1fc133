// What the browser tests and scripts/screenshots.cjs share: `cudojo serve` on a free port with a
// fresh data folder, `cudojo admin` and `cudojo class` on that folder (the first administrator is
// made on the server machine, before the server starts), and Debian's chromium through
// playwright-core.
"use strict";
const { execFileSync, spawn } = require("node:child_process");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");

const freshDataDir = () => fs.mkdtempSync(path.join(os.tmpdir(), "cudojo-browser-"));

// Runs `cudojo ARGS --data-dir DATA_DIR --json` (admin create NAME, class create NAME --instructor
// NAME ...) and gives what it printed, parsed: { id, name, admin, token } for an administrator.
function cudojoJson(binary, dataDir, args) {
  const printed = execFileSync(binary, [...args, "--data-dir", dataDir, "--json"], { encoding: "utf8" });
  return JSON.parse(printed);
}

// Resolves to { server, url, dataDir } once the server prints its address. `dataDir`: a folder
// made ready beforehand (cudojoJson); `args`: more options for `cudojo serve`.
function startServer(binary, webDir, workers = 1, { dataDir = freshDataDir(), args = [] } = {}) {
  const server = spawn(binary, ["serve", "--port", "0", "--data-dir", dataDir, "--workers", String(workers),
                                "--web-dir", webDir, ...args],
                       { stdio: ["ignore", "pipe", "inherit"] });
  return new Promise((resolve, reject) => {
    let seen = "";
    const timer = setTimeout(() => reject(new Error(`server did not start: ${seen}`)), 15000);
    server.stdout.on("data", (chunk) => {
      seen += chunk;
      const match = /http:\/\/[\d.]+:(\d+)\//.exec(seen);
      if (match) {
        clearTimeout(timer);
        resolve({ server, url: match[0], dataDir });
      }
    });
    server.on("exit", (code) => reject(new Error(`server exited with ${code}: ${seen}`)));
  });
}

// `extraArgs`: more chromium switches (a test that loads file:// pages allows them to read files).
function launchChromium(webDir, extraArgs = []) {
  const { chromium } = require(path.join(webDir, "node_modules", "playwright-core"));
  return chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync", ...extraArgs],
  });
}

// The frame of a browser test: a server (startServer's options, and `workers`) and a browser, then
// `body({ url, browser, dataDir })`; both are closed however it ends, and the process exits 0, or 1
// with the error printed.
function runBrowserTest(binary, webDir, body, { workers = 1, ...options } = {}) {
  (async () => {
    const { server, url, dataDir } = await startServer(binary, webDir, workers, options);
    const browser = await launchChromium(webDir);
    let failed = false;
    try {
      await body({ url, browser, dataDir });
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
}

module.exports = { startServer, launchChromium, freshDataDir, cudojoJson, runBrowserTest };
