// A class's staff (#class/3/staff): its instructors and teaching assistants. An instructor adds
// one by a new name (the new account's token is shown once) or changes the role of one already
// there; only an administrator gives an existing account elsewhere a role here ("existing"). The
// server keeps the last instructor.

import { el } from "../dom.js";
import { api } from "../api.js";
import { confirmDialog } from "../dialog.js";
import { button, field, heading, message, say, scrolling, statusLine, table } from "./ui.js";
import { secretBox } from "./secret.js";

const ROLE_WORDS = { instructor: "instructor", ta: "teaching assistant" };

function addForm(cls, shown, status, added, admin) {
  const name = el("input", { required: "", maxlength: "40", autocomplete: "off" });
  const role = el("select", {}, el("option", { value: "ta" }, "teaching assistant"), el("option", { value: "instructor" }, "instructor"));
  const existing = el("input", { type: "checkbox" });
  const form = el("form", { class: "staff-form", "aria-label": "Add to the staff" },
    field("Name", name), field("Role", role),
    ...(admin ? [el("label", { class: "check" }, existing, " the name has an account already: give that account the role")] : []),
    el("button", { type: "submit" }, "Add"));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      const member = await api(`/api/classes/${cls.id}/staff`, { method: "POST",
        body: JSON.stringify({ name: name.value.trim(), role: role.value, ...(admin && existing.checked ? { existing: true } : {}) }) });
      shown.replaceChildren(member.token ? secretBox(`Token of ${member.name}, a new ${ROLE_WORDS[member.role]}`, member.token)
        : message(`${member.name} is now a ${ROLE_WORDS[member.role]} here, with the same token.`));
      name.value = "";
      added();
    } catch (error) {
      say(status, `Cannot add: ${error.message}`, "bad");
    }
  });
  return form;
}

export async function showMembers(box, context) {
  const { cls, canChange } = context;
  const status = statusLine();
  const shown = el("div");
  const list = el("div");
  // The list is drawn again from the server after a change; the token box above it stays.
  const reload = async () => drawList((await api(`/api/classes/${cls.id}`)).staff);
  const remove = async (member) => {
    if (!(await confirmDialog(`Remove ${member.name} from the staff of ${cls.name}? Their account stays.`, "Remove"))) return;
    try {
      await api(`/api/classes/${cls.id}/staff/${member.id}`, { method: "DELETE" });
      if (context.me && member.id === context.me.id) location.hash = "#classes";
      else await reload();
    } catch (error) {
      say(status, error.status === 409 ? `${member.name} is the last instructor: add another first.` : `Cannot remove: ${error.message}`, "bad");
    }
  };
  const drawList = (staff) => list.replaceChildren(scrolling(`Staff of ${cls.name}`, table(`Staff of ${cls.name}`,
    ["Name", "Role", ...(canChange ? ["Change"] : [])],
    staff.map((member) => el("tr", { "data-staff": member.id },
      el("th", { scope: "row" }, member.name), el("td", {}, ROLE_WORDS[member.role] || member.role),
      canChange ? el("td", {}, button("Remove", () => remove(member), { "aria-label": `Remove ${member.name} from the staff` })) : null)))));
  drawList(cls.staff);
  box.replaceChildren(heading(3, "Staff"),
    ...(canChange ? [addForm(cls, shown, status, () => reload().catch(() => {}), Boolean(context.me && context.me.admin))] : []),
    status, shown, list);
}
