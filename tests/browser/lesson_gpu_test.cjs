// Browser test of the lessons as a learner reads them on a real `cudojo serve` (no GPU, so no GPU
// judges there and the lessons' figures are the H200's, as an example): every stage's lesson, at
// 1400x900 and at 420 px wide, in the light and the dark colour scheme. Debian's chromium driven
// by playwright-core.
//   node tests/browser/lesson_gpu_test.cjs [CUDOJO_BINARY] [WEB_DIR] [SCREENSHOT_DIR]
// Expects, for every lesson:
// - the column is readable at 1400 px: at least 560 px of text width, no code block wider than it
//   (the course keeps its code within 70 columns), no display formula that needs a scroll;
// - at 420 px, what is wider (code, formulas, diagrams) scrolls inside its own box, never the page;
// - diagrams keep their smallest label (10 px as drawn) at 9 px or more on screen;
// - no figure placeholder ({{...}}) left, and no path into the repository (evidence/...,
//   calibration/*.json, tests/...) that a learner on the page could not open;
// - a lesson that quotes calibrated figures says which GPU they are from, here "the NVIDIA H200 ...
//   as an example", and /api/stages/ID says so too (lesson_figures);
// - axe-core finds nothing serious or critical (on the lessons of AXE_STAGES, which hold every kind
//   of content).
// And the Rust signature above the editor is what the starters write, `#[kernel] fn ...`.
// SCREENSHOT_DIR, when given, gets lesson-<stage>-<scheme>-<width>.png of a few lessons.
"use strict";
const fs = require("node:fs");
const path = require("node:path");
const { runBrowserTest } = require("./serve.cjs");
const { expect, overflowing } = require("./checks.cjs");

const root = path.resolve(__dirname, "..", "..");
const binary = path.resolve(process.argv[2] || path.join(root, "build", "cudojo"));
const webDir = path.resolve(process.argv[3] || path.join(root, "web"));
const screenshotDir = process.argv[4] ? path.resolve(process.argv[4]) : null;

// The smallest label in web/diagrams/*.svg is 10 px as drawn; below 9 px on screen it is hard to read.
const SMALLEST_DRAWN_LABEL_PX = 10;
const LEGIBLE_LABEL_PX = 9;
const REPOSITORY_PATH = /\b(?:evidence|calibration|tests|scripts|docs|src)\/[\w./-]+|\b[\w-]+\.json\b/;
const SCREENSHOT_STAGES = new Set(["reduction/6", "reduction/7"]);
// axe-core takes seconds a page: it reads the lessons with every kind of content (math, tables,
// diagrams, code, the figures note).
const AXE_STAGES = new Set(["reduction/2", "reduction/3", "reduction/6", "reduction/7", "atomics/2"]);

// Every failed expectation is kept, so one run shows each of the items that fail, not the first.
const failures = [];
const check = (condition, message) => { if (!condition) failures.push(message); };

async function openLesson(page, url, stageId) {
  await page.goto("about:blank");  // the page reads the stage from the hash when it loads
  await page.goto(`${url}index.html#${encodeURIComponent(stageId)}`);
  await page.waitForSelector("#lesson.lesson-body h1", { state: "attached", timeout: 10000 });
  // Diagrams load lazily: each is brought into view, and given 5 s to load.
  await page.evaluate(async () => {
    for (const img of document.querySelectorAll("#lesson img")) {
      img.scrollIntoView({ block: "center" });
      await Promise.race([img.decode().catch(() => null), new Promise((done) => setTimeout(done, 5000))]);
    }
    document.getElementById("lesson").scrollTop = 0;
  });
  await page.waitForTimeout(150);  // KaTeX's fonts settle
}

// axe-core's serious and critical findings within the lesson (the editor beside it is another
// test's: page_test.cjs).
async function lessonAxe(page) {
  if (!(await page.evaluate(() => Boolean(window.axe)))) {
    await page.addScriptTag({ path: path.join(webDir, "node_modules", "axe-core", "axe.min.js") });
  }
  return page.evaluate(async () => (await window.axe.run("#lesson", { resultTypes: ["violations"] })).violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map((n) => n.target.join(" ")).join(", ")}`));
}

function lessonFacts(page) {
  return page.evaluate(() => {
    const lesson = document.getElementById("lesson");
    const style = getComputedStyle(lesson);
    const textWidth = lesson.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    const box = (element) => ({ scroll: element.scrollWidth, client: element.clientWidth, overflowX: getComputedStyle(element).overflowX });
    const note = lesson.querySelector("blockquote.lesson-figures");
    return {
      textWidth,
      text: lesson.textContent,
      pres: [...lesson.querySelectorAll("pre")].map((pre) => ({ ...box(pre), first: pre.textContent.split("\n")[0].slice(0, 50) })),
      formulas: [...lesson.querySelectorAll(".katex-display")].map((display) => ({ ...box(display), text: display.textContent.slice(0, 40) })),
      diagrams: [...lesson.querySelectorAll("figure.lesson-diagram img")].map((img) => ({
        src: img.src, shown: img.getBoundingClientRect().width, natural: img.naturalWidth,
        scroller: box(img.closest(".diagram-scroll") || img.parentElement) })),
      note: note ? note.textContent.trim() : null,
    };
  });
}

function checkLesson(stageId, facts, width, label, usesFigures) {
  if (width >= 1400) {
    check(facts.textWidth >= 560, `${label}: the lesson has at least 560 px of text width (got ${facts.textWidth})`);
    for (const pre of facts.pres) {
      check(pre.scroll <= pre.client + 1, `${label}: the code block "${pre.first}" fits the column (${pre.scroll} > ${pre.client} px)`);
    }
    for (const formula of facts.formulas) {
      check(formula.scroll <= formula.client + 1, `${label}: the formula "${formula.text}" fits the column, not clipped (${formula.scroll} > ${formula.client} px)`);
    }
  }
  for (const item of [...facts.pres, ...facts.formulas]) {
    if (item.scroll > item.client + 1) check(/auto|scroll/.test(item.overflowX), `${label}: what is wider than the column scrolls (${item.overflowX})`);
  }
  for (const diagram of facts.diagrams) {
    const labelPx = (diagram.shown / diagram.natural) * SMALLEST_DRAWN_LABEL_PX;
    check(diagram.natural > 0, `${label}: the diagram ${diagram.src} loaded`);
    check(labelPx >= LEGIBLE_LABEL_PX, `${label}: ${path.basename(diagram.src)}'s smallest label is ${labelPx.toFixed(1)} px on screen (>= ${LEGIBLE_LABEL_PX})`);
    if (diagram.scroller.scroll > diagram.scroller.client + 1) check(/auto|scroll/.test(diagram.scroller.overflowX), `${label}: a diagram wider than the column scrolls`);
  }
  check(!facts.text.includes("{{"), `${label}: no figure placeholder is left in the lesson`);
  const repositoryPath = REPOSITORY_PATH.exec(facts.text);
  check(!repositoryPath, `${label}: the lesson points at no repository file (found "${repositoryPath && repositoryPath[0]}")`);
  if (usesFigures) {
    check(facts.note && facts.note.includes("NVIDIA H200") && facts.note.includes("as an example"),
           `${label}: the lesson says its figures are the NVIDIA H200's, as an example (note: ${facts.note})`);
  }
}

runBrowserTest(binary, webDir, async ({ url, browser }) => {
  const stages = await (await fetch(new URL("api/stages", url))).json();
  expect(stages.length >= 12, `the course has its 12 stages (got ${stages.length})`);
  const usesFigures = new Set();
  for (const stage of stages) {
    const detail = await (await fetch(new URL(`api/stages/${stage.id}`, url))).json();
    const source = fs.readFileSync(path.join(root, "course", stage.id.split("/")[0],
                                             fs.readdirSync(path.join(root, "course", stage.id.split("/")[0]))
                                               .find((dir) => dir.startsWith(String(stage.id.split("/")[1]).padStart(2, "0"))),
                                             "lesson.md"), "utf8");
    if (source.includes("{{")) {
      usesFigures.add(stage.id);
      check(detail.lesson_figures && detail.lesson_figures.gpu === "NVIDIA H200" && detail.lesson_figures.example === true,
             `${stage.id}: /api/stages says the figures are the NVIDIA H200's, as an example (got ${JSON.stringify(detail.lesson_figures)})`);
    }
    check(!detail.lesson_markdown.includes("{{"), `${stage.id}: the lesson's markdown from the API has its figures filled`);
  }
  check(usesFigures.size >= 8, `the lessons that quote calibrated figures use placeholders (${usesFigures.size} do)`);
  const rust = await (await fetch(new URL("api/stages/reduction/3", url))).json();
  check(rust.languages.rust.signature === "#[kernel] fn reduce(x: *const f32, out: *mut f32, n: i32)",
         `the Rust signature is the starters' form (got ${rust.languages.rust.signature})`);

  for (const scheme of ["light", "dark"]) {
    for (const [width, height] of [[1400, 900], [420, 900]]) {
      const context = await browser.newContext({ viewport: { width, height }, colorScheme: scheme, bypassCSP: true });
      const page = await context.newPage();
      const errors = [];
      page.on("pageerror", (error) => errors.push(error.message));
      for (const stage of stages) {
        const label = `${stage.id}, ${scheme}, ${width} px`;
        await openLesson(page, url, stage.id);
        checkLesson(stage.id, await lessonFacts(page), width, label, usesFigures.has(stage.id));
        const wide = await overflowing(page);
        check(wide.bad.length === 0 && wide.scrollWidth <= wide.width, `${label}: nothing wider than the window: ${wide.bad.slice(0, 4).join("; ")}`);
        if (AXE_STAGES.has(stage.id)) {
          const findings = await lessonAxe(page);
          check(findings.length === 0, `${label}: axe finds nothing serious in the lesson: ${findings.join("; ")}`);
        }
        if (screenshotDir && SCREENSHOT_STAGES.has(stage.id)) {
          fs.mkdirSync(screenshotDir, { recursive: true });
          await page.screenshot({ path: path.join(screenshotDir, `lesson-${stage.id.replace("/", "-")}-${scheme}-${width}.png`) });
        }
      }
      // The Rust signature above the editor, as the learner sees it.
      await openLesson(page, url, "reduction/3");
      if (await page.locator("#language option[value='rust']").count()) {
        await page.selectOption("#language", "rust");
        const signature = (await page.textContent("#signature")).trim();
        check(signature.startsWith("#[kernel] fn reduce("), `${scheme}, ${width} px: the page shows the Rust signature the starter uses (got "${signature}")`);
      }
      check(errors.length === 0, `${scheme}, ${width} px: no script errors: ${errors.join("; ")}`);
      await context.close();
      console.log(`ok: ${stages.length} lessons, ${scheme} scheme, ${width} px`);
    }
  }
  const distinct = [...new Set(failures)];
  expect(distinct.length === 0, `${distinct.length} expectations failed:\n  ${distinct.slice(0, 40).join("\n  ")}`);
  console.log("lesson_gpu_test: passed");
}, { workers: 0 });
