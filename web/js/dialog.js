// The page's one yes/no question, the <dialog id="confirm-dialog"> in index.html. Called before
// a learner's draft is replaced (source.js: Reset to starter; history.js: open a job) and before a
// member of staff changes something that is not undone (staff/: a token reset, a removal, a
// rejudging applied or cancelled).

import { $ } from "./dom.js";

// Resolves true for `okLabel`, false for `cancelLabel` (the dialog's other button) or Escape.
export function confirmDialog(text, okLabel, cancelLabel = "Cancel") {
  const dialog = $("#confirm-dialog");
  $("#confirm-text").textContent = text;
  $("#confirm-ok").textContent = okLabel;
  $("#confirm-cancel").textContent = cancelLabel;
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => resolve(dialog.returnValue === "ok"), { once: true });
    dialog.returnValue = "cancel";
    dialog.showModal();
    $("#confirm-cancel").focus();
  });
}
