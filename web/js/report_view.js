// Drawing a judged report (verdict, late mark, the stage version it was judged under, compiler
// diagnostics, findings, tests, device output) into a given element. Knows nothing of the editor
// or the tabs: the caller says how a line is linked and marked. report.js draws the learner's
// Result tab with it; staff/job.js draws a learner's job for their instructor.

import { el } from "./dom.js";
import { languageBadge, languageName } from "./languages.js";

// The verdicts in words (docs/verdicts.md). The code is the element's data-verdict and its tooltip,
// not its text: a learner reads words.
export const VERDICT_WORDS = {
  accepted: "Accepted", too_slow: "Too slow", wrong_answer: "Wrong answer", compile_error: "Compile error",
  runtime_error: "Runtime error", time_limit_exceeded: "Time limit exceeded", no_device: "No GPU available",
  internal_error: "Judge error",
};

export function verdictBadge(verdict) {
  const words = VERDICT_WORDS[verdict];
  return el("span", { class: `verdict ${verdict}`, "data-verdict": verdict, title: verdict }, words || verdict);
}

// "late" in words (and a class for its colour): a run submitted after its stage's deadline.
export const lateMark = () => el("span", { class: "late-mark" }, "late");

// A message with `code` in backticks (the Rust front end's, the judge's) as text and <code> parts;
// a lone backtick stays as it is.
export function withCode(text) {
  const parts = String(text || "").split("`");
  if (parts.length < 3 || parts.length % 2 === 0) return [String(text || "")];
  return parts.map((part, index) => (index % 2 ? el("code", {}, part) : part)).filter((part) => part !== "");
}

// NVRTC (like any C++ compiler) notices a missing ';' only at the next token, often on the next
// line: the learner is told where to look.
function diagnosticHint(message) {
  if (/expected a "?;"?/.test(message || "")) {
    return el("span", { class: "hint" }, " (a missing ';' is usually at the end of the line before the one named)");
  }
  return null;
}

// A gate with figures: "time 2.41 x the reference; the limit is 2.00 x", and whether it passed.
function gateLine(gate) {
  if (!gate || gate.value === null || gate.value === undefined || gate.limit === null || gate.limit === undefined) return null;
  return el("p", { class: "gate-figures", "data-passed": String(Boolean(gate.passed)) },
            el("strong", {}, "Gate: "), `${gate.value.toFixed(2)} against a limit of ${gate.limit.toFixed(2)} (${gate.rule}): `,
            gate.passed ? "passed" : "not passed");
}

function formatNumber(value) {
  if (value === null || value === undefined) return "";
  if (typeof value === "string") return value;
  return Number.isInteger(value) ? String(value) : value.toPrecision(9);
}

// "error" and "catastrophic error" are errors; "warning" a warning; "note" and "remark" notes.
function diagnosticKind(severity) {
  if (!severity || severity.includes("error")) return "error";
  return severity === "warning" ? "warning" : "note";
}

// The compiler's diagnostics: each with its severity, a link to the learner's line (only for lines
// of the learner's own file: a line of a CUDA header is named, not linked), and the compiler's
// excerpt (the source line and a caret) in monospace.
function renderDiagnostics(report, compile, { mark, lineLink }) {
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
                   ": ", ...withCode(diagnostic.message), diagnosticHint(diagnostic.message),
                   diagnostic.context ? el("pre", { class: "context" }, diagnostic.context) : null));
  }
  return list;
}

function renderTests(tests) {
  const passed = tests.filter((test) => test.ok).length;
  const rows = [...tests].sort((a, b) => Number(a.ok) - Number(b.ok));
  return [el("h3", {}, `Tests: ${passed} of ${tests.length} passed`),
    el("table", {},
      el("tr", {}, el("th", {}, el("span", { class: "visually-hidden" }, "passed")), el("th", {}, "case"), el("th", {}, "expected"),
         el("th", {}, "got"), el("th", {}, "tolerance / bound")),
      ...rows.map((test) => el("tr", {},
        el("td", { class: test.ok ? "ok" : "fail" }, test.ok ? "✓" : "✗"), el("td", {}, test.name),
        el("td", { class: "num" }, formatNumber(test.expected)), el("td", { class: "num" }, formatNumber(test.got)),
        el("td", { class: "detail" }, test.detail || ""))))];
}

// "Judged under stage version 3f9a0c27", and a note when the stage changed since (the job's
// stage_version_current, which GET /api/jobs/{id} adds; a report alone does not know).
function versionNotes(report) {
  const digest = report.stage_version && report.stage_version.digest;
  if (!digest) return [];
  const notes = [el("p", { class: "stage-version", "data-version": digest },
                    "Judged under stage version ", el("code", { title: digest }, digest.slice(0, 8)))];
  if (report.stage_version_current === false) {
    notes.push(el("p", { class: "stage-changed" }, "This stage changed since; your instructor may rejudge it."));
  }
  return notes;
}

// Draws `report` into `box`. lineLink(line, column): the element that leads to a line of the
// source, or null; mark(line, kind, column): marks it where the source is shown; next: a link
// element to put under an accepted verdict. report.late: the run came after the deadline;
// report.stage_version_current: false when the stage changed since it was judged.
export function renderReport(box, report, { lineLink = () => null, mark = () => {}, next = null } = {}) {
  if (!report) {
    box.replaceChildren(el("p", { class: "muted" }, "No report."));
    return;
  }
  const language = report.language || "cuda";
  const parts = [el("p", {}, verdictBadge(report.verdict), " ", ...withCode(report.message)),
                 ...(report.stage ? [el("p", { class: "judged-stage", "data-stage": report.stage }, "Stage: ", el("code", {}, report.stage))] : []),
                 el("p", { class: "judged-language", "data-language": language },
                    "Language: ", languageBadge(language), " ", languageName(language))];
  if (report.late) parts.push(el("p", { class: "late-note" }, lateMark(), ": submitted after the stage's deadline."));
  parts.push(...versionNotes(report));
  const gate = gateLine(report.gate);
  if (gate) parts.push(gate);
  if (next) parts.push(el("p", {}, next));
  const helpers = { mark, lineLink };
  if (report.error_name) parts.push(el("p", {}, "CUDA error: ", el("code", {}, report.error_name)));
  const compile = report.compile || {};
  if (compile.diagnostics && compile.diagnostics.length) {
    // A compile that failed lists its errors; one that passed may still have warnings.
    parts.push(el("h3", {}, compile.ok === false ? "Compiler" : "Compiler warnings"));
    parts.push(renderDiagnostics(report, compile, helpers));
  } else if (compile.ok === false && compile.log) {
    parts.push(el("h3", {}, "Compiler"), el("pre", { class: "compile-log" }, compile.log));
  }
  if (report.findings && report.findings.length) {
    parts.push(el("h3", {}, "Findings"));
    for (const finding of report.findings) {
      mark(finding.line);
      parts.push(el("p", { class: "finding" }, el("code", {}, finding.code), " ", lineLink(finding.line), " ", ...withCode(finding.message)));
    }
  }
  if (report.tests && report.tests.length) parts.push(...renderTests(report.tests));
  if (report.output && report.output.captured) {
    parts.push(el("h3", {}, `Output (device printf${report.output.truncated ? ", truncated" : ""})`),
               el("pre", {}, report.output.captured));
  }
  box.replaceChildren(...parts);
}
