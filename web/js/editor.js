// The CodeMirror editor and the marks a report puts on its lines. main.js makes the editor once,
// while it is hidden (stages.js refreshes it when a stage opens); source.js decides what text and
// mode it holds, run.js binds Ctrl+Enter, report.js marks lines and links to them. CodeMirror is
// the classic script /vendor/codemirror/lib/codemirror.js, loaded before the modules.
//
// Tab indents in the editor, so it would keep the keyboard's focus for good (WCAG 2.1.2, no
// keyboard trap): Escape, then Tab or Shift+Tab, leaves it instead, as index.html's hint under the
// editor says (its aria-describedby, read when the editor takes the focus).

import { el } from "./dom.js";

// null until startEditor. An exported `let` is a live binding: every importer sees the editor
// once it is made.
export let editor = null;

export function startEditor() {
  editor = CodeMirror(document.getElementById("editor"), {
    mode: "text/x-c++src",
    lineNumbers: true,
    indentUnit: 4,
    matchBrackets: true,
    lineWrapping: true,  // long comment lines wrap instead of scrolling sideways
    screenReaderLabel: "Kernel source",
  });
  window.cudojoEditor = editor;  // for the browser test and for curious learners
  letTabLeaveAfterEscape(editor);
}

// After Escape the next Tab or Shift+Tab is the browser's (codemirrorIgnore: CodeMirror leaves the
// key alone), so the focus moves on. Any other key first, or leaving and coming back, and Tab
// indents again.
function letTabLeaveAfterEscape(cm) {
  let escaped = false;
  cm.on("keydown", (_, event) => {
    if (event.key === "Tab" && escaped) event.codemirrorIgnore = true;
    else if (event.key !== "Shift") escaped = event.key === "Escape";
  });
  cm.on("blur", () => { escaped = false; });
  cm.getInputField().setAttribute("aria-describedby", "editor-keys");
}

// The marks now on the editor: line backgrounds ({ line, className }) and CodeMirror text markers.
let lineMarks = [];
let textMarks = [];

export function clearMarks() {
  for (const { line, className } of lineMarks) editor.removeLineClass(line, "background", className);
  for (const marker of textMarks) marker.clear();
  lineMarks = [];
  textMarks = [];
}

// A diagnostic's column counts characters (code points); CodeMirror counts UTF-16 units.
function columnToCh(line, column) {
  if (!column || column < 1 || !line || line > editor.lineCount()) return 0;
  return [...editor.getLine(line - 1)].slice(0, column - 1).join("").length;
}

// "line 3" or "line 3:7": a link that puts the cursor there.
export function lineLink(line, column) {
  if (!line) return null;
  const attributes = { class: "line", "data-line": line };
  if (column) attributes["data-column"] = column;
  attributes.onclick = () => {
    const where = { line: line - 1, ch: columnToCh(line, column) };
    editor.focus();
    editor.setCursor(where);
    editor.scrollIntoView(where, 80);
  };
  return el("a", attributes, column ? `line ${line}:${column}` : `line ${line}`);
}

// kind: "error" (the default), "warning" or "note"; with a column, the word there is marked too.
export function markLine(line, kind = "error", column = 0) {
  if (!line || line > editor.lineCount()) return;
  const className = `cm-${kind}-line`;
  editor.addLineClass(line - 1, "background", className);
  lineMarks.push({ line: line - 1, className });
  if (column) {
    const ch = columnToCh(line, column);
    const text = editor.getLine(line - 1);
    let end = ch + 1;
    while (end < text.length && /[A-Za-z0-9_]/.test(text[end]) && /[A-Za-z0-9_]/.test(text[ch])) end += 1;
    if (ch < text.length) {
      textMarks.push(editor.markText({ line: line - 1, ch }, { line: line - 1, ch: end },
                                     { className: `cm-${kind}-mark` }));
    }
  }
}
