// A run's source read-only: numbered lines that a report's line links lead to and its findings
// mark. The staff's view of a learner's run (staff/job.js) and a run its learner shared
// (shared_view.js) both show a source this way; the learner's own source is in the editor instead.

import { el } from "./dom.js";

// The source as numbered lines (the numbers are CSS counters, so a copy holds only the code);
// `label` names it for screen readers.
export function sourceView(text, label) {
  const lines = (text || "").replace(/\n$/, "").split("\n");
  return el("pre", { class: "source", tabindex: "0", "aria-label": label },
    ...lines.flatMap((line, i) => [el("span", { class: "source-line", "data-line": i + 1 }, line), "\n"]));
}

// report_view.js's lineLink for `source`: a button that lights the line up and scrolls to it.
export function lineLinker(source) {
  return (line, column) => {
    if (!line) return null;
    const target = () => source.querySelector(`.source-line[data-line='${line}']`);
    return el("button", { type: "button", class: "line-link", "data-line": line, onclick: () => {
      for (const lit of source.querySelectorAll(".source-line.lit")) lit.classList.remove("lit");
      const found = target();
      if (!found) return;
      found.classList.add("lit");
      found.scrollIntoView({ block: "center" });
      source.focus({ preventScroll: true });
    } }, column ? `line ${line}:${column}` : `line ${line}`);
  };
}

// report_view.js's mark for `source`: the line's background says its kind (error, warning, note).
export function lineMarker(source) {
  return (line, kind = "error") => {
    const found = source.querySelector(`.source-line[data-line='${line}']`);
    if (found) found.classList.add(`mark-${kind}`);
  };
}
