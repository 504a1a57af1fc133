// The Assembly tab (issue #28): what the kernel in the editor becomes on the machine, without a
// GPU, in the manner of Compiler Explorer. Opening the tab (tabs.js calls loadAssembly) or "Show
// assembly" posts the editor's text (POST /api/assembly); the answer is drawn as the table of what
// each kernel asks of the machine (yours beside the reference's), above the source and its machine
// code side by side: SASS where the server has nvdisasm, else PTX with the server's note saying
// why; a toggle where it has both. A compile error shows the compiler's diagnostics instead.
//
// Each machine-code line tied to a source line shares that line's colour. Choosing a line (a
// click, or Enter or Space) lights its source line and every machine-code line of it, and brings
// the first of the others into view. Each listing is one stop of Tab: a listbox whose active line
// is its aria-activedescendant, moved by Up, Down, Page Up, Page Down, Home and End.

import { $, el } from "./dom.js";
import { state } from "./state.js";
import { api, token } from "./api.js";
import { editor, lineLink } from "./editor.js";
import { ACCOUNT_CHANGED, STAGE_OPENED, on } from "./events.js";
import { renderReport } from "./report_view.js";

const HUES = 8;  // colours for source lines (style.css: .hue-0 .. .hue-7), reused round the list

let asked = 0;         // the number of the latest request: an older answer is dropped
let inFlight = false;  // the server takes one assembly at a time per account
let again = false;     // asked for while one was in flight: ask once more when it answers
let shownKey = null;   // what the panel shows: stage, language and source
let view = null;       // the answer shown, and the source it is about
let shownSource = "";
let machine = "sass";  // the listing shown when the answer has both: "sass" or "ptx"

const requestKey = () => (state.stage ? `${state.stage.id}\n${state.language}\n${editor.getValue()}` : null);
const setStatus = (text) => { $("#assembly-status").textContent = text; };

// Back to the tab's first words: a new stage, a new account.
function resetPanel() {
  asked += 1;
  shownKey = null;
  view = null;
  $("#assembly-stale").hidden = true;
  $("#assembly-view").replaceChildren(el("p", { class: "muted" },
    "What your kernel asks of the machine (registers, spills, shared memory, occupancy) beside the reference, and its PTX or SASS line by line. Nothing is run."));
  setStatus("");
}

// Posts the editor's text unless the panel shows it already (`force`: post anyway).
export async function loadAssembly({ force = false } = {}) {
  const key = requestKey();
  if (!key || (!force && key === shownKey)) return;
  if (!token()) {
    resetPanel();
    $("#assembly-view").replaceChildren(el("p", {},
      "Sign in (or join your class) at the top of the page to see what your kernel becomes on the machine."));
    return;
  }
  if (inFlight) {
    again = true;
    return;
  }
  const number = ++asked;
  const source = editor.getValue();
  inFlight = true;
  $("#assembly-show").disabled = true;
  setStatus("Compiling…");
  try {
    const answer = await api("/api/assembly", { method: "POST", body: JSON.stringify({
      stage: state.stage.id, language: state.language, source, ptx: true, sass: true }) });
    if (number !== asked) return;
    shownKey = key;
    view = answer;
    shownSource = source;
    $("#assembly-stale").hidden = true;
    drawView();
    setStatus(answer.compile && answer.compile.ok === false ? "Your kernel did not compile." : "Compiled.");
  } catch (error) {
    if (number !== asked) return;
    shownKey = null;
    setStatus("");
    $("#assembly-view").replaceChildren(el("p", { class: "message bad", role: "alert" },
      error.status === 401 ? "Sign in again to see your kernel's assembly." : `No assembly: ${error.message}`));
  } finally {
    inFlight = false;
    $("#assembly-show").disabled = false;
    if (again) {
      again = false;
      loadAssembly();
    }
  }
}

// --- The table of resources.

const bytes = (value) => `${value} B`;

function occupancyText(occupancy) {
  return `${Math.round(100 * occupancy.fraction)} % (${occupancy.active_warps} of ${occupancy.max_warps} warps, ` +
    `${occupancy.blocks_per_sm} blocks an SM)`;
}

// Each measure a row, each kernel a column (yours first, then the reference's): a narrow panel holds
// it, and the two figures of one measure sit side by side.
const MEASURES = [
  ["registers", "registers", (r) => r.registers],
  ["spills", "spilled (stores / loads)", (r) => `${bytes(r.spill_store_bytes)} / ${bytes(r.spill_load_bytes)}`],
  ["stack", "stack", (r) => bytes(r.stack_frame_bytes)],
  ["shared", "static shared", (r) => bytes(r.shared_bytes)],
  ["barriers", "barriers", (r) => r.barriers],
  ["occupancy", "occupancy", (r, o) => (o ? occupancyText(o) : "n/a")],
  ["limited-by", "occupancy limited by", (r, o) => (o ? o.limited_by : "")],
];

function measureCell(kernel, [field, , value]) {
  const r = kernel.resources;
  const spilled = field === "spills" && r && (r.spill_store_bytes || r.spill_load_bytes);
  return el("td", { class: `num${spilled ? " spilled" : ""}`, "data-whose": kernel.whose, "data-field": field },
            r ? value(r, kernel.occupancy) : "");
}

function resourceTable(answer) {
  const launch = answer.launch || {};
  const kernels = answer.kernels || [];
  const rows = MEASURES.map((measure) => el("tr", {}, el("th", { scope: "row" }, measure[1]),
                                            ...kernels.map((kernel) => measureCell(kernel, measure))));
  const notes = kernels.filter((kernel) => kernel.note);
  if (notes.length) {
    rows.push(el("tr", {}, el("th", { scope: "row" }, "note"),
                 ...kernels.map((kernel) => el("td", { class: "asm-kernel-note", "data-whose": kernel.whose }, kernel.note))));
  }
  return [
    el("p", { class: "asm-launch" }, `For ${answer.arch}, and the stage's launch: ${launch.threads_per_block} threads and ` +
       `${launch.dynamic_shared_bytes} B of dynamic shared memory a block. The figures are ptxas's (ptxas -v).`),
    el("div", { class: "table-scroll", tabindex: "0", role: "region", "aria-labelledby": "assembly-caption" },
      el("table", { class: "asm-resources" },
        el("caption", { id: "assembly-caption" }, "What each kernel asks of the machine"),
        el("thead", {}, el("tr", {}, el("td", {}),
          ...kernels.map((kernel) => el("th", { scope: "col", "data-whose": kernel.whose }, `${kernel.whose}: `, el("code", {}, kernel.kernel))))),
        el("tbody", {}, ...rows))),
  ];
}

// --- The listings side by side.

// The machine-code lines of the listing shown: { line (0: none), gutter, text, label }.
function machineLines(answer, kind) {
  if (kind === "sass") {
    return answer.sass.flatMap((fn) => [
      { line: 0, gutter: "", text: `${fn.entry}:`, label: true },
      ...fn.lines.map((l) => ({ line: l.line || 0, gutter: l.line || "",
        text: l.offset === null || l.offset === undefined ? l.text : `/*${l.offset.toString(16).padStart(4, "0")}*/ ${l.text}` })),
    ]);
  }
  return (answer.ptx || []).map((l) => ({ line: l.line || 0, gutter: l.line || "", text: l.text }));
}

function lineElement(id, gutter, text, tiedTo, hue, extra = "") {
  return el("div", { role: "option", id, class: `asm-line${hue === null ? "" : ` hue-${hue}`}${extra}`,
                     "aria-selected": "false", "data-source-line": tiedTo || "" },
            el("span", { class: "asm-gutter" }, gutter), text);
}

function listbox(id, label, lines) {
  const box = el("div", { id, class: "asm-listing", role: "listbox", tabindex: "0", "aria-label": label,
                          "aria-multiselectable": "true" }, ...lines);
  box.addEventListener("click", (event) => {
    const line = event.target.closest(".asm-line");
    if (!line) return;
    activate(box, line);
    choose(line);
    box.focus({ preventScroll: true });
  });
  box.addEventListener("keydown", (event) => moveByKey(box, event));
  return box;
}

// Scrolls `pane` (only it, never the page) so that `line` is in view.
function scrollWithin(pane, line) {
  const top = line.offsetTop, bottom = top + line.offsetHeight;
  if (top < pane.scrollTop || bottom > pane.scrollTop + pane.clientHeight) {
    pane.scrollTop = Math.max(0, top - pane.clientHeight / 3);
  }
}

function activate(box, line) {
  for (const old of box.querySelectorAll(".asm-line.active")) old.classList.remove("active");
  line.classList.add("active");
  box.setAttribute("aria-activedescendant", line.id);
  scrollWithin(box, line);
}

const STEPS = { ArrowDown: 1, ArrowUp: -1, PageDown: 10, PageUp: -10 };

function moveByKey(box, event) {
  if (event.altKey || event.ctrlKey || event.metaKey) return;
  const lines = [...box.querySelectorAll(".asm-line")];
  const at = Math.max(0, lines.findIndex((line) => line.classList.contains("active")));
  let to = -1;
  if (event.key in STEPS) to = Math.min(lines.length - 1, Math.max(0, at + STEPS[event.key]));
  else if (event.key === "Home") to = 0;
  else if (event.key === "End") to = lines.length - 1;
  else if (event.key === "Enter" || event.key === " ") {
    event.preventDefault();
    if (lines[at]) choose(lines[at]);
    return;
  } else return;
  event.preventDefault();  // the page would scroll
  if (lines[to]) activate(box, lines[to]);
}

// Lights `line`'s source line and every machine-code line of it; the other listing scrolls to them.
function choose(line) {
  const source = Number(line.dataset.sourceLine) || 0;
  const fromSource = line.closest(".asm-listing").id === "assembly-source";
  for (const lit of document.querySelectorAll("#assembly-view .asm-line.lit")) {
    lit.classList.remove("lit");
    lit.setAttribute("aria-selected", "false");
  }
  const partners = source ? [...document.querySelectorAll(`#assembly-view .asm-line[data-source-line='${source}']`)] : [line];
  for (const partner of partners) {
    partner.classList.add("lit");
    partner.setAttribute("aria-selected", "true");
  }
  const count = partners.filter((partner) => partner.closest("#assembly-code")).length;
  setStatus(source ? `Line ${source}: ${count} machine-code line${count === 1 ? "" : "s"}.` : "This line is tied to no source line.");
  const other = $(fromSource ? "#assembly-code" : "#assembly-source");
  const first = partners.find((partner) => partner.closest(".asm-listing") === other);
  if (first) activate(other, first);
}

function listings(answer) {
  const hasSass = Array.isArray(answer.sass) && answer.sass.length > 0;
  const hasPtx = Array.isArray(answer.ptx) && answer.ptx.length > 0;
  const kind = hasSass && (machine === "sass" || !hasPtx) ? "sass" : "ptx";
  const lines = machineLines(answer, kind);
  // One colour per source line that has machine code, in the order of the source.
  const tied = [...new Set(lines.map((l) => l.line).filter(Boolean))].sort((a, b) => a - b);
  const hueOf = new Map(tied.map((line, index) => [line, index % HUES]));
  const hue = (line) => (hueOf.has(line) ? hueOf.get(line) : null);
  const sourceLines = shownSource.replace(/\n$/, "").split("\n").map((text, i) =>
    lineElement(`asm-src-${i + 1}`, i + 1, text, i + 1, hue(i + 1)));
  const codeLines = lines.map((l, i) =>
    lineElement(`asm-mc-${i}`, l.gutter, l.text, l.line, hue(l.line), l.label ? " asm-label" : ""));
  const name = kind === "sass" ? `SASS (${answer.arch})` : "PTX";
  const parts = [];
  if (hasSass && hasPtx) {
    const radio = (value, text) => el("label", {}, el("input", { type: "radio", name: "assembly-kind", value,
      ...(value === kind ? { checked: "" } : {}), onchange: () => { machine = value; drawView(); } }), ` ${text}`);
    parts.push(el("fieldset", { class: "asm-kind" }, el("legend", {}, "Machine code"), radio("sass", "SASS"), radio("ptx", "PTX")));
  }
  if (!hasSass && answer.sass_note) parts.push(el("p", { class: "asm-note", id: "assembly-sass-note" }, "PTX, not SASS: ", answer.sass_note));
  parts.push(el("p", { class: "asm-help muted" },
    "Choose a line (click, or Enter in a listing) to light its partners; lines of one colour come from one source line."));
  parts.push(el("div", { class: "asm-columns", "data-kind": kind },
    el("section", { "aria-label": "Your source" }, el("h3", {}, "Your source"),
       listbox("assembly-source", "Your source, line by line", sourceLines)),
    el("section", { "aria-label": name }, el("h3", {}, name),
       lines.length ? listbox("assembly-code", `${name}, line by line`, codeLines)
         : el("p", { class: "muted" }, "No machine code came back for this listing."))));
  return parts;
}

function drawView() {
  const box = $("#assembly-view");
  if (!view) return;
  if (view.compile && view.compile.ok === false) {
    const report = { verdict: "compile_error", message: "Your kernel did not compile, so there is no machine code to show.",
                     language: state.language, compile: view.compile };
    const diagnostics = el("div", { class: "asm-compile" });
    renderReport(diagnostics, report, { lineLink });
    box.replaceChildren(diagnostics);
    return;
  }
  box.replaceChildren(...resourceTable(view), ...listings(view));
}

export function startAssembly() {
  $("#assembly-show").addEventListener("click", () => loadAssembly({ force: true }));
  editor.on("change", () => {
    if (shownKey !== null) $("#assembly-stale").hidden = requestKey() === shownKey;
  });
  // A stage opened with the tab shown: its kernel at once, as opening the tab would.
  on(STAGE_OPENED, () => {
    resetPanel();
    if (!$("#tab-assembly").hidden) loadAssembly();
  });
  on(ACCOUNT_CHANGED, resetPanel);
  resetPanel();
}
