// Checks the browser tests share: expect, axe-core's serious and critical findings, and whether
// anything on the page is wider than the window (outside a box that scrolls by itself).
"use strict";
const path = require("node:path");

function expect(condition, message) {
  if (!condition) throw new Error(`expectation failed: ${message}`);
}

// Every visible element outside a clipping box (overflow other than visible) lies within the screen.
const overflowing = (page) => page.evaluate(() => {
  const width = window.innerWidth;
  const clipped = (node) => {
    for (let up = node.parentElement; up && up !== document.body; up = up.parentElement) {
      const style = getComputedStyle(up);
      if (style.overflowX !== "visible" || style.overflow !== "visible") return true;
    }
    return false;
  };
  const bad = [];
  for (const node of document.body.querySelectorAll("*")) {
    const box = node.getBoundingClientRect();
    if (box.width === 0 || box.height === 0 || clipped(node)) continue;
    if (box.left < -1 || box.right > width + 1) {
      bad.push(`${node.tagName.toLowerCase()}${node.id ? "#" + node.id : ""}.${node.className} ${Math.round(box.left)}..${Math.round(box.right)}`);
    }
  }
  return { bad, scrollWidth: document.documentElement.scrollWidth, width };
});

// axe-core in the page; serious or critical violations fail the test. The context must bypass
// the server's CSP (script-src 'self'), which would refuse the injected script.
async function checkAxe(page, label, webDir) {
  if (!(await page.evaluate(() => Boolean(window.axe)))) {
    await page.addScriptTag({ path: path.join(webDir, "node_modules", "axe-core", "axe.min.js") });
  }
  const violations = await page.evaluate(async () => (await window.axe.run(document, { resultTypes: ["violations"] })).violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map((n) => n.target.join(" ")).join(", ")}`));
  expect(violations.length === 0, `${label}: no serious or critical axe violations (got ${violations.join("; ")})`);
}

module.exports = { expect, overflowing, checkAxe };
