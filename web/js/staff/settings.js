// A class's settings (#class/3/settings): its name, its invite code (with Copy, and "New code",
// after which the old one no longer joins anyone), whether it takes new learners by that code, and
// whether its learners may share a run by link (share_controls.js). Turning links off stops every
// live one for good, so the page asks first; turning them on again brings no old link back. A
// teaching assistant reads them and may copy the code.

import { el } from "../dom.js";
import { api } from "../api.js";
import { confirmDialog } from "../dialog.js";
import { button, copyText, field, heading, say, statusLine } from "./ui.js";

export async function showSettings(box, context) {
  const { cls, canChange } = context;
  const status = statusLine();
  const change = async (body, done) => {
    try {
      const saved = await api(`/api/classes/${cls.id}`, { method: "PATCH", body: JSON.stringify(body) });
      Object.assign(cls, saved);
      done(saved);
    } catch (error) {
      say(status, `Not saved: ${error.message}`, "bad");
    }
  };
  const name = el("input", { value: cls.name, maxlength: "80", ...(canChange ? {} : { readonly: "" }) });
  const nameForm = el("form", { class: "staff-form", "aria-label": "Class name" }, field("Class name", name),
    canChange ? el("button", { type: "submit" }, "Rename") : null);
  nameForm.addEventListener("submit", (event) => {
    event.preventDefault();
    change({ name: name.value.trim() }, () => context.refresh());
  });

  const code = el("input", { value: cls.invite_code || "", readonly: "", class: "mono invite-code", spellcheck: "false" });
  const copy = button("Copy", async () => { copy.textContent = (await copyText(code.value, code)) ? "Copied" : "Press Ctrl+C"; });
  const renew = button("New code", async () => {
    if (!(await confirmDialog("Make a new invite code? The old one stops working for anyone who has not joined yet.", "New code"))) return;
    change({ new_invite_code: true }, (saved) => { code.value = saved.invite_code; say(status, "A new invite code is in place."); });
  });

  const open = el("input", { type: "checkbox", ...(cls.joining_open ? { checked: "" } : {}), ...(canChange ? {} : { disabled: "" }) });
  open.addEventListener("change", () => change({ joining_open: open.checked }, (saved) => {
    say(status, saved.joining_open ? "Learners may join with the invite code." : "Joining is closed: the invite code takes nobody now.");
  }));

  const sharing = el("input", { type: "checkbox", ...(cls.sharing_open ? { checked: "" } : {}), ...(canChange ? {} : { disabled: "" }) });
  sharing.addEventListener("change", async () => {
    if (!sharing.checked && !(await confirmDialog("Turn links to runs off? Every live link of the class's learners stops for good, "
        + "and learners cannot make new ones until links are turned back on (the old ones stay stopped).", "Turn links off"))) {
      sharing.checked = true;
      return;
    }
    await change({ sharing_open: sharing.checked }, (saved) => {
      say(status, saved.sharing_open ? "Learners may share a run by link again; links stopped before stay stopped."
        : "Links to runs are off: every live link stopped, and learners cannot make new ones.");
    });
    sharing.checked = cls.sharing_open;  // a refused change leaves the box as the class is
  });

  box.replaceChildren(...[heading(3, "Settings"), status, nameForm,
    el("div", { class: "staff-form" }, field("Invite code", code), copy, canChange ? renew : null),
    el("p", { class: "staff-note" }, "Learners join on the course page with this code (\"Join your class\")."),
    el("p", {}, el("label", { class: "check" }, open, " Learners may join with the invite code")),
    el("p", {}, el("label", { class: "check" }, sharing, " Learners may share a run by link")),
    cls.is_default ? el("p", { class: "staff-note" }, "This is the open sign-up class: whoever signs up without a code lands here.") : null]
    .filter(Boolean));
}
