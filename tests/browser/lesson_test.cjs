// Browser test of the lesson view (web/lesson.js + web/lesson.css): Debian's chromium driven by
// playwright-core, no server and no GPU.
//   node tests/browser/lesson_test.cjs [WEB_DIR] [SCREENSHOT_PREFIX]
// Writes a static page to a temp folder that loads KaTeX, highlight.js, lesson.css and lesson.js
// from WEB_DIR (default: this checkout's web/) by file:// paths, around a lesson as cmark-gfm
// renders it: display and inline math, a $ in prose, CUDA and Python fences, a long code line,
// a diagram placeholder and a "What you will learn" list. It calls cudojoLesson.enhance and
// expects, in the light and the dark colour scheme, at 1000 and 420 px wide, with lesson.css's own
// colours and again under the page's style.css (its --fg, --panel, --code-bg ...): KaTeX output and
// no KaTeX error, a single $ left alone, highlighted code (hljs token spans, cuda shown as cpp),
// the diagram as a figure whose <img> loaded (naturalWidth > 0) with the table's alt text and a
// caption, its labels legible (it scrolls rather than shrinks), the learn-list marked, readable contrast, and nothing wider than the window (code and
// formulas scroll inside themselves). A second page without KaTeX and highlight.js checks that
// enhance still replaces the diagram and leaves math and code as plain text. SCREENSHOT_PREFIX,
// when given, gets PREFIX-light-420.png and the like.
"use strict";
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { pathToFileURL } = require("node:url");

const webDir = path.resolve(process.argv[2] || path.join(__dirname, "..", "..", "web"));
const screenshotPrefix = process.argv[3] ? path.resolve(process.argv[3]) : null;

function expect(condition, message) {
  if (!condition) throw new Error(`expectation failed: ${message}`);
}

const vendor = {
  katexCss: path.join(webDir, "node_modules", "katex", "dist", "katex.min.css"),
  katexJs: path.join(webDir, "node_modules", "katex", "dist", "katex.min.js"),
  autoRender: path.join(webDir, "node_modules", "katex", "dist", "contrib", "auto-render.min.js"),
  hljs: path.join(webDir, "node_modules", "@highlightjs", "cdn-assets", "highlight.min.js"),
  lessonCss: path.join(webDir, "lesson.css"),
  lessonJs: path.join(webDir, "lesson.js"),
};
for (const [name, file] of Object.entries(vendor)) {
  if (!fs.existsSync(file)) {
    console.error(`lesson_test: ${name} is missing at ${file}; run \`npm install\` in ${webDir} (scripts/setup.sh)`);
    process.exit(1);
  }
}
const serve = require("./serve.cjs");
const url = (file) => pathToFileURL(file).href;

// A lesson as cmark-gfm (CMARK_OPT_DEFAULT) renders it: "\\(" in markdown arrives as "\(", a
// ```diagram fence arrives as <pre><code class="language-diagram">NAME\n</code></pre>.
const LESSON_HTML = `<h1>Block tree: one atomic per block</h1>
<p>A costs $5 and B costs $7: a single dollar sign is prose, never math. The tolerance grows with
\\(\\sqrt{K}\\) for \\(K\\) terms:</p>
<p>$$\\lvert \\mathrm{got} - \\mathrm{ref} \\rvert \\le 4 \\cdot 2^{-23} \\cdot \\sqrt{K} \\cdot \\sum_{i=1}^{K} \\lvert x_i \\rvert$$</p>
<p>A long formula must scroll on a phone, not widen the page:</p>
<p>$$s = x_0 + x_1 + x_2 + x_3 + x_4 + x_5 + x_6 + x_7 + x_8 + x_9 + x_{10} + x_{11} + x_{12} + x_{13} + x_{14} + x_{15} + x_{16} + x_{17}$$</p>
<ol>
<li>Each thread writes its value into <code>s[threadIdx.x]</code>, a very_long_identifier_that_must_wrap_instead_of_widening_the_lesson_column.</li>
<li>The block folds the 256 slots in halves.</li>
</ol>
<pre><code class="language-diagram">tree-fold
</code></pre>
<pre><code class="language-cuda">__global__ void sum_kernel3(const float* X, float* out, int N) {
    extern __shared__ float s[];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    s[threadIdx.x] = (i &lt; N) ? X[i] : 0.0f;  // a comment, and a line long enough to need a horizontal scroll bar at 420 px
    if (threadIdx.x == 0) atomicAdd(out, s[0]);
}
</code></pre>
<pre><code class="language-python">@cuda.jit
def sum_kernel(X, out, N):
    if tid == 0:
        cuda.atomic.add(out, 0, s[0])
</code></pre>
<pre><code>$$ not math inside an unlabelled code block $$
</code></pre>
<h2>What you will learn</h2>
<ul>
<li>Fold a block's values in shared memory in log2(blockDim.x) steps.</li>
<li>Store the identity for out-of-range threads instead of returning.</li>
</ul>
`;

function page(withLibraries, withPageStyle = false) {
  const libraries = withLibraries
    ? `<link rel="stylesheet" href="${url(vendor.katexCss)}">
  <script src="${url(vendor.katexJs)}"></script>
  <script src="${url(vendor.autoRender)}"></script>
  <script src="${url(vendor.hljs)}"></script>`
    : "";
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>lesson fixture</title>
  ${libraries}
  ${withPageStyle ? `<link rel="stylesheet" href="${url(path.join(webDir, "style.css"))}">` : ""}
  <link rel="stylesheet" href="${url(vendor.lessonCss)}">
  <style>body { margin: 0; font: 15px/1.5 system-ui, sans-serif; } #lesson { padding: 4px 16px; }</style>
</head>
<body>
  <article id="lesson">${LESSON_HTML}</article>
  <script src="${url(vendor.lessonJs)}"></script>
</body>
</html>`;
}

// Relative luminance and contrast ratio (WCAG 2) from a computed "rgb(...)" colour.
function contrastSource() {
  return `
    window.__contrast = (fg, bg) => {
      const parse = (c) => (c.match(/[\\d.]+/g) || []).slice(0, 3).map(Number);
      const lum = (rgb) => {
        const [r, g, b] = rgb.map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
        return 0.2126 * r + 0.7152 * g + 0.0722 * b;
      };
      const a = lum(parse(fg)), b = lum(parse(bg));
      return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
    };
    window.__luminance = (c) => {
      const [r, g, b] = (c.match(/[\\d.]+/g) || []).slice(0, 3).map(Number);
      return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255;
    };`;
}

async function checkEnhanced(browserPage, scheme, width) {
  const label = `${scheme}, ${width} px`;
  const facts = await browserPage.evaluate(() => {
    const lesson = document.getElementById("lesson");
    const text = lesson.textContent;
    const img = lesson.querySelector("figure.lesson-diagram img");
    const cuda = lesson.querySelector("pre > code.language-cpp");
    const python = lesson.querySelector("pre > code.language-python");
    const plain = [...lesson.querySelectorAll("pre > code")].find((code) => !/language-/.test(code.className));
    const style = getComputedStyle(lesson);
    const cudaPre = cuda && cuda.parentElement;
    const keyword = cuda && cuda.querySelector(".hljs-keyword, .hljs-type");
    const comment = cuda && cuda.querySelector(".hljs-comment");
    const caption = lesson.querySelector("figure.lesson-diagram figcaption");
    const learnItem = lesson.querySelector("ul.learn-list li");
    // Anything reaching past the lesson's right edge is an overflow, unless an ancestor clips or
    // scrolls it (a code block, a display formula, KaTeX's own clipped SVG strokes).
    const right = lesson.getBoundingClientRect().right;
    const sticking = [];
    for (const element of lesson.querySelectorAll("*")) {
      const box = element.getBoundingClientRect();
      if (box.width === 0) continue;
      let visibleRight = box.right;
      for (let up = element.parentElement; up && up !== lesson; up = up.parentElement) {
        if (getComputedStyle(up).overflowX !== "visible") visibleRight = Math.min(visibleRight, up.getBoundingClientRect().right);
      }
      if (visibleRight > right + 1) sticking.push(`<${element.tagName.toLowerCase()} class="${element.getAttribute("class") || ""}">`);
    }
    return {
      katex: lesson.querySelectorAll(".katex").length,
      katexDisplay: lesson.querySelectorAll(".katex-display").length,
      katexErrors: lesson.querySelectorAll(".katex-error").length,
      dollarsLeft: text.includes("$5") && text.includes("$7"),
      rawMathLeft: /\$\$\\lvert|\\\(\\sqrt/.test(text),
      plainCodeUntouched: !!plain && plain.textContent.includes("$$ not math") && !plain.querySelector(".katex"),
      cudaHighlighted: !!cuda && cuda.classList.contains("hljs") && cuda.querySelectorAll("[class^='hljs-']").length > 3,
      cudaLabel: cudaPre ? cudaPre.dataset.lang : null,
      pythonHighlighted: !!python && python.classList.contains("hljs") && !!python.querySelector(".hljs-keyword, .hljs-meta"),
      placeholdersLeft: lesson.querySelectorAll("code.language-diagram").length,
      img: img && { complete: img.complete, naturalWidth: img.naturalWidth, alt: img.alt, src: img.src,
                    width: img.getBoundingClientRect().width },
      expectedAlt: window.cudojoLesson.diagrams["tree-fold"].alt,
      caption: caption ? caption.textContent : "",
      learnList: !!lesson.querySelector("h2.learn-heading + ul.learn-list"),
      learnMarker: learnItem ? getComputedStyle(learnItem, "::before").borderRightColor : "",
      textContrast: window.__contrast(style.color, style.backgroundColor),
      backgroundLuminance: window.__luminance(style.backgroundColor),
      codeContrast: cudaPre ? window.__contrast(getComputedStyle(cuda).color, getComputedStyle(cudaPre).backgroundColor) : 0,
      keywordContrast: keyword ? window.__contrast(getComputedStyle(keyword).color, getComputedStyle(cudaPre).backgroundColor) : 0,
      commentContrast: comment ? window.__contrast(getComputedStyle(comment).color, getComputedStyle(cudaPre).backgroundColor) : 0,
      preScrolls: cudaPre ? cudaPre.scrollWidth > cudaPre.clientWidth : false,
      pageWidth: document.documentElement.scrollWidth,
      windowWidth: document.documentElement.clientWidth,
      sticking,
    };
  });
  expect(facts.katex >= 4, `${label}: KaTeX typeset the two inline and two display formulas (found ${facts.katex} .katex)`);
  expect(facts.katexDisplay === 2, `${label}: two display formulas (found ${facts.katexDisplay})`);
  expect(facts.katexErrors === 0, `${label}: no KaTeX errors (found ${facts.katexErrors})`);
  expect(!facts.rawMathLeft, `${label}: no raw $$ or \\( formula is left as text`);
  expect(facts.dollarsLeft, `${label}: a single $ in prose stays text`);
  expect(facts.plainCodeUntouched, `${label}: $$ inside a code block is not typeset`);
  expect(facts.cudaHighlighted, `${label}: the cuda block is highlighted as cpp`);
  expect(facts.cudaLabel === "CUDA", `${label}: the cuda block is labelled CUDA (got ${facts.cudaLabel})`);
  expect(facts.pythonHighlighted, `${label}: the python block is highlighted`);
  expect(facts.placeholdersLeft === 0, `${label}: the diagram placeholder is replaced`);
  expect(facts.img, `${label}: the diagram is an <img> in a figure`);
  expect(facts.img.complete && facts.img.naturalWidth > 0, `${label}: the diagram loaded from ${facts.img.src} (naturalWidth ${facts.img.naturalWidth})`);
  expect(facts.img.alt === facts.expectedAlt && facts.img.alt.length > 40, `${label}: the diagram's alt text comes from the table`);
  expect(facts.caption.includes("__syncthreads()"), `${label}: the diagram has its caption (got "${facts.caption}")`);
  expect(facts.learnList, `${label}: the What you will learn list is marked`);
  expect(facts.learnMarker && facts.learnMarker !== "rgba(0, 0, 0, 0)", `${label}: learn-list items get a check mark`);
  expect(facts.textContrast >= 7, `${label}: lesson text contrast ${facts.textContrast.toFixed(2)} >= 7`);
  expect(facts.codeContrast >= 7, `${label}: code text contrast ${facts.codeContrast.toFixed(2)} >= 7`);
  expect(facts.keywordContrast >= 4.5, `${label}: keyword contrast ${facts.keywordContrast.toFixed(2)} >= 4.5`);
  expect(facts.commentContrast >= 4.5, `${label}: comment contrast ${facts.commentContrast.toFixed(2)} >= 4.5`);
  if (scheme === "dark") expect(facts.backgroundLuminance < 0.2, `${label}: a dark background (luminance ${facts.backgroundLuminance.toFixed(2)})`);
  else expect(facts.backgroundLuminance > 0.8, `${label}: a light background (luminance ${facts.backgroundLuminance.toFixed(2)})`);
  expect(facts.pageWidth <= facts.windowWidth, `${label}: the page is no wider than the window (${facts.pageWidth} > ${facts.windowWidth})`);
  expect(facts.sticking.length === 0, `${label}: nothing sticks out of the lesson: ${facts.sticking.slice(0, 5).join(", ")}`);
  // Diagrams keep their 10 px labels at 9 px or more (lesson.css): narrower than that, they scroll
  // inside their figure (the "sticking" check above) instead of shrinking.
  expect(facts.img.width / facts.img.naturalWidth * 10 >= 9, `${label}: the diagram's labels stay legible (${facts.img.width} px wide)`);
  if (width <= 420) expect(facts.preScrolls, `${label}: the long code line scrolls inside its block`);
  return facts;
}

async function loadFixture(browser, file, scheme, width, pageErrors) {
  const context = await browser.newContext({ viewport: { width, height: 900 }, colorScheme: scheme });
  const browserPage = await context.newPage();
  browserPage.on("pageerror", (error) => pageErrors.push(`${scheme}/${width}: ${error.message}`));
  browserPage.on("console", (message) => {
    if (message.type() === "error" || message.type() === "warning") pageErrors.push(`${scheme}/${width} console: ${message.text()}`);
  });
  browserPage.on("requestfailed", (request) => pageErrors.push(`${scheme}/${width}: failed to load ${request.url()}`));
  await browserPage.goto(url(file));
  await browserPage.emulateMedia({ colorScheme: scheme });
  await browserPage.addScriptTag({ content: contrastSource() });
  return { context, browserPage };
}

const waitForImages = (browserPage) => browserPage.evaluate(() => Promise.all(
  [...document.images].map((img) => (img.complete ? null : new Promise((done) => {
    img.addEventListener("load", done, { once: true });
    img.addEventListener("error", done, { once: true });
  })))));

(async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cudojo-lesson-"));
  const withLibraries = path.join(dir, "lesson.html");
  const withoutLibraries = path.join(dir, "lesson-bare.html");
  const withPageStyle = path.join(dir, "lesson-page-style.html");
  fs.writeFileSync(withLibraries, page(true));
  fs.writeFileSync(withPageStyle, page(true, true));
  fs.writeFileSync(withoutLibraries, page(false));
  const browser = await serve.launchChromium(webDir, ["--allow-file-access-from-files"]);
  let failed = false;
  try {
    const pageErrors = [];
    // Alone (lesson.css's own fallback colours), and under the page's style.css and its variables.
    const fixtures = [["fallback colours", withLibraries]];
    if (fs.existsSync(path.join(webDir, "style.css"))) fixtures.push(["page style.css", withPageStyle]);
    for (const [fixtureName, fixture] of fixtures) for (const scheme of ["light", "dark"]) {
      for (const width of [1000, 420]) {
        const { context, browserPage } = await loadFixture(browser, fixture, scheme, width, pageErrors);
        const libraries = await browserPage.evaluate(() => ({
          katex: !!window.katex, render: typeof window.renderMathInElement, hljs: !!window.hljs, lesson: !!window.cudojoLesson }));
        expect(libraries.katex && libraries.render === "function" && libraries.hljs && libraries.lesson,
               `KaTeX, auto-render, highlight.js and lesson.js are loaded: ${JSON.stringify(libraries)}`);
        await browserPage.evaluate(() => window.cudojoLesson.enhance(document.getElementById("lesson")));
        await waitForImages(browserPage);
        const first = await checkEnhanced(browserPage, scheme, width);
        // A second call (the page re-rendering the same element) changes nothing.
        await browserPage.evaluate(() => window.cudojoLesson.enhance(document.getElementById("lesson")));
        const again = await checkEnhanced(browserPage, scheme, width);
        expect(again.katex === first.katex, `${scheme}/${width}: enhance twice keeps ${first.katex} formulas (got ${again.katex})`);
        const suffix = fixture === withPageStyle ? "-page" : "";
        if (screenshotPrefix) await browserPage.screenshot({ path: `${screenshotPrefix}-${scheme}-${width}${suffix}.png`, fullPage: true });
        await context.close();
        console.log(`ok: enhanced lesson, ${fixtureName}, ${scheme} scheme, ${width} px`);
      }
    }
    expect(pageErrors.length === 0, `no script errors, console warnings or failed loads: ${pageErrors.join("; ")}`);

    // Without KaTeX and highlight.js: no error, the diagram still appears, math and code stay text.
    const bareErrors = [];
    const { context, browserPage } = await loadFixture(browser, withoutLibraries, "light", 420, bareErrors);
    await browserPage.evaluate(() => window.cudojoLesson.enhance(document.getElementById("lesson")));
    await waitForImages(browserPage);
    const bare = await browserPage.evaluate(() => {
      const lesson = document.getElementById("lesson");
      const img = lesson.querySelector("figure.lesson-diagram img");
      return {
        katex: lesson.querySelectorAll(".katex").length,
        rawMath: lesson.textContent.includes("$$\\lvert"),
        hljs: lesson.querySelectorAll(".hljs").length,
        cudaText: (lesson.querySelector("pre > code.language-cuda") || {}).textContent || "",
        imgLoaded: !!img && img.naturalWidth > 0,
        learnList: !!lesson.querySelector("ul.learn-list"),
        pageWidth: document.documentElement.scrollWidth,
        windowWidth: document.documentElement.clientWidth,
      };
    });
    expect(bare.katex === 0 && bare.rawMath, "without KaTeX the formulas stay as their source text");
    expect(bare.hljs === 0 && bare.cudaText.includes("atomicAdd(out, s[0])"), "without highlight.js the code stays plain and whole");
    expect(bare.imgLoaded, "without the libraries the diagram still loads");
    expect(bare.learnList, "without the libraries the learn-list is still marked");
    expect(bare.pageWidth <= bare.windowWidth, `without the libraries nothing overflows at 420 px (${bare.pageWidth})`);
    expect(bareErrors.length === 0, `no errors without the libraries: ${bareErrors.join("; ")}`);
    await context.close();
    console.log("ok: without KaTeX and highlight.js the lesson degrades to text, with its diagram");
  } catch (error) {
    failed = true;
    console.error(error.stack || String(error));
  } finally {
    await browser.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  console.log(failed ? "lesson_test: FAILED" : "lesson_test: passed");
  process.exit(failed ? 1 : 0);
})();
