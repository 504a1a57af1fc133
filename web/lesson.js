// Lesson enhancement: turns the server's cmark-gfm HTML into the page's lesson view.
//   window.cudojoLesson.enhance(element)   // call after setting element.innerHTML
// The server renders lesson.md in safe mode (raw HTML dropped), so a lesson asks for richer content
// with plain markdown that this file recognizes:
//   - math: $$ ... $$ for display, \\( ... \\) for inline (written so in markdown, since "\(" is
//     a markdown escape); a single $ is never math, lessons use it in prose and shell lines;
//   - code: ```cuda, ```python, ```rust, ```cpp fences are highlighted (cuda as cpp);
//   - diagrams: a ```diagram fence whose body is a name from DIAGRAMS becomes a figure;
//   - the "What you will learn" (or "practise") heading and its list get classes for styling;
//   - the server's note on which GPU the figures are from (a blockquote under the title) too.
// Each step checks for its library (window.katex, window.hljs) and does nothing without it, so a
// lesson missing a vendor script still reads as plain text. enhance() may run twice on one element.
"use strict";

(function () {
  // Alt text says what the picture shows; the caption says why it matters. One row per SVG in
  // web/diagrams/.
  const DIAGRAMS = {
    "tree-fold": {
      alt: "Eight shared-memory slots folded in three steps: 4 threads add the slot 4 above, then 2 add " +
           "the slot 2 above, then 1 adds the slot 1 above, with a barrier after each step; slot 0 ends " +
           "with the block's sum.",
      caption: "A block's tree fold in shared memory. Each step halves the active slots and ends at a " +
               "__syncthreads() barrier; 8 slots take 3 steps, a 256-thread block takes log2(256) = 8.",
    },
    "warp-shuffle": {
      alt: "32 lanes of a warp folded by __shfl_down_sync with offsets 16, 8, 4, 2 and 1: each round " +
           "lane i adds the value of lane i + offset, halving the lanes that matter, until lane 0 holds " +
           "the sum of all 32.",
      caption: "A warp fold in registers. Five __shfl_down_sync rounds (offsets 16, 8, 4, 2, 1) leave the " +
               "warp's sum in lane 0; no shared memory and no barrier, but all 32 lanes must take part.",
    },
    "privatized-histogram": {
      alt: "Several blocks, each counting its values into its own 256 bins in shared memory with shared " +
           "atomics; after a barrier each block adds each of its bins once into the matching global bin.",
      caption: "A privatized histogram. Collisions stay inside each block's shared bins; global memory " +
               "sees at most one atomicAdd per bin per block.",
    },
    "two-pass": {
      alt: "Pass one: every block of the grid stores its sum in its own slot of partial[]. Pass two: one " +
           "block reads all partials in a fixed order, folds them, and stores the total in out.",
      caption: "A deterministic two-pass sum. Partials are stored, never added atomically; the second " +
               "kernel folds them in an order fixed by the code, so every run gives the same bits.",
    },
  };

  // Fence names learners see, mapped to highlight.js languages.
  const LANGUAGES = { cuda: "cpp", cpp: "cpp", "c++": "cpp", c: "c", python: "python", py: "python",
                      rust: "rust", rs: "rust" };
  const LABELS = { cuda: "CUDA", cpp: "C++", "c++": "C++", c: "C", python: "Python", py: "Python",
                   rust: "Rust", rs: "Rust" };

  const LEARN_HEADING = /^what you will (learn|practise|practice)\b/i;

  // The diagrams sit beside this script: /diagrams/ on the server, web/diagrams/ from a file:// test.
  const script = document.currentScript;
  const DIAGRAM_BASE = script && script.src ? new URL("diagrams/", script.src).href : "diagrams/";

  function fenceLanguage(code) {
    const match = /(?:^|\s)language-(\S+)/.exec(code.className);
    return match ? match[1].toLowerCase() : "";
  }

  function replaceDiagrams(element) {
    for (const code of element.querySelectorAll("pre > code.language-diagram")) {
      const name = code.textContent.trim();
      const entry = Object.prototype.hasOwnProperty.call(DIAGRAMS, name) ? DIAGRAMS[name] : null;
      if (!entry) {  // unknown name: leave the block, but say what is missing instead of a bare word
        code.textContent = `[diagram "${name}" is not in lesson.js]`;
        continue;
      }
      const figure = document.createElement("figure");
      figure.className = "lesson-diagram";
      const img = document.createElement("img");
      img.src = DIAGRAM_BASE + encodeURIComponent(name) + ".svg";
      img.alt = entry.alt;
      img.loading = "lazy";
      img.decoding = "async";
      const link = document.createElement("a");  // full size on a phone, where the figure is small
      link.href = img.src;
      link.target = "_blank";
      link.rel = "noopener";
      link.append(img);
      // Below its legible width the picture scrolls inside this box (lesson.css); the link in it
      // is what a keyboard reaches to scroll it.
      const scroller = document.createElement("div");
      scroller.className = "diagram-scroll";
      scroller.append(link);
      const caption = document.createElement("figcaption");
      caption.textContent = entry.caption;
      figure.append(scroller, caption);
      code.parentElement.replaceWith(figure);
    }
  }

  function highlightCode(element) {
    for (const code of element.querySelectorAll("pre > code")) {
      const fence = code.dataset.fence || fenceLanguage(code);  // a second call sees language-cpp
      code.dataset.fence = fence;
      const pre = code.parentElement;
      pre.classList.add("lesson-code");
      pre.tabIndex = 0;  // a block wider than a phone scrolls: the keyboard must reach it too
      if (fence && LABELS[fence]) pre.dataset.lang = LABELS[fence];
      const hljs = window.hljs;
      const language = LANGUAGES[fence];
      if (!hljs || !language || !hljs.getLanguage(language) || code.dataset.highlighted) continue;
      code.classList.remove(`language-${fence}`);
      code.classList.add(`language-${language}`);
      try {
        hljs.highlightElement(code);
      } catch (error) {  // a highlighter bug must not cost the learner the lesson
        console.warn(`cudojo: could not highlight a ${fence} block: ${error.message}`);
      }
    }
  }

  function typesetMath(element) {
    if (!window.katex || typeof window.renderMathInElement !== "function") return;
    try {
      window.renderMathInElement(element, {
        delimiters: [
          { left: "$$", right: "$$", display: true },
          { left: "\\(", right: "\\)", display: false },
        ],
        ignoredTags: ["script", "noscript", "style", "textarea", "pre", "code", "option"],
        ignoredClasses: ["katex"],  // already typeset by an earlier call
        throwOnError: false,        // a bad formula shows in red, the rest of the lesson still renders
      });
    } catch (error) {
      console.warn(`cudojo: could not typeset math: ${error.message}`);
    }
  }

  function markLearnList(element) {
    for (const heading of element.querySelectorAll("h2")) {
      if (!LEARN_HEADING.test(heading.textContent.trim())) continue;
      heading.classList.add("learn-heading");
      const list = heading.nextElementSibling;
      if (list && (list.tagName === "UL" || list.tagName === "OL")) list.classList.add("learn-list");
    }
  }

  // The server's note under the title saying which GPU the lesson's figures are from.
  function markFiguresNote(element) {
    for (const quote of element.querySelectorAll("blockquote")) {
      if (/^Figures in this lesson\b|^No GPU's figures\b/.test(quote.textContent.trim())) quote.classList.add("lesson-figures");
    }
  }

  function enhance(element) {
    if (!element) return;
    element.classList.add("lesson-body");
    replaceDiagrams(element);  // first, so a diagram fence is never highlighted as code
    highlightCode(element);
    typesetMath(element);
    markLearnList(element);
    markFiguresNote(element);
  }

  window.cudojoLesson = { enhance, diagrams: DIAGRAMS };
})();
