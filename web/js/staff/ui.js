// Small pieces every staff view draws with: headings that take focus after a navigation, tables
// with a caption and header cells, a scrolling box a keyboard can scroll, labelled fields,
// messages, buttons. Everything from the API is placed as text (dom.js's el), never as HTML.

import { el } from "../dom.js";

let counter = 0;
// An id for a label's `for`, unique on the page.
export const uid = (stem) => `${stem}-${++counter}`;

export const heading = (level, ...children) => el(`h${level}`, { tabindex: "-1", class: "staff-heading" }, ...children);

// A <table> with its caption, a header row (`headers`: text or nodes, scope col) and `rows`
// (<tr> elements the caller made).
export function table(caption, headers, rows, attributes = {}) {
  return el("table", { class: "staff-table", ...attributes },
    el("caption", {}, caption),
    el("thead", {}, el("tr", {}, ...headers.map((header) => el("th", { scope: "col" }, header)))),
    el("tbody", {}, ...rows));
}

// A table wide enough to scroll scrolls inside this box, not the page; the box is a named region
// that takes focus, so a keyboard can scroll it too.
export const scrolling = (label, child) =>
  el("div", { class: "table-scroll", tabindex: "0", role: "region", "aria-label": label }, child);

// kind: "bad", "ok" or "muted".
export const message = (text, kind = "muted") => el("p", { class: `message ${kind}` }, text);

// A status line whose changes are read out (role status); set with say().
export const statusLine = () => el("p", { class: "message", role: "status" });
export function say(line, text, kind = "ok") {
  line.textContent = text;
  line.className = `message ${kind}`;
}

// <label>text</label><input>: the control gets an id the label names.
export function field(labelText, control, hint = null) {
  if (!control.id) control.id = uid("field");
  return el("span", { class: "field" }, el("label", { for: control.id }, labelText), control, hint ? el("span", { class: "staff-note" }, hint) : null);
}

export const button = (text, onclick, attributes = {}) =>
  el("button", { type: "button", class: "secondary", onclick, ...attributes }, text);

export const yesNo = (value) => (value ? "yes" : "no");

// Copies `text`; where the clipboard is refused, selects it in `input` for Ctrl+C (clipboard.js).
export { copyText } from "../clipboard.js";

// "Cannot load the roster: ..." in words a member of staff can act on.
export function failure(what, error) {
  const why = error.status === 403 ? "your role in this class does not allow it"
    : error.status === 404 ? "it is not there (or not yours to see)" : error.message;
  return message(`${what}: ${why}.`, "bad");
}

// A list the API gives a page at a time (next_before): add(page) draws a page's rows through
// `addRows` and puts a button under the table for the next, older page while there is one.
export function pager(label, load, addRows) {
  const more = el("div", { class: "button-row" });
  const add = (page) => {
    addRows(page);
    more.replaceChildren(...(page.next_before ? [button(label, async () => add(await load(page.next_before)))] : []));
  };
  return { more, add };
}
