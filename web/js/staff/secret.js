// A token shown once (a new class's instructor, a new member of staff, a learner's reset token):
// the value in a read-only field with Copy, and "I have saved it", which takes it off the page.
// The server keeps no copy it can show again, so the box says so.

import { el } from "../dom.js";
import { copyText, uid } from "./ui.js";

export function secretBox(title, token, note = "Shown once: copy it now and hand it over safely; it cannot be shown again.") {
  const id = uid("secret");
  const input = el("input", { id, class: "secret-value", readonly: "", spellcheck: "false", value: token });
  const copy = el("button", { type: "button", class: "secondary" }, "Copy");
  const box = el("div", { class: "secret", role: "region", "aria-label": title },
    el("p", {}, el("strong", {}, title), " ", note),
    el("div", { class: "token-row" }, el("label", { for: id, class: "visually-hidden" }, title), input, copy,
       el("button", { type: "button", class: "secondary", onclick: () => box.remove() }, "I have saved it")));
  copy.addEventListener("click", async () => { copy.textContent = (await copyText(token, input)) ? "Copied" : "Press Ctrl+C"; });
  return box;
}
