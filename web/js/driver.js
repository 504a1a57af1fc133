// The Driver tab: what the judge does around the learner's kernel (its signature in the language
// in the editor, the launch, the host's part, the tests, the gate). Drawn by source.js whenever
// the language or the stage changes.

import { $, el } from "./dom.js";
import { state } from "./state.js";
import { languageBadge, stageLanguages } from "./languages.js";

export function renderDriver(stage) {
  const tests = stage.tests || {};
  $("#tab-driver").replaceChildren(
    el("p", {}, el("strong", {}, "Kernel: "), languageBadge(state.language), " ",
       el("span", { class: "mono" }, (stageLanguages(stage)[state.language] || {}).signature || stage.signature)),
    el("p", {}, el("strong", {}, "Launch: "), stage.launch_text),
    el("p", {}, el("strong", {}, "What the host does: "), stage.driver),
    el("p", {}, el("strong", {}, "Tests: "), stage.tests_text || `Repeats: ${tests.runs}.`),
    el("p", {}, el("strong", {}, "Gate: "), stage.gate_text));
}
