// The Result tab: a judged report (verdict, compiler diagnostics, findings, tests, device output)
// with the lines it speaks of marked in the editor, and the last result of each stage kept across
// reloads. Called by run.js when a job ends, history.js when a job is opened, and stages.js when a
// stage opens; it hands the same report to the Metrics tab (metrics.js).
// localStorage: cudojo.result.STAGE holds the stage's last report.

import { $, el } from "./dom.js";
import { state } from "./state.js";
import { clearMarks, lineLink, markLine } from "./editor.js";
import { languageBadge, languageName } from "./languages.js";
import { showMetrics } from "./metrics.js";
import { showTab } from "./tabs.js";
import { OPEN_STAGE, send } from "./events.js";

// The verdicts in words (docs/verdicts.md); the code stays beside them.
const VERDICT_WORDS = {
  accepted: "Accepted", too_slow: "Too slow", wrong_answer: "Wrong answer", compile_error: "Compile error",
  runtime_error: "Runtime error", time_limit_exceeded: "Time limit exceeded", no_device: "No GPU available",
  internal_error: "Judge error",
};

export function verdictBadge(verdict) {
  const words = VERDICT_WORDS[verdict];
  return el("span", { class: `verdict ${verdict}`, "data-verdict": verdict }, words ? `${words} (${verdict})` : verdict);
}

const resultKey = (stageId) => `cudojo.result.${stageId}`;

function keepResult(report) {
  if (!report || !report.stage) return;
  try { localStorage.setItem(resultKey(report.stage), JSON.stringify(report)); } catch { /* full: not kept */ }
}

function lastResult(stageId) {
  try { return JSON.parse(localStorage.getItem(resultKey(stageId)) || "null"); } catch { return null; }
}

// A stage has just opened: its last result, or what the two tabs say before the first run.
export function showLastResult(stageId) {
  const last = lastResult(stageId);
  if (last) {
    showReport(last, { restored: true });
  } else {
    $("#tab-result").replaceChildren(el("p", { class: "muted" }, "Run your kernel to see the verdict here."));
    $("#tab-metrics").replaceChildren(el("p", { class: "muted" }, "No timing yet."));
  }
}

function formatNumber(value) {
  if (value === null || value === undefined) return "";
  if (typeof value === "string") return value;
  return Number.isInteger(value) ? String(value) : value.toPrecision(9);
}

function nextStage() {
  const index = state.stages.findIndex((stage) => stage.id === state.stage.id);
  return index >= 0 && index + 1 < state.stages.length ? state.stages[index + 1] : null;
}

// "error" and "catastrophic error" are errors; "warning" a warning; "note" and "remark" notes.
function diagnosticKind(severity) {
  if (!severity || severity.includes("error")) return "error";
  return severity === "warning" ? "warning" : "note";
}

// The compiler's diagnostics: each with its severity, a link to the learner's line (only for lines
// of the learner's own file: a line of a CUDA header is named, not linked), and the compiler's
// excerpt (the source line and a caret) in monospace.
function renderDiagnostics(report, compile, mark) {
  const list = el("ul", { class: "diagnostics" });
  for (const diagnostic of compile.diagnostics) {
    const kind = diagnosticKind(diagnostic.severity);
    const own = !diagnostic.file || !report.file || diagnostic.file === report.file;
    let where = null;
    if (own && diagnostic.line) {
      mark(diagnostic.line, kind, diagnostic.column);
      where = lineLink(diagnostic.line, diagnostic.column);
    } else if (!own) {
      where = el("span", { class: "where mono" }, diagnostic.line ? `${diagnostic.file}:${diagnostic.line}` : diagnostic.file);
    }
    list.append(el("li", { class: `diagnostic ${kind}`, "data-severity": diagnostic.severity || "error" },
                   where, where ? ": " : "", el("span", { class: `severity ${kind}` }, diagnostic.severity || "error"),
                   ": ", diagnostic.message,
                   diagnostic.context ? el("pre", { class: "context" }, diagnostic.context) : null));
  }
  return list;
}

// keep: store it as the stage's last result; restored: it came from storage, and the editor may
// hold other text now, so no lines are marked.
export function showReport(report, { keep = false, restored = false } = {}) {
  if (keep) keepResult(report);
  clearMarks();
  const box = $("#tab-result");
  if (!report) {
    box.replaceChildren(el("p", { class: "muted" }, "No report."));
    return;
  }
  const language = report.language || "cuda";
  // Lines are marked only in the text the report is about: same stage, same language.
  const here = (!report.stage || !state.stage || report.stage === state.stage.id) && language === state.language;
  const mark = (line, kind, column) => { if (here && !restored) markLine(line, kind, column); };
  const parts = [el("p", {}, verdictBadge(report.verdict), " ", report.message || ""),
                 el("p", { class: "judged-language", "data-language": language },
                    "Language: ", languageBadge(language), " ", languageName(language))];
  const next = report.verdict === "accepted" && here && state.stage ? nextStage() : null;
  if (next) {
    parts.push(el("p", {}, el("a", { class: "next-stage", href: `#${next.id}`,
      onclick: (event) => { event.preventDefault(); send(OPEN_STAGE, { id: next.id }); } }, `Next stage: ${next.id} ${next.title || ""} →`)));
  }
  if (report.error_name) parts.push(el("p", {}, "CUDA error: ", el("code", {}, report.error_name)));
  const compile = report.compile || {};
  if (compile.diagnostics && compile.diagnostics.length) {
    // A compile that failed lists its errors; one that passed may still have warnings.
    parts.push(el("h3", {}, compile.ok === false ? "Compiler" : "Compiler warnings"));
    parts.push(renderDiagnostics(report, compile, mark));
  } else if (compile.ok === false && compile.log) {
    parts.push(el("h3", {}, "Compiler"), el("pre", { class: "compile-log" }, compile.log));
  }
  if (report.findings && report.findings.length) {
    parts.push(el("h3", {}, "Findings"));
    for (const finding of report.findings) {
      mark(finding.line);
      parts.push(el("p", { class: "finding" }, el("code", {}, finding.code), " ", lineLink(finding.line), " ", finding.message));
    }
  }
  if (report.tests && report.tests.length) {
    const passed = report.tests.filter((test) => test.ok).length;
    parts.push(el("h3", {}, `Tests: ${passed} of ${report.tests.length} passed`));
    const rows = [...report.tests].sort((a, b) => Number(a.ok) - Number(b.ok));
    parts.push(el("table", {},
      el("tr", {}, el("th", {}, ""), el("th", {}, "case"), el("th", {}, "expected"), el("th", {}, "got"), el("th", {}, "tolerance / bound")),
      ...rows.map((test) => el("tr", {},
        el("td", { class: test.ok ? "ok" : "fail" }, test.ok ? "✓" : "✗"), el("td", {}, test.name),
        el("td", { class: "num" }, formatNumber(test.expected)), el("td", { class: "num" }, formatNumber(test.got)),
        el("td", { class: "detail" }, test.detail || "")))));
  }
  if (report.output && report.output.captured) {
    parts.push(el("h3", {}, `Output (device printf${report.output.truncated ? ", truncated" : ""})`),
               el("pre", {}, report.output.captured));
  }
  box.replaceChildren(...parts);
  showMetrics(report);
  showTab("result");
}
