// The roster's table: every learner of the class with their student id, name, email, when they
// joined and first signed in, and whether they were removed. An instructor edits a row in place,
// removes or restores a learner (their runs stay), and resets a token: the new one is shown once
// and the old one stops working at once (the learner's open page signs out).

import { el } from "../dom.js";
import { api, localTime } from "../api.js";
import { confirmDialog } from "../dialog.js";
import { button, heading, say, scrolling, statusLine, table } from "./ui.js";
import { secretBox } from "./secret.js";
import { classHref } from "./router.js";

// The row as inputs: Save sends what changed (PATCH), Cancel draws the table again.
function editRow(row, cls, learner, redraw, status) {
  const input = (key, label, max) => el("input", { value: learner[key] || "", maxlength: max, "aria-label": `${label} of ${learner.name}` });
  const studentId = input("student_id", "Student id", "64");
  const name = input("name", "Name", "40");
  const email = input("email", "Email", "254");
  const save = async () => {
    const changes = {};
    for (const [key, control] of [["student_id", studentId], ["name", name], ["email", email]]) {
      if (control.value.trim() !== (learner[key] || "")) changes[key] = control.value.trim();
    }
    try {
      if (Object.keys(changes).length) await api(`/api/classes/${cls.id}/learners/${learner.id}`, { method: "PATCH", body: JSON.stringify(changes) });
      say(status, `Saved ${changes.name || learner.name}.`);
      redraw();
    } catch (error) {
      say(status, `Cannot save ${learner.name}: ${error.message}`, "bad");
    }
  };
  row.replaceChildren(el("td", {}, studentId), el("th", { scope: "row" }, name), el("td", {}, email),
    el("td", { colspan: "3" }), el("td", { class: "actions" }, button("Save", save), " ", button("Cancel", redraw)));
  name.focus();
}

export async function showRosterTable(box, cls, canChange) {
  const { learners } = await api(`/api/classes/${cls.id}/learners`);
  const status = statusLine();
  const shown = el("div");
  const redraw = () => showRosterTable(box, cls, canChange);
  const setRemoved = async (learner, removed) => {
    if (removed && !(await confirmDialog(`Remove ${learner.name} from the class? Their token stops working; their runs stay, and Restore brings them back.`, "Remove"))) return;
    try {
      await api(`/api/classes/${cls.id}/learners/${learner.id}`, { method: "PATCH", body: JSON.stringify({ removed }) });
      redraw();
    } catch (error) {
      say(status, `Cannot change ${learner.name}: ${error.message}`, "bad");
    }
  };
  const reset = async (learner) => {
    if (!(await confirmDialog(`Give ${learner.name} a new token? Their old one stops working at once, on every browser.`, "Reset"))) return;
    try {
      const answer = await api(`/api/classes/${cls.id}/learners/${learner.id}/token`, { method: "POST", body: "{}" });
      shown.replaceChildren(secretBox(`New token of ${answer.name}`, answer.token));
    } catch (error) {
      say(status, `Cannot reset the token: ${error.message}`, "bad");
    }
  };
  const actions = (row, learner) => el("td", { class: "actions" },
    button("Edit", () => editRow(row, cls, learner, redraw, status), { "aria-label": `Edit ${learner.name}` }), " ",
    learner.removed_at ? button("Restore", () => setRemoved(learner, false), { "aria-label": `Restore ${learner.name}` })
      : button("Remove", () => setRemoved(learner, true), { "aria-label": `Remove ${learner.name}` }), " ",
    learner.removed_at ? null : button("Reset token", () => reset(learner), { "aria-label": `Reset token of ${learner.name}` }));
  const rows = learners.map((learner) => {
    const row = el("tr", { "data-learner": learner.id, class: learner.removed_at ? "removed" : "" },
      el("td", { class: "mono" }, learner.student_id || ""),
      el("th", { scope: "row" }, el("a", { href: classHref(cls.id, `learner/${learner.id}`) }, learner.name)),
      el("td", {}, learner.email || ""), el("td", {}, localTime(learner.created_at)),
      el("td", {}, learner.signed_in_at ? localTime(learner.signed_in_at) : "not yet"),
      el("td", {}, learner.removed_at ? `removed ${localTime(learner.removed_at)}` : "in the class"));
    if (canChange) row.append(actions(row, learner));
    return row;
  });
  const headers = ["Student id", "Name", "Email", "Joined", "Signed in", "State", ...(canChange ? ["Actions"] : [])];
  box.replaceChildren(heading(4, `Learners (${learners.length})`), status, shown,
    learners.length ? scrolling(`Roster of ${cls.name}`, table(`Roster of ${cls.name}`, headers, rows))
      : el("p", { class: "muted" }, "No learners yet."));
}
