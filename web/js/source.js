// The kernel source in the editor: which stage and language it belongs to, and whether it is the
// learner's draft, the starter or a job's source. Owns the language switch, the signature line
// and "Reset to starter"; every edit becomes the draft (drafts.js), and the line beside Run
// (#draft-state) says whether the server has it. stages.js calls openSource when a stage opens;
// history.js calls showLanguage to put a job's source in the editor.

import { $, el } from "./dom.js";
import { state } from "./state.js";
import { editor, clearMarks } from "./editor.js";
import { confirmDialog } from "./dialog.js";
import { flushDrafts, keepDraft, readDraft, watchDrafts } from "./drafts.js";
import { renderDriver } from "./driver.js";
import {
  currentLanguage, defaultLanguage, editorMode, languageIds, languageName, rememberLanguage, stageLanguages,
} from "./languages.js";

// Shows `language` in the editor: its mode, its signature and its draft (or starter). `text`, when
// given, replaces the draft (a job opened from the history). `remember` records the choice.
export function showLanguage(language, { text = null, remember = false } = {}) {
  const info = stageLanguages(state.stage)[language];
  if (!info) return false;
  clearMarks();
  state.language = language;
  $("#language").value = language;
  $("#workbench").dataset.language = language;
  editor.setOption("mode", editorMode(language, info));
  $("#signature").textContent = info.signature || "";
  editor.setValue(text ?? readDraft(state.stage.id, language) ?? info.starter ?? "");
  editor.clearHistory();  // undo stays within one language's text
  renderDriver(state.stage);
  if (remember) rememberLanguage(state.stage.id, language);
  return true;
}

// A stage has just opened (state.stage): its languages in the switch, the one it opens in shown.
export function openSource(stage) {
  $("#language").replaceChildren(
    ...languageIds(stage).map((id) => el("option", { value: id }, stageLanguages(stage)[id].name || languageName(id))));
  showLanguage(defaultLanguage(stage));
}

export function startSource() {
  editor.on("change", () => {
    // Whatever the editor holds is the draft of the current stage and language.
    if (!state.stage) return;
    keepDraft(state.stage.id, state.language, editor.getValue(), currentLanguage().starter);
  });

  watchDrafts((text) => { $("#draft-state").textContent = text; });

  $("#language").addEventListener("change", (event) => {
    if (!state.stage) return;
    flushDrafts();  // the language left behind keeps what was typed in it
    showLanguage(event.target.value, { remember: true });
  });

  $("#reset").addEventListener("click", async () => {
    if (!state.stage) return;
    const starter = currentLanguage().starter || "";
    if (editor.getValue() === starter) return;
    if (await confirmDialog(`Replace your ${languageName(state.language)} draft with the starter? Your draft is lost.`, "Reset")) {
      editor.setValue(starter);
    }
  });
}
