// Steps the learner's browser tests share (learner_run_test.cjs, share_test.cjs): signing up from the
// header's form, opening a stage as a learner does, and checking the page's look in one state at both
// widths and both schemes.
"use strict";
const path = require("node:path");
const { expect, overflowing, checkAxe } = require("./checks.cjs");

async function signUp(page, name) {
  await page.fill("#learner-name", name);
  await page.click("#signin-button");
  await page.waitForSelector(`#who:has-text('${name}')`);
  await page.click("#token-done");
}

async function openStage(page, id) {
  await page.click(`nav button[data-stage='${id}']`);
  await page.waitForFunction((want) => location.hash === `#${want}` && !document.querySelector("#workbench").hidden, id);
  await page.waitForFunction(() => window.cudojoEditor && window.cudojoEditor.getValue().length > 0);
}

// The page's look in this state at 1400x900 and 420 px, light and dark: nothing wider than a phone,
// axe; a PNG of each in `outDir`. `focus`: a selector brought into view first. `jpeg`: a name for
// the screenshots kept for docs/screenshots/ (light at 1400x900, both schemes at 420 px).
async function checkLook(page, label, { outDir, webDir, focus = null, jpeg = null }) {
  const name = label.replace(/\W+/g, "-");
  for (const scheme of ["light", "dark"]) {
    await page.emulateMedia({ colorScheme: scheme });
    for (const [width, height] of [[1400, 900], [420, 900]]) {
      await page.setViewportSize({ width, height });
      if (focus) await page.locator(focus).first().scrollIntoViewIfNeeded();
      if (width === 420) {
        const { bad, scrollWidth } = await overflowing(page);
        expect(bad.length === 0 && scrollWidth <= 420, `${label} at 420 px ${scheme}: nothing wider than the screen (${bad.slice(0, 4).join("; ")})`);
      }
      await checkAxe(page, `${label} ${width} px ${scheme}`, webDir);
      await page.screenshot({ path: path.join(outDir, `${name}-${width}-${scheme}.png`) });
      if (jpeg && (width === 420 || scheme === "light")) {
        const kept = `${jpeg}-${width === 420 ? "phone" : "desktop"}${scheme === "dark" ? "-dark" : ""}.jpg`;
        await page.screenshot({ path: path.join(outDir, kept), type: "jpeg", quality: 70 });
      }
    }
  }
  await page.emulateMedia({ colorScheme: "light" });
  await page.setViewportSize({ width: 1400, height: 900 });
}

module.exports = { signUp, openStage, checkLook };
