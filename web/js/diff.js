// A line-by-line diff of two texts as a <pre> ("- " only in the old, "+ " only in the new), drawn
// with jsdiff (the classic script /vendor/diff/diff.min.js, window.Diff). Used by history.js (the
// learner's draft against a run) and staff/job.js (a run against the learner's run before it).

import { el } from "./dom.js";

// { view, changed }, or null when the library did not load. `label` names the <pre> for screen
// readers (it takes focus, to be scrolled by keyboard).
export function diffView(oldText, newText, label) {
  if (!window.Diff) return null;
  // A last line with and without its newline is the same line to a reader.
  const parts = window.Diff.diffLines(oldText || "", newText || "", { ignoreNewlineAtEof: true });
  const lines = [];
  for (const part of parts) {
    const kind = part.added ? "ins" : part.removed ? "del" : "same";
    const sign = part.added ? "+" : part.removed ? "-" : " ";
    for (const line of part.value.replace(/\n$/, "").split("\n")) {
      lines.push(el("span", { class: `diff-line diff-${kind}` }, `${sign} ${line}`), "\n");
    }
  }
  return { view: el("pre", { class: "diff", tabindex: "0", "aria-label": label }, ...lines),
           changed: parts.some((part) => part.added || part.removed) };
}
