// The page's one yes/no question, the <dialog id="confirm-dialog"> in index.html. Called before
// a learner's draft is replaced: by source.js (Reset to starter) and history.js (open a job).

import { $ } from "./dom.js";

// Resolves true for `okLabel`, false for Cancel or Escape.
export function confirmDialog(text, okLabel) {
  const dialog = $("#confirm-dialog");
  $("#confirm-text").textContent = text;
  $("#confirm-ok").textContent = okLabel;
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => resolve(dialog.returnValue === "ok"), { once: true });
    dialog.returnValue = "cancel";
    dialog.showModal();
    $("#confirm-cancel").focus();
  });
}
