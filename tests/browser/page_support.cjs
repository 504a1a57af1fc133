// What the page's browser tests (page_test.cjs and the page_*.cjs checks it runs) share: the
// arguments, the URLs and tokens seen, reading the page's state and drafts, opening a stage, and
// the vendor files and newer routes a server may lack.
"use strict";
const fs = require("node:fs");
const path = require("node:path");

const [binary, webDir, screenshot] = process.argv.slice(2).map((arg) => path.resolve(arg));
const serve = require("./serve.cjs");
const checks = require("./checks.cjs");
const { expect, overflowing } = checks;
const checkAxe = (page, label) => checks.checkAxe(page, label, webDir);


// Every URL the pages ask for (EventSource included), and every token the test saw: a token
// travels in the Authorization header only, never in a URL, where every proxy's log would keep it.
const requestUrls = [];
const tokensSeen = new Set();
const recordRequests = (target) => target.on("request", (request) => requestUrls.push(request.url()));

function expectNoTokenInUrls() {
  expect(requestUrls.length > 0 && tokensSeen.size > 0, "requests and tokens were recorded");
  const leaked = requestUrls.filter((u) => /[?&]token=/.test(u) || [...tokensSeen].some((t) => u.includes(t)));
  expect(leaked.length === 0, `no request URL holds a token (${requestUrls.length} URLs; got ${leaked.slice(0, 3).join(" ")})`);
}

const isPost = (request, pathname) => request.method() === "POST" && new URL(request.url()).pathname === pathname;
const isEvents = (request, id) => new URL(request.url()).pathname === `/api/jobs/${id}/events`;
const isPoll = (request, id) => request.method() === "GET" && new URL(request.url()).pathname === `/api/jobs/${id}`;

const editorValue = (page) => page.evaluate(() => window.cudojoEditor.getValue());
const editorMode = (page) => page.evaluate(() => ({
  option: window.cudojoEditor.getOption("mode"), loaded: window.cudojoEditor.getMode().name }));
const stored = (page, key) => page.evaluate((name) => localStorage.getItem(name), key);
// The signed-in learner's local copy of a draft (web/js/drafts.js): {stage, language, source, sent}.
const localDraft = (page, stage, language) => page.evaluate(([s, l]) =>
  JSON.parse(localStorage.getItem(`cudojo.drafts.${localStorage.getItem("cudojo.learner-id")}.${s}.${l}`) || "null"), [stage, language]);

// The draft the server keeps (GET /api/drafts), asked with the page's own token; null for none.
const serverDraft = (page, stage, language) => page.evaluate(async ([s, l]) => {
  const answer = await fetch(`/api/drafts?stage=${encodeURIComponent(s)}`, {
    headers: { Authorization: `Bearer ${localStorage.getItem("cudojo.token")}` } }).then((r) => r.json());
  const found = (answer.drafts || []).find((draft) => draft.language === l);
  return found ? found.source : null;
}, [stage, language]);

// A draft is sent a second after typing stops: the server has `text`, and the local copy says it
// was sent.
async function expectDraftSaved(page, stage, language, text, label) {
  const deadline = Date.now() + 8000;
  let got = null;
  while ((got = await serverDraft(page, stage, language)) !== text && Date.now() < deadline) await page.waitForTimeout(100);
  expect(got === text, `${label}: the server keeps the ${stage} ${language} draft (got ${JSON.stringify(got && got.slice(0, 80))})`);
  while (!((await localDraft(page, stage, language)) || {}).sent && Date.now() < deadline) await page.waitForTimeout(100);
  const copy = await localDraft(page, stage, language);
  expect(copy && copy.source === text && copy.sent === true, `${label}: the learner's local copy holds it, marked sent`);
}

// The page is ES modules (web/js/) and keeps no globals but window.cudojoEditor, so a check that
// looks inside it imports the module it needs in the page: a module is one instance per URL, the
// very one the page runs. What the modules share is in web/js/state.js; `inState(check, arg)` is
// an expression for page.evaluate that calls check(state, arg) there. `check` travels as source
// text, so it may use only its parameters; `arg` travels as JSON.
const inState = (check, arg = null) =>
  `(async () => (${check})((await import("/js/state.js")).state, ${JSON.stringify(arg)}))()`;
const readState = (page, check, arg) => page.evaluate(inState(check, arg));

// page.waitForFunction for the page's state: asked every 50 ms; while the page reloads the answer
// is "not yet".
async function waitForState(page, check, arg = null, timeout = 30000) {
  const deadline = Date.now() + timeout;
  while (!(await readState(page, check, arg).catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeout} ms waiting for ${check} (${JSON.stringify(arg)})`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

// The page's own drawing of a report (web/js/report.js) and of its metrics (web/js/metrics.js),
// for reports the test makes up.
const showReport = (page, report) => page.evaluate(async (r) => (await import("/js/report.js")).showReport(r), report);
const showMetrics = (page, report) => page.evaluate(async (r) => (await import("/js/metrics.js")).showMetrics(r), report);
const stageOpen = (state, id) => Boolean(state.stage && state.stage.id === id);

async function expectLanguage(page, stage, language, mode, loaded) {
  await page.waitForSelector(`#workbench[data-language='${language}']`);
  expect(await page.inputValue("#language") === language, `the switch shows ${language}`);
  const signature = stage.languages[language].signature;
  expect(await page.textContent("#signature") === signature, `the ${language} signature is shown: ${signature}`);
  const { option, loaded: got } = await editorMode(page);
  expect(option === mode && got === loaded, `editor mode ${mode} (${loaded}) for ${language}, got ${option} (${got})`);
}

// Puts `text` on a new line after the first line containing `after`; gives the new line's number.
async function typeLineAfter(page, after, text) {
  const index = (await editorValue(page)).split("\n").findIndex((line) => line.includes(after));
  expect(index >= 0, `the editor has a line with ${after}`);
  await page.evaluate((line) => {
    const editor = window.cudojoEditor;
    editor.focus();
    editor.setCursor({ line, ch: editor.getLine(line).length });
  }, index);
  await page.keyboard.press("Enter");
  await page.keyboard.type(text);
  return index + 2;
}

// The page loads KaTeX, highlight.js and jsdiff from /vendor/...; a server that does not serve
// them yet (404) gets them from web/node_modules here, so the page is tested either way.
const VENDOR = { katex: ["katex", "dist"], highlight: ["@highlightjs", "cdn-assets"], diff: ["diff", "dist"] };
async function serveVendorFallback(context, webDir) {
  await context.route((u) => /^\/vendor\/(katex|highlight|diff)\//.test(u.pathname), async (route) => {
    const response = await route.fetch().catch(() => null);
    if (response && response.status() !== 404) return route.fulfill({ response });
    const [, name, rest] = /^\/vendor\/([^/]+)\/(.*)$/.exec(new URL(route.request().url()).pathname);
    const file = path.join(webDir, "node_modules", ...VENDOR[name], rest);
    if (!fs.existsSync(file)) return route.fulfill({ status: 404, body: "" });
    return route.fulfill({ path: file });
  });
}

// Routes of the newer API (/api/me, /api/progress, /api/stages/ID/leaderboard): the server's own
// answer when it has the route, else a made-up one (a 404 means this binary predates the route).
// `fake(route)` answers like the documented route.
async function routeOrFake(context, match, fake, used) {
  await context.route(match, async (route) => {
    const response = await route.fetch().catch(() => null);
    if (response && response.status() !== 404) return route.fulfill({ response });
    used.add(new URL(route.request().url()).pathname.replace(/\/api\/stages\/.*\//, "/api/stages/ID/"));
    return fake(route);
  });
}

// The gutter's width without its border, and whether the code starts right of it. An editor
// created hidden and never refreshed has a 2 px gutter (its border) with the numbers over the code.
const gutterWidth = (page) => page.evaluate(() => {
  const gutters = document.querySelector(".CodeMirror-gutters");
  const line = document.querySelector(".CodeMirror-line").getBoundingClientRect();
  const box = gutters.getBoundingClientRect();
  return line.left >= box.right - 1 ? gutters.clientWidth : 0;
});

async function openStage(page, id) {
  await page.click(`nav button[data-stage='${id}']`);
  await waitForState(page, (state, want) => Boolean(state.stage && state.stage.id === want
    && document.querySelector("#workbench").dataset.language), id);
}

module.exports = {
  binary, webDir, screenshot, serve, checks, expect, overflowing, checkAxe, requestUrls, tokensSeen,
  recordRequests, expectNoTokenInUrls, isPost, isEvents, isPoll, editorValue, editorMode, stored, localDraft,
  serverDraft, expectDraftSaved, inState, readState, waitForState, showReport, showMetrics, stageOpen,
  expectLanguage, typeLineAfter, serveVendorFallback, routeOrFake, gutterWidth, openStage,
};
