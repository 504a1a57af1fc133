// What the browser tests and scripts/screenshots.cjs share: `cudojo serve` on a free port with a
// fresh data folder, and Debian's chromium through playwright-core.
"use strict";
const { spawn } = require("node:child_process");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");

// Resolves to { server, url } once the server prints its address.
function startServer(binary, webDir, workers = 1) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "cudojo-browser-"));
  const server = spawn(binary, ["serve", "--port", "0", "--data-dir", dataDir, "--workers", String(workers),
                                "--web-dir", webDir],
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

// `extraArgs`: more chromium switches (a test that loads file:// pages allows them to read files).
function launchChromium(webDir, extraArgs = []) {
  const { chromium } = require(path.join(webDir, "node_modules", "playwright-core"));
  return chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync", ...extraArgs],
  });
}

module.exports = { startServer, launchChromium };
