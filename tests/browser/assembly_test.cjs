// Issue #28, "See the machine": the Assembly tab against a real server (no GPU: nothing is run).
//   node assembly_test.cjs CUDOJO_BINARY WEB_DIR OUT_DIR
// 1. A learner opens reduction/3 and the Assembly tab: the table of resources has a row for their
//    kernel and one for the reference, with the figures `cudojo asm --json` gives for the starter.
// 2. Their source beside its machine code: SASS where the server has nvdisasm, else PTX with the
//    server's note saying why (the same code draws both). A click on the source line holding
//    atomicAdd lights exactly the machine-code lines tied to it; a click on one of those lights that
//    source line; the keyboard does the same (a listing is one Tab stop, Enter chooses).
// 3. A kernel that does not compile shows the compiler's diagnostics.
// Each state at 1400x900 and 420 px, light and dark, with axe; screenshots in OUT_DIR.
// Without ptxas the server cannot show assembly: the test says so and stops (exit 0).
"use strict";
const { execFileSync } = require("node:child_process");
const fs = require("node:fs");
const path = require("node:path");
const serve = require("./serve.cjs");
const { expect } = require("./checks.cjs");
const steps = require("./learner_steps.cjs");
const { signUp, openStage } = steps;

const [binary, webDir, outDir] = process.argv.slice(2).map((arg) => path.resolve(arg));
fs.mkdirSync(outDir, { recursive: true });
const starterFile = path.join(__dirname, "..", "..", "course", "reduction", "03-block-tree", "starter.cu");

const checkLook = (page, label, options = {}) => steps.checkLook(page, label, { outDir, webDir, ...options });

// What `cudojo asm` says of the starter, the figures the page must show; null without ptxas.
function cliView() {
  try {
    return JSON.parse(execFileSync(binary, ["asm", "reduction/3", starterFile, "--ptx", "--sass", "--json"], { encoding: "utf8" }));
  } catch (error) {
    const printed = String(error.stdout || "");
    if (/no_ptxas|ptxas/.test(printed)) return null;
    throw error;
  }
}

// The ids of the lit lines of a listing.
const litIn = (page, listing) => page.$$eval(`${listing} .asm-line.lit`, (lines) => lines.map((line) => line.id));

async function checkResources(page, view) {
  await page.waitForSelector("#assembly-view table.asm-resources", { timeout: 60000 });
  for (const whose of ["yours", "reference"]) {
    const expected = view.kernels.find((k) => k.whose === whose && k.kernel === "reduce");
    const row = (field) => page.textContent(`#assembly-view td[data-whose='${whose}'][data-field='${field}']`);
    const got = { registers: await row("registers"), barriers: await row("barriers"), spills: await row("spills"),
                  stack: await row("stack"), shared: await row("shared"), occupancy: await row("occupancy"), limit: await row("limited-by") };
    const r = expected.resources;
    expect(got.registers === String(r.registers) && got.barriers === String(r.barriers), `${whose}: registers ${r.registers}, barriers ${r.barriers} (got ${JSON.stringify(got)})`);
    expect(got.spills === `${r.spill_store_bytes} B / ${r.spill_load_bytes} B` && got.stack === `${r.stack_frame_bytes} B` &&
           got.shared === `${r.shared_bytes} B`, `${whose}: spills, stack and static shared as ptxas says (got ${JSON.stringify(got)})`);
    expect(got.occupancy.startsWith(`${Math.round(100 * expected.occupancy.fraction)} %`) && got.limit === expected.occupancy.limited_by,
           `${whose}: occupancy and its limit (got ${got.occupancy}, ${got.limit})`);
  }
  console.log("resources: yours beside the reference, as `cudojo asm` reports them");
}

async function checkLinkedLines(page, view, atomicLine) {
  const kind = view.sass ? "sass" : "ptx";
  const tied = kind === "sass" ? view.sass.flatMap((fn) => fn.lines).filter((l) => l.line === atomicLine)
    : view.ptx.filter((l) => l.line === atomicLine);
  expect(tied.length > 0, `the ${kind} has lines tied to line ${atomicLine}`);
  expect(await page.getAttribute("#assembly-view .asm-columns", "data-kind") === kind, `the ${kind} listing is shown`);
  if (kind === "ptx") {
    const note = await page.textContent("#assembly-sass-note");
    expect(note.includes(view.sass_note), `the page says why there is no SASS (${note})`);
  }
  const partners = await page.$$eval(`#assembly-code .asm-line[data-source-line='${atomicLine}']`, (lines) => lines.map((line) => line.id));
  expect(partners.length === tied.length, `the listing ties ${tied.length} lines to line ${atomicLine} (got ${partners.length})`);

  // A click on the source line: exactly its machine-code lines light up, and the first is in view.
  await page.click(`#assembly-source .asm-line[data-source-line='${atomicLine}']`);
  const lit = await litIn(page, "#assembly-code");
  expect(lit.join() === partners.join(), `a click on line ${atomicLine} lights exactly its ${partners.length} machine-code lines (got ${lit.join()})`);
  expect((await litIn(page, "#assembly-source")).join() === `asm-src-${atomicLine}`, "... and that source line");
  const litText = await page.$$eval("#assembly-code .asm-line.lit", (lines) => lines.map((line) => line.textContent).join("\n"));
  expect(kind === "sass" ? /RED|ATOM/.test(litText) : litText.includes("atom.global.add.f32"), `the atomic is among them (${litText})`);
  const inView = await page.$eval(`#${partners[0]}`, (line) => {
    const pane = line.closest(".asm-listing");
    return line.offsetTop >= pane.scrollTop && line.offsetTop + line.offsetHeight <= pane.scrollTop + pane.clientHeight;
  });
  expect(inView, "the first of them is scrolled into view in its listing");

  // A click elsewhere clears them; a click on one machine-code line lights its source line and its partners.
  await page.click("#assembly-source .asm-line[data-source-line='1']");
  expect((await litIn(page, "#assembly-code")).length === 0, "a comment line lights no machine code");
  await page.click(`#${partners[partners.length - 1]}`);
  expect((await litIn(page, "#assembly-source")).join() === `asm-src-${atomicLine}`, `a click on a machine-code line lights source line ${atomicLine}`);
  expect((await litIn(page, "#assembly-code")).join() === partners.join(), "... and every machine-code line of it");

  // The keyboard: Tab stops on the source listing; Home, Down to the line, Enter chooses it.
  await page.click("#assembly-source .asm-line[data-source-line='1']");
  await page.focus("#assembly-source");
  await page.keyboard.press("Home");
  for (let line = 1; line < atomicLine; ++line) await page.keyboard.press("ArrowDown");
  expect(await page.getAttribute("#assembly-source", "aria-activedescendant") === `asm-src-${atomicLine}`, "Down moves the active line");
  await page.keyboard.press("Enter");
  expect((await litIn(page, "#assembly-code")).join() === partners.join(), "Enter on the line lights its machine code");
  expect(await page.getAttribute(`#${partners[0]}`, "aria-selected") === "true", "... which says so to a screen reader (aria-selected)");
  console.log(`linked lines (${kind}): line ${atomicLine} lights its ${partners.length} machine-code lines, and back; by click and by keyboard`);
}

serve.runBrowserTest(binary, webDir, async ({ url, browser }) => {
  const view = cliView();
  if (!view) {
    console.log("SKIPPED: no ptxas here (`cudojo asm` cannot assemble), so the server cannot show assembly");
    return;
  }
  const starter = fs.readFileSync(starterFile, "utf8");
  const atomicLine = starter.split("\n").findIndex((line) => line.includes("atomicAdd")) + 1;
  expect(atomicLine > 0, "the starter has an atomicAdd line");

  const context = await browser.newContext({ viewport: { width: 1400, height: 900 }, bypassCSP: true });
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (error) => errors.push(error));
  const posted = [];
  page.on("request", (request) => { if (request.url().endsWith("/api/assembly")) posted.push(JSON.parse(request.postData())); });
  await page.goto(url);
  await signUp(page, "Ada Assembly");
  await openStage(page, "reduction/3");
  expect(await page.evaluate(() => window.cudojoEditor.getValue()) === starter, "the editor holds the starter");

  await page.click("#tabbtn-assembly");
  await checkResources(page, view);
  expect(posted.length === 1 && posted[0].stage === "reduction/3" && posted[0].language === "cuda" && posted[0].source === starter,
         `opening the tab posts the editor's text once (${posted.length})`);
  await checkLinkedLines(page, view, atomicLine);
  await page.click(`#assembly-source .asm-line[data-source-line='${atomicLine}']`);
  // Playwright scrolled each clicked line into view, sideways too; a learner's click does not.
  await page.$$eval(".asm-listing", (listings) => { for (const listing of listings) listing.scrollLeft = 0; });
  await page.locator("#tab-assembly").scrollIntoViewIfNeeded();
  await page.screenshot({ path: path.join(outDir, "assembly-reduction-3.png") });
  await checkLook(page, "assembly", { focus: "#assembly-code .asm-line.lit" });

  // Opening the tab again with the same text asks nothing; an edit says the view is old.
  await page.click("#tabbtn-result");
  await page.click("#tabbtn-assembly");
  expect(posted.length === 1, "the same text is not compiled twice");
  // Line 5 loses its end (the line count stays: a longer source scrolls the editor at 420 px, which axe
  // flags in CodeMirror's own scroller).
  await page.evaluate(() => {
    const editor = window.cudojoEditor;
    editor.replaceRange("    int i = blockIdx.x * blockDim.x + ;", { line: 4, ch: 0 }, { line: 4, ch: editor.getLine(4).length });
  });
  expect(await page.isVisible("#assembly-stale"), "after an edit the tab says to show the assembly again");

  // 3. A compile error: the diagnostics, a link to the learner's line.
  await page.click("#assembly-show");
  await page.waitForSelector("#assembly-view .diagnostics li", { timeout: 60000 });
  expect(await page.isHidden("#assembly-stale"), "the view is current again");
  const diagnostic = await page.textContent("#assembly-view .diagnostics li");
  expect(/error/.test(diagnostic), `the compiler's error is shown (${diagnostic})`);
  expect(await page.locator("#assembly-view .diagnostics a.line[data-line='5']").count() >= 1, "with a link to the line that does not compile");
  expect(await page.locator("#assembly-view table.asm-resources").count() === 0, "and no table of resources");
  await checkLook(page, "assembly-compile-error", { focus: "#assembly-view .diagnostics" });
  expect(errors.length === 0, `no script errors (${errors.map((e) => e.message).join("; ")})`);
  console.log("compile error: the diagnostics with line links, no table");
  await context.close();
}, { workers: 0 });
